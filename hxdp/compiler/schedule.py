"""Superblock list scheduling into VLIW rows (Bernstein conditions as the execution contract defines them)."""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from hxdp import params
from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import Access, State, access_of, liveness, provenance, speculation_safe_load
from hxdp.compiler.hoist import hoist_candidates, hoist_into_dominator, join_candidates, join_region, relive
from hxdp.compiler.ir import Op, inverted, ja
from hxdp.errors import CompileError
from hxdp.isa import table as T


@dataclass
class Node:
    op: Op
    idx: int  # position in the trace
    preds: list[tuple[int, int]] = field(default_factory=list)  # (node, latency)
    succs: list[tuple[int, int]] = field(default_factory=list)
    prio: int = 0
    row: int = -1
    acc: Access | None = None
    addr: tuple | None = None  # (value-number root, constant offset) of a memory access within the trace
    footprint: list[Access] | None = None  # a helper call's memory, when known (None: any memory)

    def disjoint(self, o: Node) -> bool:
        assert self.acc is not None and o.acc is not None
        if self.addr is not None and o.addr is not None and self.addr[0] == o.addr[0]:
            return self.addr[1] + self.acc.size <= o.addr[1] or o.addr[1] + o.acc.size <= self.addr[1]
        return self.acc.disjoint(o.acc)


@dataclass
class Schedule:
    rows: list[list[Op]]  # lane order; lddw occupies one entry (expanded at emission)
    start: dict[int, int]  # block id -> first row
    disjoint_stores: set[tuple[int, int, int]] = field(default_factory=set)  # (row, lane a, lane b) proven
    regions: dict[tuple[int, int], str] = field(default_factory=dict)  # (row, lane) memory op -> its proven region


def form_traces(cfg: Cfg, superblocks: bool = True) -> list[list[int]]:
    """Chains of blocks entered only at the top: each next block's only predecessor is the previous block."""
    preds = cfg.preds()
    seen: set[int] = set()
    traces: list[list[int]] = []
    for bid in cfg.order:
        if bid in seen:
            continue
        trace = [bid]
        seen.add(bid)
        while superblocks:
            cur = cfg.blocks[trace[-1]]
            t = cur.term
            nxt = None
            if t is None:
                s = cur.fall
                if s is not None and s not in seen and len(preds[s]) == 1:
                    nxt = s
            elif t.kind == "ja":
                s = t.target
                if s is not None and s not in seen and len(preds[s]) == 1 and s != cfg.entry:
                    cur.ops.pop()
                    cur.fall = s
                    nxt = s
            elif t.is_cond:
                s = cur.fall
                if s is not None and s not in seen and len(preds[s]) == 1:
                    nxt = s
                else:
                    s2 = t.target
                    inv = inverted(t)
                    if s2 is not None and s2 not in seen and len(preds[s2]) == 1 and inv is not None \
                            and s2 != cfg.entry:
                        inv.target = cur.fall
                        cur.ops[-1] = inv
                        cur.fall = s2
                        nxt = s2
            if nxt is None or nxt == cfg.entry:
                break
            trace.append(nxt)
            seen.add(nxt)
        traces.append(trace)
    return traces


