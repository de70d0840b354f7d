"""pcap I/O and `hxdp traffic`: generated traces parse with scapy, flows/sizes/protocols as asked, truncation caught."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw
from scapy.utils import RawPcapReader, rdpcap

from hxdp.cli import main
from hxdp.errors import PcapError
from hxdp.traffic.gen import HEADER_BYTES, PROTOS, TrafficError, classify, draw_flow, frame, generate, scapy_frame
from hxdp.traffic.pcap import parse_pcap, pcap_bytes, read_pcap, read_pcap_file, write_pcap


def _five_tuple(p: Ether) -> tuple:
    ip = p[IP] if IP in p else p[IPv6]
    l4 = p[UDP] if UDP in p else p[TCP] if TCP in p else None
    return (ip.src, ip.dst, (l4.sport, l4.dport) if l4 is not None else p[ICMP].id)


@pytest.mark.parametrize("proto", ["udp", "tcp", "icmp", "ipv6", "vlan"])
def test_generated_pcap_parses(tmp_path: Path, proto: str) -> None:
    out = tmp_path / f"{proto}.pcap"
    assert main(["traffic", str(out), "--flows", "7", "--count", "30", "--size", "128", "--proto", proto,
                 "--seed", "5"]) == 0
    pkts = rdpcap(str(out))
    assert len(pkts) == 30 and {len(p) for p in pkts} == {128}
    layer = {"udp": UDP, "tcp": TCP, "icmp": ICMP, "ipv6": IPv6, "vlan": Dot1Q}[proto]
    assert all(layer in p for p in pkts)
    assert len({_five_tuple(p) for p in pkts}) == 7
    for p in pkts:  # checksums are valid: scapy recomputes the same values
        if IP in p:
            fresh = Ether(bytes(p))
            del fresh[IP].chksum
            assert Ether(bytes(fresh))[IP].chksum == p[IP].chksum
    # packets cycle over the flows
    assert bytes(pkts[0]) == bytes(pkts[7]) and bytes(pkts[0]) != bytes(pkts[1])


def test_mix_and_sizes() -> None:
    pkts = generate(flows=10, count=10, size=200, proto="mix", seed=1)
    kinds = [classify(p) for p in pkts]
    assert {k.proto for k in kinds} == {"udp", "tcp", "icmp"}
    assert sum(k.vlan for k in kinds) == 2 and sum(k.network == "ipv6" for k in kinds) == 2
    for proto, need in HEADER_BYTES.items():
        assert len(generate(1, 1, need, proto)[0]) == need
        with pytest.raises(TrafficError, match="smaller than"):
            generate(1, 1, need - 1, proto)


def test_deterministic(tmp_path: Path) -> None:
    a, b, c = (tmp_path / n for n in ("a.pcap", "b.pcap", "c.pcap"))
    for path, seed in ((a, 9), (b, 9), (c, 10)):
        assert main(["traffic", str(path), "--flows", "4", "--count", "8", "--seed", str(seed)]) == 0
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()


# The original hXDP's UDP traces ("N_flows_S_bytes.pcap"), as measured on them: S is the captured frame length
# (no FCS), IPv4 id 1, TTL 64, no flags, TOS 0, the payload "sal" repeated and "." for the remainder.
ORIGINAL_UDP = {64: (50, 30, b"sal" * 7 + b"."), 1500: (1486, 1466, b"sal" * 486)}


@pytest.mark.parametrize("size", sorted(ORIGINAL_UDP))
def test_original_trace_conventions(tmp_path: Path, size: int) -> None:
    ip_len, udp_len, body = ORIGINAL_UDP[size]
    flows = 10 if size == 64 else 1
    for p in rdpcap(str(_write(tmp_path, flows, 10, size))):
        assert len(p) == size
        assert (p[IP].id, p[IP].ttl, int(p[IP].flags), p[IP].frag, p[IP].tos) == (1, 64, 0, 0, 0)
        assert (p[IP].len, p[UDP].len, bytes(p[Raw])) == (ip_len, udp_len, body)


def _write(tmp_path: Path, flows: int, count: int, size: int) -> Path:
    out = tmp_path / f"gen_{flows}_{count}_{size}.pcap"
    write_pcap(out, generate(flows, count, size, "udp", 0))
    return out


def _capture_like_the_original(frames: list[bytes], start: tuple[int, int], gaps_us: list[int]) -> bytes:
    """A pcap written field by field as the original traces are: little-endian, microseconds, version 2.4,
    snaplen 65535, Ethernet; a record header (seconds, microseconds, length, length) before each frame."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    sec, usec = start
    for frame_, gap in zip(frames, gaps_us, strict=True):
        sec, usec = sec + (usec + gap) // 1_000_000, (usec + gap) % 1_000_000
        out.append(struct.pack("<IIII", sec, usec, len(frame_), len(frame_)) + frame_)
    return b"".join(out)


