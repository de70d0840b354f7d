"""Linux XDP performance baseline: BPF_PROG_TEST_RUN timing and native XDP through the veth driver in a netns.

Every measured frame starts from its own bytes (issue 26): BPF_PROG_TEST_RUN with repeat > 1 and the page pool
of live frames hand the program the bytes its previous run left (a router's decremented TTL, a tunnel's IPIP
header), which moves it to another path. Each distinct frame's expected action is that of one test run on freshly
written maps (what `hxdp kernel-run` gives it); every mode reports per frame the action it measured and whether its
runs took that path (PacketResult.verified), and per action the Mpps (ModeResult.paths). The load average before
and after each program is recorded beside its figures.

Modes (each measured per distinct packet of the pcap, the first --max-packets of them, medians of --runs runs,
then averaged with the packets' weights in the pcap):
- test_run: BPF_PROG_TEST_RUN (JIT as configured, bpf_jit_enable is recorded). A frame the program leaves as it
  was: `repeat` runs in one call, the kernel's average (rounded down to whole ns). A frame it rewrites: `test_runs`
  calls of one frame each, the mean of the kernel's per-call figure less that of `r0 = XDP_PASS; exit` measured
  the same way (the kernel's timer and run context: the method's overhead). The wall clock and CPU time around
  the syscall are reported too; the Mpps come from the kernel's figure.
  A test run with repeat > 1 puts the program into the kernel's XDP dispatcher and takes it out again, which
  costs 15-30 ms of RCU synchronisation per call (wall clock only): the program is therefore kept attached to a
  spare veth ("parked") while it is timed, so that the dispatcher already holds it.
- veth_live: live-frames test run (BPF_F_TEST_XDP_LIVE_FRAMES, batch_size) in the tool's namespace with an
  xdp_md naming veth `a` as the ingress: XDP_TX and redirected frames go through the veth driver to `b`, where an
  XDP_DROP sink gives them the NAPI receive path; XDP_PASS frames enter the network stack of the namespace.
  Frames the program rewrites are left out (nothing restores them between runs); the path is checked by the
  frames that reach `b` (TX/REDIRECT: all of them, DROP/PASS: none).
- veth_native: the program attached in native mode to `b`, fed through the veth by an injector test-run in
  live-frames mode on `a` that writes the frame's original bytes and returns XDP_TX (hxdp.linux.xdplab
  .rewriter_insns); `a` has the XDP_DROP sink for what the program sends back. Injector and receiver run on the
  same CPU (the veth NAPI runs in the injector's softirq). ns/packet = CPU time (or wall clock) of the injection
  / frames counted on `b` (rx_packets), less what the rewrite costs the injector (a rewriting against a plain
  injector, both feeding XDP_DROP: ModeResult.overhead_ns); `delivered` = counted / injected. The path is
  checked by the frames that come back to `a` (TX/REDIRECT to the veth: all of them; DROP/PASS: none).
Three figures per packet: the kernel's figure (test_run, veth_live), the wall clock and the CPU time of the
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
    rewriter_insns,
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
    "veth_native": "native XDP on veth, fed by an injector that restores each frame",
}
RESOLUTION = 0.05  # one-frame test runs: a figure under this fraction of the timer's cost is not shown
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

    def __init__(self, path: str | os.PathLike[str], section: str | None = None, prog: str | None = None,
                 sizes: dict[str, int] | None = None, inner: dict[str, dict[bytes, str]] | None = None) -> None:
        from hxdp.linux.kernel import KernelProgram

        self.path = str(path)
        self.kp = KernelProgram(path, section, prog, sizes=sizes, inner=inner)
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
    """The medians of K runs of one mode on one distinct packet, and the path it took."""

    index: int  # first position in the pcap
    length: int
    count: int  # occurrences in the pcap (the weight)
    action: str  # the action measured (test_run: the one every run returned; live modes: the expected one)
    ns_per_packet: float  # kernel's average (test_run: net of the method's overhead); veth_native: CPU time
    wall_ns_per_packet: float
    cpu_ns_per_packet: float
    runs_ns: list[float] = field(default_factory=list)
    runs_wall_ns: list[float] = field(default_factory=list)
    runs_cpu_ns: list[float] = field(default_factory=list)
    delivered: float | None = None  # veth modes: frames counted on the receiving veth / frames run
    expected: str = ""  # the action of one test run of the frame on freshly written maps (`hxdp kernel-run`)
    verified: bool | None = None  # the measured runs took the expected path (None: the method cannot tell)
    check: str = ""  # how the path was checked


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
    overhead_ns: float | None = None  # the method's own cost per packet, subtracted from the figures
    paths: dict[str, dict] = field(default_factory=dict)  # action -> {"mpps", "rate_ns", "packets", "verified"}


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
    loadavg_before: list[float] = field(default_factory=list)  # the machine's 1/5/15-minute load around the run
    loadavg_after: list[float] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Options:
    """How to measure. rate_from: the figure Mpps of the veth modes come from: "cpu" (CPU time of the measuring
    thread, which on these kernels includes the veth softirq work it triggers; robust to other load on a shared
    machine), "wall" (wall clock, the truth on a quiet machine) or "kernel" (the kernel's own average; veth_native
    has none and uses cpu). test_run always gives the kernel's figure (its calls are dominated by the syscall)."""

    rate_from: str = "cpu"
    repeat: int = 1_000_000  # frames per live-frames call (veth_live, veth_native)
    test_runs: int = 20_000  # test_run: calls of one frame each per run (every frame starts from its own bytes)
    runs: int = 5
    max_packets: int = 4
    batch_size: int = 64
    veth: bool = True
    native: bool = True
    cpu: int | None = 0
    sephirot_cycles: float | None = None


