"""The RTL's map grant shared or exclusive (contract section 8, sephirot_grant.v): the multi-core model's hand-written
cases (tests/test_multicore.py) run on the RTL, each packet's core, start and end cycles the model's."""

from __future__ import annotations

import pytest
from rtl_support import require_rtl
from test_multicore import FRAME, counter, grant_rom, roles, roles_rom

from hxdp.isa.rom import Rom
from hxdp.models.maps import MapState
from hxdp.models.multicore import MulticoreModel
from hxdp.rtl import sim as rtl
from hxdp.rtl.sim import RtlSim

pytestmark = pytest.mark.rtl


def both(rows: list[list], frames: list[bytes], cores: int, maps) -> list:
    """Run the ROM on the RTL and on the model: the RTL's frames (core, start, end, waits) with the stamps shifted by
    its first packet's start, after checking that they, the actions, the cycles and the maps (every core's per-CPU
    copy) are the model's."""
    require_rtl()
    rtl.build(cores=cores)
    rtl_state, model_state = MapState.from_maps(maps), MapState.from_maps(maps)
    sim = RtlSim(Rom(rows), rtl_state.layout, rtl_state, cores=cores)
    results = sim.run_packets(frames)
    model = MulticoreModel(Rom(rows), model_state, cores)
    run = model.run(frames)
    s0 = sim.stamps[0].start
    got = [(s.core, s.start - s0, s.end - s0, r.action, r.cycles) for s, r in zip(sim.stamps, results, strict=True)]
    assert got == [(f.core, f.start, f.end, f.result.action, f.result.cycles) for f in run.frames]
    assert sim.dump_per_cpu() == model.dump_per_cpu()
    return run.frames


def test_shared_readers_run_in_the_same_cycles() -> None:
    # two cores load the map value in a 17-cycle row each, core 1's starting while core 0's goes on: nobody waits
    maps, ptr = counter()
    frames = both(grant_rom(ptr, write=False), [FRAME] * 4, 2, maps)
    assert all(f.waits == 0 for f in frames)
    assert frames[1].start < frames[0].end  # (the rows overlap: frame 0's row holds it to its end but one)


def test_exclusive_row_waits_for_the_shared_rows() -> None:
    # core 0 reads shared; core 1's store (exclusive) waits for that row's end, core 2's shared read waits with it
    maps, ptr = counter()
    frames = both(roles_rom(ptr), roles(0, 1, 2), 3, maps)
    assert [f.waits for f in frames] == [0, 14, 29]


@pytest.mark.parametrize("bytes0", [(2, 1, 1, 2), (1, 2, 1)])
def test_round_robin_decides_between_the_modes(bytes0: tuple[int, ...]) -> None:
    maps, ptr = counter()
    frames = both(roles_rom(ptr), roles(*bytes0), 3, maps)
    assert any(f.waits for f in frames)


@pytest.mark.parametrize(("kind", "waits"), [("percpu_array", [0, 0]), ("array", [0, 15])])
def test_per_cpu_stores_are_shared(kind: str, waits: list[int]) -> None:
    # a store into a per-CPU array writes the core's own copy: shared, both cores' stores together
    maps, ptr = counter(kind)
    frames = both(grant_rom(ptr), [FRAME] * 2, 2, maps)
    assert [f.waits for f in frames] == waits
