"""bpf_fib_lookup: the hardware FIB read from a namespace matches the kernel's lookup in it, field for field."""

from __future__ import annotations

import random
import socket
import struct
import subprocess

import pytest
from conftest import XDP_PROGS, compile_bpf
from fib_netns import fib_namespace
from kernel_fixtures import requires_kernel
from rtl_support import assert_rtl_equals_model, first_divergence, row
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from hxdp import params
from hxdp.diff import run_diff
from hxdp.fib.netlink import read_fib
from hxdp.fib.netns import netns
from hxdp.fib.table import Fib, FibError
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.vliw import VliwModel
from hxdp.rtl.sim import RtlSim

ENGINES = ["seq-model", "vliw-model", pytest.param("rtl", marks=pytest.mark.rtl)]
V4_DST = ["10.20.1.1", "10.20.5.9", "10.30.1.1", "10.40.1.1", "10.50.1.1", "10.66.0.1", "10.67.0.1", "10.68.0.1",
          "10.1.0.5", "10.1.0.3", "10.0.0.1", "10.0.0.255", "10.1.0.2", "192.168.1.1", "10.9.0.7", "10.71.0.1"]
V6_DST = ["fd20::1", "fd30::1", "fd40::1", "fd71::1", "fd66::1", "fd67::1", "fd68::1", "fd00:1::2", "fd00:1::3",
          "fd00::1", "fd00:1::", "fe80::1", "ff02::1", "2001:db8::1"]
# flags, ifindex override (an interface name, or None: the ingress), plen (0: 64)
PROBES = {
    "plain": (0, None, 0),
    "direct": (1, None, 0),
    "output_fa1": (2, "fa1", 0),
    "output_fa2": (2, "fa2", 0),
    "skip_neigh": (4, None, 0),
    "direct_skip_neigh": (5, None, 0),
    "mark": (32, None, 0),
    "unknown_flag": (64, None, 0),
    "short_plen": (0, None, 63),
}


def _frames() -> list[bytes]:
    eth = Ether(src="02:00:00:00:aa:01", dst="02:00:00:00:00:01")
    out = []
    for dst in V4_DST:
        out.append(bytes(eth / IP(src="10.0.0.2", dst=dst, ttl=64, tos=0x10) / UDP(sport=1, dport=2) / (b"x" * 20)))
    for dst in ("10.30.1.1", "10.50.1.1", "10.20.1.1"):  # above the 1280 / locked 1000 MTUs, below 1500
        out.append(bytes(eth / IP(src="10.0.0.2", dst=dst, ttl=9) / UDP() / (b"y" * 1250)))
    out.append(bytes(eth / IP(src="10.0.0.2", dst="10.20.1.1", ttl=1) / UDP()))  # TTL 1: not looked up
    for dst in V6_DST:
        out.append(bytes(eth / IPv6(src="fd00::2", dst=dst, hlim=64, fl=0x12345, tc=3) / UDP() / (b"z" * 20)))
    out.append(bytes(eth / IPv6(src="fd00::2", dst="fd30::1", hlim=5) / UDP() / (b"w" * 1300)))
    out.append(bytes(eth / IPv6(src="fe80::2", dst="fd20::1", hlim=5) / UDP()))  # a link-local source
    return [f.ljust(60, b"\0") for f in out]  # (shorter frames are runts the MAC drops)


@pytest.fixture(scope="module")
def fib_ns():
    with fib_namespace() as ns:
        yield ns, read_fib(ns)


@pytest.fixture(scope="module")
def objs(tmp_path_factory):
    out = tmp_path_factory.mktemp("fib")
    return {name: compile_bpf(XDP_PROGS / "fib" / f"{name}.c", out, [XDP_PROGS])
            for name in ("xdp_fwd", "xdp_fib_probe")}


