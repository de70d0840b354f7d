"""bpf_fib_lookup on the FIB image in map memory: the kernel's XDP semantics, the written fields and the cycles.

The helper's steps follow net/core/filter.c (bpf_xdp_fib_lookup, bpf_ipv4_fib_lookup, bpf_ipv6_fib_lookup) for a
namespace without policy-routing rules; the cycle count follows the helper's walk of the image, the one of
sephirot_fib.v (docs/helpers.md, "fib_lookup").
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from hxdp import params
from hxdp.fib.table import (
    AF_INET,
    AF_INET6,
    IFACE_FWD4,
    IFACE_FWD6,
    RANK_V4_MAIN,
    RANK_V6_LOCAL,
    RANK_V6_MAIN,
    ROUTE_LWT,
    RTN_IDS,
)

PARAMS_BYTES = 64  # sizeof(struct bpf_fib_lookup)
PARAMS_READ_WORDS = 6  # bytes 0..47 (family .. ipv6_dst) come in through the helper's 8-byte memory port
FIB_LOOKUP_DIRECT, FIB_LOOKUP_OUTPUT, FIB_LOOKUP_SKIP_NEIGH = 1, 2, 4
FIB_LOOKUP_TBID, FIB_LOOKUP_SRC, FIB_LOOKUP_MARK = 8, 16, 32
FIB_LOOKUP_MASK = 0x3F  # the flags Linux 6.18 knows; others: -EINVAL
RET = {"SUCCESS": 0, "BLACKHOLE": 1, "UNREACHABLE": 2, "PROHIBIT": 3, "NOT_FWDED": 4, "FWD_DISABLED": 5,
       "UNSUPP_LWT": 6, "NO_NEIGH": 7, "FRAG_NEEDED": 8}
EINVAL, ENODEV, EAFNOSUPPORT = 22, 19, 97
# a winning route of these types ends the lookup with this code (the kernel's fib_props errors for IPv4, the
# switch on fib6_type for IPv6); every other non-unicast type: NOT_FWDED
ERROR_TYPES = {RTN_IDS["blackhole"]: RET["BLACKHOLE"], RTN_IDS["unreachable"]: RET["UNREACHABLE"],
               RTN_IDS["prohibit"]: RET["PROHIBIT"]}
V4_BLACKHOLE_TYPES = {RTN_IDS["nat"], RTN_IDS["xresolve"]}  # -EINVAL in fib_props: BLACKHOLE as well
# IPv4 types whose alias ends the trie walk before the nexthop (oif) checks
V4_ERROR_TYPES = set(ERROR_TYPES) | V4_BLACKHOLE_TYPES | {RTN_IDS["throw"]}
UNICAST = RTN_IDS["unicast"]


class FibFault(Exception):
    """A fib_lookup the hardware does not do (flags TBID with DIRECT, SRC): a helper fault."""


@dataclass
class FibOutcome:
    ret: int  # r0 (a BPF_FIB_LKUP_RET_* code, or a negative errno as u64)
    # (offset in the struct, bytes): the write steps of the helper, at most 8 bytes each, one a cycle
    writes: list[tuple[int, bytes]] = field(default_factory=list)
    cycles: int = 0  # extra cycles of the call

    def write(self, off: int, data: bytes) -> None:
        self.writes.append((off, data))
        self.cycles += 1


def _u32(mem: bytes, off: int) -> int:
    return int.from_bytes(mem[off : off + 4], "little")


def _prefix_match(a: bytes, b: bytes, bits: int) -> bool:
    whole, rest = divmod(bits, 8)
    if a[:whole] != b[:whole]:
        return False
    return rest == 0 or (a[whole] ^ b[whole]) >> (8 - rest) == 0


def _v6_strict(addr: bytes) -> bool:
    """rt6_need_strict: multicast, link-local unicast or loopback (never forwarded)."""
    return addr[0] == 0xFF or (addr[0] == 0xFE and addr[1] & 0xC0 == 0x80) or addr == bytes(15) + b"\x01"


def _scan_cycles(n: int, per_window: int) -> int:
    """Map windows a scan of n entries reads (at least one: the helper reads a window even of an empty list)."""
    return max(1, -(-n // per_window))


class FibImage:
    """The FIB sections of a map memory (read on every call, as the hardware reads them)."""

    def __init__(self, mem: bytes | bytearray) -> None:
        base = params.FIB_OFFSET
        self.mem = mem
        magic, ni, nr, nn = struct.unpack_from("<4I", mem, base)
        if magic != params.FIB_MAGIC:
            ni = nr = nn = 0  # no FIB loaded: no interface, every lookup of an ifindex is -ENODEV
        # counts past the capacity read as the capacity (a corrupted header never walks out of the region)
        self.n_ifaces = min(ni, params.FIB_IFACES_MAX)
        self.n_routes = min(nr, params.FIB_ROUTES_MAX)
        self.n_neigh = min(nn, params.FIB_NEIGH_MAX)

    def iface(self, ifindex: int) -> tuple[int, int, bytes, int] | None:
        """(mtu, mtu6, mac, flags) of the first interface with this ifindex."""
        for k in range(self.n_ifaces):
            off = params.FIB_OFFSET + params.FIB_IFACES_AT + k * params.FIB_IFACE_BYTES
            idx, mtu, mtu6, mac, flags = struct.unpack_from("<IHH6sB", self.mem, off)
            if idx == ifindex and idx != 0:
                return mtu, mtu6, mac, flags
        return None

    def route(self, k: int) -> tuple[int, int, int, int, int, int, int, int, int, bytes]:
        off = params.FIB_OFFSET + params.FIB_ROUTES_AT + k * params.FIB_ROUTE_BYTES
        return struct.unpack_from("<BBBBBBHII16s", self.mem, off)

    def gateway(self, k: int) -> bytes:
        off = params.FIB_OFFSET + params.FIB_GWS_AT + k * params.FIB_GW_BYTES
        return bytes(self.mem[off : off + 16])

    def neigh(self, ifindex: int, family: int, addr: bytes) -> bytes | None:
        for k in range(self.n_neigh):
            off = params.FIB_OFFSET + params.FIB_NEIGH_AT + k * params.FIB_NEIGH_BYTES
            idx, fam, a, mac = struct.unpack_from("<IB3x16s6s", self.mem, off)
            if idx == ifindex and fam == family and a == addr:
                return mac
        return None


def fib_lookup(mem: bytes | bytearray, read: Callable[[], bytes], plen: int, flags: int) -> FibOutcome:
    """One call: `mem` the map memory, `read()` the first 48 bytes of struct bpf_fib_lookup (family .. ipv6_dst,
    read only when plen and flags pass)."""
    plen &= 0xFFFFFFFF
    plen_s = plen - (1 << 32) if plen & 0x80000000 else plen
    if plen_s < PARAMS_BYTES or flags & ~FIB_LOOKUP_MASK:
        return FibOutcome((-EINVAL) & (2**64 - 1), cycles=1)
    if flags & FIB_LOOKUP_SRC or (flags & FIB_LOOKUP_DIRECT and flags & FIB_LOOKUP_TBID):
        raise FibFault("fib_lookup: flags BPF_FIB_LOOKUP_SRC and DIRECT|TBID are not supported by the hardware FIB")
    p = read()
    img = FibImage(mem)
    family, ifindex = p[0], _u32(p, 8)
    src, dst = p[16:32], p[32:48]
    cycles = PARAMS_READ_WORDS + 1 + _scan_cycles(img.n_ifaces, 2)  # params, the header, the ingress scan
    out = FibOutcome(0, cycles=cycles)
    if family not in (AF_INET, AF_INET6):
        out.ret = (-EAFNOSUPPORT) & (2**64 - 1)
        return out
    v6 = family == AF_INET6
    if v6 and (_v6_strict(dst) or _v6_strict(src)):
        out.ret = RET["NOT_FWDED"]
        return out
    ingress = img.iface(ifindex)
    if ingress is None:
        out.ret = (-ENODEV) & (2**64 - 1)
        return out
    if not ingress[3] & (IFACE_FWD6 if v6 else IFACE_FWD4):
        out.ret = RET["FWD_DISABLED"]
        return out
    # the route scan, one route a cycle: the image lists them best first (Fib.image: rank, then the longest
    # prefix, then the metric), so the first that matches is the answer and ends the scan
    oif = ifindex if flags & FIB_LOOKUP_OUTPUT else 0
    ranks = ((RANK_V6_MAIN,) if flags & FIB_LOOKUP_DIRECT else (RANK_V6_LOCAL, RANK_V6_MAIN)) if v6 \
        else (RANK_V4_MAIN,)
    best: int | None = None
    for k in range(img.n_routes):
        rfam, plen_r, rtype, rank, _gwf, _rfl, _mtu, roif, _metric, rdst = img.route(k)
        if rfam != family or rank not in ranks or plen_r > (128 if v6 else 32):
            continue
        if not _prefix_match(rdst, dst if v6 else dst[:4] + bytes(12), plen_r):
            continue
        # IPv4 (fib_table_lookup): an alias with a nexthop on another device than the OUTPUT oif is passed over
        if not v6 and oif and rtype not in V4_ERROR_TYPES and roif != oif:
            continue
        best = k
        break
    out.cycles += best + 1 if best is not None else _scan_cycles(img.n_routes, 1)
    if best is None:
        out.ret = RET["NOT_FWDED"]
        return out
    k = best
    _rfam, _pl, rtype, _rank, gw_family, rflags, rmtu, roif, metric, _rdst = img.route(k)
    if rtype != UNICAST:
        code = ERROR_TYPES.get(rtype, RET["NOT_FWDED"])
        if not v6 and rtype in V4_BLACKHOLE_TYPES:
            code = RET["BLACKHOLE"]
        out.ret = code
        return out
    # the gateway and the egress interface
    out.cycles += 1 + _scan_cycles(img.n_ifaces, 2)
    egress = img.iface(roif)
    if egress is None:
        out.ret = RET["NOT_FWDED"]  # a route through a device the FIB does not list: never synced so
        return out
    mtu = rmtu or (egress[1] if v6 else egress[0])
    tot_len = int.from_bytes(p[6:8], "little")
    if tot_len > mtu:
        out.ret = RET["FRAG_NEEDED"]
        out.write(6, mtu.to_bytes(2, "little"))  # mtu_result
        return out
    if rflags & ROUTE_LWT:
        out.ret = RET["UNSUPP_LWT"]
        return out
    nh_family, nh = (AF_INET6 if v6 else AF_INET), (dst if v6 else dst[:4] + bytes(12))
    gw = img.gateway(k)
    skip = bool(flags & FIB_LOOKUP_SKIP_NEIGH)
    mac = None
    if gw_family == AF_INET and not v6:
        nh = gw[:4] + bytes(12)
    elif gw_family == AF_INET6:
        nh_family, nh = AF_INET6, gw
    if not skip:
        out.cycles += _scan_cycles(img.n_neigh, 1)
        mac = img.neigh(roif, nh_family, nh)
    ok = skip or mac is not None
    # the write steps, in the helper's order (sephirot_fib.v): W0 family, W1 mtu_result, W2 ifindex and
    # rt_metric, W3 W4 the gateway, W5 the VLAN fields and smac[0..3], W6 smac[4..5] and dmac
    if not v6 and gw_family == AF_INET6:
        out.write(0, bytes([AF_INET6]))
    if ok:
        out.write(6, mtu.to_bytes(2, "little"))
    out.write(8, struct.pack("<II", roif, metric))
    if gw_family == AF_INET6:
        out.write(32, gw[:8])
        out.write(40, gw[8:16])
    elif gw_family == AF_INET and not v6:
        out.write(32, gw[:4])
    if ok:
        out.write(48, bytes(4) + (b"" if skip else egress[2][:4]))
        if not skip:
            out.write(56, egress[2][4:6] + mac)
    out.ret = RET["SUCCESS"] if ok else RET["NO_NEIGH"]
    return out
