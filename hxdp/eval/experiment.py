"""The evaluation harness: reproduces the hXDP paper's figures (Section 5) with checkpoints, CSV/JSON and plots."""

from __future__ import annotations

import contextlib
import csv
import importlib
import inspect
import io
import json
import math
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.paths import ROOT
from hxdp.paths import RTL_DIR as SEPHIROT_RTL

CLOCK_MHZ = params.CLOCK_MHZ  # 156.25 MHz, the NetFPGA-SUME clock of the paper
NS_PER_CYCLE = 1000.0 / CLOCK_MHZ  # 6.4 ns

# ----------------------------------------------------------------------------------------------------------------
# The paper's numbers (hXDP, OSDI'20, /work/shared/reference/hxdp-osdi20.txt). Only numbers printed in the text or
# its tables are here; the bar heights of Figures 7-15 are not in the text and are not guessed.
# ----------------------------------------------------------------------------------------------------------------

PAPER_TABLE3 = {  # Section 5.2.2, Table 3: program -> (eBPF instructions, x86 IPC, hXDP static IPC)
    "xdp1": (61, 2.20, 1.70),
    "xdp2": (78, 2.19, 1.81),
    "xdp_adjust_tail": (117, 2.37, 2.72),
    "router_ipv4": (119, 2.38, 2.38),
    "rxq_info": (81, 2.81, 1.76),
    "tx_ip_tunnel": (283, 2.24, 2.83),
    "simple_firewall": (72, 2.16, 2.66),
    "Katran": (268, 2.32, 2.62),
}
PAPER_NAMES = {  # paper's program name -> the program of xdp_progs/ that plays its role
    "xdp1": "xdp1",
    "xdp2": "xdp2",
    "xdp_adjust_tail": "xdp_adjust_tail",
    "router_ipv4": "xdp_router_ipv4",
    "rxq_info": "xdp_rxq_info",
    "tx_ip_tunnel": "xdp_tx_iptunnel",
    "simple_firewall": "simple_firewall",
    "Katran": "l4_load_balancer",  # Katran-like, written in this project: not the same code
}
OURS_TO_PAPER = {v: k for k, v in PAPER_NAMES.items()}
PAPER_MPPS = {  # our program -> (hXDP Mpps, x86 core @3.7 GHz Mpps, where in the paper)
    "xdp_drop": (52.0, 38.0, "Sec. 5.2.2 Baseline, Fig. 13"),
    "xdp_tx": (22.5, 12.0, "Sec. 5.2.2 Baseline, Fig. 13"),
    "xdp_redirect": (15.0, 11.0, "Sec. 5.2.2 Baseline, Fig. 13"),
    # x86 figure derived from 'only 12% slower than ... x86 CPU core clocked at 3.7GHz': 6.53 / 0.88
    "simple_firewall": (6.53, 6.53 / 0.88, "Sec. 5.2.1, Fig. 10"),
}
PAPER_NOTES = {
    "xdp_drop_no_early_exit_mpps": (22.0, "Sec. 5.2.2: 'Disabling the optimization brings down ... to 22Mpps'"),
    "simple_firewall_hand_optimised_mpps": (7.1, "Sec. 6: 'hand-optimize the simple firewall ... 7.1Mpps'"),
    "fig7_adjust_tail_6B_ldst_pct": (18.0, "Sec. 5.1: 6B load/store '18% reduction' on xdp_adjust_tail"),
    "fig7_firewall_bounds_checks_pct": (19.0, "Sec. 5.1: bound checks 'account for 19%' of simple_firewall"),
    "fig7_exit_action_pct": ("5-10", "Sec. 5.1: parametrized exit 'reduces ... by up to 5-10%'"),
    "fig8_fourth_lane_pct": (5.0, "Sec. 5.1: 'Adding a fourth execution lane reduces ... by an additional 5%'"),
    "fig11_latency": ("about 10x lower than x86", "Sec. 5.2.1, Fig. 11 (no absolute numbers in the text)"),
    "fig14_map_access": ("constant for keys of 1-16 B", "Sec. 5.2.2, Fig. 14"),
}
PAPER_TABLE1 = {  # Section 4.3, Table 1: component -> (logic LUTs, registers FFs, BRAM)
    "PIQ": (215, 58, 6.5),
    "APS": (9_000, 10_000, 4),
    "Sephirot": (27_000, 4_000, None),
    "Instr mem": (None, None, 7.7),
    "Stack": (1_000, 136, 16),
    "HF subsystem": (339, 150, None),
    "Maps subsystem": (5_800, 2_500, 16),
    "Total": (42_000, 18_000, 50),
}
TARGET_CYCLES = {  # issue 9: cycles per 64-byte packet back to back (paper figure at 156.25 MHz)
    "xdp_drop": (3, "52 Mpps"),
    "xdp_tx": (7, "22.5 Mpps"),
    "xdp_redirect": (10, "15 Mpps"),
    "simple_firewall": (22, "7.1 Mpps, hand-optimised"),
}
TARGET_LUT = 42_000  # the paper's whole IP (Table 1); Sephirot alone was 27K

# ----------------------------------------------------------------------------------------------------------------
# program sets
# ----------------------------------------------------------------------------------------------------------------

MICRO_BASE = ("xdp_drop", "xdp_tx", "xdp_redirect")
MAP_ACCESS = tuple(f"map_access_k{k}" for k in (1, 2, 4, 8, 16))
CSUM_DIFF = tuple(f"csum_diff_x{n}" for n in (1, 10, 20, 40))
QUICK_PROGRAMS = ("xdp_drop", "xdp_tx", "xdp1")
LATENCY_SIZES = (64, 128, 256, 512, 1024, 1500)
QUICK_LATENCY_SIZES = (64, 1500)
LANES = tuple(range(1, 9))
OPTIMISATIONS = ("bounds", "zeroing", "ldst6", "alu3", "exit_action")
OPT_TITLES = {
    "bounds": "bounds checks",
    "zeroing": "zeroing",
    "ldst6": "6B load/store",
    "alu3": "3-operand ALU",
    "exit_action": "exit with action",
    "code_motion": "code motion",
}
# fig9: passes switched on one group at a time, at 4 lanes
FIG9_STEPS = (
    ("parallel", "instruction parallelization", {o: False for o in (*OPTIMISATIONS, "code_motion")}),
    ("reduce", "bounds checks + zeroing", {o: False for o in ("ldst6", "alu3", "exit_action", "code_motion")}),
    ("extend", "ISA extensions", {"code_motion": False}),
    ("all", "code motion", {}),
)


class ExperimentError(HxdpError):
    """The evaluation harness was used wrongly (unknown experiment, unreadable checkpoint)."""


class NotAvailable(Exception):
    """A measurement whose piece (compiler, RTL, kernel, yosys) is missing: reported, never invented."""


# ----------------------------------------------------------------------------------------------------------------
# harness: experiments, points, checkpoints
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class Context:
    """What measurements share in one run: the output folder, the mode and in-process caches."""

    out: Path
    quick: bool = False
    cache: dict[Any, Any] = field(default_factory=dict)
    log: Callable[[str], None] = lambda msg: None

    @property
    def n_packets(self) -> int:
        return 32 if self.quick else 512


Record = dict[str, Any]
Measure = Callable[[Context, str], Record]
BACKGROUND_KINDS = frozenset({"synth"})  # measured in a background thread (an external process, no shared state)


@dataclass
class Check:
    """A target the evaluation must check: status is 'pass', 'fail' or 'n/a' (with the reason in detail)."""

    name: str
    status: str
    value: str
    limit: str
    detail: str = ""


@dataclass
class Experiment:
    """One figure/table: the points it needs and how it turns their records into files and checks."""

    name: str
    title: str
    points: Callable[[Context], list[str]]
    report: Callable[[Context, Experiment, dict[str, Record]], list[Check]]
    quick_default: bool = True  # part of `--quick` with no names


def checkpoint_path(out: Path, quick: bool) -> Path:
    return out / ("checkpoint-quick.jsonl" if quick else "checkpoint.jsonl")


def load_checkpoint(path: Path) -> dict[str, Record]:
    """Point key -> record; a torn last line (interrupted write) is ignored, any other bad line is an error."""
    done: dict[str, Record] = {}
    if not path.exists():
        return done
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            if "fingerprint" in entry:
                continue
            done[entry["point"]] = entry["record"]
        except (ValueError, KeyError, TypeError) as exc:
            if i == len(lines) - 1:
                break
            raise ExperimentError(f"{path}:{i + 1}: not a checkpoint line ({exc})") from None
    return done


FINGERPRINT_SOURCES = (("hxdp", "*.py"), ("sephirot", "*"), ("xdp_progs", "*.[ch]"),
                       ("xdp_progs/build", "*.o"), ("xdp_progs/maps", "*.json"), ("xdp_progs/traffic", "*.pcap"))


def code_fingerprint() -> str:
    """A hash of what the measurements depend on: a checkpoint is only resumed with the same sources."""
    import hashlib

    h = hashlib.sha256()
    for folder, pattern in FINGERPRINT_SOURCES:
        for f in sorted((ROOT / folder).rglob(pattern) if folder == "sephirot" else (ROOT / folder).glob(pattern)):
            if f.is_file() and "__pycache__" not in f.parts:
                h.update(str(f.relative_to(ROOT)).encode())
                h.update(f.read_bytes())
    return h.hexdigest()[:16]


def checkpoint_fingerprint(path: Path) -> str | None:
    try:
        with path.open() as f:
            first = json.loads(f.readline() or "{}")
    except (OSError, ValueError):
        return None
    return first.get("fingerprint") if isinstance(first, dict) else None


def append_checkpoint(path: Path, key: str, record: Record) -> None:
    line = json.dumps({"point": key, "record": record}, sort_keys=True, default=_json_default)
    with path.open("a") as f:
        f.write(line + "\n")  # one write per line: a killed process leaves at most a torn last line


def _json_default(obj: Any) -> Any:
    if isinstance(obj, bytes):
        return obj.hex()
    if isinstance(obj, Path):
        return str(obj)
    if is_dataclass(obj):
        return {f.name: getattr(obj, f.name) for f in fields(obj)}
    if isinstance(obj, set | frozenset | tuple):
        return sorted(obj) if isinstance(obj, set | frozenset) else list(obj)
    return repr(obj)


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


