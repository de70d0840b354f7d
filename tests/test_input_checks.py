"""Inputs checked before anything is done (issue 27, reliability report D14-D17, D20-D24, D26-D28): ROM text and
contract, map layouts and configurations against one schema each, outputs (not an input, not '', all or none,
the umask and an existing file's mode respected)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from conftest import compile_bpf
from kernel_fixtures import requires_kernel

from hxdp import params
from hxdp.cli import main as cli_main
from hxdp.errors import HxdpError
from hxdp.isa.rom import Rom, RomError
from hxdp.models.mapconfig import load_map_config
from hxdp.models.maplayout import MapError, MapLayout
from hxdp.romcheck import check_rom_contract

ROOT = Path(__file__).resolve().parents[1]
ROMS = ROOT / "roms"
XDP1 = ROOT / "xdp_progs" / "xdp1.c"
ROUTER_LAYOUT = ROMS / "xdp_router_ipv4.maps.json"
ZERO = "0" * 16

# D16: one 16-digit group spelled so that Python's int(x, 16) would take it
ROM_TEXT_CASES = {
    "plus": "+00000000000b7" + "00" + ZERO * 3,
    "underscore": "0000000E00_00EB7" + ZERO * 3,
    "hexprefix": ZERO * 3 + "0x000002000000b7",
    "innerspace": ZERO * 3 + " 000002000000b7",
    "neg": ZERO * 3 + "-000000000000001",
}


@pytest.mark.parametrize("name", sorted(ROM_TEXT_CASES))
def test_d16_rom_parser_takes_16_hex_digits_per_lane_only(name: str) -> None:
    """D16: anything but exactly 16 hex digits per lane is refused (no sign, prefix, separator or space)."""
    with pytest.raises(RomError, match="not a hex row|hex digits"):
        Rom.from_text(ROM_TEXT_CASES[name] + "\n")


def _rom(lane0: int, lane1: int = 0) -> Rom:
    return Rom.from_text(ZERO * 2 + f"{lane1:016x}{lane0:016x}\n" + ZERO * 3 + f"{0x95:016x}\n")


# D15: rows the engines would disagree on (lane 1 wins on the RTL, the VLIW model stops)
CONTRACT_CASES = {
    "same_dst": (_rom(0x1_000000B7, 0x2_000000B7), "r0 is also written by lane 0"),  # r0 = 1 ; r0 = 2
    "r10write": (_rom(0x5_00000AB7), "read-only frame pointer"),  # r10 = 5
}


@pytest.mark.parametrize("name", sorted(CONTRACT_CASES))
def test_d15_run_and_inject_check_the_execution_contract(name: str, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """D15: `run` and `inject` refuse a ROM that breaks the execution contract, naming the file, row and lane, before
    any engine or board is touched (no board answers at the socket: the check comes first)."""
    rom, why = CONTRACT_CASES[name]
    path = tmp_path / f"{name}.rom"
    rom.save(path)
    with pytest.raises(HxdpError, match=why):
        check_rom_contract(rom, path)
    pcap = tmp_path / "p.pcap"
    from hxdp.traffic.pcap import write_pcap

    write_pcap(pcap, [bytes(64)])
    assert cli_main(["run", str(path), "--pcap", str(pcap)]) == 1
    assert why in capsys.readouterr().err
    assert cli_main(["inject", str(path), "--board", f"sim:{tmp_path}/none.sock"]) == 1
    err = capsys.readouterr().err
    assert why in err and "no simulated board" not in err


def test_d15_every_shipped_rom_meets_the_contract_without_proofs() -> None:
    """The check of a ROM file trusts the compiler's placement proofs: every ROM the compiler wrote passes."""
    for path in sorted(ROMS.glob("*.rom")):
        check_rom_contract(Rom.load(path), path)


def _layout_doc() -> dict:
    return json.loads(ROUTER_LAYOUT.read_text())


def _mutate(field: str, value: object, index: int = 1) -> dict:
    doc = _layout_doc()
    doc["maps"][index][field] = value
    return doc


