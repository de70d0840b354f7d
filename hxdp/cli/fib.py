"""`hxdp fib`: read a network namespace's FIB for bpf_fib_lookup (sync), show a FIB file, load it onto a board."""

from __future__ import annotations

import argparse
import ipaddress

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.fib.table import AF_INET, RTN_NAMES, Fib


def _to_board(fib: Fib, spec: str | None) -> int:
    """Write the FIB image into the board's map memory at params.FIB_OFFSET (input held); returns the lines."""
    from hxdp.board.original import require_ours
    from hxdp.board.tools import LINE, held, write_lines
    from hxdp.cli.board import board_from_args

    board = board_from_args(argparse.Namespace(board=spec))
    img = fib.image()
    first = params.FIB_OFFSET // LINE
    require_ours(board, "the FIB of bpf_fib_lookup")
    with held(board):
        write_lines(board, {first + i: img[i * LINE : (i + 1) * LINE] for i in range(len(img) // LINE)})
    return len(img) // LINE


def _sync(args: argparse.Namespace) -> int:
    from hxdp.atomic_write import write_atomic
    from hxdp.fib.netlink import read_fib

    if not args.output and not args.board:
        raise HxdpError("give -o FIB.json, --board BOARD or both (where the FIB goes)")
    fib = read_fib(args.netns)
    where = args.netns or "the current namespace"
    if args.output:
        write_atomic(args.output, fib.to_json())
        print(f"{where}: {len(fib.ifaces)} interfaces, {len(fib.routes)} routes, {len(fib.neighbours)} neighbours "
              f"-> {args.output}")
    if args.board:
        lines = _to_board(fib, args.board)
        print(f"{where}: FIB written to {args.board} ({lines} map lines at offset 0x{params.FIB_OFFSET:x})")
    return 0


def _addr(family: int, b: bytes) -> str:
    return str(ipaddress.ip_address(b[:4] if family == AF_INET else b[:16]))


def _show(args: argparse.Namespace) -> int:
    fib = Fib.load(args.fib)
    names = {i.ifindex: i.name for i in fib.ifaces}
    print(f"FIB of {fib.netns or '?'}")
    for i in fib.ifaces:
        fwd = ",".join(x for x, on in (("ipv4", i.forwarding), ("ipv6", i.forwarding6)) if on) or "off"
        print(f"  if {i.ifindex:3d} {i.name:<12} {':'.join(f'{x:02x}' for x in i.mac)} mtu {i.mtu}/{i.mtu6} "
              f"forwarding {fwd}")
    for r in fib.routes:
        via = f" via {_addr(r.gw_family, r.gw)}" if r.gw_family else ""
        dev = f" dev {names.get(r.oif, r.oif)}" if r.oif else ""
        mtu = f" mtu lock {r.mtu}" if r.mtu else ""
        print(f"  route {RTN_NAMES.get(r.type, r.type):<11} {_addr(r.family, r.dst)}/{r.prefixlen}{via}{dev} "
              f"metric {r.metric} rank {r.rank}{mtu}")
    for n in fib.neighbours:
        print(f"  neigh {_addr(n.family, n.addr)} dev {names.get(n.ifindex, n.ifindex)} "
              f"lladdr {':'.join(f'{x:02x}' for x in n.mac)}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fib", help="the FIB of bpf_fib_lookup: sync from a namespace, show, load onto a board",
                       description=__doc__)
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    s = verbs.add_parser("sync", help="read a namespace's interfaces, routes and neighbours (netlink)")
    s.add_argument("--netns", help="network namespace (`ip netns` name or /proc/PID/ns/net; default: this one)")
    s.add_argument("-o", "--output", help="write the FIB file (JSON) here")
    s.add_argument("--board", "-b", metavar="BOARD", help="also write it into this board's map memory "
                   "(sume[:IFACE] or sim[:SOCKET])")
    s.set_defaults(func=_sync)
    sh = verbs.add_parser("show", help="print a FIB file")
    sh.add_argument("fib", help="FIB file (JSON)")
    sh.set_defaults(func=_show)
