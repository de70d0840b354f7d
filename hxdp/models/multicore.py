"""Several VLIW cores on one ROM sharing the map memory: dispatcher, map grant and reorder stage (contract section 8).

Each core is a VliwModel (its own registers, stack, packet buffer and helper state) on the one MapState. The cores run
interleaved row by row in global cycle order: a row that needs the map grant runs only while its core holds it in the
row's mode (VliwModel.grant_mode): shared by any number of cores whose rows only read the map memory, apart by those
that write their own per-CPU copies or whose helper reads a key or buffer there, write by one whose lanes store there
(beside shared holders only), or exclusive by one; among the cores asking in a cycle the first in round robin order
decides, and spin_lock keeps it exclusive until spin_unlock's row ends. A per-CPU array, and a ring buffer's region
(where a core's reserved records are written), has one copy per core at the same addresses: the copy of the core whose
row runs is the one in the map memory (the others are kept aside and swapped in), so the VLIW model's code runs
unchanged. The records to the host (perf_event_output, the ring buffer) leave in the order their rows ran
(MulticoreRun.events), each with its core's CPU. A row first waits for its packet bytes as the RTL's does
(hxdp.models.pktbuf: each core's packet buffer, its input and its write buffer; contract section 6), then asks for the
grant. A row's effects on the maps happen in the cycle it runs, but for a write row's lane stores and atomics, which the
other cores' copies of the map memory take at the end of the row's last cycle (sephirot_mapmem): they are undone when
the row has run and written again before any row starting after that cycle runs, so a shared row starting while the
write row goes on reads the bytes before it, as its loads in the RTL do in their first cycle. Rows without the grant
touch only their core's own state, and rows holding it together read nothing another writes while they run, so their
order against the other cores' rows in the same cycle does not matter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.events import Event, run_events
from hxdp.isa import table as T
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapState
from hxdp.models.pktbuf import PacketBufferTiming
from hxdp.models.vliw import APART, EXCLUSIVE, SHARED, WRITE, GrantMode, TraceRecord, VliwModel, together
from hxdp.result import RunResult

# maps the cores cannot share yet (docs/execution_contract.md section 8), with the reason
UNSHARED_KINDS = {
    "percpu_hash": "per-core copies of a hash would not share its keys as the kernel's per-CPU hash does",
    "lru_percpu_hash": "per-core copies of a hash would not share its keys as the kernel's per-CPU hash does",
}
# the helpers that start once the whole packet is in, and the arguments of the others that do when they point into
# the packet (sephirot_core.v: they read it through their own port; perf_event_output always)
_ADJUST = frozenset({"xdp_adjust_head", "xdp_adjust_tail", "xdp_adjust_meta"})
_PACKET_ARGS = {"map_lookup_elem": (2,), "map_delete_elem": (2,), "map_update_elem": (2, 3), "csum_diff": (1, 3),
                "trace_printk": (1,), "ringbuf_output": (2,)}
# actions whose frame leaves through the output (any port or host queue); the others are dropped in order
LEAVING = frozenset({params.XDP_PASS, params.XDP_TX, params.XDP_REDIRECT})


def words(n: int, per_cycle: int) -> int:
    """Cycles a bus of `per_cycle` bytes takes for n bytes."""
    return -(-n // per_cycle)


def cores_refusal(state: MapState, cores: int) -> str | None:
    """Why `cores` cores cannot run a program with these maps (None: they can)."""
    if not 1 <= cores <= params.CORES_MAX:
        return f"--cores {cores}: choose 1 to {params.CORES_MAX} (params.CORES_MAX)"
    if cores == 1:
        return None
    r = next((r for r in state.layout.regions if r.kind in UNSHARED_KINDS), None)
    if r is None:
        return None
    return (f"not supported: map {r.name} ({r.kind}) with --cores {cores}, because {UNSHARED_KINDS[r.kind]} "
            "(docs/execution_contract.md section 8)")


@dataclass
class Frame:
    """One packet of a multi-core run. Cycles are the shared clock's; a frame the MAC dropped has no core, start or
    end (it is dropped at its arrival)."""

    index: int
    core: int | None
    arrival: int  # the cycle it is ready at the input queue
    start: int | None  # dispatch: its first input word and its program's first row on its core
    end: int | None  # the last cycle of its packet on its core
    departure: int  # the cycle it leaves the reorder stage (or is dropped there, in order)
    action: int
    bytes: int  # length of the frame out
    waits: int  # cycles its rows waited for the map grant
    result: RunResult
    byte_waits: int = 0  # cycles its rows waited for packet bytes and the packet buffer (contract section 6)


@dataclass
class MulticoreRun:
    frames: list[Frame]
    cycles_per_packet: float  # steady-state interval between core completions (contract section 8, "Throughput")
    reorder_peak: int  # most frames finished on their core and not yet departed, in any cycle

    @property
    def results(self) -> list[RunResult]:
        return [f.result for f in self.frames]

    @property
    def events(self) -> list[Event]:
        """Every record to the host in the order the event unit handed them over (the cycle its row ended: event
        rows hold the grant exclusive, so no two end in one cycle), numbered by packet."""
        return run_events(self.results)


class _Reorder:
    """The reorder stage as the frames finish (contract section 8, "Output: the reorder stage"): each frame departs
    once it is whole in its packet buffer and every frame before it has, in arrival order, and its packet buffer
    takes a new frame again from `release`. `in_words`: each frame's cycles on the input bus."""

    def __init__(self, in_words: list[int]) -> None:
        n = len(in_words)
        self.in_words = in_words
        self.next = 0  # the first frame not departed yet (in arrival order)
        self.free = 0  # the first cycle the output is free
        self.prev = 0  # the departure of the previous frame (frames leave in order)
        self.release: list[int | None] = [None] * n  # None: not departed yet

    def advance(self, out: list[Frame | None]) -> None:
        """Depart the finished frames whose turn has come."""
        while self.next < len(out) and (f := out[self.next]) is not None:
            if f.core is not None:  # (a frame the MAC dropped departs at its arrival and holds nothing back)
                assert f.end is not None and f.start is not None
                f.departure = max(f.end + 1, f.start + self.in_words[self.next] - 1, self.free, self.prev)
                self.prev = f.departure
                o = words(f.bytes, params.OUTPUT_BYTES_PER_CYCLE) if f.action in LEAVING else 0
                self.free = f.departure + o
                # its buffer is the packet's until its last cycle at the output (a dropped frame's: its departure),
                # free the cycle after; a packet put there starts a cycle later (the buffer's write)
                self.release[self.next] = f.departure + max(o, 1) + 1
            self.next += 1


