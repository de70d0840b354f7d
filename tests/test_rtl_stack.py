"""The stack's load and store ports (STACK_LOAD_PORTS, STACK_STORE_PORTS): lanes get them in lane order, on the RTL
as in the model."""

from __future__ import annotations

import random

import pytest
from rtl_support import assert_rtl_equals_model, require_rtl, row

from hxdp import params
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.vliw import VliwModel
from hxdp.rtl.sim import RtlSim

pytestmark = pytest.mark.rtl

SIZES = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}


def _stack_rom(rng: random.Random, nrows: int) -> Rom:
    """Rows of up to STACK_LOAD_PORTS loads and STACK_STORE_PORTS stores at random stack offsets (any alignment,
    stores of a row disjoint), in random lanes next to packet loads and ALU ops; then a fold of the stack into r0."""
    rows = [row("r1 = *(u32 *)(r1 + 0)", "r2 = 0x0123456789abcdef ll"), row("r3 = *(u64 *)(r1 + 0)")]
    for _ in range(nrows):
        slots: list[str] = []
        used: list[tuple[int, int]] = []
        for _ in range(rng.randint(0, params.STACK_STORE_PORTS)):
            size = rng.choice(list(SIZES))
            off = rng.randrange(-params.STACK_SIZE, -size + 1)
            if any(off < b + bs and b < off + size for b, bs in used):
                continue
            used.append((off, size))
            slots.append(f"*({SIZES[size]} *)(r10 - {-off}) = r{rng.choice([2, 3])}")
        dsts = iter(rng.sample([4, 5, 6, 7], 4))
        for _ in range(rng.randint(0, params.STACK_LOAD_PORTS)):
            size = rng.choice(list(SIZES))
            slots.append(f"r{next(dsts)} = *({SIZES[size]} *)(r10 - {rng.randrange(size, params.STACK_SIZE + 1)})")
        if len(slots) < 4 and rng.random() < 0.5:
            slots.append(f"r{next(dsts)} = *(u8 *)(r1 + {rng.randrange(60)})")
        for filler in ("r8 += r2", "r9 ^= r3"):
            if len(slots) < 4 and rng.random() < 0.5:
                slots.append(filler)
        rng.shuffle(slots)
        rows.append(row(*slots[:4]))
    for off in range(-params.STACK_SIZE, 0, 16):
        rows.append(row(f"r4 = *(u64 *)(r10 - {-off})", f"r5 = *(u64 *)(r10 - {-off - 8})", "r0 ^= r6"))
        rows.append(row("r0 ^= r4", "r6 = r5"))
    rows.append(row("r0 ^= r6"))
    rows.append(row("exit"))
    return Rom(rows)


@pytest.mark.parametrize("seed", range(4))
def test_stack_ports_random_rows(seed: int) -> None:
    """Every load the RTL returns and every byte it keeps equal the model's, packet after packet (the stack is
    zero again at each packet)."""
    require_rtl()
    rng = random.Random(seed)
    rom = _stack_rom(rng, 40)
    packets = [bytes(rng.randrange(256) for _ in range(64)) for _ in range(3)]
    assert_rtl_equals_model(rom, packets, f"seed {seed}")


