"""Throughput figures: Mpps of the suite (Fig. 12/13), map access by key size (Fig. 14), csum_diff (Fig. 15)."""

from __future__ import annotations

from pathlib import Path

from hxdp.eval.harness import CLOCK_MHZ, Check, Context, Experiment, Record, Row, ok
from hxdp.eval.measure import program_paths
from hxdp.eval.output import bars, note_figure, plt, reasons, save_figure, write_table
from hxdp.eval.paper import LINE_RATE_MPPS, LINE_RATE_PROGRAMS, PAPER_MPPS, PAPER_NOTES, TARGET_CYCLES
from hxdp.eval.programs import CSUM_DIFF, MAP_ACCESS, suite_has, suite_names

NO_EXIT_ACTION = "rtl:xdp_drop:no-exit_action"


LINUX_MODES = ("test_run", "veth_live", "veth_native")


def _paths(name: str) -> list[str]:
    """The program's main path first, then the other actions of its traffic (measure.program_paths)."""
    return program_paths(name)


def _throughput_points(names: list[str]) -> list[str]:
    """Per program: each path's model and RTL run, the mix of the 64-byte traffic, and one Linux baseline."""
    keys = []
    for p in names:
        keys += [f"{k}:{p}:path-{a}" for a in _paths(p) for k in ("model", "rtl")]
        keys += [f"model:{p}", f"rtl:{p}", f"linux:{p}"]
    return keys


def _path_cells(records: dict[str, Record], p: str, path: str, lx: Record | None) -> Row:
    m, r = ok(records, f"model:{p}:path-{path}"), ok(records, f"rtl:{p}:path-{path}")
    cells: Row = {"rtl_cycles": r["rtl_cycles"] if r else None, "rtl_mpps": r["rtl_mpps"] if r else None,
                  "model_cycles": m["model_cycles"] if m else None}
    for mode in LINUX_MODES:
        cells[f"linux_{mode}_mpps"] = (lx.get(f"{mode}_paths") or {}).get(path) if lx else None
    return cells


def throughput_rows(names: list[str], records: dict[str, Record]) -> list[Row]:
    """One row per program, on its main path: RTL and model cycles and Mpps, the Linux baseline (each figure on
    that path, checked), the same for the 64-byte mix of its traffic and, where they differ, its other paths,
    and the paper's figures."""
    rows = []
    for p in names:
        paths = _paths(p)
        main = paths[0]
        r = ok(records, f"rtl:{p}:path-{main}")
        mix_r, mix_m, lx = (ok(records, f"{k}:{p}") for k in ("rtl", "model", "linux"))
        paper = PAPER_MPPS.get(p)
        row: Row = {"program": p, "path": main, **_path_cells(records, p, main, lx)}
        row.update({
            "rtl_method": r["method"] if r else records.get(f"rtl:{p}:path-{main}", {}).get("reason"),
            "rtl_model_mismatches": r["model_mismatches"] if r else None,
            "rtl_off_path": r.get("off_path") if r else None,
            "model_mpps": CLOCK_MHZ / row["model_cycles"] if row["model_cycles"] else None,
            "linux_path_checked": _checked(lx, main),
            "mix_rtl_cycles": mix_r["rtl_cycles"] if mix_r else None,
            "mix_rtl_mpps": mix_r["rtl_mpps"] if mix_r else None,
            "mix_model_cycles": mix_m["model_cycles"] if mix_m else None,
            **{f"mix_linux_{mode}_mpps": lx.get(f"{mode}_mix_mpps") if lx else None for mode in LINUX_MODES},
            "other_paths": {a: _path_cells(records, p, a, lx) for a in paths[1:]
                            if ok(records, f"rtl:{p}:path-{a}") or (lx and a in (lx.get("test_run_paths") or {}))},
            "linux_loadavg": lx.get("loadavg") if lx else None,
            "linux_skipped": lx.get("skipped") if lx else None,
            "paper_hxdp_mpps": paper[0] if paper else None,
            "paper_x86_3.7GHz_mpps": paper[1] if paper else None,
            "paper_source": paper[2] if paper else None,
            "trace": r["trace"] if r else None,
        })
        rows.append(row)
    return rows


def _checked(lx: Record | None, path: str) -> bool | None:
    """True: every Linux mode that measured the path took it on every run; False: one did not; None: not
    measured, or not confirmed (a redirect that does not come back out of the veth)."""
    if not lx:
        return None
    got = [(lx.get(f"{mode}_verified") or {}).get(path) for mode in LINUX_MODES
           if path in (lx.get(f"{mode}_verified") or {})]
    if any(g is False for g in got):
        return False
    return True if got and all(got) else None


