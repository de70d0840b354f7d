"""The execution contract's row rules as RTL assertions (sephirot_contract.v, the --assert test build): every
ROM the compiler makes keeps them, and a hand-made ROM breaking one stops the simulation with the rule's name."""

from __future__ import annotations

import random

import pytest
from randprog import random_program
from rtl_support import require_rtl, row

from hxdp import params
from hxdp.compiler import CompileOptions, compile_program
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapState
from hxdp.rtl import sim as rtl
from hxdp.rtl.sim import RtlError, RtlSim
from hxdp.suite import programs
from hxdp.traffic.pcap import read_pcap

pytestmark = pytest.mark.rtl
SUITE = programs()


@pytest.fixture(scope="module")
def assert_exe():
    require_rtl()
    return rtl.build(assertions=True)


def test_bundled_programs_keep_the_contract(assert_exe) -> None:
    ran = 0
    for prog in SUITE:
        if not prog.obj.exists():
            continue
        res = compile_program(prog.load())
        state = MapState(res.layout)
        state.apply_config(prog.map_config())
        frames = read_pcap(prog.traffic)
        got = RtlSim(res.rom, res.layout, state, exe=assert_exe).run_packets(frames[:40])
        assert len(got) == len(frames[:40])
        ran += 1
    assert ran >= 15, "run `make progs` first"


@pytest.mark.parametrize("seed", range(5))
def test_random_programs_keep_the_contract(assert_exe, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(8):
        p = random_program(1000 * seed + i, 60)
        res = compile_program(p, CompileOptions(imem_rows=1 << 20))
        if len(res.rom.rows) > params.IMEM_ROWS:
            continue
        packets = [bytes(rng.randrange(256) for _ in range(rng.randrange(60, 200))) for _ in range(4)]
        RtlSim(res.rom, res.layout, MapState(res.layout), exe=assert_exe).run_packets(packets)


@pytest.mark.parametrize(("rom_rows", "message"), [
    ([row("r3 = 1", "r3 = 2"), row("exit 2")], "lanes 0 and 1 both write r3"),
    ([row("r2 = *(u32 *)(r1 + 0)"), row("*(u32 *)(r2 + 0) = r2", "*(u16 *)(r2 + 2) = r2"), row("exit 2")],
     "the stores of lanes 0 and 1 overlap"),
])
def test_a_rom_breaking_a_rule_stops_the_test_build(assert_exe, rom_rows: list, message: str) -> None:
    with pytest.raises(RtlError, match=message):
        RtlSim(Rom(rom_rows), exe=assert_exe).run_packets([bytes(range(64))])
    RtlSim(Rom(rom_rows)).run_packets([bytes(range(64))])  # the ordinary build does not check
