"""VLIW model: executes a Rom row by row exactly as docs/execution_contract.md says, and checks the contract.

Per row: every lane reads the state before the row; lane stores commit in lane order at the end, then the
helper call (which must not read bytes stored by its own row), then register writes (the helper's r0 last).
The lowest lane whose branch is taken or whose exit is reached decides the next row, unless the row's tail call
jumps: then the next row is the target program's entry, with the registers and the stack as at packet start (r2 =
ctx->data as the packet is now). `exit` ends the packet
with the low 32 bits of r0 *after* the row, `exit K` (0x96) with K. Access faults, illegal instructions,
helper faults and the cycle limit end the packet with XDP_ABORTED and `fault` set; the faulting row's
effects are discarded. Running off the end of the ROM (or jumping outside it) is an illegal instruction.

Cycles (contract section 6): a row costs CYCLES_PER_ROW, plus TAKEN_BRANCH_PENALTY when a jump to a row other
than the next wins (or a tail call jumps), unless it is an unconditional jump first among the row's branch and exit
lanes (folded into the fetch), plus CONDITIONAL_EXIT_PENALTY when the exit that ends the packet has a
branch lane (jmp/ja) before it in its row, plus DIV_EXTRA_CYCLES per lane that divides (div/mod, 32 or 64 bit,
any operands; the core has one divider), plus helpers.helper_latency(...) for a helper call (which starts after
the divisions), plus the waits for off-chip memory (docs/maps.md "Memory tiers"): params.tier_read_cycles for each
lane load or atomic whose address is in QDR or DDR (one after another: the lanes have one off-chip port), and
helpers.off_chip_probe_cycles for the region header and the slots a map helper visits in an off-chip map (the map
unit's own port). A helper's own reads reach the on-chip tier only (DataMemory.helper_port).
Packet arrival (early processor start) is not modelled: cycles are the core's execution cycles once the bytes it
reads are present.

Several cores (contract section 8): `cpu` is the core's number (get_smp_processor_id); `begin`, `_step` (one row)
and `finish` are `run` split so that hxdp.models.multicore interleaves cores row by row, `grant_mode` says in which
mode (shared, apart, write or exclusive) a row asks for the map grant, if it needs it, `stored` holds the last row's
lane stores, and `now` (when set) is the shared clock's cycle that ktime_get_ns reads.

Rule checks (raise ContractViolation naming row and lane, not a packet fault): two lanes writing the same
register (a helper call writes r0), a write to r10, more than one helper call, overlapping stores, an atomic
sharing its row with another memory access or atomic, a helper reading bytes its own row stores, a local
(bpf-to-bpf) call.

Trace (trace=True): RunResult.trace holds one TraceRecord per executed row:
    row    index of the row
    regs   [(lane, reg, value)] register writes committed by the row (a helper's r0 carries the helper's lane)
    mem    [(lane, addr, bytes)] lane stores and atomic writes in commit order (helper map/packet effects
           are not listed)
    next   the next row, or None when the packet ends after this row
    cycles cycles the row cost
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.isa import table as T
from hxdp.isa.rom import Rom
from hxdp.models.execute import Decoded, IllegalInstruction, decode, evaluate, plain_lddw
from hxdp.models.helpers import HelperEnv, HelperFault
from hxdp.models.maps import MapState
from hxdp.models.memory import AccessFault, DataMemory
from hxdp.result import RunResult

M64 = (1 << 64) - 1
TAIL_CALL = params.HELPER_IDS["tail_call"]
# the modes of the map grant (execution contract section 8): readers of the map memory together, beside them rows
# kept apart from a writer (own per-CPU writes, helpers reading map bytes over several cycles) and one writer of the
# map memory, or one row alone
GrantMode = Literal["shared", "apart", "write", "exclusive"]
SHARED: GrantMode = "shared"
APART: GrantMode = "apart"
WRITE: GrantMode = "write"
EXCLUSIVE: GrantMode = "exclusive"
# the pairs of modes two cores may hold the grant in at once (symmetric; exclusive goes with nothing)
_TOGETHER = {(SHARED, SHARED), (SHARED, APART), (APART, APART), (SHARED, WRITE)}


def together(a: GrantMode, b: GrantMode) -> bool:
    """Whether rows holding the grant in modes a and b may run in the same cycle (contract section 8, "The grant")."""
    return (a, b) in _TOGETHER or (b, a) in _TOGETHER


def row_mode(modes: set[GrantMode | None]) -> GrantMode | None:
    """A row's mode from its lanes' and helper's: the most demanding; a write beside a part kept apart from writers
    is exclusive (the row would be both)."""
    if EXCLUSIVE in modes or (WRITE in modes and APART in modes):
        return EXCLUSIVE
    return next((m for m in (WRITE, APART, SHARED) if m in modes), None)

# params.PORT_RULES by the region number of an address (addr >> REGION_SHIFT): (name, load ports, store ports)
PORTED_REGIONS = {base >> params.REGION_SHIFT: (name, ld, st) for name, base, ld, st in params.PORT_RULES.values()}
# the off-chip tiers' regions take the map memory's ports: a lane's access there goes out through the map unit
PORTED_REGIONS.update({reg: PORTED_REGIONS[params.MAP_BASE >> params.REGION_SHIFT]
                       for t in params.TIERS[1:]
                       for reg in range(params.TIER_BASE[t] >> params.REGION_SHIFT,
                                        (params.TIER_BASE[t] + params.TIER_BYTES[t] - 1 >> params.REGION_SHIFT) + 1)})


class ContractViolation(HxdpError):
    """A ROM row that breaks docs/execution_contract.md (a compiler bug, not a packet fault)."""


@dataclass
class TraceRecord:
    row: int
    regs: list[tuple[int, int, int]]
    mem: list[tuple[int, int, bytes]]
    next: int | None
    cycles: int


@dataclass
class DecodedRow:
    lanes: list[tuple[int, Decoded]]  # non-empty lanes (lddw high halves dropped)
    error: str | None  # illegal instruction found when decoding (raised as a fault when the row runs)
    branch_lanes: frozenset[int]  # lanes holding a jump (for the conditional-exit penalty)
    divides: int = 0  # lanes that divide (div/mod): the row waits DIV_EXTRA_CYCLES for each (one divider)
    jump_first: bool = False  # its first branch or exit lane is an unconditional jump (folded into the fetch)


def decode_rom(rom: Rom, opcodes: dict[int, T.OpInfo] | None = None) -> list[DecodedRow]:
    """Every row decoded against an opcode table (default: our core's)."""
    out: list[DecodedRow] = []
    for ri, row in enumerate(rom.rows):
        lanes: list[tuple[int, Decoded]] = []
        error = None
        skip = False
        for k, ins in enumerate(row):
            where = f"row {ri} lane {k}: "
            if skip:
                skip = False
                if ins.opcode or ins.dst or ins.src or ins.off:
                    error = error or f"{where}malformed lddw high half"
                continue
            if ins.is_nop:
                continue
            if ins.opcode == 0x18:
                if k + 1 >= len(row):
                    error = error or f"{where}lddw in the last lane"
                    continue
                skip = True
            try:
                lanes.append((k, decode(ins, row[k + 1] if k + 1 < len(row) else None, plain_lddw, where, opcodes)))
            except IllegalInstruction as exc:
                error = error or str(exc)
        muls = [k for k, d in lanes if d.kind == "alu" and d.op == "mul"]
        if len(muls) > params.MUL_UNITS:
            error = error or (f"row {ri} lane {muls[params.MUL_UNITS]}: a multiplication past the row's "
                              f"{params.MUL_UNITS} (the core has {params.MUL_UNITS} multiplier(s))")
        branches = frozenset(k for k, d in lanes if d.kind in ("jmp", "ja"))
        divides = sum(d.kind == "alu" and d.op in ("div", "mod") for _k, d in lanes)
        first = next((d.kind for _k, d in lanes if d.kind in ("jmp", "ja", "exit", "exit_action")), None)
        out.append(DecodedRow(lanes, error, branches, divides, first == "ja"))
    return out


class VliwModel:
    """Run a Rom on packets against a MapState (the golden model of the Sephirot RTL)."""

    folds_jumps = True  # an unconditional jump first among its row's branches and exits costs no bubble (section 6)

    def __init__(self, rom: Rom, state: MapState, cycle_limit: int = params.CYCLE_LIMIT,
                 trace: bool = False, cpu: int = 0) -> None:
        self.rom = rom
        self.state = state
        self.cycle_limit = cycle_limit
        self.trace_enabled = trace
        refusal = state.off_chip_refusal("the VLIW cycle model")
        if refusal is not None:
            raise HxdpError(refusal)
        self.rows = decode_rom(rom)
        self.mem = DataMemory(state.mem, tiers=state.tiers)
        self.env = HelperEnv(self.mem, state, cpu=cpu)  # cpu: the core it runs as (get_smp_processor_id)
        self.total_cycles = 0  # over the model's life (ktime_get_ns)
        self.now: int | None = None  # the global cycle of the next row's start, when cores share a clock
        self.bubble = 0  # the bubble cycles of the last row run (a taken branch's, a conditional exit's)
        self.regs = [0] * params.NUM_REGS
        # the last row's lane stores and atomic writes: (32-bit address, the bytes before) (hxdp.models.multicore
        # defers a write row's to the cycle it commits)
        self.stored: list[tuple[int, bytes]] = []
        # the per-CPU arrays in the map memory: a core's writes inside them reach its own copy (shared grant)
        # regions with a copy per core on several cores (a lane's write there is to its own copy: shared)
        self._percpu_on_chip = [r for r in state.layout.regions if r.kind in params.PERCPU_COPY_KINDS
                                and r.tier == "bram"]

    # --- one row ---------------------------------------------------------------------------------------------------
    def _row(self, ri: int, regs: list[int], cycles: int) -> tuple[tuple | None, int, TraceRecord | None]:
        """Execute row ri; returns (control that won or None, cycles of the row, trace record)."""
        row = self.rows[ri]
        self.stored = []
        if row.error:
            raise IllegalInstruction(row.error)
        mem, env = self.mem, self.env
        writes: list[tuple[int, int, int]] = []
        writer: dict[int, int] = {}
        stores: list[tuple[int, int, bytes]] = []
        helper: tuple[int, int] | None = None
        control: tuple | None = None
        control_lane = -1
        mem_lanes: list[int] = []
        atomic_lanes: list[int] = []
        loads: dict[str, int] = {}
        stores_n: dict[str, int] = {}
        store_lane: dict[str, int] = {}  # memory -> first lane storing there
        off_chip = 0  # cycles the row waits for its lanes' off-chip reads (one at a time through the map unit's port)
        for lane, d in row.lanes:
            k = d.kind
            if k == "local_call" or (k == "call" and d.src != T.CALL_HELPER):
                raise IllegalInstruction(f"row {ri} lane {lane}: bpf-to-bpf calls must be inlined for the core")
            w, s, ctl = evaluate(d, regs, mem)
            if k in T.MEM_KINDS:
                mem_lanes.append(lane)
                if k == "atomic":
                    atomic_lanes.append(lane)
                addr = (regs[d.src if k in T.LOAD_KINDS else d.dst] + d.off) & M64
                tier = params.tier_of(addr)
                if tier is not None and T.memory_ports(k)[0]:
                    off_chip += params.tier_read_cycles(tier, d.size)
                region = PORTED_REGIONS.get((addr & 0xFFFFFFFF) >> params.REGION_SHIFT)
                if region is not None:
                    name, load_ports, store_ports = region
                    n_ld, n_st = T.memory_ports(k)
                    if n_ld:
                        loads[name] = loads.get(name, 0) + 1
                        if loads[name] > load_ports:
                            raise AccessFault(f"row {ri} lane {lane}: {name} load {loads[name]} of the row (the "
                                              f"{name} has {load_ports} load port(s))")
                    if n_st:
                        stores_n[name] = stores_n.get(name, 0) + 1
                        store_lane.setdefault(name, lane)
                        if stores_n[name] > store_ports:
                            raise AccessFault(f"row {ri} lane {lane}: {name} store {stores_n[name]} of the row "
                                              f"(the {name} has {store_ports} store port(s))")
            for reg, value in w:
                if reg == params.FP_REG:
                    raise ContractViolation(f"row {ri} lane {lane}: writes r10 (read-only frame pointer)")
                if reg in writer:
                    raise ContractViolation(f"row {ri} lane {lane}: r{reg} is also written by lane {writer[reg]}")
                writer[reg] = lane
                writes.append((lane, reg, value))
            for addr, data in s:
                stores.append((lane, addr, data))
            if ctl is not None:
                if ctl[0] == "call":
                    if helper is not None:
                        raise ContractViolation(f"row {ri} lane {lane}: second helper call (lane {helper[0]} "
                                                f"already calls one)")
                    helper = (lane, ctl[1])
                elif control is None:
                    control, control_lane = ctl, lane
        if helper is not None:
            hname = params.HELPERS.get(helper[1])
            region = params.PORT_RULES.get(params.HELPER_WRITE_REGIONS.get(hname, ""))
            if region is not None and region[0] in store_lane:
                raise AccessFault(f"row {ri} lane {store_lane[region[0]]}: stores to the {region[0]} in the row of "
                                  f"a {hname} call (lane {helper[0]}), which writes it itself")
            for rname, allowed in params.CALL_ROW_LOADS.items():
                name = params.PORT_RULES[rname][0]
                if loads.get(name, 0) > allowed:
                    raise AccessFault(f"row {ri}: {loads[name]} {name} loads in the row of a helper call (lane "
                                      f"{helper[0]}), which has {allowed} at most (the helper reads through the "
                                      f"lanes' load port)")
        if atomic_lanes and len(mem_lanes) > 1:
            other = next(x for x in mem_lanes if x != atomic_lanes[0])
            raise ContractViolation(f"row {ri} lane {atomic_lanes[0]}: atomic shares its row with the memory "
                                    f"access of lane {other}")
        if helper is not None and 0 in writer:
            raise ContractViolation(f"row {ri} lane {writer[0]}: writes r0 in the row of the helper call of lane "
                                    f"{helper[0]}")
        for i, (la, aa, da) in enumerate(stores):
            for lb, ab, db in stores[i + 1 :]:
                aa, ab = aa & 0xFFFFFFFF, ab & 0xFFFFFFFF
                if aa < ab + len(db) and ab < aa + len(da):
                    raise ContractViolation(f"row {ri} lane {lb}: store at 0x{ab:08x} overlaps the store of lane {la}")
        # commit: stores (all checked first, undone if the helper faults), helper, registers
        for _lane, addr, data in stores:
            mem.check(addr, len(data), write=True)
        undo = [(addr, mem.read(addr, len(data))) for _lane, addr, data in stores]
        for _lane, addr, data in stores:
            mem.write(addr, data)
        self.stored = [(addr & 0xFFFFFFFF, old) for addr, old in undo]
        lat = 0
        r0 = None
        if helper is not None:
            env.cycles = self.total_cycles + cycles if self.now is None else self.now
            mem.read_log = []
            try:
                r0, lat = env.call(helper[1], regs[1], regs[2], regs[3], regs[4], regs[5])
            except (HelperFault, AccessFault):
                for addr, old in reversed(undo):
                    mem.write(addr, old)
                raise
            finally:
                log, mem.read_log = mem.read_log, None
            for raddr, rsize in log:
                for lane, addr, data in stores:
                    low = addr & 0xFFFFFFFF
                    if raddr < low + len(data) and low < raddr + rsize:
                        raise ContractViolation(f"row {ri} lane {helper[0]}: helper reads 0x{raddr:08x} "
                                                f"stored by lane {lane} of the same row")
        for _lane, reg, value in writes:
            regs[reg] = value
        if r0 is not None:
            regs[0] = r0
            writes.append((helper[0], 0, r0))
        cost = params.CYCLES_PER_ROW + lat + params.DIV_EXTRA_CYCLES * row.divides + off_chip
        bubble = 0
        if helper is not None and helper[1] == TAIL_CALL and env.tail_row is not None:
            # a tail call that jumps wins over the row's branches and exits (they come after it in the program)
            control, control_lane = ("tail", env.tail_row), helper[0]
            bubble = params.TAKEN_BRANCH_PENALTY
        elif control is not None:
            if control[0] == "jump":
                # a jump to the next row finds it already fetched; an unconditional jump that is the row's first
                # branch or exit lane has its target fetched in the row's last cycle (our core, not the original)
                if control[1] != 0 and not (row.jump_first and self.folds_jumps):
                    bubble = params.TAKEN_BRANCH_PENALTY
            elif any(b < control_lane for b in row.branch_lanes):
                bubble = params.CONDITIONAL_EXIT_PENALTY
        cost += bubble
        self.bubble = bubble  # the row's last cycles after its commit (hxdp.models.multicore: its stores' cycle)
        rec = None
        if self.trace_enabled:
            # (the trace shows the data bus: the address, not a map-value pointer's tag)
            rec = TraceRecord(ri, writes, [(lane, addr & 0xFFFFFFFF, data) for lane, addr, data in stores], None, cost)
        return control, cost, rec

    # --- several cores (execution contract section 8) ----------------------------------------------------------------
    def grant_mode(self, ri: int, regs: list[int]) -> GrantMode | None:
        """The mode in which row ri, run with `regs`, asks for the map grant (contract section 8, "Rows that take the
        map grant"), or None when it needs none: the most demanding of its lanes' accesses and its helper call (a row
        that will fault before touching anything needs none)."""
        if not 0 <= ri < len(self.rows) or self.rows[ri].error:
            return None
        modes = set()
        for _lane, d in self.rows[ri].lanes:
            if d.kind in T.MEM_KINDS:
                base = d.src if d.kind in T.LOAD_KINDS else d.dst
                modes.add(self._lane_grant((regs[base] + d.off) & 0xFFFFFFFF, d.kind in T.LOAD_KINDS))
            elif d.kind == "call" and d.src == T.CALL_HELPER:
                modes.add(self._helper_grant(params.HELPERS.get(d.imm), regs))
        return row_mode(modes)

    def _lane_grant(self, addr: int, load: bool) -> GrantMode | None:
        """A lane's load (load) or store/atomic at `addr`: shared for a load in the map memory, apart for a write
        inside a per-CPU copy there (the core's own: its copy's one write port is not free for a writer's bytes),
        write for another write there, exclusive for any access off chip."""
        region = addr >> params.REGION_SHIFT
        if region not in params.GRANT_REGIONS:
            return None
        if region != params.MAP_BASE >> params.REGION_SHIFT:
            return EXCLUSIVE  # an off-chip tier: one port
        if load:
            return SHARED
        if self.in_own_copy(addr):
            return APART
        return WRITE

    def in_own_copy(self, addr: int) -> bool:
        """Whether the 32-bit address is in a region with a copy per core in the map memory (the core's own)."""
        return any(r.base <= addr < r.base + r.size for r in self._percpu_on_chip)

    def _helper_grant(self, name: str | None, regs: list[int]) -> GrantMode | None:
        """A call of helper `name` with `regs`: none for a helper of the core's own state (or a buffer helper whose
        buffers are outside the map memory and the tiers), shared for one that only reads the map memory (a lookup
        that writes nothing, in the map memory; a bad handle too: it faults), apart for such a call whose key or
        buffer is in the map memory or a tier and not read-only (params.GRANT_APART_ARGS: it reads bytes a writer's
        lanes may store, over several cycles), exclusive otherwise."""
        mode = self._helper_reads(name, regs)
        if mode == SHARED and any((regs[r] & 0xFFFFFFFF) >> params.REGION_SHIFT in params.GRANT_REGIONS
                                  and not regs[r] >> params.MAP_RDONLY_PTR_BIT & 1
                                  for r in params.GRANT_APART_ARGS.get(name or "", ())):
            return APART  # (a read-only value, a .rodata format, is written by no lane: shared)
        return mode

    def _helper_reads(self, name: str | None, regs: list[int]) -> GrantMode | None:
        """_helper_grant before the keys and buffers: none, shared or exclusive."""
        if name in params.GRANT_FREE_HELPERS:
            return None
        if name in params.GRANT_BUFFER_HELPERS:
            if not any((regs[r] & 0xFFFFFFFF) >> params.REGION_SHIFT in params.GRANT_REGIONS
                       for r in params.GRANT_BUFFER_HELPERS[name]):
                return None
        if name in params.GRANT_SHARED_HELPERS:
            return SHARED
        if name == "map_lookup_elem":
            map_id = self.state.layout.map_of_handle(regs[1])
            if map_id is None:
                return SHARED
            r = self.state.layout.region(map_id)
            return SHARED if r.tier == "bram" and r.kind not in params.LOOKUP_WRITE_KINDS else EXCLUSIVE
        return EXCLUSIVE

    def row_helper(self, ri: int) -> str | None:
        """The name of the helper row ri calls (None: none, or not a helper of params.HELPERS)."""
        if not 0 <= ri < len(self.rows):
            return None
        return next((params.HELPERS.get(d.imm) for _lane, d in self.rows[ri].lanes
                     if d.kind == "call" and d.src == T.CALL_HELPER), None)

    # --- packets ---------------------------------------------------------------------------------------------------
    def _step(self, ri: int, regs: list[int], cycles: int,
              trace: list[TraceRecord]) -> tuple[int | None, int | None, str | None, int]:
        """Run row ri of a packet that has used `cycles` so far: (next row or None when the packet ends, its r0
        or action when it ends normally, its fault, its cycles after the row)."""
        if cycles >= self.cycle_limit:
            return None, None, params.FAULT_NAMES[params.FAULT_RUNAWAY], cycles
        if not 0 <= ri < len(self.rows):
            return None, None, f"illegal instruction: row {ri} is outside the program ({len(self.rows)} rows)", cycles
        try:
            control, cost, rec = self._row(ri, regs, cycles)
        except AccessFault as exc:
            return None, None, f"access fault: {exc}", cycles
        except HelperFault as exc:
            return None, None, f"helper fault: {exc}", cycles
        except IllegalInstruction as exc:
            return None, None, f"illegal instruction: {exc}", cycles
        cycles += cost
        nxt: int | None = ri + 1
        result: int | None = None
        if control is not None:
            if control[0] == "jump":
                nxt = ri + 1 + control[1]
            elif control[0] == "tail":
                nxt = control[1]
                self._enter(regs)
            elif control[0] == "exit":
                nxt, result = None, regs[0]
            else:  # exit_action
                nxt, result = None, control[1]
        if rec is not None:
            rec.next = nxt
            trace.append(rec)
        return nxt, result, None, cycles

    def _execute(self, regs: list[int]) -> tuple[int | None, str | None, int, list[TraceRecord]]:
        trace: list[TraceRecord] = []
        ri: int | None = 0
        cycles = 0
        while True:
            ri, result, fault, cycles = self._step(ri, regs, cycles, trace)
            if ri is None:
                return result, fault, cycles, trace

    def _enter(self, regs: list[int]) -> None:
        """A program's entry state (execution contract section 1): at packet start and after a tail call, which
        keeps the packet as it is (r2 = ctx->data now) and starts with a zeroed stack."""
        regs[:] = [0] * params.NUM_REGS
        regs[1] = params.CTX_BASE
        regs[2] = self.mem.data
        regs[10] = params.STACK_TOP
        self.mem.fresh_stack()

    def _start(self) -> list[int]:
        regs = [0] * params.NUM_REGS
        self._enter(regs)  # ctx->data at packet start (run_raw overrides r1/r2)
        self.env.new_packet()
        return regs

    def run(self, packet: bytes, ingress_ifindex: int = 1, rx_queue_index: int = 0) -> RunResult:
        """One packet. Frames shorter than PKT_MIN_LEN or longer than PKT_MAX_LEN never reach the core: XDP_DROP,
        0 cycles (the MAC drops them)."""
        if not params.PKT_MIN_LEN <= len(packet) <= params.PKT_MAX_LEN:
            return RunResult(params.XDP_DROP, bytes(packet), None, None, 0)
        regs = self.begin(packet, ingress_ifindex, rx_queue_index)
        r0, fault, cycles, trace = self._execute(regs)
        return self.finish(regs, r0, fault, cycles, trace, ingress_ifindex)

    def begin(self, packet: bytes, ingress_ifindex: int = 1, rx_queue_index: int = 0) -> list[int]:
        """Start a packet (a frame the MAC accepts): its registers at row 0. `run` is begin, `_step` row by row
        from row 0 until the packet ends, then `finish` (hxdp.models.multicore interleaves the steps of cores)."""
        self.mem.reset(packet, ingress_ifindex, rx_queue_index)
        return self._start()

    def finish(self, regs: list[int], r0: int | None, fault: str | None, cycles: int, trace: list[TraceRecord],
               ingress_ifindex: int = 1) -> RunResult:
        """The result of the packet `begin` started, once `_step` has ended it."""
        self.total_cycles += cycles
        self.regs = regs
        action = params.XDP_ABORTED if r0 is None else r0 & 0xFFFFFFFF
        redirect = self.env.redirect if action == params.XDP_REDIRECT else None
        host = self.env.host if action == params.XDP_REDIRECT else None
        bcast = self.env.broadcast if action == params.XDP_REDIRECT else None
        ports = None if bcast is None else RunResult.broadcast_ports(bcast, ingress_ifindex)
        return RunResult(action, self.mem.packet_bytes(), redirect, fault, cycles, trace, self.mem.meta_bytes(),
                         list(self.env.printk), host, ports, self.env.packet_events())

    def run_raw(self, mem: bytes) -> int:
        """ISA tests: r1 = address of a buffer holding `mem` (packet region), r2 = len(mem); returns r0 (u64)."""
        self.mem.reset(mem)
        regs = self._start()
        regs[1] = self.mem.data
        regs[2] = len(mem)
        r0, fault, cycles, _ = self._execute(regs)
        self.total_cycles += cycles
        self.regs = regs
        self.raw_out = self.mem.packet_bytes()
        self.last_cycles = cycles
        if r0 is None:
            raise HxdpError(f"raw program faulted: {fault}")
        return r0 & M64
