"""The verifier's rules the compiler checks itself: no ctx stores or read-only map writes, map values, bounded loops.

Run on the CFG as the object gives it, before any pass. Each refusal is one CompileError naming the slot and its
instruction (compile_program adds the object and the program). These hold without the kernel; the checks are
deliberately narrower than the verifier (docs/compiler.md lists what they accept), so that no program the kernel
accepts is refused, while the hardware still faults what slips past them (execution contract section 4).
"""

from __future__ import annotations

import networkx as nx

from hxdp import params
from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import State, provenance
from hxdp.compiler.ir import Op
from hxdp.errors import CompileError
from hxdp.models.maps import OUTER_KINDS, MapLayout, MapRegion

MAP_UPDATE, MAP_DELETE = params.HELPER_IDS["map_update_elem"], params.HELPER_IDS["map_delete_elem"]


def check(cfg: Cfg, layout: MapLayout) -> None:
    """Raise CompileError for the first context store, read-only map write, access outside a map value or loop
    without a bound."""
    states = provenance(cfg)
    readonly = [r for r in layout.regions if r.prog_rdonly]
    outer = {params.MAP_HANDLE_BASE + r.id: r for r in layout.regions if r.kind in OUTER_KINDS}
    for bid in cfg.order:
        for op in cfg.blocks[bid].ops:
            st = states.get(id(op))
            if st is not None:
                _check_write(op, st, readonly)
                _check_map_of_maps(op, st, outer)
                _check_value_bounds(op, st, layout)
    _check_loops(cfg)


# --- map values ---------------------------------------------------------------------------------------------------
def _check_value_bounds(op: Op, st: State, layout: MapLayout) -> None:
    """An access at a known offset from a map-value pointer of one known map stays inside the value."""
    if not (op.is_load or op.is_store or op.is_atomic):
        return
    base = st.regs.get(op.base)
    if base is None or base[0] != "map" or len(base) < 3 or base[2] is None:
        return
    first, _end, vsize = base[2]
    if base[1] is not None:  # a known pointer (global data, an inlined lookup): its offset in the value
        lo = (base[1] & 0xFFFFFFFF) + op.off - first
        r = next((r for r in layout.regions if 0 <= first - r.base < r.size), None)
    else:  # a lookup result, not moved: the value's start
        lo = op.off
        r = next((r for r in layout.regions if (r.base, r.base + r.size) ==
                  (first, _end)), None)
    if r is None or 0 <= lo and lo + op.size <= r.value_size:
        return
    what = "store" if op.is_store or op.is_atomic else "load"
    raise CompileError(f"{op.where()}: {what} of {op.size} bytes at offset {lo} of a value of map {r.name}, whose "
                       f"values have {r.value_size} bytes (the kernel verifier refuses an access outside the value)")


# --- maps of maps ---------------------------------------------------------------------------------------------
def _check_map_of_maps(op: Op, st: State, outer: dict[int, MapRegion]) -> None:
    """Maps of maps: a program only looks them up (the kernel verifier refuses an update or delete: their slots are
    the host's); what a lookup returns is a map handle for map helpers (the kernel lets a program read its struct
    bpf_map through it, which the NIC has not: refused)."""
    if op.is_call and op.src == 0 and op.imm in (MAP_UPDATE, MAP_DELETE):
        handle = st.regs.get(1)
        r = outer.get(handle[1]) if handle is not None and handle[0] == "handle" else None
        if r is not None:
            raise CompileError(f"{op.where()}: {params.HELPERS[op.imm]} on the map of maps {r.name} (the kernel "
                               "verifier refuses it: the host sets its slots)")
    if op.is_load or op.is_store or op.is_atomic:
        base = st.regs.get(op.base)
        if base is not None and base[0] == "handle":
            if op.is_store or op.is_atomic:
                raise CompileError(f"{op.where()}: store through a map handle (an inner map a lookup in a map of "
                                   "maps returned; the kernel verifier refuses it)")
            raise CompileError(f"{op.where()}: not supported: a load through a map handle (an inner map a lookup in "
                               "a map of maps returned), because it reads the kernel's struct bpf_map, which the "
                               "NIC does not have: pass the handle to map helpers only")


