"""`hxdp experiment`: run the evaluation (paper Section 5 figures) with checkpoints, CSV/JSON and plots."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hxdp.errors import HxdpError
from hxdp.eval import docs
from hxdp.eval.run import EXPERIMENTS, RunSummary, format_checks, replot, run_experiments


def register(subparsers: argparse._SubParsersAction) -> None:
    names = ", ".join(f"{n} ({e.title})" for n, e in EXPERIMENTS.items())
    p = subparsers.add_parser(
        "experiment",
        help="run the evaluation: the paper's figures and tables, with plots",
        description="Run evaluation experiments and write NAME.csv, NAME.json, NAME.png and NAME.pdf into --out, "
        "plus summary.json with the targets (pass/fail/n/a). Every finished point is appended to "
        "checkpoint.jsonl in --out; --resume reuses it (points that were 'not available' are measured again). "
        "A full run that leaves every experiment's output in --out also writes the evaluation page from it "
        "(docs/evaluation.md for --out docs/eval, DIR/evaluation.md for any other). "
        f"Experiments: {names}.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="experiments to run (default: all; with --quick: all "
                   "but resources)")
    p.add_argument("--out", type=Path, metavar="DIR", help="output folder (required to measure; --docs and "
                   "--replot read docs/eval by default)")
    p.add_argument("--quick", action="store_true", help="reduced set for CI: a few programs, few packets")
    p.add_argument("--resume", action="store_true", help="reuse the finished points of an interrupted run")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--strict", action="store_true", help="exit 1 when a target fails (default: only harness errors)")
    p.add_argument("--replot", action="store_true", help="measure nothing: draw the plots of NAME (default: all) "
                   "again from the NAME.json files in --out")
    p.add_argument("--docs", action="store_true", help="measure nothing: write the evaluation page from the files "
                   "in --out (after --replot when both are given)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.docs or args.replot:
        return _from_files(args)
    if args.out is None:
        raise HxdpError("--out DIR is required to run experiments")
    if args.out.exists() and not args.out.is_dir():
        raise HxdpError(f"{args.out}: exists and is not a folder")
    try:
        s = run_experiments(args.names, args.out, quick=args.quick, resume=args.resume,
                            progress=not args.no_progress and sys.stderr.isatty())
    except KeyboardInterrupt:
        print(f"hxdp experiment: interrupted; finished points are in {args.out} (run again with --resume)",
              file=sys.stderr)
        return 130
    return _print_summary(args, s)


def _from_files(args: argparse.Namespace) -> int:
    """--replot and --docs: the existing files of --out, nothing measured."""
    out = args.out if args.out is not None else docs.DOCS_EVAL
    if not out.is_dir():
        raise HxdpError(f"{out}: not a folder of experiment results")
    if args.replot:
        for png in replot(out, args.names):
            print(f"plotted {png}")
    if args.docs:
        print(f"wrote {docs.write_evaluation_doc(out)}")
    return 0


def _print_summary(args: argparse.Namespace, s: RunSummary) -> int:
    print(f"experiments: {', '.join(s.experiments)}  ({s.points} points measured, {s.reused} reused from the "
          f"checkpoint)")
    print(format_checks(s.checks))
    if s.failed_points:
        print(f"{len(s.failed_points)} point(s) failed with an error: {', '.join(s.failed_points[:8])}",
              file=sys.stderr)
    print(f"outputs in {args.out}/ (summary{'-quick' if args.quick else ''}.json, NAME.csv/.json/.png/.pdf)")
    if s.page is not None:
        print(f"evaluation page: {s.page}")
    if s.failed_points:
        return 1
    if args.strict and any(c.status == "fail" for c in s.checks):
        return 1
    return 0
