"""Upstream Katran on Sephirot: compile time and fit, cycles and Mpps per path, equality with the kernel, Linux beside.

The balancer is built from the checkout KATRAN_SRC names (hxdp.eval.katran; nothing is fetched): without it every
point is 'n/a' with that reason. Paths are Katran's: a new connection (SYN: the consistent-hash ring, then the
connection table), a reused one (the per-CPU LRU reached through lru_mapping), an established flow the LRU does
not know (a miss: the ring again), and traffic to no VIP (PASS).
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

from hxdp import params
from hxdp.eval.harness import CLOCK_MHZ, Check, Context, Experiment, NotAvailable, Record, Row, ok
from hxdp.eval.output import note_figure, plt, reasons, save_figure, write_table

VIPS = ["10.100.0.1:80:tcp", "10.100.0.2:443:udp"]
REALS = ["172.16.0.1", "172.16.0.2", "172.16.0.3", "fc00:1::4"]
PATHS = ("new", "reuse", "lru-miss", "miss")
FLOWS = 32  # distinct flows of a path's trace (a miss turns into a hit when repeated: every frame its own flow)
QUICK_FLOWS = 8
ENGINES = ("vliw-model", "rtl")


def points(ctx: Context) -> list[str]:
    return ["katran:compile", *(f"katran:diff:{e}" for e in ENGINES), *(f"katran:rtl:{p}" for p in PATHS),
            "katran:linux"]


def _built(ctx: Context) -> dict[str, Any]:
    """The object, configuration and LRU size of this run (built once per run into OUT/work/katran)."""
    if "katran" in ctx.cache:
        return ctx.cache["katran"]
    from hxdp.eval import katran

    src = os.environ.get("KATRAN_SRC")
    if not src:
        raise NotAvailable("upstream Katran not built: set KATRAN_SRC to a clone of "
                           "github.com/facebookincubator/katran (scripts/katran.py says how)")
    work = ctx.out / "work" / "katran"
    obj = katran.build(Path(src), work, [])
    lru = 100_000 if ctx.quick else katran.DEFAULT_LRU_SIZE
    cfg = katran.config(VIPS, REALS, "02:00:00:00:03:01", katran.RING_SIZE, lru, 1)
    ctx.cache["katran"] = {"obj": obj, "cfg": cfg, "lru": lru, "skip": katran.skip_bytes(1)}
    return ctx.cache["katran"]


def path_trace(ctx: Context, path: str) -> tuple[list[bytes], int]:
    """(frames, index of the first measured frame): a reuse trace opens its connections first."""
    from hxdp.eval import katran

    n = QUICK_FLOWS if ctx.quick else FLOWS
    frames = katran.path_frames(VIPS[0], path, n)
    if path == "reuse":
        return katran.path_frames(VIPS[0], "new", n) + frames, n
    return frames, 0


def _compiled(ctx: Context) -> Any:
    if "katran:cr" not in ctx.cache:
        from hxdp.compiler import compile_program
        from hxdp.frontend.elf import load_program
        from hxdp.frontend.sizing import config_inner, config_sizes

        b = _built(ctx)
        t0 = time.perf_counter()
        program = load_program(b["obj"], sizes=config_sizes(b["cfg"], "katran config"),
                               inner=config_inner(b["cfg"], "katran config"))
        cr = compile_program(program)
        ctx.cache["katran:cr"] = (cr, time.perf_counter() - t0, program)
    return ctx.cache["katran:cr"]


def m_katran(ctx: Context, key: str) -> Record:
    """katran:compile | katran:diff:ENGINE | katran:rtl:PATH | katran:linux."""
    _, what, *arg = key.split(":")
    if what == "compile":
        return _m_compile(ctx)
    if what == "diff":
        return _m_diff(ctx, arg[0])
    if what == "rtl":
        return _m_rtl(ctx, arg[0])
    if what == "linux":
        return _m_linux(ctx)
    raise NotAvailable(f"unknown Katran point {key}")


def _m_compile(ctx: Context) -> Record:
    cr, seconds, program = _compiled(ctx)
    placed = {r.name: getattr(r, "tier", "bram") for r in cr.layout.regions}
    return {"instructions": len(program.insns), "rows": len(cr.rom), "rows_available": params.IMEM_ROWS,
            "compile_s": round(seconds, 3), "maps": len(cr.layout.regions), "placement": placed,
            "lru_size": _built(ctx)["lru"]}


def _m_diff(ctx: Context, engine: str) -> Record:
    from hxdp.diff import run_diff
    from hxdp.errors import HxdpError
    from hxdp.eval import katran
    from hxdp.mapdump import SkipBytes

    b = _built(ctx)
    frames = [f for _, f in katran.traffic(VIPS, QUICK_FLOWS if ctx.quick else 16)]
    try:
        rep = run_diff(b["obj"], frames, b["cfg"], engine=engine, cfg_source="katran config",
                       skip=[SkipBytes.parse(s) for s in b["skip"]], maps_at_end=True)
    except HxdpError as exc:  # an engine that refuses the program says why
        raise NotAvailable(f"{engine}: {exc}") from None
    return {"engine": engine, "packets": rep.packets, "identical": rep.ok,
            "actions": {params.ACTION_NAMES.get(k, str(k)): v for k, v in sorted(rep.actions.items())},
            "divergence": None if rep.divergence is None else rep.divergence.render(),
            "skipped_bytes": b["skip"]}


def _m_rtl(ctx: Context, path: str) -> Record:
    """The path's cycles per packet on the VLIW model (the contract's cycle model, which the RTL's cycles equal) and,
    where the RTL runs the program, back to back on the RTL."""
    from hxdp.errors import HxdpError
    from hxdp.eval.measure import back_to_back_cycles
    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel

    cr, _, _ = _compiled(ctx)
    b = _built(ctx)
    frames, first = path_trace(ctx, path)

    def state() -> MapState:
        st = MapState(cr.layout)
        st.apply_config(b["cfg"], source="katran config")
        return st

    vliw = VliwModel(cr.rom, state())
    model = [vliw.run(f) for f in frames][first:]
    rec: Record = {"path": path, "model_cycles": statistics.mean(r.cycles for r in model),
                   "actions": sorted({params.ACTION_NAMES.get(r.action, str(r.action)) for r in model}),
                   "packets": len(model), "rtl_cycles": None, "rtl_reason": None}
    rec["model_mpps"] = CLOCK_MHZ / rec["model_cycles"]
    try:
        from hxdp.rtl.sim import RtlSim

        sim = RtlSim(cr.rom, layout=cr.layout, state=state())
        results = sim.run_packets(frames)
    except HxdpError as exc:
        rec["rtl_reason"] = str(exc)
        return rec
    rec["rtl_cycles"], rec["rtl_method"] = back_to_back_cycles(results, sim, first)
    rec["rtl_mpps"] = CLOCK_MHZ / rec["rtl_cycles"]
    rec["model_mismatches"] = sum(1 for a, r in zip(model, results[first:], strict=True) if not a.same_outcome(r))
    return rec


def _m_linux(ctx: Context) -> Record:
    """Linux native XDP's test_run figure of each path, every frame from its own bytes, in this run."""
    import json

    from hxdp.eval.measure import write_pcap
    from hxdp.linux import baseline

    okk, why = baseline.available()
    if not okk:
        raise NotAvailable(f"bpf() not usable here: {why}")
    b = _built(ctx)
    work = ctx.out / "work" / "katran"
    cfg_path = work / "config.json"
    cfg_path.write_text(json.dumps(b["cfg"]))
    out: Record = {}
    opts = baseline.Options(test_runs=2_000 if ctx.quick else 20_000, runs=1 if ctx.quick else 3, max_packets=2,
                            veth=False, native=False)
    for path in PATHS:
        frames, first = path_trace(ctx, path)
        pcap = work / f"linux-{path}.pcap"
        write_pcap(pcap, frames[first:first + 2])
        res = baseline.run_baseline(str(b["obj"]), str(pcap), maps=str(cfg_path), options=opts)
        mode = next((m for m in res.modes if m.mode == "test_run"), None)
        paths = mode.paths if mode else {}
        action = next(iter(paths), None)
        out[path] = {"action": action, "mpps": paths.get(action, {}).get("mpps") if action else None,
                     "loadavg": [res.loadavg_before, res.loadavg_after]}
    return {"paths": out}


