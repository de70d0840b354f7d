"""The core's one multiplier serves the multiplying lane wherever it sits in its row (RTL against the VLIW model)."""

from __future__ import annotations

import pytest
from rtl_support import assert_rtl_equals_model, require_rtl, row

from hxdp.isa.rom import Rom

pytestmark = pytest.mark.rtl


@pytest.fixture(scope="module", autouse=True)
def _rtl() -> None:
    require_rtl()


def _mul_rom(lane: int, mul: str) -> Rom:
    """r3, r4 = packet words 0 and 1; a row with `mul` (into r3) in `lane` beside three other ALU lanes; r3 and r7
    stored back."""
    others = ["r7 = r3", "r8 = r4", "r9 = 5", "r0 = 2"]
    return Rom([
        row("r2 = *(u32 *)(r1 + 0)"),
        row("r3 = *(u64 *)(r2 + 0)", "r4 = *(u64 *)(r2 + 8)"),
        row(*[others[k] if k != lane else mul for k in range(4)]),
        row("*(u64 *)(r2 + 16) = r3", "*(u64 *)(r2 + 24) = r7"),
        row("exit 2"),
    ])


@pytest.mark.parametrize("mul", ["r3 *= r4", "w3 *= w4", "r3 *= -3", "w3 *= 100000"])
@pytest.mark.parametrize("lane", range(4))
def test_multiplication_in_any_lane(lane: int, mul: str) -> None:
    pkts = [bytes(range(1, 65)), bytes([0xFF] * 16) + bytes(48), bytes(7) + bytes([0x80]) + bytes(range(56))]
    got = assert_rtl_equals_model(_mul_rom(lane, mul), pkts, f"lane {lane} {mul}")
    assert all(g.fault is None for g in got)
    # the product itself (the models' ALU against Python's): word 0 times word 1, or the immediate
    a, b = int.from_bytes(pkts[0][:8], "little"), int.from_bytes(pkts[0][8:16], "little")
    prod = {"r3 *= r4": a * b, "w3 *= w4": (a & 0xFFFFFFFF) * (b & 0xFFFFFFFF) & 0xFFFFFFFF,
            "r3 *= -3": a * -3, "w3 *= 100000": (a & 0xFFFFFFFF) * 100000 & 0xFFFFFFFF}[mul]
    assert got[0].packet[16:24] == (prod & (1 << 64) - 1).to_bytes(8, "little")