@pytest.mark.parametrize("first,second", [
    ("*(u64 *)(r10 - 16) = r2", "*(u32 *)(r10 - 12) = r3"),
    ("*(u32 *)(r10 - 13) = r3", "*(u64 *)(r10 - 16) = r2"),
    ("*(u16 *)(r10 - 9) = r2", "*(u64 *)(r10 - 15) = r3"),
])
def test_stack_overlapping_stores_commit_in_lane_order(first: str, second: str) -> None:
    """Two stores of one row to the same bytes break the contract (the model refuses them, the compiler never
    emits them), but the contract says the RTL still commits them in lane order: the RTL's row gives the bytes the
    model gives for the same stores in two rows."""
    require_rtl()
    head = [row("r6 = *(u32 *)(r1 + 0)"), row("r2 = *(u64 *)(r6 + 0)", "r3 = *(u64 *)(r6 + 8)")]
    tail = [row("r4 = *(u64 *)(r10 - 16)"), row("r5 = *(u64 *)(r10 - 8)"),
            row("*(u64 *)(r6 + 0) = r4", "*(u64 *)(r6 + 8) = r5", "r0 = 3"), row("exit")]
    pkt = bytes(range(1, 65))
    got = RtlSim(Rom(head + [row(first, second)] + tail)).run_packets([pkt])[0]
    want = VliwModel(Rom(head + [row(first), row(second)] + tail), MapState(MapLayout.from_maps([]))).run(pkt)
    assert (got.action, got.fault, got.packet) == (want.action, want.fault, want.packet)
    assert want.fault is None and want.packet[:16] != pkt[:16]


def _stale_rom(rng: random.Random, nrows: int) -> Rom:
    """Packet byte 0 == 1: every stack byte set to a non-zero byte. Otherwise: rows of random stores (any alignment,
    words crossed, two stores in one word), each followed by loads of the words it touched, then a fold of the
    whole stack into r0. The stores of the second kind of packet land in words holding the first kind's bytes."""
    fill = [row(*(f"*(u64 *)(r10 - {off}) = r7" for off in (o, o - 8))) for o in range(params.STACK_SIZE, 0, -16)]
    sparse: list[list] = []
    for _ in range(nrows):
        slots: list[str] = []
        used: list[tuple[int, int]] = []
        for _ in range(params.STACK_STORE_PORTS):
            size = rng.choice([1, 2, 4, 8])
            base = rng.randrange(8, params.STACK_SIZE + 1, 8)
            off = -base + rng.randrange(8) if not used else used[0][0] + rng.choice([-8, -4, 0, 4, 8, 12])
            off = max(-params.STACK_SIZE, min(off, -size))
            if any(off < b + bs and b < off + size for b, bs in used):
                continue
            used.append((off, size))
            slots.append(f"*({SIZES[size]} *)(r10 - {-off}) = r{rng.choice([2, 3])}")
        sparse.append(row(*slots))
        for off, size in used:
            word = off - off % 8
            sparse.append(row(f"r4 = *(u64 *)(r10 - {-word})", "r0 ^= r4"))
            if (off % 8) + size > 8:
                sparse.append(row(f"r4 = *(u64 *)(r10 - {-word - 8})", "r0 ^= r4"))
    for off in range(-params.STACK_SIZE, 0, 8):
        sparse.append(row(f"r4 = *(u64 *)(r10 - {-off})", "r0 ^= r4"))
    sparse.append(row("r0 ^= r4"))
    sparse.append(row("exit"))
    head = [row("r1 = *(u32 *)(r1 + 0)", "r2 = 0x0123456789abcdef ll", "r7 = -1"),
            row("r6 = *(u8 *)(r1 + 0)", "r3 = *(u64 *)(r1 + 0)", "r7 ^= 0x5a5a5a5a"),
            row(f"if r6 != 1 goto +{len(fill) + 1}")]
    return Rom(head + fill + [row("exit")] + sparse)


@pytest.mark.parametrize("seed", range(3))
def test_stack_stale_bytes_never_read(seed: int) -> None:
    """A word not written in this packet reads 0, and so do the bytes of a written word that this packet did not
    store, whatever an earlier packet left there (the RTL's zero-fill of a word's other bytes, crossing stores and
    two stores in one word included), on the RTL as in the model."""
    require_rtl()
    rng = random.Random(seed)
    rom = _stale_rom(rng, 24)
    fill, sparse = bytes([1]) + bytes(63), bytes([2]) + bytes(range(1, 64))
    got = assert_rtl_equals_model(rom, [fill, sparse, fill, sparse, sparse], f"seed {seed}")
    assert all(r.fault is None for r in got)
