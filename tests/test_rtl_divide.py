"""The core's one divider: a row's divisions run one after the other in lane order, 16 cycles each."""

from __future__ import annotations

import random

import pytest
from rtl_support import assert_rtl_equals_model, require_rtl, row

from hxdp import params
from hxdp.compiler import compile_insns
from hxdp.isa.insn import assemble
from hxdp.isa.rom import Rom

FORMS = ("/=", "%=", "s/=", "s%=")


def _division_rom(rng: random.Random, lanes: int) -> Rom:
    """Operands in r1..r8 (some negative, some zero, some 32-bit), then one row with `lanes` divisions of every
    form and width, then a row folding the results into r0."""
    setup = []
    for r in range(1, 9):
        v = rng.choice([0, 1, 7, -1, -9, rng.randrange(1, 1 << 31), -rng.randrange(1, 1 << 31)])
        setup.append(f"r{r} = {v}")
    divs = []
    for k in range(lanes):
        form = rng.choice(FORMS)
        wide = rng.random() < 0.5
        dst, src = 1 + 2 * k, 2 + 2 * k
        divs.append(f"r{dst} {form} r{src}" if wide else f"w{dst} {form} w{src}")
    fold = [f"r0 ^= r{1 + 2 * k}" for k in range(lanes)]
    rows = [row(*setup[i : i + 4]) for i in range(0, 8, 4)] + [row(*divs)]
    rows += [row(f) for f in fold] + [row("exit")]
    return Rom(rows)


@pytest.mark.rtl
@pytest.mark.parametrize("lanes", [2, 3, 4])
def test_divisions_of_one_row_share_the_divider(lanes: int) -> None:
    """Every form, width and zero divisor, several lanes dividing in one row: the RTL computes what the model
    does, and the row costs DIV_EXTRA_CYCLES per division."""
    require_rtl()
    rng = random.Random(lanes)
    for _ in range(6):
        rom = _division_rom(rng, lanes)
        got = assert_rtl_equals_model(rom, [bytes(64)])
        rows_cycles = len(rom.rows) * params.CYCLES_PER_ROW
        assert got[0].cycles == rows_cycles + lanes * params.DIV_EXTRA_CYCLES


def test_compiler_puts_one_division_per_row() -> None:
    """Four independent divisions: the scheduler spreads them over four rows (a second division in a row would
    wait 16 cycles for the first)."""
    prog = assemble("\n".join([
        "r1 = *(u32 *)(r1 + 0)", "r2 = r1", "r3 = r1", "r4 = r1", "r5 = r1",
        "r2 /= 3", "r3 /= 5", "r4 %= 7", "r5 %= 11",
        "r0 = r2", "r0 += r3", "r0 += r4", "r0 += r5", "exit",
    ]))
    rom = compile_insns(prog).rom
    per_row = [sum(1 for ins in r if not ins.is_nop and ins.info.kind == "alu" and ins.info.op in ("div", "mod"))
               for r in rom.rows]
    assert sum(per_row) == 4
    assert max(per_row) == 1
