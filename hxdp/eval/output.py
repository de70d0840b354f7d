"""The evaluation's files: NAME.csv and NAME.json, markdown tables, results.md, and the plot helpers."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import platform
import time
from collections.abc import Iterable
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from hxdp.atomic_write import write_atomic
from hxdp.eval.harness import CLOCK_MHZ, Check, Context, Experiment, Record, Row

# the columns of results.md per experiment (the CSV has them all)
MD_COLUMNS: dict[str, tuple[str, ...]] = {
    "fig12_13": ("program", "path", "rtl_cycles", "rtl_mpps", "rtl_model_mismatches", "model_cycles",
                 "linux_veth_native_mpps", "linux_test_run_mpps", "linux_path_checked", "mix_rtl_cycles",
                 "mix_rtl_mpps", "mix_linux_veth_native_mpps", "paper_hxdp_mpps", "paper_x86_3.7GHz_mpps"),
    "fig14": ("key_bytes", "path", "rtl_cycles", "rtl_mpps", "rtl_model_mismatches", "model_cycles",
              "linux_veth_native_mpps", "linux_test_run_mpps", "linux_path_checked", "mix_rtl_cycles"),
    "fig15": ("calls", "path", "rtl_cycles", "rtl_mpps", "rtl_model_mismatches", "model_cycles",
              "linux_veth_native_mpps", "linux_test_run_mpps", "linux_path_checked", "mix_rtl_cycles"),
    "table3": ("program", "paper_name", "instructions", "rows", "static_ipc", "static_ipc_slots",
               "paper_static_ipc", "dynamic_ipc", "paper_x86_ipc", "model_mismatches"),
    "speed": ("what", "program", "instructions", "rows", "compile_s", "packets_per_s", "sim_cycles_per_s"),
}


def json_default(obj: Any) -> Any:
    if isinstance(obj, bytes):
        return obj.hex()
    if isinstance(obj, Path):
        return str(obj)
    if is_dataclass(obj):
        return {f.name: getattr(obj, f.name) for f in fields(obj)}
    if isinstance(obj, set | frozenset | tuple):
        return sorted(obj) if isinstance(obj, set | frozenset) else list(obj)
    return repr(obj)


def dump_json(doc: Any) -> str:
    return json.dumps(doc, indent=2, default=json_default) + "\n"


def environment() -> dict[str, Any]:
    return {"python": platform.python_version(), "kernel": platform.release(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def write_table(ctx: Context, name: str, title: str, rows: list[Row],
                extra: dict[str, Any] | None = None, checks: list[Check] | None = None) -> None:
    """out/NAME.csv (one line per row, columns in first-seen order) and out/NAME.json (rows, checks, paper)."""
    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _csv_cell(r.get(k)) for k in cols})
    write_atomic(ctx.out / f"{name}.csv", buf.getvalue())
    doc = {"experiment": name, "title": title, "quick": ctx.quick, "generated": environment()["date"],
           "clock_mhz": CLOCK_MHZ, "rows": rows, "checks": [c.__dict__ for c in (checks or [])]}
    if extra:
        doc.update(extra)
    write_atomic(ctx.out / f"{name}.json", dump_json(doc))


def _csv_cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else ""
    if isinstance(v, dict | list):
        return json.dumps(v, default=json_default)
    return v


def reasons(records: dict[str, Record]) -> list[str]:
    """Why points have no result, one line per distinct reason."""
    seen: list[str] = []
    for k, r in records.items():
        if r.get("status") != "ok":
            msg = f"{k}: {r.get('reason', r.get('status'))}"
            reason = str(r.get("reason", ""))
            if not any(reason and reason in s for s in seen):
                seen.append(msg)
    return seen


# ----------------------------------------------------------------------------------------------------------------
# markdown
# ----------------------------------------------------------------------------------------------------------------


def md_cell(v: Any) -> str:
    if v is None or v == "":
        return "-"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"
    if isinstance(v, dict | list):
        return json.dumps(v, default=json_default)[:60]
    return str(v).replace("|", "/")


def markdown_table(rows: list[Row], cols: Iterable[str] | None = None) -> str:
    if not rows:
        return "(no rows)\n"
    cs = list(cols) if cols else list(dict.fromkeys(k for r in rows for k in r))
    cs = [c for c in cs if any(c in r for r in rows)]
    lines = ["| " + " | ".join(cs) + " |", "|" + "---|" * len(cs)]
    lines += ["| " + " | ".join(md_cell(r.get(c)) for c in cs) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def write_markdown(out: Path, found: list[tuple[Experiment, dict[str, Any]]], quick: bool) -> None:
    """out/results.md: the targets, then per experiment its plot and table (relative links)."""
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


# ----------------------------------------------------------------------------------------------------------------
# plots
# ----------------------------------------------------------------------------------------------------------------


def plt() -> Any:
    """matplotlib.pyplot without a display."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot


def save_figure(fig: Any, out: Path, name: str, rect: tuple[float, float, float, float] | None = None) -> None:
    """out/NAME.png and out/NAME.pdf, laid out within `rect` of the figure (all of it by default)."""
    fig.tight_layout(rect=rect)
    fig.savefig(out / f"{name}.png", dpi=110, metadata={"Software": None})
    fig.savefig(out / f"{name}.pdf", metadata={"CreationDate": None, "Producer": None, "Creator": None})
    plt().close(fig)


def note_figure(out: Path, name: str, title: str, lines: list[str]) -> None:
    """A figure that says why it has no data (so docs never show a stale plot as current)."""
    fig, ax = plt().subplots(figsize=(8, 2.5))
    ax.axis("off")
    ax.set_title(title)
    ax.text(0.01, 0.9, "\n".join(["not available:"] + [f"  {x}" for x in lines[:8]]), va="top", family="monospace",
            fontsize=8, transform=ax.transAxes)
    save_figure(fig, out, name)


def bars(ax: Any, labels: list[str], series: dict[str, list[float | None]], ylabel: str,
         hatches: dict[str, str] | None = None) -> None:
    """Grouped bars, one group per label and one bar per series (a missing value is an empty slot)."""
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
