"""`hxdp board serve`, the host tools (axi, inject, monitor, tracelog) and the aliases load, dump-imem, maps."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from hxdp import params
from hxdp.board.transport import DEFAULT_IFACE, DEFAULT_SOCKET, Board, BoardError, SimBoard, open_board
from hxdp.cli.compile import add_target_option
from hxdp.cli.loading import (
    add_chain_options,
    add_map_option,
    add_verify_option,
    chain_from_args,
    inner_from_cfg,
    sizes_from_args,
    verify_chain_in_kernel,
    verify_in_kernel,
)
from hxdp.errors import HxdpError
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapError, MapLayout

if TYPE_CHECKING:
    from hxdp.board.tools import BoardMaps

BOARD_HELP = ("sume[:IFACE] (NetFPGA-SUME register ioctls, default nf0) or sim[:SOCKET] (the simulated board, "
              f"default {DEFAULT_SOCKET}); default $HXDP_BOARD, else sume:{DEFAULT_IFACE}")


def board_from_args(args: argparse.Namespace) -> Board:
    spec = getattr(args, "board", None) or os.environ.get("HXDP_BOARD") or f"sume:{DEFAULT_IFACE}"
    return open_board(spec)


def _board_parent() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--board", "-b", metavar="BOARD", help=BOARD_HELP)
    return p


# --- hxdp board ... --------------------------------------------------------------------------------------------------
def cmd_serve(args: argparse.Namespace) -> int:
    from hxdp.board.sim import server_args

    taps = args.tap.split(",") if args.tap else None
    ports = max(args.ports, len(taps or []))
    argv = server_args(args.socket, ports, args.pcap, args.loop, args.out, args.step, args.keep, args.pcap_port, taps,
                       args.host_pcap, args.host_hold, args.group, args.cores)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(argv[0], argv)  # the daemon replaces this process (signals and exit code go to it)
    return 0  # pragma: no cover


def _sim(args: argparse.Namespace) -> SimBoard:
    spec = args.board or os.environ.get("HXDP_BOARD") or f"sim:{DEFAULT_SOCKET}"
    b = open_board(spec)
    if not isinstance(b, SimBoard):
        raise BoardError(f"hxdp board {args.board_cmd}: needs the simulated board (--board sim[:SOCKET])")
    return b


def cmd_stat(args: argparse.Namespace) -> int:
    with _sim(args) as b:
        print(json.dumps(b.stat(), indent=1))
    return 0


def cmd_send(args: argparse.Namespace) -> int:
    from hxdp.traffic.pcap import read_pcap

    with _sim(args) as b:
        ports = int(b.ping().partition("ports=")[2] or 1)
        if not 0 <= args.port < ports:
            raise BoardError(f"--port {args.port}: the board has ports 0..{ports - 1}")
        if args.loop:
            b.replay(args.pcap, args.port, loop=True)
            print(f"replaying {args.pcap} on port {args.port} in a loop (stop with `hxdp board stop-replay`)")
            return 0
        pkts = read_pcap(args.pcap)
        b.inject(pkts, args.port)
        if args.wait:
            b.wait()
        print(f"sent {len(pkts)} packets on port {args.port}")
    return 0


def cmd_stop_replay(args: argparse.Namespace) -> int:
    with _sim(args) as b:
        b.stop_replay()
    return 0


def cmd_out(args: argparse.Namespace) -> int:
    from hxdp.atomic_write import check_writable
    from hxdp.traffic.pcap import write_pcap

    if args.pcap:
        check_writable(args.pcap, "pcap")  # before OUT takes the frames off the board
    with _sim(args) as b:
        if args.wait:
            b.wait()
        outs = b.outputs()
    if args.pcap:
        try:
            write_pcap(args.pcap, [o.data for o in outs if o.action in (params.XDP_TX, params.XDP_REDIRECT)])
        except OSError as exc:  # the frames are off the board: keep them where they can still be found
            fd, name = tempfile.mkstemp(prefix="hxdp-board-out-", suffix=".pcap")
            os.close(fd)
            keep = Path(name)
            write_pcap(keep, [o.data for o in outs if o.action in (params.XDP_TX, params.XDP_REDIRECT)])
            raise BoardError(f"{args.pcap}: cannot write ({exc}); the {len(outs)} outputs are kept in {keep}") \
                from None
    for o in outs if not args.pcap else []:
        red = "" if o.dest is None else f" -> {o.dest}"
        print(f"{o.seq} port {o.port} {params.ACTION_NAMES.get(o.action, o.action)}{red} cycles {o.cycles} "
              f"{len(o.data)} bytes")
    return 0


def cmd_shutdown(args: argparse.Namespace) -> int:
    with _sim(args) as b:
        b.shutdown()
    return 0


# --- host tools ------------------------------------------------------------------------------------------------------
def cmd_axi(args: argparse.Namespace) -> int:
    from hxdp.board.tools import axi, parse_u32

    addr = parse_u32(args.address, "address")  # arguments are checked before a board is contacted
    value = None if args.write is None else parse_u32(args.write)
    if args.iface:
        args.board = f"sume:{args.iface}"
    with board_from_args(args) as b:
        out = axi(b, addr, value)
    if out:
        print(out)
    return 0


def _layout_next_to(rom_path: str) -> MapLayout | None:
    """PROG.maps.json next to an injected ROM, noted with it (names for `hxdp map`); None when absent or unreadable."""
    from hxdp.board.tools import layout_path_for, load_layout

    try:
        return load_layout(layout_path_for(rom_path))
    except MapError:
        return None


def cmd_inject(args: argparse.Namespace) -> int:
    from hxdp.board.tools import inject, load_rom, remember_load
    from hxdp.romcheck import check_rom_contract

    rom = load_rom(args.rom)
    check_rom_contract(rom, args.rom)  # before the board is touched
    with board_from_args(args) as b:
        rep = inject(b, rom, verify=not args.no_verify, atomic=not args.no_hold, extensions=not args.original,
                     force=args.force)
        remember_load(b, rom, _layout_next_to(args.rom), args.rom)
    verified = "verified" if not args.no_verify else "not verified"
    how = "" if rep.atomic else f", not atomic: {rep.cleared} rows after the program zeroed, no input hold"
    print(f"injected {rep.rows} rows ({rep.writes} writes, {rep.reads} reads, {verified}{how}) in "
          f"{rep.seconds:.3f} s")
    return 0


def warn_held(b: Board, cmd: str) -> str | None:
    """Say on stderr that the input is held, and by whom (no packet runs meanwhile); returns the owner."""
    from hxdp.board.tools import hold_message

    info = b.hold_info()
    if info is None:
        return None
    print(f"hxdp {cmd}: {hold_message(b, info.text())}", file=sys.stderr, flush=True)
    return info.text()


def cmd_dump_imem(args: argparse.Namespace) -> int:
    from hxdp.board.tools import dump_imem, dump_imem_lines, load_layout

    layout = load_layout(args.layout) if args.layout else None
    with board_from_args(args) as b:
        rom = dump_imem(b, args.rows)
        warn_held(b, "dump-imem")
    if args.output:
        Rom(rom.rows).save(args.output)
    print("\n".join(dump_imem_lines(rom, layout)))
    return 0


def _layout(args: argparse.Namespace):  # noqa: ANN202
    from hxdp.board.tools import layout_path_for, load_layout

    if args.layout:
        return load_layout(args.layout)
    if args.rom:
        return load_layout(layout_path_for(args.rom))
    raise MapError("maps by name need the map layout: --layout PROG.maps.json or --rom PROG.rom")


def _key_value(bm: BoardMaps, name: str, tokens: list[str], want_value: bool) -> tuple[bytes, bytes | None, int]:
    """NAME's operands as `hxdp map` takes them (bpftool's DATA, or one hex token each)."""
    from hxdp.cli.bpftool import OUTER_KINDS, parse_elem
    from hxdp.cli.objects import inner_value

    r = bm.region(name)
    if want_value and r.kind in OUTER_KINDS:  # a map of maps' value: value id ID or value name NAME (an inner map)
        tokens = inner_value(bm.layout, tokens)
    elem = parse_elem(tokens, r.key_size, r.value_size, want_value)
    return elem.key, elem.value, elem.flags


def cmd_maps(args: argparse.Namespace) -> int:  # noqa: C901
    from hxdp.board.tools import BoardMaps, bpftool_bytes, dump_json, parse_bytes, parse_u32, read_line, write_line

    if args.maps_cmd == "line":  # operands checked before a board is contacted
        line = parse_u32(args.line, "map line")
        data = None if args.data is None else parse_bytes(args.data, "line")
        if data is not None and len(data) != params.AXI_LINE_BYTES:
            raise MapError(f"a map line is {params.AXI_LINE_BYTES} bytes, got {len(data)}")
    with board_from_args(args) as b:
        if args.maps_cmd == "line":
            if data is not None:
                write_line(b, line, data)
            else:
                print(read_line(b, line).hex())
            return 0
        bm = BoardMaps(b, _layout(args), atomic=not args.no_hold, force=args.force)
        if args.maps_cmd == "list":
            for m in bm.list():
                print(f"{m['id']}: {m['type']}  name {m['name']}  key {m['key']}B  value {m['value']}B  "
                      f"max_entries {m['max_entries']}  entries {m['entries']}  at 0x{m['offset']:x} ({m['bytes']}B)")
            return 0
        if args.maps_cmd == "dump":
            if args.name:
                print(dump_json(bm.dump(args.name)))
            else:
                print(json.dumps({n: json.loads(dump_json(e)) for n, e in bm.dump_all().items()}, indent=1))
            return 0
        if args.maps_cmd == "lookup":
            key, _, _ = _key_value(bm, args.name, args.operands, False)
            value = bm.lookup(args.name, key)
            if value is None:
                raise MapError(f"map {args.name}: key {key.hex()} not found")
            print(json.dumps({"key": bpftool_bytes(key), "value": bpftool_bytes(value)}, indent=1))
            return 0
        if args.maps_cmd == "update":
            key, value, flags = _key_value(bm, args.name, args.operands, True)
            assert value is not None
            err = bm.update(args.name, key, value, flags)
            if err:
                raise MapError(f"map {args.name}: update of key {key.hex()} failed: {os.strerror(-err)}")
            return 0
        if args.maps_cmd == "delete":
            key, _, _ = _key_value(bm, args.name, args.operands, False)
            err = bm.delete(args.name, key)
            if err:
                raise MapError(f"map {args.name}: delete of key {key.hex()} failed: {os.strerror(-err)}")
            return 0
    raise HxdpError(f"unknown maps command {args.maps_cmd}")


def check_interval(value: float, what: str = "--interval") -> float:
    """A polling interval: a finite number of seconds, not negative."""
    if not math.isfinite(value) or value < 0:
        raise HxdpError(f"{what} {value}: expected a number of seconds, 0 or more")
    return value


def cmd_monitor(args: argparse.Namespace) -> int:
    from hxdp.board.tools import Monitor, format_sample

    check_interval(args.interval)
    if args.count is not None and args.count < 1:
        raise HxdpError(f"--count {args.count}: expected 1 or more samples")
    from hxdp.board import original as orig

    with board_from_args(args) as b:
        original = orig.check_claim(b, args.original)  # the original's counters mean other things
        mon = orig.OriginalMonitor(b) if original else Monitor(b)
        n = 0
        while args.count is None or n < args.count:
            time.sleep(args.interval)
            s = mon.sample()
            info = None if original else b.hold_info()
            held_by = info.text() if info else None
            if args.json:
                print(json.dumps({"sample": s, "totals": mon.totals, "held_by": held_by}
                                 | ({"bitstream": "original"} if original else {})), flush=True)
            else:
                text = orig.format_sample(s, mon.totals) if original else format_sample(s, mon.totals)
                print(text + (f"  | input HELD by {held_by}" if held_by else ""), flush=True)
            n += 1
    return 0


def cmd_tracelog(args: argparse.Namespace) -> int:
    from hxdp.board.tools import read_tracelog

    check_interval(args.interval)
    with board_from_args(args) as b:
        last_dropped: int | None = None
        while True:
            recs, dropped = read_tracelog(b)
            for r in recs:
                if args.json:
                    print(json.dumps({"packet": r.packet, "format": r.fmt.decode("latin-1"), "args": list(r.args),
                                      "text": r.text()}), flush=True)
                else:
                    print(r.line(), flush=True)
            lost = dropped if last_dropped is None else (dropped - last_dropped) & 0xFFFFFFFF
            if lost:
                print(f"hxdp tracelog: {lost} records dropped (trace FIFO full)", file=sys.stderr, flush=True)
            last_dropped = dropped
            if not args.follow:
                return 0
            time.sleep(args.interval)


def cmd_load(args: argparse.Namespace) -> int:
    """hxdp load and hxdp prog load: compile, configure the maps, inject; noted on this host for `prog show`."""
    from hxdp.atomic_write import check_outputs, layout_path_beside
    from hxdp.board import original as orig
    from hxdp.board.tools import compile_loaded, configure_and_inject, remember_load, save_rom_and_layout
    from hxdp.fib.table import Fib
    from hxdp.frontend.elf import host_notes, load_program
    from hxdp.models.mapconfig import load_map_config

    cfg = load_map_config(args.config) if args.config else None  # checked before anything is done
    fib = Fib.load(args.fib) if args.fib else None
    if args.output is not None:
        beside = layout_path_beside(args.output)
        check_outputs({args.output: "ROM"} | ({beside: "map layout"} if beside else {}),
                      [args.object] + ([args.config] if args.config else []))
    sizes = sizes_from_args(args, cfg, args.config)
    chain = chain_from_args(args)
    if chain is not None and args.target != "hxdp":
        raise HxdpError(f"--target {args.target}: not supported with a chain, because the dispatcher's chain is "
                        "compiled for our core only (hxdp.frontend.chain)")
    if chain is not None:  # the dispatcher's chain: one ROM (hxdp.frontend.chain)
        inner_from_cfg(cfg, args.config, chain=True)
        rom, layout = compile_chain(args, [(args.object, args.prog), *chain.links], chain.actions, sizes)
    else:
        program = load_program(args.object, args.section, args.prog, sizes,  # our reading's errors come first
                               inner_from_cfg(cfg, args.config))
        verify_in_kernel(args, args.object, args.section, args.prog, sizes)
        rom, layout = compile_loaded(program, args.target)  # refused before the board
    if fib is not None and not layout.fib:
        raise HxdpError(f"--fib: {args.object} does not call bpf_fib_lookup (its map layout has no FIB region)")
    with board_from_args(args) as b:
        if chain is None and args.target != "hxdp-original" and orig.is_original(b):
            raise HxdpError(f"{b.name}: the board runs the original hXDP bitstream, whose core reads some of our "
                            "core's opcodes otherwise: load with --target hxdp-original")
        rep = configure_and_inject(b, rom, layout, cfg, atomic=not args.no_hold, extensions=not args.original,
                                   fib_image=fib.image() if fib is not None else None,
                                   force=getattr(args, "force", False))
        remember_load(b, rep.rom, rep.layout, args.object)
    if args.output is not None:
        save_rom_and_layout(rom, layout, args.output)
    if getattr(args, "json", False) or getattr(args, "pretty", False):
        doc = {"name": Path(args.object).stem, "rows": rep.inject.rows, "maps": [r.name for r in rep.layout.regions],
               "map_lines": rep.map_lines, "seconds": round(rep.inject.seconds, 6)}
        print(json.dumps(doc, indent=4) if getattr(args, "pretty", False) else json.dumps(doc, separators=(",", ":")))
        return 0
    print(f"loaded {Path(args.object).name}: {rep.inject.rows} rows, {len(rep.layout.regions)} maps "
          f"({rep.map_lines} map lines written) in {rep.inject.seconds:.3f} s")
    if args.section is None and args.prog is None:
        for note in host_notes(args.object):
            print(note)
    return 0


def compile_chain(args: argparse.Namespace, links: list, actions: list, sizes: dict[str, int]) -> tuple:
    """The ROM and layout of a dispatcher's chain, each object through the kernel verifier first."""
    from hxdp.board.tools import check_rom, map_config_entries
    from hxdp.compiler import CompileOptions, compile_program
    from hxdp.frontend.chain import load_chain

    program = load_chain(links, actions, sizes)
    verify_chain_in_kernel(args, links, sizes)
    result = compile_program(program, CompileOptions())
    check_rom(result.rom)
    map_config_entries(result.layout)
    return result.rom, result.layout