def report(ctx: Context, exp: Experiment, records: dict[str, Record]) -> list[Check]:
    comp = ok(records, "katran:compile")
    lx = ok(records, "katran:linux")
    rows: list[Row] = []
    for path in PATHS:
        r = ok(records, f"katran:rtl:{path}")
        linux = (lx or {}).get("paths", {}).get(path, {})
        rows.append({"path": path, "model_cycles": r["model_cycles"] if r else None,
                     "model_mpps": r["model_mpps"] if r else None, "rtl_cycles": r.get("rtl_cycles") if r else None,
                     "rtl_mpps": r.get("rtl_mpps") if r else None, "rtl_reason": r.get("rtl_reason") if r else None,
                     "actions": r["actions"] if r else None,
                     "linux_test_run_mpps": linux.get("mpps"), "linux_action": linux.get("action")})
    diffs = {e: ok(records, f"katran:diff:{e}") for e in ENGINES}
    checks = []
    if comp:
        checks.append(Check("katran fits the instruction memory", "pass" if comp["rows"] <= comp["rows_available"]
                            else "fail", str(comp["rows"]), f"<= {comp['rows_available']} rows"))
        checks.append(Check("katran compile time", "pass" if comp["compile_s"] < 5 else "fail",
                            f"{comp['compile_s']:.2f} s", "< 5 s"))
    for e, d in diffs.items():
        if d:
            checks.append(Check(f"katran equals the kernel on {e}", "pass" if d["identical"] else "fail",
                                f"{d['packets']} packets", "every packet and map", d["divergence"] or ""))
    notes = reasons(records)
    write_table(ctx, exp.name, exp.title, rows, {"compile": comp, "diff": diffs, "not_available": notes}, checks)
    plot(ctx.out, exp, rows, notes)
    return checks


def plot(out: Path, exp: Experiment, rows: list[Row], notes: list[str]) -> None:
    good = [r for r in rows if r["model_mpps"]]
    if not good:
        note_figure(out, exp.name, exp.title, notes)
        return
    fig, ax = plt().subplots(figsize=(7, 4))
    xs = range(len(good))
    ax.bar([x - 0.2 for x in xs], [r["rtl_mpps"] or r["model_mpps"] for r in good], 0.4,
           label=f"Sephirot at {CLOCK_MHZ} MHz (RTL; the VLIW model where the RTL refuses)")
    ax.bar([x + 0.2 for x in xs], [r["linux_test_run_mpps"] or 0 for r in good], 0.4,
           label="Linux XDP (test_run, this machine)")
    ax.set_xticks(list(xs), [r["path"] for r in good])
    ax.set_ylabel("Mpps")
    ax.legend(fontsize=8)
    ax.set_title("Upstream Katran balancer_ingress, per path", fontsize=9)
    save_figure(fig, out, exp.name)
