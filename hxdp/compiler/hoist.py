"""Code motion across blocks for the scheduler: pure ops hoisted above branches into an earlier trace.

To a taken branch's target, or from a join to its immediate dominator, when they cannot fault and nothing the
other paths see changes.
"""

from __future__ import annotations

from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import State, access_of, liveness, speculation_safe_load, use_kill
from hxdp.compiler.ir import FP, Op

_PURE = frozenset({"alu", "alu3", "neg", "end", "bswap", "lddw", "ldx", "ldxsx", "ldx6"})
HOIST_MAX = 4
# blocks between a dominator and its join that join hoisting looks through: a region that reaches the rest of the
# program (a side exit that does not come back) costs a walk of the whole program per join, quadratic in its size,
# and nothing moves over it anyway (the rest of the program reads or writes almost every register)
JOIN_REGION_MAX = 64


def hoist_candidates(cfg: Cfg, br: Op, p: int, x: int, live_in: dict[int, set[int]],
                      states: dict[int, State]) -> list[Op]:
    """Ops at the top of x (only predecessor p, reached when br is taken) that may run before br on every path:
    no side effects, no fault, and a destination that the fall-through path does not read."""
    fall = cfg.blocks[p].fall
    live_fall = live_in.get(fall, set()) if fall is not None else set()
    br_uses = set(br.uses())
    moved: list[Op] = []
    blocked_defs: set[int] = set()
    blocked_uses: set[int] = set()
    store_seen = False
    for op in cfg.blocks[x].ops:
        if op.is_control or op.is_call:
            break
        d, u = set(op.defs()), set(op.uses())
        ok = op.kind in _PURE and not (u & blocked_defs) and not (d & (blocked_defs | blocked_uses)) \
            and not (d & live_fall) and not (d & br_uses)
        if ok and op.is_load:
            ok = not store_seen and speculation_safe_load(op, states.get(id(op)))
        if ok:
            moved.append(op)
            if len(moved) >= HOIST_MAX:
                break
        else:
            blocked_defs |= d
            blocked_uses |= u
            store_seen = store_seen or op.is_store or op.is_atomic
    return moved



_REG_ONLY = ("alu", "alu3", "lddw", "neg", "end", "bswap")



def hoist_into_dominator(cfg: Cfg) -> int:
    """`D: ...; if c goto J` / `P: (only from D) ...; J: x = ...`: register-only ops from the top of the join J
    move to the end of D (before its branch), so they can be scheduled with D's superblock. Moved ops have no
    side effect and cannot fault; P neither reads nor writes what they write nor writes what they read; what they
    write is dead at P's other successors and not read by D's branch (the `a || b` condition pattern). They
    read only values D does not compute and no other moved op's result, so they never delay D's branch."""
    preds = cfg.preds()
    live_in, _ = liveness(cfg)
    n = 0
    for jid in list(cfg.order):
        ps = preds.get(jid, [])
        if len(ps) != 2 or jid == cfg.entry:
            continue
        for d, p in (ps, ps[::-1]):
            if preds.get(p) != [d] or d == jid or p == jid or set(cfg.succs(d)) != {p, jid}:
                continue
            db, pb, jb = cfg.blocks[d], cfg.blocks[p], cfg.blocks[jid]
            dt = db.term
            if dt is None or not dt.is_cond:
                continue
            p_uses = {r for op in pb.ops for r in op.uses()}
            p_defs = {r for op in pb.ops for r in op.defs()}
            other_live = set().union(*(live_in[s] for s in cfg.succs(p) if s != jid))
            d_defs = {r for op in db.ops for r in op.defs()}
            blocked_use: set[int] = set()
            blocked_def: set[int] = set(d_defs)  # inputs available when D starts: the branch need not wait
            moved: list[Op] = []
            for op in jb.ops:
                us, ds = set(op.uses()), set(op.defs())
                ok = (op.kind in _REG_ONLY and not op.is_control and ds and 10 not in ds
                      and not (us & blocked_def) and not (ds & (blocked_use | blocked_def))
                      and not (ds & (p_uses | p_defs | other_live)) and not (us & p_defs)
                      and not (ds & set(dt.uses())))
                if ok:
                    moved.append(op)
                else:
                    blocked_use |= us
                blocked_def |= ds
            if moved:
                moved_ids = {id(m) for m in moved}
                jb.ops = [op for op in jb.ops if id(op) not in moved_ids]
                db.ops[-1:-1] = moved
                n += len(moved)
                # only P's and J's live-in change: D's does not (the moved ops read what D passed to J and
                # write what is dead on D's other paths), so nothing above D does either
                relive(cfg, live_in, {d, p, jid}, {})
            break
    return n


