"""A tiny eBPF assembler for hand-written test programs (instruction constructors by mnemonic)."""

from __future__ import annotations

from hxdp.isa import table as T
from hxdp.isa.insn import NOP, Insn


def op(name: str) -> int:
    return T.BY_NAME[name].opcode


def alu64(name: str, dst: int, imm: int = 0, src: int | None = None, off: int = 0) -> Insn:
    """`name` is an ALU op (add, mov, ...); register form when src is given."""
    if src is None:
        return Insn(op(f"{name}64_k"), dst, 0, off, imm)
    return Insn(op(f"{name}64_x"), dst, src, off, 0)


def alu32(name: str, dst: int, imm: int = 0, src: int | None = None, off: int = 0) -> Insn:
    if src is None:
        return Insn(op(f"{name}32_k"), dst, 0, off, imm)
    return Insn(op(f"{name}32_x"), dst, src, off, 0)


def mov(dst: int, imm: int) -> Insn:
    return alu64("mov", dst, imm)


def movr(dst: int, src: int) -> Insn:
    return alu64("mov", dst, src=src)


def ldx(size: str, dst: int, src: int, off: int = 0) -> Insn:
    return Insn(op(f"ldx{size}"), dst, src, off)


def stx(size: str, dst: int, src: int, off: int = 0) -> Insn:
    return Insn(op(f"stx{size}"), dst, src, off)


def st(size: str, dst: int, off: int, imm: int) -> Insn:
    return Insn(op(f"st{size}"), dst, 0, off, imm)


def jmp(cond: str, dst: int, off: int, imm: int = 0, src: int | None = None, width: int = 64) -> Insn:
    if src is None:
        return Insn(op(f"{cond}{width}_k"), dst, 0, off, imm)
    return Insn(op(f"{cond}{width}_x"), dst, src, off, 0)


def ja(off: int) -> Insn:
    return Insn(op("ja"), 0, 0, off)


def call(helper: int) -> Insn:
    return Insn(op("call"), 0, 0, 0, helper)


def call_local(rel: int) -> Insn:
    return Insn(op("call"), 0, T.CALL_LOCAL, 0, rel)


def exit_() -> Insn:
    return Insn(op("exit"))


def exit_action(action: int) -> Insn:
    return Insn(T.EXT_EXIT_ACTION, 0, 0, 0, action)


def lddw(dst: int, value: int, src: int = 0, hi: int | None = None) -> list[Insn]:
    """Two slots; with src = PSEUDO_MAP_FD/VALUE, value is the map index and hi the value offset."""
    lo_imm = value & 0xFFFFFFFF
    hi_imm = (value >> 32) & 0xFFFFFFFF if hi is None else hi
    s32 = lambda x: x - (1 << 32) if x & 0x80000000 else x  # noqa: E731
    return [Insn(0x18, dst, src, 0, s32(lo_imm)), Insn(0, 0, 0, 0, s32(hi_imm))]


def atomic(size: str, dst: int, src: int, off: int, aop: int) -> Insn:
    return Insn(op(f"atomic{size}"), dst, src, off, aop)


def row(*lanes: Insn) -> list[Insn]:
    """A ROM row from up to four lanes (lane 0 first), padded with no-ops."""
    out = list(lanes)
    return out + [NOP] * (4 - len(out))
