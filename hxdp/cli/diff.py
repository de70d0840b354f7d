"""`hxdp diff`: compile a program, run it on an engine and in the kernel, and report the first divergence."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from hxdp.cli.loading import add_chain_options, add_map_option, chain_from_args, sizes_from_args, tiers_from_args
from hxdp.diff import ENGINES, DiffReport, run_diff
from hxdp.diffcores import cores_refusal, run_diff_cores
from hxdp.errors import HxdpError
from hxdp.mapdump import SkipBytes

PROGRESS_MIN_PACKETS = 200  # a progress bar on stderr (terminals only) from this many packets


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diff", help="differential test of an engine against Linux XDP on a pcap",
                       description=__doc__)
    p.add_argument("obj", help="clang-compiled XDP object (.o)")
    p.add_argument("--pcap", required=True, help="input packets")
    p.add_argument("--maps", help="initial map configuration (JSON)")
    add_map_option(p, tiers=True)
    p.add_argument("--engine", choices=ENGINES, default="vliw-model", help="engine compared with the kernel "
                   "(default vliw-model)")
    p.add_argument("--cores", type=int, default=1, metavar="N",
                   help="run N cores of the VLIW model or the RTL (1-8, docs/execution_contract.md section 8): each "
                        "packet runs "
                        "in the kernel on the CPU of the core the dispatcher gave it, per-CPU maps compared core by "
                        "core, the maps once at the end; no reproducer folder (default 1)")
    p.add_argument("--section", help="ELF section of the program (default: the only one)")
    p.add_argument("--prog", help="function name of the program")
    add_chain_options(p)
    p.add_argument("--ingress-ifindex", type=int, default=1, help="ingress ifindex in xdp_md (default 1)")
    p.add_argument("--fib", help="FIB of bpf_fib_lookup (`hxdp fib sync` writes it); the kernel runs in its namespace")
    p.add_argument("--ingress", metavar="DEV", help="ingress interface of the FIB (sets --ingress-ifindex)")
    p.add_argument("--skip-bytes", action="append", default=[], metavar=SkipBytes.SHAPE,
                   help="leave value bytes OFFSET..OFFSET+SIZE of map MAP (at key KEYHEX, or every key) out of the map "
                        "comparison: for host-dependent data such as a stored bpf_ktime_get_ns (repeatable)")
    p.add_argument("--maps-at-end", action="store_true",
                   help="compare the maps once after the whole trace, the kernel running the packets back to back "
                        "(for a program that reads the time; the RTL always compares at the end)")
    p.add_argument("--repro", default="hxdp-repro", help="folder for a reproducer on divergence")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from hxdp.fib.table import Fib
    from hxdp.models.maps import load_map_config
    from hxdp.traffic.pcap import check_frame_sizes, read_pcap

    cfg = load_map_config(args.maps) if args.maps else None
    try:
        skip = [SkipBytes.parse(t) for t in args.skip_bytes]
    except ValueError as exc:
        raise HxdpError(f"--skip-bytes {exc}") from None
    fib = Fib.load(args.fib) if args.fib else None
    ingress_ifindex = args.ingress_ifindex
    if args.ingress:
        if fib is None:
            raise HxdpError("--ingress DEV names an interface of the FIB: give --fib FIB.json")
        ingress_ifindex = fib.iface(args.ingress).ifindex
    if args.repro and Path(args.repro).exists() and not Path(args.repro).is_dir():
        raise HxdpError(f"--repro {args.repro}: exists and is not a folder")
    if args.repro:
        for name, given in (("packet.pcap", args.pcap), ("maps.json", args.maps)):
            out = Path(args.repro) / name
            if given and out.exists() and os.path.samefile(out, given):
                raise HxdpError(f"--repro {args.repro}: its {name} would replace the input {given} (choose "
                                "another folder)")
    packets = read_pcap(args.pcap)
    check_frame_sizes(packets, args.pcap)
    if not packets:
        raise HxdpError(f"{args.pcap}: no packets (nothing to compare)")
    progress = None
    if sys.stderr.isatty() and len(packets) >= PROGRESS_MIN_PACKETS:
        from rich.console import Console
        from rich.progress import track

        def progress(indices: Iterable[int]) -> Iterable[int]:
            return track(indices, total=len(packets), description=f"diff {args.engine}", transient=True,
                         console=Console(stderr=True))
    sizes = sizes_from_args(args, tiers=True)
    tiers = tiers_from_args(args)  # the command line's over the configuration's "tier" (run_diff reads it there)
    if tiers:
        cfg = {**(cfg or {"maps": {}}), "tier": {**(cfg or {}).get("tier", {}), **tiers}}
    chain = chain_from_args(args)
    refusal = cores_refusal(args.engine, args.cores, chain, fib)
    if refusal is not None:
        raise HxdpError(refusal)
    if args.cores != 1:
        report = run_diff_cores(args.obj, packets, cfg, args.cores, section=args.section, prog=args.prog,
                                ingress_ifindex=ingress_ifindex, cfg_source=args.maps, sizes=sizes, skip=skip,
                                engine=args.engine)
        return _print(args, report)
    report = run_diff(args.obj, packets, cfg, engine=args.engine, section=args.section, prog=args.prog,
                      ingress_ifindex=ingress_ifindex, repro_dir=args.repro, cfg_source=args.maps,
                      progress=progress, sizes=sizes, chain=chain, fib=fib, skip=skip,
                      maps_at_end=args.maps_at_end)
    return _print(args, report)


def _print(args: argparse.Namespace, report: DiffReport) -> int:
    engine = args.engine if args.cores == 1 else f"{args.engine} on {args.cores} cores"
    if args.json:
        json.dump(report.to_json(), sys.stdout, indent=1, default=str)
        print()
    elif report.ok:
        counts = ", ".join(f"{k}: {v}" for k, v in sorted(report.actions.items()))
        events = f", {report.events} events to the host" if report.events else ""
        print(f"{args.obj}: {report.packets} packets identical to the kernel on {engine} "
              f"(actions {counts}{events})")
    else:
        assert report.divergence is not None
        print(report.divergence.render())
        if report.repro:
            print(f"reproducer written to {report.repro}/")
        if report.repro_error:
            print(f"hxdp diff: reproducer not written: {report.repro_error}", file=sys.stderr)
    return 0 if report.ok else 1
