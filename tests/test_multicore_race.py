"""Two cores racing on one hash bucket and one atomic counter (tests/data/multicore/race.c): the grant keeps every
map helper and atomic whole, so no count is lost or given twice, while the insert race itself happens."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import compile_bpf

from hxdp.compiler import compile_program
from hxdp.frontend.elf import load_program
from hxdp.models.maps import MapState
from hxdp.models.multicore import MulticoreModel

RACE = Path(__file__).parent / "data" / "multicore" / "race.c"
FLOWS = 3  # flows 0..2 leave (XDP_TX), flow 3 is dropped


@pytest.fixture(scope="module")
def race(tmp_path_factory: pytest.TempPathFactory):
    return compile_program(load_program(compile_bpf(RACE, tmp_path_factory.mktemp("race"))))


def frames(n: int) -> list[bytes]:
    """n frames cycling over flows 0..3, so that consecutive frames (on different cores) hit different flows and
    the frames of one flow meet on the cores."""
    return [bytes([i % 4]) + bytes(range(1, 64)) for i in range(n)]


def run(cr, cores: int, packets: list[bytes]):
    state = MapState(cr.layout)
    return MulticoreModel(cr.rom, state, cores).run(packets), state


def counts_per_flow(result, packets: list[bytes]) -> dict[int, list[int]]:
    """The count each frame of a flow saw (bytes 8..15 of the frame out), in arrival order."""
    out: dict[int, list[int]] = {}
    for f in result.frames:
        out.setdefault(packets[f.index][0], []).append(int.from_bytes(f.result.packet[8:16], "little"))
    return out


def u64(dump, name: str, key: int) -> int:
    return int.from_bytes(dump[name][key.to_bytes(4, "little")], "little")


def same_flow_packets() -> list[bytes]:
    """Every frame of flow 0: each core's first packet misses the key; the one whose update comes second loses."""
    return [bytes([0]) + bytes(range(1, 64))] * 6


@pytest.mark.parametrize("cores", [2, 4, 8])
def test_atomic_counts_are_exact_on_several_cores(race, cores: int) -> None:
    packets = frames(48)
    result, state = run(race, cores, packets)
    assert sum(f.waits for f in result.frames) > 0  # the cores did contend for the grant
    assert {f.core for f in result.frames} == set(range(cores))
    dump = state.dump()
    assert u64(dump, "total", 0) == len(packets)
    for flow, seen in counts_per_flow(result, packets).items():
        assert u64(dump, "flows", flow) == len(seen) == 12
        assert sorted(seen) == list(range(len(seen)))  # each count given once: the atomic add is whole


def test_insert_race_on_one_bucket(race) -> None:
    """Two cores miss the same key at once: both insert with BPF_NOEXIST, one gets -EEXIST and adds to the other's
    entry (total[1] counts it); the flow's count stays exact. On one core the race cannot happen."""
    packets = same_flow_packets()
    one, s1 = run(race, 1, packets)
    two, s2 = run(race, 2, packets)
    assert u64(s1.dump(), "total", 1) == 0
    assert u64(s2.dump(), "total", 1) == 1
    for result, state in ((one, s1), (two, s2)):
        assert u64(state.dump(), "flows", 0) == len(packets)
        assert sorted(counts_per_flow(result, packets)[0]) == list(range(len(packets)))


def test_per_cpu_counter_is_exact_per_core(race) -> None:
    """cpu_frames is `*c += 1` (a load and a store in different rows, not atomic across cores): on a per-CPU value it
    is exact all the same, each core counting in its own copy; the copies sum to every frame."""
    packets = frames(24)
    state = MapState(race.layout)
    model = MulticoreModel(race.rom, state, 4)
    result = model.run(packets)
    per_core = [u64(model.dump(k), "cpu_frames", 0) for k in range(4)]
    assert per_core == [sum(f.core == k for f in result.frames) for k in range(4)]
    assert sum(per_core) == len(packets)


@pytest.mark.parametrize("cpu", [0, 5])
def test_models_take_the_core_number(race, tmp_path: Path, cpu: int) -> None:
    """get_smp_processor_id on the sequential and the VLIW model returns the core they run as."""
    from hxdp.models.seq import SeqModel
    from hxdp.models.vliw import VliwModel

    program = load_program(compile_bpf(RACE, tmp_path))
    frame = bytes(64)
    seq = SeqModel(program, MapState.for_program(program), cpu=cpu).run(frame)
    vliw = VliwModel(race.rom, MapState(race.layout), cpu=cpu).run(frame)
    assert seq.packet[16:20] == vliw.packet[16:20] == cpu.to_bytes(4, "little")
