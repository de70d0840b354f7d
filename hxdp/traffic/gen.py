"""Synthetic traffic like the hXDP evaluation traces (scapy), and a summary of any pcap.

Conventions measured on ../shared/reference/traces: `size` is the captured frame length (no FCS: the "64 bytes"
traces hold 64-byte frames, IPv4 total length 50); Ethernet addresses, IPv4 addresses and UDP ports are uniformly
random; IPv4 id 1, TTL 64, no flags, valid checksums; the payload is "sal" repeated, the remainder filled with
".". Every packet of a flow is identical; packets cycle through the flows (packet i belongs to flow i % flows).
"""

from __future__ import annotations

import math
import random
import socket
import struct
from collections import Counter
from dataclasses import dataclass, field

from hxdp.errors import HxdpError
from hxdp.traffic.pcap import PcapFile

PROTOS = ("udp", "tcp", "icmp", "ipv6", "vlan")
PROTO_CHOICES = (*PROTOS, "mix")
HEADER_BYTES = {"udp": 14 + 20 + 8, "tcp": 14 + 20 + 20, "icmp": 14 + 20 + 8, "ipv6": 14 + 40 + 8,
                "vlan": 14 + 4 + 20 + 8}
MAX_FRAME = 9018  # jumbo frame
DEFAULT_START = 1_600_000_000.0
DEFAULT_GAP = 1e-6  # seconds between packets


class TrafficError(HxdpError):
    """Traffic parameters that cannot be generated."""


