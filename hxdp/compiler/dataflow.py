"""Data-flow analyses: liveness, reaching definitions, pointer provenance, memory access alias facts."""

from __future__ import annotations

from dataclasses import dataclass

from hxdp import params
from hxdp.compiler.cfg import Cfg
from hxdp.compiler.ir import ADJUST_HELPERS, FP, Op
from hxdp.isa import table as T
from hxdp.models.alu import alu, imm64

M64 = (1 << 64) - 1
M32 = 0xFFFFFFFF
LOOKUP = params.HELPER_IDS["map_lookup_elem"]
RESERVE = params.HELPER_IDS["ringbuf_reserve"]  # returns a pointer into the ring's region of map memory

# --- liveness ---------------------------------------------------------------------------------------------


def use_kill(ops: list[Op]) -> tuple[set[int], set[int]]:
    """Registers a block reads before writing them, and registers it writes."""
    u: set[int] = set()
    d: set[int] = set()
    for op in ops:
        u |= set(op.uses()) - d
        d |= set(op.defs())
    return u, d


def liveness(cfg: Cfg) -> tuple[dict[int, set[int]], dict[int, set[int]]]:
    """live_in, live_out register sets per block (exit reads r0, calls read their arguments)."""
    use: dict[int, set[int]] = {}
    kill: dict[int, set[int]] = {}
    for bid in cfg.order:
        use[bid], kill[bid] = use_kill(cfg.blocks[bid].ops)
    live_in: dict[int, set[int]] = {b: set() for b in cfg.order}
    live_out: dict[int, set[int]] = {b: set() for b in cfg.order}
    succs = {b: cfg.succs(b) for b in cfg.order}
    changed = True
    while changed:
        changed = False
        for bid in reversed(cfg.order):
            out: set[int] = set()
            for s in succs[bid]:
                out |= live_in[s]
            inn = use[bid] | (out - kill[bid])
            if out != live_out[bid] or inn != live_in[bid]:
                live_out[bid], live_in[bid] = out, inn
                changed = True
    return live_in, live_out


def live_after(ops: list[Op], out: set[int]) -> list[set[int]]:
    """Registers live after each op of a block, given the block's live-out set."""
    res: list[set[int]] = [set()] * len(ops)
    live = set(out)
    for i in range(len(ops) - 1, -1, -1):
        res[i] = set(live)
        op = ops[i]
        live -= set(op.defs())
        live |= set(op.uses())
    return res


# --- reaching definitions --------------------------------------------------------------------------------
@dataclass
class DefSites:
    """Every definition of a register, numbered: first a pseudo-def per register holding a value at entry (in
    register order), then each op's defs in block order. Sets of defs are bitsets over these numbers."""

    reg: list[int]  # def id -> the register it defines
    pos: list[int]  # def id -> position of the defining op in block order (-1: the value at entry)
    entry: dict[int, int]  # register -> its entry pseudo-def
    at: dict[int, dict[int, int]]  # id(op) -> {register: def id} of what the op defines


def def_sites(cfg: Cfg) -> DefSites:
    """Number the definitions of the program; r1 (ctx) and r10 (frame pointer) always have an entry value, and so
    does every register the program names (a read that no path defines shows up as that pseudo-def alone)."""
    sites = DefSites([], [], {}, {})
    named: set[int] = {FP, 1}
    for op in cfg.ops():
        named |= set(op.uses()) | set(op.defs())
    for r in sorted(named):
        sites.entry[r] = len(sites.reg)
        sites.reg.append(r)
        sites.pos.append(-1)
    pos = 0
    for bid in cfg.order:
        for op in cfg.blocks[bid].ops:
            m = {}
            for r in op.defs():
                m[r] = len(sites.reg)
                sites.reg.append(r)
                sites.pos.append(pos)
            sites.at[id(op)] = m
            pos += 1
    return sites


