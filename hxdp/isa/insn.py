"""Encoder, decoder and disassembler for eBPF and hXDP instructions, driven by isa_table."""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass, replace

from hxdp.isa import table as T


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


# --- assembler: the inverse of disasm (llvm-objdump syntax plus the hXDP extensions) ---------------------------


class AsmError(IsaError):
    """A line of assembly that does not parse."""


_CMP = {sym: op for op, (_code, sym) in T.JMP_OPS.items()}
_ALU_SYM = {sym: op for op, (_code, sym) in T.ALU_OPS.items()}
_ALU3_SYM = {"+": "add", "-": "sub", "&": "and", "<<": "lsh", ">>": "rsh", "|": "or", "^": "xor"}
_ATOMIC_SYM = {"+": "add", "|": "or", "&": "and", "^": "xor"}
_MEMSIZE = {"8": "b", "16": "h", "32": "w", "64": "dw", "48": "6"}
_REG = r"([rw])(\d+)"
_MEMREF = r"\(r(\d+) ([+-]) (\d+)\)"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [(name, re.compile(rx)) for name, rx in (
    ("nop", r"nop"),
    ("raw", r"\.insn (0x[0-9a-fA-F]+)"),
    ("exit", r"exit(?: (-?\w+))?"),
    ("goto", r"goto ([+-]?\d+)"),
    ("gotol", r"gotol ([+-]?\d+)"),
    ("call", r"call (?:(local|kfunc) )?(-?\w+)"),
    ("jmp", rf"if {_REG} (==|!=|>=|>|<=|<|s>=|s>|s<=|s<|&) (\S+) goto ([+-]?\d+)"),
    ("lddw_map", r"r(\d+) = map\[(.+?)\](?: \+ (\d+))? ll"),
    ("lddw", r"r(\d+) = (-?\w+) ll"),
    ("ld_pseudo", r"ld_pseudo\s+r(\d+), (\d+), (-?\w+)"),
    ("end", r"r(\d+) = (le|be|bswap)(16|32|64) r(\d+)"),
    ("neg", rf"{_REG} = -{_REG}"),
    ("movsx", rf"{_REG} = \(s(8|16|32)\){_REG}"),
    ("ldx", rf"{_REG} = \*\(([us])(8|16|32|48|64) \*\){_MEMREF}"),
    ("store", rf"\*\(u(8|16|32|48|64) \*\){_MEMREF} = (\S+)"),
    ("lock", rf"lock \*\(u(32|64) \*\){_MEMREF} ([+|&^])= {_REG}"),
    ("fetch", rf"{_REG} = atomic_fetch_(add|or|and|xor)\(\(u(32|64) \*\){_MEMREF}, {_REG}\)"),
    ("xchg", rf"{_REG} = xchg(_64|32_32)\(r(\d+) ([+-]) (\d+), {_REG}\)"),
    ("cmpxchg", rf"[rw]0 = cmpxchg(_64|32_32)\(r(\d+) ([+-]) (\d+), [rw]0, {_REG}\)"),
    ("legacy", r"r0 = \*\(u(8|16|32) \*\)skb\[(?:r(\d+))?(?: \+ )?(-?\d+)?\]"),
    ("alu3", rf"{_REG} = {_REG} (\+|-|&|<<|>>|\||\^) (-?\w+)"),
    ("alu", rf"{_REG} (s/=|s%=|s>>=|<<=|>>=|[-+*/|&%^]=|=) (\S+)"),
)]


def _int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise AsmError(f"not a number: {text!r}") from None


def _mem_off(sign: str, num: str) -> int:
    return -int(num) if sign == "-" else int(num)


def _reg_num(text: str) -> int:
    n = int(text)
    if n > 15:
        raise AsmError(f"no register {n}")
    return n


def assemble_line(line: str, maps: Sequence[str] | None = None) -> list[Insn]:
    """One instruction in disasm's syntax -> its slots (two for lddw). `call local N` / `call kfunc N` select
    the call's src (disasm prints all calls as `call N`, like llvm-objdump)."""
    text = line.split(";", 1)[0].split("#", 1)[0].strip()
    text = re.sub(r"\s+<[^<>]*>$", "", text)  # jump annotations such as <row 3> or <LBB0_2>
    for kind, rx in _PATTERNS:
        m = rx.fullmatch(text)
        if m:
            return _build(kind, m.groups(), maps, text)
    raise AsmError(f"cannot assemble {line.strip()!r}")


