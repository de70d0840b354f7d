"""Register renaming onto r0-r15: def-use webs coloured so that unrelated values get different registers."""

from __future__ import annotations

from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import DefSites, def_ids, def_sites, liveness, reaching_after, reaching_defs
from hxdp.compiler.ir import FP, Op
from hxdp.errors import CompileError

# Two-address ops read and write the same register: the use and the def must stay in one register.
_INPLACE = frozenset({"alu", "neg", "end", "bswap"})
PHYS = 16
# Registers a web with no preference takes in turn (renaming spreads values so the scheduler sees fewer false
# dependences): the extra registers first, as no eBPF convention claims them; r0-r5 last, as calls clobber them.
ROTATION = (11, 12, 13, 14, 15, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5)
# (id(op), register it reads) -> a def of the web that read belongs to
UseWebs = dict[tuple[int, int], int]


class RegisterPressure(CompileError):
    """More values live at once than the registers hold (the compiler may retry with fewer long-lived values)."""


class _UF:
    """Union-find over def ids; the root of a set is its lowest def id."""

    def __init__(self, n: int) -> None:
        self.parent: list[int] = list(range(n))

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


def allocate(cfg: Cfg, rename: bool = True, regs: int = PHYS) -> int:
    """Assign physical registers r0..r{regs-1} to every web; returns how many webs changed register. Without
    `rename`, a web keeps its register where it can (used when renaming runs out of registers)."""
    sites = def_sites(cfg)
    reach_in = reaching_defs(cfg, sites)
    uf = _UF(len(sites.reg))
    fixed = _fixed_defs(cfg, sites)
    use_web = _join_webs(cfg, sites, reach_in, uf, fixed)
    interf = _interference(cfg, sites, reach_in, uf)
    webs: dict[int, list[int]] = {}
    for d in range(len(sites.reg)):
        webs.setdefault(uf.find(d), []).append(d)
    reg_of = _precoloured(webs, sites, fixed)
    order = sorted((w for w in webs if w not in reg_of),
                   key=lambda w: (sites.reg[w] >= PHYS, min(sites.pos[d] for d in webs[w])))
    stuck = _colour(order, sites, interf, _copy_preferences(cfg, sites, uf, use_web), reg_of, rename, regs)
    if stuck is not None:
        if rename:
            return allocate(cfg, rename=False, regs=regs)  # nothing was rewritten yet
        first = min(sites.pos[d] for d in webs[stuck])
        raise RegisterPressure(f"op {first}: more values live at once than the {regs - 1} registers can hold")
    _rewrite(cfg, sites, uf, use_web, reg_of)
    return sum(1 for w in webs if reg_of[w] != sites.reg[w])


def _fixed_defs(cfg: Cfg, sites: DefSites) -> set[int]:
    """Defs whose web must keep its register: entry values of physical registers, implicit operands, r10."""
    fixed = {d for r, d in sites.entry.items() if r < PHYS}
    for op in cfg.ops():
        implicit = _implicit(op)
        fixed |= {d for r, d in sites.at[id(op)].items() if r in implicit or r == FP}
    return fixed


def _join_webs(cfg: Cfg, sites: DefSites, reach_in: dict[int, dict[int, int]], uf: _UF, fixed: set[int]) -> UseWebs:
    """Webs: a use joins all the defs reaching it; in-place ops join their use and def. Uses of implicit operands
    fix their web's register too."""
    use_web: UseWebs = {}
    for bid in cfg.order:
        cur = dict(reach_in[bid])
        for op in cfg.blocks[bid].ops:
            defs = sites.at[id(op)]
            for r in set(op.uses()):
                ds = def_ids(cur.get(r, 0))
                if not ds:
                    raise CompileError(f"{op.where()}: reads r{r} that no path defines")
                for d in ds[1:]:
                    uf.union(ds[0], d)
                use_web[(id(op), r)] = ds[0]
                if r in _implicit(op) or r == FP:
                    fixed.add(ds[0])
            if op.kind in _INPLACE and op.info.op != "mov":
                uf.union(use_web[(id(op), op.dst)], defs[op.dst])
            if op.kind == "atomic" and op.src in defs:
                uf.union(use_web[(id(op), op.src)], defs[op.src])
            for r, d in defs.items():
                cur[r] = 1 << d
    return use_web


