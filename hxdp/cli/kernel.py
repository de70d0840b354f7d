"""`hxdp kernel-run`: run a pcap through an XDP object in the running kernel (BPF_PROG_TEST_RUN) and report actions."""

from __future__ import annotations

import argparse
import json
import struct
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from hxdp import params
from hxdp.cli.loading import add_map_option, inner_from_cfg, sizes_from_args
from hxdp.errors import HxdpError, PcapError


def _read_pcap(path: str) -> list[bytes]:
    try:
        from hxdp.traffic.pcap import read_pcap  # the frontend's reader when present
    except ImportError:
        return _read_pcap_local(path)
    return list(read_pcap(path))


def _read_pcap_local(path: str) -> list[bytes]:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise PcapError(f"{path}: {exc.strerror}") from None
    if len(data) < 24:
        raise PcapError(f"{path}: not a pcap file (shorter than its 24-byte header)")
    magic = data[:4]
    endian = {b"\xd4\xc3\xb2\xa1": "<", b"\xa1\xb2\xc3\xd4": ">", b"\x4d\x3c\xb2\xa1": "<", b"\xa1\xb2\x3c\x4d": ">"}
    if magic not in endian:
        raise PcapError(f"{path}: not a classic pcap file (magic {magic.hex()})")
    e = endian[magic]
    out, pos = [], 24
    while pos < len(data):
        if pos + 16 > len(data):
            raise PcapError(f"{path}: truncated record header at byte {pos}")
        _, _, incl, _ = struct.unpack(e + "4I", data[pos : pos + 16])
        if pos + 16 + incl > len(data):
            raise PcapError(f"{path}: truncated packet {len(out)} at byte {pos}")
        out.append(data[pos + 16 : pos + 16 + incl])
        pos += 16 + incl
    return out


def _write_pcap(path: str, packets: list[bytes]) -> None:
    try:
        from hxdp.traffic.pcap import write_pcap
    except ImportError:
        from hxdp.atomic_write import write_atomic

        body = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
        for i, p in enumerate(packets):
            body.append(struct.pack("<4I", i, 0, len(p), len(p)) + p)
        write_atomic(path, b"".join(body))
        return
    write_pcap(path, packets)


def _progress(items: list[bytes], desc: str, long: bool) -> Iterable[bytes]:
    """A progress bar on stderr for long work when stderr is a terminal; the items unchanged otherwise."""
    if not long or not sys.stderr.isatty():
        return items
    from rich.console import Console
    from rich.progress import track

    return track(items, description=desc, transient=True, console=Console(stderr=True))


def dump_json(dump: dict[str, dict[bytes, bytes]]) -> dict[str, list[dict[str, str]]]:
    """Map contents as JSON-ready data, in the initial-configuration format (hex keys and values)."""
    return {name: [{"key": k.hex(), "value": v.hex()} for k, v in entries.items()] for name, entries in dump.items()}


def _fib_target(args: argparse.Namespace) -> tuple[str | None, int]:
    """The namespace to run in (--fib: the one its FIB came from) and the ingress ifindex (--ingress DEV)."""
    from hxdp.fib.table import Fib

    fib = Fib.load(args.fib) if args.fib else None
    if args.ingress and fib is None:
        raise HxdpError("--ingress DEV names an interface of the FIB: give --fib FIB.json")
    ifindex = fib.iface(args.ingress).ifindex if fib is not None and args.ingress else args.ifindex
    return (fib.netns if fib is not None else None), ifindex


