"""Raw ISA-level runs, like uBPF's test runner: a hex program with r1 = a memory buffer, r2 = its length."""

from __future__ import annotations

import re

from hxdp.errors import HxdpError
from hxdp.isa import table as T
from hxdp.isa.insn import NOP, Insn, decode
from hxdp.isa.rom import Rom

ENGINES = ("rtl", "vliw-model", "seq-model")


class ExecError(HxdpError):
    """A raw program or memory buffer that cannot be read."""


def parse_program_hex(text: str, source: str = "<stdin>") -> list[Insn]:
    """Slots from hex text: one 64-bit slot per line as uBPF's `-- raw` sections (`0x...` u64 values, the ROM's
    %016x lane form), or else one hex byte string of the instructions in memory order."""
    lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        raise ExecError(f"{source}: empty program")
    if any(ln.lower().startswith("0x") for ln in lines):
        out = []
        for i, ln in enumerate(lines, 1):
            try:
                out.append(Insn.from_u64(int(ln, 16) & ((1 << 64) - 1)))
            except ValueError:
                raise ExecError(f"{source}: line {i}: not a 64-bit hex slot: {ln!r}") from None
        return out
    blob = re.sub(r"\s+", "", "".join(lines))
    try:
        data = bytes.fromhex(blob)
    except ValueError:
        raise ExecError(f"{source}: not a hex byte string") from None
    if len(data) % 8:
        raise ExecError(f"{source}: {len(data)} bytes is not a whole number of 8-byte instructions")
    return decode(data)


def sequential_rom(insns: list[Insn]) -> Rom:
    """One instruction per row (lddw: lanes 0 and 1 of its row), jump offsets converted from slots to rows.

    The ROM runs the program exactly as written, so the hardware sees every opcode (the compiler would fold
    constants and fuse instructions)."""
    row_of: dict[int, int] = {}
    starts: list[int] = []
    i = 0
    while i < len(insns):
        row_of[i] = len(starts)
        starts.append(i)
        i += 2 if insns[i].opcode == 0x18 else 1
    row_of[len(insns)] = len(starts)
    rows = []
    for r, i in enumerate(starts):
        ins = insns[i]
        info = T.OPCODES.get(ins.opcode)
        if info is not None and info.kind in ("jmp", "ja"):
            field = "imm" if info.op == "gotol" else "off"
            target = i + 1 + getattr(ins, field)
            if target not in row_of:
                raise ExecError(f"slot {i}: jump into the middle of an lddw or outside the program")
            ins = ins.with_(**{field: row_of[target] - r - 1})
        row = [ins, NOP, NOP, NOP]
        if ins.opcode == 0x18:
            row[1] = insns[i + 1] if i + 1 < len(insns) else NOP
        rows.append(row)
    return Rom(rows)


def run_raw(insns: list[Insn], mem: bytes, engine: str, compile_: bool = True) -> tuple[int, int]:
    """(r0, cycles or instructions) of a raw program on `engine`; HxdpError on a fault.

    The VLIW engines run the compiled ROM, or with compile_=False the sequential ROM (one instruction per row)."""
    from hxdp.models.maps import MapLayout, MapState

    if engine == "seq-model":
        from hxdp.frontend.program import Program
        from hxdp.models.seq import SeqModel

        model = SeqModel(Program("raw", "raw", insns), MapState(MapLayout.from_maps([])))
        r0 = model.run_raw(mem)
        return r0, model.count
    from hxdp.compiler import compile_insns

    if compile_:
        res = compile_insns(insns)
        rom, layout = res.rom, res.layout
    else:
        rom, layout = sequential_rom(insns), MapLayout.from_maps([])
    if engine == "vliw-model":
        from hxdp.models.vliw import VliwModel

        vm = VliwModel(rom, MapState(layout))
        r0 = vm.run_raw(mem)
        return r0, vm.last_cycles
    if engine == "rtl":
        from hxdp.rtl.sim import RtlSim

        sim = RtlSim(rom, layout)
        r0 = sim.run_raw(mem)
        return r0, sim.last_cycles
    raise ExecError(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
