"""docs/evaluation.md from the results in docs/eval/: the prose of doc_template.py with every number filled in."""

from __future__ import annotations

import json
import math
import os
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hxdp import params
from hxdp.atomic_write import write_atomic
from hxdp.eval import doc_template, timing
from hxdp.eval.figures.compiler import LANES, OPT_TITLES
from hxdp.eval.figures.cores import SYNTH_CORES
from hxdp.eval.figures.latency import LATENCY_PROGRAMS, LATENCY_SIZES
from hxdp.eval.figures.resources import CORE, PART_SYNTH_KEYS, REF_MAP_BYTES, WHOLE
from hxdp.eval.figures.speed import COMPILE_TARGET, SIM_TARGET, SIM_TARGET_CPS
from hxdp.eval.harness import CLOCK_MHZ, NS_PER_CYCLE, Context, ExperimentError, Row
from hxdp.eval.measure import (
    CTIME_RUNS,
    LINUX_FRAMES_PER_PATH,
    LINUX_REPEAT,
    LINUX_RUNS,
    LINUX_TEST_RUNS,
    THROUGHPUT_FRAME_BYTES,
)
from hxdp.eval.paper import (
    PAPER_DERIVED,
    PAPER_MPPS,
    PAPER_NAMES,
    PAPER_NOTES,
    PAPER_X86_GHZ,
    TARGET_CYCLES,
)
from hxdp.eval.programs import CSUM_DIFF, FIG9_STEPS, MAP_ACCESS, OPTIMISATIONS, QUICK_PROGRAMS
from hxdp.eval.synth import SYNTH_DEFAULT_TIMEOUT_S, SYNTH_MEMORY_BYTES, SYNTH_TIMEOUT_S, YOSYS_VERSION
from hxdp.linux.baseline import RESOLUTION
from hxdp.paths import ROOT

DOCS_DIR = ROOT / "docs"
DOCS_EVAL = DOCS_DIR / "eval"
DOC_NAME = "evaluation.md"
DOC_PATH = DOCS_DIR / DOC_NAME
# the experiments the page is written about (hxdp.eval.run.EXPERIMENTS)
NEEDED = ("fig7", "fig8", "fig9", "table3", "fig12_13", "fig11", "fig14", "fig15", "resources", "speed", "katran",
          "cores")
APPLICATIONS = tuple(PAPER_NAMES.values())  # the programs of the paper's Table 3
BOUNDS_EXAMPLES = ("xdp_tx", "xdp_redirect", "simple_firewall")
NO_EXIT_ROW = "xdp_drop (no exit with action)"

Facts = dict[str, str]


# ----------------------------------------------------------------------------------------------------------------
# the files
# ----------------------------------------------------------------------------------------------------------------


def doc_path_for(out: Path) -> Path:
    """docs/evaluation.md for docs/eval, OUT/evaluation.md for any other folder."""
    return DOC_PATH if out.resolve() == DOCS_EVAL.resolve() else out / DOC_NAME


def missing_experiments(out: Path) -> list[str]:
    """The experiments the page needs that have no full-run NAME.json in `out`."""
    missing = []
    for name in NEEDED:
        try:
            doc = json.loads((out / f"{name}.json").read_text())
        except (OSError, ValueError):
            missing.append(name)
            continue
        if doc.get("quick"):
            missing.append(name)
    return missing


def load_results(out: Path) -> dict[str, dict[str, Any]]:
    """NAME -> the document of NAME.json, and 'summary' -> summary.json."""
    missing = missing_experiments(out)
    if missing or not (out / "summary.json").exists():
        raise ExperimentError(f"{out}: no full-run results of {', '.join(missing or ['summary'])} to write "
                              f"{DOC_NAME} from (run `hxdp experiment --out {out}` first)")
    docs = {name: json.loads((out / f"{name}.json").read_text()) for name in NEEDED}
    docs["summary"] = json.loads((out / "summary.json").read_text())
    return docs


def render(out: Path, doc_path: Path | None = None) -> str:
    """The page for the results in `out`, with its links relative to `doc_path`."""
    doc_path = doc_path or doc_path_for(out)
    results = load_results(out)
    rel = os.path.relpath(out.resolve(), doc_path.resolve().parent)
    shown = os.path.relpath(out.resolve(), ROOT) if out.resolve().is_relative_to(ROOT) else str(out)
    facts: Facts = {"eval": "" if rel == "." else rel + "/", "eval_link": rel + "/", "eval_dir": shown}
    for part in (_setup_facts, _target_facts, _compiler_facts, _throughput_facts, _family_facts, _latency_facts,
                 _resource_facts, _speed_facts, _katran_facts, _cores_facts, _behind_facts):
        facts.update(part(results))
    facts["measured_table"] = _table(("experiment", "measure"),
                                     [(name, text.format_map(facts)) for name, text in doc_template.MEASURED])
    return rewrap(doc_template.TEMPLATE.format_map(facts)).rstrip("\n") + "\n"


