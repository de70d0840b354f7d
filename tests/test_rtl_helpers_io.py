"""RTL equals the VLIW model on the helpers' packet side effects: XDP metadata (adjust_meta, adjust_head moving it)
and trace_printk records, packet for packet, with the trace, cycles and RunResult.meta/printk compared."""

from __future__ import annotations

import random

import pytest
from rtl_support import assert_rtl_equals_model, printk_rom, require_rtl, row

from hxdp import params
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.vliw import VliwModel
from hxdp.rtl.sim import RtlSim

pytestmark = pytest.mark.rtl


@pytest.fixture(scope="module", autouse=True)
def _rtl() -> None:
    require_rtl()


def _compare(rom: Rom, packets: list[bytes]) -> list:
    return assert_rtl_equals_model(rom, packets)


# adjust_meta by -4 * (byte 20 & 63) (0..252 bytes, above the 216-byte headroom: -EINVAL), metadata filled from
# the packet (and its last 16 bytes when it is that long), then adjust_head by (byte 21 & 63) - 32 with the
# metadata in front; r0 of adjust_head and the first metadata word are written into the packet.
META_ROM = Rom([
    row("r6 = r1", "r7 = *(u32 *)(r1 + 0)"),
    row("w2 = *(u8 *)(r7 + 20)", "w8 = *(u8 *)(r7 + 21)"),
    row("r2 &= 63", "r8 &= 63"),
    row("r2 <<= 2", "r8 -= 32"),
    row("r2 *= -1"),
    row("call 54"),
    row("r2 = *(u32 *)(r6 + 8)", "r3 = *(u32 *)(r6 + 0)"),
    row("r4 = *(u64 *)(r3 + 0)", "r5 = *(u64 *)(r3 + 8)"),  # two packet loads and stores per row (contract)
    row("r9 = *(u64 *)(r3 + 16)", "r0 = *(u64 *)(r3 + 24)"),
    row("*(u64 *)(r2 + 0) = r4", "*(u64 *)(r2 + 8) = r5"),
    row("*(u64 *)(r2 + 16) = r9", "*(u64 *)(r2 + 32) = r0"),
    row("r9 = r2"),
    row("r9 += 16"),
    row("if r9 > r3 goto +1"),
    row("*(u64 *)(r3 - 16) = r5", "*(u64 *)(r3 - 8) = r4"),
    row("r1 = r6", "r2 = r8"),
    row("call 44"),
    row("r3 = *(u32 *)(r6 + 0)", "r2 = *(u32 *)(r6 + 8)"),
    row("*(u64 *)(r3 + 0) = r0", "r4 = *(u64 *)(r2 + 0)"),
    row("*(u64 *)(r3 + 8) = r4"),
    row("exit 2"),
])


def _packets(seed: int, n: int, zeros: float = 0.0) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        size = rng.randint(60, 200)
        out.append(bytes(0 if rng.random() < zeros else rng.randrange(256) for _ in range(size)))
    return out


def test_adjust_meta_and_head_move_metadata() -> None:
    packets = _packets(5, 48)
    # every metadata length class: none, one chunk, several chunks, the largest that fits, too large
    for i, b20 in enumerate([0, 1, 3, 4, 5, 17, 33, 54, 63, 40, 12, 2]):
        for j, b21 in enumerate([0, 31, 32, 63, 10, 50]):
            if (i + j) % 3 == 0:
                p = bytearray(packets[(i * 6 + j) % len(packets)])
                p[20], p[21] = b20, b21
                packets.append(bytes(p))
    got = _compare(META_ROM, packets)
    moved = [r for r in got if r.meta and r.packet[:8] == bytes(8)]  # adjust_head returned 0 with metadata
    assert len(moved) >= 5, "too few packets moved metadata"
    assert any(len(r.meta) > 64 for r in moved), "no multi-chunk metadata move"


# Lane stores of one row that share 8-byte words at byte offsets (they may not overlap: contract), and an
# adjust_head by (byte 21 & 15) - 7 (unaligned moves) in a row whose other lanes store into the first packet bytes,
# where the metadata may move to: the stores land first, the moved metadata after them, in the same 64-bit words.
SAME_WORD_ROM = Rom([
    row("r6 = r1", "r7 = *(u32 *)(r1 + 0)"),
    row("w2 = *(u8 *)(r7 + 20)", "w8 = *(u8 *)(r7 + 21)"),  # two packet loads and stores per row (contract)
    row("r4 = *(u64 *)(r7 + 24)", "r5 = *(u64 *)(r7 + 32)"),
    row("r2 &= 63", "r8 &= 15"),
    row("r2 <<= 2", "r8 -= 7"),
    row("r2 *= -1"),
    row("call 54"),
    row("r2 = *(u32 *)(r6 + 8)", "r3 = *(u32 *)(r6 + 0)"),
    row("*(u8 *)(r3 + 1) = r4", "*(u16 *)(r3 + 2) = r5"),
    row("*(u32 *)(r3 + 4) = r4", "*(u64 *)(r3 + 9) = r5"),
    row("*(u32 *)(r2 + 0) = r5", "*(u16 *)(r2 + 4) = r4"),
    row("*(u8 *)(r2 + 6) = r5", "*(u64 *)(r2 + 7) = r4"),
    row("r1 = r6", "r2 = r8", "*(u64 *)(r3 + 5) = r5"),
    row("call 44", "*(u32 *)(r3 + 1) = r4", "*(u8 *)(r3 + 13) = r5"),
    row("exit 2"),
])


