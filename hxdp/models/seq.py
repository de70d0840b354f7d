"""Sequential eBPF interpreter with XDP semantics: the golden model of a Program (before compilation).

Slot by slot like the kernel's interpreter: lddw map references resolved through MapLayout, helpers from
hxdp.helpers, tail calls into the program's resident programs (Program.resident, found by the entry rows of
MapLayout.programs), bpf-to-bpf calls with callee-saved r6-r9 and a new 512-byte stack frame per call level
(frame k at STACK_BASE + 512 k, r10 = its top), at most MAX_CALL_FRAMES levels. `cycles` of the result is the
number of instructions executed; more than `max_insns` ends the packet with XDP_ABORTED (fault "cycle limit").
Access faults and bad helper calls also end it with XDP_ABORTED and `fault` set (the kernel's verifier
would have rejected such programs).

Trace records (trace=True): one tuple (pc, [(reg, value), ...], [(addr, bytes), ...]) per executed slot (the pc
of the program running: `visited` collects (program name, pc) over every packet, tail calls included).
"""

from __future__ import annotations

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.frontend.program import Program
from hxdp.isa import table as T
from hxdp.isa.insn import Insn, lddw_value
from hxdp.models.execute import Decoded, IllegalInstruction, decode, evaluate
from hxdp.models.helpers import HelperEnv, HelperFault
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.memory import AccessFault, DataMemory
from hxdp.result import RunResult

MAX_CALL_FRAMES = 8  # MAX_CALL_FRAMES of the kernel verifier
M64 = (1 << 64) - 1
TAIL_CALL = params.HELPER_IDS["tail_call"]


class ModelError(HxdpError):
    """A program the model cannot run at all (reported before any packet)."""


def map_resolver(layout: MapLayout, where: str = ""):
    """An lddw resolver for ELF programs: map fd -> handle, map value -> absolute address."""

    def resolve(lo: Insn, hi: Insn) -> int:
        if lo.src == T.PSEUDO_IMM64:
            return lddw_value(lo, hi)
        if lo.src == T.PSEUDO_MAP_FD:
            return layout.handle(lo.imm)
        if lo.src == T.PSEUDO_MAP_VALUE:
            return layout.value_addr(lo.imm, hi.imm)
        raise IllegalInstruction(f"{where}lddw pseudo source {lo.src} is not supported")

    return resolve


def decode_program(insns: list[Insn], layout: MapLayout, name: str = "program") -> list[Decoded | None]:
    """Decode every slot once; second lddw slots and undecodable slots become None (executing them faults)."""
    resolve = map_resolver(layout)
    code: list[Decoded | None] = []
    skip = False
    for pc, ins in enumerate(insns):
        if skip:
            code.append(None)
            skip = False
            continue
        nxt = insns[pc + 1] if pc + 1 < len(insns) else None
        try:
            d = decode(ins, nxt, resolve, f"{name} slot {pc}: ")
        except IllegalInstruction:
            d = None
        code.append(d)
        skip = ins.opcode == 0x18
    return code


