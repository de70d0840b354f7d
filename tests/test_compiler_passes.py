"""Compiler passes on hand-written instruction lists: reduction, ISA extensions, inlining, renaming, errors."""

from __future__ import annotations

import pytest
from bpf_asm import alu32, alu64, atomic, call, call_local, exit_, jmp, lddw, ldx, mov, movr, st, stx
from equiv import check

from hxdp import params
from hxdp.compiler import (
    CompileOptions,
    atomics,
    boundscheck,
    compile_insns,
    compile_program,
    copyprop,
    extend,
    masks,
    reduce,
    wideloads,
)
from hxdp.compiler.cfg import build_cfg
from hxdp.errors import CompileError
from hxdp.frontend.program import MapDef, Program
from hxdp.isa import table as T
from hxdp.isa.insn import Insn

PKT = bytes(range(64))
LOOKUP = params.HELPER_IDS["map_lookup_elem"]


def prog(insns, maps=None, name="t") -> Program:
    return Program(name, "xdp", list(insns), list(maps or []))


def opcodes(result) -> list[int]:
    return [ins.opcode for row in result.rom.rows for ins in row if not ins.is_nop]


def equivalent(p: Program, result, packets=(PKT, PKT[:60], bytes(100))) -> None:
    assert check(p, result.rom, list(packets)) == []


def bounds_prog(k: int, cond: str = "jgt", ptr_left: bool = True, adjust: bool = False) -> list:
    pre = [mov(2, 0), call(params.HELPER_IDS["xdp_adjust_head"]), movr(1, 6)] if adjust else []
    cmp = jmp(cond, 3, 2, src=4) if ptr_left else jmp(cond, 4, 2, src=3)
    return [movr(6, 1), *pre, ldx("w", 2, 1, 0), ldx("w", 4, 1, 4), movr(3, 2), alu64("add", 3, k), cmp,
            ldx("b", 0, 2, 0), exit_(), mov(0, 1), exit_()]


# --- reduction -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k,removed", [(14, True), (60, True), (61, False), (200, False)])
def test_bounds_check_removed_only_up_to_min_frame(k: int, removed: bool) -> None:
    cfg = build_cfg(bounds_prog(k))
    assert reduce.remove_bounds_checks(cfg) == (1 if removed else 0)
    p = prog(bounds_prog(k))
    equivalent(p, compile_program(p))


@pytest.mark.parametrize("cond,left,k,removed", [
    ("jgt", True, 60, True), ("jge", True, 59, True), ("jge", True, 60, False), ("jle", True, 30, True),
    ("jlt", True, 59, True), ("jlt", True, 60, False), ("jlt", False, 60, True), ("jle", False, 60, False),
    ("jge", False, 60, True), ("jgt", False, 59, True), ("jeq", True, 10, False), ("jsgt", True, 20, True),
])
def test_bounds_check_polarities(cond: str, left: bool, k: int, removed: bool) -> None:
    insns = bounds_prog(k, cond, left)
    assert reduce.remove_bounds_checks(build_cfg(insns)) == (1 if removed else 0)
    p = prog(insns)
    equivalent(p, compile_program(p))


def test_bounds_check_kept_after_adjust_head() -> None:
    insns = bounds_prog(14, adjust=True)
    assert reduce.remove_bounds_checks(build_cfg(insns)) == 0


def test_bounds_check_needs_real_ctx_pointers() -> None:
    # r2 is loaded from ctx + 8 (data_meta), not data: the check stays
    insns = [ldx("w", 2, 1, 8), ldx("w", 4, 1, 4), movr(3, 2), alu64("add", 3, 14), jmp("jgt", 3, 2, src=4),
             mov(0, 2), exit_(), mov(0, 1), exit_()]
    assert reduce.remove_bounds_checks(build_cfg(insns)) == 0


def test_zeroing_removed_only_before_any_write() -> None:
    insns = [st("dw", 10, -8, 0), st("dw", 10, -16, 0), stx("dw", 10, 1, -24), st("dw", 10, -24, 0),
             ldx("dw", 0, 10, -24), exit_()]
    cfg = build_cfg(insns)
    assert reduce.remove_zeroing(cfg) == 2
    left = [op for op in cfg.ops() if op.is_store]
    assert [op.off for op in left] == [-24, -24]


def test_zeroing_in_a_loop_is_kept() -> None:
    insns = [mov(3, 3), st("w", 10, -4, 0), ldx("w", 0, 10, -4), alu64("add", 0, 1), stx("w", 10, 0, -4),
             alu64("add", 3, -1), jmp("jne", 3, -6, 0), exit_()]
    cfg = build_cfg(insns)
    assert reduce.remove_zeroing(cfg) == 0


def test_zero_register_store_removed() -> None:
    insns = [mov(2, 0), stx("dw", 10, 2, -8), ldx("dw", 0, 10, -8), exit_()]
    cfg = build_cfg(insns)
    assert reduce.remove_zeroing(cfg) == 1


def test_dead_code_after_reduction() -> None:
    p = prog(bounds_prog(14))
    res = compile_program(p)
    c = res.report["counts"]
    assert c["reduced"] < c["cfg"]  # check, pointer add and data_end load are gone


