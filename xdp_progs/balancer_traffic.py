"""Traffic and map configuration of xdp_balancer (the Katran-shaped balancer): every path of the program."""

from __future__ import annotations

import struct

from gen_traffic import (
    Config,
    arp,
    entry,
    eth,
    fragment,
    frame,
    icmp4,
    ip,
    ip4,
    ip4_options,
    ip6,
    mac,
    tcp4,
    tcp6,
    u32,
    udp4,
    udp6,
)
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPerror, TCPerror
from scapy.layers.inet6 import ICMPv6EchoRequest, ICMPv6PacketTooBig, IPerror6, IPv6, IPv6ExtHdrFragment
from scapy.packet import Raw

from hxdp.traffic import maglev

RING_SIZE = 257  # xdp_balancer.c
F_LRU_BYPASS, F_QUIC_VIP, F_GUE, F_LOCAL, F_HASH_NO_SRC_PORT = 1, 2, 4, 8, 16
F_REAL_IPV6 = 1
TCP_, UDP_, ICMP_, ICMP6_ = 6, 17, 1, 58
LB_SRC4, LB_SRC6 = "10.200.0.1", "fc00:ff::1"
TPR_KIND = 0xB7

# (address, port, protocol) -> (vip number, flags, reals of its ring)
VIPS: list[tuple[str, int, int, int, int, list[int]]] = [
    ("10.100.0.1", 80, TCP_, 0, 0, [1, 2, 3]),
    ("10.100.0.2", 443, UDP_, 1, F_QUIC_VIP, [1, 2]),
    ("10.100.0.3", 8080, TCP_, 2, F_GUE, [2, 3]),
    ("10.100.0.4", 0, UDP_, 3, F_LRU_BYPASS, [1, 3]),
    ("fc00::1", 80, TCP_, 4, 0, [4, 5]),
    ("fc00::2", 0, UDP_, 5, F_HASH_NO_SRC_PORT, [4]),
    ("10.100.0.5", 80, TCP_, 6, 0, [4, 5]),
    ("10.100.0.6", 22, TCP_, 7, F_LOCAL, []),
    ("10.100.0.7", 80, TCP_, 8, 0, []),  # an uninitialised ring: DROP
    ("10.100.0.8", 80, TCP_, 9, 0, [7, 8]),  # real 7 is down for this VIP
    ("fc00::3", 80, TCP_, 10, 0, [4, 5]),  # real 4 is down for this VIP
    ("fc00::4", 80, TCP_, 11, F_GUE, [1, 2]),  # IPv6 in GUE to IPv4 reals
    ("fc00::5", 80, TCP_, 12, 0, [3]),  # IPv6 in IPv4
    ("fc00::6", 443, UDP_, 13, F_QUIC_VIP, [4]),
    ("10.100.0.9", 0, UDP_, 14, F_HASH_NO_SRC_PORT, [1, 2, 3]),
    ("10.100.0.1", 0, ICMP_, 0, 0, []),  # echo replies
    ("fc00::1", 0, ICMP6_, 4, 0, []),
]
REALS = {1: "172.16.0.1", 2: "172.16.0.2", 3: "172.16.0.3", 4: "fc00:1::4", 5: "fc00:1::5", 7: "172.16.0.7",
         8: "172.16.0.8"}
SERVER_IDS = {100: 2, 101: 3}
DOWN = {9: [7], 10: [4]}


def addr16(a: str) -> bytes:
    return ip6(a) if ":" in a else ip(a) + bytes(12)


def vip_key(a: str, port: int, proto: int) -> bytes:
    return addr16(a) + struct.pack("!H", port) + bytes([proto, 0])


def config() -> Config:
    rings = []
    for _, _, _, num, _, group in VIPS:
        if group and not any(e["key"] == u32(num * RING_SIZE).hex() for e in rings):
            rings += [entry(u32(num * RING_SIZE + s), u32(r)) for s, r in enumerate(maglev.table(group, RING_SIZE))]
    maps: Config = {
        "vip_map": [entry(vip_key(a, p, pr), u32(flags) + u32(num)) for a, p, pr, num, flags, _ in VIPS],
        "ch_rings": rings,
        "reals": [entry(u32(i), addr16(a) + bytes([F_REAL_IPV6 if ":" in a else 0]) + bytes(3))
                  for i, a in REALS.items()],
        "server_id_map": [entry(u32(s), u32(r)) for s, r in SERVER_IDS.items()],
        "ctl_array": [entry(u32(0), mac("02:00:00:00:03:01") + bytes(2) + ip(LB_SRC4) + ip6(LB_SRC6))],
    }
    for vip, reals in DOWN.items():
        maps[f"down_vip{vip}"] = [entry(u32(r), b"\1") for r in reals]
    return maps


# the inner maps the loader creates: the connection table of CPU 0 (the NIC's one core; the kernel runs on CPU 0
# too) and the set of down reals of each VIP that has one
INNER = {"lru_mapping": {u32(0).hex(): "lru_cpu0"}, "down_reals": {u32(vip).hex(): f"down_vip{vip}" for vip in DOWN}}


