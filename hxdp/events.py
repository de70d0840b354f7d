"""Events to the host: the records of perf_event_output and the BPF ring buffer, as JSON lines or a pcap."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hxdp.errors import HxdpError

KINDS = ("perf", "ringbuf")


@dataclass
class Event:
    """One record a program sent to the host.

    kind:   "perf" (bpf_perf_event_output into a PERF_EVENT_ARRAY) or "ringbuf" (bpf_ringbuf_output or a
            submitted bpf_ringbuf_reserve record of a RINGBUF).
    map:    the map's name.
    cpu:    perf: the array index the record went to (BPF_F_CURRENT_CPU: the running CPU); ringbuf: 0.
    data:   the sample: perf, the program's bytes then `ctxlen` packet bytes; ringbuf, the record.
    ctxlen: perf: packet bytes at the end of data (flags bits 32..51, BPF_F_CTXLEN_MASK); ringbuf 0.
    packet: the number of the packet (of its run) that sent it; -1 until the runner numbers it.
    exact:  False when the reader cannot know the sample's length: the kernel's perf records are padded so that
            the sample and its u32 size fill whole u64s, with bytes the kernel leaves unwritten.
    cycle:  on several cores, the cycle the event unit handed the record over (the order of the records of all
            cores, hxdp.models.multicore.MulticoreRun.events); -1 where not known.
    """

    kind: str
    map: str
    cpu: int
    data: bytes
    ctxlen: int = 0
    packet: int = -1
    exact: bool = True
    cycle: int = field(default=-1, compare=False)  # (when, not what: records of two engines compare equal)

    @property
    def size(self) -> int:
        return len(self.data)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"packet": self.packet, "kind": self.kind, "map": self.map, "cpu": self.cpu,
                               "size": self.size, "data": self.data.hex()}
        if self.ctxlen:
            doc["ctxlen"] = self.ctxlen
        return doc

    def line(self) -> str:
        return json.dumps(self.to_json())

    def sample(self) -> bytes:
        """The packet bytes a perf record carries (flags' BPF_F_CTXLEN), empty when it carries none."""
        return self.data[len(self.data) - self.ctxlen:] if self.ctxlen else b""


def perf_padded(n: int) -> int:
    """Bytes of a perf raw sample of n bytes as a reader receives it: u32 size + sample rounded up to u64s."""
    return (n + 4 + 7) // 8 * 8 - 4


def same_event(kernel: Event, ours: Event) -> bool:
    """The kernel's record and ours agree: kind, map, CPU and sample bytes (a padded kernel perf sample agrees
    with ours when its length is ours padded and its first bytes are ours)."""
    if (kernel.kind, kernel.map, kernel.cpu) != (ours.kind, ours.map, ours.cpu):
        return False
    if kernel.exact:
        return kernel.data == ours.data
    return len(kernel.data) == perf_padded(len(ours.data)) and kernel.data[: len(ours.data)] == ours.data


def event_lines(events: Iterable[Event]) -> str:
    """JSON lines, one per event (the output of `hxdp events`)."""
    return "".join(e.line() + "\n" for e in events)


def run_events(results: Iterable[Any]) -> list[Event]:
    """The events of a run's results (RunResult), numbered by packet (the index in the run), in the order the event
    unit handed them over where their cycles are known (several cores: hxdp.models.multicore, the RTL), else in
    packet order."""
    out = []
    for i, r in enumerate(results):
        for e in r.events:
            e.packet = i
            out.append(e)
    return sorted(out, key=lambda e: e.cycle) if all(e.cycle >= 0 for e in out) else out


def read_event_lines(text: str, source: str = "events") -> list[Event]:
    """Events from JSON lines (event_lines' output); HxdpError names the line that is not an event."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
            kind = doc["kind"]
            if kind not in KINDS:
                raise ValueError(f"kind {kind!r}")
            out.append(Event(kind, str(doc["map"]), int(doc["cpu"]), bytes.fromhex(doc["data"]),
                             int(doc.get("ctxlen", 0)), int(doc.get("packet", -1))))
        except (ValueError, KeyError, TypeError) as exc:
            raise HxdpError(f"{source}:{n}: not an event record ({exc})") from None
    return out


def samples(events: Iterable[Event]) -> list[bytes]:
    """The packet samples of perf records, in order (the frames `hxdp events --pcap` writes)."""
    return [e.sample() for e in events if e.ctxlen]
