#!/usr/bin/env python3
"""Write traffic/NAME.pcap and maps/NAME.json for every program of xdp_progs/ (deterministic, bit for bit).

Every frame is built with scapy from explicit field values (no random numbers, no clock), is at least 60 bytes
long (the hardware drops runts) and is stamped 0, 1 us, 2 us, ... by hxdp.traffic.pcap. Map configurations use the
shared format {"maps": {name: [{"key": hex, "value": hex}]}} with the raw little-endian bytes of the C structs.
Usage: python3 xdp_progs/gen_traffic.py [--check]   (--check: fail when a committed file differs)
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
from collections.abc import Callable
from pathlib import Path

from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_EOL, IPOption_NOP
from scapy.layers.inet6 import ICMPv6EchoRequest, ICMPv6ND_NS, IPv6
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether
from scapy.packet import Packet, Raw

from hxdp.traffic import maglev
from hxdp.traffic.pcap import pcap_bytes

HERE = Path(__file__).resolve().parent
CLIENT_MAC = "02:00:00:00:00:01"
NIC_MAC = "02:00:00:00:00:02"
MIN_FRAME = 60

Config = dict[str, list[dict[str, str]]]


def fill(n: int, seed: int = 0) -> bytes:
    return bytes((seed + i * 7) & 0xFF for i in range(n))


def frame(pkt: Packet, size: int = MIN_FRAME, seed: int = 0) -> bytes:
    """The packet padded with a deterministic payload to `size` bytes (at least 60)."""
    raw = bytes(pkt)
    size = max(size, MIN_FRAME, len(raw))
    if len(raw) < size:
        raw = bytes(pkt / Raw(fill(size - len(raw), seed)))
    # the IP length fields cover the payload (scapy computes them when the payload is part of the packet)
    assert len(raw) == size, (len(raw), size)
    return raw


def eth(src: str = CLIENT_MAC, dst: str = NIC_MAC) -> Ether:
    return Ether(src=src, dst=dst)


def ip4(src: str, dst: str, **kw: int) -> IP:
    kw.setdefault("ttl", 64)
    kw.setdefault("id", 1)
    return IP(src=src, dst=dst, **kw)


def udp4(src: str, dst: str, sport: int, dport: int, size: int = 64, **kw: int) -> bytes:
    return frame(eth() / ip4(src, dst, **kw) / UDP(sport=sport, dport=dport), size, sport)


def tcp4(src: str, dst: str, sport: int, dport: int, size: int = 64, flags: str = "S", **kw: int) -> bytes:
    return frame(
        eth() / ip4(src, dst, **kw) / TCP(sport=sport, dport=dport, flags=flags, seq=1000, window=8192), size, sport
    )


def icmp4(src: str, dst: str, size: int = 98) -> bytes:
    return frame(eth() / ip4(src, dst) / ICMP(type=8, id=7, seq=1), size)


def udp6(src: str, dst: str, sport: int, dport: int, size: int = 86) -> bytes:
    return frame(eth() / IPv6(src=src, dst=dst, hlim=64) / UDP(sport=sport, dport=dport), size, sport)


def tcp6(src: str, dst: str, sport: int, dport: int, size: int = 90) -> bytes:
    return frame(
        eth() / IPv6(src=src, dst=dst, hlim=64) / TCP(sport=sport, dport=dport, flags="S", seq=1000, window=8192),
        size,
        sport,
    )


def icmp6(src: str, dst: str, size: int = 70) -> bytes:
    return frame(eth() / IPv6(src=src, dst=dst, hlim=64) / ICMPv6EchoRequest(id=7, seq=1), size)


def arp() -> bytes:
    return frame(
        Ether(src=CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=CLIENT_MAC, psrc="10.0.0.1", pdst="10.0.0.2")
    )


def ip4_options(src: str, dst: str, sport: int, dport: int) -> bytes:
    return frame(
        eth()
        / ip4(src, dst, options=[IPOption_NOP(), IPOption_NOP(), IPOption_NOP(), IPOption_EOL()])
        / UDP(sport=sport, dport=dport),
        70,
    )


def fragment(src: str, dst: str, sport: int, dport: int) -> bytes:
    return frame(eth() / ip4(src, dst, flags="MF", frag=0) / UDP(sport=sport, dport=dport), 64)


def mixed() -> list[bytes]:
    """Generic traffic (12 frames) for programs that treat every frame alike; counts are in the expect files."""
    return [
        udp4("10.0.0.1", "10.0.1.1", 1000, 2000),  # 1 UDP 64
        udp4("10.0.0.2", "10.0.1.2", 1001, 2001, size=1514),  # 2 UDP 1514
        tcp4("10.0.0.3", "10.0.1.3", 1002, 80),  # 3 TCP SYN
        icmp4("10.0.0.4", "10.0.1.4"),  # 4 ICMP echo
        frame(eth() / Dot1Q(vlan=100) / ip4("10.0.0.5", "10.0.1.5") / UDP(sport=1003, dport=2003), 64),  # 5 VLAN UDP
        frame(
            eth()
            / Dot1AD(vlan=200)
            / Dot1Q(vlan=300)
            / ip4("10.0.0.6", "10.0.1.6")
            / TCP(sport=1004, dport=80, flags="S"),
            64,
        ),  # 6 QinQ TCP
        udp6("fd00::1", "fd00::2", 1005, 2005),  # 7 IPv6 UDP
        tcp6("fd00::3", "fd00::4", 1006, 443),  # 8 IPv6 TCP
        icmp6("fd00::5", "fd00::6"),  # 9 ICMPv6
        arp(),  # 10 ARP
        ip4_options("10.0.0.7", "10.0.1.7", 1007, 2007),  # 11 IPv4 with options, UDP
        frame(Ether(src=CLIENT_MAC, dst=NIC_MAC, type=0x88B5) / Raw(fill(46))),  # 12 unknown ethertype
    ]


def entry(key: bytes, value: bytes) -> dict[str, str]:
    return {"key": key.hex(), "value": value.hex()}


def u32(x: int) -> bytes:
    return struct.pack("<I", x)


def ip(a: str) -> bytes:
    return socket.inet_aton(a)


def ip6(a: str) -> bytes:
    return socket.inet_pton(socket.AF_INET6, a)


def mac(a: str) -> bytes:
    return bytes.fromhex(a.replace(":", ""))


# --- one generator per program: (frames, map configuration) ------------------------------------------------------
def g_plain() -> tuple[list[bytes], Config]:
    return mixed(), {}


def g_redirect_map() -> tuple[list[bytes], Config]:
    return mixed(), {"tx_port": [entry(u32(0), u32(1))]}


def map_access(n: int) -> Callable[[], tuple[list[bytes], Config]]:
    def gen() -> tuple[list[bytes], Config]:
        flows = [udp4(f"{10 + i}.{20 + i}.{30 + i}.{40 + i}", f"{50 + i}.1.1.1", 3000 + i, 4000 + i) for i in range(8)]
        frames = flows + [flows[0], flows[2], arp(), udp6("fd00::1", "fd00::2", 1, 2)]
        keys = [f[26 : 26 + n] for f in flows[:4]]
        return frames, {"table": [entry(k, bytes(8)) for k in keys]}

    return gen


def g_adjust_tail() -> tuple[list[bytes], Config]:
    return [
        udp4("10.0.0.1", "10.0.1.1", 1000, 2000, size=64),  # small: PASS
        udp4("10.0.0.2", "10.0.1.2", 1001, 2001, size=600),  # exactly the limit: PASS
        udp4("10.0.0.3", "10.0.1.3", 1002, 2002, size=601),  # TX
        tcp4("10.0.0.4", "10.0.1.4", 1003, 80, size=1000),  # TX
        icmp4("10.0.0.5", "10.0.1.5", size=1514),  # TX
        udp6("fd00::1", "fd00::2", 1004, 2004, size=1000),  # IPv6: PASS
        arp(),  # PASS
    ], {}


def g_router() -> tuple[list[bytes], Config]:
    def lpm(prefix: int, addr: str) -> bytes:
        return u32(prefix) + ip(addr)

    def route(port: int, nexthop: str) -> bytes:
        return u32(port) + ip(nexthop)

    cfg: Config = {
        "routes": [
            entry(lpm(16, "10.1.0.0"), route(0, "192.168.0.1")),  # via gateway on port 0
            entry(lpm(24, "10.1.2.0"), route(1, "192.168.1.1")),  # more specific: port 1
            entry(lpm(32, "10.1.2.3"), route(2, "0.0.0.0")),  # host route, directly connected, port 2
            entry(lpm(24, "10.3.0.0"), route(1, "192.168.1.99")),  # gateway without neighbour entry
            entry(lpm(24, "10.4.0.0"), route(3, "192.168.3.1")),  # port 3 has no devmap entry
        ],
        "neigh": [
            entry(ip("192.168.0.1"), mac("02:00:00:00:01:01") + bytes(2)),
            entry(ip("192.168.1.1"), mac("02:00:00:00:01:02") + bytes(2)),
            entry(ip("10.1.2.3"), mac("02:00:00:00:01:03") + bytes(2)),
            entry(ip("192.168.3.1"), mac("02:00:00:00:01:04") + bytes(2)),
        ],
        "port_mac": [entry(u32(p), mac(f"02:00:00:00:00:1{p}") + bytes(2)) for p in range(4)],
        "tx_port": [entry(u32(p), u32(1)) for p in range(3)],
    }
    frames = [
        udp4("10.0.0.1", "10.1.5.5", 1000, 2000),  # /16 via 192.168.0.1, port 0: REDIRECT
        tcp4("10.0.0.2", "10.1.2.9", 1001, 80),  # /24 via 192.168.1.1, port 1: REDIRECT
        udp4("10.0.0.3", "10.1.2.3", 1002, 2002, size=300),  # /32 direct, port 2: REDIRECT
        icmp4("10.0.0.4", "10.1.9.9"),  # /16: REDIRECT
        udp4("10.0.0.5", "10.2.0.1", 1003, 2003),  # no route: PASS
        udp4("10.0.0.6", "10.1.5.5", 1004, 2004, ttl=1),  # TTL 1: PASS
        udp4("10.0.0.7", "10.3.0.7", 1005, 2005),  # no neighbour: PASS
        udp4("10.0.0.8", "10.4.0.8", 1006, 2006),  # port without devmap entry: DROP
        ip4_options("10.0.0.9", "10.1.5.5", 1007, 2007),  # IP options: PASS
        udp6("fd00::1", "fd00::2", 1008, 2008),  # IPv6: PASS
        arp(),  # PASS
        udp4("10.0.0.10", "10.1.2.200", 1009, 2009, ttl=2),  # TTL 2: REDIRECT with TTL 1
    ]
    return frames, cfg


def flows(n: int, dport: int = 2000) -> list[bytes]:
    """n UDP and TCP flows of distinct 5-tuples (host-queue steering: spread over CPUs by their hash)."""
    out = []
    for i in range(n):
        src, dst = f"10.1.{i}.1", f"10.2.{i % 3}.1"
        out.append(udp4(src, dst, 3000 + i, dport) if i % 2 else tcp4(src, dst, 3000 + i, 443))
    return out


def g_redirect_cpu() -> tuple[list[bytes], Config]:
    qsize = u32(192) + u32(0)  # struct bpf_cpumap_val: qsize, no cpumap program
    cfg = {"cpu_map": [entry(u32(0), qsize), entry(u32(1), qsize)],
           "cpus_available": [entry(u32(0), u32(0)), entry(u32(1), u32(1)), entry(u32(2), u32(3))],
           "cpus_count": [entry(u32(0), u32(3))]}
    return mixed() + flows(12), cfg


def g_sock_steer() -> tuple[list[bytes], Config]:
    discard = [udp4("10.0.0.9", "10.0.1.9", 1009, 9), udp6("fd00::7", "fd00::8", 1010, 9)]  # UDP port 9: DROP
    frames = mixed() + flows(6, dport=4791) + discard
    return frames, {"xsks_map": [entry(u32(0), u32(0))]}


def g_flood() -> tuple[list[bytes], Config]:
    group = [
        frame(Ether(src=CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") / ip4("10.0.0.8", "10.0.1.255") / UDP(sport=68, dport=67)),
        frame(Ether(src=CLIENT_MAC, dst="01:00:5e:00:00:fb") / ip4("10.0.0.8", "224.0.0.251") / UDP(sport=5353,
                                                                                                   dport=5353)),
        frame(Ether(src=CLIENT_MAC, dst="33:33:ff:00:00:02") / IPv6(src="fd00::1", dst="ff02::1:ff00:2")
              / ICMPv6ND_NS(tgt="fd00::2"), 86),
    ]
    return mixed() + group, {"flood_ports": [entry(u32(0), u32(1)), entry(u32(1), u32(1))],
                             "mirror_ports": [entry(u32(7), u32(1))]}


def g_rxq_info() -> tuple[list[bytes], Config]:
    action_tx, ifindex_lo, opt_swap_mac = 3, 1, 1
    return mixed(), {"config": [entry(u32(0), u32(action_tx) + u32(ifindex_lo) + u32(opt_swap_mac))]}


def g_iptunnel() -> tuple[list[bytes], Config]:
    af_inet, af_inet6 = 2, 10

    def vip4(addr: str, port: int, proto: int) -> bytes:
        return ip(addr) + bytes(12) + struct.pack("!H", port) + struct.pack("<H", af_inet) + bytes([proto]) + bytes(3)

    def vip6(addr: str, port: int, proto: int) -> bytes:
        return ip6(addr) + struct.pack("!H", port) + struct.pack("<H", af_inet6) + bytes([proto]) + bytes(3)

    def tnl4(src: str, dst: str, dmac: str) -> bytes:
        return ip(src) + bytes(12) + ip(dst) + bytes(12) + struct.pack("<H", af_inet) + mac(dmac)

    def tnl6(src: str, dst: str, dmac: str) -> bytes:
        return ip6(src) + ip6(dst) + struct.pack("<H", af_inet6) + mac(dmac)

    cfg: Config = {
        "vip2tnl": [
            entry(vip4("10.10.0.1", 80, 6), tnl4("10.20.0.1", "10.30.0.1", "02:00:00:00:02:01")),
            entry(vip4("10.10.0.2", 53, 17), tnl4("10.20.0.1", "10.30.0.2", "02:00:00:00:02:02")),
            entry(vip6("fd10::1", 443, 6), tnl6("fd20::1", "fd30::1", "02:00:00:00:02:03")),
        ]
    }
    frames = [
        tcp4("10.0.0.1", "10.10.0.1", 1000, 80),  # VIP TCP: TX
        tcp4("10.0.0.2", "10.10.0.1", 1001, 80, size=200),  # VIP TCP: TX
        udp4("10.0.0.3", "10.10.0.2", 1002, 53),  # VIP UDP: TX
        udp4("10.0.0.4", "10.10.0.2", 1003, 54),  # VIP, other port: PASS
        tcp4("10.0.0.5", "10.10.0.9", 1004, 80),  # not a VIP: PASS
        icmp4("10.0.0.6", "10.10.0.1"),  # ICMP to a VIP: PASS
        tcp6("fd00::1", "fd10::1", 1005, 443),  # IPv6 VIP: TX
        udp6("fd00::2", "fd10::1", 1006, 443),  # IPv6 VIP, other protocol: PASS
        ip4_options("10.0.0.7", "10.10.0.2", 1007, 53),  # IP options: DROP
        fragment("10.0.0.8", "10.10.0.2", 1008, 53),  # fragment: DROP
        arp(),  # PASS
    ]
    return frames, cfg


def g_firewall() -> tuple[list[bytes], Config]:
    cfg: Config = {
        "fw_config": [entry(u32(0), ip("10.0.0.0") + ip("255.0.0.0") + u32(0) + u32(1))],
        "tx_port": [entry(u32(0), u32(1)), entry(u32(1), u32(1))],
    }
    frames = [
        tcp4("192.0.2.1", "10.0.0.1", 443, 40000, flags="SA"),  # external, unknown flow: DROP
        tcp4("10.0.0.1", "192.0.2.1", 40000, 443),  # internal opens TCP flow: REDIRECT
        tcp4("192.0.2.1", "10.0.0.1", 443, 40000, flags="SA"),  # external reply: REDIRECT
        tcp4("10.0.0.1", "192.0.2.1", 40000, 443, flags="A"),  # internal again: REDIRECT
        udp4("10.0.0.2", "198.51.100.7", 5353, 53),  # internal opens UDP flow: REDIRECT
        udp4("198.51.100.7", "10.0.0.2", 53, 5353, size=120),  # reply: REDIRECT
        udp4("198.51.100.7", "10.0.0.2", 53, 5354),  # other port, unknown: DROP
        udp4("198.51.100.8", "10.0.0.3", 53, 5353),  # unknown: DROP
        icmp4("10.0.0.1", "192.0.2.1"),  # ICMP: DROP
        arp(),  # DROP
        udp6("fd00::1", "fd00::2", 1, 2),  # IPv6: DROP
        tcp4("203.0.113.5", "10.0.0.1", 443, 40000, flags="SA"),  # other external host: DROP
        udp4("10.0.0.9", "10.0.0.9", 7000, 7001),  # internal, same address both ends (ports order the key)
        udp4("10.0.0.9", "10.0.0.9", 7001, 7000),  # the other direction of that flow: same entry, REDIRECT
    ]
    return frames, cfg


def g_load_balancer() -> tuple[list[bytes], Config]:
    ring_size, reals = 13, ["172.16.0.1", "172.16.0.2", "172.16.0.3", "172.16.1.1", "172.16.1.2"]

    def vk(addr: str, port: int, proto: int) -> bytes:
        return ip(addr) + struct.pack("!H", port) + bytes([proto, 0])

    def meta(num: int) -> bytes:
        return u32(num) + u32(0)

    rings: list[dict[str, str]] = []
    backends = {0: [0, 1, 2], 1: [3, 4], 2: [0, 4], 3: [99]}  # vip 3 names backend 99, beyond reals: DROP
    for vip, group in backends.items():
        for slot, real in enumerate(maglev.table(group, ring_size)):
            rings.append(entry(u32(vip * ring_size + slot), u32(real)))
    cfg: Config = {
        "vips": [
            entry(vk("10.100.0.1", 80, 6), meta(0)),
            entry(vk("10.100.0.2", 53, 17), meta(1)),
            entry(vk("10.100.0.3", 0, 17), meta(2)),  # every UDP port
            entry(vk("10.100.0.4", 443, 6), meta(3)),
        ],
        "ch_rings": rings,
        "reals": [entry(u32(i), ip(a) + u32(0)) for i, a in enumerate(reals)],
        "ctl": [entry(u32(0), mac("02:00:00:00:03:01") + bytes(2) + ip("10.200.0.1") + bytes(4))],
    }
    tcp_flows = [tcp4(f"192.0.2.{10 + i}", "10.100.0.1", 30000 + 17 * i, 80) for i in range(6)]
    frames = tcp_flows + [
        tcp4("192.0.2.10", "10.100.0.1", 30000, 80, flags="A", size=300),  # same flow as the first: conn_table
        *(tcp4(f"192.0.2.{10 + i}", "10.100.0.1", 30000 + 17 * i, 80, flags="A") for i in range(1, 6)),
        *(udp4(f"198.51.100.{i + 1}", "10.100.0.2", 40000 + i, 53) for i in range(3)),  # VIP 1
        udp4("198.51.100.9", "10.100.0.3", 40009, 9999),  # any-port VIP 2
        udp4("198.51.100.9", "10.100.0.3", 40010, 1234, size=500),  # any-port VIP 2
        tcp4("192.0.2.50", "10.100.0.4", 31000, 443),  # VIP 3: ring names no backend: DROP
        tcp4("192.0.2.51", "10.100.0.1", 31001, 81),  # VIP address, other port: PASS
        udp4("192.0.2.52", "10.100.0.1", 31002, 80),  # VIP address and port, other protocol: PASS
        udp4("192.0.2.53", "10.100.0.9", 31003, 80),  # not a VIP: PASS
        icmp4("192.0.2.54", "10.100.0.1"),  # ICMP: PASS
        tcp6("fd00::1", "fd10::1", 1005, 80),  # IPv6: PASS
        arp(),  # PASS
        ip4_options("192.0.2.55", "10.100.0.2", 1007, 53),  # IP options: DROP
        fragment("192.0.2.56", "10.100.0.2", 1008, 53),  # fragment: DROP
    ]
    return frames, cfg


def g_sized_counter() -> tuple[list[bytes], Config]:
    # 24 IPv4 sources for a map of 16: the last 8 overflow; every third frame repeats an earlier source
    frames = []
    for i in range(24):
        src = f"198.51.100.{10 + i}"
        frames.append(udp4(src, "10.0.0.1", 1000 + i, 53, size=64 + 2 * i) if i % 2 else
                      tcp4(src, "10.0.0.1", 2000 + i, 80))
        if i % 3 == 2:
            frames.append(udp4(f"198.51.100.{10 + i // 2}", "10.0.0.1", 3000 + i, 53, size=100))
    frames += [udp6("2001:db8::1", "2001:db8::2", 1, 2), arp()]
    return frames, {}


def g_flow_meter() -> tuple[list[bytes], Config]:
    # ports 53 and 123 stay under the 2000-byte budget, 5000 and 6000 pass it half way
    frames = []
    for i in range(12):
        for port, size in ((53, 80), (123, 100), (5000, 200 + 20 * i), (6000, 600))[: 2 + i % 3]:
            frames.append(udp4(f"192.0.2.{20 + i}", "10.0.0.9", 4000 + i, port, size=size))
    frames += [tcp4("192.0.2.1", "10.0.0.9", 1, 53), udp6("2001:db8::1", "2001:db8::2", 1, 53)]
    return frames, {}


def g_bytes_swap() -> tuple[list[bytes], Config]:
    # UDP is sent back unless to port 9; VLAN-tagged frames put the IP header at 18; the IPv6 frames cut to 60 and
    # 61 bytes (as a snap length leaves them) are too short for the 62 bytes of headers: -EINVAL, counted
    frames = []
    for i in range(4):
        frames.append(udp4(f"192.0.2.{i + 1}", "10.0.0.9", 5000 + i, 9 if i == 3 else 7000 + i, size=64 + 16 * i))
        frames.append(udp6(f"2001:db8::{i + 1}", "2001:db8::99", 5000 + i, 9 if i == 2 else 53, size=86 + 8 * i))
    frames.append(frame(eth() / Dot1Q(vlan=10) / ip4("192.0.2.7", "10.0.0.9") / UDP(sport=1, dport=53), 70, 3))
    frames.append(frame(eth() / Dot1Q(vlan=11) / IPv6(src="2001:db8::7", dst="2001:db8::99", hlim=64) /
                        UDP(sport=1, dport=9), 90, 4))
    frames.append(frame(eth() / Dot1Q(vlan=12) / IPv6(src="2001:db8::8", dst="2001:db8::99", hlim=64) /
                        UDP(sport=1, dport=53), 90, 5)[:64])
    frames += [udp6("2001:db8::5", "2001:db8::99", 9000, 53)[:n] for n in (60, 61, 62)]
    frames += [tcp4("192.0.2.1", "10.0.0.9", 1, 80), tcp6("2001:db8::1", "2001:db8::99", 1, 80), arp()]
    return frames, {}


def g_pktcap() -> tuple[list[bytes], Config]:
    # frames shorter and longer than the 96 captured bytes, up to a full Ethernet frame
    frames = [udp4("192.0.2.1", "10.0.0.1", 1000 + i, 53, size=size) for i, size in
              enumerate((60, 64, 95, 96, 97, 128, 512, 1514))]
    frames += [tcp4("192.0.2.2", "10.0.0.1", 2000, 80, size=200), icmp4("192.0.2.3", "10.0.0.1"),
               udp6("2001:db8::1", "2001:db8::2", 1, 2), arp()]
    return frames, {}


def g_flowevents() -> tuple[list[bytes], Config]:
    # 10 new flows for a table of 8 (the last 2 are discarded), repeats, then FIN and RST end flows and make room
    frames = [udp4(f"198.51.100.{i + 1}", "10.0.0.1", 4000 + i, 53) if i % 2 else
              tcp4(f"198.51.100.{i + 1}", "10.0.0.1", 4000 + i, 80) for i in range(10)]
    frames += [udp4("198.51.100.2", "10.0.0.1", 4001, 53, size=300), tcp4("198.51.100.1", "10.0.0.1", 4000, 80,
               flags="A", size=400)]
    frames += [tcp4("198.51.100.1", "10.0.0.1", 4000, 80, flags="FA"), tcp4("198.51.100.3", "10.0.0.1", 4002, 80,
               flags="R"), tcp4("198.51.100.5", "10.0.0.1", 4004, 80, flags="A")]
    frames += [tcp4("198.51.100.9", "10.0.0.1", 4008, 80), udp4("198.51.100.11", "10.0.0.1", 4010, 53),
               tcp4("198.51.100.12", "10.0.0.1", 4011, 80, flags="R"), icmp4("198.51.100.1", "10.0.0.1"), arp(),
               udp6("2001:db8::1", "2001:db8::2", 1, 2)]
    return frames, {}
def prog_entry(key: bytes, prog: str) -> dict[str, str]:
    """A PROG_ARRAY entry set from the host: the program of the object it names (bpftool's `value pinned PROG`)."""
    return {"key": key.hex(), "prog": prog}


def g_tail_parse() -> tuple[list[bytes], Config]:
    cfg = {"stages": [prog_entry(u32(0), "parse_ipv4"), prog_entry(u32(1), "parse_ipv6"),
                      prog_entry(u32(8 + 6), "parse_tcp"), prog_entry(u32(8 + 17), "parse_udp")]}
    vlan = [frame(eth() / Dot1Q(vlan=100 + i) / ip4("10.0.0.5", "10.0.1.5") / l4, 64 + 8 * i)
            for i, l4 in enumerate((UDP(sport=1003, dport=53), UDP(sport=1004, dport=9), TCP(sport=1005, dport=23),
                                    TCP(sport=1006, dport=80, flags="S")))]
    vlan.append(frame(eth() / Dot1Q(vlan=7) / IPv6(src="fd00::7", dst="fd00::8", hlim=64) / UDP(sport=1, dport=9), 90))
    frames = [
        udp4("10.0.0.1", "10.0.1.1", 1000, 2000),
        udp4("10.0.0.2", "10.0.1.2", 1001, 9, size=200),  # discard port: DROP
        tcp4("10.0.0.3", "10.0.1.3", 1002, 80),
        tcp4("10.0.0.3", "10.0.1.3", 1002, 23),  # telnet: DROP
        ip4_options("10.0.0.7", "10.0.1.7", 1007, 9),  # options: the UDP header after them, DROP
        icmp4("10.0.0.4", "10.0.1.4"),  # ICMP: empty entry 9, falls through
        udp6("fd00::1", "fd00::2", 1005, 2005),
        udp6("fd00::1", "fd00::2", 1005, 9),
        tcp6("fd00::3", "fd00::4", 1006, 23),
        tcp6("fd00::3", "fd00::4", 1006, 443),
        icmp6("fd00::5", "fd00::6"),  # ICMPv6 (8 + 58): past max_entries, falls through
        arp(),  # no L3 stage: empty entry, falls through
        *vlan,
    ]
    return frames, cfg


def g_tail_chain() -> tuple[list[bytes], Config]:
    # the source MAC's last byte runs up to the destination's: 1..40 runs asked, 34 at most
    frames = [frame(eth(src=f"02:00:00:00:00:{0x10:02x}", dst=f"02:00:00:00:00:{0x10 + d:02x}")
                    / ip4("10.0.0.1", "10.0.0.2") / UDP(sport=1000 + d, dport=2000), 64 + d)
              for d in (1, 2, 5, 16, 32, 33, 34, 35, 36, 40)]
    return frames, {"chain": [prog_entry(u32(0), "xdp_tail_chain")]}


# maps a program leaves unsized in its object (max_entries 0): the size its loader gives them
def _vip_key(addr: str, port: int, proto: int) -> bytes:
    return ip(addr) + struct.pack("!H", port) + bytes([proto, 0])


def g_map_in_map() -> tuple[list[bytes], Config]:
    """Two VIPs with backends (ARRAYs in the HASH_OF_MAPS, one with an empty backend: DROP), a VIP without (a
    miss: PASS); connections open and come back (the CPU's LRU in the ARRAY_OF_MAPS remembers their backend)."""
    cfg: Config = {
        "vip_web": [{"key": u32(i).hex(), "value": ip(f"172.16.0.{i + 1}").hex()} for i in range(4)],
        "vip_dns": [{"key": u32(i).hex(), "value": (bytes(4) if i == 1 else ip(f"172.16.1.{i + 1}")).hex()}
                    for i in range(4)],
    }
    frames = []
    for n in range(6):  # new connections to the web VIP, then the same ones again (reused)
        frames.append(tcp4(f"10.0.0.{n + 1}", "10.100.0.1", 40000 + n, 80))
    for n in range(6):
        frames.append(tcp4(f"10.0.0.{n + 1}", "10.100.0.1", 40000 + n, 80, flags="A"))
    for n in range(4):  # the DNS VIP: its backend 1 is empty (DROP)
        frames.append(udp4(f"10.0.1.{n + 1}", "10.100.0.2", 5000 + n, 53))
    frames.append(udp4("10.0.1.1", "10.100.0.2", 5000, 53))  # reused
    frames.append(tcp4("10.0.0.1", "10.100.0.9", 40000, 80))  # no such VIP: PASS
    frames.append(tcp4("10.0.0.1", "10.100.0.2", 40000, 80))  # the DNS VIP's address, other port: PASS
    frames.append(icmp4("10.0.0.1", "10.100.0.1"))  # not TCP/UDP: PASS
    return frames, cfg


SIZES: dict[str, dict[str, int]] = {"xdp_sized_counter": {"src_stats": 16}}
# the inner maps a program's loader creates in its maps of maps: {program: {outer map: {key hex: inner map}}}
INNER: dict[str, dict[str, dict[str, str]]] = {
    "xdp_map_in_map": {"vip_map": {_vip_key("10.100.0.1", 80, 6).hex(): "vip_web",
                                   _vip_key("10.100.0.2", 53, 17).hex(): "vip_dns"}},
}


def _balancer_inner() -> dict[str, dict[str, str]]:
    from balancer_traffic import INNER as inner

    return inner


def g_balancer() -> tuple[list[bytes], Config]:
    from balancer_traffic import g_balancer as gen  # a module of its own (it imports this one's builders)

    return gen()


PROGRAMS: dict[str, Callable[[], tuple[list[bytes], Config]]] = {
    "xdp_drop": g_plain,
    "xdp_tx": g_plain,
    "xdp_redirect": g_plain,
    "xdp1": g_plain,
    "xdp2": g_plain,
    "xdp_redirect_map": g_redirect_map,
    "xdp_adjust_tail": g_adjust_tail,
    "xdp_router_ipv4": g_router,
    "xdp_rxq_info": g_rxq_info,
    "xdp_redirect_cpu": g_redirect_cpu,
    "xdp_sock_steer": g_sock_steer,
    "xdp_flood": g_flood,
    "xdp_tx_iptunnel": g_iptunnel,
    "simple_firewall": g_firewall,
    "l4_load_balancer": g_load_balancer,
    **{f"map_access_k{n}": map_access(n) for n in (1, 2, 4, 8, 16)},
    **{f"csum_diff_x{n}": g_plain for n in (1, 10, 20, 40)},
    "xdp_sized_counter": g_sized_counter,
    "xdp_flow_meter": g_flow_meter,
    "xdp_bytes_swap": g_bytes_swap,
    "xdp_pktcap": g_pktcap,
    "xdp_flowevents": g_flowevents,
    "xdp_tail_parse": g_tail_parse,
    "xdp_tail_chain": g_tail_chain,
    "xdp_map_in_map": g_map_in_map,
    "xdp_balancer": g_balancer,
}


def outputs() -> dict[Path, bytes]:
    files: dict[Path, bytes] = {}
    for name, gen in PROGRAMS.items():
        frames, cfg = gen()
        for i, f in enumerate(frames):
            assert len(f) >= MIN_FRAME, f"{name}: frame {i} is {len(f)} bytes"
        files[HERE / "traffic" / f"{name}.pcap"] = pcap_bytes(frames)
        inner = INNER.get(name) or (_balancer_inner() if name == "xdp_balancer" else None)
        doc: dict = {"maps": cfg, **({"max_entries": SIZES[name]} if name in SIZES else {}),
                     **({"inner_maps": inner} if inner else {})}
        files[HERE / "maps" / f"{name}.json"] = (json.dumps(doc, indent=1) + "\n").encode()
    return files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    args = ap.parse_args()
    stale = []
    for path, data in outputs().items():
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(str(path.relative_to(HERE)))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
    if stale:
        print("stale (run python3 xdp_progs/gen_traffic.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