# D22/D23: (layout document, what the error says)
LAYOUT_CASES = {
    "initial_bad": (_mutate("initial", "zz", 0), "initial is not hex"),
    "mem_small": ({**_layout_doc(), "mem_bytes": 16}, "map memory holds 16"),
    "offset_huge": (_mutate("offset", 10**9), "map memory holds"),
    "offset_unaligned": (_mutate("offset", 8), "boundary"),
    "overlap": (_mutate("offset", 0), "overlaps"),
    "slots_not_pow2": (_mutate("slots", 3), "slots 3"),
    "slots_zero": (_mutate("slots", 0), "slots 0"),
    "slotsize_small": (_mutate("slot_size", 1), "slot_size 1"),
    "type_bogus": (_mutate("type", 99), "map type 99"),
    "key_size_text": (_mutate("key_size", "x"), "key_size is 'x'"),
    "key_size_negative": (_mutate("key_size", -4), "key_size is -4"),
    "key_size_bool": (_mutate("key_size", True), "key_size is True"),
    "duplicated": ({**_layout_doc(), "maps": _layout_doc()["maps"] * 2}, "has id"),
    "kind_wrong": (_mutate("kind", "array"), "kind"),
}


@pytest.mark.parametrize("name", sorted(LAYOUT_CASES))
def test_d22_d23_layout_files_are_checked_against_one_schema(name: str, tmp_path: Path) -> None:
    """D22, D23: a malformed or inconsistent layout is one MapError naming the file (no internal error, no layout
    with overlapping regions, 1-byte slots or a bogus type accepted)."""
    doc, why = LAYOUT_CASES[name]
    path = tmp_path / f"{name}.maps.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(MapError, match=why) as exc:
        MapLayout.load(path)
    assert str(path) in str(exc.value)


def test_shipped_layouts_pass_the_schema() -> None:
    for path in sorted(ROMS.glob("*.maps.json")):
        MapLayout.load(path)


CONFIG_CASES = {
    "binary": (b"\xff\xfe\x00garbage", "not a JSON map configuration"),
    "list": (b"[1,2,3]", "top level must be a JSON object"),
    "deep": (b'{"maps":' + b"[" * 100000 + b"]" * 100000 + b"}", "nested too deeply"),
    "empty": (b"{}", "empty map configuration"),
    "maps_null": (b'{"maps": null}', "must be an object"),
    "misspelt": (b'{"map": {}}', "unknown top-level key"),
}


