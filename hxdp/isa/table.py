"""The instruction set as data: every RFC 9669 eBPF opcode plus the hXDP extensions (single source of truth)."""

from __future__ import annotations

from dataclasses import dataclass

# Instruction classes (RFC 9669 section 3.1).
CLASS_LD, CLASS_LDX, CLASS_ST, CLASS_STX = 0x00, 0x01, 0x02, 0x03
CLASS_ALU, CLASS_JMP, CLASS_JMP32, CLASS_ALU64 = 0x04, 0x05, 0x06, 0x07

SRC_K, SRC_X = 0x00, 0x08

# ALU operation codes (upper nibble) with the C operator llvm-objdump prints.
ALU_OPS: dict[str, tuple[int, str]] = {
    "add": (0x00, "+="),
    "sub": (0x10, "-="),
    "mul": (0x20, "*="),
    "div": (0x30, "/="),
    "or": (0x40, "|="),
    "and": (0x50, "&="),
    "lsh": (0x60, "<<="),
    "rsh": (0x70, ">>="),
    "mod": (0x90, "%="),
    "xor": (0xA0, "^="),
    "mov": (0xB0, "="),
    "arsh": (0xC0, "s>>="),
}

# Jump conditions (upper nibble) with the comparison llvm-objdump prints.
JMP_OPS: dict[str, tuple[int, str]] = {
    "jeq": (0x10, "=="),
    "jgt": (0x20, ">"),
    "jge": (0x30, ">="),
    "jset": (0x40, "&"),
    "jne": (0x50, "!="),
    "jsgt": (0x60, "s>"),
    "jsge": (0x70, "s>="),
    "jlt": (0xA0, "<"),
    "jle": (0xB0, "<="),
    "jslt": (0xC0, "s<"),
    "jsle": (0xD0, "s<="),
}

SIZES: dict[str, tuple[int, int]] = {"w": (0x00, 4), "h": (0x08, 2), "b": (0x10, 1), "dw": (0x18, 8)}
MODE_IMM, MODE_ABS, MODE_IND, MODE_MEM, MODE_MEMSX, MODE_ATOMIC = 0x00, 0x20, 0x40, 0x60, 0x80, 0xC0

# Atomic operations, selected by the imm field of STX|ATOMIC (RFC 9669 section 5.3).
ATOMIC_OPS: dict[int, str] = {
    0x00: "add",
    0x40: "or",
    0x50: "and",
    0xA0: "xor",
    0x01: "fetch_add",
    0x41: "fetch_or",
    0x51: "fetch_and",
    0xA1: "fetch_xor",
    0xE1: "xchg",
    0xF1: "cmpxchg",
}

# Pseudo source values of LD_IMM64 (RFC 9669 section 5.4).
PSEUDO_IMM64 = 0
PSEUDO_MAP_FD = 1
PSEUDO_MAP_VALUE = 2
PSEUDO_BTF_ID = 3
PSEUDO_FUNC = 4
PSEUDO_MAP_IDX = 5
PSEUDO_MAP_IDX_VALUE = 6

# Pseudo source values of CALL.
CALL_HELPER, CALL_LOCAL, CALL_KFUNC = 0, 1, 2

# hXDP extensions. The three-operand opcodes carry the original hXDP core's operations wherever that core has
# them, so a ROM of the common subset means the same on both cores (docs/execution_contract.md, "Encodings").
# The original's 0xD7 (64-bit sub) is RFC 9669's 64-bit byte swap, so our core keeps BSWAP there and has no
# 64-bit three-operand sub (the compiler fuses a sub as an add of -imm); our 32-bit and/or, which the original
# lacks, take the free encodings 0xE6/0xEE (JMP32 class, operation codes 0xE0/0xF0 that RFC 9669 leaves unused).
EXT_ALU3_64: dict[int, str] = {0x8F: "add", 0xDF: "or", 0xE7: "and", 0xEF: "lsh", 0xF7: "rsh", 0xFF: "xor"}
EXT_ALU3_32: dict[int, str] = {0x8C: "add", 0xE4: "sub", 0xEC: "lsh", 0xF4: "rsh", 0xFC: "xor",
                               0xE6: "and", 0xEE: "or"}
EXT_EXIT_ACTION = 0x96
EXT_LDX6 = 0x59
EXT_STX6 = 0x5A
EXT_ST6 = 0x52


@dataclass(frozen=True)
class OpInfo:
    """One opcode byte of the instruction set."""

    opcode: int
    name: str  # unique mnemonic, e.g. "add64_x", "ldxw", "exit_action"
    kind: str  # alu, alu3, neg, end, bswap, jmp, ja, call, exit, exit_action, lddw, ldx, ldxsx, st, stx,
    #          atomic, ldx6, stx6, st6, legacy_ld
    op: str = ""  # operation within the kind (alu op, jump condition, ...)
    width: int = 64  # operand width for ALU/JMP, access size in bytes for memory
    src_reg: bool = False  # second operand comes from src register
    extension: bool = False  # hXDP extension, not RFC 9669
    supported: bool = True  # accepted by the compiler and the core
    note: str = ""


