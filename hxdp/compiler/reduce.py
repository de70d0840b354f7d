"""Instruction reduction (paper 3.1): packet bounds checks, never-written stack zeroing, dead stores, dead code."""

from __future__ import annotations

from hxdp import params
from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import ALL_STACK, State, is_zero_store, live_after, liveness, provenance, stack_bits
from hxdp.compiler.ir import HELPER_RESULT, Op, ja

# (condition, pointer on the left) -> "never" | "always" | "never<" | "always<" (the last two need K < 60)
_BOUNDS = {
    ("jgt", True): "never", ("jsgt", True): "never",
    ("jge", True): "never<", ("jsge", True): "never<",
    ("jle", True): "always", ("jsle", True): "always",
    ("jlt", True): "always<", ("jslt", True): "always<",
    ("jlt", False): "never", ("jslt", False): "never",
    ("jle", False): "never<", ("jsle", False): "never<",
    ("jge", False): "always", ("jsge", False): "always",
    ("jgt", False): "always<", ("jsgt", False): "always<",
}


def remove_bounds_checks(cfg: Cfg) -> int:
    """Delete `data + K <op> data_end` checks with 0 <= K <= PKT_MIN_LEN that no adjust call can precede."""
    states = provenance(cfg)
    removed = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        t = b.term
        if t is None or not t.is_cond or not t.info.src_reg or id(t) not in states or HELPER_RESULT in t.tags:
            continue  # (a lowered helper's check computes its result: it guards no access)
        st = states[id(t)]
        if st.adjusted:
            continue
        a, c = st.regs.get(t.dst), st.regs.get(t.src)
        if a is not None and a[0] == "pkt" and c == ("end",):
            k, left = a[1], True
        elif c is not None and c[0] == "pkt" and a == ("end",):
            k, left = c[1], False
        else:
            continue
        if k is None or not 0 <= k <= params.PKT_MIN_LEN:
            continue
        verdict = _BOUNDS.get((t.info.op, left))
        if verdict is None:
            continue
        if verdict.endswith("<"):
            if k >= params.PKT_MIN_LEN:
                continue
            verdict = verdict[:-1]
        if verdict == "never":
            b.ops.pop()
        else:
            new = ja(t.target, t.slot)
            new.text = t.text
            b.ops[-1] = new
            b.fall = None
        removed += 1
    if removed:
        cfg.simplify()
    return removed


def remove_zeroing(cfg: Cfg) -> int:
    """Delete stores of zero to stack bytes that no path can have written before (the stack starts zeroed)."""
    total = 0
    for _ in range(4):
        states = provenance(cfg)
        removed = 0
        for bid in cfg.order:
            b = cfg.blocks[bid]
            keep = []
            for op in b.ops:
                st = states.get(id(op))
                rng = is_zero_store(op, st) if st is not None else None
                if rng is not None and -params.STACK_SIZE <= rng[0] and rng[1] <= 0 \
                        and not (st.written & stack_bits(rng)):
                    removed += 1
                    continue
                keep.append(op)
            b.ops = keep
        total += removed
        if not removed:
            break
    return total


def _stack_access(op: Op, st: State | None) -> tuple[int, int | None]:
    """(stack bytes op may read, stack bytes it surely writes: None when it writes no known stack range)."""
    if op.is_call:
        return ALL_STACK, None  # a helper may read any stack buffer (a key, a value, a format)
    if not (op.is_load or op.is_store or op.is_atomic):
        return 0, None
    base = st.regs.get(op.base) if st is not None else None
    known = base is not None and base[0] == "stack" and base[1] is not None
    rng = (base[1] + op.off, base[1] + op.off + op.size) if known else None
    if rng is not None and not (-params.STACK_SIZE <= rng[0] and rng[1] <= 0):
        rng = None
    reads = 0
    if op.is_load or op.is_atomic:
        if rng is not None:
            reads = stack_bits(rng)
        elif base is None or base[0] in ("stack", "scalar"):
            reads = ALL_STACK
    return reads, (stack_bits(rng) if op.is_store and rng is not None else None)


def dead_stack_stores(cfg: Cfg) -> int:
    """Delete stores to stack bytes that nothing reads before they are written again or the program exits (the
    key of an array lookup that was inlined, a spill never reloaded): the stack is not observable after exit."""
    states = provenance(cfg)
    acc = {id(op): _stack_access(op, states.get(id(op))) for b in cfg.order for op in cfg.blocks[b].ops}
    live_in = {b: 0 for b in cfg.order}
    changed = True
    while changed:  # backward liveness of stack bytes
        changed = False
        for bid in reversed(cfg.order):
            live = 0
            for s in cfg.succs(bid):
                live |= live_in[s]
            for op in reversed(cfg.blocks[bid].ops):
                if op.is_exit:
                    live = 0
                reads, kills = acc[id(op)]
                live = (live & ~(kills or 0)) | reads
            if live != live_in[bid]:
                live_in[bid], changed = live, True
    removed = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        live = 0
        for s in cfg.succs(bid):
            live |= live_in[s]
        keep: list[Op] = []
        for op in reversed(b.ops):
            if op.is_exit:
                live = 0
            reads, kills = acc[id(op)]
            if kills is not None and not op.is_atomic and id(op) in states and not live & kills:
                removed += 1
                continue
            live = (live & ~(kills or 0)) | reads
            keep.append(op)
        b.ops = keep[::-1]
    return removed


PURE_KINDS = frozenset({"alu", "alu3", "neg", "end", "bswap", "lddw", "ldx", "ldxsx", "ldx6"})


def dead_code(cfg: Cfg) -> int:
    """Delete side-effect-free ops whose results are never read; drop unreachable blocks."""
    cfg.simplify()
    total = 0
    while True:
        _, live_out = liveness(cfg)
        removed = 0
        for bid in cfg.order:
            b = cfg.blocks[bid]
            after = live_after(b.ops, live_out[bid])
            keep = []
            for op, live in zip(b.ops, after, strict=True):
                if op.kind in PURE_KINDS and not (set(op.defs()) & live):
                    removed += 1
                    continue
                keep.append(op)
            b.ops = keep
        total += removed
        if not removed:
            break
    cfg.simplify()
    return total
