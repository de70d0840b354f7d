"""Instruction reduction (paper 3.1): packet bounds checks, zeroing of never-written stack bytes, dead code."""

from __future__ import annotations

from hxdp import params
from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import is_zero_store, live_after, liveness, provenance, stack_bits
from hxdp.compiler.ir import HELPER_RESULT, ja

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
