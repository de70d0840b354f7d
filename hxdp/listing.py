"""Listings: an object's instructions like llvm-objdump -d, a ROM's rows lane by lane."""

from __future__ import annotations

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.frontend.elf import BpfObject
from hxdp.isa import table as T
from hxdp.isa.insn import Insn, disasm, disasm_program, lddw_value
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout

LANE_WIDTH = 34


# helper names an object may call (the lowered ones never reach a ROM)
_OBJECT_HELPERS = {**params.HELPERS, **params.LOWERED_HELPERS}

def _hex(insns: list[Insn]) -> str:
    return " ".join(f"{b:02x}" for ins in insns for b in ins.to_bytes())


def disasm_object_lines(path: str, section: str | None = None, prog: str | None = None) -> list[str]:
    """llvm-objdump -d style listing of the object's code (raw, before relocation), optionally one section/prog."""
    obj = BpfObject(path)
    if prog is not None:
        f = obj.select(section, prog)
        funcs_by_sec = {f.section.index: [f]}
    elif section is not None:  # the whole section, every function in it
        sec = obj.by_name.get(section)
        if sec is None or not sec.is_code:
            obj.select(section, None)  # raises the loader's error naming the problem
            raise HxdpError(f"{path}: section '{section}' holds no code")
        funcs_by_sec = {sec.index: obj.functions[sec.index]}
    else:
        funcs_by_sec = obj.functions
    lines = [f"{path}:\tfile format elf64-bpf"]
    for idx in sorted(funcs_by_sec):
        sec = obj.sections[idx]
        lines += ["", f"Disassembly of section {sec.name}:"]
        for func in funcs_by_sec[idx]:
            lines += ["", f"{func.start:016x} <{func.name}>:"]
            data = sec.data[func.start : func.start + func.size]
            insns = [Insn.from_bytes(data[i : i + 8]) for i in range(0, len(data), 8)]
            slot = 0
            while slot < len(insns):
                ins = insns[slot]
                num = (func.start // 8) + slot
                if ins.opcode == 0x18 and slot + 1 < len(insns):
                    lines.append(f"{num:8d}:\t{_hex(insns[slot:slot + 2])}\t{disasm(ins, insns[slot + 1])}")
                    slot += 2
                    continue
                lines.append(f"{num:8d}:\t{_hex([ins])}\t{disasm(ins)}")
                slot += 1
    return lines


def disasm_linked_lines(path: str, section: str | None = None, prog: str | None = None) -> list[str]:
    """The program as load_program links it: subprograms appended, map references by name."""
    from hxdp.frontend.elf import load_program

    program = load_program(path, section, prog)
    names = [m.name for m in program.maps]
    text = disasm_program(program.insns, names)
    lines = [f"{path}: {program.section}:{program.name}, {len(program.insns)} slots, license {program.license!r}"]
    for i, m in enumerate(program.maps):
        lines.append(f"  map {i} {m.name}: type {m.type}, key {m.key_size}, value {m.value_size}, "
                     f"entries {m.max_entries}, flags 0x{m.flags:x}")
    for slot, line in enumerate(text):
        if slot in program.functions:
            lines.append(f"<{program.functions[slot]}>:")
        ins = program.insns[slot]
        target = slot + 1 + ins.imm
        if line and target in program.functions and (
            (ins.opcode == 0x85 and ins.src == T.CALL_LOCAL) or (ins.opcode == 0x18 and ins.src == T.PSEUDO_FUNC)
        ):
            line += f" <{program.functions[target]}>"
        elif line and ins.opcode == 0x85 and ins.src == T.CALL_HELPER and ins.imm in _OBJECT_HELPERS:
            line += f" <{_OBJECT_HELPERS[ins.imm]}>"
        if line:
            width = 2 if program.insns[slot].opcode == 0x18 else 1
            lines.append(f"{slot:8d}:\t{_hex(program.insns[slot : slot + width])}\t{line}")
    return lines


def _lddw_text(ins: Insn, hi: Insn | None, layout: MapLayout | None) -> str:
    """A ROM's lddw: map handles and map value addresses by name when the layout is known, else hex."""
    value = lddw_value(ins, hi) if hi is not None else ins.imm & 0xFFFFFFFF
    if ins.src != 0:
        return disasm(ins, hi)
    if layout is not None:
        map_id = layout.map_of_handle(value)
        if map_id is not None:
            return f"r{ins.dst} = map[{layout.region(map_id).name}] ll"
        addr = value & 0xFFFFFFFF  # a map-value pointer: its tag (bits 63:32) names the value, the address is below
        tier = params.tier_of(addr)
        tagged = tier is not None and params.split_map_tag(value >> params.MAP_TAG_SHIFT, tier) is not None
        for r in layout.regions:
            if tagged and r.base <= addr < r.base + r.size:
                return f"r{ins.dst} = map[{r.name}] + {addr - r.base} ll"
    return f"r{ins.dst} = 0x{value:x} ll" if value >= 0x10000 else disasm(ins, hi)


def rom_lane_text(row: list[Insn], lane: int, row_index: int, layout: MapLayout | None = None) -> str:
    ins = row[lane]
    if lane > 0 and row[lane - 1].opcode == 0x18 and not row[lane - 1].is_nop:
        return "(lddw high half)"
    if ins.is_nop:
        return "nop"
    if ins.opcode == 0x18:
        return _lddw_text(ins, row[lane + 1] if lane + 1 < len(row) else None, layout)
    text = disasm(ins)
    if ins.opcode == 0x85 and ins.src == T.CALL_HELPER and ins.imm in params.HELPERS:
        return f"{text} <{params.HELPERS[ins.imm]}>"
    info = T.OPCODES.get(ins.opcode)
    if info is not None and info.kind in ("jmp", "ja"):
        rel = ins.off if info.op != "gotol" else ins.imm
        text += f" <row {row_index + 1 + rel}>"
    return text


def disasm_rom_lines(rom: Rom, layout: MapLayout | None = None) -> list[str]:
    header = f"{'row':>4}  " + "".join(f"{'lane ' + str(k):<{LANE_WIDTH}}" for k in range(rom.lanes))
    lines = [header.rstrip()]
    for r, row in enumerate(rom.rows):
        cols = [rom_lane_text(row, k, r, layout) for k in range(rom.lanes)]
        lines.append((f"{r:4d}  " + "".join(f"{c:<{LANE_WIDTH - 2}}  " for c in cols)).rstrip())  # 2 spaces at least
    return lines