def _build(kind: str, g: tuple, maps: Sequence[str] | None, text: str) -> list[Insn]:  # noqa: C901
    op = T.BY_NAME
    if kind == "nop":
        return [NOP]
    if kind == "raw":
        return [Insn.from_u64(int(g[0], 16))]
    if kind == "exit":
        return [Insn(T.EXT_EXIT_ACTION, imm=_int(g[0]))] if g[0] is not None else [Insn(op["exit"].opcode)]
    if kind == "goto":
        return [Insn(op["ja"].opcode, off=_int(g[0]))]
    if kind == "gotol":
        return [Insn(op["gotol"].opcode, imm=_int(g[0]))]
    if kind == "call":
        src = {None: T.CALL_HELPER, "local": T.CALL_LOCAL, "kfunc": T.CALL_KFUNC}[g[0]]
        return [Insn(op["call"].opcode, src=src, imm=_int(g[1]))]
    if kind == "jmp":
        width = 32 if g[0] == "w" else 64
        rhs = re.fullmatch(_REG, g[3])
        name = f"{_CMP[g[2]]}{width}_{'x' if rhs else 'k'}"
        if rhs:
            return [Insn(op[name].opcode, dst=_reg_num(g[1]), src=_reg_num(rhs.group(2)), off=_int(g[4]))]
        return [Insn(op[name].opcode, dst=_reg_num(g[1]), off=_int(g[4]), imm=_int(g[3]))]
    if kind in ("lddw", "lddw_map", "ld_pseudo"):
        dst = _reg_num(g[0])
        if kind == "lddw":
            value = _int(g[1]) & ((1 << 64) - 1)
            return [Insn(0x18, dst=dst, imm=s32(value)), Insn(0, imm=s32(value >> 32))]
        if kind == "ld_pseudo":
            return [Insn(0x18, dst=dst, src=_int(g[1]), imm=_int(g[2])), Insn(0)]
        if maps is None or g[1] not in maps:
            raise AsmError(f"unknown map {g[1]!r} in {text!r}")
        src = T.PSEUDO_MAP_VALUE if g[2] is not None else T.PSEUDO_MAP_FD
        return [Insn(0x18, dst=dst, src=src, imm=list(maps).index(g[1])), Insn(0, imm=_int(g[2] or "0"))]
    if kind == "end":
        if g[0] != g[3]:
            raise AsmError(f"byte swap must name one register: {text!r}")
        return [Insn(op["bswap" if g[1] == "bswap" else g[1]].opcode, dst=_reg_num(g[0]), imm=int(g[2]))]
    if kind == "neg":
        return [Insn(op[f"neg{32 if g[0] == 'w' else 64}"].opcode, dst=_reg_num(g[1]))]
    if kind == "movsx":
        width = 32 if g[0] == "w" else 64
        return [Insn(op[f"mov{width}_x"].opcode, dst=_reg_num(g[1]), src=_reg_num(g[4]), off=int(g[2]))]
    if kind == "ldx":
        size = _MEMSIZE[g[3]]
        name = "ldx6" if size == "6" else (f"ldxs{size}" if g[2] == "s" else f"ldx{size}")
        return [Insn(op[name].opcode, dst=_reg_num(g[1]), src=_reg_num(g[4]), off=_mem_off(g[5], g[6]))]
    if kind == "store":
        size, dst, off = _MEMSIZE[g[0]], _reg_num(g[1]), _mem_off(g[2], g[3])
        rhs = re.fullmatch(_REG, g[4])
        if rhs:
            return [Insn(op["stx6" if size == "6" else f"stx{size}"].opcode, dst=dst, src=_reg_num(rhs.group(2)),
                         off=off)]
        return [Insn(op["st6" if size == "6" else f"st{size}"].opcode, dst=dst, off=off, imm=_int(g[4]))]
    if kind == "lock":
        aop = {v: k for k, v in T.ATOMIC_OPS.items()}[_ATOMIC_SYM[g[4]]]
        return [Insn(op["atomicdw" if g[0] == "64" else "atomicw"].opcode, dst=_reg_num(g[1]),
                     src=_reg_num(g[6]), off=_mem_off(g[2], g[3]), imm=aop)]
    if kind == "fetch":
        aop = {v: k for k, v in T.ATOMIC_OPS.items()}["fetch_" + g[2]]
        return [Insn(op["atomicdw" if g[3] == "64" else "atomicw"].opcode, dst=_reg_num(g[4]),
                     src=_reg_num(g[1]), off=_mem_off(g[5], g[6]), imm=aop)]
    if kind == "xchg":
        return [Insn(op["atomicdw" if g[2] == "_64" else "atomicw"].opcode, dst=_reg_num(g[3]),
                     src=_reg_num(g[1]), off=_mem_off(g[4], g[5]), imm=0xE1)]
    if kind == "cmpxchg":
        return [Insn(op["atomicdw" if g[0] == "_64" else "atomicw"].opcode, dst=_reg_num(g[1]),
                     src=_reg_num(g[5]), off=_mem_off(g[2], g[3]), imm=0xF1)]
    if kind == "legacy":
        size = _MEMSIZE[g[0]]
        if g[1] is not None:
            return [Insn(op[f"ldind{size}"].opcode, src=_reg_num(g[1]), imm=_int(g[2] or "0"))]
        return [Insn(op[f"ldabs{size}"].opcode, imm=_int(g[2] or "0"))]
    if kind == "alu3":
        width = 32 if g[0] == "w" else 64
        name = f"{_ALU3_SYM[g[4]]}{width}_3"
        if name not in op:
            raise AsmError(f"no three-operand {_ALU3_SYM[g[4]]} at {width} bits: {text!r}")
        return [Insn(op[name].opcode, dst=_reg_num(g[1]), src=_reg_num(g[3]), imm=_int(g[5]))]
    # alu
    width = 32 if g[0] == "w" else 64
    sym, rhs_text = g[2], g[3]
    signed = sym in ("s/=", "s%=")
    aop = _ALU_SYM[sym[1:] if signed else sym]
    rhs = re.fullmatch(_REG, rhs_text)
    name = f"{aop}{width}_{'x' if rhs else 'k'}"
    if rhs:
        return [Insn(op[name].opcode, dst=_reg_num(g[1]), src=_reg_num(rhs.group(2)), off=int(signed))]
    return [Insn(op[name].opcode, dst=_reg_num(g[1]), off=int(signed), imm=_int(rhs_text))]


def assemble(text: str, maps: Sequence[str] | None = None) -> list[Insn]:
    """Assemble a program, one instruction per line (blank lines and `;`/`#` comments ignored)."""
    out: list[Insn] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        body = line.strip()
        if not body or body.startswith((";", "#")):
            continue
        try:
            out += assemble_line(body, maps)
        except AsmError as exc:
            raise AsmError(f"line {lineno}: {exc}") from None
    return out
