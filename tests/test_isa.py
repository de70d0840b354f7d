"""ISA table, encoder/decoder round trip, RFC 9669 coverage without collisions, disassembly of known words."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import clang
from hypothesis import given
from hypothesis import strategies as st

from hxdp.isa import table as T
from hxdp.isa.insn import Insn, IsaError, assemble, decode, disasm, disasm_program, encode


def rfc9669_opcodes() -> set[int]:
    """Every opcode RFC 9669 defines, spelled out from the RFC's tables independently of isa_table."""
    ops: set[int] = set()
    alu_ops = [0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x90, 0xA0, 0xB0, 0xC0]
    for cls in (0x04, 0x07):  # ALU, ALU64
        ops |= {op | src | cls for op in alu_ops for src in (0x00, 0x08)}
        ops.add(0x80 | cls)  # NEG (K only)
    ops |= {0xD4, 0xDC, 0xD7}  # END: to_le, to_be (ALU), bswap (ALU64)
    jmp_ops = [0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0xA0, 0xB0, 0xC0, 0xD0]
    for cls in (0x05, 0x06):  # JMP, JMP32
        ops |= {op | src | cls for op in jmp_ops for src in (0x00, 0x08)}
    ops |= {0x05, 0x85, 0x95, 0x06}  # ja, call, exit, gotol (JMP32 JA)
    ops.add(0x18)  # lddw
    ops |= {0x20, 0x28, 0x30, 0x40, 0x48, 0x50}  # legacy packet access (abs/ind w/h/b)
    ops |= {0x61, 0x69, 0x71, 0x79, 0x81, 0x89, 0x91}  # LDX MEM, MEMSX
    ops |= {0x62, 0x6A, 0x72, 0x7A}  # ST MEM
    ops |= {0x63, 0x6B, 0x73, 0x7B, 0xC3, 0xDB}  # STX MEM, ATOMIC w/dw
    return ops


def test_table_covers_rfc9669_exactly() -> None:
    assert T.RFC9669_OPCODES == rfc9669_opcodes()
    assert len(T.RFC9669_OPCODES) == 125


def test_extensions_do_not_collide() -> None:
    assert T.EXTENSION_OPCODES.isdisjoint(rfc9669_opcodes())
    assert 0xD7 not in T.EXTENSION_OPCODES  # the original design's 0xd7 is the RFC 9669 byte swap
    assert {0x96, 0x59, 0x5A, 0x52} <= T.EXTENSION_OPCODES
    assert len(set(T.BY_NAME)) == len(T.OPCODES)  # mnemonics are unique


@pytest.mark.parametrize("opcode", sorted(T.OPCODES))
def test_round_trip_every_opcode(opcode: int) -> None:
    for dst, src, off, imm in ((0, 0, 0, 0), (15, 15, -1, -1), (3, 10, 32767, -(2**31)), (10, 1, -32768, 2**31 - 1)):
        ins = Insn(opcode, dst, src, off, imm)
        assert Insn.from_u64(ins.to_u64()) == ins
        assert Insn.from_bytes(ins.to_bytes()) == ins
        assert ins.info.opcode == opcode
        assert disasm(ins)  # every table entry renders


@given(st.lists(st.tuples(st.sampled_from(sorted(T.OPCODES)), st.integers(0, 15), st.integers(0, 15),
                          st.integers(-(2**15), 2**15 - 1), st.integers(-(2**31), 2**31 - 1)), max_size=20))
def test_round_trip_programs(fields: list[tuple[int, int, int, int, int]]) -> None:
    insns = [Insn(*f) for f in fields]
    assert decode(encode(insns)) == insns


def test_field_layout() -> None:
    # design.md section 3: `r0 = 1` is bytes b7 00 00 00 01 00 00 00 and prints 00000001000000b7 in a ROM
    r0 = Insn(0xB7, dst=0, imm=1)
    assert r0.to_bytes() == bytes.fromhex("b700000001000000") and f"{r0.to_u64():016x}" == "00000001000000b7"
    assert f"{Insn(0x96, imm=1).to_u64():016x}" == "0000000100000096"
    ins = Insn.from_u64(0xFFFFFFF0_FFF8_2A_61)
    assert (ins.opcode, ins.dst, ins.src, ins.off, ins.imm) == (0x61, 0xA, 0x2, -8, -16)
    with pytest.raises(IsaError):
        decode(b"\0" * 12)
    with pytest.raises(IsaError, match="unknown opcode 0x01"):
        _ = Insn(0x01).info


