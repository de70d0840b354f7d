"""`hxdp map` and `hxdp prog`: the board's maps and program in bpftool's OBJECT COMMAND shape and output."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hxdp.board.transport import Board, open_board
from hxdp.cli import bpftool as B
from hxdp.errors import HxdpError
from hxdp.models.maps import MapError, MapLayout, MapRegion

if TYPE_CHECKING:
    from hxdp.board.tools import BoardMaps

MAP_HELP = "MAP is NAME, name NAME or id ID"
ELEM_HELP = ("DATA is bytes as bpftool takes them: `hex 0a 00 00 01` or `10 0 0 1` (0x.. hex, 0.. octal), or one "
             "hex token `0a000001`")


# --- options shared by every verb: accepted before or after the verb (bpftool takes -j anywhere) ---------------------
def _options(kind: str) -> argparse.ArgumentParser:
    """kind: map (layout and hold options), prog (layout options), load (board and output only)."""
    from hxdp.cli.board import BOARD_HELP

    p = argparse.ArgumentParser(add_help=False)
    s = argparse.SUPPRESS  # a default would overwrite the value given before the verb
    p.add_argument("--board", "-b", metavar="BOARD", default=s, help=BOARD_HELP)
    p.add_argument("-j", "--json", action="store_true", default=s, help="compact JSON (bpftool's shapes)")
    p.add_argument("-p", "--pretty", action="store_true", default=s, help="pretty JSON (implies -j)")
    if kind != "load":
        p.add_argument("--layout", default=s, help="map layout PROG.maps.json (names; default: what `hxdp prog "
                       "load` noted for the program the board runs, else the board's map table, ids only)")
        p.add_argument("--rom", default=s, help="ROM whose PROG.maps.json to use")
    if kind == "map":
        p.add_argument("--no-hold", action="store_true", default=s,
                       help="do not hold the input while writing several lines")
    if kind == "map":
        p.add_argument("--force", action="store_true", default=s,
                       help="take over an input hold another owner left (after checking why it is held)")
    return p


def opt(args: argparse.Namespace, name: str, default: Any = None) -> Any:
    """An option that may be absent: shared options have no default (see _options)."""
    return getattr(args, name, default)


def board_of(args: argparse.Namespace) -> Board:
    from hxdp.board.transport import DEFAULT_IFACE

    return open_board(opt(args, "board") or os.environ.get("HXDP_BOARD") or f"sume:{DEFAULT_IFACE}")


def emit(args: argparse.Namespace, doc: object, plain: Callable[[], str] | None) -> None:
    """bpftool's output: plain text, or JSON with -j (compact) / -p (pretty); plain None prints nothing."""
    if opt(args, "pretty"):
        print(json.dumps(doc, indent=4))
    elif opt(args, "json"):
        print(json.dumps(doc, separators=(",", ":")))
    elif plain is not None:
        text = plain()
        if text:
            print(text)


def file_layout(args: argparse.Namespace) -> tuple[MapLayout, str] | None:
    from hxdp.board.tools import layout_path_for, load_layout

    if opt(args, "layout"):
        return load_layout(opt(args, "layout")), opt(args, "layout")
    if opt(args, "rom"):
        path = layout_path_for(opt(args, "rom"))
        return load_layout(path), str(path)
    return None


def board_layout(args: argparse.Namespace, board: Board) -> MapLayout:
    """The layout given, else the one noted when this host loaded the running program, else the board's table."""
    from hxdp.board import tools as T

    given = file_layout(args)
    ext = T.has_extensions(board)
    if given is not None:
        if ext:
            _check_against_board(board, *given)
        return given[0]
    if not ext:
        raise MapError("the original bitstream has no map table to read: name the maps with --layout PROG.maps.json "
                       "or --rom PROG.rom")
    noted = T.recalled_layout(T.recall_load(board, T.program_tag(T.dump_imem(board))))
    return noted if noted is not None else T.layout_from_config(T.read_map_config(board))


