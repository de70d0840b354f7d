"""The kernel comparison of the RTL's cores (`hxdp diff --engine rtl --cores N`): each packet runs in the kernel on the
CPU of the core the RTL's dispatcher gave it, per-CPU maps compared core by core (docs/execution_contract.md section
8, "The kernel comparison")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import compile_bpf
from kernel_fixtures import kernel_test
from rtl_support import require_rtl

from hxdp import suite
from hxdp.cli import main
from hxdp.diffcores import run_diff_cores
from hxdp.rtl import sim as rtl
from hxdp.traffic.pcap import read_pcap, write_pcap

pytestmark = [*kernel_test, pytest.mark.rtl,
              pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")]

RACE = Path(__file__).parent / "data" / "rtl_cores" / "race.c"


def _require() -> None:
    require_rtl()
    rtl.build(cores=2)


def test_per_cpu_program_equals_the_kernel_on_two_rtl_cores() -> None:
    # xdp1 counts per protocol in a per-CPU array: core k's copy against CPU k's slots
    _require()
    sp = suite.program("xdp1")
    report = run_diff_cores(sp.obj, read_pcap(sp.traffic), sp.map_config(), 2, engine="rtl")
    assert report.ok, report.divergence and report.divergence.render()
    assert report.packets == len(read_pcap(sp.traffic))


def test_processor_id_and_counters_equal_the_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the race program writes get_smp_processor_id into each frame (equal only if the kernel ran it on its core's
    # CPU) and counts every frame atomically and under a spin lock
    _require()
    obj = compile_bpf(RACE, tmp_path)
    pcap = tmp_path / "race.pcap"
    write_pcap(pcap, [bytes([i % 2, i]) + bytes(62) for i in range(16)])
    assert main(["diff", str(obj), "--pcap", str(pcap), "--engine", "rtl", "--cores", "2"]) == 0
    out = capsys.readouterr().out
    assert "rtl on 2 cores" in out


def test_insert_race_shows_in_the_rtl_comparison(tmp_path: Path) -> None:
    # tests/data/multicore/race.c inserts a flow on its first frame: two RTL cores race on that insert, which the
    # kernel running the frames one after another never does, and the comparison reports the map
    _require()
    obj = compile_bpf(Path(__file__).parent / "data" / "multicore" / "race.c", tmp_path)
    report = run_diff_cores(obj, [bytes([0]) + bytes(range(1, 64))] * 6, None, 2, engine="rtl")
    assert report.divergence is not None and report.divergence.what == "map"
