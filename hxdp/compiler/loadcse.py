"""Redundant loads: a packet load of bytes every path already loaded, nothing writing them since -> a copy."""

from __future__ import annotations

from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import State, access_of, provenance, transfer
from hxdp.compiler.ir import Op, mov_x

# (region, offset, opcode): packet bytes at an offset from ctx->data. Map values are left out (another core may
# write them between the two loads), and so are the stack and ctx: their loads are cheap (no packet load port) and
# the copy would only hold a register longer (measured: xdp_rxq_info lost a cycle).
Key = tuple[str, int, int]
# Available loads: key -> the loads that may have been the last to read it (all of the same key)
Avail = dict[Key, frozenset[int]]
_LOADS = ("ldx", "ldxsx", "ldx6")
REGIONS = ("pkt",)


def load_key(op: Op, st: State | None) -> Key | None:
    """What a load reads, when it is known exactly and no other core can write it."""
    if op.kind not in _LOADS or st is None:
        return None
    base = st.regs.get(op.base)
    if base is None:
        return None
    if base[0] in REGIONS and base[1] is not None:
        return (base[0], base[1] + op.off, op.opcode)
    return None


def _size(key: Key) -> int:
    return Op(key[2]).size


def _kill(op: Op, st: State | None, avail: Avail) -> None:
    """Drop what op may overwrite: a store's or atomic's bytes (every key of the region when not known), and all
    of it at a helper call: a value kept in a register across a call holds the register for the call's stall, while
    a load after it costs nothing (measured: xdp_router_ipv4 lost 3 cycles keeping its TTL and address)."""
    if op.is_call:
        avail.clear()
        return
    if not (op.is_store or op.is_atomic):
        return
    acc = access_of(op, st)
    proven = acc.region in ("pkt", "stack", "ctx", "map", "handle")
    for key in list(avail):
        region, lo = key[0], key[1]
        if proven and region != acc.region:
            continue  # a pointer proven into another region
        if proven and acc.lo is not None and (acc.lo + acc.size <= lo or lo + _size(key) <= acc.lo):
            continue
        del avail[key]


def _transfer(ops: list[Op], states: dict[int, State], avail: Avail, found: dict[int, frozenset[int]] | None) -> None:
    for op in ops:
        st = states.get(id(op))
        key = load_key(op, st)
        if key is not None:
            if key in avail:
                if found is not None:
                    found[id(op)] = avail[key]
            else:
                avail[key] = frozenset({id(op)})
            continue
        _kill(op, st, avail)


def _meet(a: Avail | None, b: Avail) -> Avail:
    if a is None:
        return dict(b)
    return {k: v | b[k] for k, v in a.items() if k in b}


def _available(cfg: Cfg, states: dict[int, State]) -> tuple[dict[int, Avail], dict[int, Avail]]:
    """Loads available at each block's entry and exit: on every path (the greatest fixpoint; loops converge from
    above)."""
    preds = cfg.preds()
    out: dict[int, Avail] = {}
    ins: dict[int, Avail] = {}
    changed = True
    while changed:
        changed = False
        for bid in cfg.order:
            inn: Avail | None = {} if bid == cfg.entry else None
            for p in preds[bid]:
                if p in out:
                    inn = _meet(inn, out[p])
            if inn is None:
                continue  # no predecessor computed yet
            cur = dict(inn)
            _transfer(cfg.blocks[bid].ops, states, cur, None)
            if ins.get(bid) != inn or out.get(bid) != cur:
                ins[bid], out[bid] = inn, cur
                changed = True
    return ins, out


def _end_state(cfg: Cfg, bid: int, states: dict[int, State]) -> State | None:
    ops = cfg.blocks[bid].ops
    st = states.get(id(ops[-1])) if ops else None
    if st is None:
        return None
    st = st.copy()
    transfer(ops[-1], st, cfg.value_spans, cfg.outer_handles)
    return st


