"""The schedule verifier rejects every row that breaks the execution contract, naming row and lane."""

from __future__ import annotations

import pytest
from bpf_asm import alu64, atomic, call, exit_, exit_action, ja, jmp, lddw, ldx, mov, row, st, stx

from hxdp import params
from hxdp.compiler.verify import verify_rom
from hxdp.errors import CompileError
from hxdp.isa.insn import NOP, Insn
from hxdp.isa.rom import Rom


def rom(*rows: list[Insn]) -> Rom:
    return Rom([list(r) for r in rows])


# every access proved to be in the ctx, which has no port rule: the tests of the other rules are not stopped by
# the port counts of the stack, the packet buffer or the map memory
NO_PORT_RULE = {(r, lane): "ctx" for r in range(8) for lane in range(4)}


def test_good_rom_passes() -> None:
    verify_rom(rom(row(ldx("w", 2, 1, 0), mov(3, 1), *lddw(4, 5)),
                   row(stx("b", 2, 3, 0), stx("b", 2, 3, 1), jmp("jeq", 3, 0, 1), exit_action(2)),
                   row(mov(0, 1), exit_())), regions=NO_PORT_RULE)


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
    ([row(alu64("mul", 2, 3), mov(4, 1), alu64("mul", 5, src=6), exit_())],
     r"row 0 lane 2 .*multiplication past the row's 1"),
])
def test_bad_rows_rejected(rows, pattern) -> None:
    with pytest.raises(CompileError, match=pattern):
        verify_rom(rom(*rows), regions=NO_PORT_RULE)


@pytest.mark.parametrize("where,name", [("stack", "stack"), ("pkt", "packet buffer"), (None, "stack")])
def test_no_load_beside_a_helper_call_where_it_reads(where: str | None, name: str) -> None:
    """The helper reads the stack and the packet through the lanes' first load port: a load that may reach them
    shares no row with a call; one map load may, a second not (the helper takes the map memory's last port)."""
    assert params.CALL_ROW_LOADS == {"stack": 0, "pkt": 0, "map": 1}
    r = rom(row(ldx("b", 3, 2, 0), call(7), exit_()))
    regions = {(0, 0): where} if where else {}
    with pytest.raises(CompileError, match=rf"row 0 lane 0 .*may read the {name}.* in the row of a get_prandom_u32"):
        verify_rom(r, regions=regions)
    verify_rom(r, regions={(0, 0): "map"})
    two = rom(row(ldx("b", 3, 2, 0), ldx("b", 4, 2, 1), call(7), exit_()))
    with pytest.raises(CompileError, match=r"row 0 lane 1 .*may read the map memory.* 1 map memory load"):
        verify_rom(two, regions={(0, 0): "map", (0, 1): "map"})


def test_disjoint_stores_with_proof_pass() -> None:
    r = rom(row(stx("w", 2, 3, 0), stx("w", 5, 4, 0), exit_()))
    verify_rom(r, {(0, 0, 1)}, regions=NO_PORT_RULE)


def test_same_base_disjoint_stores_pass() -> None:
    # two stores through r2, proven by the compiler to be in the packet
    verify_rom(rom(row(stx("w", 2, 3, 0), st("b", 2, 8, 1), exit_())), regions={(0, 0): "pkt", (0, 1): "pkt"})


@pytest.mark.parametrize("kind", ["load", "store"])
def test_stack_ports_per_row(kind: str) -> None:
    """STACK_LOAD_PORTS loads and STACK_STORE_PORTS stores per row may use the stack; the last access below goes
    through r2, which the compiler did not prove to be off the stack, so it counts until it is proved."""
    ports = params.STACK_LOAD_PORTS if kind == "load" else params.STACK_STORE_PORTS
    if kind == "load":
        acc = [ldx("b", 3 + k, 10, -1 - k) for k in range(ports)] + [ldx("b", 7, 2, 0)]
    else:
        acc = [stx("b", 10, 3, -1 - k) for k in range(ports)] + [st("b", 2, 0, 1)]
    rows = [row(*acc, exit_())] if ports + 2 <= 4 else [row(*acc), row(exit_())]
    verb = "read" if kind == "load" else "write"
    with pytest.raises(CompileError, match=rf"row 0 lane {ports} .*may {verb} the stack .* {ports} stack {kind} port"):
        verify_rom(rom(*rows))
    disjoint = {(0, a, b) for a in range(ports + 1) for b in range(a + 1, ports + 1)}  # (the stack and r2's region)
    verify_rom(rom(*rows), disjoint, regions={(0, ports): "pkt"})