def weighted_mean(values: list[tuple[float, int]]) -> float:
    """The mean weighted by counts, over the finite values (a figure under the method's resolution is NaN)."""
    values = [(v, c) for v, c in values if math.isfinite(v)]
    total = sum(c for _, c in values)
    return sum(v * c for v, c in values) / total if total else math.nan


def _action(retval: int) -> str:
    return ACTIONS.get(retval, str(retval))


Sample = tuple[int | None, float, float, float, float | None]  # retval, kernel ns, wall ns, cpu ns, delivered
Packet = tuple[int, bytes, int, str]  # first index in the pcap, frame, count, expected action
FORWARDED = frozenset({"TX", "REDIRECT"})


def packet_rate_ns(m: ModeResult, p: PacketResult) -> float:
    """The ns/packet of one packet that the mode's Mpps come from (cpu, wall or kernel)."""
    return {"cpu": p.cpu_ns_per_packet, "wall": p.wall_ns_per_packet, "kernel": p.ns_per_packet}[m.mpps_from]


def _measure(mode: str, packets: list[Packet], runs: int, rate_from: str,
             one: Callable[[bytes], Sample], check: Callable[[PacketResult], None]) -> ModeResult:
    results: list[PacketResult] = []
    for index, pkt, count, expected in packets:
        ks, ws, cs, delivered = [], [], [], []
        seen: set[str] = set()
        for _ in range(runs):
            retval, kns, wns, cns, frac = one(pkt)
            ks.append(kns)
            ws.append(wns)
            cs.append(cns)
            if frac is not None:
                delivered.append(frac)
            seen.add(_action(retval) if retval is not None else expected)
        med = statistics.median
        r = PacketResult(index, len(pkt), count, "/".join(sorted(seen)), med(ks), med(ws), med(cs), ks, ws, cs,
                         med(delivered) if delivered else None, expected)
        check(r)
        results.append(r)
    if mode == "veth_native" and rate_from == "kernel":
        rate_from = "cpu"
    m = ModeResult(mode, math.nan, math.nan, math.nan, rate_from, packets=results)
    _average(m)
    return m


