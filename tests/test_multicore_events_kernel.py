"""Records to the host on several cores against the kernel (`hxdp diff --cores N`): core k's packets run on CPU k's
kernel, a perf record of core k is compared with the one the kernel wrote on that CPU, ring records by content per
packet (docs/execution_contract.md section 8, "The kernel comparison")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import compile_bpf
from kernel_fixtures import kernel_test
from test_multicore_events import EVENTS, event_frames

from hxdp import suite
from hxdp.diffcores import run_diff_cores
from hxdp.traffic.pcap import read_pcap

pytestmark = [*kernel_test, pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")]


@pytest.fixture(scope="module")
def events_obj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_bpf(EVENTS, tmp_path_factory.mktemp("events"))


@pytest.mark.parametrize("cores", [2, 4])
def test_event_records_equal_the_kernel(events_obj: Path, cores: int) -> None:
    """Perf records on the running CPU and ring records (output, submitted, discarded) of 2 and 4 cores: every packet's
    records are the kernel's on its core's CPU (4 cores on a 2-CPU machine: cores 0 and 2 on the first CPU)."""
    packets = event_frames(32)
    report = run_diff_cores(events_obj, packets, None, cores)
    assert report.ok, report.divergence and report.divergence.render()
    assert report.packets == len(packets) and report.events > len(packets) // 2


def test_flowevents_on_two_cores_equals_the_kernel() -> None:
    sp = suite.program("xdp_flowevents")
    report = run_diff_cores(sp.obj, read_pcap(sp.traffic), sp.map_config(), 2, prog=sp.prog, sizes=sp.sizes())
    assert report.ok, report.divergence and report.divergence.render()
    assert report.events > 0


def test_pktcap_sequence_race_shows_in_the_comparison() -> None:
    """xdp_pktcap's read-then-add sequence number: the second core's first record repeats the first core's number,
    which the kernel running the frames one after another never does; the comparison names that record."""
    sp = suite.program("xdp_pktcap")
    report = run_diff_cores(sp.obj, read_pcap(sp.traffic), sp.map_config(), 2, prog=sp.prog, sizes=sp.sizes())
    assert report.divergence is not None and report.divergence.what == "events"
    assert report.divergence.packet == 1 and "perf capture cpu 1" in "\n".join(report.divergence.detail)