def add_load_arguments(lo: argparse.ArgumentParser) -> None:
    """The operands of hxdp load and hxdp prog load."""
    lo.add_argument("object", help="eBPF ELF object (clang -target bpf)")
    lo.add_argument("--section", help="ELF section of the program (default: the only XDP program)")
    lo.add_argument("--prog", help="function name of the program")
    add_chain_options(lo)
    lo.add_argument("--config", help="initial map configuration (JSON)")
    add_map_option(lo)
    add_verify_option(lo)
    lo.add_argument("--fib", help="FIB of bpf_fib_lookup (`hxdp fib sync` writes it) for its region of map memory")
    lo.add_argument("-o", "--output", help="also save the ROM (and PROG.maps.json next to it)")
    lo.add_argument("--no-hold", action="store_true", help="do not hold the input while loading")
    lo.add_argument("--force", action="store_true", help="take over an input hold a live owner keeps")
    lo.add_argument("--original", action="store_true", help="the original bitstream (probed): 256 rows, no hold")
    add_target_option(lo)


# --- registration ----------------------------------------------------------------------------------------------------
def register(subparsers: argparse._SubParsersAction) -> None:
    bp = _board_parent()
    p = subparsers.add_parser("board", help="the simulated board: serve, send traffic, read its outputs",
                              description="The simulated NetFPGA board: Sephirot with its AXI-Lite register map "
                                          "under Verilator, reachable over a Unix socket (docs/board.md).")
    sub = p.add_subparsers(dest="board_cmd", metavar="SUBCOMMAND", required=True)
    s = sub.add_parser("serve", help="run the simulated board daemon in the foreground")
    s.add_argument("--socket", default=DEFAULT_SOCKET, help=f"Unix socket path (default {DEFAULT_SOCKET})")
    s.add_argument("--ports", type=int, default=1, help="input ports (1-4; port k has ingress_ifindex k+1)")
    s.add_argument("--cores", type=int, default=1,
                   help="Sephirot cores running the program (1-8, docs/execution_contract.md section 8; a build of "
                        "its own per count; the board's CORES register reads it)")
    s.add_argument("--pcap", help="replay this pcap into an input port at full speed")
    s.add_argument("--pcap-port", type=int, default=0, help="port the pcap is replayed on (default 0)")
    s.add_argument("--loop", action="store_true", help="replay the pcap in a loop")
    s.add_argument("--out", help="write TX and REDIRECT frames leaving by a port to this pcap")
    s.add_argument("--host-pcap", metavar="DIR",
                   help="write the frames delivered into host queues to DIR/cpuN.pcap (cpumap) and DIR/xskN.pcap "
                        "(xskmap), one file per queue")
    s.add_argument("--host-hold", action="store_true",
                   help="the simulated host takes no frame from its queues: they fill up to their size (cpumap "
                        "qsize, AF_XDP ring) and further frames are dropped and counted")
    s.add_argument("--group", help="socket mode 0660 with this group (default 0600: only this user)")
    s.add_argument("--step", action="store_true", help="the clock advances only on requests (RUN/WAIT, AXI)")
    s.add_argument("--keep", type=int, default=None, help="outputs kept for retrieval (default 100000)")
    s.add_argument("--tap", metavar="NAME[,NAME..]",
                   help="create TAP interfaces, one per port (bump in the wire: TX leaves by the same TAP, PASS by "
                        "the next port's, REDIRECT to ifindex i by port i-1's)")
    s.set_defaults(func=cmd_serve)
    for name, fn, hlp in (("stat", cmd_stat, "harness statistics"),
                          ("stop-replay", cmd_stop_replay, "stop pcap replay"),
                          ("shutdown", cmd_shutdown, "stop the daemon")):
        q = sub.add_parser(name, parents=[bp], help=hlp)
        q.set_defaults(func=fn)
    q = sub.add_parser("send", parents=[bp], help="send a pcap into an input port")
    q.add_argument("pcap", help="Ethernet pcap to send")
    q.add_argument("--port", type=int, default=0, help="input port (default 0; port k has ingress_ifindex k+1)")
    q.add_argument("--loop", action="store_true", help="replay in a loop at full speed (until stop-replay)")
    q.add_argument("--wait", action="store_true", help="return when every packet has left the board")
    q.set_defaults(func=cmd_send)
    q = sub.add_parser("out", parents=[bp], help="print (or write to pcap) the packets that left the board")
    q.add_argument("--pcap", help="write TX/REDIRECT frames here instead of printing")
    q.add_argument("--wait", action="store_true", help="first wait until every queued packet has left")
    q.set_defaults(func=cmd_out)

    a = subparsers.add_parser("axi", parents=[bp], help="read or write one AXI-Lite register (like rwaxi)")
    a.add_argument("-a", "--address", required=True, help="register address (0x...)")
    a.add_argument("-w", "--write", metavar="VALUE", help="write VALUE instead of reading")
    a.add_argument("-i", "--iface", help="NetFPGA interface (same as --board sume:IFACE)")
    a.set_defaults(func=cmd_axi)

    i = subparsers.add_parser("inject", parents=[bp], help="write a ROM into instruction memory, verified, atomically")
    i.add_argument("rom", help="ROM file (hXDP text format)")
    i.add_argument("--no-verify", action="store_true", help="do not read the rows back")
    i.add_argument("--no-hold", action="store_true", help="do not hold the input while writing (not atomic)")
    i.add_argument("--original", action="store_true", help="the original bitstream (probed): 256 rows, no hold")
    i.add_argument("--force", action="store_true", help="take over an input hold a live owner keeps")
    i.set_defaults(func=cmd_inject)

    d = subparsers.add_parser("dump-imem", parents=[bp], help="print instruction memory rows, hex and disassembly "
                              "(alias of hxdp prog dump rows)")
    d.add_argument("rows", nargs="?", type=int, help="rows to dump (default: the loaded program's row count)")
    d.add_argument("--layout", help="map layout file, for map names in the disassembly")
    d.add_argument("-o", "--output", help="also save the rows as a ROM file")
    d.set_defaults(func=cmd_dump_imem)

    m = subparsers.add_parser("maps", parents=[bp], help="map entries, JSON output (older form of hxdp map); raw lines")
    m.add_argument("--layout", help="map layout file PROG.maps.json")
    m.add_argument("--rom", help="ROM whose PROG.maps.json to use")
    m.add_argument("--no-hold", action="store_true", help="do not hold the input while writing several lines")
    m.add_argument("--force", action="store_true", help="take over an input hold another owner left")
    ms = m.add_subparsers(dest="maps_cmd", metavar="OP", required=True)
    ms.add_parser("list", help="maps with their entry counts")
    x = ms.add_parser("dump", help="entries as bpftool-like JSON")
    x.add_argument("name", nargs="?", help="map name (default: every map)")
    for op, hlp in (("lookup", "NAME KEY"), ("update", "NAME KEY VALUE [flags any|noexist|exist] (a map of maps: "
                                                   "value id ID or value name NAME)"),
                    ("delete", "NAME KEY")):
        x = ms.add_parser(op, help=hlp)
        x.add_argument("name", help="map name (as in the map layout file)")
        x.add_argument("operands", nargs="+", help="hex bytes, or bpftool style: key hex .. value hex ..")
    x = ms.add_parser("line", help="read (or write) one raw 128-bit map line")
    x.add_argument("line", help="line number (byte offset / 16)")
    x.add_argument("data", nargs="?", help="32 hex digits to write (memory byte order)")
    m.set_defaults(func=cmd_maps)

    mo = subparsers.add_parser("monitor", parents=[bp], help="live packet rates and totals from the board counters")
    mo.add_argument("--interval", type=float, default=1.0, help="seconds between samples")
    mo.add_argument("--count", type=int, help="stop after this many samples")
    mo.add_argument("--json", action="store_true", help="one JSON object per sample")
    mo.add_argument("--original", action="store_true", help="the original bitstream (probed): its 3 counters")
    mo.set_defaults(func=cmd_monitor)

    t = subparsers.add_parser("tracelog", parents=[bp],
                              help="print and pop the trace_printk records of the board (like bpftool prog tracelog)")
    t.add_argument("--follow", "-f", action="store_true", help="keep polling the FIFO")
    t.add_argument("--interval", type=float, default=0.2, help="seconds between polls with --follow")
    t.add_argument("--json", action="store_true", help="one JSON object per record")
    t.set_defaults(func=cmd_tracelog)

    lo = subparsers.add_parser("load", parents=[bp], help="compile an XDP object, configure its maps, inject it "
                               "(alias of hxdp prog load)")
    add_load_arguments(lo)
    lo.set_defaults(func=cmd_load)
