"""ROM files in the original hXDP text format: one VLIW row per line, 16 hex digits per lane, the last lane first."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from hxdp import params
from hxdp.atomic_write import write_atomic
from hxdp.errors import HxdpError
from hxdp.isa.insn import NOP, Insn

Row = list[Insn]
HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


class RomError(HxdpError):
    """A malformed ROM file."""


@dataclass
class Rom:
    """A program for Sephirot: rows of LANES slots each (lane 0 first in each list)."""

    rows: list[Row] = field(default_factory=list)
    lanes: int = params.LANES

    def __post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != self.lanes:
                raise RomError(f"row {i} has {len(row)} lanes, expected {self.lanes}")

    def __len__(self) -> int:
        return len(self.rows)

    def to_text(self, pad_to: int | None = params.ORIGINAL_IMEM_ROWS,
                max_rows: int | None = params.IMEM_ROWS) -> str:
        """Render the ROM. A program that fits `pad_to` rows (the original hXDP instruction memory) is padded with
        all-zero rows to it, as the original loader expects; a longer one is not padded (it runs only on this
        project's bitstream, whose tools read any length). More than `max_rows` rows is a RomError."""
        if max_rows is not None and len(self.rows) > max_rows:
            raise RomError(f"program needs {len(self.rows)} rows, instruction memory holds {max_rows}")
        lines = ["".join(f"{ins.to_u64():016X}" for ins in reversed(row)) for row in self.rows]
        if pad_to is not None and len(self.rows) <= pad_to:
            lines += ["0" * (16 * self.lanes)] * (pad_to - len(self.rows))
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text: str, source: str = "<rom>", lanes: int | None = None) -> Rom:
        """Parse ROM text. A row is exactly 16 hex digits per lane and nothing else; the lane count is the rows'
        width (what `hxdp compile --lanes N` wrote) unless `lanes` demands one."""
        rows: list[Row] = []
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if lanes is None:
                if len(line) % 16 or not line:
                    raise RomError(f"{source}:{lineno}: a row is 16 hex digits per lane, got {len(line)} digits")
                lanes = len(line) // 16
            if len(line) != 16 * lanes:
                raise RomError(f"{source}:{lineno}: expected {16 * lanes} hex digits ({lanes} lanes, as the rows "
                               f"before), got {len(line)}")
            if not all(c in HEX_DIGITS for c in line):
                raise RomError(f"{source}:{lineno}: not a hex row: {line[:20]}...")
            words = [int(line[i : i + 16], 16) for i in range(0, len(line), 16)]
            rows.append([Insn.from_u64(w) for w in reversed(words)])
        while rows and all(ins.is_nop for ins in rows[-1]):
            rows.pop()  # trailing padding
        return cls(rows, lanes if lanes is not None else params.LANES)

    @classmethod
    def load(cls, path: str | os.PathLike[str], lanes: int | None = None,
             max_rows: int | None = params.IMEM_ROWS) -> Rom:
        """Read a ROM file; RomError names the file (and line) when it is unreadable, binary, empty, malformed or
        longer than `max_rows` (the instruction memory; None for no limit)."""
        try:
            blob = Path(path).read_bytes()
        except OSError as exc:
            raise RomError(f"{path}: cannot read ROM: {exc.strerror}") from None
        if blob.startswith(b"\x7fELF"):
            raise RomError(f"{path}: an ELF object, not a ROM (compile it first: hxdp compile {path})")
        try:
            text = blob.decode("ascii")
        except UnicodeDecodeError as exc:
            line = blob[: exc.start].count(b"\n") + 1
            raise RomError(f"{path}:{line}: not a ROM text file (byte 0x{blob[exc.start]:02x} at offset "
                           f"{exc.start})") from None
        if not any(ln.strip() and not ln.strip().startswith("#") for ln in text.splitlines()):
            raise RomError(f"{path}: empty ROM file (no rows)")
        rom = cls.from_text(text, str(path), lanes)
        if max_rows is not None and len(rom.rows) > max_rows:
            raise RomError(f"{path}: {len(rom.rows)} rows, instruction memory holds {max_rows}")
        return rom

    def save(self, path: str | os.PathLike[str], pad_to: int | None = params.ORIGINAL_IMEM_ROWS) -> None:
        write_atomic(path, self.to_text(pad_to))

    def slots(self) -> int:
        """Number of non-empty slots (eBPF instructions, lddw counting two)."""
        return sum(1 for row in self.rows for ins in row if not ins.is_nop)


def empty_row(lanes: int = params.LANES) -> Row:
    return [NOP] * lanes
