"""The original hXDP core: its ISA as data, its model on the artifact's ROMs, --target hxdp-original on the suite."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bpf_asm import alu64, call, exit_, exit_action, jmp, mov, row
from isa_case_files import all_cases
from kernel_fixtures import requires_kernel

from hxdp.compiler import CompileError, CompileOptions, compile_insns
from hxdp.compiler.emit import exit_actions_to_lane
from hxdp.isa import original as O
from hxdp.isa import table as T
from hxdp.isa.insn import NOP, Insn
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.original import OriginalModel
from hxdp.originalsuite import DOC, compile_outcome, diff_outcome
from hxdp.suite import programs

REFERENCE = Path("/work/shared/reference/roms")
PACKET = bytes(range(64))

# The artifact's published ROMs and the action each one gives (its name says it).
PUBLISHED = {"XDP_DROP.bin": 1, "XDP_DROP_early_exit.bin": 1, "XDP_TX_early_exit.bin": 3}

# design.md section 4: the original's three-operand operations.
ORIGINAL_ALU3 = {0x8F: ("add", 64), 0xD7: ("sub", 64), 0xDF: ("or", 64), 0xE7: ("and", 64), 0xEF: ("lsh", 64),
                 0xF7: ("rsh", 64), 0xFF: ("xor", 64), 0x8C: ("add", 32), 0xE4: ("sub", 32), 0xEC: ("lsh", 32),
                 0xF4: ("rsh", 32), 0xFC: ("xor", 32)}


def _model(rom: Rom) -> OriginalModel:
    return OriginalModel(rom, MapState(MapLayout.from_maps([])))


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_rom_decodes_and_runs(name: str) -> None:
    if not REFERENCE.is_dir():
        pytest.skip(f"{REFERENCE} not present")
    rom = Rom.load(REFERENCE / name)
    O.check_rom(rom, name)  # every slot decodes on the original's table
    res = _model(rom).run(PACKET)
    assert res.fault is None and res.action == PUBLISHED[name]


def test_three_operand_table_is_the_originals() -> None:
    got = {op: (i.op, i.width) for op, i in O.OPCODES.items() if i.kind == "alu3"}
    assert got == ORIGINAL_ALU3


def test_common_opcodes_mean_the_same_on_both_cores() -> None:
    common = set(O.OPCODES) & set(T.OPCODES)
    differ = {op for op in common
              if (O.OPCODES[op].kind, O.OPCODES[op].op, O.OPCODES[op].width) !=
              (T.OPCODES[op].kind, T.OPCODES[op].op, T.OPCODES[op].width)}
    assert differ == {0xD7}  # RFC 9669 BSWAP on ours, a three-operand sub on the original
    assert not {op for op, i in O.OPCODES.items() if i.kind in ("atomic", "ldxsx", "bswap")}
    assert not {op for op, i in O.OPCODES.items() if i.kind == "jmp" and i.width == 32}


REFUSED = {
    "exit with action outside lane 0": ([row(NOP, exit_action(1))], r"row 0 lane 1 .*lane 0 only"),
    "register r11": ([row(mov(11, 1), exit_())], r"row 0 lane 0 .*register r11"),
    "JMP32": ([row(Insn(0x16, 1, 0, 0, 1), exit_())], r"opcode 0x16 is not in its opcode table"),
    "atomic": ([row(Insn(0xDB, 10, 1, -8, 0), exit_())], r"opcode 0xdb"),
    "our 32-bit three-operand and": ([row(Insn(0xE6, 1, 2, 0, 3), exit_())], r"opcode 0xe6"),
    "helper redirect": ([row(call(23)), row(exit_())], r"helper 23 \(redirect\)"),
    "signed division": ([row(Insn(0x3F, 1, 2, 1, 0), exit_())], r"signed division"),
    "257 rows": ([row(mov(0, 1))] * 256 + [row(exit_())], r"257 rows"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_check_rom_refuses(case: str) -> None:
    rows, pattern = REFUSED[case]
    rows = [r + [NOP] * (4 - len(r)) for r in rows]
    with pytest.raises(O.OriginalIsaError, match=pattern):
        O.check_rom(Rom(rows, 4))


def test_exit_action_moves_to_lane_zero() -> None:
    # lane 0's branch keeps its priority over the exit of lane 1, which becomes a goto to a row of its own
    rows = [row(mov(0, 5)), row(jmp("jeq", 1, 0, imm=0), exit_action(3)), row(exit_action(2))]
    rom = Rom(exit_actions_to_lane(rows, O.EXIT_ACTION_LANES), 4)
    O.check_rom(rom)
    assert rom.rows[1][1] == Insn(0x05, off=1) and rom.rows[3][0] == exit_action(3)
    m = _model(rom)
    assert m.run(PACKET).action == 3  # r1 (ctx) != 0: lane 0 falls through, lane 1 exits
    rows[1][0] = jmp("jne", 1, 0, imm=0)  # now lane 0 jumps to row 2
    assert _model(Rom(exit_actions_to_lane(rows, O.EXIT_ACTION_LANES), 4)).run(PACKET).action == 2


def test_registers_stay_below_r11() -> None:
    # renaming spreads values over r11-r15 first on our core; the original's target renames onto r0-r10 only
    insns = [mov(r, r) for r in range(6, 10)] + [alu64("add", 0, src=r) for r in range(6, 10)] + [exit_()]
    rom = compile_insns(insns, CompileOptions(target=O.NAME)).rom
    assert max(max(i.dst, i.src) for r in rom.rows for i in r if not i.is_nop) < O.REGS


# eBPF inputs (the compiler takes no hXDP extension opcodes in) with a result to compare
RAW_CASES = [c for c in all_cases() if c.error is None and c.result is not None
             and all(i.opcode in T.RFC9669_OPCODES or i.opcode == 0 for i in c.insns)]


def test_isa_cases_on_the_original_core() -> None:
    """Every ISA case the original's target accepts (JMP32 widened) gives its result on the original's model."""
    ran, jmp32 = 0, 0
    for case in RAW_CASES:
        try:
            rom = compile_insns(case.insns, CompileOptions(target=O.NAME)).rom
        except CompileError as exc:
            assert "not on the original" in str(exc) or "not supported" in str(exc), (case.name, str(exc))
            continue
        assert _model(rom).run_raw(case.mem) == case.result, case.name
        ran += 1
        jmp32 += case.name.startswith("jmp32")
    assert ran > 100 and jmp32 > 10, (ran, jmp32)


SUITE = programs()


@requires_kernel
@pytest.mark.parametrize("sp", SUITE, ids=[s.name for s in SUITE])
def test_suite_program_runs_on_the_original_or_is_refused(sp) -> None:
    if not sp.obj.exists():
        pytest.skip("xdp_progs not built (make -s -C xdp_progs)")
    out = compile_outcome(sp)
    if out.refused is not None:
        assert "not supported on hxdp-original" in out.refused and "\n" not in out.refused
        return
    out = diff_outcome(sp, out)
    assert out.diff is not None and out.diff.startswith("equal to the kernel"), out.diff


def test_doc_table_is_current() -> None:
    """docs/compiler.md's generated table has every program's current compile outcome."""
    text = DOC.read_text()
    for sp in SUITE:
        if not sp.obj.exists():
            pytest.skip("xdp_progs not built (make -s -C xdp_progs)")
        out = compile_outcome(sp)
        cell = "refused | " + out.refused if out.refused is not None else f"{out.rows} rows |"
        assert re.search(rf"^\| {re.escape(sp.name)} \| {re.escape(cell)}", text, re.M), \
            f"{sp.name}: docs/compiler.md is stale, run python3 -m hxdp.originalsuite"


@pytest.mark.parametrize("sp", SUITE, ids=[s.name for s in SUITE])
def test_original_rom_means_the_same_on_our_core(sp) -> None:
    """A ROM for the original core is in the common subset: our VLIW model and our RTL give what the original's
    model gives, packet for packet, and the same maps."""
    from hxdp.compiler import compile_program
    from hxdp.models.vliw import VliwModel
    from hxdp.rtl.sim import RtlSim
    from hxdp.traffic.pcap import read_pcap

    if not sp.obj.exists():
        pytest.skip("xdp_progs not built (make -s -C xdp_progs)")
    try:
        result = compile_program(sp.load(), CompileOptions(target=O.NAME))
    except CompileError:
        pytest.skip("refused for the original core (test_suite_program_runs_on_the_original_or_is_refused)")
    states = [MapState(result.layout) for _ in range(3)]
    for st in states:
        st.apply_config(sp.map_config())
    packets = read_pcap(sp.traffic)
    theirs, ours = OriginalModel(result.rom, states[0]), VliwModel(result.rom, states[1])
    rtl = RtlSim(result.rom, layout=result.layout, state=states[2]).run_packets([(p, 1, 0) for p in packets])
    for i, pkt in enumerate(packets):
        a, b = theirs.run(pkt), ours.run(pkt)
        for got in (b, rtl[i]):
            assert (got.action, got.packet, got.redirect, got.fault is None) == \
                (a.action, a.packet, a.redirect, a.fault is None), f"packet {i}: {got} vs {a}"
    assert states[0].dump() == states[1].dump() == states[2].dump()
