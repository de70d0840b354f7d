"""Board transports: one `read32/write32` interface over the NetFPGA-SUME register ioctls or the simulated board."""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.result import RunResult

SUME_IOCTL_WRITE = 0x89F1  # SIOCDEVPRIVATE + 1
SUME_IOCTL_READ = 0x89F2  # SIOCDEVPRIVATE + 2
IFNAMSIZ = 16
IFREQ_SIZE = 40  # struct ifreq on 64-bit Linux
DEFAULT_IFACE = "nf0"
DEFAULT_SOCKET = "/tmp/hxdp-board.sock"


class BoardError(HxdpError):
    """The board does not answer, went away, or refused an access."""


class BoardAddressError(BoardError):
    """An AXI access to an address the board does not decode (SLVERR)."""


def owner_name() -> str:
    """This process as a lease or hold owner: `hxdp-SUBCOMMAND[PID]` (one token, printable)."""
    sub = next((a for a in sys.argv[1:] if not a.startswith("-")), "")
    base = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
    base = "hxdp" if base in ("__main__.py", "-c", "python", "python3") else base
    text = f"{base}-{sub}" if sub else base
    return "".join(c if c.isalnum() or c in "-_.:" else "_" for c in text)[:60] + f"[{os.getpid()}]"


@dataclass
class HoldInfo:
    """Who set the input hold: its owner's name, whether that owner is still there, whether it is this client."""

    owner: str
    alive: bool
    mine: bool

    def text(self) -> str:
        return f"{self.owner}{'' if self.alive else ' (gone)'}"


class Board:
    """A register window on a board: 32-bit AXI-Lite reads and writes at 32-bit addresses.

    Multi-register operations run under `lease()` (one owner at a time); the input hold has an owner
    (`hold_info`), and only that owner releases it (`take_hold` passes it on: recovery)."""

    name = "board"
    _lease_depth = 0
    bitstream: str | None = None  # "ours" or "original" once probed (hxdp.board.original.probe)

    @contextmanager
    def lease(self) -> Iterator[None]:
        """Exclusive use of the board's staging registers and hold for the duration (reentrant)."""
        if self._lease_depth == 0:
            self._acquire()
        self._lease_depth += 1
        try:
            yield
        finally:
            self._lease_depth -= 1
            if self._lease_depth == 0:
                self._release()

    def _acquire(self) -> None:
        pass

    def _release(self) -> None:
        pass

    def hold_info(self) -> HoldInfo | None:
        """The input hold's owner, None when the input is not held (or the board cannot say)."""
        return None

    def take_hold(self) -> str:
        """Make this client the hold's owner (recovery after its owner died); returns the previous owner."""
        return ""

    def note_hold(self, on: bool) -> None:
        """This client set (on) or released the input hold."""

    def read32(self, addr: int) -> int:
        raise NotImplementedError

    def write32(self, addr: int, value: int) -> None:
        raise NotImplementedError

    def write_many(self, writes: Iterable[tuple[int, int]]) -> None:
        """Several writes in order (the simulated board pipelines them over its socket)."""
        for addr, value in writes:
            self.write32(addr, value)

    def read_many(self, addrs: Sequence[int] | Iterable[int]) -> list[int]:
        return [self.read32(a) for a in addrs]

    def transact(self, ops: Sequence[tuple[int, int | None]]) -> list[int | None]:
        """Mixed reads (value None) and writes in order; returns the read values (None for writes)."""
        out: list[int | None] = []
        for addr, value in ops:
            if value is None:
                out.append(self.read32(addr))
            else:
                self.write32(addr, value)
                out.append(None)
        return out

    def close(self) -> None:
        pass

    def __enter__(self) -> Board:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_u32(what: str, v: int) -> int:
    if not 0 <= v <= 0xFFFFFFFF:
        raise BoardError(f"{what} 0x{v:x} does not fit in 32 bits")
    return v


# ---------------------------------------------------------------------------------------------------------------
class SumeRegs(ctypes.Structure):
    """struct sume_ifreq of the NetFPGA-SUME driver: {u32 addr; u32 val}."""

    _fields_ = [("addr", ctypes.c_uint32), ("val", ctypes.c_uint32)]


IoctlFn = Callable[[int, int, bytearray], object]


