"""Property tests of the exact eBPF ALU, jump and atomic semantics in hxdp.alu (RFC 9669 corner cases)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hxdp.models import alu

u64 = st.integers(0, alu.M64)
u32 = st.integers(0, alu.M32)
INT64_MIN = 1 << 63
INT32_MIN = 1 << 31


def s64(x: int) -> int:
    return alu.sext(x, 64)


@given(u64)
def test_div_mod_by_zero_64(a: int) -> None:
    assert alu.alu("div", 64, a, 0) == 0
    assert alu.alu("mod", 64, a, 0) == a
    assert alu.alu("div", 64, a, 0, off=1) == 0
    assert alu.alu("mod", 64, a, 0, off=1) == a


@given(u64)
def test_div_mod_by_zero_32_zero_extends(a: int) -> None:
    assert alu.alu("div", 32, a, 0) == 0
    assert alu.alu("mod", 32, a, 0) == a & alu.M32
    assert alu.alu("mod", 32, a, 1 << 32) == a & alu.M32  # only the low 32 bits of the divisor count
    assert alu.alu("mod", 32, a, 0, off=1) == a & alu.M32


def test_signed_division_overflow() -> None:
    assert alu.alu("div", 64, INT64_MIN, alu.M64, off=1) == INT64_MIN
    assert alu.alu("mod", 64, INT64_MIN, alu.M64, off=1) == 0
    assert alu.alu("div", 32, INT32_MIN, alu.M32, off=1) == INT32_MIN
    assert alu.alu("mod", 32, INT32_MIN, alu.M32, off=1) == 0


def test_signed_division_truncates_toward_zero() -> None:
    m13 = -13 & alu.M64
    assert s64(alu.alu("div", 64, m13, 3, off=1)) == -4
    assert s64(alu.alu("mod", 64, m13, 3, off=1)) == -1
    assert s64(alu.alu("mod", 64, 13, -3 & alu.M64, off=1)) == 1
    assert alu.alu("div", 32, -13 & alu.M32, 3, off=1) == -4 & alu.M32


@given(u64, u64.filter(lambda b: b != 0))
def test_signed_div_mod_identity(a: int, b: int) -> None:
    q = s64(alu.alu("div", 64, a, b, off=1))
    r = s64(alu.alu("mod", 64, a, b, off=1))
    assert (q * s64(b) + r) & alu.M64 == a
    assert abs(r) < abs(s64(b))
    assert r == 0 or (r < 0) == (s64(a) < 0)


@given(u64, u64)
def test_unsigned_div_mod(a: int, b: int) -> None:
    if b:
        assert alu.alu("div", 64, a, b) == a // b
        assert alu.alu("mod", 64, a, b) == a % b


@given(u64, u64)
def test_shift_masking(a: int, s: int) -> None:
    assert alu.alu("lsh", 64, a, s) == (a << (s & 63)) & alu.M64
    assert alu.alu("rsh", 64, a, s) == a >> (s & 63)
    assert alu.alu("lsh", 32, a, s) == ((a & alu.M32) << (s & 31)) & alu.M32
    assert alu.alu("rsh", 32, a, s) == (a & alu.M32) >> (s & 31)
    assert alu.alu("arsh", 64, a, s) == (s64(a) >> (s & 63)) & alu.M64
    assert alu.alu("arsh", 32, a, s) == (alu.sext(a, 32) >> (s & 31)) & alu.M32


@given(st.sampled_from(["add", "sub", "mul", "div", "or", "and", "lsh", "rsh", "mod", "xor", "mov", "arsh", "neg"]),
       u64, u64)
def test_32bit_results_zero_extend(op: str, a: int, b: int) -> None:
    r = alu.alu(op, 32, a, b)
    assert r >> 32 == 0
    assert r == alu.alu(op, 32, a & alu.M32, b & alu.M32)


@given(u64, u64)
def test_add_sub_mul_wrap(a: int, b: int) -> None:
    assert alu.alu("add", 64, a, b) == (a + b) & alu.M64
    assert alu.alu("sub", 64, a, b) == (a - b) & alu.M64
    assert alu.alu("mul", 64, a, b) == (a * b) & alu.M64
    assert alu.alu("neg", 64, a, 0) == -a & alu.M64


def test_immediates_sign_extend() -> None:
    assert alu.imm64(-1) == alu.M64
    assert alu.imm64(0x7FFFFFFF) == 0x7FFFFFFF
    assert alu.alu("mov", 64, 0, alu.imm64(-2)) == alu.M64 - 1
    assert alu.alu("mov", 32, 0, alu.imm64(-2)) == alu.M32 - 1
    # unsigned 64-bit division by a negative immediate divides by 2^64 - 1
    assert alu.alu("div", 64, alu.M64, alu.imm64(-1)) == 1


@given(u64)
def test_movsx(a: int) -> None:
    assert alu.alu("mov", 64, 0, a, off=8) == alu.sext64(a, 8)
    assert alu.alu("mov", 64, 0, a, off=16) == alu.sext64(a, 16)
    assert alu.alu("mov", 64, 0, a, off=32) == alu.sext64(a, 32)
    assert alu.alu("mov", 32, 0, a, off=8) == alu.sext64(a, 8) & alu.M32
    assert alu.alu("mov", 32, 0, a, off=16) == alu.sext64(a, 16) & alu.M32
    assert alu.alu("mov", 64, 0, 0x80, off=8) == 0xFFFFFFFFFFFFFF80


def test_byte_swaps() -> None:
    v = 0x1122334455667788
    assert alu.endian("be", v, 16) == 0x8877
    assert alu.endian("be", v, 32) == 0x88776655
    assert alu.endian("be", v, 64) == 0x8877665544332211
    assert alu.endian("le", v, 16) == 0x7788
    assert alu.endian("le", v, 32) == 0x55667788
    assert alu.endian("le", v, 64) == v
    assert alu.endian("bswap", v, 32) == 0x88776655


def test_load_sign_extension() -> None:
    assert alu.load_value(b"\xff", signed=True) == alu.M64
    assert alu.load_value(b"\xff", signed=False) == 0xFF
    assert alu.load_value(b"\x00\x80", signed=True) == 0xFFFFFFFFFFFF8000
    assert alu.load_value(b"\x01\x02\x03\x04\x05\x06") == 0x060504030201


@given(u64, u64)
def test_jumps(a: int, b: int) -> None:
    assert alu.jump_taken("jgt", 64, a, b) == (a > b)
    assert alu.jump_taken("jsgt", 64, a, b) == (s64(a) > s64(b))
    assert alu.jump_taken("jslt", 32, a, b) == (alu.sext(a, 32) < alu.sext(b, 32))
    assert alu.jump_taken("jle", 32, a, b) == ((a & alu.M32) <= (b & alu.M32))
    assert alu.jump_taken("jset", 64, a, b) == bool(a & b)
    assert alu.jump_taken("jeq", 32, a, b) == ((a ^ b) & alu.M32 == 0)


def test_jump_immediate_sign_extends() -> None:
    assert alu.jump_taken("jeq", 64, alu.M64, alu.imm64(-1))
    assert not alu.jump_taken("jeq", 64, alu.M32, alu.imm64(-1))
    assert alu.jump_taken("jeq", 32, alu.M32, alu.imm64(-1))


@given(u64, u64, u64)
def test_atomics(old: int, src: int, r0: int) -> None:
    assert alu.atomic("add", 8, old, src, r0) == ((old + src) & alu.M64, None, None)
    assert alu.atomic("fetch_add", 4, old, src, r0) == ((old + src) & alu.M32, old & alu.M32, None)
    assert alu.atomic("fetch_xor", 8, old, src, r0) == (old ^ src, old, None)
    assert alu.atomic("xchg", 4, old, src, r0) == (src & alu.M32, old & alu.M32, None)
    new, s, r = alu.atomic("cmpxchg", 8, old, src, r0)
    assert r == old and s is None and new == (src if r0 == old else old)
    new, _, r = alu.atomic("cmpxchg", 4, old, src, old | (1 << 40))  # compares the low 32 bits only
    assert new == src & alu.M32 and r == old & alu.M32