class _TraceScheduler:
    def __init__(self, ops: list[Op], blocks_of: list[int], states: dict[int, State], live_in: dict[int, set[int]],
                 lanes: int, speculate: bool, spans: dict[int, tuple[int, int, int]] | None = None) -> None:
        self.spans = spans or {}
        self.lanes = lanes
        self.nodes = [Node(op, i) for i, op in enumerate(ops)]
        self.blocks_of = blocks_of
        self.states = states
        self.live_in = live_in
        self.speculate = speculate
        self._build()

    def _edge(self, a: int, b: int, lat: int) -> None:
        self.nodes[b].preds.append((a, lat))
        self.nodes[a].succs.append((b, lat))

    def _speculable(self, j: Node, br: Node) -> bool:
        """May j (after branch br in the trace) run even when br is taken?"""
        if not self.speculate:
            return False
        op = j.op
        if op.is_store or op.is_atomic or op.is_call or op.is_control:
            return False
        if op.is_load and not speculation_safe_load(op, self.states.get(id(op))):
            return False
        target = br.op.target
        live = self.live_in.get(target, set()) if target is not None else set()
        return not (set(op.defs()) & live)

    def _build(self) -> None:
        last_def: dict[int, int] = {}
        readers: dict[int, list[int]] = {}
        mem: list[int] = []
        branches: list[int] = []
        since_branch: list[int] = []
        vn: dict[int, tuple] = {}  # register -> (root, constant): local value numbering of addresses
        tail: int | None = None  # the last tail call so far

        def value(r: int) -> tuple:
            return vn.get(r, (("entry", r), 0))

        for n in self.nodes:
            op = n.op
            j = n.idx
            uses = set(op.uses())
            # the hardware call writes only r0 (r1-r5 are dead after it, not rewritten): a new argument may be
            # set up in the row of the previous call
            defs = {0} if op.is_call else set(op.defs())
            if op.is_mem:
                root, c = value(op.base)
                n.addr = (root, c + op.off)
            name = op.info.name
            if name == "mov64_x":
                nv = value(op.src)
            elif name == "add64_k":
                root, c = value(op.dst)
                nv = (root, c + op.imm)
            elif name == "add64_3":
                root, c = value(op.src)
                nv = (root, c + op.imm)
            else:
                nv = None
            for r in defs:
                vn[r] = nv if (nv is not None and r == op.dst) else (("def", j, r), 0)
            for r in uses:
                if r in last_def:
                    lat = 0 if (op.kind == "exit" and r == 0) else 1
                    self._edge(last_def[r], j, lat)
            for r in defs:
                if r in last_def:
                    self._edge(last_def[r], j, 1)
                for rd in readers.get(r, ()):
                    if rd != j:
                        self._edge(rd, j, 0)
            for r in uses:
                readers.setdefault(r, []).append(j)
            for r in defs:
                last_def[r] = j
                readers[r] = []
            # memory
            if op.is_mem or op.is_call:
                if op.is_mem:
                    n.acc = access_of(op, self.states.get(id(op)))
                else:
                    n.footprint = call_footprint(op, self.states.get(id(op)), self.spans)
                for i in reversed(mem):
                    p = self.nodes[i]
                    if p.op.is_call:
                        helper = params.HELPERS.get(p.op.imm)
                        if op.is_load and helper in NO_MEMORY_WRITES:
                            continue  # the helper wrote no memory: the load may run beside or before it
                        if op.is_mem and p.footprint is not None and all(a.disjoint(n.acc) for a in p.footprint):
                            continue  # the helper's memory and this access do not meet
                        # no stop here: a call with a footprint is not ordered after the accesses outside it, so
                        # an earlier access may still conflict with this one (a packet load before a map lookup
                        # must stay before a later adjust_head)
                        self._edge(i, j, 1)
                        continue
                    if op.is_call:
                        if n.footprint is not None and all(a.disjoint(p.acc) for a in n.footprint):
                            continue
                        self._edge(i, j, 1 if (p.acc.store) else 0)
                        continue
                    assert p.acc is not None and n.acc is not None
                    if not (p.acc.store or n.acc.store):
                        continue
                    if p.op.is_atomic or op.is_atomic:
                        if not p.disjoint(n):
                            self._edge(i, j, 1)
                        continue
                    if p.disjoint(n):
                        continue
                    self._edge(i, j, 1 if p.acc.store else 0)
                mem.append(j)
            # a tail call leaves the program when it succeeds: what comes before it runs no later than its row,
            # what comes after it runs in a later row (the jump discards that row's lanes, not their stores)
            if tail is not None:
                self._edge(tail, j, 1)
            if op.is_call and op.imm == TAIL_CALL:
                for i in range(j):
                    self._edge(i, j, 0)
                tail = j
            # control
            if op.is_control:
                for i in since_branch:
                    self._edge(i, j, 0)
                if branches:
                    self._edge(branches[-1], j, 0)
                since_branch = []
                branches.append(j)
            else:
                for b in reversed(branches):
                    if not self._speculable(n, self.nodes[b]):
                        self._edge(b, j, 1)
                        break
                since_branch.append(j)
        # priorities: longest latency-weighted path to the end (+1 per op)
        for n in reversed(self.nodes):
            best = 0
            for s, lat in n.succs:
                best = max(best, self.nodes[s].prio + lat)
            n.prio = best + 1

    def run(self) -> list[list[Node]]:
        nodes = self.nodes
        waiting = [len(n.preds) for n in nodes]
        earliest = [0] * len(nodes)
        ready = [n.idx for n in nodes if waiting[n.idx] == 0]
        rows: list[list[Node]] = []
        done = 0
        t = 0
        while done < len(nodes):
            row: list[Node] = []
            used = 0
            calls = 0
            atomics = 0
            memops = 0
            divs = 0
            muls = 0
            port_loads: dict[str, int] = {}
            port_stores: dict[str, int] = {}
            closed: set[str] = set()  # memories the row's helper call writes itself: no lane stores there
            progress = True
            while progress:
                progress = False
                cands = sorted((i for i in ready if earliest[i] <= t), key=lambda i: (-nodes[i].prio, i))
                for i in cands:
                    op = nodes[i].op
                    need = op.slots
                    if used + need > self.lanes:
                        continue
                    if op.is_call and calls:
                        continue
                    if op.is_div and divs:  # a second division would wait for the first (one divider)
                        continue
                    if op.is_mul and muls >= params.MUL_UNITS:  # the core's multipliers
                        continue
                    takes = _ports(nodes[i])
                    if any(port_loads.get(m, 0) + nl > params.PORT_RULES[m][2] or
                           port_stores.get(m, 0) + ns > params.PORT_RULES[m][3] for m, (nl, ns) in takes.items()):
                        continue
                    hreg = params.HELPER_WRITE_REGIONS.get(params.HELPERS.get(op.imm, "")) if op.is_call else None
                    if hreg is not None and port_stores.get(hreg, 0):
                        continue
                    if any(ns and m in closed for m, (_nl, ns) in takes.items()):
                        continue
                    # the helper reads through the lanes' load ports: fewer loads beside a call
                    if op.is_call and any(port_loads.get(m, 0) > n for m, n in params.CALL_ROW_LOADS.items()):
                        continue
                    if calls and any(port_loads.get(m, 0) + takes.get(m, (0, 0))[0] > n
                                     for m, n in params.CALL_ROW_LOADS.items()):
                        continue
                    if op.is_atomic and memops:
                        continue
                    if op.is_mem and atomics:
                        continue
                    # place
                    used += need
                    calls += op.is_call
                    divs += op.is_div
                    muls += op.is_mul
                    for m, (nl, ns) in takes.items():
                        port_loads[m] = port_loads.get(m, 0) + nl
                        port_stores[m] = port_stores.get(m, 0) + ns
                    if hreg is not None:
                        closed.add(hreg)
                    atomics += op.is_atomic
                    memops += op.is_mem
                    nodes[i].row = t
                    row.append(nodes[i])
                    ready.remove(i)
                    done += 1
                    for s, lat in nodes[i].succs:
                        earliest[s] = max(earliest[s], t + lat)
                        waiting[s] -= 1
                        if waiting[s] == 0:
                            ready.append(s)
                    progress = True
                    break
            if not row:
                raise CompileError(f"internal error: scheduling deadlock at {nodes[ready[0]].op.where()}"
                                   if ready else "internal error: scheduling deadlock")
            rows.append(row)
            t += 1
        while rows and not rows[-1]:
            rows.pop()
        return rows