def _average(m: ModeResult) -> None:
    """The mode's figures: every packet weighted by its count, and per action (the paths) the same."""
    ps = m.packets
    m.ns_per_packet = weighted_mean([(p.ns_per_packet, p.count) for p in ps])
    m.wall_ns_per_packet = weighted_mean([(p.wall_ns_per_packet, p.count) for p in ps])
    m.cpu_ns_per_packet = weighted_mean([(p.cpu_ns_per_packet, p.count) for p in ps])
    m.rate_ns_per_packet = weighted_mean([(packet_rate_ns(m, p), p.count) for p in ps])
    m.mpps = 1000.0 / m.rate_ns_per_packet if m.rate_ns_per_packet > 0 else math.nan
    m.paths = {}
    for action in dict.fromkeys(p.expected for p in ps):
        mine = [p for p in ps if p.expected == action]
        rate = weighted_mean([(packet_rate_ns(m, p), p.count) for p in mine])
        m.paths[action] = {"mpps": 1000.0 / rate if rate > 0 else math.nan, "rate_ns": rate,
                           "packets": sum(p.count for p in mine),
                           "verified": all(p.verified for p in mine) if all(p.verified is not None for p in mine)
                           else None}


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


def _single_runs(fd: int, pkt: bytes, n: int) -> tuple[float, float, float, dict[str, int], bool]:
    """n test runs of one frame each (each copies the frame in afresh): mean kernel ns, wall ns and CPU ns per
    call, the actions returned, and whether the program changed the frame's bytes or length."""
    kns = wns = cns = 0.0
    actions: dict[str, int] = {}
    rewrites = False
    for _ in range(n):
        r = test_run(fd, pkt, 1)
        kns += r.kernel_ns
        wns += r.wall_ns
        cns += r.cpu_ns
        a = _action(r.retval)
        actions[a] = actions.get(a, 0) + 1
        rewrites = rewrites or r.data_out != pkt
    return kns / n, wns / n, cns / n, actions, rewrites


def kernel_paths(obj: BpfObject, frames: list[tuple[int, bytes, int]], config: dict | None,
                 devmap_ifindex: int, source: str | None) -> tuple[list[Packet], dict[int, bool]]:
    """Each frame's expected action (one test run on freshly written maps, as `hxdp kernel-run` runs it) and
    whether the program rewrites the frame (then live frames, which do not restore it, cannot measure it)."""
    out: list[Packet] = []
    rewrites: dict[int, bool] = {}
    for index, pkt, count in frames:
        obj.apply_config(config, devmap_ifindex=devmap_ifindex, source=source)
        r = test_run(obj.fd, pkt, 1)
        out.append((index, pkt, count, _action(r.retval)))
        rewrites[index] = r.data_out != pkt
    obj.apply_config(config, devmap_ifindex=devmap_ifindex, source=source)
    return out, rewrites


def _config_inner(config: dict | None, source: str | None) -> dict[str, dict[bytes, str]]:
    """The inner maps the program's loader creates ("inner_maps" of its map configuration)."""
    from hxdp.frontend.sizing import MapSizeError, config_inner

    try:
        return config_inner(config, source or "map config")
    except MapSizeError as exc:
        raise BaselineError(str(exc)) from None