KNOWN = [
    # (slot as the u64 a ROM prints, text): BPF v4 instructions in the syntax of later LLVMs, hXDP extensions
    (0x00000001000000B7, "r0 = 1"),
    (0x0000000000000095, "exit"),
    (0x0000000000000000, "nop"),
    (0x0000000200000096, "exit 2"),
    (Insn(0x8F, dst=1, src=2, imm=-17).to_u64(), "r1 = r2 + -17"),
    (Insn(0xEC, dst=12, src=2, imm=8).to_u64(), "w12 = w2 << 8"),
    (Insn(0xE4, dst=2, src=3, imm=9).to_u64(), "w2 = w3 - 9"),
    (Insn(0xE6, dst=2, src=3, imm=9).to_u64(), "w2 = w3 & 9"),
    (Insn(0xFF, dst=3, src=3, imm=0xFF).to_u64(), "r3 = r3 ^ 255"),
    (Insn(0x59, dst=1, src=2, off=250).to_u64(), "r1 = *(u48 *)(r2 + 250)"),
    (Insn(0x5A, dst=2, src=1, off=-2).to_u64(), "*(u48 *)(r2 - 2) = r1"),
    (Insn(0x52, dst=1, imm=7).to_u64(), "*(u48 *)(r1 + 0) = 7"),
    (Insn(0xBF, dst=1, src=2, off=8).to_u64(), "r1 = (s8)r2"),
    (Insn(0xBC, dst=1, src=2, off=32).to_u64(), "w1 = (s32)w2"),
    (Insn(0x3F, dst=1, src=2, off=1).to_u64(), "r1 s/= r2"),
    (Insn(0x94, dst=1, off=1, imm=-3).to_u64(), "w1 s%= -3"),
    (Insn(0x97, dst=1, imm=3).to_u64(), "r1 %= 3"),
    (Insn(0x81, dst=1, src=2, off=-8).to_u64(), "r1 = *(s32 *)(r2 - 8)"),
    (Insn(0xD7, dst=1, imm=16).to_u64(), "r1 = bswap16 r1"),
    (Insn(0x06, imm=-3).to_u64(), "gotol -3"),
    (Insn(0x45, dst=1, off=-3, imm=17).to_u64(), "if r1 & 17 goto -3"),
    (Insn(0x4E, dst=1, src=2, off=4).to_u64(), "if w1 & w2 goto +4"),
    (Insn(0x62, dst=10, off=-4, imm=0).to_u64(), "*(u32 *)(r10 - 4) = 0"),
    (Insn(0xC3, dst=1, src=2, imm=0x41).to_u64(), "w2 = atomic_fetch_or((u32 *)(r1 + 0), w2)"),
    (Insn(0x85, src=2, imm=77).to_u64(), "call 77"),
]


@pytest.mark.parametrize(("word", "text"), KNOWN)
def test_known_words(word: int, text: str) -> None:
    assert disasm(Insn.from_u64(word)) == text


def test_lddw_and_maps() -> None:
    lo, hi = Insn(0x18, dst=1, imm=-1), Insn(0, imm=-1)
    assert disasm_program([lo, hi, Insn(0x95)]) == ["r1 = -1 ll", "", "exit"]
    assert disasm(Insn(0x18, dst=1, imm=0x11), Insn(0, imm=0x22)) == "r1 = 146028888081 ll"
    assert disasm(Insn(0x18, dst=2, src=1, imm=3), Insn(0)) == "ld_pseudo\tr2, 1, 3"
    names = ["a", "b", "c", "counts"]
    assert disasm(Insn(0x18, dst=2, src=1, imm=3), Insn(0), names) == "r2 = map[counts] ll"
    assert disasm(Insn(0x18, dst=2, src=2, imm=0), Insn(0, imm=12), names) == "r2 = map[a] + 12 ll"


