"""The baseline's lab: live-frames test runs, native XDP attach, sink/injector programs, veth pairs in a netns.

What the kernel oracle (hxdp.linux.kernel, over hxdp.linux.libbpf) does not do itself; hxdp.linux.baseline
measures with it. The namespace is removed on exit, on exceptions and on SIGINT/SIGTERM/SIGHUP.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import json
import os
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hxdp.errors import HxdpError, KernelUnavailable
from hxdp.linux.libbpf import BPF_PROG_TYPE_XDP, TestRunOpts, libbpf

BPF_F_TEST_XDP_LIVE_FRAMES = 1 << 1
XDP_FLAGS_DRV_MODE = 1 << 2
CLONE_NEWNET = 0x40000000
NS_PREFIX = "hxb"  # namespaces are named hxb-<pid>-<random>; stale ones (dead pid) are removed on start


class BaselineError(HxdpError):
    """The baseline could not be measured (loading, maps, namespaces, attach)."""


# --------------------------------------------------------------------------------------------------------------
# what the kernel oracle (hxdp.linux.kernel, hxdp.linux.libbpf) does not do itself: live-frames
# test runs, native attach, and the two raw helper programs (sink, injector)
# --------------------------------------------------------------------------------------------------------------


class XdpMd(ctypes.Structure):
    """struct xdp_md, the context given to an XDP test run."""

    _fields_ = [
        ("data", ctypes.c_uint32),
        ("data_end", ctypes.c_uint32),
        ("data_meta", ctypes.c_uint32),
        ("ingress_ifindex", ctypes.c_uint32),
        ("rx_queue_index", ctypes.c_uint32),
        ("egress_ifindex", ctypes.c_uint32),
    ]


_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _errno_text(ret: int) -> str:
    err = -ret if ret < 0 else ctypes.get_errno()
    return f"{os.strerror(err)} (errno {err})"


def load_raw_xdp(action: int, name: str = "hxdp_raw", insns: bytes | None = None) -> int:
    """Load `r0 = action; exit` (or the raw instructions `insns`) as an XDP program (the sink, the injectors);
    returns the program fd."""
    lib = libbpf()
    if insns is None:
        insns = _insn(0xB7, 0, 0, 0, action) + _insn(0x95)
    buf = ctypes.create_string_buffer(insns, len(insns))
    fd = lib.bpf_prog_load(BPF_PROG_TYPE_XDP, name.encode(), b"GPL", buf, len(insns) // 8, None)
    if fd < 0:
        raise KernelUnavailable(f"bpf() refused to load an XDP program: {_errno_text(fd)}")
    return fd


@dataclass
class RunOutcome:
    """One BPF_PROG_TEST_RUN call: the program's action, the kernel's average, wall clock and CPU time per packet."""

    retval: int
    kernel_ns: float  # the kernel's average, rounded down by the kernel to whole ns
    wall_ns: float  # wall clock around the syscall divided by repeat
    cpu_ns: float  # CPU time of this thread during the syscall divided by repeat (includes softirq work it ran)
    data_out: bytes | None = None  # the frame as the program left it (plain test runs only)


def test_run(prog_fd: int, packet: bytes, repeat: int, *, live: bool = False, ingress_ifindex: int = 0,
             batch_size: int = 64) -> RunOutcome:
    """Run the program `repeat` times on `packet`; live=True sends frames through the driver (live frames)."""
    lib = libbpf()
    data = ctypes.create_string_buffer(packet, len(packet))
    opts = TestRunOpts()
    opts.sz = ctypes.sizeof(TestRunOpts)
    opts.data_in = ctypes.cast(data, ctypes.c_void_p)
    opts.data_size_in = len(packet)
    opts.repeat = repeat
    out = None
    ctx = None
    if live:
        ctx = XdpMd(data_end=len(packet), ingress_ifindex=ingress_ifindex)  # the kernel wants data_end == size
        opts.ctx_in = ctypes.cast(ctypes.pointer(ctx), ctypes.c_void_p)
        opts.ctx_size_in = ctypes.sizeof(XdpMd)
        opts.flags = BPF_F_TEST_XDP_LIVE_FRAMES
        opts.batch_size = batch_size
    else:
        out = ctypes.create_string_buffer(len(packet) + 4096)
        opts.data_out = ctypes.cast(out, ctypes.c_void_p)
        opts.data_size_out = len(out)
    c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
    ret = lib.bpf_prog_test_run_opts(prog_fd, ctypes.byref(opts))
    t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
    if ret < 0:
        err = -ret
        if err == errno.EINTR:
            raise KeyboardInterrupt
        where = "live-frames" if live else "test"
        raise BaselineError(f"BPF_PROG_TEST_RUN ({where} mode, {len(packet)}-byte packet) failed: {_errno_text(ret)}")
    data_out = out.raw[:opts.data_size_out] if out is not None else None
    return RunOutcome(opts.retval, float(opts.duration), (t1 - t0) / repeat, (c1 - c0) / repeat, data_out)


def _insn(opcode: int, dst: int = 0, src: int = 0, off: int = 0, imm: int = 0) -> bytes:
    return struct.pack("<BBhi", opcode, dst | src << 4, off, imm)


def rewriter_insns(frame: bytes, action: int = 3) -> bytes:
    """`write frame over the packet's first len(frame) bytes; return action` (a shorter packet: XDP_DROP).

    The live-frames page pool hands a recycled page back with the bytes the previous run left in it (a router's
    decremented TTL, a tunnel's IPIP header): an injector built from this program restores every frame first."""
    stores = []
    for off in range(0, len(frame) - len(frame) % 4, 4):  # 4-byte immediate stores, then the 1-3 bytes left
        stores.append(_insn(0x62, 2, 0, off, struct.unpack_from("<i", frame, off)[0]))
    off = len(frame) - len(frame) % 4
    if len(frame) - off >= 2:
        stores.append(_insn(0x6A, 2, 0, off, struct.unpack_from("<h", frame, off)[0]))
        off += 2
    if off < len(frame):
        stores.append(_insn(0x72, 2, 0, off, struct.unpack_from("<b", frame, off)[0]))
    head = [_insn(0x61, 2, 1, 0), _insn(0x61, 3, 1, 4), _insn(0xBF, 4, 2), _insn(0x07, 4, 0, 0, len(frame)),
            _insn(0x2D, 4, 3, len(stores) + 2)]  # r2 = data, r3 = data_end; if data + len > data_end: drop
    tail = [_insn(0xB7, 0, 0, 0, action), _insn(0x95), _insn(0xB7, 0, 0, 0, 1), _insn(0x95)]
    return b"".join(head + stores + tail)


# --------------------------------------------------------------------------------------------------------------
# network namespace with a veth pair, removed on exit and on signals
# --------------------------------------------------------------------------------------------------------------


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    ip = shutil.which("ip") or "/usr/sbin/ip"
    res = subprocess.run([ip, *args], capture_output=True, text=True, timeout=30)
    if check and res.returncode != 0:
        raise BaselineError(f"ip {' '.join(args)}: {res.stderr.strip() or 'failed'}")
    return res


def list_namespaces() -> list[str]:
    res = _ip("netns", "list", check=False)
    return [line.split()[0] for line in res.stdout.splitlines() if line.strip()]


def remove_stale_namespaces() -> list[str]:
    """Remove namespaces left by a baseline process that died without cleaning up (hxb-<pid>-*, pid gone)."""
    removed = []
    for ns in list_namespaces():
        parts = ns.split("-")
        if len(parts) == 3 and parts[0] == NS_PREFIX and parts[1].isdigit():
            if not Path(f"/proc/{parts[1]}").exists():
                _ip("netns", "del", ns, check=False)
                removed.append(ns)
    return removed


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """Turn SIGTERM/SIGHUP into SystemExit (SIGINT already raises KeyboardInterrupt) so cleanup runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    old_int = signal.getsignal(signal.SIGINT)
    if old_int in (signal.SIG_IGN, signal.SIG_DFL, None):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        signal.signal(signal.SIGINT, old_int if old_int is not None else signal.SIG_DFL)


class VethLab:
    """A network namespace holding veth pairs `a` <-> `b` (traffic) and `park` (no traffic), entered by this thread.

    Everything is removed on exit, including on KeyboardInterrupt/SystemExit (signals are turned into
    exceptions while the lab is open)."""

    def __init__(self) -> None:
        token = secrets.token_hex(2)
        self.ns = f"{NS_PREFIX}-{os.getpid()}-{token}"
        self.a = f"hxba{token}"
        self.b = f"hxbb{token}"
        # a second pair without traffic: programs attached there stay in the kernel's XDP dispatcher, so a test
        # run with repeat > 1 does not rebuild the dispatcher (about 20 ms of RCU sync per call, wall clock only)
        self.park = (f"hxbc{token}", f"hxbd{token}")
        self.ifindex_a = 0
        self.ifindex_b = 0
        self.park_ifindex: list[int] = []
        self._home_fd: int | None = None
        self._created = False
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> VethLab:
        self._stack.enter_context(_signals_raise())
        try:
            remove_stale_namespaces()
            self._created = True  # from here on, cleanup tries to delete the namespace
            _ip("netns", "add", self.ns)
            self._enter_ns()
            for conf in ("all", "default"):  # no IPv6 neighbour discovery frames on the veths (they would count)
                with contextlib.suppress(OSError), open(f"/proc/sys/net/ipv6/conf/{conf}/disable_ipv6", "w") as fh:
                    fh.write("1")
            _ip("-n", self.ns, "link", "add", self.a, "type", "veth", "peer", "name", self.b)
            _ip("-n", self.ns, "link", "add", self.park[0], "type", "veth", "peer", "name", self.park[1])
            for dev in ("lo", self.a, self.b, *self.park):
                _ip("-n", self.ns, "link", "set", dev, "up")
            self.ifindex_a = socket.if_nametoindex(self.a)
            self.ifindex_b = socket.if_nametoindex(self.b)
            self.park_ifindex = [socket.if_nametoindex(d) for d in self.park]
        except BaseException:
            self.cleanup()
            raise
        return self

    def _enter_ns(self) -> None:
        self._home_fd = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        fd = os.open(f"/run/netns/{self.ns}", os.O_RDONLY)
        try:
            if _libc.setns(fd, CLONE_NEWNET) != 0:
                raise BaselineError(f"setns into {self.ns} failed: {_errno_text(0)}")
        finally:
            os.close(fd)

    def _leave_ns(self) -> None:
        if self._home_fd is not None:
            _libc.setns(self._home_fd, CLONE_NEWNET)
            os.close(self._home_fd)
            self._home_fd = None

    def rx_packets(self, dev: str) -> int:
        """Received packets of a device of the lab (XDP-processed frames count on veth)."""
        res = _ip("-n", self.ns, "-j", "-s", "link", "show", "dev", dev)
        return int(json.loads(res.stdout)[0]["stats64"]["rx"]["packets"])

    def cleanup(self) -> None:
        blocked = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
        try:
            self._leave_ns()
            if self._created:
                _ip("-n", self.ns, "link", "del", self.a, check=False)
                _ip("-n", self.ns, "link", "del", self.park[0], check=False)
                _ip("netns", "del", self.ns, check=False)
                self._created = False
        finally:
            try:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)  # a pending signal is raised here...
            finally:
                self._stack.close()  # ...and the previous handlers are restored all the same

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


@contextlib.contextmanager
def xdp_attached(ifindex: int, prog_fd: int) -> Iterator[None]:
    """Attach a program in native (driver) mode for the duration of the block."""
    lib = libbpf()
    ret = lib.bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_DRV_MODE, None)
    if ret < 0:
        raise BaselineError(f"native XDP attach to ifindex {ifindex} failed: {_errno_text(ret)}")
    try:
        yield
    finally:
        lib.bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, None)

