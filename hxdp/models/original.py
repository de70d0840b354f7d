"""A model of the original hXDP core: its opcode table and operations, lane-0 exit, its helpers, 11 registers."""

from __future__ import annotations

from hxdp import params
from hxdp.isa import original as O
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapState
from hxdp.models.vliw import VliwModel, decode_rom


class OriginalModel(VliwModel):
    """Runs a ROM as the original Sephirot would (design.md section 4; paper section 4.1.3).

    What differs from our core is the instruction set, checked and decoded here: the ROM must pass
    hxdp.isa.original.check_rom (else OriginalIsaError names row, lane and reason), its slots decode against the
    original's opcode table (0xD7 is a three-operand sub), and r2 is 0 at entry (our core's r2 = ctx->data is an
    extension). The row semantics (lanes read the registers of the row before, branch priority by lane, one
    helper call per row) and the data memory are our VLIW model's, which keeps the original's contract; the
    original's data addresses (region in bits 63:60) are not modelled: a ROM compiled for it holds no address
    constant (the compiler's constant map lookups and entry-data rewrites are off for that target).
    """

    folds_jumps = False  # the original fetches behind every taken jump (its cycles are the paper's)

    def __init__(self, rom: Rom, state: MapState, cycle_limit: int = params.CYCLE_LIMIT,
                 trace: bool = False, source: str = "ROM") -> None:
        O.check_rom(rom, source)
        super().__init__(rom, state, cycle_limit, trace)
        self.rows = decode_rom(rom, O.OPCODES)

    def _enter(self, regs: list[int]) -> None:
        super()._enter(regs)
        regs[2] = 0
