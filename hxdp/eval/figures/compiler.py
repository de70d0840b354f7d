"""The compiler's figures: instruction reduction (Fig. 7), rows per lane count (Fig. 8), gains (Fig. 9), Table 3."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hxdp import params
from hxdp.eval.harness import Check, Context, Experiment, Record, Row, ok
from hxdp.eval.output import bars, note_figure, plt, reasons, save_figure, write_table
from hxdp.eval.paper import OURS_TO_PAPER, PAPER_NAMES, PAPER_NOTES, PAPER_TABLE3
from hxdp.eval.programs import FIG9_STEPS, OPTIMISATIONS, suite_names

LANES = tuple(range(1, 9))
OPT_TITLES = {
    "bounds": "bounds checks",
    "zeroing": "zeroing",
    "ldst6": "6B load/store",
    "alu3": "3-operand ALU",
    "exit_action": "exit with action",
    "code_motion": "code motion",
}
# What Table 3's IPC counts: the original program's instructions, those the compiler removed included, so it can
# exceed the number of lanes.
IPC_MEANING = "eBPF instructions of the original program (those the compiler removed included) per VLIW row"


def points_fig7(ctx: Context) -> list[str]:
    return [f"compile:{p}:{v}" for p in suite_names(ctx) for v in ("none", *(f"only-{o}" for o in OPTIMISATIONS))]


def report_fig7(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = []
    for p in suite_names(ctx):
        base = ok(records, f"compile:{p}:none")
        row: dict[str, Any] = {"program": p}
        if base:
            row["original"] = base["original"]
            row["no_optimisation"] = base["instructions"]
        for o in OPTIMISATIONS:
            r = ok(records, f"compile:{p}:only-{o}")
            row[f"{o}_pct"] = (100.0 * (base["instructions"] - r["instructions"]) / base["original"]
                               if base and r else None)
        rows.append(row)
    notes = reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"paper": {k: v for k, v in PAPER_NOTES.items()
                                                           if k.startswith("fig7")}, "not_available": notes})
    plot_fig7(ctx.out, exp, rows, notes)
    return []


def plot_fig7(out: Path, exp: Experiment, rows: list[Row], notes: list[str]) -> None:
    if not any(r.get("original") for r in rows):
        note_figure(out, exp.name, exp.title, notes)
        return
    fig, ax = plt().subplots(figsize=(10, 4))
    bars(ax, [r["program"] for r in rows], {OPT_TITLES[o]: [r[f"{o}_pct"] for r in rows] for o in OPTIMISATIONS},
         "% of original eBPF instructions removed")
    ax.set_title("Fig. 7: instruction reduction per optimisation (each alone vs. none)")
    save_figure(fig, out, exp.name)


def points_fig8(ctx: Context) -> list[str]:
    return [f"compile:{p}:lanes{n}" for p in suite_names(ctx) for n in LANES]


def report_fig8(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = []
    for p in suite_names(ctx):
        row: dict[str, Any] = {"program": p}
        for n in LANES:
            r = ok(records, f"compile:{p}:lanes{n}")
            row[f"rows_{n}"] = r["rows"] if r else None
        rows.append(row)
    notes = reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"paper": PAPER_NOTES["fig8_fourth_lane_pct"],
                                                 "not_available": notes})
    plot_fig8(ctx.out, exp, rows, notes)
    return []


def plot_fig8(out: Path, exp: Experiment, rows: list[Row], notes: list[str]) -> None:
    if not any(row.get("rows_1") for row in rows):
        note_figure(out, exp.name, exp.title, notes)
        return
    fig, ax = plt().subplots(figsize=(10, 4))
    bars(ax, [r["program"] for r in rows], {f"{n} lane{'s' if n > 1 else ''}": [r[f"rows_{n}"] for r in rows]
                                            for n in LANES}, "VLIW rows")
    ax.set_title("Fig. 8: VLIW rows for 1 to 8 lanes")
    save_figure(fig, out, exp.name)


def points_fig9(ctx: Context) -> list[str]:
    return [f"compile:{p}:{s[0]}" for p in suite_names(ctx) for s in FIG9_STEPS]


def report_fig9(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = []
    for p in suite_names(ctx):
        rs = [ok(records, f"compile:{p}:{s[0]}") for s in FIG9_STEPS]
        row: dict[str, Any] = {"program": p}
        if all(rs):
            orig = rs[0]["original"]  # type: ignore[index]
            rowsv = [r["rows"] for r in rs]  # type: ignore[index]
            row.update({"original": orig, "final_rows": rowsv[-1], "gain_parallelization": orig - rowsv[0]})
            for (sid, _t, _sw), prev, cur in zip(FIG9_STEPS[1:], rowsv[:-1], rowsv[1:], strict=True):
                row[f"gain_{sid}"] = prev - cur
            row["x_smaller"] = orig / rowsv[-1]
        rows.append(row)
    notes = reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"not_available": notes,
                                                 "steps": [(s[0], s[1]) for s in FIG9_STEPS]})
    plot_fig9(ctx.out, exp, rows, notes)
    return []


def plot_fig9(out: Path, exp: Experiment, rows: list[Row], notes: list[str]) -> None:
    good = [r for r in rows if "final_rows" in r]
    if not good:
        note_figure(out, exp.name, exp.title, notes)
        return
    fig, ax = plt().subplots(figsize=(10, 4.5))
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
    ax.set_title(f"Fig. 9: final VLIW rows and what each optimisation saved ({params.LANES} lanes)")
    save_figure(fig, out, exp.name)


def points_table3(ctx: Context) -> list[str]:
    return [f"ipc:{p}" for p in suite_names(ctx)]


def _table3_check(p: str, r: Record | None, paper: tuple[int, float, float], records: dict[str, Record]) -> Check:
    name = f"static IPC {p} > paper {paper[2]:.2f}"
    if not r:
        return Check(name, "n/a", "-", f"> {paper[2]:.2f}", str(records.get(f"ipc:{p}", {}).get("reason", "")))
    slots = f"; {r['static_ipc_slots']:.2f} counting lddw as 2 slots" if r.get("static_ipc_slots") else ""
    return Check(name, "pass" if r["static_ipc"] > paper[2] else "fail", f"{r['static_ipc']:.2f}",
                 f"> {paper[2]:.2f}", f"instructions as llvm-objdump lists them (lddw once) / rows{slots}")


def report_table3(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = []
    checks = []
    for p in suite_names(ctx):
        r = ok(records, f"ipc:{p}")
        paper = PAPER_TABLE3.get(OURS_TO_PAPER.get(p, ""))
        row: dict[str, Any] = {"program": p, "paper_name": OURS_TO_PAPER.get(p)}
        if r:
            row.update({k: r.get(k) for k in ("instructions", "rows", "static_ipc", "slots", "static_ipc_slots",
                                              "dynamic_ipc", "executed_insns", "executed_rows", "packets",
                                              "model_mismatches")})
        row.update({"paper_instructions": paper[0] if paper else None, "paper_x86_ipc": paper[1] if paper else None,
                    "paper_static_ipc": paper[2] if paper else None})
        rows.append(row)
        if paper:
            checks.append(_table3_check(p, r, paper, records))
    missing = [p for p in PAPER_NAMES.values() if p not in suite_names(ctx)]
    if missing and not ctx.quick:
        for p in missing:
            checks.append(Check(f"static IPC {p} > paper", "n/a", "-", "", "program not in xdp_progs/"))
    notes = reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"paper": "Table 3, Sec. 5.2.2", "not_available": notes},
                checks)
    plot_table3(ctx.out, exp, rows, notes)
    return checks


def plot_table3(out: Path, exp: Experiment, rows: list[Row], notes: list[str]) -> None:
    good = [r for r in rows if r.get("static_ipc")]
    if not good:
        note_figure(out, exp.name, exp.title, notes)
        return
    fig, ax = plt().subplots(figsize=(10, 4.5))
    bars(ax, [r["program"] for r in good], {
        "static (ours): per ROM row": [r["static_ipc"] for r in good],
        "dynamic (ours): per executed row": [r["dynamic_ipc"] for r in good],
        "static IPC (paper, Table 3)": [r["paper_static_ipc"] for r in good],
        "x86 IPC (paper, Table 3)": [r["paper_x86_ipc"] for r in good]}, "original eBPF instructions per row")
    ax.axhline(params.LANES, color="0.3", linestyle="--", linewidth=0.8)
    ax.annotate(f"{params.LANES} lanes", (-0.5, params.LANES), fontsize=7, ha="left", va="bottom")
    ax.set_title("Table 3: instructions per VLIW row (IPC)")
    fig.text(0.01, 0.01, f"IPC = {IPC_MEANING}: above {params.LANES}, the compiler removed instructions.",
             fontsize=7)
    save_figure(fig, out, exp.name, rect=(0, 0.04, 1, 1))