def test_same_word_stores_and_move() -> None:
    packets = _packets(11, 40)
    for i, b20 in enumerate([0, 1, 2, 3, 4, 5, 9, 16, 33, 54]):
        for b21 in range(16):
            if (i + b21) % 4 == 0:
                p = bytearray(packets[(i * 16 + b21) % len(packets)])
                p[20], p[21] = b20, b21
                packets.append(bytes(p))
    got = _compare(SAME_WORD_ROM, packets)
    assert sum(1 for r in got if len(r.meta) > 16) >= 10, "too few packets moved metadata"


def test_metadata_move_waits_for_arrival() -> None:
    """adjust_head(+1000) with metadata, a few cycles into a 2000-byte packet: the move's destination has not
    arrived yet; the adjust helpers wait for the whole packet instead of letting the input overwrite the moved
    metadata. The wait is not a core cycle (the model's count), but the packet's stamps show it."""
    rom = Rom([
        row("r6 = r1", "r2 = -8"),
        row("call 54"),
        row("r2 = *(u32 *)(r6 + 8)", "r4 = 0x5a5a5a5a"),
        row("*(u64 *)(r2 + 0) = r4"),
        row("r1 = r6", "r2 = 1000"),
        row("call 44"),
        row("exit 2"),
    ])
    rng = random.Random(3)
    packets = [bytes(rng.randrange(1, 256) for _ in range(2000)) for _ in range(3)]
    sim = RtlSim(rom)
    got = sim.run_packets(packets)
    vm = VliwModel(rom, MapState(MapLayout.from_maps([])))
    for i, pkt in enumerate(packets):
        want = vm.run(pkt)
        assert want.meta == bytes.fromhex("5a5a5a5a00000000") and want.packet == pkt[1000:]
        assert (got[i].action, got[i].packet, got[i].meta, got[i].cycles) == \
            (want.action, want.packet, want.meta, want.cycles), f"packet {i}"
        st = sim.stamps[i]
        assert st.end - st.start + 1 > got[i].cycles + 40, "the adjust did not wait for the packet bytes"


def test_trace_printk_records() -> None:
    packets = _packets(7, 40, zeros=0.15)
    rng = random.Random(8)
    for size in (0, 1, 7, 8, 9, 63, 64, 65, 255):
        for off in (0x40, 8, 56):   # 0x40: offset 0 with no NUL at format byte 61 (packet byte 57)
            p = bytearray(rng.randrange(1, 256) for _ in range(80))   # no NUL: the format is cut at `size`
            p[56], p[57] = size, off
            packets.append(bytes(p))
    got = _compare(printk_rom(), packets)
    recs = [rec for r in got for rec in r.printk]
    assert any(len(f) == params.PRINTK_FMT_MAX for f, _ in recs), "no record of the full format length"
    assert any(0 < len(f) < 8 for f, _ in recs), "no record cut at a NUL"
    assert any(r.fault for r in got) and any(len(r.printk) == 2 for r in got)


def test_ktime_prandom_smp_equal_model() -> None:
    """ktime_get_ns and ktime_get_coarse_ns (cycles of all packets so far * 32 / 5, the RTL's division by 5 is long
    division), spin_lock and spin_unlock,
    get_prandom_u32 (the xorshift state starts at its reset value: the harness gives the asynchronous reset a falling
    edge) and get_smp_processor_id, written into each packet: values and cycles equal the model's over runs of
    different lengths."""
    h = params.HELPER_IDS
    rom = Rom([
        row("r6 = r1", "r7 = *(u32 *)(r1 + 0)"),
        row("w8 = *(u8 *)(r7 + 14)"),
        row("r8 &= 15"),
        row("r8 -= 1"),
        row("if r8 s> 0 goto -2"),
        row(f"call {h['ktime_get_ns']}"),
        row("*(u64 *)(r7 + 0) = r0"),
        row(f"call {h['get_prandom_u32']}"),
        row("*(u64 *)(r7 + 8) = r0"),
        row(f"call {h['get_smp_processor_id']}"),
        row("*(u32 *)(r7 + 16) = w0"),
        row(f"call {h['ktime_get_ns']}"),
        row("*(u64 *)(r7 + 24) = r0"),
        row(f"call {h['ktime_get_coarse_ns']}"),
        row("*(u64 *)(r7 + 32) = r0"),
        row("r1 = r10"),
        row("r1 += -8"),
        row(f"call {h['spin_lock']}"),
        row("*(u64 *)(r7 + 40) = r0", "r1 = r10"),
        row("r1 += -8"),
        row(f"call {h['spin_unlock']}"),
        row("*(u64 *)(r7 + 48) = r0"),
        row("exit 2"),
    ])
    got = _compare(rom, _packets(7, 40))
    for r in got:  # the coarse clock is the same clock, read two rows later; a lock costs nothing, returns 0
        fine, coarse = (int.from_bytes(r.packet[o : o + 8], "little") for o in (24, 32))
        assert coarse > fine and r.packet[40:56] == bytes(16)