class SumeBoard(Board):
    """The NetFPGA-SUME driver's register ioctls on a network interface (like rwaxi -i IFACE).

    `ioctl` and `sock` can be replaced (tests use a fake register device that records the calls). The lease is an
    exclusive flock on `LOCK_DIR/hxdp-sume-IFACE.lock` (default /run/lock, or $HXDP_LOCK_DIR) holding its
    owner's name; the hold's owner is noted in `hxdp-sume-IFACE.hold`.
    """

    def __init__(self, iface: str = DEFAULT_IFACE, ioctl: IoctlFn | None = None, sock: object | None = None,
                 lock_dir: str | os.PathLike[str] | None = None, lock_timeout: float = 60.0) -> None:
        if not iface or len(iface.encode()) >= IFNAMSIZ:
            raise BoardError(f"interface name {iface!r} is empty or longer than {IFNAMSIZ - 1} characters")
        self.iface = iface
        self.name = f"sume:{iface}"
        self._ioctl = ioctl or fcntl.ioctl
        if sock is None:
            try:
                sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
            except OSError:
                try:
                    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                except OSError as exc:
                    raise BoardError(f"cannot open a socket for the register ioctls: {exc.strerror}") from None
        self._sock = sock
        self._regs = SumeRegs()
        self._lock_dir = Path(lock_dir or os.environ.get("HXDP_LOCK_DIR") or
                              ("/run/lock" if os.access("/run/lock", os.W_OK) else tempfile.gettempdir()))
        self._lock_fd: int | None = None
        self.lock_timeout = lock_timeout

    def _lock_path(self, ext: str) -> Path:
        return self._lock_dir / f"hxdp-sume-{self.iface}.{ext}"

    def _acquire(self) -> None:
        """An exclusive lock (flock) on /run/lock/hxdp-sume-IFACE.lock, whose text says who holds it."""
        path = self._lock_path("lock")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise BoardError(f"{self.name}: cannot open the board lock {path}: {exc.strerror}") from None
        deadline = time.monotonic() + self.lock_timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    who = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
                    os.close(fd)
                    raise BoardError(f"{self.name}: the board is leased by {who} (lock {path}) for more than "
                                     f"{self.lock_timeout:.0f} s") from None
                time.sleep(0.01)
        os.ftruncate(fd, 0)
        os.pwrite(fd, owner_name().encode() + b"\n", 0)
        self._lock_fd = fd

    def _release(self) -> None:
        if self._lock_fd is not None:
            os.ftruncate(self._lock_fd, 0)
            os.close(self._lock_fd)  # closing drops the flock
            self._lock_fd = None

    def hold_info(self) -> HoldInfo | None:
        from hxdp.board.original import is_original

        if is_original(self):
            return None  # the original bitstream has no hold (its CTRL address reads 0x01234567)
        if not self.read32(params.AXI_CTRL) & params.AXI_CTRL_HOLD:
            return None
        try:
            owner, pid = self._lock_path("hold").read_text().split()
        except (OSError, ValueError):
            return HoldInfo("someone outside hxdp (no hold note)", False, False)
        alive = _pid_alive(int(pid))
        return HoldInfo(owner, alive, int(pid) == os.getpid())

    def take_hold(self) -> str:
        info = self.hold_info()
        self.note_hold(True)
        return info.owner if info else ""

    def note_hold(self, on: bool) -> None:
        path = self._lock_path("hold")
        try:
            if on:
                path.write_text(f"{owner_name()} {os.getpid()}\n")
            else:
                path.unlink(missing_ok=True)
        except OSError:
            pass  # the note only names the owner; the hold itself is the register

    def _call(self, req: int, addr: int, value: int) -> int:
        self._regs.addr = addr
        self._regs.val = value
        ifr = bytearray(IFREQ_SIZE)
        name = self.iface.encode()
        ifr[: len(name)] = name
        struct.pack_into("P", ifr, IFNAMSIZ, ctypes.addressof(self._regs))
        fd = self._sock.fileno() if hasattr(self._sock, "fileno") else int(self._sock)
        try:
            self._ioctl(fd, req, ifr)
        except OSError as exc:
            what = "read" if req == SUME_IOCTL_READ else "write"
            raise BoardError(f"no NetFPGA-SUME board answers on {self.iface}: register {what} at 0x{addr:08x}: "
                             f"{exc.strerror or exc}") from None
        return int(self._regs.val)

    def read32(self, addr: int) -> int:
        return self._call(SUME_IOCTL_READ, _check_u32("address", addr), 0)

    def write32(self, addr: int, value: int) -> None:
        self._call(SUME_IOCTL_WRITE, _check_u32("address", addr), _check_u32("value", value))

    def close(self) -> None:
        close = getattr(self._sock, "close", None)
        if close:
            close()


