#!/usr/bin/env python3
"""Fuzz campaign benchmark: N random XDP programs x P packets on the chosen engines against the kernel; writes the
seed, counts, verifier-rejection rate and every divergence (with its class) to JSON.

    python3 benchmarks/bench_fuzz.py [--count 10000] [--packets 20] [--seed 1] [--engine vliw-model ...]
        [--rtl-count 500] [--jobs 2] [--json benchmarks/out/fuzz.json]

The RTL part runs its own (shorter) campaign with the features the RTL does not implement left out (hxdp.fuzz
EXCLUDE_PRESETS["rtl"]), so that its result says something about what the RTL does implement.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "compiler"))

from hxdp import fuzz  # noqa: E402
from hxdp.fuzz.campaign import render_text, run_campaign  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--packets", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--engine", action="append", choices=fuzz.ENGINES,
                    help="engines of the main campaign (default seq-model and vliw-model)")
    ap.add_argument("--rtl-count", type=int, default=500, help="programs of the RTL campaign (0: none)")
    ap.add_argument("--rtl-exclude", default="", help="features left out of the RTL campaign (default: none)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--minimise", type=int, default=3)
    ap.add_argument("--out", default="/tmp/hxdp-bench-fuzz", help="reproducer folder (not part of the repository)")
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "out" / "fuzz.json"))
    ap.add_argument("--merge", nargs="+", metavar="SUMMARY",
                    help="do not run: merge the summary.json/progress.json of campaigns split with --start")
    ap.add_argument("--note", default="", help="free text stored in the JSON")
    args = ap.parse_args(argv)
    if args.merge:
        runs = [json.loads(Path(f).read_text()) for f in args.merge]
        return write_result(runs, Path(args.json), time.time(), "", args.note)
    engines = tuple(dict.fromkeys(args.engine or ["seq-model", "vliw-model"]))
    t0 = time.time()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    runs = []
    main_run = run_campaign(args.count, args.packets, args.seed, engines, jobs=args.jobs,
                            out=Path(args.out) / "main", minimise=args.minimise, progress=sys.stderr.isatty())
    print(render_text(main_run), flush=True)
    runs.append(main_run)
    if args.rtl_count > 0:
        ex = fuzz.parse_exclude(args.rtl_exclude)
        rtl_run = run_campaign(args.rtl_count, args.packets, args.seed + 1, ("rtl",), jobs=args.jobs,
                               out=Path(args.out) / "rtl", minimise=args.minimise, progress=sys.stderr.isatty(),
                               exclude=ex)
        print(render_text(rtl_run), flush=True)
        runs.append(rtl_run)
    return write_result(runs, Path(args.json), t0, commit, args.note)


def write_result(runs: list[dict], out: Path, t0: float, commit: str, note: str) -> int:
    """Totals over the campaigns and the campaigns themselves; exit status 1 on any divergence or engine error."""
    programs = sum(r["programs"] for r in runs)
    rejected = sum(r["verifier_rejected"] for r in runs)
    result = {
        "benchmark": "fuzz",
        "machine": platform.node(),
        "kernel": platform.release(),
        "commit": commit,  # the generator (hxdp/fuzz.py) decides which programs a seed gives
        "note": note,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)),
        "seconds": round(sum(r["seconds"] for r in runs), 1),
        "programs": programs,
        "verifier_rejected": rejected,
        "verifier_rejection_rate": round(rejected / programs, 4) if programs else 0.0,
        "packets": sum(r["packets_run"] for r in runs),
        "divergent_programs": sum(r["divergent_programs"] for r in runs),
        "engine_errors": sum(len(r["engine_errors"]) for r in runs),
        "campaigns": runs,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}: {programs} programs, {result['packets']} packets, {rejected} rejected by the verifier, "
          f"{result['divergent_programs']} divergent, {result['engine_errors']} engine errors")
    return 1 if result["divergent_programs"] or result["engine_errors"] else 0

if __name__ == "__main__":
    sys.exit(main())
