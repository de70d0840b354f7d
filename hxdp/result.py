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
    host:     the host queue an XDP_REDIRECT delivers to, ("cpu", cpu) from a cpumap entry or ("xsk", queue id)
              from an xskmap entry (redirect is None then); None otherwise.
    broadcast: the ports (ifindexes, ascending) an XDP_REDIRECT with BPF_F_BROADCAST copies the frame to (the
              ingress port left out with BPF_F_EXCLUDE_INGRESS; possibly none); None otherwise.
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
    host: tuple[str, int] | None = None
    broadcast: tuple[int, ...] | None = None
    events: list[Event] = field(default_factory=list)

    @staticmethod
    def broadcast_ports(word: int, ingress_ifindex: int) -> tuple[int, ...]:
        """The ports of a broadcast as the hardware reports it (params.BCAST_PORTS mask bits, bit 31 exclude the
        ingress port), for a packet that came in on `ingress_ifindex`."""
        ports = (i + 1 for i in range(params.BCAST_PORTS) if word >> i & 1)
        exclude = word & params.BCAST_EXCLUDE_INGRESS
        return tuple(p for p in ports if not (exclude and p == ingress_ifindex))

    @property
    def action_name(self) -> str:
        return params.ACTION_NAMES.get(self.action, f"ABORTED({self.action})")

    def same_outcome(self, other: RunResult) -> bool:
        """Action, bytes and redirect target (port or host queue) agree (cycles, trace and fault text are not
        compared)."""
        return ((self.action, self.packet, self.redirect, self.host, self.broadcast)
                == (other.action, other.packet, other.redirect, other.host, other.broadcast))

    @property
    def destination(self) -> str | None:
        """Where a redirect goes, as the tools print it: `port N`, `cpu N` or `xsk N` (None without one)."""
        if self.host is not None:
            return f"{self.host[0]} {self.host[1]}"
        if self.broadcast is not None:
            return "ports " + (",".join(map(str, self.broadcast)) or "none")
        return None if self.redirect is None else f"port {self.redirect}"
