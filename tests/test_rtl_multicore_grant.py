"""The RTL's map grant in its four modes (contract section 8, sephirot_grant.v): the multi-core model's hand-written
cases (tests/test_multicore.py) run on the RTL, each packet's core, start and end cycles, output and the maps the
model's."""

from __future__ import annotations

import pytest
from bpf_asm import alu64, atomic, ldx, stx
from rtl_support import require_rtl
from test_multicore import (
    ADD,
    FRAME,
    VISIBILITY,
    counter,
    grant_rom,
    keyed_cases,
    roles,
    roles_rom,
    trio_maps,
    trio_rom,
    two_values,
)

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
    got = [(s.core, s.start - s0, s.end - s0, r.action, r.cycles, r.packet)
           for s, r in zip(sim.stamps, results, strict=True)]
    assert got == [(f.core, f.start, f.end, f.result.action, f.result.cycles, f.result.packet) for f in run.frames]
    assert sim.dump_per_cpu() == model.dump_per_cpu()
    return run.frames


def test_shared_readers_run_in_the_same_cycles() -> None:
    # two cores load the map value in a 17-cycle row each, core 1's starting while core 0's goes on: nobody waits
    maps, ptr = counter()
    frames = both(grant_rom(ptr, write=False), [FRAME] * 4, 2, maps)
    assert all(f.waits == 0 for f in frames)
    assert frames[1].start < frames[0].end  # (the rows overlap: frame 0's row holds it to its end but one)


def test_exclusive_row_waits_for_the_shared_rows() -> None:
    # core 0 reads shared; core 1's store off chip (exclusive) waits for that row's end, core 2's shared read waits
    # with it
    maps, ptr, far = two_values()
    frames = both(roles_rom(ptr, far), roles(0, 1, 2), 3, maps)
    assert [f.waits for f in frames] == [0, 14, 29]


@pytest.mark.parametrize("bytes0", [(2, 1, 1, 2), (1, 2, 1)])
def test_round_robin_decides_between_the_modes(bytes0: tuple[int, ...]) -> None:
    maps, ptr, far = two_values()
    frames = both(roles_rom(ptr, far), roles(*bytes0), 3, maps)
    assert any(f.waits for f in frames)


@pytest.mark.parametrize(("kind", "waits"), [("percpu_array", [0, 0]), ("array", [0, 15])])
def test_per_cpu_stores_go_together_writers_one_at_a_time(kind: str, waits: list[int]) -> None:
    # a store into a per-CPU array writes the core's own copy: apart, both cores' stores together; into an array,
    # write: one writer at a time
    maps, ptr = counter(kind)
    frames = both(grant_rom(ptr), [FRAME] * 2, 2, maps)
    assert [f.waits for f in frames] == waits


@pytest.mark.parametrize(("bytes0", "loads"), [((0, 1, 2, 2, 2), [0, 0, 0, 0]), ((0, 0, 1, 0), [0, 0, 3])])
def test_write_row_beside_shared_readers_seen_after_its_last_cycle(bytes0: tuple[int, ...], loads: list[int]) -> None:
    # 3 cores, nobody waits: the write row (byte 1, a store of 3 into a's value in 17 cycles) holds the grant beside
    # the shared loads of it; (0, 1, 2, 2, 2): its row's last cycle is 22, the last frame loads in 22 and reads 0; (0,
    # 0, 1, 0): it ends in 24 and the last frame's 17-cycle row loads from 25 on: 3
    maps, ptrs = trio_maps()
    frames = both(trio_rom(VISIBILITY, ptrs), roles(*bytes0), 3, maps)
    assert all(f.waits == 0 for f in frames)
    assert [f.result.packet[1] for f in frames if f.result.packet[0] != 1] == loads


APART_WRITE = [[stx("dw", 8, 5, 0), alu64("div", 6, src=5)], [stx("dw", 1, 5, 0), alu64("div", 6, src=5)],
               [atomic("dw", 7, 5, 0, ADD), alu64("div", 6, src=5)]]


@pytest.mark.parametrize(("bytes0", "waits"), [((1, 2), [0, 15]), ((1, 0), [0, 16]), ((0, 1), [0, 14]),
                                               ((0, 0), [0, 0])])
def test_one_writer_at_a_time_apart_rows_not_beside_it(bytes0: tuple[int, ...], waits: list[int]) -> None:
    # 2 cores: a writer (a store, an atomic) waits for a writer and for an apart row (a per-CPU store), and an apart
    # row for a writer; apart rows go together
    maps, ptrs = trio_maps()
    frames = both(trio_rom(APART_WRITE, ptrs), roles(*bytes0), 2, maps)
    assert [f.waits for f in frames] == waits


def test_writer_deciding_lets_shared_rows_pass() -> None:
    # 3 cores: core 1's writer decides and waits for core 0's apart row; core 2's shared load goes beside them; its
    # next frame's apart row waits for the writer
    maps, ptrs = trio_maps()
    rom = trio_rom([APART_WRITE[0], APART_WRITE[1], [ldx("dw", 4, 7, 0)]], ptrs)
    frames = both(rom, roles(0, 1, 2, 0), 3, maps)
    assert [(f.core, f.start, f.waits) for f in frames] == [(0, 0, 0), (1, 2, 14), (2, 4, 0), (2, 11, 23)]


@pytest.mark.parametrize(("key", "waits"), [("value", [0, 15]), ("stack", [0, 0])])
def test_lookup_keyed_by_a_map_value_is_kept_from_a_writer(key: str, waits: list[int]) -> None:
    # 2 cores: a lookup whose key is in a writable map value asks apart (sephirot_core's GRANT_APART_R2) and waits for
    # the writer; keyed on the stack it asks shared and goes beside it
    maps, roms = keyed_cases()
    frames = both(roms[key], roles(1, 0), 2, maps)
    assert [f.waits for f in frames] == waits
