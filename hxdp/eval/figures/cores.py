"""Several cores: Mpps against 1, 2, 4 and 8 cores on each program's main path (the multi-core VLIW model), vs Linux."""

from __future__ import annotations

import math
from pathlib import Path

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.eval.harness import CLOCK_MHZ, Check, Context, Experiment, NotAvailable, Record, Row, ok
from hxdp.eval.measure import map_state, path_frames, program_paths
from hxdp.eval.output import note_figure, plt, reasons, save_figure, write_table
from hxdp.eval.paper import LINE_RATE_MPPS
from hxdp.eval.programs import compile_variant, suite_names

CORE_COUNTS = (1, 2, 4, 8)
QUICK_CORE_COUNTS = (1, 4)
# the forwarding programs, each to be at least as fast as Linux native XDP at some core count
FORWARDING = ("xdp_tx", "xdp_redirect", "xdp_redirect_map", "simple_firewall", "xdp2", "xdp_rxq_info",
              "xdp_router_ipv4", "xdp_tx_iptunnel", "l4_load_balancer")
# issue 26: 4x10G line rate of 64-byte frames across the cores
LINE_RATE_PROGRAMS = ("xdp_drop", "xdp_tx", "xdp_redirect", "xdp_redirect_map", "simple_firewall")
LABEL = "VLIW model (ours; the RTL's cores follow its cycles: sephirot/README.md, Several cores)"


def points_cores(ctx: Context) -> list[str]:
    counts = QUICK_CORE_COUNTS if ctx.quick else CORE_COUNTS
    keys = []
    for p in suite_names(ctx):
        keys += [f"cores:{p}:{n}" for n in counts] + [f"linux:{p}"]
    return keys


def m_cores(ctx: Context, key: str) -> Record:
    """cores:NAME:N: the multi-core VLIW model (docs/execution_contract.md section 8) on the program's main path,
    64-byte frames back to back: the steady-state cycles per packet, and whether every frame's action and bytes equal
    one VLIW core's."""
    from hxdp.models.multicore import MulticoreModel
    from hxdp.models.vliw import VliwModel

    _, name, n = key.split(":")
    cores = int(n)
    path = program_paths(name)[0]
    packets, what = path_frames(ctx, name, path)
    cr = compile_variant(ctx, name)
    try:
        model = MulticoreModel(cr.rom, map_state(ctx, name, cr.layout), cores)
    except HxdpError as exc:
        raise NotAvailable(f"{name} on {cores} cores: {exc}") from None
    run = model.run(packets)
    one = VliwModel(cr.rom, map_state(ctx, name, cr.layout))
    ref = [one.run(p) for p in packets]
    wrong = sum((a.action, a.packet) != (f.result.action, f.result.packet) for a, f in zip(ref, run.frames,
                                                                                         strict=True))
    cpp = run.cycles_per_packet
    return {"program": name, "path": path, "cores": cores, "model_cycles": cpp,
            "model_mpps": CLOCK_MHZ / cpp if cpp else None, "packets": len(packets), "trace": what,
            "grant_wait_cycles_mean": sum(f.waits for f in run.frames) / len(packets),
            "reorder_peak": run.reorder_peak, "results_unlike_one_core": wrong}


def cores_rows(ctx: Context, records: dict[str, Record]) -> list[Row]:
    counts = QUICK_CORE_COUNTS if ctx.quick else CORE_COUNTS
    rows = []
    for p in suite_names(ctx):
        lx = ok(records, f"linux:{p}")
        row: Row = {"program": p, "path": None}
        for n in counts:
            r = ok(records, f"cores:{p}:{n}")
            row["path"] = row["path"] or (r["path"] if r else None)
            row[f"cycles_{n}"] = r["model_cycles"] if r else None
            row[f"mpps_{n}"] = r["model_mpps"] if r else None
            row[f"unlike_one_core_{n}"] = r["results_unlike_one_core"] if r else None
            row[f"grant_wait_{n}"] = r["grant_wait_cycles_mean"] if r else None
            row[f"reorder_peak_{n}"] = r["reorder_peak"] if r else None
        row["linux_veth_native_mpps"] = lx.get("veth_native_mpps") if lx else None
        row["linux_test_run_mpps"] = lx.get("test_run_mpps") if lx else None
        rows.append(row)
    return rows