def _interference(cfg: Cfg, sites: DefSites, reach_in: dict[int, dict[int, int]], uf: _UF) -> dict[int, set[int]]:
    """Web -> webs it interferes with: a def interferes with every other value live after it."""
    _, live_out = liveness(cfg)
    interf: dict[int, set[int]] = {}
    for bid in cfg.order:
        ops = cfg.blocks[bid].ops
        after = reaching_after(ops, reach_in[bid], sites)
        live = set(live_out[bid])
        for i in range(len(ops) - 1, -1, -1):
            op = ops[i]
            for r, d in sites.at[id(op)].items():
                w = uf.find(d)
                for lr in live - {r}:
                    ds = def_ids(after[i].get(lr, 0))
                    w2 = uf.find(ds[0]) if ds else w  # (a register with no def reaching: no value to clash)
                    if w2 != w:
                        interf.setdefault(w, set()).add(w2)
                        interf.setdefault(w2, set()).add(w)
            live -= set(op.defs())
            live |= set(op.uses())
    return interf


def _precoloured(webs: dict[int, list[int]], sites: DefSites, fixed: set[int]) -> dict[int, int]:
    """Webs that keep their register (a fixed def, or the frame pointer): web -> register."""
    reg_of: dict[int, int] = {}
    for w, ds in webs.items():
        regs = {sites.reg[d] for d in ds}
        if len(regs) != 1:
            raise CompileError(f"internal error: web mixes registers {sorted(regs)}")
        if any(d in fixed for d in ds) or sites.reg[w] == FP:
            if sites.reg[w] >= PHYS:
                raise CompileError("internal error: virtual register with a fixed role")
            reg_of[w] = sites.reg[w]
    return reg_of


def _copy_preferences(cfg: Cfg, sites: DefSites, uf: _UF, use_web: UseWebs) -> dict[int, list[int]]:
    """A value moved into another web prefers that web's register (the move then disappears), both ways."""
    prefs: dict[int, list[int]] = {}
    for op in cfg.ops():
        if op.info.name == "mov64_x" and op.off == 0 and op.dst != op.src:
            u = uf.find(use_web[(id(op), op.src)])
            d = uf.find(sites.at[id(op)][op.dst])
            if u != d:
                prefs.setdefault(u, []).append(d)
                prefs.setdefault(d, []).append(u)
    return prefs


def _colour(order: list[int], sites: DefSites, interf: dict[int, set[int]], prefs: dict[int, list[int]],
            reg_of: dict[int, int], rename: bool, regs: int = PHYS) -> int | None:
    """Give each web of `order` a register below `regs` (into reg_of); returns the first web that found none."""
    rotation = tuple(r for r in ROTATION if r < regs)
    turn = 0
    for w in order:
        taken = {reg_of[n] for n in interf.get(w, ()) if n in reg_of}
        choice = next((reg_of[o] for o in prefs.get(w, ())
                       if o in reg_of and reg_of[o] not in taken and reg_of[o] != FP), None)
        if choice is None and rename:
            for k in range(len(rotation)):
                cand = rotation[(turn + k) % len(rotation)]
                if cand not in taken:
                    choice = cand
                    turn = (turn + k + 1) % len(rotation)
                    break
        elif choice is None and sites.reg[w] < regs and sites.reg[w] not in taken:
            choice = sites.reg[w]
        elif choice is None:
            choice = next((cand for cand in rotation if cand not in taken), None)
        if choice is None:
            return w
        reg_of[w] = choice
    return None


def _rewrite(cfg: Cfg, sites: DefSites, uf: _UF, use_web: UseWebs, reg_of: dict[int, int]) -> None:
    """Every register field gets its web's register; moves coalesced into their source register disappear."""
    for op in cfg.ops():
        k = op.kind
        if k in ("call", "exit", "exit_action", "ja"):
            continue
        defs = sites.at[id(op)]
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
    for bid in cfg.order:
        b = cfg.blocks[bid]
        b.ops = [op for op in b.ops if not (op.info.name == "mov64_x" and op.off == 0 and op.dst == op.src)]