# --- ISA extensions ------------------------------------------------------------------------------------------
def test_alu3_fusion() -> None:
    insns = [ldx("w", 2, 1, 0), movr(3, 2), alu64("add", 3, 14), movr(4, 2), alu64("sub", 4, 2),
             alu32("mov", 5, src=2), alu32("rsh", 5, 3), movr(0, 3), alu64("add", 0, src=4), alu64("add", 0, src=5),
             exit_()]
    cfg = build_cfg(insns)
    assert extend.alu3(cfg) == 3
    kinds = [op.info.name for op in cfg.ops()]
    assert "add64_3" in kinds and "rsh32_3" in kinds
    p = prog(insns)
    equivalent(p, compile_program(p))
    assert compile_program(p).report["counts"]["alu3"] < compile_program(
        p, CompileOptions(alu3=False)).report["counts"]["extended"]


def test_alu3_not_fused_when_dst_read_between() -> None:
    insns = [movr(3, 1), stx("dw", 10, 3, -8), alu64("add", 3, 1), ldx("dw", 0, 10, -8), exit_()]
    cfg = build_cfg(insns)
    assert extend.alu3(cfg) == 0


def mac_copy() -> list:
    return [ldx("w", 2, 1, 0), ldx("w", 3, 1, 4), movr(4, 2), alu64("add", 4, 14), jmp("jgt", 4, 10, src=3),
            ldx("w", 5, 2, 6), ldx("h", 6, 2, 10), ldx("w", 7, 2, 0), ldx("h", 8, 2, 4),
            stx("w", 2, 5, 0), stx("h", 2, 6, 4), stx("w", 2, 7, 6), stx("h", 2, 8, 10), mov(0, 3), exit_(),
            mov(0, 1), exit_()]


def test_six_byte_copy() -> None:
    p = prog(mac_copy())
    res = compile_program(p)
    ops = opcodes(res)
    assert ops.count(T.EXT_LDX6) == 2 and ops.count(T.EXT_STX6) == 2
    equivalent(p, res)
    off = compile_program(p, CompileOptions(ld6=False))
    assert T.EXT_LDX6 not in opcodes(off)
    equivalent(p, off)


def test_six_byte_copy_not_merged_across_aliasing_store() -> None:
    insns = [ldx("w", 2, 1, 0), ldx("w", 5, 2, 6), st("b", 2, 10, 7), ldx("h", 6, 2, 10),
             stx("w", 2, 5, 0), stx("h", 2, 6, 4), mov(0, 3), exit_()]
    assert T.EXT_LDX6 not in opcodes(compile_program(prog(insns)))
    p = prog(insns)
    equivalent(p, compile_program(p))


def test_exit_action() -> None:
    insns = [ldx("w", 2, 1, 0), ldx("b", 3, 2, 0), mov(0, 1), jmp("jeq", 3, 2, 7), mov(0, 2), exit_(), mov(0, 3),
             exit_()]
    p = prog(insns)
    res = compile_program(p)
    assert T.EXT_EXIT_ACTION in opcodes(res) and 0x95 not in opcodes(res)
    for b in (0, 7, 9):
        equivalent(p, res, [bytes([b]) + PKT[1:]])
    plain = compile_program(p, CompileOptions(exit_action=False))
    assert T.EXT_EXIT_ACTION not in opcodes(plain)


def test_drop_is_one_exit_with_action() -> None:
    res = compile_insns([mov(0, 1), exit_()])
    assert res.rom.to_text(pad_to=None).strip() == "0000000000000000000000000000000000000000000000000000000100000096"
    res = compile_insns([mov(0, 1), exit_()], CompileOptions(exit_action=False))
    assert len(res.rom.rows) == 1  # r0 = 1 and exit share the row


# --- inlining, renaming, scheduling --------------------------------------------------------------------------
def callee_prog() -> list:
    # main: r6 = 5; stack[-8] = 7; r1 = 3; call f; r0 += r6; r0 += stack[-8]; exit
    # f(r1): r6 = r1 * 2; stack[-8] = r6 (own frame); r0 = stack[-8] + 1; exit
    return [mov(6, 5), st("dw", 10, -8, 7), mov(1, 3), call_local(4), alu64("add", 0, src=6), ldx("dw", 2, 10, -8),
            alu64("add", 0, src=2), exit_(),
            movr(6, 1), alu64("mul", 6, 2), stx("dw", 10, 6, -8), ldx("dw", 0, 10, -8), alu64("add", 0, 1), exit_()]


def test_inlined_call_has_own_frame_and_callee_saved_registers() -> None:
    p = prog(callee_prog())
    p.functions = {0: "main", 8: "f"}
    res = compile_program(p)
    assert res.rom.rows
    assert all(ins.opcode != 0x85 for row in res.rom.rows for ins in row)
    equivalent(p, res)
    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel
    assert VliwModel(res.rom, MapState.from_maps([])).run(PKT).action == 7 + 5 + 7


def test_recursion_rejected() -> None:
    with pytest.raises(CompileError, match="recursive"):
        compile_insns([call_local(-1), exit_()])


