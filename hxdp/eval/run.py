"""Running the evaluation: the registry of experiments and measurements, the checkpointed run, its summary."""

from __future__ import annotations

import contextlib
import json
import sys
import time
import traceback
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hxdp.atomic_write import write_atomic
from hxdp.eval import docs
from hxdp.eval.checkpoint import (
    append_checkpoint,
    checkpoint_fingerprint,
    checkpoint_path,
    code_fingerprint,
    load_checkpoint,
    start_checkpoint,
)
from hxdp.eval.figures import compiler, cores, katran, latency, resources, speed, throughput
from hxdp.eval.harness import CLOCK_MHZ, Check, Context, Experiment, ExperimentError, Measure, NotAvailable, Record
from hxdp.eval.measure import m_compile, m_ctime, m_ipc, m_latency, m_linux, m_model, m_rtl, m_simspeed
from hxdp.eval.output import dump_json, environment, write_markdown
from hxdp.eval.synth import m_synth

MEASURES: dict[str, Measure] = {
    "compile": m_compile,
    "ipc": m_ipc,
    "model": m_model,
    "rtl": m_rtl,
    "linux": m_linux,
    "latency": m_latency,
    "ctime": m_ctime,
    "simspeed": m_simspeed,
    "synth": m_synth,
    "katran": katran.m_katran,
    "cores": cores.m_cores,
}
BACKGROUND_KINDS = frozenset({"synth"})  # measured in a background thread (an external process, no shared state)

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    Experiment("fig7", "eBPF instruction reduction per optimisation", compiler.points_fig7, compiler.report_fig7,
               plot=compiler.plot_fig7),
    Experiment("fig8", "VLIW rows for 1 to 8 lanes", compiler.points_fig8, compiler.report_fig8,
               plot=compiler.plot_fig8),
    Experiment("fig9", "final rows and the contribution of each optimisation", compiler.points_fig9,
               compiler.report_fig9, plot=compiler.plot_fig9),
    Experiment("table3", "instructions, static IPC, dynamic IPC", compiler.points_table3, compiler.report_table3,
               plot=compiler.plot_table3),
    Experiment("fig12_13", f"throughput (Mpps at {CLOCK_MHZ} MHz) vs Linux XDP and the paper",
               throughput.points_fig12_13, throughput.report_fig12_13, plot=throughput.plot_fig12_13),
    Experiment("fig11", "latency vs packet size", latency.points_fig11, latency.report_fig11,
               plot=latency.plot_fig11),
    Experiment("fig14", "map access cost vs key size", throughput.points_fig14, throughput.report_fig14,
               plot=throughput.plot_fig14),
    Experiment("fig15", "csum_diff helper calls", throughput.points_fig15, throughput.report_fig15,
               plot=throughput.plot_fig15),
    Experiment("resources", "yosys synth_xilinx resources vs paper Table 1", resources.points_resources,
               resources.report_resources, quick_default=False, plot=resources.plot_resources),
    Experiment("speed", "toolchain speed: compile time, simulated cycles/s", speed.points_speed, speed.report_speed,
               plot=speed.plot_speed),
    Experiment("katran", "upstream Katran: fit, compile time, cycles per path, equality with the kernel",
               katran.points, katran.report, quick_default=False, plot=katran.plot),
    Experiment("cores", "Mpps against cores on each program's main path (the multi-core VLIW model) vs Linux",
               cores.points_cores, cores.report_cores, quick_default=False, plot=cores.plot_cores),
)}


def measure_point(ctx: Context, key: str, measures: dict[str, Measure]) -> Record:
    """Run one point; a missing piece gives status 'n/a', an exception 'error' (both with the reason)."""
    kind = key.split(":", 1)[0]
    fn = measures.get(kind)
    if fn is None:
        return {"status": "error", "reason": f"no measurement named {kind!r}"}
    t0 = time.perf_counter()
    try:
        rec = fn(ctx, key)
        rec.setdefault("status", "ok")
    except NotAvailable as exc:
        rec = {"status": "n/a", "reason": str(exc)}
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # a point that fails is reported, the others still run
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" ({Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
        rec = {"status": "error", "reason": f"{type(exc).__name__}: {exc}{where}"}
    rec["seconds"] = round(time.perf_counter() - t0, 3)
    return rec


