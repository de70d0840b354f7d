"""Emission: scheduled rows -> lane-expanded ROM rows (branch offsets in rows, jumps to the next row dropped).

Exits move into the row of the branch that reaches them where a lane is free: both save taken-branch cycles.
"""

from __future__ import annotations

from hxdp.compiler.ir import INVERT, Op
from hxdp.errors import CompileError
from hxdp.isa import table as T
from hxdp.isa.insn import NOP, Insn


def emit(rows: list[list[Op]], start: dict[int, int], lanes: int) -> list[list[Insn]]:
    """Lane-expanded rows with branch offsets in rows."""
    out: list[list[Insn]] = []
    for r, row in enumerate(rows):
        slots: list[Insn] = []
        for op in row:
            if op.is_branch:
                if op.target not in start:
                    raise CompileError(f"internal error: branch to unplaced block {op.target}")
                off = start[op.target] - (r + 1)
                if not -32768 <= off < 32768:
                    raise CompileError(f"{op.where()}: branch offset {off} rows out of range")
                if op.info.name == "gotol":
                    slots += [Insn(0x05, 0, 0, off, 0)]
                else:
                    slots += [Insn(op.opcode, op.dst, op.src, off, op.imm)]
            else:
                slots += op.to_insns()
        slots = _drop_jumps_to_next_row(slots)
        if len(slots) > lanes:
            raise CompileError(f"internal error: row {r} has {len(slots)} slots")
        out.append(slots + [NOP] * (lanes - len(slots)))
    return _exits_into_rows(out)


def _used_lanes(row: list[Insn]) -> int:
    """Lanes in use: emission packs instructions from lane 0 (a lddw high half counts with its lddw)."""
    i = 0
    while i < len(row):
        if row[i].opcode == 0x18:
            i += 2
        elif row[i].is_nop:
            return i
        else:
            i += 1
    return i


def _exits_into_rows(rows: list[list[Insn]]) -> list[list[Insn]]:
    """`if c goto X` ending a row, where row X holds only an exit, becomes `if !c goto +0` plus that exit in the
    row's next free lane: when c holds, the packet ends after the conditional-exit cycle instead of the taken
    branch's discarded fetch plus row X; otherwise the jump to the next row costs nothing (contract section 6).
    Rows with a helper call keep their form (a plain `exit` there would read r0 before the helper's result)."""
    exit_only = {r: row[0] for r, row in enumerate(rows)
                 if _used_lanes(row) == 1 and T.OPCODES.get(row[0].opcode) is not None
                 and T.OPCODES[row[0].opcode].kind in ("exit", "exit_action")}
    for r, row in enumerate(rows):
        used = _used_lanes(row)
        if not used or used == len(row) or any(ins.opcode == 0x85 for ins in row[:used]):
            continue
        last = row[used - 1]
        info = T.OPCODES.get(last.opcode)
        inv = _INVERT_CODE.get(last.opcode & 0xF0)
        target = r + 1 + last.off
        if info is None or info.kind != "jmp" or inv is None or target == r + 1 or target not in exit_only:
            continue
        row[used - 1] = Insn(inv | (last.opcode & 0x0F), last.dst, last.src, 0, last.imm)
        row[used] = exit_only[target]
    return rows


def _is_jump(ins: Insn) -> bool:
    info = T.OPCODES.get(ins.opcode)
    return info is not None and info.kind in ("jmp", "ja")


def _is_control(ins: Insn) -> bool:
    info = T.OPCODES.get(ins.opcode)
    return info is not None and info.kind in ("jmp", "ja", "exit", "exit_action")


_INVERT_CODE = {T.JMP_OPS[a][0]: T.JMP_OPS[b][0] for a, b in INVERT.items()}


def _drop_jumps_to_next_row(slots: list[Insn]) -> list[Insn]:
    """A jump to the next row that no later lane's branch or exit follows changes nothing but costs the
    taken-branch penalty: the row falls through instead (removed from the highest lane down). A conditional
    jump to the next row followed only by `goto X` becomes the inverted jump to X (one taken jump fewer)."""
    while True:
        ctl = [i for i, ins in enumerate(slots) if _is_control(ins)]
        if not ctl or not _is_jump(slots[ctl[-1]]):
            return slots
        last = ctl[-1]
        if slots[last].off == 0:
            slots = slots[:last] + slots[last + 1:]
            continue
        if len(ctl) < 2 or T.OPCODES[slots[last].opcode].kind != "ja" or slots[last].opcode != 0x05:
            return slots
        prev = slots[ctl[-2]]
        inv = _INVERT_CODE.get(prev.opcode & 0xF0)
        if prev.off != 0 or T.OPCODES[prev.opcode].kind != "jmp" or inv is None:
            return slots
        new = Insn(inv | (prev.opcode & 0x0F), prev.dst, prev.src, slots[last].off, prev.imm)
        slots = slots[:ctl[-2]] + [new] + slots[ctl[-2] + 1:last] + slots[last + 1:]


def exit_actions_to_lane(rows: list[list[Insn]], lanes: frozenset[int]) -> list[list[Insn]]:
    """For a core that recognises exit-with-action only in `lanes` (the original hXDP: lane 0): one elsewhere
    becomes `goto` a row appended at the end that holds it in lane 0. The goto keeps the lane, so lower lanes'
    branches keep their priority and the row's other lanes commit as before; it costs the taken-branch cycle."""
    out = [list(row) for row in rows]
    exit_rows: dict[int, int] = {}  # action -> appended row
    for r in range(len(rows)):
        for lane, ins in enumerate(out[r]):
            if lane in lanes or ins.opcode != T.EXT_EXIT_ACTION:
                continue
            if ins.imm not in exit_rows:
                exit_rows[ins.imm] = len(out)
                out.append([ins] + [NOP] * (len(out[r]) - 1))
            out[r][lane] = Insn(0x05, 0, 0, exit_rows[ins.imm] - (r + 1), 0)
    return out