def test_renaming_reduces_rows() -> None:
    # two independent chains reusing r2: renaming lets them run in parallel
    insns = [ldx("w", 3, 1, 0)]
    for k in range(4):
        insns += [ldx("b", 2, 3, k), alu64("add", 2, 1), alu64("mul", 2, 3), stx("b", 3, 2, 20 + k)]
    insns += [mov(0, 2), exit_()]
    p = prog(insns)
    on, off = compile_program(p), compile_program(p, CompileOptions(rename=False))
    assert len(on.rom.rows) < len(off.rom.rows)
    equivalent(p, on)
    equivalent(p, off)


def test_branches_share_a_row() -> None:
    insns = [ldx("w", 2, 1, 0), ldx("b", 3, 2, 0), ldx("b", 4, 2, 1), jmp("jeq", 3, 4, 1), jmp("jeq", 4, 3, 2),
             mov(0, 2), exit_(), mov(0, 1), exit_(), mov(0, 3), exit_()]
    p = prog(insns)
    res = compile_program(p)
    assert any(sum(1 for i in row if not i.is_nop and i.info.kind == "jmp") >= 2 for row in res.rom.rows)
    for a, b in ((1, 0), (0, 2), (7, 7)):
        equivalent(p, res, [bytes([a, b]) + PKT[2:]])


def test_hoisting_never_moves_loads_above_null_check() -> None:
    maps = [MapDef("arr", 2, 4, 8, 4)]
    insns = [st("w", 10, -4, 9), *lddw(1, 0, src=T.PSEUDO_MAP_FD), movr(2, 10), alu64("add", 2, -4), call(1),
             jmp("jeq", 0, 2, 0), ldx("dw", 0, 0, 0), exit_(), mov(0, 2), exit_()]
    p = prog(insns, maps)
    res = compile_program(p)
    equivalent(p, res)  # key 9 is out of range: lookup returns NULL


def test_lanes_option_and_sweep() -> None:
    p = prog(mac_copy())
    res = compile_program(p, CompileOptions(lanes=2, lanes_sweep=(1, 2, 4, 8)))
    assert res.rom.lanes == 2 and all(len(r) == 2 for r in res.rom.rows)
    sweep = res.report["rows_by_lanes"]
    assert sweep["2"] == len(res.rom.rows) and sweep["8"] <= sweep["4"] <= sweep["2"] <= sweep["1"]


def test_options_switch_passes_off() -> None:
    p = prog(bounds_prog(14))
    full = compile_program(p).report["counts"]
    none = compile_program(p, CompileOptions(bounds=False, zeroing=False, alu3=False, ld6=False, exit_action=False,
                                             tail_dup=False, hoist=False, rename=False)).report["counts"]
    assert none["cfg"] == full["cfg"] == 10
    assert none["extended"] == 9  # only the dead `r6 = r1` goes
    assert full["extended"] < none["extended"]


# --- unsupported programs -------------------------------------------------------------------------------------
@pytest.mark.parametrize("insns,pattern", [
    ([call(99), exit_()], r"slot 0 \(call 99\): helper 99 is not implemented"),
    ([T.OPCODES and __import__("hxdp.isa.insn", fromlist=["Insn"]).Insn(0x30, 0, 0, 0, 12), exit_()],
     r"slot 0 .*legacy packet access"),
    ([mov(0, 1)], r"falls off the end"),
    ([jmp("jeq", 1, 5, 0), exit_()], r"slot 0 .*jump target slot 6"),
])
def test_unsupported_programs_name_the_instruction(insns, pattern) -> None:
    with pytest.raises(CompileError, match=pattern):
        compile_insns(insns)


def test_unsupported_map_type() -> None:
    p = prog([mov(0, 1), exit_()], [MapDef("queue", 22, 0, 4, 16)])
    with pytest.raises(CompileError, match="map queue .*type 22"):
        compile_program(p)


def test_too_many_rows() -> None:
    insns = []
    for i in range(params.IMEM_ROWS + 10):
        insns += [ldx("b", 2, 10, -1 - (i % 8)), alu64("add", 0, src=2)]
    insns.append(exit_())
    with pytest.raises(CompileError, match=f"instruction memory holds {params.IMEM_ROWS}"):
        compile_insns(insns)


def test_reproducible_rom() -> None:
    p = prog(mac_copy())
    a = compile_program(p).rom.to_text()
    b = compile_program(prog(mac_copy())).rom.to_text()
    assert a == b


def test_atomic_ops_and_cmpxchg() -> None:
    insns = [mov(2, 5), stx("dw", 10, 2, -8), mov(3, 7), atomic("dw", 10, 3, -8, 0x01), mov(0, 12),
             atomic("dw", 10, 3, -8, 0xF1), ldx("dw", 4, 10, -8), alu64("add", 0, src=4), alu64("add", 0, src=3),
             exit_()]
    p = prog(insns)
    equivalent(p, compile_program(p))


