"""Maps of maps (ARRAY_OF_MAPS, HASH_OF_MAPS): the object's template and static slots, inner maps the loader creates,
the layout, the host's and the program's operations against the kernel's rules, the host tools on the board."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kernel_fixtures import requires_kernel

from hxdp import params
from hxdp.errors import ElfError
from hxdp.frontend.elf import load_program
from hxdp.frontend.sizing import MapSizeError, config_inner
from hxdp.models.helpers import HelperEnv, HelperFault
from hxdp.models.maps import BPF_ANY, BPF_NOEXIST, E2BIG, EINVAL, ENOENT, MapError, MapLayout, MapState
from hxdp.models.memory import DataMemory
from hxdp.suite import program as suite_program

MIM = suite_program("xdp_map_in_map")
WEB = bytes.fromhex("0a64000100500600")  # the web VIP's key (10.100.0.1:80 TCP)


@pytest.fixture(scope="module")
def mim():  # noqa: ANN201
    if not MIM.obj.exists():
        pytest.skip(f"{MIM.obj} not built (run `make progs`)")
    return MIM.load()


def test_static_slot_and_loader_inner_maps(mim) -> None:  # noqa: ANN001
    ids = {m.name: i for i, m in enumerate(mim.maps)}
    by = {m.name: m for m in mim.maps}
    # `.values = { [0] = &conns_cpu0 }` in the object; vip_web and vip_dns created by the loader from the template
    assert by["lru_mapping"].inner_entries == {bytes(4): "conns_cpu0"}
    assert set(by["vip_map"].inner_entries.values()) == {"vip_web", "vip_dns"}
    assert by["vip_web"].section == "loader" and (by["vip_web"].type, by["vip_web"].max_entries) == (2, 4)
    # inner maps come after every other map: no inner map has id 0, the empty slot
    assert min(ids[n] for n in ("conns_cpu0", "vip_web", "vip_dns")) > max(ids[n] for n in ("lru_mapping",
                                                                                             "vip_map", "mim_stats"))


def test_layout_round_trip_and_initial_slots(mim) -> None:  # noqa: ANN001
    layout = MapLayout.for_program(mim)
    again = MapLayout.from_json(layout.to_json())
    assert [vars(r) for r in again.regions] == [vars(r) for r in layout.regions]
    hom = layout.by_name["vip_map"]
    assert (hom.key_offset, hom.value_offset, hom.slot_size) == (8, 4, 16)  # the id in the slot header's second word
    state = MapState(again)
    assert state.lookup(hom.id, WEB) == layout.map_id("vip_web").to_bytes(4, "little")
    assert state.dump()["lru_mapping"] == {bytes(4): layout.map_id("conns_cpu0").to_bytes(4, "little")}


def test_layout_refuses_an_unknown_inner_map(mim) -> None:  # noqa: ANN001
    text = MapLayout.for_program(mim).to_json().replace('"conns_cpu0"\n', '"nosuch"\n', 1)
    with pytest.raises(MapError, match="slot 00000000 names 'nosuch', which is not an inner map"):
        MapLayout.from_json(text)


def test_host_updates_follow_the_kernel(mim) -> None:  # noqa: ANN001
    state = MapState.for_program(mim)
    lay = state.layout
    aom, hom = lay.map_id("lru_mapping"), lay.map_id("vip_map")
    conns, web = lay.map_id("conns_cpu0"), lay.map_id("vip_web")
    u32 = lambda n: n.to_bytes(4, "little")  # noqa: E731
    assert state.update(aom, u32(1), u32(conns)) == 0  # one inner map in two slots
    assert state.update(aom, u32(2), u32(conns), BPF_NOEXIST) == -EINVAL  # fd arrays take BPF_ANY only
    assert state.update(aom, u32(2), u32(web)) == -EINVAL  # not the template's type
    assert state.update(aom, u32(2), u32(aom)) == -EINVAL  # a map of maps is no inner map
    assert state.update(aom, u32(9), u32(conns)) == -E2BIG
    assert state.delete(aom, u32(3)) == -ENOENT and state.delete(aom, u32(9)) == -E2BIG
    assert state.delete(aom, u32(1)) == 0 and state.lookup(aom, u32(1)) is None
    other = bytes.fromhex("0a64000300500600")
    assert state.update(hom, other, u32(conns)) == -EINVAL
    assert state.update(hom, other, u32(web), BPF_ANY) == 0 and state.lookup(hom, other) == u32(web)


def test_program_lookup_gives_a_handle_and_may_not_write(mim) -> None:  # noqa: ANN001
    state = MapState.for_program(mim)
    lay = state.layout
    env = HelperEnv(DataMemory(bytes(64)), state)
    key_at = params.STACK_BASE + 64
    lookup, update = params.HELPER_IDS["map_lookup_elem"], params.HELPER_IDS["map_update_elem"]
    env.mem.write(key_at, WEB)
    r0, _ = env.call(lookup, lay.handle(lay.map_id("vip_map")), key_at, 0, 0, 0)
    assert r0 == params.MAP_HANDLE_BASE + lay.map_id("vip_web")
    env.mem.write(key_at, bytes.fromhex("0a64000900500600"))
    assert env.call(lookup, lay.handle(lay.map_id("vip_map")), key_at, 0, 0, 0)[0] == 0
    env.mem.write(key_at, (3).to_bytes(4, "little"))
    assert env.call(lookup, lay.handle(lay.map_id("lru_mapping")), key_at, 0, 0, 0)[0] == 0  # an empty slot
    with pytest.raises(HelperFault, match="array_of_maps, written by the host only"):
        env.call(update, lay.handle(lay.map_id("lru_mapping")), key_at, key_at, 0, 0)


def test_inner_maps_configuration_is_checked(mim, tmp_path: Path) -> None:  # noqa: ANN001
    with pytest.raises(MapSizeError, match="is not a map name"):
        config_inner({"inner_maps": {"vip_map": {"00": "a name with spaces"}}})
    with pytest.raises(MapSizeError, match="no map of maps with an inner-map template named 'mim_stats'"):
        load_program(MIM.obj, inner={"mim_stats": {bytes(4): "x"}})
    with pytest.raises(MapSizeError, match="has 4 bytes, the map 8"):
        load_program(MIM.obj, inner={"vip_map": {bytes(4): "x"}})
    with pytest.raises(MapSizeError, match="'mim_stats' is a map of the object already"):
        load_program(MIM.obj, inner={"vip_map": {WEB: "mim_stats"}})
    with pytest.raises(MapSizeError, match="inner map 'x1' has type 9, the template 2"):  # one map, two templates
        load_program(MIM.obj, inner={"lru_mapping": {bytes(4): "x1"}, "vip_map": {WEB: "x1"}})
    state = MapState.for_program(mim)
    with pytest.raises(MapError, match="its slots are set with \"inner_maps\""):
        state.apply_config({"maps": {"vip_map": [{"key": WEB.hex(), "value": "05000000"}]}})


def test_static_slot_must_fit_the_template(tmp_path: Path) -> None:
    from conftest import compile_bpf

    obj = compile_bpf(Path(__file__).parent / "data" / "map_in_map" / "template_mismatch.c", tmp_path)
    with pytest.raises(ElfError, match="inner map 'a' has value_size 8, the template 4"):
        load_program(obj)


@requires_kernel
@pytest.mark.kernel
def test_kernel_oracle_builds_the_same_structure() -> None:
    if not MIM.obj.exists():
        pytest.skip(f"{MIM.obj} not built (run `make progs`)")
    with MIM.kernel() as kp:
        kp.apply_config(MIM.map_config())
        dump = kp.dump()
    state = MapState.for_program(MIM.load())
    state.apply_config(MIM.map_config())
    assert dump == state.dump()  # outer slots as the NIC's ids, inner maps by name


@pytest.mark.rtl
def test_board_tools_set_and_read_outer_entries(mim, tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    """hxdp map show lists the inner maps with their ids; dump prints bpftool's inner_map_id; update takes
    `value id ID` and `value name NAME` and refuses an inner map that does not fit the template."""
    from rtl_support import require_rtl

    from hxdp.board import tools as H
    from hxdp.board.sim import BoardServer
    from hxdp.cli import main as cli_main

    require_rtl()
    monkeypatch.setenv(H.STATE_ENV, str(tmp_path / "state"))
    ids = {m.name: i for i, m in enumerate(mim.maps)}
    with BoardServer(ports=2) as srv:
        b = ["--board", srv.spec]
        assert cli_main(["prog", "load", str(MIM.obj), "--config", str(MIM.maps), *b]) == 0
        capsys.readouterr()
        assert cli_main(["map", "show", *b]) == 0
        shown = capsys.readouterr().out
        assert f"{ids['vip_web']}: array  name vip_web" in shown and f"{ids['conns_cpu0']}: lru_hash" in shown
        assert cli_main(["map", "dump", "name", "lru_mapping", *b]) == 0
        assert capsys.readouterr().out.startswith(f"key: 00 00 00 00  inner_map_id: {ids['conns_cpu0']}\n")
        assert cli_main(["map", "update", "name", "lru_mapping", "key", "1", "0", "0", "0", "value", "id",
                         str(ids["conns_cpu0"]), *b]) == 0
        assert cli_main(["map", "update", "vip_map", "key", "hex", "0a", "64", "00", "09", "00", "50", "06", "00",
                         "value", "name", "vip_dns", *b]) == 0
        assert cli_main(["-j", "map", "lookup", "vip_map", "hex", "0a", "64", "00", "09", "00", "50", "06", "00",
                         *b]) == 0
        assert f'"inner_map_id":{ids["vip_dns"]}' in capsys.readouterr().out.replace(" ", "")
        assert cli_main(["map", "update", "lru_mapping", "2", "0", "0", "0", "value", "id", str(ids["vip_web"]),
                         *b]) == 1
        assert "update of key 02 00 00 00 failed: Invalid argument" in capsys.readouterr().err
        assert cli_main(["map", "dump", "id", str(ids["vip_web"]), *b]) == 0
        assert "value: ac 10 00 01" in capsys.readouterr().out
        # the older `hxdp maps` form takes the same operands
        layout = tmp_path / "mim.maps.json"
        layout.write_text(MapLayout.for_program(mim).to_json())
        lb = [*b, "--layout", str(layout)]
        assert cli_main(["maps", *lb, "update", "lru_mapping", "key", "3", "0", "0", "0", "value", "name",
                         "conns_cpu0"]) == 0
        assert cli_main(["maps", *lb, "dump", "lru_mapping"]) == 0
        slots = {int(e["key"][0], 16): int(e["value"][0], 16) for e in json.loads(capsys.readouterr().out)}
        assert slots == {0: ids["conns_cpu0"], 1: ids["conns_cpu0"], 3: ids["conns_cpu0"]}


@pytest.mark.parametrize(("name", "why"), [
    ("outer_update", "map_update_elem on the map of maps outer (the kernel verifier refuses it"),
    ("handle_load", "not supported: a load through a map handle (an inner map a lookup in a map of maps returned)"),
])
def test_compiler_refuses_writes_and_reads_of_maps_of_maps(name: str, why: str, tmp_path: Path) -> None:
    from conftest import compile_bpf

    from hxdp.compiler import compile_program
    from hxdp.errors import CompileError

    obj = compile_bpf(Path(__file__).parent / "data" / "map_in_map" / f"{name}.c", tmp_path)
    with pytest.raises(CompileError, match=re.escape(why)):
        compile_program(load_program(obj))


KEY20 = bytes(range(20))
LOOKUPS_CFG = {
    "maps": {"arr_a": [{"key": "00000000", "value": "a1a2a3a4"}], "arr_b": [{"key": "00000000", "value": "b1b2b3b4"}],
             "k_one": [{"key": "01000000", "value": "c1c2c3c4"}], "k_two": [{"key": "01000000", "value": "d1d2d3d4"}]},
    "inner_maps": {"by_key": {KEY20.hex(): "k_one", bytes(20).hex(): "k_two"}},
}


def _lookup_frames() -> list[bytes]:
    def frame(idx: int, key: bytes) -> bytes:
        return bytes(12) + b"\x08\x00" + bytes([idx]) + key + bytes(25)

    other = bytes([9] * 20)
    return [frame(1, KEY20), frame(3, bytes(20)), frame(3, KEY20), frame(0, KEY20), frame(2, KEY20),
            frame(4, KEY20), frame(200, KEY20), frame(1, other), frame(3, other)]


@requires_kernel
@pytest.mark.kernel
@pytest.mark.parametrize("engine", ["seq-model", "vliw-model", pytest.param("rtl", marks=pytest.mark.rtl)])
def test_outer_lookups_match_the_kernel(engine: str, tmp_path: Path) -> None:
    """Hits, empty slots, indexes past the end, 20-byte hash keys present and absent: every engine as the kernel."""
    from conftest import compile_bpf

    from hxdp.diff import run_diff

    if engine == "rtl":
        from rtl_support import require_rtl

        require_rtl()
    obj = compile_bpf(Path(__file__).parent / "data" / "map_in_map" / "outer_lookups.c", tmp_path)
    report = run_diff(obj, _lookup_frames(), LOOKUPS_CFG, engine=engine)
    assert report.ok, report.divergence
    assert report.actions == {params.XDP_TX: 3, params.XDP_PASS: 4, params.XDP_DROP: 2}


@pytest.mark.rtl
def test_outer_lookups_rtl_cycles_equal_the_model(tmp_path: Path) -> None:
    """The RTL's outer lookups take the VLIW model's cycles, row by row, and leave the same map memory."""
    from conftest import compile_bpf
    from rtl_support import first_divergence, require_rtl

    from hxdp.compiler import compile_program
    from hxdp.frontend.sizing import config_inner
    from hxdp.models.vliw import VliwModel
    from hxdp.rtl.sim import RtlSim

    require_rtl()
    obj = compile_bpf(Path(__file__).parent / "data" / "map_in_map" / "outer_lookups.c", tmp_path)
    res = compile_program(load_program(obj, inner=config_inner(LOOKUPS_CFG)))
    s_rtl, s_vm = MapState(res.layout), MapState(res.layout)
    s_rtl.apply_config(LOOKUPS_CFG)
    s_vm.apply_config(LOOKUPS_CFG)
    packets = _lookup_frames()
    got = RtlSim(res.rom, res.layout, s_rtl, trace=True).run_packets(packets)
    vm = VliwModel(res.rom, s_vm, trace=True)
    for i, pkt in enumerate(packets):
        want = vm.run(pkt)
        assert first_divergence(got[i].trace, want.trace) is None, f"packet {i}"
        assert (got[i].action, got[i].packet, got[i].cycles) == (want.action, want.packet, want.cycles), f"packet {i}"
    assert s_rtl.mem == s_vm.mem


@requires_kernel
@pytest.mark.kernel
def test_reproducer_sets_outer_slots_with_inner_maps(mim, tmp_path: Path) -> None:  # noqa: ANN001
    """A divergence's maps.json keeps "inner_maps" and leaves the maps of maps' dumps out (a dump's ids are no
    configuration): the reproducer loads and runs."""
    from hxdp.diff import DiffReport, _maps_of_maps, _try_repro, run_diff
    from hxdp.traffic.pcap import read_pcap

    cfg = MIM.map_config()
    state = MapState.for_program(mim)
    state.apply_config(cfg)
    with MIM.kernel() as kp:
        outer = _maps_of_maps(kp, cfg)
    assert outer == ({"lru_mapping", "vip_map"}, cfg["inner_maps"])
    report = DiffReport("seq-model")
    packets = read_pcap(MIM.traffic)[:3]
    _try_repro(tmp_path, MIM.obj, packets, state.dump(), report, None, None, {}, inner=outer)
    assert report.repro == str(tmp_path), report.repro_error
    written = json.loads((tmp_path / "maps.json").read_text())
    assert written["inner_maps"] == cfg["inner_maps"] and not {"lru_mapping", "vip_map"} & set(written["maps"])
    assert run_diff(tmp_path / MIM.obj.name, packets, written, engine="seq-model").ok


def test_run_checks_inner_maps_against_the_rom(mim) -> None:  # noqa: ANN001
    from hxdp.cli.loading import check_rom_inner

    layout = MapLayout.for_program(mim)
    check_rom_inner(layout, config_inner(MIM.map_config()), "mim.rom")
    with pytest.raises(MapSizeError, match="the ROM was compiled with 'vip_web' there"):
        check_rom_inner(layout, {"vip_map": {WEB: "vip_other"}}, "mim.rom")