class SeqModel:
    """Run a Program on packets, one instruction at a time, against a MapState."""

    def __init__(self, program: Program, state: MapState, max_insns: int = params.CYCLE_LIMIT,
                 trace: bool = False, cpu: int = 0) -> None:
        self.program = program
        self.current = program  # the program running (tail calls change it)
        self.visited: set[tuple[str, int]] = set()  # (program, slot) executed, with trace=True
        self.state = state
        self.max_insns = max_insns
        self.trace_enabled = trace
        self.code = decode_program(program.insns, state.layout, program.name)
        # the programs a tail call reaches, by the entry row a PROG_ARRAY value names (MapLayout.programs)
        by_name = {p.name: p for p in (program, *program.resident)}
        self.entries = {row: (by_name[name], decode_program(by_name[name].insns, state.layout, name))
                        for name, row in state.layout.programs.items() if name in by_name}
        self.mem = DataMemory(state.mem, stack_frames=MAX_CALL_FRAMES, tiers=state.tiers)
        self.env = HelperEnv(self.mem, state, cpu=cpu)  # cpu: the core it runs as (get_smp_processor_id)
        self.regs = [0] * params.NUM_REGS

    def _illegal(self, pc: int) -> str:
        insns = self.current.insns
        if not 0 <= pc < len(insns):
            return f"illegal instruction: pc {pc} outside the program"
        ins = insns[pc]
        nxt = insns[pc + 1] if pc + 1 < len(insns) else None
        try:
            decode(ins, nxt, map_resolver(self.state.layout), f"slot {pc}: ")
        except HxdpError as exc:
            return f"illegal instruction: {exc}"
        return f"illegal instruction: slot {pc} is the second half of an lddw"

    def _execute(self, regs: list[int]) -> tuple[int | None, str | None, list]:
        """Run from pc 0 with regs set up; returns (r0 or None on fault, fault, trace)."""
        code, mem, env = self.code, self.mem, self.env
        self.current = self.program
        n = len(code)
        frames: list[tuple[int, list[int]]] = []
        trace: list = []
        pc = 0
        count = 0
        try:
            while True:
                if count >= self.max_insns:
                    return None, params.FAULT_NAMES[params.FAULT_RUNAWAY], trace
                count += 1
                d = code[pc] if 0 <= pc < n else None
                if d is None:
                    return None, self._illegal(pc), trace
                writes, stores, control = evaluate(d, regs, mem)
                for addr, data in stores:
                    mem.write(addr, data)
                for reg, value in writes:
                    regs[reg] = value
                if self.trace_enabled:
                    trace.append((pc, list(writes), list(stores)))
                    self.visited.add((self.current.name, pc))
                pc += 2 if d.kind == "lddw" else 1
                if control is None:
                    continue
                kind = control[0]
                if kind == "jump":
                    pc += control[1]
                elif kind == "call":
                    env.cycles = self.total + count
                    if control[1] in params.LOWERED_HELPERS:
                        regs[0] = env.call_lowered(control[1], regs[2], regs[3], regs[4])
                    else:
                        regs[0], _lat = env.call(control[1], regs[1], regs[2], regs[3], regs[4], regs[5])
                    if self.trace_enabled:
                        trace[-1][1].append((0, regs[0]))
                    if control[1] == TAIL_CALL and env.tail_row is not None:
                        if frames:
                            return None, "illegal instruction: a tail call inside a bpf-to-bpf function is " \
                                "not supported (the core inlines functions)", trace
                        if env.tail_row not in self.entries:
                            return None, f"illegal instruction: tail call to row {env.tail_row}, no program " \
                                "starts there", trace
                        self.current, code = self.entries[env.tail_row]
                        n, pc = len(code), 0
                        self._enter(regs)
                elif kind == "local_call":
                    if len(frames) + 1 >= MAX_CALL_FRAMES:
                        return None, "call depth exceeds 8 frames", trace
                    frames.append((pc, regs[6:11]))
                    depth = len(frames)
                    mem.stack_limit = params.STACK_SIZE * (depth + 1)
                    base = params.STACK_SIZE * depth
                    mem.stack[base : base + params.STACK_SIZE] = bytes(params.STACK_SIZE)
                    regs[10] = params.STACK_BASE + params.STACK_SIZE * (depth + 1)
                    pc += control[1]
                elif kind == "exit":
                    if not frames:
                        return regs[0], None, trace
                    pc, saved = frames.pop()
                    regs[6:11] = saved
                    mem.stack_limit = params.STACK_SIZE * (len(frames) + 1)
                elif kind == "exit_action":
                    return control[1], None, trace
        except AccessFault as exc:
            return None, f"access fault: {exc}", trace
        except HelperFault as exc:
            return None, f"helper fault: {exc}", trace
        except IllegalInstruction as exc:
            return None, f"illegal instruction: {exc}", trace
        finally:
            self.count = count

    total = 0  # instructions executed over the model's life (ktime_get_ns)

    def _enter(self, regs: list[int]) -> None:
        """A program's entry: at packet start and after a tail call (the packet as it is, a zeroed stack)."""
        regs[:] = [0] * params.NUM_REGS
        regs[1] = params.CTX_BASE
        regs[10] = params.STACK_TOP
        self.mem.fresh_stack()

    def _start(self) -> list[int]:
        regs = [0] * params.NUM_REGS
        self._enter(regs)
        self.env.new_packet()
        return regs

    def run(self, packet: bytes, ingress_ifindex: int = 1, rx_queue_index: int = 0) -> RunResult:
        self.mem.reset(packet, ingress_ifindex, rx_queue_index)
        regs = self._start()
        r0, fault, trace = self._execute(regs)
        self.total += self.count
        self.regs = regs
        action = params.XDP_ABORTED if r0 is None else r0 & 0xFFFFFFFF
        redirect = self.env.redirect if action == params.XDP_REDIRECT else None
        host = self.env.host if action == params.XDP_REDIRECT else None
        bcast = self.env.broadcast if action == params.XDP_REDIRECT else None
        ports = None if bcast is None else RunResult.broadcast_ports(bcast, ingress_ifindex)
        return RunResult(action, self.mem.packet_bytes(), redirect, fault, self.count, trace,
                         self.mem.meta_bytes(), list(self.env.printk), host, ports, self.env.packet_events())

    def run_raw(self, mem: bytes) -> int:
        """ISA tests: r1 = address of a buffer holding `mem` (in the packet region), r2 = len(mem); returns r0.

        Raises ModelError on a fault. The buffer's final bytes are in `self.raw_out` afterwards.
        """
        self.mem.reset(mem)
        regs = self._start()
        regs[1] = self.mem.data
        regs[2] = len(mem)
        r0, fault, _ = self._execute(regs)
        self.total += self.count
        self.regs = regs
        self.raw_out = self.mem.packet_bytes()
        if r0 is None:
            raise ModelError(f"raw program faulted: {fault}")
        return r0 & M64
