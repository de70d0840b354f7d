"""The packet buffer's timing rules (hxdp.models.pktbuf, execution contract section 6) on hand-made cases: the write
buffer, a deferred store, the input stopping, the zeroing and the metadata move, the waits of rows for them."""

from __future__ import annotations

import pytest

from hxdp.errors import HxdpError
from hxdp.models.pktbuf import HEAD, PacketBufferTiming


def first_ready(buf: PacketBufferTiming, t: int, accesses: list[tuple[int, int]], whole: bool = False) -> int:
    while not buf.ready(0, t, accesses, whole):
        t += 1
    return t


def test_a_word_meeting_a_store_waits_in_the_write_buffer() -> None:
    buf = PacketBufferTiming(0, stalls=True)
    buf.add_packet(0, 64, 0)  # words in cycles 0 (banks 0-3) and 1 (banks 4-7)
    buf.commit(0, 0, [(HEAD - 8, 4)])  # (a store in the headroom: bank 7, free of word 0)
    assert first_ready(buf, 1, [(HEAD, HEAD + 8)]) == 1
    buf = PacketBufferTiming(0, stalls=True)
    buf.add_packet(0, 64, 0)
    buf.commit(0, 0, [(HEAD + 8, 4)])  # bank 1: word 0 goes into the write buffer, written in cycle 1
    assert first_ready(buf, 1, [(HEAD, HEAD + 8)]) == 2
    assert first_ready(buf, 1, [(HEAD + 32, HEAD + 40)]) == 2  # word 1 came in cycle 1, written at once
    assert first_ready(buf, 0, [], whole=True) == 2


def test_bytes_not_arrived_wait_for_their_word() -> None:
    buf = PacketBufferTiming(0, stalls=True)
    buf.add_packet(0, 100, 4)  # words in cycles 4, 5, 6, 7
    assert first_ready(buf, 5, [(HEAD + 60, HEAD + 68)]) == 7  # words 1 and 2
    assert first_ready(buf, 5, [], whole=True) == 8
    assert first_ready(buf, 5, [(HEAD - 4, HEAD)]) == 5  # metadata below the frame


def test_two_stores_in_one_bank_defer_the_second() -> None:
    buf = PacketBufferTiming(0, stalls=True)
    buf.add_packet(0, 64, 0)
    buf.commit(5, 0, [(HEAD, 8), (HEAD + 64, 8)])  # words 32 and 40: both in bank 0
    assert first_ready(buf, 6, []) == 7
    buf.commit(9, 0, [(HEAD, 8), (HEAD + 8, 8)])  # words 32 and 33: banks 0 and 1
    assert first_ready(buf, 10, []) == 10


def test_the_input_stops_when_the_write_buffer_stays_full() -> None:
    buf = PacketBufferTiming(0, stalls=True)
    buf.add_packet(0, 96, 0)  # words in cycles 0, 1, 2 (banks 0-3, 4-7, 0-3)
    buf.commit(0, 0, [(HEAD, 8)])  # word 0 into the write buffer
    buf.commit(1, 0, [(HEAD + 16, 8), (HEAD + 48, 8)])  # banks 2 and 6: word 0 stays, word 1 cannot come
    # cycle 2: word 0 written, word 1 (banks 4-7) comes and is written; word 2 comes in cycle 3 instead of 2
    assert first_ready(buf, 2, [(HEAD, HEAD + 8)]) == 3
    assert first_ready(buf, 2, [(HEAD + 64, HEAD + 72)]) == 4
    several = PacketBufferTiming(0, stalls=False)
    several.add_packet(0, 96, 0)
    several.commit(0, 0, [(HEAD, 8)])
    several.commit(1, 0, [(HEAD + 16, 8), (HEAD + 48, 8)])
    with pytest.raises(HxdpError, match="not supported: core 0's packet buffer stopping the input"):
        several.ready(0, 3, [(HEAD + 64, HEAD + 72)], False)


def test_zeroing_and_metadata_move_hold_the_next_row() -> None:
    buf = PacketBufferTiming(0, stalls=True)
    buf.add_packet(0, 64, 0)
    buf.adjust(10, 0, (HEAD + 64, HEAD + 164), None)  # 100 bytes from a word boundary: 4 cycles, 11 to 14
    assert first_ready(buf, 11, []) == 15
    buf.adjust(20, 0, (HEAD - 20, HEAD), (HEAD - 4, HEAD - 20, 12, False))  # 1 zeroing cycle, 2 chunks: 21 to 24
    assert first_ready(buf, 21, []) == 25
