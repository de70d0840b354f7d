"""Host queues and broadcast: redirect_map into cpumap, xskmap and devmap (BPF_F_BROADCAST, BPF_F_EXCLUDE_INGRESS)
on every engine against the kernel, the maps' host semantics, program sections behind map entries, the board's
host-queue registers."""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

import pytest
from conftest import compile_bpf
from kernel_fixtures import requires_kernel
from rtl_support import require_rtl

from hxdp import params
from hxdp.compiler import compile_program
from hxdp.errors import HxdpError
from hxdp.frontend.elf import host_notes, list_programs, load_program
from hxdp.models.maps import BPF_EXIST, BPF_NOEXIST, EEXIST, EINVAL, ENOENT, MapLayout, MapState
from hxdp.models.seq import SeqModel
from hxdp.models.vliw import VliwModel
from hxdp.result import RunResult
from hxdp.rtl.sim import RtlSim

DATA = Path(__file__).parent / "data" / "hostq"
PKT = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + bytes(50)
BCAST, EXCL = 1 << 3, 1 << 4
CPU, XSK, DEV, DEVH = 0, 1, 2, 3


def u32(x: int) -> str:
    return struct.pack("<I", x).hex()


def config(ports: dict[int, int], ports_h: dict[int, int], case: tuple[int, int, int]) -> dict:
    """cpu_map: CPU 0 qsize 64, CPU 1 qsize 8; xsks: slot 0 queue 0, slot 2 queue 5; the devmaps as given; args: the
    call (map, index, flags)."""
    which, index, flags = case
    return {"maps": {
        "args": [{"key": u32(0), "value": struct.pack("<IIQ", which, index, flags).hex()}],
        "cpu_map": [{"key": u32(0), "value": u32(64)}, {"key": u32(1), "value": u32(8)}],
        "xsks": [{"key": u32(0), "value": u32(0)}, {"key": u32(2), "value": u32(5)}],
        "ports": [{"key": u32(k), "value": u32(v)} for k, v in ports.items()],
        "ports_h": [{"key": u32(k), "value": u32(v)} for k, v in ports_h.items()],
    }}


# (name, (map, index, flags), action, (redirect, host, broadcast)) with the kernel's devmaps: ifindex 1 (lo) only
KERNEL_PORTS, KERNEL_PORTS_H = {0: 1, 3: 1}, {7: 1}
KERNEL_CASES = [
    ("cpu_entry", (CPU, 1, 0), 4, (None, ("cpu", 1), None)),
    ("cpu_empty_entry_returns_flags", (CPU, 2, 2), 2, (None, None, None)),
    ("cpu_beyond_max_entries", (CPU, 9, 1), 1, (None, None, None)),
    ("cpu_broadcast_flag_aborts", (CPU, 0, BCAST), 0, (None, None, None)),
    ("cpu_flags_above_32_bits_abort", (CPU, 0, 1 << 32), 0, (None, None, None)),
    ("xsk_entry", (XSK, 2, 0), 4, (None, ("xsk", 5), None)),
    ("xsk_queue_zero", (XSK, 0, 0), 4, (None, ("xsk", 0), None)),
    ("xsk_empty_entry_returns_flags", (XSK, 1, 3), 3, (None, None, None)),
    ("xsk_exclude_flag_aborts", (XSK, 0, EXCL), 0, (None, None, None)),
    ("devmap_entry", (DEV, 3, 0), 4, (1, None, None)),
    ("devmap_exclude_without_broadcast", (DEV, 3, EXCL), 4, (1, None, None)),
    ("devmap_broadcast", (DEV, 5, BCAST), 4, (None, None, (1,))),
    ("devmap_broadcast_exclude_ingress", (DEV, 0, BCAST | EXCL), 4, (None, None, ())),
    ("devmap_hash_broadcast", (DEVH, 0, BCAST), 4, (None, None, (1,))),
    ("devmap_hash_broadcast_exclude_ingress", (DEVH, 0, BCAST | EXCL | 2), 4, (None, None, ())),
]
# engines only (the kernel needs the devices to exist): several ports, ifindex 40 is no port of the NIC, ingress 2
MANY_PORTS, MANY_PORTS_H = {0: 1, 1: 2, 2: 3, 5: 40}, {7: 2, 9: 3, 11: 1}
ENGINE_CASES = [
    ("devmap_broadcast_many", (DEV, 0, BCAST), 4, (None, None, (1, 2, 3))),
    ("devmap_broadcast_many_exclude_ingress", (DEV, 0, BCAST | EXCL), 4, (None, None, (1, 3))),
    ("devmap_hash_broadcast_many_exclude_ingress", (DEVH, 0, BCAST | EXCL), 4, (None, None, (1, 3))),
    ("redirect_after_broadcast_state_is_the_last_call", (DEV, 2, 0), 4, (3, None, None)),
]