# --- stores -----------------------------------------------------------------------------------------------------
def _check_write(op: Op, st: State, readonly: list[MapRegion]) -> None:
    if op.is_call and op.src == 0 and op.imm in (MAP_UPDATE, MAP_DELETE):
        handle = st.regs.get(1)
        if handle is not None and handle[0] == "handle" and handle[1] is not None:
            r = next((r for r in readonly if params.MAP_HANDLE_BASE + r.id == handle[1]), None)
            if r is not None:
                what = params.HELPERS[op.imm]
                raise CompileError(f"{op.where()}: {what} on the read-only map {r.name} (the kernel verifier "
                                   "refuses writes into a map with BPF_F_RDONLY_PROG)")
        return
    if not (op.is_store or op.is_atomic):
        return
    base = st.regs.get(op.dst)
    if base is None:
        return
    if base[0] == "ctx":
        raise CompileError(f"{op.where()}: store into the context (struct xdp_md is read-only to an XDP program; "
                           "the kernel verifier refuses it)")
    if base[0] == "map":
        r = _readonly_target(base, readonly)
        if r is not None:
            raise CompileError(f"{op.where()}: store into the read-only map {r.name} (a .rodata constant or a map "
                               "with BPF_F_RDONLY_PROG; the kernel verifier refuses it)")


def _readonly_target(base: tuple, readonly: list[MapRegion]) -> MapRegion | None:
    """The read-only map region a map pointer surely points into, or None."""
    if base[1] is not None:  # a known pointer: the map holding its value, when its tag says read-only
        tier = params.tier_of(base[1])
        split = params.split_map_tag(base[1] >> params.MAP_TAG_SHIFT, tier) if tier else None
        if split is None or not split[2]:
            return None
        return next((r for r in readonly if r.tier == tier and 0 <= split[0] - r.offset < r.size), None)
    span = base[2] if len(base) > 2 else None
    if span is None:
        return None
    return next((r for r in readonly if (r.base, r.base + r.size) ==
                 (span[0], span[1])), None)


# --- loops ------------------------------------------------------------------------------------------------------
def _loops(cfg: Cfg) -> dict[int, set[int]]:
    """Natural loops: header block -> the blocks of its loop (all back edges to it)."""
    g = cfg.graph()
    dom = nx.immediate_dominators(g, cfg.entry)
    span = _dom_intervals(dom, cfg.entry)
    loops: dict[int, set[int]] = {}
    for u, h in g.edges():
        if u not in dom or not _dominates(span, h, u):
            continue
        body = loops.setdefault(h, {h})
        work = [u]
        while work:
            b = work.pop()
            if b not in body:
                body.add(b)
                work.extend(p for p in g.predecessors(b) if p in dom)
    return loops


def _dom_intervals(dom: dict[int, int], entry: int) -> dict[int, tuple[int, int]]:
    """Each block's (enter, leave) times in a walk of the dominator tree: a dominates b when b's interval lies in
    a's (a test in constant time; walking up the tree per edge is quadratic in a long straight program)."""
    children: dict[int, list[int]] = {}
    for b, idom in dom.items():
        if b != idom:
            children.setdefault(idom, []).append(b)
    span: dict[int, tuple[int, int]] = {}
    enter: dict[int, int] = {}
    clock = 0
    stack: list[tuple[int, bool]] = [(entry, False)]
    while stack:
        b, done = stack.pop()
        if done:
            span[b] = (enter[b], clock)
            clock += 1
            continue
        enter[b] = clock
        clock += 1
        stack.append((b, True))
        stack.extend((c, False) for c in children.get(b, ()))
    return span