def test_read_modify_write_becomes_atomic_add() -> None:
    maps = [MapDef("arr", 2, 4, 8, 4)]
    insns = [st("w", 10, -4, 1), *lddw(1, 0, src=T.PSEUDO_MAP_FD), movr(2, 10), alu64("add", 2, -4), call(1),
             jmp("jeq", 0, 4, 0), ldx("dw", 1, 0, 0), alu64("add", 1, 5), stx("dw", 0, 1, 0), mov(0, 2), exit_(),
             mov(0, 1), exit_()]
    p = prog(insns, maps)
    res = compile_program(p)
    assert T.BY_NAME["atomicdw"].opcode in opcodes(res)
    assert T.BY_NAME["atomicdw"].opcode not in opcodes(compile_program(p, CompileOptions(atomic_rmw=False)))
    equivalent(p, res, [PKT] * 3)


def test_read_modify_write_kept_when_value_reused() -> None:
    insns = [ldx("dw", 1, 10, -8), alu64("add", 1, 5), stx("dw", 10, 1, -8), movr(0, 1), exit_()]
    cfg = build_cfg(insns)
    assert atomics.rmw_atomic(cfg) == 0


def test_redundant_mask_after_narrow_load() -> None:
    insns = [ldx("w", 2, 1, 0), ldx("h", 3, 2, 12), alu32("and", 3, 0xFFFF), movr(0, 3), exit_()]
    cfg = build_cfg(insns)
    assert masks.redundant_masks(cfg) == 1
    assert not any(op.info.name == "and32_k" for op in cfg.ops())


def test_variable_bounds_check_rewritten() -> None:
    # p = data + (byte & 15); if p + 20 > data_end -> e = data_end - 20; if p > e
    insns = [ldx("w", 2, 1, 0), ldx("w", 3, 1, 4), ldx("b", 4, 2, 0), alu64("and", 4, 15), alu64("add", 4, src=2),
             movr(5, 4), alu64("add", 5, 20), jmp("jgt", 5, 2, src=3), ldx("b", 0, 4, 19), exit_(), mov(0, 1),
             exit_()]
    cfg = build_cfg(insns)
    extend.alu3(cfg)
    assert boundscheck.rewrite_bounds_checks(cfg) == 1
    p = prog(insns)
    res = compile_program(p)
    for n in (60, 64, 80):
        for b0 in (0, 5, 15, 40):
            equivalent(p, res, [bytes([b0]) + bytes(range(1, n))])
    assert len(res.rom.rows) < len(compile_program(p, CompileOptions(rewrite_checks=False)).rom.rows)


def test_v4_sign_extending_ops_are_not_folded_as_copies() -> None:
    from hxdp.isa.insn import Insn

    movsx = T.BY_NAME["mov64_x"].opcode
    sdiv = T.BY_NAME["div64_x"].opcode
    insns = [mov(7, 0xFF), Insn(movsx, 0, 7, 8, 0), ldx("w", 2, 1, 0), ldx("b", 3, 2, 0), Insn(movsx, 4, 3, 8, 0),
             alu64("and", 4, 0xFF), alu64("add", 0, src=4), mov(5, -7), mov(6, 2), Insn(sdiv, 5, 6, 1, 0),
             alu64("add", 0, src=5), exit_()]
    p = prog(insns)
    res = compile_program(p)
    equivalent(p, res, [bytes([0x80]) + PKT[1:], PKT])
    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel
    out = VliwModel(res.rom, MapState.from_maps([])).run(bytes([0x80]) + PKT[1:])
    assert out.fault is None and out.action == (-1 + 0x80 - 3) & 0xFFFFFFFF


def test_byte_loads_combined_into_wider_loads() -> None:
    # h_proto read byte-wise: (p[13] << 8) | p[12] == u16 at p + 12; then two halves -> u32
    insns = [ldx("w", 2, 1, 0), ldx("b", 3, 2, 13), ldx("b", 4, 2, 12), alu32("lsh", 3, 8), alu32("or", 3, src=4),
             ldx("h", 5, 2, 16), ldx("h", 6, 2, 14), alu64("lsh", 5, 16), alu64("or", 5, src=6),
             movr(0, 3), alu64("add", 0, src=5), exit_()]
    cfg = build_cfg(insns)
    assert wideloads.combine_loads(cfg) == 2
    names = [op.info.name for op in cfg.ops()]
    assert "ldxh" in names and "ldxw" in names and "lsh32_k" not in names
    p = prog(insns)
    equivalent(p, compile_program(p), [PKT, bytes(range(200, 256)) + bytes(8)])


def test_ctx_fields_never_combined_into_a_wider_ctx_load() -> None:
    """`(u64)ctx->rx_queue_index << 32 | ctx->ingress_ifindex` stays two 32-bit loads: xdp_md is read one aligned
    field at a time (a wider ctx load is an access fault, as the kernel's verifier rejects it)."""
    insns = [ldx("w", 3, 1, 16), ldx("w", 4, 1, 12), alu64("lsh", 3, 32), alu64("or", 3, src=4), movr(0, 3),
             alu64("and", 0, 3), exit_()]
    assert wideloads.combine_loads(build_cfg(insns)) == 0
    assert wideloads.combine_byte_loads(build_cfg(insns)) == 0
    p = prog(insns)
    res = compile_program(p)
    assert all(s.opcode != T.BY_NAME["ldxdw"].opcode for row in res.rom.rows for s in row)
    equivalent(p, res)
    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel
    out = VliwModel(res.rom, MapState.from_maps([])).run(PKT, ingress_ifindex=3, rx_queue_index=0)
    assert out.fault is None and out.action == 3