def _join_loads(cfg: Cfg, states: dict[int, State], outs: dict[int, Avail]) -> dict[int, dict[int, frozenset[int]]]:
    """Loads in a join through a pointer that each predecessor knows but the join does not (clang selects one
    of two packet pointers in two branches and loads through it after them): id(load) -> {predecessor: the loads
    that may have been the last to read that predecessor's bytes}, where every predecessor has them available
    and nothing in the join before the load redefines its base or may write them."""
    preds = cfg.preds()
    found: dict[int, dict[int, frozenset[int]]] = {}
    for bid in cfg.order:
        ps = list(dict.fromkeys(preds[bid]))
        if len(ps) < 2 or bid in ps or any(p not in outs for p in ps):
            continue
        ends = {p: _end_state(cfg, p, states) for p in ps}
        if any(st is None for st in ends.values()):
            continue
        local = {p: dict(outs[p]) for p in ps}
        defined: set[int] = set()
        for op in cfg.blocks[bid].ops:
            st = states.get(id(op))
            if op.kind in _LOADS and op.base not in defined and load_key(op, st) is None:
                keys = {p: load_key(op, ends[p]) for p in ps}
                if all(k is not None and k in local[p] for p, k in keys.items()):
                    found[id(op)] = {p: local[p][k] for p, k in keys.items() if k is not None}
            for p in ps:
                _kill(op, st, local[p])
            defined |= set(op.defs())
    return found


def redundant_loads(cfg: Cfg) -> int:
    """A packet load whose bytes every path to it has already loaded (same address, same width and extension)
    with no store or atomic since that may reach them, and no helper call, becomes a copy. The loads that may be
    the last to have read them write one fresh register (and copy it into their own), which the copy reads: it
    holds that value wherever the load was redundant. A load in a join through a pointer each predecessor knows
    (`_join_loads`) reads a fresh register that each predecessor sets from its own loads' register at its end.
    Returns the loads replaced."""
    states = provenance(cfg)
    ins, outs = _available(cfg, states)
    found: dict[int, frozenset[int]] = {}
    for bid in cfg.order:
        if bid in ins:
            _transfer(cfg.blocks[bid].ops, states, dict(ins[bid]), found)
    joins = _join_loads(cfg, states, outs)
    if not found and not joins:
        return 0
    # the loads that feed one redundant load share its register; feeding two joins their groups
    group: dict[int, int] = {}

    def find(x: int) -> int:
        while group.setdefault(x, x) != x:
            x = group[x]
        return x

    for srcs in [*found.values(), *(s for per in joins.values() for s in per.values())]:
        first, *rest = sorted(srcs)
        root = find(first)
        for s in rest:
            group[find(s)] = root
    vreg: dict[int, int] = {}

    def reg_of(x: int) -> int:
        root = find(x)
        if root not in vreg:
            vreg[root] = cfg.new_vreg()
        return vreg[root]

    at_end: dict[int, list[Op]] = {}  # predecessor -> copies into the registers of its joins' loads
    for bid in cfg.order:
        b = cfg.blocks[bid]
        new: list[Op] = []
        for op in b.ops:
            if id(op) in found:
                new.append(mov_x(op.dst, reg_of(min(found[id(op)])), op.slot))
            elif id(op) in joins:
                w = cfg.new_vreg()
                for p, srcs in joins[id(op)].items():
                    at_end.setdefault(p, []).append(mov_x(w, reg_of(min(srcs)), op.slot))
                new.append(mov_x(op.dst, w, op.slot))
            elif id(op) in group:
                v = reg_of(id(op))
                dst = op.dst
                op.dst = v
                new += [op, mov_x(dst, v, op.slot)]
            else:
                new.append(op)
        b.ops = new
    for p, copies in at_end.items():
        ops = cfg.blocks[p].ops
        at = len(ops) - 1 if ops and ops[-1].is_control else len(ops)
        ops[at:at] = copies
    return len(found) + len(joins)
