"""Linux XDP baseline of the xdp_progs/ suite: `python benchmarks/bench_baseline.py` -> benchmarks/out/baseline.json.

Every built object (xdp_progs/build/NAME.o) is measured by `hxdp.baseline` with its traffic
(xdp_progs/traffic/NAME.pcap, or --pcap for all, or a generated 64-byte UDP trace when a program has none; every
distinct packet is measured and weighted by its count, as Sephirot runs the trace back to back) and its initial maps
(xdp_progs/maps/NAME.json when present). With --sephirot FILE (JSON {"NAME": cycles_per_packet, ...} or a list of
{"program": NAME, "cycles_per_packet": C}) the table gets the Sephirot Mpps (156.25 / C) and the Sephirot/Linux
ratio of each mode. Every figure names the path (action) it measured and whether it was checked to be the one
`hxdp kernel-run` gives the frame; the load average around each program is in the JSON. Needs root (bpf(), network
namespaces).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from hxdp.atomic_write import write_atomic
from hxdp.errors import HxdpError
from hxdp.linux import baseline
from hxdp.suite import PROGS_DIR, SuiteProgram, programs
from hxdp.traffic.gen import generate
from hxdp.traffic.pcap import write_pcap

OUT_DIR = Path(__file__).resolve().parent / "out"
MIN_B2B = 64  # packets in a back-to-back Sephirot run (the trace repeated)


def sephirot_cycles(path: str | None) -> dict[str, float]:
    """Cycles/packet per program name from a Sephirot results file (see the module docstring)."""
    if not path:
        return {}
    doc = json.loads(Path(path).read_text())
    if isinstance(doc, dict) and "results" in doc:
        doc = doc["results"]
    out: dict[str, float] = {}
    if isinstance(doc, dict):
        for name, v in doc.items():
            c = v.get("cycles_per_packet") if isinstance(v, dict) else v
            if isinstance(c, int | float) and c > 0:
                out[name] = float(c)
    elif isinstance(doc, list):
        for item in doc:
            name = item.get("program") or item.get("name")
            c = item.get("cycles_per_packet") or item.get("cycles")
            if name and isinstance(c, int | float) and c > 0:
                out[name] = float(c)
    return out


def sephirot_from_engine(prog: SuiteProgram, pcap: Path, engine: str) -> tuple[float, str]:
    """Cycles/packet of the program on Sephirot for its trace, repeated to at least MIN_B2B packets.

    rtl: the Verilator model run back to back, steady state = interval between packet completions over the
    second half of the run; vliw-model: mean of the model's per-packet cycles (no packet path)."""
    from hxdp.compiler import compile_program
    from hxdp.models.maps import MapState
    from hxdp.traffic.pcap import read_pcap

    frames = read_pcap(pcap)
    frames = frames * max(1, -(-MIN_B2B // len(frames)))
    result = compile_program(prog.load())
    state = MapState(result.layout)
    state.apply_config(prog.map_config())
    if engine == "vliw-model":
        from hxdp.models.vliw import VliwModel

        model = VliwModel(result.rom, state)
        return statistics.mean(model.run(f).cycles for f in frames), "vliw-model: mean cycles per packet"
    from hxdp.rtl.sim import RtlSim

    sim = RtlSim(result.rom, layout=result.layout, state=state)
    sim.run_packets(frames)
    n, half = len(sim.stamps), len(sim.stamps) // 2
    if n >= 4:
        return (sim.stamps[-1].out - sim.stamps[half - 1].out) / (n - half), \
            "rtl: interval between packet completions, second half of a back-to-back run"
    return sim.total_cycles / max(1, n), "rtl: total cycles / packets"


def default_pcap(out_dir: Path) -> Path:
    """A 64-byte UDP trace over 4 flows, for programs without their own traffic."""
    path = out_dir / "default_udp_64B.pcap"
    write_pcap(path, generate(flows=4, count=16, size=64, proto="udp", seed=1))
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--progs", type=Path, default=PROGS_DIR, help="the suite folder (default xdp_progs/)")
    ap.add_argument("--only", nargs="*", help="program names to measure (default: all built)")
    ap.add_argument("--out", type=Path, default=OUT_DIR / "baseline.json")
    ap.add_argument("--pcap", type=Path, help="one trace for every program instead of xdp_progs/traffic/NAME.pcap")
    ap.add_argument("--repeat", type=int, default=200_000, help="packets per kernel call (default 200000)")
    ap.add_argument("--test-runs", type=int, default=20_000,
                    help="test_run: calls of one frame each, for frames the program rewrites (default 20000)")
    ap.add_argument("--runs", type=int, default=5, help="runs per packet and mode, median reported (default 5)")
    ap.add_argument("--max-packets", type=int, default=64,
                    help="distinct packets of each trace measured (default 64: every packet of the suite's traces)")
    ap.add_argument("--sephirot", help="Sephirot cycles/packet per program (JSON)")
    ap.add_argument("--sephirot-engine", choices=("rtl", "vliw-model"),
                    help="compute Sephirot cycles/packet on the same trace with the RTL or the VLIW model")
    ap.add_argument("--rate-from", choices=("cpu", "wall", "kernel"), default="cpu",
                    help="figure the Mpps come from (see hxdp.baseline.Options)")
    ap.add_argument("--no-veth", action="store_true", help="BPF_PROG_TEST_RUN only")
    ap.add_argument("--no-native", action="store_true", help="skip the attached native-XDP mode")
    args = ap.parse_args(argv)

    ok, why = baseline.available()
    if not ok:
        print(f"bench_baseline: bpf() unavailable: {why}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cycles = sephirot_cycles(args.sephirot)
    fallback: Path | None = None
    results: list[baseline.BaselineResult] = []
    failures: dict[str, str] = {}
    suite = [p for p in programs(args.progs) if not args.only or p.name in args.only]
    t0 = time.monotonic()
    for prog in suite:
        if not prog.obj.exists():
            failures[prog.name] = f"{prog.obj} not built (make progs)"
            continue
        if args.pcap:
            pcap = args.pcap
        elif prog.traffic.exists():
            pcap = prog.traffic
        else:
            fallback = fallback or default_pcap(args.out.parent)
            pcap = fallback
        seph_note = f"from {args.sephirot}" if prog.name in cycles else None
        if args.sephirot_engine and prog.name not in cycles:
            try:
                cycles[prog.name], seph_note = sephirot_from_engine(prog, pcap, args.sephirot_engine)
            except HxdpError as exc:
                seph_note = f"Sephirot figure unavailable: {exc}"
                print(f"    {seph_note}", file=sys.stderr)
        opt = baseline.Options(repeat=args.repeat, test_runs=args.test_runs, runs=args.runs,
                               max_packets=args.max_packets,
                               veth=not args.no_veth, native=not args.no_native,
                               sephirot_cycles=cycles.get(prog.name), rate_from=args.rate_from)
        print(f"... {prog.name} ({pcap.name})", file=sys.stderr, flush=True)
        try:
            r = baseline.run_baseline(str(prog.obj), str(pcap), maps=str(prog.maps) if prog.maps.exists() else None,
                                      sizes=prog.sizes(),
                                      options=opt)
        except HxdpError as exc:
            failures[prog.name] = str(exc)
            print(f"    failed: {exc}", file=sys.stderr)
            continue
        r.program = prog.name  # the suite's name (the object's function name may differ)
        if seph_note:
            r.modes[0].notes.append(f"Sephirot cycles/packet {cycles.get(prog.name)}: {seph_note}")
        results.append(r)
    elapsed = time.monotonic() - t0
    print(baseline.format_table(results))
    for name, why in failures.items():
        print(f"{name}: not measured: {why}")
    extra = {"suite": str(args.progs), "elapsed_s": round(elapsed, 1), "failures": failures,
             "sephirot_source": args.sephirot or args.sephirot_engine}
    write_atomic(args.out, baseline.to_json(results, extra))
    print(f"wrote {args.out} ({len(results)} programs, {elapsed:.0f} s)")
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
