"""One instruction slot's meaning as data: decode once, then evaluate against registers and memory (both models).

`evaluate` never changes state: it returns the effect of the instruction given the registers and memory it
reads, so the sequential model applies it at once and the VLIW model applies all lanes of a row at the end.

An effect is a tuple (writes, stores, control):
    writes:  list of (register, u64 value)
    stores:  list of (address, bytes)
    control: None, or ("jump", off), ("exit",), ("exit_action", imm), ("call", helper id), ("local_call", imm)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hxdp.errors import HxdpError
from hxdp.isa import table as T
from hxdp.isa.insn import Insn, lddw_value
from hxdp.models import alu
from hxdp.models.memory import DataMemory

M64 = alu.M64

Effect = tuple[list[tuple[int, int]], list[tuple[int, bytes]], tuple | None]
NO_EFFECT: Effect = ([], [], None)


class IllegalInstruction(HxdpError):
    """An opcode or encoding the machine does not execute (the packet ends with XDP_ABORTED)."""


@dataclass(slots=True)
class Decoded:
    """A slot ready to execute. `value` is the 64-bit immediate of lddw (map references already resolved)."""

    kind: str
    op: str
    width: int
    dst: int
    src: int
    off: int
    imm: int
    src_reg: bool
    size: int
    value: int
    insn: Insn


LddwResolver = Callable[[Insn, Insn], int]


def plain_lddw(lo: Insn, hi: Insn) -> int:
    """Resolve a ROM lddw: only plain 64-bit immediates (src 0) are allowed after compilation."""
    if lo.src != T.PSEUDO_IMM64:
        raise IllegalInstruction(f"lddw with pseudo source {lo.src} in a ROM (the compiler must resolve it)")
    return lddw_value(lo, hi)


def decode(insn: Insn, nxt: Insn | None, resolve: LddwResolver = plain_lddw, where: str = "",
           opcodes: dict[int, T.OpInfo] | None = None) -> Decoded:
    """Decode one slot against an opcode table (default: our core's, hxdp.isa.table); raises IllegalInstruction
    naming `where` for encodings the machine rejects."""
    info = (T.OPCODES if opcodes is None else opcodes).get(insn.opcode)
    if info is None:
        raise IllegalInstruction(f"{where}unknown opcode 0x{insn.opcode:02x}")
    k = info.kind
    value = 0
    if not info.supported:
        raise IllegalInstruction(f"{where}unsupported instruction {info.name}")
    if k == "alu":
        if info.op in ("div", "mod") and insn.off not in (0, 1):
            raise IllegalInstruction(f"{where}{info.name} with off {insn.off}")
    elif k in ("end", "bswap"):
        if insn.imm not in (16, 32, 64):
            raise IllegalInstruction(f"{where}{info.name} with width {insn.imm}")
    elif k == "atomic":
        if insn.imm not in T.ATOMIC_OPS:
            raise IllegalInstruction(f"{where}unknown atomic operation 0x{insn.imm & 0xFFFFFFFF:x}")
    elif k == "lddw":
        if nxt is None or nxt.opcode != 0:
            raise IllegalInstruction(f"{where}lddw without its second slot")
        value = resolve(insn, nxt) & M64
    elif k == "call" and insn.src not in (T.CALL_HELPER, T.CALL_LOCAL):
        raise IllegalInstruction(f"{where}kfunc calls are not supported")
    size = info.width if k in ("ldx", "ldxsx", "st", "stx", "atomic", "ldx6", "stx6", "st6", "lddw") else 0
    return Decoded(k, info.op, info.width, insn.dst, insn.src, insn.off, insn.imm, info.src_reg, size, value, insn)


def evaluate(d: Decoded, regs: list[int], mem: DataMemory) -> Effect:
    """The effect of one decoded slot (state unchanged). AccessFault propagates from memory reads."""
    k = d.kind
    if k == "alu":
        b = regs[d.src] if d.src_reg else alu.imm64(d.imm)
        off = d.off if (d.op in ("div", "mod") or (d.op == "mov" and d.src_reg)) else 0
        return [(d.dst, alu.alu(d.op, d.width, regs[d.dst], b, off))], [], None
    if k == "ldx" or k == "ldxsx" or k == "ldx6":
        addr = (regs[d.src] + d.off) & M64
        return [(d.dst, alu.load_value(mem.read(addr, d.size), k == "ldxsx"))], [], None
    if k == "stx" or k == "stx6":
        addr = (regs[d.dst] + d.off) & M64
        return [], [(addr, (regs[d.src] & ((1 << (8 * d.size)) - 1)).to_bytes(d.size, "little"))], None
    if k == "st" or k == "st6":
        addr = (regs[d.dst] + d.off) & M64
        return [], [(addr, (alu.imm64(d.imm) & ((1 << (8 * d.size)) - 1)).to_bytes(d.size, "little"))], None
    if k == "jmp":
        b = regs[d.src] if d.src_reg else alu.imm64(d.imm)
        return [], [], (("jump", d.off) if alu.jump_taken(d.op, d.width, regs[d.dst], b) else None)
    if k == "alu3":
        return [(d.dst, alu.alu(d.op, d.width, regs[d.src], alu.imm64(d.imm)))], [], None
    if k == "lddw":
        return [(d.dst, d.value)], [], None
    if k == "exit":
        return [], [], ("exit",)
    if k == "exit_action":
        return [], [], ("exit_action", d.imm & 0xFFFFFFFF)
    if k == "ja":
        return [], [], ("jump", d.off if d.op == "ja" else d.imm)
    if k == "call":
        return [], [], (("call", d.imm) if d.src == T.CALL_HELPER else ("local_call", d.imm))
    if k == "neg":
        return [(d.dst, alu.alu("neg", d.width, regs[d.dst], 0))], [], None
    if k == "end" or k == "bswap":
        return [(d.dst, alu.endian(d.op, regs[d.dst], d.imm))], [], None
    if k == "atomic":
        addr = (regs[d.dst] + d.off) & M64
        old = int.from_bytes(mem.read(addr, d.size), "little")
        mem.check(addr, d.size, write=True)
        new, src_val, r0_val = alu.atomic(T.ATOMIC_OPS[d.imm], d.size, old, regs[d.src], regs[0])
        writes = []
        if src_val is not None:
            writes.append((d.src, src_val))
        if r0_val is not None:
            writes.append((0, r0_val))
        return writes, [(addr, new.to_bytes(d.size, "little"))], None
    raise IllegalInstruction(f"instruction {d.insn.info.name} cannot be executed")