@contextlib.contextmanager
def _progress(total: int, enabled: bool) -> Iterator[Callable[[str], None] | Any]:
    """A rich progress bar (stderr); yields an object with advance(desc) and set(desc)."""

    class Bar:
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

    bar = Bar()
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
    fp = code_fingerprint()
    if resume and cp.exists() and checkpoint_fingerprint(cp) != fp:
        print(f"hxdp experiment: {cp} was written by other sources (compiler, RTL, programs): starting over",
              file=sys.stderr)
        resume = False
    if not resume and cp.exists():
        cp.unlink()
    if not cp.exists():
        cp.write_text(json.dumps({"fingerprint": fp}) + "\n")
    done = load_checkpoint(cp)
    # a point that was not available may be now: measure it again
    done = {k: r for k, r in done.items() if r.get("status") != "n/a"}
    ctx = Context(out=out, quick=quick)
    plan: dict[str, list[str]] = {}
    for name in chosen:
        try:
            plan[name] = reg[name].points(ctx)
        except NotAvailable as exc:
            plan[name] = [f"unavailable:{name}:{exc}"]
    todo = list(dict.fromkeys(k for keys in plan.values() for k in keys if k not in done))
    reused = sum(1 for keys in plan.values() for k in keys if k in done)
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
    checks: list[Check] = []
    files: list[Path] = []
    for name in chosen:
        exp = reg[name]
        records = {k: done[k] for k in plan[name]}
        before = set(out.iterdir())
        got = exp.report(ctx, exp, records)
        checks += got
        js = out / f"{name}.json"
        if js.exists():  # the experiment's own file carries its checks (summary.json gathers them)
            from hxdp.atomic_write import write_atomic

            doc = json.loads(js.read_text())
            doc["checks"] = [c.__dict__ for c in got]
            doc.setdefault("quick", quick)
            write_atomic(js, json.dumps(doc, indent=2, default=_json_default) + "\n")
        files += sorted(set(out.iterdir()) - before - {cp})
    everything = _collect(out, reg, quick)  # this run's experiments and earlier ones in the same folder
    _write_summary(out, everything, quick)
    write_markdown(out, everything, quick)
    return RunSummary(chosen, checks, files, len(todo), reused, failed)


def _collect(out: Path, reg: dict[str, Experiment], quick: bool) -> list[tuple[Experiment, dict[str, Any]]]:
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
    from hxdp.atomic_write import write_atomic

    doc = {"format": "hxdp-evaluation", "version": 1, "quick": quick, "experiments": [e.name for e, _ in found],
           "clock_mhz": CLOCK_MHZ, "environment": environment(),
           "checks": [c for _, d in found for c in d.get("checks", [])]}
    write_atomic(out / ("summary-quick.json" if quick else "summary.json"),
                 json.dumps(doc, indent=2, default=_json_default) + "\n")


MD_COLUMNS: dict[str, tuple[str, ...]] = {
    "fig12_13": ("program", "rtl_cycles", "rtl_mpps", "rtl_model_mismatches", "model_cycles",
                 "linux_test_run_mpps", "linux_veth_live_mpps", "linux_veth_native_mpps", "paper_hxdp_mpps",
                 "paper_x86_3.7GHz_mpps"),
    "fig14": ("key_bytes", "rtl_cycles", "rtl_mpps", "rtl_model_mismatches", "model_cycles", "linux_test_run_mpps",
              "linux_veth_live_mpps"),
    "fig15": ("calls", "rtl_cycles", "rtl_mpps", "rtl_model_mismatches", "model_cycles", "linux_test_run_mpps",
              "linux_veth_live_mpps"),
    "table3": ("program", "paper_name", "instructions", "rows", "static_ipc", "static_ipc_slots",
               "paper_static_ipc", "dynamic_ipc", "paper_x86_ipc", "model_mismatches"),
    "speed": ("what", "program", "instructions", "rows", "compile_s", "packets_per_s", "sim_cycles_per_s"),
}


def _md_cell(v: Any) -> str:
    if v is None or v == "":
        return "-"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"
    if isinstance(v, dict | list):
        return json.dumps(v, default=_json_default)[:60]
    return str(v).replace("|", "/")


def markdown_table(rows: list[dict[str, Any]], cols: Iterable[str] | None = None) -> str:
    if not rows:
        return "(no rows)\n"
    cs = list(cols) if cols else list(dict.fromkeys(k for r in rows for k in r))
    cs = [c for c in cs if any(c in r for r in rows)]
    lines = ["| " + " | ".join(cs) + " |", "|" + "---|" * len(cs)]
    lines += ["| " + " | ".join(_md_cell(r.get(c)) for c in cs) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def write_markdown(out: Path, found: list[tuple[Experiment, dict[str, Any]]], quick: bool) -> None:
    """out/results.md: the targets, then per experiment its plot and table (relative links)."""
    from hxdp.atomic_write import write_atomic

    checks = [c for _, d in found for c in d.get("checks", [])]
    parts = [f"# Evaluation results{' (quick mode)' if quick else ''}\n",
             f"Generated by `hxdp experiment`; Sephirot figures at {CLOCK_MHZ} MHz. Each section gives the time "
             "its experiment ran.\n",
             "## Targets\n", markdown_table([{"status": c["status"].upper(), "target": c["name"], "value": c["value"],
                                               "limit": c["limit"], "detail": c["detail"]} for c in checks])]
    for e, doc in found:
        parts.append(f"## {e.name}: {e.title}\n\nRun {doc.get('generated', '?')}.\n")
        if (out / f"{e.name}.png").exists():
            parts.append(f"![{e.name}]({e.name}.png)\n")
        parts.append(markdown_table(doc.get("rows", []), MD_COLUMNS.get(e.name)))
        na = doc.get("not_available") or []
        if na:
            parts.append("Not available / errors:\n\n" + "".join(f"- {x}\n" for x in na[:12]))
    write_atomic(out / ("results-quick.md" if quick else "results.md"), "\n".join(parts))


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


def environment() -> dict[str, Any]:
    import platform

    return {"python": platform.python_version(), "kernel": platform.release(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


# ----------------------------------------------------------------------------------------------------------------
# output helpers: CSV, JSON, plots
# ----------------------------------------------------------------------------------------------------------------


def write_table(ctx: Context, name: str, title: str, rows: list[dict[str, Any]],
                extra: dict[str, Any] | None = None, checks: list[Check] | None = None) -> None:
    """out/NAME.csv (one line per row, columns in first-seen order) and out/NAME.json (rows, checks, paper)."""
    from hxdp.atomic_write import write_atomic

    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _csv_cell(r.get(k)) for k in cols})
    out = ctx.out
    write_atomic(out / f"{name}.csv", buf.getvalue())
    doc = {"experiment": name, "title": title, "quick": ctx.quick, "generated": environment()["date"],
           "clock_mhz": CLOCK_MHZ, "rows": rows,
           "checks": [c.__dict__ for c in (checks or [])]}
    if extra:
        doc.update(extra)
    write_atomic(out / f"{name}.json", json.dumps(doc, indent=2, default=_json_default) + "\n")


def _csv_cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else ""
    if isinstance(v, dict | list):
        return json.dumps(v, default=_json_default)
    return v


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, out: Path, name: str) -> None:
    fig.tight_layout()
    fig.savefig(out / f"{name}.png", dpi=110, metadata={"Software": None})
    fig.savefig(out / f"{name}.pdf", metadata={"CreationDate": None, "Producer": None, "Creator": None})
    _plt().close(fig)


def _note_figure(out: Path, name: str, title: str, lines: list[str]) -> None:
    """A figure that says why it has no data (so docs never show a stale plot as current)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 2.5))
    ax.axis("off")
    ax.set_title(title)
    ax.text(0.01, 0.9, "\n".join(["not available:"] + [f"  {x}" for x in lines[:8]]), va="top", family="monospace",
            fontsize=8, transform=ax.transAxes)
    save_figure(fig, out, name)


def _bars(ax: Any, labels: list[str], series: dict[str, list[float | None]], ylabel: str,
          hatches: dict[str, str] | None = None) -> None:
    n = max(1, len(series))
    width = 0.8 / n
    xs = list(range(len(labels)))
    for i, (name, values) in enumerate(series.items()):
        vals = [v if v is not None and math.isfinite(v) else 0.0 for v in values]
        ax.bar([x + (i - (n - 1) / 2) * width for x in xs], vals, width, label=name,
               hatch=(hatches or {}).get(name))
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _reasons(records: dict[str, Record]) -> list[str]:
    seen: list[str] = []
    for k, r in records.items():
        if r.get("status") != "ok":
            msg = f"{k}: {r.get('reason', r.get('status'))}"
            reason = str(r.get("reason", ""))
            if not any(reason and reason in s for s in seen):
                seen.append(msg)
    return seen


# ----------------------------------------------------------------------------------------------------------------
# the pieces under measurement (imported lazily: a missing piece makes its points 'n/a')
# ----------------------------------------------------------------------------------------------------------------


def _suite() -> dict[str, Any]:
    from hxdp.suite import programs

    return {p.name: p for p in programs()}


def suite_names(ctx: Context, only: Iterable[str] | None = None) -> list[str]:
    names = list(_suite())
    if only is not None:
        want = list(only)
        names = [n for n in want if n in names]
    if ctx.quick:
        names = [n for n in names if n in QUICK_PROGRAMS] or names[:3]
    return names


def _suite_program(name: str) -> Any:
    prog = _suite().get(name)
    if prog is None:
        raise NotAvailable(f"{name} is not in xdp_progs/")
    if not prog.obj.exists():
        raise NotAvailable(f"{prog.obj.relative_to(ROOT)} is not built (make -C xdp_progs)")
    return prog


def load(ctx: Context, name: str) -> Any:
    key = ("program", name)
    if key not in ctx.cache:
        from hxdp.frontend.elf import load_program

        ctx.cache[key] = load_program(_suite_program(name).obj)
    return ctx.cache[key]


def _compiler() -> Any:
    try:
        return importlib.import_module("hxdp.compiler")
    except ImportError as exc:
        raise NotAvailable(f"compiler not importable ({exc})") from None


def _compile_fn() -> Callable[..., Any]:
    fn = getattr(_compiler(), "compile_program", None)
    if fn is None:
        raise NotAvailable("hxdp.compiler has no compile_program")
    return fn


# Our switch name -> names the compiler's options may use for it (a boolean that is True when the pass runs).
OPTION_ALIASES: dict[str, tuple[str, ...]] = {
    "bounds": ("bounds", "bounds_checks", "remove_bounds_checks", "remove_bounds", "reduce_bounds"),
    "zeroing": ("zeroing", "remove_zeroing", "zero_init", "reduce_zeroing"),
    "ldst6": ("ldst6", "six_byte", "ld6", "mem6", "load_store6", "ldst48"),
    "alu3": ("alu3", "three_operand", "three_op", "alu3op"),
    "exit_action": ("exit_action", "exit_with_action", "exit_imm", "early_exit"),
    "code_motion": ("code_motion", "motion", "hoist", "code_movement"),
}


def _options_class() -> Any:
    mod = _compiler()
    for name in ("CompileOptions", "Options"):
        cls = getattr(mod, name, None)
        if cls is not None:
            return cls
    raise NotAvailable("hxdp.compiler has no CompileOptions/Options class")


def compiler_options(lanes: int = params.LANES, extra: dict[str, Any] | None = None, **switches: bool) -> Any:
    """Build the compiler's options: lanes, and passes switched off by our names (see OPTION_ALIASES)."""
    cls = _options_class()
    names = {f.name for f in fields(cls)} if is_dataclass(cls) else set(inspect.signature(cls).parameters)
    kw: dict[str, Any] = {k: v for k, v in (extra or {}).items() if k in names}
    if "lanes" in names:
        kw["lanes"] = lanes
    elif lanes != params.LANES:
        raise NotAvailable("compiler options have no 'lanes'")
    disable: list[str] = []
    for sw, on in switches.items():
        field_name = next((a for a in OPTION_ALIASES.get(sw, (sw,)) if a in names), None)
        if field_name is not None:
            kw[field_name] = on
        elif not on:
            disable.append(sw)
    opts = cls(**kw)
    if disable:
        for attr in ("disabled", "disable", "off", "no"):
            if attr in names:
                cur = set(getattr(opts, attr) or ())
                opts = replace(opts, **{attr: type(getattr(opts, attr) or set())(cur | set(disable))}) \
                    if is_dataclass(opts) else opts
                break
        else:
            raise NotAvailable(f"the compiler has no option to switch off {', '.join(disable)}")
    return opts


