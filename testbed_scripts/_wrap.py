"""Shared by the testbed wrappers: run one `hxdp` host-tool subcommand with the original scripts' -i IFACE option."""

from __future__ import annotations

import sys


def run(command: list[str], argv: list[str]) -> int:
    """`-i IFACE` (the original tools' option) becomes `--board sume:IFACE`; everything else goes to hxdp."""
    try:
        from hxdp.cli import main
    except ImportError:
        print("the hxdp package is not installed: run `pip install -e .` in the repository", file=sys.stderr)
        return 1
    out: list[str] = []
    it = iter(argv)
    for a in it:
        if a in ("-i", "--iface"):
            out += ["--board", "sume:" + next(it, "nf0")]
        else:
            out.append(a)
    return main(command + out)