def write_evaluation_doc(out: Path) -> Path:
    """Write the page for the results in `out` (see doc_path_for); returns its path."""
    path = doc_path_for(out)
    write_atomic(path, render(out, path))
    return path


# ----------------------------------------------------------------------------------------------------------------
# formatting
# ----------------------------------------------------------------------------------------------------------------


WIDTH = 115  # the page's prose lines (tables and code are left as they are)
VERBATIM = ("|", "```", "#", "![", "<!--")


def rewrap(text: str) -> str:
    """Fill the prose paragraphs and list items to WIDTH, the numbers filled in having changed their lengths."""
    blocks = text.split("\n\n")
    fence = False
    out = []
    for block in blocks:
        if fence or block.startswith(VERBATIM):
            fence = fence != (block.count("```") % 2 == 1)
            out.append(block)
        elif block.startswith("- "):
            items = ("\n" + block).split("\n- ")[1:]
            out.append("\n".join(textwrap.fill(" ".join(i.split()), WIDTH, initial_indent="- ", subsequent_indent="  ",
                                                break_long_words=False, break_on_hyphens=False) for i in items))
        else:
            out.append(textwrap.fill(" ".join(block.split()), WIDTH, break_long_words=False, break_on_hyphens=False)
                       + ("\n" if block.endswith("\n") else ""))
    return "\n\n".join(out)