@dataclass
class _Running:
    """A packet on a core."""

    index: int
    start: int
    regs: list[int]
    t: int  # the cycle its next row starts (or asks for the grant; while it waits, the cycle it first asked)
    ri: int = 0
    cycles: int = 0  # its cycles on the core without the grant waits (the cycle limit counts these)
    waits: int = 0
    byte_waits: int = 0  # cycles its rows waited for packet bytes (not in `cycles` either)
    waiting: bool = False  # its row waits for the grant (it asks again in every cycle until granted)
    mode: GrantMode | None = None  # the mode its row asks for the grant in
    trace: list[TraceRecord] = field(default_factory=list)


class MulticoreModel:
    """N VliwModels on one ROM and one MapState (docs/execution_contract.md section 8)."""

    def __init__(self, rom: Rom, state: MapState, cores: int, cycle_limit: int = params.CYCLE_LIMIT,
                 trace: bool = False) -> None:
        refusal = cores_refusal(state, cores)
        if refusal is not None:
            raise HxdpError(refusal)
        self.state = state
        self.cores = [VliwModel(rom, state, cycle_limit, trace, cpu=k) for k in range(cores)]
        # (memory, first byte, end) of every region with a copy per core: swapped per core
        self._percpu = [(state.region_mem(r), r.offset, r.offset + r.size) for r in state.layout.regions
                        if r.kind in params.PERCPU_COPY_KINDS] if cores > 1 else []
        self._copies: list[list[bytes]] | None = None  # each core's copies, taken at the first run
        # each row's memory lanes (kind, base register, offset, size) in lane order, and its helper (the byte waits)
        core = self.cores[0]
        self._row_mem = [([(d.kind, d.src if d.kind in T.LOAD_KINDS else d.dst, d.off, d.size) for _lane, d in r.lanes
                           if d.kind in T.MEM_KINDS], core.row_helper(ri)) for ri, r in enumerate(core.rows)]
        self._owner = 0  # the core whose per-CPU copies are in the map memory

    # --- per-CPU copies -----------------------------------------------------------------------------------------------
    def _own(self, core: int) -> None:
        """Put `core`'s per-CPU copies in the map memory."""
        if not self._percpu:
            return
        if self._copies is None:  # every core starts from the bytes the host set (on every CPU, as the kernel)
            self._copies = [[bytes(m[lo:hi]) for m, lo, hi in self._percpu] for _ in self.cores]
        if core == self._owner:
            return
        self._copies[self._owner] = [bytes(m[lo:hi]) for m, lo, hi in self._percpu]
        for (m, lo, hi), data in zip(self._percpu, self._copies[core], strict=True):
            m[lo:hi] = data
        self._owner = core

    def dump(self, cpu: int = 0) -> dict:
        """Every map's contents, per-CPU arrays as core `cpu`'s copy (MapState.dump)."""
        self._own(cpu)
        return self.state.dump()

    def dump_per_cpu(self) -> dict:
        """Every map's contents, a per-CPU array's values as a list with one value per core (bpftool's `value (CPU
        k)` lines)."""
        out = dict(self.dump(0))
        names = {r.name for r in self.state.layout.regions if r.kind == "percpu_array"}
        copies = [self.dump(k) for k in range(len(self.cores))]
        for name in names:
            out[name] = {key: [c[name][key] for c in copies] for key in copies[0][name]}
        self._own(0)
        return out

    # --- a run --------------------------------------------------------------------------------------------------------
    def run(self, packets: list[bytes], arrivals: list[int] | None = None, ingress_ifindex: int = 1) -> MulticoreRun:
        """Run frames through the dispatcher, the cores and the reorder stage; `arrivals`: the cycle each frame is
        ready at the input (non-decreasing; default: all at 0, back to back)."""
        n = len(packets)
        arrivals = list(arrivals) if arrivals is not None else [0] * n
        if len(arrivals) != n or any(b < a for a, b in zip(arrivals, arrivals[1:], strict=False)):
            raise HxdpError("arrivals: one cycle per frame, in non-decreasing order")
        self._own(0)
        ncores = len(self.cores)
        busy: list[_Running | None] = [None] * ncores
        idle_from = [0] * ncores
        out: list[Frame | None] = [None] * n
        self._ingress = ingress_ifindex
        self._until = dict.fromkeys((SHARED, APART, WRITE, EXCLUSIVE), 0)  # the cycle after the last row in each mode
        self._pending: list[tuple[int, int, bytes]] = []  # a write row's bytes: (the first cycle seen, offset, bytes)
        self._now = -1  # the last cycle run
        self._last = ncores - 1  # the last core granted (round robin starts after it)
        self._locker: int | None = None  # the core holding the grant from spin_lock to spin_unlock
        bus_free = 0
        self._buffers = [PacketBufferTiming(k, ncores == 1) for k in range(ncores)]
        self._fed: list[int] = []  # one core: the frames given to its packet buffer, in order
        self._feed = 0  # one core: the next frame to give it
        self._emitted: dict[int, int] = {}  # one core: the cycle after each frame's last output cycle
        self._emit = (0, 0)  # one core: the next frame to leave the output, the first cycle the output is free
        self._reorder = _Reorder([words(len(p), params.INPUT_BYTES_PER_CYCLE) for p in packets])
        held: list[list[int]] = [[] for _ in range(ncores)]  # the frames each core took, in order
        i = 0
        while True:
            while i < n and not params.PKT_MIN_LEN <= len(packets[i]) <= params.PKT_MAX_LEN:
                res = RunResult(params.XDP_DROP, bytes(packets[i]), None, None, 0)
                out[i] = Frame(i, None, arrivals[i], None, None, arrivals[i], res.action, len(res.packet), 0, res)
                i += 1
            self._reorder.advance(out)
            if ncores == 1:
                self._one_core_output(out)
                self._one_core_input(packets, arrivals)
            t = self._next_cycle(busy)
            # a core takes a frame once it is idle and one of its packet buffers is free
            ready = {k: max(idle_from[k], room) for k in range(ncores)
                     if busy[k] is None and (room := self._room(held[k])) is not None}
            if i < n and ready:
                if ncores > 1:
                    d = max(arrivals[i], bus_free, min(ready.values()))
                else:  # its buffer took the frame as it came (_one_core_input), the input stopping included
                    d = max(self._buffers[0].first_word(i) + 1, ready[0])
                if t is None or d <= t:
                    k = min(k for k in ready if ready[k] <= d)
                    busy[k] = _Running(i, d, self.cores[k].begin(packets[i], ingress_ifindex), d)
                    held[k].append(i)
                    if ncores > 1:  # (one core: its buffer takes the input as it comes, _one_core_input)
                        self._buffers[k].add_packet(i, len(packets[i]), d - 1)
                    bus_free = d + words(len(packets[i]), params.INPUT_BYTES_PER_CYCLE)
                    i += 1
                    continue
            if t is None:
                break
            self._cycle(t, busy, idle_from, out)
        self._commit(None)
        frames = [f for f in out if f is not None]
        assert len(frames) == n
        for f in frames:
            f.arrival = arrivals[f.index]
        peak = self._depart(frames)
        self._own(0)
        for core in self.cores:
            core.now = None  # a packet run on one core alone counts its own cycles again
        return MulticoreRun(frames, self._interval(frames), peak)

    def _next_cycle(self, busy: list[_Running | None]) -> int | None:
        """The next cycle in which something happens: a row of a running core starts, or, while cores wait for the
        grant, the last row holding it in some mode ends. A waiting core's decision is the same
        in every cycle between two of these (the askers, their modes, the last granted core and the holders are),
        so it asks again only then; a frame dispatched earlier is another such cycle (`run` takes it first)."""
        starts = [p.t for p in busy if p is not None and not p.waiting]
        if any(p is not None and p.waiting for p in busy):
            starts += [c for c in self._until.values() if c > self._now]
            assert starts, "cores wait for a map grant that nobody holds"
        return min(starts, default=None)

    def _cycle(self, t: int, busy: list[_Running | None], idle_from: list[int], out: list[Frame | None]) -> None:
        """Run the rows starting in cycle t: the lock holder's and those without the grant, then the rows granted in
        t (contract section 8, "The grant"); the other askers wait."""
        self._now = t
        self._commit(t)
        asking: dict[int, GrantMode] = {}  # core: the mode its row asks in
        for k, p in enumerate(busy):
            if p is None or not (p.waiting or p.t == t):
                continue
            if not p.waiting and self._byte_wait(k, p, t):
                continue
            if self._locker == k:  # its rows run without asking, exclusive
                self._advance(k, t, EXCLUSIVE, busy, idle_from, out)
                continue
            mode = p.mode if p.waiting else self.cores[k].grant_mode(p.ri, p.regs)
            if mode is None:
                self._advance(k, t, None, busy, idle_from, out)
            else:
                asking[k] = p.mode = mode
        granted = self._granted(t, asking)
        for k, mode in asking.items():
            p = busy[k]
            assert p is not None
            if k in granted:
                p.waits += t - p.t
                p.waiting = False
                self._advance(k, t, mode, busy, idle_from, out)
            else:
                p.waiting = True  # p.t stays the cycle it first asked

    def _granted(self, t: int, asking: dict[int, GrantMode]) -> list[int]:
        """The asking cores (core: mode) granted in cycle t (contract section 8, "The grant"): none while a spin lock
        is held; otherwise the askers in round robin order after the last core granted, the first deciding: it is
        granted when its mode goes with every mode held through t, and its mode stands for the others either way,
        each granted when its mode goes with the held ones, the first's and those granted before it."""
        if not asking or self._locker is not None:
            return []
        held = [m for m, until in self._until.items() if until > t]
        n = len(self.cores)
        order = sorted(asking, key=lambda k: (k - self._last - 1) % n)
        first = order[0]
        stand = [*held, asking[first]]
        granted = []
        if all(together(asking[first], m) for m in held):
            granted.append(first)
            self._last = first
        for k in order[1:]:
            if all(together(asking[k], m) for m in stand):
                granted.append(k)
                stand.append(asking[k])
        return granted

    def _commit(self, t: int | None) -> None:
        """Write the write rows' bytes that the map memory holds from cycle t (None: all of them)."""
        if not self._pending:
            return
        mem = self.state.mem
        due = [w for w in self._pending if t is None or w[0] <= t]
        self._pending = [w for w in self._pending if t is not None and w[0] > t]
        for _cycle, off, data in due:
            mem[off : off + len(data)] = data

    def _defer(self, core: VliwModel, seen: int) -> None:
        """Undo the map-memory bytes the write row just run by `core` stored outside its per-CPU copies, to be
        written again from cycle `seen` (the cycle after its last: the cycle after its commit)."""
        mem, region = self.state.mem, params.MAP_BASE >> params.REGION_SHIFT
        for addr, old in core.stored:
            if addr >> params.REGION_SHIFT != region or core.in_own_copy(addr):
                continue
            off = addr - params.MAP_BASE
            self._pending.append((seen, off, bytes(mem[off : off + len(old)])))
            mem[off : off + len(old)] = old

    def _advance(self, k: int, t: int, mode: GrantMode | None, busy: list[_Running | None], idle_from: list[int],
                 out: list[Frame | None]) -> None:
        """Core k runs its packet's next row from cycle t, holding the grant in `mode` (None: without it)."""
        p = busy[k]
        assert p is not None
        core = self.cores[k]
        self._own(k)
        core.now = t
        helper = core.row_helper(p.ri)
        before = p.cycles
        records = len(core.env.events.records)
        stores, pointers = self._packet_stores(k, p), self._pointers(k)
        nxt, result, fault, p.cycles = core._step(p.ri, p.regs, p.cycles, p.trace)
        cost = p.cycles - before
        if fault is None:
            self._packet_writes(k, p.index, t + cost - 1 - core.bubble, stores, helper, pointers)
        for e in core.env.events.records[records:]:
            e.cycle = t + cost - 1  # the row's last cycle, when the event unit hands the record over
        if mode is not None:
            self._until[mode] = max(self._until[mode], t + cost)
        if mode == WRITE and fault is None:
            self._defer(core, t + cost)
        elif mode == EXCLUSIVE:
            if fault is None and helper == "spin_lock":
                self._locker = k
            elif helper == "spin_unlock" and self._locker == k:
                self._locker = None
        p.t = t + cost
        if nxt is not None:
            p.ri = nxt
            return
        if self._locker == k:  # a packet that ends holding a lock releases the grant (only a fault can)
            self._locker = None
        res = core.finish(p.regs, result, fault, p.cycles, p.trace, self._ingress)
        end = t + cost - 1
        out[p.index] = Frame(p.index, k, 0, p.start, end, 0, res.action, len(res.packet), p.waits, res, p.byte_waits)
        if len(self.cores) > 1:  # (one core: its output asks when the frame is whole, _one_core_output)
            self._buffers[k].forget(p.index)
        busy[k] = None
        idle_from[k] = end + 1

    # --- the packet buffer's waits (contract section 6) -------------------------------------------------------------
    def _one_core_input(self, packets: list[bytes], arrivals: list[int]) -> None:
        """One core: its packet buffer takes each frame as it comes while the core runs the packets before it, into
        its PKT_BUFS_ONE buffers in turn, the frame PKT_BUFS_ONE before it out first (several cores: a frame comes
        when it is dispatched, `run`). Gives the buffer the frames whose buffer's turn is known."""
        fed, bufs = self._fed, params.PKT_BUFS_ONE
        while (i := self._feed) < len(packets):
            if params.PKT_MIN_LEN <= len(packets[i]) <= params.PKT_MAX_LEN:  # (the MAC drops the others)
                room = self._emitted.get(fed[-bufs]) if len(fed) >= bufs else -1
                if room is None:
                    return
                free = self._buffers[0].input_free()
                self._buffers[0].add_packet(i, len(packets[i]), max(arrivals[i] - 1, free, room))
                fed.append(i)
            self._feed = i + 1

    def _one_core_output(self, out: list[Frame | None]) -> None:
        """One core: the output emits every frame in order as it becomes whole, dropped ones too (sephirot_pktbuf.v
        without SKIP_DROPS), a 32-byte word a cycle; a frame's buffer takes the input again after its last word."""
        nxt, free = self._emit
        while nxt < len(out) and (f := out[nxt]) is not None:
            if f.core is not None:
                assert f.end is not None
                start = max(f.end + 1, self._buffers[0].whole(f.index), free)
                free = start + words(f.bytes + len(f.result.meta or b""), params.OUTPUT_BYTES_PER_CYCLE)
                self._emitted[f.index] = free
                self._buffers[0].forget(f.index)
            nxt += 1
        self._emit = (nxt, free)

    def _byte_wait(self, k: int, p: _Running, t: int) -> bool:
        """Whether core k's row, due in cycle t, waits for packet bytes or the packet buffer (before it asks for the
        grant): if so it starts in the first cycle it need not, and waits for nothing else until then (nothing the
        core does changes its buffer meanwhile, and no other core's row touches it)."""
        reads = self._row_reads(k, p)
        ready = t
        while reads is not None and not self._buffers[k].ready(p.index, ready, *reads):
            ready += 1
        if ready == t:
            return False
        p.byte_waits += ready - t
        p.t = ready
        return True

    def _row_ready(self, k: int, p: _Running, t: int) -> bool:
        """Whether core k's row runs in cycle t as far as its packet buffer goes (contract section 6: its packet bytes
        in, the whole packet for a helper reading it or an adjust helper, no deferred store, zeroing or move)."""
        reads = self._row_reads(k, p)
        return reads is None or self._buffers[k].ready(p.index, t, *reads)

    def _row_reads(self, k: int, p: _Running) -> tuple[list[tuple[int, int]], bool] | None:
        """What core k's row needs of its packet buffer (`_packet_reads`); None for a row that faults at once."""
        core = self.cores[k]
        if p.cycles >= core.cycle_limit or not 0 <= p.ri < len(core.rows) or core.rows[p.ri].error:
            return None
        return self._packet_reads(k, p)

    def _lane_accesses(self, k: int, p: _Running) -> list[tuple[str, int, int]]:
        """The row's lane accesses of the packet: (kind, buffer offset, size), in lane order; none when one is out
        of the packet's bounds (the row faults without waiting)."""
        mem = self.cores[k].mem
        out = []
        for kind, base, off, size in self._row_mem[p.ri][0]:
            addr = (p.regs[base] + off) & (1 << 64) - 1
            if addr >> params.REGION_SHIFT != params.PKT_BASE >> params.REGION_SHIFT:
                continue
            if not (mem.data_meta <= addr and addr + size <= mem.data_end):
                return []
            out.append((kind, addr - params.PKT_BASE, size))
        return out

    def _packet_reads(self, k: int, p: _Running) -> tuple[list[tuple[int, int]], bool]:
        """The packet bytes ([lo, hi) buffer offsets) core k's row touches with its lanes, and whether it needs the
        whole packet in: a helper reading packet bytes through its own port, an adjust helper (sephirot_core.v)."""
        accesses = [(off, off + size) for _kind, off, size in self._lane_accesses(k, p)]
        helper = self._row_mem[p.ri][1]
        if helper is None:
            return accesses, False
        pkt = [(p.regs[r] >> params.REGION_SHIFT) == params.PKT_BASE >> params.REGION_SHIFT for r in range(6)]
        whole = helper in _ADJUST or helper == "perf_event_output" or any(pkt[r] for r in _PACKET_ARGS.get(helper, ()))
        return accesses, whole

    def _packet_stores(self, k: int, p: _Running) -> list[tuple[int, int]]:
        """The row's packet stores (buffer offset, size) in lane order (store ports 0, 1)."""
        if not 0 <= p.ri < len(self._row_mem) or not any(m[0] in T.STORE_KINDS for m in self._row_mem[p.ri][0]):
            return []
        return [(off, size) for kind, off, size in self._lane_accesses(k, p) if kind in T.STORE_KINDS]

    def _pointers(self, k: int) -> tuple[int, int, int]:
        """data_meta, data, data_end of core k's packet as buffer offsets."""
        mem = self.cores[k].mem
        return mem.data_meta - params.PKT_BASE, mem.data - params.PKT_BASE, mem.data_end - params.PKT_BASE

    def _packet_writes(self, k: int, index: int, c: int, stores: list[tuple[int, int]], helper: str | None,
                       before: tuple[int, int, int]) -> None:
        """The packet buffer's writes of core k's row that committed in cycle c: its stores, and after an adjust
        helper the zeroing of the exposed bytes and the metadata's move."""
        buf = self._buffers[k]
        if stores:
            buf.commit(c, index, stores)
        if helper not in _ADJUST:
            return
        (meta0, data0, end0), (meta1, data1, end1) = before, self._pointers(k)
        zero = copy = None
        if helper == "xdp_adjust_tail":
            zero = (end0, end1) if end1 > end0 else None
        elif meta1 < buf.low_meta[index]:
            zero, buf.low_meta[index] = (meta1, buf.low_meta[index]), meta1
        if helper == "xdp_adjust_head" and data1 != data0 and data0 != meta0:
            copy = (meta0, meta1, data0 - meta0, meta1 < meta0)
        buf.adjust(c, index, zero, copy)

    def _room(self, taken: list[int]) -> int | None:
        """The first cycle a core that took the frames `taken` (in order, all finished) has a free packet buffer of
        its PKT_BUFS_SEVERAL (contract section 8): when the oldest of the last PKT_BUFS_SEVERAL is released; None while
        that one has not departed (an earlier frame still runs, so not before the next row). One core: no bound."""
        bufs = params.PKT_BUFS_SEVERAL
        if len(self.cores) == 1 or len(taken) < bufs:
            return 0
        return self._reorder.release[taken[-bufs]]

    def _depart(self, frames: list[Frame]) -> int:
        """The departures of the run (`_Reorder`, as the frames finished); returns the reorder buffer's peak
        occupancy."""
        changes: list[tuple[int, int]] = []
        for f in frames:
            if f.core is None:
                continue
            assert f.end is not None
            assert self._reorder.release[f.index] is not None
            if f.departure > f.end + 1:
                changes += [(f.end + 1, 1), (f.departure, -1)]
        peak = level = 0
        for _cycle, delta in sorted(changes):
            level += delta
            peak = max(peak, level)
        return peak

    @staticmethod
    def _interval(frames: list[Frame]) -> float:
        ends = sorted(f.end for f in frames if f.end is not None)
        n = len(ends)
        if n == 0:
            return 0.0
        if n >= 4:
            half = n // 2
            return (ends[-1] - ends[half - 1]) / (n - half)
        return (ends[-1] + 1) / n
