"""The original hXDP bitstream: its AXI-Lite slave as a model, the probe that tells it from ours, and its protocols.

Sources (public facts, `../shared/design.md` sections 4 and 6; the hXDP artifact's testbed scripts): instruction
rows at `0x8000_0000 + (row << 8)` (eight words, then 1 to `+0xFF` commits the row; the artifact's inject script
writes all 256 rows, its dump script reads them back at the same addresses); map memory lines selected by address
bits 15:8 with no commit register (the artifact's dump_maps.py reads line L's four words at
`0x8001_0000 + (L << 8) + 0x10 + 4w`; writes are taken to go to the same addresses, word by word: untested on
hardware); 256 rows, 256 map lines; counters at `0x8002_0002..4`: RX counts arriving packets, DROP counts XDP_DROP
and not XDP_ABORTED; no hold, no row count, no ID register: every address it does not decode reads `0x01234567`.
"""

from __future__ import annotations

import ctypes
import json
import struct
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hxdp import params
from hxdp.board.transport import SUME_IOCTL_READ, SUME_IOCTL_WRITE, Board, BoardError
from hxdp.errors import HxdpError
from hxdp.isa import original as original_isa
from hxdp.isa.rom import Rom

UNDECODED = 0x0123_4567  # what the original answers at an address it does not decode
ROWS = 256  # instruction memory rows (address bits 15:8)
MAP_LINES = 256  # map memory lines it can address (address bits 15:8)
MAP_WORD0 = 0x10  # line L word w at AXI_MAPS_BASE + (L << 8) + MAP_WORD0 + 4w
OURS = "ours"
ORIGINAL = "original"
MASK32 = 0xFFFF_FFFF


class OriginalUnsupported(BoardError):
    """Something the original bitstream cannot do (a register it lacks): refused, nothing written."""


# --- which bitstream -------------------------------------------------------------------------------------------------
def probe(board: Board) -> str:
    """OURS when the ID register answers "hXDP", ORIGINAL when it answers the original's 0x01234567 (an address it
    does not decode); anything else is refused. Remembered on the board object (one read per command)."""
    if board.bitstream is None:
        try:
            ident = board.read32(params.AXI_ID)
        except BoardError as exc:
            raise BoardError(f"{board.name}: cannot read the ID register 0x{params.AXI_ID:08x}: {exc}") from None
        if ident == params.AXI_ID_VALUE:
            board.bitstream = OURS
        elif ident == UNDECODED:
            board.bitstream = ORIGINAL
        else:
            raise BoardError(f"{board.name}: the ID register 0x{params.AXI_ID:08x} reads 0x{ident:08x}: neither this "
                             f"project's bitstream (0x{params.AXI_ID_VALUE:08x}) nor the original hXDP "
                             f"(0x{UNDECODED:08x}); is the NetFPGA programmed with an hXDP bitstream?")
    return board.bitstream


def is_original(board: Board) -> bool:
    return probe(board) == ORIGINAL


def check_claim(board: Board, original: bool) -> bool:
    """The bitstream the board runs, checked against the user's `--original` (True: the original runs)."""
    found = is_original(board)
    if original and not found:
        raise BoardError(f"{board.name}: --original, but the board answers this project's ID register (our "
                         "bitstream): drop --original")
    return found


def require_ours(board: Board, what: str) -> None:
    """Refuse `what` on the original bitstream, in one line naming the missing register."""
    if is_original(board):
        raise OriginalUnsupported(f"{board.name}: {what} needs this project's bitstream; the board runs the "
                                  "original hXDP, which has no such register (docs/board.md, section 5)")


def no_hold(board: Board) -> OriginalUnsupported:
    return OriginalUnsupported(f"{board.name}: the original hXDP bitstream has no input hold, so the writes cannot be "
                               "made atomic: pass --no-hold (inject, load: or --original) to write while packets run")


# --- its protocols ---------------------------------------------------------------------------------------------------
def imem_addr(row: int, word: int) -> int:
    return params.AXI_IMEM_BASE + (row << 8) + 4 * word


def map_word_addr(line: int, word: int) -> int:
    return params.AXI_MAPS_BASE + (line << 8) + MAP_WORD0 + 4 * word


def check_map_line(line: int) -> None:
    """A line past 255 would carry into the address bits above 15 (another register): refused."""
    if not 0 <= line < MAP_LINES:
        raise OriginalUnsupported(f"map line {line}: the original bitstream addresses lines 0..{MAP_LINES - 1} "
                                  "only (address bits 15:8, 4 KiB of map memory); nothing read or written")


