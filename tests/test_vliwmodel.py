"""The VLIW model against the execution contract: hand-written ROMs, rule checks, cycle accounting, traces."""

from __future__ import annotations

from pathlib import Path

import pytest
from bpf_asm import alu64, atomic, call, exit_, exit_action, ja, jmp, lddw, ldx, mov, movr, row, st, stx
from original_roms import write_original_rom

from hxdp import params
from hxdp.frontend.program import MapDef
from hxdp.isa.insn import NOP
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.vliw import ContractViolation, TraceRecord, VliwModel

PKT = bytes(range(64))
R_DATA, R_END = 2, 3


def model(rows: list[list], maps: list[MapDef] | None = None, trace: bool = False) -> VliwModel:
    return VliwModel(Rom(rows), MapState.from_maps(maps or []), trace=trace)


def load_data(*more) -> list:
    """Row 0: r2 = data, r3 = data_end (two lanes reading the context)."""
    return row(ldx("w", R_DATA, 1, 0), ldx("w", R_END, 1, 4), *more)


@pytest.mark.parametrize("name,action,cycles", [("XDP_DROP.bin", 1, 1), ("XDP_DROP_early_exit.bin", 1, 1),
                                                ("XDP_TX_early_exit.bin", 3, 1)])
def test_original_roms(tmp_path: Path, name: str, action: int, cycles: int) -> None:
    """The original hXDP's three ROMs, in its file format: one row each, the action it names, in one cycle."""
    res = VliwModel(Rom.load(write_original_rom(tmp_path, name)), MapState.from_maps([])).run(PKT)
    assert (res.action, res.cycles, res.fault) == (action, cycles, None)


def test_exit_reads_r0_after_the_row() -> None:
    res = model([row(mov(0, 2), exit_())]).run(PKT)
    assert res.action == params.XDP_PASS and res.cycles == 1


def test_forwarding_between_rows() -> None:
    rows = [row(mov(2, 5)), row(movr(0, 2), exit_())]
    assert model(rows).run(PKT).action == 5


def test_lanes_read_before_the_row() -> None:
    # row 1 swaps r2 and r3 in one row: each lane reads the other's old value
    rows = [row(mov(2, 1), mov(3, 2)), row(movr(2, 3), movr(3, 2)),
            row(movr(0, 2)), row(alu64("lsh", 0, 4)), row(alu64("or", 0, src=3), exit_())]
    assert model(rows).run(PKT).action == 0x21


def test_store_and_load_in_one_row_load_sees_old_bytes() -> None:
    rows = [load_data(), row(st("b", R_DATA, 0, 0x77), ldx("b", 0, R_DATA, 0)), row(exit_())]
    res = model(rows).run(PKT)
    assert res.action == 0 and res.packet[0] == 0x77


def test_stores_commit_and_mac_swap() -> None:
    rows = [load_data(),
            row(ldx("6", 4, R_DATA, 0), ldx("6", 5, R_DATA, 6)),
            row(stx("6", R_DATA, 5, 0), stx("6", R_DATA, 4, 6), exit_action(params.XDP_TX))]
    res = model(rows).run(PKT)
    assert res.action == params.XDP_TX
    assert res.packet == PKT[6:12] + PKT[0:6] + PKT[12:]
    assert res.cycles == 3


def test_branch_priority_lowest_lane_wins() -> None:
    # lane 0: if r2 == K goto +1 (row 3); lane 1: goto +0 (row 2); lane 2 commits regardless
    def rows(k: int) -> list:
        return [row(mov(2, 7)),
                row(jmp("jeq", 2, 1, k), ja(0), mov(4, 9)),
                row(movr(0, 4), exit_()),
                row(mov(0, 100), exit_())]
    taken, not_taken = model(rows(7)).run(PKT), model(rows(8)).run(PKT)
    assert taken.action == 100
    assert not_taken.action == 9  # lane 1's jump to row 2, where lane 2's write of row 1 is visible
    # a taken jump costs one more cycle, except lane 1's jump to the next row (already fetched)
    assert taken.cycles == 1 + 2 + 1 and not_taken.cycles == 1 + 1 + 1


