"""Leaf RTL blocks tested on their own with cocotb: the AXI-Lite register slave (driven by cocotbext-axi's
AxiLiteMaster), the divider (sephirot_div, and sephirot_divshare with its signed forms and stall) and the lanes'
port selector. The testbenches are tests/cocotb/tb_*.py; each block is built with Verilator once per source
hash into the hxdp cache ($HXDP_CACHE or ~/.cache/hxdp, folder cocotb/), like the core's model."""

from __future__ import annotations

import fcntl
import hashlib
import sys
from pathlib import Path

import pytest

from hxdp.rtl import sim as rtl

TB_DIR = Path(__file__).parent / "cocotb"
RTL_DIR = rtl.RTL_DIR
LINT_FILE = rtl.LINT_FILE
# Warnings stay warnings (the blocks are linted with -Wall in tests/test_rtl_build.py); -Wno-fatal as the core's build.
BUILD_ARGS = ["-Wno-fatal", "-O2", "--x-assign", "fast", "--x-initial", "fast"]


def _cocotb_runner():
    """cocotb's Python runner, or skip saying what is missing."""
    try:
        import cocotb
    except ImportError:
        pytest.skip("cocotb is not installed (pip install -e .[test])")
    major = int(cocotb.__version__.split(".")[0])
    if major >= 2:
        # cocotb 2 needs Verilator 5.036+; Debian 12 has 5.006, which cocotb 1.8/1.9 support
        pytest.skip(f"these testbenches are written for cocotb 1.8/1.9 (found {cocotb.__version__})")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Python runners ... are an experimental feature"
        from cocotb.runner import get_runner
    return cocotb, get_runner


SIM_TIMEOUT = 300  # seconds of wall clock for one testbench's simulation (a hung one fails instead of waiting)


def _timed(runner):
    """The runner, its simulation given SIM_TIMEOUT seconds (cocotb 1.9's runner runs it without a timeout)."""
    import subprocess

    def execute_cmds(cmds, cwd, stdout=None):
        for cmd in cmds:
            stderr = None if stdout is None else subprocess.STDOUT
            timeout = None if "make" in cmd[0] or "perl" in cmd[0] else SIM_TIMEOUT
            try:
                proc = subprocess.run(cmd, cwd=cwd, env=runner.env, stdout=stdout, stderr=stderr, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise SystemExit(f"{cmd[0]} did not finish in {timeout} s") from None
            if proc.returncode != 0:
                raise SystemExit(f"{cmd[0]!r} terminated with error {proc.returncode}")

    runner._execute_cmds = execute_cmds
    return runner


def _require(*modules: str) -> None:
    for m in modules:
        try:
            __import__(m)
        except ImportError:
            pytest.skip(f"{m} is not installed (pip install -e .[test])")


def _build_dir(top: str, sources: list[Path], params: dict[str, object], cocotb_version: str) -> Path:
    h = hashlib.sha256()
    h.update(rtl.verilator_version().encode())
    h.update(f"cocotb {cocotb_version} {sys.version_info[:2]} {top} {sorted(params.items())} {BUILD_ARGS}".encode())
    for f in [*sources, *sorted(RTL_DIR.glob("*.vh")), LINT_FILE]:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return rtl.cache_root().parent / "cocotb" / f"{top}-{h.hexdigest()[:16]}"


def run_tb(top: str, module: str, sources: list[Path], test_dir: Path, params: dict[str, object] | None = None,
           seed: int = 1, needs: tuple[str, ...] = ()) -> None:
    """Build `top` from `sources` (once: cached by hash) and run the cocotb tests of tests/cocotb/<module>.py in
    test_dir; fails with the end of the simulation's log when a cocotb test fails. Skips (saying why) without
    Verilator, cocotb 1.x or the modules in `needs`."""
    ok, why = rtl.available()
    if not ok:
        pytest.skip(why)
    cocotb, get_runner = _cocotb_runner()
    _require(*needs)
    params = dict(params or {})
    build_dir = _build_dir(top, sources, params, cocotb.__version__)
    runner = _timed(get_runner("verilator"))
    exe = build_dir / top
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir.parent / f".{build_dir.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # pytest-xdist workers: the first builds, the others wait
        if not exe.exists():
            log = build_dir.parent / f".{build_dir.name}.log"
            try:
                runner.build(verilog_sources=[LINT_FILE, *sources], includes=[RTL_DIR], parameters=params,
                             hdl_toplevel=top, build_dir=build_dir, build_args=BUILD_ARGS, log_file=log,
                             clean=True)
            except SystemExit as exc:  # the runner exits on a failed command
                tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
                exe.unlink(missing_ok=True)
                raise AssertionError(f"verilator build of {top} failed: {exc}\n{tail}") from None
            for f in build_dir.iterdir():  # only the simulator is needed to run (it is about a tenth of the build)
                if f != exe:
                    f.unlink()
    log = test_dir / "sim.log"
    from cocotb.runner import get_results

    # the simulator's Python finds the testbench through PYTHONPATH, which the runner makes from sys.path
    sys.path.insert(0, str(TB_DIR))
    try:
        results = runner.test(test_module=module, hdl_toplevel=top, hdl_toplevel_lang="verilog",
                              build_dir=build_dir, test_dir=test_dir, seed=seed, log_file=log)
        ran, failed = get_results(results)
        why = f"{failed} of {ran} cocotb tests failed" if failed else "no cocotb test ran" if ran < 1 else ""
    except SystemExit as exc:  # the runner exits on a failed test or a simulation that did not finish
        why = str(exc)
    finally:
        sys.path.remove(str(TB_DIR))
    if why:
        tail = log.read_text(errors="replace")[-6000:] if log.exists() else ""
        raise AssertionError(f"{top} ({module}): {why}; the end of {log}:\n{tail}")


def rtl_file(name: str) -> Path:
    return RTL_DIR / name


@pytest.mark.rtl
def test_axil_slave(tmp_path: Path) -> None:
    """sephirot_axil under cocotbext-axi's AxiLiteMaster: every documented register, commits, SLVERR, backpressure."""
    run_tb("sephirot_axil", "tb_axil", [rtl_file("sephirot_axil.v")], tmp_path, needs=("cocotbext.axi",))


@pytest.mark.rtl
def test_div_unsigned_core(tmp_path: Path) -> None:
    """sephirot_div: 64-bit unsigned quotient and remainder after 64 / DIV_BITS_PER_CYCLE run cycles, with pauses."""
    run_tb("sephirot_div", "tb_div", [rtl_file("sephirot_div.v")], tmp_path)


@pytest.mark.rtl
def test_divshare_forms_and_stall(tmp_path: Path) -> None:
    """sephirot_divshare: div/mod, signed/unsigned, 32/64-bit against hxdp.models.alu, k * DIV_EXTRA_CYCLES."""
    run_tb("sephirot_divshare", "tb_divshare", [rtl_file("sephirot_div.v"), rtl_file("sephirot_divshare.v")],
           tmp_path)


@pytest.mark.rtl
@pytest.mark.parametrize("np_, dw", [(1, 1), (2, 64), (4, 8)], ids=["np1-load", "np2-store", "np4"])
def test_portsel(np_: int, dw: int, tmp_path: Path) -> None:
    """sephirot_portsel against a Python model of its rule (port p: the lowest requesting lane not yet taken)."""
    run_tb("sephirot_portsel", "tb_portsel", [rtl_file("sephirot_portsel.v")], tmp_path,
           params={"LANES": 4, "NP": np_, "AWD": 32, "DW": dw})
