"""The packet buffer's timing on one core (sephirot_pktbuf.v): its input, its write buffer, the waits for packet bytes.

The multi-core model (hxdp.models.multicore) counts with it what a row of the RTL waits for before it runs (contract
section 6): packet bytes that have not arrived, or wait in the write buffer; the whole packet for a helper that reads
the packet through its own port and for an adjust helper; the cycles after a row in which the buffer writes a deferred
store, a zeroing or a moved metadata. The bytes sit in 8 banks of 64-bit words (word w in bank w % 8), written at most
once a cycle each: a 32-byte input word takes one half of them (banks 0-3 or 4-7), and when the row that commits in
its cycle (or the deferred store, the zeroing or the copy of that cycle) takes one of those banks, the word waits in a
one-word write buffer and is written in the first cycle its banks are free. Only the core's own writes take its banks,
and they happen at a row's commit and in the hold cycles after it, so what a row waits for is known when it starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hxdp import params
from hxdp.errors import HxdpError

HEAD = params.PKT_HEADROOM
WORD = params.INPUT_BYTES_PER_CYCLE  # an input word: 32 bytes, four 8-byte bank words
BANKS = params.PKT_BANKS
WORD_BANKS = WORD // 8


def word_banks(word: int) -> int:
    """The banks (bit mask) an input word at buffer offset 32 x `word` takes: one half of them."""
    first = (word * WORD_BANKS) % BANKS
    return ((1 << WORD_BANKS) - 1) << first


def store_words(off: int, size: int) -> list[int]:
    """The 8-byte words of the buffer a store of `size` bytes at buffer offset `off` writes (one or two)."""
    return list(range(off >> 3, (off + size - 1 >> 3) + 1))


def banks_of(words: list[int]) -> int:
    return sum(1 << b for b in {w % BANKS for w in words})


@dataclass
class _Packet:
    """A packet's input words on the core: the cycle each was put on the buffer's input, and written."""

    length: int
    fired: list[int]
    written: dict[int, int] = field(default_factory=dict)  # word: the cycle it was written


class PacketBufferTiming:
    """One core's packet buffer as its rows and the input use its banks (sephirot_pktbuf.v)."""

    def __init__(self, core: int, stalls: bool) -> None:
        self.core = core
        self.stalls = stalls  # the input may stop for this buffer alone (one core: the input is its own)
        self.packets: dict[int, _Packet] = {}
        self._fires: list[tuple[int, int, int]] = []  # (cycle, packet, word) not processed yet, in cycle order
        self._writes: dict[int, int] = {}  # cycle: banks the core's own writes take
        self._done = -2  # the last cycle the write buffer was followed through (a first word comes in cycle -1)
        self._held: tuple[int, int, int] | None = None  # (packet, word, banks) in the write buffer
        self.hold_end = 0  # the first cycle after the deferred store, zeroing and copy of the last row
        self._last = -2  # the last word's cycle
        self.pending: dict[int, int] = {}  # packet: the first cycle after its last row's deferred store, zeroing, move
        self.low_meta: dict[int, int] = {}  # packet: its lowest data_meta (buffer offset): below it bytes are zeroed

    # --- the input -------------------------------------------------------------------------------------------------
    def add_packet(self, index: int, length: int, first: int) -> None:
        """Packet `index` of `length` bytes comes to this buffer one 32-byte word a cycle from cycle `first`."""
        first = max(first, self.input_free())
        fired = [first + j for j in range(-(-length // WORD))]
        self.packets[index] = _Packet(length, fired)
        self._fires += [(c, index, j) for j, c in enumerate(fired)]
        self._fires.sort()
        self.low_meta[index] = HEAD
        self._last = fired[-1]

    def input_free(self) -> int:
        """The first cycle the input may bring a packet's first word (after the last word given, stops included)."""
        return self._last + 1

    def whole(self, index: int) -> int:
        """The first cycle packet `index` is whole in its buffer: its words written (as far as known: a word still in
        the write buffer counts from its cycle in), and its deferred store, zeroing and move done."""
        p = self.packets[index]
        return max(max(p.written.get(j, c) for j, c in enumerate(p.fired)) + 1, self.pending.get(index, 0))

    def _follow(self, upto: int) -> None:
        """Follow the input words and the write buffer through cycle `upto` (the core's writes up to it known)."""
        while self._done < upto:
            if self._held is None:
                nxt = self._fires[0][0] if self._fires else upto + 1
                if nxt > upto:
                    self._done = upto
                    break
                assert nxt > self._done, "an input word registered after its cycle was followed"
                c = nxt
            else:
                c = self._done + 1
            self._cycle(c)
            self._done = c
        for c in [c for c in self._writes if c <= self._done]:
            del self._writes[c]

    def _cycle(self, c: int) -> None:
        """Cycle c of the buffer's write side: the buffered word is written when its banks are free of the core's
        writes; an incoming word when its banks are free of both, else it takes the write buffer."""
        taken = self._writes.get(c, 0)
        held, written_held = self._held, False
        if held is not None and not taken & held[2]:
            self.packets[held[0]].written[held[1]] = c
            taken |= held[2]
            written_held = True
        if self._fires and self._fires[0][0] == c:
            _c, index, j = self._fires[0]
            banks = word_banks(HEAD // WORD + j)
            if not taken & banks:
                self.packets[index].written[j] = c
            elif held is None or written_held:
                self._held = (index, j, banks)
                self._fires.pop(0)
                return
            else:
                self._stall(c)
                return
            self._fires.pop(0)
        if written_held:
            self._held = None

    def _stall(self, c: int) -> None:
        """The write buffer is full and stays full, and the word coming in cycle c cannot be written either: the input
        stops for the cycle (in_ready_o low), and this word and the ones behind it come a cycle later."""
        if not self.stalls:
            raise HxdpError(f"not supported: core {self.core}'s packet buffer stopping the input in cycle {c} (its "
                            "write buffer full and both bank halves taken by the core's writes) on several cores, "
                            "because the model's dispatcher never stops the shared input (hxdp/models/pktbuf.py)")
        prev = c
        for n, (f, index, j) in enumerate(self._fires):
            nf = max(f, prev + 1)
            if nf == f:
                break
            self._fires[n], prev = (nf, index, j), nf
            self.packets[index].fired[j] = nf
            self._last = max(self._last, nf)

    def first_word(self, index: int) -> int:
        """The cycle packet `index`'s first word comes in, stops included (one core: every packet before it has ended,
        so the core's writes until then are known)."""
        while (c := next((c for c, i, j in self._fires if i == index and j == 0), None)) is not None:
            self._follow(c)
        return self.packets[index].fired[0]

    # --- the core's writes -----------------------------------------------------------------------------------------
    def _write(self, c: int, banks: int) -> None:
        if banks:
            self._writes[c] = self._writes.get(c, 0) | banks

    def commit(self, c: int, index: int, stores: list[tuple[int, int]]) -> None:
        """The packet stores (buffer offset, size) of a row of packet `index`, in lane order (store ports 0 and 1),
        written in cycle c: a second port's word in a bank the first takes with another word is written again,
        whole, in cycle c + 1, while the next row waits."""
        words = [store_words(off, size) for off, size in stores]
        self._write(c, banks_of([w for ws in words for w in ws]))
        if len(words) > 1 and any(w % BANKS == v % BANKS and w != v for w in words[1] for v in words[0]):
            self._write(c + 1, banks_of(words[1]))
            self.hold_end = self.pending[index] = c + 2

    def adjust(self, c: int, index: int, zero: tuple[int, int] | None, copy: tuple[int, int, int, bool] | None) -> None:
        """After an adjust helper's row committing in cycle c: the zeroing of [lo, hi) (buffer offsets), 32 bytes a
        cycle from lo's word, then the copy of the metadata (source, destination, length, upward), 8 bytes a cycle
        (each chunk written the cycle after its read); the next row waits meanwhile."""
        e = max(c + 1, self.hold_end)
        if zero is not None:
            lo, hi = zero
            while lo < hi:
                w0 = lo >> 3
                top = min(8 * w0 + WORD, hi)
                self._write(e, banks_of(list(range(w0, (top - 1 >> 3) + 1))))
                lo, e = top, e + 1
        if copy is not None:
            _src, dst, length, up = copy
            n = -(-length // 8)
            order = range(n) if up else range(n - 1, -1, -1)
            for k, chunk in enumerate(order):  # read in e + k, written in e + k + 1
                size = min(8, length - 8 * chunk)
                self._write(e + k + 1, banks_of(store_words(dst + 8 * chunk, size)))
            e += n + 1
        self.hold_end = self.pending[index] = max(self.hold_end, e)

    # --- the waits -------------------------------------------------------------------------------------------------
    def ready(self, index: int, t: int, accesses: list[tuple[int, int]], whole: bool) -> bool:
        """Whether a row of packet `index` runs in cycle t rather than wait: no deferred store, zeroing or copy
        under way; the bytes of its packet accesses ([lo, hi) buffer offsets) arrived and written; the whole packet
        in when `whole` (a helper reading the packet, an adjust helper)."""
        if t < self.hold_end:
            return False
        if not accesses and not whole:
            return True
        self._follow(t - 1)
        p = self.packets[index]
        for lo, hi in accesses:
            if lo >= HEAD + p.length:  # past the input frame (grown by adjust_tail: the packet is whole already)
                continue
            # the words up to the one holding the access's last byte within the input frame, and those it touches
            last = min(hi - HEAD, p.length) - 1
            if last < 0:
                continue
            first = max(lo - HEAD, 0) // WORD
            if any(p.written.get(j, t) >= t for j in range(first, last // WORD + 1)):
                return False
            if any(c >= t for c in p.fired[: last // WORD + 1]):
                return False
        return not whole or (len(p.written) == len(p.fired) and max(p.written.values()) < t)

    def forget(self, index: int) -> None:
        """Packet `index` has ended and its core's output has what it needs of it: drop it once its words are all
        written (a word still coming keeps it until the next time)."""
        p = self.packets.get(index)
        if p is not None and len(p.written) == len(p.fired):
            del self.packets[index]
            self.pending.pop(index, None)
            self.low_meta.pop(index, None)
