"""Latency (Fig. 11): first byte in to last byte out of the RTL, one packet at a time, against packet size."""

from __future__ import annotations

from pathlib import Path

from hxdp.eval.harness import CLOCK_MHZ, Check, Context, Experiment, Record, Row, ok
from hxdp.eval.output import note_figure, plt, reasons, save_figure, write_table
from hxdp.eval.paper import PAPER_NOTES
from hxdp.eval.programs import suite_has

LATENCY_PROGRAMS = ("simple_firewall", "xdp_tx")  # the paper's Fig. 11 program, and the shortest forwarding path
LATENCY_SIZES = (64, 128, 256, 512, 1024, 1500)
QUICK_LATENCY_SIZES = (64, 1500)


def points_fig11(ctx: Context) -> list[str]:
    progs = [p for p in LATENCY_PROGRAMS if suite_has(p)]
    if ctx.quick:
        progs = progs[-1:]
    return [f"latency:{p}:{s}" for p in progs for s in (QUICK_LATENCY_SIZES if ctx.quick else LATENCY_SIZES)]


def report_fig11(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = []
    for k in records:
        r = ok(records, k)
        _, prog, size = k.split(":")
        rows.append({"program": prog, "size": int(size), "latency_cycles": r["latency_cycles"] if r else None,
                     "latency_ns": r["latency_ns"] if r else None,
                     "core_start_cycle": r.get("core_start_cycle") if r else None,
                     "core_cycles": r.get("core_cycles") if r else None,
                     "action": r.get("action") if r else None,
                     "wire_time_ns_10G": (int(size) + 20) * 0.8})
    notes = reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"paper": PAPER_NOTES["fig11_latency"], "not_available": notes})
    plot_fig11(ctx.out, exp, rows, notes)
    return []


def plot_fig11(out: Path, exp: Experiment, rows: list[Row], notes: list[str]) -> None:
    good = [r for r in rows if r["latency_ns"] is not None]
    if not good:
        note_figure(out, exp.name, exp.title, notes)
        return
    fig, ax = plt().subplots(figsize=(7, 4))
    for prog in dict.fromkeys(r["program"] for r in good):
        pts = [r for r in good if r["program"] == prog]
        ax.plot([r["size"] for r in pts], [r["latency_ns"] for r in pts], "o-", label=f"{prog} (Sephirot RTL)")
    missing = sorted({r["program"] for r in rows} - {r["program"] for r in good})
    ax.set_xlabel("packet size (bytes)")
    ax.set_ylabel("first byte in to last byte out (ns)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    extra = f"\nnot available: {', '.join(missing)} (see fig11.json)" if missing else ""
    ax.set_title(f"Fig. 11: latency at {CLOCK_MHZ} MHz{extra}", fontsize=9)
    save_figure(fig, out, exp.name)
