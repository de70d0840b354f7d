"""Resources: yosys synthesis of the whole IP and its parts, grouped as the rows of the paper's Table 1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hxdp.eval.harness import Check, Context, Experiment, Record, Row, ok
from hxdp.eval.output import bars, note_figure, plt, reasons, save_figure, write_table
from hxdp.eval.paper import PAPER_TABLE1, TARGET_LUT

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
CORE = "Sephirot core (without stack)"
WHOLE = "Whole IP (sephirot_top)"
LUT_MEANING = "LUT1-6 + LUTs used as distributed RAM"


def points_resources(ctx: Context) -> list[str]:
    return [TOP_SYNTH_KEY, *PART_SYNTH_KEYS]


def lut(st: dict[str, float]) -> float:
    return st.get("LUT", 0.0) + st.get("LUTRAM", 0.0)


def parts_lower_bound(modules: dict[str, dict[str, float]]) -> tuple[float, list[str]]:
    """LUTs (incl. LUTRAM) of the whole IP's parts that were synthesised on their own, and their names: a lower
    bound of the whole IP when it has no number of its own."""
    names = [k.split(":")[1] for k in PART_SYNTH_KEYS if k.split(":")[1] in modules]
    return sum(lut(modules[n]) for n in names), names


def component_rows(modules: dict[str, dict[str, float]]) -> list[Row]:
    """Our synthesis results grouped as the rows of the paper's Table 1, each next to the paper's figures (the
    components whose modules were not synthesised are left out)."""
    rows = []
    for name, plus, minus, paper in COMPONENTS:
        if not all(m in modules for m in plus + minus):
            continue
        st = {k: sum(modules[m].get(k, 0.0) for m in plus) - sum(modules[m].get(k, 0.0) for m in minus)
              for k in ("LUT", "LUTRAM", "FF", "BRAM", "DSP")}
        pv = [PAPER_TABLE1[r] for r in paper]
        rows.append({"component": name, "LUT (incl. LUTRAM)": lut(st), "LUTRAM": st["LUTRAM"], "FF": st["FF"],
                     "BRAM36": st["BRAM"], "DSP": st["DSP"], "paper rows": " + ".join(paper),
                     "paper LUT": sum(v[0] or 0 for v in pv), "paper FF": sum(v[1] or 0 for v in pv),
                     "paper BRAM36": sum(v[2] or 0 for v in pv)})
    return rows


def _lut_check(comp: str, key: str, limit: int, what: str, row: Row | None, records: dict[str, Record],
               modules: dict[str, dict[str, float]]) -> Check:
    """The component under `limit` LUT; when its synthesis failed, the sum of the whole IP's parts as a bound."""
    name = f"{comp} LUT < {limit // 1000}K ({what})"
    rec = ok(records, key)
    if row:
        n = row["LUT (incl. LUTRAM)"]
        return Check(name, "pass" if n < limit else "fail",
                     f"{n:,.0f} LUT, {row['FF']:,.0f} FF, {row['BRAM36']:g} BRAM36", f"< {limit:,}",
                     f"yosys synth_xilinx xc7; {LUT_MEANING}")
    if rec and "synth_failed" in rec:
        bound, names = parts_lower_bound(modules) if key == TOP_SYNTH_KEY else (0.0, [])
        left = " and ".join(["map configuration table and top-level glue"] +
                            [v for k, v in PART_NAMES.items() if k not in names])
        if names:
            return Check(name, "fail", f">= {bound:,.0f} LUT", f"< {limit:,}",
                         f"{rec['synth_failed']}; lower bound: {' + '.join(names)} synthesised on "
                         f"their own ({left} not counted)")
        return Check(name, "fail", "-", f"< {limit:,}", rec["synth_failed"])
    return Check(name, "n/a", "-", f"< {limit:,}", str(records.get(key, {}).get("reason", "not measured")))


def timing_rows(runs: list[Record | None]) -> list[Row]:
    """Per synthesis run with a timing estimate (hxdp.eval.timing), per instance of its top: the longest path."""
    return [{"synthesised": r["top"], **path} for r in runs if r and r.get("timing")
            for path in [*r["timing"]["groups"].values(), *r["timing"].get("detail", {}).values()]]


