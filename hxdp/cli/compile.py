"""`hxdp compile`: eBPF object -> VLIW ROM (hXDP text format) plus its map layout file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hxdp.atomic_write import check_outputs, layout_path_beside, write_outputs
from hxdp.cli.loading import (
    add_chain_options,
    add_map_option,
    add_verify_option,
    chain_from_args,
    inner_from_cfg,
    sizes_from_args,
    tiers_from_args,
    verify_chain_in_kernel,
    verify_in_kernel,
)
from hxdp.compiler import TARGETS, CompileOptions, compile_program
from hxdp.errors import HxdpError

# --no-X flags: option name -> help
NO_FLAGS = {
    "bounds": "keep packet bounds checks",
    "zeroing": "keep zeroing of stack variables",
    "alu3": "no three-operand ALU instructions",
    "ld6": "no 6-byte load/store",
    "exit_action": "no exit-with-action",
    "tail_dup": "do not copy exit blocks and small joins into predecessors",
    "hoist": "schedule basic blocks one at a time (no code motion across blocks)",
    "speculate": "never move instructions above a side exit",
    "rename": "no register renaming",
    "copyprop": "no copy propagation and no redundant-mask removal",
    "load_cse": "load packet bytes again where a register already holds them",
    "atomic_rmw": "keep load/add/store sequences (no atomic add)",
    "wide_loads": "keep byte loads that are shifted and or-ed together",
    "rewrite_checks": "keep the remaining bounds checks as p + K > data_end",
}


def _lanes_list(text: str) -> tuple[int, ...]:
    out: list[int] = []
    try:
        for part in text.split(","):
            if "-" in part:
                a, b = part.split("-", 1)
                out += range(int(a), int(b) + 1)
            elif part:
                out.append(int(part))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: lane counts are a list or range, e.g. 1-8 or 2,4") from None
    if any(n < 1 or n > 16 for n in out):
        raise argparse.ArgumentTypeError("lane counts must be 1..16")
    return tuple(out)


def tier_summary(tiers: dict[str, dict]) -> str:
    """One line: the bytes in use of each map memory tier and the maps placed there (the report's "map_tiers")."""
    parts = [f"{t} {u['bytes']:,} of {u['capacity']:,} bytes" + (f" ({', '.join(u['maps'])})" if u["maps"] else "")
             for t, u in tiers.items()]
    return "map memory: " + "; ".join(parts)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile", help="compile an XDP object into a Sephirot ROM",
                       description="Compile an eBPF XDP object into a VLIW ROM (PROG.rom) and its map layout "
                                   "(PROG.maps.json), and print instruction count, rows and static IPC.")
    p.add_argument("object", help="eBPF ELF object (clang -target bpf)")
    p.add_argument("--section", help="ELF section of the program (default: the only XDP program)")
    p.add_argument("--prog", help="function name of the program")
    add_chain_options(p)
    add_map_option(p, tiers=True)
    add_verify_option(p)
    p.add_argument("--maps", metavar="INIT.json", help="map configuration whose \"max_entries\" sizes the maps "
                   "and whose \"inner_maps\" creates the inner maps of maps of maps (its entries are loaded by "
                   "load, run and diff)")
    p.add_argument("-o", "--output", help="ROM path (default: OBJECT with .rom)")
    p.add_argument("--lanes", type=int, default=4, help="VLIW lanes (default 4)")
    add_target_option(p)
    p.add_argument("--report", help="write a JSON report (instruction counts per pass, rows, static IPC)")
    p.add_argument("--sweep", type=_lanes_list, default=(), metavar="LANES",
                   help="also report rows for these lane counts, e.g. 1-8")
    for name, text in NO_FLAGS.items():
        p.add_argument(f"--no-{name.replace('_', '-')}", dest=f"no_{name}", action="store_true", help=text)
    p.set_defaults(func=run)


def add_target_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", choices=TARGETS, default="hxdp",
                   help="the core the ROM is for: hxdp (ours, default) or hxdp-original (the original hXDP "
                        "bitstream: its ISA, 11 registers, 256 rows; docs/compiler.md)")


