"""`hxdp baseline`: Linux XDP numbers on this machine (test run, live frames and native XDP through veth)."""

from __future__ import annotations

import argparse
import sys

from hxdp.atomic_write import check_writable, write_atomic
from hxdp.linux.baseline import MODE_TITLES, Options, format_table, run_baseline, to_json


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "baseline",
        help="Linux XDP baseline: BPF_PROG_TEST_RUN ns/packet and native XDP on veth (Mpps)",
        description="Measure an XDP object in the running kernel: (1) BPF_PROG_TEST_RUN with the JIT, per distinct "
        "packet: the kernel's average of --repeat runs when the program leaves the frame as it was, else the "
        "kernel's figure of --test-runs calls of one frame each, less the timer's own cost; (2) live frames through "
        "the veth driver (frames the program rewrites are left out: live frames do not restore them); (3) the "
        "program attached in native mode to a veth fed by an injector that writes each frame's original bytes. "
        "Each figure names the action (path) it measured, checked against one test run of the frame on freshly "
        "written maps, and the load average is recorded. The veth pairs live in a network namespace created for "
        "the run and removed on exit, Ctrl-C or SIGTERM. Medians of --runs runs.",
    )
    p.add_argument("object", metavar="PROG.o", help="BPF ELF object (clang -O2 -g -target bpf)")
    p.add_argument("--pcap", required=True, help="traffic (classic pcap, Ethernet)")
    p.add_argument("--section", help="ELF section of the program (default: the only one)")
    p.add_argument("--prog", help="function name of the program")
    p.add_argument("--maps", metavar="INIT.json", help="initial map configuration; devmap entries are pointed at "
                   "the veth the program receives on")
    p.add_argument("--repeat", type=int, default=1_000_000, help="frames per live-frames call (veth modes; default "
                   "1000000)")
    p.add_argument("--test-runs", type=int, default=20_000, help="test_run: calls of one frame each per run "
                   "(repeat > 1 would run the program again on the bytes it left; default 20000)")
    p.add_argument("--runs", type=int, default=5, help="runs per measurement, the median is reported (default 5)")
    p.add_argument("--max-packets", type=int, default=4, help="distinct packets of the pcap measured (default 4)")
    p.add_argument("--batch-size", type=int, default=64, help="live-frames batch size (default 64)")
    p.add_argument("--cpu", type=int, default=0, help="CPU to pin to, -1 for no pinning (default 0)")
    p.add_argument("--rate-from", choices=("cpu", "wall", "kernel"), default="cpu",
                   help="figure the Mpps come from: CPU time of the measuring thread (default; robust to other "
                   "load), wall clock, or the kernel's average")
    p.add_argument("--no-veth", action="store_true", help="only BPF_PROG_TEST_RUN, no namespace or veth")
    p.add_argument("--no-native", action="store_true", help="skip the attached (native XDP) measurement")
    p.add_argument("--sephirot-cycles", type=float, metavar="C",
                   help="Sephirot cycles/packet: adds Sephirot Mpps (156.25 / C) and the Sephirot/Linux ratio")
    p.add_argument("--json", metavar="OUT.json", help="write the results as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.sephirot_cycles is not None and args.sephirot_cycles <= 0:
        print("hxdp baseline: error: --sephirot-cycles must be positive", file=sys.stderr)
        return 2
    if args.json:
        check_writable(args.json, "JSON results")  # before minutes of measurement, not after
    opt = Options(repeat=args.repeat, test_runs=args.test_runs, runs=args.runs, max_packets=args.max_packets,
                  batch_size=args.batch_size,
                  veth=not args.no_veth, native=not args.no_native, cpu=None if args.cpu < 0 else args.cpu,
                  sephirot_cycles=args.sephirot_cycles, rate_from=args.rate_from)

    def say(msg: str) -> None:
        if not args.quiet:
            print(f"... {msg}", file=sys.stderr, flush=True)

    try:
        result = run_baseline(args.object, args.pcap, section=args.section, prog=args.prog, maps=args.maps,
                              options=opt, progress=say)
    except KeyboardInterrupt:
        print("hxdp baseline: interrupted (namespace and veths removed)", file=sys.stderr)
        return 130
    print(format_table([result]))
    for m in result.modes:
        for note in m.notes:
            print(f"note ({m.mode}): {note}")
    if not args.quiet:
        for mode, title in MODE_TITLES.items():
            print(f"  {mode}: {title}")
    if args.json:
        write_atomic(args.json, to_json([result]))
    return 0
