"""The FuseSoC manifest sephirot/sephirot.core: the one list of RTL files, complete, and usable by FuseSoC."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hxdp.paths import HARNESS_DIR, RTL_DIR, SEPHIROT
from hxdp.rtl import manifest
from hxdp.rtl import sim as rtl


def test_every_rtl_file_is_listed_once() -> None:
    listed = [p for p in manifest.files("lint_sim", includes=True) if p.suffix in (".v", ".vh")]
    assert len(listed) == len(set(listed))
    assert set(listed) == set(RTL_DIR.glob("*.v")) | set(RTL_DIR.glob("*.vh"))


def test_targets_name_existing_files_and_their_tops() -> None:
    for t in ("sim", "board_sim", "lint", "lint_sim", "synth"):
        for p in manifest.files(t, includes=True):
            assert p.is_file(), f"{t}: {p} is listed but missing"
    assert manifest.toplevel("sim") == rtl.TOP == "sephirot_top"
    assert manifest.toplevel("board_sim") == "sephirot_board"
    assert HARNESS_DIR / "sephirot_params.h" in manifest.sources("sim")
    # the model's cache key covers the manifest itself and every RTL file
    assert manifest.CORE_FILE in rtl.sources() and set(RTL_DIR.glob("*.v")) <= set(rtl.sources())


def test_unknown_target_is_a_clear_error() -> None:
    with pytest.raises(manifest.ManifestError, match="no target 'nope'"):
        manifest.files("nope")


@pytest.mark.skipif(importlib.util.find_spec("fusesoc") is None or shutil.which("verilator") is None,
                    reason="fusesoc or verilator is not installed")
def test_fusesoc_lints_the_manifest(tmp_path: Path) -> None:
    """`make lint`'s Verilog step: FuseSoC reads the manifest and runs verilator --lint-only -Wall, clean."""
    fusesoc = [sys.executable, "-c",
               "import sys; from fusesoc.main import main; sys.argv[0] = 'fusesoc'; sys.exit(main())"]
    res = subprocess.run([*fusesoc, "--cores-root", str(SEPHIROT), "run", "--build-root", str(tmp_path), "--target",
                          "lint", "hxdp:sephirot:core"], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