def compile_variant(ctx: Context, name: str, lanes: int = params.LANES, **switches: bool) -> Any:
    key = ("compile", name, lanes, tuple(sorted(switches.items())))
    if key not in ctx.cache:
        program = load(ctx, name)
        opts = compiler_options(lanes, **switches)
        ctx.cache[key] = _compile_fn()(program, opts)
    return ctx.cache[key]


def ebpf_count(insns: Iterable[Any]) -> int:
    """eBPF instructions as llvm-objdump lists them: a lddw (two slots) counts once."""
    n = 0
    skip = False
    for ins in insns:
        if skip:
            skip = False
            continue
        n += 1
        skip = ins.opcode == 0x18
    return n


def rom_count(rom: Any) -> int:
    """Instructions in a ROM (non-empty lanes, an lddw and its high half counting once)."""
    n = 0
    for row in rom.rows:
        skip = False
        for ins in row:
            if skip:
                skip = False
                continue
            if not ins.is_nop:
                n += 1
            skip = ins.opcode == 0x18
    return n


def _small_report(rep: Any) -> dict[str, Any]:
    if not isinstance(rep, dict):
        return {}
    return {k: v for k, v in rep.items() if isinstance(v, int | float | str) or
            (isinstance(v, dict) and all(isinstance(x, int | float) for x in v.values()))}


# ----------------------------------------------------------------------------------------------------------------
# packets and the engines that run them
# ----------------------------------------------------------------------------------------------------------------


def _read_pcap(path: Path) -> list[bytes]:
    from hxdp.linux.baseline import read_pcap

    return read_pcap(path)


