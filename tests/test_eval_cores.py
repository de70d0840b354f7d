"""The cores experiment: the multi-core model's point on a main path, and its targets (issue 26) checked honestly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hxdp.eval import harness as H
from hxdp.eval.figures import cores


def test_point_on_the_main_path(tmp_path: Path) -> None:
    """xdp1 on 4 cores: the same results as one core, fewer cycles per packet than on one; its per-CPU counts take
    the map grant shared (each core writes its own copy), so no core waits for another."""
    ctx = H.Context(out=tmp_path, quick=True)
    one, four = cores.m_cores(ctx, "cores:xdp1:1"), cores.m_cores(ctx, "cores:xdp1:4")
    assert one["path"] == four["path"] == "DROP"
    assert one["results_unlike_one_core"] == four["results_unlike_one_core"] == 0
    assert one["grant_wait_cycles_mean"] == four["grant_wait_cycles_mean"] == 0
    assert four["model_cycles"] < one["model_cycles"]
    # the RTL of 1 and 4 cores runs the same packets cycle for cycle as the model
    assert (one["rtl_cycles"], four["rtl_cycles"]) == (one["model_cycles"], four["model_cycles"])
    assert one["rtl_unlike_model"] == four["rtl_unlike_model"] == 0


def row(program: str, cycles: dict[int, float | None], linux: float | None) -> dict:
    r: dict = {"program": program, "path": "TX", "linux_veth_native_mpps": linux, "linux_test_run_mpps": None}
    for n, c in cycles.items():
        r[f"cycles_{n}"] = c
        r[f"mpps_{n}"] = H.CLOCK_MHZ / c if c else None
    return r


@pytest.mark.parametrize("cycles,linux,status", [
    ({1: 2.0, 4: 2.0}, 5.0, "pass"),
    ({1: 40.0, 4: 10.0}, 12.0, "pass"),   # 15.6 Mpps on 4 cores >= 12
    ({1: 40.0, 4: 20.0}, 12.0, "fail"),   # 7.8 Mpps at best
    ({1: None, 4: None}, 12.0, "n/a"),
    ({1: 40.0, 4: 10.0}, float("nan"), "n/a"),
])
def test_faster_than_linux_check(cycles: dict, linux: float | None, status: str) -> None:
    checks = cores.cores_checks([row("xdp_router_ipv4", cycles, linux)], (1, 4))
    assert [c.status for c in checks] == [status]


def test_line_rate_check() -> None:
    checks = cores.cores_checks([row("xdp_redirect", {1: 3.0, 4: 2.5}, None)], (1, 4))
    assert checks[0].status == "pass" and "on 4 core(s)" in checks[0].value
    checks = cores.cores_checks([row("xdp_redirect", {1: 3.0, 4: 2.7}, None)], (1, 4))
    assert checks[0].status == "fail"
    # a count that does not fit the device does not count
    checks = cores.cores_checks([row("xdp_redirect", {1: 3.0, 4: 2.5}, None)], (1, 4), fit=3)
    assert checks[0].status == "fail" and "on 1 core(s)" in checks[0].value


def test_core_resources_from_the_two_core_synthesis() -> None:
    """The tiles of a 2-core synthesis are two parameter variants summed: one tile is half, the rest is shared, and
    N cores are the shared rest and N tiles, checked against the paper's NIC and the 690T."""
    rec = {"status": "ok", "total": {"LUT": 90_000.0, "LUTRAM": 2_000.0, "FF": 10_000.0, "BRAM": 100.0},
           "modules": {"sephirot_tile": {"LUT": 80_000.0, "LUTRAM": 0.0, "BRAM": 90.0}}}
    res = cores.core_resources({cores.synth_key(2): rec}, (1, 2, 4, 8))
    assert (res["tile_lut"], res["shared_lut"], res["tile_bram36"]) == (40_000, 12_000, 45)
    assert res["lut_by_cores"] == {"2": 92_000, "4": 172_000, "8": 332_000}
    assert res["cores_that_fit"] == (433_200 - 38_000 - 12_000) // 40_000
    # block RAM bounds the count when a tile takes more of it: 1,470 BRAM36 - the NIC's 164 - 10 shared, by 300
    rec["modules"]["sephirot_tile"]["BRAM"] = 600.0
    rec["total"]["BRAM"] = 610.0
    res = cores.core_resources({cores.synth_key(2): rec}, (1, 2, 4, 8))
    assert res["fit_by"]["bram"] == (1_470 - 164 - 10) // 300 == res["cores_that_fit"]
    assert cores.core_resources({}, (1, 2)) is None


def test_the_cores_that_fit_are_measured() -> None:
    """The checks count only core counts that fit the device; the most that fit by the committed synthesis must be
    one of the counts the experiment measures, else the line-rate target would be judged on fewer cores."""
    doc = json.loads((Path(__file__).parent.parent / "docs" / "eval" / "cores.json").read_text())
    fit = doc["resources"]["cores_that_fit"]
    assert fit in cores.CORE_COUNTS or fit > max(cores.CORE_COUNTS), f"{fit} cores fit: add {fit} to CORE_COUNTS"
