"""Write the ISA case files (uBPF style) of this folder; expected values come from plain Python arithmetic here.

Run `python tests/isa_cases/make_cases.py` after changing it; the generated *.data files are committed.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
M64 = (1 << 64) - 1

VALUES = [
    (0x0123456789ABCDEF, 0x0000000000000003),
    (0xFFFFFFFF80000000, 0xFFFFFFFFFFFFFFFF),
    (0x8000000000000000, 0x0000000000000007),
    (0x00000000FFFFFFF9, 0xFFFFFFFF00000002),
    (0x7FFFFFFFFFFFFFFF, 0x0000000000000000),
]
IMMS = [3, -1, -7, 0x7FFFFFFF, 0]


def sx(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def alu(op: str, w: int, a: int, b: int, signed: bool = False) -> int | None:
    m = (1 << w) - 1
    a &= m
    b &= m
    if op == "+=":
        r = a + b
    elif op == "-=":
        r = a - b
    elif op == "*=":
        r = a * b
    elif op == "/=":
        if b == 0:
            r = 0
        elif signed:
            r = tdiv(sx(a, w), sx(b, w))
        else:
            r = a // b
    elif op == "%=":
        if b == 0:
            r = a
        elif signed:
            sa, sb = sx(a, w), sx(b, w)
            r = sa - sb * tdiv(sa, sb)
        else:
            r = a % b
    elif op == "|=":
        r = a | b
    elif op == "&=":
        r = a & b
    elif op == "^=":
        r = a ^ b
    elif op == "<<=":
        r = a << (b % w)
    elif op == ">>=":
        r = a >> (b % w)
    elif op == "s>>=":
        r = sx(a, w) >> (b % w)
    elif op == "=":
        r = b
    else:
        return None
    return r & m


def write(name: str, asm: list[str], result: int, mem: bytes = b"", cycles: int | None = None) -> None:
    text = "-- asm\n" + "\n".join(asm) + "\n"
    if mem:
        text += "-- mem\n" + " ".join(f"{b:02x}" for b in mem) + "\n"
    text += f"-- result\n0x{result & M64:x}\n"
    if cycles is not None:
        text += f"-- cycles\n{cycles}\n"
    (HERE / f"{name}.data").write_text(text)


def lddw(reg: int, v: int) -> str:
    v &= M64
    return f"r{reg} = {v if v < (1 << 63) else v - (1 << 64)} ll"


def main() -> None:
    for f in HERE.glob("*.data"):
        f.unlink()
    ops = {"add": "+=", "sub": "-=", "mul": "*=", "div": "/=", "mod": "%=", "or": "|=", "and": "&=", "lsh": "<<=",
           "rsh": ">>=", "xor": "^=", "mov": "=", "arsh": "s>>="}
    for name, sym in ops.items():
        for w in (64, 32):
            rr = "r" if w == 64 else "w"
            asm, exp = [], 0
            for i, (a, b) in enumerate(VALUES):  # register operand
                if sym in ("<<=", ">>=", "s>>=") and i == 0:
                    b = 61
                asm += [lddw(3, a), lddw(4, b), f"{rr}3 {sym} {rr}4", "r0 ^= r3" if i else "r0 = r3"]
                if i:
                    exp ^= alu(sym, w, a, b)
                else:
                    exp = alu(sym, w, a, b)
            asm.append("exit")
            write(f"alu{w}_{name}_x", asm, exp)
            asm, exp = [], 0
            for i, ((a, _b), k) in enumerate(zip(VALUES, IMMS, strict=True)):  # immediate operand
                if sym in ("<<=", ">>=", "s>>=") and k < 0:
                    k = 13 + i
                asm += [lddw(3, a), f"{rr}3 {sym} {k}", "r0 ^= r3" if i else "r0 = r3"]
                v = alu(sym, w, a, k & M64)
                exp = v if i == 0 else exp ^ v
            asm.append("exit")
            write(f"alu{w}_{name}_k", asm, exp)
    for sym, name in (("s/=", "sdiv"), ("s%=", "smod")):
        for w in (64, 32):
            rr = "r" if w == 64 else "w"
            asm, exp = [], 0
            pairs = VALUES + [(1 << (w - 1), M64), (-17 & M64, 5), (17, -5 & M64)]
            for i, (a, b) in enumerate(pairs):
                asm += [lddw(3, a), lddw(4, b), f"{rr}3 {sym} {rr}4", "r0 ^= r3" if i else "r0 = r3"]
                v = alu(sym[1:], w, a, b, signed=True)
                exp = v if i == 0 else exp ^ v
            for k in (-3, 7):
                asm += [lddw(3, -100), f"{rr}3 {sym} {k}", "r0 ^= r3"]
                exp ^= alu(sym[1:], w, -100 & M64, k & M64, signed=True)
            asm.append("exit")
            write(f"alu{w}_{name}", asm, exp)
    for w in (64, 32):
        rr = "r" if w == 64 else "w"
        asm, exp = [], 0
        for bits in ((8, 16, 32) if w == 64 else (8, 16)):
            v = 0x1234_5678_9ABC_DEF0 if bits != 16 else 0x0000_0000_0000_8001
            asm += [lddw(3, v), f"{rr}4 = (s{bits}){rr}3", "r0 ^= r4"]
            exp ^= sx(v, bits) & ((1 << w) - 1)
        asm.append("exit")
        write(f"alu{w}_movsx", asm, exp)
        asm = [lddw(0, 0x0000_0001_0000_0005), f"{rr}0 = -{rr}0", "exit"]
        write(f"alu{w}_neg", asm, (-0x0000_0001_0000_0005) & ((1 << w) - 1))
    v = 0x0102_0304_0506_0708
    for op in ("le", "be", "bswap"):
        asm, exp = [], 0
        for bits in (16, 32, 64):
            asm += [lddw(3, v), f"r3 = {op}{bits} r3", f"r0 {'^=' if bits > 16 else '='} r3"]
            low = v & ((1 << bits) - 1)
            r = low if op == "le" else int.from_bytes(low.to_bytes(bits // 8, "little"), "big")
            exp = r if bits == 16 else exp ^ r
        asm.append("exit")
        write(f"end_{op}", asm, exp)
    conds = {"jeq": "==", "jgt": ">", "jge": ">=", "jset": "&", "jne": "!=", "jsgt": "s>", "jsge": "s>=",
             "jlt": "<", "jle": "<=", "jslt": "s<", "jsle": "s<="}

    def cond(c: str, w: int, a: int, b: int) -> bool:
        m = (1 << w) - 1
        a &= m
        b &= m
        sa, sb = sx(a, w), sx(b, w)
        return {"==": a == b, ">": a > b, ">=": a >= b, "&": bool(a & b), "!=": a != b, "s>": sa > sb,
                "s>=": sa >= sb, "<": a < b, "<=": a <= b, "s<": sa < sb, "s<=": sa <= sb}[c]

    jpairs = [(5, 5), (3, 9), (9, 3), (-2 & M64, 1), (1, -2 & M64), (0x1_0000_0001, 1), (0, 0)]
    for name, c in conds.items():
        for w in (64, 32):
            rr = "r" if w == 64 else "w"
            for form in ("x", "k"):
                asm, exp = ["r0 = 0"], 0
                for i, (a, b) in enumerate(jpairs):
                    rhs = f"{rr}4" if form == "x" else str(sx(b, 32))
                    bb = b if form == "x" else sx(b, 32) & M64
                    asm += [lddw(3, a), lddw(4, b), f"if {rr}3 {c} {rhs} goto +1", "goto +1", f"r0 |= {1 << i}"]
                    if cond(c, w, a, bb):
                        exp |= 1 << i
                asm.append("exit")
                write(f"jmp{w}_{name}_{form}", asm, exp)
    # cycles (contract section 6, one instruction per row): a row 1, a taken conditional branch 1 more; an
    # unconditional jump first in its row is folded into the fetch (no more)
    write("jmp_ja", ["r0 = 1", "goto +1", "r0 = 2", "exit"], 1, cycles=3)
    write("jmp_gotol", ["r0 = 1", "gotol +1", "r0 = 2", "exit"], 1, cycles=3)
    write("jmp_cond_taken", ["r0 = 1", "if r0 == 1 goto +1", "r0 = 2", "exit"], 1, cycles=4)
    # a jump to the next row: no discarded fetch, no penalty
    write("jmp_next_row", ["r0 = 1", "if r0 == 1 goto +0", "goto +0", "exit"], 1, cycles=4)
    write("jmp_loop", ["r0 = 0", "r3 = 10", "r0 += r3", "r3 += -1", "if r3 != 0 goto -3", "exit"], 55,
          cycles=2 + 9 * 4 + 3 + 1)
    write("call_smp_id", ["r0 = 7", "call 8", "exit"], 0, cycles=3)
    write("exit_plain", ["r0 = 3", "exit"], 3, cycles=2)
    write("exit_action", ["exit 4"], 4, cycles=1)
    # a division row costs DIV_EXTRA_CYCLES = 16 more, whatever its operands (x / 0 too)
    write("div_cycles", ["r0 = 100", "r0 /= 7", "exit"], 14, cycles=1 + (1 + 16) + 1)
    write("mod_zero_cycles", ["r0 = 100", "r0 %= r3", "exit"], 100, cycles=1 + (1 + 16) + 1)
    write("sdiv32_cycles", ["w0 = -100", "w0 s/= 7", "exit"], (-14) & 0xFFFFFFFF, cycles=1 + (1 + 16) + 1)
    write("lddw", [lddw(0, 0x1122_3344_5566_7788), lddw(3, -2), "r0 ^= r3", "exit"], 0x1122_3344_5566_7788 ^ M64 ^ 1)
    mem = bytes([0x81, 0x92, 0xA3, 0xB4, 0xC5, 0xD6, 0xE7, 0xF8, 0x09, 0x1A, 0x2B, 0x3C, 0x4D, 0x5E, 0x6F, 0x70])
    for sz, n in (("8", 1), ("16", 2), ("32", 4), ("64", 8), ("48", 6)):
        v = int.from_bytes(mem[3 : 3 + n], "little")
        write(f"ldx_u{sz}", [f"r0 = *(u{sz} *)(r1 + 3)", "exit"], v, mem)
        if sz in ("8", "16", "32"):
            write(f"ldx_s{sz}", [f"r0 = *(s{sz} *)(r1 + 3)", "exit"], sx(v, 8 * n) & M64, mem)
        st_v = 0x1122_3344_5566_7788
        write(f"stx_u{sz}", [lddw(3, st_v), f"*(u{sz} *)(r1 + 5) = r3", "r0 = *(u64 *)(r1 + 4)", "exit"],
              int.from_bytes(mem[4:5] + st_v.to_bytes(8, "little")[:n] + mem[5 + n : 12], "little"), mem)
        write(f"st_u{sz}", [f"*(u{sz} *)(r1 + 5) = -3", "r0 = *(u64 *)(r1 + 4)", "exit"],
              int.from_bytes(mem[4:5] + (-3 & M64).to_bytes(8, "little")[:n] + mem[5 + n : 12], "little"), mem)
    write("stack_zero", ["r0 = *(u64 *)(r10 - 8)", "r3 = *(u64 *)(r10 - 512)", "r0 |= r3", "exit"], 0)
    write("stack_rw", [lddw(3, 0x0102030405060708), "*(u64 *)(r10 - 16) = r3", "*(u8 *)(r10 - 13) = 255",
                       "r0 = *(u32 *)(r10 - 14)", "exit"], 0x0304FF06)
    base, src = 0x0000_0000_F0F0_00FF, 0x1234_5678_8765_4321
    for w in (64, 32):
        m = (1 << w) - 1
        rr = "r" if w == 64 else "w"
        for op, sym in (("add", "+"), ("or", "|"), ("and", "&"), ("xor", "^")):
            new = {"+": base + src, "|": base | src, "&": base & src, "^": base ^ src}[sym] & m
            write(f"atomic{w}_{op}", [lddw(3, base), lddw(4, src), f"*(u{w} *)(r10 - 8) = r3",
                                      f"lock *(u{w} *)(r10 - 8) {sym}= {rr}4", f"r0 = *(u{w} *)(r10 - 8)", "exit"],
                  new)
            write(f"atomic{w}_fetch_{op}", [lddw(3, base), lddw(4, src), f"*(u{w} *)(r10 - 8) = r3",
                                            f"{rr}4 = atomic_fetch_{op}((u{w} *)(r10 - 8), {rr}4)",
                                            f"r0 = *(u{w} *)(r10 - 8)", "r0 <<= 8", "r0 ^= r4", "exit"],
                  ((new << 8) & M64) ^ (base & m))
        xn = "_64" if w == 64 else "32_32"
        write(f"atomic{w}_xchg", [lddw(3, base), lddw(4, src), f"*(u{w} *)(r10 - 8) = r3",
                                  f"{rr}4 = xchg{xn}(r10 - 8, {rr}4)", f"r0 = *(u{w} *)(r10 - 8)", "r0 <<= 4",
                                  "r0 ^= r4", "exit"], (((src & m) << 4) & M64) ^ (base & m))
        for hit in (True, False):
            r0v = base if hit else base + 1
            write(f"atomic{w}_cmpxchg_{'hit' if hit else 'miss'}",
                  [lddw(3, base), lddw(4, src), lddw(0, r0v), f"*(u{w} *)(r10 - 8) = r3",
                   f"{rr}0 = cmpxchg{xn}(r10 - 8, {rr}0, {rr}4)", f"r3 = *(u{w} *)(r10 - 8)", "r3 <<= 4",
                   "r0 ^= r3", "exit"],
                  (base & m) ^ ((((src if hit else base) & m) << 4) & M64))
    # csum_diff (helper 28): ones' complement sums, folded to 16 bits (Linux >= 6.13)
    def ones(data: bytes, seed: int) -> int:
        total = seed + sum(int.from_bytes(data[i : i + 4].ljust(4, b"\0"), "little") for i in range(0, len(data), 4))
        return 0 if total == 0 else (total - 1) % 0xFFFFFFFF + 1

    def fold(v: int) -> int:
        v &= 0xFFFFFFFF
        return ((v + (((v & 0xFFFF) << 16) | (v >> 16))) & 0xFFFFFFFF) >> 16

    cmem = bytes((7 * i + 3) & 0xFF for i in range(64))
    for fsz, tsz in ((20, 12), (0, 16), (8, 0), (4, 4), (12, 28), (0, 0)):
        f, t = cmem[:fsz], cmem[20 : 20 + tsz]
        seed = 0x1234
        if fsz and tsz:
            a, b = ones(t, seed), ones(f, 0)
            r = a + (~b & 0xFFFFFFFF)
            exp = fold((r & 0xFFFFFFFF) + (r >> 32))
        elif tsz:
            exp = fold(ones(t, seed))
        elif fsz:
            exp = fold(~ones(f, ~seed & 0xFFFFFFFF))
        else:
            exp = fold(seed)
        write(f"call_csum_diff_{fsz}_{tsz}", ["r6 = r1", f"r2 = {fsz}", "r3 = r6", "r3 += 20", f"r4 = {tsz}",
                                              f"r5 = {seed}", "call 28", "exit"], exp, cmem,
              cycles=8 + 1 + (fsz + tsz + 7) // 8)
    # three-operand extensions
    for w, names in ((64, ("add", "and", "lsh", "rsh", "or", "xor")),
                     (32, ("add", "sub", "lsh", "rsh", "and", "or", "xor"))):
        rr = "r" if w == 64 else "w"
        sym = {"add": "+", "sub": "-", "and": "&", "lsh": "<<", "rsh": ">>", "or": "|", "xor": "^"}
        for n in names:
            k = 5 if n in ("lsh", "rsh") else -77
            a = 0x8765_4321_0FED_CBA9
            write(f"alu3_{w}_{n}", [lddw(3, a), f"{rr}0 = {rr}3 {sym[n]} {k}", "exit"],
                  alu(sym[n] + "=", w, a, k & M64))


if __name__ == "__main__":
    main()
