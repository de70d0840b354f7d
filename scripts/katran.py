#!/usr/bin/env python3
"""Build upstream Katran's balancer from a checkout the user gives, and write a VIP's map configuration and traffic.

    python3 scripts/katran.py build KATRAN_SRC -o out/katran          # out/katran/balancer.bpf.o
    python3 scripts/katran.py config --vip 10.100.0.1:80:tcp --real 172.16.0.1 --real 172.16.0.2 \
        --gw-mac 02:00:00:00:03:01 -o out/katran/config.json         # vip_map, reals, ch_rings, ctl_array, sizes
    python3 scripts/katran.py traffic --vip 10.100.0.1:80:tcp -o out/katran/traffic.pcap

hxdp.eval.katran says what each part holds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hxdp.errors import HxdpError  # noqa: E402
from hxdp.eval import katran  # noqa: E402
from hxdp.traffic.pcap import write_pcap  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build balancer.bpf.o from a katran checkout")
    b.add_argument("src", type=Path, help="a clone of github.com/facebookincubator/katran")
    b.add_argument("-o", "--out", type=Path, default=Path("out/katran"))
    b.add_argument("-D", dest="defines", action="append", default=[], help="an extra define (as katran's -d)")
    c = sub.add_parser("config", help="write the map configuration of VIPs and their reals")
    c.add_argument("--vip", action="append", required=True, help="ADDRESS:PORT:tcp|udp (repeatable)")
    c.add_argument("--real", action="append", required=True, help="a real's address, IPv4 or IPv6 (repeatable)")
    c.add_argument("--gw-mac", default="02:00:00:00:03:01", help="the default gateway's MAC (ctl_array[0])")
    c.add_argument("--ring-size", type=int, default=katran.RING_SIZE)
    c.add_argument("--lru-size", type=int, default=katran.DEFAULT_LRU_SIZE, help="KatranLb's LruSize (all cores)")
    c.add_argument("--cores", type=int, default=1, help="forwarding cores (one LRU each)")
    c.add_argument("-o", "--out", type=Path, required=True)
    t = sub.add_parser("traffic", help="write a pcap of new, reused and missed flows to the VIPs")
    t.add_argument("--vip", action="append", required=True, help="ADDRESS:PORT:tcp|udp (repeatable)")
    t.add_argument("--flows", type=int, default=8, help="connections opened per VIP")
    t.add_argument("-o", "--out", type=Path, required=True)
    args = ap.parse_args()
    try:
        return _run(args)
    except HxdpError as exc:
        print(f"katran: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    if args.cmd == "build":
        print(katran.build(args.src, args.out, args.defines))
        return 0
    if args.cmd == "traffic":
        write_pcap(args.out, [f for _, f in katran.traffic(args.vip, args.flows)])
        print(args.out)
        return 0
    doc = katran.config(args.vip, args.real, args.gw_mac, args.ring_size, args.lru_size, args.cores)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