def _dominates(span: dict[int, tuple[int, int]], a: int, b: int) -> bool:
    sa, sb = span.get(a), span.get(b)
    return sa is not None and sb is not None and sa[0] <= sb[0] and sb[1] <= sa[1]


Loc = int | tuple[str, int]  # a register, or ("s", off): the stack slot at r10 + off


def _def_of(op: Op) -> list[tuple[Loc, str, Loc | None]]:
    """What op does to the registers and stack slots it writes: (location, how, source). how is "step" (a constant
    add), "step_by" (an add of source), "copy" (of source), "const" or "other"."""
    k, info = op.kind, op.info
    if op.is_store:
        if op.dst != 10:
            return []  # (a store through another pointer: not followed, the check stays lenient)
        if k in ("st", "st6"):
            return [(("s", op.off), "const", None)]
        return [(("s", op.off), "copy" if k in ("stx", "stx6") else "other", op.src)]
    if op.is_atomic:
        out: list[tuple[Loc, str, Loc | None]] = [(d, "other", None) for d in op.defs()]
        return out + ([(("s", op.off), "other", None)] if op.dst == 10 else [])
    defs = op.defs()
    if k == "alu" and op.off == 0 and info.op in ("add", "sub"):
        if info.src_reg:
            return [(op.dst, "step_by", op.src)]
        return [(op.dst, "step" if op.imm else "copy", op.dst)]
    if k == "alu" and op.off == 0 and info.op == "mov":
        return [(op.dst, "copy", op.src) if info.src_reg else (op.dst, "const", None)]
    if k == "lddw":
        return [(op.dst, "const", None)]
    if k in ("ldx", "ldx6") and op.src == 10:
        return [(op.dst, "copy", ("s", op.off))]
    return [(d, "other", None) for d in defs]


# A value in a loop, followed back to the loop's header, is a set of what it may be: FIXED (a constant, or what a
# location held before the loop and the loop never changed), SMALL (data below 2^16: a narrow load, a mask), DATA
# (memory the loop reads, a helper's result, arithmetic not followed) or (location, stepped): what the location held
# at the header, plus constant (or fixed) steps if stepped. Paths that join give the union.
FIXED, DATA, SMALL = "fixed", "data", "small"
Atom = str | tuple[Loc, bool]
Value = frozenset[Atom]
_FIXED, _DATA, _SMALL = frozenset({FIXED}), frozenset({DATA}), frozenset({SMALL})