def _lane_order(row: list[Node]) -> list[Op]:
    wide = [n for n in row if n.op.kind == "lddw"]
    plain = [n for n in row if n.op.kind != "lddw" and not n.op.is_control]
    ctrl = sorted((n for n in row if n.op.is_control), key=lambda n: n.idx)
    return [n.op for n in wide + plain + ctrl]


_LOOKUP = params.HELPER_IDS["map_lookup_elem"]
_REDIRECT_MAP = params.HELPER_IDS["redirect_map"]


def call_footprint(op: Op, st: State | None, spans: dict[int, tuple[int, int, int]]) -> list[Access] | None:
    """The memory a helper call may read or write, when the analysis bounds it; None means any memory.

    redirect_map reads one slot of its map (its key is a register), every slot for a broadcast; map_lookup_elem
    reads its key on the stack and the map's region (LRU maps also refresh a stamp there): both stay inside the
    region of the map r1 names.
    """
    if st is None or op.imm not in (_LOOKUP, _REDIRECT_MAP):
        return None
    handle = st.regs.get(1)
    span = spans.get(handle[1]) if handle is not None and handle[0] == "handle" else None
    if span is None:
        return None
    region = Access("map", None, 1, store=op.imm == _LOOKUP, load=True, span=(span[0], span[1]))
    if op.imm == _REDIRECT_MAP:
        return [region]
    return [region, Access("stack", None, 1, store=False, load=True)]


