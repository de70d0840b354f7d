"""`--cores N` on `hxdp run` and `hxdp diff`: the VLIW model's cores run (and the RTL's: tests/test_rtl_multicore.py,
tests/test_rtl_multicore_kernel.py); the other engines refuse, in one line naming why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hxdp.cli import main
from hxdp.paths import ROMS_DIR
from hxdp.traffic.pcap import write_pcap

FRAMES = [bytes(range(64))] * 6


@pytest.fixture
def pcap(tmp_path: Path) -> Path:
    path = tmp_path / "in.pcap"
    write_pcap(path, FRAMES)
    return path


def test_run_on_model_cores(pcap: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rom = ROMS_DIR / "xdp_drop.rom"
    assert main(["run", str(rom), "--pcap", str(pcap), "--engine", "vliw-model", "--cores", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [p["core"] for p in doc["packets"]] == [0, 0, 0, 0, 0, 0]  # one cycle a packet: core 0 is always idle
    assert [p["start_cycle"] for p in doc["packets"]] == [0, 2, 4, 6, 8, 10]
    assert doc["summary"]["cores"] == 3 and doc["summary"]["cycles_per_packet"] == 2


@pytest.mark.parametrize("argv,message", [
    (["run", "ROM", "--cores", "9"], "--cores 9: the RTL has 1 to 8 cores"),
    (["run", "ROM", "--engine", "vliw-model", "--cores", "9"], "--cores 9: choose 1 to 8"),
    (["run", "ROM", "--engine", "vliw-model", "--cores", "2", "--vcd", "x.vcd"],
     "not supported: --vcd with --engine vliw-model"),
    (["diff", "OBJ", "--engine", "rtl", "--cores", "9"], "--cores 9: choose 1 to 8"),
    (["diff", "OBJ", "--engine", "seq-model", "--cores", "2"], "not supported: --cores 2 on the seq-model"),
])
def test_refusals(argv: list[str], message: str, pcap: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subst = {"ROM": str(ROMS_DIR / "xdp_drop.rom"), "OBJ": str(ROMS_DIR.parent / "xdp_progs" / "build" / "xdp_drop.o")}
    argv = [subst.get(a, a) for a in argv] + ["--pcap", str(pcap)]
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_run_lists_per_cpu_values_per_core(capsys: pytest.CaptureFixture[str]) -> None:
    """xdp1's per-CPU counters on 2 cores: a value per core (as bpftool's `value (CPU k)`), summing to 1 core's."""
    progs = ROMS_DIR.parent / "xdp_progs"
    base = ["run", str(ROMS_DIR / "xdp1.rom"), "--pcap", str(progs / "traffic" / "xdp1.pcap"), "--maps",
            str(progs / "maps" / "xdp1.json"), "--engine", "vliw-model", "--json"]
    sums = []
    for cores in ("1", "2"):
        assert main([*base, "--cores", cores]) == 0
        counts = json.loads(capsys.readouterr().out)["maps"]["rxcnt"]
        assert all(len(v) == int(cores) for v in counts.values())
        if cores == "2":
            assert any(int(v[0], 16) and int(v[1], 16) for v in counts.values())  # both cores counted
        sums.append({k: sum(int.from_bytes(bytes.fromhex(x), "little") for x in v) for k, v in counts.items()})
    assert sums[0] == sums[1] and sum(sums[0].values()) == 12
