"""The RTL's off-chip map memory port (sephirot_xmem.v, the harness's QDRII+ and DDR3 models): lane loads, stores
and atomics in QDR and DDR equal to the VLIW model row by row and cycle by cycle, the map guard's tiers, and the
RTL's refusals (docs/maps.md "Memory tiers")."""

from __future__ import annotations

from pathlib import Path

import pytest
from bpf_asm import alu64, atomic, call, exit_, exit_action, lddw, ldx, mov, row, stx
from kernel_fixtures import requires_kernel
from rtl_support import first_divergence, require_rtl

from hxdp import params
from hxdp.cli import main
from hxdp.errors import HxdpError
from hxdp.frontend.program import MapDef
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.vliw import VliwModel
from hxdp.rtl.sim import RtlSim, map_config_lines

pytestmark = pytest.mark.rtl
ARRAY = params.LINUX_MAP_TYPE_IDS["array"]
HASH = params.LINUX_MAP_TYPE_IDS["hash"]
ROOT = Path(__file__).parent.parent / "xdp_progs"


def table(tier: str) -> MapLayout:
    return MapLayout.from_maps([MapDef("tab", ARRAY, 4, 32, 4, tier=tier)])


def lanes_rom(layout: MapLayout, past: bool = False) -> Rom:
    """Entry 0 of `tab` through its value pointer: a store, two loads in one row (one across an 8-byte boundary),
    an atomic add and a load; `past`: then a load past the 32-byte value (the map guard faults it)."""
    ptr = layout.value_addr(0)
    rows = [row(ldx("w", 2, 1, 0), *lddw(6, ptr)),
            row(ldx("dw", 4, 2, 0)),
            row(stx("dw", 6, 4, 0), mov(0, 2)),
            row(ldx("dw", 5, 6, 0), ldx("dw", 7, 6, 4)),
            row(atomic("dw", 6, 4, 8, 0x00)),
            row(ldx("dw", 8, 6, 8), alu64("add", 5, 0, 7))]
    if past:
        rows.append(row(ldx("dw", 9, 6, 32)))
    rows.append(row(exit_action(2)))
    return Rom(rows)


def run_both(rom: Rom, layout: MapLayout, packets: list[bytes]) -> tuple[list, list, MapState, MapState]:
    s_rtl, s_vm = MapState(layout), MapState(layout)
    got = RtlSim(rom, layout, s_rtl, trace=True).run_packets(packets)
    vm = VliwModel(rom, s_vm, trace=True)
    want = [vm.run(p) for p in packets]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        div = first_divergence(g.trace, w.trace)
        assert div is None, f"packet {i}: {div}"
        assert (g.action, g.packet, g.fault is None, g.cycles) == (w.action, w.packet, w.fault is None, w.cycles)
    return got, want, s_rtl, s_vm


PACKETS = [bytes((i + k * 37) % 256 for k in range(64)) for i in (0, 7, 200)]


@pytest.mark.parametrize("tier", ["qdr", "ddr"])
def test_lane_accesses_off_chip_equal_the_model(tier: str) -> None:
    require_rtl()
    layout = table(tier)
    got, _, s_rtl, s_vm = run_both(lanes_rom(layout), layout, PACKETS)
    assert {n: bytes(p) for n, p in s_rtl.tiers[tier].pages.items()} == \
        {n: bytes(p) for n, p in s_vm.tiers[tier].pages.items()}
    entry = s_rtl.lookup(0, bytes(4))
    assert entry[:8] == PACKETS[-1][:8]
    assert int.from_bytes(entry[8:16], "little") == sum(int.from_bytes(p[:8], "little") for p in PACKETS) % 2**64
    # each off-chip read waits the tier's first-data latency (the store is posted): two loads, an atomic, a load
    _, on_chip, _, _ = run_both(lanes_rom(table("bram")), table("bram"), PACKETS[:1])
    assert got[0].cycles == on_chip[0].cycles + 4 * params.TIER_READ_CYCLES[tier]


@pytest.mark.parametrize("tier", ["qdr", "ddr"])
def test_map_guard_faults_past_an_off_chip_value(tier: str) -> None:
    require_rtl()
    layout = table(tier)
    got, want, _, _ = run_both(lanes_rom(layout, past=True), layout, PACKETS[:1])
    assert got[0].fault == "access fault" and got[0].action == params.XDP_ABORTED
    assert "outside its map value" in want[0].fault


@pytest.mark.parametrize("tier", ["qdr", "ddr"])
def test_off_chip_load_then_division_then_helper(tier: str) -> None:
    # one row with an off-chip load, a division and a helper call: the waits add in that order (contract section 6)
    require_rtl()
    def rom(layout: MapLayout) -> Rom:
        return Rom([row(*lddw(6, layout.value_addr(0)), mov(7, 1000), mov(1, 5)),
                    row(mov(2, 0)),
                    row(ldx("dw", 5, 6, 8), alu64("div", 7, 7), call(params.HELPER_IDS["redirect"])),
                    row(exit_())])

    got, _, _, _ = run_both(rom(table(tier)), table(tier), PACKETS[:1])
    _, on_chip, _, _ = run_both(rom(table("bram")), table("bram"), PACKETS[:1])
    assert got[0].action == params.XDP_REDIRECT and got[0].redirect == 5
    assert got[0].cycles == on_chip[0].cycles + params.TIER_READ_CYCLES[tier]


