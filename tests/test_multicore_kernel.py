"""The kernel comparison on 2 cores (`hxdp diff --cores 2`): each packet runs in the kernel on the CPU of its core,
per-CPU maps are compared core by core (docs/execution_contract.md section 8, "The kernel comparison")."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import compile_bpf
from kernel_fixtures import kernel_test

from hxdp import suite
from hxdp.cli import main
from hxdp.diffcores import run_diff_cores
from hxdp.linux.kernel import KernelProgram
from hxdp.traffic.pcap import read_pcap, write_pcap

pytestmark = [*kernel_test, pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")]
RACE = Path(__file__).parent / "data" / "multicore" / "race.c"
FLOWS_SET = {"maps": {"flows": [{"key": f"0{k}000000", "value": "0000000000000000"} for k in range(4)]}}


@pytest.fixture(scope="module")
def race_obj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_bpf(RACE, tmp_path_factory.mktemp("race"))


def frames(n: int) -> list[bytes]:
    return [bytes([i % 4]) + bytes(range(1, 64)) for i in range(n)]


def test_per_cpu_program_equals_the_kernel_on_two_cores() -> None:
    """xdp1 counts per protocol in a per-CPU array: both cores get frames, and CPU 1's slots are compared with core
    1's copy (they hold counts: the comparison is not of zeros)."""
    sp = suite.program("xdp1")
    packets = read_pcap(sp.traffic)
    report = run_diff_cores(sp.obj, packets, sp.map_config(), 2)
    assert report.ok, report.divergence and report.divergence.render()
    with KernelProgram(sp.obj) as k:
        for i, p in enumerate(packets):
            k.run(p, cpu=sorted(os.sched_getaffinity(0))[i % 2])
        assert any(any(v) for v in k.dump(cpu=sorted(os.sched_getaffinity(0))[1])["rxcnt"].values())


def test_processor_id_and_counts_equal_the_kernel(race_obj: Path) -> None:
    """The race program writes get_smp_processor_id into each frame: equal only if the kernel ran the frame on its
    core's CPU. With the flows present from the start, no insert race: frames and maps equal the kernel's."""
    report = run_diff_cores(race_obj, frames(24), FLOWS_SET, 2)
    assert report.ok, report.divergence and report.divergence.render()
    assert report.packets == 24


def test_insert_race_shows_in_the_comparison(race_obj: Path) -> None:
    """Without the flows, the two cores race on the first insert (total[1] = 1), which the kernel running the frames
    one after another never does: the comparison reports that map, as two Linux CPUs would differ from one."""
    report = run_diff_cores(race_obj, [bytes([0]) + bytes(range(1, 64))] * 6, None, 2)
    assert report.divergence is not None and report.divergence.what == "map"
    assert any("map total key 01000000" in line for line in report.divergence.detail)


def test_cli_diff_on_two_cores(race_obj: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pcap = tmp_path / "race.pcap"
    write_pcap(pcap, frames(8))
    maps = tmp_path / "maps.json"
    maps.write_text(json.dumps(FLOWS_SET))
    assert main(["diff", str(race_obj), "--pcap", str(pcap), "--maps", str(maps), "--cores", "2"]) == 0
    assert "8 packets identical to the kernel on vliw-model on 2 cores" in capsys.readouterr().out