def _check_against_board(board: Board, layout: MapLayout, source: str) -> None:
    """A layout of another program would make map writes land in the wrong places: said, not refused (the table
    is written by `prog load`, a program injected alone leaves it as it was)."""
    from hxdp.board.tools import map_config_entries, read_map_config

    want, have = map_config_entries(layout), read_map_config(board)
    bad = [mid for mid, (w, h) in enumerate(zip(want, have, strict=True)) if w != h]
    if bad:
        print(f"hxdp map: warning: {source} does not describe the maps on {board.name} (map id {bad[0]} differs "
              "from the board's map table): was the program loaded with it?", file=sys.stderr)


def map_ref(tokens: list[str]) -> tuple[str | int | None, list[str]]:
    """MAP := NAME | name NAME | id ID; returns it and the tokens after it."""
    if not tokens:
        return None, []
    if tokens[0] in ("id", "name"):
        if len(tokens) < 2:
            raise MapError(f"{tokens[0]}: missing the map's {tokens[0]}")
        if tokens[0] == "name":
            return tokens[1], tokens[2:]
        try:
            return int(tokens[1], 0), tokens[2:]
        except ValueError:
            raise MapError(f"can't parse {tokens[1]!r} as a map id") from None
    return tokens[0], tokens[1:]


def region_of(layout: MapLayout, ref: str | int) -> MapRegion:
    if isinstance(ref, int):
        return layout.region(ref)
    if layout.regions and not any(r.name for r in layout.regions):
        raise MapError(f"no map named {ref!r}: the board's map table holds no names; use `id N` (hxdp map show), "
                       "or give the names with --layout PROG.maps.json or --rom PROG.rom")
    return layout.region(layout.map_id(ref))


# --- hxdp map ... ----------------------------------------------------------------------------------------------------
def cmd_map(args: argparse.Namespace) -> int:
    from hxdp.board import tools as T

    ref, rest = map_ref(list(args.operands))
    if args.map_cmd in ("show", "list", "dump") and rest:
        raise MapError(f"map {args.map_cmd}: unexpected {rest[0]!r} after the map")
    if args.map_cmd in ("dump", "lookup", "update", "delete") and ref is None:
        raise MapError(f"map {args.map_cmd}: which map? ({MAP_HELP})")
    with board_of(args) as board:
        bm = T.BoardMaps(board, board_layout(args, board), atomic=not opt(args, "no_hold", False),
                         force=opt(args, "force", False))
        regions = bm.layout.regions if ref is None else [region_of(bm.layout, ref)]
        r = regions[0] if regions else None
        if args.map_cmd in ("show", "list"):
            infos = [B.map_info(m, bm.count(m.id)) for m in regions]
            emit(args, infos if ref is None else infos[0], lambda: "\n".join(B.map_info_plain(i) for i in infos))
            return 0
        assert r is not None
        if args.map_cmd == "dump":
            entries = bm.dump_per_cpu(r.id) if r.kind in B.PERCPU_KINDS else bm.dump(r.id)
            emit(args, [B.entry_json(r, k, v) for k, v in entries.items()], lambda: B.dump_plain(r, entries))
            return 0
        if args.map_cmd == "update" and r.kind == "prog_array":
            rest = prog_value(bm.layout, rest)
        if args.map_cmd == "update" and r.kind in B.OUTER_KINDS:
            rest = inner_value(bm.layout, rest)
        elem = B.parse_elem(rest, r.key_size, r.value_size, want_value=args.map_cmd == "update")
        return _map_elem_op(args, bm, r, elem)