def payload(n: int) -> bytes:
    return b"sal" * (n // 3) + b"." * (n % 3)


def _mac(rng: random.Random) -> str:
    return ":".join(f"{rng.randrange(256):02x}" for _ in range(6))


def _ip4(rng: random.Random) -> str:
    return ".".join(str(rng.randrange(256)) for _ in range(4))


def _ip6(rng: random.Random) -> str:
    words = [0x2001, 0x0DB8] + [rng.randrange(65536) for _ in range(6)]
    return ":".join(f"{w:x}" for w in words)


@dataclass
class Flow:
    """The random fields of one flow, drawn in a fixed order from the generator's random stream."""

    proto: str
    src_mac: str
    dst_mac: str
    sport: int
    dport: int
    src: str
    dst: str
    seq: int = 0  # tcp
    ack: int = 0  # tcp
    icmp_id: int = 0  # icmp
    vid: int = 0  # vlan


def draw_flow(proto: str, rng: random.Random) -> Flow:
    src_mac, dst_mac = _mac(rng), _mac(rng)
    sport, dport = rng.randrange(1, 65536), rng.randrange(1, 65536)
    extra: dict[str, int] = {}
    if proto == "tcp":
        extra = {"seq": rng.randrange(1 << 32), "ack": rng.randrange(1 << 32)}
    elif proto == "icmp":
        extra = {"icmp_id": rng.randrange(65536)}
    elif proto == "vlan":
        extra = {"vid": rng.randrange(1, 4095)}
    if proto == "ipv6":
        src, dst = _ip6(rng), _ip6(rng)
    else:
        src, dst = _ip4(rng), _ip4(rng)
    return Flow(proto, src_mac, dst_mac, sport, dport, src, dst, **extra)


def _check_size(proto: str, size: int) -> None:
    if proto not in PROTOS:
        raise TrafficError(f"unknown protocol {proto!r} (choose from {', '.join(PROTO_CHOICES)})")
    need = HEADER_BYTES[proto]
    if size < need:
        raise TrafficError(f"--size {size} is smaller than the {need}-byte headers of a {proto} packet")
    if size > MAX_FRAME:
        raise TrafficError(f"--size {size} exceeds the largest frame ({MAX_FRAME} bytes)")


def scapy_frame(flow: Flow, size: int) -> bytes:
    """The flow's frame built with scapy (the reference for frame()); scapy is imported here only, as it takes
    most of a second to load and every `hxdp` command imports this module."""
    from scapy.layers.inet import ICMP, IP, TCP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.packet import Packet, Raw

    _check_size(flow.proto, size)
    eth = Ether(src=flow.src_mac, dst=flow.dst_mac)
    body = Raw(payload(size - HEADER_BYTES[flow.proto]))
    udp = UDP(sport=flow.sport, dport=flow.dport)
    pkt: Packet
    if flow.proto == "ipv6":
        return bytes(eth / IPv6(src=flow.src, dst=flow.dst, hlim=64) / udp / body)
    ip = IP(src=flow.src, dst=flow.dst, id=1, ttl=64)
    if flow.proto == "udp":
        pkt = eth / ip / udp / body
    elif flow.proto == "tcp":
        pkt = eth / ip / TCP(sport=flow.sport, dport=flow.dport, flags="A", seq=flow.seq, ack=flow.ack,
                             window=65535) / body
    elif flow.proto == "icmp":
        pkt = eth / ip / ICMP(type=8, code=0, id=flow.icmp_id, seq=1) / body
    else:  # vlan
        pkt = eth / Dot1Q(vlan=flow.vid) / ip / udp / body
    return bytes(pkt)


def _csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _l4_csum(pseudo: bytes, segment: bytes, udp: bool) -> int:
    c = _csum(pseudo + segment)
    return 0xFFFF if udp and c == 0 else c


def frame(flow: Flow, size: int) -> bytes:
    """The flow's frame, byte for byte what scapy_frame() builds, without scapy's per-packet cost."""
    _check_size(flow.proto, size)
    body = payload(size - HEADER_BYTES[flow.proto])
    eth = bytes.fromhex(flow.dst_mac.replace(":", "")) + bytes.fromhex(flow.src_mac.replace(":", ""))
    if flow.proto == "ipv6":
        src, dst = socket.inet_pton(socket.AF_INET6, flow.src), socket.inet_pton(socket.AF_INET6, flow.dst)
        length = 8 + len(body)
        udp = struct.pack("!HHHH", flow.sport, flow.dport, length, 0) + body
        pseudo = src + dst + struct.pack("!IxxxB", length, 17)
        udp = udp[:6] + struct.pack("!H", _l4_csum(pseudo, udp, True)) + udp[8:]
        return eth + b"\x86\xdd" + struct.pack("!IHBB", 6 << 28, length, 17, 64) + src + dst + udp
    src, dst = socket.inet_aton(flow.src), socket.inet_aton(flow.dst)
    if flow.proto == "tcp":
        l4 = struct.pack("!HHIIBBHHH", flow.sport, flow.dport, flow.seq, flow.ack, 5 << 4, 0x10, 65535, 0, 0) + body
        number = 6
    elif flow.proto == "icmp":
        l4 = struct.pack("!BBHHH", 8, 0, 0, flow.icmp_id, 1) + body
        number = 1
    else:
        l4 = struct.pack("!HHHH", flow.sport, flow.dport, 8 + len(body), 0) + body
        number = 17
    if number == 1:
        l4 = l4[:2] + struct.pack("!H", _csum(l4)) + l4[4:]
    else:
        pseudo = src + dst + struct.pack("!xBH", number, len(l4))
        at = 16 if number == 6 else 6
        l4 = l4[:at] + struct.pack("!H", _l4_csum(pseudo, l4, number == 17)) + l4[at + 2 :]
    ip = struct.pack("!BBHHHBBH", 0x45, 0, 20 + len(l4), 1, 0, 64, number, 0) + src + dst
    ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
    tag = struct.pack("!HH", 0x8100, flow.vid) if flow.proto == "vlan" else b""
    return eth + tag + b"\x08\x00" + ip + l4


def flow_packet(proto: str, size: int, rng: random.Random) -> bytes:
    """One frame of a new random flow of the given protocol, exactly `size` bytes long."""
    _check_size(proto, size)
    return frame(draw_flow(proto, rng), size)


def generate(flows: int, count: int, size: int, proto: str = "udp", seed: int = 0) -> list[bytes]:
    """`count` frames of `size` bytes cycling over `flows` random flows; the same seed gives the same bytes."""
    if flows < 1:
        raise TrafficError(f"--flows must be at least 1, got {flows}")
    if count < 0:
        raise TrafficError(f"--count must not be negative, got {count}")
    if proto not in PROTO_CHOICES:
        raise TrafficError(f"unknown protocol {proto!r} (choose from {', '.join(PROTO_CHOICES)})")
    rng = random.Random(seed)
    n = min(flows, count) if count else 0
    templates = []
    for i in range(n):
        p = PROTOS[i % len(PROTOS)] if proto == "mix" else proto
        templates.append(flow_packet(p, size, rng))
    return [templates[i % n] for i in range(count)]


def timestamps(count: int, start: float = DEFAULT_START, gap: float = DEFAULT_GAP) -> list[float]:
    """Seconds of each packet: start, start + gap, ...; TrafficError when they do not fit a pcap (0 .. 2^32 s)."""
    if not math.isfinite(start) or not 0 <= start < 2**32:
        raise TrafficError(f"--start {start}: must be a time in seconds from 0 to {2**32 - 1}")
    if not math.isfinite(gap) or gap < 0:
        raise TrafficError(f"--gap {gap}: must be a non-negative number of seconds")
    last = start + max(count - 1, 0) * gap
    if last >= 2**32:
        raise TrafficError(f"--start {start} --gap {gap}: packet {count - 1} at {last:.0f} s is beyond the pcap "
                           f"timestamp range ({2**32 - 1} s)")
    return [start + i * gap for i in range(count)]


# --- summary of a pcap -----------------------------------------------------------------------------------------


@dataclass
class FrameInfo:
    """What the summary needs from one Ethernet frame."""

    proto: str  # udp, tcp, icmp, icmpv6, ipv4-other, ipv6-other, arp, other, runt
    vlan: bool
    flow: tuple = ()
    network: str = "other"  # ipv4, ipv6, arp, other


def classify(frame: bytes) -> FrameInfo:
    """Protocol and 5-tuple of an Ethernet frame (without scapy: fast on long traces)."""
    if len(frame) < 14:
        return FrameInfo("runt", False)
    etype = struct.unpack_from("!H", frame, 12)[0]
    off, vlan = 14, False
    while etype in (0x8100, 0x88A8) and len(frame) >= off + 4:
        vlan = True
        etype = struct.unpack_from("!H", frame, off + 2)[0]
        off += 4
    if etype == 0x0806:
        return FrameInfo("arp", vlan, network="arp")
    if etype == 0x0800 and len(frame) >= off + 20:
        ihl = (frame[off] & 0xF) * 4
        l4, src, dst = frame[off + 9], frame[off + 12 : off + 16], frame[off + 16 : off + 20]
        return _l4(frame, off + ihl, l4, src, dst, vlan, 1, "ipv4")
    if etype == 0x86DD and len(frame) >= off + 40:
        l4, src, dst = frame[off + 6], frame[off + 8 : off + 24], frame[off + 24 : off + 40]
        return _l4(frame, off + 40, l4, src, dst, vlan, 58, "ipv6")
    return FrameInfo("other", vlan)


def _l4(frame: bytes, off: int, l4: int, src: bytes, dst: bytes, vlan: bool, icmp: int, net: str) -> FrameInfo:
    if l4 in (6, 17) and len(frame) >= off + 4:
        sport, dport = struct.unpack_from("!HH", frame, off)
        return FrameInfo("tcp" if l4 == 6 else "udp", vlan, (src, dst, l4, sport, dport), net)
    if l4 == icmp:
        return FrameInfo("icmp" if icmp == 1 else "icmpv6", vlan, (src, dst, l4), net)
    return FrameInfo(f"{net}-other", vlan, (src, dst, l4), net)


@dataclass
class Summary:
    """Counts over a pcap."""

    packets: int = 0
    bytes: int = 0
    sizes: Counter = field(default_factory=Counter)
    protos: Counter = field(default_factory=Counter)
    networks: Counter = field(default_factory=Counter)
    vlan: int = 0
    flows: int = 0
    snapped: int = 0
    duration_s: float = 0.0


def summarise(pf: PcapFile) -> Summary:
    s = Summary()
    flows = set()
    for r in pf.records:
        s.packets += 1
        s.bytes += len(r.data)
        s.sizes[len(r.data)] += 1
        s.snapped += r.orig_len > len(r.data)
        info = classify(r.data) if pf.linktype == 1 else FrameInfo(f"linktype {pf.linktype}", False)
        s.protos[info.proto] += 1
        s.networks[info.network] += 1
        s.vlan += info.vlan
        if info.flow:
            flows.add(info.flow)
    s.flows = len(flows)
    if pf.records:
        s.duration_s = (pf.records[-1].ts_ns - pf.records[0].ts_ns) / 1e9
    return s


def summary_json(name: str, pf: PcapFile, s: Summary) -> dict:
    """The summary as JSON-ready data (`hxdp traffic --info IN.pcap --json`)."""
    return {"file": name, "nanosecond": pf.nanosecond, "linktype": pf.linktype, "snaplen": pf.snaplen,
            "packets": s.packets, "bytes": s.bytes, "duration_s": s.duration_s,
            "sizes": {str(k): v for k, v in sorted(s.sizes.items())}, "networks": dict(s.networks.most_common()),
            "protocols": dict(s.protos.most_common()), "vlan": s.vlan, "flows": s.flows, "snapped": s.snapped}


def format_summary(name: str, pf: PcapFile, s: Summary) -> list[str]:
    sizes = ", ".join(f"{k}: {v}" for k, v in sorted(s.sizes.items())[:12])
    if len(s.sizes) > 12:
        sizes += f", ... ({len(s.sizes)} sizes)"
    lines = [
        f"file:      {name}",
        f"format:    pcap, {'nanosecond' if pf.nanosecond else 'microsecond'} timestamps, link type {pf.linktype}"
        f"{' (Ethernet)' if pf.linktype == 1 else ''}, snaplen {pf.snaplen}",
        f"packets:   {s.packets} ({s.bytes} bytes, duration {s.duration_s:.6f} s)",
        f"sizes:     {sizes or '-'}",
        f"network:   {', '.join(f'{k} {v}' for k, v in s.networks.most_common()) or '-'}",
        f"protocols: {', '.join(f'{k} {v}' for k, v in s.protos.most_common()) or '-'}",
        f"vlan:      {s.vlan}",
        f"flows:     {s.flows}",
    ]
    if s.snapped:
        lines.append(f"snapped:   {s.snapped} packets captured shorter than on the wire")
    return lines