def line_read_ops(line: int) -> list[tuple[int, int | None]]:
    check_map_line(line)
    return [(map_word_addr(line, w), None) for w in range(4)]


def line_write_ops(line: int, data: bytes) -> list[tuple[int, int]]:
    check_map_line(line)
    return [(map_word_addr(line, w), int.from_bytes(data[4 * w : 4 * w + 4], "little")) for w in range(4)]


def row_words(rom: Rom, r: int) -> list[int]:
    if r >= len(rom.rows):
        return [0] * (2 * params.LANES)
    out = []
    for ins in rom.rows[r]:
        v = ins.to_u64()
        out += [v & MASK32, v >> 32]
    return out


@dataclass
class OriginalInject:
    rows: int
    writes: int
    reads: int
    seconds: float


def inject(board: Board, rom: Rom, verify: bool = True) -> OriginalInject:
    """The artifact's inject: all 256 rows (the program's, then zero rows: no row of a longer previous program
    stays), eight words and a commit each, while packets run (no hold); then read back and compared."""
    if rom.lanes != params.LANES or not rom.rows or len(rom.rows) > ROWS:
        raise BoardError(f"ROM of {len(rom.rows)} rows x {rom.lanes} lanes: the original holds 1..{ROWS} rows of "
                         f"{params.LANES} lanes")
    try:  # what the original's core cannot run never reaches it (its opcodes, lane-0 exit, helpers, r0-r10)
        original_isa.check_rom(rom)
    except HxdpError as exc:
        raise BoardError(f"{board.name}: not a ROM for the original hXDP core: {exc} (compile with --target "
                         "hxdp-original)") from None
    t0 = time.perf_counter()
    ops: list[tuple[int, int]] = []
    for r in range(ROWS):
        ops += [(imem_addr(r, k), w) for k, w in enumerate(row_words(rom, r))]
        ops.append((params.AXI_IMEM_BASE + (r << 8) + params.AXI_IMEM_COMMIT, 1))
    reads = 0
    with board.lease():
        board.write_many(ops)
        if verify:
            addrs = [imem_addr(r, k) for r in range(ROWS) for k in range(2 * params.LANES)]
            got = board.read_many(addrs)
            reads = len(addrs)
            want = [w for r in range(ROWS) for w in row_words(rom, r)]
            for i, (g, w) in enumerate(zip(got, want, strict=True)):
                if g != w:
                    row, k = divmod(i, 2 * params.LANES)
                    raise BoardError(f"{board.name}: row {row} lane {k // 2} word {k % 2} reads 0x{g:08x}, wrote "
                                     f"0x{w:08x} (packets may run a mixed program: inject again)")
    return OriginalInject(len(rom.rows), len(ops), reads, time.perf_counter() - t0)


def read_counters(board: Board) -> dict[str, int]:
    """The original's three counters under the names of what they count (not ours: RX arrivals, DROP without
    ABORTED)."""
    arrived, tx, drop = board.read_many([params.AXI_CNT_RX, params.AXI_CNT_TX, params.AXI_CNT_DROP])
    return {"arrived": arrived, "tx": tx, "xdp_drop": drop}


class OriginalMonitor:
    """Rates and 64-bit totals of the original's counters (no cycle counter: wall-clock rates only)."""

    def __init__(self, board: Board) -> None:
        self.board = board
        self.last = read_counters(board)
        self.last_t = time.monotonic()
        self.totals = {k: 0 for k in self.last}

    def sample(self) -> dict[str, float]:
        now, t = read_counters(self.board), time.monotonic()
        dt = max(t - self.last_t, 1e-9)
        out: dict[str, float] = {"seconds": dt}
        for k in self.totals:
            d = (now[k] - self.last[k]) & MASK32
            self.totals[k] += d
            out[k], out[f"{k}_mpps"] = d, d / dt / 1e6
        self.last, self.last_t = now, t
        return out


def format_sample(s: dict[str, float], totals: dict[str, int]) -> str:
    return (f"ARRIVED {s['arrived_mpps']:8.3f} Mpps  TX {s['tx_mpps']:8.3f} Mpps  XDP_DROP {s['xdp_drop_mpps']:8.3f} "
            f"Mpps  | totals arrived {totals['arrived']} tx {totals['tx']} xdp_drop {totals['xdp_drop']}  "
            "| original bitstream: aborted and pass not counted")