def write_pcap(path: Path, frames: list[bytes]) -> None:
    from hxdp.atomic_write import write_atomic

    parts = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for i, f in enumerate(frames):
        parts.append(struct.pack("<IIII", 1_000_000_000 + i // 1_000_000, i % 1_000_000, len(f), len(f)) + f)
    write_atomic(path, b"".join(parts))


def program_frames(ctx: Context, name: str) -> list[bytes]:
    """The program's traffic (xdp_progs/traffic/NAME.pcap); 64-byte UDP flows when it has none."""
    key = ("frames", name)
    if key not in ctx.cache:
        prog = _suite_program(name)
        if prog.traffic.exists():
            frames = _read_pcap(prog.traffic)
        else:
            from hxdp.traffic.gen import generate

            frames = generate(10, 10, 64, "udp", seed=1)
        ctx.cache[key] = frames
    return ctx.cache[key]


def packets_64(ctx: Context, name: str) -> tuple[list[bytes], str]:
    """The back-to-back trace for throughput: the traffic's frames of at most 64 bytes, repeated to n_packets."""
    frames = program_frames(ctx, name)
    small = [f for f in frames if len(f) == 64]
    what = "64-byte frames of the program's traffic"
    if not small:
        small = [f for f in frames if len(f) <= 64]
        what = "frames of at most 64 bytes of the program's traffic"
    if not small:
        small = frames
        what = f"program's traffic (no frame <= 64 B; mean {statistics.mean(len(f) for f in frames):.0f} B)"
    n = ctx.n_packets
    return [small[i % len(small)] for i in range(n)], what


def map_state(ctx: Context, name: str, layout: Any) -> Any:
    from hxdp.models.maps import MapState

    state = MapState(layout)
    state.apply_config(_suite_program(name).map_config())
    return state


def _rtl_module() -> Any:
    try:
        return importlib.import_module("hxdp.rtl.sim")
    except ImportError as exc:
        raise NotAvailable(f"RTL driver hxdp.rtl not importable ({exc})") from None


def rtl_run(ctx: Context, name: str, packets: list[bytes], **switches: bool) -> tuple[list[Any], Any]:
    """Run packets back to back through the Verilator model (one process); returns (results, the RtlSim)."""
    mod = _rtl_module()
    sim_cls = getattr(mod, "RtlSim", None)
    if sim_cls is None:
        raise NotAvailable("hxdp.rtl.sim has no RtlSim")
    ok, why = mod.available() if hasattr(mod, "available") else (True, "")
    if not ok:
        raise NotAvailable(why)
    if name == "loop":  # the generated busy-loop program of the simulator-speed measurement
        from hxdp.models.maps import MapState

        key = ("compile", "loop")
        if key not in ctx.cache:
            ctx.cache[key] = _compile_fn()(loop_program(ctx), compiler_options())
        cr = ctx.cache[key]
        state = MapState(cr.layout)
    else:
        cr = compile_variant(ctx, name, **switches)
        state = map_state(ctx, name, cr.layout)
    try:
        sim = sim_cls(cr.rom, layout=cr.layout, state=state)
    except HxdpError as exc:
        raise NotAvailable(f"RTL model could not be built: {exc}") from None
    return sim.run_packets(packets), sim


def _stamps(sim: Any) -> list[Any]:
    return list(getattr(sim, "stamps", None) or [])


def back_to_back_cycles(results: list[Any], sim: Any) -> tuple[float, str]:
    """Cycles per packet of a back-to-back run: the steady-state interval between the cycles at which the core
    finishes consecutive packets (second half of the run), from the RTL's per-packet stamps."""
    n = len(results)
    if n == 0:
        raise NotAvailable("the RTL returned no per-packet results")
    st = _stamps(sim)
    if n >= 4 and len(st) == n:
        half = n // 2
        ends = sorted(s.end for s in st)
        return (ends[-1] - ends[half - 1]) / (n - half), "steady-state interval between core completions (RTL)"
    total = getattr(sim, "total_cycles", 0)
    if total:
        return total / n, "total cycles of the run / packets (RTL)"
    return statistics.mean(r.cycles for r in results), "mean of per-packet cycles (RTL)"


# ----------------------------------------------------------------------------------------------------------------
# measurements (one point each; keys are 'kind:args')
# ----------------------------------------------------------------------------------------------------------------


def m_compile(ctx: Context, key: str) -> Record:
    """compile:NAME:VARIANT with VARIANT 'all', 'none', 'only-OPT', 'lanesN' or a fig9 step."""
    _, name, variant = key.split(":")
    program = load(ctx, name)
    lanes = params.LANES
    sw: dict[str, bool] = {}
    if variant == "none":
        sw = {o: False for o in OPTIMISATIONS}
    elif variant.startswith("only-"):
        sw = {o: o == variant[5:] for o in OPTIMISATIONS}
    elif variant.startswith("lanes"):
        lanes = int(variant[5:])
    elif variant != "all":
        step = {s[0]: s[2] for s in FIG9_STEPS}.get(variant)
        if step is None:
            raise ExperimentError(f"unknown compile variant {variant}")
        sw = dict(step)
    t0 = time.perf_counter()
    try:
        cr = compile_variant(ctx, name, lanes, **sw)
    except HxdpError as exc:
        if not variant.startswith("lanes"):
            raise
        # a genuine limit of the target (e.g. an lddw needs two adjacent lanes): a result, not a harness error
        return {"program": name, "variant": variant, "lanes": lanes, "original": ebpf_count(program.insns),
                "rows": None, "does_not_fit": str(exc)}
    dt = time.perf_counter() - t0
    return {"program": name, "variant": variant, "lanes": lanes, "original": ebpf_count(program.insns),
            "slots_original": len(program.insns), "instructions": rom_count(cr.rom), "rows": len(cr.rom),
            "compile_s": round(dt, 4), "report": _small_report(getattr(cr, "report", None))}


def m_ipc(ctx: Context, key: str) -> Record:
    """ipc:NAME: static IPC and dynamic IPC on the traffic's executed paths (sequential model vs VLIW model)."""
    from hxdp.models.maps import MapLayout
    from hxdp.models.seq import SeqModel
    from hxdp.models.vliw import VliwModel

    _, name = key.split(":")
    program = load(ctx, name)
    cr = compile_variant(ctx, name)
    frames = program_frames(ctx, name)[: ctx.n_packets]
    seq = SeqModel(program, map_state(ctx, name, MapLayout.from_maps(program.maps)))
    vliw = VliwModel(cr.rom, map_state(ctx, name, cr.layout), trace=True)
    executed = rows = cycles = mismatches = 0
    for f in frames:
        a = seq.run(f)
        b = vliw.run(f)
        executed += a.cycles
        rows += len(b.trace)
        cycles += b.cycles
        mismatches += not a.same_outcome(b)
    original = ebpf_count(program.insns)
    return {"program": name, "instructions": original, "rows": len(cr.rom),
            "static_ipc": original / len(cr.rom), "slots": len(program.insns),
            "static_ipc_slots": len(program.insns) / len(cr.rom), "packets": len(frames),
            "executed_insns": executed, "executed_rows": rows, "model_cycles": cycles,
            "dynamic_ipc": executed / rows if rows else None, "model_mismatches": mismatches}


def m_model(ctx: Context, key: str) -> Record:
    """model:NAME: VLIW model cycles per packet on the 64-byte trace (the contract's cycle model, no overlap)."""
    from hxdp.models.vliw import VliwModel

    _, name = key.split(":")
    cr = compile_variant(ctx, name)
    packets, what = packets_64(ctx, name)
    vliw = VliwModel(cr.rom, map_state(ctx, name, cr.layout))
    cyc = [vliw.run(p).cycles for p in packets]
    mean = statistics.mean(cyc)
    return {"program": name, "model_cycles": mean, "model_mpps": CLOCK_MHZ / mean if mean else None,
            "packets": len(packets), "trace": what, "rows": len(cr.rom)}


def m_rtl(ctx: Context, key: str) -> Record:
    """rtl:NAME: Sephirot RTL cycles per packet back to back, Mpps at 156.25 MHz, and agreement with the model."""
    from hxdp.models.vliw import VliwModel

    _, name, *variant = key.split(":")
    off = {variant[0][3:]: False} if variant and variant[0].startswith("no-") else {}
    packets, what = packets_64(ctx, name)
    t0 = time.perf_counter()
    results, sim = rtl_run(ctx, name, packets, **off)
    wall = time.perf_counter() - t0
    cpp, how = back_to_back_cycles(results, sim)
    cr = compile_variant(ctx, name, **off)
    vliw = VliwModel(cr.rom, map_state(ctx, name, cr.layout))
    mism = sum(1 for p, r in zip(packets, results, strict=False) if not vliw.run(p).same_outcome(r))
    actions = sorted({params.ACTION_NAMES.get(r.action, str(r.action)) for r in results})
    return {"program": name, "rtl_cycles": cpp, "rtl_mpps": CLOCK_MHZ / cpp if cpp else None, "method": how,
            "packets": len(results), "trace": what, "actions": actions, "model_mismatches": mism,
            "core_cycles_mean": statistics.mean(r.cycles for r in results),
            "total_cycles": getattr(sim, "total_cycles", None), "wall_s": round(wall, 3)}


def m_linux(ctx: Context, key: str) -> Record:
    """linux:NAME: the Linux XDP baseline on this machine (BPF_PROG_TEST_RUN and live frames through veth)."""
    from hxdp.linux import baseline

    _, name = key.split(":")
    ok, why = baseline.available()
    if not ok:
        raise NotAvailable(f"bpf() not usable here: {why}")
    prog = _suite_program(name)
    packets, what = packets_64(ctx, name)
    distinct = list(dict.fromkeys(packets))
    pcap = ctx.out / "work" / "traces" / f"{name}-64.pcap"
    pcap.parent.mkdir(parents=True, exist_ok=True)
    write_pcap(pcap, distinct)
    opts = baseline.Options(repeat=20_000 if ctx.quick else 300_000, runs=1 if ctx.quick else 5,
                            max_packets=1 if ctx.quick else 4, veth=not ctx.quick, native=not ctx.quick)
    res = baseline.run_baseline(str(prog.obj), str(pcap), maps=str(prog.maps) if prog.maps.exists() else None,
                                options=opts)
    rec: Record = {"program": name, "trace": what}
    for m in res.modes:
        rec[f"{m.mode}_ns"] = m.wall_ns_per_packet if m.mpps_from == "wall" else m.ns_per_packet
        rec[f"{m.mode}_mpps"] = m.mpps
    rec["skipped"] = res.skipped
    return rec


def resize_frame(frame: bytes, size: int) -> bytes:
    """The same flow's frame with its payload grown or cut so that it is `size` bytes (IP/UDP lengths fixed)."""
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    pkt = Ether(frame)
    if IP not in pkt:
        if len(frame) >= size:
            return frame[:size]
        return frame + bytes(size - len(frame))
    ip = pkt[IP]
    l4 = ip.getlayer(UDP) or ip.getlayer(TCP) or ip
    head = len(frame) - len(bytes(l4.payload))
    l4.remove_payload()
    l4.add_payload(Raw(bytes(max(0, size - head))))
    del ip.len, ip.chksum
    if UDP in pkt:
        del pkt[UDP].len, pkt[UDP].chksum
    if TCP in pkt:
        del pkt[TCP].chksum
    out = bytes(pkt)
    if len(out) < size:
        out += bytes(size - len(out))
    return out[:size]


def _forwarded_frame(ctx: Context, name: str, size: int) -> bytes:
    """The first frame of the program's traffic, resized, that the program sends out (TX or REDIRECT) from its
    initial maps (the VLIW model decides); a dropped frame has no 'last byte out'."""
    from hxdp.models.vliw import VliwModel

    cr = compile_variant(ctx, name)
    frames = program_frames(ctx, name)
    for f in frames:
        rf = resize_frame(f, size)
        res = VliwModel(cr.rom, map_state(ctx, name, cr.layout)).run(rf)
        if res.action in (params.XDP_TX, params.XDP_REDIRECT):
            return rf
    raise NotAvailable(f"no frame of {name}'s traffic resized to {size} B is sent out (TX/REDIRECT)")


def m_latency(ctx: Context, key: str) -> Record:
    """latency:NAME:SIZE: first byte in to last byte out in the RTL, ns at 156.25 MHz, one packet at a time."""
    _, name, size_s = key.split(":")
    size = int(size_s)
    frame = _forwarded_frame(ctx, name, size)
    results, sim = rtl_run(ctx, name, [frame])
    st = _stamps(sim)
    if len(st) != 1:
        raise NotAvailable("the RTL driver does not report per-packet in/out stamps")
    s = st[0]
    r = results[0]
    if r.action in (params.XDP_DROP, params.XDP_ABORTED) or s.out < s.in_cycle:
        raise NotAvailable(f"the {len(frame)}-byte packet was {r.action_name}: no byte left the NIC")
    cyc = s.out - s.in_cycle + 1  # both stamps are cycles in which a frame moved: count both ends
    return {"program": name, "size": size, "latency_cycles": cyc, "latency_ns": cyc * NS_PER_CYCLE,
            "core_start_cycle": s.start - s.in_cycle, "core_cycles": s.end - s.start + 1,
            "action": r.action_name, "out_bytes": len(r.packet)}


SYNTHETIC_SIZES = (25, 50, 100, 200, 400, 800)
SYNTHETIC_C = """/* generated by hxdp experiment (toolchain speed): N unrolled read-modify-write steps on the packet */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int synthetic(struct xdp_md *ctx)
{
	unsigned char *p = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	unsigned int acc = 7;
	if ((void *)(p + 64) > end)
		return XDP_PASS;
#pragma unroll
	for (int i = 0; i < N; i++) {
		acc = acc * 31 + p[(i * 13) % 64];
		if (acc & (1u << (i % 31)))
			p[(i * 7) % 64] ^= (unsigned char)acc;
	}
	return (acc & 1) ? XDP_DROP : XDP_TX;
}
char _license[] SEC("license") = "GPL";
"""


LOOP_C = """/* generated by hxdp experiment (simulator speed): a bounded loop of LOOPS iterations per packet */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int loop(struct xdp_md *ctx)
{
	unsigned char *p = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	unsigned int acc = 7;
	if ((void *)(p + 64) > end)
		return XDP_PASS;
#pragma nounroll
	for (int i = 0; i < LOOPS; i++)
		acc = acc * 31 + p[i & 63];
	return (acc & 1) ? XDP_DROP : XDP_TX;
}
char _license[] SEC("license") = "GPL";
"""


def _clang_build(ctx: Context, stem: str, text: str) -> Any:
    import platform

    from hxdp.frontend.elf import load_program

    clang = shutil.which("clang") or shutil.which("clang-14")
    if clang is None:
        raise NotAvailable("clang is not installed")
    d = ctx.out / "work" / "synthetic"
    d.mkdir(parents=True, exist_ok=True)
    src, obj = d / f"{stem}.c", d / f"{stem}.o"
    src.write_text(text)
    proc = subprocess.run([clang, "-O2", "-target", "bpf", "-mcpu=v3", f"-I/usr/include/{platform.machine()}-linux-gnu",
                           "-c", str(src), "-o", str(obj)], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise NotAvailable(f"clang failed on {src.name}: {proc.stderr.strip()[-200:]}")
    return load_program(obj)


def loop_program(ctx: Context) -> Any:
    """A small program whose packets each take thousands of cycles (simulated cycles/s, not packet overhead)."""
    return _clang_build(ctx, "loop", LOOP_C.replace("LOOPS", "4000"))


def synthetic_program(ctx: Context, n: int) -> Any:
    """A generated program of about 10N eBPF instructions, compiled with clang (for compile time vs size)."""
    return _clang_build(ctx, f"synthetic_{n}", SYNTHETIC_C.replace("i < N", f"i < {n}"))


def m_ctime(ctx: Context, key: str) -> Record:
    """ctime:NAME or ctime:synthetic-N: compile time (median of 3) against program size; synthetic programs are
    compiled with an instruction memory as large as they need (the speed of the compiler, not the fit)."""
    _, name = key.split(":")
    if name.startswith("synthetic-"):
        program = synthetic_program(ctx, int(name.split("-")[1]))
        opts = compiler_options(extra={"imem_rows": 1 << 20})
    else:
        program = load(ctx, name)
        opts = compiler_options()
    fn = _compile_fn()
    times = []
    cr = None
    for _ in range(1 if ctx.quick else 3):
        t0 = time.perf_counter()
        cr = fn(program, opts)
        times.append(time.perf_counter() - t0)
    assert cr is not None
    return {"program": name, "instructions": ebpf_count(program.insns), "rows": len(cr.rom),
            "compile_s": statistics.median(times)}


def m_simspeed(ctx: Context, key: str) -> Record:
    """simspeed:NAME: simulated cycles/s and packets/s of the Verilator model, from two run lengths (the fixed
    cost of starting the simulator and loading ROM and maps cancels out)."""
    _, name = key.split(":")
    if name == "loop":
        from hxdp.traffic.gen import generate

        packets = generate(4, 4, 64, "udp", seed=3)
        small, big = (4, 32) if ctx.quick else (20, 200)
    else:
        packets, _what = packets_64(ctx, name)
        small, big = (256, 2048) if ctx.quick else (2000, 20000)
    rtl_run(ctx, name, packets[:2])  # builds the model first when its sources changed (not timed)
    runs = []
    for n in (small, big):
        trace = [packets[i % len(packets)] for i in range(n)]
        t0 = time.perf_counter()
        results, sim = rtl_run(ctx, name, trace)
        wall = time.perf_counter() - t0
        runs.append((n, getattr(sim, "total_cycles", 0) or sum(r.cycles for r in results), wall))
    (n1, c1, w1), (n2, c2, w2) = runs
    dt = w2 - w1
    if dt <= 0:
        raise NotAvailable(f"timing noise: {n2} packets ran no slower than {n1}")
    return {"program": name, "packets": n2, "sim_cycles": c2, "wall_s": w2, "packets_per_s": (n2 - n1) / dt,
            "sim_cycles_per_s": (c2 - c1) / dt, "fixed_cost_s": w1 - (c1 / ((c2 - c1) / dt)),
            "note": f"rates from the difference between runs of {n1} and {n2} packets"}


def _has_module(files: list[Path], name: str) -> bool:
    return any(re.search(rf"^\s*module\s+{name}\b", f.read_text(errors="replace"), re.M) for f in files)


def rtl_files_for(files: list[Path], top: str) -> list[Path]:
    """The files defining `top` and every module it instantiates, transitively (yosys elaborates every file it
    reads, so reading only these keeps the unrelated modules out of the run)."""
    texts = {f: re.sub(r"//[^\n]*|/\*.*?\*/", "", f.read_text(errors="replace"), flags=re.S) for f in files}
    defines = {m: f for f, t in texts.items() for m in re.findall(r"^\s*module\s+(\w+)", t, re.M)}
    need, todo = set(), [top]
    while todo:
        m = todo.pop()
        f = defines.get(m)
        if f is None or f in need:
            continue
        need.add(f)
        todo += [o for o in defines if o != m and re.search(rf"\b{o}\b", texts[f])]
    return [f for f in files if f in need]


LUT_CELLS = re.compile(r"^(LUT[1-6]|MUXF[5-8])$")
LUTRAM_CELLS = re.compile(r"^(RAM\d+[XSMD]\w*|SRL\w+)$")
# LUTs (SLICEM LUT6 sites) one distributed-RAM cell occupies (7-series); a cell not listed counts as one
LUTRAM_SITES = {"RAM32X1S": 1, "RAM64X1S": 1, "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1S": 2, "RAM128X1D": 4,
                "RAM256X1S": 4, "RAM32M": 4, "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8}
FF_CELLS = re.compile(r"^(FD[RSCPE]+\w*|LD\w*)$")


# yosys 0.23's `stat -json` also prints the text listing of a hierarchy deeper than one level ("    sephirot_div  1")
# in the middle of the JSON; those lines are dropped before parsing
_STAT_TEXT_LINE = re.compile(r"^\s+[^\s\"{}\[\]][^\"]*\s\d+\s*$")


def parse_stat_json(text: str) -> dict[str, Any]:
    """The document of yosys `stat -json`, tolerating yosys 0.23's stray hierarchy lines."""
    try:
        return json.loads(text)
    except ValueError:
        return json.loads("\n".join(line for line in text.splitlines() if not _STAT_TEXT_LINE.match(line)))


def module_name(cell_type: str) -> str:
    """The plain module name of a yosys module or cell type: `$paramod$HASH\\sephirot_stack` and
    `$paramod\\sephirot_lane\\AW=s32'...` name the modules sephirot_stack and sephirot_lane."""
    m = re.match(r"^\$paramod(?:\$[0-9a-f]+)?\\([^\\]+)", cell_type)
    return m.group(1) if m else cell_type.lstrip("\\")


def _add_stats(into: dict[str, dict[str, float]], name: str, st: dict[str, float]) -> None:
    have = into.setdefault(name, {})
    for k, v in st.items():
        have[k] = have.get(k, 0.0) + v


def synth_stats(doc: dict[str, Any], full_names: bool = False) -> dict[str, dict[str, float]]:
    """Per module LUT/LUTRAM/FF/BRAM/DSP from yosys `stat -json` (LUT counts LUT1-6, not the MUXF7/8; LUTRAM
    counts the LUTs the distributed-RAM cells occupy, e.g. 4 for a RAM64M). Keyed by the plain module name, the
    variants of a module built with different parameters summed (`full_names`: by yosys's own names, one entry a
    variant)."""
    out: dict[str, dict[str, float]] = {}
    for mod, info in doc.get("modules", {}).items():
        cells = info.get("num_cells_by_type", {})
        st = {"LUT": 0.0, "LUTRAM": 0.0, "FF": 0.0, "BRAM": 0.0, "DSP": 0.0, "CARRY4": 0.0}
        for cell, n in cells.items():
            if re.match(r"^LUT[1-6]$", cell):
                st["LUT"] += n
            elif LUTRAM_CELLS.match(cell):
                st["LUTRAM"] += n * LUTRAM_SITES.get(cell, 1)
            elif FF_CELLS.match(cell):
                st["FF"] += n
            elif cell.startswith("RAMB36"):
                st["BRAM"] += n
            elif cell.startswith("RAMB18"):
                st["BRAM"] += n / 2
            elif cell.startswith("DSP48"):
                st["DSP"] += n
            elif cell == "CARRY4":
                st["CARRY4"] += n
        _add_stats(out, mod if full_names else module_name(mod), st)
    return out


def hierarchy_totals(doc: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per module, its own cells plus those of every submodule instance (recursively), keyed by the plain module
    name. The instances are followed by yosys's full names: the variants of one module (sephirot_portsel with
    different widths, say) differ in size, and taking one for all of them over-counted the whole IP by 1K LUTs.
    The variants of a module are summed, one of each."""
    # (a plain module is "\\mid" among the modules and "mid" as a cell type; a variant is "$paramod..." in both)
    own = {m.lstrip("\\"): st for m, st in synth_stats(doc, full_names=True).items()}
    cells = {m.lstrip("\\"): {c.lstrip("\\"): n for c, n in info.get("num_cells_by_type", {}).items()}
             for m, info in doc.get("modules", {}).items()}
    memo: dict[str, dict[str, float]] = {}

    def total(m: str, depth: int = 0) -> dict[str, float]:
        if m in memo:
            return memo[m]
        t = dict(own.get(m, {}))
        if depth < 32:
            for cell, n in cells.get(m, {}).items():
                if cell in cells and cell != m:
                    for k, v in total(cell, depth + 1).items():
                        t[k] = t.get(k, 0.0) + n * v
        memo[m] = t
        return t

    out: dict[str, dict[str, float]] = {}
    for m in cells:
        _add_stats(out, module_name(m), total(m))
    return out


# run one after the other in the background; HXDP_SYNTH_TIMEOUT=SECONDS overrides both
SYNTH_TIMEOUT_S = {"sephirot_core": 1200, "sephirot_helpers": 900, "sephirot_top": 1500, "sephirot_pktbuf": 900}
SYNTH_MEMORY_BYTES = 6 << 30  # address-space limit of yosys: the machine is shared


def _limit_memory() -> None:
    """In the yosys child: cap its memory and keep it off CPU 0, where the Linux baseline pins itself."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (SYNTH_MEMORY_BYTES, SYNTH_MEMORY_BYTES))
    cpus = os.sched_getaffinity(0)
    if len(cpus) > 1:
        os.sched_setaffinity(0, cpus - {0})


def m_synth(ctx: Context, key: str) -> Record:
    """synth:MODULE[:P=V,...]: yosys synth_xilinx (7-series) of MODULE (sephirot_top, sephirot_core) with its
    parameters P set to V (chparam), hierarchy kept."""
    yosys = shutil.which("yosys")
    if yosys is None:
        raise NotAvailable("yosys is not installed")
    files = sorted(SEPHIROT_RTL.glob("*.v")) + sorted(SEPHIROT_RTL.glob("*.sv"))
    if not files:
        raise NotAvailable(f"no RTL in {SEPHIROT_RTL}")
    top, _, params = key.split(":", 1)[1].partition(":")
    chparam = "".join(f" -set {p} {v}" for p, v in (kv.split("=", 1) for kv in params.split(",") if kv))
    if not _has_module(files, top):
        raise NotAvailable(f"no module {top} in {SEPHIROT_RTL}")
    timeout = int(os.environ.get("HXDP_SYNTH_TIMEOUT", 0)) or SYNTH_TIMEOUT_S.get(top, 600)
    files = rtl_files_for(files, top)
    with tempfile.TemporaryDirectory(prefix="hxdp-synth-") as tmp:
        stat_json = Path(tmp) / "stat.json"
        script = (f"read_verilog -sv -I{SEPHIROT_RTL} " + " ".join(str(f) for f in files) + "; "
                  + (f"chparam{chparam} {top}; " if chparam else "")
                  + f"synth_xilinx -family xc7 -top {top}; tee -q -o {stat_json} stat -json")
        t0 = time.perf_counter()
        work = (ctx.out / "work").resolve()  # yosys runs in the temporary folder: a relative --out is not there
        try:
            work.mkdir(exist_ok=True)
            proc = subprocess.run([yosys, "-l", str(work / f"yosys-{top}.log"), "-p", script],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=timeout,
                                  cwd=tmp, preexec_fn=_limit_memory)
        except subprocess.TimeoutExpired:  # a result: the RTL did not synthesise within the budget
            return {"top": top, "synth_failed": f"yosys synth_xilinx did not finish within {timeout} s",
                    "seconds": timeout}
        dt = time.perf_counter() - t0
        if proc.returncode != 0 or not stat_json.exists():
            err = (proc.stderr or "").strip().splitlines()
            why = err[-1] if err else "no output"
            if "bad_alloc" in (proc.stderr or "") or proc.returncode in (-6, -9, 134, 137):
                why = f"out of memory (limit {SYNTH_MEMORY_BYTES >> 30} GB): {why}"
            return {"top": top, "seconds": round(dt, 1),
                    "synth_failed": f"yosys failed (exit {proc.returncode}): {why}"}
        doc = parse_stat_json(stat_json.read_text())
    hier = hierarchy_totals(doc)
    return {"top": top, "params": params, "seconds": round(dt, 1), "modules": hier, "own": synth_stats(doc),
            "total": hier.get(top, {}), "yosys": "0.23 (Debian)", "files": [f.name for f in files]}


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
}

# ----------------------------------------------------------------------------------------------------------------
# experiments: points and reports
# ----------------------------------------------------------------------------------------------------------------


def _ok(records: dict[str, Record], key: str) -> Record | None:
    r = records.get(key)
    return r if r is not None and r.get("status") == "ok" else None


def points_fig7(ctx: Context) -> list[str]:
    return [f"compile:{p}:{v}" for p in suite_names(ctx) for v in ("none", *(f"only-{o}" for o in OPTIMISATIONS))]


def report_fig7(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = []
    for p in suite_names(ctx):
        base = _ok(records, f"compile:{p}:none")
        row: dict[str, Any] = {"program": p}
        if base:
            row["original"] = base["original"]
            row["no_optimisation"] = base["instructions"]
        for o in OPTIMISATIONS:
            r = _ok(records, f"compile:{p}:only-{o}")
            row[f"{o}_pct"] = (100.0 * (base["instructions"] - r["instructions"]) / base["original"]
                               if base and r else None)
        rows.append(row)
    notes = _reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"paper": {k: v for k, v in PAPER_NOTES.items()
                                                               if k.startswith("fig7")}, "not_available": notes})
    if not any(r.get("original") for r in rows):
        _note_figure(ctx.out, exp.name, exp.title, notes)
        return []
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 4))
    _bars(ax, [r["program"] for r in rows], {OPT_TITLES[o]: [r[f"{o}_pct"] for r in rows] for o in OPTIMISATIONS},
          "% of original eBPF instructions removed")
    ax.set_title("Fig. 7: instruction reduction per optimisation (each alone vs. none)")
    save_figure(fig, ctx.out, exp.name)
    return []