def test_rtl_refuses_an_off_chip_lpm_trie_and_the_board_any_off_chip_map() -> None:
    lpm = MapLayout.from_maps([MapDef("routes", params.LINUX_MAP_TYPE_IDS["lpm_trie"], 8, 4, 16, flags=1,
                                      tier="qdr")])
    with pytest.raises(HxdpError, match="map routes is placed in qdr: not supported by the RTL for a lpm_trie map"):
        RtlSim(Rom([row(exit_action(2))]), lpm, MapState(lpm), exe=Path("/nonexistent"))
    layout = table("qdr")
    with pytest.raises(HxdpError, match="map tab is placed in qdr: not supported by the board yet"):
        map_config_lines(layout)
    entry = int(map_config_lines(layout, off_chip=True)[0].split()[1], 16)
    assert entry >> 209 & 3 == params.TIERS.index("qdr")


@requires_kernel
@pytest.mark.kernel
@pytest.mark.parametrize("tier", ["qdr", "ddr"])
def test_firewall_config_off_chip_on_the_rtl(tier: str, xdp_prog_objects: dict[str, Path],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    # simple_firewall reads fw_config through an inlined value pointer, and its flow table through the map helpers:
    # either or both in QDR or DDR, it equals the kernel
    require_rtl()
    args = ["diff", str(xdp_prog_objects["simple_firewall"]), "--pcap", str(ROOT / "traffic" / "simple_firewall.pcap"),
            "--maps", str(ROOT / "maps" / "simple_firewall.json"), "--map", f"fw_config.tier={tier}"]
    assert main([*args, "--engine", "rtl"]) == 0
    assert "14 packets identical to the kernel on rtl (actions 1: 7, 4: 7)" in capsys.readouterr().out
    assert main([*args, "--map", f"flows.tier={tier}", "--engine", "rtl"]) == 0
    assert "14 packets identical to the kernel on rtl (actions 1: 7, 4: 7)" in capsys.readouterr().out


@pytest.mark.parametrize(("tier", "placed"), [("qdr", ("fw_config",)), ("ddr", ("fw_config",)),
                                              ("qdr", ("fw_config", "flows")), ("ddr", ("flows",))])
def test_firewall_off_chip_rtl_cycles_equal_the_model(tier: str, placed: tuple[str, ...],
                                                      xdp_prog_objects: dict[str, Path]) -> None:
    from hxdp.compiler import compile_program
    from hxdp.suite import programs
    from hxdp.traffic.pcap import read_pcap

    require_rtl()
    prog = next(p for p in programs() if p.name == "simple_firewall")
    program = prog.load()
    for m in program.maps:
        if m.name in placed:
            m.tier = tier
    res = compile_program(program)
    assert all(res.layout.by_name[name].tier == tier for name in placed)
    packets = read_pcap(prog.traffic)
    s_rtl, s_vm = MapState(res.layout), MapState(res.layout)
    s_rtl.apply_config(prog.map_config())
    s_vm.apply_config(prog.map_config())
    got = RtlSim(res.rom, res.layout, s_rtl, trace=True).run_packets(packets)
    vm = VliwModel(res.rom, s_vm, trace=True)
    for i, pkt in enumerate(packets):
        want = vm.run(pkt)
        assert first_divergence(got[i].trace, want.trace) is None
        assert (got[i].action, got[i].packet, got[i].cycles) == (want.action, want.packet, want.cycles)
    assert s_rtl.dump() == s_vm.dump()


@pytest.mark.parametrize("tier", ["qdr", "ddr"])
def test_helper_reading_an_off_chip_value_faults_on_both(tier: str) -> None:
    # a key in an off-chip map value passed to a helper: the helper unit's read port reaches the on-chip tier only,
    # an access fault on the RTL and on the models, with the reason (docs/maps.md "Memory tiers")
    layout = MapLayout.from_maps([MapDef("tab", ARRAY, 4, 32, 4, tier=tier), MapDef("h", HASH, 4, 8, 4)])
    rom = Rom([row(*lddw(1, params.MAP_HANDLE_BASE + 1)), row(*lddw(2, layout.value_addr(0))),
               row(call(params.HELPER_IDS["map_lookup_elem"])), row(exit_())])
    got, want, _, _ = run_both(rom, layout, PACKETS[:1])
    assert got[0].fault == "access fault" and got[0].action == params.XDP_ABORTED
    assert "the helper unit's read port reaches the on-chip map memory only" in want[0].fault
