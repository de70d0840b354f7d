"""The trace_printk FIFO of the board: pop its records and format them as bpf_trace_printk would print them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hxdp import params
from hxdp.board.transport import Board, BoardError

MASK32 = 0xFFFFFFFF


@dataclass
class PrintkRecord:
    """One trace_printk call: the packet number (packets the core started before it), format bytes, r3..r5."""

    packet: int
    fmt: bytes
    args: tuple[int, int, int]

    def text(self) -> str:
        return format_printk(self.fmt, self.args)

    def line(self) -> str:
        return f"pkt {self.packet}: bpf_trace_printk: {self.text()}"


def _conv(spec: str, conv: str, length: str, arg: int) -> str:
    wide = length in ("l", "ll")
    v = arg & ((1 << 64) - 1 if wide else MASK32)
    if conv in "di":
        bits = 64 if wide else 32
        v = v - (1 << bits) if v >> (bits - 1) else v
        return ("%" + spec + "d") % v
    if conv == "u":
        return ("%" + spec + "d") % v
    if conv in "xX":
        return ("%" + spec + conv) % v
    if conv == "c":
        return ("%" + spec + "c") % chr(v & 0xFF)
    if conv == "p":
        return ("%" + spec + "s") % f"0x{arg & ((1 << 64) - 1):x}"
    return ("%" + spec + "s") % f"<string at 0x{arg & MASK32:08x}>"  # %s: the board does not copy the string


def format_printk(fmt: bytes, args: tuple[int, ...]) -> str:
    """The text bpf_trace_printk would print: %d %i %u %x %X %c %p %s with l/ll, flags and width (%s: the pointer;
    the hardware records the arguments, not the memory they point to). A bad conversion is printed as is."""

    text = fmt.decode("latin-1")
    out: list[str] = []
    pos = 0
    used = 0
    for m in re.finditer(r"%(?P<spec>[-+ #0]*\d*)(?P<len>ll|l|h|hh)?(?P<conv>[diuxXcps%])", text):
        out.append(text[pos : m.start()])
        pos = m.end()
        if m["conv"] == "%":
            out.append("%")
        elif used < len(args):
            out.append(_conv(m["spec"], m["conv"], m["len"] or "", args[used]))
            used += 1
        else:
            out.append(m.group(0))
    out.append(text[pos:])
    return "".join(out).rstrip("\n")


def read_tracelog(board: Board, max_records: int | None = None) -> tuple[list[PrintkRecord], int]:
    """Pop the records in the trace_printk FIFO (oldest first); returns them and the dropped-records counter."""
    from hxdp.board.original import require_ours

    require_ours(board, "tracelog (the trace_printk FIFO)")
    with board.lease():  # the count read and the pops belong together
        return _read_tracelog(board, max_records)


def _read_tracelog(board: Board, max_records: int | None) -> tuple[list[PrintkRecord], int]:
    count, dropped = board.read_many([params.AXI_TRACE_COUNT, params.AXI_TRACE_DROPPED])
    if count > params.PRINTK_FIFO_DEPTH:
        raise BoardError(f"trace FIFO reports {count} records (depth {params.PRINTK_FIFO_DEPTH}): not this bitstream")
    n = count if max_records is None else min(count, max_records)
    words = params.AXI_TRACE_WORDS
    ops: list[tuple[int, int | None]] = []
    for _ in range(n):
        ops += [(params.AXI_TRACE_HEAD + 4 * w, None) for w in range(words)] + [(params.AXI_TRACE_POP, 1)]
    vals = board.transact(ops)
    recs = []
    for k in range(n):
        w = [v or 0 for v in vals[k * (words + 1) : k * (words + 1) + words]]
        length = min(w[0] & 0xFF, params.PRINTK_FMT_MAX)
        fmt = b"".join(x.to_bytes(4, "little") for x in w[2 : 2 + params.PRINTK_FMT_MAX // 4])[:length]
        a = w[2 + params.PRINTK_FMT_MAX // 4 :]
        recs.append(PrintkRecord(w[1], fmt, (a[0] | a[1] << 32, a[2] | a[3] << 32, a[4] | a[5] << 32)))
    return recs, dropped