class _LoopValues:
    """Flow-sensitive values of registers and stack slots in one natural loop (reaching definitions, followed back
    through copies, spills and constant steps to the loop's header)."""

    def __init__(self, cfg: Cfg, header: int, body: set[int]) -> None:
        self.cfg, self.header, self.body = cfg, header, body
        preds = cfg.preds()
        self.preds = {b: [p for p in preds[b] if p in body] for b in body}
        self.memo: dict[tuple[int, int, Loc], Value] = {}

    def before(self, block: int, idx: int, loc: Loc) -> Value:
        """What loc may hold just before op idx of block."""
        key = (block, idx, loc)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = _DATA  # a cycle not through the header: not followed
        ops = self.cfg.blocks[block].ops
        out: Value | None = None
        for i in range(idx - 1, -1, -1):
            d = next(((how, src) for dloc, how, src in _def_of(ops[i]) if dloc == loc), None)
            if d is not None:
                out = self._assigned(block, i, loc, *d)
                break
        if out is None:
            if block == self.header:
                out = frozenset({(loc, False)})
            else:
                out = frozenset().union(*(self.before(p, len(self.cfg.blocks[p].ops), loc) for p in self.preds[block]))
        self.memo[key] = out or _DATA
        return self.memo[key]

    def _assigned(self, block: int, i: int, loc: Loc, how: str, src: Loc | None) -> Value:
        op = self.cfg.blocks[block].ops[i]
        if how == "const":
            return _FIXED
        if how == "copy":
            return self.before(block, i, src)
        prev = self.before(block, i, loc)
        if how in ("step", "step_by"):
            by = _FIXED if how == "step" else self.before(block, i, src)
            if self.fixed(by):
                return frozenset((a[0], True) if isinstance(a, tuple) else a for a in prev)
            return _DATA
        if op.kind == "alu" and op.off == 0:  # other arithmetic: fixed only on fixed operands
            other = self.before(block, i, op.src) if op.info.src_reg else _FIXED
            if self.fixed(prev) and self.fixed(other):
                return _FIXED
            return _SMALL if _small(op) else _DATA
        return _SMALL if op.kind in ("ldx", "ldx6") and op.size <= 2 else _DATA

    def at_latches(self, loc: Loc) -> Value:
        """What loc may hold when the loop goes round again (at the ends of the header's predecessors in it)."""
        return frozenset().union(*(self.before(p, len(self.cfg.blocks[p].ops), loc) for p in self.preds[self.header]))

    def fixed(self, v: Value, assuming: frozenset[Loc] = frozenset()) -> bool:
        """v does not change from one pass to the next after the first: constants, and header values the loop
        gives back unchanged or sets to such."""
        for a in v:
            if a == FIXED:
                continue
            if a in (DATA, SMALL) or a[1]:
                return False
            if a[0] not in assuming and not self.fixed(self.at_latches(a[0]), assuming | {a[0]}):
                return False
        return True

    def stepped(self, v: Value) -> bool:
        """v is one header location that the loop steps by a constant (or fixed) amount on its way round."""
        locs = {a[0] for a in v if isinstance(a, tuple)}
        if len(locs) != 1 or len(v) != sum(isinstance(a, tuple) for a in v):
            return False
        loc = locs.pop()
        back = self.at_latches(loc)
        return (loc, True) in back and all(isinstance(a, tuple) and a[0] == loc for a in back)

    def small(self, v: Value) -> bool:
        return all(a == SMALL for a in v) or (SMALL in v and self.fixed(v - _SMALL))


def _check_loops(cfg: Cfg) -> None:
    for header, body in sorted(_loops(cfg).items(), key=lambda kv: cfg.order.index(kv[0])):
        first = next((op for op in cfg.blocks[header].ops), None)
        where = first.where() if first is not None else f"block {header}"
        exits = [b for b in body if any(s not in body for s in cfg.succs(b))]
        if not exits:
            raise CompileError(f"{where}: loop with no exit (the kernel verifier refuses an infinite loop)")
        values = _LoopValues(cfg, header, body)
        try:
            bounded = any(_bounded_exit(values, b) for b in exits)
        except RecursionError:  # a loop too long to follow: left to the run time (the cycle limit)
            bounded = True
        if not bounded:
            raise CompileError(f"{where}: loop without a bound (every exit depends on data the loop reads or "
                               "computes, none compares a register stepped by a constant with a constant or a value "
                               "the loop does not change; the kernel verifier refuses what it cannot prove finite)")


def _bounded_exit(values: _LoopValues, block: int) -> bool:
    """The exit branch ending block compares a stepped value with a fixed one, or two fixed values (decided after
    the loop's first pass: left to the run time, where the cycle limit stops a loop that never leaves)."""
    ops = values.cfg.blocks[block].ops
    term = ops[-1] if ops else None
    if term is None or not term.is_cond:
        return False
    n = len(ops) - 1
    a = values.before(block, n, term.dst)
    b = values.before(block, n, term.src) if term.info.src_reg else _FIXED
    if values.stepped(a) and (values.fixed(b) or values.small(b)) or \
            values.stepped(b) and (values.fixed(a) or values.small(a)):
        return True
    return values.fixed(a) and values.fixed(b)


def _small(op: Op) -> bool:
    """op leaves a value below 2^16 whatever its input: a mask or a long right shift."""
    name, imm = op.info.op, op.imm
    if op.info.src_reg:
        return False
    if name == "and":
        return 0 <= imm < 1 << 16
    return name == "rsh" and imm >= (48 if op.info.width == 64 else 16)
