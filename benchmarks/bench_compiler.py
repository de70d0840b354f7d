#!/usr/bin/env python3
"""Compiler benchmark: static IPC and compile time per program, executed rows per packet, random equivalence,
and the compile time of a generated 3,000-instruction object. Prints a table and writes JSON.

    python3 benchmarks/bench_compiler.py [--random N] [--json benchmarks/out/compiler.json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from equiv import check  # noqa: E402
from randprog import random_packets, random_program  # noqa: E402

from hxdp import params  # noqa: E402
from hxdp.compiler import CompileOptions, compile_program  # noqa: E402
from hxdp.frontend.elf import load_program  # noqa: E402
from hxdp.models.maps import MapState  # noqa: E402
from hxdp.models.seq import SeqModel  # noqa: E402
from hxdp.models.vliw import VliwModel  # noqa: E402

PROGS = ROOT / "xdp_progs"
# hXDP static IPC, paper Table 3 (Katran stands for our l4_load_balancer)
PAPER_IPC = {"xdp1": 1.70, "xdp2": 1.81, "xdp_adjust_tail": 2.72, "xdp_router_ipv4": 2.38, "xdp_rxq_info": 1.76,
             "xdp_tx_iptunnel": 2.83, "simple_firewall": 2.66, "l4_load_balancer": 2.62}


def _packets(name: str) -> list[bytes]:
    from hxdp.traffic.gen import generate
    from hxdp.traffic.pcap import read_pcap

    pcap = PROGS / "traffic" / f"{name}.pcap"
    return (read_pcap(pcap)[:64] if pcap.exists() else []) or generate(8, 32, 64, seed=1)


def _config(name: str) -> dict:
    f = PROGS / "maps" / f"{name}.json"
    return json.loads(f.read_text()) if f.exists() else {}


def executed(program, rom, name: str) -> tuple[float, float, float]:
    """Mean eBPF instructions (sequential model), VLIW cycles and rows per packet on the program's traffic."""
    cfg = _config(name)
    s_state, v_state = MapState.for_program(program), MapState.for_program(program)
    if cfg:
        s_state.apply_config(cfg)
        v_state.apply_config(cfg)
    seq, vliw = SeqModel(program, s_state), VliwModel(rom, v_state)
    insns, cycles = [], []
    for pkt in _packets(name):
        insns.append(seq.run(pkt).cycles)
        cycles.append(vliw.run(pkt).cycles)
    return statistics.mean(insns), statistics.mean(cycles), 0.0


def suite(sweep: bool) -> list[dict]:
    rows = []
    for obj in sorted((PROGS / "build").glob("*.o")):
        name = obj.stem
        program = load_program(obj)
        t0 = time.perf_counter()
        res = compile_program(program, CompileOptions(lanes_sweep=tuple(range(1, 9)) if sweep else ()))
        dt = time.perf_counter() - t0
        base = compile_program(program, CompileOptions(bounds=False, zeroing=False, alu3=False, ld6=False,
                                                       exit_action=False, tail_dup=False, hoist=False,
                                                       rename=False))
        ins, cyc, _ = executed(program, res.rom, name)
        mism = check(program, res.rom, _packets(name), _config(name))
        rep = res.report
        rows.append({"program": name, "insns": rep["original_insns"], "counts": rep["counts"], "rows": rep["rows"],
                     "static_ipc": rep["static_ipc"], "paper_ipc": PAPER_IPC.get(name),
                     "rows_unoptimised": base.report["rows"], "compile_s": round(dt, 4),
                     "exec_insns_per_pkt": round(ins, 2), "cycles_per_pkt": round(cyc, 2),
                     "dynamic_ipc": round(ins / cyc, 2) if cyc else None, "mismatches": len(mism),
                     "rows_by_lanes": rep.get("rows_by_lanes")})
    return rows


def big_c_source(n_blocks: int, seed: int = 1) -> str:
    """A C program of many independent hash/branch statements over packet bytes (about 3,000 eBPF insns)."""
    rng = random.Random(seed)
    body = []
    for i in range(n_blocks):
        a, b, c = rng.randrange(4), rng.randrange(4), rng.randrange(4)
        off = rng.randrange(56)
        k = rng.randrange(1, 1 << 16)
        body.append(f"\th{a} = h{b} * {k}u + p[{off}];")
        body.append(f"\tif ((h{a} & {rng.randrange(1, 255)}) == {rng.randrange(8)})"
                    f" h{c} ^= h{b} >> {rng.randrange(1, 31)};"
                    f" else h{c} += p[{rng.randrange(56)}] << {rng.randrange(1, 16)};")
        if i % 7 == 0:
            body.append(f"\tp[{rng.randrange(56)}] = (unsigned char)h{c};")
    return ("#include <linux/bpf.h>\n#include <bpf/bpf_helpers.h>\n"
            "SEC(\"xdp\") int big(struct xdp_md *ctx)\n{\n"
            "\tvolatile unsigned char *p = (void *)(long)ctx->data;\n\tvoid *end = (void *)(long)ctx->data_end;\n"
            "\t__u32 h0 = 1, h1 = 2, h2 = 3, h3 = 4;\n"
            "\tif ((void *)(p + 60) > end) return XDP_DROP;\n" + "\n".join(body) +
            "\n\treturn (h0 ^ h1 ^ h2 ^ h3) & 3;\n}\n"
            "char _license[] SEC(\"license\") = \"GPL\";\n")