def join_region(cfg: Cfg, d: int, jid: int, limit: int | None = None) -> set[int] | None:
    """Blocks reachable from D's successors without passing through D or J (between D and J, and side exits);
    None when there are more than `limit`."""
    region: set[int] = set()
    work = [s for s in cfg.succs(d) if s != jid]
    while work:
        b = work.pop()
        if b in region or b in (d, jid):
            continue
        region.add(b)
        if limit is not None and len(region) > limit:
            return None
        work += cfg.succs(b)
    return region


def relive(cfg: Cfg, live_in: dict[int, set[int]], blocks: set[int], hoisted: dict[int, set[int]]) -> None:
    """Recompute live_in of `blocks` after ops moved among them (the live-in of every other block is unchanged:
    a moved op reads and writes nothing the blocks around them see differently). Least fixpoint over `blocks`,
    the others as boundary; the registers hoisted into a block's predecessors stay live at it."""
    order = [b for b in cfg.order if b in blocks]
    use: dict[int, set[int]] = {}
    kill: dict[int, set[int]] = {}
    for b in order:
        use[b], kill[b] = use_kill(cfg.blocks[b].ops)
        live_in[b] = set()
    changed = True
    while changed:
        changed = False
        for b in reversed(order):
            out: set[int] = set()
            for sb in cfg.succs(b):
                out |= live_in.get(sb, set())
            inn = use[b] | (out - kill[b]) | hoisted.get(b, set())
            if inn != live_in[b]:
                live_in[b] = inn
                changed = True


def join_candidates(cfg: Cfg, d: int, jid: int, states: dict[int, State], live_in: dict[int, set[int]]) -> list[Op]:
    """Pure ops at the top of the join J that may move to the end of its immediate dominator D (before D's
    branch), so D's superblock can schedule them early instead of after the diamond or chain of branches between
    D and J (the region). A moved op reads nothing the region or J's unmoved ops before it write, writes nothing
    they read or write nor anything live where the region or D leave it other than into J, and does not feed
    D's branch. A load must be one that cannot fault (it now runs on every path through D), with no call in
    the region and no store in the region or above it in J that may overlap it."""
    db, jb = cfg.blocks[d], cfg.blocks[jid]
    dt = db.term
    if dt is None or not dt.is_cond:
        return []
    region = join_region(cfg, d, jid, JOIN_REGION_MAX)
    if region is None:
        return []
    r_ops = [op for b in region for op in cfg.blocks[b].ops]
    r_defs = {r for op in r_ops for r in op.defs()}
    r_uses = {r for op in r_ops for r in op.uses()}
    r_call = any(op.is_call for op in r_ops)
    stores = [access_of(op, states.get(id(op))) for op in r_ops if op.is_store or op.is_atomic]
    leave = {s for b in region | {d} for s in cfg.succs(b) if s not in region and s != jid}
    other_live = set().union(*(live_in.get(s, set()) for s in leave))
    blocked_def: set[int] = set()
    blocked_use: set[int] = set(dt.uses())
    moved: list[Op] = []
    for op in jb.ops:
        if op.is_control or op.is_call:
            break
        us, ds = set(op.uses()), set(op.defs())
        ok = (op.kind in _PURE and bool(ds) and FP not in ds and not (us & (r_defs | blocked_def))
              and not (ds & (r_uses | r_defs | blocked_use | blocked_def | other_live)))
        if ok and op.is_load:
            st = states.get(id(op))
            acc = access_of(op, st)
            ok = not r_call and speculation_safe_load(op, st) and all(acc.disjoint(a) for a in stores)
        if ok:
            moved.append(op)
            if len(moved) >= HOIST_MAX:
                break
            continue
        blocked_use |= us
        blocked_def |= ds
        if op.is_store or op.is_atomic:
            stores.append(access_of(op, states.get(id(op))))
    return moved