class _Bar:
    """A rich progress bar on stderr, or nothing but log lines when there is none."""

    def __init__(self) -> None:
        self.p: Any = None
        self.task: Any = None

    def set(self, desc: str) -> None:
        if self.p is not None:
            self.p.update(self.task, description=desc)

    def advance(self) -> None:
        if self.p is not None:
            self.p.advance(self.task)

    def log(self, msg: str) -> None:
        if self.p is not None:
            self.p.console.print(msg, markup=False, highlight=False)
        else:
            print(msg, file=sys.stderr, flush=True)


@contextlib.contextmanager
def _progress(total: int, enabled: bool) -> Iterator[_Bar]:
    bar = _Bar()
    if not enabled or total == 0:
        yield bar
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description:<40}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=False) as p:
        bar.p = p
        bar.task = p.add_task("evaluation", total=total)
        yield bar


@dataclass
class RunSummary:
    experiments: list[str]
    checks: list[Check]
    files: list[Path]
    points: int
    reused: int
    failed_points: list[str]
    page: Path | None = None  # the evaluation page written from the results (a full run of every experiment)


def _open_checkpoint(out: Path, quick: bool, resume: bool) -> dict[str, Record]:
    """The finished points to reuse (none without `resume` or when the sources changed since they were measured)."""
    cp = checkpoint_path(out, quick)
    fp = code_fingerprint()
    if resume and cp.exists() and checkpoint_fingerprint(cp) != fp:
        print(f"hxdp experiment: {cp} was written by other sources (compiler, RTL, programs): starting over",
              file=sys.stderr)
        resume = False
    if not resume or not cp.exists():
        start_checkpoint(cp, fp)
    # a point that was not available may be now: measure it again
    return {k: r for k, r in load_checkpoint(cp).items() if r.get("status") != "n/a"}


def _plan(ctx: Context, reg: dict[str, Experiment], chosen: list[str]) -> dict[str, list[str]]:
    plan: dict[str, list[str]] = {}
    for name in chosen:
        try:
            plan[name] = reg[name].points(ctx)
        except NotAvailable as exc:
            plan[name] = [f"unavailable:{name}:{exc}"]
    return plan


def _measure_all(ctx: Context, todo: list[str], meas: dict[str, Measure], done: dict[str, Record], cp: Path,
                 progress: bool) -> list[str]:
    """Measure the points of `todo` into `done` and the checkpoint; returns the points that failed."""
    failed: list[str] = []
    # long external tools (yosys) run in a background thread while the other points are measured
    bg = [k for k in todo if k.split(":", 1)[0] in BACKGROUND_KINDS]
    todo = [k for k in todo if k not in bg] + bg
    with _progress(len(todo), progress) as bar, ThreadPoolExecutor(max_workers=1) as pool:
        ctx.log = bar.log
        futures = {k: pool.submit(measure_point, ctx, k, meas) for k in bg}
        for key in todo:
            bar.set(key[:40])
            if key.startswith("unavailable:"):
                rec: Record = {"status": "n/a", "reason": key.split(":", 2)[2]}
            elif key in futures:
                rec = futures[key].result()
            else:
                rec = measure_point(ctx, key, meas)
            if rec["status"] == "error":
                failed.append(key)
                bar.log(f"point {key}: {rec['reason']}")
            done[key] = rec
            append_checkpoint(cp, key, rec)
            bar.advance()
    return failed