# ---------------------------------------------------------------------------------------------------------------
@dataclass
class SimOutput:
    """One packet that went through the simulated board (every action, in order)."""

    seq: int
    port: int
    action: int
    fault: int
    cycles: int
    redirect: int | None
    data: bytes
    host: tuple[str, int] | None = None  # a host queue (cpu, xsk) the frame was redirected into
    host_dropped: bool = False  # ... and dropped there (queue full, or no such queue on the board)
    broadcast: int | None = None  # a broadcast's port mask (params.BCAST_PORTS bits, bit 31 exclude the ingress)

    @property
    def dest(self) -> str | None:
        """Where a redirect went, as `hxdp board out` prints it."""
        if self.host is not None:
            return f"{self.host[0]} {self.host[1]}" + (" (dropped)" if self.host_dropped else "")
        if self.broadcast is not None:
            ports = RunResult.broadcast_ports(self.broadcast, self.port + 1)
            return "ports " + (",".join(map(str, ports)) or "none")
        return None if self.redirect is None else f"port {self.redirect}"


def parse_redirect_field(text: str) -> dict[str, Any]:
    """The OUT line's redirect field: `-`, an ifindex, `cpu:N` / `xsk:N` (`:dropped`), `bcast:MASK`."""
    if text == "-":
        return {"redirect": None}
    kind, _, rest = text.partition(":")
    if not rest:
        return {"redirect": int(text)}
    if kind == "bcast":
        return {"redirect": None, "broadcast": int(rest)}
    num, _, dropped = rest.partition(":")
    return {"redirect": None, "host": (kind, int(num)), "host_dropped": dropped == "dropped"}