def prog_value(layout: MapLayout, tokens: list[str]) -> list[str]:
    """A PROG_ARRAY entry's `value name PROG` (bpftool's PROG operand) as the bytes the NIC holds: the program's
    entry row + 1 (docs/maps.md). bpftool's `id`, `pinned` and `tag` name kernel programs, which the NIC has not."""
    for i, word in enumerate(tokens[:-1]):
        if word == "value" and tokens[i + 1] in ("id", "pinned", "tag"):
            raise MapError(f"value {tokens[i + 1]}: a PROG_ARRAY entry on the NIC names a program resident in its "
                           "instruction memory: value name PROG")
        if word == "value" and tokens[i + 1] == "name":
            if i + 2 >= len(tokens):
                raise MapError("value name: missing the program's name")
            data = layout.prog_value(tokens[i + 2])
            return [*tokens[:i], "value", "hex", *(f"{b:02x}" for b in data), *tokens[i + 3 :]]
    return tokens


def inner_value(layout: MapLayout, tokens: list[str]) -> list[str]:
    """A map of maps' `value id ID` or `value name NAME` (bpftool's MAP operand) as the bytes the NIC holds: the
    inner map's id (docs/maps.md); bpftool's `pinned FILE` names a kernel object, which the NIC has not."""
    for i, word in enumerate(tokens[:-1]):
        if word == "value" and tokens[i + 1] == "pinned":
            raise MapError("value pinned: an inner map on the NIC is named by its id or name: value id ID, "
                           "value name NAME")
        if word == "value" and tokens[i + 1] in ("id", "name"):
            if i + 2 >= len(tokens):
                raise MapError(f"value {tokens[i + 1]}: missing the inner map's {tokens[i + 1]}")
            ref = tokens[i + 2]
            if tokens[i + 1] == "name":
                map_id = layout.map_id(ref)
            elif ref.isdigit():
                map_id = int(ref)
            else:
                raise MapError(f"value id {ref!r}: not a map id")
            return [*tokens[:i], "value", "hex", *(f"{b:02x}" for b in map_id.to_bytes(4, "little")), *tokens[i + 3 :]]
    return tokens


def _map_elem_op(args: argparse.Namespace, bm: BoardMaps, r: MapRegion, elem: B.Elem) -> int:
    from hxdp.board import tools as T

    label = T.map_label(r)
    if args.map_cmd == "lookup":
        value = bm.lookup(r.id, elem.key)
        if value is None:
            raise MapError(f"map {label}: key {B.hex_bytes(elem.key)} not found")
        shown: bytes | list[bytes] = value
        if r.kind in B.PERCPU_KINDS and bm.copies(r) > 1:
            shown = bm.dump_per_cpu(r.id)[elem.key]  # (a per-CPU array: every key is there)
        emit(args, B.entry_json(r, elem.key, shown), lambda: B.entry_plain(r, elem.key, shown))
        return 0
    if args.map_cmd == "update":
        assert elem.value is not None
        err = bm.update(r.id, elem.key, elem.value, elem.flags)
    else:
        err = bm.delete(r.id, elem.key)
    if err:
        raise MapError(f"map {label}: {args.map_cmd} of key {B.hex_bytes(elem.key)} failed: {os.strerror(-err)}")
    emit(args, None, None)  # bpftool -j prints null after an update or a delete
    return 0


# --- hxdp prog ... ---------------------------------------------------------------------------------------------------
def cmd_prog_show(args: argparse.Namespace) -> int:
    from hxdp.board.tools import prog_info

    with board_of(args) as board:
        info = prog_info(board)
    emit(args, [info], lambda: B.prog_info_plain(info))
    return 0


