"""The throughput figures give each program's main path, the mix only as an extra column; no main path, no run."""

from __future__ import annotations

import pytest

import hxdp.suite
from hxdp.eval.figures.throughput import throughput_rows
from hxdp.eval.harness import ExperimentError
from hxdp.eval.measure import program_paths

ROUTER = "xdp_router_ipv4"


def _records() -> dict[str, dict]:
    def rtl(cycles: float) -> dict:
        return {"status": "ok", "rtl_cycles": cycles, "rtl_mpps": 156.25 / cycles, "method": "m",
                "model_mismatches": 0, "trace": "t", "off_path": 0}

    return {
        f"rtl:{ROUTER}:path-REDIRECT": rtl(40.0), f"rtl:{ROUTER}:path-DROP": rtl(20.0),
        f"rtl:{ROUTER}:path-PASS": rtl(29.0), f"rtl:{ROUTER}": rtl(29.0),
        f"model:{ROUTER}:path-REDIRECT": {"status": "ok", "model_cycles": 38.0},
        f"linux:{ROUTER}": {"status": "ok", "veth_native_paths": {"REDIRECT": 3.6, "DROP": 5.8, "PASS": 2.8},
                            "veth_native_verified": {"REDIRECT": True, "DROP": True, "PASS": True},
                            "test_run_paths": {"REDIRECT": 12.0}, "test_run_verified": {"REDIRECT": False},
                            "veth_native_mix_mpps": 3.1, "loadavg": [[1.0, 1.0, 1.0], [1.5, 1.0, 1.0]]},
    }


def test_a_row_is_the_main_path_and_the_mix_an_extra_column() -> None:
    assert program_paths(ROUTER)[0] == "REDIRECT"
    (row,) = throughput_rows([ROUTER], _records())
    assert (row["path"], row["rtl_cycles"], row["model_cycles"]) == ("REDIRECT", 40.0, 38.0)
    assert (row["linux_veth_native_mpps"], row["linux_test_run_mpps"]) == (3.6, 12.0)
    assert row["linux_path_checked"] is False  # one mode did not stay on the path: the row says so
    assert (row["mix_rtl_cycles"], row["mix_linux_veth_native_mpps"]) == (29.0, 3.1)
    assert row["other_paths"]["DROP"]["rtl_cycles"] == 20.0
    assert row["other_paths"]["DROP"]["linux_veth_native_mpps"] == 5.8


def test_a_program_without_a_main_path_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hxdp.suite, "main_paths", lambda progs_dir=None: {})
    with pytest.raises(ExperimentError, match=f"no main path for {ROUTER}"):
        program_paths(ROUTER)