@pytest.mark.parametrize(("flows", "count", "size"), [(1, 1, 1500), (5, 5, 64), (10, 10, 64), (100, 100, 1500),
                                                      (1, 2000, 64)])
def test_original_style_traces_round_trip(tmp_path: Path, flows: int, count: int, size: int) -> None:
    """Traces like the original's, read and written again byte for byte (timestamps to the microsecond, with
    gaps from 1 us to minutes)."""
    rng = random.Random(flows * count)
    gaps = [rng.choice((1, 2008, 1953, rng.randrange(1, 300_000_000))) for _ in range(count)]
    trace = tmp_path / "trace.pcap"
    trace.write_bytes(_capture_like_the_original(generate(flows, count, size, "udp", 3), (1582123576, 109726), gaps))
    pf = read_pcap_file(trace)
    assert len(pf.records) == count and not pf.nanosecond
    again = pcap_bytes([r.data for r in pf.records], [r.ts_ns / 1e9 for r in pf.records])
    assert again == trace.read_bytes()  # byte-exact rewrite


def test_nanosecond_and_big_endian(tmp_path: Path) -> None:
    pkts = generate(2, 3, 60, "udp", 4)
    path = tmp_path / "ns.pcap"
    write_pcap(path, pkts, [1.5, 1.500000001, 2.0], nanosecond=True)
    pf = read_pcap_file(path)
    assert pf.nanosecond and [r.ts_ns for r in pf.records] == [1_500_000_000, 1_500_000_001, 2_000_000_000]
    assert read_pcap(path) == pkts
    reader = RawPcapReader(str(path))
    assert [d for d, _meta in reader] == pkts
    # the same file written big-endian by hand parses the same
    be = struct.pack(">IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for i, p in enumerate(pkts):
        be += struct.pack(">IIII", i, 7, len(p), len(p)) + p
    assert [r.data for r in parse_pcap(be).records] == pkts


def test_truncated_pcap_rejected(tmp_path: Path) -> None:
    good = pcap_bytes(generate(3, 3, 64, "udp", 0))
    cases = {
        10: "global header",
        24 + 8: "packet 0 at offset 24: record header",
        24 + 16 + 30: "packet 0 at offset 24: needs 64 bytes, 30 left",
        len(good) - 1: f"packet 2 at offset {24 + 2 * 80}: needs 64 bytes, 63 left",
    }
    for cut, what in cases.items():
        path = tmp_path / f"cut{cut}.pcap"
        path.write_bytes(good[:cut])
        with pytest.raises(PcapError, match="truncated") as exc:
            read_pcap(path)
        msg = str(exc.value)
        assert what in msg and str(path) in msg and "\n" not in msg
    bad = tmp_path / "cut.pcap"
    bad.write_bytes(good[:-5])
    assert main(["traffic", "--info", str(bad)]) == 1


def test_not_a_pcap(tmp_path: Path) -> None:
    path = tmp_path / "x.pcap"
    path.write_bytes(b"hello world, not a capture at all")
    with pytest.raises(PcapError, match="not a pcap file"):
        read_pcap(path)
    path.write_bytes(struct.pack("<I", 0x0A0D0D0A) + bytes(40))
    with pytest.raises(PcapError, match="pcapng"):
        read_pcap(path)


def test_info(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, 5, 12, 100)
    assert main(["traffic", "--info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "packets:   12 (1200 bytes" in out and "flows:     5" in out and "sizes:     100: 12" in out
    assert "udp 12" in out


def test_fast_frames_equal_scapy() -> None:
    """The struct-built frames are byte for byte what scapy builds, for every protocol and odd sizes."""
    rng = random.Random(7)
    for i in range(300):
        proto = PROTOS[i % len(PROTOS)]
        flow = draw_flow(proto, rng)
        size = rng.randrange(HEADER_BYTES[proto], 1600)
        assert frame(flow, size) == scapy_frame(flow, size), (proto, size)