# eight options, the server id last: every turn of the option walk (NOP, MSS, NOP, window scale, SACK permitted,
# NOP, NOP, then the server id)
LONG_OPTIONS = [("NOP", None), ("MSS", 1460), ("NOP", None), ("WScale", 7), ("SAckOK", b""), ("NOP", None),
                ("NOP", None), (TPR_KIND, struct.pack("!I", 100))]


# eight options, none a NOP: the server id check at every turn (unknown kinds 30..34 of two bytes each)
DENSE_OPTIONS = [("MSS", 1460), ("WScale", 7), ("SAckOK", b""), *((30 + k, b"") for k in range(4)),
                 (TPR_KIND, struct.pack("!I", 101))]


def tcp_opts(src: str, dst: str, sport: int, dport: int, options: list, flags: str = "A") -> bytes:
    return frame(eth() / ip4(src, dst) / TCP(sport=sport, dport=dport, flags=flags, seq=1000, window=8192,
                                            options=options), 80, sport)


def tpr(sid: int) -> tuple[int, bytes]:
    return (TPR_KIND, struct.pack("!I", sid))


def quic(src: str, sport: int, header: bytes) -> bytes:
    return frame(eth() / ip4(src, "10.100.0.2") / UDP(sport=sport, dport=443) / Raw(header), 96, sport)


def quic_long(sid: int) -> bytes:
    return bytes([0xC0]) + struct.pack("!I", 1) + bytes([8]) + bytes([0x40 | sid >> 16, sid >> 8 & 0xFF, sid & 0xFF]) \
        + bytes(5)


def quic_short(sid: int) -> bytes:
    return bytes([0x40, 0x40 | sid >> 16, sid >> 8 & 0xFF, sid & 0xFF]) + bytes(8)


