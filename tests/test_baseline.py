"""hxdp baseline: pcap reading, table/JSON output, test-run timing, the veth modes and their cleanup on signals."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hxdp.errors import PcapError
from hxdp.linux import baseline

DATA = Path(__file__).parent / "data" / "baseline"


def _frame(src_last: int, length: int = 64, ttl: int = 0) -> bytes:
    eth = bytes.fromhex("020000000002") + bytes([2, 0, 0, 0, 0, src_last]) + b"\x08\x00"
    ip = bytes.fromhex("4500") + struct.pack(">H", length - 14) + bytes(4) + bytes([ttl]) + b"\x11" + bytes(2)
    ip += bytes([10, 0, 0, 1])
    ip += bytes([10, 0, 0, 2])
    return (eth + ip).ljust(length, b"\x00")


def write_pcap(path: Path, frames: list[bytes]) -> Path:
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for i, f in enumerate(frames):
        out += struct.pack("<IIII", i, 0, len(f), len(f)) + f
    path.write_bytes(out)
    return path


# ---------------------------------------------------------------------------------------------- no kernel needed


def test_read_pcap_and_distinct_packets(tmp_path: Path) -> None:
    a, b = _frame(1), _frame(2, 100)
    frames = baseline.read_pcap(write_pcap(tmp_path / "t.pcap", [a, b, a, a]))
    assert frames == [a, b, a, a]
    assert baseline.distinct_packets(frames, 8) == [(a, 3), (b, 1)]
    assert baseline.distinct_packets(frames, 1) == [(a, 3)]
    raw = (tmp_path / "t.pcap").read_bytes()
    (tmp_path / "cut.pcap").write_bytes(raw[:-5])
    with pytest.raises(PcapError, match="packet 3"):
        baseline.read_pcap(tmp_path / "cut.pcap")
    (tmp_path / "bad.pcap").write_bytes(b"\x01\x02\x03\x04" + bytes(40))
    with pytest.raises(PcapError, match="not a pcap"):
        baseline.read_pcap(tmp_path / "bad.pcap")


def test_table_and_json_show_the_sephirot_ratio() -> None:
    m = baseline.ModeResult("test_run", 10.0, 12.5, 80.0, sephirot_ratio=None)
    r = baseline.BaselineResult("p", "p.o", "xdp", "t.pcap", None, 10, 1, 5.0, 156.25 / 5.0, modes=[m],
                                skipped={"veth_native": "disabled"})
    m.sephirot_ratio = r.sephirot_mpps / m.mpps
    text = baseline.format_table([r])
    assert "Sephirot/Linux" in text and "31.25" in text and "0.39x" in text
    assert "veth_native  skipped: disabled" in text
    doc = json.loads(baseline.to_json([r]))
    assert doc["format"] == "hxdp-baseline"
    assert doc["results"][0]["modes"][0]["sephirot_ratio"] == pytest.approx(31.25 / 80.0)
    assert doc["environment"]["kernel"]


# ---------------------------------------------------------------------------------------------- kernel


def _need_kernel() -> None:
    ok, why = baseline.available()
    if not ok:
        pytest.skip(f"bpf() unavailable: {why}")


def _need_netns() -> None:
    _need_kernel()
    if shutil.which("ip") is None:
        pytest.skip("iproute2 `ip` not installed")
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")


@pytest.fixture(scope="module")
def objs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    clang = shutil.which("clang") or shutil.which("clang-14")
    if clang is None:
        pytest.skip("clang not installed")
    out = tmp_path_factory.mktemp("baseline_objs")
    inc = [f"-I/usr/include/{os.uname().machine}-linux-gnu"]
    objs = {}
    for src in sorted(DATA.glob("*.c")):
        obj = out / (src.stem + ".o")
        subprocess.run([clang, "-O2", "-g", "-target", "bpf", *inc, "-c", str(src), "-o", str(obj)], check=True)
        objs[src.stem] = obj
    return objs


@pytest.fixture()
def pcap(tmp_path: Path) -> Path:
    return write_pcap(tmp_path / "t.pcap", [_frame(1), _frame(2), _frame(1)])


def _leftovers(pid: int) -> list[str]:
    """Namespaces the baseline process `pid` created (named hxb-<pid>-<token>; its veths live inside them)."""
    return [n for n in baseline.list_namespaces() if n.startswith(f"{baseline.NS_PREFIX}-{pid}-")]


def _links_with_prefix() -> list[str]:
    """Baseline veths visible in this (root) namespace: there must never be any."""
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    return [line.split(":")[1].strip() for line in out.splitlines() if ": hxb" in line]


def _finite_positive(x: float) -> bool:
    return math.isfinite(x) and x > 0


@pytest.mark.kernel
def test_test_run_timing_is_plausible(objs: dict[str, Path], pcap: Path) -> None:
    _need_kernel()
    opt = baseline.Options(repeat=20_000, test_runs=2_000, runs=2, veth=False)
    r = baseline.run_baseline(str(objs["xdp_drop"]), str(pcap), options=opt)
    assert [m.mode for m in r.modes] == ["test_run"]
    m = r.modes[0]
    assert len(m.packets) == 2 and [p.count for p in m.packets] == [2, 1]
    assert {p.action for p in m.packets} == {"DROP"}
    assert all(_finite_positive(p.wall_ns_per_packet) and p.ns_per_packet >= 0 for p in m.packets)
    assert all(len(p.runs_ns) == 2 for p in m.packets)
    assert all(p.expected == "DROP" and p.verified for p in m.packets) and set(m.paths) == {"DROP"}
    assert m.overhead_ns is None  # xdp_drop leaves the frame as it was: repeat in one call, no overhead to remove
    assert all("repeat 20000" in p.check for p in m.packets)
    assert _finite_positive(m.wall_ns_per_packet) and _finite_positive(m.mpps)
    assert r.skipped == {"veth_live": "--no-veth", "veth_native": "--no-veth"}


@pytest.mark.kernel
def test_veth_modes_measure_and_clean_up(objs: dict[str, Path], pcap: Path) -> None:
    _need_netns()
    opt = baseline.Options(repeat=20_000, test_runs=2_000, runs=1, max_packets=1, sephirot_cycles=10.0)
    r = baseline.run_baseline(str(objs["xdp_drop"]), str(pcap), options=opt)
    assert r.skipped == {}, r.skipped
    assert [m.mode for m in r.modes] == list(baseline.MODES)
    for m in r.modes:
        assert _finite_positive(m.ns_per_packet) or m.mode == "test_run"
        assert _finite_positive(m.wall_ns_per_packet) and _finite_positive(m.mpps), m
        assert m.sephirot_ratio == pytest.approx(15.625 / m.mpps)
        assert [p.action for p in m.packets] == ["DROP"] and m.packets[0].verified, m.packets[0]
    assert r.modes[1].packets[0].delivered == 0  # a dropped frame does not reach the peer
    assert r.modes[2].packets[0].delivered is not None and 0.5 < r.modes[2].packets[0].delivered <= 1.0
    assert len(r.loadavg_before) == 3 and len(r.loadavg_after) == 3
    assert _leftovers(os.getpid()) == [] and _links_with_prefix() == []


@pytest.mark.kernel
def test_a_rewritten_frame_is_measured_on_its_own_path(objs: dict[str, Path], tmp_path: Path) -> None:
    """Issue 26: run again on its own output, xdp_ttl's frame decays to PASS; every mode must measure TX."""
    _need_netns()
    trace = write_pcap(tmp_path / "ttl.pcap", [_frame(1, ttl=64)])
    opt = baseline.Options(repeat=50_000, test_runs=2_000, runs=1, max_packets=1)
    r = baseline.run_baseline(str(objs["xdp_ttl"]), str(trace), options=opt)
    assert "rewrites every frame" in r.skipped["veth_live"]
    modes = {m.mode: m for m in r.modes}
    assert set(modes) == {"test_run", "veth_native"}
    for m in modes.values():
        p = m.packets[0]
        assert p.expected == "TX" and p.verified, (m.mode, p)
        assert set(m.paths) == {"TX"} and m.paths["TX"]["verified"]
    assert modes["test_run"].packets[0].action == "TX" and modes["test_run"].overhead_ns > 0
    assert "2000 calls of one frame" in modes["test_run"].packets[0].check
    assert modes["veth_native"].packets[0].check.startswith("1.000 of the frames came out")
    assert modes["veth_native"].overhead_ns is not None