def big_object(target: int = 3000) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        n = 150
        while True:
            src = Path(tmp) / "big.c"
            src.write_text(big_c_source(n))
            obj = Path(tmp) / "big.o"
            subprocess.run(["clang", "-O2", "-target", "bpf", "-mcpu=v3", "-I/usr/include/x86_64-linux-gnu", "-c",
                            str(src), "-o", str(obj)], check=True)
            program = load_program(obj)
            if len(program.insns) >= target:
                break
            n = int(n * target / len(program.insns)) + 10
        t0 = time.perf_counter()
        res = compile_program(program, CompileOptions(imem_rows=1 << 20))
        dt = time.perf_counter() - t0
        mism = check(program, res.rom, _packets("big")[:8])
    return {"insns": len(program.insns), "rows": res.report["rows"], "static_ipc": res.report["static_ipc"],
            "compile_s": round(dt, 3), "under_5s": dt < 5.0, "mismatches": len(mism)}


def random_equivalence(count: int, size: int) -> dict:
    bad, ipcs, t0 = [], [], time.perf_counter()
    for seed in range(count):
        p = random_program(seed, size)
        res = compile_program(p, CompileOptions(imem_rows=1 << 20))
        ipcs.append(res.report["static_ipc"])
        if check(p, res.rom, random_packets(seed)):
            bad.append(seed)
    return {"programs": count, "size": size, "mismatching_seeds": bad,
            "mean_static_ipc": round(statistics.mean(ipcs), 3), "seconds": round(time.perf_counter() - t0, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=2000, help="random programs to check (default 2000)")
    ap.add_argument("--size", type=int, default=60, help="pieces per random program")
    ap.add_argument("--sweep", action="store_true", help="rows for 1..8 lanes per program (Fig. 8)")
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "out" / "compiler.json"))
    args = ap.parse_args()

    out: dict = {"lanes": params.LANES}
    out["suite"] = suite(args.sweep)
    print(f"{'program':22s} {'insns':>5s} {'after':>5s} {'rows':>4s} {'IPC':>5s} {'paper':>5s} {'base':>4s} "
          f"{'ins/pkt':>7s} {'cyc/pkt':>7s} {'ms':>6s} ok")
    for r in out["suite"]:
        print(f"{r['program']:22s} {r['insns']:5d} {r['counts']['extended']:5d} {r['rows']:4d} {r['static_ipc']:5.2f} "
              f"{r['paper_ipc'] or 0:5.2f} {r['rows_unoptimised']:4d} {r['exec_insns_per_pkt']:7.1f} "
              f"{r['cycles_per_pkt']:7.1f} {r['compile_s'] * 1000:6.1f} {'yes' if not r['mismatches'] else 'NO'}")
        if r["rows_by_lanes"]:
            print("    rows by lanes: " + " ".join(f"{k}:{v}" for k, v in r["rows_by_lanes"].items()))
    big = [r for r in out["suite"] if r["insns"] >= 50]
    if big:
        print(f"static IPC on programs of 50+ instructions: min {min(r['static_ipc'] for r in big):.2f} "
              f"mean {statistics.mean(r['static_ipc'] for r in big):.2f}")
    out["big_object"] = big_object()
    b = out["big_object"]
    print(f"generated object: {b['insns']} insns -> {b['rows']} rows (IPC {b['static_ipc']:.2f}) in "
          f"{b['compile_s']:.2f} s ({'under' if b['under_5s'] else 'OVER'} 5 s), mismatches {b['mismatches']}")
    if args.random:
        out["random"] = random_equivalence(args.random, args.size)
        r = out["random"]
        print(f"random programs: {r['programs']} checked, {len(r['mismatching_seeds'])} mismatching, mean static IPC "
              f"{r['mean_static_ipc']:.2f} ({r['seconds']:.0f} s)")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.json}")
    bad = any(r["mismatches"] for r in out["suite"]) or b["mismatches"] or not b["under_5s"] or \
        (args.random and out["random"]["mismatching_seeds"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
