"""`hxdp events`: the records programs send to the host (perf_event_output, ring buffer) as JSON lines or pcap."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hxdp.errors import HxdpError
from hxdp.events import Event, event_lines, read_event_lines, samples


def _board_events(args: argparse.Namespace) -> tuple[list[Event], int]:
    from hxdp.board.events import read_events
    from hxdp.board.original import require_ours
    from hxdp.board.tools import dump_imem, program_tag, recall_load, recalled_layout
    from hxdp.cli.board import board_from_args
    from hxdp.models.maps import MapLayout

    with board_from_args(args) as b:
        require_ours(b, "events (the event ring)")  # before the row count this needs too
        if args.layout:
            layout = MapLayout.load(args.layout)
        else:  # the maps of what this host loaded, if it did
            layout = recalled_layout(recall_load(b, program_tag(dump_imem(b))))
        return read_events(b, layout)


def _emit(events: list[Event], out: list[bytes]) -> None:
    sys.stdout.write(event_lines(events))
    sys.stdout.flush()
    out += samples(events)


def _cmd(args: argparse.Namespace) -> int:
    from hxdp.traffic.pcap import write_pcap

    if args.file is not None and args.board is not None:
        raise HxdpError("hxdp events: give an events file (hxdp run --events FILE) or --board BOARD, not both")
    captured: list[bytes] = []
    if args.file is not None:
        try:
            text = Path(args.file).read_text()
        except OSError as exc:
            raise HxdpError(f"{args.file}: cannot read the events ({exc.strerror})") from None
        _emit(read_event_lines(text, args.file), captured)
    else:
        last: int | None = None
        while True:
            events, dropped = _board_events(args)
            _emit(events, captured)
            lost = dropped if last is None else (dropped - last) & 0xFFFFFFFF
            if lost:
                print(f"hxdp events: {lost} records dropped (event ring full)", file=sys.stderr, flush=True)
            last = dropped
            if not args.follow:
                break
            try:
                time.sleep(args.interval)
            except KeyboardInterrupt:
                break
    if args.pcap:
        write_pcap(args.pcap, captured)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("events", description=__doc__,
                              help="print the perf and ring buffer records of a run or the board (JSON lines)")
    p.add_argument("file", nargs="?", help="events of a run (JSON lines written by hxdp run --events FILE)")
    p.add_argument("--board", "-b", metavar="BOARD", help="without a file: pop this board's event ring, "
                   "sume[:IFACE] or sim[:SOCKET] (default $HXDP_BOARD, else sume:nf0)")
    p.add_argument("--layout", help="map layout naming the board's maps (default: what this host loaded)")
    p.add_argument("--pcap", metavar="OUT", help="write the packet samples of perf records (BPF_F_CTXLEN) as pcap")
    p.add_argument("--follow", "-f", action="store_true", help="with --board: keep polling the ring")
    p.add_argument("--interval", type=float, default=0.2, help="seconds between polls with --follow")
    p.set_defaults(func=_cmd)