def options_from_args(args: argparse.Namespace) -> CompileOptions:
    kw = {name: not getattr(args, f"no_{name}") for name in NO_FLAGS}
    return CompileOptions(lanes=args.lanes, lanes_sweep=tuple(args.sweep), target=args.target, **kw)


def run(args: argparse.Namespace) -> int:
    from hxdp.frontend.elf import host_notes, load_program
    from hxdp.frontend.sizing import apply_tiers
    from hxdp.models.mapconfig import load_map_config

    if args.lanes < 1 or args.lanes > 16:
        raise HxdpError(f"--lanes {args.lanes}: must be 1..16")
    obj = Path(args.object)
    if args.output == "":
        raise HxdpError("-o '': the ROM path is empty")
    rom_path = Path(args.output) if args.output is not None else obj.with_suffix(".rom")
    maps_path = layout_path_beside(rom_path)
    # Every output is checked before anything is written, so a bad path never leaves a partial set behind.
    outputs = {rom_path: "ROM"} | ({maps_path: "map layout"} if maps_path else {}) | \
        ({args.report: "report"} if args.report is not None else {})
    check_outputs(outputs, [obj] + ([args.maps] if args.maps else []))
    cfg = load_map_config(args.maps) if args.maps else None
    sizes = sizes_from_args(args, cfg, args.maps, tiers=True)
    tiers = tiers_from_args(args, cfg, args.maps)
    chain = chain_from_args(args)
    if chain is not None:
        from hxdp.frontend.chain import load_chain

        inner_from_cfg(cfg, args.maps, chain=True)

        links = [(args.object, args.prog), *chain.links]  # type: ignore[attr-defined]
        program = load_chain(links, chain.actions, sizes)  # type: ignore[attr-defined]
        verify_chain_in_kernel(args, links, sizes)
    else:
        program = load_program(args.object, args.section, args.prog, sizes,  # our reading of the object first
                               inner_from_cfg(cfg, args.maps))
        verify_in_kernel(args, args.object, args.section, args.prog, sizes)
    result = compile_program(apply_tiers(program, tiers), options_from_args(args))
    rep = result.report
    # padded to the original loader's 256 rows when it fits (a longer ROM is not padded: hxdp.isa.rom)
    files: list[tuple[Path | str, str]] = [(rom_path, result.rom.to_text())]
    if maps_path:
        files.append((maps_path, result.layout.to_json()))
    if args.report is not None:
        doc = dict(rep)
        doc["object"] = obj.name
        doc.pop("compile_seconds", None)
        files.append((args.report, json.dumps(doc, indent=1, sort_keys=True) + "\n"))
    write_outputs(files)  # all or none
    counts = rep["counts"]
    print(f"{obj.name}: {program.name}: {rep['original_insns']} eBPF instructions -> {counts['extended']} after "
          f"reduction/extension -> {rep['rows']} rows of {args.lanes} lanes, static IPC {rep['static_ipc']:.2f}")
    print(f"instruction memory: {rep['rows']} of {rep['imem_rows']} rows ({100 * rep['rows'] / rep['imem_rows']:.1f}%)")
    if rep.get("rows_by_lanes"):
        print("rows by lanes: " + ", ".join(f"{k}: {v if v is not None else '-'}"
                                            for k, v in rep["rows_by_lanes"].items()))
    if rep.get("programs"):
        print("programs resident (tail calls, a chain; entry rows): " +
              ", ".join(f"{p['name']} {p['row']}" for p in rep["programs"]))
    print(tier_summary(rep["map_tiers"]))
    if rep["unused_maps"]:
        print(f"maps the program never references (not placed): {', '.join(rep['unused_maps'])}")
    print(f"wrote {rom_path} and {maps_path}" if maps_path else f"wrote {rom_path} (a device: no map layout beside it)")
    if args.section is None and args.prog is None:
        for note in host_notes(args.object):
            print(note)
    return 0
