"""Host tools over a Board: inject, dump, maps by name or id, counters, load, what the board runs.

Longer than the others (under 800 lines) because every multi-register operation on the board is here, written
against one register protocol (the lease, the input hold and its owner, the row and line staging registers, the
map table) so that their ordering rules are read in one place; the commands' parsing and output shapes are in
hxdp/cli/, the trace FIFO in hxdp/board/tracelog.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hxdp import params
from hxdp.board import original as orig
from hxdp.board.counters import ACTION_COUNTERS, COUNTERS, Monitor, format_sample, read_counters, wrap_delta
from hxdp.board.loadnote import STATE_ENV, program_tag, recall_load, recalled_layout, remember_load  # re-exported
from hxdp.board.tracelog import PrintkRecord, format_printk, read_tracelog  # re-exported: the tools' API
from hxdp.board.transport import Board, BoardError, imem_commit_addr, imem_word_addr
from hxdp.frontend.program import Program
from hxdp.isa.insn import Insn
from hxdp.isa.rom import Rom, RomError
from hxdp.models.maps import BPF_ANY, EVENT_KINDS, MapError, MapLayout, MapRegion, MapState

LINE = params.AXI_LINE_BYTES
MASK32 = 0xFFFFFFFF


class InjectError(BoardError):
    """A ROM that cannot be injected, or whose read-back differs from what was written."""


class HoldError(BoardError):
    """The input is held by another owner (often one that died mid-inject): nothing is written."""


# --- raw access ----------------------------------------------------------------------------------------------------
def parse_u32(text: str, what: str = "value") -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise BoardError(f"{what} {text!r} is not a number (use 0x for hex)") from None
    if not 0 <= v <= MASK32:
        raise BoardError(f"{what} {text} does not fit in 32 bits")
    return v


def axi(board: Board, addr: int, value: int | None = None) -> str:
    """rwaxi: write when value is given, else read; prints like rwaxi (0x%08x of the read value)."""
    if value is not None:
        board.write32(addr, value)
        return ""
    return f"0x{board.read32(addr):08x}"


# --- hold: no packet starts while the host changes the program or several map lines ---------------------------------
def hold_message(board: Board, owner: str) -> str:
    return (f"{board.name}: the input is held by {owner}: no packet runs until it is released; inject the program "
            "again (hxdp inject PROG.rom) or pass --force")


def hold_input(board: Board, timeout: float = 5.0, force: bool = False, recover: bool = False) -> None:
    """Set the hold, as its owner. A hold set by another client is refused, unless `force`, or `recover` (an
    inject: the recovery) and its owner is gone."""
    info = board.hold_info()
    if info is not None and not info.mine:
        if not (force or (recover and not info.alive)):
            raise HoldError(hold_message(board, info.text()))
        board.take_hold()
    board.write32(params.AXI_CTRL, params.AXI_CTRL_HOLD)
    board.note_hold(True)
    deadline = time.monotonic() + timeout
    while not board.read32(params.AXI_STATUS) & params.AXI_STATUS_HELD:
        if time.monotonic() > deadline:
            raise BoardError(f"{board.name}: input not held after {timeout:.0f} s (a packet never finishes?)")


def release_input(board: Board) -> None:
    board.write32(params.AXI_CTRL, 0)
    board.note_hold(False)


@contextmanager
def held(board: Board, enabled: bool = True, force: bool = False, recover: bool = False) -> Iterator[None]:
    """Lease the board and hold the input at a packet boundary for the duration; left held if the body fails (no
    half program runs: only this owner, a new inject or --force releases it)."""
    with board.lease():
        if not enabled:
            yield
            return
        if orig.is_original(board):
            raise orig.no_hold(board)
        hold_input(board, force=force, recover=recover)
        yield
        release_input(board)


# --- instruction memory ----------------------------------------------------------------------------------------------
def row_words(row: list[Insn]) -> list[int]:
    """The 2 * LANES 32-bit words of a row: lane k low word (opcode, regs, off) then imm."""
    out = []
    for ins in row:
        v = ins.to_u64()
        out += [v & MASK32, v >> 32]
    return out


def check_rom(rom: Rom, capacity: int = params.IMEM_ROWS) -> None:
    if rom.lanes != params.LANES:
        raise InjectError(f"ROM has {rom.lanes} lanes, the board has {params.LANES}")
    if not rom.rows:
        raise InjectError("ROM is empty")
    if len(rom.rows) > capacity:
        raise InjectError(f"ROM has {len(rom.rows)} rows, the instruction memory holds {capacity}")


def load_rom(path: str | Path) -> Rom:
    rom = Rom.load(path)
    check_rom(rom)
    return rom


@dataclass
class InjectReport:
    rows: int
    writes: int
    reads: int
    seconds: float
    cleared: int
    atomic: bool = True


def inject(board: Board, rom: Rom, verify: bool = True, atomic: bool = True, extensions: bool = True,
           force: bool = False) -> InjectReport:
    """Write every row with its commit, set the row count, read back and compare.

    atomic: hold the input at a packet boundary meanwhile, so packets see the old program or the new one.
    extensions: the board has this project's registers (row count, hold); False for the original bitstream
    (implies not atomic). Rows the old program used beyond the new one are zeroed. On a read-back mismatch the
    input stays held and InjectError names the row. A hold left by an owner that is gone is taken over (inject is
    the recovery); one of a live owner only with `force`. On the original bitstream (probed; `extensions=False`
    claims it): hxdp.board.original.inject, all 256 rows, refused unless `atomic` is off or claimed.
    """
    check_rom(rom)
    if orig.check_claim(board, not extensions):
        if atomic and extensions:
            raise orig.no_hold(board)
        o = orig.inject(board, rom, verify)
        return InjectReport(o.rows, o.writes, o.reads, o.seconds, orig.ROWS - o.rows, atomic=False)
    t0 = time.perf_counter()
    writes = reads = 0
    with held(board, atomic, force=force, recover=True):
        old_rows = board.read32(params.AXI_ROWS) if extensions else 0
        reads += 1 if extensions else 0
        nrows = max(len(rom.rows), min(old_rows, params.IMEM_ROWS))
        ops: list[tuple[int, int]] = []
        for r in range(nrows):
            words = row_words(rom.rows[r]) if r < len(rom.rows) else [0] * (2 * params.LANES)
            ops += [(imem_word_addr(r, k // 2, bool(k % 2)), w) for k, w in enumerate(words)]
            ops.append((imem_commit_addr(r), 1))
        if extensions:
            ops.append((params.AXI_ROWS, len(rom.rows)))
        board.write_many(ops)
        writes += len(ops)
        if verify:
            addrs = [imem_word_addr(r, k // 2, bool(k % 2)) for r in range(len(rom.rows))
                     for k in range(2 * params.LANES)]
            got = board.read_many(addrs)
            reads += len(addrs)
            want = [w for row in rom.rows for w in row_words(row)]
            for i, (g, w) in enumerate(zip(got, want, strict=True)):
                if g != w:
                    row, k = divmod(i, 2 * params.LANES)
                    raise InjectError(f"{board.name}: row {row} lane {k // 2} {'imm' if k % 2 else 'low'} word reads "
                                      f"0x{g:08x}, wrote 0x{w:08x} (input left held; inject again)")
    return InjectReport(len(rom.rows), writes, reads, time.perf_counter() - t0, nrows - len(rom.rows))


def dump_imem(board: Board, rows: int | None = None) -> Rom:
    """The first `rows` rows of instruction memory (default: the program's row count register)."""
    if rows is None:
        if orig.is_original(board):
            raise BoardError(f"{board.name}: the original bitstream has no row count register: give the rows to dump")
        rows = board.read32(params.AXI_ROWS)
    if not 0 <= rows <= params.IMEM_ROWS:
        raise BoardError(f"row count {rows} outside 0..{params.IMEM_ROWS}")
    addrs = [imem_word_addr(r, k // 2, bool(k % 2)) for r in range(rows) for k in range(2 * params.LANES)]
    words = board.read_many(addrs)
    out = []
    for r in range(rows):
        w = words[r * 2 * params.LANES : (r + 1) * 2 * params.LANES]
        out.append([Insn.from_u64(w[2 * k] | (w[2 * k + 1] << 32)) for k in range(params.LANES)])
    return Rom(out)


def dump_imem_lines(rom: Rom, layout: MapLayout | None = None) -> list[str]:
    from hxdp.listing import rom_lane_text

    lines = []
    for r, row in enumerate(rom.rows):
        hexrow = " ".join(f"{ins.to_u64():016x}" for ins in row)
        text = " ; ".join(f"{k}: {rom_lane_text(row, k, r, layout)}" for k in range(len(row)) if not row[k].is_nop)
        lines.append(f"{r:4d}  {hexrow}  {text or 'nop'}")
    return lines


# --- map memory lines ------------------------------------------------------------------------------------------------
def line_read_ops(board: Board, idx: int) -> list[tuple[int, int | None]]:
    """Reads of line idx's four words: ours through LINE_ADDR, the original's by address."""
    if orig.is_original(board):
        return orig.line_read_ops(idx)
    return [(params.AXI_MAPS_LINE_ADDR, idx)] + [(params.AXI_MAPS_BASE + 4 * i, None) for i in range(4)]


def line_words(data: bytes) -> list[int]:
    return [int.from_bytes(data[4 * i : 4 * i + 4], "little") for i in range(4)]


def check_line(board: Board, line: int) -> None:
    lines = params.MAP_MEM_BYTES // LINE
    if not 0 <= line < lines:
        raise BoardError(f"map line {line} outside 0..{lines - 1}")


def write_lines(board: Board, lines: dict[int, bytes], descending: bool = False) -> int:
    """Write 16-byte lines (staging words then commit with the line number); returns the AXI writes."""
    ops = []
    original = orig.is_original(board)
    for idx in sorted(lines, reverse=descending):
        check_line(board, idx)
        data = lines[idx]
        if len(data) != LINE:
            raise BoardError(f"map line {idx}: {len(data)} bytes, a line has {LINE}")
        if original:  # the line by address bits 15:8, word by word
            ops += orig.line_write_ops(idx, data)
            continue
        ops += [(params.AXI_MAPS_BASE + 4 * i, w) for i, w in enumerate(line_words(data))]
        ops.append((params.AXI_MAPS_BASE + params.AXI_MAPS_COMMIT, idx))
    with board.lease():  # the staging line is shared: another client's words never mix into these
        board.write_many(ops)
    return len(ops)


def read_lines(board: Board, first: int, count: int) -> bytes:
    if count <= 0:
        return b""
    check_line(board, first)
    check_line(board, first + count - 1)
    ops: list[tuple[int, int | None]] = []
    for idx in range(first, first + count):
        ops += line_read_ops(board, idx)
    with board.lease():  # LINE_ADDR is shared
        vals = [v for v in board.transact(ops) if v is not None]
    return b"".join(v.to_bytes(4, "little") for v in vals)


def read_line(board: Board, line: int) -> bytes:
    return read_lines(board, line, 1)


def write_line(board: Board, line: int, data: bytes) -> None:
    write_lines(board, {line: data})


def board_cores(board: Board) -> int:
    """The Sephirot cores the board runs its program on (its CORES register; the original bitstream has one)."""
    if orig.is_original(board):
        return 1
    return board.read32(params.AXI_CORES)


def percpu_copy_lines(r: MapRegion, core: int) -> int:
    """How many lines above a per-CPU array's region core `core`'s copy of it is (sephirot_percpu.v: core k's at
    k * PERCPU_STRIDE bytes above; core 0's is the region itself)."""
    return core * params.PERCPU_STRIDE // LINE


def cores_check(layout: MapLayout, cores: int) -> None:
    """Refuse a layout the board's cores cannot run (hxdp.rtl.sim.cores_refusal), before the board is written."""
    from hxdp.rtl.sim import cores_refusal

    refusal = cores_refusal(layout, cores)
    if refusal is not None:
        raise MapError(f"the board has {cores} cores: {refusal}")


# --- maps by name --------------------------------------------------------------------------------------------------
def load_layout(path: str | Path) -> MapLayout:
    """A layout file, checked against the layout schema; MapError names the file."""
    return MapLayout.load(path)


def layout_path_for(rom_or_obj: str | Path) -> Path:
    return Path(rom_or_obj).with_suffix(".maps.json")


def _region_lines(r: MapRegion) -> tuple[int, int]:
    first = r.offset // LINE
    last = (r.offset + r.size + LINE - 1) // LINE
    return first, last - first


class BoardMaps:
    """Map operations by name on a board: the lines an operation touches are read into a MapState (the hash probe
    sequence, an array slot; the whole region for LPM tries and full LRU maps), the operation runs there with the
    kernel's semantics, and the lines that changed are written back while the input is held."""

    PROBE_CHUNK = 8  # hash slots read per round trip while following a probe sequence

    def __init__(self, board: Board, layout: MapLayout, atomic: bool = True, force: bool = False) -> None:
        self.board = board
        self.layout = layout
        self.atomic = atomic
        self.force = force
        self.state = MapState(layout)
        self.lines_written = 0
        self.lines_read = 0
        self._fetched: set[int] = set()
        self._cores: int | None = None

    @property
    def cores(self) -> int:
        """The board's cores (read once): a per-CPU array has a copy per core."""
        if self._cores is None:
            self._cores = board_cores(self.board)
        return self._cores

    def copies(self, r: MapRegion) -> int:
        """The copies of map r on the board: one per core for a per-CPU array on several cores, else one."""
        return self.cores if r.kind == "percpu_array" and self.cores > 1 else 1

    def region(self, name: str | int) -> MapRegion:
        """A map by name, or by id (an int) when the layout has no names (read from the board's table)."""
        return self.layout.region(name if isinstance(name, int) else self.layout.map_id(name))

    def _read(self, lines: list[int]) -> None:
        want = sorted(set(lines) - self._fetched)
        if not want:
            return
        runs: list[tuple[int, int]] = []
        for idx in want:
            if runs and runs[-1][0] + runs[-1][1] == idx:
                runs[-1] = (runs[-1][0], runs[-1][1] + 1)
            else:
                runs.append((idx, 1))
        ops: list[tuple[int, int | None]] = []
        for first, count in runs:
            for idx in range(first, first + count):
                ops += line_read_ops(self.board, idx)
        with self.board.lease():
            vals = [v for v in self.board.transact(ops) if v is not None]
        data = b"".join(v.to_bytes(4, "little") for v in vals)
        for n, idx in enumerate(want):
            self.state.mem[idx * LINE : (idx + 1) * LINE] = data[n * LINE : (n + 1) * LINE]
        self._fetched.update(want)
        self.lines_read += len(want)

    @staticmethod
    def _span(addr: int, size: int) -> list[int]:
        return list(range(addr // LINE, (addr + size + LINE - 1) // LINE))

    def fetch(self, r: MapRegion) -> None:
        first, count = _region_lines(r)
        self._read(list(range(first, first + count)))

    def _fetch_for_key(self, r: MapRegion, key: bytes, update: bool) -> None:
        """Read the lines an operation on `key` reads or writes (everything for LPM tries and full LRU maps)."""
        from hxdp.models.maps import ARRAY_KINDS, DELETED, EMPTY, HASH_KINDS, key_hash

        if len(key) != r.key_size:
            return  # MapState refuses the key before reading memory
        header = self._span(r.offset, LINE)
        if r.kind in ARRAY_KINDS:
            idx = int.from_bytes(key, "little")
            if idx < r.max_entries:
                self._read(self._span(r.slot_addr(idx), r.slot_size))
            return
        if r.kind not in HASH_KINDS:
            self.fetch(r)
            return
        self._read(header)
        if r.kind == "lru_hash" and update and self.state.count(r.id) >= r.max_entries:
            self.fetch(r)  # an insert may evict the least recently used entry: every slot is read
            return
        mask, start = r.slots - 1, key_hash(key) & (r.slots - 1)
        for n0 in range(0, r.slots, self.PROBE_CHUNK):
            slots = [(start + n) & mask for n in range(n0, min(r.slots, n0 + self.PROBE_CHUNK))]
            self._read([ln for i in slots for ln in self._span(r.slot_addr(i), r.slot_size)])
            for i in slots:
                base = r.slot_addr(i)
                state = self.state.mem[base]
                if state == EMPTY or (state != DELETED and
                                      self.state.mem[base + r.key_offset : base + r.key_offset + r.key_size] == key):
                    return

    def _modify(self, name: str | int, key: bytes, op: Callable[[int], int], value: bytes | None = None) -> int:
        r = self.region(name)
        if len(key) != r.key_size:  # refused before the input is held
            raise MapError(f"map {map_label(r)}: key of {len(key)} bytes, the map's key size is {r.key_size}")
        if value is not None and len(value) != r.value_size:
            raise MapError(f"map {map_label(r)}: value of {len(value)} bytes, the map's value size is "
                           f"{r.value_size}")
        first, count = _region_lines(r)
        with self.board.lease():
            self.check_board(r)  # before the hold: a refused write leaves the input as it was
            if self.copies(r) > 1:
                return self._modify_copies(r, op, first, count)
            return self._modify_held(r, key, op, first, count)

    def _modify_copies(self, r: MapRegion, op: Callable[[int], int], first: int, count: int) -> int:
        """The operation on every core's copy of a per-CPU array, each read, changed and written on its own (a line
        may hold other slots, whose values differ per core), as the kernel's update sets every CPU's slot."""
        err = 0
        with held(self.board, self.atomic, force=self.force):
            for k in range(self.copies(r)):
                shift = percpu_copy_lines(r, k)
                before = read_lines(self.board, first + shift, count)
                mem = self.state.mem
                mem[first * LINE : (first + count) * LINE] = before
                err = op(r.id)
                changed = {first + shift + i: bytes(mem[(first + i) * LINE : (first + i + 1) * LINE])
                           for i in range(count)
                           if mem[(first + i) * LINE : (first + i + 1) * LINE] != before[i * LINE : (i + 1) * LINE]}
                write_lines(self.board, changed, descending=True)
                self.lines_written += len(changed)
        self._fetched.clear()
        return err

    def _modify_held(self, r: MapRegion, key: bytes, op: Callable[[int], int], first: int, count: int) -> int:
        with held(self.board, self.atomic, force=self.force):
            self._fetched.clear()
            self._fetch_for_key(r, key, update=True)
            before = bytes(self.state.mem[first * LINE : (first + count) * LINE])
            try:
                err = op(r.id)
            except Exception:
                if self.atomic:
                    release_input(self.board)  # nothing written yet: the traffic goes on
                raise
            mem = self.state.mem
            changed = {first + i: bytes(mem[(first + i) * LINE : (first + i + 1) * LINE]) for i in range(count)
                       if mem[(first + i) * LINE : (first + i + 1) * LINE] != before[i * LINE : (i + 1) * LINE]}
            if not set(changed) <= self._fetched:  # the operation reached lines not read: redo on the whole region
                mem[first * LINE : (first + count) * LINE] = before
                self.fetch(r)
                return self._modify_full(r, op)
            # descending order: the region header (entry count) goes last
            write_lines(self.board, changed, descending=True)
            self.lines_written += len(changed)
        return err

    def check_board(self, r: MapRegion) -> None:
        """Refuse to write map `r` unless the board's map-configuration table has the same entry for its id: a
        layout of another program would write into that program's maps."""
        if orig.is_original(self.board):
            return  # the original bitstream has no map table to check against
        have = read_map_config(self.board)[r.id]
        want = map_config_entries(self.layout)[r.id]
        if have != want:
            where = "has no map" if not (have >> 8) & 0xFF else "has another map"
            raise MapError(f"map {map_label(r)}: the board's map table {where} at id {r.id}: the layout is not the "
                           "running program's (load it with hxdp prog load, or give its --layout/--rom); nothing "
                           "written")

    def _modify_full(self, r: MapRegion, op: Callable[[int], int]) -> int:
        first, count = _region_lines(r)
        before = bytes(self.state.mem[first * LINE : (first + count) * LINE])
        err = op(r.id)
        mem = self.state.mem
        changed = {first + i: bytes(mem[(first + i) * LINE : (first + i + 1) * LINE]) for i in range(count)
                   if mem[(first + i) * LINE : (first + i + 1) * LINE] != before[i * LINE : (i + 1) * LINE]}
        write_lines(self.board, changed, descending=True)
        self.lines_written += len(changed)
        return err

    def lookup(self, name: str | int, key: bytes) -> bytes | None:
        r = self.region(name)
        self._fetched.clear()
        self._fetch_for_key(r, key, update=False)
        return self.state.lookup(r.id, key)

    def update(self, name: str | int, key: bytes, value: bytes, flags: int = BPF_ANY) -> int:
        return self._modify(name, key, lambda mid: self.state.update(mid, key, value, flags), value)

    def delete(self, name: str | int, key: bytes) -> int:
        return self._modify(name, key, lambda mid: self.state.delete(mid, key))

    def dump(self, name: str | int) -> dict[bytes, bytes]:
        r = self.region(name)
        self._fetched.clear()
        self.fetch(r)
        return self.state.dump_map(r.id)

    def dump_per_cpu(self, name: str | int) -> dict[bytes, list[bytes]]:
        """A map's entries with a list of values, one per copy: a per-CPU array's per core (bpftool's `value (CPU
        k)` lines; core k's copy from its place, sephirot_percpu.v), any other map's one."""
        r = self.region(name)
        first, count = _region_lines(r)
        views = []
        for k in range(self.copies(r)):
            view = MapState(self.layout)
            view.mem[first * LINE : (first + count) * LINE] = read_lines(self.board, first + percpu_copy_lines(r, k),
                                                                         count)
            views.append(view.dump_map(r.id))
        self.lines_read += count * len(views)
        return {key: [v[key] for v in views] for key in views[0]}

    def dump_all(self) -> dict[str, dict[bytes, bytes]]:
        """Every map with entries, as MapState.dump() (perf event arrays and ring buffers have none)."""
        return {r.name: self.dump(r.name) for r in self.layout.regions if r.kind not in EVENT_KINDS}

    def count(self, name: str | int) -> int:
        r = self.region(name)
        if r.kind in ("array", "percpu_array", "devmap"):
            return r.max_entries
        self._fetched.clear()
        self._read(self._span(r.offset, LINE))
        return self.state.count(r.id)

    def list(self) -> list[dict]:
        out = []
        for r in self.layout.regions:
            out.append({"id": r.id, "name": r.name, "type": r.kind, "key": r.key_size, "value": r.value_size,
                        "max_entries": r.max_entries, "entries": self.count(r.id), "offset": r.offset,
                        "bytes": r.size})
        return out


def map_config_entries(layout: MapLayout) -> list[int]:
    """The 256-bit map configuration entry of every map id 0..MAPS_MAX-1 (zero: no map), from the layout."""
    from hxdp.rtl.sim import map_config_lines

    if len(layout.regions) > params.MAPS_MAX:
        raise MapError(f"the program has {len(layout.regions)} maps, the hardware table holds {params.MAPS_MAX}")
    entries = [0] * params.MAPS_MAX
    for line in map_config_lines(layout):
        idx, text = line.split()
        entries[int(idx)] = int(text, 16)
    return entries


def write_map_config(board: Board, layout: MapLayout) -> int:
    """Write the map configuration table (every id: unused ones are cleared); returns the AXI writes."""
    ops: list[tuple[int, int]] = []
    for mid, entry in enumerate(map_config_entries(layout)):
        ops += [(params.AXI_MCFG_BASE + 4 * w, (entry >> (32 * w)) & MASK32) for w in range(8)]
        ops.append((params.AXI_MCFG_COMMIT, mid))
    with board.lease():
        board.write_many(ops)
    return len(ops)


def read_map_config(board: Board) -> list[int]:
    ops: list[tuple[int, int | None]] = []
    for mid in range(params.MAPS_MAX):
        ops.append((params.AXI_MCFG_ADDR, mid))
        ops += [(params.AXI_MCFG_BASE + 4 * w, None) for w in range(8)]
    with board.lease():  # MCFG_ADDR is shared
        vals = [v for v in board.transact(ops) if v is not None]
    return [sum(vals[8 * m + w] << (32 * w) for w in range(8)) for m in range(params.MAPS_MAX)]


def write_state(board: Board, state: MapState, cores: int = 1) -> int:
    """Write the used map memory (every line, zeros included; layout.used_spans()) and, on several cores, every
    other core's copy of each per-CPU array and ring buffer (params.PERCPU_COPY_KINDS), set alike (as the kernel sets
    every CPU's); returns the lines written."""
    lines = {i: bytes(state.mem[i * LINE : (i + 1) * LINE]).ljust(LINE, b"\0")
             for lo, hi in state.layout.used_spans() for i in range(lo // LINE, (hi + LINE - 1) // LINE)}
    for r in state.layout.regions if cores > 1 else []:
        if r.kind in params.PERCPU_COPY_KINDS:
            first, count = _region_lines(r)
            lines.update({i + percpu_copy_lines(r, k): lines[i] for k in range(1, cores)
                          for i in range(first, first + count)})
    write_lines(board, lines)
    return len(lines)


def bpftool_bytes(b: bytes) -> list[str]:
    return [f"0x{x:02x}" for x in b]


def dump_json(entries: dict[bytes, bytes]) -> str:
    """bpftool map dump -j style: [{"key": ["0x0a", ...], "value": [...]}, ...]."""
    return json.dumps([{"key": bpftool_bytes(k), "value": bpftool_bytes(v)} for k, v in entries.items()], indent=1)


def parse_bytes(text: str, what: str = "key") -> bytes:
    """Hex bytes: "0a000001", "0a 00 00 01", "0x0a 0x00 ..." or bpftool style "hex 0a 00 00 01"."""
    parts = text.replace(",", " ").split()
    if parts and parts[0] == "hex":
        parts = parts[1:]
    try:
        if len(parts) > 1:
            return bytes(int(p, 16) for p in parts)
        return bytes.fromhex(parts[0].removeprefix("0x")) if parts else b""
    except ValueError:
        raise MapError(f"{what} {text!r} is not hex bytes") from None


# --- the maps and program on the board -------------------------------------------------------------------------------
def map_label(r: MapRegion) -> str:
    """How messages name a map: its name, or its id when the layout came from the board's table (no names)."""
    return r.name or f"id {r.id}"


def configured_ids(entries: list[int]) -> list[int]:
    """Map ids whose configuration entry is valid (bits 15:8)."""
    return [mid for mid, e in enumerate(entries) if (e >> 8) & 0xFF]


def layout_from_config(entries: list[int]) -> MapLayout:
    """The maps on the board from its map configuration table (every field but the names, which it does not hold)."""
    regions = []
    for mid in configured_ids(entries):
        e = entries[mid]
        f = {name: (e >> lo) & ((1 << bits) - 1) for name, lo, bits in params.MCFG_FIELDS}
        kind = params.MAP_TYPES.get(f["type"])
        if kind is None:
            raise MapError(f"map id {mid}: type {f['type']} in the board's map table is not a hardware map type")
        size = f["data_offset"] + f["slots"] * f["slot_size"]
        flags = params.BPF_F_RDONLY_PROG if f["rdonly"] else 0
        regions.append(MapRegion(mid, "", f["type"], kind, f["key_size"], f["value_size"], f["max_entries"], flags, "",
                                 f["offset"], size, f["slots"], f["slot_size"], f["key_offset"], f["value_offset"],
                                 f["data_offset"]))
    if [r.id for r in regions] != list(range(len(regions))):
        raise MapError(f"the board's map table has ids {[r.id for r in regions]}: a loaded program numbers its maps "
                       "0..n-1 (was the table written by hxdp prog load?)")
    return MapLayout(regions)


def has_extensions(board: Board) -> bool:
    """This project's bitstream (ID register answers "hXDP"), not the original one (another answer: refused)."""
    return not orig.is_original(board)


# --- load = compile + configure maps + inject ---------------------------------------------------------------------
@dataclass
class LoadReport:
    rom: Rom
    layout: MapLayout
    map_lines: int
    inject: InjectReport


def configure_and_inject(board: Board, rom: Rom, layout: MapLayout, config: dict | None = None,
                         atomic: bool = True, verify: bool = True, extensions: bool = True,
                         fib_image: bytes | None = None, force: bool = False) -> LoadReport:
    """Write the initial map memory (layout + config, a FIB image) and the ROM while the input is held: one atomic
    switch."""
    check_rom(rom)
    map_config_entries(layout)  # refuse a layout the hardware table cannot hold before touching the board
    state = MapState(layout)
    if config:
        state.apply_config(config)
    if fib_image is not None:
        state.mem[params.FIB_OFFSET : params.FIB_OFFSET + len(fib_image)] = fib_image
    original = orig.check_claim(board, not extensions)
    if original and atomic and extensions:
        raise orig.no_hold(board)
    cores = board_cores(board)
    cores_check(layout, cores)
    with held(board, atomic and not original, force=force, recover=True):
        if not original:
            write_map_config(board, layout)
        lines = write_state(board, state, cores)
        rep = inject(board, rom, verify=verify, atomic=False, extensions=not original)
    return LoadReport(rom, layout, lines, rep)


def load_object(board: Board, obj: str | Path, section: str | None = None, prog: str | None = None,
                config: dict | None = None, atomic: bool = True, out_rom: str | Path | None = None,
                extensions: bool = True, sizes: dict[str, int] | None = None) -> LoadReport:
    """hxdp load: compile the XDP object, configure its maps and inject it, like attaching XDP to an interface."""
    rom, layout = compile_object(obj, section, prog, sizes)
    rep = configure_and_inject(board, rom, layout, config, atomic, extensions=extensions)
    if out_rom:
        save_rom_and_layout(rom, layout, out_rom)
    return rep


def compile_object(obj: str | Path, section: str | None = None, prog: str | None = None,
                   sizes: dict[str, int] | None = None) -> tuple[Rom, MapLayout]:
    """The ROM and map layout of an XDP object, checked against the board's capacity (before a board is opened)."""
    from hxdp.frontend.elf import load_program

    return compile_loaded(load_program(str(obj), section, prog, sizes))


def compile_loaded(program: Program, target: str = "hxdp") -> tuple[Rom, MapLayout]:
    """compile_object for a program already loaded (hxdp load reads the object once: verifier, then compiler), for
    our core or the original one (`target`, hxdp.compiler.TARGETS)."""
    from hxdp.compiler import CompileOptions, compile_program

    result = compile_program(program, CompileOptions(target=target))
    check_rom(result.rom)
    map_config_entries(result.layout)
    return result.rom, result.layout


def save_rom_and_layout(rom: Rom, layout: MapLayout, out_rom: str | Path) -> None:
    """The ROM and PROG.maps.json beside it, both or neither (none beside a device such as /dev/null)."""
    from hxdp.atomic_write import layout_path_beside, write_outputs

    beside = layout_path_beside(out_rom)
    write_outputs([(out_rom, rom.to_text())] + ([(beside, layout.to_json())] if beside else []))


# --- what runs on the board: program identity, `prog show`, `prog dump xlated` ---------------------------------------
def prog_info(board: Board) -> dict:
    """bpftool prog show -j fields for the one program slot (id 0) and the board's counters."""
    if not has_extensions(board):
        raise BoardError(f"{board.name}: prog show reads this project's row count and counters registers; the "
                         "original bitstream has neither (use hxdp prog dump xlated N, hxdp monitor --original)")
    rom = dump_imem(board)
    tag = program_tag(rom)
    note = recall_load(board, tag)
    counters = read_counters(board)
    info: dict = {"id": 0, "type": "xdp"}
    if note:
        info["name"] = note["name"]
    info["tag"] = tag
    if note:
        info.update(loaded_at=note["loaded_at"], source=note["source"])
    xlated_bytes = sum(len(i["bytes"]) for i in xlated(rom))
    info.update(run_cnt=counters["rx"], rows=len(rom.rows), bytes_xlated=xlated_bytes,
                map_ids=configured_ids(read_map_config(board)), cores=board_cores(board), counters=counters)
    return info


def _is_lddw(ins: Insn) -> bool:
    return ins.opcode == 0x18 and not ins.is_nop


def xlated(rom: Rom, layout: MapLayout | None = None) -> list[dict]:
    """The instructions of the rows, one per lane that holds one (an lddw's second lane is part of it): row, lane,
    opcode, the instruction's bytes (16 for lddw) in bpftool's byte lists, and the disassembly."""
    from hxdp.listing import rom_lane_text

    out = []
    for r, row in enumerate(rom.rows):
        for k, ins in enumerate(row):
            if ins.is_nop or (k > 0 and _is_lddw(row[k - 1])):
                continue
            raw = b"".join(i.to_bytes() for i in row[k : k + (2 if _is_lddw(ins) else 1)])
            out.append({"row": r, "lane": k, "code": f"0x{ins.opcode:02x}", "bytes": bpftool_bytes(raw),
                        "disasm": rom_lane_text(row, k, r, layout)})
    return out


__all__ = ["ACTION_COUNTERS", "COUNTERS", "STATE_ENV", "BoardMaps", "InjectError", "Monitor", "PrintkRecord",
           "RomError", "axi", "configure_and_inject", "dump_imem", "format_printk", "format_sample", "inject",
           "load_object", "program_tag", "read_counters", "read_lines", "read_tracelog", "recall_load",
           "recalled_layout", "remember_load", "write_lines", "wrap_delta"]