def _num(v: Any, sig: int = 3) -> str:
    """A number as the page shows it: integers with separators, others to `sig` significant digits."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if float(v) == int(v):
        return f"{int(v):,}"
    if abs(v) >= 10 ** sig:
        return f"{v:,.0f}"
    return f"{v:.{sig}g}"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{_num(v)}%"


def _range(values: Iterable[float | None], fmt: Callable[[Any], str] = _num, sep: str = " to ") -> str:
    vs = [v for v in values if v is not None]
    if not vs:
        return "-"
    lo, hi = min(vs), max(vs)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}{sep}{fmt(hi)}"


def _list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else ""


def _table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _by_program(rows: list[Row], key: str = "program") -> dict[str, Row]:
    return {r[key]: r for r in rows if key in r}


def _get(rows: dict[str, Row], program: str, col: str) -> Any:
    return rows.get(program, {}).get(col)


def _check(results: dict[str, Any], name: str) -> dict[str, Any]:
    return next((c for c in results["summary"].get("checks", []) if c["name"] == name), {})


# ----------------------------------------------------------------------------------------------------------------
# the facts of each section
# ----------------------------------------------------------------------------------------------------------------


def _setup_facts(results: dict[str, Any]) -> Facts:
    env = results["summary"].get("environment", {})
    limits = ", ".join([f"{m} {s // 60} min" for m, s in sorted(SYNTH_TIMEOUT_S.items(), key=lambda x: -x[1])]
                       + [f"others {SYNTH_DEFAULT_TIMEOUT_S // 60} min"])
    return {"machine": f"{env.get('cpus', '?')} CPUs, {env.get('machine', '?')}, Linux {env.get('kernel', '?')}",
            "clock": _num(CLOCK_MHZ, 5), "quick_programs": str(len(QUICK_PROGRAMS)),
            "quick_packets": str(Context(Path(), quick=True).n_packets), "synth_limits": limits,
            "synth_memory": str(SYNTH_MEMORY_BYTES >> 30), "optimisations": ", ".join(
                OPT_TITLES[o] for o in OPTIMISATIONS), "lanes_min": str(LANES[0]), "lanes_max": str(LANES[-1]),
            "lanes": str(params.LANES), "lanes_prev": str(params.LANES - 1),
            "fig9_steps": ", then ".join(f"+ {t}" if i else f"{t} alone" for i, (_, t, _) in enumerate(FIG9_STEPS)),
            "n_packets": str(Context(Path()).n_packets), "frame": str(THROUGHPUT_FRAME_BYTES),
            "linux_runs": str(LINUX_RUNS), "linux_repeat": f"{LINUX_REPEAT:,}",
            "linux_test_runs": f"{LINUX_TEST_RUNS:,}", "linux_frames_per_path": str(LINUX_FRAMES_PER_PATH),
            "resolution": f"{RESOLUTION:.0%}",
            "in_bytes": str(params.INPUT_BYTES_PER_CYCLE),
            "latency_sizes": _list([str(s) for s in LATENCY_SIZES]),
            "latency_programs": _list(list(LATENCY_PROGRAMS)), "map_access": f"`{MAP_ACCESS[0]}` to `{MAP_ACCESS[-1]}`",
            "csum_diff": f"`{CSUM_DIFF[0]}` to `{CSUM_DIFF[-1]}`", "yosys": YOSYS_VERSION.split()[0],
            "ref_map": f"{REF_MAP_BYTES:,}", "parts": _list([f"`{k.split(':')[1]}`" for k in PART_SYNTH_KEYS]),
            "ctime_runs": str(CTIME_RUNS), "simspeed_programs": "xdp_drop and xdp_router_ipv4"}


def _target_facts(results: dict[str, Any]) -> Facts:
    checks = results["summary"].get("checks", [])
    counts = {s: sum(1 for c in checks if c["status"] == s) for s in ("pass", "fail", "n/a")}
    summary = f"{counts['pass']} of {len(checks)} targets pass"
    failing = [c["name"] for c in checks if c["status"] == "fail"]
    if failing:
        summary += f"; failing: {'; '.join(failing)}"
    if counts["n/a"]:
        summary += f"; {counts['n/a']} could not be measured here"
    rows = [(f"**{c['status'].upper()}**" if c["status"] != "pass" else "PASS", c["name"], c["value"], c["limit"],
             c.get("detail", "").replace("|", "/")) for c in checks]
    return {"targets_summary": summary + " (`summary.json`):",
            "targets_table": _table(("status", "target", "result", "limit", "how"), rows)}


def _compiler_facts(results: dict[str, Any]) -> Facts:
    t3 = _by_program(results["table3"]["rows"])
    f7 = _by_program(results["fig7"]["rows"])
    f8 = _by_program(results["fig8"]["rows"])
    apps = [p for p in APPLICATIONS if p in t3]
    rows = []
    for p in apps:
        r = t3[p]
        name = p if r.get("paper_name") in (None, p) else f"{p} ({r['paper_name']})"
        rows.append((name, f"{_num(r.get('instructions'))} ({_num(r.get('paper_instructions'))})",
                     _num(r.get("rows")), f"**{_num(r.get('static_ipc'))}** ({_num(r.get('paper_static_ipc'))})",
                     _num(r.get("dynamic_ipc")), _num(r.get("paper_x86_ipc"))))
    header = ("program (paper name)", "eBPF instructions (paper)", "rows",
              "static IPC: original instructions / row (paper)", "dynamic IPC: executed / executed rows",
              "x86 IPC (paper)")
    above = sorted((r for r in t3.values() if (r.get("static_ipc") or 0) > params.LANES),
                   key=lambda r: -r["static_ipc"])
    if above:
        top = above[0]
        ipc_above = (f"{len(above)} of {len(t3)} programs do, the most {top['program']}: {top['instructions']} "
                     f"instructions in {top['rows']} rows, an IPC of {_num(top['static_ipc'])}")
    else:
        ipc_above = "none of the programs measured here does"
    return {"table3_table": _table(header, rows), "ipc_above_lanes": ipc_above,
            "ldst6_title": OPT_TITLES["ldst6"], "adjust_ldst6": _pct(_get(f7, "xdp_adjust_tail", "ldst6_pct")),
            "tunnel_ldst6": _pct(_get(f7, "xdp_tx_iptunnel", "ldst6_pct")),
            "paper_adjust_ldst6": _pct(PAPER_NOTES["fig7_adjust_tail_6B_ldst_pct"][0]),
            "bounds_examples": "removes " + _list([f"{_pct(_get(f7, p, 'bounds_pct'))} of {p}'s"
                                                   for p in BOUNDS_EXAMPLES if p in f7]),
            "paper_firewall_bounds": _pct(PAPER_NOTES["fig7_firewall_bounds_checks_pct"][0]),
            "exit_range": _range((_get(f7, p, "exit_action_pct") for p in apps), _pct),
            "paper_exit": f"{PAPER_NOTES['fig7_exit_action_pct'][0]}%",
            "fourth_lane_range": _range((_saving(f8, p, params.LANES - 1, params.LANES) for p in apps), _pct),
            "more_lanes_range": _range((_saving(f8, p, params.LANES, LANES[-1]) for p in apps), _pct),
            "paper_fourth_lane": _pct(PAPER_NOTES["fig8_fourth_lane_pct"][0])}


def _saving(fig8: dict[str, Row], program: str, lanes_from: int, lanes_to: int) -> float | None:
    a, b = _get(fig8, program, f"rows_{lanes_from}"), _get(fig8, program, f"rows_{lanes_to}")
    return 100.0 * (a - b) / a if a and b is not None else None


def _mpps_cell(r: Row, bold: bool, prefix: str = "") -> str:
    if r.get(f"{prefix}rtl_mpps") is None:
        return "-"
    mpps = f"{_num(r[f'{prefix}rtl_mpps'])} Mpps"
    return f"{f'**{mpps}**' if bold else mpps} ({_num(r[f'{prefix}rtl_cycles'], 4)} cycles)"


def _checked_cell(r: Row) -> str:
    if r.get("linux_veth_native_mpps") is None and r.get("linux_test_run_mpps") is None:
        return "-"
    return {True: "yes", False: "**no**", None: "not confirmed"}[r.get("linux_path_checked")]


def _other_paths_table(rows: list[Row]) -> str:
    """The programs' other paths where their cycles differ from the main path's."""
    table = []
    for r in rows:
        for path, o in (r.get("other_paths") or {}).items():
            if o.get("rtl_cycles") is not None and r.get("rtl_cycles") is not None \
                    and abs(o["rtl_cycles"] - r["rtl_cycles"]) < 0.01:
                continue
            table.append((r["program"], path, _mpps_cell(o, False), _num(o.get("model_cycles"), 4),
                          _num(o.get("linux_veth_native_mpps")), _num(o.get("linux_test_run_mpps"))))
    header = ("program", "other path", "Sephirot RTL", "VLIW model (cycles)", "Linux native XDP on veth (Mpps)",
              "Linux test_run (Mpps)")
    return _table(header, table) if table else "(every program's other paths take its main path's cycles)\n"


def _load_range(rows: list[Row]) -> str:
    loads = [x[0] for r in rows for x in (r.get("linux_loadavg") or []) if x]
    return _range(loads)


def _throughput_facts(results: dict[str, Any]) -> Facts:
    rows = results["fig12_13"]["rows"]
    by = _by_program(rows)
    order = [*TARGET_CYCLES, NO_EXIT_ROW, *[p for p in APPLICATIONS if p not in TARGET_CYCLES]]
    order += sorted(p for p in by if p not in order)
    table = [(p, by[p].get("path") or "-", _mpps_cell(by[p], p in TARGET_CYCLES),
              _num(_get(by, p, "model_cycles"), 4), _num(_get(by, p, "linux_veth_native_mpps")),
              _num(_get(by, p, "linux_test_run_mpps")), _checked_cell(by[p]),
              _mpps_cell(by[p], False, "mix_"), _num(_get(by, p, "mix_linux_veth_native_mpps")),
              _num(_get(by, p, "paper_hxdp_mpps")), _num(_get(by, p, "paper_x86_3.7GHz_mpps")))
             for p in order if p in by]
    header = ("program", "main path", "Sephirot RTL", "VLIW model (cycles)", "Linux native XDP on veth (Mpps)",
              "Linux test_run (Mpps)", "Linux path checked", "mix: Sephirot RTL", "mix: Linux native (Mpps)",
              "paper hXDP (Mpps)", f"paper x86 @{_num(PAPER_X86_GHZ)} GHz (Mpps)")
    by_source: dict[str, list[str]] = {}
    for p in PAPER_MPPS:
        if p in by:
            by_source.setdefault(PAPER_MPPS[p][2], []).append(p + (f" ({PAPER_DERIVED[p]})" if p in PAPER_DERIVED
                                                                   else ""))
    sources = "; ".join(f"{src}: {_list(progs)}" for src, progs in by_source.items())
    measured = [r for r in rows if r.get("rtl_cycles") is not None and r["program"] != NO_EXIT_ROW]
    wrong = [r["program"] for r in measured if r.get("rtl_model_mismatches")]
    mismatch = (f"The RTL's results equal the VLIW model's on every packet of all {len(measured)} programs."
                if not wrong else f"The RTL's results differ from the VLIW model's on {_list(wrong)}: those count "
                "as failed.")
    differ = [r for r in measured if r.get("model_cycles") is not None
              and abs(r["rtl_cycles"] - r["model_cycles"]) >= 0.01]
    model_vs_rtl = ("The two differ on " + _list([f"{r['program']} (model {_num(r['model_cycles'], 4)}, RTL "
                                                  f"{_num(r['rtl_cycles'], 4)})" for r in differ]) + "."
                    if differ else "The two agree on every program.")
    frames = math.ceil(THROUGHPUT_FRAME_BYTES / params.INPUT_BYTES_PER_CYCLE)
    mpps = [r.get("rtl_mpps") for r in measured]
    noexit = by.get(NO_EXIT_ROW, {})
    unchecked = [r["program"] for r in measured if r.get("linux_path_checked") is False]
    unconfirmed = [r["program"] for r in measured if r.get("linux_path_checked") is None
                   and r.get("linux_veth_native_mpps") is not None]
    odd = [f"{r['program']} ({r['trace']})" for r in measured if r.get("trace") and
           not r["trace"].startswith(f"{THROUGHPUT_FRAME_BYTES}-byte")]
    native = [r for r in measured if r.get("linux_veth_native_mpps") and r.get("linux_path_checked")]
    ahead = [r["program"] for r in native if r.get("rtl_mpps") and r["rtl_mpps"] >= r["linux_veth_native_mpps"]
             and not r.get("rtl_model_mismatches")]
    return {"throughput_table": _table(header, table) + f"\nPaper figures: {sources}.\n",
            "other_paths_table": _other_paths_table([r for r in rows if r["program"] != NO_EXIT_ROW]),
            "mismatch_summary": mismatch, "model_vs_rtl": model_vs_rtl, "frames_per_packet": str(frames),
            "path_bound": f"So a packet takes at least {frames} cycles, however short its program.",
            "mpps_span": _range(mpps) + " Mpps",
            "path_traces": ("Programs whose main path has no frame of that size are measured on the traffic's "
                            f"frames of that path: {_list(odd)}." if odd else ""),
            "linux_unchecked": (f"The Linux figure of {_list(unchecked)} did **not** take the main path on every "
                                "run: it is shown, marked, and does not count." if unchecked else
                                "No Linux figure left the path it names.") + (
                f" The main path of {_list(unconfirmed)} is a redirect that does not come back out of the veth "
                "here (to a CPU map, an AF_XDP socket or a device of another machine): not confirmed, shown, and "
                "not counted." if unconfirmed else ""),
            "linux_ahead": (f"Sephirot on its main path is at least as fast as Linux native XDP on a veth for "
                            f"{len(ahead)} of the {len(native)} programs measured both ways with the Linux path checked"
                            + (f" (not for {_list(sorted({r['program'] for r in native} - set(ahead)))})"
                               if len(ahead) < len(native) else "") + "."),
            "load_range": _load_range(rows),
            "noexit_cycles": _num(noexit.get("rtl_cycles")), "noexit_mpps": _num(noexit.get("rtl_mpps")),
            "paper_noexit": _num(PAPER_NOTES["xdp_drop_no_early_exit_mpps"][0]),
            "firewall_mpps": _num(_get(by, "simple_firewall", "rtl_mpps")),
            "firewall_cycles": _num(_get(by, "simple_firewall", "rtl_cycles"), 4),
            "paper_firewall": _num(PAPER_MPPS["simple_firewall"][0]),
            "paper_firewall_hand": _num(PAPER_NOTES["simple_firewall_hand_optimised_mpps"][0])}


def _family_facts(results: dict[str, Any]) -> Facts:
    f14 = sorted(results["fig14"]["rows"], key=lambda r: r["key_bytes"])
    f15 = sorted(results["fig15"]["rows"], key=lambda r: r["calls"])
    header = ("main path", "RTL cycles", "RTL Mpps", "VLIW model (cycles)", "Linux native XDP on veth (Mpps)",
              "Linux test_run (Mpps)", "mix: RTL cycles")

    def cells(r: Row) -> tuple[str, ...]:
        return (r.get("path") or "-", _num(r.get("rtl_cycles"), 4), _num(r.get("rtl_mpps")),
                _num(r.get("model_cycles"), 4), _num(r.get("linux_veth_native_mpps")),
                _num(r.get("linux_test_run_mpps")), _num(r.get("mix_rtl_cycles"), 4))

    flat = _check(results, "map access cost independent of key size 1-16 B")
    verdict = {"pass": "independent of the key size, as in the paper",
               "fail": "it depends on the key size, unlike the paper's"}.get(flat.get("status", ""), "not measured")
    cyc = [r.get("rtl_cycles") for r in f14]
    first, last = (f15[0], f15[-1]) if f15 else ({}, {})
    slope = ((last["rtl_cycles"] - first["rtl_cycles"]) / (last["calls"] - first["calls"])
             if len(f15) >= 2 and last.get("rtl_cycles") is not None and first.get("rtl_cycles") is not None
             else None)
    return {"map_access_table": _table(("key bytes", *header), [(r["key_bytes"], *cells(r)) for r in f14]),
            "csum_table": _table(("csum_diff calls", *header), [(r["calls"], *cells(r)) for r in f15]),
            "map_access_cycles": _range(cyc) + " cycles", "map_access_verdict": verdict,
            "key_min": _num(f14[0]["key_bytes"]) if f14 else "-", "key_max": _num(f14[-1]["key_bytes"]) if f14 else "-",
            "csum_slope": _num(slope), "csum_min_calls": _num(first.get("calls")),
            "csum_max_calls": _num(last.get("calls"))}


def _latency_facts(results: dict[str, Any]) -> Facts:
    rows = [r for r in results["fig11"]["rows"] if r.get("latency_ns") is not None]
    progs = list(dict.fromkeys(r["program"] for r in rows))
    cell = {(r["program"], r["size"]): f"{_num(r['latency_ns'])} ns ({r['latency_cycles']} cycles)" for r in rows}
    sizes = sorted({r["size"] for r in rows})
    table = _table(("packet bytes", *progs), [(s, *(cell.get((p, s), "-") for p in progs)) for s in sizes])
    big = [r for r in rows if sizes and r["size"] == sizes[-1]]
    frames = math.ceil(sizes[-1] / params.INPUT_BYTES_PER_CYCLE) if sizes else 0
    at_max = "; ".join(f"{r['program']} takes {r['latency_cycles']} cycles ({_num(r['latency_ns'])} ns), "
                       f"{r['core_cycles']} of them in the core" for r in big)
    if big and all((r["core_cycles"] or 0) < frames for r in big):
        at_max += (f": the packet's {frames} input frames of {params.INPUT_BYTES_PER_CYCLE} bytes and its {frames} "
                   "output frames set the latency, not the program")
    return {"latency_table": table, "core_start": _range(r.get("core_start_cycle") for r in rows),
            "latency_max_size": _num(sizes[-1]) if sizes else "-", "latency_at_max": at_max or "-",
            "paper_latency": PAPER_NOTES["fig11_latency"][0]}


def _resource_facts(results: dict[str, Any]) -> Facts:
    doc = results["resources"]
    rows = doc["rows"]
    comp = [(r["component"], f"**{_num(r['LUT (incl. LUTRAM)'])}**" if r["component"] in (CORE, WHOLE)
             else _num(r["LUT (incl. LUTRAM)"]), _num(r["LUTRAM"]), _num(r["FF"]), _num(r["BRAM36"]),
             _num(r["DSP"]), r["paper rows"], _num(r["paper LUT"]), _num(r["paper FF"]), _num(r["paper BRAM36"]))
            for r in rows]
    header = ("component", "LUT (distributed RAM incl.)", "of which distributed RAM", "FF", "BRAM36", "DSP48",
              "paper rows", "paper LUT", "paper FF", "paper BRAM36")
    return {"components_table": _table(header, comp), "modules_table": _modules_table(doc["modules"]),
            "resources_summary": _resources_summary(_by_program(rows, "component")),
            "synth_spread": _synth_spread(doc["modules"]), **_timing_facts(doc.get("timing"))}


def _timing_facts(paths: list[Row] | None) -> Facts:
    """The delay model's figures and the longest path of each instance of the whole IP (or of the parts
    synthesised on their own when the whole IP has none)."""
    facts = {"t_cko": _num(timing.TCKO_NS), "t_bram_cko": _num(timing.BRAM_CKO_NS), "t_net": _num(timing.NET_NS),
             "t_lut": _num(timing.LUT_NS), "t_muxf": _num(timing.MUXF_NS), "t_carry_in": _num(timing.CARRY_IN_NS),
             "t_carry_byp": _num(timing.CARRY_BYP_NS), "t_dsp": _num(timing.DSP_COMB_NS),
             "t_dsp_cascade": _num(timing.DSP_CASCADE_NS),
             "t_setup": _num(timing.TSETUP_NS), "t_bram_setup": _num(timing.BRAM_SETUP_NS),
             "period": _num(NS_PER_CYCLE), "fit_levels": str(timing.levels_that_fit(NS_PER_CYCLE)),
             "fit_half": str(timing.levels_that_fit(NS_PER_CYCLE / 2)), "ug474": "7 Series FPGAs CLB User Guide",
             "grade": "-2", "family": "7-series", "adder_bits": "64"}
    if not paths:
        return {**facts, "timing_table": "*No timing estimate in this run's `resources.json` (it predates the "
                                         "estimate, or yosys did not run).*\n"}
    runs = {p["synthesised"] for p in paths}
    shown = [p for p in paths if p["synthesised"] == "sephirot_top"] if "sephirot_top" in runs else paths
    rows = [(f"`{p['synthesised']}`/{p['group']}", "yes" if p["fits"] else "**no**", _num(p["levels"]),
             ", ".join(f"{n} {k}" for k, n in sorted(p["cells"].items()) if k != "LUT") or "-",
             f"{_num(p['delay_ns'])} / {_num(p['budget_ns'])}", f"`{p['start']}` ({p.get('start_pin', '-')})",
             f"`{p['end']}` ({p.get('end_pin', '-')})") for p in shown]
    return {**facts, "timing_table": _table(("instance", "fits", "LUT levels", "other cells", "estimate / budget (ns)",
                                             "from", "to"), rows)}


def _lut(st: Row) -> float:
    return st.get("LUT", 0.0) + st.get("LUTRAM", 0.0)


def _modules_table(modules: list[Row]) -> str:
    within = {m["module (with its submodules)"]: m for m in modules if m["synthesised"] == "sephirot_top"}
    order = [m for m in doc_template.MODULES if m in within] + sorted(set(within) - set(doc_template.MODULES))
    rows = [(f"`{m}`", doc_template.MODULES.get(m, ""), _num(_lut(within[m])), _num(within[m].get("LUTRAM")),
             _num(within[m].get("FF")), _num(within[m].get("BRAM")), _num(within[m].get("DSP"))) for m in order]
    return _table(("module", "what", "LUT (distributed RAM incl.)", "of which distributed RAM", "FF", "BRAM36",
                   "DSP48"), rows)


def _resources_summary(by: dict[str, Row]) -> str:
    parts = []
    whole, core = by.get(WHOLE), by.get(CORE)
    if whole:
        lut, paper = whole["LUT (incl. LUTRAM)"], whole["paper LUT"]
        side = "under" if lut < paper else "over"
        gap = abs(paper - lut)
        parts.append(f"The whole IP takes {_num(lut)} LUT, {_num(gap)} ({_pct(100 * gap / paper)}) {side} the "
                     f"paper's {_num(paper)}, with {_num(whole['FF'])} FF against {_num(whole['paper FF'])} and "
                     f"{_num(whole['BRAM36'])} BRAM36 against {_num(whole['paper BRAM36'])}.")
    if core:
        side = "under" if core["LUT (incl. LUTRAM)"] < core["paper LUT"] else "over"
        parts.append(f"The core without its stack takes {_num(core['LUT (incl. LUTRAM)'])} LUT, {side} the paper's "
                     f"Sephirot row ({_num(core['paper LUT'])}).")
    over = [f"{c} ({_num(r['LUT (incl. LUTRAM)'] / r['paper LUT'])} times the paper's {_num(r['paper LUT'])} LUT)"
            for c, r in by.items() if c != WHOLE and r["paper LUT"] and r["LUT (incl. LUTRAM)"] > r["paper LUT"]]
    if over:
        parts.append(f"Over the paper's count: {_list(over)}.")
    return " ".join(parts)


def _synth_spread(modules: list[Row]) -> str:
    """The largest difference between a part synthesised on its own and the same part within the whole IP."""
    within = {m["module (with its submodules)"]: _lut(m) for m in modules if m["synthesised"] == "sephirot_top"}
    worst: tuple[float, str, float, float] | None = None
    for m in modules:
        name = m["module (with its submodules)"]
        if m["synthesised"] != name or name == "sephirot_top" or not within.get(name):
            continue
        diff = 100.0 * abs(_lut(m) - within[name]) / within[name]
        if worst is None or diff > worst[0]:
            worst = (diff, name, _lut(m), within[name])
    if worst is None:
        return "- (no part synthesised both ways)"
    return f"{_pct(worst[0])} (`{worst[1]}`: {_num(worst[2])} LUT on its own, {_num(worst[3])} within the whole IP)"


def _speed_facts(results: dict[str, Any]) -> Facts:
    rows = results["speed"]["rows"]
    ct = [r for r in rows if r["what"] == "ctime" and r.get("compile_s") is not None]
    suite = [r for r in ct if not r["program"].startswith("synthetic")]
    synth = [r for r in ct if r["program"].startswith("synthetic")]
    sims = {r["program"]: r for r in rows if r["what"] == "simspeed" and r.get("sim_cycles_per_s")}
    comp = _check(results, COMPILE_TARGET)
    sim = _check(results, SIM_TARGET)
    loop = sims.get("loop", {}).get("sim_cycles_per_s")
    program = comp.get("detail", "").split(" (")[0]
    compile_summary = (f"Issue 3's target, *{COMPILE_TARGET}*: {comp.get('value', '-')} (the generated {program}), "
                       f"{comp.get('status', 'not measured').upper()}.")

    def mcps(p: str) -> str:
        v = sims.get(p, {}).get("sim_cycles_per_s")
        return _num(v / 1e6) if v else "-"

    return {"synthetic_min": _num(min((r["instructions"] for r in synth), default=None)),
            "synthetic_max": _num(max((r["instructions"] for r in synth), default=None)),
            "compile_summary": compile_summary,
            "ctime_range": _range(r["compile_s"] * 1000 for r in suite) + " ms",
            "loop_mcps": mcps("loop"), "drop_mcps": mcps("xdp_drop"), "router_mcps": mcps("xdp_router_ipv4"),
            "drop_pps": _num(sims.get("xdp_drop", {}).get("packets_per_s"), 4),
            "router_pps": _num(sims.get("xdp_router_ipv4", {}).get("packets_per_s"), 4),
            "sim_limit": f"{_num(SIM_TARGET_CPS / 1e6)} million, {sim.get('status', 'not measured').upper()}",
            "sim_margin": _pct(100.0 * (loop - SIM_TARGET_CPS) / SIM_TARGET_CPS) if loop else "-"}


def _katran_facts(results: dict[str, Any]) -> Facts:
    """The upstream Katran section: its compile, the paths' cycles next to Linux, the comparison with the kernel."""
    doc = results["katran"]
    comp, diffs = doc.get("compile"), doc.get("diff") or {}
    if not comp:
        why = "; ".join(doc.get("not_available") or []) or "not measured in this run"
        return {"katran_section": f"*Not measured in this run: {why}.*"}
    placed: dict[str, list[str]] = {}
    for name, tier in sorted(comp["placement"].items()):
        placed.setdefault(tier, []).append(name)
    where = "; ".join(f"{tier}: {', '.join(names)}" for tier, names in sorted(placed.items()))
    rows = [(r["path"], ", ".join(r["actions"] or []) or "n/a", _num(r.get("model_cycles")),
             _num(r.get("model_mpps")), _num(r["rtl_cycles"]) if r["rtl_cycles"] else "refused (below)",
             _num(r["linux_test_run_mpps"])) for r in doc["rows"]]
    table = _table(("path", "action", "VLIW model cycles/packet", f"Mpps at {CLOCK_MHZ} MHz", "RTL cycles/packet",
                    "Linux test_run Mpps"), rows)
    reason = next((r["rtl_reason"] for r in doc["rows"] if r.get("rtl_reason")), None)
    eq = []
    for engine, d in sorted(diffs.items()):
        if not d:
            eq.append(f"{engine}: {'refused (above)' if reason and engine == 'rtl' else 'not measured'}")
        elif d["identical"]:
            eq.append(f"{engine}: {d['packets']} packets identical to the kernel (every packet's action and bytes, "
                      "the maps after the whole trace, the kernel running the packets back to back)")
        else:
            eq.append(f"{engine}: **differs**: {d['divergence']}")
    skipped = next((d["skipped_bytes"] for d in diffs.values() if d), [])
    return {"katran_section": (
        f"`balancer_ingress` of upstream Katran ({comp['instructions']} eBPF instructions, {comp['maps']} maps, the "
        f"connection table of CPU 0 sized {comp['lru_size']:,} as KatranLb sizes it for one forwarding core) compiles "
        f"in {comp['compile_s']:.2f} s to {comp['rows']} rows of the {comp['rows_available']}. Maps by tier: "
        f"{where}.\n\n{table}\n\n" + (f"The RTL refuses it: {reason}.\n\n" if reason else "")
        + "; ".join(eq) + ". Left out of the map comparison: "
        + (", ".join(f"`{s}`" for s in skipped) or "nothing")
        + " (the time a program stores: the NIC's clock is not the host's).")}


