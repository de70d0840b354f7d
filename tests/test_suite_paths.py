"""xdp_progs/paths.json names every suite program's main path, one its traffic takes; a missing one is an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hxdp.suite import SuiteError, SuiteProgram, main_paths, programs

SUITE = programs()


@pytest.mark.parametrize("prog", SUITE, ids=[p.name for p in SUITE])
def test_every_program_names_a_main_path_its_traffic_takes(prog: SuiteProgram) -> None:
    path = prog.main_path()
    expected = prog.expected_actions()
    assert expected.get(path, 0) > 0, f"{prog.name}: main path {path} is not in expect/{prog.name}.json {expected}"


def test_no_entry_without_a_program() -> None:
    assert sorted(set(main_paths()) - {p.name for p in SUITE}) == []


def test_a_program_without_an_entry_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "expect").mkdir()
    (tmp_path / "new_prog.c").write_text("/* new */\n")
    (tmp_path / "paths.json").write_text(json.dumps({"other": "TX"}))
    (prog,) = programs(tmp_path)
    with pytest.raises(SuiteError, match="no main path for new_prog"):
        prog.main_path()


def test_a_main_path_must_be_an_action(tmp_path: Path) -> None:
    (tmp_path / "paths.json").write_text(json.dumps({"p": "FORWARD"}))
    with pytest.raises(SuiteError, match="not an XDP action"):
        main_paths(tmp_path)