@pytest.mark.parametrize("name", sorted(CONFIG_CASES))
def test_d20_d21_d24_map_configurations_one_schema(name: str, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """D20, D21, D24: bad configurations are one-line errors in every command, `load --config` included (it
    reads through the same schema before a board is contacted); `{}` and `null` are errors, not empty loads."""
    blob, why = CONFIG_CASES[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(blob)
    with pytest.raises(MapError, match=why):
        load_map_config(path)
    obj = compile_bpf(XDP1, tmp_path)
    assert cli_main(["load", str(obj), "--config", str(path), "--board", f"sim:{tmp_path}/none.sock"]) == 1
    err = capsys.readouterr().err
    assert why in err and "internal error" not in err


def test_d14_compile_refuses_more_maps_than_the_table_holds(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """D14: one map more than the table holds is refused by `compile` (not only later by run/load), and nothing is
    written."""
    n = params.MAPS_MAX + 1
    maps = "".join(f"struct {{ __uint(type, BPF_MAP_TYPE_ARRAY); __type(key, __u32); __type(value, __u32); "
                   f"__uint(max_entries, 1); }} m{i} SEC(\".maps\");\n" for i in range(n))
    looks = "".join(f"v = bpf_map_lookup_elem(&m{i}, &k); if (v) s += *v;\n" for i in range(n))
    src = tmp_path / "manymaps.c"
    src.write_text("#include <linux/bpf.h>\n#include <bpf/bpf_helpers.h>\n" + maps +
                   "SEC(\"xdp\") int p(struct xdp_md *c) { __u32 k = 0, s = 0, *v;\n" + looks +
                   "return s ? XDP_PASS : XDP_DROP; }\nchar _l[] SEC(\"license\") = \"GPL\";\n")
    obj = compile_bpf(src, tmp_path)
    assert cli_main(["compile", str(obj), "-o", str(tmp_path / "mm.rom")]) == 1
    assert f"hardware map table holds {params.MAPS_MAX}" in capsys.readouterr().err
    assert not (tmp_path / "mm.rom").exists() and not (tmp_path / "mm.maps.json").exists()


def test_d17_d27_d28_outputs_checked_before_anything_is_written(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """D17: an output equal to the input is refused; D28: -o '' is an error and -o /dev/null leaves no stray
    /dev/null.maps.json; D27: a report that cannot be written leaves no ROM or layout behind."""
    obj = compile_bpf(XDP1, tmp_path)
    before = obj.read_bytes()
    for argv in (["-o", str(obj)], ["-o", str(tmp_path / "r.rom"), "--report", str(obj)], ["-o", ""]):
        assert cli_main(["compile", str(obj), *argv]) == 1
        assert capsys.readouterr().err.count("\n") == 1
        assert obj.read_bytes() == before
    assert not (tmp_path / "r.rom").exists() and not (tmp_path / "xdp1.rom").exists()
    stray = Path("/dev/null.maps.json")
    had_stray = stray.exists()
    assert cli_main(["compile", str(obj), "-o", "/dev/null"]) == 0
    assert stray.exists() == had_stray
    if Path("/dev/full").exists():
        assert cli_main(["compile", str(obj), "-o", str(tmp_path / "r3.rom"), "--report", "/dev/full"]) == 1
        assert not (tmp_path / "r3.rom").exists() and not (tmp_path / "r3.maps.json").exists()
    (tmp_path / "collide.maps.json").mkdir()
    assert cli_main(["load", str(obj), "-o", str(tmp_path / "collide.rom"), "--board", f"sim:{tmp_path}/x"]) == 1
    assert "directory" in capsys.readouterr().err
    assert not (tmp_path / "collide.rom").exists()


def test_d26_outputs_respect_the_umask_and_an_existing_mode(tmp_path: Path) -> None:
    """D26: an existing 0600 ROM stays 0600 when rewritten; under umask 077 new outputs are 0600."""
    obj = compile_bpf(XDP1, tmp_path)
    priv = tmp_path / "priv.rom"
    priv.write_text("s\n")
    priv.chmod(0o600)
    assert cli_main(["compile", str(obj), "-o", str(priv)]) == 0
    assert stat.S_IMODE(priv.stat().st_mode) == 0o600
    old = os.umask(0o077)
    try:
        assert cli_main(["compile", str(obj), "-o", str(tmp_path / "um.rom")]) == 0
    finally:
        os.umask(old)
    for name in ("um.rom", "um.maps.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600


def test_diff_repro_never_loses_the_report_nor_an_input(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """`hxdp diff --repro DIR`: a reproducer that cannot be written is noted and the divergence kept; a folder
    whose packet.pcap is the --pcap input is refused before anything runs (it would be overwritten)."""
    from hxdp import diff as diffmod

    report = diffmod.DiffReport("seq-model", 3, diffmod.Divergence(2, "action", "TX", "PASS", []))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    obj = compile_bpf(XDP1, tmp_path)
    diffmod._try_repro(blocker / "repro", obj, [bytes(64)], {}, report, None, None, None)
    assert report.repro is None and report.repro_error and report.divergence is not None
    from hxdp.traffic.pcap import write_pcap

    pcap = tmp_path / "packet.pcap"
    write_pcap(pcap, [bytes(64)])
    assert cli_main(["diff", str(obj), "--pcap", str(pcap), "--repro", str(tmp_path)]) == 1
    assert "would replace the input" in capsys.readouterr().err
    assert len(pcap.read_bytes()) > 24


@pytest.mark.rtl
def test_d10_frames_above_the_packet_buffer_are_dropped_alike_and_refused_by_run(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """D10: a 9000-byte frame (a 1514-byte one before it) is dropped by the MAC on the VLIW model and the RTL alike
    (no length wrapped modulo 8192, no header lost), and `hxdp run` refuses a pcap holding one, naming it."""
    from rtl_support import require_rtl

    from hxdp.models.vliw import VliwModel
    from hxdp.rtl.sim import RtlSim
    from hxdp.traffic.pcap import write_pcap

    require_rtl()
    from hxdp.models.maps import MapState

    rom = Rom.load(ROMS / "xdp_tx.rom")
    layout = MapLayout.load(ROMS / "xdp_tx.maps.json")
    frames = [b"\xaa" * 1514, b"\x55" * 9000, b"\x55" * 2049, b"\xaa" * 2048]
    rtl = RtlSim(rom, layout, MapState(layout)).run_packets(frames)
    model = VliwModel(rom, MapState(layout))
    vliw = [model.run(f) for f in frames]
    for i in (1, 2):
        assert rtl[i].action == vliw[i].action == 1 and rtl[i].packet == vliw[i].packet == frames[i]
    for i in (0, 3):
        assert rtl[i].action == vliw[i].action == 3 and len(rtl[i].packet) == len(frames[i])
    pcap = tmp_path / "jumbo.pcap"
    write_pcap(pcap, frames)
    assert cli_main(["run", str(ROMS / "xdp_tx.rom"), "--pcap", str(pcap)]) == 1
    assert "packet 1: 9000 bytes" in capsys.readouterr().err


@pytest.mark.rtl
def test_d25_concurrent_runs_on_one_trace_path(tmp_path: Path) -> None:
    """D25: two `hxdp run --trace` on the same path at once both succeed and leave one whole trace."""
    import subprocess
    import sys

    from rtl_support import require_rtl

    from hxdp.traffic import gen as traffic
    from hxdp.traffic.pcap import write_pcap

    require_rtl()
    pcap = tmp_path / "many.pcap"
    write_pcap(pcap, traffic.generate(8, 300, 64, "udp", 5))
    trace = tmp_path / "same.trace"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(2):
        procs = [subprocess.Popen([sys.executable, "-m", "hxdp.cli", "run", str(ROMS / name), "--pcap", str(pcap),
                                   "--trace", str(trace)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True) for name in ("xdp_tx.rom", "xdp_drop.rom")]
        for p in procs:
            _, err = p.communicate(timeout=600)
            assert p.returncode == 0, err
        lines = trace.read_text().splitlines()
        assert lines and all(len(line.split()) > 2 for line in lines)


def test_d12_a_corrupted_lpm_header_is_no_crash_of_the_models_or_map_tools() -> None:
    """D12: an LPM region whose high-water mark reads 0xffffffff (written through another map's out-of-bounds
    pointer, or `hxdp maps line`) makes dump, lookup, update and the models' lookups scan the region's slots only
    (no IndexError: the tools and engines answered with an internal error before)."""
    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel

    layout = MapLayout.load(ROUTER_LAYOUT)
    lpm = next(r for r in layout.regions if r.kind == "lpm_trie")
    st = MapState(layout)
    st.mem[lpm.offset : lpm.offset + 16] = bytes.fromhex("ffffffff00000000ffffffff00000000")
    assert st.dump_map(lpm.id) == {}
    assert st.lookup(lpm.id, bytes(lpm.key_size)) is None
    assert st.update(lpm.id, bytes.fromhex("200000000a000001"), bytes(lpm.value_size), 0) < 0  # full: an errno
    from hxdp.traffic import gen as traffic

    rom = Rom.load(ROMS / "xdp_router_ipv4.rom")
    res = VliwModel(rom, st).run(traffic.generate(8, 1, 64, "udp", 1)[0])
    assert res.action in range(5)


@requires_kernel
def test_d11_a_map_value_access_out_of_bounds_is_refused_before_compile(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """D11: a store 64 bytes past an 8-byte map value (it would overwrite the next map's header on every engine)
    is refused by compile and load through the kernel's verifier, naming the object; nothing is written."""
    src = tmp_path / "mapoob.c"
    src.write_text("#include <linux/bpf.h>\n#include <bpf/bpf_helpers.h>\n"
                   "struct { __uint(type, BPF_MAP_TYPE_ARRAY); __type(key, __u32); __type(value, __u64); "
                   "__uint(max_entries, 1); } arr SEC(\".maps\");\n"
                   "SEC(\"xdp\") int p(struct xdp_md *c) { __u32 k = 0; __u64 *v = bpf_map_lookup_elem(&arr, &k);\n"
                   "if (!v) return XDP_PASS; *(volatile __u64 *)((char *)v + 64) = 1; return XDP_DROP; }\n"
                   "char _l[] SEC(\"license\") = \"GPL\";\n")
    obj = compile_bpf(src, tmp_path)
    assert cli_main(["compile", str(obj), "-o", str(tmp_path / "m.rom")]) == 1
    err = capsys.readouterr().err
    assert "mapoob.o" in err and "invalid access to map value" in err
    assert not (tmp_path / "m.rom").exists()


OPTION_CASES = {
    "D18 maps line abc": (["maps", "line", "abc"], "map line 'abc' is not a number"),
    "D18 maps line data": (["maps", "line", "3", "zz"], "not hex bytes"),
    "D19 monitor interval -1": (["monitor", "--count", "1", "--interval", "-1"], "--interval -1.0"),
    "D19 monitor interval nan": (["monitor", "--count", "1", "--interval", "nan"], "--interval nan"),
    "D19 monitor count -5": (["monitor", "--count", "-5"], "--count -5"),
    "D19 tracelog interval -1": (["tracelog", "--follow", "--interval", "-1"], "--interval -1.0"),
}


@pytest.mark.parametrize("name", sorted(OPTION_CASES))
def test_d18_d19_bad_operands_are_one_line_errors_before_the_board(name: str, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """D18, D19: operands that were internal errors (exit 3) are one-line errors, before any board is contacted
    (no board answers at the socket given)."""
    argv, why = OPTION_CASES[name]
    assert cli_main([argv[0], "--board", f"sim:{tmp_path}/none.sock", *argv[1:]]) == 1
    err = capsys.readouterr().err
    assert why in err and err.count("\n") == 1 and "no simulated board" not in err
