"""The simulated board's host queues: frames redirected to a CPU or an AF_XDP socket reach DIR/cpuN.pcap and
DIR/xskN.pcap; a queue holds at most its size (cpumap qsize, AF_XDP ring) when the host takes nothing; the AXI-Lite
counters of docs/board.md count what was delivered and dropped."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from hxdp import params
from hxdp.board import tools as H
from hxdp.compiler import compile_program
from hxdp.frontend.elf import load_program
from hxdp.rtl.sim import available as verilator_available
from hxdp.suite import programs
from hxdp.traffic.pcap import read_pcap

_vok, _vwhy = verilator_available()
pytestmark = [pytest.mark.rtl, pytest.mark.skipif(not _vok, reason=_vwhy)]
SUITE = {p.name: p for p in programs()}


def regs(board: object, q: int) -> list[int]:
    """Queue q's registers: delivered, taken by the host, dropped (full), size."""
    return [board.read32(params.AXI_HOSTQ_BASE + params.AXI_HOSTQ_STRIDE * q + 4 * w) for w in range(4)]


def run_cpu_steering(tmp_path: Path, hold: bool, qsize1: int) -> tuple[list, dict]:
    from hxdp.board.sim import BoardServer

    prog = SUITE["xdp_redirect_cpu"]
    if not prog.obj.exists():
        pytest.skip(f"{prog.obj} not built (run `make progs`)")
    res = compile_program(load_program(prog.obj))
    cfg = prog.map_config()
    cfg["maps"]["cpu_map"][1]["value"] = (struct.pack("<I", qsize1) + bytes(4)).hex()
    with BoardServer(ports=2, host_pcap=str(tmp_path), host_hold=hold) as srv:
        b = srv.board()
        H.configure_and_inject(b, res.rom, res.layout, cfg)
        b.inject(read_pcap(prog.traffic), port=0)
        b.wait()
        outs = b.outputs()
        got = {"per_kind": b.read32(params.AXI_HOSTQ_PER_KIND), "delivered": b.read32(params.AXI_HOSTQ_DELIVERED),
               "full": b.read32(params.AXI_HOSTQ_FULL), "noqueue": b.read32(params.AXI_HOSTQ_NOQUEUE),
               "cpu0": regs(b, 0), "cpu1": regs(b, 1)}
        b.write32(params.AXI_CNT_CLEAR, 1)
        got["cleared"] = regs(b, 1) + [b.read32(params.AXI_HOSTQ_FULL)]
        b.close()
    return outs, got


def test_host_takes_every_frame(tmp_path: Path) -> None:
    """CPU 0 gets 6 flows' frames, CPU 1 11, CPU 3 has no entry (its frames PASS): the kernel's counts."""
    outs, got = run_cpu_steering(tmp_path, hold=False, qsize1=4)
    assert [o.dest for o in outs].count("cpu 0") == 6 and [o.dest for o in outs].count("cpu 1") == 11
    assert got["per_kind"] == params.HOSTQ_PER_KIND
    assert (got["delivered"], got["full"], got["noqueue"]) == (17, 0, 0)
    assert got["cpu0"] == [6, 6, 0, 192] and got["cpu1"] == [11, 11, 0, 4]
    frames = read_pcap(SUITE["xdp_redirect_cpu"].traffic)
    cpu1 = [o.data for o in outs if o.dest == "cpu 1"]
    assert read_pcap(tmp_path / "cpu1.pcap") == cpu1 and all(f in frames for f in cpu1)
    assert len(read_pcap(tmp_path / "cpu0.pcap")) == 6 and not (tmp_path / "cpu3.pcap").exists()


def test_full_queue_drops(tmp_path: Path) -> None:
    """A host that takes nothing: CPU 1's queue of 4 keeps the first 4 frames and drops the next 7."""
    outs, got = run_cpu_steering(tmp_path, hold=True, qsize1=4)
    dests = [o.dest for o in outs]
    assert dests.count("cpu 1") == 4 and dests.count("cpu 1 (dropped)") == 7
    assert (got["delivered"], got["full"]) == (10, 7)
    assert got["cpu1"] == [4, 0, 7, 4] and got["cpu0"] == [6, 0, 0, 192]
    assert got["cleared"] == [0, 0, 0, 0, 0]
    assert not (tmp_path / "cpu1.pcap").exists()  # the host took nothing


def test_af_xdp_queue(tmp_path: Path) -> None:
    """xdp_sock_steer hands its 8 UDP frames of queue 0 to the AF_XDP queue (host queue HOSTQ_PER_KIND + 0)."""
    from hxdp.board.sim import BoardServer

    prog = SUITE["xdp_sock_steer"]
    if not prog.obj.exists():
        pytest.skip(f"{prog.obj} not built (run `make progs`)")
    res = compile_program(load_program(prog.obj))
    with BoardServer(ports=1, host_pcap=str(tmp_path)) as srv:
        b = srv.board()
        H.configure_and_inject(b, res.rom, res.layout, prog.map_config())
        b.inject(read_pcap(prog.traffic), port=0)
        b.wait()
        outs = b.outputs()
        assert regs(b, params.HOSTQ_PER_KIND) == [8, 8, 0, params.XSK_RING_FRAMES]
        b.close()
    assert [o.dest for o in outs].count("xsk 0") == 8
    assert read_pcap(tmp_path / "xsk0.pcap") == [o.data for o in outs if o.dest == "xsk 0"]
