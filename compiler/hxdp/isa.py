"""Encoder, decoder and disassembler for eBPF and hXDP instructions, driven by isa_table."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, replace

from . import isa_table as T


class IsaError(ValueError):
    """An instruction that cannot be encoded or decoded."""


def s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def s16(x: int) -> int:
    x &= 0xFFFF
    return x - (1 << 16) if x & 0x8000 else x


@dataclass(frozen=True)
class Insn:
    """One 64-bit instruction slot. For lddw, the second slot is an Insn with opcode 0 carrying imm high."""

    opcode: int
    dst: int = 0
    src: int = 0
    off: int = 0  # signed 16 bit
    imm: int = 0  # signed 32 bit

    @property
    def info(self) -> T.OpInfo:
        try:
            return T.OPCODES[self.opcode]
        except KeyError:
            raise IsaError(f"unknown opcode 0x{self.opcode:02x}") from None

    @property
    def is_nop(self) -> bool:
        return self.opcode == 0 and self.dst == 0 and self.src == 0 and self.off == 0 and self.imm == 0

    def to_u64(self) -> int:
        """The slot as the little-endian u64 that the ROM prints: imm[63:32] off[31:16] src[15:12] dst[11:8] op."""
        return (
            ((self.imm & 0xFFFFFFFF) << 32)
            | ((self.off & 0xFFFF) << 16)
            | ((self.src & 0xF) << 12)
            | ((self.dst & 0xF) << 8)
            | (self.opcode & 0xFF)
        )

    def to_bytes(self) -> bytes:
        return struct.pack("<Q", self.to_u64())

    @classmethod
    def from_u64(cls, value: int) -> Insn:
        return cls(
            opcode=value & 0xFF,
            dst=(value >> 8) & 0xF,
            src=(value >> 12) & 0xF,
            off=s16(value >> 16),
            imm=s32(value >> 32),
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> Insn:
        if len(data) != 8:
            raise IsaError(f"instruction slot must be 8 bytes, got {len(data)}")
        return cls.from_u64(struct.unpack("<Q", data)[0])

    def with_(self, **kw: int) -> Insn:
        return replace(self, **kw)


NOP = Insn(0)


def decode(data: bytes) -> list[Insn]:
    """Split raw eBPF bytes into 8-byte slots (lddw keeps its second slot)."""
    if len(data) % 8:
        raise IsaError(f"program length {len(data)} is not a multiple of 8 bytes")
    return [Insn.from_bytes(data[i : i + 8]) for i in range(0, len(data), 8)]


def encode(insns: list[Insn]) -> bytes:
    return b"".join(i.to_bytes() for i in insns)


def lddw_value(lo: Insn, hi: Insn) -> int:
    return ((hi.imm & 0xFFFFFFFF) << 32) | (lo.imm & 0xFFFFFFFF)


def _reg(width: int, r: int) -> str:
    return f"w{r}" if width == 32 else f"r{r}"


def _mem(size: str, reg: int, off: int) -> str:
    sign = "+" if off >= 0 else "-"
    return f"*(u{T.SIZES[size][1] * 8 if size in T.SIZES else 48} *)(r{reg} {sign} {abs(off)})"


def _off(off: int) -> str:
    return f"+{off}" if off >= 0 else f"{off}"


def disasm(insn: Insn, nxt: Insn | None = None, maps: Sequence[str] | None = None) -> str:
    """Render one instruction in llvm-objdump's BPF syntax (clang 14); extensions in the same style.

    With `maps` (map names by index), resolved lddw map references print as `r1 = map[name] ll` and
    `r1 = map[name] + off ll` instead of llvm-objdump's `ld_pseudo` form.
    """
    if insn.is_nop:
        return "nop"
    try:
        info = insn.info
    except IsaError:
        return f".insn 0x{insn.to_u64():016x}  # unknown opcode"
    d, s, off, imm = insn.dst, insn.src, insn.off, insn.imm
    k = info.kind
    if k == "alu":
        sym = T.ALU_OPS[info.op][1]
        if info.op in ("div", "mod") and off == 1:
            sym = "s" + sym
        rhs = _reg(info.width, s) if info.src_reg else str(imm)
        if info.op == "mov" and info.src_reg and off in (8, 16, 32):
            return f"{_reg(info.width, d)} = (s{off}){_reg(info.width, s)}"
        return f"{_reg(info.width, d)} {sym} {rhs}"
    if k == "alu3":
        sym = T.ALU_OPS[info.op][1][:-1]
        return f"{_reg(info.width, d)} = {_reg(info.width, s)} {sym} {imm}"
    if k == "neg":
        return f"{_reg(info.width, d)} = -{_reg(info.width, d)}"
    if k == "end":
        return f"r{d} = {info.op}{imm} r{d}"
    if k == "bswap":
        return f"r{d} = bswap{imm} r{d}"
    if k == "jmp":
        sym = T.JMP_OPS[info.op][1]
        rhs = _reg(info.width, s) if info.src_reg else str(imm)
        return f"if {_reg(info.width, d)} {sym} {rhs} goto {_off(off)}"
    if k == "ja":
        return f"goto {_off(off)}" if info.op == "ja" else f"gotol {_off(imm)}"
    if k == "call":
        return f"call {imm}"
    if k == "exit":
        return "exit"
    if k == "exit_action":
        return f"exit {imm}"
    if k == "lddw":
        if maps is not None and s in (T.PSEUDO_MAP_FD, T.PSEUDO_MAP_VALUE) and 0 <= imm < len(maps):
            extra = f" + {nxt.imm & 0xFFFFFFFF}" if s == T.PSEUDO_MAP_VALUE and nxt is not None else ""
            return f"r{d} = map[{maps[imm]}]{extra} ll"
        if s != T.PSEUDO_IMM64:
            return f"ld_pseudo\tr{d}, {s}, {imm}"
        value = lddw_value(insn, nxt) if nxt is not None else imm & 0xFFFFFFFF
        return f"r{d} = {value if value < (1 << 63) else value - (1 << 64)} ll"
    if k in ("ldx", "ldxsx", "ldx6"):
        size = info.op
        text = _mem(size, s, off)
        return f"r{d} = {text.replace('*(u', '*(s') if k == 'ldxsx' else text}"
    if k in ("st", "st6"):
        return f"{_mem(info.op, d, off)} = {imm}"
    if k in ("stx", "stx6"):
        return f"{_mem(info.op, d, off)} = r{s}"
    if k == "atomic":
        aop = T.ATOMIC_OPS.get(imm)
        if aop is None:
            return f".insn 0x{insn.to_u64():016x}  # unknown atomic op {imm:#x}"
        width = 64 if info.op == "dw" else 32
        mem = _mem(info.op, d, off)  # "*(u64 *)(r1 - 8)"
        ptr = mem[2:-1]  # "u64 *)(r1 - 8"
        addr = mem[mem.index("(r") + 1 : -1]  # "r1 - 8"
        src = _reg(width, s)
        base = aop.removeprefix("fetch_")
        if aop == "xchg":
            return f"{src} = xchg_64({addr}, {src})" if width == 64 else f"{src} = xchg32_32({addr}, {src})"
        if aop == "cmpxchg":
            if width == 64:
                return f"r0 = cmpxchg_64({addr}, r0, {src})"
            return f"w0 = cmpxchg32_32({addr}, w0, {src})"
        if aop.startswith("fetch_"):
            return f"{src} = atomic_fetch_{base}(({ptr}), {src})"
        sym = {"add": "+", "or": "|", "and": "&", "xor": "^"}[base]
        return f"lock {mem} {sym}= {src}"
    if k == "legacy_ld":
        where = f"r{s}" if info.op == "ind" else str(imm)
        if info.op == "ind" and imm:
            where = f"r{s} + {imm}"
        return f"r0 = *(u{info.width * 8} *)skb[{where}]"
    return f".insn 0x{insn.to_u64():016x}"


def disasm_program(insns: list[Insn], maps: Sequence[str] | None = None) -> list[str]:
    """One line per instruction slot, lddw taking two slots (the second line is empty)."""
    out: list[str] = []
    i = 0
    while i < len(insns):
        ins = insns[i]
        if ins.opcode == 0x18 and i + 1 < len(insns):
            out.append(disasm(ins, insns[i + 1], maps))
            out.append("")
            i += 2
            continue
        out.append(disasm(ins))
        i += 1
    return out
