"""The FIB of bpf_fib_lookup: interfaces, routes and neighbours, its JSON file and its image in map memory.

The JSON file (`hxdp fib sync` writes it, `--fib FIB.json` reads it) and the image's byte format are documented in
docs/maps.md, section "FIB". The image sits at params.FIB_OFFSET in map memory; hxdp.fib.lookup reads it there.
"""

from __future__ import annotations

import ipaddress
import json
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hxdp import params
from hxdp.errors import HxdpError

FIB_FORMAT, FIB_VERSION = "hxdp-fib", 1
AF_INET, AF_INET6 = 2, 10
# rtnetlink route types (linux/rtnetlink.h RTN_*)
RTN_NAMES = {1: "unicast", 2: "local", 3: "broadcast", 4: "anycast", 5: "multicast", 6: "blackhole",
             7: "unreachable", 8: "prohibit", 9: "throw", 10: "nat", 11: "xresolve"}
RTN_IDS = {name: num for num, name in RTN_NAMES.items()}
# route ranks: the tables a lookup consults, first rank first (docs/maps.md): IPv4's local and main tables are one
# trie while no policy rule was added; IPv6 looks in local, then main
RANK_V4_MAIN, RANK_V6_LOCAL, RANK_V6_MAIN = 0, 0, 1
ROUTE_LWT = 1  # route flags: the nexthop encapsulates (lightweight tunnel): UNSUPP_LWT
IFACE_FWD4, IFACE_FWD6 = 1, 2


class FibError(HxdpError):
    """A FIB file or namespace the hardware FIB cannot hold."""


def _mac(text: str, where: str) -> bytes:
    try:
        b = bytes(int(x, 16) for x in text.split(":"))
    except ValueError:
        b = b""
    if len(b) != 6:
        raise FibError(f"{where}: {text!r} is not a MAC address (aa:bb:cc:dd:ee:ff)")
    return b


def _mac_text(b: bytes) -> str:
    return ":".join(f"{x:02x}" for x in b)


@dataclass
class Iface:
    ifindex: int
    name: str
    mac: bytes
    mtu: int  # IPv4 MTU: the device's
    mtu6: int  # IPv6 MTU: max(1280, net.ipv6.conf.DEV.mtu)
    forwarding: bool  # net.ipv4.conf.DEV.forwarding
    forwarding6: bool  # net.ipv6.conf.DEV.forwarding


@dataclass
class Route:
    family: int
    dst: bytes  # 16 bytes (IPv4: the first 4, then zeros), host bits zero
    prefixlen: int
    type: int  # RTN_*
    rank: int
    oif: int = 0
    metric: int = 0  # the route's priority: what bpf_fib_lookup returns in rt_metric
    gw_family: int = 0  # 0 (no gateway), AF_INET or AF_INET6
    gw: bytes = bytes(16)
    mtu: int = 0  # a locked route MTU (mtu lock N), else 0: the egress device's MTU applies
    flags: int = 0  # ROUTE_LWT


def route_order(r: Route) -> tuple[int, int, int, int]:
    """The image lists routes best first: the helper's scan stops at the first that matches. A lower rank (a table
    consulted first), then a longer prefix, then a lower metric (the route the kernel prefers; the sort is stable)."""
    return (r.family, r.rank, -r.prefixlen, r.metric)


@dataclass
class Neigh:
    family: int
    addr: bytes  # 16 bytes (IPv4: the first 4)
    ifindex: int
    mac: bytes