def _canonical(opcode: int, info: T.OpInfo) -> list[Insn]:
    """Instructions with every unused field zero, as LLVM's decoder requires."""
    k = info.kind
    if k == "atomic":
        return [Insn(opcode, dst=1, src=2, off=-8, imm=a) for a in T.ATOMIC_OPS]
    if k == "lddw":
        return [Insn(opcode, dst=1, imm=0x11), Insn(0, imm=-2)]
    if k == "alu":
        return [Insn(opcode, dst=1, src=2 if info.src_reg else 0, imm=0 if info.src_reg else -17)]
    if k == "neg":
        return [Insn(opcode, dst=1)]
    if k == "end":
        return [Insn(opcode, dst=1, imm=w) for w in (16, 32, 64)]
    if k == "jmp":
        return [Insn(opcode, dst=1, src=2 if info.src_reg else 0, off=-3, imm=0 if info.src_reg else 17)]
    if k == "ja" and info.op == "ja":
        return [Insn(opcode, off=3)]
    if k == "call":
        return [Insn(opcode, imm=1), Insn(opcode, src=1, imm=-5), Insn(opcode, src=2, imm=7)]
    if k == "exit":
        return [Insn(opcode)]
    if k == "ldx":
        return [Insn(opcode, dst=1, src=2, off=-8)]
    if k == "st":
        return [Insn(opcode, dst=1, off=-8, imm=-3)]
    if k == "stx":
        return [Insn(opcode, dst=1, src=2, off=8)]
    if k == "legacy_ld":
        return [Insn(opcode, src=2 if info.op == "ind" else 0, imm=0 if info.op == "ind" else 17)]
    return []  # BPF v4 and hXDP extensions: LLVM 14 does not know them (covered by KNOWN)


