"""The original hXDP core's instruction set as data (design.md section 4): opcodes, helpers, registers, rows."""

from __future__ import annotations

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.isa import table as T
from hxdp.isa.insn import Insn, IsaError, disasm
from hxdp.isa.rom import Rom

NAME = "hxdp-original"
ROWS = params.ORIGINAL_IMEM_ROWS  # the original's instruction memory (kept apart from our core's params.IMEM_ROWS)
# r0-r10 (paper section 4.1.3: "11 64b registers"). The artifact's published xdp_router_ipv4 ROM (not in
# ../shared/reference/roms/) uses r11-r14, so its register file may be wider; r0-r10 runs in either case.
REGS = 11
EXIT_ACTION_LANES = frozenset({0})  # the original recognises exit-with-action in lane 0 only
# The helpers its helper unit decodes (design.md section 4); every other call is refused.
HELPERS: dict[int, str] = {i: params.HELPERS[i] for i in (1, 2, 8, 51)}

# Its three-operand ALU: ours, plus 0xD7 = 64-bit sub (RFC 9669 BSWAP on our core), minus our 32-bit and/or.
ALU3_64: dict[int, str] = {**T.EXT_ALU3_64, 0xD7: "sub"}
ALU3_32: dict[int, str] = {op: name for op, name in T.EXT_ALU3_32.items() if name not in ("and", "or")}

# eBPF kinds the original decodes (the pre-v4 instruction set: no JMP32 class, no atomics, no sign-extending
# loads, no byte swap, no gotol) and the hXDP extensions it introduced.
_KINDS = frozenset({"alu", "neg", "end", "jmp", "ja", "call", "exit", "lddw", "ldx", "st", "stx",
                    "exit_action", "ldx6", "stx6", "st6"})


def _build() -> dict[int, T.OpInfo]:
    table = {op: info for op, info in T.OPCODES.items()
             if info.supported and info.kind in _KINDS and not (info.kind == "jmp" and info.width == 32)
             and info.name != "gotol"}
    for op, name in ALU3_64.items():
        table[op] = T.OpInfo(op, f"{name}64_3", "alu3", name, 64, extension=True, note="dst = src op imm")
    for op in ALU3_32:
        table[op] = T.OPCODES[op]
    return table


OPCODES: dict[int, T.OpInfo] = _build()


class OriginalIsaError(HxdpError):
    """An instruction the original hXDP core does not run."""


def info(ins: Insn) -> T.OpInfo:
    """The instruction's meaning on the original core; raises OriginalIsaError for an opcode it lacks."""
    got = OPCODES.get(ins.opcode)
    if got is None:
        raise OriginalIsaError(f"opcode 0x{ins.opcode:02x} is not in its opcode table")
    return got


def disasm_original(ins: Insn) -> str:
    """Disassembly as the original reads the slot (0xD7 is a three-operand sub there)."""
    if ins.opcode in ALU3_64 and ALU3_64[ins.opcode] == "sub":
        return f"r{ins.dst} = r{ins.src} - {ins.imm}"
    try:
        return disasm(ins)
    except IsaError:
        return f".insn 0x{ins.to_u64():016x}"


def slot_problem(ins: Insn, lane: int) -> str | None:
    """Why the original core cannot run this (non-empty) slot in this lane, or None."""
    try:
        meaning = info(ins)
    except OriginalIsaError as exc:
        return str(exc)
    k = meaning.kind
    if k == "alu" and ins.off != 0:
        return "a sign-extending move or signed division (eBPF v4), which it does not decode"
    if k == "exit_action" and lane not in EXIT_ACTION_LANES:
        return f"exit with action in lane {lane}: the original recognises it in lane 0 only"
    if k == "call" and (ins.src != T.CALL_HELPER or ins.imm not in HELPERS):
        name = params.HELPERS.get(ins.imm, "unknown") if ins.src == T.CALL_HELPER else "a bpf-to-bpf call"
        return f"helper {ins.imm} ({name}): its helper unit decodes only {_helper_list()}"
    if k == "lddw":
        return None  # the high half is checked with the row
    regs = [ins.dst] + ([ins.src] if meaning.src_reg or k in ("alu3", "ldx", "ldx6", "stx", "stx6") else [])
    high = [r for r in regs if r >= REGS]
    if high:
        return f"register r{high[0]}: it has {REGS} registers (r0-r{REGS - 1})"
    return None