def test_byte_loads_not_combined_across_a_store() -> None:
    insns = [ldx("w", 2, 1, 0), ldx("b", 3, 2, 13), st("b", 2, 12, 7), ldx("b", 4, 2, 12), alu32("lsh", 3, 8),
             alu32("or", 3, src=4), movr(0, 3), exit_()]
    assert wideloads.combine_loads(build_cfg(insns)) == 0


@pytest.mark.parametrize("value", [0x1122334455667788, 0xFFFFFFFF80000000, -1, 0x80000000, 7])
def test_raw_exit_keeps_all_64_bits_of_r0(value: int) -> None:
    """Raw mode (hxdp exec) observes all of r0: `r0 = K ll; exit` is folded to `exit K` only when exact."""
    from hxdp.raw import run_raw

    insns = [*lddw(0, value), exit_()]
    want = value & ((1 << 64) - 1)
    assert run_raw(insns, bytes(16), "seq-model")[0] == want
    assert run_raw(insns, bytes(16), "vliw-model")[0] == want
    folded = any(s.opcode == T.EXT_EXIT_ACTION for row in compile_insns(insns).rom.rows for s in row)
    assert folded == (want <= 0xFFFFFFFF)


def test_truncation_before_exit_dropped_on_xdp_only() -> None:
    """`w0 = w0; exit` returns the low 32 bits anyway on XDP; in raw mode the upper half is observable."""
    insns = [ldx("w", 2, 1, 0), ldx("dw", 0, 2, 0), alu32("mov", 0, 0, src=0), exit_()]
    mov32 = T.BY_NAME["mov32_x"].opcode
    p = prog(insns)
    res = compile_program(p)
    assert mov32 not in opcodes(res)
    equivalent(p, res)
    from hxdp.raw import run_raw

    raw = [ldx("dw", 0, 1, 0), alu32("mov", 0, 0, src=0), exit_()]
    assert mov32 in opcodes(compile_insns(raw))
    assert run_raw(raw, bytes(range(1, 9)), "vliw-model")[0] == 0x04030201


def test_jump_to_next_row_dropped_and_inverted() -> None:
    from hxdp.compiler.emit import _drop_jumps_to_next_row

    jeq, jne, ja = T.BY_NAME["jeq64_k"].opcode, T.BY_NAME["jne64_k"].opcode, 0x05
    # trailing jump to the next row: removed; a branch to the next row before another branch: kept
    assert _drop_jumps_to_next_row([Insn(jeq, 1, 0, 3, 7), Insn(ja, 0, 0, 0, 0)]) == [Insn(jeq, 1, 0, 3, 7)]
    kept = [Insn(jeq, 1, 0, 0, 7), Insn(jne, 1, 0, 5, 6)]
    assert _drop_jumps_to_next_row(kept) == kept
    # `if c goto next | goto X` -> `if !c goto X`
    assert _drop_jumps_to_next_row([Insn(jeq, 1, 0, 0, 7), Insn(ja, 0, 0, 4, 0)]) == [Insn(jne, 1, 0, 4, 7)]


def test_or_condition_join_ops_hoisted_and_exit_tail_duplicated() -> None:
    """`if p == 17 goto J; if p != 6 goto drop; J: r1 = ..; r2 = ..; call` and a shared call+exit tail: the
    call's argument setup runs beside the branches, no `ja` is left, and the result is unchanged."""
    lookup = params.HELPER_IDS["map_lookup_elem"]
    insns = [ldx("w", 6, 1, 0), ldx("b", 7, 6, 23), jmp("jeq", 7, 1, 17), jmp("jne", 7, 11, 6),
             *lddw(1, 0, src=T.PSEUDO_MAP_FD), movr(2, 10), alu64("add", 2, -4), call(lookup),
             jmp("jeq", 0, 2, 0), mov(7, 2), Insn(0x05, 0, 0, 1, 0), mov(7, 3),
             movr(0, 7), exit_(), mov(0, 1), exit_()]
    flows = MapDef("a", 1, 4, 8, 1)  # a hash map: an array lookup with a constant key would be inlined
    p = prog(insns, [flows])
    res = compile_program(p)
    assert 0x05 not in opcodes(res)
    call_row = next(r for r, row in enumerate(res.rom.rows) if any(i.opcode == 0x85 for i in row))
    assert call_row <= 3
    pk = bytearray(PKT)
    for proto in (6, 17, 1):
        pk[23] = proto
        equivalent(p, res, (bytes(pk),))