# Bytes exposed by the adjust helpers read as zero and bytes the packet wrote stay (the packet buffer zeroes them
# after the helper's row, while the next row waits): adjust_tail shrinks by (byte 20 & 31) then grows by
# (byte 21 & 63) (the grown bytes are zero, as the kernel's memset), adjust_head(-48) exposes headroom (zero),
# then two stores 64 bytes apart share a bank (the second is written a cycle later while the next row waits, and
# that row reads both back and stores into the same banks again); adjust_head(+40) and (-40) expose the written
# bytes again (they stay), and the packet ends right after another same-bank pair of stores.
EXPOSE_ROM = Rom([
    row("r6 = r1", "r7 = *(u32 *)(r1 + 0)"),
    row("w8 = *(u8 *)(r7 + 20)", "w9 = *(u8 *)(r7 + 21)"),
    row("r8 &= 31", "r9 &= 63"),
    row("r2 = 0", "r1 = r6"),
    row("r2 -= r8"),
    row("call 65"),
    row("r1 = r6", "r2 = r9"),
    row("call 65"),
    row("r3 = *(u32 *)(r6 + 4)", "r7 = *(u32 *)(r6 + 0)"),
    row("r4 = *(u64 *)(r3 - 8)", "r5 = *(u64 *)(r3 - 16)"),
    row("*(u64 *)(r7 + 0) = r4", "*(u64 *)(r7 + 8) = r5"),
    row("r1 = r6", "r2 = -48"),
    row("call 44"),
    row("r7 = *(u32 *)(r6 + 0)"),
    row("r4 = *(u64 *)(r7 + 0)", "r5 = *(u64 *)(r7 + 40)"),
    row("*(u64 *)(r7 + 16) = r4", "*(u64 *)(r7 + 80) = r9"),
    row("r0 = *(u64 *)(r7 + 16)", "r3 = *(u64 *)(r7 + 80)"),
    row("*(u64 *)(r7 + 25) = r0", "*(u64 *)(r7 + 89) = r5"),
    row("r1 = r6", "r2 = 40"),
    row("call 44"),
    row("r1 = r6", "r2 = -40"),
    row("call 44"),
    row("r7 = *(u32 *)(r6 + 0)"),
    row("*(u32 *)(r7 + 3) = r8", "*(u32 *)(r7 + 67) = r3"),
    row("exit 2"),
])


def test_exposed_bytes_read_zero_and_written_bytes_stay() -> None:
    rng = random.Random(21)
    packets = [bytes(rng.randrange(1, 256) for _ in range(rng.randint(120, 300))) for _ in range(40)]
    got = _compare(EXPOSE_ROM, packets)
    assert sum(1 for r in got if r.action == 2) >= 30, "too few packets ran to the end"
    # the headroom exposed by adjust_head(-48) reads zero: bytes 32..39 of the output are never written
    assert all(r.packet[32:40] == bytes(8) for r in got if r.action == 2)


@pytest.mark.parametrize("delta", [14, -14, 32])
@pytest.mark.parametrize("action", [1, 2])
def test_metadata_move_when_the_packet_ends_in_the_adjust_head_row(delta: int, action: int) -> None:
    """Regression (fuzz seed 20261125, programs 8281 and 8641): `call 44` and `exit` in one row, with metadata.
    The packet buffer copies the metadata after the row; it read the chunks from the core's current buffer, which
    by then was the next packet's (or an empty one): the metadata came out as that buffer's bytes."""
    rom = Rom([
        row("r6 = r1", "r7 = *(u32 *)(r1 + 0)"),
        row("w2 = *(u8 *)(r7 + 20)"),
        row("r2 &= 15", "r4 = 0x5a5a5a5a"),
        row("r2 += 1"),
        row("r2 *= -4"),  # 4..64 bytes of metadata
        row("call 54"),
        row("r2 = *(u32 *)(r6 + 8)", "r5 = *(u32 *)(r6 + 0)"),
        row("*(u32 *)(r2 + 0) = r4", "r3 = *(u64 *)(r5 + 0)"),
        row("*(u64 *)(r5 - 8) = r3"),  # the metadata's last 8 bytes (its first word, when only 4 or 8 long)
        row("r1 = r6", f"r2 = {delta}"),
        row("call 44", f"exit {action}"),
    ])
    packets = _packets(17, 24)
    got = _compare(rom, packets)
    assert all(r.fault is None and len(r.meta) >= 4 for r in got)
    assert sum(r.meta[:4] == b"\x5a" * 4 for r in got) >= len(packets) // 2, "too few packets kept the first word"
