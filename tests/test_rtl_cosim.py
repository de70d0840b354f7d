"""Co-simulation: the RTL's per-row trace equals the VLIW model's (registers, stores, next row, cycles)."""

from __future__ import annotations

import random

import pytest
from isa_case_files import all_cases
from rtl_support import assert_rtl_equals_model, first_divergence, require_rtl
from test_vliwmodel import fold_rows

from hxdp import params
from hxdp.isa import table as T
from hxdp.isa.insn import NOP, Insn, assemble_line
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.vliw import VliwModel
from hxdp.raw import sequential_rom
from hxdp.rtl.sim import RtlSim

pytestmark = pytest.mark.rtl

DST_POOL = [0, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15]  # r1 holds the packet pointer, r10 is read-only
ALU = ["+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "<<=", ">>=", "s>>=", "=", "s/=", "s%="]
CONDS = ["==", "!=", ">", ">=", "<", "<=", "s>", "s>=", "s<", "s<=", "&"]
SIZES = [8, 16, 32, 64]


def _asm(text: str) -> list[Insn]:
    return assemble_line(text)


def random_rom(rng: random.Random, nrows: int) -> Rom:
    """A valid random ROM: row 0 loads the packet pointer, ALU/stack/packet rows, forward branches, exit."""
    rows: list[list[Insn]] = [[_asm("r1 = *(u32 *)(r1 + 0)")[0], *_asm("r2 = 0x1122334455667788 ll"), NOP],
                              [_asm(f"r{r} = *(u64 *)(r1 + {8 * k})")[0] for k, r in enumerate((3, 4))] + [NOP, NOP],
                              [_asm(f"r{r} = *(u64 *)(r1 + {8 * k})")[0] for k, r in enumerate((5, 6), 2)] + [NOP, NOP]]
    for ri in range(3, nrows - 1):
        row = [NOP] * 4
        dsts = rng.sample(DST_POOL, 4)
        slots = rng.sample(range(1, 64), 4)  # distinct 8-byte stack slots: stores of a row never overlap
        atomic_row = rng.random() < 0.1
        alane = rng.randrange(4)  # the atomic's lane (the core's one read-modify-write unit serves any lane)
        lane = 0
        pkt_loads = 0  # at most PKT_LOAD_PORTS per row (execution contract)
        while lane < 4:
            kind = rng.choice(["alu", "alu", "alu", "ld", "st", "pkt", "br", "lddw", "nop"])
            d, s = dsts[lane], rng.randrange(16)
            w = rng.choice(["r", "w"])
            if atomic_row and lane == alane:
                op = rng.choice(["lock *(u64 *)(r10 - {o}) += r{s}",
                                 "r{d} = atomic_fetch_xor((u64 *)(r10 - {o}), r{d})",
                                 "w{d} = xchg32_32(r10 - {o}, w{d})", "w0 = cmpxchg32_32(r10 - {o}, w0, w{s})"])
                if "cmpxchg" in op and 0 in dsts[:alane] + dsts[alane + 1:]:
                    op = "lock *(u64 *)(r10 - {o}) += r{s}"
                row[alane] = _asm(op.format(o=8 * slots[0], s=s, d=d))[0]
                lane += 1
                continue
            if kind == "alu":
                op = rng.choice(ALU)
                rhs = f"{w}{s}" if rng.random() < 0.6 else str(rng.choice([0, 1, 3, 31, 63, -1, -77, 0x7FFFFFFF]))
                if op in ("<<=", ">>=", "s>>=") and not rhs.startswith(("r", "w")):
                    rhs = str(rng.randrange(32))
                row[lane] = _asm(f"{w}{d} {op} {rhs}")[0]
            elif kind == "ld" and not atomic_row:
                size = rng.choice(SIZES)
                sx = "s" if size < 64 and rng.random() < 0.3 else "u"
                row[lane] = _asm(f"r{d} = *({sx}{size} *)(r10 - {8 * slots[lane]})")[0]
            elif kind == "st" and not atomic_row:
                size = rng.choice(SIZES)
                rhs = f"r{s}" if rng.random() < 0.7 else str(rng.randrange(-1000, 1000))
                row[lane] = _asm(f"*(u{size} *)(r10 - {8 * slots[lane]}) = {rhs}")[0]
            elif kind == "pkt" and not atomic_row and pkt_loads < params.PKT_LOAD_PORTS:
                pkt_loads += 1
                size = rng.choice(SIZES + [48])
                row[lane] = _asm(f"r{d} = *(u{size} *)(r1 + {rng.randrange(0, 48)})")[0]
            elif kind == "br":
                target = rng.randrange(ri + 1, nrows)
                rhs = f"{w}{s}" if rng.random() < 0.5 else str(rng.randrange(-5, 50))
                row[lane] = _asm(f"if {w}{d} {rng.choice(CONDS)} {rhs} goto +{target - ri - 1}")[0]
            elif kind == "lddw" and lane < 3 and not (atomic_row and lane + 1 == alane):
                lo, hi = _asm(f"r{d} = {rng.randrange(-(1 << 63), 1 << 63)} ll")
                row[lane], row[lane + 1] = lo, hi
                lane += 1
            lane += 1
        rows.append(row)
    rows.append([_asm("exit")[0], NOP, NOP, NOP] if rng.random() < 0.5 else [_asm("exit 2")[0], NOP, NOP, NOP])
    return Rom(rows)


def _check(rom: Rom, packets: list[bytes], what: str) -> None:
    assert_rtl_equals_model(rom, packets, what)


@pytest.fixture(scope="module", autouse=True)
def _rtl() -> None:
    require_rtl()


@pytest.mark.parametrize("seed", range(30))
def test_random_roms(seed: int) -> None:
    rng = random.Random(seed)
    rom = random_rom(rng, rng.randrange(5, 16))
    packets = [bytes(rng.randrange(256) for _ in range(rng.randrange(64, 200))) for _ in range(3)]
    _check(rom, packets, f"seed {seed}")


def test_folded_jump_cycles() -> None:
    """An unconditional jump first among its row's branches costs no bubble on the RTL either; behind a
    conditional lane it does (test_vliwmodel.fold_rows)."""
    for first in (True, False):
        got = assert_rtl_equals_model(Rom(fold_rows(first)), [bytes(64)], f"first={first}")
        assert got[0].cycles == (3 if first else 4)


def test_case_roms_trace() -> None:
    """Every ISA case's sequential ROM, raw mode: RTL trace == model trace."""
    for case in all_cases():
        if case.error:
            continue
        rom = sequential_rom(case.insns)
        sim = RtlSim(rom, trace=True)
        res = sim._run([case.mem], raw=True)[0]
        vm = VliwModel(rom, MapState(MapLayout.from_maps([])), trace=True)
        vm.mem.reset(case.mem)
        regs = vm._start()
        regs[1], regs[2] = vm.mem.data, len(case.mem)
        _r0, _fault, cycles, trace = vm._execute(regs)
        div = first_divergence(res.trace, trace)
        assert div is None, f"{case.name}: {div}"
        assert res.cycles == cycles, case.name


def test_divergence_is_reported_with_row_and_lane() -> None:
    rom = random_rom(random.Random(1), 6)
    pkt = bytes(range(64))
    good = VliwModel(rom, MapState(MapLayout.from_maps([])), trace=True).run(pkt).trace
    bad = [type(r)(r.row, [(lane, reg, v ^ 1) for lane, reg, v in r.regs], r.mem, r.next, r.cycles) for r in good]
    msg = first_divergence(bad, good)
    assert msg is not None and "row 0 lane 0" in msg


def test_extension_opcodes_cosim() -> None:
    ext = sorted(o for o, i in T.OPCODES.items() if i.extension)
    assert ext  # covered by the ISA cases through the sequential ROMs; here all in one ROM with 4 lanes per row
    rom = Rom([
        [*_asm("r1 = *(u32 *)(r1 + 0)"), *_asm("r3 = 0x0123456789abcdef ll"), NOP],
        [_asm("r4 = *(u48 *)(r1 + 2)")[0], _asm("*(u48 *)(r10 - 16) = r3")[0], _asm("*(u48 *)(r10 - 32) = -5")[0],
         _asm("r5 = r3 + 77")[0]],
        [_asm("r6 = r3 & -2")[0], _asm("r7 = r3 << 3")[0], _asm("r8 = r3 >> 9")[0], _asm("r9 = r3 | 5")[0]],
        [_asm("r0 = r3 ^ 5")[0], _asm("w11 = w3 + 7")[0], _asm("w12 = w3 << 7")[0], _asm("w13 = w3 >> 7")[0]],
        [_asm("w14 = w3 & 7")[0], _asm("w15 = w3 | 7")[0], _asm("*(u48 *)(r1 + 3) = r4")[0],
         _asm("r2 = *(u64 *)(r10 - 16)")[0]],
        [_asm("exit 3")[0], NOP, NOP, NOP],
    ])
    _check(rom, [bytes(range(64)), bytes(range(100, 180))], "extensions")