def _build() -> dict[int, OpInfo]:
    table: dict[int, OpInfo] = {}

    def add(info: OpInfo) -> None:
        if info.opcode in table:
            raise AssertionError(f"opcode 0x{info.opcode:02x} defined twice: {table[info.opcode].name}, {info.name}")
        table[info.opcode] = info

    for cls, width in ((CLASS_ALU, 32), (CLASS_ALU64, 64)):
        for op, (code, _sym) in ALU_OPS.items():
            for src, tag in ((SRC_K, "k"), (SRC_X, "x")):
                add(OpInfo(code | src | cls, f"{op}{width}_{tag}", "alu", op, width, src == SRC_X))
        add(OpInfo(0x80 | cls, f"neg{width}", "neg", "neg", width))
    add(OpInfo(0xD4, "le", "end", "le", 32, note="to little endian, imm = 16/32/64"))
    add(OpInfo(0xDC, "be", "end", "be", 32, note="to big endian, imm = 16/32/64"))
    add(OpInfo(0xD7, "bswap", "bswap", "bswap", 64, note="unconditional byte swap, imm = 16/32/64 (v4)"))

    for cls, width in ((CLASS_JMP, 64), (CLASS_JMP32, 32)):
        for op, (code, _sym) in JMP_OPS.items():
            for src, tag in ((SRC_K, "k"), (SRC_X, "x")):
                add(OpInfo(code | src | cls, f"{op}{width}_{tag}", "jmp", op, width, src == SRC_X))
    add(OpInfo(0x05, "ja", "ja", "ja", 64, note="pc += off"))
    add(OpInfo(0x06, "gotol", "ja", "gotol", 32, note="pc += imm (v4)"))
    add(OpInfo(0x85, "call", "call", "call", 64, note="src 0 helper, 1 local function, 2 kfunc"))
    add(OpInfo(0x95, "exit", "exit", "exit", 64))

    add(OpInfo(0x18, "lddw", "lddw", "lddw", 8, note="two slots; src selects the pseudo source"))
    for size, (code, nbytes) in SIZES.items():
        add(OpInfo(MODE_MEM | code | CLASS_LDX, f"ldx{size}", "ldx", size, nbytes))
        add(OpInfo(MODE_MEM | code | CLASS_ST, f"st{size}", "st", size, nbytes))
        add(OpInfo(MODE_MEM | code | CLASS_STX, f"stx{size}", "stx", size, nbytes))
        if size != "dw":
            add(OpInfo(MODE_MEMSX | code | CLASS_LDX, f"ldxs{size}", "ldxsx", size, nbytes))
            for mode, mname in ((MODE_ABS, "abs"), (MODE_IND, "ind")):
                add(OpInfo(mode | code | CLASS_LD, f"ld{mname}{size}", "legacy_ld", mname, nbytes,
                           supported=False, note="legacy packet access, not available to XDP"))
    for size in ("w", "dw"):
        code, nbytes = SIZES[size]
        add(OpInfo(MODE_ATOMIC | code | CLASS_STX, f"atomic{size}", "atomic", size, nbytes, note="imm = atomic op"))

    for opcode, op in EXT_ALU3_64.items():
        add(OpInfo(opcode, f"{op}64_3", "alu3", op, 64, extension=True, note="dst = src op imm"))
    for opcode, op in EXT_ALU3_32.items():
        add(OpInfo(opcode, f"{op}32_3", "alu3", op, 32, extension=True, note="dst = (u32)(src op imm)"))
    add(OpInfo(EXT_EXIT_ACTION, "exit_action", "exit_action", "exit_action", 64, extension=True,
               note="exit with XDP action imm"))
    add(OpInfo(EXT_LDX6, "ldx6", "ldx6", "6", 6, extension=True, note="dst = 6 bytes at src + off"))
    add(OpInfo(EXT_STX6, "stx6", "stx6", "6", 6, extension=True, note="6 bytes at dst + off = src"))
    add(OpInfo(EXT_ST6, "st6", "st6", "6", 6, extension=True, note="6 bytes at dst + off = sext(imm)"))
    return table


OPCODES: dict[int, OpInfo] = _build()
BY_NAME: dict[str, OpInfo] = {info.name: info for info in OPCODES.values()}

# Opcodes that RFC 9669 defines (used to prove the extensions do not collide with the standard).
RFC9669_OPCODES: frozenset[int] = frozenset(o for o, i in OPCODES.items() if not i.extension)
EXTENSION_OPCODES: frozenset[int] = frozenset(o for o, i in OPCODES.items() if i.extension)

# Memory-access kinds, and the ports of its memory an access of each kind takes in a row (an atomic reads and
# writes): the stack's per-row port limits (params.STACK_*_PORTS) are counted with these by the scheduler, the
# schedule verifier and the VLIW model alike.
LOAD_KINDS: frozenset[str] = frozenset({"ldx", "ldxsx", "ldx6"})
STORE_KINDS: frozenset[str] = frozenset({"st", "stx", "st6", "stx6"})
MEM_KINDS: frozenset[str] = LOAD_KINDS | STORE_KINDS | {"atomic"}


def memory_ports(kind: str) -> tuple[int, int]:
    """(load ports, store ports) an instruction of this kind takes in its row."""
    return int(kind in LOAD_KINDS or kind == "atomic"), int(kind in STORE_KINDS or kind == "atomic")
