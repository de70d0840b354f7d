"""Early processor start: nothing the program or a helper reads comes from a packet byte that has not arrived."""

from __future__ import annotations

import random

import pytest
from rtl_support import assert_rtl_equals_model, require_rtl, row

from hxdp.isa.rom import Rom

pytestmark = pytest.mark.rtl

# csum_diff over 64 bytes near the end of the packet, called in the second row: with 32 bytes arriving per cycle
# most of a long packet is still on its way when the helper starts
CSUM_LATE_BYTES = Rom([
    row("r3 = r2", "r1 = 0", "r4 = 64", "r5 = 0"),
    row("r3 += 1400", "r2 = 0"),
    row("call 28"),
    row("exit"),
])


def test_helper_reads_wait_for_the_packet() -> None:
    """Long packets back to back (the buffers still hold the bytes of earlier ones): the checksum is the model's
    on every packet, with the model's cycles (waiting for arrival is not a core cycle)."""
    require_rtl()
    rng = random.Random(5)
    packets = [bytes(rng.randrange(256) for _ in range(1500)) for _ in range(6)]
    assert_rtl_equals_model(CSUM_LATE_BYTES, packets)


# a division row whose other lane loads a packet byte near the end of a long packet: the row waits for the byte,
# and the division's 16 cycles are counted apart from that wait
DIV_LATE_BYTES = Rom([
    row("r3 = r2", "r0 = 1000"),
    row("r4 = *(u8 *)(r3 + 1400)", "r0 /= 7"),
    row("r0 += r4"),
    row("exit"),
])


def test_division_cycles_apart_from_arrival() -> None:
    require_rtl()
    packets = [bytes([i % 256 for i in range(1500)]) for _ in range(3)]
    got = assert_rtl_equals_model(DIV_LATE_BYTES, packets)
    assert all(r.cycles == 1 + (1 + 16) + 1 + 1 for r in got)


def _store_rom(rng: random.Random) -> Rom:
    """Two packet loads, then two packet stores of those bytes in one row (the row that meets an input frame's
    banks), at offsets in the first 60 bytes, in a 2-row or a 3-row program that returns XDP_TX."""
    a, b = rng.sample(range(60), 2)
    c = rng.randrange(0, 30)
    d = rng.randrange(32, 58)
    loads = row(f"r3 = *(u8 *)(r2 + {a})", f"r4 = *(u8 *)(r2 + {b})")
    stores = [f"*(u8 *)(r2 + {c}) = r3", f"*(u16 *)(r2 + {d}) = r4"]
    if rng.random() < 0.5:
        return Rom([loads, row(*stores, "exit 3")])
    return Rom([loads, row(*stores), row("exit 3")])


@pytest.mark.parametrize("seed", range(4))
def test_input_write_buffer_keeps_every_byte(seed: int) -> None:
    """Packets of 60 to 160 bytes back to back under programs whose store row meets an input frame's banks (the
    frame waits in the packet buffer's write buffer, sephirot_pktbuf.v): every packet's bytes and the loads are
    the model's, whatever the phase of the frames against the stores."""
    require_rtl()
    rng = random.Random(seed)
    packets = [bytes(rng.randrange(256) for _ in range(rng.randrange(60, 161))) for _ in range(40)]
    assert_rtl_equals_model(_store_rom(rng), packets, f"seed {seed}")