@pytest.mark.parametrize("region,name,kind,ports", [
    ("pkt", "packet buffer", "load", params.PKT_LOAD_PORTS), ("pkt", "packet buffer", "store", params.PKT_STORE_PORTS),
    ("map", "map memory", "load", params.MAP_LOAD_PORTS), ("map", "map memory", "store", params.MAP_STORE_PORTS),
])
def test_packet_and_map_ports_per_row(region: str, name: str, kind: str, ports: int) -> None:
    """As many accesses of a kind as the memory has ports pass; one more is rejected, naming it, when it is
    proved to be in that memory or not proved to be elsewhere; proved to be elsewhere, it passes."""
    make = (lambda k: ldx("b", 3 + k, 2, k)) if kind == "load" else (lambda k: st("b", 2, k, 1))
    acc = [make(k) for k in range(ports + 1)]
    rows = [row(*acc, exit_())] if ports + 2 <= 4 else [row(*acc), row(exit_())]
    verb = "read" if kind == "load" else "write"
    placed = {(0, k): region for k in range(ports)}
    for last in (region, None):
        where = {**placed, (0, ports): last} if last else placed
        with pytest.raises(CompileError, match=rf"row 0 lane {ports} .*may {verb} the {name}.* {ports} {name} {kind}"):
            verify_rom(rom(*rows), regions=where)
    verify_rom(rom(*rows), regions={**placed, (0, ports): "ctx"})


def test_too_many_rows() -> None:
    rows = [row(mov(2, i % 1000)) for i in range(params.IMEM_ROWS)] + [row(exit_())]
    with pytest.raises(CompileError, match=f"needs {params.IMEM_ROWS + 1} rows, instruction memory holds "
                                           f"{params.IMEM_ROWS}"):
        verify_rom(rom(*rows))


def test_war_in_a_row_is_legal() -> None:
    # lane 1 reads r2 before lane 0's write commits: allowed by the contract
    verify_rom(rom(row(mov(2, 5), alu64("add", 3, src=2), exit_())))


@pytest.mark.parametrize("helper,region,name", [
    (1, "map", "map memory"), (2, "map", "map memory"), (3, "map", "map memory"), (44, "pkt", "packet buffer"),
    (69, "stack", "stack"),
])
def test_no_store_beside_a_helper_writing_the_same_memory(helper: int, region: str, name: str) -> None:
    """A row calling a helper that writes a memory itself has no lane store there (proved there or not proved
    elsewhere); a store proved elsewhere passes, and so does a load."""
    hname = params.HELPERS[helper]
    rows = [row(call(helper), st("b", 6, 0, 1), exit_())]
    for where in (region, None):
        regions = {(0, 1): where} if where else {}
        with pytest.raises(CompileError, match=rf"row 0 lane 1 .*may write the {name}.* row of a {hname} call"):
            verify_rom(rom(*rows), regions=regions)
    other = "stack" if region != "stack" else "pkt"
    verify_rom(rom(*rows), regions={(0, 1): other})
    load_beside = rom(row(call(helper), ldx("b", 7, 6, 0), exit_()))
    if params.CALL_ROW_LOADS[region] == 0:   # (the helper reads it through the lanes' load port)
        with pytest.raises(CompileError, match=rf"row 0 lane 1 .*may read the {name}"):
            verify_rom(load_beside, regions={(0, 1): region})
    else:
        verify_rom(load_beside, regions={(0, 1): region})
