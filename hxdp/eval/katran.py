"""Upstream Katran's balancer: built from a checkout the user gives, a VIP's map configuration, and its traffic.

Nothing is fetched: the source is a clone of github.com/facebookincubator/katran. The object is built as katran's own
katran/lib/Makefile-bpf builds it (clang -O2 -emit-llvm | llc -march=bpf, its defines), so the program is the one
katran loads. The configuration holds what katran's control plane (KatranLb) writes for a VIP: its vip_map entry,
the reals (ids from 1), the VIP's consistent-hash ring of RING_SIZE slots (Maglev) and the gateway MAC in ctl_array;
and it sizes the per-CPU connection tables as KatranLb does (LruSize / forwarding cores, one LRU per core in
lru_mapping). scripts/katran.py is the command line.
"""

from __future__ import annotations

import ipaddress
import shutil
import struct
import subprocess
from pathlib import Path

from hxdp.errors import HxdpError
from hxdp.traffic import maglev

BALANCER = Path("katran/lib/bpf/balancer.bpf.c")
RING_SIZE = 65537  # katran/lib/bpf/balancer_consts.h
DEFAULT_LRU_SIZE = 8_000_000  # katran/lib/KatranLbStructs.h kDefaultLruSize
F_IPV6 = 1  # real_definition.flags
PROTOS = {"tcp": 6, "udp": 17}
# katran/lib/Makefile-bpf
CFLAGS = ["-DDEBUG", "-D__KERNEL__", "-Wno-unused-value", "-Wno-pointer-sign", "-Wno-compare-distinct-pointer-types",
          "-O2", "-emit-llvm", "-c", "-g"]


class KatranError(HxdpError):
    """Katran's sources, tools or configuration are not what the build or the configuration needs."""


def build(src: Path, out: Path, defines: list[str]) -> Path:
    """Compile KATRAN_SRC's balancer into out/balancer.bpf.o, as katran's Makefile-bpf does."""
    if not (src / BALANCER).is_file():
        raise KatranError(f"{src}: no {BALANCER} (give a clone of github.com/facebookincubator/katran)")
    for tool in ("clang", "llc"):
        if not shutil.which(tool):
            raise KatranError(f"{tool} is not installed (scripts/setup.sh installs it)")
    out.mkdir(parents=True, exist_ok=True)
    obj = out / "balancer.bpf.o"
    incs = [f"-I{src}", f"-I{src / 'katran/lib/linux_includes'}", f"-I{src / 'katran/lib'}"]
    clang = subprocess.run(["clang", *incs, *CFLAGS, *(f"-D{d}" for d in defines), str(src / BALANCER), "-o", "-"],
                           capture_output=True)
    if clang.returncode:
        raise KatranError(f"clang failed on {src / BALANCER}: {clang.stderr.decode(errors='replace').strip()[-500:]}")
    tmp = obj.with_suffix(".o.tmp")
    llc = subprocess.run(["llc", "-march=bpf", "-filetype=obj", "-o", str(tmp)], input=clang.stdout,
                         capture_output=True)
    if llc.returncode:
        tmp.unlink(missing_ok=True)
        raise KatranError(f"llc failed: {llc.stderr.decode(errors='replace').strip()[-500:]}")
    tmp.replace(obj)
    return obj


def addr16(a: str) -> bytes:
    ip = ipaddress.ip_address(a)
    return ip.packed if ip.version == 6 else ip.packed + bytes(12)


def parse_vip(text: str) -> tuple[str, int, int]:
    try:
        addr, port, proto = text.rsplit(":", 2)
        ipaddress.ip_address(addr.strip("[]"))
        return addr.strip("[]"), int(port), PROTOS[proto.lower()]
    except (ValueError, KeyError):
        raise KatranError(f"--vip {text}: expected ADDRESS:PORT:tcp|udp (IPv6 as [ADDRESS]:PORT:PROTO)") from None


def entry(key: bytes, value: bytes) -> dict[str, str]:
    return {"key": key.hex(), "value": value.hex()}