def _cores_facts(results: dict[str, Any]) -> Facts:
    """Several cores: each program's main path on 1, 2, 4 and 8 cores next to Linux, and the issue's targets."""
    doc = results["cores"]
    counts = doc.get("cores") or [1, 2, 4, 8]
    rows = []
    for r in doc["rows"]:
        mpps = (_num(r.get(f"mpps_{n}")) for n in (counts[0], counts[-1]))
        cyc = (_num(r.get(f"cycles_{n}")) + (" (model)" if r.get(f"engine_{n}") == "model" else "") for n in counts)
        rows.append((r["program"], r["path"] or "n/a", *cyc, *mpps, _num(r.get("linux_veth_native_mpps"))))
    table = _table(("program", "path", *(f"cycles/packet, {n} core{'s' * (n > 1)}" for n in counts),
                    f"Mpps, {counts[0]}", f"Mpps, {counts[-1]}", "Linux native veth Mpps"), rows)
    checks = "\n".join(f"- {c['name']}: {c['value']} (target {c['limit']}), {c['status'].upper()}."
                       for c in doc.get("checks", []))
    res = doc.get("resources")
    if res:
        est = _table(("cores", "LUT (incl. LUTRAM)"), [(n, _num(v)) for n, v in res["lut_by_cores"].items()])
        resources = (f"Resources: yosys `synth_xilinx` of the whole IP with {res['cores']} cores (the reference map "
                     f"of `resources`) takes {_num(res['whole_lut'])} LUT, {_num(res['whole_ff'])} FF and "
                     f"{_num(res['whole_bram36'])} BRAM36: a tile (a core with its packet buffers, helper unit and "
                     f"read copy of the map memory) {_num(res['tile_lut'])} LUT and {_num(res['tile_bram36'])} "
                     f"BRAM36, the shared rest {_num(res['shared_lut'])} LUT. N cores, extrapolated as the shared "
                     "rest and N tiles (one core is the `resources` figure: a tile of several cores has more packet "
                     "buffers, for the reorder stage):"
                     f"\n\n{est}"
                     f"\n\nBeside the rest of the NIC ({_num(res['nic_lut'])} LUT: the paper's Table 1, the reference "
                     f"NIC with hXDP minus hXDP), {res['cores_that_fit']} cores fit the NetFPGA-SUME's Virtex-7 690T "
                     f"({_num(res['device_lut'])} LUT; "
                     + ", ".join(f"{n} by {k.upper().replace('BRAM', 'BRAM36')}"
                                 for k, n in (res.get("fit_by") or {}).items())
                     + "); the targets above count only the core counts that fit.")
    else:
        resources = "Resources per core count: *not measured in this run* (the 2-core synthesis of `cores`)."
    table += ("\n\n(model): the multi-core VLIW model's figure, where the RTL of that many cores refuses the program "
              "(the reasons are in `cores.json`); `-`: refused by both")
    return {"cores_section": f"{table}\n\nThe issue's targets on these figures ({doc.get('engine', 'the model')}):"
                             f"\n\n{checks}\n\n{resources}",
            "cores_engine": str(doc.get("engine", "the VLIW model")),
            "cores_counts": ", ".join(str(n) for n in counts[:-1]) + f" and {counts[-1]}",
            "synth_cores": str(SYNTH_CORES)}


def _behind_facts(results: dict[str, Any]) -> Facts:
    items = [f"- **{c['name']}**: {c['value']} (target {c['limit']}), {c['status'].upper()}."
             for c in results["summary"].get("checks", []) if c["status"] != "pass"]
    by = _by_program(results["resources"]["rows"], "component")
    over = [f"{c} ({_num(r['LUT (incl. LUTRAM)'])} LUT against {_num(r['paper LUT'])})" for c, r in by.items()
            if c != WHOLE and r["paper LUT"] and r["LUT (incl. LUTRAM)"] > r["paper LUT"]]
    if over:
        items.append(f"- **Resources**: over the paper's Table 1 in {_list(over)}; from yosys, not Vivado.")
    sims = _check(results, SIM_TARGET)
    if sims:
        items.append(f"- **Simulator speed**: {sims['value']} (target {sims['limit']}); the measurement varies "
                     "from run to run on a shared machine.")
    return {"behind": "\n".join(items)}