class SimBoard(Board):
    """The simulated board daemon (`hxdp board serve`) over its Unix socket (protocol in docs/board.md)."""

    BATCH = 4096  # requests in flight per pipelined batch

    def __init__(self, socket_path: str = DEFAULT_SOCKET, timeout: float = 60.0) -> None:
        self.path = socket_path
        self.name = f"sim:{socket_path}"
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(socket_path)
        except OSError as exc:
            self._sock.close()
            raise BoardError(f"no simulated board answers at {socket_path} ({exc.strerror or exc}); start one with "
                             f"`hxdp board serve --socket {socket_path}`") from None
        self._rfile = self._sock.makefile("rb")
        self.ping()

    # --- wire protocol -------------------------------------------------------------------------------------------
    def _send(self, lines: Sequence[str]) -> None:
        try:
            self._sock.sendall(("\n".join(lines) + "\n").encode())
        except OSError as exc:
            raise BoardError(f"simulated board at {self.path} went away: {exc.strerror or exc}") from None

    def _line(self) -> str:
        try:
            raw = self._rfile.readline()
        except OSError as exc:
            raise BoardError(f"simulated board at {self.path} went away: {exc.strerror or exc}") from None
        if not raw:
            raise BoardError(f"simulated board at {self.path} went away (connection closed)")
        return raw.decode().rstrip("\n")

    def request(self, line: str) -> str:
        """One request; returns the text after OK, raises BoardError on ERR."""
        self._send([line])
        return self._reply(line)

    def _reply(self, line: str) -> str:
        r = self._line()
        if r == "OK" or r.startswith("OK "):
            return r[3:]
        if r.startswith("ERR slverr"):
            raise BoardAddressError(f"{self.name}: no register at {line.split()[1]} (AXI SLVERR)")
        raise BoardError(f"{self.name}: {line.split()[0]}: {r.removeprefix('ERR ')}")

    def pipeline(self, lines: Sequence[str]) -> list[str]:
        """Many requests in flight; every reply is read even if one fails (the first error is raised after)."""
        out: list[str] = []
        first: BoardError | None = None
        for i in range(0, len(lines), self.BATCH):
            chunk = lines[i : i + self.BATCH]
            self._send(chunk)
            for line in chunk:
                try:
                    out.append(self._reply(line))
                except BoardAddressError as exc:
                    first = first or exc
                    out.append("")
        if first:
            raise first
        return out

    # --- lease and hold (kept by the daemon per connection) ------------------------------------------------------
    def _acquire(self) -> None:
        try:
            self.request(f"LOCK {owner_name()}")  # answered when no other connection leases the board
        except BoardError:
            try:
                with SimBoard(self.path, timeout=2.0) as other:
                    who = other.lease_state()["lease"]
            except BoardError:
                raise BoardError(f"{self.name}: no lease granted (the board went away)") from None
            raise BoardError(f"{self.name}: the board is leased by {who} for more than "
                             f"{self._sock.gettimeout() or 0:.0f} s") from None

    def _release(self) -> None:
        try:
            self.request("UNLOCK")
        except BoardError:
            pass  # the connection is gone: the daemon released the lease with it

    def lease_state(self) -> dict[str, str]:
        return dict(kv.split("=", 1) for kv in self.request("LEASE").split())

    def hold_info(self) -> HoldInfo | None:
        st = self.lease_state()
        if st["hold"] == "-":
            return None
        return HoldInfo(st["hold"], st["hold_alive"] == "1", st["hold_mine"] == "1")

    def take_hold(self) -> str:
        return self.request("TAKEHOLD")

    # --- Board interface -----------------------------------------------------------------------------------------
    def read32(self, addr: int) -> int:
        return int(self.request(f"R 0x{_check_u32('address', addr):08x}"), 0)

    def write32(self, addr: int, value: int) -> None:
        self.request(f"W 0x{_check_u32('address', addr):08x} 0x{_check_u32('value', value):x}")

    def write_many(self, writes: Iterable[tuple[int, int]]) -> None:
        self.pipeline([f"W 0x{_check_u32('address', a):08x} 0x{_check_u32('value', v):x}" for a, v in writes])

    def read_many(self, addrs: Sequence[int] | Iterable[int]) -> list[int]:
        return [int(r, 0) for r in self.pipeline([f"R 0x{_check_u32('address', a):08x}" for a in addrs])]

    def transact(self, ops: Sequence[tuple[int, int | None]]) -> list[int | None]:
        lines = [f"R 0x{a:08x}" if v is None else f"W 0x{a:08x} 0x{v:x}" for a, v in ops]
        replies = self.pipeline(lines)
        return [int(r, 0) if v is None else None for (_a, v), r in zip(ops, replies, strict=True)]

    def close(self) -> None:
        try:
            self._rfile.close()
            self._sock.close()
        except OSError:
            pass

    # --- simulated board extras (packets, clock) -------------------------------------------------------------------
    def ping(self) -> str:
        return self.request("PING")

    def inject(self, packets: Iterable[bytes], port: int = 0) -> None:
        """Queue packets on an input port (port k has ingress_ifindex k + 1); an empty frame is `-`."""
        self.pipeline([f"I {port} {bytes(p).hex() or '-'}" for p in packets])

    def wait(self, max_cycles: int | None = None) -> int:
        """Run until every queued packet has left the board; returns the cycle count (no socket timeout)."""
        old = self._sock.gettimeout()
        self._sock.settimeout(None)
        try:
            return int(self.request("WAIT" if max_cycles is None else f"WAIT {max_cycles}"))
        finally:
            self._sock.settimeout(old)

    def run(self, cycles: int) -> int:
        return int(self.request(f"RUN {cycles}"))

    def outputs(self, max_count: int | None = None) -> list[SimOutput]:
        """Packets that left the board since the last call (oldest first)."""
        head = self.request("OUT" if max_count is None else f"OUT {max_count}")
        out = []
        for _ in range(int(head)):
            f = self._line().split()
            red = parse_redirect_field(f[5])
            out.append(SimOutput(int(f[0]), int(f[1]), int(f[2]), int(f[3]), int(f[4]),
                                 data=b"" if f[6] == "-" else bytes.fromhex(f[6]), **red))
        return out

    def stat(self) -> dict[str, int]:
        return {k: int(v) for k, v in (kv.split("=", 1) for kv in self.request("STAT").split())}

    def replay(self, pcap_path: str | os.PathLike[str], port: int = 0, loop: bool = False) -> None:
        """Replay a pcap into a port: read here (the daemon opens no file for a client) and streamed over."""
        from hxdp.traffic.pcap import read_pcap

        frames = read_pcap(str(pcap_path))
        if not frames:
            raise BoardError(f"{pcap_path}: no packets to replay")
        self.pipeline([f"RF {bytes(p).hex() or '-'}" for p in frames])
        self.request(f"RGO {port} {int(loop)}")

    def stop_replay(self) -> None:
        self.request("STOPPCAP")

    def shutdown(self) -> None:
        self.request("QUIT")


def open_board(spec: str | None = None) -> Board:
    """`sume[:IFACE]` (default nf0), `sim[:SOCKET]` (default /tmp/hxdp-board.sock) or `model:STATE.json` (the
    model of the original bitstream's register slave, its registers kept in the file); default from $HXDP_BOARD."""
    spec = spec or os.environ.get("HXDP_BOARD") or f"sim:{DEFAULT_SOCKET}"
    kind, _, arg = spec.partition(":")
    if kind == "sume":
        return SumeBoard(arg or DEFAULT_IFACE)
    if kind == "sim":
        return SimBoard(arg or DEFAULT_SOCKET)
    if kind == "model" and arg:
        from hxdp.board.original import OriginalSlave

        return OriginalSlave(arg)
    raise BoardError(f"--board {spec!r}: expected sume[:IFACE], sim[:SOCKET] or model:STATE.json")


# register map (design.md section 6 plus the extensions of docs/board.md)
def imem_word_addr(row: int, lane: int, high: bool) -> int:
    return params.imem_row_base(row) + 8 * lane + (4 if high else 0)


def imem_commit_addr(row: int) -> int:
    return params.imem_row_base(row) + params.AXI_IMEM_COMMIT
