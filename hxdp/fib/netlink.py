"""Read a network namespace's interfaces, routes and neighbours through netlink (pyroute2) into a Fib."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

from hxdp.fib.netns import netns
from hxdp.fib.table import (
    AF_INET,
    AF_INET6,
    RANK_V4_MAIN,
    RANK_V6_LOCAL,
    RANK_V6_MAIN,
    ROUTE_LWT,
    RTN_NAMES,
    Fib,
    FibError,
    Iface,
    Neigh,
    Route,
    route_order,
)

RT_TABLE_DEFAULT, RT_TABLE_MAIN, RT_TABLE_LOCAL = 253, 254, 255
# the rules a namespace starts with (priority, table): with only these, a lookup needs no rule evaluation
DEFAULT_RULES = {AF_INET: {(0, RT_TABLE_LOCAL), (32766, RT_TABLE_MAIN), (32767, RT_TABLE_DEFAULT)},
                 AF_INET6: {(0, RT_TABLE_LOCAL), (32766, RT_TABLE_MAIN)}}
NUD_VALID = 0x80 | 0x40 | 0x02 | 0x10 | 0x04 | 0x08  # PERMANENT NOARP REACHABLE PROBE STALE DELAY
RTAX_LOCK, RTAX_MTU = 1, 2
# IPv6 multicast, link-local and loopback destinations (rt6_need_strict): never routed by bpf_fib_lookup
NEVER_LOOKED_UP = (ipaddress.ip_network("ff00::/8"), ipaddress.ip_network("fe80::/10"), ipaddress.ip_network("::1/128"))
IPV6_MIN_MTU = 1280


def _iproute() -> Any:
    try:
        from pyroute2 import IPRoute
    except ImportError:
        raise FibError("hxdp fib sync needs pyroute2 (pip install pyroute2; scripts/setup.sh installs it)") from None
    return IPRoute()


def _sysctl(path: str) -> int:
    return int(Path("/proc/sys/net", path).read_text().split()[0])


def _conf(family: str, dev: str, key: str) -> int:
    return _sysctl(f"{family}/conf/{dev.replace('.', '/')}/{key}")


def _ifaces(ipr: Any) -> list[Iface]:
    out = []
    for link in ipr.get_links():
        name = link.get_attr("IFLA_IFNAME")
        addr = link.get_attr("IFLA_ADDRESS") or ""
        mac = bytes(int(x, 16) for x in addr.split(":")) if addr else b""
        mtu = int(link.get_attr("IFLA_MTU") or 0)
        try:
            mtu6 = max(IPV6_MIN_MTU, _conf("ipv6", name, "mtu"))
            fwd6 = bool(_conf("ipv6", name, "forwarding"))
        except OSError:  # IPv6 disabled on the device
            mtu6, fwd6 = IPV6_MIN_MTU, False
        out.append(Iface(link["index"], name, mac if len(mac) == 6 else bytes(6), mtu, mtu6,
                         bool(_conf("ipv4", name, "forwarding")), fwd6))
    return out


def _check_rules(ipr: Any) -> None:
    for family in (AF_INET, AF_INET6):
        for rule in ipr.get_rules(family=family):
            prio = rule.get_attr("FRA_PRIORITY") or 0
            table = rule.get_attr("FRA_TABLE") or rule["table"]
            if (prio, table) not in DEFAULT_RULES[family]:
                raise FibError(f"policy routing rule {prio}: lookup table {table} (IPv{4 if family == AF_INET else 6})"
                               f" is not supported: the hardware FIB holds the tables a namespace without rules "
                               f"consults (local, main)")


def _route(msg: Any, family: int, use_pmtu: bool) -> Route | None:
    table = msg.get_attr("RTA_TABLE") or msg["table"]
    if family == AF_INET:
        if table == RT_TABLE_DEFAULT:
            raise FibError("IPv4 routes in table default are not supported (the hardware FIB holds local and main)")
        rank = RANK_V4_MAIN if table in (RT_TABLE_LOCAL, RT_TABLE_MAIN) else None
    else:
        rank = {RT_TABLE_LOCAL: RANK_V6_LOCAL, RT_TABLE_MAIN: RANK_V6_MAIN}.get(table)
    if rank is None:
        return None  # a table no lookup consults without policy rules
    plen = msg["dst_len"]
    if family == AF_INET6 and plen and any(ipaddress.ip_network(f"{msg.get_attr('RTA_DST')}/{plen}").subnet_of(n)
                                           for n in NEVER_LOOKED_UP):
        return None  # bpf_fib_lookup answers NOT_FWDED for these destinations before it looks for a route
    size = 4 if family == AF_INET else 16
    dst = ipaddress.ip_address(msg.get_attr("RTA_DST") or ("0.0.0.0" if family == AF_INET else "::")).packed
    where = f"route {ipaddress.ip_address(dst)}/{msg['dst_len']} ({RTN_NAMES.get(msg['type'], msg['type'])})"
    if msg.get_attr("RTA_MULTIPATH") is not None or msg.get_attr("RTA_NH_ID") is not None:
        raise FibError(f"{where}: multipath routes and nexthop objects are not supported by the hardware FIB")
    if msg["tos"]:
        raise FibError(f"{where}: routes selected by TOS are not supported by the hardware FIB")
    gw_family, gw = 0, b""
    if msg.get_attr("RTA_GATEWAY"):
        g = ipaddress.ip_address(msg.get_attr("RTA_GATEWAY"))
        gw_family, gw = (AF_INET if g.version == 4 else AF_INET6), g.packed
    elif msg.get_attr("RTA_VIA"):
        via = msg.get_attr("RTA_VIA")
        g = ipaddress.ip_address(via["addr"])
        gw_family, gw = (AF_INET if g.version == 4 else AF_INET6), g.packed
    mtu = 0
    metrics = msg.get_attr("RTA_METRICS")
    if metrics is not None:
        rmtu = metrics.get_attr("RTAX_MTU") or 0
        locked = (metrics.get_attr("RTAX_LOCK") or 0) & (1 << RTAX_MTU)
        if locked or (use_pmtu and family == AF_INET):
            mtu = rmtu
    flags = ROUTE_LWT if msg.get_attr("RTA_ENCAP") is not None else 0
    mask = ((1 << plen) - 1) << (8 * size - plen)  # host bits zero, as the kernel keeps them
    prefix = (int.from_bytes(dst, "big") & mask).to_bytes(size, "big")
    return Route(family, prefix.ljust(16, b"\0"), msg["dst_len"], msg["type"], rank, msg.get_attr("RTA_OIF") or 0,
                 msg.get_attr("RTA_PRIORITY") or 0, gw_family, gw.ljust(16, b"\0"), mtu, flags)


def _neighbours(ipr: Any) -> list[Neigh]:
    out = []
    for family in (AF_INET, AF_INET6):
        for n in ipr.get_neighbours(family=family):
            lladdr, dst = n.get_attr("NDA_LLADDR"), n.get_attr("NDA_DST")
            if not n["state"] & NUD_VALID or not lladdr or dst is None or ipaddress.ip_address(dst).is_multicast:
                continue  # (multicast destinations are never a nexthop)
            mac = bytes(int(x, 16) for x in lladdr.split(":"))
            if len(mac) == 6:
                out.append(Neigh(family, ipaddress.ip_address(dst).packed.ljust(16, b"\0"), n["ifindex"], mac))
    return out


def read_fib(ns: str | None) -> Fib:
    """The FIB of namespace `ns` (None: the current one) as bpf_fib_lookup sees it there."""
    with netns(ns):
        use_pmtu = bool(_sysctl("ipv4/ip_forward_use_pmtu"))
        with _iproute() as ipr:
            _check_rules(ipr)
            fib = Fib(ifaces=_ifaces(ipr), netns=ns)
            for family in (AF_INET, AF_INET6):
                for msg in ipr.get_routes(family=family):
                    r = _route(msg, family, use_pmtu)
                    if r is not None:
                        fib.routes.append(r)
            fib.neighbours = _neighbours(ipr)
    fib.routes.sort(key=route_order)  # (as the image lists them)
    fib.check()
    return fib