def points_fig8(ctx: Context) -> list[str]:
    return [f"compile:{p}:lanes{n}" for p in suite_names(ctx) for n in LANES]


def report_fig8(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = []
    for p in suite_names(ctx):
        row: dict[str, Any] = {"program": p}
        for n in LANES:
            r = _ok(records, f"compile:{p}:lanes{n}")
            row[f"rows_{n}"] = r["rows"] if r else None
        rows.append(row)
    notes = _reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"paper": PAPER_NOTES["fig8_fourth_lane_pct"],
                                                     "not_available": notes})
    if not any(row.get("rows_1") for row in rows):
        _note_figure(ctx.out, exp.name, exp.title, notes)
        return []
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 4))
    _bars(ax, [r["program"] for r in rows], {f"{n} lane{'s' if n > 1 else ''}": [r[f"rows_{n}"] for r in rows]
                                             for n in LANES}, "VLIW rows")
    ax.set_title("Fig. 8: VLIW rows for 1 to 8 lanes")
    save_figure(fig, ctx.out, exp.name)
    return []


def points_fig9(ctx: Context) -> list[str]:
    return [f"compile:{p}:{s[0]}" for p in suite_names(ctx) for s in FIG9_STEPS]


def report_fig9(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = []
    for p in suite_names(ctx):
        rs = [_ok(records, f"compile:{p}:{s[0]}") for s in FIG9_STEPS]
        row: dict[str, Any] = {"program": p}
        if all(rs):
            orig = rs[0]["original"]  # type: ignore[index]
            rowsv = [r["rows"] for r in rs]  # type: ignore[index]
            row.update({"original": orig, "final_rows": rowsv[-1], "gain_parallelization": orig - rowsv[0]})
            for (sid, _t, _sw), prev, cur in zip(FIG9_STEPS[1:], rowsv[:-1], rowsv[1:], strict=True):
                row[f"gain_{sid}"] = prev - cur
            row["x_smaller"] = orig / rowsv[-1]
        rows.append(row)
    notes = _reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"not_available": notes,
                                                     "steps": [(s[0], s[1]) for s in FIG9_STEPS]})
    good = [r for r in rows if "final_rows" in r]
    if not good:
        _note_figure(ctx.out, exp.name, exp.title, notes)
        return []
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 4.5))
    xs = list(range(len(good)))
    ax.bar([x - 0.2 for x in xs], [r["original"] for r in good], 0.38, label="original eBPF instructions",
           color="0.6")
    bottom = [float(r["final_rows"]) for r in good]
    ax.bar([x + 0.2 for x in xs], bottom, 0.38, label="final VLIW rows", color="C0")
    parts = [("gain_all", "code motion"), ("gain_extend", "ISA extensions"),
             ("gain_reduce", "bounds checks + zeroing"), ("gain_parallelization", "parallelization")]
    for i, (k, label) in enumerate(parts):
        vals = [max(0, r.get(k) or 0) for r in good]
        ax.bar([x + 0.2 for x in xs], vals, 0.38, bottom=bottom, label=f"saved by {label}", color=f"C{i + 1}",
               alpha=0.8)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.set_xticks(xs)
    ax.set_xticklabels([r["program"] for r in good], rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("instructions / rows")
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("Fig. 9: final VLIW rows and what each optimisation saved (4 lanes)")
    save_figure(fig, ctx.out, exp.name)
    return []


def points_table3(ctx: Context) -> list[str]:
    return [f"ipc:{p}" for p in suite_names(ctx)]


def report_table3(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = []
    checks = []
    for p in suite_names(ctx):
        r = _ok(records, f"ipc:{p}")
        paper = PAPER_TABLE3.get(OURS_TO_PAPER.get(p, ""))
        row: dict[str, Any] = {"program": p, "paper_name": OURS_TO_PAPER.get(p)}
        if r:
            row.update({k: r.get(k) for k in ("instructions", "rows", "static_ipc", "slots", "static_ipc_slots",
                                              "dynamic_ipc", "executed_insns",
                                          "executed_rows", "packets", "model_mismatches")})
        row.update({"paper_instructions": paper[0] if paper else None, "paper_x86_ipc": paper[1] if paper else None,
                    "paper_static_ipc": paper[2] if paper else None})
        rows.append(row)
        if paper:
            name = f"static IPC {p} > paper {paper[2]:.2f}"
            if r:
                ok = r["static_ipc"] > paper[2]
                slots = f"; {r['static_ipc_slots']:.2f} counting lddw as 2 slots" if r.get("static_ipc_slots") else ""
                checks.append(Check(name, "pass" if ok else "fail", f"{r['static_ipc']:.2f}", f"> {paper[2]:.2f}",
                                    f"instructions as llvm-objdump lists them (lddw once) / rows{slots}"))
            else:
                checks.append(Check(name, "n/a", "-", f"> {paper[2]:.2f}",
                                    str(records.get(f"ipc:{p}", {}).get("reason", ""))))
    missing = [p for p in PAPER_NAMES.values() if p not in suite_names(ctx)]
    if missing and not ctx.quick:
        for p in missing:
            checks.append(Check(f"static IPC {p} > paper", "n/a", "-", "", "program not in xdp_progs/"))
    notes = _reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"paper": "Table 3, Sec. 5.2.2", "not_available": notes},
                checks)
    good = [r for r in rows if r.get("static_ipc")]
    if not good:
        _note_figure(ctx.out, exp.name, exp.title, notes)
        return checks
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 4))
    _bars(ax, [r["program"] for r in good], {
        "static IPC (ours)": [r["static_ipc"] for r in good],
        "dynamic IPC (ours, executed paths)": [r["dynamic_ipc"] for r in good],
        "static IPC (paper, Table 3)": [r["paper_static_ipc"] for r in good],
        "x86 IPC (paper, Table 3)": [r["paper_x86_ipc"] for r in good]}, "eBPF instructions per row")
    ax.set_title("Table 3: static and dynamic IPC")
    save_figure(fig, ctx.out, exp.name)
    return checks