def cmd_prog_dump(args: argparse.Namespace) -> int:
    from hxdp.board import tools as T
    from hxdp.isa.rom import Rom

    words = list(args.words)
    kind = words.pop(0) if words and words[0] in ("xlated", "rows") else "xlated"
    opcodes = "opcodes" in words
    if [w for w in words if w != "opcodes"]:
        raise HxdpError(f"prog dump: unexpected {[w for w in words if w != 'opcodes'][0]!r} "
                        "(expected [xlated|rows] [opcodes])")
    given = file_layout(args)
    with board_of(args) as board:
        rom = T.dump_imem(board, opt(args, "rows"))
        layout = given[0] if given else T.recalled_layout(T.recall_load(board, T.program_tag(rom)))
    if opt(args, "output"):
        Rom(rom.rows).save(opt(args, "output"))
    if kind == "rows":
        doc = [{"row": n, "lanes": [f"{ins.to_u64():016x}" for ins in row]} for n, row in enumerate(rom.rows)]
        emit(args, doc, lambda: "\n".join(T.dump_imem_lines(rom, layout)))
        return 0
    insns = T.xlated(rom, layout)
    emit(args, insns, lambda: "\n".join(B.xlated_plain(insns, opcodes)))
    return 0


def cmd_prog_load(args: argparse.Namespace) -> int:
    from hxdp.cli.board import cmd_load

    return cmd_load(args)


# --- registration ----------------------------------------------------------------------------------------------------
def _register_map(subparsers: argparse._SubParsersAction) -> None:
    common = _options("map")
    m = subparsers.add_parser("map", parents=[common], help="the board's maps like bpftool map: show, dump, lookup, "
                              "update, delete", description=f"Maps on the board, like bpftool map. {MAP_HELP}; "
                              f"{ELEM_HELP}. Plain text by default, -j/-p for bpftool's JSON.")
    ms = m.add_subparsers(dest="map_cmd", metavar="COMMAND", required=True)
    for verb, hlp in (("show", "[MAP]: maps with their sizes and entries in use"), ("list", "same as show"),
                      ("dump", "MAP: every entry"), ("lookup", "MAP [key] DATA: one entry"),
                      ("update", "MAP [key] DATA [value] DATA [any|noexist|exist]: write an entry (a PROG_ARRAY "
                       "entry: value name PROG, a program resident with the one loaded; a map of maps' entry: "
                       "value id ID or value name NAME, an inner map)"),
                      ("delete", "MAP [key] DATA: remove an entry")):
        x = ms.add_parser(verb, parents=[common], help=hlp, description=f"{hlp}. {MAP_HELP}; {ELEM_HELP}.")
        x.add_argument("operands", nargs="*", metavar="ARG", help="MAP and its operands, as bpftool takes them")
        x.set_defaults(func=cmd_map)


def _register_prog(subparsers: argparse._SubParsersAction) -> None:
    from hxdp.cli.board import add_load_arguments

    common = _options("prog")
    p = subparsers.add_parser("prog", parents=[common], help="the board's program like bpftool prog: load, show, "
                              "dump", description="The program on the board, like bpftool prog. Plain text by "
                              "default, -j/-p for JSON.")
    ps = p.add_subparsers(dest="prog_cmd", metavar="COMMAND", required=True)
    s = ps.add_parser("show", parents=[common], help="what runs: tag, name and source if this host loaded it, rows, "
                      "map ids, counters")
    s.set_defaults(func=cmd_prog_show)
    s = ps.add_parser("list", parents=[common], help="same as show")
    s.set_defaults(func=cmd_prog_show)
    d = ps.add_parser("dump", parents=[common], help="[xlated|rows] [opcodes]: the instruction memory, one "
                      "instruction a line (xlated) or one row a line (rows, as hxdp dump-imem)")
    d.add_argument("words", nargs="*", metavar="WORD", help="xlated (default) or rows; opcodes: the bytes too")
    d.add_argument("--rows", type=int, help="rows to read (default: the loaded program's row count)")
    d.add_argument("-o", "--output", help="also save the rows as a ROM file")
    d.set_defaults(func=cmd_prog_dump)
    lo = ps.add_parser("load", parents=[_options("load")], help="compile an XDP object, configure its maps, inject it "
                       "(as hxdp load)")
    add_load_arguments(lo)
    lo.set_defaults(func=cmd_prog_load)


def register(subparsers: argparse._SubParsersAction) -> None:
    _register_map(subparsers)
    _register_prog(subparsers)
