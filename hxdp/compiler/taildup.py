"""Tail duplication: small exit blocks, and small joins entered by a jump, copied into their predecessors."""

from __future__ import annotations

import networkx as nx

from hxdp.compiler.cfg import Cfg

# a join region copied into each predecessor: at most this many ops, and all copies together at most this fraction
# of the program's ops
JOIN_DUP_MAX = 64
JOIN_DUP_GROWTH = 1.5


def duplicate_exits(cfg: Cfg, max_ops: int = 8) -> int:
    """Copy small exit blocks (at most max_ops ops ending in `exit`/`exit K`) into predecessors that jump or fall
    into them, until none is left: a path then ends without a taken `ja`. Each copy turns a predecessor into an
    exit block, so this terminates."""
    n = 0
    changed = True
    while changed:
        changed = False
        for bid in list(cfg.order):
            b = cfg.blocks[bid]
            t = b.term
            if t is not None and t.is_cond:
                continue
            succ = t.target if (t is not None and t.kind == "ja") else (b.fall if t is None else None)
            if succ is None or succ == bid:
                continue
            s = cfg.blocks[succ]
            if not s.ops or s.ops[-1].kind not in ("exit", "exit_action") or len(s.ops) > max_ops:
                continue
            if t is not None:
                b.ops.pop()
            b.ops += [op.copy() for op in s.ops]
            b.fall = None
            n += 1
            changed = True
        if changed:
            cfg.simplify()
    return n


def _dominated(cfg: Cfg, jid: int, idom: dict[int, int]) -> list[int]:
    """The blocks jid dominates (itself included), in layout order."""
    out = []
    for bid in cfg.order:
        b = bid
        while b != jid and idom.get(b, b) != b:
            b = idom[b]
        if b == jid:
            out.append(bid)
    return out


def _copy_region(cfg: Cfg, region: list[int]) -> dict[int, int]:
    """Fresh copies of the blocks of region, their edges inside it renamed (edges out of it kept); old -> new."""
    new = {bid: cfg.new_block().id for bid in region}
    for bid in region:
        b, c = cfg.blocks[bid], cfg.blocks[new[bid]]
        c.ops = [op.copy() for op in b.ops]
        t = c.term
        if t is not None and t.is_branch and t.target in new:
            t.target = new[t.target]
        c.fall = new.get(b.fall, b.fall) if b.fall is not None else None
    return new


def _jumps_into(cfg: Cfg, p: int, jid: int) -> bool:
    """Does p reach jid by a jump the core takes: a `ja`, or a fall-through from a block not laid out just before
    jid (the trace then ends with a `ja`)?"""
    b = cfg.blocks[p]
    t = b.term
    if t is not None and t.kind == "ja":
        return t.target == jid
    if t is not None:
        return False  # a conditional branch or an exit: its edges are not unconditional jumps
    at = cfg.order.index(p)
    return b.fall == jid and (at + 1 >= len(cfg.order) or cfg.order[at + 1] != jid)


def duplicate_joins(cfg: Cfg, max_ops: int = JOIN_DUP_MAX, growth: float = JOIN_DUP_GROWTH) -> int:
    """Tail duplication for superblocks: a join J (several predecessors, not in a loop) and the blocks it
    dominates, at most max_ops ops, get a copy for each predecessor that jumps into J unconditionally
    (`_jumps_into`). That path then continues in one trace instead of paying a taken jump at a trace boundary,
    and the analyses see on the copy what its predecessor knows (a pointer that clang selected between two
    branches is one known pointer on each copy: the loads through it become copies, hxdp.compiler.loadcse).
    Joins are taken from the last in layout order up, so a copied region already holds the copies of the joins
    below it. The region's blocks that leave it go to blocks that were joins already, so no block that was
    entered from one predecessor gets several. All copies together hold at most `growth` times the program's
    ops."""
    budget = int(cfg.count() * growth)
    n = 0
    done: set[int] = set()
    while True:
        pick = _next_join(cfg, done, max_ops, budget)
        if pick is None:
            break
        jid, ps, region, size = pick
        done.add(jid)
        for p in ps:
            new = _copy_region(cfg, region)
            pb = cfg.blocks[p]
            t = pb.term
            if t is not None and t.kind == "ja":
                t.target = new[jid]
            pb.fall = new[jid] if pb.fall == jid else pb.fall
            at = cfg.order.index(p) + 1
            cfg.order[at:at] = [new[b] for b in region]
            budget -= size
            done.update(new.values())
        n += len(ps)
    if n:
        cfg.simplify()
    return n


def _next_join(cfg: Cfg, done: set[int], max_ops: int, budget: int) -> tuple[int, list[int], list[int], int] | None:
    """The last join in layout order worth copying: (join, the predecessors that get a copy, its region, ops)."""
    g = cfg.graph()
    in_cycle = {b for c in nx.strongly_connected_components(g) if len(c) > 1 for b in c}
    in_cycle |= {b for b in cfg.order if b in cfg.succs(b)}
    idom = nx.immediate_dominators(g, cfg.entry)
    preds = cfg.preds()
    for jid in reversed(cfg.order):
        ps = list(dict.fromkeys(preds[jid]))
        if jid == cfg.entry or len(ps) < 2 or jid in in_cycle or jid in done:
            continue
        jumps = [p for p in ps if _jumps_into(cfg, p, jid)]
        if len(jumps) == len(ps):
            jumps = jumps[1:]  # one of them keeps the original
        if not jumps:
            continue
        region = _dominated(cfg, jid, idom)
        size = sum(len(cfg.blocks[b].ops) for b in region)
        if size > max_ops or size * len(jumps) > budget or any(b in in_cycle for b in region):
            continue
        if any(op.is_call for b in region for op in cfg.blocks[b].ops):
            continue  # a helper's stall dwarfs the jump saved, and each copy of a call's setup costs rows
        if _exit_only(cfg, region):
            continue  # an exit block: duplicate_exits copies it (with no trace to continue, only a row is saved)
        return jid, jumps, region, size
    return None


def _exit_only(cfg: Cfg, region: list[int]) -> bool:
    """A region of one block that ends the program."""
    return len(region) == 1 and bool(cfg.blocks[region[0]].ops) and cfg.blocks[region[0]].ops[-1].is_exit
