"""The core's one multiplier serves the multiplying lane wherever it sits in its row (RTL against the VLIW model)."""

from __future__ import annotations

import pytest
from hxdp.isa import NOP, Insn, assemble_line
from hxdp.maps import MapLayout, MapState
from hxdp.rom import Rom
from hxdp.rtl import RtlSim
from hxdp.vliwmodel import VliwModel
from rtl_support import require_rtl

pytestmark = pytest.mark.rtl


def _a(text: str) -> Insn:
    return assemble_line(text)[0]


@pytest.fixture(scope="module", autouse=True)
def _rtl() -> None:
    require_rtl()


def _mul_rom(lane: int, mul: str) -> Rom:
    """r3, r4 = packet words 0 and 1; a row with `mul` (into r3) in `lane` beside three other ALU lanes; r3 and r7
    stored back."""
    others = [_a("r7 = r3"), _a("r8 = r4"), _a("r9 = 5"), _a("r0 = 2")]
    row = [others[k] if k != lane else _a(mul) for k in range(4)]
    return Rom([
        [_a("r2 = *(u32 *)(r1 + 0)"), NOP, NOP, NOP],
        [_a("r3 = *(u64 *)(r2 + 0)"), _a("r4 = *(u64 *)(r2 + 8)"), NOP, NOP],
        row,
        [_a("*(u64 *)(r2 + 16) = r3"), _a("*(u64 *)(r2 + 24) = r7"), NOP, NOP],
        [_a("exit 2"), NOP, NOP, NOP],
    ])


@pytest.mark.parametrize("mul", ["r3 *= r4", "w3 *= w4", "r3 *= -3", "w3 *= 100000"])
@pytest.mark.parametrize("lane", range(4))
def test_multiplication_in_any_lane(lane: int, mul: str) -> None:
    rom = _mul_rom(lane, mul)
    pkts = [bytes(range(1, 65)), bytes([0xFF] * 16) + bytes(48), bytes(7) + bytes([0x80]) + bytes(range(56))]
    got = RtlSim(rom).run_packets(pkts)
    vm = VliwModel(rom, MapState(MapLayout.from_maps([])))
    for i, pkt in enumerate(pkts):
        want = vm.run(pkt)
        assert want.fault is None
        assert (got[i].action, got[i].packet, got[i].cycles, got[i].fault) == \
            (want.action, want.packet, want.cycles, want.fault), (lane, mul, i)
    # the product itself (the model's ALU against Python's): word 0 times word 1, or the immediate
    a, b = int.from_bytes(pkts[0][:8], "little"), int.from_bytes(pkts[0][8:16], "little")
    prod = {"r3 *= r4": a * b, "w3 *= w4": (a & 0xFFFFFFFF) * (b & 0xFFFFFFFF) & 0xFFFFFFFF,
            "r3 *= -3": a * -3, "w3 *= 100000": (a & 0xFFFFFFFF) * 100000 & 0xFFFFFFFF}[mul]
    assert got[0].packet[16:24] == (prod & (1 << 64) - 1).to_bytes(8, "little")
