"""RTL map memory against the VLIW model: writes that share 64-bit words (lane stores row after row, the helper's
slot, clear and header writes of one cycle) land byte for byte in the model's order."""

from __future__ import annotations

import random

import pytest
from rtl_support import assert_rtl_equals_model, require_rtl, row

from hxdp import params
from hxdp.frontend.program import MapDef
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout

pytestmark = pytest.mark.rtl

HASH, ARRAY, LRU_HASH = 1, 2, 9
HANDLE = f"r1 = {hex(params.MAP_HANDLE_BASE)} ll"

# key = packet byte 14 & 3, a 64-byte value from packet bytes 16..31 on the stack at r10 - 72. Insert it, look it
# up, then lane stores into the value that share its words, one per row (the map memory's one store port, execution
# contract), read back two per row, then a store into the value's last word and, a row later, an update of the
# same key (a row calling a map helper stores nothing else in the map memory: execution contract). (Stores stay
# inside the value, as the kernel's verifier demands: past it is the next slot's header.)
SAME_WORD_ROM = Rom([
    row("r7 = *(u32 *)(r1 + 0)"),
    row("r6 = *(u64 *)(r7 + 16)", "r9 = *(u64 *)(r7 + 24)"),  # two packet loads per row (contract)
    row("w8 = *(u8 *)(r7 + 14)"),
    row("r8 &= 3", "*(u64 *)(r10 - 72) = r6", "*(u64 *)(r10 - 64) = r9"),  # two stack stores per row (contract)
    row("*(u64 *)(r10 - 56) = r6", "*(u32 *)(r10 - 4) = r8"),
    row("*(u64 *)(r10 - 48) = r9", "*(u64 *)(r10 - 40) = r6"),
    row("*(u64 *)(r10 - 32) = r9"),
    row("*(u64 *)(r10 - 24) = r6", "*(u64 *)(r10 - 16) = r9", HANDLE),
    row("r2 = r10", "r3 = r10", "r4 = 0"),
    row("r2 += -4", "r3 += -72"),
    row("call 2"),
    row(HANDLE, "r2 = r10"),
    row("r2 += -4"),
    row("call 1"),
    row("if r0 == 0 goto +12"),
    row("*(u8 *)(r0 + 1) = r6"),
    row("*(u16 *)(r0 + 2) = r9"),
    row("*(u32 *)(r0 + 4) = r6"),
    row("*(u64 *)(r0 + 9) = r9"),
    row("r2 = *(u64 *)(r0 + 0)", "r3 = *(u64 *)(r0 + 8)"),
    row("r4 = *(u64 *)(r0 + 16)"),
    row(HANDLE, "r2 = r10", "r7 = r0"),
    row("r2 += -4", "r3 = r10", "r4 = 0", "*(u64 *)(r10 - 72) = r9"),
    row("r3 += -72", "*(u32 *)(r10 - 60) = r6", "*(u32 *)(r7 + 1) = r6"),
    row("*(u8 *)(r7 + 13) = r9"),
    row("*(u32 *)(r7 + 60) = r6"),
    row("call 2"),
    row("r0 = *(u64 *)(r7 + 0)"),
    row("exit 2"),
])


@pytest.fixture(scope="module", autouse=True)
def _rtl() -> None:
    require_rtl()


@pytest.mark.parametrize("mtype, entries", [(ARRAY, 4), (HASH, 4), (LRU_HASH, 2)],
                         ids=["array", "hash", "lru_hash-evicting"])
def test_same_word_stores_and_update(mtype: int, entries: int) -> None:
    layout = MapLayout.from_maps([MapDef("m", mtype, 4, 64, entries, 0)])
    rng = random.Random(mtype)
    packets = [bytes(rng.randrange(256) for _ in range(64)) for _ in range(24)]
    got = assert_rtl_equals_model(SAME_WORD_ROM, packets, layout=layout)
    for i, r in enumerate(got):
        assert r.fault is None and len(r.trace) == len(SAME_WORD_ROM.rows), f"packet {i}: stores not reached"


# key = packet byte 0, value word = packet bytes 4..7 (a 32-byte value). A hit updates the entry in a row whose
# other lane loads the value: the load returns the value before the row, though the update writes the value's
# window a cycle before the row commits (two windows: slot bytes 0..31 and 32..47). A miss inserts.
LOAD_BESIDE_UPDATE_ROM = Rom([
    row("r6 = *(u32 *)(r1 + 0)"),
    row("r7 = *(u8 *)(r6 + 0)", "r9 = *(u32 *)(r6 + 4)"),
    row("*(u32 *)(r10 - 4) = r7", "*(u64 *)(r10 - 40) = r9"),
    row(HANDLE, "r2 = r10"),
    row("r2 += -4"),
    row("call 1"),
    row("if r0 == 0 goto +6"),
    row("r8 = r0", HANDLE),
    row("r2 = r10", "r3 = r10", "r4 = 0"),
    row("r2 += -4", "r3 += -40"),
    row("call 2", "r9 = *(u64 *)(r8 + 0)"),
    row("r0 = r9"),
    row("exit"),
    row(HANDLE, "r2 = r10", "r3 = r10"),
    row("r2 += -4", "r3 += -40", "r4 = 0"),
    row("call 2"),
    row("exit 2"),
])


def test_load_beside_a_multi_window_update_sees_the_old_value() -> None:
    layout = MapLayout.from_maps([MapDef("m", HASH, 4, 32, 4, 0)])
    packets = [bytes([k, 0, 0, 0, v, 0, 0, 0]) + bytes(56) for k, v in ((1, 5), (1, 7), (1, 9), (2, 3), (2, 4))]
    got = assert_rtl_equals_model(LOAD_BESIDE_UPDATE_ROM, packets, layout=layout)
    assert [r.action for r in got] == [2, 5, 7, 2, 3]