def test_sync_reads_the_namespace(fib_ns):
    _ns, fib = fib_ns
    names = {i.name for i in fib.ifaces}
    assert {"lo", "fa0", "fa1", "fa2", "fc0"} <= names
    assert not fib.iface("fc0").forwarding and fib.iface("fa0").forwarding
    assert fib.iface("fa2").mtu == 1280
    kinds = {(r.type, r.prefixlen) for r in fib.routes}
    assert {(6, 16), (7, 16), (8, 16), (2, 32), (3, 32)} <= kinds  # blackhole unreachable prohibit local broadcast
    locked = [r for r in fib.routes if r.mtu]
    assert [r.mtu for r in locked] == [1000]
    assert len(fib.neighbours) == 5


@requires_kernel
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("ingress", ["fa0", "fc0"])
@pytest.mark.parametrize("prog", ["xdp_fwd_prog", "xdp_fwd_direct_prog"])
def test_forwarder_matches_kernel(fib_ns, objs, engine, ingress, prog, tmp_path):
    _ns, fib = fib_ns
    frames = _frames()
    report = run_diff(objs["xdp_fwd"], frames, engine=engine, prog=prog, fib=fib,
                      ingress_ifindex=fib.iface(ingress).ifindex, repro_dir=tmp_path / "repro")
    assert report.ok, report.divergence.render()
    assert report.packets == len(frames)
    if ingress == "fa0":
        assert report.actions.get(4, 0) >= 8 and report.actions.get(1, 0) == 6  # redirected, dropped
    else:
        assert set(report.actions) == {2}  # forwarding disabled: every frame passes


@requires_kernel
@pytest.mark.parametrize("engine", ["vliw-model", pytest.param("rtl", marks=pytest.mark.rtl)])
@pytest.mark.parametrize("probe", sorted(PROBES))
def test_probe_fields_match_kernel(fib_ns, objs, engine, probe, tmp_path):
    _ns, fib = fib_ns
    flags, dev, plen = PROBES[probe]
    ifindex = fib.iface(dev).ifindex if dev else 0
    cfg = {"maps": {"cfg": [{"key": "00000000", "value": struct.pack("<4I", flags, ifindex, plen, 0).hex()}]}}
    frames = _frames()
    report = run_diff(objs["xdp_fib_probe"], frames, cfg, engine=engine, fib=fib,
                      ingress_ifindex=fib.iface("fa0").ifindex, repro_dir=tmp_path / "repro")
    assert report.ok, report.divergence.render()


@pytest.mark.rtl
@pytest.mark.parametrize("probe", ["plain", "output_fa2", "skip_neigh", "short_plen"])
def test_rtl_cycles_match_vliw_model(fib_ns, objs, probe):
    """The helper's latency (every scan and write step) is the same cycle for cycle on the RTL and the VLIW model."""
    from hxdp.compiler import compile_program
    from hxdp.frontend.elf import load_program
    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel
    from hxdp.rtl.sim import RtlSim

    _ns, fib = fib_ns
    flags, dev, plen = PROBES[probe]
    cfg = {"maps": {"cfg": [{"key": "00000000", "value": struct.pack(
        "<4I", flags, fib.iface(dev).ifindex if dev else 0, plen, 0).hex()}]}}
    result = compile_program(load_program(objs["xdp_fib_probe"]))
    states = []
    for _ in range(2):
        st = MapState(result.layout)
        st.apply_config(cfg)
        fib.install(st.mem)
        states.append(st)
    ifindex = fib.iface("fa0").ifindex
    frames = _frames()
    rtl = RtlSim(result.rom, layout=result.layout, state=states[0]).run_packets([(f, ifindex, 0) for f in frames])
    vliw = VliwModel(result.rom, states[1])
    for i, (f, r) in enumerate(zip(frames, rtl, strict=True)):
        v = vliw.run(f, ingress_ifindex=ifindex)
        assert (r.action, r.cycles, r.fault) == (v.action, v.cycles, v.fault), f"packet {i}"
    assert states[0].dump() == states[1].dump()