def test_taken_and_untaken_branch_cycles() -> None:
    rows = [row(mov(2, 1)), row(jmp("jeq", 2, 1, 1)), row(mov(0, 1)), row(exit_())]
    res = model(rows).run(PKT)
    assert res.action == 0 and res.cycles == 1 + (1 + 1) + 1  # three rows, one taken branch
    rows[1] = row(jmp("jeq", 2, 1, 5))
    res = model(rows).run(PKT)
    assert res.action == 1 and res.cycles == 4  # four rows, no penalty


def fold_rows(first: bool) -> list:
    """Row 1 jumps over row 2 with an unconditional jump, first in its row or behind a conditional lane not taken."""
    jump = [ja(1), mov(3, 1)] if first else [jmp("jeq", 0, 5, 3), ja(1)]
    return [row(mov(0, 1)), row(*jump), row(mov(0, 2)), row(exit_())]


def test_unconditional_jump_first_in_its_row_costs_no_bubble() -> None:
    folded, behind = model(fold_rows(True)).run(PKT), model(fold_rows(False)).run(PKT)
    assert folded.action == behind.action == 1
    assert folded.cycles == 3 and behind.cycles == 4  # the fetch takes the first lane's target; else the bubble


def test_conditional_exit_penalty() -> None:
    early = model([row(mov(0, 1)), row(exit_(), jmp("jeq", 0, 0, 5))]).run(PKT)
    late = model([row(mov(0, 1)), row(jmp("jeq", 0, 0, 5), exit_())]).run(PKT)
    assert early.action == late.action == 1
    assert early.cycles == 2 and late.cycles == 3


def test_exit_action_and_lddw_pair() -> None:
    rows = [row(NOP, *lddw(0, 0x1_0000_0003)), row(exit_())]
    res = model(rows).run(PKT)
    assert res.action == 3  # low 32 bits of r0
    assert model([row(exit_action(2))]).run(PKT).action == 2


def test_helper_latency_and_exit_with_helper_result() -> None:
    res = model([row(mov(1, 5), mov(2, 0)), row(call(23), exit_())]).run(PKT)
    assert res.action == params.XDP_REDIRECT and res.redirect == 5
    assert res.cycles == 2 + 1  # redirect stalls one cycle
    res = model([row(mov(1, 5), mov(2, 1)), row(call(23), exit_())]).run(PKT)
    assert res.action == params.XDP_ABORTED and res.redirect is None


def counter_maps() -> list[MapDef]:
    return [MapDef("counters", params.MAP_TYPE_IDS["array"], 4, 8, 4)]


def test_map_lookup_and_atomic_through_value_pointer() -> None:
    handle = params.MAP_HANDLE_BASE
    rows = [row(st("w", 10, -4, 2), *lddw(1, handle), movr(2, 10)),
            row(alu64("add", 2, -4)),
            row(call(1)),
            row(jmp("jeq", 0, 1, 0), mov(3, 5)),
            row(atomic("dw", 0, 3, 0, 0x00), exit_action(1)),
            row(exit_action(2))]
    m = model(rows, counter_maps())
    for _ in range(3):
        res = m.run(PKT)
        assert res.action == 1 and res.fault is None
    assert m.state.dump()["counters"][(2).to_bytes(4, "little")] == (15).to_bytes(8, "little")
    array_lat = 1  # the key read, then the index check and the address (docs/helpers.md, the array kinds)
    assert res.cycles == 1 + 1 + (1 + array_lat) + 1 + 1


def test_access_fault_discards_the_row() -> None:
    rows = [load_data(mov(4, 0)), row(st("b", R_DATA, 0, 0x55), ldx("b", 5, 4, 0)), row(exit_action(2))]
    res = model(rows).run(PKT)
    assert res.action == params.XDP_ABORTED and res.fault and "access fault" in res.fault
    assert res.packet == PKT  # lane 0's store was discarded


