"""The outcome of running one packet on a model, on the RTL or in the kernel (RunResult)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hxdp import params
from hxdp.events import Event


@dataclass
class RunResult:
    """One packet's result.

    action:   the raw low 32 bits of r0 (values above 4 are treated as ABORTED by the packet path).
    packet:   the frame as it leaves, data..data_end.
    redirect: egress ifindex (from bpf_redirect or the devmap entry) when action is XDP_REDIRECT, else None.
    fault:    why the hardware aborted the packet (access fault, cycle limit, ...), None normally.
    cycles:   VLIW model/RTL: cycles of the packet; sequential model: instructions executed.
    trace:    optional per-row (VLIW) or per-instruction (sequential) records.
    meta:     the XDP metadata in front of data (data_meta..data), empty unless adjust_meta was used.
    printk:   trace_printk records of this packet: (format bytes, (r3, r4, r5)).
    events:   records this packet sent to the host (perf_event_output, ring buffer), in order.
    """

    action: int
    packet: bytes
    redirect: int | None = None
    fault: str | None = None
    cycles: int = 0
    trace: list[Any] = field(default_factory=list)
    meta: bytes = b""
    printk: list[tuple[bytes, tuple[int, ...]]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    @property
    def action_name(self) -> str:
        return params.ACTION_NAMES.get(self.action, f"ABORTED({self.action})")

    def same_outcome(self, other: RunResult) -> bool:
        """Action, bytes and redirect target agree (cycles, trace and fault text are not compared)."""
        return (self.action, self.packet, self.redirect) == (other.action, other.packet, other.redirect)