def frames() -> list[bytes]:
    clients = [f"192.0.2.{10 + i}" for i in range(6)]
    out = [tcp4(c, "10.100.0.1", 30000 + 17 * i, 80) for i, c in enumerate(clients)]  # new flows: ring, LRU
    out += [tcp4(c, "10.100.0.1", 30000 + 17 * i, 80, flags="A") for i, c in enumerate(clients)]  # LRU hits
    out += [
        tcp4("192.0.2.40", "10.100.0.1", 30500, 80, flags="A"),  # not in the LRU: ring, then LRU
        tcp4("192.0.2.41", "10.100.0.1", 30501, 80, flags="R"),  # reset: ring, no LRU update
        tcp_opts("192.0.2.42", "10.100.0.1", 30502, 80, [tpr(100)]),  # server id option: real 2
        tcp_opts("192.0.2.43", "10.100.0.1", 30503, 80, [tpr(102)]),  # unknown server id: ring
        tcp_opts("192.0.2.44", "10.100.0.1", 30504, 80, [("NOP", None), ("NOP", None), ("Timestamp", (1, 2)),
                                                          tpr(101)]),  # options walked: real 3
        tcp_opts("192.0.2.45", "10.100.0.1", 30505, 80, LONG_OPTIONS),  # the longest walk: eight options
        tcp_opts("192.0.2.48", "10.100.0.1", 30508, 80, DENSE_OPTIONS),
        frame(eth() / IPv6(src="fd00::21", dst="fc00::1", hlim=64)
              / TCP(sport=32021, dport=80, flags="A", options=DENSE_OPTIONS), 120),
        tcp_opts("192.0.2.46", "10.100.0.1", 30506, 80, [("MSS", 1460), (0x22, b"")]),  # a length under 2: stop
        tcp_opts("192.0.2.47", "10.100.0.1", 30507, 80, [("EOL", None)]),  # end of options
        frame(eth() / IPv6(src="fd00::13", dst="fc00::1", hlim=64)
              / TCP(sport=32003, dport=80, flags="A", options=LONG_OPTIONS), 120),  # the IPv6 walk
        *(tcp6(f"fd00::{0x40 + i:x}", "fc00::3", 32100 + 7 * i, 80) for i in range(6)),  # IPv6 down real: rehash
        frame(eth() / IPv6(src="fd00::14", dst="fc00::1", hlim=64)
              / TCP(sport=32004, dport=80, flags="A", options=[("MSS", 1460), (0x22, b"")]), 90),
        frame(eth() / IPv6(src="fd00::15", dst="fc00::1", hlim=64)
              / TCP(sport=32005, dport=80, flags="A", options=[(TPR_KIND, struct.pack("!I", 102))]), 90),
        frame(eth() / IPv6(src="fd00::16", dst="fc00::1", hlim=64) / TCP(sport=32006, dport=80, flags="A"), 90),
        frame(eth() / IPv6(src="fd00::17", dst="fc00::1", hlim=64) / TCP(sport=32007, dport=80, flags="R"), 90),
        *(frame(eth() / IPv6(src=f"fd00::{0x18 + i:x}", dst="fc00::6", hlim=64) / UDP(sport=32008 + i, dport=443)
                / Raw(h), 110) for i, h in enumerate((quic_long(101), quic_short(100), quic_short(500),
                                                       bytes([0xC0, 0, 0, 0, 1, 4]) + bytes(10)))),
        udp6("fd00::20", "fc00::99", 32020, 80),  # IPv6, not a VIP: PASS
        udp4("198.51.100.60", "10.100.0.9", 40060, 7000),  # hashing the destination port only
        quic("198.51.100.61", 40061, bytes([0xC0, 0, 0, 0, 1, 4]) + bytes(10)),  # a connection id under 8 bytes
        tcp6("fd00::50", "fc00::4", 32200, 80),  # IPv6 in GUE
        tcp6("fd00::51", "fc00::5", 32201, 80),  # IPv6 in IPv4
        quic("198.51.100.1", 40001, quic_long(101)),  # QUIC long header: real 3
        quic("198.51.100.2", 40002, quic_short(100)),  # QUIC short header: real 2
        quic("198.51.100.3", 40003, quic_short(500)),  # unknown server id: ring
        quic("198.51.100.3", 40003, quic_short(500)),  # the same flow: LRU
        tcp4("192.0.2.50", "10.100.0.3", 31000, 8080),  # GUE VIP
        tcp4("192.0.2.50", "10.100.0.3", 31000, 8080, flags="A", size=200),
        udp4("198.51.100.9", "10.100.0.4", 40009, 9999),  # any-port VIP without LRU
        udp4("198.51.100.9", "10.100.0.4", 40010, 1234, size=500),
        tcp6("fd00::10", "fc00::1", 32000, 80),  # IPv6 VIP, IPv6 reals
        frame(eth() / IPv6(src="fd00::10", dst="fc00::1", hlim=64) / TCP(sport=32000, dport=80, flags="A"), 90),
        udp6("fd00::11", "fc00::2", 32001, 5353),  # any-port IPv6 VIP hashing the destination port only
        udp6("fd00::12", "fc00::2", 32002, 5353),
        tcp4("192.0.2.60", "10.100.0.5", 33000, 80),  # IPv4 VIP, IPv6 reals: 4in6
        tcp4("192.0.2.61", "10.100.0.6", 33001, 22),  # local VIP: PASS
        tcp4("192.0.2.62", "10.100.0.7", 33002, 80),  # empty ring: DROP
        *(tcp4(f"192.0.2.{70 + i}", "10.100.0.8", 34000 + 7 * i, 80) for i in range(6)),  # down real: rehash
        icmp4("192.0.2.80", "10.100.0.1"),  # echo to a VIP: reply
        icmp4("192.0.2.81", "10.100.0.9"),  # echo elsewhere: PASS
        frame(eth() / ip4("192.0.2.90", "10.100.0.1") / ICMP(type=3, code=4, nexthopmtu=1400)
              / IPerror(src="10.100.0.1", dst="192.0.2.10", proto=6, ttl=63) / TCPerror(sport=80, dport=30000),
              98),  # too big, quoting the first flow: its real
        frame(eth() / IPv6(src="fd00::20", dst="fc00::1", hlim=64) / ICMPv6EchoRequest(id=7, seq=1), 70),
        frame(eth() / IPv6(src="fd00::21", dst="fc00::1", hlim=64) / ICMPv6PacketTooBig(mtu=1280)
              / IPerror6(src="fc00::1", dst="fd00::10", nh=6) / TCPerror(sport=80, dport=32000), 118),
        udp4("192.0.2.91", "10.100.0.99", 35000, 80),  # not a VIP: PASS
        arp(),  # PASS
        ip4_options("192.0.2.92", "10.100.0.2", 1007, 443),  # IP options: DROP
        fragment("192.0.2.93", "10.100.0.2", 1008, 443),  # fragment: DROP
        frame(eth() / IPv6(src="fd00::22", dst="fc00::2", hlim=64) / IPv6ExtHdrFragment() / UDP(dport=53), 90),
        frame(eth() / ip4("10.50.0.1", LB_SRC4, proto=4) / ip4("192.0.2.100", "10.100.0.1")
              / TCP(sport=36000, dport=80, flags="S"), 84),  # IPIP to the balancer: decapsulated, balanced
        frame(eth() / ip4("10.50.0.2", LB_SRC4) / UDP(sport=50000, dport=6080) / ip4("198.51.100.50", "10.100.0.4")
              / UDP(sport=36001, dport=7000), 90),  # GUE to the balancer
        frame(eth() / IPv6(src="fd50::1", dst=LB_SRC6, nh=41, hlim=64) / IPv6(src="fd00::30", dst="fc00::1", hlim=64)
              / TCP(sport=36002, dport=80, flags="S"), 134),  # IPv6 in IPv6 to the balancer
        frame(eth() / IP(src="10.50.0.3", dst="10.50.0.4", proto=4, ttl=64, id=1) / ip4("192.0.2.101", "10.100.0.1")
              / TCP(sport=36003, dport=80, flags="S"), 84),  # IPIP elsewhere: PASS
        tcp4("192.0.2.10", "10.100.0.1", 30000, 80, flags="A", size=1514),  # a full-size frame of a known flow
    ]
    return out


def g_balancer() -> tuple[list[bytes], Config]:
    return frames(), config()
