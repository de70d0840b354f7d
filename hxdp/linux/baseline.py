"""Linux XDP performance baseline: BPF_PROG_TEST_RUN timing and native XDP through the veth driver in a netns.

Modes (each measured per distinct packet of the pcap, the first --max-packets of them, medians of --runs runs,
then averaged with the packets' weights in the pcap):
- test_run: BPF_PROG_TEST_RUN with `repeat` (JIT as configured, bpf_jit_enable is recorded). The kernel's average
  is rounded down to whole ns, so the wall clock and CPU time around the syscall are reported too.
  A test run with repeat > 1 puts the program into the kernel's XDP dispatcher and takes it out again, which
  costs 15-30 ms of RCU synchronisation per call (wall clock only): the program is therefore kept attached to a
  spare veth ("parked") while it is timed, so that the dispatcher already holds it. Without veth (--no-veth)
  the wall clock includes that cost and the Mpps come from the kernel's average.
- veth_live: live-frames test run (BPF_F_TEST_XDP_LIVE_FRAMES, batch_size) in the tool's namespace with an
  xdp_md naming veth `a` as the ingress: XDP_TX and redirected frames go through the veth driver to `b`, where an
  XDP_DROP sink gives them the NAPI receive path; XDP_PASS frames enter the network stack of the namespace.
- veth_native: the program attached in native mode to `b`, fed through the veth by an injector (r0 = XDP_TX)
  test-run in live-frames mode on `a`; `a` has the XDP_DROP sink for what the program sends back. Injector and
  receiver run on the same CPU (the veth NAPI runs in the injector's softirq). ns/packet = CPU time (or wall
  clock) of the injection / frames counted on `b` (rx_packets), `delivered` = counted / injected.
Three figures per packet: the kernel's average (test_run, veth_live), the wall clock and the CPU time of the
measuring thread around the syscall. Mpps = 1000 / one of them (Options.rate_from, default "cpu"): on this kernel
(no IRQ time accounting) the thread's CPU time includes the veth NAPI softirq work it triggers, and unlike the
wall clock it does not count time other processes of a shared machine take; on a quiet machine cpu and wall agree.
Devmap entries of the maps file are pointed at the device the program runs on (test_run, veth_live: `a`;
veth_native: `b`): the ifindexes of the file belong to another machine. The namespace (hxb-<pid>-<token>) holds
both veth pairs and is deleted on exit, on exceptions and on SIGINT/SIGTERM/SIGHUP; namespaces of dead baseline
processes are removed when the next one starts. The object is loaded by the kernel oracle (hxdp.linux.kernel); the
namespace, the attach and the live-frames runs are hxdp.linux.xdplab.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import statistics
import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hxdp import params
from hxdp.errors import HxdpError, KernelUnavailable, PcapError
from hxdp.linux.xdplab import (
    NS_PREFIX,
    BaselineError,
    RunOutcome,
    VethLab,
    list_namespaces,
    load_raw_xdp,
    remove_stale_namespaces,
    test_run,
    xdp_attached,
)
from hxdp.traffic.pcap import read_pcap

# names other modules and the tests reach through this module
__all__ = ["NS_PREFIX", "BaselineError", "BaselineResult", "HxdpError", "ModeResult", "Options", "RunOutcome",
           "available", "distinct_packets", "format_table", "list_namespaces", "load_raw_xdp", "read_pcap",
           "remove_stale_namespaces", "run_baseline", "test_run", "to_json"]

SEPHIROT_MHZ = 156.25
ACTIONS = params.ACTION_NAMES
MODES = ("test_run", "veth_live", "veth_native")
MODE_TITLES = {
    "test_run": "BPF_PROG_TEST_RUN (JIT, no driver)",
    "veth_live": "live frames through veth driver",
    "veth_native": "native XDP on veth, fed by XDP_TX injector",
}
DEVMAP_TYPES = frozenset(params.LINUX_MAP_TYPE_IDS[n] for n in ("devmap", "devmap_hash"))


def available() -> tuple[bool, str]:
    """Whether bpf() lets this process load and test-run an XDP program, and why not (the kernel oracle's probe)."""
    from hxdp.linux.kernel import available as kernel_available

    return kernel_available()



# --------------------------------------------------------------------------------------------------------------
# object loading and map configuration
# --------------------------------------------------------------------------------------------------------------


class BpfObject:
    """The program under test, loaded by the kernel oracle (hxdp.kernel.KernelProgram); a context manager."""

    def __init__(self, path: str | os.PathLike[str], section: str | None = None, prog: str | None = None) -> None:
        from hxdp.linux.kernel import KernelProgram

        self.path = str(path)
        self.kp = KernelProgram(path, section, prog)
        self.fd: int = self.kp.prog_fd
        self.name: str = self.kp.name
        self.section: str = self.kp.section

    def apply_config(self, config: dict | None, devmap_ifindex: int | None = None,
                     source: str | None = None) -> list[str]:
        """Write the maps file's entries; devmap targets become devmap_ifindex (a device of this namespace).

        Returns notes on what was rewritten."""
        from hxdp.models.mapconfig import MapError, check_map_config

        notes: list[str] = []
        if not config:
            return notes
        try:
            check_map_config(config, source or "map config")
        except MapError as exc:
            raise BaselineError(str(exc)) from None
        cfg: dict = {"maps": {}}
        for name, entries in (config.get("maps") or {}).items():
            if name not in self.kp.maps:
                raise BaselineError(f"{source or 'map config'}: no map named {name!r} in {self.path} "
                                    f"(maps: {', '.join(self.kp.maps) or 'none'})")
            m = self.kp.map(name)
            if m.type in DEVMAP_TYPES and devmap_ifindex is not None and isinstance(entries, list):
                new = []
                for e in entries:
                    value = bytes.fromhex(e["value"].replace(" ", "").replace("_", ""))
                    if len(value) >= 4:
                        old = struct.unpack_from("<I", value)[0]
                        value = struct.pack("<I", devmap_ifindex) + bytes(len(value) - 4)  # no devmap program
                        notes.append(f"{name}[{e['key']}]: ifindex {old} -> {devmap_ifindex}")
                    new.append({"key": e["key"], "value": value.hex()})
                entries = new
            cfg["maps"][name] = entries
        self.kp.apply_config(cfg, source=source)
        return notes

    def close(self) -> None:
        self.kp.close()

    def __enter__(self) -> BpfObject:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_config(path: str | os.PathLike[str] | None) -> dict | None:
    """Read an initial map configuration file ({"maps": {name: [{"key": hex, "value": hex}]}})."""
    if path is None:
        return None
    from hxdp.models.mapconfig import MapError, load_map_config

    try:
        return load_map_config(path)
    except MapError as exc:
        raise BaselineError(str(exc)) from None


# --------------------------------------------------------------------------------------------------------------
# traffic (read with hxdp.pcap)
# --------------------------------------------------------------------------------------------------------------


def distinct_packets(frames: list[bytes], limit: int) -> list[tuple[bytes, int]]:
    """The first `limit` distinct frames, in order of first appearance, with how often each occurs overall."""
    counts: dict[bytes, int] = {}
    for f in frames:
        counts[f] = counts.get(f, 0) + 1
    return list(counts.items())[:limit]


# --------------------------------------------------------------------------------------------------------------
# measurements
# --------------------------------------------------------------------------------------------------------------


@dataclass
class PacketResult:
    """The medians of K runs of one mode on one distinct packet."""

    index: int  # first position in the pcap
    length: int
    count: int  # occurrences in the pcap (the weight)
    action: str
    ns_per_packet: float  # kernel's average (test_run, veth_live); CPU time for veth_native (no kernel figure)
    wall_ns_per_packet: float
    cpu_ns_per_packet: float
    runs_ns: list[float] = field(default_factory=list)
    runs_wall_ns: list[float] = field(default_factory=list)
    runs_cpu_ns: list[float] = field(default_factory=list)
    delivered: float | None = None  # veth modes: frames counted on the receiving veth / frames run


@dataclass
class ModeResult:
    """One mode of one program: per-packet medians averaged with the packets' weights (counts in the pcap)."""

    mode: str
    ns_per_packet: float  # the kernel's average (veth_native: CPU time)
    wall_ns_per_packet: float
    mpps: float  # 1000 / rate_ns_per_packet
    mpps_from: str = "cpu"  # which figure gives the rate: "cpu", "wall" or "kernel"
    cpu_ns_per_packet: float = math.nan
    rate_ns_per_packet: float = math.nan  # the ns/packet the Mpps come from
    sephirot_ratio: float | None = None  # Sephirot Mpps / this Mpps
    packets: list[PacketResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class BaselineResult:
    program: str
    object: str
    section: str
    pcap: str
    maps: str | None
    repeat: int
    runs: int
    sephirot_cycles: float | None
    sephirot_mpps: float | None
    modes: list[ModeResult] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Options:
    """How to measure. rate_from: the figure Mpps come from: "cpu" (CPU time of the measuring thread, which on
    these kernels includes the veth softirq work it triggers; robust to other load on a shared machine), "wall"
    (wall clock, the truth on a quiet machine) or "kernel" (the kernel's own average; veth_native has none and
    uses cpu)."""

    rate_from: str = "cpu"
    repeat: int = 1_000_000
    runs: int = 5
    max_packets: int = 4
    batch_size: int = 64
    veth: bool = True
    native: bool = True
    cpu: int | None = 0
    sephirot_cycles: float | None = None


def _weighted(values: list[tuple[float, int]]) -> float:
    total = sum(c for _, c in values)
    return sum(v * c for v, c in values) / total if total else math.nan


def _action(retval: int) -> str:
    return ACTIONS.get(retval, str(retval))


Sample = tuple[int | None, float, float, float, float | None]  # retval, kernel ns, wall ns, cpu ns, delivered


def _measure(mode: str, packets: list[tuple[int, bytes, int]], runs: int, rate_from: str,
             one: Callable[[bytes], Sample]) -> ModeResult:
    results: list[PacketResult] = []
    for index, pkt, count in packets:
        ks, ws, cs, delivered = [], [], [], []
        action = ""
        for _ in range(runs):
            retval, kns, wns, cns, frac = one(pkt)
            ks.append(kns)
            ws.append(wns)
            cs.append(cns)
            if frac is not None:
                delivered.append(frac)
            action = _action(retval) if retval is not None else "-"
        med = statistics.median
        results.append(PacketResult(index, len(pkt), count, action, med(ks), med(ws), med(cs), ks, ws, cs,
                                    med(delivered) if delivered else None))
    ns = _weighted([(r.ns_per_packet, r.count) for r in results])
    wall = _weighted([(r.wall_ns_per_packet, r.count) for r in results])
    cpu = _weighted([(r.cpu_ns_per_packet, r.count) for r in results])
    if mode == "veth_native" and rate_from == "kernel":
        rate_from = "cpu"
    rate = {"cpu": cpu, "wall": wall, "kernel": ns}[rate_from]
    return ModeResult(mode, ns, wall, 1000.0 / rate if rate > 0 else math.nan, rate_from, cpu, rate,
                      packets=results)


@contextlib.contextmanager
def _pinned(cpu: int | None) -> Iterator[None]:
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        yield
        return
    old = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError as exc:
        raise BaselineError(f"cannot pin to CPU {cpu}: {exc.strerror}") from exc
    try:
        yield
    finally:
        os.sched_setaffinity(0, old)


def run_baseline(obj_path: str, pcap: str, *, section: str | None = None, prog: str | None = None,
                 maps: str | None = None,
                 options: Options | None = None, progress: Callable[[str], None] | None = None) -> BaselineResult:
    """Measure one program: test_run always; veth_live and veth_native unless options.veth is False."""
    opt = options or Options()
    if opt.repeat < 2 or opt.runs < 1 or opt.max_packets < 1:
        raise BaselineError("--repeat must be at least 2, --runs and --max-packets positive")
    if opt.rate_from not in ("cpu", "wall", "kernel"):
        raise BaselineError(f"rate_from must be cpu, wall or kernel, not {opt.rate_from!r}")
    say = progress or (lambda msg: None)
    config = load_config(maps)
    frames = read_pcap(pcap)
    if not frames:
        raise PcapError(f"{pcap}: no packets to measure")
    for i, f in enumerate(frames):
        if len(f) < 14:
            raise PcapError(f"{pcap}: packet {i} is {len(f)} bytes, shorter than an Ethernet header")
    first_index: dict[bytes, int] = {}
    for i, f in enumerate(frames):
        first_index.setdefault(f, i)
    packets = [(first_index[p], p, c) for p, c in distinct_packets(frames, opt.max_packets)]
    ok, why = available()
    if not ok:
        raise KernelUnavailable(why)
    sephirot_mpps = SEPHIROT_MHZ / opt.sephirot_cycles if opt.sephirot_cycles else None
    with _pinned(opt.cpu), contextlib.ExitStack() as stack:
        lab: VethLab | None = stack.enter_context(VethLab()) if opt.veth else None
        obj = stack.enter_context(BpfObject(obj_path, section=section, prog=prog))
        result = BaselineResult(obj.name, obj_path, obj.section, pcap, maps, opt.repeat, opt.runs,
                                opt.sephirot_cycles, sephirot_mpps)
        # devmap entries name devices of the config's machine: point them at the measured program's ingress
        notes = obj.apply_config(config, devmap_ifindex=lab.ifindex_a if lab else 1, source=maps)
        with contextlib.ExitStack() as parked:
            if lab:
                parked.enter_context(xdp_attached(lab.park_ifindex[0], obj.fd))
            say(f"{obj.name}: test_run")
            if not lab:
                fixed_ns = statistics.median(test_run(obj.fd, packets[0][1], 2).wall_ns * 2 for _ in range(3))
                notes.append(f"no device to park the program on: each call pays {fixed_ns / 1e6:.1f} ms of XDP "
                             "dispatcher update (median of three repeat=2 calls, mostly waiting), included in the "
                             "wall clock (and its small CPU part in the CPU time)")

            def run_plain(pkt: bytes) -> Sample:
                r = test_run(obj.fd, pkt, opt.repeat)
                return r.retval, r.kernel_ns, r.wall_ns, r.cpu_ns, None

            m = _measure("test_run", packets, opt.runs, opt.rate_from, run_plain)
            m.notes = notes
            result.modes.append(m)
            if lab:
                _live_mode(result, obj, lab, packets, opt, say)
        if lab is None:
            result.skipped["veth_live"] = result.skipped["veth_native"] = "--no-veth"
        elif not opt.native:
            result.skipped["veth_native"] = "disabled"
        else:
            _native_mode(result, obj, lab, packets, config, opt, say)
    for m in result.modes:
        if sephirot_mpps and m.mpps > 0:
            m.sephirot_ratio = sephirot_mpps / m.mpps
    return result


def _live_mode(result: BaselineResult, obj: BpfObject, lab: VethLab, packets: list[tuple[int, bytes, int]],
               opt: Options, say: Callable[[str], None]) -> None:
    """Live frames: the program runs on frames 'received' by a; XDP_TX/redirected frames go through the driver."""
    say(f"{obj.name}: veth_live")
    sink = load_raw_xdp(1, "hxdp_sink")  # XDP_DROP on b gives the veth its NAPI receive path
    try:
        with xdp_attached(lab.ifindex_b, sink):

            def run_live(pkt: bytes) -> Sample:
                before = lab.rx_packets(lab.b)
                r = test_run(obj.fd, pkt, opt.repeat, live=True, ingress_ifindex=lab.ifindex_a,
                             batch_size=opt.batch_size)
                return None, r.kernel_ns, r.wall_ns, r.cpu_ns, (lab.rx_packets(lab.b) - before) / opt.repeat

            m = _measure("veth_live", packets, opt.runs, opt.rate_from, run_live)
        m.notes.append(f"ingress {lab.a}; XDP_TX and redirected frames cross the veth to {lab.b} (XDP_DROP sink); "
                       f"delivered = frames that reached {lab.b} / frames run")
        _copy_actions(result.modes[0], m)
        lost = [p.index for p in m.packets if p.action in ("TX", "REDIRECT") and (p.delivered or 0) < 0.5]
        if lost:
            m.notes.append(f"packets {lost}: XDP_TX/XDP_REDIRECT frames did not reach {lab.b} (a redirect to an "
                           "ifindex that is not this veth, e.g. a constant in the program, fails and drops)")
        result.modes.append(m)
    except BaselineError as exc:
        result.skipped["veth_live"] = str(exc)
    finally:
        os.close(sink)


def _native_mode(result: BaselineResult, obj: BpfObject, lab: VethLab, packets: list[tuple[int, bytes, int]],
                 config: dict | None, opt: Options, say: Callable[[str], None]) -> None:
    """The program attached in native mode to b, fed through the veth by an XDP_TX program test-run live on a."""
    say(f"{obj.name}: veth_native")
    sink = load_raw_xdp(1, "hxdp_sink")  # receives on a what the program sends back (XDP_TX, redirect)
    injector = load_raw_xdp(3, "hxdp_inject")  # live frames: XDP_TX sends each frame out of a, into b
    try:
        notes = obj.apply_config(config, devmap_ifindex=lab.ifindex_b, source=result.maps)
        with xdp_attached(lab.park_ifindex[1], injector), xdp_attached(lab.ifindex_a, sink), \
                xdp_attached(lab.ifindex_b, obj.fd):

            def run_native(pkt: bytes) -> Sample:
                before = lab.rx_packets(lab.b)
                r = test_run(injector, pkt, opt.repeat, live=True, ingress_ifindex=lab.ifindex_a,
                             batch_size=opt.batch_size)
                got = lab.rx_packets(lab.b) - before
                if got <= 0:
                    raise BaselineError(f"no frame reached {lab.b} (the injector sent {opt.repeat})")
                scale = opt.repeat / got
                return None, r.cpu_ns * scale, r.wall_ns * scale, r.cpu_ns * scale, got / opt.repeat

            m = _measure("veth_native", packets, opt.runs, opt.rate_from, run_native)
        m.notes = notes + [f"program attached (native) to {lab.b}, fed by an XDP_TX injector test-run live on "
                           f"{lab.a} (same CPU); XDP_DROP sink on {lab.a}; ns = time of the injection / frames "
                           f"received by {lab.b}"]
        _copy_actions(result.modes[0], m)
        result.modes.append(m)
    except BaselineError as exc:
        result.skipped["veth_native"] = str(exc)
    finally:
        os.close(sink)
        os.close(injector)


def _copy_actions(src: ModeResult, dst: ModeResult) -> None:
    """Live modes do not return the action: show the one the plain test run saw for the same packet."""
    for s, d in zip(src.packets, dst.packets, strict=True):
        d.action = s.action


# --------------------------------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------------------------------


def format_table(results: list[BaselineResult]) -> str:
    """A text table: program, mode, ns/packet (kernel, CPU, wall), Mpps, actions, Sephirot ratio."""
    seph = any(r.sephirot_mpps for r in results)
    head = ["program", "mode", "kernel ns", "cpu ns", "wall ns", "Mpps", "action"]
    if seph:
        head += ["Sephirot Mpps", "Sephirot/Linux"]
    rows = [head]
    for r in results:
        for m in r.modes:
            actions = ",".join(sorted({p.action for p in m.packets}))
            kernel = "-" if m.mode == "veth_native" else f"{m.ns_per_packet:.1f}"
            mpps = f"{m.mpps:.2f}" + ("" if m.mpps_from == "cpu" else f" ({m.mpps_from})")
            row = [r.program, m.mode, kernel, f"{m.cpu_ns_per_packet:.1f}", f"{m.wall_ns_per_packet:.1f}", mpps,
                   actions]
            if seph:
                row += [f"{r.sephirot_mpps:.2f}" if r.sephirot_mpps else "-",
                        f"{m.sephirot_ratio:.2f}x" if m.sephirot_ratio else "-"]
            rows.append(row)
        for mode, why in r.skipped.items():
            rows.append([r.program, mode, "skipped: " + why[:70]] + [""] * (len(head) - 3))
    widths = [max(len(row[i]) for row in rows if not row[2].startswith("skipped")) for i in range(len(head))]
    lines = []
    for n, row in enumerate(rows):
        if row[2].startswith("skipped"):
            lines.append(f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]}")
        else:
            lines.append("  ".join(c.ljust(w) if i < 2 or i == 6 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip())
        if n == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(lines)


def environment() -> dict:
    """What the numbers were measured on."""
    jit = None
    with contextlib.suppress(OSError, ValueError):
        jit = int(Path("/proc/sys/net/core/bpf_jit_enable").read_text())
    return {"kernel": platform.release(), "machine": platform.machine(), "cpus": os.cpu_count(), "bpf_jit_enable": jit,
            "loadavg": [round(x, 2) for x in os.getloadavg()],
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _finite(obj: object) -> object:
    """NaN and infinities (a mode that measured nothing) become null in JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def to_json(results: list[BaselineResult], extra: dict | None = None) -> str:
    """The JSON document: format/version, environment, mode titles and one entry per program (BaselineResult)."""
    doc = {"format": "hxdp-baseline", "version": 1, "environment": environment(),
           "modes": MODE_TITLES, "results": [r.to_dict() for r in results]}
    if extra:
        doc.update(extra)
    return json.dumps(_finite(doc), indent=2, allow_nan=False, default=str) + "\n"
