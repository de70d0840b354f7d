"""End to end: compiled ROMs on the VLIW model behave like the program on the sequential model (and the kernel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import XDP_PROGS, compile_bpf
from equiv import check
from randprog import random_packets, random_program

from hxdp import params
from hxdp.compiler import CompileOptions, compile_program
from hxdp.frontend.elf import load_program
from hxdp.isa import table as T
from hxdp.suite import program as suite_program
from hxdp.traffic.gen import generate

DATA = Path(__file__).parent / "data" / "compiler"
SUITE_BUILD = XDP_PROGS / "build"
SUITE = sorted(p.stem for p in XDP_PROGS.glob("*.c"))


def _packets(name: str) -> list[bytes]:
    from hxdp.traffic.pcap import read_pcap

    pcap = XDP_PROGS / "traffic" / f"{name}.pcap"
    pk = read_pcap(pcap)[:40] if pcap.exists() else []
    return pk + generate(6, 12, 64, seed=3) + generate(3, 4, 300, "tcp", seed=4) + [bytes(60), bytes(range(60))]


def _config(name: str) -> dict:
    f = XDP_PROGS / "maps" / f"{name}.json"
    return json.loads(f.read_text()) if f.exists() else {}


# --- random programs -----------------------------------------------------------------------------------------
def _random_check(seeds: range, size: int, opts: CompileOptions | None = None) -> None:
    bad = []
    for seed in seeds:
        p = random_program(seed, size)
        res = compile_program(p, opts)
        ms = check(p, res.rom, random_packets(seed))
        if ms:
            bad.append(f"seed {seed} size {size}: {ms[0]}")
    assert not bad, "\n".join(bad[:5])


def test_random_programs_fast_sample() -> None:
    _random_check(range(200), 40)


def test_random_programs_without_optimisations() -> None:
    _random_check(range(1000, 1040), 40, CompileOptions(hoist=False, rename=False))
    _random_check(range(2000, 2040), 40, CompileOptions(lanes=2))


@pytest.mark.slow
def test_random_programs_many(request: pytest.FixtureRequest) -> None:
    if "slow" not in (request.config.getoption("-m") or "") and not os.environ.get("HXDP_SLOW"):
        pytest.skip("3,500 random programs (about 5 minutes): run with -m slow or HXDP_SLOW=1")
    _random_check(range(10_000, 13_000), 80, CompileOptions(imem_rows=1 << 20))
    _random_check(range(20_000, 20_500), 200, CompileOptions(imem_rows=1 << 20))  # longer than 256 rows


def test_random_programs_use_every_feature() -> None:
    kinds: set[str] = set()
    for seed in range(200):
        for ins in random_program(seed).insns:
            if ins.opcode:
                kinds.add(ins.info.kind)
                if ins.info.kind == "call":
                    kinds.add("call_local" if ins.src == 1 else f"call{ins.imm}")
    for seed in range(50):
        if any(i.opcode == T.EXT_LDX6 for r in compile_program(random_program(seed)).rom.rows for i in r):
            kinds.add("ld6_pattern")
            break
    assert {"alu", "jmp", "ja", "ldx", "stx", "st", "atomic", "lddw", "call1", "call2", "call28", "exit",
            "neg", "end", "call_local", "ld6_pattern"} <= kinds


# --- C programs ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def c_objects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("compiler_c")
    return {src.stem: compile_bpf(src, out) for src in sorted(DATA.glob("*.c"))}


@pytest.mark.parametrize("name", sorted(p.stem for p in DATA.glob("*.c")))
def test_c_programs(c_objects: dict[str, Path], name: str) -> None:
    p = load_program(c_objects[name])
    res = compile_program(p)
    assert check(p, res.rom, _packets(name)) == []
    for opts in (CompileOptions(hoist=False), CompileOptions(rename=False, alu3=False, ld6=False)):
        assert check(p, compile_program(p, opts).rom, _packets(name)) == []


def test_inlined_calls_program(c_objects: dict[str, Path]) -> None:
    p = load_program(c_objects["calls"])
    assert len(p.functions) >= 3  # two subprograms are inlined
    res = compile_program(p)
    assert all(ins.opcode != 0x85 or ins.src == 0 for row in res.rom.rows for ins in row)


# --- the program suite ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SUITE)
def test_suite_program(name: str) -> None:
    obj = SUITE_BUILD / f"{name}.o"
    if not obj.exists():
        pytest.skip(f"{obj} not built (make progs)")
    p = suite_program(name).load()
    res = compile_program(p)
    assert check(p, res.rom, _packets(name), _config(name), layout=res.layout) == []
    if len(p.insns) >= 50:
        assert res.report["static_ipc"] > 1.7, res.report


@pytest.mark.kernel
@pytest.mark.parametrize("name", [n for n in SUITE if not n.startswith(("csum_diff_x2", "csum_diff_x4"))])
def test_suite_program_against_kernel(name: str) -> None:
    from hxdp.linux import kernel
    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel

    ok, reason = kernel.available()
    if not ok:
        pytest.skip(f"bpf() not available: {reason}")
    obj = SUITE_BUILD / f"{name}.o"
    if not obj.exists():
        pytest.skip(f"{obj} not built (make progs)")
    p = suite_program(name).load()
    res = compile_program(p)
    state = MapState(res.layout)
    cfg = _config(name)
    if cfg:
        state.apply_config(cfg)
    vliw = VliwModel(res.rom, state)
    with suite_program(name).kernel() as kp:
        if cfg:
            kp.apply_config(cfg)
        for i, pkt in enumerate(_packets(name)[:30]):
            a, b = kp.run(pkt), vliw.run(pkt)
            assert (a.action, a.packet) == (b.action, b.packet), f"{name} packet {i}"
        if not name.startswith("xdp_rxq_info"):
            # maps the program never references are not on the NIC; xskmaps are left out of the kernel's dump (user
            # space cannot read them back); a PROG_ARRAY holds program ids in the kernel, entry rows on the NIC
            # (compared by the actions)
            kdump = {n: d for n, d in kp.dump().items() if n in res.layout.by_name}
            assert kdump == {n: v for n, v in state.dump().items()
                             if n in kdump or state.layout.by_name[n].kind not in ("xskmap", "prog_array")}


# --- the command line ----------------------------------------------------------------------------------------------
def _hxdp(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hxdp.cli", *args], capture_output=True, text=True)


def test_cli_compile_writes_reproducible_rom(c_objects: dict[str, Path], tmp_path: Path) -> None:
    obj = c_objects["parse"]
    a, b = tmp_path / "a.rom", tmp_path / "b.rom"
    r1 = _hxdp("compile", str(obj), "-o", str(a), "--report", str(tmp_path / "r.json"), "--sweep", "1-4")
    assert r1.returncode == 0, r1.stderr
    assert "static IPC" in r1.stdout
    r2 = _hxdp("compile", str(obj), "-o", str(b))
    assert r2.returncode == 0
    assert a.read_text() == b.read_text()
    assert len(a.read_text().splitlines()) == params.ORIGINAL_IMEM_ROWS  # padded as the original loader expects
    assert (tmp_path / "a.maps.json").read_text() == (tmp_path / "b.maps.json").read_text()
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["rows"] == rep["rows_by_lanes"]["4"]
    assert rep["static_ipc"] == round(rep["original_insns"] / rep["rows"], 3)
    assert {"original", "reduced", "extended"} <= set(rep["counts"])
    r3 = _hxdp("compile", str(obj), "-o", str(tmp_path / "c.rom"), "--no-hoist", "--no-rename", "--no-bounds")
    assert r3.returncode == 0


def test_cli_compile_failure_leaves_no_rom(tmp_path: Path) -> None:
    src = tmp_path / "queue.c"
    src.write_text('#include <linux/bpf.h>\n#include <bpf/bpf_helpers.h>\n'
                   'struct { __uint(type, BPF_MAP_TYPE_QUEUE); __uint(max_entries, 4); __type(value, __u32); }'
                   ' q SEC(".maps");\n'
                   'SEC("xdp") int push(struct xdp_md *ctx) { __u32 v = ctx->rx_queue_index;'
                   ' bpf_map_push_elem(&q, &v, 0); return XDP_PASS; }\n'
                   'char _license[] SEC("license") = "GPL";\n')
    obj = compile_bpf(src, tmp_path)
    r = _hxdp("compile", str(obj), "-o", str(tmp_path / "t.rom"))
    assert r.returncode == 1
    assert "error" in r.stderr and "map type" in r.stderr
    assert not (tmp_path / "t.rom").exists() and not (tmp_path / "t.maps.json").exists()


@pytest.mark.rtl
def test_random_programs_on_the_rtl() -> None:
    """Compiled random programs give the same results on the Sephirot RTL as on the VLIW model."""
    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel
    from hxdp.rtl import sim as rtl

    ok, reason = rtl.available()
    if not ok:
        pytest.skip(f"RTL simulation not available: {reason}")
    bad = []
    for seed in range(30):
        p = random_program(seed, 40, map_updates=False)
        res = compile_program(p)
        vliw = VliwModel(res.rom, MapState(res.layout))
        sim = rtl.RtlSim(res.rom, res.layout, MapState(res.layout))
        for i, pkt in enumerate(random_packets(seed)):
            a, b = vliw.run(pkt), sim.run(pkt)
            if (a.action, a.packet) != (b.action, b.packet):
                bad.append(f"seed {seed} packet {i}: vliw {(a.action, a.fault)} rtl {(b.action, b.fault)}")
                break
    assert not bad, "\n".join(bad[:5])
