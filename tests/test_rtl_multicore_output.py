"""The reorder stage of several cores in the RTL against the contract (section 8, "Output"): each packet's core,
start, end and last output cycle (a dropped frame's: its departure, without output) are the multi-core model's, when
a slow packet backs the output up until every other core's packet buffers are full, with frames of many lengths,
and with long dropped frames among them; the dropped frames' bytes (the drop tap) are the model's."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import compile_bpf
from rtl_support import require_rtl

from hxdp import params
from hxdp.compiler import compile_program
from hxdp.frontend.elf import load_program
from hxdp.models.maps import MapState
from hxdp.models.multicore import LEAVING, MulticoreModel, words
from hxdp.rtl import sim as rtl
from hxdp.rtl.sim import RtlSim

pytestmark = pytest.mark.rtl

SLOW = Path(__file__).parent / "data" / "rtl_cores" / "slow.c"


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory):
    return compile_program(load_program(str(compile_bpf(SLOW, tmp_path_factory.mktemp("slow")))))


def frame(loops: int, drop: bool = False, length: int = 64) -> bytes:
    return bytes([loops, 7, 0, int(drop)]) + bytes(length - 4)


def compare(res, packets: list[bytes], cores: int):  # noqa: ANN001, ANN201
    """The RTL's (core, start, end, last output cycle) of each packet against the model's (its departure plus its
    output cycles, at least one: a dropped frame's stamp is its departure), from packet 0's start; the model's run."""
    require_rtl()
    rtl.build(cores=cores)
    sim = RtlSim(res.rom, res.layout, MapState(res.layout), cores=cores)
    results = sim.run_packets(packets)
    run = MulticoreModel(res.rom, MapState(res.layout), cores).run(packets)
    s0 = sim.stamps[0].start
    got = [(s.core, s.start - s0, s.end - s0, s.out - s0, r.action) for s, r in zip(sim.stamps, results, strict=True)]
    out = [words(f.bytes, params.OUTPUT_BYTES_PER_CYCLE) if f.action in LEAVING else 0 for f in run.frames]
    want = [(f.core, f.start, f.end, f.departure + max(o, 1) - 1, f.action) for f, o in zip(run.frames, out,
                                                                                                strict=True)]
    assert got == want
    assert [(r.packet, r.meta) for r in results] == [(f.result.packet, f.result.meta) for f in run.frames]
    return run


@pytest.mark.parametrize("cores", [2, 4])
def test_output_backed_up_fills_the_buffers(slow, cores: int) -> None:
    # packet 0 runs ~800 cycles; the others finish in a few and wait for it in their cores' packet buffers: each
    # other core takes PKT_BUFS_SEVERAL of them, then none until packet 0 has left
    packets = [frame(200)] + [frame(0)] * (params.PKT_BUFS_SEVERAL * cores + 8)
    run = compare(slow, packets, cores)
    assert run.reorder_peak == params.PKT_BUFS_SEVERAL * (cores - 1)
    first = next(f for f in run.frames if f.start > run.frames[0].end)
    assert first.index == params.PKT_BUFS_SEVERAL * (cores - 1) + 1


@pytest.mark.parametrize("cores", [2, 4])
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("drops", [False, True])
def test_frames_of_many_lengths(slow, cores: int, seed: int, drops: bool) -> None:
    # slow packets now and then, frames of 64 to 600 bytes: the programs end before their frames are whole; with
    # drops, 40% of them dropped: they take no output cycle, several depart in one cycle
    rnd = random.Random(seed)
    packets = [frame(rnd.choice([150, 250]) if rnd.random() < 0.1 else rnd.choice([0, 0, 3]),
                     drops and rnd.random() < 0.4, rnd.choice([64, 64, 100, 300, 600])) for _ in range(60)]
    run = compare(slow, packets, cores)
    assert run.reorder_peak >= params.PKT_BUFS_SEVERAL
    together = [f.departure for f in run.frames if f.action not in LEAVING]
    assert (len(together) > len(set(together))) == drops


@pytest.mark.parametrize("cores", [2, 4])
def test_long_dropped_frames_take_no_output(slow, cores: int) -> None:
    # 1,500-byte dropped frames between 64-byte ones that leave: the output carries only the 64-byte ones, so the
    # run is input-bound (a long frame's 47 input cycles), not held to the output's word a cycle for the drops
    packets = [frame(0, i % 2 == 1, 1500 if i % 2 else 64) for i in range(24)]
    run = compare(slow, packets, cores)
    drops = [f for f in run.frames if f.action not in LEAVING]
    assert len(drops) == 12
    assert all(f.departure == f.start + words(1500, params.INPUT_BYTES_PER_CYCLE) - 1 for f in drops)
