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
    if base[1] is not None:
        split = params.split_map_tag(base[1] >> params.MAP_TAG_SHIFT)
        return next((r for r in readonly if split is not None and r.id == split[0]), None)
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


def _steps(cfg: Cfg, body: set[int]) -> set[int]:
    """Registers that change inside the loop only by a constant (or loop-invariant) step, or by copies of such."""
    defs: dict[int, list[Op]] = {}
    for b in body:
        for op in cfg.blocks[b].ops:
            for d in op.defs():
                defs.setdefault(d, []).append(op)
    cand = set(defs)
    changed = True
    while changed:
        changed = False
        for r in list(cand):
            if not all(_is_step(op, cand, defs) for op in defs[r]):
                cand.discard(r)
                changed = True
    return {r for r in cand if any(_is_add(op) for op in defs[r])}


def _is_add(op: Op) -> bool:
    return op.kind == "alu" and op.info.op in ("add", "sub") and (op.info.src_reg or op.imm != 0)


def _is_step(op: Op, cand: set[int], defs: dict[int, list[Op]]) -> bool:
    """op adds a constant or loop-invariant step to its register, or copies a stepping register."""
    if op.kind != "alu" or op.off != 0:
        return False
    name = op.info.op
    if name in ("add", "sub"):
        return (not op.info.src_reg and op.imm != 0) or (op.info.src_reg and op.src not in defs)
    return name == "mov" and op.info.src_reg and op.src in cand


def _check_loops(cfg: Cfg) -> None:
    for header, body in sorted(_loops(cfg).items(), key=lambda kv: cfg.order.index(kv[0])):
        first = next((op for op in cfg.blocks[header].ops), None)
        where = first.where() if first is not None else f"block {header}"
        exits = [b for b in body if any(s not in body for s in cfg.succs(b))]
        if not exits:
            raise CompileError(f"{where}: loop with no exit (the kernel verifier refuses an infinite loop)")
        steps = _steps(cfg, body)
        defined = {d for b in body for op in cfg.blocks[b].ops for d in op.defs()}
        if not any(_bounded_exit(cfg.blocks[b].term, steps, defined) for b in exits):
            raise CompileError(f"{where}: loop without a bound (no exit compares a register that changes by a "
                               "constant step with a constant or a value the loop does not change; the kernel "
                               "verifier refuses what it cannot prove finite)")


def _bounded_exit(term: Op | None, steps: set[int], defined: set[int]) -> bool:
    if term is None or not term.is_cond:
        return False
    a = term.dst
    if term.info.src_reg:
        b = term.src
        return (a in steps and b not in defined) or (b in steps and a not in defined)
    return a in steps
