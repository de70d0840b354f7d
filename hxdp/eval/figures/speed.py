"""Toolchain speed: compile time against program size, and the simulated cycles/s of the Verilator model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hxdp.eval.harness import Check, Context, Experiment, Record, Row, ok
from hxdp.eval.output import note_figure, plt, reasons, save_figure, write_table
from hxdp.eval.programs import SYNTHETIC_SIZES, suite_has, suite_names

COMPILE_TARGET = "compile a 3,000+ instruction program in < 5 s"
SIM_TARGET = "Verilator model >= 1M simulated cycles/s"
SIM_TARGET_CPS = 1e6  # issue 4


def points_speed(ctx: Context) -> list[str]:
    names = suite_names(ctx)
    sim = ["loop"] + [p for p in ("xdp_drop", "xdp_router_ipv4") if suite_has(p)]
    synth = [f"ctime:synthetic-{n}" for n in (SYNTHETIC_SIZES[:2] if ctx.quick else SYNTHETIC_SIZES)]
    return [f"ctime:{p}" for p in names] + synth + [f"simspeed:{p}" for p in sim[: 2 if ctx.quick else 3]]


def _speed_checks(ctx: Context, rows: list[Row]) -> list[Check]:
    """Issue 3 (compile time of a large program) and issue 4 (simulated cycles/s)."""
    checks: list[Check] = []
    big = sorted((r for r in rows if r["what"] == "ctime" and (r.get("instructions") or 0) >= 3000),
                 key=lambda r: r["instructions"])
    if big:
        b = big[0]
        checks.append(Check(COMPILE_TARGET, "pass" if b["compile_s"] < 5 else "fail",
                            f"{b['compile_s']:.2f} s for {b['instructions']} instructions", "< 5 s",
                            f"{b['program']} (issue 3)"))
    elif not ctx.quick:
        checks.append(Check(COMPILE_TARGET, "n/a", "-", "< 5 s", "no program of 3,000 instructions measured"))
    sims = [r for r in rows if r["what"] == "simspeed" and r.get("sim_cycles_per_s")]
    if sims:
        best = max(sims, key=lambda r: r["sim_cycles_per_s"])
        checks.append(Check(SIM_TARGET, "pass" if best["sim_cycles_per_s"] >= SIM_TARGET_CPS else "fail",
                            f"{best['sim_cycles_per_s']:,.0f} cycles/s", ">= 1,000,000",
                            f"best of {len(sims)} programs ({best['program']}), through hxdp.rtl (issue 4)"))
    return checks


def report_speed(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = []
    for k in records:
        r = ok(records, k)
        kind, _, prog = k.partition(":")
        row: dict[str, Any] = {"what": kind, "program": prog}
        if r:
            row.update({x: r.get(x) for x in ("instructions", "rows", "compile_s", "packets", "packets_per_s",
                                              "sim_cycles_per_s")})
        else:
            row["reason"] = records[k].get("reason")
        rows.append(row)
    notes = reasons(records)
    checks = _speed_checks(ctx, rows)
    write_table(ctx, exp.name, exp.title, rows, {"not_available": notes}, checks)
    plot_speed(ctx.out, exp, rows, notes)
    return checks


def plot_speed(out: Path, exp: Experiment, rows: list[Row], notes: list[str]) -> None:
    """Compile time against size; the simulator's speed is a number, given in the table and the docs."""
    ct = [r for r in rows if r["what"] == "ctime" and r.get("compile_s") is not None]
    if not ct:
        note_figure(out, exp.name, exp.title, notes)
        return
    fig, ax = plt().subplots(figsize=(7, 4))
    suite = [r for r in ct if not r["program"].startswith("synthetic")]
    synth = [r for r in ct if r["program"].startswith("synthetic")]
    ax.scatter([r["instructions"] for r in suite], [r["compile_s"] * 1000 for r in suite], label="xdp_progs/")
    if synth:
        ax.plot([r["instructions"] for r in synth], [r["compile_s"] * 1000 for r in synth], "s--",
                label="generated (unrolled packet loop)")
    # the suite's small programs crowd together: name only the ends of the range
    ends = sorted(suite, key=lambda r: r["instructions"])
    for r in ends[:1] + ends[-1:]:
        ax.annotate(r["program"], (r["instructions"], r["compile_s"] * 1000), fontsize=7,
                    xytext=(4, -8), textcoords="offset points")
    ax.set_xlabel("eBPF instructions")
    ax.set_ylabel("compile time (ms)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax.set_title("Compile time vs program size")
    save_figure(fig, out, exp.name)