@dataclass
class Fib:
    ifaces: list[Iface] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)
    neighbours: list[Neigh] = field(default_factory=list)
    netns: str | None = None  # the namespace it was read from (the kernel oracle runs there)

    def iface(self, name: str) -> Iface:
        for i in self.ifaces:
            if i.name == name:
                return i
        raise FibError(f"no interface {name!r} in the FIB (interfaces: {', '.join(i.name for i in self.ifaces)})")

    def check(self) -> None:
        for what, items, cap in (("interfaces", self.ifaces, params.FIB_IFACES_MAX),
                                 ("routes", self.routes, params.FIB_ROUTES_MAX),
                                 ("neighbours", self.neighbours, params.FIB_NEIGH_MAX)):
            if len(items) > cap:
                raise FibError(f"{len(items)} {what}: the hardware FIB holds {cap} (params.FIB_*_MAX)")

    # --- the image in map memory -----------------------------------------------------------------------------
    def image(self) -> bytes:
        """FIB_BYTES bytes, the format of docs/maps.md ("FIB")."""
        self.check()
        img = bytearray(params.FIB_BYTES)
        struct.pack_into("<4I", img, 0, params.FIB_MAGIC, len(self.ifaces), len(self.routes), len(self.neighbours))
        for k, i in enumerate(self.ifaces):
            flags = (IFACE_FWD4 if i.forwarding else 0) | (IFACE_FWD6 if i.forwarding6 else 0)
            struct.pack_into("<IHH6sBx", img, params.FIB_IFACES_AT + k * params.FIB_IFACE_BYTES, i.ifindex,
                             min(i.mtu, 0xFFFF), min(i.mtu6, 0xFFFF), i.mac, flags)
        for k, r in enumerate(sorted(self.routes, key=route_order)):
            struct.pack_into("<BBBBBBHII16s", img, params.FIB_ROUTES_AT + k * params.FIB_ROUTE_BYTES, r.family,
                             r.prefixlen, r.type, r.rank, r.gw_family, r.flags, min(r.mtu, 0xFFFF), r.oif,
                             r.metric & 0xFFFFFFFF, r.dst)
            struct.pack_into("16s", img, params.FIB_GWS_AT + k * params.FIB_GW_BYTES, r.gw)
        for k, n in enumerate(self.neighbours):
            struct.pack_into("<IB3x16s6s2x", img, params.FIB_NEIGH_AT + k * params.FIB_NEIGH_BYTES, n.ifindex,
                             n.family, n.addr, n.mac)
        return bytes(img)

    def install(self, mem: bytearray) -> None:
        """Write the image into a map memory (MapState.mem) at params.FIB_OFFSET."""
        mem[params.FIB_OFFSET : params.FIB_OFFSET + params.FIB_BYTES] = self.image()

    # --- the JSON file ---------------------------------------------------------------------------------------
    def to_json(self) -> str:
        def addr(family: int, b: bytes) -> str:
            return str(ipaddress.ip_address(b[:4] if family == AF_INET else b[:16]))

        doc: dict[str, Any] = {
            "format": FIB_FORMAT, "version": FIB_VERSION, "netns": self.netns,
            "interfaces": [{"ifindex": i.ifindex, "name": i.name, "mac": _mac_text(i.mac), "mtu": i.mtu,
                            "mtu6": i.mtu6, "forwarding": i.forwarding, "forwarding6": i.forwarding6}
                           for i in self.ifaces],
            "routes": [{"dst": f"{addr(r.family, r.dst)}/{r.prefixlen}", "type": RTN_NAMES.get(r.type, r.type),
                        "rank": r.rank, "oif": r.oif, "metric": r.metric,
                        "gateway": addr(r.gw_family, r.gw[: 4 if r.gw_family == AF_INET else 16])
                        if r.gw_family else None, "mtu": r.mtu, "lwt": bool(r.flags & ROUTE_LWT)}
                       for r in self.routes],
            "neighbours": [{"ip": addr(n.family, n.addr), "ifindex": n.ifindex, "mac": _mac_text(n.mac)}
                           for n in self.neighbours],
        }
        return json.dumps(doc, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "FIB") -> Fib:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FibError(f"{source}: not JSON: {exc}") from None
        if not isinstance(doc, dict) or doc.get("format") != FIB_FORMAT:
            raise FibError(f"{source}: not an hxdp FIB (no \"format\": \"{FIB_FORMAT}\"; `hxdp fib sync` writes one)")
        if doc.get("version") != FIB_VERSION:
            raise FibError(f"{source}: FIB version {doc.get('version')!r} is not {FIB_VERSION}")
        try:
            fib = cls(netns=doc.get("netns"))
            for k, i in enumerate(doc.get("interfaces", [])):
                fib.ifaces.append(Iface(int(i["ifindex"]), str(i["name"]), _mac(i["mac"], f"{source}: "
                                        f"interfaces[{k}]"), int(i["mtu"]), int(i["mtu6"]), bool(i["forwarding"]),
                                        bool(i["forwarding6"])))
            for k, r in enumerate(doc.get("routes", [])):
                fib.routes.append(_route_from_json(r, f"{source}: routes[{k}]"))
            for k, n in enumerate(doc.get("neighbours", [])):
                ip = ipaddress.ip_address(n["ip"])
                fib.neighbours.append(Neigh(AF_INET if ip.version == 4 else AF_INET6, ip.packed.ljust(16, b"\0"),
                                            int(n["ifindex"]), _mac(n["mac"], f"{source}: neighbours[{k}]")))
        except (KeyError, TypeError, ValueError) as exc:
            raise FibError(f"{source}: malformed FIB entry: {type(exc).__name__}: {exc}") from None
        fib.check()
        return fib

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Fib:
        try:
            text = Path(path).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise FibError(f"{path}: cannot read the FIB: {getattr(exc, 'strerror', None) or exc}") from None
        return cls.from_json(text, str(path))


def _route_from_json(r: dict[str, Any], where: str) -> Route:
    net = ipaddress.ip_network(r["dst"], strict=True)
    family = AF_INET if net.version == 4 else AF_INET6
    rtype = RTN_IDS.get(r["type"]) if isinstance(r["type"], str) else int(r["type"])
    if rtype is None:
        raise FibError(f"{where}: route type {r['type']!r} (types: {', '.join(RTN_IDS)})")
    gw_family, gw = 0, b""
    if r.get("gateway"):
        g = ipaddress.ip_address(r["gateway"])
        gw_family, gw = (AF_INET if g.version == 4 else AF_INET6), g.packed
    return Route(family, net.network_address.packed.ljust(16, b"\0"), net.prefixlen, rtype, int(r["rank"]),
                 int(r.get("oif", 0)), int(r.get("metric", 0)), gw_family, gw.ljust(16, b"\0"),
                 int(r.get("mtu", 0)), ROUTE_LWT if r.get("lwt") else 0)