# --- the model of its AXI-Lite slave ---------------------------------------------------------------------------------
class OriginalSlave(Board):
    """The original hXDP AXI-Lite slave as the host sees it (a Board; `ioctl` stands in for the SUME driver).

    `packet(action)` counts one packet as the original does. `path` keeps the registers in a JSON file between
    commands (`--board model:PATH`)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.name = f"model:{path}" if path else "model:original"
        self.path = Path(path) if path else None
        self.imem = [[0] * (2 * params.LANES) for _ in range(ROWS)]
        self.staging = [0] * (2 * params.LANES)
        self.maps = [[0] * 4 for _ in range(MAP_LINES)]
        self.counters = {params.AXI_CNT_RX: 0, params.AXI_CNT_TX: 0, params.AXI_CNT_DROP: 0}
        self.log: list[tuple[str, int, int]] = []
        if self.path and self.path.exists():
            doc = json.loads(self.path.read_text())
            self.imem, self.maps = doc["imem"], doc["maps"]
            self.counters = {int(k): v for k, v in doc["counters"].items()}

    def _save(self) -> None:
        if self.path:
            self.path.write_text(json.dumps({"imem": self.imem, "maps": self.maps, "counters": self.counters}))

    def _decode(self, addr: int) -> tuple[str, int, int] | None:
        base, sel, off = addr & 0xFFFF_0000, (addr >> 8) & 0xFF, addr & 0xFF
        if base == params.AXI_IMEM_BASE and (off < 8 * params.LANES and off % 4 == 0 or off == 0xFF):
            return "imem", sel, off
        if base == params.AXI_MAPS_BASE and MAP_WORD0 <= off < MAP_WORD0 + 16 and off % 4 == 0:
            return "map", sel, (off - MAP_WORD0) // 4
        if addr in self.counters:
            return "cnt", addr, 0
        return None

    def read32(self, addr: int) -> int:
        self.log.append(("r", addr, 0))
        d = self._decode(addr)
        if d is None or (d[0] == "imem" and d[2] == 0xFF):
            return UNDECODED
        kind, sel, off = d
        if kind == "imem":
            return self.imem[sel][off // 4]
        if kind == "map":
            return self.maps[sel][off]
        return self.counters[addr]

    def write32(self, addr: int, value: int) -> None:
        self.log.append(("w", addr, value))
        d = self._decode(addr)
        if d is None or d[0] == "cnt":
            return  # written to nothing, answered OKAY
        kind, sel, off = d
        if kind == "map":
            self.maps[sel][off] = value
        elif off == 0xFF:
            if value & 1:
                self.imem[sel], self.staging = self.staging, [0] * (2 * params.LANES)
        else:
            self.staging[off // 4] = value
        self._save()

    def write_many(self, writes: Iterable[tuple[int, int]]) -> None:
        path, self.path = self.path, None  # one save for the batch
        try:
            for addr, value in writes:
                self.write32(addr, value)
        finally:
            self.path = path
            self._save()

    def packet(self, action: int, finished: bool = True) -> None:
        """One packet: RX counts its arrival; TX counts XDP_TX and XDP_REDIRECT; DROP counts XDP_DROP only."""
        self.counters[params.AXI_CNT_RX] = (self.counters[params.AXI_CNT_RX] + 1) & MASK32
        if not finished:
            return
        if action in (params.XDP_TX, params.XDP_REDIRECT):
            self.counters[params.AXI_CNT_TX] = (self.counters[params.AXI_CNT_TX] + 1) & MASK32
        elif action == params.XDP_DROP:
            self.counters[params.AXI_CNT_DROP] = (self.counters[params.AXI_CNT_DROP] + 1) & MASK32
        self._save()

    def map_memory(self) -> bytes:
        return b"".join(w.to_bytes(4, "little") for line in self.maps for w in line)

    def ioctl(self, fd: int, req: int, ifr: bytearray) -> int:
        """The SUME driver's register ioctl on this model (SumeBoard(iface, ioctl=slave.ioctl, sock=fd))."""
        (ptr,) = struct.unpack_from("P", ifr, 16)
        regs = ctypes.cast(ptr, ctypes.POINTER(ctypes.c_uint32 * 2)).contents
        if req == SUME_IOCTL_WRITE:
            self.write32(regs[0], regs[1])
        elif req == SUME_IOCTL_READ:
            regs[1] = self.read32(regs[0])
        else:
            raise OSError(22, "bad request")
        return 0
