"""The compiler's instruction form: one Op per eBPF instruction (lddw merged), registers may be virtual (>= 16)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hxdp import params
from hxdp.errors import CompileError
from hxdp.isa import table as T
from hxdp.isa.insn import Insn, disasm

_H = params.HELPER_IDS
# Arguments each supported helper reads (kernel prototypes); unknown counts read all of r1-r5.
HELPER_ARGS: dict[int, int] = {_H[name]: n for name, n in (
    ("map_lookup_elem", 2),  # (map, key)
    ("map_update_elem", 4),  # (map, key, value, flags)
    ("map_delete_elem", 2),  # (map, key)
    ("ktime_get_ns", 0),
    ("ktime_get_coarse_ns", 0),
    ("spin_lock", 1),  # (lock)
    ("spin_unlock", 1),  # (lock)
    ("trace_printk", 5),  # (fmt, size, ...)
    ("get_prandom_u32", 0),
    ("get_smp_processor_id", 0),
    ("redirect", 2),  # (ifindex, flags)
    ("csum_diff", 5),  # (from, from_size, to, to_size, seed)
    ("xdp_adjust_head", 2),  # (ctx, delta)
    ("redirect_map", 3),  # (map, key, flags)
    ("xdp_adjust_meta", 2),  # (ctx, delta)
    ("xdp_adjust_tail", 2),  # (ctx, delta)
    ("perf_event_output", 5),  # (ctx, map, flags, data, size)
    ("ringbuf_output", 4),  # (map, data, size, flags)
    ("ringbuf_reserve", 3),  # (map, size, flags)
    ("ringbuf_submit", 2),  # (data, flags)
    ("ringbuf_discard", 2),  # (data, flags)
    ("fib_lookup", 4),  # (ctx, params, plen, flags)
)}
HELPER_ARGS.update({num: 4 for num in params.LOWERED_HELPERS})  # (ctx, offset, buf, len), until they are lowered
ADJUST_HELPERS = frozenset({_H["xdp_adjust_head"], _H["xdp_adjust_meta"], _H["xdp_adjust_tail"]})
# Helpers whose only memory effect is on maps (they read key/value buffers); others may move packet bytes.
MAP_HELPERS = frozenset({_H["map_lookup_elem"], _H["map_update_elem"], _H["map_delete_elem"]})
# The tag of a lowered helper's branches (hxdp.compiler.lowering): they compute its result, they guard no access,
# so the packet bounds-check reduction leaves them
HELPER_RESULT = "helper_result"
FP = 10
CALL_CLOBBERS = (0, 1, 2, 3, 4, 5)


@dataclass(eq=False)
class Op:
    """One instruction. `imm64` is the full value of a lddw; `target` is the block id a jump goes to."""

    opcode: int
    dst: int = 0
    src: int = 0
    off: int = 0
    imm: int = 0
    imm64: int = 0
    slot: int = -1  # slot index in the original program (for messages and reports)
    target: int | None = None
    text: str = ""  # disassembly of the original instruction
    tags: set[str] = field(default_factory=set)

    @property
    def info(self) -> T.OpInfo:
        return T.OPCODES[self.opcode]

    @property
    def kind(self) -> str:
        return T.OPCODES[self.opcode].kind

    def copy(self, **kw: int) -> Op:
        new = Op(self.opcode, self.dst, self.src, self.off, self.imm, self.imm64, self.slot, self.target, self.text,
                 set(self.tags))
        for k, v in kw.items():
            setattr(new, k, v)
        return new

    # --- classification ------------------------------------------------------------------------------------
    @property
    def is_branch(self) -> bool:
        return self.kind in ("jmp", "ja")

    @property
    def is_cond(self) -> bool:
        return self.kind == "jmp"

    @property
    def is_exit(self) -> bool:
        return self.kind in ("exit", "exit_action")

    @property
    def is_control(self) -> bool:
        return self.kind in ("jmp", "ja", "exit", "exit_action")

    @property
    def is_call(self) -> bool:
        return self.kind == "call"

    @property
    def is_load(self) -> bool:
        return self.kind in T.LOAD_KINDS

    @property
    def is_store(self) -> bool:
        return self.kind in T.STORE_KINDS

    @property
    def is_atomic(self) -> bool:
        return self.kind == "atomic"

    @property
    def is_mul(self) -> bool:
        """mul (32 or 64 bit): a row has MUL_UNITS of them at most (the core's multipliers)."""
        return self.kind == "alu" and self.info.op == "mul"

    @property
    def is_div(self) -> bool:
        """div/mod (any width, signed or not): each costs the row DIV_EXTRA_CYCLES on the core's one divider."""
        return self.kind == "alu" and self.info.op in ("div", "mod")

    @property
    def is_mem(self) -> bool:
        return self.is_load or self.is_store or self.is_atomic

    @property
    def size(self) -> int:
        return self.info.width if self.is_mem else 0

    @property
    def base(self) -> int:
        """Address register of a memory access."""
        return self.src if self.is_load else self.dst

    @property
    def slots(self) -> int:
        return 2 if self.kind == "lddw" else 1

    def uses(self) -> tuple[int, ...]:
        k = self.kind
        info = self.info
        if k == "alu":
            if info.op == "mov":
                return (self.src,) if info.src_reg else ()
            return (self.dst, self.src) if info.src_reg else (self.dst,)
        if k in ("neg", "end", "bswap"):
            return (self.dst,)
        if k == "alu3":
            return (self.src,)
        if k == "jmp":
            return (self.dst, self.src) if info.src_reg else (self.dst,)
        if k in ("ldx", "ldxsx", "ldx6"):
            return (self.src,)
        if k in ("st", "st6"):
            return (self.dst,)
        if k in ("stx", "stx6"):
            return (self.dst, self.src)
        if k == "atomic":
            if T.ATOMIC_OPS.get(self.imm) == "cmpxchg":
                return (self.dst, self.src, 0)
            return (self.dst, self.src)
        if k == "call":
            return tuple(range(1, 1 + HELPER_ARGS.get(self.imm, 5)))
        if k == "exit":
            return (0,)
        return ()

    def defs(self) -> tuple[int, ...]:
        k = self.kind
        if k in ("alu", "neg", "end", "bswap", "alu3", "ldx", "ldxsx", "ldx6", "lddw"):
            return (self.dst,)
        if k == "atomic":
            aop = T.ATOMIC_OPS.get(self.imm, "")
            if aop == "cmpxchg":
                return (0,)
            if aop.startswith("fetch_") or aop == "xchg":
                return (self.src,)
            return ()
        if k == "call":
            return CALL_CLOBBERS
        return ()

    def rename(self, mapping: dict[int, int]) -> None:
        """Rename the register fields (implicit registers r0-r5 of calls/exit/cmpxchg are never renamed)."""
        k = self.kind
        if k in ("call", "exit", "exit_action", "ja"):
            return
        self.dst = mapping.get(self.dst, self.dst)
        if self.info.src_reg or k in ("alu3", "ldx", "ldxsx", "ldx6", "stx", "stx6", "atomic"):
            self.src = mapping.get(self.src, self.src)

    def to_insns(self) -> list[Insn]:
        if self.dst > 15 or self.src > 15:
            raise CompileError(f"slot {self.slot}: internal error: virtual register left in {self.render()}")
        if self.kind == "lddw":
            v = self.imm64 & 0xFFFFFFFFFFFFFFFF
            lo = Insn(self.opcode, self.dst, 0, 0, _s32(v & 0xFFFFFFFF))
            return [lo, Insn(0, 0, 0, 0, _s32(v >> 32))]
        return [Insn(self.opcode, self.dst, self.src, self.off, self.imm)]

    def render(self) -> str:
        """Disassembly of the op as it is now (virtual registers print as v16...)."""
        if self.dst > 15 or self.src > 15:
            return f"{self.info.name} dst=v{self.dst} src=v{self.src} off={self.off} imm={self.imm}"
        ins = self.to_insns()
        return disasm(ins[0], ins[1] if len(ins) > 1 else None)

    def where(self) -> str:
        return f"slot {self.slot} ({self.text})" if self.slot >= 0 else f"({self.render()})"

    def __repr__(self) -> str:
        return f"<{self.slot}: {self.render()}>"


def _s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def mov_k(dst: int, imm: int, slot: int = -1) -> Op:
    return Op(0xB7, dst, 0, 0, imm, slot=slot)


def mov_x(dst: int, src: int, slot: int = -1) -> Op:
    return Op(0xBF, dst, src, slot=slot)


def add_k(dst: int, imm: int, slot: int = -1) -> Op:
    return Op(0x07, dst, 0, 0, imm, slot=slot)


def ja(target: int, slot: int = -1) -> Op:
    return Op(0x05, slot=slot, target=target)


def exit_op(slot: int = -1) -> Op:
    return Op(0x95, slot=slot)


INVERT = {"jeq": "jne", "jne": "jeq", "jgt": "jle", "jle": "jgt", "jge": "jlt", "jlt": "jge",
          "jsgt": "jsle", "jsle": "jsgt", "jsge": "jslt", "jslt": "jsge"}


def inverted(op: Op) -> Op | None:
    """The branch with the opposite condition, or None (jset has no inverse)."""
    info = op.info
    inv = INVERT.get(info.op)
    if inv is None:
        return None
    code = T.JMP_OPS[inv][0] | (op.opcode & 0x0F)
    return op.copy(opcode=code)