def _throughput_points(ctx: Context, names: list[str]) -> list[str]:
    return [f"{k}:{p}" for p in names for k in ("model", "rtl", "linux")]


def _throughput_rows(ctx: Context, names: list[str], records: dict[str, Record]) -> list[dict[str, Any]]:
    rows = []
    for p in names:
        m, r, lx = (_ok(records, f"{k}:{p}") for k in ("model", "rtl", "linux"))
        paper = PAPER_MPPS.get(p)
        rows.append({
            "program": p,
            "rtl_cycles": r["rtl_cycles"] if r else None,
            "rtl_mpps": r["rtl_mpps"] if r else None,
            "rtl_method": r["method"] if r else records.get(f"rtl:{p}", {}).get("reason"),
            "rtl_model_mismatches": r["model_mismatches"] if r else None,
            "model_cycles": m["model_cycles"] if m else None,
            "model_mpps": m["model_mpps"] if m else None,
            "linux_test_run_mpps": lx.get("test_run_mpps") if lx else None,
            "linux_veth_live_mpps": lx.get("veth_live_mpps") if lx else None,
            "linux_veth_native_mpps": lx.get("veth_native_mpps") if lx else None,
            "paper_hxdp_mpps": paper[0] if paper else None,
            "paper_x86_3.7GHz_mpps": paper[1] if paper else None,
            "paper_source": paper[2] if paper else None,
            "trace": (m or r or {}).get("trace"),
        })
    return rows