@pytest.mark.kernel
def test_the_rewriting_injector_writes_the_frame(objs: dict[str, Path]) -> None:
    _need_kernel()
    from hxdp.linux.xdplab import load_raw_xdp, rewriter_insns, test_run

    for frame in (_frame(7, ttl=9), _frame(5, length=61)):
        fd = load_raw_xdp(3, "hxdp_rewrite", rewriter_insns(frame))
        try:
            r = test_run(fd, bytes(len(frame)), 1)
            assert (r.retval, r.data_out) == (3, frame)
            assert test_run(fd, bytes(len(frame) - 1), 1).retval == 1  # too short: dropped, nothing written
        finally:
            os.close(fd)


@pytest.mark.kernel
def test_redirect_through_devmap_is_pointed_at_the_veth(objs: dict[str, Path], pcap: Path) -> None:
    _need_netns()
    opt = baseline.Options(repeat=10_000, test_runs=2_000, runs=1, max_packets=1)
    r = baseline.run_baseline(str(objs["xdp_redirect"]), str(pcap), maps=str(DATA / "xdp_redirect.json"),
                              options=opt)
    assert list(r.skipped) == ["veth_live"]  # it swaps the MACs: live frames would run it on its own output
    assert [m.mode for m in r.modes] == ["test_run", "veth_native"]
    assert all(m.packets[0].action == "REDIRECT" and m.packets[0].verified for m in r.modes)
    assert any("tx_port[00000000]: ifindex 1 ->" in n for n in r.modes[0].notes)
    assert r.modes[1].packets[0].delivered and r.modes[1].packets[0].delivered > 0.5
    assert _leftovers(os.getpid()) == []