def config(vips: list[str], reals: list[str], gw_mac: str, ring_size: int, lru_size: int, cores: int) -> dict:
    """The map configuration KatranLb would write for these VIPs, all served by the same reals."""
    if not reals:
        raise KatranError("at least one --real is needed")
    real_ids = list(range(1, len(reals) + 1))  # real ids start at 1: 0 in a ring slot means "no real"
    ring = maglev.table(real_ids, ring_size)
    cfg: dict[str, list[dict[str, str]]] = {"vip_map": [], "reals": [], "ch_rings": [], "ctl_array": []}
    for num, text in enumerate(vips):
        addr, port, proto = parse_vip(text)
        key = addr16(addr) + struct.pack("!H", port) + bytes([proto, 0])
        cfg["vip_map"].append(entry(key, struct.pack("<II", 0, num)))
        cfg["ch_rings"] += [entry(struct.pack("<I", num * ring_size + s), struct.pack("<I", r))
                            for s, r in enumerate(ring)]
    for rid, a in zip(real_ids, reals, strict=True):
        flags = F_IPV6 if ipaddress.ip_address(a).version == 6 else 0
        cfg["reals"].append(entry(struct.pack("<I", rid), addr16(a) + bytes([flags]) + bytes(3)))
    mac = bytes.fromhex(gw_mac.replace(":", ""))
    if len(mac) != 6:
        raise KatranError(f"--gw-mac {gw_mac}: not a MAC address")
    cfg["ctl_array"].append(entry(struct.pack("<I", 0), mac + bytes(2)))
    # KatranLb::attachLrus: lru_mapping[core] = a fresh LRU_HASH of LruSize / cores entries for every forwarding core
    lrus = {struct.pack("<I", core).hex(): f"katran_lru{core}" for core in range(cores)}
    return {"maps": cfg, "inner_maps": {"lru_mapping": lrus},
            "max_entries": {name: lru_size // cores for name in lrus.values()}}


MAX_VIPS = 512  # balancer_consts.h
NEW_CONN_RATE_CNTR = 2
CLIENT_MAC, NIC_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"


def skip_bytes(cores: int = 1) -> list[str]:
    """The map value bytes that hold the time (bpf_ktime_get_ns), left out of a comparison with the kernel: the
    new-connection rate's quantum start (stats[MAX_VIPS + NEW_CONN_RATE_CNTR].v2) and a UDP flow's last use in the
    connection tables (real_pos_lru.atime, bytes 8..16)."""
    rate_key = struct.pack("<I", MAX_VIPS + NEW_CONN_RATE_CNTR).hex()
    return [f"stats:8:8:{rate_key}", *(f"katran_lru{c}:8:8" for c in range(cores))]


def _frame(src: str, dst: str, l4: object, size: int = 64, **ip: object) -> bytes:
    from scapy.layers.inet import IP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    pkt = Ether(src=CLIENT_MAC, dst=NIC_MAC) / IP(src=src, dst=dst, ttl=64, **ip) / l4  # type: ignore[operator]
    raw = bytes(pkt)
    return raw if len(raw) >= size else bytes(pkt / Raw(bytes(size - len(raw))))


def path_frames(vip: str, path: str, n: int, net: int = 2) -> list[bytes]:
    """n frames of one Katran path to the VIP, each its own flow (client 192.0.NET.x): "new" opens a connection
    (SYN), "reuse" comes back on one ("new" frames first fill the LRU), "lru-miss" is an established flow the LRU
    does not know, "reset" a RST of a new flow, "miss" goes to the VIP's address on another port (PASS)."""
    from scapy.layers.inet import TCP, UDP

    addr, port, proto = parse_vip(vip)
    if ":" in addr:
        raise KatranError(f"--vip {vip}: traffic is IPv4 only")
    flags = {"new": "S", "reuse": "A", "lru-miss": "A", "reset": "R", "miss": "S"}.get(path)
    if flags is None:
        raise KatranError(f"unknown Katran path {path!r}")
    out = []
    for i in range(n):
        base = {"lru-miss": 20000, "reset": 25000, "miss": 35000}.get(path, 30000)
        src, sport = f"192.0.{net}.{10 + i % 200}", base + 17 * i
        dport = port + 1 if path == "miss" else port
        if proto == 6 or path == "miss":
            l4: object = TCP(sport=sport, dport=dport, flags=flags, seq=1000, window=8192)
        else:
            l4 = UDP(sport=sport, dport=dport)
        out.append(_frame(src, addr, l4, 200 if path == "reuse" else 64))
    return out


def traffic(vips: list[str], flows: int = 8) -> list[tuple[str, bytes]]:
    """(path, frame) pairs for the given VIPs: new connections (SYN: the ring, then the LRU), the same connections
    again (the LRU), an unknown established flow (an LRU miss: the ring), a reset (no LRU update), UDP flows
    opened and reused, and the misses katran passes or drops (another address or port, ARP, IP options, a
    fragment). Every frame 64 bytes or more (the NIC drops runts)."""
    from scapy.layers.inet import TCP, IPOption_NOP
    from scapy.layers.l2 import ARP, Ether
    from scapy.packet import Raw

    out: list[tuple[str, bytes]] = []
    for v, text in enumerate(vips):
        tcp = parse_vip(text)[2] == 6
        for path in ("new", "reuse", *(("lru-miss", "reset") if tcp else ()), "miss"):
            out += [(path, f) for f in path_frames(text, path, flows if path in ("new", "reuse") else 1, 2 + v)]
    first = parse_vip(vips[0])[0]
    arp = Ether(src=CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc="10.0.0.1", pdst="10.0.0.2")
    out += [
        ("miss", _frame("192.0.2.251", "10.255.0.1", TCP(sport=2, dport=80))),
        ("miss", bytes(arp / Raw(bytes(64 - len(bytes(arp)))))),
        ("drop", _frame("192.0.2.252", first, TCP(sport=3, dport=80), options=[IPOption_NOP()] * 4)),
        ("drop", _frame("192.0.2.253", first, TCP(sport=4), flags="MF")),
    ]
    return out
