"""`hxdp fuzz`: a campaign of random XDP programs x random packets, every engine compared with the kernel."""

from __future__ import annotations

import argparse
import json
import os
import sys

from hxdp import fuzz
from hxdp.errors import HxdpError
from hxdp.fuzz.campaign import render_text, run_campaign


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fuzz", help="fuzz the compiler and engines against Linux XDP with random programs")
    p.add_argument("--count", type=int, default=100, help="programs to generate (default 100)")
    p.add_argument("--packets", type=int, default=20, help="random packets per program (default 20)")
    p.add_argument("--seed", type=int, default=1, help="campaign seed (program i is the same for every run)")
    p.add_argument("--start", type=int, default=0, help="index of the first program (resume a campaign)")
    p.add_argument("--engine", action="append", choices=(*fuzz.ENGINES, "all"),
                   help="engine(s) compared with the kernel; repeatable (default vliw-model)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes")
    p.add_argument("--batch", type=int, default=25, help="programs per clang object")
    p.add_argument("--out", default="hxdp-fuzz-out", help="folder for reproducers and summary.json")
    p.add_argument("--minimise", type=int, default=3,
                   help="divergences to minimise (distinct signatures first; 0: none)")
    p.add_argument("--minimise-seconds", type=float, default=180.0, help="time limit per minimisation")
    p.add_argument("--exclude", default="",
                   help="comma-separated features to leave out of the programs (docs/fuzzing.md lists them)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--record", metavar="NAME",
                   help="keep the summary as a campaign of record (docs/fuzz/NAME.json, the table of docs/fuzzing.md)")
    p.set_defaults(func=_run)


def engines_of(names: list[str] | None) -> tuple[str, ...]:
    if not names:
        return ("vliw-model",)
    if "all" in names:
        return fuzz.ENGINES
    return tuple(dict.fromkeys(names))


def _run(args: argparse.Namespace) -> int:
    if args.count < 1 or args.packets < 1 or args.jobs < 1 or args.batch < 1:
        raise HxdpError("fuzz: --count, --packets, --jobs and --batch must be >= 1")
    if args.out is not None and os.path.exists(args.out) and not os.path.isdir(args.out):
        raise HxdpError(f"{args.out}: exists and is not a folder")
    from hxdp.linux.kernel import available

    ok, why = available()
    if not ok:
        raise HxdpError(f"fuzz: the kernel oracle is not available: {why}")
    engines = engines_of(args.engine)
    exclude = fuzz.parse_exclude(args.exclude)
    progress = not args.quiet
    summary = run_campaign(args.count, args.packets, args.seed, engines, args.jobs, args.out, args.batch,
                           args.start, args.minimise, args.minimise_seconds, progress, exclude)
    if args.record:
        from hxdp.fuzz import report

        report.record(summary, args.record, commit=report.head_commit(), machine=report.machine_load())
        report.main()
    if args.json:
        json.dump(summary, sys.stdout, indent=1)
        print()
    else:
        print(render_text(summary))
    return 1 if summary["verdict"].startswith("FAIL") else 0