def throughput_plot(out: Path, name: str, title: str, rows: list[Row], notes: list[str],
                    labels: list[str] | None = None, log: bool = True) -> None:
    """Mpps bars per program; a log axis where the programs span orders of magnitude."""
    if not any(r.get("rtl_mpps") or r.get("model_mpps") or r.get("linux_test_run_mpps") for r in rows):
        note_figure(out, name, title, notes)
        return
    fig, ax = plt().subplots(figsize=(max(7, 0.5 * len(rows) + 4), 5))
    wrong = [r["program"] for r in rows if r.get("rtl_model_mismatches")]
    series = {
        "Sephirot RTL (ours), main path": [None if r.get("rtl_model_mismatches") else r.get("rtl_mpps") for r in rows],
        "VLIW model (ours, no overlap)": [r.get("model_mpps") for r in rows],
        "Linux native XDP on veth (this machine)": [r.get("linux_veth_native_mpps") for r in rows],
        "Linux XDP test_run (this machine)": [r.get("linux_test_run_mpps") for r in rows],
        "hXDP (paper)": [r.get("paper_hxdp_mpps") for r in rows],
        "x86 @3.7GHz (paper)": [r.get("paper_x86_3.7GHz_mpps") for r in rows],
    }
    series = {k: v for k, v in series.items() if any(x for x in v)}
    bars(ax, labels or [r["program"] for r in rows], series, "Mpps (64 B)",
         {"hXDP (paper)": "//", "x86 @3.7GHz (paper)": "\\\\"})
    if log:
        ax.set_yscale("log")
    if wrong:
        title += f"\nno RTL bar where the RTL's results differ from the model: {', '.join(wrong)}"
        if len(title) > 240:
            title = title[:237] + "..."
    ax.set_title(title, fontsize=9 if wrong else 11, wrap=True)
    save_figure(fig, out, name)


def cycle_checks(rows: list[Row], records: dict[str, Record]) -> list[Check]:
    """The issue-9 targets: RTL cycles per 64-byte packet back to back, with results equal to the model's."""
    checks = []
    for p, (limit, what) in TARGET_CYCLES.items():
        row = next((r for r in rows if r["program"] == p), None)
        name = f"cycles/64B packet {p} <= {limit}"
        if row is None:
            continue
        if row["rtl_cycles"] is not None:
            wrong = row.get("rtl_model_mismatches") or 0
            good = row["rtl_cycles"] <= limit and wrong == 0
            detail = "RTL, back to back" if not wrong else \
                f"RTL results differ from the VLIW model on {wrong} packet(s): a fast wrong answer does not count"
            checks.append(Check(name, "pass" if good else "fail", f"{row['rtl_cycles']:.2f} cycles "
                                f"({row['rtl_mpps']:.1f} Mpps)", f"<= {limit} ({what})", detail))
        else:
            model = f"VLIW model says {row['model_cycles']:.2f} (not the target measure)" if row["model_cycles"] \
                else ""
            reason = str(records.get(f"rtl:{p}", {}).get("reason", "not measured"))
            checks.append(Check(name, "n/a", "-", f"<= {limit}", "; ".join(x for x in (reason, model) if x)))
    return checks


def line_rate_checks(rows: list[Row]) -> list[Check]:
    """Issue 26: one core at 4x10G line rate of 64-byte frames, the main path's RTL cycles per packet back to
    back (the steady-state interval of the RTL's stamps) at most CLOCK_MHZ / LINE_RATE_MPPS (2.625), with results
    equal to the model's."""
    limit = CLOCK_MHZ / LINE_RATE_MPPS
    checks = []
    for p in LINE_RATE_PROGRAMS:
        row = next((r for r in rows if r["program"] == p), None)
        if row is None:
            continue
        name = f"4x10G line rate, 64B {p} ({row['path']}): cycles/packet <= {limit:.3f}"
        if row["rtl_cycles"] is None:
            checks.append(Check(name, "n/a", "-", f"<= {limit:.3f}", str(row.get("rtl_method") or "not measured")))
            continue
        wrong = row.get("rtl_model_mismatches") or 0
        good = row["rtl_cycles"] <= limit and wrong == 0
        detail = f"RTL, back to back, main path ({row.get('rtl_method')})" if not wrong else \
            f"RTL results differ from the VLIW model on {wrong} packet(s)"
        checks.append(Check(name, "pass" if good else "fail", f"{row['rtl_cycles']:.2f} cycles "
                            f"({row['rtl_mpps']:.1f} Mpps)", f"<= {limit:.3f} ({LINE_RATE_MPPS:.2f} Mpps)", detail))
    return checks


