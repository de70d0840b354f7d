"""Load-time map sizes (--map NAME.max_entries=N, "max_entries" in map configurations), unused maps, and the kernel
verifier run before compile and load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DATA, compile_bpf
from kernel_fixtures import requires_kernel

from hxdp.cli import main
from hxdp.compiler import compile_program
from hxdp.errors import HxdpError
from hxdp.frontend.elf import load_program
from hxdp.frontend.sizing import MapSizeError, merge_sizes, parse_map_options
from hxdp.models.maps import MapLayout, MapState, check_map_config

SIZED = "xdp_sized_counter"  # xdp_progs/: src_stats unsized in the object, steer_cpus/user_settings never referenced


@pytest.fixture(scope="module")
def sized_obj(xdp_prog_objects: dict[str, Path]) -> Path:
    return xdp_prog_objects[SIZED]


def test_map_options_parse() -> None:
    assert parse_map_options(["a.max_entries=16", "b.c.max_entries=0x20", "a.max_entries=8"]) == {"a": 8, "b.c": 32}
    assert merge_sizes({"max_entries": {"a": 4, "b": 5}}, ["a.max_entries=6"]) == {"a": 6, "b": 5}


@pytest.mark.parametrize("text,message", [
    ("a=16", "expected NAME.max_entries=N"),
    ("a.key_size=4", "unknown map setting 'key_size'"),
    ("a.max_entries=0", "out of range"),
    ("a.max_entries=-1", "out of range"),
    ("a.max_entries=many", "positive integer"),
    (f"a.max_entries={1 << 31}", "out of range"),
])
def test_bad_map_options(text: str, message: str) -> None:
    with pytest.raises(MapSizeError, match=message):
        parse_map_options([text])


def test_config_max_entries_checked() -> None:
    check_map_config({"maps": {}, "max_entries": {"m": 3}})
    with pytest.raises(HxdpError, match="max_entries.m: max_entries must be a positive integer"):
        check_map_config({"max_entries": {"m": "x"}}, "f.json")
    with pytest.raises(HxdpError, match="must be an object"):
        check_map_config({"max_entries": [1]}, "f.json")


def test_unsized_map_names_the_option(sized_obj: Path) -> None:
    program = load_program(sized_obj)
    with pytest.raises(HxdpError, match=r"src_stats: max_entries is 0 in the object.*--map src_stats\.max_entries=N"):
        compile_program(program)


def test_sizes_and_unused_maps(sized_obj: Path) -> None:
    program = load_program(sized_obj, sizes={"src_stats": 16})
    assert [m.name for m in program.maps] == ["src_stats", "overflow"]
    assert [m.name for m in program.unused_maps] == ["steer_cpus", "user_settings"]
    result = compile_program(program)
    assert result.layout.by_name["src_stats"].max_entries == 16
    assert result.report["unused_maps"] == ["steer_cpus", "user_settings"]
    assert [m["name"] for m in result.report["maps"]] == ["src_stats", "overflow"]
    back = MapLayout.from_json(result.layout.to_json())
    assert back.unused == ["steer_cpus", "user_settings"]
    state = MapState(back)
    state.apply_config({"maps": {"user_settings": [{"key": "00000000", "value": "01000000"}]}})  # skipped
    with pytest.raises(HxdpError, match="map user_settings is not on the NIC"):
        back.map_id("user_settings")


def test_size_of_unknown_map(sized_obj: Path) -> None:
    with pytest.raises(MapSizeError, match=r"no map named 'nosuch' \(maps: src_stats, overflow, steer_cpus"):
        load_program(sized_obj, sizes={"nosuch": 4})


def test_data_map_size_is_not_settable(tmp_path: Path) -> None:
    src = tmp_path / "g.c"
    src.write_text('#include <linux/bpf.h>\n#include <bpf/bpf_helpers.h>\nint hits;\n'
                   'SEC("xdp") int g(struct xdp_md *ctx) { hits++; return XDP_PASS; }\n'
                   'char _l[] SEC("license") = "GPL";\n')
    obj = compile_bpf(src, tmp_path)
    with pytest.raises(MapSizeError, match=r"map g\.bss holds the global data of \.bss"):
        load_program(obj, sizes={"g.bss": 4})


def test_compile_cli_sizes(sized_obj: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rom = tmp_path / "s.rom"
    assert main(["compile", str(sized_obj), "-o", str(rom), "--no-kernel-verify"]) == 1
    assert "--map src_stats.max_entries=N" in capsys.readouterr().err
    assert not rom.exists()
    assert main(["compile", str(sized_obj), "-o", str(rom), "--map", "src_stats.max_entries=32"]) == 0
    out = capsys.readouterr().out
    assert "not placed): steer_cpus, user_settings" in out
    layout = json.loads(rom.with_suffix(".maps.json").read_text())
    assert {m["name"]: m["max_entries"] for m in layout["maps"]} == {"src_stats": 32, "overflow": 1}
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"maps": {}, "max_entries": {"src_stats": 8}}))
    assert main(["compile", str(sized_obj), "-o", str(rom), "--maps", str(cfg)]) == 0
    assert json.loads(rom.with_suffix(".maps.json").read_text())["maps"][0]["max_entries"] == 8
    assert main(["compile", str(sized_obj), "-o", str(rom), "--maps", str(cfg), "--map",
                 "src_stats.max_entries=4"]) == 0
    assert json.loads(rom.with_suffix(".maps.json").read_text())["maps"][0]["max_entries"] == 4
    pcap = Path(__file__).parent.parent / "xdp_progs" / "traffic" / f"{SIZED}.pcap"
    capsys.readouterr()
    assert main(["run", str(rom), "--pcap", str(pcap), "--map", "src_stats.max_entries=16"]) == 1
    assert "map src_stats was compiled with max_entries 4, not 16" in capsys.readouterr().err


@requires_kernel
@pytest.mark.kernel
def test_kernel_oracle_sizes(sized_obj: Path) -> None:
    from hxdp.linux.kernel import KernelError, KernelProgram

    with KernelProgram(sized_obj, sizes={"src_stats": 16}) as kp:
        assert kp.maps["src_stats"].max_entries == 16
        assert "steer_cpus" not in kp.maps and kp.unused == {"steer_cpus"}
        kp.apply_config({"maps": {"steer_cpus": [{"key": "00000000", "value": "00010000"}]}})  # not created: skipped
    with pytest.raises(KernelError, match=r"map src_stats: max_entries is 0 in the object"):
        KernelProgram(sized_obj)
    with pytest.raises(KernelError, match="no map named 'nosuch'"):
        KernelProgram(sized_obj, sizes={"src_stats": 16, "nosuch": 1})


@requires_kernel
@pytest.mark.kernel
def test_diff_with_sizes(sized_obj: Path, tmp_path: Path) -> None:
    from hxdp.diff import run_diff
    from hxdp.traffic.pcap import read_pcap

    packets = read_pcap(Path(__file__).parent.parent / "xdp_progs" / "traffic" / f"{SIZED}.pcap")
    report = run_diff(sized_obj, packets, {"maps": {}}, sizes={"src_stats": 4}, repro_dir=None)
    assert report.ok, report.divergence and report.divergence.render()


@requires_kernel
@pytest.mark.kernel
def test_verifier_refusal_before_compile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    obj = compile_bpf(DATA / "verifier" / "map_value_overflow.c", tmp_path)
    rom = tmp_path / "o.rom"
    assert main(["compile", str(obj), "-o", str(rom)]) == 1
    err = capsys.readouterr().err
    assert "kernel refused program overflow" in err and "invalid access to map value" in err, err
    assert not rom.exists()
    assert main(["compile", str(obj), "-o", str(rom), "--no-kernel-verify"]) in (0, 1)
    assert "warning: --no-kernel-verify" in capsys.readouterr().err


@requires_kernel
@pytest.mark.kernel
def test_verifier_refusal_before_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    obj = compile_bpf(DATA / "verifier" / "map_value_overflow.c", tmp_path)
    assert main(["prog", "load", str(obj), "--board", f"sim:{tmp_path / 'none.sock'}"]) == 1
    err = capsys.readouterr().err
    assert "kernel refused program overflow" in err, err