def run_baseline(obj_path: str, pcap: str, *, section: str | None = None, prog: str | None = None,
                 maps: str | None = None, sizes: dict[str, int] | None = None,
                 options: Options | None = None, progress: Callable[[str], None] | None = None) -> BaselineResult:
    """Measure one program: test_run always; veth_live and veth_native unless options.veth is False. sizes: the
    max_entries its loader gives maps the object leaves unsized."""
    opt = options or Options()
    if opt.repeat < 2 or opt.runs < 1 or opt.max_packets < 1 or opt.test_runs < 1:
        raise BaselineError("--repeat must be at least 2, --runs, --test-runs and --max-packets positive")
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
    distinct = [(first_index[p], p, c) for p, c in distinct_packets(frames, opt.max_packets)]
    ok, why = available()
    if not ok:
        raise KernelUnavailable(why)
    sephirot_mpps = SEPHIROT_MHZ / opt.sephirot_cycles if opt.sephirot_cycles else None
    load_before = [round(x, 2) for x in os.getloadavg()]
    with _pinned(opt.cpu), contextlib.ExitStack() as stack:
        lab: VethLab | None = stack.enter_context(VethLab()) if opt.veth else None
        obj = stack.enter_context(BpfObject(obj_path, section=section, prog=prog, sizes=sizes,
                                            inner=_config_inner(config, maps)))
        result = BaselineResult(obj.name, obj_path, obj.section, pcap, maps, opt.repeat, opt.runs,
                                opt.sephirot_cycles, sephirot_mpps)
        result.loadavg_before = load_before
        # devmap entries name devices of the config's machine: point them at the measured program's ingress
        ingress = lab.ifindex_a if lab else 1
        notes = obj.apply_config(config, devmap_ifindex=ingress, source=maps)
        packets, rewrites = kernel_paths(obj, distinct, config, ingress, maps)
        say(f"{obj.name}: test_run")
        m = _test_run_mode(obj, packets, rewrites, opt, lab)
        m.notes = notes + m.notes
        result.modes.append(m)
        if lab:
            _live_mode(result, obj, lab, packets, rewrites, opt, say)
        if lab is None:
            result.skipped["veth_live"] = result.skipped["veth_native"] = "--no-veth"
        elif not opt.native:
            result.skipped["veth_native"] = "disabled"
        else:
            _native_mode(result, obj, lab, packets, config, opt, say)
    result.loadavg_after = [round(x, 2) for x in os.getloadavg()]
    for m in result.modes:
        if sephirot_mpps and m.mpps > 0:
            m.sephirot_ratio = sephirot_mpps / m.mpps
    return result


def _test_run_mode(obj: BpfObject, packets: list[Packet], rewrites: dict[int, bool], opt: Options,
                   lab: VethLab | None) -> ModeResult:
    """BPF_PROG_TEST_RUN. A frame the program leaves as it was: repeat = opt.repeat in one call, the kernel's
    average. A frame it rewrites (repeat > 1 would run it again on its own output): one frame per call,
    opt.test_runs calls, the kernel's per-call figure less that of `r0 = XDP_PASS; exit` measured the same way
    (its timer and run context)."""
    overhead: float | None = None
    if any(rewrites.values()):
        trivial = load_raw_xdp(2, "hxdp_null")
        try:
            overhead = statistics.median(_single_runs(trivial, packets[0][1], opt.test_runs)[0]
                                         for _ in range(opt.runs))
        finally:
            os.close(trivial)
    seen: dict[str, int] = {}

    def run_test(pkt: bytes) -> Sample:
        if not rewrites[first[pkt]]:
            r = test_run(obj.fd, pkt, opt.repeat)
            seen[_action(r.retval)] = seen.get(_action(r.retval), 0) + opt.repeat
            return r.retval, r.kernel_ns, r.wall_ns, r.cpu_ns, None
        assert overhead is not None
        kns, wns, cns, actions, _ = _single_runs(obj.fd, pkt, opt.test_runs)
        for a, n in actions.items():
            seen[a] = seen.get(a, 0) + n
        top = max(actions, key=lambda a: actions[a])
        net = kns - overhead
        shown = net if net > RESOLUTION * overhead else math.nan  # under it: the timer's own noise
        return next(k for k, v in ACTIONS.items() if v == top), shown, wns, cns, None

    def check(p: PacketResult) -> None:
        p.verified = set(seen) == {p.expected}
        how = f"{opt.test_runs} calls of one frame, less the timer" if rewrites[p.index] else \
            f"repeat {opt.repeat} (the program leaves the frame as it was)"
        p.check = f"{how}; actions returned: " + ", ".join(f"{a} x{n}" for a, n in sorted(seen.items()))
        seen.clear()

    first = {pkt: index for index, pkt, _, _ in packets}
    with xdp_attached(lab.park_ifindex[0], obj.fd) if lab else contextlib.nullcontext():
        m = _measure("test_run", packets, opt.runs, "kernel", run_test, check)
    m.overhead_ns = overhead
    if overhead is not None:
        left = [p.index for p in m.packets if rewrites[p.index]]
        m.notes.append(f"packets {left}: the program rewrites them, so one frame per call ({opt.test_runs} calls a "
                       f"run), each from its own bytes, less {overhead:.1f} ns per call of the kernel's timer and "
                       f"run context (measured on r0 = XDP_PASS; a result under {RESOLUTION:.0%} of it is not "
                       f"shown); the other packets: repeat {opt.repeat} in one call")
    if lab is None and any(not r for r in rewrites.values()):
        m.notes.append("no device to park the program on: each repeat call pays 15-30 ms of XDP dispatcher update "
                       "(wall clock, not in the kernel's figure)")
    return m


