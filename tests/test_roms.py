"""roms/ holds exactly what the compiler makes of xdp_progs/ today, bit for bit (rebuild with `make roms`)."""

from __future__ import annotations

import pytest

from hxdp.suite import ROMS_DIR, build_roms, programs

SUITE = programs()


def test_every_program_has_a_rom():
    missing = [p.name for p in SUITE if not (ROMS_DIR / f"{p.name}.rom").exists()]
    assert not missing, f"roms/ lacks {missing}: run `make roms`"


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    if not all(p.obj.exists() for p in SUITE):
        pytest.skip("xdp_progs not built (run `make progs`)")
    out = tmp_path_factory.mktemp("roms")
    build_roms(out)
    return out


@pytest.mark.parametrize("name", [p.name for p in SUITE])
@pytest.mark.parametrize("suffix", [".rom", ".maps.json"])
def test_rom_is_up_to_date(rebuilt, name, suffix):
    committed = ROMS_DIR / f"{name}{suffix}"
    fresh = rebuilt / f"{name}{suffix}"
    assert committed.exists(), f"{committed} missing: run `make roms`"
    assert fresh.read_bytes() == committed.read_bytes(), f"{committed} is stale: run `make roms` and commit"


def test_roms_carry_no_paths_or_times(rebuilt):
    for f in rebuilt.iterdir():
        text = f.read_text()
        assert "/work/" not in text and "/tmp/" not in text and str(rebuilt) not in text, f.name
