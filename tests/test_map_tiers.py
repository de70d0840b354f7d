"""Map memory tiers (docs/maps.md "Memory tiers"): tags per tier, placement, overrides, the compile report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from bpf_asm import alu64, call, exit_action, jmp, lddw, ldx, movr, row, st
from kernel_fixtures import requires_kernel

from hxdp import params
from hxdp.cli import main
from hxdp.cli.loading import sizes_from_args, tiers_from_args
from hxdp.errors import HxdpError
from hxdp.frontend.program import MapDef
from hxdp.frontend.sizing import MapSizeError, merge_tiers, parse_map_tiers
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState, check_map_config
from hxdp.models.memory import AccessFault, DataMemory, SparseMemory
from hxdp.models.vliw import VliwModel

HASH, ARRAY = params.LINUX_MAP_TYPE_IDS["hash"], params.LINUX_MAP_TYPE_IDS["array"]
SIZED = "xdp_sized_counter"  # xdp_progs/: src_stats sized at load


def counters() -> MapDef:
    return MapDef("cnt", ARRAY, 4, 8, 4)


def test_on_chip_tag_unchanged() -> None:
    # the on-chip tag as before tiers: start in 8-byte words in bits 16:0, length in words in 30:17, read-only 31
    for off, size, ro in ((0, 1, False), (8, 8, True), (0xFFFF8, 131_064, False), (4096, 20, True)):
        old = int(ro) << 31 | (size + 7) // 8 << 17 | off >> 3
        assert params.map_tag(off, size, ro) == old
        assert params.split_map_tag(old) == (off, (size + 7) // 8 * 8, ro)


@pytest.mark.parametrize("tier", params.TIERS)
def test_tier_tags_bound_the_value(tier: str) -> None:
    grain = params.TIER_GRAIN[tier]
    top = params.TIER_BYTES[tier] - grain
    vmax = params.tier_value_max(tier)
    for off, size in ((0, 1), (grain, vmax), (top, grain)):
        tag = params.map_tag(off, size, True, tier)
        assert tag >> 32 == 0
        assert params.split_map_tag(tag, tier) == (off, (size + grain - 1) // grain * grain, True)
        ptr = params.map_pointer(off, size, False, 4, tier)
        assert params.tier_of(ptr & 0xFFFF_FFFF) == tier and ptr & 0xFFFF_FFFF == params.TIER_BASE[tier] + off + 4
    with pytest.raises(ValueError, match="does not fit"):
        params.map_tag(0, vmax + 1, tier=tier)
    with pytest.raises(ValueError, match="does not fit"):
        params.map_tag(params.TIER_BYTES[tier], 8, tier=tier)


def test_tier_figures() -> None:
    assert params.tier_value_max("ddr") == 240 and params.tier_value_max("qdr") == 4088
    assert params.QDR_TAG_START_BITS + params.QDR_TAG_LEN_BITS == 31 == params.DDR_TAG_START_BITS + \
        params.DDR_TAG_LEN_BITS
    with pytest.raises(ValueError, match="does not fit"):
        params.map_tag(8, 8, tier="ddr")  # DDR values start on 16 bytes
    assert params.tier_of(0x4000_0000) == "bram" and params.tier_of(0x5000_0000) is None
    assert params.tier_of(0x6000_0000 + params.QDR_BYTES - 1) == "qdr" and params.tier_of(0x6000_0000 +
                                                                                            params.QDR_BYTES) is None
    assert params.tier_of(0xFFFF_FFFF) == "ddr" and params.tier_of(0x3000_0000) is None


def test_programs_that_fit_stay_on_chip() -> None:
    maps = [counters(), MapDef("h", HASH, 8, 16, 1000), MapDef("g", ARRAY, 4, 100, 1)]
    auto = MapLayout.from_maps(maps)
    pinned = MapLayout.from_maps([MapDef(**{**m.__dict__, "tier": "bram"}) for m in maps])
    assert [(r.tier, r.offset, r.size) for r in auto.regions] == [(r.tier, r.offset, r.size) for r in pinned.regions]
    assert {r.tier for r in auto.regions} == {"bram"}
    assert '"tier"' not in auto.to_json()  # layout files of on-chip maps are as before


def test_large_maps_spill_smallest_first() -> None:
    maps = [counters(), MapDef("huge", HASH, 4, 16, 2_000_000), MapDef("mid", HASH, 8, 16, 100_000)]
    lay = MapLayout.from_maps(maps)
    assert [r.tier for r in lay.regions] == ["bram", "ddr", "qdr"]
    huge = lay.regions[1]
    assert huge.slots == 1 << 22 and huge.slot_size == 32 and huge.value_offset == 16
    assert huge.base == params.DDR_BASE
    for r in lay.regions:  # values start on their tier's granularity
        grain = params.TIER_GRAIN[r.tier]
        assert (r.offset + r.data_offset + r.value_offset) % grain == 0 and r.slot_size % grain == 0
    use = lay.tier_use()
    assert use["ddr"]["maps"] == ["huge"] and use["ddr"]["bytes"] == huge.size == 16 + (1 << 22) * 32
    assert use["qdr"]["maps"] == ["mid"] and use["bram"]["maps"] == ["cnt"]
    back = MapLayout.from_json(lay.to_json())
    assert back.regions == lay.regions
    ptr = lay.value_pointer(1, huge.slot_addr(5) + huge.value_offset)
    assert params.tier_of(ptr) == "ddr"
    assert params.split_map_tag(ptr >> 32, "ddr") == (huge.slot_addr(5) + 16, 16, False)


def test_user_placement() -> None:
    lay = MapLayout.from_maps([MapDef("c", ARRAY, 4, 8, 4, tier="ddr"), MapDef("d", ARRAY, 4, 8, 4, tier="qdr")])
    assert [(r.tier, r.offset, r.slot_size) for r in lay.regions] == [("ddr", 0, 16), ("qdr", 0, 8)]
    with pytest.raises(HxdpError, match="map big: needs .* qdr holds 25165824 bytes"):
        MapLayout.from_maps([MapDef("big", HASH, 4, 16, 2_000_000, tier="qdr")])
    with pytest.raises(HxdpError, match="longer than a map-value pointer's tag describes in ddr"):
        MapLayout.from_maps([MapDef("wide", HASH, 4, 256, 10, tier="ddr")])
    with pytest.raises(HxdpError, match="no map memory tier 'sram'"):
        MapLayout.from_maps([MapDef("c", ARRAY, 4, 8, 4, tier="sram")])
    # too wide for a DDR tag, too large for the chip: QDR
    assert MapLayout.from_maps([MapDef("wide", HASH, 4, 256, 4000)]).regions[0].tier == "qdr"


def test_layout_file_tier_checked() -> None:
    doc = json.loads(MapLayout.from_maps([MapDef("c", ARRAY, 4, 8, 4, tier="qdr")]).to_json())
    assert doc["maps"][0]["tier"] == "qdr"
    doc["maps"][0]["tier"] = "flash"
    with pytest.raises(HxdpError, match=r"maps\[0\].tier is 'flash'"):
        MapLayout.from_json(json.dumps(doc))
    doc["maps"][0]["tier"] = "ddr"  # its slot size is QDR's: not what a DDR region of these sizes has
    with pytest.raises(HxdpError, match=r"\(c\): size 32 is not what a array map of these sizes has \(64\)"):
        MapLayout.from_json(json.dumps(doc))


def test_sparse_memory() -> None:
    mem = SparseMemory(1 << 31)
    assert mem[(1 << 31) - 1] == 0 and mem[100:108] == bytes(8) and not mem.pages
    mem[4094:4098] = b"\x01\x02\x03\x04"  # across a page boundary
    mem[5000] = 7
    mem[1 << 30 : (1 << 30) + 4] = bytes(4)  # zeros allocate nothing
    assert mem[4092:4100] == b"\0\0\x01\x02\x03\x04\0\0" and mem[5000] == 7 and sorted(mem.pages) == [0, 1]
    assert mem.touched(16, 32, 1 << 20) == list(range(128)) + list(range(128, 256))
    with pytest.raises(ValueError, match="does not resize"):
        mem[0:4] = b"\1"
    other = mem.copy()
    other[5000] = 8
    assert mem[5000] == 7


def test_off_chip_state_and_pointers() -> None:
    lay = MapLayout.from_maps([counters(), MapDef("huge", HASH, 4, 16, 2_000_000)])
    state = MapState(lay)
    assert set(state.tiers) == {"ddr"} and len(state.mem) == params.MAP_MEM_BYTES
    keys = [i.to_bytes(4, "little") for i in (1, 77, 1_999_999)]
    for n, key in enumerate(keys):
        assert state.update(1, key, bytes([n]) * 16) == 0
    assert state.count(1) == 3 and state.lookup(1, keys[1]) == bytes([1]) * 16
    assert state.dump()["huge"] == {k: bytes([n]) * 16 for n, k in enumerate(keys)}
    assert state.delete(1, keys[0]) == 0 and state.lookup(1, keys[0]) is None
    off = state.lookup_offset(1, keys[2])
    ptr = lay.value_pointer(1, off)
    mem = DataMemory(state.mem, tiers=state.tiers)
    assert mem.load(ptr + 8, 8) == int.from_bytes(bytes([2]) * 8, "little")
    mem.store(ptr, 4, 0xDEADBEEF)
    assert state.lookup(1, keys[2])[:4] == (0xDEADBEEF).to_bytes(4, "little")
    with pytest.raises(AccessFault, match="outside its map value"):
        mem.load(ptr + 12, 8)
    with pytest.raises(AccessFault, match="outside its map value"):
        mem.load(ptr - 8, 4)  # the slot's key: not the value
    with pytest.raises(AccessFault, match="not a map-value pointer"):
        mem.load(ptr & 0xFFFF_FFFF, 4)
    assert state.copy().dump() == state.dump()


def test_off_chip_refusals() -> None:
    # the VLIW model runs off-chip arrays, hashes and LPM tries; a kind whose off-chip cost is not defined and the
    # board (no off-chip memory controller yet) are refused, naming the map
    from hxdp.rtl.sim import map_config_lines

    lay = MapLayout.from_maps([counters(), MapDef("huge", HASH, 4, 16, 2_000_000)])
    VliwModel(Rom([row(exit_action(2))]), MapState(lay))
    assert MapState(MapLayout.from_maps([counters()])).off_chip_refusal("x") is None
    with pytest.raises(HxdpError, match=r"map huge is placed in ddr: not supported by the board yet .*tier=bram"):
        map_config_lines(lay)
    dev = MapLayout.from_maps([MapDef("ports", params.LINUX_MAP_TYPE_IDS["devmap"], 4, 4, 8, tier="qdr")])
    with pytest.raises(HxdpError, match="map ports is placed in qdr: not supported by the VLIW cycle model for a "
                                        "devmap map"):
        VliwModel(Rom([row(exit_action(2))]), MapState(dev))


def lookup_and_load(tier: str) -> tuple[int, int]:
    """Cycles of a packet that looks key 2 up in a hash in `tier` and loads 8 bytes of the value it finds, and of
    one whose lookup misses (key 3)."""
    out = []
    for key in (2, 3):
        rows = [row(st("w", 10, -4, key), *lddw(1, params.MAP_HANDLE_BASE), movr(2, 10)),
                row(alu64("add", 2, -4)),
                row(call(params.HELPER_IDS["map_lookup_elem"])),
                row(jmp("jeq", 0, 1, 0)),
                row(ldx("dw", 3, 0, 8), exit_action(2)),
                row(exit_action(1))]
        state = MapState(MapLayout.from_maps([MapDef("flows", HASH, 4, 16, 64, tier=tier)]))
        assert state.update(0, (2).to_bytes(4, "little"), bytes(range(16))) == 0
        model = VliwModel(Rom(rows), state, trace=True)
        res = model.run(bytes(64))
        assert res.fault is None and res.action == (2 if key == 2 else 1)
        if key == 2:
            assert model.regs[3] == int.from_bytes(bytes(range(8, 16)), "little")
        out.append(res.cycles)
    return out[0], out[1]


@pytest.mark.parametrize("tier,probe,load", [("qdr", 8 + 2 - 1, 8), ("ddr", 18, 18)])
def test_vliw_off_chip_cycles(tier: str, probe: int, load: int) -> None:
    # the lookup reads the region header, then the slot's header and key window (32 bytes each: two QDR beats, one
    # DDR beat), waiting for each; the lane's 8-byte load waits for its one beat: the first data's latency
    # (docs/maps.md "Memory tiers")
    assert params.tier_read_cycles(tier, 32) == probe and params.tier_read_cycles(tier, 8) == load
    assert params.tier_read_cycles("bram", 32) == 0
    hit, miss = lookup_and_load("bram")
    assert lookup_and_load(tier) == (hit + 2 * probe + load, miss + 2 * probe)


def test_off_chip_value_guarded_in_the_vliw_model() -> None:
    # a load past the 16-byte value in DDR faults like one on chip (the tag's DDR field widths bound it)
    rows = [row(st("w", 10, -4, 2), *lddw(1, params.MAP_HANDLE_BASE), movr(2, 10)),
            row(alu64("add", 2, -4)),
            row(call(params.HELPER_IDS["map_lookup_elem"])),
            row(jmp("jeq", 0, 1, 0)),
            row(ldx("dw", 3, 0, 16), exit_action(2)),
            row(exit_action(1))]
    state = MapState(MapLayout.from_maps([MapDef("flows", HASH, 4, 16, 64, tier="ddr")]))
    state.update(0, (2).to_bytes(4, "little"), bytes(16))
    res = VliwModel(Rom(rows), state).run(bytes(64))
    assert res.action == params.XDP_ABORTED and "outside its map value" in res.fault


def test_tier_options() -> None:
    assert parse_map_tiers(["a.tier=qdr", "a.max_entries=4", "b.tier=ddr", "a.tier=bram"]) == {"a": "bram",
                                                                                              "b": "ddr"}
    assert merge_tiers({"tier": {"a": "ddr", "c": "qdr"}}, ["a.tier=bram"]) == {"a": "bram", "c": "qdr"}
    with pytest.raises(MapSizeError, match="tier must be one of bram, qdr, ddr, not 'dram'"):
        parse_map_tiers(["a.tier=dram"])
    check_map_config({"tier": {"a": "ddr"}})
    with pytest.raises(HxdpError, match="tier.a: tier must be one of"):
        check_map_config({"tier": {"a": 3}}, "f.json")
    args = argparse.Namespace(map_options=["a.tier=ddr", "a.max_entries=5"])
    assert tiers_from_args(args) == {"a": "ddr"} and sizes_from_args(args, tiers=True) == {"a": 5}
    with pytest.raises(MapSizeError, match="only hxdp compile and hxdp diff place maps in tiers"):
        sizes_from_args(args)


def test_compile_places_a_two_million_entry_map_in_ddr(xdp_prog_objects: dict[str, Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    obj, rom, rep = xdp_prog_objects[SIZED], tmp_path / "p.rom", tmp_path / "r.json"
    assert main(["compile", str(obj), "--no-kernel-verify", "--map", "src_stats.max_entries=2000000",
                 "--map", "overflow.tier=qdr", "-o", str(rom), "--report", str(rep)]) == 0
    out = capsys.readouterr().out
    assert "ddr 134,217,744 of 2,147,483,648 bytes (src_stats)" in out and "qdr 8 of" in out
    report = json.loads(rep.read_text())
    assert report["map_tiers"]["ddr"]["maps"] == ["src_stats"] and report["map_tiers"]["qdr"]["maps"] == ["overflow"]
    assert {m["name"]: m["tier"] for m in report["maps"]} == {"src_stats": "ddr", "overflow": "qdr"}
    layout = MapLayout.load(rom.with_suffix(".maps.json"))
    assert layout.by_name["src_stats"].tier == "ddr" and layout.by_name["src_stats"].max_entries == 2_000_000
    assert main(["compile", str(obj), "--no-kernel-verify", "--map", "src_stats.max_entries=2000000",
                 "--map", "src_stats.tier=bram", "-o", str(rom)]) != 0
    assert "map src_stats: needs 134217744 bytes at offset 0, map memory holds 1048576" in capsys.readouterr().err


@requires_kernel
@pytest.mark.kernel
def test_two_million_entries_in_ddr_against_the_kernel(xdp_prog_objects: dict[str, Path],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from hxdp.diff import run_diff
    from hxdp.traffic.pcap import read_pcap

    obj = xdp_prog_objects[SIZED]
    packets = read_pcap(Path(__file__).parent.parent / "xdp_progs" / "traffic" / f"{SIZED}.pcap")
    report = run_diff(obj, packets, {"maps": {}}, engine="seq-model", sizes={"src_stats": 2_000_000})
    assert report.ok, report.divergence and report.divergence.render()
    assert report.packets == len(packets) > 20
    pcap = str(Path(__file__).parent.parent / "xdp_progs" / "traffic" / f"{SIZED}.pcap")
    assert main(["diff", str(obj), "--pcap", pcap, "--map", "src_stats.max_entries=2000000",
                 "--engine", "vliw-model"]) == 0
    assert f"{len(packets)} packets identical to the kernel on vliw-model" in capsys.readouterr().out
    assert main(["diff", str(obj), "--pcap", pcap, "--map", "src_stats.max_entries=2000000", "--engine", "rtl"]) == 0
    assert f"{len(packets)} packets identical to the kernel on rtl" in capsys.readouterr().out


@pytest.mark.parametrize("tier", ["qdr", "ddr"])
def test_compiled_pointers_into_off_chip_maps(tier: str, xdp_prog_objects: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # simple_firewall's fw_config lookup is inlined into a constant pointer: tagged in the tier, named by disasm
    rom = tmp_path / "fw.rom"
    assert main(["compile", str(xdp_prog_objects["simple_firewall"]), "--no-kernel-verify", "--map",
                 f"fw_config.tier={tier}", "--map", f"flows.tier={tier}", "-o", str(rom)]) == 0
    layout = MapLayout.load(rom.with_suffix(".maps.json"))
    assert layout.by_name["fw_config"].tier == tier and layout.by_name["tx_port"].tier == "bram"
    ptr = layout.value_addr(layout.map_id("fw_config"))
    assert params.tier_of(ptr) == tier and params.split_map_tag(ptr >> 32, tier) is not None
    capsys.readouterr()
    assert main(["disasm", str(rom)]) == 0
    assert "map[fw_config] + 0 ll" in capsys.readouterr().out


@requires_kernel
@pytest.mark.kernel
@pytest.mark.parametrize("tier", ["qdr", "ddr"])
def test_forced_tier_on_the_vliw_model_against_the_kernel(tier: str, xdp_prog_objects: dict[str, Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # simple_firewall with its flow table and its configuration (read through an inlined pointer) off chip
    root = Path(__file__).parent.parent / "xdp_progs"
    assert main(["diff", str(xdp_prog_objects["simple_firewall"]), "--pcap", str(root / "traffic" /
                 "simple_firewall.pcap"), "--maps", str(root / "maps" / "simple_firewall.json"), "--map",
                 f"fw_config.tier={tier}", "--map", f"flows.tier={tier}", "--engine", "vliw-model"]) == 0
    assert "14 packets identical to the kernel on vliw-model (actions 1: 7, 4: 7)" in capsys.readouterr().out
