"""Tail calls through PROG_ARRAY maps: resident programs and their entry rows, PROG_ARRAY entries from the host,
and a hand-made ROM whose tail calls (taken, empty, past max_entries, 33 in a chain, to a row outside the ROM,
through a map of another kind) the RTL runs as the VLIW model does, cycle for cycle."""

from __future__ import annotations

import json

import pytest
from kernel_fixtures import requires_kernel
from rtl_support import first_divergence, require_rtl, row

from hxdp import params
from hxdp.compiler import compile_program
from hxdp.frontend.program import MapDef
from hxdp.isa.rom import Rom
from hxdp.models.mapconfig import check_map_config
from hxdp.models.maps import MapError, MapLayout, MapState
from hxdp.models.vliw import VliwModel
from hxdp.suite import programs

PARSE = next(p for p in programs() if p.name == "xdp_tail_parse")
STAGES = ["xdp_tail_parse", "parse_ipv4", "parse_ipv6", "parse_tcp", "parse_udp"]


@pytest.fixture(scope="module")
def parse():  # noqa: ANN201
    if not PARSE.obj.exists():
        pytest.skip(f"{PARSE.obj} not built (make -C xdp_progs)")
    return compile_program(PARSE.load())


def test_every_program_of_the_object_is_resident(parse) -> None:  # noqa: ANN001
    rows = parse.layout.programs
    assert list(rows) == STAGES and rows["xdp_tail_parse"] == 0
    starts = list(rows.values())
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    assert [p["row"] for p in parse.report["programs"]] == starts
    assert sum(p["rows"] for p in parse.report["programs"]) == len(parse.rom.rows)
    # the layout file keeps the entry rows; a PROG_ARRAY value names a program by its row + 1
    again = MapLayout.from_json(parse.layout.to_json())
    assert again.programs == rows
    assert again.prog_value("parse_udp") == (rows["parse_udp"] + 1).to_bytes(4, "little")


def test_one_map_layout_for_all_programs(parse) -> None:  # noqa: ANN001
    prog = PARSE.load()
    assert [m.name for m in prog.maps] == ["stages", "seen"]
    assert all(p.maps == prog.maps for p in prog.resident)
    assert [r.kind for r in parse.layout.regions] == ["prog_array", "array"]


def test_host_entries_name_programs(parse) -> None:  # noqa: ANN001
    state = MapState(parse.layout)
    state.apply_config(PARSE.map_config())
    entries = state.dump()["stages"]
    assert entries == {(i).to_bytes(4, "little"): parse.layout.prog_value(n)
                       for i, n in ((0, "parse_ipv4"), (1, "parse_ipv6"), (14, "parse_tcp"), (25, "parse_udp"))}
    with pytest.raises(MapError, match=r"maps.stages\[0\].prog: no program named 'nope'.*programs: xdp_tail_parse"):
        state.apply_config({"maps": {"stages": [{"key": "00000000", "prog": "nope"}]}}, source="f.json")
    with pytest.raises(MapError, match=r"maps.seen\[0\].prog: map seen is a array, only a prog_array entry"):
        state.apply_config({"maps": {"seen": [{"key": "00000000", "prog": "parse_tcp"}]}}, source="f.json")
    with pytest.raises(MapError, match='needs "key" and "value" .*or "key" and "prog"'):
        check_map_config({"maps": {"stages": [{"key": "00", "value": "00", "prog": "x"}]}})


def test_row_limit_applies_to_the_total(parse) -> None:  # noqa: ANN001
    from hxdp.compiler import CompileError, CompileOptions

    total = len(parse.rom.rows)
    with pytest.raises(CompileError, match=f"5 resident programs take {total} rows, the instruction memory holds "
                                           f"{total - 1}"):
        compile_program(PARSE.load(), CompileOptions(imem_rows=total - 1))