def _linux(row: Row) -> tuple[float | None, str]:
    """The Linux figure of the row's main path: native XDP on veth, else test_run (None: not measured)."""
    for key, what in (("linux_veth_native_mpps", "Linux native XDP on veth"), ("linux_test_run_mpps",
                                                                                "Linux XDP test_run")):
        v = row.get(key)
        if isinstance(v, int | float) and math.isfinite(v) and v > 0:
            return v, what
    return None, "Linux"


def cores_checks(rows: list[Row], counts: tuple[int, ...]) -> list[Check]:
    """Issue 26's targets on the model's figures: 4x10G line rate at some core count for the line-rate programs, and
    each forwarding program at least as fast as Linux at some core count."""
    checks = []
    limit = CLOCK_MHZ / LINE_RATE_MPPS
    by = {r["program"]: r for r in rows}
    for p in LINE_RATE_PROGRAMS:
        if p not in by:
            continue
        got = [(by[p][f"cycles_{n}"], n) for n in counts if by[p][f"cycles_{n}"] is not None]
        name = f"4x10G line rate, 64B {p} on N cores: cycles/packet <= {limit:.3f}"
        if not got:
            checks.append(Check(name, "n/a", "-", f"<= {limit:.3f}", "not measured"))
            continue
        best, n = min(got)
        checks.append(Check(name, "pass" if best <= limit else "fail", f"{best:.2f} cycles on {n} core(s)",
                            f"<= {limit:.3f}", LABEL))
    for p in FORWARDING:
        if p not in by:
            continue
        lx, what = _linux(by[p])
        got = [(by[p][f"mpps_{n}"], n) for n in counts if by[p][f"mpps_{n}"]]
        name = f"{p} at least as fast as Linux at some core count"
        if not got or not lx:
            checks.append(Check(name, "n/a", "-", "Linux", "not measured" if not got else "no Linux figure"))
            continue
        fast = [(n, m) for m, n in got if m >= lx]
        value = f"{fast[0][1]:.1f} Mpps on {fast[0][0]} core(s)" if fast else f"{max(got)[0]:.1f} Mpps at best"
        checks.append(Check(name, "pass" if fast else "fail", value, f">= {lx:.2f} Mpps ({what})", LABEL))
    return checks


def report_cores(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    rows = cores_rows(ctx, records)
    notes = reasons(records)
    counts = QUICK_CORE_COUNTS if ctx.quick else CORE_COUNTS
    checks = cores_checks(rows, counts)
    write_table(ctx, exp.name, exp.title, rows, {"engine": LABEL, "cores": list(counts), "not_available": notes},
                checks)
    plot_cores(ctx.out, exp, rows, notes)
    return checks


def plot_cores(out: Path, exp: Experiment, rows: list[Row], notes: list[str]) -> None:
    """One small panel per program: the model's Mpps against cores, Linux as a dashed line."""
    good = [r for r in rows if any(r.get(f"mpps_{n}") for n in CORE_COUNTS)]
    if not good:
        note_figure(out, exp.name, exp.title, notes)
        return
    from matplotlib import ticker

    cols = 6
    nrows = math.ceil(len(good) / cols)
    fig, axes = plt().subplots(nrows, cols, figsize=(3 * cols, 2.4 * nrows + 0.8), squeeze=False)
    for ax, r in zip(axes.flat, good, strict=False):
        pts = [(n, r[f"mpps_{n}"]) for n in CORE_COUNTS if r.get(f"mpps_{n}")]
        ax.plot([n for n, _ in pts], [m for _, m in pts], "o-", label="model")
        lx, what = _linux(r)
        if lx:
            ax.axhline(lx, linestyle="--", color="tab:red", label=what)
        ax.axhline(CLOCK_MHZ / math.ceil(64 / params.INPUT_BYTES_PER_CYCLE), linestyle=":", color="grey",
                   label="input bus, 64 B frames")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")  # from under 1 Mpps to the input bus's 78
        ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xticks(list(CORE_COUNTS), [str(n) for n in CORE_COUNTS])
        ax.set_title(f"{r['program']} ({r['path']})", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(good):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8)
    fig.suptitle(f"Mpps (64 B, main path) against cores at {CLOCK_MHZ} MHz: {LABEL}", fontsize=10)
    save_figure(fig, out, exp.name, rect=(0, 0.04, 1, 0.97))
