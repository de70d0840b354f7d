"""The `hxdp` command line: one subcommand per module listed in COMMAND_MODULES."""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .errors import HxdpError

# Each module defines register(subparsers) adding its subcommands; the handler is set with set_defaults(func=...)
# and returns an exit code.
COMMAND_MODULES = (
    "hxdp.cmd_disasm",
    "hxdp.cmd_traffic",
    "hxdp.cmd_compile",
    "hxdp.cmd_exec",
    "hxdp.cmd_run",
    "hxdp.cmd_kernel",
    "hxdp.cmd_diff",
    "hxdp.cmd_baseline",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hxdp", description=__doc__)
    parser.add_argument("--version", action="version", version=f"hxdp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # not written yet in this checkout
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except HxdpError as exc:
        print(f"hxdp {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