def reaching_defs(cfg: Cfg, sites: DefSites) -> dict[int, dict[int, int]]:
    """Definitions reaching each block's entry: {block: {register: bitset of def ids}} (forward, join = union;
    the entry block also sees the entry pseudo-defs)."""
    gen: dict[int, dict[int, int]] = {}
    for bid in cfg.order:
        g: dict[int, int] = {}
        for op in cfg.blocks[bid].ops:
            g.update(sites.at[id(op)])
        gen[bid] = g
    preds = cfg.preds()
    reach_in: dict[int, dict[int, int]] = {b: {} for b in cfg.order}
    reach_out: dict[int, dict[int, int]] = {b: {} for b in cfg.order}
    entry_in = {r: 1 << d for r, d in sites.entry.items()}
    changed = True
    while changed:
        changed = False
        for bid in cfg.order:
            inn: dict[int, int] = dict(entry_in) if bid == cfg.entry else {}
            for p in preds[bid]:
                for r, bits in reach_out[p].items():
                    inn[r] = inn.get(r, 0) | bits
            out = dict(inn)
            for r, d in gen[bid].items():
                out[r] = 1 << d
            if inn != reach_in[bid] or out != reach_out[bid]:
                reach_in[bid], reach_out[bid] = inn, out
                changed = True
    return reach_in


def reaching_after(ops: list[Op], reach_in: dict[int, int], sites: DefSites) -> list[dict[int, int]]:
    """The definitions reaching the point after each op of a block, given those reaching its entry."""
    cur = dict(reach_in)
    out: list[dict[int, int]] = []
    for op in ops:
        for r, d in sites.at[id(op)].items():
            cur[r] = 1 << d
        out.append(dict(cur))
    return out


