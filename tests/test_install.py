"""A real install: the wheel, installed into a fresh virtual environment, compiles and runs a program from a folder
outside the checkout (the RTL, the harness and the generated headers ship as package data)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from rtl_support import require_rtl

from hxdp.paths import PROGS_DIR, ROOT

pytestmark = pytest.mark.rtl


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the installed package, not a checkout
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900, env=env)
    assert res.returncode == 0, f"{' '.join(cmd)}: exit {res.returncode}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    return res


def test_wheel_installs_and_runs_outside_the_checkout(tmp_path: Path) -> None:
    require_rtl()
    obj = PROGS_DIR / "build" / "xdp_tx.o"
    if not obj.exists():
        pytest.skip("run `make progs` first")
    # the wheel, built from a copy of the checkout (no build/ or egg-info left in the work tree)
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "out", "__pycache__",
                                                             ".pytest_cache", ".ruff_cache", ".hypothesis"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "dist"),
          str(src)], tmp_path)
    (wheel,) = (tmp_path / "dist").glob("hxdp-*.whl")
    # a fresh environment (its dependencies from this interpreter's site-packages: no network), the wheel in it
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=False)
    py = env_dir / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index", str(wheel)],
         tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copyfile(obj, work / "prog.o")
    shutil.copyfile(PROGS_DIR / "traffic" / "xdp_tx.pcap", work / "in.pcap")
    where = _run([str(py), "-c", "import hxdp.paths as p; print(p.PACKAGE); print(p.ROOT)"], work).stdout.split()
    assert where[0].startswith(str(env_dir)) and where[1] == str(Path(where[0]) / "_data")
    hxdp = env_dir / "bin" / "hxdp"
    _run([str(hxdp), "compile", "prog.o", "-o", "prog.rom"], work)
    out = _run([str(hxdp), "run", "prog.rom", "--pcap", "in.pcap", "--json"], work).stdout
    assert '"action"' in out and (work / "prog.rom").is_file()