def _live_mode(result: BaselineResult, obj: BpfObject, lab: VethLab, packets: list[Packet],
               rewrites: dict[int, bool], opt: Options, say: Callable[[str], None]) -> None:
    """Live frames: the program runs on frames 'received' by a; XDP_TX/redirected frames go through the driver.

    The page pool of live frames hands pages back with the bytes the program left in them: a frame the program
    rewrites would be measured on its own output, so such frames are left out (veth_native measures them)."""
    say(f"{obj.name}: veth_live")
    keep = [p for p in packets if not rewrites[p[0]]]
    left = [p[0] for p in packets if rewrites[p[0]]]
    if not keep:
        result.skipped["veth_live"] = ("the program rewrites every frame measured and live frames do not restore "
                                       "the bytes between runs (veth_native does)")
        return
    sink = load_raw_xdp(1, "hxdp_sink")  # XDP_DROP on b gives the veth its NAPI receive path
    try:
        # parked: a live run with repeat > 1 then finds the program in the XDP dispatcher (see VethLab.park)
        with xdp_attached(lab.park_ifindex[0], obj.fd), xdp_attached(lab.ifindex_b, sink):

            def run_live(pkt: bytes) -> Sample:
                before = lab.rx_packets(lab.b)
                r = test_run(obj.fd, pkt, opt.repeat, live=True, ingress_ifindex=lab.ifindex_a,
                             batch_size=opt.batch_size)
                return None, r.kernel_ns, r.wall_ns, r.cpu_ns, (lab.rx_packets(lab.b) - before) / opt.repeat

            def check(p: PacketResult) -> None:
                _check_forwarded(p, p.delivered, f"frames that reached {lab.b}")

            m = _measure("veth_live", keep, opt.runs, opt.rate_from, run_live, check)
        m.notes.append(f"ingress {lab.a}; XDP_TX and redirected frames cross the veth to {lab.b} (XDP_DROP sink); "
                       f"delivered = frames that reached {lab.b} / frames run")
        if left:
            m.notes.append(f"packets {left} left out: the program rewrites them and live frames would run it again "
                           "on its own output")
        result.modes.append(m)
    except BaselineError as exc:
        result.skipped["veth_live"] = str(exc)
    finally:
        os.close(sink)