def test_disasm_matches_llvm_on_every_known_opcode(tmp_path: Path) -> None:
    cc, objdump = clang(), shutil.which("llvm-objdump") or shutil.which("llvm-objdump-14")
    if cc is None or objdump is None:
        pytest.skip("clang/llvm-objdump not installed")
    insns = [i for op, info in sorted(T.OPCODES.items()) for i in _canonical(op, info)]
    src = tmp_path / "all.s"
    src.write_text('.section xdp,"ax",@progbits\n' + "".join(f".quad 0x{i.to_u64():016x}\n" for i in insns))
    obj = tmp_path / "all.o"
    subprocess.run([cc, "-target", "bpf", "-c", str(src), "-o", str(obj)], check=True)
    ours = disasm_program(insns)
    compared = set()
    for attrs in ([], ["--mattr=+alu32"]):
        out = subprocess.run([objdump, "-d", *attrs, str(obj)], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            m = re.match(r"^\s*(\d+):\t[0-9a-f ]+\t(.*)$", line)
            if not m or m.group(2) == "<unknown>":
                continue
            slot, ref = int(m.group(1)), re.sub(r" <[A-Za-z_.][^ ]*>$", "", m.group(2))
            ins = insns[slot]
            if (ins.opcode == 0xC3) != bool(attrs):  # 32-bit atomics only decode with +alu32
                continue
            assert ours[slot] == ref, f"0x{ins.to_u64():016x}: {ours[slot]!r} != llvm-objdump {ref!r}"
            compared.add(ins.opcode)
    # every RFC 9669 opcode LLVM 14 knows was compared (it lacks jset, mod, v4 and the extensions)
    missing = T.RFC9669_OPCODES - compared
    assert all(T.OPCODES[o].op in ("jset", "mod", "gotol", "bswap") or T.OPCODES[o].kind in ("ldxsx", "st")
               for o in missing), sorted(hex(o) for o in missing)
    assert len(compared) >= 100


REGS = st.integers(0, 10)
OFFS = st.integers(-(2**15), 2**15 - 1)
IMMS = st.integers(-(2**31), 2**31 - 1)


@st.composite
def canonical_insns(draw: st.DrawFn) -> list[Insn]:
    """A random instruction of any table opcode, with the fields its syntax can express."""
    opcode = draw(st.sampled_from(sorted(T.OPCODES)))
    info = T.OPCODES[opcode]
    k, d, s, off, imm = info.kind, draw(REGS), draw(REGS), draw(OFFS), draw(IMMS)
    if k == "alu":
        signed = info.op in ("div", "mod") and draw(st.booleans())
        sx = draw(st.sampled_from([0, 8, 16, 32])) if info.op == "mov" and info.src_reg else 0
        return [Insn(opcode, d, s if info.src_reg else 0, int(signed) or sx, 0 if info.src_reg else imm)]
    if k == "alu3":
        return [Insn(opcode, d, s, 0, imm)]
    if k == "neg":
        return [Insn(opcode, d)]
    if k in ("end", "bswap"):
        return [Insn(opcode, d, imm=draw(st.sampled_from([16, 32, 64])))]
    if k == "jmp":
        return [Insn(opcode, d, s if info.src_reg else 0, off, 0 if info.src_reg else imm)]
    if k == "ja":
        return [Insn(opcode, off=off)] if info.op == "ja" else [Insn(opcode, imm=imm)]
    if k == "call":
        return [Insn(opcode, src=0, imm=imm)]
    if k == "exit":
        return [Insn(opcode)]
    if k == "exit_action":
        return [Insn(opcode, imm=imm)]
    if k == "lddw":
        return [Insn(opcode, d, imm=imm), Insn(0, imm=draw(IMMS))]
    if k in ("ldx", "ldxsx", "ldx6"):
        return [Insn(opcode, d, s, off)]
    if k in ("st", "st6"):
        return [Insn(opcode, d, 0, off, imm)]
    if k in ("stx", "stx6"):
        return [Insn(opcode, d, s, off)]
    if k == "atomic":
        aop = draw(st.sampled_from(sorted(T.ATOMIC_OPS)))
        return [Insn(opcode, d, s, off, aop)]
    assert k == "legacy_ld", k
    return [Insn(opcode, src=s, imm=imm)] if info.op == "ind" else [Insn(opcode, imm=imm)]


@given(st.lists(canonical_insns(), min_size=1, max_size=12))
def test_assemble_inverts_disasm(groups: list[list[Insn]]) -> None:
    insns = [i for g in groups for i in g]
    text = "\n".join(line for line in disasm_program(insns) if line)
    assert assemble(text) == insns


def test_assemble_extras() -> None:
    assert assemble("call local -5\ncall kfunc 9") == [Insn(0x85, src=1, imm=-5), Insn(0x85, src=2, imm=9)]
    assert assemble("r2 = map[b] + 8 ll ; value", ["a", "b"]) == [Insn(0x18, dst=2, src=2, imm=1), Insn(0, imm=8)]
    assert assemble("if r1 > r2 goto +3 <LBB0_4>\n# comment\n\nexit") == [Insn(0x2D, 1, 2, 3), Insn(0x95)]
    with pytest.raises(IsaError, match="line 2: cannot assemble 'r1 = = 2'"):
        assemble("r0 = 0\nr1 = = 2")
    with pytest.raises(IsaError, match="unknown map"):
        assemble("r1 = map[zz] ll", ["a"])
    with pytest.raises(IsaError, match="no three-operand"):
        assemble("r1 = r2 - 3")  # 0xd7 is RFC 9669 BSWAP on our core, so the 64-bit set has no sub


def test_rom_rows_carry_their_lane_count() -> None:
    """A ROM of `compile --lanes 8` reads back with 8 lanes (the rows' width), without being told."""
    from hxdp.isa.rom import Rom, RomError

    rows = [[assemble("r0 = 1")[0]] + [Insn.from_u64(0)] * 7, [assemble("exit")[0]] + [Insn.from_u64(0)] * 7]
    text = Rom(rows, lanes=8).to_text()
    back = Rom.from_text(text)
    assert back.lanes == 8 and back.rows == rows
    with pytest.raises(RomError, match="expected 64 hex digits"):
        Rom.from_text(text, lanes=4)
    with pytest.raises(RomError, match=":2: expected 128 hex digits"):
        Rom.from_text(text.splitlines()[0] + "\n" + "0" * 64 + "\n")


@pytest.mark.parametrize("row", ["+" + "0" * 63, "0x" + "0" * 62, "_" + "0" * 63, " 1".rjust(64, "0"), "0" * 63])
def test_rom_rows_are_hex_digits_only(row: str) -> None:
    from hxdp.isa.rom import Rom, RomError

    with pytest.raises(RomError):
        Rom.from_text(row + "\n")