def test_add_folded_into_access_offsets() -> None:
    """`r2 += 4` only used as the base of later loads disappears into their offsets; kept when r2 is read."""
    body = [ldx("w", 2, 1, 0), alu64("add", 2, 4), ldx("b", 3, 2, 1), ldx("b", 0, 2, 2), alu64("add", 0, 3, src=3)]
    add = T.BY_NAME["add64_k"].opcode
    cfg = build_cfg([*body, exit_()])
    assert copyprop.fold_offsets(cfg) == 1 and add not in [op.opcode for op in cfg.ops()]
    cfg = build_cfg([*body, alu64("add", 0, 2, src=2), exit_()])
    assert copyprop.fold_offsets(cfg) == 0
    p = prog([*body, exit_()])
    equivalent(p, compile_program(p))


def test_random_program_12839_stores_beside_helper_stay_ordered() -> None:
    """Regression: two overlapping stores around a helper call were once put in one row (verifier error)."""
    from randprog import random_packets, random_program

    p = random_program(12839, 80)
    res = compile_program(p, CompileOptions(imem_rows=1 << 20))
    assert check(p, res.rom, random_packets(12839)) == []


def test_packet_load_stays_before_adjust_head_behind_a_map_lookup() -> None:
    """Regression (fuzz seed 20261125, program 5663): a packet load whose address is ready late, a hash lookup
    (a call whose memory is the map's region and the stack) and adjust_head. The dependence builder stopped at the
    lookup, taking every call for a barrier, so the load was scheduled after adjust_head: an access fault."""
    head = params.HELPER_IDS["xdp_adjust_head"]
    insns = [movr(6, 1), ldx("w", 5, 6, 12), stx("w", 10, 5, -4), *lddw(1, 0, src=T.PSEUDO_MAP_FD),
             movr(2, 10), alu64("add", 2, -4),
             # r7 = data + a byte-dependent offset: four rows before the load can issue
             ldx("w", 7, 6, 0), ldx("b", 4, 7, 3), alu64("and", 4, 3), alu64("lsh", 4, 1), alu64("xor", 4, 6),
             alu64("add", 7, 0, src=4), ldx("dw", 8, 7, 1),
             call(LOOKUP), movr(1, 6), mov(2, 42), call(head), jmp("jne", 0, 4, 0),
             ldx("w", 3, 6, 0), stx("b", 3, 8, 10), mov(0, 3), exit_(), mov(0, 1), exit_()]
    p = prog(insns, [MapDef("h", 1, 4, 8, 4)])
    res = compile_program(p)
    equivalent(p, res, [PKT, bytes(range(100, 164))])
    rows = {(ins.opcode, ins.imm, ins.off): r for r, row in enumerate(res.rom.rows) for ins in row}
    assert rows[(T.BY_NAME["ldxdw"].opcode, 0, 1)] <= rows[(0x85, head, 0)]


# --- compile-time map lookups and branches ------------------------------------------------------------------



def counter_prog(key_insns: list, map_type: int = 2, entries: int = 4) -> tuple[Program, list]:
    """`key = ...; v = lookup(m, &key); if (!v) return DROP; *v += 1 (atomic); return PASS`."""
    insns = [*key_insns, *lddw(1, 0, src=T.PSEUDO_MAP_FD), movr(2, 10), alu64("add", 2, -4), call(LOOKUP),
             jmp("jeq", 0, 4, 0), mov(1, 1), atomic("dw", 0, 1, 0, 0), mov(0, 2), exit_(), mov(0, 1), exit_()]
    return prog(insns, [MapDef("m", map_type, 4, 8, entries)]), insns


def kinds(result) -> set[str]:
    return {T.OPCODES[i.opcode].kind for row in result.rom.rows for i in row if i.opcode in T.OPCODES}


def calls(result) -> int:
    return sum(1 for row in result.rom.rows for ins in row if ins.opcode == 0x85)


@pytest.mark.parametrize("key_insns,key", [([], 0), ([st("w", 10, -4, 3)], 3), ([mov(5, 2), stx("w", 10, 5, -4)], 2)])
def test_array_lookup_with_constant_key_becomes_an_address(key_insns: list, key: int) -> None:
    """Never-written key bytes (the stack starts zeroed) or a constant stored in the block: no helper call, no
    null check, and the counter of that key (and no other) counts."""
    p, _ = counter_prog(key_insns)
    res = compile_program(p)
    assert calls(res) == 0
    assert not any(ins.opcode == T.BY_NAME["jeq64_k"].opcode for row in res.rom.rows for ins in row)
    equivalent(p, res)
    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel

    state = MapState.for_program(p)
    for _ in range(3):
        assert VliwModel(res.rom, state).run(PKT).action == params.XDP_PASS
    counts = {int.from_bytes(k, "little"): int.from_bytes(v, "little") for k, v in state.dump()["m"].items()}
    assert counts[key] == 3 and sum(counts.values()) == 3


def test_array_lookup_out_of_range_key_is_null() -> None:
    p, _ = counter_prog([st("w", 10, -4, 9)], entries=4)
    res = compile_program(p)
    assert calls(res) == 0
    assert "atomic" not in kinds(res)  # the null branch always wins: the counter is unreachable
    equivalent(p, res)
    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel

    assert VliwModel(res.rom, MapState.for_program(p)).run(PKT).action == params.XDP_DROP


@pytest.mark.parametrize("case", ["hash map", "key from the packet", "key written on one path only",
                                  "switched off"])
