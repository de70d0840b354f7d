"""The kernel verifier's safety rules the compiler checks itself: no ctx stores, no read-only map writes, bounded loops.

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
from hxdp.models.maps import MapLayout

MAP_UPDATE, MAP_DELETE = params.HELPER_IDS["map_update_elem"], params.HELPER_IDS["map_delete_elem"]


def check(cfg: Cfg, layout: MapLayout) -> None:
    """Raise CompileError for the first context store, read-only map write or unbounded loop."""
    states = provenance(cfg)
    readonly = [r for r in layout.regions if r.flags & params.BPF_F_RDONLY_PROG]
    for bid in cfg.order:
        for op in cfg.blocks[bid].ops:
            st = states.get(id(op))
            if st is not None:
                _check_write(op, st, readonly)
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
        r = next((r for r in layout.regions if 0 <= first - params.MAP_BASE - r.offset < r.size), None)
    else:  # a lookup result, not moved: the value's start
        lo = op.off
        r = next((r for r in layout.regions if (params.MAP_BASE + r.offset, params.MAP_BASE + r.offset + r.size) ==
                  (first, _end)), None)
    if r is None or 0 <= lo and lo + op.size <= r.value_size:
        return
    what = "store" if op.is_store or op.is_atomic else "load"
    raise CompileError(f"{op.where()}: {what} of {op.size} bytes at offset {lo} of a value of map {r.name}, whose "
                       f"values have {r.value_size} bytes (the kernel verifier refuses an access outside the value)")


# --- stores -----------------------------------------------------------------------------------------------------
def _check_write(op: Op, st: State, readonly: list) -> None:
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


def _readonly_target(base: tuple, readonly: list):
    """The read-only map region a map pointer surely points into, or None."""
    if base[1] is not None:  # a known pointer: the map holding its value, when its tag says read-only
        split = params.split_map_tag(base[1] >> params.MAP_TAG_SHIFT)
        if split is None or not split[2]:
            return None
        return next((r for r in readonly if 0 <= split[0] - r.offset < r.size), None)
    span = base[2] if len(base) > 2 else None
    if span is None:
        return None
    return next((r for r in readonly if (params.MAP_BASE + r.offset, params.MAP_BASE + r.offset + r.size) ==
                 (span[0], span[1])), None)


# --- loops ------------------------------------------------------------------------------------------------------
def _loops(cfg: Cfg) -> dict[int, set[int]]:
    """Natural loops: header block -> the blocks of its loop (all back edges to it)."""
    g = cfg.graph()
    dom = nx.immediate_dominators(g, cfg.entry)
    loops: dict[int, set[int]] = {}
    for u, h in g.edges():
        if u not in dom or not _dominates(dom, h, u):
            continue
        body = loops.setdefault(h, {h})
        work = [u]
        while work:
            b = work.pop()
            if b not in body:
                body.add(b)
                work.extend(p for p in g.predecessors(b) if p in dom)
    return loops


def _dominates(dom: dict[int, int], a: int, b: int) -> bool:
    while True:
        if b == a:
            return True
        nxt = dom.get(b)
        if nxt is None or nxt == b:
            return False
        b = nxt


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


def _induction(cfg: Cfg, body: set[int]) -> tuple[set[Loc], set[Loc], set[Loc]]:
    """(locations that change only by constant or loop-invariant steps, or copies of such; locations written in the
    loop that it does not change: only by constants and copies of unchanged locations; locations written)."""
    defs: dict[Loc, list[tuple[str, Loc | None]]] = {}
    for b in body:
        for op in cfg.blocks[b].ops:
            for loc, how, src in _def_of(op):
                defs.setdefault(loc, []).append((how, src))
    inv = set(defs)  # greatest fixpoint: unchanged unless a def says otherwise
    changed = True
    while changed:
        changed = False
        for loc in list(inv):
            if not all(how == "const" or (how == "copy" and (src not in defs or src in inv)) for how, src in defs[loc]):
                inv.discard(loc)
                changed = True
    steps = set(defs) - inv
    changed = True
    while changed:
        changed = False
        for loc in list(steps):
            ok = all(how == "step" or (how == "copy" and (src in steps or src == loc)) or
                     (how == "step_by" and (src not in defs or src in inv)) for how, src in defs[loc])
            if not ok:
                steps.discard(loc)
                changed = True
    return steps, inv, set(defs)


def _check_loops(cfg: Cfg) -> None:
    for header, body in sorted(_loops(cfg).items(), key=lambda kv: cfg.order.index(kv[0])):
        first = next((op for op in cfg.blocks[header].ops), None)
        where = first.where() if first is not None else f"block {header}"
        exits = [b for b in body if any(s not in body for s in cfg.succs(b))]
        if not exits:
            raise CompileError(f"{where}: loop with no exit (the kernel verifier refuses an infinite loop)")
        steps, inv, written = _induction(cfg, body)
        if not any(_bounded_exit(cfg.blocks[b].ops, steps, inv, written) for b in exits):
            raise CompileError(f"{where}: loop without a bound (no exit compares a register that changes by a "
                               "constant step with a constant or a value the loop does not change; the kernel "
                               "verifier refuses what it cannot prove finite)")


def _source(ops: list[Op], loc: Loc) -> Loc | None:
    """What `loc` holds at the end of ops (the exit branch): followed back through the block's copies and stack
    spills; None for a constant."""
    for op in reversed(ops):
        for dloc, how, src in _def_of(op):
            if dloc != loc:
                continue
            if how == "const":
                return None
            if how != "copy" or src == loc:
                return loc
            return _source(ops[: ops.index(op)], src)
    return loc


def _bounded_exit(ops: list[Op], steps: set[Loc], inv: set[Loc], written: set[Loc]) -> bool:
    """The exit branch ending ops compares a stepping location with a constant or one the loop does not change."""
    term = ops[-1] if ops else None
    if term is None or not term.is_cond:
        return False
    body = ops[:-1]
    a = _source(body, term.dst)
    b = _source(body, term.src) if term.info.src_reg else None
    fixed = lambda x: x is None or x in inv or x not in written  # noqa: E731
    return (a in steps and fixed(b)) or (b in steps and fixed(a))
