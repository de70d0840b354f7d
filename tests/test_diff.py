"""hxdp diff: every bundled program agrees with the Linux kernel on every engine; divergences are reported."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest
from kernel_fixtures import requires_kernel

from hxdp import diff as diffmod
from hxdp.cli import main
from hxdp.suite import programs
from hxdp.traffic.pcap import read_pcap

SUITE = [p for p in programs()]
ENGINES = ["seq-model", "vliw-model", pytest.param("rtl", marks=pytest.mark.rtl)]


def _needs_objects(prog):
    if not prog.obj.exists():
        pytest.skip(f"{prog.obj} not built (run `make progs`)")


@requires_kernel
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("prog", SUITE, ids=[p.name for p in SUITE])
def test_suite_program_matches_kernel(prog, engine, tmp_path):
    _needs_objects(prog)
    if engine == "rtl" and shutil.which("verilator") is None:
        pytest.skip("verilator not installed")
    packets = read_pcap(prog.traffic)
    report = diffmod.run_diff(prog.obj, packets, prog.map_config(), engine=engine, prog=prog.prog,
                              repro_dir=tmp_path / "repro")
    assert report.ok, report.divergence.render()
    assert report.packets == len(packets)
    expected = prog.expected_actions()
    if expected:
        names = {"ABORTED": 0, "DROP": 1, "PASS": 2, "TX": 3, "REDIRECT": 4}
        want = {names.get(k, k): v for k, v in expected.items() if k in names}
        if want:
            assert {k: v for k, v in report.actions.items() if v} == {k: v for k, v in want.items() if v}


@requires_kernel
def test_divergence_is_reported_with_reproducer(tmp_path, monkeypatch, capsys):
    prog = next(p for p in SUITE if p.name == "xdp_tx")
    _needs_objects(prog)
    real_compare = diffmod.compare

    def corrupting_compare(index, kernel, engine):
        # Flip one output byte of the third packet, as a miscompiled program would.
        if index == 2:
            data = bytearray(engine.packet)
            data[7] ^= 0xFF
            engine = dataclasses.replace(engine, packet=bytes(data))
        return real_compare(index, kernel, engine)

    monkeypatch.setattr(diffmod, "compare", corrupting_compare)
    repro = tmp_path / "repro"
    code = main(["diff", str(prog.obj), "--pcap", str(prog.traffic), "--maps", str(prog.maps),
                 "--engine", "seq-model", "--repro", str(repro)])
    out = capsys.readouterr().out
    assert code == 1
    assert "packet 2: bytes differs" in out
    assert "byte    7:" in out
    assert (repro / "packet.pcap").exists() and (repro / prog.obj.name).exists()
    assert len(read_pcap(repro / "packet.pcap")) == 1
    assert "maps" in json.loads((repro / "maps.json").read_text())
    assert "hxdp diff" in (repro / "README.txt").read_text()


@requires_kernel
@pytest.mark.rtl
def test_rtl_reproducer_is_the_whole_trace_and_may_sit_beside_the_object(tmp_path, monkeypatch, capsys):
    """The RTL runs a trace back to back (a packet's result may depend on its neighbours in the pipeline) and its
    maps are compared at the end: its reproducer is every packet from the initial maps. --repro may name the
    object's own folder (the report was once lost to `... are the same file`)."""
    from rtl_support import require_rtl

    require_rtl()
    prog = next(p for p in SUITE if p.name == "xdp_tx")
    _needs_objects(prog)
    real_compare = diffmod.compare

    def corrupting_compare(index, kernel, engine, meta=True):
        if index == 2:
            engine = dataclasses.replace(engine, packet=bytes(b ^ 0xFF for b in engine.packet))
        return real_compare(index, kernel, engine, meta)

    monkeypatch.setattr(diffmod, "compare", corrupting_compare)
    work = tmp_path / "work"
    work.mkdir()
    obj = work / prog.obj.name
    shutil.copyfile(prog.obj, obj)
    code = main(["diff", str(obj), "--pcap", str(prog.traffic), "--engine", "rtl", "--repro", str(work)])
    out = capsys.readouterr().out
    assert code == 1 and "packet 2: bytes differs" in out and f"reproducer written to {work}" in out
    assert len(read_pcap(work / "packet.pcap")) == len(read_pcap(prog.traffic))
    assert f"packet 2 of these {len(read_pcap(prog.traffic))}" in (work / "README.txt").read_text()


def test_compare_reports_metadata() -> None:
    """`hxdp diff` compares the XDP metadata as `hxdp fuzz` does (a fuzz reproducer of a metadata divergence
    once showed nothing when run alone)."""
    from hxdp.result import RunResult

    k = RunResult(action=2, packet=b"\x01\x02", meta=b"\x05\x06\x07\x08")
    assert diffmod.compare(0, k, RunResult(action=2, packet=b"\x01\x02", meta=b"\x05\x06\x07\x08")) is None
    d = diffmod.compare(3, k, RunResult(action=2, packet=b"\x01\x02", meta=bytes(4)))
    assert d is not None and (d.packet, d.what, d.expected, d.got) == (3, "meta", "05060708", "00000000")
    assert diffmod.compare(3, k, RunResult(action=2, packet=b"\x01\x02", meta=bytes(4)), meta=False) is None