TAIL_CALL = params.HELPER_IDS["tail_call"]
# helpers that write no memory a load could read (their result is r0 only; a lookup returns a pointer)
NO_MEMORY_WRITES = frozenset({"map_lookup_elem", "ktime_get_ns", "ktime_get_coarse_ns", "get_prandom_u32",
                              "get_smp_processor_id",
                              "redirect", "redirect_map", "csum_diff", "trace_printk"})


def schedule(cfg: Cfg, lanes: int, superblocks: bool = True, speculate: bool = True) -> Schedule:
    """Schedule the whole program; branch ops keep block-id targets (resolved by emit)."""
    if speculate:
        hoist_into_dominator(cfg)
    traces = form_traces(cfg, superblocks)
    cfg.check()
    states = provenance(cfg)
    live_in, _ = liveness(cfg)
    preds = cfg.preds()
    heads = [t[0] for t in traces]
    trace_of = {t[0]: i for i, t in enumerate(traces)}
    block_trace = {bid: i for i, t in enumerate(traces) for bid in t}
    joins_of: dict[int, list[int]] = {}  # D -> the joins J (several predecessors) D immediately dominates
    if speculate:
        g = cfg.graph()
        in_cycle = {b for c in nx.strongly_connected_components(g) if len(c) > 1 for b in c}
        in_cycle |= {b for b in cfg.order if b in cfg.succs(b)}
        for jid, d in nx.immediate_dominators(g, cfg.entry).items():
            # not in a loop: ops of a block that runs again must stay in it
            if jid != cfg.entry and d != jid and len(preds.get(jid, ())) > 1 and jid not in in_cycle:
                joins_of.setdefault(d, []).append(jid)
    hoisted: dict[int, set[int]] = {}  # block -> registers set for it by ops hoisted into its predecessor
    start: dict[int, int] = {}
    nrow = 0
    all_rows: list[list[Op]] = []
    disjoint: set[tuple[int, int, int]] = set()
    regions: dict[tuple[int, int], str] = {}
    for ti, trace in enumerate(traces):
        ops: list[Op] = []
        blocks_of: list[int] = []
        for bid in trace:
            for op in cfg.blocks[bid].ops:
                ops.append(op)
                blocks_of.append(bid)
        last = cfg.blocks[trace[-1]]
        t = last.term
        if t is None or t.is_cond:
            nxt = heads[ti + 1] if ti + 1 < len(heads) else None
            if last.fall != nxt:
                jop = ja(last.fall)
                ops.append(jop)
                blocks_of.append(trace[-1])
        for bid in trace:
            start.setdefault(bid, nrow)
        if not ops:
            continue
        rows = _TraceScheduler(ops, blocks_of, states, live_in, lanes, speculate, cfg.value_spans).run()
        if speculate:
            # hoist the top of single-predecessor branch targets into this trace while it costs no row
            for br in [op for op in ops if op.is_cond]:
                x = br.target
                if x is None or x == cfg.entry or len(preds.get(x, ())) != 1 or trace_of.get(x, -1) <= ti:
                    continue
                k = next(i for i, op in enumerate(ops) if op is br)
                p = blocks_of[k]
                cands = hoist_candidates(cfg, br, p, x, live_in, states)
                for m in sorted({len(cands), 1}, reverse=True)[: 2 if cands else 0]:
                    trial = ops[:k] + cands[:m] + ops[k:]
                    trial_blocks = blocks_of[:k] + [p] * m + blocks_of[k:]
                    # the hoisted values must survive on the taken edge: nothing may be speculated over them
                    trial_live = dict(live_in)
                    trial_live[x] = live_in.get(x, set()) | hoisted.get(x, set()) | \
                        {d for op in cands[:m] for d in op.defs()}
                    rows2 = _TraceScheduler(trial, trial_blocks, states, trial_live, lanes, speculate,
                                            cfg.value_spans).run()
                    if len(rows2) <= len(rows):
                        ops, blocks_of, rows = trial, trial_blocks, rows2
                        xb, pb = cfg.blocks[x], cfg.blocks[p]
                        moved = {id(op) for op in cands[:m]}
                        xb.ops = [op for op in xb.ops if id(op) not in moved]
                        pb.ops[-1:-1] = cands[:m]
                        hoisted.setdefault(x, set()).update(d for op in cands[:m] for d in op.defs())
                        # only x's live-in changes (p's does not: x was its only way to those values)
                        live = set()
                        for s2 in cfg.succs(x):
                            live |= live_in.get(s2, set())
                        for op in reversed(xb.ops):
                            live -= set(op.defs())
                            live |= set(op.uses())
                        live_in[x] = live | hoisted[x]
                        break
        if speculate:
            # pull the top of later joins up into their dominator's branch row region while it costs no row
            for br in [op for op in ops if op.is_cond]:
                k = next(i for i, op in enumerate(ops) if op is br)
                d = blocks_of[k]
                if cfg.blocks[d].term is not br:
                    continue
                for jid in joins_of.get(d, ()):
                    if block_trace.get(jid, -1) <= ti:
                        continue
                    cands = join_candidates(cfg, d, jid, states, live_in)
                    for m in sorted({len(cands), 1}, reverse=True)[: 2 if cands else 0]:
                        trial = ops[:k] + cands[:m] + ops[k:]
                        trial_blocks = blocks_of[:k] + [d] * m + blocks_of[k:]
                        rows2 = _TraceScheduler(trial, trial_blocks, states, live_in, lanes, speculate,
                                                cfg.value_spans).run()
                        if len(rows2) <= len(rows):
                            ops, blocks_of, rows = trial, trial_blocks, rows2
                            k += m
                            moved = {id(op) for op in cands[:m]}
                            jb, db = cfg.blocks[jid], cfg.blocks[d]
                            jb.ops = [op for op in jb.ops if id(op) not in moved]
                            db.ops[-1:-1] = cands[:m]
                            region = join_region(cfg, d, jid) or set()
                            relive(cfg, live_in, region | {d, jid}, hoisted)
                            break
        for r, row in enumerate(rows):
            ordered = _lane_order(row)
            by_op = {id(n.op): n for n in row}
            lane_pos = _lanes_of(ordered)
            for a, op in enumerate(ordered):
                acc = by_op[id(op)].acc
                if op.is_mem and acc is not None and acc.region in KNOWN_REGIONS:
                    regions[(nrow + r, lane_pos[a])] = acc.region
            for a in range(len(ordered)):
                for b in range(a + 1, len(ordered)):
                    na, nb = by_op[id(ordered[a])], by_op[id(ordered[b])]
                    if na.op.is_store and nb.op.is_store and na.acc is not None and nb.acc is not None \
                            and na.disjoint(nb):
                        disjoint.add((nrow + r, lane_pos[a], lane_pos[b]))
            all_rows.append(ordered)
        nrow += len(rows)
    return Schedule(all_rows, start, disjoint, regions)


KNOWN_REGIONS = ("stack", "ctx", "pkt", "map", "handle")


def may_touch(acc: Access | None, region: str) -> bool:
    """Can this access reach `region`? (Only a pointer proven to be into another region cannot.)"""
    return acc is None or acc.region not in KNOWN_REGIONS or acc.region == region


def _ports(n: Node) -> dict[str, tuple[int, int]]:
    """The load and store ports the op may take in its row, per memory with a port rule (an atomic takes one of
    each; an access of unproven region one of each memory it may reach)."""
    if not n.op.is_mem:
        return {}
    n_ld, n_st = T.memory_ports(n.op.kind)
    return {m: (n_ld, n_st) for m in params.PORT_RULES if may_touch(n.acc, m)}


def _lanes_of(ordered: list[Op]) -> list[int]:
    pos = []
    lane = 0
    for op in ordered:
        pos.append(lane)
        lane += op.slots
    return pos