def test_array_lookup_kept_when_the_key_is_not_known(case: str) -> None:
    opts = CompileOptions()
    if case == "hash map":
        p, _ = counter_prog([], map_type=1)
    elif case == "key from the packet":
        p, _ = counter_prog([ldx("w", 6, 1, 0), ldx("b", 5, 6, 14), stx("w", 10, 5, -4)])
    elif case == "key written on one path only":
        p, _ = counter_prog([ldx("w", 6, 1, 0), ldx("b", 5, 6, 14), jmp("jeq", 5, 1, 1), st("w", 10, -4, 1)])
    else:
        p, _ = counter_prog([])
        opts = CompileOptions(const_lookup=False)
    res = compile_program(p, opts)
    assert calls(res) == 1
    pk = bytearray(PKT)
    for b in (0, 1, 2):
        pk[14] = b
        equivalent(p, res, (bytes(pk),))


def test_branches_on_constants_are_folded() -> None:
    """`r3 = 5; r3 <<= 2; if r3 > 19 goto A` is decided at compile time: one exit row remains on the path."""
    insns = [mov(3, 5), alu64("lsh", 3, 2), jmp("jgt", 3, 2, 19), mov(0, 1), exit_(), mov(0, 2), exit_()]
    p = prog(insns)
    res = compile_program(p)
    assert "jmp" not in kinds(res)
    assert len(res.rom.rows) == 1
    equivalent(p, res)
    kept = compile_program(p, CompileOptions(fold_branches=False))
    assert "jmp" in kinds(kept)


def test_redirect_map_shares_the_row_of_an_atomic_on_another_map() -> None:
    """The lookup result points into map `flows`, redirect_map reads only devmap `ports`: the helper need not
    wait a row for the atomic add, and the results stay the kernel's (checked on both models)."""
    redirect_map = params.HELPER_IDS["redirect_map"]
    insns = [mov(2, 0), stx("w", 10, 2, -4), *lddw(1, 0, src=T.PSEUDO_MAP_FD), movr(2, 10), alu64("add", 2, -4),
             call(LOOKUP), jmp("jeq", 0, 8, 0), mov(1, 1), atomic("dw", 0, 1, 0, 0),
             *lddw(1, 1, src=T.PSEUDO_MAP_FD), mov(2, 0), mov(3, 1), call(redirect_map), exit_(),
             mov(0, 1), exit_()]
    p = prog(insns, [MapDef("flows", 1, 4, 8, 4), MapDef("ports", 14, 4, 4, 4)])
    res = compile_program(p)
    rows = res.rom.rows
    atomic_row = next(r for r, row in enumerate(rows) if any(i.opcode == T.BY_NAME["atomicdw"].opcode for i in row))
    call_rows = [r for r, row in enumerate(rows) if any(i.opcode == 0x85 and i.imm == redirect_map for i in row)]
    assert atomic_row in call_rows
    cfg = {"maps": {"flows": [{"key": "00000000", "value": "0000000000000000"}],
                    "ports": [{"key": "00000000", "value": "01000000"}]}}
    assert check(p, res.rom, [PKT, PKT], cfg) == []


def test_packet_start_read_from_r2_at_entry() -> None:
    """`r6 = ctx->data` before any adjust call becomes r2 (the packet start at entry, contract section 1): the
    first packet load sits in row 0; after bpf_xdp_adjust_head the context load stays."""
    body = [ldx("w", 6, 1, 0), ldx("b", 0, 6, 14), exit_()]
    res = compile_program(prog(body))
    assert len(res.rom.rows) == 1 and T.OPCODES[res.rom.rows[0][0].opcode].kind == "ldx"  # load + exit in row 0
    assert res.rom.rows[0][0].src == 2
    equivalent(prog(body), res)
    kept = compile_program(prog(body), CompileOptions(entry_data=False))
    assert len(kept.rom.rows) == 2
    adjust = [movr(6, 1), mov(2, -4), call(params.HELPER_IDS["xdp_adjust_head"]), ldx("w", 7, 6, 0),
              ldx("b", 0, 7, 14), exit_()]
    res = compile_program(prog(adjust))
    assert any(i.opcode == T.BY_NAME["ldxw"].opcode and i.off == 0 for row in res.rom.rows for i in row)
    equivalent(prog(adjust), res)


def test_branch_to_an_exit_row_becomes_a_conditional_exit() -> None:
    """`if c goto X` where row X is only `exit 1`, in a row with a free lane: `if !c goto +0; exit 1` (the
    exit costs the conditional-exit cycle; the jump to the next row is free), and the results are unchanged."""
    # (three packet loads: with two per row, the branches' row keeps a free lane)
    insns = [ldx("w", 6, 1, 0), ldx("b", 3, 6, 14), jmp("jeq", 3, 6, 5), ldx("b", 4, 6, 15), jmp("jeq", 4, 4, 7),
             ldx("b", 5, 6, 16), alu64("add", 4, src=5), movr(0, 4), exit_(), mov(0, 1), exit_()]
    p = prog(insns)
    res = compile_program(p)
    exit1 = T.BY_NAME["exit_action"].opcode if "exit_action" in T.BY_NAME else None
    rows = res.rom.rows
    assert any(any(i.opcode == exit1 and i.imm == 1 for i in row) and
               any(T.OPCODES.get(i.opcode) is not None and T.OPCODES[i.opcode].kind == "jmp" and i.off == 0
                   for i in row) for row in rows)
    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel

    pk = bytearray(PKT)
    for b14, b15, cycles in ((5, 0, 4), (8, 7, 3), (8, 0, 3)):  # taken jump to `exit 1`; conditional exit; neither
        pk[14], pk[15] = b14, b15
        equivalent(p, res, (bytes(pk),))
        assert VliwModel(res.rom, MapState.from_maps([])).run(bytes(pk)).cycles == cycles