@pytest.mark.rtl
@requires_kernel
def test_board_forwards_with_the_synced_fib(fib_ns, objs, tmp_path):
    """On the simulated board (port k has ingress ifindex k + 1: port 2 is fa0, ifindex 3): `prog load` leaves the
    FIB empty (every lookup -ENODEV: PASS), `hxdp fib sync --board` fills it, then the frames leave as the kernel
    forwards them in the namespace; `prog load --fib` loads program and FIB in one go."""
    from hxdp.board.sim import BoardServer
    from hxdp.cli import main
    from hxdp.linux.kernel import KernelProgram

    ns, fib = fib_ns
    port = fib.iface("fa0").ifindex - 1
    frames = _frames()
    with netns(ns), KernelProgram(objs["xdp_fwd"], prog="xdp_fwd_prog") as k:
        want = [k.run(f, ingress_ifindex=port + 1) for f in frames]
    fib_file = tmp_path / "fib.json"
    with BoardServer(ports=port + 1) as srv:
        assert main(["prog", "load", str(objs["xdp_fwd"]), "--prog", "xdp_fwd_prog", "--board", srv.spec]) == 0
        board = srv.board()
        board.inject(frames[:2], port=port)
        board.wait()
        assert {o.action for o in board.outputs()} == {2}
        assert main(["fib", "sync", "--netns", ns, "-o", str(fib_file), "--board", srv.spec]) == 0
        for load_fib in (False, True):
            if load_fib:
                assert main(["prog", "load", str(objs["xdp_fwd"]), "--prog", "xdp_fwd_prog", "--fib", str(fib_file),
                             "--board", srv.spec]) == 0
            board.inject(frames, port=port)
            board.wait()
            outs = board.outputs()
            assert [o.action for o in outs] == [w.action for w in want]
            assert [o.data for o in outs] == [w.packet for w in want]
        board.close()


def test_fib_file_round_trip(fib_ns, tmp_path):
    _ns, fib = fib_ns
    again = Fib.from_json(fib.to_json())
    assert again == fib
    assert again.image() == fib.image()
    img = fib.image()
    assert struct.unpack_from("<4I", img, 0) == (params.FIB_MAGIC, len(fib.ifaces), len(fib.routes),
                                                 len(fib.neighbours))
    with pytest.raises(FibError, match="not an hxdp FIB"):
        Fib.from_json('{"format": "other"}', "x.json")


def test_policy_rules_are_refused(fib_ns):
    ns, _fib = fib_ns
    subprocess.run(["ip", "-n", ns, "rule", "add", "from", "10.0.0.0/8", "table", "100", "pref", "100"], check=True)
    try:
        with pytest.raises(FibError, match="policy routing rule 100: lookup table 100"):
            read_fib(ns)
    finally:
        subprocess.run(["ip", "-n", ns, "rule", "del", "pref", "100"], check=True)
    assert read_fib(ns).routes == _fib.routes


@requires_kernel
def test_cli_sync_show_and_diff(fib_ns, objs, tmp_path, capsys):
    from hxdp.cli import main
    from hxdp.traffic.pcap import write_pcap

    ns, _fib = fib_ns
    fib_file, pcap = tmp_path / "fib.json", tmp_path / "in.pcap"
    write_pcap(pcap, _frames())
    assert main(["fib", "sync", "--netns", ns, "-o", str(fib_file)]) == 0
    assert main(["fib", "show", str(fib_file)]) == 0
    out = capsys.readouterr().out
    assert "route blackhole   10.66.0.0/16" in out and "neigh 10.1.0.2 dev fa1 lladdr 02:00:00:00:01:02" in out
    assert main(["diff", str(objs["xdp_fwd"]), "--prog", "xdp_fwd_prog", "--pcap", str(pcap), "--fib", str(fib_file),
                 "--ingress", "fa0", "--repro", str(tmp_path / "r")]) == 0
    assert "identical to the kernel" in capsys.readouterr().out
    assert main(["kernel-run", str(objs["xdp_fwd"]), "--prog", "xdp_fwd_prog", "--pcap", str(pcap), "--fib",
                 str(fib_file), "--ingress", "fa0"]) == 0
    assert "REDIRECT" in capsys.readouterr().out
    assert main(["diff", str(objs["xdp_fwd"]), "--prog", "xdp_fwd_prog", "--pcap", str(pcap), "--ingress", "fa0"]) == 1
    assert "--ingress DEV names an interface of the FIB" in capsys.readouterr().err


