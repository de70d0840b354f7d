"""Several cores: Mpps against 1, 2, 4 and 8 cores on each program's main path (RTL and model), against Linux."""

from __future__ import annotations

import math
from pathlib import Path

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.eval.figures.resources import TOP_SYNTH_KEY, lut
from hxdp.eval.harness import CLOCK_MHZ, Check, Context, Experiment, NotAvailable, Record, Row, ok
from hxdp.eval.measure import map_state, path_frames, program_paths
from hxdp.eval.output import note_figure, plt, reasons, save_figure, write_table
from hxdp.eval.paper import LINE_RATE_MPPS, PAPER_TABLE1, PAPER_WITH_REFERENCE_NIC, VIRTEX7_690T
from hxdp.eval.programs import compile_variant, suite_names

# the 1, 2, 4 and 8, and 7: the most cores that fit the NetFPGA-SUME's 690T beside the NIC by the last
# synthesis (docs/eval/cores.json "cores_that_fit"; tests/test_eval_cores.py fails when that count is missing here)
CORE_COUNTS = (1, 2, 4, 7, 8)
QUICK_CORE_COUNTS = (1, 4)
# the forwarding programs, each to be at least as fast as Linux native XDP at some core count
FORWARDING = ("xdp_tx", "xdp_redirect", "xdp_redirect_map", "simple_firewall", "xdp2", "xdp_rxq_info",
              "xdp_router_ipv4", "xdp_tx_iptunnel", "l4_load_balancer")
# issue 26: 4x10G line rate of 64-byte frames across the cores
LINE_RATE_PROGRAMS = ("xdp_drop", "xdp_tx", "xdp_redirect", "xdp_redirect_map", "simple_firewall")
LABEL = "the RTL of N cores under Verilator (the multi-core VLIW model where the RTL does not run the program)"


SYNTH_CORES = 2  # the whole IP is synthesised with this many cores (about 20 minutes of yosys); more are extrapolated


def synth_key(cores: int) -> str:
    return f"{TOP_SYNTH_KEY},CORES={cores}"


def points_cores(ctx: Context) -> list[str]:
    counts = QUICK_CORE_COUNTS if ctx.quick else CORE_COUNTS
    keys = []
    for p in suite_names(ctx):
        keys += [f"cores:{p}:{n}" for n in counts] + [f"linux:{p}"]
    return keys + ([] if ctx.quick else [synth_key(SYNTH_CORES)])


