"""ROM files in the original hXDP's text format, written from its documented layout (test data of our own).

A line is one VLIW row of exactly 64 hex digits: lane 3 | lane 2 | lane 1 | lane 0, each lane the 64-bit eBPF
instruction read as a little-endian u64 and printed %016X; a file holds the 256 rows of instruction memory, the
rows after the program all zero.
"""

from __future__ import annotations

from pathlib import Path

LANES = 4
ROWS = 256
EXIT = 0x0000000000000095  # exit
R0_IS_1 = 0x00000001000000B7  # r0 = 1
EXIT_DROP = 0x0000000100000096  # exit with action 1 (XDP_DROP), this design's early exit
EXIT_TX = 0x0000000300000096  # exit with action 3 (XDP_TX)

# the three programs of the original's ROM folder: rows of lanes, lane 0 first
PROGRAMS: dict[str, list[list[int]]] = {
    "XDP_DROP.bin": [[EXIT, R0_IS_1]],  # r0 = 1 and exit in one row: exit reads r0 after the row
    "XDP_DROP_early_exit.bin": [[EXIT_DROP]],
    "XDP_TX_early_exit.bin": [[EXIT_TX]],
}


def rom_line(lanes: list[int]) -> str:
    """One row: lane 3 first, 16 upper-case hex digits a lane, missing lanes zero."""
    padded = list(lanes) + [0] * (LANES - len(lanes))
    return "".join(f"{v:016X}" for v in reversed(padded))


def rom_text(rows: list[list[int]]) -> str:
    return "".join(rom_line(r) + "\n" for r in rows + [[]] * (ROWS - len(rows)))


def write_original_rom(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text(rom_text(PROGRAMS[name]))
    return path
