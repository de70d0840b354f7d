"""Synthesis with yosys: the RTL files of a top module, the yosys run, and its cell counts per module."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from hxdp.eval.harness import Context, NotAvailable, Record
from hxdp.eval.timing import timing_record
from hxdp.paths import RTL_DIR as SEPHIROT_RTL


def rtl_files_for(top: str) -> list[Path]:
    """The RTL files yosys reads to synthesise `top`: the manifest's synthesis target (sephirot/sephirot.core, the
    one list of the RTL's files). yosys keeps only the modules under `top` (hierarchy -top)."""
    from hxdp.rtl import manifest

    try:
        files = manifest.files("synth", "verilogSource")
    except manifest.ManifestError as exc:
        raise NotAvailable(str(exc)) from None
    missing = [f for f in files if not f.exists()]
    if missing:
        raise NotAvailable(f"the manifest lists {missing[0]}, which does not exist")
    names = {m for f in files for m in re.findall(r"^\s*module\s+(\w+)", f.read_text(), re.M)}
    if top not in names:
        raise NotAvailable(f"no module {top} in the manifest's synthesis files ({manifest.CORE_FILE})")
    return files


LUTRAM_CELLS = re.compile(r"^(RAM\d+[XSMD]\w*|SRL\w+)$")
# LUTs (SLICEM LUT6 sites) one distributed-RAM cell occupies (7-series); a cell not listed counts as one
LUTRAM_SITES = {"RAM32X1S": 1, "RAM64X1S": 1, "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1S": 2, "RAM128X1D": 4,
                "RAM256X1S": 4, "RAM32M": 4, "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8}
FF_CELLS = re.compile(r"^(FD[RSCPE]+\w*|LD\w*)$")


# yosys 0.23's `stat -json` also prints the text listing of a hierarchy deeper than one level ("    sephirot_div  1")
# in the middle of the JSON; those lines are dropped before parsing
_STAT_TEXT_LINE = re.compile(r"^\s+[^\s\"{}\[\]][^\"]*\s\d+\s*$")


def parse_stat_json(text: str) -> dict[str, Any]:
    """The document of yosys `stat -json`, tolerating yosys 0.23's stray hierarchy lines."""
    try:
        return json.loads(text)
    except ValueError:
        return json.loads("\n".join(line for line in text.splitlines() if not _STAT_TEXT_LINE.match(line)))


def module_name(cell_type: str) -> str:
    """The plain module name of a yosys module or cell type: `$paramod$HASH\\sephirot_stack` and
    `$paramod\\sephirot_lane\\AW=s32'...` name the modules sephirot_stack and sephirot_lane."""
    m = re.match(r"^\$paramod(?:\$[0-9a-f]+)?\\([^\\]+)", cell_type)
    return m.group(1) if m else cell_type.lstrip("\\")


def _add_stats(into: dict[str, dict[str, float]], name: str, st: dict[str, float]) -> None:
    have = into.setdefault(name, {})
    for k, v in st.items():
        have[k] = have.get(k, 0.0) + v


def synth_stats(doc: dict[str, Any], full_names: bool = False) -> dict[str, dict[str, float]]:
    """Per module LUT/LUTRAM/FF/BRAM/DSP from yosys `stat -json` (LUT counts LUT1-6, not the MUXF7/8; LUTRAM
    counts the LUTs the distributed-RAM cells occupy, e.g. 4 for a RAM64M). Keyed by the plain module name, the
    variants of a module built with different parameters summed (`full_names`: by yosys's own names, one entry a
    variant)."""
    out: dict[str, dict[str, float]] = {}
    for mod, info in doc.get("modules", {}).items():
        cells = info.get("num_cells_by_type", {})
        st = {"LUT": 0.0, "LUTRAM": 0.0, "FF": 0.0, "BRAM": 0.0, "DSP": 0.0, "CARRY4": 0.0}
        for cell, n in cells.items():
            if re.match(r"^LUT[1-6]$", cell):
                st["LUT"] += n
            elif LUTRAM_CELLS.match(cell):
                st["LUTRAM"] += n * LUTRAM_SITES.get(cell, 1)
            elif FF_CELLS.match(cell):
                st["FF"] += n
            elif cell.startswith("RAMB36"):
                st["BRAM"] += n
            elif cell.startswith("RAMB18"):
                st["BRAM"] += n / 2
            elif cell.startswith("DSP48"):
                st["DSP"] += n
            elif cell == "CARRY4":
                st["CARRY4"] += n
        _add_stats(out, mod if full_names else module_name(mod), st)
    return out


def hierarchy_totals(doc: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per module, its own cells plus those of every submodule instance (recursively), keyed by the plain module
    name. The instances are followed by yosys's full names: the variants of one module (sephirot_portsel with
    different widths, say) differ in size, and taking one for all of them over-counted the whole IP by 1K LUTs.
    The variants of a module are summed, one of each."""
    # (a plain module is "\\mid" among the modules and "mid" as a cell type; a variant is "$paramod..." in both)
    own = {m.lstrip("\\"): st for m, st in synth_stats(doc, full_names=True).items()}
    cells = {m.lstrip("\\"): {c.lstrip("\\"): n for c, n in info.get("num_cells_by_type", {}).items()}
             for m, info in doc.get("modules", {}).items()}
    memo: dict[str, dict[str, float]] = {}

    def total(m: str, depth: int = 0) -> dict[str, float]:
        if m in memo:
            return memo[m]
        t = dict(own.get(m, {}))
        if depth < 32:
            for cell, n in cells.get(m, {}).items():
                if cell in cells and cell != m:
                    for k, v in total(cell, depth + 1).items():
                        t[k] = t.get(k, 0.0) + n * v
        memo[m] = t
        return t

    out: dict[str, dict[str, float]] = {}
    for m in cells:
        _add_stats(out, module_name(m), total(m))
    return out


# run one after the other in the background; HXDP_SYNTH_TIMEOUT=SECONDS overrides them all (sephirot_top took
# 1,242 s on the shared machine with the netlist written for the timing estimate)
SYNTH_TIMEOUT_S = {"sephirot_core": 1200, "sephirot_helpers": 900, "sephirot_top": 2400, "sephirot_pktbuf": 900}
SYNTH_DEFAULT_TIMEOUT_S = 600  # any other module
SYNTH_MEMORY_BYTES = 6 << 30  # address-space limit of yosys: the machine is shared
YOSYS_VERSION = "0.23 (Debian)"


def _limit_memory() -> None:
    """In the yosys child: cap its memory and keep it off CPU 0, where the Linux baseline pins itself."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (SYNTH_MEMORY_BYTES, SYNTH_MEMORY_BYTES))
    cpus = os.sched_getaffinity(0)
    if len(cpus) > 1:
        os.sched_setaffinity(0, cpus - {0})


def yosys_script(top: str, files: list[Path], params: str, stat_json: Path, blif: Path | None = None) -> str:
    """read the files, set the parameters P=V,... of `top` (chparam), synth_xilinx for 7-series, stat as JSON;
    with `blif`, then the netlist flattened (after the count: flattening a mapped netlist only joins its modules)
    for the timing estimate (hxdp.eval.timing)."""
    chparam = "".join(f" -set {p} {v}" for p, v in (kv.split("=", 1) for kv in params.split(",") if kv))
    return (f"read_verilog -sv -I{SEPHIROT_RTL} " + " ".join(str(f) for f in files) + "; "
            + (f"chparam{chparam} {top}; " if chparam else "")
            + f"synth_xilinx -family xc7 -top {top}; tee -q -o {stat_json} stat -json"
            + (f"; flatten; write_blif -param {blif}" if blif is not None else ""))


def _failure(proc: subprocess.CompletedProcess[str]) -> str:
    err = (proc.stderr or "").strip().splitlines()
    why = err[-1] if err else "no output"
    if "bad_alloc" in (proc.stderr or "") or proc.returncode in (-6, -9, 134, 137):
        why = f"out of memory (limit {SYNTH_MEMORY_BYTES >> 30} GB): {why}"
    return f"yosys failed (exit {proc.returncode}): {why}"


def m_synth(ctx: Context, key: str) -> Record:
    """synth:MODULE[:P=V,...]: yosys synth_xilinx (7-series) of MODULE (sephirot_top, sephirot_core) with its
    parameters P set to V (chparam), hierarchy kept."""
    yosys = shutil.which("yosys")
    if yosys is None:
        raise NotAvailable("yosys is not installed")
    top, _, params = key.split(":", 1)[1].partition(":")
    files = rtl_files_for(top)
    timeout = int(os.environ.get("HXDP_SYNTH_TIMEOUT", 0)) or SYNTH_TIMEOUT_S.get(top, SYNTH_DEFAULT_TIMEOUT_S)
    with tempfile.TemporaryDirectory(prefix="hxdp-synth-") as tmp:
        stat_json = Path(tmp) / "stat.json"
        blif = Path(tmp) / "netlist.blif"
        t0 = time.perf_counter()
        work = (ctx.out / "work").resolve()  # yosys runs in the temporary folder: a relative --out is not there
        try:
            work.mkdir(exist_ok=True)
            proc = subprocess.run([yosys, "-l", str(work / f"yosys-{top}.log"), "-p",
                                   yosys_script(top, files, params, stat_json, blif)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=timeout,
                                  cwd=tmp, preexec_fn=_limit_memory)
        except subprocess.TimeoutExpired:  # a result: the RTL did not synthesise within the budget
            return {"top": top, "synth_failed": f"yosys synth_xilinx did not finish within {timeout} s",
                    "seconds": timeout}
        dt = time.perf_counter() - t0
        if proc.returncode != 0 or not stat_json.exists():
            return {"top": top, "seconds": round(dt, 1), "synth_failed": _failure(proc)}
        doc = parse_stat_json(stat_json.read_text())
        timing = timing_record(blif.read_text()) if blif.exists() else None
    hier = hierarchy_totals(doc)
    return {"top": top, "params": params, "seconds": round(dt, 1), "modules": hier, "own": synth_stats(doc),
            "total": hier.get(top, {}), "yosys": YOSYS_VERSION, "files": [f.name for f in files],
            "timing": timing}