def test_out_of_packet_access_faults() -> None:
    rows = [load_data(), row(ldx("b", 0, R_END, 0)), row(exit_())]
    res = model(rows).run(PKT)
    assert res.action == 0 and "access fault" in res.fault


def test_falling_off_the_end_and_runts() -> None:
    res = model([row(mov(0, 2))]).run(PKT)
    assert res.action == 0 and "illegal instruction" in res.fault
    res = model([row(exit_action(2))]).run(bytes(59))
    assert res.action == params.XDP_DROP and res.cycles == 0


def test_cycle_limit() -> None:
    res = VliwModel(Rom([row(ja(-1))]), MapState.from_maps([]), cycle_limit=100).run(PKT)
    assert res.action == 0 and res.fault == "cycle limit" and res.cycles == 100


def test_illegal_instruction_faults_when_reached() -> None:
    rows = [row(jmp("jne", 1, 1, 0)), row(lddw(2, 7, src=1)[0], lddw(2, 7, src=1)[1]), row(exit_action(2))]
    res = model(rows).run(PKT)
    assert res.action == 2  # the bad row is never reached
    rows[0] = row(mov(0, 0))
    res = model(rows).run(PKT)
    assert res.action == 0 and "pseudo source" in res.fault


@pytest.mark.parametrize("rows,message", [
    ([row(mov(2, 1), mov(2, 2)), row(exit_())], "r2 is also written by lane 0"),
    ([row(mov(10, 1)), row(exit_())], "writes r10"),
    ([row(call(7), call(8)), row(exit_())], "second helper call"),
    ([row(call(7), mov(0, 1)), row(exit_())], "writes r0 in the row of the helper call"),
    ([load_data(), row(st("w", R_DATA, 0, 1), st("h", R_DATA, 2, 1)), row(exit_())], "overlaps"),
    ([load_data(), row(atomic("w", R_DATA, 4, 0, 0), ldx("b", 5, R_DATA, 8)), row(exit_())], "atomic shares"),
    ([row(mov(1, params.MAP_HANDLE_BASE), movr(2, 10)), row(alu64("add", 2, -4)),
      row(st("w", 2, 0, 1), call(1)), row(exit_())], "helper reads"),
])
def test_contract_violations_are_detected(rows: list, message: str) -> None:
    with pytest.raises(ContractViolation, match=message) as exc:
        model(rows, counter_maps()).run(PKT)
    assert "row " in str(exc.value) and "lane " in str(exc.value)


def test_trace_records() -> None:
    rows = [load_data(), row(st("b", R_DATA, 1, 9), mov(0, 2)), row(exit_())]
    res = model(rows, trace=True).run(PKT)
    assert [r.row for r in res.trace] == [0, 1, 2]
    t1 = res.trace[1]
    assert isinstance(t1, TraceRecord)
    assert t1.regs == [(1, 0, 2)]
    assert t1.mem == [(0, params.PKT_BASE + params.PKT_HEADROOM + 1, b"\x09")]
    assert t1.next == 2 and t1.cycles == 1
    assert res.trace[0].regs == [(0, R_DATA, params.PKT_BASE + 256), (1, R_END, params.PKT_BASE + 256 + 64)]
    assert res.trace[-1].next is None


def test_run_raw() -> None:
    rows = [row(ldx("dw", 0, 1, 0), movr(3, 2)), row(alu64("add", 0, src=3), exit_())]
    m = model(rows)
    assert m.run_raw((40).to_bytes(8, "little")) == 48


def test_layout_roundtrip_used_by_models() -> None:
    layout = MapLayout.from_maps(counter_maps())
    again = MapLayout.from_json(layout.to_json())
    assert again.to_json() == layout.to_json()


