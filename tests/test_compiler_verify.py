"""The schedule verifier rejects every row that breaks the execution contract, naming row and lane."""

from __future__ import annotations

import pytest
from bpf_asm import alu64, atomic, call, exit_, exit_action, ja, jmp, lddw, ldx, mov, row, st, stx
from hxdp.compiler.verify import verify_rom
from hxdp.errors import CompileError
from hxdp.isa import NOP, Insn
from hxdp.rom import Rom


def rom(*rows: list[Insn]) -> Rom:
    return Rom([list(r) for r in rows])


def test_good_rom_passes() -> None:
    verify_rom(rom(row(ldx("w", 2, 1, 0), mov(3, 1), *lddw(4, 5)),
                   row(stx("b", 2, 3, 0), stx("b", 2, 3, 1), jmp("jeq", 3, 0, 1), exit_action(2)),
                   row(mov(0, 1), exit_())))


@pytest.mark.parametrize("rows,pattern", [
    ([row(mov(2, 1), mov(2, 3), exit_())], r"row 0 lane 1 .*r2 is also written by lane 0"),
    ([row(mov(0, 1), call(5), exit_())], r"row 0 lane 1 \(call 5\): r0 is also written"),
    ([row(mov(10, 1), exit_())], r"row 0 lane 0 .*frame pointer r10"),
    ([row(call(5), call(7), exit_())], r"row 0 lane 1 .*more than one helper call"),
    ([row(call(99), exit_())], r"row 0 lane 0 .*helper 99"),
    ([[mov(2, 1), exit_(), mov(3, 1), lddw(4, 1)[0]]], r"row 0 lane 3 .*lddw in the last lane"),
    ([[*lddw(4, 1 << 40)[:1], mov(3, 1), exit_(), NOP]], r"row 0 lane 1 .*high half"),
    ([row(stx("w", 2, 3, 0), stx("h", 2, 4, 2), exit_())], r"row 0 lane 1 .*overlaps the store in lane 0"),
    ([row(stx("w", 2, 3, 0), stx("w", 5, 4, 0), exit_())], r"row 0 lane 1 .*not proven disjoint"),
    ([row(jmp("jeq", 1, 5, 0), exit_())], r"row 0 lane 0 .*branch target row 6 is outside"),
    ([row(ja(-2), exit_())], r"row 0 lane 0 .*target row -1"),
    ([row(mov(0, 1))], r"row 0 lane 0: control falls off the end"),
    ([row(atomic("dw", 10, 2, -8, 0), ldx("b", 3, 10, -16), exit_())], r"row 0 lane 0 .*atomic must be the only"),
    ([row(atomic("dw", 10, 2, -8, 0), atomic("w", 10, 2, -16, 0), exit_())], r"atomic must be the only"),
    ([row(Insn(0x30, 0, 0, 0, 1), exit_())], r"row 0 lane 0 .*unsupported"),
    ([row(Insn(0xFE), exit_())], r"row 0 lane 0 .*unknown opcode"),
    ([row(*lddw(1, 0, src=1), exit_())], r"unresolved lddw pseudo source"),
])
def test_bad_rows_rejected(rows, pattern) -> None:
    with pytest.raises(CompileError, match=pattern):
        verify_rom(rom(*rows))


def test_disjoint_stores_with_proof_pass() -> None:
    r = rom(row(stx("w", 2, 3, 0), stx("w", 5, 4, 0), exit_()))
    verify_rom(r, {(0, 0, 1)})


def test_same_base_disjoint_stores_pass() -> None:
    # three stores through r2, proven by the compiler to be off the stack (the packet, say)
    verify_rom(rom(row(stx("w", 2, 3, 0), stx("w", 2, 4, 4), st("b", 2, 8, 1), exit_())),
               off_stack={(0, 0), (0, 1), (0, 2)})


@pytest.mark.parametrize("rows,pattern", [
    ([row(stx("w", 10, 3, -8), stx("w", 10, 4, -4), st("b", 10, -9, 1), exit_())],
     r"row 0 lane 2 .*more than 2 stores that may write the stack"),
    ([row(ldx("w", 3, 10, -8), ldx("w", 4, 10, -4), ldx("b", 5, 2, 0), exit_())],
     r"row 0 lane 2 .*more than 2 loads that may read the stack"),
])
def test_stack_ports_per_row(rows, pattern) -> None:
    """Two stack loads and two stack stores per row; an access the compiler did not prove to be off the stack
    counts (lane 2's load through r2 above)."""
    with pytest.raises(CompileError, match=pattern):
        verify_rom(rom(*rows))
    verify_rom(rom(*rows), off_stack={(0, 2)})


def test_too_many_rows() -> None:
    rows = [row(mov(2, i)) for i in range(300)] + [row(exit_())]
    with pytest.raises(CompileError, match="needs 301 rows, instruction memory holds 256"):
        verify_rom(rom(*rows))


def test_war_in_a_row_is_legal() -> None:
    # lane 1 reads r2 before lane 0's write commits: allowed by the contract
    verify_rom(rom(row(mov(2, 5), alu64("add", 3, src=2), exit_())))