def _throughput_plot(ctx: Context, name: str, title: str, rows: list[dict[str, Any]], notes: list[str],
                     labels: list[str] | None = None) -> None:
    if not any(r.get("rtl_mpps") or r.get("model_mpps") or r.get("linux_test_run_mpps") for r in rows):
        _note_figure(ctx.out, name, title, notes)
        return
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(7, 0.5 * len(rows) + 4), 5))
    wrong = [r["program"] for r in rows if r.get("rtl_model_mismatches")]
    series = {
        "Sephirot RTL (ours)": [None if r.get("rtl_model_mismatches") else r.get("rtl_mpps") for r in rows],
        "VLIW model (ours, no overlap)": [r.get("model_mpps") for r in rows],
        "Linux XDP test_run (this machine)": [r.get("linux_test_run_mpps") for r in rows],
        "Linux XDP veth live (this machine)": [r.get("linux_veth_live_mpps") for r in rows],
        "hXDP (paper)": [r.get("paper_hxdp_mpps") for r in rows],
        "x86 @3.7GHz (paper)": [r.get("paper_x86_3.7GHz_mpps") for r in rows],
    }
    series = {k: v for k, v in series.items() if any(x for x in v)}
    _bars(ax, labels or [r["program"] for r in rows], series, "Mpps (64 B)",
          {"hXDP (paper)": "//", "x86 @3.7GHz (paper)": "\\\\"})
    ax.set_yscale("log")
    if wrong:
        title += f"\nno RTL bar where the RTL's results differ from the model: {', '.join(wrong)}"
        if len(title) > 240:
            title = title[:237] + "..."
    ax.set_title(title, fontsize=9 if wrong else 11, wrap=True)
    save_figure(fig, ctx.out, name)


def _cycle_checks(rows: list[dict[str, Any]], records: dict[str, Record]) -> list[Check]:
    checks = []
    for p, (limit, what) in TARGET_CYCLES.items():
        row = next((r for r in rows if r["program"] == p), None)
        name = f"cycles/64B packet {p} <= {limit}"
        if row is None:
            continue
        if row["rtl_cycles"] is not None:
            wrong = row.get("rtl_model_mismatches") or 0
            ok = row["rtl_cycles"] <= limit and wrong == 0
            detail = "RTL, back to back" if not wrong else \
                f"RTL results differ from the VLIW model on {wrong} packet(s): a fast wrong answer does not count"
            checks.append(Check(name, "pass" if ok else "fail", f"{row['rtl_cycles']:.2f} cycles "
                                f"({row['rtl_mpps']:.1f} Mpps)", f"<= {limit} ({what})", detail))
        else:
            model = f"VLIW model says {row['model_cycles']:.2f} (not the target measure)" if row["model_cycles"] \
                else ""
            reason = str(records.get(f"rtl:{p}", {}).get("reason", "not measured"))
            checks.append(Check(name, "n/a", "-", f"<= {limit}", "; ".join(x for x in (reason, model) if x)))
    return checks


def points_fig12_13(ctx: Context) -> list[str]:
    extra = ["rtl:xdp_drop:no-exit_action"] if "xdp_drop" in suite_names(ctx) else []
    return _throughput_points(ctx, suite_names(ctx)) + extra


def report_fig12_13(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    names = suite_names(ctx)
    rows = _throughput_rows(ctx, names, records)
    checks = _cycle_checks(rows, records)
    noexit = _ok(records, "rtl:xdp_drop:no-exit_action")
    if noexit:
        rows.append({"program": "xdp_drop (no exit with action)", "rtl_cycles": noexit["rtl_cycles"],
                     "rtl_mpps": noexit["rtl_mpps"], "rtl_method": noexit["method"],
                     "rtl_model_mismatches": noexit["model_mismatches"],
                     "paper_hxdp_mpps": PAPER_NOTES["xdp_drop_no_early_exit_mpps"][0],
                     "paper_source": PAPER_NOTES["xdp_drop_no_early_exit_mpps"][1]})
    missing = [p for p in TARGET_CYCLES if p not in names and not ctx.quick]
    checks += [Check(f"cycles/64B packet {p} <= {TARGET_CYCLES[p][0]}", "n/a", "-", f"<= {TARGET_CYCLES[p][0]}",
                     "program not in xdp_progs/") for p in missing]
    notes = _reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"paper": {k: v for k, v in PAPER_NOTES.items()
                                                               if "mpps" in k}, "not_available": notes}, checks)
    _throughput_plot(ctx, exp.name, "Fig. 12/13: throughput at 156.25 MHz vs Linux XDP", rows, notes)
    return checks


def _family_points(ctx: Context, family: tuple[str, ...]) -> list[str]:
    """Throughput points of a microbenchmark family (the first two in quick mode)."""
    names = [n for n in family if n in _suite()]
    return _throughput_points(ctx, names[:2] if ctx.quick else names)


def points_fig14(ctx: Context) -> list[str]:
    return _family_points(ctx, MAP_ACCESS)


def report_fig14(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    names = [n for n in MAP_ACCESS if any(k.endswith(":" + n) for k in records)]
    rows = _throughput_rows(ctx, names, records)
    for r in rows:
        r["key_bytes"] = int(r["program"].rsplit("k", 1)[1])
    notes = _reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"paper": PAPER_NOTES["fig14_map_access"],
                                                     "not_available": notes})
    _throughput_plot(ctx, exp.name, "Fig. 14: map access vs key size", rows, notes,
                     [f"{r['key_bytes']} B key" for r in rows])
    cyc = [r["rtl_cycles"] for r in rows if r["rtl_cycles"] is not None]
    if len(cyc) == len(rows) and len(rows) >= 2:
        flat = max(cyc) - min(cyc) <= 0.5
        wrong = sum(r.get("rtl_model_mismatches") or 0 for r in rows)
        detail = "RTL (paper Fig. 14)" if not wrong else f"RTL results differ from the VLIW model on {wrong} packet(s)"
        return [Check("map access cost independent of key size 1-16 B", "pass" if flat and not wrong else "fail",
                      f"{min(cyc):.1f}-{max(cyc):.1f} cycles", "spread <= 0.5 cycle", detail)]
    return [Check("map access cost independent of key size 1-16 B", "n/a", "-", "spread <= 0.5 cycle",
                  notes[0] if notes else "")]


def points_fig15(ctx: Context) -> list[str]:
    return _family_points(ctx, CSUM_DIFF)


def report_fig15(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    names = [n for n in CSUM_DIFF if any(k.endswith(":" + n) for k in records)]
    rows = _throughput_rows(ctx, names, records)
    for r in rows:
        r["calls"] = int(r["program"].rsplit("x", 1)[1])
    notes = _reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"not_available": notes})
    _throughput_plot(ctx, exp.name, "Fig. 15: throughput vs csum_diff helper calls", rows, notes,
                     [f"{r['calls']} call{'s' if r['calls'] > 1 else ''}" for r in rows])
    return []


LATENCY_PROGRAMS = ("simple_firewall", "xdp_tx")  # the paper's Fig. 11 program, and the shortest forwarding path


def points_fig11(ctx: Context) -> list[str]:
    progs = [p for p in LATENCY_PROGRAMS if p in _suite()]
    if ctx.quick:
        progs = progs[-1:]
    return [f"latency:{p}:{s}" for p in progs for s in (QUICK_LATENCY_SIZES if ctx.quick else LATENCY_SIZES)]


