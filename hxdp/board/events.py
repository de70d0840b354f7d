"""The board's event ring over AXI-Lite: the records of perf_event_output and the ring buffer helpers."""

from __future__ import annotations

from hxdp import params
from hxdp.board.transport import Board, BoardError
from hxdp.events import Event
from hxdp.models.maps import MapLayout

__all__ = ["read_events"]


def read_events(board: Board, layout: MapLayout | None = None,
                max_records: int | None = None) -> tuple[list[Event], int]:
    """Pop the records of the event ring (oldest first): perf_event_output and ring buffer records, their maps named
    from the layout when given; returns them and the dropped-records counter."""
    from hxdp.board.original import require_ours

    require_ours(board, "events (the event ring)")
    count, dropped = board.read_many([params.AXI_EVENT_COUNT, params.AXI_EVENT_DROPPED])
    if count > params.EVENT_FIFO_DEPTH:
        raise BoardError(f"event ring reports {count} records (depth {params.EVENT_FIFO_DEPTH}): not this bitstream")
    n = count if max_records is None else min(count, max_records)
    words = params.AXI_EVENT_WORDS
    ops: list[tuple[int, int | None]] = []
    for _ in range(n):
        ops += [(params.AXI_EVENT_HEAD + 4 * w, None) for w in range(words)] + [(params.AXI_EVENT_POP, 1)]
    vals = board.transact(ops)
    names = [r.name for r in layout.regions] if layout is not None else []
    out = []
    for k in range(n):
        w = [v or 0 for v in vals[k * (words + 1) : k * (words + 1) + words]]
        map_id, size, ctxlen = (w[0] >> 8) & 0xFF, w[2] & 0xFFFF, w[2] >> 16
        if size > params.EVENT_DATA_MAX or ctxlen > size:
            raise BoardError(f"event ring record of {size} bytes ({ctxlen} of the packet): not this bitstream")
        raw = b"".join(x.to_bytes(4, "little") for x in w[4:])
        own = size - ctxlen  # the program's bytes from word 0, the packet's from the next whole 64-bit word
        at = (own + 7) // 8 * 8
        out.append(Event("ringbuf" if w[0] & 1 else "perf", names[map_id] if map_id < len(names) else f"map#{map_id}",
                         w[1], raw[:own] + raw[at : at + ctxlen], ctxlen, w[3]))
    return out, dropped
