"""A network namespace with the FIB shapes bpf_fib_lookup distinguishes, for the FIB tests (removed afterwards)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

# interface -> (IPv4 address/len, IPv6 address/len, MTU, forwarding on)
IFACES = {
    "fa0": ("10.0.0.1/24", "fd00:0::1/64", 1500, True),    # the ingress of the tests
    "fa1": ("10.1.0.1/24", "fd00:1::1/64", 1500, True),
    "fa2": ("10.2.0.1/24", "fd00:2::1/64", 1280, True),    # a small MTU: FRAG_NEEDED
    "fc0": ("10.9.0.1/24", "fd00:9::1/64", 1500, False),   # forwarding off: FWD_DISABLED
}
NEIGH_MAC = {"10.1.0.2": "02:00:00:00:01:02", "fd00:1::2": "02:00:00:00:01:02",
             "10.2.0.2": "02:00:00:00:02:02", "fd00:2::2": "02:00:00:00:02:02",
             "10.1.0.5": "02:00:00:00:01:05"}
NEIGH_DEV = {"10.1.0.2": "fa1", "fd00:1::2": "fa1", "10.2.0.2": "fa2", "fd00:2::2": "fa2", "10.1.0.5": "fa1"}
ROUTES = [
    "10.20.0.0/16 via 10.1.0.2",            # a gateway
    "10.30.0.0/16 via 10.2.0.2",            # a gateway behind the small MTU
    "10.40.0.0/16 via 10.1.0.9",            # a gateway with no neighbour: NO_NEIGH
    "10.50.0.0/16 via 10.1.0.2 mtu lock 1000",  # a locked route MTU
    "10.20.5.0/24 via 10.2.0.2 metric 7",   # a longer prefix inside 10.20/16, with a metric
    "10.71.0.0/16 encap seg6 mode encap segs fd00:1::2 dev fa1",  # an encapsulating route: UNSUPP_LWT
    "blackhole 10.66.0.0/16",
    "unreachable 10.67.0.0/16",
    "prohibit 10.68.0.0/16",
    "-6 fd20::/32 via fd00:1::2",
    "-6 fd30::/32 via fd00:2::2",
    "-6 fd40::/32 via fd00:1::9",
    "-6 fd71::/32 encap seg6 mode encap segs fd00:1::2 dev fa1",
    "-6 blackhole fd66::/32",
    "-6 unreachable fd67::/32",
    "-6 prohibit fd68::/32",
]


def _ip(ns: str, *args: str) -> None:
    subprocess.run(["ip", "-n", ns, *args], check=True, capture_output=True)


def _sysctl(ns: str, key: str, value: int) -> None:
    subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw", f"{key}={value}"], check=True, capture_output=True)


@contextmanager
def fib_namespace() -> Iterator[str]:
    """Create the namespace, yield its name, delete it (its veths go with it)."""
    ns = f"hxfib-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
    try:
        _sysctl(ns, "net.ipv4.ip_forward", 1)
        _sysctl(ns, "net.ipv6.conf.all.forwarding", 1)
        # no duplicate address detection: the link-local addresses and their local routes exist at once, not a
        # second later, so a FIB read right away stays what the kernel has for the whole test
        _sysctl(ns, "net.ipv6.conf.all.accept_dad", 0)
        _sysctl(ns, "net.ipv6.conf.default.accept_dad", 0)
        _ip(ns, "link", "set", "lo", "up")
        for k, (dev, (v4, v6, mtu, fwd)) in enumerate(IFACES.items()):
            peer = f"fp{k}"
            _ip(ns, "link", "add", dev, "address", f"02:00:00:00:{k:02x}:01", "type", "veth", "peer", "name", peer)
            _ip(ns, "link", "set", dev, "mtu", str(mtu))
            _ip(ns, "link", "set", peer, "mtu", str(mtu))
            _ip(ns, "link", "set", dev, "up")
            _ip(ns, "link", "set", peer, "up")
            _ip(ns, "addr", "add", v4, "dev", dev)
            _ip(ns, "-6", "addr", "add", v6, "dev", dev, "nodad")
            if not fwd:
                _sysctl(ns, f"net.ipv4.conf.{dev}.forwarding", 0)
                _sysctl(ns, f"net.ipv6.conf.{dev}.forwarding", 0)
        for addr, mac in NEIGH_MAC.items():
            _ip(ns, *(["-6"] if ":" in addr else []), "neigh", "replace", addr, "lladdr", mac, "dev", NEIGH_DEV[addr],
                "nud", "permanent")
        for r in ROUTES:
            six = r.startswith("-6 ")
            _ip(ns, *(["-6"] if six else []), "route", "add", *r.removeprefix("-6 ").split())
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