def test_no_byte_of_a_previous_packet_is_visible() -> None:
    # grow the tail by 100 bytes and return the sum of the grown bytes' first 8 as r0
    rows = [row(mov(2, 100), movr(6, 1)),
            row(call(params.HELPER_IDS["xdp_adjust_tail"])),
            row(ldx("w", 3, 6, 4)),
            row(ldx("dw", 0, 3, -8)),
            row(exit_())]
    m = model(rows)
    first = m.run(b"\xaa" * 300)
    assert first.fault is None and len(first.packet) == 400
    second = m.run(b"\xbb" * 64)
    assert second.action == 0 and second.fault is None
    assert second.packet == b"\xbb" * 64 + bytes(100)
    # and a load just past data_end faults instead of reading stale bytes
    res = model([load_data(), row(ldx("b", 0, R_END, 100)), row(exit_())]).run(b"\xcc" * 64)
    assert res.action == 0 and "access fault" in res.fault


def test_ktime_counts_board_cycles() -> None:
    rows = [row(mov(3, 0)), row(call(params.HELPER_IDS["ktime_get_ns"])), row(exit_())]
    m = model(rows)
    t1, t2 = m.run(PKT).action, m.run(PKT).action
    assert t1 == (1 * 32) // 5 and t2 == ((3 + 1) * 32) // 5  # 6.4 ns per cycle, counted across packets


def _regs_of(ins) -> tuple[set[int], set[int]]:
    """(read, written) registers of a straight-line ALU slot from alu_slots()."""
    from hxdp.isa import table as T

    info = T.OPCODES[ins.opcode]
    reads = {ins.dst} if info.op != "mov" else set()
    if info.src_reg:
        reads.add(ins.src)
    return reads, {ins.dst}


def _pack(slots: list) -> list[list]:
    """Greedy list scheduling into rows: a slot joins the last row unless it reads or writes a register written
    there (RAW/WAW); reading a register that the row writes later is fine (lanes read before the row). A row has
    params.MUL_UNITS multiplications at most."""
    rows: list[list] = [[]]
    written: set[int] = set()

    def muls(r: list) -> int:
        return sum(1 for x in r if x.info.kind == "alu" and x.info.op == "mul")

    for ins in slots:
        reads, writes = _regs_of(ins)
        if len(rows[-1]) == 4 or (reads | writes) & written or muls(rows[-1]) + muls([ins]) > params.MUL_UNITS:
            rows.append([])
            written = set()
        rows[-1].append(ins)
        written |= writes
    return [row(*r) for r in rows]


def alu_slots():
    from bpf_asm import alu32
    from hypothesis import strategies as st

    ops = ["add", "sub", "mul", "div", "or", "and", "lsh", "rsh", "mod", "xor", "mov", "arsh"]
    regs = st.integers(0, 9)

    @st.composite
    def one(draw):
        mk = draw(st.sampled_from([alu64, alu32]))
        op = draw(st.sampled_from(ops))
        d = draw(regs)
        if draw(st.booleans()):
            return mk(op, d, src=draw(regs))
        return mk(op, d, draw(st.integers(-(1 << 31), (1 << 31) - 1)))

    return st.lists(one(), min_size=1, max_size=24)


def test_packed_rows_match_the_sequential_model() -> None:
    """Random ALU programs packed into rows (WAR pairs share rows) give the sequential model's registers."""
    from hypothesis import given, settings

    from hxdp.frontend.program import Program
    from hxdp.models.seq import SeqModel

    @settings(max_examples=150, deadline=None)
    @given(alu_slots())
    def check(slots: list) -> None:
        init = [mov(r, 1000 * r + 7) for r in range(10)]
        seq = SeqModel(Program("t", "xdp", init + slots + [exit_()]), MapState.from_maps([]))
        seq.run(PKT)
        rows = _pack(init[:4]) + _pack(init[4:]) + _pack(slots) + [row(exit_())]
        vliw = model(rows)
        vliw.run(PKT)
        assert vliw.regs[:10] == seq.regs[:10]

    check()


def test_entry_registers() -> None:
    """Contract section 1: r1 = CTX_BASE, r2 = the packet start (ctx->data), r10 = STACK_TOP, others zero."""
    for reg, want in ((1, params.CTX_BASE), (2, params.PKT_BASE + params.PKT_HEADROOM), (10, params.STACK_TOP),
                      (3, 0), (9, 0)):
        assert model([row(movr(0, reg), exit_())]).run(PKT).action == want