def def_ids(bits: int) -> list[int]:
    """The def ids of a bitset, lowest first."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


# --- provenance ------------------------------------------------------------------------------------------
# Abstract values: ("scalar", c|None) ("stack", off|None) ("ctx",) ("pkt", off|None) ("end",) ("map", addr|None)
# ("map", None, (first, end, value size)) (a lookup result: a value, or null, inside a known map's region)
# ("handle", value|None); None is "anything".
Val = tuple | None


def _join_val(a: Val, b: Val) -> Val:
    if a == b:
        return a
    if a is None or b is None or a[0] != b[0]:
        return None
    if len(a) == 1:
        return a
    sa, sb = _span(a), _span(b)
    if sa is not None and sb is not None:  # map pointers into known maps: the union of the spans
        return ("map", None, (min(sa[0], sb[0]), max(sa[1], sb[1]), min(sa[2], sb[2])))
    return (a[0], None)


def _span(v: Val) -> tuple[int, int, int] | None:
    """(first, end, smallest value size) of the map regions a map pointer lies in, when known."""
    if v is None or v[0] != "map":
        return None
    if v[1] is not None:  # a known pointer: its address (the low word; the tag is not an address)
        return (v[1] & M32, (v[1] & M32) + 1, 1)
    return v[2] if len(v) > 2 else None


def _join_map(a: dict[int, Val], b: dict[int, Val]) -> dict[int, Val]:
    """Join of two register or stack slot maps (a key missing in either, or joining to nothing, is dropped)."""
    if a == b:  # the common case at a join, and a comparison of whole dicts is cheap
        return {k: v for k, v in a.items() if v is not None}
    out = {}
    for k, v in a.items():
        if k in b:
            j = _join_val(v, b[k])
            if j is not None:
                out[k] = j
    return out


@dataclass
class State:
    regs: dict[int, Val]
    slots: dict[int, Val]  # 8-byte stack spill slots by offset from r10
    adjusted: bool = False  # an xdp_adjust_* call may have run
    written: int = 0  # bitmask of stack bytes (index 0 = r10-512) that may have been written

    def copy(self) -> State:
        return State(dict(self.regs), dict(self.slots), self.adjusted, self.written)

    def join(self, o: State) -> State:
        return State(_join_map(self.regs, o.regs), _join_map(self.slots, o.slots), self.adjusted or o.adjusted,
                     self.written | o.written)

    def __eq__(self, o: object) -> bool:
        return (isinstance(o, State) and self.regs == o.regs and self.slots == o.slots
                and self.adjusted == o.adjusted and self.written == o.written)


def entry_state(raw: bool = False, adjusted: bool = False) -> State:
    regs: dict[int, Val] = {} if raw else {r: ("scalar", 0) for r in range(16)}
    if not raw:
        regs[1] = ("ctx",)
        regs[2] = ("pkt", 0)  # the packet start (execution contract section 1)
    regs[FP] = ("stack", 0)
    return State(regs, {}, adjusted)


# Operations whose constant results the analysis tracks; the arithmetic itself is the models' (hxdp.alu).
_FOLDABLE = frozenset({"add", "sub", "mul", "or", "and", "xor", "lsh", "rsh", "mov"})


def _fold(op: str, a: int, b: int, width: int) -> int | None:
    return alu(op, width, a, b) if op in _FOLDABLE else None


def _sext32(imm: int) -> int:
    return imm & M64


def _alu(op: str, width: int, a: Val, b: Val) -> Val:
    """Abstract a op= b."""
    if op == "mov":
        if width == 64:
            return b
        if b is not None and b[0] == "scalar" and b[1] is not None:
            return ("scalar", b[1] & 0xFFFFFFFF)
        return ("scalar", None)
    if width == 64 and op in ("add", "sub") and a is not None and a[0] in ("stack", "pkt", "map"):
        if b is not None and b[0] == "scalar":
            if a[1] is None or b[1] is None:
                return (a[0], None)
            d = b[1] if b[1] < (1 << 63) else b[1] - (1 << 64)
            return (a[0], a[1] + d if op == "add" else a[1] - d)
        return None
    if width == 64 and op == "add" and b is not None and b[0] in ("stack", "pkt", "map") and a is not None \
            and a[0] == "scalar":
        return _alu("add", 64, b, a)
    if a is not None and b is not None and a[0] == "scalar" and b[0] == "scalar" \
            and a[1] is not None and b[1] is not None:
        return ("scalar", _fold(op, a[1], b[1], width))
    if a is not None and a[0] == "scalar" and b is not None and b[0] == "scalar":
        return ("scalar", None)
    return None if width == 64 and (a is None or a[0] != "scalar") else ("scalar", None)


def _region_of_addr(addr: int) -> Val:
    """What a 64-bit constant is: a tagged map-value pointer (with its value's span), a map handle, or a scalar
    (an untagged map-memory address is not dereferenceable: execution contract section 4)."""
    low = addr & M32
    tier = params.tier_of(low)
    split = params.split_map_tag(addr >> params.MAP_TAG_SHIFT, tier) if tier else None
    if split is not None:
        start = params.TIER_BASE[tier] + split[0]
        return ("map", addr, (start, start + split[1], split[1]))
    if params.MAP_HANDLE_BASE <= addr < params.MAP_HANDLE_BASE + (1 << params.REGION_SHIFT):
        return ("handle", addr)
    return ("scalar", addr)


def _stack_range(v: Val, off: int, size: int) -> tuple[int, int] | None:
    """Byte range [lo, hi) relative to r10 of a stack access, if known."""
    if v is None or v[0] != "stack" or v[1] is None:
        return None
    return (v[1] + off, v[1] + off + size)


def _bits(lo: int, hi: int) -> int:
    lo = max(lo + params.STACK_SIZE, 0)
    hi = min(hi + params.STACK_SIZE, params.STACK_SIZE)
    if hi <= lo:
        return 0
    return ((1 << (hi - lo)) - 1) << lo


ALL_STACK = (1 << params.STACK_SIZE) - 1


def transfer(op: Op, st: State, spans: dict[int, tuple[int, int, int]] | None = None,
             outer: frozenset[int] = frozenset()) -> None:
    """Apply op to the abstract state in place (spans: Cfg.value_spans, for what lookups return; outer:
    Cfg.outer_handles, whose lookups return a map handle)."""
    k = op.kind
    info = op.info
    regs = st.regs
    g = regs.get
    if k == "alu" and op.off != 0:  # movsx, sdiv, smod (v4): nothing tracked
        regs[op.dst] = ("scalar", None)
    elif k == "alu":
        b = g(op.src) if info.src_reg else ("scalar", _sext32(op.imm) if info.width == 64 else op.imm & 0xFFFFFFFF)
        regs[op.dst] = _alu(info.op, info.width, g(op.dst), b)
    elif k == "alu3":
        a = _alu("mov", info.width, None, g(op.src))
        b = ("scalar", _sext32(op.imm) if info.width == 64 else op.imm & 0xFFFFFFFF)
        regs[op.dst] = _alu(info.op, info.width, a, b)
    elif k in ("neg", "end", "bswap"):
        regs[op.dst] = ("scalar", None)
    elif k == "lddw":
        regs[op.dst] = _region_of_addr(op.imm64 & M64)
    elif k in ("ldx", "ldxsx", "ldx6"):
        base = g(op.src)
        val: Val = ("scalar", None)
        if base is not None and base[0] == "ctx" and info.width == 4:
            if op.off == params.CTX_FIELDS["data"]:
                val = ("pkt", None if st.adjusted else 0)
            elif op.off == params.CTX_FIELDS["data_end"]:
                val = ("end",) if not st.adjusted else ("scalar", None)
            elif op.off == params.CTX_FIELDS["data_meta"]:
                val = ("pkt", None)
        elif k == "ldx" and info.width == 8:
            rng = _stack_range(base, op.off, 8)
            if rng is not None and rng[0] in st.slots:
                val = st.slots[rng[0]]
            elif base is None:
                val = None
        regs[op.dst] = val
    elif op.is_store or op.is_atomic:
        base = g(op.dst)
        rng = _stack_range(base, op.off, op.size)
        if rng is not None:
            for s in [s for s in st.slots if s < rng[1] and rng[0] < s + 8]:
                del st.slots[s]
            if op.size == 8 and not op.is_atomic:
                st.slots[rng[0]] = g(op.src) if k == "stx" else ("scalar", _sext32(op.imm))
            st.written |= _bits(*rng)
        elif base is None or base[0] == "stack":
            st.slots.clear()
            st.written = ALL_STACK
        if op.is_atomic:
            for d in op.defs():
                regs[d] = ("scalar", None)
    elif k == "call":
        if op.imm in ADJUST_HELPERS:
            st.adjusted = True
            for r, v in list(regs.items()):
                if v is not None and v[0] in ("pkt", "end"):
                    regs[r] = None
            for s, v in list(st.slots.items()):
                if v is not None and v[0] in ("pkt", "end"):
                    st.slots[s] = None
        if params.HELPER_WRITE_REGIONS.get(params.HELPERS.get(op.imm, "")) == "stack":
            st.slots.clear()  # fib_lookup writes its results into the struct it was given
            st.written = ALL_STACK
        handle = regs.get(1)
        span = spans.get(handle[1]) if spans and handle is not None and handle[0] == "handle" else None
        inner = handle is not None and handle[0] == "handle" and handle[1] in outer
        for r in range(1, 6):
            regs[r] = None
        if op.imm == LOOKUP and inner:  # a map of maps: the inner map's handle (or 0), never a value pointer
            regs[0] = ("handle", None)
        elif op.imm == LOOKUP:
            regs[0] = ("map", None, span) if span is not None else ("map", None)
        elif op.imm == RESERVE:
            regs[0] = ("map", None)
        else:
            regs[0] = ("scalar", None)


def provenance(cfg: Cfg) -> dict[int, State]:
    """Abstract state before every op (keyed by id(op)); unreached ops are absent."""
    entry = entry_state(cfg.raw, cfg.entry_adjusted)
    ins: dict[int, State] = {cfg.entry: entry}
    preds = cfg.preds()
    succs = {b: cfg.succs(b) for b in cfg.order}
    work = [cfg.entry]
    outs: dict[int, State] = {}
    rounds: dict[int, int] = {}
    while work:
        bid = work.pop(0)
        st = ins[bid].copy()
        for op in cfg.blocks[bid].ops:
            transfer(op, st, cfg.value_spans, cfg.outer_handles)
        outs[bid] = st
        for s in succs[bid]:
            new = None
            for p in preds[s]:
                if p in outs:
                    new = outs[p].copy() if new is None else new.join(outs[p])
            if s == cfg.entry:
                new = entry if new is None else new.join(entry)
            rounds[s] = rounds.get(s, 0) + 1
            if rounds[s] > 40 and new is not None:  # widen: drop constants in long loops
                # (a map pointer's span is dropped too: a pointer stepping through a map value in a loop would
                # widen it forever)
                new = State({r: v[:2] for r, v in new.regs.items() if v is not None and (len(v) == 1 or v[1] is None)},
                            {}, new.adjusted, ALL_STACK if rounds[s] > 60 else new.written)
            if new is not None and s in ins:
                # only ever go up: some transfers are not monotone (a 32-bit op on an unknown value gives a known
                # scalar), and a fresh join of the predecessors could then cycle around a loop forever
                new = new.join(ins[s])
            if new is not None and (s not in ins or ins[s] != new):
                ins[s] = new
                if s not in work:
                    work.append(s)
    result: dict[int, State] = {}
    for bid in cfg.order:
        if bid not in ins:
            continue
        st = ins[bid].copy()
        for op in cfg.blocks[bid].ops:
            result[id(op)] = st.copy()
            transfer(op, st, cfg.value_spans, cfg.outer_handles)
    return result


# --- memory access facts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Access:
    """Where a memory op reads/writes: region and absolute range when known."""

    region: str | None  # stack, ctx, pkt, map, handle, scalar, or None (unknown)
    lo: int | None  # stack: offset from r10; pkt: offset from data; map: absolute address
    size: int
    store: bool
    load: bool
    span: tuple[int, int] | None = None  # map: absolute addresses the access stays within, when lo is unknown

    def disjoint(self, o: Access) -> bool:
        if self.region is None or o.region is None:
            return False
        if self.region != o.region:
            return self.region != "scalar" and o.region != "scalar"
        if self.lo is None or o.lo is None:
            a = (self.lo, self.lo + self.size) if self.lo is not None else self.span
            b = (o.lo, o.lo + o.size) if o.lo is not None else o.span
            return a is not None and b is not None and (a[1] <= b[0] or b[1] <= a[0])
        return self.lo + self.size <= o.lo or o.lo + o.size <= self.lo


def access_of(op: Op, st: State | None) -> Access:
    base = st.regs.get(op.base) if st is not None else None
    region = base[0] if base is not None else None
    lo = None
    if base is not None and len(base) > 1 and base[1] is not None and region in ("stack", "pkt", "map"):
        lo = (base[1] & M32 if region == "map" else base[1]) + op.off  # (a map pointer's tag is not its address)
    if region in ("end",):
        region = "pkt"
    load = op.is_load or op.is_atomic
    store = op.is_store or op.is_atomic
    span = None
    if region == "map" and lo is None and len(base) > 2 and base[2] is not None:
        first, end, vsize = base[2]
        # a verified program reads a lookup result only inside its value: [0, value size) from the pointer
        if 0 <= op.off and op.off + op.size <= vsize:
            span = (first, end)
    return Access(region, lo, op.size, store, load, span)


def speculation_safe_load(op: Op, st: State | None) -> bool:
    """A load that can never fault, so it may run on a path where the original program would not run it."""
    if st is None:
        return False
    base = st.regs.get(op.base)
    if base is None:
        return False
    if base[0] == "ctx":
        return params.ctx_field(op.off, op.size)
    if base[0] == "stack" and base[1] is not None:
        lo = base[1] + op.off
        return -params.STACK_SIZE <= lo and lo + op.size <= 0
    if base[0] == "pkt" and base[1] is not None and not st.adjusted:
        lo = base[1] + op.off
        return 0 <= lo and lo + op.size <= params.PKT_MIN_LEN
    if base[0] == "map" and base[1] is not None and len(base) > 2:  # a known pointer into a known map value
        lo = (base[1] & M32) + op.off
        return base[2][0] <= lo and lo + op.size <= base[2][1]
    return False


def stored_value(op: Op, st: State | None) -> int | None:
    """The bytes a store writes, as a little-endian integer, when known at compile time (an immediate, or a
    register the analysis knows), else None."""
    if not op.is_store:
        return None
    mask = (1 << (8 * op.size)) - 1
    if op.kind in ("st", "st6"):
        return imm64(op.imm) & mask
    v = st.regs.get(op.src) if st is not None else None
    if v is None or v[0] != "scalar" or v[1] is None:
        return None
    return v[1] & mask


def is_zero_store(op: Op, st: State) -> tuple[int, int] | None:
    """Stack range of a store of zero bytes (st imm 0 or stx of a register known to be 0), else None."""
    if stored_value(op, st) != 0:
        return None
    return _stack_range(st.regs.get(op.dst), op.off, op.size)


def stack_bits(rng: tuple[int, int]) -> int:
    return _bits(*rng)


JMP_CMP = {name: code for name, (code, _s) in T.JMP_OPS.items()}