def _struct_rom() -> Rom:
    """A hand-made ROM: the packet's bytes 0..47 become a struct bpf_fib_lookup at r10 - 64 (bytes 48..63 zero),
    bytes 48..55 plen and flags; after the call the struct goes to packet bytes 64..127 and r0 to bytes 56..63."""
    rows = [row("r6 = r1", "r7 = *(u32 *)(r1 + 0)")]
    for off in range(0, 48, 16):
        rows.append(row(f"r2 = *(u64 *)(r7 + {off})", f"r3 = *(u64 *)(r7 + {off + 8})"))
        rows.append(row(f"*(u64 *)(r10 - {64 - off}) = r2", f"*(u64 *)(r10 - {56 - off}) = r3"))
    rows += [row("r3 = *(u32 *)(r7 + 48)", "r4 = *(u32 *)(r7 + 52)"), row("r2 = r10", "r1 = r6"),
             row("r2 += -64"), row("call 69"), row("r8 = *(u64 *)(r10 - 64)", "*(u64 *)(r7 + 56) = r0")]
    for k in range(1, 8):
        rows.append(row(f"*(u64 *)(r7 + {64 + 8 * (k - 1)}) = r8", f"r8 = *(u64 *)(r10 - {64 - 8 * k})"))
    rows += [row("*(u64 *)(r7 + 120) = r8"), row("exit 2")]
    return Rom(rows)


def _struct_packets(fib: Fib, n: int) -> list[bytes]:
    """Struct inputs over every path: families, ingress devices, destinations of every route kind, MTUs, flags."""
    rng = random.Random(24)
    v4 = [socket.inet_aton(a) for a in V4_DST] + [socket.inet_aton("10.1.0.2")]
    v6 = [socket.inet_pton(socket.AF_INET6, a) for a in V6_DST]
    devs = [fib.iface(d).ifindex for d in ("fa0", "fa1", "fa2", "fc0")] + [77]
    out = []
    for i in range(n):
        fam = rng.choice([2, 2, 10, 10, 7])
        dst = rng.choice(v6) if fam == 10 else rng.choice(v4).ljust(16, bytes([rng.randrange(256)]))
        src = rng.choice(v6) if fam == 10 else bytes(16)
        tot = rng.choice([60, 999, 1000, 1001, 1280, 1281, 1500, 1501, 65535])
        flags = rng.choice([0, 0, 1, 2, 4, 5, 6, 7, 32, 64, 16, 9, 8])
        plen = 63 if i % 17 == 5 else 64
        body = struct.pack("<BBHHHII", fam, 17, 0, 0, tot, rng.choice(devs), rng.randrange(1 << 32)) + src + dst
        out.append(body + struct.pack("<II", plen, flags) + bytes(72))
    return out