def _path_value(p: dict[str, Any]) -> str:
    other = ", ".join(f"{n} {k}" for k, n in sorted(p["cells"].items()) if k not in ("LUT", "$alias"))
    return (f"{p['levels']} LUT levels{' + ' + other if other else ''}: ~{p['delay_ns']:.2f} ns "
            f"of {p['budget_ns']:g} ns")


def timing_checks(run: Record | None) -> list[Check]:
    """Issue 26: every register-to-register path of the synthesised IP fits the clock, like a cycle target: per
    instance of the top, its longest path's estimate against its budget (a clock period, half of one between a
    rising and a falling edge); a path over it is a miss."""
    if not run or not run.get("timing"):
        why = (run or {}).get("synth_failed") or "no timing estimate (synthesis not run)"
        return [Check("timing: the longest path fits the clock", "n/a", "-", "", str(why))]
    t = run["timing"]
    checks = []
    for g, p in t["groups"].items():
        name = f"timing {run['top']}/{g}: longest path <= {p['budget_ns']:g} ns ({p['levels_that_fit']} LUT levels)"
        checks.append(Check(name, "pass" if p["fits"] else "fail", _path_value(p),
                            f"<= {p['budget_ns']:g} ns ({p['levels_that_fit']} LUT levels)",
                            f"{p['start']} ({p.get('start_pin', '')}) -> {p['end']} ({p.get('end_pin', '')}); "
                            "estimate after synth_xilinx (docs/evaluation.md)"))
    return checks


def parts_only_timing(top: Record | None, parts: list[Record | None]) -> bool:
    """The whole IP has no timing estimate (its synthesis failed) but some of its parts have one."""
    return not (top and top.get("timing")) and any(r and r.get("timing") for r in parts)


def report_resources(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    top = ok(records, TOP_SYNTH_KEY)
    parts = [ok(records, k) for k in PART_SYNTH_KEYS]
    modules: dict[str, dict[str, float]] = {}
    for r in (*parts, top):  # the whole IP's run wins where both have a module
        if r and "modules" in r:
            modules.update(r["modules"])
    rows = component_rows(modules)
    notes = reasons(records) + [f"{r['top']}: {r['synth_failed']}" for r in (top, *parts) if r and "synth_failed" in r]
    if top and "modules" in top:
        notes.append(f"sephirot_top synthesised with {top['params']} (the paper's reference map, see "
                     f"docs/evaluation.md); yosys synth_xilinx xc7, LUT = {LUT_MEANING}")
    by_name = {r["component"]: r for r in rows}
    checks = [_lut_check(comp, key, limit, what, by_name.get(comp), records, modules)
              for comp, key, limit, what in ((WHOLE, TOP_SYNTH_KEY, TARGET_LUT, "the paper's whole IP"),
                                             (CORE, "synth:sephirot_core", PAPER_TABLE1["Sephirot"][0],
                                              "the paper's Sephirot row"))]
    checks += timing_checks(top) if not parts_only_timing(top, parts) else \
        [c for r in parts if r and r.get("timing") for c in timing_checks(r)]
    paper_rows = [{"component": c, "LUT": v[0], "FF": v[1], "BRAM": v[2]} for c, v in PAPER_TABLE1.items()]
    per_module: list[dict[str, Any]] = [{"synthesised": r["top"], "module (with its submodules)": m, **st}
                                        for r in (top, *parts) if r and "modules" in r
                                        for m, st in sorted(r["modules"].items())]
    write_table(ctx, exp.name, exp.title, rows,
                {"paper_table1": paper_rows, "modules": per_module, "timing": timing_rows([top, *parts]),
                 "not_available": notes}, checks)
    plot_resources(ctx.out, exp, rows, notes)
    return checks


def plot_resources(out: Path, exp: Experiment, rows: list[Row], notes: list[str]) -> None:
    if not rows:
        note_figure(out, exp.name, exp.title, notes)
        return
    fig, ax = plt().subplots(figsize=(10, 4.5))
    bars(ax, [r["component"] for r in rows], {"ours: LUT (incl. LUTRAM)": [r["LUT (incl. LUTRAM)"] for r in rows],
                                              "paper: LUT": [r["paper LUT"] for r in rows],
                                              "ours: FF": [r["FF"] for r in rows],
                                              "paper: FF": [r["paper FF"] for r in rows]}, "cells")
    ax.set_yscale("log")
    ax.set_title("Resources: yosys synth_xilinx (7-series) per component vs paper Table 1")
    save_figure(fig, out, exp.name)
