"""`hxdp run`: stream a pcap through the Sephirot RTL (or the N-core VLIW model) back to back; actions, cycles."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from hxdp import params
from hxdp.cli.loading import add_map_option, check_rom_inner, check_rom_sizes, inner_from_cfg, sizes_from_args
from hxdp.diffcores import cores_refusal
from hxdp.errors import HxdpError
from hxdp.isa.rom import Rom
from hxdp.traffic.pcap import check_frame_sizes, read_pcap, write_pcap


def layout_for(rom_path: str, layout_path: str | None) -> object | None:
    """The map layout given, or PROG.maps.json next to the ROM, or None (a program without maps)."""
    from hxdp.models.maps import MapLayout

    candidates = [layout_path] if layout_path else [str(Path(rom_path).with_suffix(".maps.json")),
                                                    rom_path + ".maps.json"]
    for cand in candidates:
        if cand and os.path.exists(cand):
            return MapLayout.load(cand)  # MapError names the file (unreadable, binary, malformed)
        if layout_path:
            raise HxdpError(f"{layout_path}: no such map layout file")
    return None


def _install_fib(args: argparse.Namespace, layout: object | None, state: object | None) -> int:
    """Load --fib into map memory; the ingress ifindex of the packets (--ingress DEV of the FIB, else 1)."""
    from hxdp.fib.table import Fib

    if not args.fib:
        if args.ingress:
            raise HxdpError("--ingress DEV names an interface of the FIB: give --fib FIB.json")
        return 1
    fib = Fib.load(args.fib)
    if state is None or not getattr(layout, "fib", False):
        raise HxdpError(f"--fib: {args.rom} does not call bpf_fib_lookup (its map layout has no FIB region)")
    fib.install(state.mem)
    return fib.iface(args.ingress).ifindex if args.ingress else 1


def run_pcap(args: argparse.Namespace) -> dict:
    from hxdp.atomic_write import check_writable
    from hxdp.models.mapconfig import load_map_config
    from hxdp.models.maps import MapState
    from hxdp.romcheck import check_rom_contract
    from hxdp.rtl.sim import RtlSim

    # (the RTL checks its core count and what it cannot run on several cores itself: hxdp.rtl.sim.cores_refusal)
    refusal = cores_refusal(args.engine, args.cores) if args.engine != "rtl" else None
    if refusal is not None:
        raise HxdpError(refusal)
    if args.engine != "rtl":
        given = [f"--{o}" for o in ("vcd", "trace") if getattr(args, o)]
        if given:
            raise HxdpError(f"not supported: {given[0]} with --engine {args.engine}, because it is the RTL's output")
    rom = Rom.load(args.rom)
    check_rom_contract(rom, args.rom)  # the engines would disagree on a ROM that breaks it
    for path, what in ((args.vcd, "waveform"), (args.trace, "trace"), (args.events, "events")):
        if path:
            check_writable(path, what)  # refused before the simulation, not after it
    layout = layout_for(args.rom, args.layout)
    cfg = load_map_config(args.maps) if args.maps else None
    sizes = sizes_from_args(args, cfg, args.maps)
    state = None
    if layout is not None:
        check_rom_sizes(layout, sizes, args.rom)
        check_rom_inner(layout, inner_from_cfg(cfg, args.maps), args.rom)
        state = MapState(layout)
        if cfg is not None:
            state.apply_config(cfg, source=args.maps)  # MapError names the file
    elif sizes:
        raise HxdpError(f"--map needs the map layout (PROG.maps.json next to {args.rom}, or --layout)")
    elif args.maps:
        raise HxdpError(f"--maps needs the map layout (PROG.maps.json next to {args.rom}, or --layout)")
    ifindex = _install_fib(args, layout, state)
    packets = read_pcap(args.pcap)
    check_frame_sizes(packets, args.pcap)
    if not packets:
        raise HxdpError(f"{args.pcap}: no packets")
    if args.engine == "vliw-model":
        return _run_model(args, rom, state, packets, ifindex)
    sim = RtlSim(rom, layout, state, vcd=args.vcd, trace_file=args.trace, cores=args.cores)
    results = sim.run_packets([(p, ifindex, 0) for p in packets])
    rows = []
    for i, (r, st) in enumerate(zip(results, sim.stamps, strict=True)):
        rows.append({"packet": i, "action": r.action, "action_name": r.action_name, "cycles": r.cycles,
                     "redirect": r.redirect, "host": list(r.host) if r.host else None,
                     "broadcast": list(r.broadcast) if r.broadcast is not None else None,
                     "destination": r.destination, "fault": r.fault, "len_in": len(packets[i]),
                     "len_out": len(r.packet),
                     "start_cycle": st.start, "end_cycle": st.end, "out_cycle": st.out})
        if args.cores > 1:
            rows[-1]["core"] = st.core
    n = len(results)
    span = (sim.stamps[-1].out - sim.stamps[0].out) if n > 1 else max(1, sim.stamps[0].out - sim.stamps[0].in_cycle)
    per_packet = span / (n - 1) if n > 1 else float(span)
    summary = {"packets": n, "cycles_per_packet": round(per_packet, 3),
               "mpps": round(params.CLOCK_MHZ / per_packet, 3) if per_packet else None,
               "core_cycles_mean": round(sum(r.cycles for r in results) / n, 3),
               "simulated_cycles": sim.total_cycles, "clock_mhz": params.CLOCK_MHZ}
    if args.cores > 1:
        summary["cores"] = args.cores
    if args.out:
        write_pcap(args.out, [r.packet for r in results
                              if r.action in (params.XDP_TX, params.XDP_PASS, params.XDP_REDIRECT)])
    if args.events:
        summary["events"] = _write_events(args.events, results)
    if state is None:
        return {"packets": rows, "summary": summary, "maps": None}
    return {"packets": rows, "summary": summary, "maps": sim.dump_per_cpu() if args.cores > 1 else state.dump()}


def _write_events(path: str, results: list) -> int:
    """The runs' records as JSON lines, several cores' in the order they left (hxdp.events.run_events); their
    number."""
    from hxdp.atomic_write import write_atomic
    from hxdp.events import event_lines, run_events

    events = run_events(results)
    write_atomic(path, event_lines(events))
    return len(events)


def _run_model(args: argparse.Namespace, rom: Rom, state: object | None, packets: list[bytes], ifindex: int) -> dict:
    """The multi-core VLIW model (docs/execution_contract.md section 8): per packet its core and cycles, the
    steady-state cycles per packet of the back-to-back run."""
    from hxdp.models.maps import MapLayout, MapState
    from hxdp.models.multicore import MulticoreModel

    if state is None:
        state = MapState(MapLayout.from_maps([]))
    model = MulticoreModel(rom, state, args.cores)
    run = model.run(packets, ingress_ifindex=ifindex)
    rows = []
    for f in run.frames:
        r = f.result
        rows.append({"packet": f.index, "action": r.action, "action_name": r.action_name, "cycles": r.cycles,
                     "redirect": r.redirect, "host": list(r.host) if r.host else None,
                     "broadcast": list(r.broadcast) if r.broadcast is not None else None,
                     "destination": r.destination, "fault": r.fault, "len_in": len(packets[f.index]),
                     "len_out": f.bytes, "core": f.core, "arrival_cycle": f.arrival, "start_cycle": f.start,
                     "end_cycle": f.end, "out_cycle": f.departure, "grant_wait_cycles": f.waits,
                     "byte_wait_cycles": f.byte_waits})
    n = len(rows)
    per_packet = run.cycles_per_packet
    summary = {"packets": n, "engine": "vliw-model", "cores": args.cores, "cycles_per_packet": round(per_packet, 3),
               "mpps": round(params.CLOCK_MHZ / per_packet, 3) if per_packet else None,
               "core_cycles_mean": round(sum(f.result.cycles for f in run.frames) / n, 3),
               "grant_wait_cycles": sum(f.waits for f in run.frames),
               "byte_wait_cycles": sum(f.byte_waits for f in run.frames), "reorder_peak": run.reorder_peak,
               "clock_mhz": params.CLOCK_MHZ}
    if args.out:
        write_pcap(args.out, [r.packet for r in run.results
                              if r.action in (params.XDP_TX, params.XDP_PASS, params.XDP_REDIRECT)])
    if args.events:
        summary["events"] = _write_events(args.events, run.results)
    return {"packets": rows, "summary": summary, "maps": model.dump_per_cpu() if state.layout.regions else None}


def _cmd(args: argparse.Namespace) -> int:
    doc = run_pcap(args)
    if args.json:
        maps = doc.pop("maps")
        if maps is not None:
            # a per-CPU map of several cores: one value per core, as bpftool lists a value per CPU
            doc["maps"] = {name: {k.hex(): v.hex() if isinstance(v, bytes | bytearray) else [x.hex() for x in v]
                                  for k, v in entries.items()} for name, entries in maps.items()}
        print(json.dumps(doc, indent=1))
        return 0
    for row in doc["packets"]:
        extra = f" redirect {row['destination']}" if row["destination"] is not None else ""
        extra += f" fault: {row['fault']}" if row["fault"] else ""
        core = f" core {row['core']}" if "core" in row else ""
        print(f"{row['packet']:6d} {row['action_name']:<9} {row['cycles']:6d} cycles{core}{extra}")
    s = doc["summary"]
    print(f"{s['packets']} packets, {s['cycles_per_packet']} cycles/packet back to back "
          f"({s['mpps']} Mpps at {s['clock_mhz']} MHz), core {s['core_cycles_mean']} cycles/packet on average")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("run", help="run a ROM on the Sephirot RTL (Verilator) over a pcap",
                              description=__doc__)
    p.add_argument("rom", help="ROM file (hXDP text format)")
    p.add_argument("--pcap", required=True, help="input packets")
    p.add_argument("--out", help="write the packets leaving as TX/PASS/REDIRECT to this pcap")
    p.add_argument("--json", action="store_true", help="machine-readable output (per packet, summary, maps)")
    p.add_argument("--maps", help="initial map configuration (JSON)")
    p.add_argument("--layout", help="map layout (default: ROM.maps.json next to the ROM)")
    add_map_option(p)
    p.add_argument("--fib", help="FIB of bpf_fib_lookup (`hxdp fib sync` writes it)")
    p.add_argument("--ingress", metavar="DEV", help="ingress interface of the FIB (xdp_md ingress_ifindex)")
    p.add_argument("--engine", choices=("rtl", "vliw-model"), default="rtl",
                   help="rtl (default), or the VLIW model's cores (docs/execution_contract.md section 8)")
    p.add_argument("--cores", type=int, default=1, metavar="N",
                   help="cores sharing the maps, 1-8 (default 1): on the RTL a model with N cores (built on first "
                        "use), on the VLIW model the multi-core model")
    p.add_argument("--vcd", help="write a VCD waveform")
    p.add_argument("--trace", help="write the per-row trace of the four lanes")
    p.add_argument("--events", metavar="FILE", help="write the perf_event_output and ring buffer records as JSON "
                   "lines, several cores' in the order they left (read them with hxdp events FILE)")
    p.set_defaults(func=_cmd)