@requires_kernel
@pytest.mark.kernel
def test_kernel_oracle_sets_prog_fds() -> None:
    if not PARSE.obj.exists():
        pytest.skip(f"{PARSE.obj} not built (make -C xdp_progs)")
    with PARSE.kernel() as kp:
        assert set(kp.prog_fds) == set(STAGES)
        kp.apply_config(PARSE.map_config())
        assert "stages" not in kp.dump()  # program ids: not compared with the NIC's entry rows


# --- a hand-made ROM on the VLIW model and the RTL -------------------------------------------------------------------
# packet byte 0: the index, byte 1: the map (0 the prog_array, 1 an array, 5 no map). Before the call the program
# dirties r8 and the stack; the target (row 7) returns 3 + r8 + the stack word + r3: XDP_TX only from a fresh state.
TARGET, SELF, OUTSIDE = 7, 0, 200
ROM = Rom([
    row("r6 = *(u32 *)(r1 + 0)", "r8 = 9"),
    row("r3 = *(u8 *)(r6 + 0)", "r7 = *(u8 *)(r6 + 1)", "*(u64 *)(r10 - 8) = r8"),
    row("r2 = 0x50000000 ll"),
    row("r2 += r7"),
    row("call 12"),
    row("exit 1"),
    row("exit 0"),
    row("r4 = *(u64 *)(r10 - 8)", "r0 = r8"),
    row("r0 += r4"),
    row("r0 += r3"),
    row("r0 += 3"),
    row("exit"),
])
PACKETS = {
    "taken": (0, 0, "TX"),
    "empty entry": (1, 0, "DROP"),
    "the program itself, 33 times": (3, 0, "DROP"),
    "index past max_entries": (9, 0, "DROP"),
    "entry row outside the ROM": (2, 0, "ABORTED"),
    "an array, not a prog_array": (0, 1, "ABORTED"),
    "no such map": (0, 5, "ABORTED"),
}


def _state() -> MapState:
    layout = MapLayout.from_maps([MapDef("jt", params.LINUX_MAP_TYPE_IDS["prog_array"], 4, 4, 4),
                                  MapDef("arr", params.LINUX_MAP_TYPE_IDS["array"], 4, 8, 1)])
    state = MapState(layout)
    for index, target in ((0, TARGET), (2, OUTSIDE), (3, SELF)):
        assert state.update(0, index.to_bytes(4, "little"), (target + 1).to_bytes(4, "little")) == 0
    return state


def test_hand_made_rom_on_the_model() -> None:
    vm = VliwModel(ROM, _state())
    names = {v: k for k, v in params.ACTION_NAMES.items()}
    for what, (index, mid, action) in PACKETS.items():
        res = vm.run(bytes([index, mid]) + bytes(58))
        assert res.action == names[action], f"{what}: {res}"
    chain = vm.run(bytes([3, 0]) + bytes(58))
    one = vm.run(bytes([1, 0]) + bytes(58))
    # a run is rows 0-4 (the call's row 2 cycles) and then the jump's bubble or, when the call falls through, the
    # exit row: 1 + 33 runs, each as long as one that falls through
    assert chain.cycles == (1 + params.MAX_TAIL_CALL_CNT) * one.cycles == 34 * 7
    assert "outside the program" in (vm.run(bytes([2, 0]) + bytes(58)).fault or "")
    assert "helper fault" in (vm.run(bytes([0, 1]) + bytes(58)).fault or "")


@pytest.mark.rtl
def test_hand_made_rom_rtl_equals_model() -> None:
    from hxdp.rtl.sim import RtlSim

    require_rtl()
    packets = [bytes([index, mid]) + bytes(58) for index, mid, _ in PACKETS.values()] * 2
    s_rtl, s_vm = _state(), _state()
    got = RtlSim(ROM, state=s_rtl, trace=True).run_packets(packets)
    vm = VliwModel(ROM, s_vm, trace=True)
    for i, pkt in enumerate(packets):
        want = vm.run(pkt)
        assert first_divergence(got[i].trace, want.trace) is None, f"packet {i}"
        assert (got[i].action, got[i].fault is None, got[i].cycles) == \
            (want.action, want.fault is None, want.cycles), f"packet {i}: {got[i]} vs {want}"
    assert s_rtl.dump() == s_vm.dump()