def _check_forwarded(p: PacketResult, frac: float | None, what: str) -> None:
    """A TX/REDIRECT frame must come out of the program's device, a DROP/PASS frame must not. A REDIRECT that
    does not come out may have gone where it should (a CPU map, an AF_XDP socket): not confirmed (None)."""
    if frac is None:
        p.verified, p.check = None, "no count"
        return
    out = frac >= 0.5
    p.verified = None if p.expected == "REDIRECT" and not out else out == (p.expected in FORWARDED)
    p.check = f"{frac:.3f} of the frames came out ({what})"
    if p.verified is None:
        p.check += ": a redirect elsewhere than the veth, not confirmed"


def _native_cost(lab: VethLab, injector: int, pkt: bytes, opt: Options) -> float:
    """CPU (or wall) ns per frame received by b of one live-frames injection."""
    before = lab.rx_packets(lab.b)
    r = test_run(injector, pkt, opt.repeat, live=True, ingress_ifindex=lab.ifindex_a, batch_size=opt.batch_size)
    got = lab.rx_packets(lab.b) - before
    if got <= 0:
        raise BaselineError(f"no frame reached {lab.b} (the injector sent {opt.repeat})")
    return (r.wall_ns if opt.rate_from == "wall" else r.cpu_ns) * opt.repeat / got


def _rewrite_overhead(lab: VethLab, pkt: bytes, opt: Options) -> float:
    """What rewriting the frame costs the injector: a rewriting and a plain injector feeding XDP_DROP on b."""
    drop = load_raw_xdp(1, "hxdp_drop")
    plain = load_raw_xdp(3, "hxdp_inject")
    rewriting = load_raw_xdp(3, "hxdp_rewrite", rewriter_insns(pkt))
    try:
        with xdp_attached(lab.park_ifindex[1], plain), xdp_attached(lab.park_ifindex[0], rewriting), \
                xdp_attached(lab.ifindex_b, drop):
            diffs = [_native_cost(lab, rewriting, pkt, opt) - _native_cost(lab, plain, pkt, opt)
                     for _ in range(opt.runs)]
    finally:
        for fd in (drop, plain, rewriting):
            os.close(fd)
    return max(0.0, statistics.median(diffs))


def _native_mode(result: BaselineResult, obj: BpfObject, lab: VethLab, packets: list[Packet],
                 config: dict | None, opt: Options, say: Callable[[str], None]) -> None:
    """The program attached in native mode to b, fed through the veth by an injector test-run live on a that
    writes the frame's original bytes and returns XDP_TX (so every frame starts from its own bytes)."""
    say(f"{obj.name}: veth_native")
    sink = load_raw_xdp(1, "hxdp_sink")  # receives on a what the program sends back (XDP_TX, redirect)
    injectors = {p[0]: load_raw_xdp(3, "hxdp_rewrite", rewriter_insns(p[1])) for p in packets}
    try:
        # the rewrite's cost grows with the frame: measured once per length
        overheads = {len(p[1]): _rewrite_overhead(lab, p[1], opt) for p in packets}
        notes = obj.apply_config(config, devmap_ifindex=lab.ifindex_b, source=result.maps)
        current = {"fd": -1}
        with xdp_attached(lab.ifindex_a, sink), xdp_attached(lab.ifindex_b, obj.fd):

            def run_native(pkt: bytes) -> Sample:
                back = lab.rx_packets(lab.a)
                before = lab.rx_packets(lab.b)
                r = test_run(current["fd"], pkt, opt.repeat, live=True, ingress_ifindex=lab.ifindex_a,
                             batch_size=opt.batch_size)
                got = lab.rx_packets(lab.b) - before
                if got <= 0:
                    raise BaselineError(f"no frame reached {lab.b} (the injector sent {opt.repeat})")
                scale = opt.repeat / got
                run_native.back.append((lab.rx_packets(lab.a) - back) / got)  # type: ignore[attr-defined]
                overhead = overheads[len(pkt)]
                cpu, wall = max(0.0, r.cpu_ns * scale - overhead), max(0.0, r.wall_ns * scale - overhead)
                return None, cpu, wall, cpu, got / opt.repeat

            run_native.back = []  # type: ignore[attr-defined]

            def check(p: PacketResult) -> None:
                back = run_native.back  # type: ignore[attr-defined]
                _check_forwarded(p, statistics.median(back), f"frames {lab.b} sent back to {lab.a} / received")
                back.clear()

            m = ModeResult("veth_native", math.nan, math.nan, math.nan)
            for p in packets:
                current["fd"] = injectors[p[0]]
                with xdp_attached(lab.park_ifindex[1], current["fd"]):  # in the XDP dispatcher while it runs
                    m.packets += _measure("veth_native", [p], opt.runs, opt.rate_from, run_native, check).packets
            m.mpps_from = "cpu" if opt.rate_from == "kernel" else opt.rate_from
            _average(m)
        m.overhead_ns = weighted_mean([(overheads[p.length], p.count) for p in m.packets])
        costs = ", ".join(f"{v:.1f} ns at {n} bytes" for n, v in sorted(overheads.items()))
        m.notes = notes + [f"program attached (native) to {lab.b}, fed by an injector test-run live on {lab.a} "
                           f"(same CPU) that writes each frame's original bytes and returns XDP_TX; XDP_DROP sink "
                           f"on {lab.a}; ns = time of the injection / frames received by {lab.b}, less "
                           f"what the rewrite costs the injector ({costs}; rewriting against plain injector, "
                           "both feeding XDP_DROP)"]
        result.modes.append(m)
    except BaselineError as exc:
        result.skipped["veth_native"] = str(exc)
    finally:
        os.close(sink)
        for fd in injectors.values():
            os.close(fd)