def _helper_list() -> str:
    return ", ".join(f"{i} ({n})" for i, n in HELPERS.items())


def check_rom(rom: Rom, source: str = "ROM") -> None:
    """Raise OriginalIsaError at the first row and lane the original core cannot run (its ISA, 256 rows)."""
    if len(rom.rows) > ROWS:
        raise OriginalIsaError(f"{source}: {len(rom.rows)} rows, the original's instruction memory holds {ROWS}")
    if rom.lanes != params.LANES:
        raise OriginalIsaError(f"{source}: {rom.lanes} lanes, the original core has {params.LANES}")
    for r, row in enumerate(rom.rows):
        skip = False
        for lane, ins in enumerate(row):
            if skip:
                skip = False
                continue
            if ins.is_nop:
                continue
            why = slot_problem(ins, lane)
            if why is not None:
                raise OriginalIsaError(f"{source}: row {r} lane {lane} ({disasm_original(ins)}): not on the "
                                       f"original hXDP core: {why}")
            skip = ins.opcode == 0x18


def meaning_problem(ins: Insn) -> str | None:
    """Why an instruction of our ISA does not mean the same on the original core (absent there, or another
    operation at its opcode, as 0xD7: our BSWAP, its sub), or None."""
    ours, theirs = T.OPCODES.get(ins.opcode), OPCODES.get(ins.opcode)
    if ours is None:
        return None  # not ours either: the contract checks name it
    if theirs is None or (theirs.kind, theirs.op, theirs.width) != (ours.kind, ours.op, ours.width):
        return f"{ours.name}, which the original does not have"
    if theirs.kind == "alu" and ins.off != 0:
        return "a sign-extending move or signed division (eBPF v4), which it does not decode"
    return slot_problem(ins, 0) if theirs.kind == "call" else None  # registers are checked after renaming


def program_problem(insns: list[Insn]) -> str | None:
    """The first eBPF instruction (by slot) a program needs that the original core lacks, as one line; None when
    every instruction maps onto its ISA (JMP32 jumps are widened by hxdp.compiler.widen)."""
    skip = False
    for i, ins in enumerate(insns):
        if skip:
            skip = False
            continue
        skip = ins.opcode == 0x18
        try:
            meaning = ins.info
        except IsaError:
            continue  # the compiler names unknown opcodes itself
        k = meaning.kind
        why = None
        if k == "atomic" and T.ATOMIC_OPS.get(ins.imm) not in ("add", "or", "and", "xor"):
            # (the ones without a fetched result become load, op, store: hxdp.compiler.atomics.split_atomics)
            why = "an atomic memory operation returning a value, which the original does not have"
        elif k in ("ldxsx", "bswap") or meaning.name == "gotol":
            why = f"{meaning.name} (eBPF v4), which the original does not decode"
        elif k == "alu" and ins.off != 0:
            why = "a sign-extending move or signed division (eBPF v4), which the original does not decode"
        elif k == "call" and ins.src == T.CALL_HELPER and ins.imm not in HELPERS \
                and ins.imm not in params.LOWERED_HELPERS:  # lowered into lane code by the compiler
            why = (f"helper {ins.imm} ({params.HELPERS.get(ins.imm, 'unknown')}): the original's helper unit "
                   f"decodes only {_helper_list()}")
        if why is not None:
            return f"slot {i} ({disasm(ins)}): not supported on {NAME}: {why}"
    return None