def test_layout_without_programs_keeps_its_format() -> None:
    layout = MapLayout.from_maps([MapDef("a", params.LINUX_MAP_TYPE_IDS["array"], 4, 8, 1)])
    assert "programs" not in json.loads(layout.to_json())
    with pytest.raises(MapError, match="no program named 'x'.*none: the ROM holds one program"):
        layout.prog_value("x")


@requires_kernel
@pytest.mark.kernel
def test_reproducer_keeps_the_prog_array_entries(tmp_path) -> None:  # noqa: ANN001
    """A diff reproducer's maps.json comes from the kernel's dump, which has no PROG_ARRAY (program ids): the
    configuration's entries, by program name, go in beside it, so the reproducer runs the same chain."""
    from hxdp import diff as diffmod
    from hxdp.traffic.pcap import read_pcap

    if not PARSE.obj.exists():
        pytest.skip(f"{PARSE.obj} not built (make -C xdp_progs)")
    packets = read_pcap(PARSE.traffic)
    with PARSE.kernel() as kp:
        kp.apply_config(PARSE.map_config())
        before = kp.dump()
    report = diffmod.DiffReport("vliw-model")
    diffmod.write_repro(tmp_path, PARSE.obj, packets[:1], before, report, None, PARSE.prog,
                        prog_entries={"stages": PARSE.map_config()["maps"]["stages"]})
    cfg = json.loads((tmp_path / "maps.json").read_text())
    assert cfg["maps"]["stages"] == PARSE.map_config()["maps"]["stages"] and "seen" in cfg["maps"]
    again = diffmod.run_diff(tmp_path / PARSE.obj.name, packets, cfg, engine="vliw-model", prog=PARSE.prog)
    assert again.ok and again.actions == {1: 8, 2: 9}


@pytest.mark.rtl
def test_board_prog_array_entries_by_name(parse, tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    """hxdp prog load writes a configuration's PROG_ARRAY entries by program name; hxdp map update takes bpftool's
    `value name PROG` and refuses what names kernel programs."""
    from hxdp.board import tools as H
    from hxdp.board.sim import BoardServer
    from hxdp.cli import main as cli_main

    require_rtl()
    monkeypatch.setenv(H.STATE_ENV, str(tmp_path / "state"))
    row_of = {n: (r + 1).to_bytes(4, "little").hex(" ") for n, r in parse.layout.programs.items()}
    with BoardServer(ports=2) as srv:
        b = ["--board", srv.spec]
        assert cli_main(["prog", "load", str(PARSE.obj), "--prog", PARSE.name, "--config", str(PARSE.maps), *b]) == 0
        capsys.readouterr()
        assert cli_main(["map", "lookup", "stages", "0", "0", "0", "0", *b]) == 0
        assert capsys.readouterr().out == f"key: 00 00 00 00  value: {row_of['parse_ipv4']}\n"
        assert cli_main(["map", "update", "stages", "key", "1", "0", "0", "0", "value", "name", "parse_udp", *b]) == 0
        assert cli_main(["map", "lookup", "stages", "1", "0", "0", "0", *b]) == 0
        assert capsys.readouterr().out.endswith(f"value: {row_of['parse_udp']}\n")
        assert cli_main(["map", "update", "stages", "2", "0", "0", "0", "value", "id", "7", *b]) == 1
        assert "value id: a PROG_ARRAY entry on the NIC names a program resident" in capsys.readouterr().err
        assert cli_main(["map", "update", "stages", "2", "0", "0", "0", "value", "name", "nope", *b]) == 1
        assert "no program named 'nope'" in capsys.readouterr().err