def _run(args: argparse.Namespace) -> int:
    from hxdp.atomic_write import check_writable
    from hxdp.linux.kernel import KernelProgram
    from hxdp.models.mapconfig import load_map_config

    if args.out:
        check_writable(args.out, "output pcap")
    if args.events:
        check_writable(args.events, "events")
    packets = _read_pcap(args.pcap)
    if not packets:
        raise PcapError(f"{args.pcap}: no packets")
    results = []
    cfg = load_map_config(args.maps) if args.maps else None
    sizes = sizes_from_args(args, cfg, args.maps)
    inner = inner_from_cfg(cfg, args.maps)
    if args.loader == "hxdp":
        from hxdp.frontend.elf import load_program

        kp = KernelProgram.from_program(load_program(args.obj, section=args.section, prog=args.prog, sizes=sizes,
                                                     inner=inner))
    else:
        kp = KernelProgram(args.obj, section=args.section, prog=args.prog, sizes=sizes, inner=inner)
    from hxdp.fib.netns import netns

    fib_ns, ifindex = _fib_target(args)
    with kp, netns(fib_ns):
        if cfg is not None:
            kp.apply_config(cfg, source=args.maps)
        for p in _progress(packets, "kernel-run", len(packets) >= 5000):
            results.append(kp.run(p, ingress_ifindex=ifindex, rx_queue_index=args.rxq))
        maps = kp.dump() if args.dump_maps else None
        timings = ([kp.timing(p, args.time, ifindex, args.rxq) for p in _progress(packets, "timing", True)]
                   if args.time else [])
    counts = Counter(params.ACTION_NAMES.get(r.action, f"ABORTED({r.action})") for r in results)
    if args.out:
        _write_pcap(args.out, [r.packet for r in results if r.action in (params.XDP_TX, params.XDP_REDIRECT)])
    if args.events:
        from hxdp.atomic_write import write_atomic
        from hxdp.events import event_lines, run_events

        write_atomic(args.events, event_lines(run_events(results)))
    if args.json:
        doc: dict = {
            "object": str(args.obj),
            "packets": [
                {
                    "index": i,
                    "action": r.action,
                    "action_name": params.ACTION_NAMES.get(r.action, "ABORTED"),
                    "len": len(r.packet),
                    "out": r.packet.hex(),
                    **({"meta": r.meta.hex()} if r.meta else {}),
                }
                for i, r in enumerate(results)
            ],
            "counts": dict(sorted(counts.items())),
        }
        if maps is not None:
            doc["maps"] = dump_json(maps)
        if timings:
            doc["timing"] = [{"kernel_ns": t.kernel_ns, "wall_ns": round(t.wall_ns, 3)} for t in timings]
        print(json.dumps(doc, indent=1))
        return 0
    for i, r in enumerate(results):
        name = params.ACTION_NAMES.get(r.action, f"ABORTED({r.action})")
        changed = "" if r.packet == packets[i] else f"  (out {len(r.packet)} bytes, modified)"
        print(f"{i:6d} {name}{changed}")
    print("summary: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f" ({len(results)} packets)")
    if timings:
        kns = sorted(t.kernel_ns for t in timings)
        wns = sorted(t.wall_ns for t in timings)
        print(
            f"timing ({args.time} repeats per packet, fresh program copy): kernel median {kns[len(kns) // 2]} ns, "
            f"wall clock median {wns[len(wns) // 2]:.2f} ns/packet"
        )
    if maps is not None:
        print(json.dumps({"maps": dump_json(maps)}, indent=1))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "kernel-run",
        help="run a pcap through an XDP object in the running kernel (BPF_PROG_TEST_RUN)",
        description=__doc__,
    )
    p.add_argument("obj", help="clang-compiled XDP object (.o)")
    p.add_argument("--pcap", required=True, help="input packets")
    p.add_argument("--section", help="program section when the object has several programs")
    p.add_argument("--prog", help="program (function) name when the object has several programs")
    p.add_argument("--maps", help='initial map configuration (JSON: {"maps": {name: [{key, value}]}})')
    add_map_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON document (actions, output bytes, maps)")
    p.add_argument("--out", help="write the transmitted/redirected frames (TX, REDIRECT) to this pcap")
    p.add_argument("--dump-maps", action="store_true", help="print the map contents after the run (hex JSON)")
    p.add_argument("--events", metavar="FILE", help="write the records of the kernel's perf and ring buffers as JSON "
                   "lines (perf samples as the kernel pads them)")
    p.add_argument("--ifindex", type=int, default=1, help="ingress ifindex in xdp_md (must exist; default 1 = lo)")
    p.add_argument("--rxq", type=int, default=0, help="rx_queue_index in xdp_md (default 0)")
    p.add_argument("--fib", help="run in the network namespace this FIB (`hxdp fib sync`) was read from")
    p.add_argument("--ingress", metavar="DEV", help="ingress interface of the FIB (sets --ifindex)")
    p.add_argument(
        "--time",
        type=int,
        metavar="REPEAT",
        help="also time every packet with REPEAT runs on a fresh copy (kernel average and wall clock ns/packet)",
    )
    p.add_argument(
        "--loader",
        choices=("libbpf", "hxdp"),
        default="libbpf",
        help="open the object with libbpf (default) or with hxdp's ELF loader (legacy `maps` sections)",
    )
    p.set_defaults(func=_run)


__all__ = ["register", "dump_json", "HxdpError"]
