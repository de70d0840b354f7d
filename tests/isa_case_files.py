"""Reader of the uBPF-style ISA case files in tests/isa_cases (shared by the RTL and model tests)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hxdp.isa.insn import Insn, assemble
from hxdp.raw import parse_program_hex

CASE_DIR = Path(__file__).parent / "isa_cases"


@dataclass
class IsaCase:
    name: str
    insns: list[Insn]
    mem: bytes
    result: int | None
    cycles: int | None
    error: str | None  # expected fault text fragment (`-- error`)


def load_case(path: Path) -> IsaCase:
    sections: dict[str, list[str]] = {}
    cur = None
    for line in path.read_text().splitlines():
        if line.startswith("-- "):
            cur = line[3:].strip()
            sections[cur] = []
        elif cur is not None:
            sections[cur].append(line)
    if "asm" in sections:
        insns = assemble("\n".join(sections["asm"]))
    else:
        insns = parse_program_hex("\n".join(sections["raw"]), str(path))
    mem = bytes.fromhex("".join(sections.get("mem", [])).replace(" ", ""))
    res = "".join(sections.get("result", [])).strip()
    cyc = "".join(sections.get("cycles", [])).strip()
    err = "".join(sections.get("error", [])).strip()
    return IsaCase(path.stem, insns, mem, int(res, 0) if res else None, int(cyc) if cyc else None, err or None)


def all_cases() -> list[IsaCase]:
    return [load_case(p) for p in sorted(CASE_DIR.glob("*.data"))]