@pytest.fixture(scope="module")
def obj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_bpf(DATA / "redirect_args.c", tmp_path_factory.mktemp("hostq"))


def engines(obj: Path, cfg: dict, ingress: int) -> dict[str, RunResult]:
    """One packet on the sequential model, the VLIW model and the RTL, each with its own maps."""
    program = load_program(obj)
    res = compile_program(program)
    out = {}
    seq_state = MapState(MapLayout.from_maps(program.maps))
    seq_state.apply_config(cfg)
    out["seq-model"] = SeqModel(program, seq_state).run(PKT, ingress_ifindex=ingress)
    vliw_state = MapState(res.layout)
    vliw_state.apply_config(cfg)
    out["vliw-model"] = VliwModel(res.rom, vliw_state).run(PKT, ingress_ifindex=ingress)
    require_rtl()
    rtl_state = MapState(res.layout)
    rtl_state.apply_config(cfg)
    out["rtl"] = RtlSim(res.rom, res.layout, rtl_state).run_packets([(PKT, ingress, 0)])[0]
    return out


def check_engines(got: dict[str, RunResult], action: int, dest: tuple) -> None:
    vliw = got["vliw-model"]
    for name, r in got.items():
        assert (r.action, (r.redirect, r.host, r.broadcast)) == (action, dest), name
        assert r.same_outcome(vliw), name
    assert got["rtl"].cycles == vliw.cycles


@pytest.mark.rtl
@requires_kernel
@pytest.mark.kernel
@pytest.mark.parametrize("name,case,action,dest", KERNEL_CASES, ids=[c[0] for c in KERNEL_CASES])
def test_redirect_map_matches_kernel(obj: Path, name: str, case: tuple, action: int, dest: tuple) -> None:
    from hxdp.linux.kernel import KernelProgram

    cfg = config(KERNEL_PORTS, KERNEL_PORTS_H, case)
    with KernelProgram(obj) as kp:
        kp.apply_config(cfg)
        assert kp.run(PKT, ingress_ifindex=1).action == action
    check_engines(engines(obj, cfg, 1), action, dest)


@pytest.mark.rtl
@pytest.mark.parametrize("name,case,action,dest", ENGINE_CASES, ids=[c[0] for c in ENGINE_CASES])
def test_broadcast_ports_agree(obj: Path, name: str, case: tuple, action: int, dest: tuple) -> None:
    check_engines(engines(obj, config(MANY_PORTS, MANY_PORTS_H, case), 2), action, dest)


def test_broadcast_latency_scans_every_slot(obj: Path) -> None:
    """2 + max_entries extra cycles for a devmap broadcast, 2 + buckets for a devmap_hash one (docs/helpers.md)."""
    res = compile_program(load_program(obj))
    cycles = {}
    for which in (DEV, DEVH):
        for flags in (0, BCAST):
            state = MapState(res.layout)
            state.apply_config(config(MANY_PORTS, MANY_PORTS_H, (which, 0, flags)))
            cycles[which, flags] = VliwModel(res.rom, state).run(PKT).cycles
    slots_h = res.layout.by_name["ports_h"].slots
    assert cycles[DEV, BCAST] - cycles[DEV, 0] == (2 + 8) - 1  # 8 slots scanned, against the indexed read's 1
    assert cycles[DEVH, BCAST] > cycles[DEVH, 0] and slots_h == 16


# --- the maps' host semantics (kernel cpu_map_update_elem, xsk_map_update_elem) ---------------------------------------
def host_maps(obj: Path) -> tuple[MapState, int, int]:
    state = MapState(MapLayout.from_maps(load_program(obj).maps))
    return state, state.layout.map_id("cpu_map"), state.layout.map_id("xsks")


def k(i: int) -> bytes:
    return struct.pack("<I", i)


def test_cpumap_entries(obj: Path) -> None:
    state, cpu, _ = host_maps(obj)
    assert state.update(cpu, k(1), k(params.CPUMAP_QSIZE_MAX + 1)) == -75  # -EOVERFLOW
    assert state.update(cpu, k(4), k(8)) == -7  # -E2BIG
    assert state.update(cpu, k(1), k(8), BPF_NOEXIST) == -EEXIST
    assert state.update(cpu, k(1), k(8)) == 0 and state.dump()["cpu_map"] == {k(1): k(8)}
    assert state.update(cpu, k(1), k(0)) == 0 and state.dump()["cpu_map"] == {}  # qsize 0: no entry
    assert state.lookup(cpu, k(1)) is None
    assert state.update(cpu, k(2), k(16)) == 0 and state.delete(cpu, k(2)) == 0 and state.dump()["cpu_map"] == {}
    assert state.delete(cpu, k(4)) == -EINVAL