def core_resources(records: dict[str, Record], counts: tuple[int, ...]) -> Record | None:
    """The whole IP synthesised with SYNTH_CORES cores: its resources, a tile's (sephirot_tile: a core with its
    packet buffers and helper unit), the shared rest, the LUTs of N cores extrapolated as shared + N tiles, and how
    many cores fit a Virtex-7 690T beside the rest of the NIC (the paper's Table 1: the reference NIC with hXDP
    minus hXDP)."""
    r = ok(records, synth_key(SYNTH_CORES))
    if not r or "sephirot_tile" not in (r.get("modules") or {}):
        return None
    # (each core's tile is a parameter variant of its own, its core number, and the per-module totals add a module's
    # variants: the tiles' sum, divided by the cores, is one tile)
    whole = r["total"]
    tile = {k: v / SYNTH_CORES for k, v in r["modules"]["sephirot_tile"].items()}
    shared = lut(whole) - SYNTH_CORES * lut(tile)
    nic = PAPER_WITH_REFERENCE_NIC[0] - PAPER_TABLE1["Total"][0]
    room = VIRTEX7_690T[0] - nic
    # (flip-flops and block RAM bound the count too: the same shared + N tiles beside the NIC's)
    fit = {"lut": int((room - shared) // lut(tile))}
    for i, key in ((1, "FF"), (2, "BRAM")):
        per_tile, total = tile.get(key) or 0, whole.get(key) or 0
        if per_tile:
            nic_part = PAPER_WITH_REFERENCE_NIC[i] - PAPER_TABLE1["Total"][i]
            fit[key.lower()] = int((VIRTEX7_690T[i] - nic_part - (total - SYNTH_CORES * per_tile)) // per_tile)
    return {"cores": SYNTH_CORES, "whole_lut": lut(whole), "whole_ff": whole.get("FF"), "whole_bram36":
            whole.get("BRAM"), "tile_lut": lut(tile), "tile_bram36": tile.get("BRAM"), "shared_lut": shared,
            "lut_by_cores": {str(n): shared + n * lut(tile) for n in counts if n >= SYNTH_CORES}, "nic_lut": nic,
            "device_lut": VIRTEX7_690T[0], "cores_that_fit": min(fit.values()), "fit_by": fit,
            "seconds": r.get("seconds")}


def m_cores(ctx: Context, key: str) -> Record:
    """cores:NAME:N: N cores (docs/execution_contract.md section 8) on the program's main path, 64-byte frames back
    to back: the steady-state cycles per packet of the RTL (Verilator) and of the multi-core VLIW model, whether
    their per-packet cycles agree, and whether every frame's action and bytes equal one VLIW core's."""
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
    rec: Record = {"program": name, "path": path, "cores": cores, "model_cycles": cpp,
                   "model_mpps": CLOCK_MHZ / cpp if cpp else None, "packets": len(packets), "trace": what,
                   "grant_wait_cycles_mean": sum(f.waits for f in run.frames) / len(packets),
                   "reorder_peak": run.reorder_peak, "results_unlike_one_core": wrong}
    rec.update(_rtl(ctx, name, cr, packets, cores, run))
    return rec


def _rtl(ctx: Context, name: str, cr: object, packets: list[bytes], cores: int, run: object) -> Record:
    """The same packets on the RTL of `cores` cores: its steady-state cycles per packet (the model's measure: the
    interval between core completions, second half of the run) and the packets whose core, start or end cycle
    differ from the model's; the RTL's refusal, when it refuses the program, in rtl_reason."""
    from hxdp.eval.measure import back_to_back_cycles
    from hxdp.rtl.sim import RtlSim

    try:
        sim = RtlSim(cr.rom, layout=cr.layout, state=map_state(ctx, name, cr.layout), cores=cores)
        results = sim.run_packets(packets)
    except HxdpError as exc:
        return {"rtl_cycles": None, "rtl_mpps": None, "rtl_reason": str(exc)}
    cycles, method = back_to_back_cycles(results, sim)
    # (the RTL's stamps count from its reset, the model's from packet 0's start)
    s0 = sim.stamps[0].start if sim.stamps else 0
    unlike = sum((s.core, s.start - s0, s.end - s0) != (f.core, f.start, f.end)
                 for s, f in zip(sim.stamps, run.frames, strict=False) if f.core is not None)
    return {"rtl_cycles": cycles, "rtl_mpps": CLOCK_MHZ / cycles if cycles else None, "rtl_method": method,
            "rtl_unlike_model": unlike, "rtl_reason": None}


def cores_rows(ctx: Context, records: dict[str, Record]) -> list[Row]:
    counts = QUICK_CORE_COUNTS if ctx.quick else CORE_COUNTS
    rows = []
    for p in suite_names(ctx):
        lx = ok(records, f"linux:{p}")
        row: Row = {"program": p, "path": None}
        for n in counts:
            r = ok(records, f"cores:{p}:{n}")
            row["path"] = row["path"] or (r["path"] if r else None)
            # the RTL's figure where it runs the program, else the model's (`engine_N` says which)
            rtl = r.get("rtl_cycles") if r else None
            row[f"cycles_{n}"] = rtl if rtl else (r["model_cycles"] if r else None)
            row[f"mpps_{n}"] = (r.get("rtl_mpps") if rtl else r["model_mpps"]) if r else None
            row[f"engine_{n}"] = ("rtl" if rtl else "model") if r else None
            row[f"model_cycles_{n}"] = r["model_cycles"] if r else None
            row[f"rtl_unlike_model_{n}"] = r.get("rtl_unlike_model") if r else None
            row[f"rtl_reason_{n}"] = r.get("rtl_reason") if r else None
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


def cores_checks(rows: list[Row], counts: tuple[int, ...], fit: int | None = None) -> list[Check]:
    """Issue 26's targets on the figures (the RTL's, else the model's): the RTL's cycles against the model's, 4x10G
    line rate at some core count for the line-rate programs, and each forwarding program at least as fast as Linux
    at some core count; with `fit` (the cores that fit the device, from the synthesis) only counts up to it count."""
    checks = []
    fitting = tuple(n for n in counts if fit is None or n <= fit)
    limit = CLOCK_MHZ / LINE_RATE_MPPS
    by = {r["program"]: r for r in rows}
    ran = [(r["program"], n, r.get(f"rtl_unlike_model_{n}")) for r in rows for n in counts
           if r.get(f"engine_{n}") == "rtl"]
    if ran:
        off = [f"{p} on {n}" for p, n, u in ran if u]
        checks.append(Check("the multi-core RTL's per-packet core, start and end cycles equal the model's",
                            "fail" if off else "pass", f"{len(ran) - len(off)} of {len(ran)} runs",
                            "every run", "differ: " + ", ".join(off)
                            if off else ""))
    for p in LINE_RATE_PROGRAMS:
        if p not in by:
            continue
        got = [(by[p][f"cycles_{n}"], n) for n in fitting if by[p][f"cycles_{n}"] is not None]
        name = f"4x10G line rate, 64B {p} on N cores that fit: cycles/packet <= {limit:.3f}"
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
        got = [(by[p][f"mpps_{n}"], n) for n in fitting if by[p][f"mpps_{n}"]]
        name = f"{p} at least as fast as Linux at some core count that fits"
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
    res = core_resources(records, counts)
    checks = cores_checks(rows, counts, res["cores_that_fit"] if res else None)
    write_table(ctx, exp.name, exp.title, rows, {"engine": LABEL, "cores": list(counts), "not_available": notes,
                                                 "resources": res}, checks)
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
        ax.plot([n for n, _ in pts], [m for _, m in pts], "o-", label="Sephirot (RTL; the model where refused)")
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