@pytest.mark.rtl
def test_rtl_equals_model_on_struct_inputs(fib_ns):
    """Hand-made struct inputs (families, ingress devices, flags, plen, MTUs) on the RTL and the VLIW model with the
    namespace's FIB: the same rows cycle by cycle, return codes, written fields and faults (flags SRC, DIRECT|TBID);
    then a struct that is not inside the stack faults, and so does a stack store beside the call."""
    _ns, fib = fib_ns
    layout = MapLayout.from_maps([], fib=True)
    packets = _struct_packets(fib, 160)
    states = [MapState(layout), MapState(layout)]
    for st in states:
        fib.install(st.mem)
    rom = _struct_rom()
    got = RtlSim(rom, layout=layout, state=states[0], trace=True).run_packets(packets)
    vm = VliwModel(rom, states[1], trace=True)
    codes = set()
    for i, pkt in enumerate(packets):
        want = vm.run(pkt)
        assert first_divergence(got[i].trace, want.trace) is None, f"packet {i}"
        fault = (want.fault or "").split(":")[0] or None  # (the model's message names the reason)
        assert (got[i].action, got[i].packet, got[i].fault, got[i].cycles) == \
            (want.action, want.packet, fault, want.cycles), f"packet {i}"
        codes.add(int.from_bytes(want.packet[56:64], "little", signed=True) if fault is None else fault)
    assert {0, 1, 2, 3, 4, 5, 7, 8, -22, -19, -97, "helper fault"} <= codes
    bad = [Rom([row("r2 = r10"), row("r2 += -8"), row("call 69"), row("exit 2")]),  # past the stack's top
           Rom([row("r2 = *(u32 *)(r1 + 0)"), row("call 69"), row("exit 2")]),  # in the packet
           Rom([row("r2 = r10", "r3 = 64"), row("r2 += -64"), row("call 69", "*(u8 *)(r10 - 1) = r3"),
                row("exit 2")])]
    for k, rom in enumerate(bad):
        res = assert_rtl_equals_model(rom, packets[:1], f"bad rom {k}", layout=layout)
        assert res[0].fault == ("access fault" if k == 2 else "helper fault"), (k, res[0].fault)


@pytest.mark.rtl
def test_cli_compile_and_run_with_fib(fib_ns, objs, tmp_path, capsys):
    """`hxdp compile` places the FIB in the layout file; `hxdp run --fib --ingress` runs the ROM on the RTL with it
    (without --fib every lookup is -ENODEV: the frames pass)."""
    import json

    from hxdp.cli import main
    from hxdp.traffic.pcap import write_pcap

    _ns, fib = fib_ns
    fib_file, pcap, rom = tmp_path / "fib.json", tmp_path / "in.pcap", tmp_path / "fwd.rom"
    fib_file.write_text(fib.to_json())
    write_pcap(pcap, _frames())
    assert main(["compile", str(objs["xdp_fwd"]), "--prog", "xdp_fwd_prog", "-o", str(rom)]) == 0
    layout = json.loads(rom.with_suffix(".maps.json").read_text())
    assert layout["fib"] == {"offset": params.FIB_OFFSET, "size": params.FIB_BYTES}
    capsys.readouterr()
    assert main(["run", str(rom), "--pcap", str(pcap), "--json", "--fib", str(fib_file), "--ingress", "fa0"]) == 0
    with_fib = [p["action_name"] for p in json.loads(capsys.readouterr().out)["packets"]]
    assert with_fib.count("REDIRECT") >= 8 and with_fib.count("DROP") == 6
    assert main(["run", str(rom), "--pcap", str(pcap), "--json"]) == 0
    assert {p["action_name"] for p in json.loads(capsys.readouterr().out)["packets"]} == {"PASS"}
    assert main(["run", str(rom), "--pcap", str(pcap), "--ingress", "fa0"]) == 1


@requires_kernel
def test_divergence_reproducer_carries_the_fib(fib_ns, objs, tmp_path):
    """A FIB that is not the namespace's (its neighbours dropped) diverges from the kernel; the reproducer holds the
    FIB and the command names it and the ingress."""
    import dataclasses

    _ns, fib = fib_ns
    stale = dataclasses.replace(fib, neighbours=[])
    report = run_diff(objs["xdp_fwd"], _frames(), engine="vliw-model", prog="xdp_fwd_prog", fib=stale,
                      ingress_ifindex=fib.iface("fa0").ifindex, repro_dir=tmp_path / "repro")
    assert not report.ok and report.divergence.packet == 0
    assert Fib.load(tmp_path / "repro" / "fib.json") == stale
    readme = (tmp_path / "repro" / "README.txt").read_text()
    assert f"--fib fib.json --ingress-ifindex {fib.iface('fa0').ifindex}" in readme