@pytest.mark.kernel
def test_bad_maps_file_is_reported_and_cleans_up(objs: dict[str, Path], pcap: Path, tmp_path: Path) -> None:
    _need_netns()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"maps": {"no_such_map": []}}))
    with pytest.raises(baseline.HxdpError, match="no_such_map"):
        baseline.run_baseline(str(objs["xdp_redirect"]), str(pcap), maps=str(bad),
                              options=baseline.Options(repeat=100, runs=1))
    assert _leftovers(os.getpid()) == []


@pytest.mark.kernel
def test_stale_namespace_of_a_dead_process_is_removed() -> None:
    _need_netns()
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    name = f"{baseline.NS_PREFIX}-{child.pid}-dead"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        assert name in baseline.remove_stale_namespaces()
        assert name not in baseline.list_namespaces()
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


@pytest.mark.kernel
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_tool_removes_its_namespace(objs: dict[str, Path], pcap: Path, sig: int) -> None:
    _need_netns()
    cmd = [sys.executable, "-m", "hxdp.cli", "baseline", str(objs["xdp_tx"]), "--pcap", str(pcap),
           "--repeat", "2000000", "--runs", "1000", "-q"]
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while not _leftovers(child.pid):
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the tool never created its namespace"
            time.sleep(0.05)
        time.sleep(0.5)  # let it get into a measurement
        child.send_signal(sig)
        _, err = child.communicate(timeout=15)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == (130 if sig == signal.SIGINT else 128 + sig), err
    assert _leftovers(child.pid) == [] and _links_with_prefix() == []


@pytest.mark.kernel
def test_cli_writes_table_and_json(objs: dict[str, Path], pcap: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    _need_netns()
    from hxdp.cli import main

    out = tmp_path / "b.json"
    rc = main(["baseline", str(objs["xdp_drop"]), "--pcap", str(pcap), "--repeat", "5000", "--test-runs", "2000",
               "--runs", "1", "--no-native", "--sephirot-cycles", "5", "--json", str(out), "-q"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "Sephirot/Linux" in text and "veth_live" in text and "veth_native  skipped: disabled" in text
    doc = json.loads(out.read_text())
    (res,) = doc["results"]
    assert res["program"] == "xdp_drop" and res["sephirot_mpps"] == pytest.approx(31.25)
    modes = {m["mode"]: m for m in res["modes"]}
    assert set(modes) == {"test_run", "veth_live"}
    for m in modes.values():
        assert m["mpps"] > 0 and m["rate_ns_per_packet"] > 0
        assert m["mpps_from"] == ("kernel" if m["mode"] == "test_run" else "cpu")
        assert m["sephirot_ratio"] == pytest.approx(31.25 / m["mpps"])
    assert main(["baseline", str(tmp_path / "missing.o"), "--pcap", str(pcap), "-q"]) == 1
    assert "missing.o" in capsys.readouterr().err
    assert _leftovers(os.getpid()) == []
