"""Records to the host on the RTL's cores (execution contract section 8, "Events"): each packet's records, perf
records on the core's CPU, ring reservations in the core's own copy of the ring (sephirot_percpu), all cores'
records in the order their rows ended, as the multi-core model; and against the kernel (`hxdp diff --engine rtl
--cores 2`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import compile_bpf
from kernel_fixtures import kernel_test
from rtl_support import require_rtl
from test_multicore_events import EVENTS, event_frames

from hxdp import suite
from hxdp.diff import _EngineRunner
from hxdp.diffcores import run_diff_cores
from hxdp.events import run_events
from hxdp.models.multicore import MulticoreModel
from hxdp.rtl import sim as rtl
from hxdp.rtl.sim import RtlSim
from hxdp.traffic.pcap import read_pcap

pytestmark = pytest.mark.rtl
CORES = 2
two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")


@pytest.fixture(scope="module")
def events_obj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_rtl()
    rtl.build(cores=CORES)
    return compile_bpf(EVENTS, tmp_path_factory.mktemp("events"))


def runs(obj: Path, packets: list[bytes], cores: int = CORES) -> tuple[list, RtlSim, object]:
    """The RTL's and the model's run of `packets` on `cores` cores, each on a fresh map state."""
    a = _EngineRunner("vliw-model", obj, None, None, {"maps": {}})
    sim = RtlSim(a.model.rom, a.state.layout, a.state, cores=cores)
    results = sim.run_packets(packets)
    b = _EngineRunner("vliw-model", obj, None, None, {"maps": {}})
    return results, sim, MulticoreModel(b.model.rom, b.state, cores).run(packets)


@pytest.mark.parametrize("cores", [2, 4])  # (tests/test_rtl_multicore.py builds both)
def test_records_and_their_order_equal_the_model(events_obj: Path, cores: int) -> None:
    """64-byte frames (the RTL's rows then never wait for packet bytes, so its cycles are the model's): every packet
    on the same core with the same records, perf records on the core's CPU, and the records of all cores in the
    model's order at the model's cycles, a later packet's record before an earlier one's somewhere."""
    results, sim, run = runs(events_obj, event_frames(64, sizes=(64,)), cores)
    assert [s.core for s in sim.stamps] == [f.core for f in run.frames]
    assert [r.events for r in results] == [f.result.events for f in run.frames]
    assert {e.cpu for r in results for e in r.events if e.kind == "perf"} == set(range(cores))
    s0 = sim.stamps[0].start
    ours = [(e.packet, e.kind, e.cycle - s0) for e in run_events(results)]
    assert ours == [(e.packet, e.kind, e.cycle) for e in run.events] and len(ours) > 32
    if cores == 4:
        assert [p for p, _, _ in ours] != sorted(p for p, _, _ in ours)


def test_one_core_sends_records_at_a_time(events_obj: Path) -> None:
    """The test build's assertion (sephirot_top, SEPH_ASSERT) that at most one core sends event words or a record in a
    cycle, which the board's one event ring relies on, holds on 2 cores sending records as fast as they can."""
    a = _EngineRunner("vliw-model", events_obj, None, None, {"maps": {}})
    exe = rtl.build(assertions=True, cores=CORES)
    results = RtlSim(a.model.rom, a.state.layout, a.state, cores=CORES, exe=exe).run_packets(
        event_frames(64, sizes=(64,)))
    assert sum(len(r.events) for r in results) > 64


def test_records_per_packet_with_frames_of_any_size(events_obj: Path) -> None:
    """Frames of 62 to 200 bytes: the RTL's waits for packet bytes move its cycles off the model's, but every packet
    still sends the records one core sends (a ring reservation written into another core's would not)."""
    packets = event_frames(48)
    results, sim, _ = runs(events_obj, packets)
    a = _EngineRunner("vliw-model", events_obj, None, None, {"maps": {}})
    one = MulticoreModel(a.model.rom, a.state, 1).run(packets)
    assert [[(e.kind, e.data) for e in r.events] for r in results] == \
        [[(e.kind, e.data) for e in f.result.events] for f in one.frames]
    for r, st in zip(results, sim.stamps, strict=True):
        assert all(e.cpu == (st.core if e.kind == "perf" else 0) for e in r.events)


@pytest.mark.parametrize("name", ["events", "xdp_flowevents"])
@pytest.mark.kernel
@kernel_test[1]
@two_cpus
def test_records_equal_the_kernel(events_obj: Path, name: str) -> None:
    if name == "events":
        report = run_diff_cores(events_obj, event_frames(32), None, CORES, engine="rtl")
    else:
        sp = suite.program(name)
        report = run_diff_cores(sp.obj, read_pcap(sp.traffic), sp.map_config(), CORES, prog=sp.prog,
                                sizes=sp.sizes(), engine="rtl")
    assert report.ok, report.divergence and report.divergence.render()
    assert report.events > 0
