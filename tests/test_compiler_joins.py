"""Redundant packet loads (loadcse) and join duplication (taildup.duplicate_joins) on hand-written programs."""

from __future__ import annotations

import pytest
from bpf_asm import alu64, call, exit_, ja, jmp, ldx, mov, movr, stx
from equiv import check

from hxdp import params
from hxdp.compiler import CompileOptions, compile_program, loadcse, taildup
from hxdp.compiler.cfg import build_cfg
from hxdp.frontend.program import Program

PKT = bytes(range(64))
PACKETS = [PKT, PKT[::-1], bytes(64), bytes(range(100, 164))]
KTIME = params.HELPER_IDS["ktime_get_ns"]


def prog(insns) -> Program:
    return Program("t", "xdp", list(insns), [])


def compiled_equal(insns, **switches: bool) -> None:
    """Compiled with the pass and without it, the program does what the sequential model does."""
    p = prog(insns)
    for opts in (CompileOptions(**switches), CompileOptions(load_cse=False, tail_dup=False)):
        assert check(p, compile_program(p, opts).rom, PACKETS) == []


def reload(between: list) -> list:
    """Load packet byte 23, run `between`, load it again; the action mixes both loads."""
    return [ldx("w", 2, 1, 0), ldx("b", 7, 2, 23), *between, ldx("b", 4, 2, 23), movr(0, 4), alu64("add", 0, src=7),
            alu64("and", 0, 3), exit_()]


@pytest.mark.parametrize("between,replaced", [
    ([], 1),
    ([mov(5, 7), stx("b", 2, 5, 24)], 1),  # a store to another packet byte
    ([mov(5, 7), stx("b", 10, 5, -8)], 1),  # a store to the stack
    ([mov(5, 7), stx("b", 2, 5, 23)], 0),  # a store to the byte itself
    ([mov(5, 7), stx("h", 2, 5, 22)], 0),  # a store overlapping it
    ([ldx("w", 6, 1, 0), ldx("b", 7, 6, 0), alu64("add", 6, src=7), mov(5, 7), stx("b", 6, 5, 0)], 0),  # unknown
    ([movr(6, 2), call(KTIME), movr(2, 6)], 0),  # a helper call: loading again after it costs nothing
])
def test_redundant_packet_load(between: list, replaced: int) -> None:
    insns = reload(between)
    assert loadcse.redundant_loads(build_cfg(insns)) == replaced
    compiled_equal(insns)


def selected_pointer() -> list:
    """clang's shape in simple_firewall: two branches each set a pointer to one of two loaded packet words, and
    the join loads through it."""
    return [
        ldx("w", 2, 1, 0), ldx("w", 4, 2, 26), ldx("w", 5, 2, 30),
        movr(1, 2), alu64("add", 1, 26),
        jmp("jlt", 4, 2, src=5),  # -> join
        movr(1, 2), alu64("add", 1, 30),
        ldx("w", 0, 1, 0),  # join: the word at 26 or 30, loaded in the entry block either way
        alu64("and", 0, 3), exit_(),
    ]


def test_load_through_a_pointer_each_predecessor_knows() -> None:
    assert loadcse.redundant_loads(build_cfg(selected_pointer())) == 1
    compiled_equal(selected_pointer())


def test_load_through_a_selected_pointer_after_a_store_to_it_stays() -> None:
    insns = selected_pointer()
    insns[8:8] = [mov(6, 9), stx("b", 1, 6, 2)]  # the join writes the selected word before loading it
    assert loadcse.redundant_loads(build_cfg(insns)) == 0
    compiled_equal(insns)


def jump_join(tail: list) -> list:
    """`if (x == 8) r4 = 2; else r4 = 1;` with the else side jumping over to the join."""
    return [ldx("w", 2, 1, 0), ldx("b", 3, 2, 12), jmp("jeq", 3, 2, imm=8), mov(4, 1), ja(1), mov(4, 2), *tail]


BRANCHY_TAIL = [movr(0, 4), alu64("add", 0, src=3), jmp("jgt", 0, 2, imm=9), alu64("and", 0, 3), exit_(), mov(0, 1),
                exit_()]


def test_join_entered_by_a_jump_is_copied() -> None:
    insns = jump_join(BRANCHY_TAIL)
    cfg = build_cfg(insns)
    assert taildup.duplicate_joins(cfg) == 1
    assert all(len(ps) == 1 for b, ps in cfg.preds().items() if b != cfg.entry)  # no join left
    compiled_equal(insns)


def test_join_holding_a_helper_call_is_not_copied() -> None:
    insns = jump_join([movr(6, 4), call(KTIME), movr(0, 6), alu64("and", 0, 3), exit_()])
    assert taildup.duplicate_joins(build_cfg(insns)) == 0
    compiled_equal(insns)


def test_join_in_a_loop_is_not_copied() -> None:
    # for (i = 0; i < 4; i++) acc += (byte i == 8) ? 2 : 1: the join is the loop's latch
    insns = [ldx("w", 2, 1, 0), mov(0, 0), mov(6, 0),
             movr(7, 2), alu64("add", 7, src=6), ldx("b", 3, 7, 0), jmp("jeq", 3, 2, imm=8), mov(4, 1), ja(1),
             mov(4, 2), alu64("add", 0, src=4), alu64("add", 6, 1), jmp("jlt", 6, -10, imm=4),
             alu64("and", 0, 3), exit_()]
    assert taildup.duplicate_joins(build_cfg(insns)) == 0
    compiled_equal(insns)


def test_exit_block_is_left_to_duplicate_exits() -> None:
    insns = jump_join([movr(0, 4), alu64("add", 0, src=3), alu64("and", 0, 3), exit_()])
    assert taildup.duplicate_joins(build_cfg(insns)) == 0
    assert taildup.duplicate_exits(build_cfg(insns)) >= 1


def test_growth_is_bounded() -> None:
    insns = jump_join(BRANCHY_TAIL)
    assert taildup.duplicate_joins(build_cfg(insns), growth=0.0) == 0
    assert taildup.duplicate_joins(build_cfg(insns), max_ops=1) == 0
