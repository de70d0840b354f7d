"""Random valid XDP programs for compiler equivalence testing (ALU, branches, loops, aliasing memory, maps, helpers)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from hxdp.frontend.program import MapDef, Program
from hxdp.isa import table as T
from hxdp.isa.insn import Insn

B = T.BY_NAME
SCRATCH = (0, 2, 3, 4, 5, 9)  # r1 is rebuilt for calls; r6 ctx, r7 data, r8 counter of loops
ALU_K = ("add", "sub", "mul", "or", "and", "xor", "lsh", "rsh", "arsh", "mov", "div", "mod")
ALU_X = ("add", "sub", "mul", "or", "and", "xor", "mov", "div", "mod")
CONDS = tuple(T.JMP_OPS)
ATOMIC_OPS = (0x00, 0x40, 0x50, 0xA0, 0x01, 0x41, 0x51, 0xA1, 0xE1)


@dataclass
class _Jump:
    insn: Insn
    label: str
    call: bool = False  # bpf-to-bpf call: the label goes into imm


class _Asm:
    def __init__(self) -> None:
        self.items: list[Insn | _Jump | str] = []
        self.n = 0

    def label(self) -> str:
        self.n += 1
        return f"L{self.n}"

    def emit(self, *ins: Insn) -> None:
        self.items += ins

    def jump(self, ins: Insn, label: str, call: bool = False) -> None:
        self.items.append(_Jump(ins, label, call))

    def place(self, label: str) -> None:
        self.items.append(label)

    def assemble(self) -> list[Insn]:
        pos: dict[str, int] = {}
        n = 0
        for it in self.items:
            if isinstance(it, str):
                pos[it] = n
            else:
                n += 1
        out: list[Insn] = []
        for it in self.items:
            if isinstance(it, str):
                continue
            if isinstance(it, _Jump) and it.call:
                out.append(it.insn.with_(imm=pos[it.label] - (len(out) + 1)))
            elif isinstance(it, _Jump):
                out.append(it.insn.with_(off=pos[it.label] - (len(out) + 1)))
            else:
                out.append(it)
        return out


def _op(name: str) -> int:
    return B[name].opcode


class _Gen:
    def __init__(self, rng: random.Random, size: int, map_updates: bool = True) -> None:
        self.map_updates = map_updates
        self.r = rng
        self.a = _Asm()
        self.func = self.a.label()
        self.calls = 0
        self.budget = size
        self.depth = 0
        self.in_loop = False

    def reg(self) -> int:
        return self.r.choice(SCRATCH)

    def imm(self) -> int:
        c = self.r.random()
        if c < 0.5:
            return self.r.randint(-8, 64)
        if c < 0.8:
            return self.r.randint(-(1 << 31), (1 << 31) - 1)
        return self.r.choice((0, 1, -1, 0xFF, 0xFFFF, 0x7FFFFFFF))

    # --- pieces ---------------------------------------------------------------------------------------------
    def alu(self) -> None:
        r, w = self.r, self.r.choice((32, 64))
        d = self.reg()
        if r.random() < 0.5:
            name = r.choice(ALU_K)
            imm = self.imm()
            if name in ("lsh", "rsh", "arsh"):
                imm = r.randrange(w)
            if name == "mov" and r.random() < 0.5:  # mov + op pairs (three-operand ALU)
                s = self.reg()
                self.a.emit(Insn(_op(f"mov{w}_x"), d, s))
                name = r.choice(("add", "sub", "and", "or", "xor", "lsh", "rsh"))
                imm = r.randrange(w) if name in ("lsh", "rsh") else self.imm()
            self.a.emit(Insn(_op(f"{name}{w}_k"), d, 0, 0, imm))
        elif r.random() < 0.85:
            self.a.emit(Insn(_op(f"{r.choice(ALU_X)}{w}_x"), d, self.reg()))
        elif r.random() < 0.5:
            self.a.emit(Insn(_op(f"neg{w}"), d))
        else:
            self.a.emit(Insn(_op(r.choice(("le", "be"))), d, 0, 0, r.choice((16, 32, 64))))

    def pkt(self) -> None:
        r = self.r
        size, name = r.choice(((1, "b"), (2, "h"), (4, "w"), (8, "dw")))
        off = r.randint(0, 60 - size)
        base = 7
        if r.random() < 0.3:  # a second pointer into the packet (aliasing)
            k = r.randint(0, 40)
            base = 1
            self.a.emit(Insn(_op("mov64_x"), 1, 7), Insn(_op("add64_k"), 1, 0, 0, k))
            off = r.randint(-k, 60 - size - k)
        c = r.random()
        if c < 0.5:
            self.a.emit(Insn(_op(f"ldx{name}"), self.reg(), base, off))
        elif c < 0.8:
            self.a.emit(Insn(_op(f"stx{name}"), base, self.reg(), off))
        else:
            self.a.emit(Insn(_op(f"st{name}"), base, 0, off, self.imm()))

    def copy6(self) -> None:
        """6 bytes copied (or two 6-byte fields swapped) inside the packet, as 4+2 or 2+2+2 accesses."""
        r = self.r
        a, b = r.randint(0, 54), r.randint(0, 54)
        src_base = 7
        if r.random() < 0.3:  # from the stack (another region) into the packet
            src_base, a = 10, -r.randint(6, 48)
        parts = r.choice(((4, 2), (2, 4), (2, 2, 2), (1, 1, 2, 2), (1, 1, 1, 1, 1, 1)))
        regs = [2, 3, 4, 5, 0, 9]
        r.shuffle(regs)
        loads, stores = [], []
        names = {1: "b", 2: "h", 4: "w"}
        order = list(enumerate(parts))
        r.shuffle(order)
        offs = [sum(parts[:k]) for k in range(len(parts))]
        for k, size in order:
            reg = regs[k % len(regs)]
            loads.append(Insn(_op(f"ldx{names[size]}"), reg, src_base, a + offs[k]))
            stores.append(Insn(_op(f"stx{names[size]}"), 7, reg, b + offs[k]))
        if len(parts) <= 3 and src_base == 7 and r.random() < 0.5:  # swap: the other direction too
            for k, size in enumerate(parts):
                loads.append(Insn(_op(f"ldx{names[size]}"), regs[3 + k], 7, b + offs[k]))
                stores.append(Insn(_op(f"stx{names[size]}"), 7, regs[3 + k], a + offs[k]))
        if r.random() < 0.5:
            self.a.emit(*loads, *stores)
        else:  # interleaved as clang emits swaps
            half = len(loads) // 2 or 1
            self.a.emit(*loads[:half], *stores[:1], *loads[half:], *stores[1:])

    def field_read(self) -> None:
        """An unaligned header field read byte by byte (or half by half) and assembled with shifts and ors."""
        r, a = self.r, self.a
        size, name = r.choice(((1, "b"), (1, "b"), (2, "h"), (4, "w")))
        w = 64 if size == 4 else r.choice((32, 64))
        k = r.randint(0, 56 - 2 * size)
        hi, lo = r.sample((0, 2, 3, 4, 5, 9), 2)
        shift = 8 * size if r.random() < 0.85 else 8 * size - 1  # sometimes not a plain concatenation
        ld_hi = Insn(_op(f"ldx{name}"), hi, 7, k + size if r.random() < 0.9 else k + size + 1)
        ld_lo = Insn(_op(f"ldx{name}"), lo, 7, k)
        pieces = [ld_hi, ld_lo] if r.random() < 0.5 else [ld_lo, ld_hi]
        if r.random() < 0.2:  # a store in between (may alias)
            pieces.insert(1, Insn(_op("stxb"), 7, self.reg(), k + r.randint(0, 2 * size)))
        a.emit(*pieces, Insn(_op(f"lsh{w}_k"), hi, 0, 0, shift), Insn(_op(f"or{w}_x"), hi, lo))

    def var_check(self) -> None:
        """A bounds check at a variable packet offset, as header parsers do, then accesses it guards."""
        r, a = self.r, self.a
        k = r.choice((8, 14, 20, 40, 70, 100))
        a.emit(Insn(_op("ldxw"), 3, 6, 4), Insn(_op("mov64_x"), 1, self.reg()), Insn(_op("and64_k"), 1, 0, 0, 31),
               Insn(_op("add64_x"), 1, 7), Insn(_op("mov64_x"), 2, 1), Insn(_op("add64_k"), 2, 0, 0, k))
        skip = a.label()
        cond = r.choice((("jgt", 2, 3), ("jge", 2, 3), ("jlt", 3, 2), ("jle", 3, 2)))
        a.jump(Insn(_op(f"{cond[0]}64_x"), cond[1], cond[2]), skip)
        size, name = r.choice(((1, "b"), (2, "h"), (4, "w")))
        off = r.randint(0, k - size)
        if r.random() < 0.6:
            a.emit(Insn(_op(f"ldx{name}"), self.reg(), 1, off))
        else:
            a.emit(Insn(_op(f"stx{name}"), 1, self.reg(), off))
        a.place(skip)

    def stack(self) -> None:
        r = self.r
        size, name = r.choice(((1, "b"), (2, "h"), (4, "w"), (8, "dw")))
        off = -r.randint(size, 64)
        base = 10
        if r.random() < 0.3:
            k = r.randint(0, 32)
            base = 1
            self.a.emit(Insn(_op("mov64_x"), 1, 10), Insn(_op("add64_k"), 1, 0, 0, -k))
            off = off + k
        c = r.random()
        if c < 0.4:
            self.a.emit(Insn(_op(f"ldx{name}"), self.reg(), base, off))
        elif c < 0.7:
            self.a.emit(Insn(_op(f"stx{name}"), base, self.reg(), off))
        else:
            self.a.emit(Insn(_op(f"st{name}"), base, 0, off, 0 if r.random() < 0.5 else self.imm()))

    def atomic(self) -> None:
        r = self.r
        size, name = r.choice(((4, "w"), (8, "dw")))
        off = -r.choice(range(size, 72, size))
        aop = r.choice(ATOMIC_OPS)
        self.a.emit(Insn(_op(f"atomic{name}"), 10, self.reg(), off, aop))

    def map_op(self) -> None:
        r = self.r
        m = r.randrange(2)
        key_reg = self.reg()
        self.a.emit(Insn(_op("and64_k"), key_reg, 0, 0, 7), Insn(_op("stxw"), 10, key_reg, -80))
        self.a.emit(Insn(0x18, 1, T.PSEUDO_MAP_FD, 0, m), Insn(0, 0, 0, 0, 0))
        self.a.emit(Insn(_op("mov64_x"), 2, 10), Insn(_op("add64_k"), 2, 0, 0, -80))
        if r.random() < 0.6 or not self.map_updates:
            self.a.emit(Insn(_op("call"), 0, 0, 0, 1))
            skip = self.a.label()
            self.a.jump(Insn(_op("jeq64_k"), 0, 0, 0, 0), skip)
            v = r.choice((3, 4, 5, 9))
            c = r.random()
            if c < 0.3:  # read-modify-write of a counter (becomes an atomic add)
                self.a.emit(Insn(_op("ldxdw"), v, 0, 0), Insn(_op("add64_k"), v, 0, 0, r.randint(-3, 9)),
                            Insn(_op("stxdw"), 0, v, 0), Insn(_op("ldxdw"), v, 0, 0))
            elif c < 0.45:
                v, w = r.choice((3, 4, 5)), 9  # r1-r5 are dead after the call: add the callee-saved r9
                self.a.emit(Insn(_op("ldxw"), v, 0, 4), Insn(_op("add32_x"), v, w), Insn(_op("stxw"), 0, v, 4))
            else:
                self.a.emit(Insn(_op("ldxdw"), v, 0, 0), Insn(_op("add64_x"), v, v))
                if r.random() < 0.5:
                    self.a.emit(Insn(_op("atomicdw"), 0, v, 0, 0x00))
                else:
                    self.a.emit(Insn(_op("stxdw"), 0, v, 0))
            self.a.emit(Insn(_op("stxw"), 7, v, r.randint(14, 56)))
            self.a.place(skip)
        else:
            self.a.emit(Insn(_op("stxdw"), 10, self.reg(), -88))
            self.a.emit(Insn(_op("mov64_x"), 3, 10), Insn(_op("add64_k"), 3, 0, 0, -88))
            self.a.emit(Insn(_op("mov64_k"), 4, 0, 0, 0), Insn(_op("call"), 0, 0, 0, 2))
        self.reinit()

    def helper(self) -> None:
        r = self.r
        if r.random() < 0.5:
            self.a.emit(Insn(_op("call"), 0, 0, 0, 8))  # smp processor id
        else:
            self.a.emit(Insn(_op("mov64_x"), 1, 10), Insn(_op("add64_k"), 1, 0, 0, -16),
                        Insn(_op("mov64_k"), 2, 0, 0, 8),
                        Insn(_op("mov64_x"), 3, 10), Insn(_op("add64_k"), 3, 0, 0, -32),
                        Insn(_op("mov64_k"), 4, 0, 0, 8), Insn(_op("mov64_x"), 5, self.r.choice((0, 9))),
                        Insn(_op("call"), 0, 0, 0, 28))
        self.reinit(keep0=True)

    def local_call(self) -> None:
        """A bpf-to-bpf call: the callee clobbers its own r6-r9 and stack frame (inlined by the compiler)."""
        self.a.emit(Insn(_op("mov64_x"), 1, self.reg()), Insn(_op("mov64_x"), 2, self.reg()))
        self.a.jump(Insn(_op("call"), 0, T.CALL_LOCAL, 0, 0), self.func, call=True)
        self.calls += 1
        self.reinit(keep0=True)

    def function(self) -> None:
        a, r = self.a, self.r
        a.place(self.func)
        a.emit(Insn(_op("mov64_x"), 6, 1), Insn(_op("mov64_x"), 7, 2), Insn(_op("stxdw"), 10, 6, -8),
               Insn(_op("stxw"), 10, 7, -12), Insn(_op("mov64_k"), 8, 0, 0, r.randint(0, 99)),
               Insn(_op("mov64_k"), 9, 0, 0, r.randint(0, 99)), Insn(_op("xor64_x"), 6, 7))
        skip = a.label()
        a.jump(Insn(_op("jgt64_k"), 6, 0, 0, r.randint(0, 1 << 20)), skip)
        a.emit(Insn(_op("ldxdw"), 0, 10, -8), Insn(_op("add64_x"), 0, 8), Insn(_op("exit")))
        a.place(skip)
        a.emit(Insn(_op("ldxw"), 0, 10, -12), Insn(_op("add64_x"), 0, 6), Insn(_op("add64_x"), 0, 9),
               Insn(_op("exit")))

    def reinit(self, keep0: bool = False) -> None:
        """After a call r1-r5 are clobbered: give the scratch registers new values."""
        for reg in (2, 3, 4, 5):
            self.a.emit(Insn(_op("ldxdw" if self.r.random() < 0.5 else "ldxw"), reg, 7, self.r.randint(0, 52)))
        if not keep0:
            self.a.emit(Insn(_op("mov64_k"), 0, 0, 0, self.imm()))

    def cond(self) -> Insn:
        r = self.r
        c = r.choice(CONDS)
        w = r.choice((32, 64))
        if r.random() < 0.5:
            return Insn(_op(f"{c}{w}_k"), self.reg(), 0, 0, r.randint(-4, 300) if r.random() < 0.8 else self.imm())
        return Insn(_op(f"{c}{w}_x"), self.reg(), self.reg())

    def exit_seq(self) -> None:
        r = self.r
        if r.random() < 0.6:
            self.a.emit(Insn(_op("mov64_k"), 0, 0, 0, r.choice((1, 2, 3, 2, 1))))
        else:
            self.a.emit(Insn(_op("and64_k"), 0, 0, 0, 3))
        self.a.emit(Insn(_op("exit")))

    def block(self, n: int) -> None:
        while n > 0 and self.budget > 0:
            c = self.r.random()
            self.budget -= 1
            n -= 1
            if c < 0.26:
                self.alu()
            elif c < 0.37:
                self.pkt()
            elif c < 0.48:
                self.stack()
            elif c < 0.51:
                self.atomic()
            elif c < 0.56:
                self.map_op()
            elif c < 0.58:
                self.helper()
            elif c < 0.61:
                self.copy6()
            elif c < 0.63:
                self.local_call()
            elif c < 0.66:
                self.var_check()
            elif c < 0.69:
                self.field_read()
            elif c < 0.84 and self.depth < 3:
                self.depth += 1
                skip = self.a.label()
                self.a.jump(self.cond(), skip)
                self.block(self.r.randint(1, 5))
                if self.r.random() < 0.3:
                    self.exit_seq()
                if self.r.random() < 0.4:  # else branch
                    end = self.a.label()
                    self.a.jump(Insn(_op("ja")), end)
                    self.a.place(skip)
                    self.block(self.r.randint(1, 4))
                    self.a.place(end)
                else:
                    self.a.place(skip)
                self.depth -= 1
            elif c < 0.90 and not self.in_loop and self.depth < 3:
                self.in_loop = True
                self.depth += 1
                self.a.emit(Insn(_op("mov64_k"), 8, 0, 0, self.r.randint(1, 4)))
                top = self.a.label()
                self.a.place(top)
                self.block(self.r.randint(1, 5))
                self.a.emit(Insn(_op("add64_k"), 8, 0, 0, -1))
                self.a.jump(Insn(_op("jne64_k"), 8, 0, 0, 0), top)
                self.in_loop = False
                self.depth -= 1
            else:
                self.alu()


def random_program(seed: int, size: int = 40, map_updates: bool = True) -> Program:
    """A valid program of roughly `size` generated pieces: verifier-style bounds check, then random code.
    map_updates=False leaves out bpf_map_update_elem (for engines that do not implement it yet)."""
    rng = random.Random(seed)
    g = _Gen(rng, size, map_updates)
    a = g.a
    out = a.label()
    a.emit(Insn(_op("mov64_x"), 6, 1), Insn(_op("ldxw"), 7, 6, 0), Insn(_op("ldxw"), 8, 6, 4))
    a.emit(Insn(_op("mov64_x"), 2, 7), Insn(_op("add64_k"), 2, 0, 0, 60))
    a.jump(Insn(_op("jgt64_x"), 2, 8), out)
    if rng.random() < 0.5:  # zeroing of a stack buffer (removable)
        for off in range(-24, 0, 8):
            a.emit(Insn(_op("stdw"), 10, 0, off, 0))
    for reg in SCRATCH:
        a.emit(Insn(_op("mov64_k"), reg, 0, 0, g.imm()))
    g.block(size)
    g.exit_seq()
    a.place(out)
    a.emit(Insn(_op("mov64_k"), 0, 0, 0, 1), Insn(_op("exit")))
    functions = {0: f"rand{seed}"}
    if g.calls:
        g.function()
    insns = a.assemble()
    if g.calls:
        first = next(i for i, ins in enumerate(insns) if ins.opcode == 0x85 and ins.src == T.CALL_LOCAL)
        functions[first + 1 + insns[first].imm] = "f"
    maps = [MapDef("arr", 2, 4, 8, 4), MapDef("hsh", 1, 4, 8, 8)]
    return Program(f"rand{seed}", "xdp", insns, maps, functions=functions)


def random_packets(seed: int, count: int = 4) -> list[bytes]:
    rng = random.Random(seed ^ 0x5EED)
    return [bytes(rng.randrange(256) for _ in range(rng.randint(60, 128))) for _ in range(count)]