def report_fig11(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = []
    for k in records:
        r = _ok(records, k)
        _, prog, size = k.split(":")
        rows.append({"program": prog, "size": int(size), "latency_cycles": r["latency_cycles"] if r else None,
                     "latency_ns": r["latency_ns"] if r else None,
                     "core_start_cycle": r.get("core_start_cycle") if r else None,
                     "core_cycles": r.get("core_cycles") if r else None,
                     "action": r.get("action") if r else None,
                     "wire_time_ns_10G": (int(size) + 20) * 0.8})
    notes = _reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"paper": PAPER_NOTES["fig11_latency"], "not_available": notes})
    good = [r for r in rows if r["latency_ns"] is not None]
    if not good:
        _note_figure(ctx.out, exp.name, exp.title, notes)
        return []
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    for prog in dict.fromkeys(r["program"] for r in good):
        pts = [r for r in good if r["program"] == prog]
        ax.plot([r["size"] for r in pts], [r["latency_ns"] for r in pts], "o-", label=f"{prog} (Sephirot RTL)")
    missing = sorted({r["program"] for r in rows} - {r["program"] for r in good})
    ax.set_xlabel("packet size (bytes)")
    ax.set_ylabel("first byte in to last byte out (ns)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    extra = f"\nnot available: {', '.join(missing)} (see fig11.json)" if missing else ""
    ax.set_title(f"Fig. 11: latency at 156.25 MHz{extra}", fontsize=9)
    save_figure(fig, ctx.out, exp.name)
    return []


# The paper's Table 1 counts its maps subsystem with a reference map of 64 rows of 64 B and says the memory of real
# maps is not part of the IP; sephirot_top is synthesised with a map memory holding that map (64 slots of an
# 8-byte header and 64 B of key and value: 4.6 KB, rounded up to a power of two) instead of the 1 MB default.
REF_MAP_BYTES = 8192
TOP_SYNTH_KEY = f"synth:sephirot_top:MAP_BYTES={REF_MAP_BYTES},LW={(REF_MAP_BYTES // 16).bit_length() - 1}"
# our modules -> the rows of the paper's Table 1 they correspond to (sephirot_core minus its stack is the paper's
# "Sephirot" row: lanes, register file, decode, plus our instruction memory)
COMPONENTS: list[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = [
    # (component, our modules added, our modules subtracted, paper rows)
    ("Sephirot core (without stack)", ("sephirot_core",), ("sephirot_stack",), ("Sephirot", "Instr mem")),
    ("Stack", ("sephirot_stack",), (), ("Stack",)),
    ("Packet buffers (PIQ + APS)", ("sephirot_pktbuf",), (), ("PIQ", "APS")),
    ("Helpers and maps (HF + maps)", ("sephirot_helpers", "sephirot_mapmem", "sephirot_mapcfg"), (),
     ("HF subsystem", "Maps subsystem")),
    ("Helper unit with the map FSM (sephirot_helpers)", ("sephirot_helpers",), (),
     ("HF subsystem", "Maps subsystem")),
    ("Whole IP (sephirot_top)", ("sephirot_top",), (), ("Total",)),
]
# Synthesised on their own as well: when the whole IP does not finish in yosys (it did not before the map memory
# and the packet buffer were block RAM), their sum is a lower bound of it (hierarchy is kept: a module's cells do
# not depend on the others); the map memory with the reference map, as in the whole IP's run
PART_SYNTH_KEYS = ("synth:sephirot_core", "synth:sephirot_helpers",
                   f"synth:sephirot_mapmem:BYTES={REF_MAP_BYTES},LW={(REF_MAP_BYTES // 16).bit_length() - 1}",
                   "synth:sephirot_pktbuf")
PART_NAMES = {"sephirot_core": "core", "sephirot_helpers": "helper unit", "sephirot_mapmem": "map memory",
              "sephirot_pktbuf": "packet buffer"}


def points_resources(ctx: Context) -> list[str]:
    return [TOP_SYNTH_KEY, *PART_SYNTH_KEYS]


def parts_lower_bound(modules: dict[str, dict[str, float]]) -> tuple[float, list[str]]:
    """LUTs (incl. LUTRAM) of the whole IP's parts that were synthesised on their own, and their names: a lower
    bound of the whole IP when it has no number of its own."""
    names = [k.split(":")[1] for k in PART_SYNTH_KEYS if k.split(":")[1] in modules]
    return sum(_lut(modules[n]) for n in names), names


def _lut(st: dict[str, float]) -> float:
    return st.get("LUT", 0.0) + st.get("LUTRAM", 0.0)


def component_rows(modules: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """Our synthesis results grouped as the rows of the paper's Table 1, each next to the paper's figures (the
    components whose modules were not synthesised are left out)."""
    rows = []
    for name, plus, minus, paper in COMPONENTS:
        if not all(m in modules for m in plus + minus):
            continue
        st = {k: sum(modules[m].get(k, 0.0) for m in plus) - sum(modules[m].get(k, 0.0) for m in minus)
              for k in ("LUT", "LUTRAM", "FF", "BRAM", "DSP")}
        pv = [PAPER_TABLE1[r] for r in paper]
        rows.append({"component": name, "LUT (incl. LUTRAM)": _lut(st), "LUTRAM": st["LUTRAM"], "FF": st["FF"],
                     "BRAM36": st["BRAM"], "DSP": st["DSP"], "paper rows": " + ".join(paper),
                     "paper LUT": sum(v[0] or 0 for v in pv), "paper FF": sum(v[1] or 0 for v in pv),
                     "paper BRAM36": sum(v[2] or 0 for v in pv)})
    return rows


def report_resources(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    top = _ok(records, TOP_SYNTH_KEY)
    parts = [_ok(records, k) for k in PART_SYNTH_KEYS]
    modules: dict[str, dict[str, float]] = {}
    for r in (*parts, top):  # the whole IP's run wins where both have a module
        if r and "modules" in r:
            modules.update(r["modules"])
    rows = component_rows(modules)
    notes = _reasons(records) + [f"{r['top']}: {r['synth_failed']}" for r in (top, *parts) if r and "synth_failed" in r]
    if top and "modules" in top:
        notes.append(f"sephirot_top synthesised with {top['params']} (the paper's reference map, see "
                     "docs/evaluation.md); yosys synth_xilinx xc7, LUT = LUT1-6 + LUTs used as distributed RAM")
    checks = []
    by_name = {r["component"]: r for r in rows}
    for comp, key, limit, what in (("Whole IP (sephirot_top)", TOP_SYNTH_KEY, TARGET_LUT, "the paper's whole IP"),
                                   ("Sephirot core (without stack)", "synth:sephirot_core",
                                    PAPER_TABLE1["Sephirot"][0], "the paper's Sephirot row")):
        name = f"{comp} LUT < {limit // 1000}K ({what})"
        row, rec = by_name.get(comp), _ok(records, key)
        if row:
            lut = row["LUT (incl. LUTRAM)"]
            checks.append(Check(name, "pass" if lut < limit else "fail",
                                f"{lut:,.0f} LUT, {row['FF']:,.0f} FF, {row['BRAM36']:g} BRAM36", f"< {limit:,}",
                                "yosys synth_xilinx xc7; LUT1-6 + LUTs used as distributed RAM"))
        elif rec and "synth_failed" in rec:
            bound, names = parts_lower_bound(modules) if key == TOP_SYNTH_KEY else (0.0, [])
            left = " and ".join(["map configuration table and top-level glue"] +
                                [v for k, v in PART_NAMES.items() if k not in names])
            if names:
                checks.append(Check(name, "fail", f">= {bound:,.0f} LUT", f"< {limit:,}",
                                    f"{rec['synth_failed']}; lower bound: {' + '.join(names)} synthesised on "
                                    f"their own ({left} not counted)"))
            else:
                checks.append(Check(name, "fail", "-", f"< {limit:,}", rec["synth_failed"]))
        else:
            checks.append(Check(name, "n/a", "-", f"< {limit:,}",
                                str(records.get(key, {}).get("reason", "not measured"))))
    paper_rows = [{"component": c, "LUT": v[0], "FF": v[1], "BRAM": v[2]} for c, v in PAPER_TABLE1.items()]
    per_module = [{"synthesised": r["top"], "module (with its submodules)": m, **st}
                  for r in (top, *parts) if r and "modules" in r for m, st in sorted(r["modules"].items())]
    write_table(ctx, exp.name, exp.title, rows,
                {"paper_table1": paper_rows, "modules": per_module, "not_available": notes}, checks)
    if not rows:
        _note_figure(ctx.out, exp.name, exp.title, notes)
        return checks
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 4.5))
    _bars(ax, [r["component"] for r in rows], {"ours: LUT (incl. LUTRAM)": [r["LUT (incl. LUTRAM)"] for r in rows],
                                               "paper: LUT": [r["paper LUT"] for r in rows],
                                               "ours: FF": [r["FF"] for r in rows],
                                               "paper: FF": [r["paper FF"] for r in rows]}, "cells")
    ax.set_yscale("log")
    ax.set_title("Resources: yosys synth_xilinx (7-series) per component vs paper Table 1")
    save_figure(fig, ctx.out, exp.name)
    return checks


def points_speed(ctx: Context) -> list[str]:
    names = suite_names(ctx)
    sim = ["loop"] + [p for p in ("xdp_drop", "xdp_router_ipv4") if p in _suite()]
    synth = [f"ctime:synthetic-{n}" for n in (SYNTHETIC_SIZES[:2] if ctx.quick else SYNTHETIC_SIZES)]
    return [f"ctime:{p}" for p in names] + synth + [f"simspeed:{p}" for p in sim[: 2 if ctx.quick else 3]]


def report_speed(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = []
    for k in records:
        r = _ok(records, k)
        kind, _, prog = k.partition(":")
        row: dict[str, Any] = {"what": kind, "program": prog}
        if r:
            row.update({x: r.get(x) for x in ("instructions", "rows", "compile_s", "packets", "packets_per_s",
                                              "sim_cycles_per_s")})
        else:
            row["reason"] = records[k].get("reason")
        rows.append(row)
    notes = _reasons(records)
    checks: list[Check] = []
    big = sorted((r for r in rows if r["what"] == "ctime" and (r.get("instructions") or 0) >= 3000),
                 key=lambda r: r["instructions"])
    if big:
        b = big[0]
        checks.append(Check("compile a 3,000+ instruction program in < 5 s", "pass" if b["compile_s"] < 5 else "fail",
                            f"{b['compile_s']:.2f} s for {b['instructions']} instructions", "< 5 s",
                            f"{b['program']} (issue 3)"))
    elif not ctx.quick:
        checks.append(Check("compile a 3,000+ instruction program in < 5 s", "n/a", "-", "< 5 s",
                            "no program of 3,000 instructions measured"))
    sims = [r for r in rows if r["what"] == "simspeed" and r.get("sim_cycles_per_s")]
    if sims:
        best = max(sims, key=lambda r: r["sim_cycles_per_s"])
        checks.append(Check("Verilator model >= 1M simulated cycles/s", "pass" if best["sim_cycles_per_s"] >= 1e6
                            else "fail", f"{best['sim_cycles_per_s']:,.0f} cycles/s", ">= 1,000,000",
                            f"best of {len(sims)} programs ({best['program']}), through hxdp.rtl (issue 4)"))
    write_table(ctx, exp.name, exp.title, rows, {"not_available": notes}, checks)
    ct = [r for r in rows if r["what"] == "ctime" and r.get("compile_s") is not None]
    if not ct:
        _note_figure(ctx.out, exp.name, exp.title, notes)
        return checks
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    suite = [r for r in ct if not r["program"].startswith("synthetic")]
    synth = [r for r in ct if r["program"].startswith("synthetic")]
    ax.scatter([r["instructions"] for r in suite], [r["compile_s"] * 1000 for r in suite], label="xdp_progs/")
    if synth:
        ax.plot([r["instructions"] for r in synth], [r["compile_s"] * 1000 for r in synth], "s--",
                label="generated (unrolled packet loop)")
    for r in suite:
        ax.annotate(r["program"], (r["instructions"], r["compile_s"] * 1000), fontsize=6)
    ax.set_xlabel("eBPF instructions")
    ax.set_ylabel("compile time (ms)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    sims = [r for r in rows if r["what"] == "simspeed" and r.get("sim_cycles_per_s")]
    sim_txt = "\n".join(f"Verilator model, {r['program']}: {r['sim_cycles_per_s'] / 1e6:.2f} M cycles/s, "
                         f"{r['packets_per_s']:,.0f} packets/s" for r in sims) or "Verilator model: not available"
    ax.set_title("Toolchain speed: compile time vs program size\n" + sim_txt, fontsize=8)
    save_figure(fig, ctx.out, exp.name)
    return checks


EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    Experiment("fig7", "eBPF instruction reduction per optimisation", points_fig7, report_fig7),
    Experiment("fig8", "VLIW rows for 1 to 8 lanes", points_fig8, report_fig8),
    Experiment("fig9", "final rows and the contribution of each optimisation", points_fig9, report_fig9),
    Experiment("table3", "instructions, static IPC, dynamic IPC", points_table3, report_table3),
    Experiment("fig12_13", "throughput (Mpps at 156.25 MHz) vs Linux XDP and the paper", points_fig12_13,
               report_fig12_13),
    Experiment("fig11", "latency vs packet size", points_fig11, report_fig11),
    Experiment("fig14", "map access cost vs key size", points_fig14, report_fig14),
    Experiment("fig15", "csum_diff helper calls", points_fig15, report_fig15),
    Experiment("resources", "yosys synth_xilinx resources vs paper Table 1", points_resources, report_resources,
               quick_default=False),
    Experiment("speed", "toolchain speed: compile time, simulated cycles/s", points_speed, report_speed),
)}
