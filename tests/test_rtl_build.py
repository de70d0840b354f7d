"""The Verilator model build: profile-guided when clang and llvm-profdata are there, an ordinary build otherwise."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hxdp.rtl import sim as rtl


def _fake_verilate(calls: list[str]):
    def verilate(obj: Path, inputs: list[Path], flags: list[str], cflags: str, binary: str, top: str,
                 error: type, verbose: bool, ldflags: str = "") -> Path:
        calls.append(cflags)
        obj.mkdir(parents=True, exist_ok=True)
        (obj / binary).write_text("model")
        return obj / binary
    return verilate


def test_failed_training_gives_an_ordinary_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(rtl, "_verilate", _fake_verilate(calls))

    def train(exe: Path, env: dict[str, str]) -> None:
        assert "LLVM_PROFILE_FILE" in env and exe.exists()
        raise rtl.RtlError("no traffic to train on")

    exe = rtl.verilator_build(tmp_path / "b", [], [], "-O2", "sim", "top", rtl.RtlError, train=train)
    assert exe.read_text() == "model"
    assert calls[0].endswith("-fprofile-instr-generate") and "profile-instr-use" not in calls[-1]
    note = (tmp_path / "b" / "build.txt").read_text()
    assert note.startswith("ordinary build") and "no traffic to train on" in note
    assert not (tmp_path / "b" / "pgo-gen").exists(), "the instrumented build was left behind"


def test_training_without_profile_output_gives_an_ordinary_build(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(rtl, "_verilate", _fake_verilate(calls))
    rtl.verilator_build(tmp_path / "b", [], [], "-O2", "sim", "top", rtl.RtlError, train=lambda exe, env: None)
    assert "wrote no profile" in (tmp_path / "b" / "build.txt").read_text()
    assert "profile-instr-use" not in calls[-1]


@pytest.mark.rtl
def test_model_is_profile_guided_when_the_tools_are_there() -> None:
    ok, why = rtl.available()
    if not ok:
        pytest.skip(why)
    if not rtl.pgo_available():
        pytest.skip("clang++ or llvm-profdata missing (or HXDP_NO_PGO set): the model is an ordinary build")
    note = (rtl.build().parent / "build.txt").read_text()
    assert note.startswith("profile-guided build"), note


def test_missing_training_program_gives_an_ordinary_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(rtl, "_verilate", _fake_verilate(calls))
    monkeypatch.setattr(rtl, "PGO_PROGRAMS", ("no_such_program",))
    rtl.verilator_build(tmp_path / "b", [], [], "-O2", "sim", "top", rtl.RtlError, train=rtl._train_model)
    assert "no_such_program is not in xdp_progs/" in (tmp_path / "b" / "build.txt").read_text()


def _instantiated(module: str) -> set[str]:
    """The sephirot_* modules `module` instantiates, directly or below."""
    found: set[str] = set()
    todo = [module]
    while todo:
        text = (rtl.RTL_DIR / f"{todo.pop()}.v").read_text()
        for sub in re.findall(r"^\s*(sephirot_\w+)\s+(?:#\s*\(.*?\)\s*)?u_\w+\s*\(", text, re.M | re.S):
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return found


def test_model_sources_cover_every_module_under_the_top() -> None:
    """Every module under sephirot_top is a Verilator input of the model and part of its cache key (a module
    found only on the include path was missing from the key: editing it alone left the cached model stale)."""
    below = _instantiated("sephirot_top")
    assert {"sephirot_core", "sephirot_regfile", "sephirot_stack"} <= below
    inputs = {f.stem for f in rtl.verilog_files()}
    assert below - inputs == set()
    keyed = {f.name for f in rtl.sources()}
    assert {f"{m}.v" for m in below} <= keyed
