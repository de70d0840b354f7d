"""`hxdp disasm`: list an object's instructions like llvm-objdump -d, or a ROM's rows lane by lane."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from hxdp.errors import HxdpError
from hxdp.isa.rom import Rom
from hxdp.listing import disasm_linked_lines, disasm_object_lines, disasm_rom_lines
from hxdp.models.maps import MapLayout


def _rom_layout(rom_path: str, given: str | None) -> MapLayout | None:
    """The map layout named by --maps, else PROG.maps.json next to PROG.rom when it exists."""
    path = Path(given) if given else Path(rom_path).with_suffix(".maps.json")
    if not path.exists():
        if given:
            raise HxdpError(f"{given}: no such map layout file")
        return None
    return MapLayout.load(path)


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError as exc:
        raise HxdpError(f"{path}: cannot read: {exc.strerror}") from None


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    if _is_elf(args.file):
        if args.linked:
            lines = disasm_linked_lines(args.file, args.section, args.prog)
        else:
            lines = disasm_object_lines(args.file, args.section, args.prog)
    else:
        if args.section or args.prog or args.linked:
            raise HxdpError(f"{args.file}: --section/--prog/--linked apply to ELF objects, not ROMs")
        lines = disasm_rom_lines(Rom.load(Path(args.file)), _rom_layout(args.file, args.maps))
    (out or sys.stdout).write("\n".join(lines) + "\n")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("disasm", help="disassemble a BPF object (like llvm-objdump -d) or a ROM (by rows)",
                              description=__doc__)
    p.add_argument("file", metavar="OBJ|ROM", help="clang-compiled BPF object or ROM text file")
    p.add_argument("--section", help="only this program section")
    p.add_argument("--prog", help="only this program (function symbol)")
    p.add_argument("--maps", metavar="LAYOUT", help="ROM only: map layout file naming map handles and addresses "
                   "(default: PROG.maps.json next to PROG.rom)")
    p.add_argument("--linked", action="store_true",
                   help="show the program as loaded: subprograms linked, map references by name")
    p.set_defaults(func=run)