def test_xskmap_entries(obj: Path) -> None:
    state, _, xsk = host_maps(obj)
    assert state.update(xsk, k(1), k(0), BPF_EXIST) == -ENOENT
    assert state.update(xsk, k(1), k(0)) == 0  # queue 0 is an entry (the slot's ring size word marks it)
    assert state.dump()["xsks"] == {k(1): k(0)}
    r = state.layout.by_name["xsks"]
    assert state.mem[r.slot_addr(1) + 4 : r.slot_addr(1) + 8] == k(params.XSK_RING_FRAMES)
    assert state.update(xsk, k(1), k(3), BPF_NOEXIST) == -EEXIST
    assert state.update(xsk, k(1), k(3), BPF_EXIST) == 0 and state.lookup(xsk, k(1)) == k(3)
    assert state.delete(xsk, k(1)) == 0 and state.dump()["xsks"] == {}


# --- program sections behind map entries -----------------------------------------------------------------------------
def test_sections_behind_map_entries(tmp_path: Path) -> None:
    obj = compile_bpf(DATA / "behind_maps.c", tmp_path)
    assert list_programs(obj) == [("xdp", "nic_prog")]
    assert load_program(obj).name == "nic_prog"
    notes = host_notes(obj)
    assert len(notes) == 2
    assert "on_cpu" in notes[0] and "runs on the host after the cpumap hand-over, not on the NIC" in notes[0]
    assert "not supported yet: devmap egress programs (program on_egress" in notes[1]
    with pytest.raises(HxdpError, match="runs on the host after the cpumap hand-over"):
        load_program(obj, section="xdp/cpumap")
    with pytest.raises(HxdpError, match="not supported yet: devmap egress programs"):
        load_program(obj, prog="on_egress")


def test_cli_compile_notes_the_host_program(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hxdp.cli import main

    obj = compile_bpf(DATA / "behind_maps.c", tmp_path)
    assert main(["compile", str(obj), "-o", str(tmp_path / "p.rom")]) == 0
    out = capsys.readouterr().out
    assert "note: program on_cpu (SEC(\"xdp/cpumap\")) runs on the host" in out
    assert main(["compile", str(obj), "--section", "xdp/devmap", "-o", str(tmp_path / "q.rom")]) == 1
    assert "not supported yet: devmap egress programs" in capsys.readouterr().err
    assert not (tmp_path / "q.rom").exists()


@requires_kernel
@pytest.mark.kernel
def test_kernel_oracle_picks_the_nic_program(tmp_path: Path) -> None:
    from hxdp.linux.kernel import KernelProgram

    with KernelProgram(compile_bpf(DATA / "behind_maps.c", tmp_path)) as kp:
        assert kp.name == "nic_prog" and kp.run(PKT).action == params.XDP_PASS


def test_devmap_entry_with_a_program_is_refused(obj: Path) -> None:
    program = load_program(obj)
    maps = [dataclasses.replace(m, value_size=8) if m.name == "ports" else m for m in program.maps]
    state = MapState(MapLayout.from_maps(maps))
    with pytest.raises(HxdpError, match="not supported yet: devmap entries with a program"):
        state.update(state.layout.map_id("ports"), k(0), k(1) + k(7))


@pytest.mark.rtl
@pytest.mark.parametrize("which", [0, 1, 2], ids=["cpumap_update", "cpumap_delete", "xskmap_update"])
def test_program_writing_a_host_map_faults(tmp_path: Path, which: int) -> None:
    """Only the host writes cpumaps and xskmaps: a program's update or delete is a helper fault on every engine."""
    obj = compile_bpf(DATA / "host_map_write.c", tmp_path)
    cfg = {"maps": {"args": [{"key": u32(0), "value": u32(which)}]}}
    program = load_program(obj)
    res = compile_program(program)
    states = [MapState(MapLayout.from_maps(program.maps)), MapState(res.layout), MapState(res.layout)]
    for s in states:
        s.apply_config(cfg)
    require_rtl()
    got = [SeqModel(program, states[0]).run(PKT), VliwModel(res.rom, states[1]).run(PKT),
           RtlSim(res.rom, res.layout, states[2]).run_packets([PKT])[0]]
    assert all(r.action == params.XDP_ABORTED for r in got)
    assert all("written by the host only" in str(r.fault) for r in got[:2]) and got[2].fault == "helper fault"
    assert got[1].cycles == got[2].cycles
    assert states[0].dump() == states[1].dump() == states[2].dump()
