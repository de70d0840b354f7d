"""`hxdp traffic`: write synthetic pcaps like the evaluation traces, or summarise any pcap (--info)."""

from __future__ import annotations

import argparse
import json

from hxdp.errors import HxdpError
from hxdp.traffic.gen import (
    DEFAULT_GAP,
    DEFAULT_START,
    PROTO_CHOICES,
    format_summary,
    generate,
    summarise,
    summary_json,
    timestamps,
)
from hxdp.traffic.pcap import read_pcap_file, write_pcap


def run(args: argparse.Namespace) -> int:
    if args.info:
        docs = []
        for name in [args.info, *([args.out] if args.out else [])]:
            pf = read_pcap_file(name)
            if args.json:
                docs.append(summary_json(name, pf, summarise(pf)))
            else:
                print("\n".join(format_summary(name, pf, summarise(pf))))
        if args.json:
            print(json.dumps(docs[0] if len(docs) == 1 else docs, indent=1))
        return 0
    if not args.out:
        raise HxdpError("give an output file OUT.pcap (or --info IN.pcap)")
    packets = generate(args.flows, args.count, args.size, args.proto, args.seed)
    write_pcap(args.out, packets, timestamps(len(packets), args.start, args.gap), nanosecond=args.nanosecond)
    flows = min(args.flows, args.count)
    if args.json:
        print(json.dumps({"file": args.out, "packets": len(packets), "flows": flows, "size": args.size,
                          "proto": args.proto, "seed": args.seed}))
    else:
        print(f"{args.out}: {len(packets)} packets, {flows} flows, {args.size} bytes, {args.proto}, seed {args.seed}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("traffic", help="generate pcaps (flows, sizes, protocols) or summarise one (--info)",
                              description=__doc__)
    p.add_argument("out", nargs="?", metavar="OUT.pcap", help="pcap file to write")
    p.add_argument("--flows", type=int, default=1, help="number of distinct flows (default 1)")
    p.add_argument("--count", type=int, default=1, help="number of packets (default 1)")
    p.add_argument("--size", type=int, default=64,
                   help="frame length in bytes as captured, without FCS (default 64, like the reference traces)")
    p.add_argument("--proto", choices=PROTO_CHOICES, default="udp", help="protocol (mix cycles over all; default udp)")
    p.add_argument("--seed", type=int, default=0, help="random seed: the same seed writes the same file")
    p.add_argument("--start", type=float, default=DEFAULT_START, help="timestamp of the first packet (s)")
    p.add_argument("--gap", type=float, default=DEFAULT_GAP, help="seconds between packets")
    p.add_argument("--nanosecond", action="store_true", help="write a nanosecond-resolution pcap")
    p.add_argument("--info", metavar="IN.pcap", help="summarise a pcap instead of writing one")
    p.add_argument("--json", action="store_true", help="print the summary (or what was written) as JSON")
    p.set_defaults(func=run)