def byte_tree(mid: list) -> list:
    """r0 = u32 at packet+26 built clang-style: bytes 27, 26 as a u16, then 28, 29; the base r1 is overwritten
    by the last piece (`r1 = *(u8 *)(r1 + 29)`); `mid` goes between the first and the last pieces."""
    return [ldx("w", 1, 1, 0), ldx("b", 4, 1, 27), alu32("lsh", 4, 8), ldx("b", 2, 1, 26), alu32("or", 4, src=2),
            *mid, ldx("b", 3, 1, 28), ldx("b", 1, 1, 29), alu32("lsh", 1, 8), alu32("or", 1, src=3),
            alu32("lsh", 1, 16), alu32("or", 1, src=4), movr(0, 1), exit_()]


def test_shift_or_tree_of_byte_loads_becomes_one_load() -> None:
    p = prog(byte_tree([]))
    res = compile_program(p)
    loads = [i for row in res.rom.rows for i in row if T.OPCODES.get(i.opcode) is not None
             and T.OPCODES[i.opcode].kind == "ldx"]
    assert [(T.OPCODES[i.opcode].name, i.off) for i in loads] == [("ldxw", 26)]
    equivalent(p, res)
    equivalent(p, compile_program(p, CompileOptions(wide_loads=False)))


@pytest.mark.parametrize("mid", [[st("b", 1, 28, 0x5A)], [alu64("add", 1, 1)]], ids=["packet store", "base moved"])
def test_byte_tree_not_combined_across_a_store_or_a_new_base(mid: list) -> None:
    p = prog(byte_tree(mid))
    res = compile_program(p)
    assert not any(T.OPCODES.get(i.opcode) is not None and T.OPCODES[i.opcode].name == "ldxw" and i.off == 26
                   for row in res.rom.rows for i in row)
    equivalent(p, res)


def test_pointer_stepping_through_a_map_value_in_a_loop_compiles() -> None:
    """A loop walking a pointer through an array value: the provenance analysis converges (map pointers with a
    span are widened to a plain map pointer in long loops) and the result is the sequential model's."""
    import signal

    def timeout(*_: object) -> None:
        raise TimeoutError("the compiler did not finish within 30 s")

    insns = [*lddw(6, 0, src=T.PSEUDO_MAP_VALUE), mov(1, 0), mov(0, 0),
             ldx("dw", 2, 6, 0), alu64("add", 0, src=2), alu64("add", 6, 8), alu64("add", 1, 1),
             jmp("jlt", 1, -5, 40), exit_()]
    p = prog(insns, [MapDef("data", 2, 4, 320, 1)])
    old = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(30)
    try:
        res = compile_program(p)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    equivalent(p, res)


def test_independent_multiplications_never_share_a_row() -> None:
    """Four independent muls (and adds beside them): one a row, the core's one multiplier (params.MUL_UNITS)."""
    insns = [ldx("w", 2, 1, 12), movr(3, 2), movr(4, 2), movr(5, 2)]
    insns += [alu64("add", 3, 1), alu64("xor", 4, 5), alu64("or", 5, 8)]
    insns += [alu64("mul", r, 9 + r) for r in (2, 3, 4, 5)]
    insns += [alu64("add", 2, src=3), alu64("add", 4, src=5), alu64("add", 2, src=4), movr(0, 2), exit_()]
    res = compile_insns(insns)
    muls = [sum(1 for s in r if not s.is_nop and s.info.kind == "alu" and s.info.op == "mul") for r in res.rom.rows]
    assert sum(muls) == 4 and max(muls) == params.MUL_UNITS


def test_no_stack_load_in_the_row_of_a_call() -> None:
    """A stack load and a helper call that could share a row never do (the helper reads through the load port)."""
    insns = [st("dw", 10, -8, 5), ldx("dw", 6, 10, -8), call(7), alu64("add", 0, src=6), exit_()]
    res = compile_insns(insns)
    for r in res.rom.rows:
        kinds = [s.info.kind for s in r if not s.is_nop]
        assert not ("call" in kinds and "ldx" in kinds), r


def test_pipeline_switches_are_compile_options() -> None:
    from hxdp.compiler import PIPELINE

    names = set(CompileOptions.names())
    assert all(set(p.needs) <= names for p in PIPELINE)
    assert [p.count for p in PIPELINE if p.count] == ["reduced", "exit_action", "alu3", "ld6", "extended"]
