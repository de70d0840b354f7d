"""JMP32 -> JMP: 32-bit compares widened onto 64-bit jumps, for a core without the JMP32 class (the original)."""

from __future__ import annotations

from hxdp.compiler.cfg import Cfg
from hxdp.compiler.ir import Op
from hxdp.isa import table as T

_SIGNED = frozenset({"jsgt", "jsge", "jslt", "jsle"})
_MOV32_X, _MOV32_K = T.BY_NAME["mov32_x"].opcode, T.BY_NAME["mov32_k"].opcode
_LSH64_K, _ARSH64_K = T.BY_NAME["lsh64_k"].opcode, T.BY_NAME["arsh64_k"].opcode


def _widened(cfg: Cfg, jmp: Op, reg: int, signed: bool) -> tuple[int, list[Op]]:
    """A new register holding the low word of `reg`, zero- or sign-extended to 64 bits, and the ops that set it."""
    t = cfg.new_vreg()
    ops = [Op(_MOV32_X, t, reg, slot=jmp.slot, text=jmp.text)]
    if signed:
        ops += [Op(_LSH64_K, t, imm=32, slot=jmp.slot, text=jmp.text),
                Op(_ARSH64_K, t, imm=32, slot=jmp.slot, text=jmp.text)]
    return t, ops


def _lower(cfg: Cfg, op: Op) -> list[Op]:
    """`if wD OP x goto T` -> the operands' low words extended as OP reads them, then `if rD' OP x' goto T`."""
    info = op.info
    signed = info.op in _SIGNED
    a, out = _widened(cfg, op, op.dst, signed)
    jmp64 = (op.opcode & ~0x07) | T.CLASS_JMP
    if info.src_reg:
        b, more = _widened(cfg, op, op.src, signed)
        return out + more + [op.copy(opcode=jmp64, dst=a, src=b)]
    if signed or info.op == "jset" or op.imm >= 0:
        # a 64-bit jump sign-extends imm: that is the signed 32-bit compare, and for a non-negative imm (or the
        # bits jset tests, whose upper half meets a zero-extended operand) the unsigned one
        return out + [op.copy(opcode=jmp64, dst=a)]
    b = cfg.new_vreg()  # a negative imm compared unsigned: its zero-extended value from a register
    return out + [Op(_MOV32_K, b, imm=op.imm, slot=op.slot, text=op.text),
                  op.copy(opcode=jmp64 | T.SRC_X, dst=a, src=b, imm=0)]


def widen_jmp32(cfg: Cfg) -> int:
    """Lower every JMP32 jump; returns how many."""
    n = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        new: list[Op] = []
        for op in b.ops:
            if op.kind == "jmp" and op.info.width == 32:
                new += _lower(cfg, op)
                n += 1
            else:
                new.append(op)
        b.ops = new
    return n
