"""The event unit: bpf_perf_event_output and the BPF ring buffer helpers over the event ring the host reads.

Semantics and return codes are Linux's (kernel/bpf/ringbuf.c, kernel/trace/bpf_trace.c, net/core/filter.c
bpf_xdp_event_output); the hardware's limits are docs/helpers.md's: a record holds at most EVENT_DATA_MAX sample
bytes, a packet sends at most EVENT_PACKET_MAX records, and a ring's space is the running packet's (its producer
position starts at 0 when a packet starts: the hardware hands every record to the event ring at once, as the
kernel's ring is empty again when its reader keeps up; on several cores each core has its own copy of a ring's
region, as of a per-CPU array's, hxdp.models.multicore). Latencies (extra cycles of the calling row) are here too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.events import Event
from hxdp.models.maps import MapRegion, MapState
from hxdp.models.memory import DataMemory

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1
EINVAL, EFAULT, E2BIG, ENOSPC, EAGAIN = 22, 14, 7, 28, 11
BPF_F_INDEX_MASK = M32
BPF_F_CURRENT_CPU = M32
BPF_F_CTXLEN_SHIFT = 32
BPF_F_CTXLEN_MASK = 0xFFFFF << BPF_F_CTXLEN_SHIFT
BPF_RB_WAKEUP_FLAGS = 3  # BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP: no meaning on the NIC, accepted
LEN_MASK = params.RINGBUF_DISCARD - 1


class EventFault(HxdpError):
    """A call the event unit cannot complete (not a perf/ring map, a record pointer of no reservation)."""


def copy_cycles(n: int) -> int:
    return -(-n // params.EVENT_BYTES_PER_CYCLE)


def record_tag(off: int, size: int) -> int:
    """The tag of a pointer to `size` writable bytes at map offset `off` (params.map_tag; a reserved record of 0
    bytes gets length 0: its pointer reaches nothing, as the hardware's)."""
    return (size + 7) // 8 << params.MAP_TAG_LEN_LSB | (off >> 3) & ((1 << params.MAP_TAG_START_BITS) - 1)


def record_len(size: int) -> int:
    """Ring bytes a record of `size` bytes takes: header and data rounded up to 8, as Linux's."""
    return (size + params.RINGBUF_HEADER + 7) & ~7


@dataclass
class EventUnit:
    """The event ring as the running packet sees it: the records it pushed (the host drained the ring before the
    packet), the rings' producer positions, and the host's counters."""

    mem: DataMemory
    state: MapState
    cpu: int = 0  # the core's number: BPF_F_CURRENT_CPU's slot (execution contract section 8)
    records: list[Event] = field(default_factory=list)
    producer: dict[int, int] = field(default_factory=dict)  # map id -> ring bytes reserved by this packet
    dropped: int = 0  # submitted records past the packet's EVENT_PACKET_MAX

    def new_packet(self) -> None:
        self.records = []
        self.producer = {}

    def _region(self, map_id: int, kind: str, helper: str) -> MapRegion:
        r = self.state.layout.region(map_id)
        if r.kind != kind:
            raise EventFault(f"{helper}: map {r.name} is a {r.kind}, not a {kind}")
        return r

    def _full(self) -> bool:
        return len(self.records) >= params.EVENT_PACKET_MAX

    def perf_event_output(self, map_id: int, flags: int, data: int, size: int) -> tuple[int, int]:
        """bpf_perf_event_output(ctx, map, flags, data, size) of XDP: (r0, extra cycles)."""
        r = self._region(map_id, "perf_event_array", "perf_event_output")
        ctxlen = (flags & BPF_F_CTXLEN_MASK) >> BPF_F_CTXLEN_SHIFT
        if flags & ~(BPF_F_CTXLEN_MASK | BPF_F_INDEX_MASK):
            return -EINVAL & M64, 1
        if ctxlen > self.mem.data_end - self.mem.data:
            return -EFAULT & M64, 1
        index = flags & BPF_F_INDEX_MASK
        if index == BPF_F_CURRENT_CPU:
            index = self.cpu  # the slot of the core that runs the packet
        if index >= r.max_entries:
            return -E2BIG & M64, 1
        if size + ctxlen > params.EVENT_DATA_MAX:
            return -E2BIG & M64, 1
        if self._full():
            return -ENOSPC & M64, 1
        sample = self.mem.read(data, size) + self.mem.read(self.mem.data, ctxlen)
        self.records.append(Event("perf", r.name, index, sample, ctxlen))
        return 0, 1 + copy_cycles(size) + copy_cycles(ctxlen)

    def _reserve(self, r: MapRegion, size: int) -> int | None:
        """Ring offset of a new record of `size` bytes (its header's), or None when the ring has no room."""
        if size > params.EVENT_DATA_MAX:
            return None
        pos, n = self.producer.get(r.id, 0), record_len(size)
        # Linux: the producer may not get more than size - 1 bytes ahead of the consumer (here at 0)
        if pos + n > r.max_entries - 1:
            return None
        self.producer[r.id] = pos + n
        return pos

    def ringbuf_output(self, map_id: int, data: int, size: int, flags: int) -> tuple[int, int]:
        r = self._region(map_id, "ringbuf", "ringbuf_output")
        if flags & ~BPF_RB_WAKEUP_FLAGS:
            return -EINVAL & M64, 1
        if self._full() or self._reserve(r, size) is None:
            return -EAGAIN & M64, 1
        self.records.append(Event("ringbuf", r.name, 0, self.mem.read(data, size)))
        return 0, 1 + copy_cycles(size)

    def ringbuf_reserve(self, map_id: int, size: int, flags: int) -> tuple[int, int]:
        """A pointer to `size` bytes of the ring (behind the record's header, written now), or 0 (NULL)."""
        r = self._region(map_id, "ringbuf", "ringbuf_reserve")
        if flags:
            return 0, 1
        pos = self._reserve(r, size)
        if pos is None:
            return 0, 1
        header = r.offset + pos
        self.state.mem[header : header + 8] = ((size | params.RINGBUF_BUSY).to_bytes(4, "little")
                                               + map_id.to_bytes(4, "little"))
        rec = header + params.RINGBUF_HEADER
        return record_tag(rec, size) << params.MAP_TAG_SHIFT | (params.MAP_BASE + rec), 1

    def _record(self, ptr: int, helper: str) -> tuple[MapRegion, int, int]:
        """The ring, header offset and size of the reserved record at `ptr`."""
        header = (ptr & M32) - params.MAP_BASE - params.RINGBUF_HEADER
        mem = self.state.mem
        if not 0 <= header <= len(mem) - 8:
            raise EventFault(f"{helper}: 0x{ptr:x} is not a ring buffer record")
        word = int.from_bytes(mem[header : header + 4], "little")
        map_id = int.from_bytes(mem[header + 4 : header + 8], "little")
        size = word & LEN_MASK
        if not word & params.RINGBUF_BUSY or map_id >= len(self.state.layout.regions):
            raise EventFault(f"{helper}: 0x{ptr:x} is not a reserved ring buffer record")
        r = self.state.layout.region(map_id)
        if (r.kind != "ringbuf" or not r.offset <= header < header + record_len(size) <= r.offset + r.size
                or (ptr & M64) >> params.MAP_TAG_SHIFT != record_tag(header + params.RINGBUF_HEADER, size)):
            raise EventFault(f"{helper}: 0x{ptr:x} is not a reserved record of a ring buffer")
        return r, header, size

    def ringbuf_commit(self, ptr: int, discard: bool) -> tuple[int, int]:
        """bpf_ringbuf_submit / bpf_ringbuf_discard (flags are wake-up hints): the record leaves for the host, or
        not; its header's busy bit is cleared either way (void helpers: r0 is 0). The header is read in the first
        cycle, the record copied from the second, the header written in the last."""
        helper = "ringbuf_discard" if discard else "ringbuf_submit"
        # the header read is the unit's own: in the map memory its tag is that word's (it faults as the port's would)
        hdr = (ptr & M32) - params.RINGBUF_HEADER
        if hdr >> params.REGION_SHIFT == params.MAP_BASE >> params.REGION_SHIFT:
            hdr |= record_tag(hdr - params.MAP_BASE, params.RINGBUF_HEADER) << params.MAP_TAG_SHIFT
        self.mem.check(hdr, params.RINGBUF_HEADER)
        r, header, size = self._record(ptr, helper)
        word = size | (params.RINGBUF_DISCARD if discard else 0)
        self.state.mem[header : header + 4] = word.to_bytes(4, "little")
        if discard:
            return 0, 2
        if self._full():
            self.dropped += 1
            return 0, 2
        data = self.mem.read(ptr, size)
        self.records.append(Event("ringbuf", r.name, 0, data))
        return 0, 2 + copy_cycles(size)
