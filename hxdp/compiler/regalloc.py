"""Register renaming onto r0-r15: def-use webs coloured so that unrelated values get different registers."""

from __future__ import annotations

from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import liveness
from hxdp.compiler.ir import FP, Op
from hxdp.errors import CompileError

# Two-address ops read and write the same register: the use and the def must stay in one register.
_INPLACE = frozenset({"alu", "neg", "end", "bswap"})
PHYS = 16


class _UF:
    def __init__(self) -> None:
        self.parent: list[int] = []

    def add(self) -> int:
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def find(self, x: int) -> int:
        p = self.parent
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def union(self, a: int, b: int) -> None:
        a, b = self.find(a), self.find(b)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def _implicit(op: Op) -> set[int]:
    """Registers an op names implicitly (fixed by the ISA): call args/results, exit r0, cmpxchg r0."""
    if op.kind == "call":
        return set(op.uses()) | set(op.defs())
    if op.kind == "exit":
        return {0}
    if op.kind == "atomic" and 0 in op.uses():
        return {0}
    return set()


def allocate(cfg: Cfg, rename: bool = True) -> int:
    """Assign physical registers to every web; returns how many webs changed register."""
    uf = _UF()
    def_reg: list[int] = []  # def id -> register
    fixed: set[int] = set()  # def ids whose web must keep its register
    first_pos: list[int] = []
    # entry pseudo-defs
    entry_def: dict[int, int] = {}
    regs_seen: set[int] = {FP, 1}
    for op in cfg.ops():
        regs_seen |= set(op.uses()) | set(op.defs())
    for r in sorted(regs_seen):
        d = uf.add()
        def_reg.append(r)
        first_pos.append(-1)
        entry_def[r] = d
        if r < PHYS:
            fixed.add(d)
    op_defs: dict[int, dict[int, int]] = {}  # id(op) -> reg -> def id
    pos = 0
    for bid in cfg.order:
        for op in cfg.blocks[bid].ops:
            m = {}
            for r in op.defs():
                d = uf.add()
                def_reg.append(r)
                first_pos.append(pos)
                m[r] = d
                if r in _implicit(op) or r == FP:
                    fixed.add(d)
            op_defs[id(op)] = m
            pos += 1
    ndefs = len(def_reg)
    # reaching definitions (bitsets over def ids)
    gen: dict[int, dict[int, int]] = {}
    for bid in cfg.order:
        g: dict[int, int] = {}
        for op in cfg.blocks[bid].ops:
            for r, d in op_defs[id(op)].items():
                g[r] = d
        gen[bid] = g
    preds = cfg.preds()
    reach_in: dict[int, dict[int, int]] = {b: {} for b in cfg.order}
    reach_out: dict[int, dict[int, int]] = {b: {} for b in cfg.order}
    entry_in = {r: 1 << d for r, d in entry_def.items()}
    changed = True
    while changed:
        changed = False
        for bid in cfg.order:
            inn: dict[int, int] = dict(entry_in) if bid == cfg.entry else {}
            for p in preds[bid]:
                for r, bits in reach_out[p].items():
                    inn[r] = inn.get(r, 0) | bits
            out = dict(inn)
            for r, d in gen[bid].items():
                out[r] = 1 << d
            if inn != reach_in[bid] or out != reach_out[bid]:
                reach_in[bid], reach_out[bid] = inn, out
                changed = True
    del ndefs

    def bits_of(x: int) -> list[int]:
        out = []
        while x:
            low = x & -x
            out.append(low.bit_length() - 1)
            x ^= low
        return out

    # webs: a use joins all its reaching defs; in-place ops join their use and def
    live_in, live_out = liveness(cfg)
    interf: dict[int, set[int]] = {}
    use_web: dict[tuple[int, int], int] = {}
    for bid in cfg.order:
        cur = dict(reach_in[bid])
        for op in cfg.blocks[bid].ops:
            for r in set(op.uses()):
                ds = bits_of(cur.get(r, 0))
                if not ds:
                    raise CompileError(f"{op.where()}: reads r{r} that no path defines")
                for d in ds[1:]:
                    uf.union(ds[0], d)
                use_web[(id(op), r)] = ds[0]
                if r in _implicit(op) or r == FP:
                    fixed.add(ds[0])
            if op.kind in _INPLACE and op.info.op != "mov":
                uf.union(use_web[(id(op), op.dst)], op_defs[id(op)][op.dst])
            if op.kind == "atomic" and op.src in op_defs[id(op)]:
                uf.union(use_web[(id(op), op.src)], op_defs[id(op)][op.src])
            for r, d in op_defs[id(op)].items():
                cur[r] = 1 << d
    # interference: a def interferes with every other value live after it
    for bid in cfg.order:
        ops = cfg.blocks[bid].ops
        cur = dict(reach_in[bid])
        reach_after: list[dict[int, int]] = []
        for op in ops:
            for r, d in op_defs[id(op)].items():
                cur[r] = 1 << d
            reach_after.append(dict(cur))
        live = set(live_out[bid])
        for i in range(len(ops) - 1, -1, -1):
            op = ops[i]
            for r, d in op_defs[id(op)].items():
                w = uf.find(d)
                for lr in live:
                    if lr == r:
                        continue
                    ds = bits_of(reach_after[i].get(lr, 0))
                    if not ds:
                        continue
                    w2 = uf.find(ds[0])
                    if w2 != w:
                        interf.setdefault(w, set()).add(w2)
                        interf.setdefault(w2, set()).add(w)
            live -= set(op.defs())
            live |= set(op.uses())
    # colour
    webs: dict[int, list[int]] = {}
    for d in range(len(def_reg)):
        webs.setdefault(uf.find(d), []).append(d)
    reg_of: dict[int, int] = {}
    web_reg = {w: def_reg[w] for w in webs}
    for w, ds in webs.items():
        regs = {def_reg[d] for d in ds}
        if len(regs) != 1:
            raise CompileError(f"internal error: web mixes registers {sorted(regs)}")
        if any(uf.find(d) == w and d in fixed for d in ds) or web_reg[w] == FP:
            if web_reg[w] >= PHYS:
                raise CompileError("internal error: virtual register with a fixed role")
            reg_of[w] = web_reg[w]
    order = sorted((w for w in webs if w not in reg_of), key=lambda w: (web_reg[w] >= PHYS,
                                                                         min(first_pos[d] for d in webs[w])))
    # copies: a value moved into another web prefers that web's register (the move then disappears)
    prefs: dict[int, list[int]] = {}
    for bid in cfg.order:
        for op in cfg.blocks[bid].ops:
            if op.info.name == "mov64_x" and op.off == 0 and op.dst != op.src:
                u = uf.find(use_web[(id(op), op.src)])
                d = uf.find(op_defs[id(op)][op.dst])
                if u != d:
                    prefs.setdefault(u, []).append(d)
                    prefs.setdefault(d, []).append(u)
    rotation = [11, 12, 13, 14, 15, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5]
    turn = 0
    for w in order:
        taken = {reg_of[n] for n in interf.get(w, ()) if n in reg_of}
        orig = web_reg[w]
        choice = None
        for other in prefs.get(w, ()):
            if other in reg_of and reg_of[other] not in taken and reg_of[other] != FP:
                choice = reg_of[other]
                break
        if choice is not None:
            pass
        elif rename:
            for k in range(len(rotation)):
                cand = rotation[(turn + k) % len(rotation)]
                if cand not in taken:
                    choice = cand
                    turn = (turn + k + 1) % len(rotation)
                    break
        elif orig < PHYS and orig not in taken:
            choice = orig
        else:
            for cand in rotation:
                if cand not in taken:
                    choice = cand
                    break
        if choice is None:
            if rename:
                return _retry_without_rename(cfg)
            first = min(first_pos[d] for d in webs[w])
            raise CompileError(f"op {first}: more values live at once than the 15 registers can hold")
        reg_of[w] = choice
    # rewrite
    moved = sum(1 for w in webs if reg_of[w] != web_reg[w])
    for bid in cfg.order:
        for op in cfg.blocks[bid].ops:
            k = op.kind
            if k in ("call", "exit", "exit_action", "ja"):
                continue
            defs = op_defs[id(op)]
            if op.dst in defs and k != "atomic":
                new_dst = reg_of[uf.find(defs[op.dst])]
            elif (id(op), op.dst) in use_web:
                new_dst = reg_of[uf.find(use_web[(id(op), op.dst)])]
            else:
                new_dst = op.dst
            new_src = op.src
            if op.info.src_reg or k in ("alu3", "ldx", "ldxsx", "ldx6", "stx", "stx6", "atomic"):
                new_src = reg_of[uf.find(use_web[(id(op), op.src)])]
            op.dst, op.src = new_dst, new_src
    for bid in cfg.order:  # moves coalesced into their source register
        b = cfg.blocks[bid]
        b.ops = [op for op in b.ops if not (op.info.name == "mov64_x" and op.off == 0 and op.dst == op.src)]
    return moved


def _retry_without_rename(cfg: Cfg) -> int:
    return allocate(cfg, rename=False)