def points_fig12_13(ctx: Context) -> list[str]:
    extra = [NO_EXIT_ACTION] if "xdp_drop" in suite_names(ctx) else []
    return _throughput_points(suite_names(ctx)) + extra


def report_fig12_13(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    names = suite_names(ctx)
    rows = throughput_rows(names, records)
    checks = cycle_checks(rows, records) + line_rate_checks(rows)
    noexit = ok(records, NO_EXIT_ACTION)
    if noexit:
        rows.append({"program": "xdp_drop (no exit with action)", "rtl_cycles": noexit["rtl_cycles"],
                     "rtl_mpps": noexit["rtl_mpps"], "rtl_method": noexit["method"],
                     "rtl_model_mismatches": noexit["model_mismatches"],
                     "paper_hxdp_mpps": PAPER_NOTES["xdp_drop_no_early_exit_mpps"][0],
                     "paper_source": PAPER_NOTES["xdp_drop_no_early_exit_mpps"][1]})
    missing = [p for p in TARGET_CYCLES if p not in names and not ctx.quick]
    checks += [Check(f"cycles/64B packet {p} <= {TARGET_CYCLES[p][0]}", "n/a", "-", f"<= {TARGET_CYCLES[p][0]}",
                     "program not in xdp_progs/") for p in missing]
    notes = reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"paper": {k: v for k, v in PAPER_NOTES.items()
                                                           if "mpps" in k}, "not_available": notes}, checks)
    plot_fig12_13(ctx.out, exp, rows, notes)
    return checks


def plot_fig12_13(out: Path, exp: Experiment, rows: list[Row], notes: list[str]) -> None:
    # a log axis: the suite spans from about 1 to over 100 Mpps
    throughput_plot(out, exp.name, f"Fig. 12/13: throughput on each program's main path at {CLOCK_MHZ} MHz vs "
                    "Linux XDP", rows, notes)


def _family_points(ctx: Context, family: tuple[str, ...]) -> list[str]:
    """Throughput points of a microbenchmark family (the first two in quick mode)."""
    names = [n for n in family if suite_has(n)]
    return _throughput_points(names[:2] if ctx.quick else names)


def points_fig14(ctx: Context) -> list[str]:
    return _family_points(ctx, MAP_ACCESS)


def report_fig14(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    names = [n for n in MAP_ACCESS if any(k.endswith(":" + n) for k in records)]
    rows = throughput_rows(names, records)
    for r in rows:
        r["key_bytes"] = int(r["program"].rsplit("k", 1)[1])
    notes = reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"paper": PAPER_NOTES["fig14_map_access"],
                                                 "not_available": notes})
    plot_fig14(ctx.out, exp, rows, notes)
    return [_flat_check(rows, notes)]


def _flat_check(rows: list[Row], notes: list[str]) -> Check:
    """Fig. 14's claim: the RTL's cycles do not depend on the key size."""
    name, limit = "map access cost independent of key size 1-16 B", "spread <= 0.5 cycle"
    cyc = [r["rtl_cycles"] for r in rows if r["rtl_cycles"] is not None]
    if len(cyc) == len(rows) and len(rows) >= 2:
        flat = max(cyc) - min(cyc) <= 0.5
        wrong = sum(r.get("rtl_model_mismatches") or 0 for r in rows)
        detail = "RTL (paper Fig. 14)" if not wrong else f"RTL results differ from the VLIW model on {wrong} packet(s)"
        return Check(name, "pass" if flat and not wrong else "fail", f"{min(cyc):.1f}-{max(cyc):.1f} cycles", limit,
                     detail)
    return Check(name, "n/a", "-", limit, notes[0] if notes else "")


def plot_fig14(out: Path, exp: Experiment, rows: list[Row], notes: list[str]) -> None:
    throughput_plot(out, exp.name, "Fig. 14: map access vs key size", rows, notes,
                    [f"{r['key_bytes']} B key" for r in rows], log=False)


def points_fig15(ctx: Context) -> list[str]:
    return _family_points(ctx, CSUM_DIFF)


def report_fig15(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    names = [n for n in CSUM_DIFF if any(k.endswith(":" + n) for k in records)]
    rows = throughput_rows(names, records)
    for r in rows:
        r["calls"] = int(r["program"].rsplit("x", 1)[1])
    notes = reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"not_available": notes})
    plot_fig15(ctx.out, exp, rows, notes)
    return []


def plot_fig15(out: Path, exp: Experiment, rows: list[Row], notes: list[str]) -> None:
    labels = [f"{r['calls']} call{'s' if r['calls'] > 1 else ''}" for r in rows]
    throughput_plot(out, exp.name, "Fig. 15: throughput vs csum_diff helper calls", rows, notes, labels, log=False)
