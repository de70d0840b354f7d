"""The execution contract a ROM file is held to before it runs or is injected (no compiler proofs at hand)."""

from __future__ import annotations

from pathlib import Path

from hxdp import params
from hxdp.compiler.verify import verify_rom
from hxdp.errors import CompileError, HxdpError
from hxdp.isa import table as T
from hxdp.isa.insn import IsaError
from hxdp.isa.rom import Rom

# A region name no port rule has: an access placed there counts against no memory's ports. A ROM file carries
# no record of the regions and disjoint stores the compiler proved, so those rules are trusted to the compiler;
# everything else of the contract (one writer per register in a row, r10 read-only, one call, known helpers and
# opcodes, lddw halves, branch targets, atomics alone, multipliers, the end of the program) is checked.
_UNPROVED = "rom-file"


def _file_proofs(rom: Rom) -> tuple[set[tuple[int, int, int]], dict[tuple[int, int], str]]:
    """Place every memory access not through r10 and take every two stores with different bases as disjoint."""
    regions: dict[tuple[int, int], str] = {}
    disjoint: set[tuple[int, int, int]] = set()
    for r, row in enumerate(rom.rows):
        stores = []
        for lane, ins in enumerate(row):
            try:
                kind = ins.info.kind
            except IsaError:
                continue  # verify_rom names the unknown opcode
            if kind not in T.MEM_KINDS:
                continue
            base = ins.src if kind in T.LOAD_KINDS else ins.dst
            if base != params.FP_REG:
                regions[(r, lane)] = _UNPROVED
            if kind in T.STORE_KINDS:
                stores.append((lane, base))
        for i, (la, ba) in enumerate(stores):
            disjoint.update((r, la, lb) for lb, bb in stores[i + 1 :] if bb != ba)
    return disjoint, regions


def check_rom_contract(rom: Rom, source: str | Path) -> None:
    """Raise HxdpError naming the file, row and lane at the first rule of docs/execution_contract.md the ROM breaks
    (engines would otherwise disagree on it: the RTL lets one lane win where the VLIW model stops)."""
    disjoint, regions = _file_proofs(rom)
    try:
        verify_rom(rom, disjoint, regions=regions)
    except CompileError as exc:
        raise HxdpError(f"{source}: breaks the execution contract: {exc} (docs/execution_contract.md)") from None