# --------------------------------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------------------------------


def _verdict(v: bool | None) -> str:
    return {True: "checked", False: "WRONG PATH", None: "unchecked"}[v]


def format_table(results: list[BaselineResult]) -> str:
    """A text table: program, mode, path (the action measured and its check), ns/packet (kernel, CPU, wall), Mpps,
    Sephirot ratio; one line per mode and path, the mix of all paths first."""
    seph = any(r.sephirot_mpps for r in results)
    head = ["program", "mode", "path", "kernel ns", "cpu ns", "wall ns", "Mpps"]
    if seph:
        head += ["Sephirot Mpps", "Sephirot/Linux"]
    rows = [head]
    for r in results:
        for m in r.modes:
            kernel = "-" if m.mode == "veth_native" else f"{m.ns_per_packet:.1f}"
            mpps = f"{m.mpps:.2f}" + ("" if m.mpps_from == "cpu" else f" ({m.mpps_from})")
            row = [r.program, m.mode, "mix", kernel, f"{m.cpu_ns_per_packet:.1f}", f"{m.wall_ns_per_packet:.1f}",
                   mpps]
            if seph:
                row += [f"{r.sephirot_mpps:.2f}" if r.sephirot_mpps else "-",
                        f"{m.sephirot_ratio:.2f}x" if m.sephirot_ratio else "-"]
            rows.append(row)
            for action, path in m.paths.items():
                rows.append([r.program, m.mode, f"{action} ({_verdict(path['verified'])})", "", "",
                             f"{path['rate_ns']:.1f} ({m.mpps_from})", f"{path['mpps']:.2f}"]
                            + ["", ""][: len(head) - 7])
        for mode, why in r.skipped.items():
            rows.append([r.program, mode, "skipped: " + why[:70]] + [""] * (len(head) - 3))
    widths = [max(len(row[i]) for row in rows if not row[2].startswith("skipped")) for i in range(len(head))]
    lines = []
    for n, row in enumerate(rows):
        if row[2].startswith("skipped"):
            lines.append(f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]}")
        else:
            lines.append("  ".join(c.ljust(w) if i < 3 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip())
        if n == 0:
            lines.append("-" * len(lines[0]))
    for r in results:
        lines.append(f"{r.program}: load average {r.loadavg_before} before, {r.loadavg_after} after")
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