def _report(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    """The experiment's files and checks; its own NAME.json carries the checks (summary.json gathers them)."""
    got = exp.report(ctx, exp, records)
    js = ctx.out / f"{exp.name}.json"
    if js.exists():
        doc = json.loads(js.read_text())
        doc["checks"] = [c.__dict__ for c in got]
        doc.setdefault("quick", ctx.quick)
        write_atomic(js, dump_json(doc))
    return got


def run_experiments(names: Iterable[str], out: Path, *, quick: bool = False, resume: bool = False,
                    registry: dict[str, Experiment] | None = None, measures: dict[str, Measure] | None = None,
                    progress: bool = True) -> RunSummary:
    """Run the named experiments (all when empty), checkpointing every finished point in out/."""
    reg = registry if registry is not None else EXPERIMENTS
    meas = measures if measures is not None else MEASURES
    chosen = list(names) or [n for n, e in reg.items() if e.quick_default or not quick]
    unknown = [n for n in chosen if n not in reg]
    if unknown:
        raise ExperimentError(f"unknown experiment {', '.join(unknown)} (choose from {', '.join(reg)})")
    out.mkdir(parents=True, exist_ok=True)
    cp = checkpoint_path(out, quick)
    done = _open_checkpoint(out, quick, resume)
    ctx = Context(out=out, quick=quick)
    plan = _plan(ctx, reg, chosen)
    todo = list(dict.fromkeys(k for keys in plan.values() for k in keys if k not in done))
    reused = sum(1 for keys in plan.values() for k in keys if k in done)
    failed = _measure_all(ctx, todo, meas, done, cp, progress)
    checks: list[Check] = []
    files: list[Path] = []
    for name in chosen:
        before = set(out.iterdir())
        checks += _report(ctx, reg[name], {k: done[k] for k in plan[name]})
        files += sorted(set(out.iterdir()) - before - {cp})
    everything = collect(out, reg, quick)  # this run's experiments and earlier ones in the same folder
    _write_summary(out, everything, quick)
    write_markdown(out, everything, quick)
    page = None
    if registry is None and not quick and not docs.missing_experiments(out):
        page = docs.write_evaluation_doc(out)
    return RunSummary(chosen, checks, files, len(todo), reused, failed, page)


def collect(out: Path, reg: dict[str, Experiment], quick: bool) -> list[tuple[Experiment, dict[str, Any]]]:
    """The experiments of the registry with an output of this mode in `out` (registry order)."""
    found = []
    for e in reg.values():
        js = out / f"{e.name}.json"
        if js.exists():
            try:
                doc = json.loads(js.read_text())
            except ValueError:
                continue
            if bool(doc.get("quick")) == quick:
                found.append((e, doc))
    return found


def _write_summary(out: Path, found: list[tuple[Experiment, dict[str, Any]]], quick: bool) -> None:
    doc = {"format": "hxdp-evaluation", "version": 1, "quick": quick, "experiments": [e.name for e, _ in found],
           "clock_mhz": CLOCK_MHZ, "environment": environment(),
           "checks": [c for _, d in found for c in d.get("checks", [])]}
    write_atomic(out / ("summary-quick.json" if quick else "summary.json"), dump_json(doc))


def replot(out: Path, names: Iterable[str] = (), registry: dict[str, Experiment] | None = None) -> list[Path]:
    """Draw the plots of the named experiments (all with a NAME.json in `out`) again from the rows of their
    NAME.json, without measuring; returns the PNGs written."""
    reg = registry if registry is not None else EXPERIMENTS
    chosen = list(names) or list(reg)
    unknown = [n for n in chosen if n not in reg]
    if unknown:
        raise ExperimentError(f"unknown experiment {', '.join(unknown)} (choose from {', '.join(reg)})")
    written = []
    for name in chosen:
        exp, js = reg[name], out / f"{name}.json"
        if exp.plot is None or not js.exists():
            continue
        doc = json.loads(js.read_text())
        exp.plot(out, exp, doc.get("rows", []), doc.get("not_available") or [])
        written.append(out / f"{name}.png")
    if not written:
        raise ExperimentError(f"{out}: no NAME.json of {', '.join(chosen)} to plot from")
    return written


def format_checks(checks: list[Check]) -> str:
    if not checks:
        return "no targets checked"
    w = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        mark = {"pass": "PASS", "fail": "FAIL"}.get(c.status, "n/a ")
        extra = f"  ({c.detail})" if c.detail else ""
        lines.append(f"{mark}  {c.name:<{w}}  {c.value} (target {c.limit}){extra}")
    return "\n".join(lines)
