"""Exact eBPF (RFC 9669, v1-v4) ALU, byte-swap, jump-condition and atomic semantics, shared by every model."""

from __future__ import annotations

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def sext(value: int, bits: int) -> int:
    """Sign-extend the low `bits` of value to a Python int."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def sext64(value: int, bits: int) -> int:
    """Sign-extend the low `bits` of value to a u64 bit pattern."""
    return sext(value, bits) & M64


def imm64(imm: int) -> int:
    """The 32-bit immediate of an instruction as the 64-bit operand (sign-extended)."""
    return sext64(imm, 32)


def _sdiv(a: int, b: int) -> int:
    """Truncating signed division of Python ints (C semantics)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def alu(op: str, width: int, dst: int, src: int, off: int = 0) -> int:
    """dst OP src for ALU (width 32) or ALU64 (width 64); operands and result are u64 bit patterns.

    `src` is the second operand already resolved (a register value, or the immediate sign-extended to 64 bits).
    `off` selects the signed variants (sdiv/smod off=1) and movsx (off 8/16/32). 32-bit results are
    zero-extended into 64 bits. Division by zero gives 0; modulo by zero keeps the dividend (32-bit: its low
    32 bits zero-extended). INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0 (no trap), as in the kernel.
    """
    if width == 64:
        a, b, mask, bits = dst & M64, src & M64, M64, 64
    else:
        a, b, mask, bits = dst & M32, src & M32, M32, 32
    if op == "add":
        r = a + b
    elif op == "sub":
        r = a - b
    elif op == "mul":
        r = a * b
    elif op == "div":
        if b == 0:
            r = 0
        elif off == 1:
            r = _sdiv(sext(a, bits), sext(b, bits))
        else:
            r = a // b
    elif op == "mod":
        if b == 0:
            r = a
        elif off == 1:
            sa, sb = sext(a, bits), sext(b, bits)
            r = sa - sb * _sdiv(sa, sb)
        else:
            r = a % b
    elif op == "or":
        r = a | b
    elif op == "and":
        r = a & b
    elif op == "xor":
        r = a ^ b
    elif op == "lsh":
        r = a << (b & (bits - 1))
    elif op == "rsh":
        r = a >> (b & (bits - 1))
    elif op == "arsh":
        r = sext(a, bits) >> (b & (bits - 1))
    elif op == "mov":
        if off in (8, 16, 32) and not (width == 32 and off == 32):
            r = sext(src, off)
        else:
            r = b
    elif op == "neg":
        r = -a
    else:
        raise ValueError(f"unknown ALU operation {op!r}")
    return r & mask


def bswap(value: int, bits: int) -> int:
    """Reverse the low `bits` (16/32/64) bytes of value; the result is zero-extended."""
    n = bits // 8
    return int.from_bytes((value & ((1 << bits) - 1)).to_bytes(n, "little"), "big")


def endian(op: str, value: int, bits: int) -> int:
    """le/be (0xd4/0xdc) on this little-endian machine, and bswap (0xd7): result zero-extended to 64 bits."""
    if bits not in (16, 32, 64):
        raise ValueError(f"byte-swap width must be 16, 32 or 64, not {bits}")
    if op == "le":
        return value & ((1 << bits) - 1)
    return bswap(value, bits)  # "be" and "bswap"


def jump_taken(op: str, width: int, a: int, b: int) -> bool:
    """The condition of a conditional jump; `b` is a register value or the sign-extended immediate."""
    if width == 32:
        a &= M32
        b &= M32
    else:
        a &= M64
        b &= M64
    if op == "jeq":
        return a == b
    if op == "jne":
        return a != b
    if op == "jset":
        return (a & b) != 0
    if op == "jgt":
        return a > b
    if op == "jge":
        return a >= b
    if op == "jlt":
        return a < b
    if op == "jle":
        return a <= b
    sa, sb = sext(a, width), sext(b, width)
    if op == "jsgt":
        return sa > sb
    if op == "jsge":
        return sa >= sb
    if op == "jslt":
        return sa < sb
    if op == "jsle":
        return sa <= sb
    raise ValueError(f"unknown jump condition {op!r}")


def load_value(data: bytes, signed: bool = False) -> int:
    """A little-endian load of 1/2/4/6/8 bytes as a u64 (ldxs* sign-extends, ldx zero-extends)."""
    v = int.from_bytes(data, "little")
    return sext64(v, len(data) * 8) if signed else v


def atomic(aop: str, size: int, old: int, src: int, r0: int) -> tuple[int, int | None, int | None]:
    """One STX|ATOMIC operation on a memory word of `size` bytes (4 or 8).

    Returns (new memory value, new src register value or None, new r0 or None). 32-bit fetch results are
    zero-extended; cmpxchg compares the low 32 bits of r0 for 32-bit atomics.
    """
    mask = M32 if size == 4 else M64
    old &= mask
    s = src & mask
    base = aop.removeprefix("fetch_")
    fetch = aop.startswith("fetch_")
    if base in ("add", "or", "and", "xor"):
        new = {"add": old + s, "or": old | s, "and": old & s, "xor": old ^ s}[base] & mask
        return new, (old if fetch else None), None
    if aop == "xchg":
        return s, old, None
    if aop == "cmpxchg":
        new = s if (r0 & mask) == old else old
        return new, None, old
    raise ValueError(f"unknown atomic operation {aop!r}")
