"""`hxdp exec`: run a raw eBPF program (hex text) on a memory buffer, like uBPF's test runner; prints r0."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from hxdp.raw import ENGINES, ExecError, parse_program_hex, run_raw


def _cmd(args: argparse.Namespace) -> int:
    if args.file in (None, "-"):
        text, source = sys.stdin.read(), "<stdin>"
    else:
        try:
            data, source = Path(args.file).read_bytes(), args.file
        except OSError as exc:
            raise ExecError(f"{args.file}: cannot read: {exc.strerror}") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ExecError(f"{args.file}: not a hex program text (binary data at byte {exc.start})") from None
    insns = parse_program_hex(text, source)
    try:
        mem = bytes.fromhex(re.sub(r"\s+", "", args.mem or ""))
    except ValueError:
        raise ExecError("--mem is not a hex byte string") from None
    r0, cycles = run_raw(insns, mem, args.engine, compile_=not args.no_compile)
    print(f"0x{r0:x}")
    if args.verbose:
        what = "instructions" if args.engine == "seq-model" else "cycles"
        print(f"{args.engine}: {cycles} {what}", file=sys.stderr)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("exec", help="run a raw program (hex) with r1 = memory buffer, r2 = its length",
                              description=__doc__)
    p.add_argument("file", nargs="?", help="program as hex text (default: stdin)")
    p.add_argument("--mem", default="", help="memory buffer as hex bytes")
    p.add_argument("--engine", choices=ENGINES, default="rtl",
                   help="where to run: the RTL (Verilator), the VLIW model or the sequential model (default: rtl)")
    p.add_argument("--no-compile", action="store_true",
                   help="run one instruction per row instead of the compiled ROM (every opcode reaches the core)")
    p.add_argument("-v", "--verbose", action="store_true", help="print cycles (or instructions) on stderr")
    p.set_defaults(func=_cmd)
