"""Values known before the packet runs: constant-key array lookups, decided branches, ctx->data at entry."""

from __future__ import annotations

from hxdp import params
from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import State, access_of, provenance, stack_bits, stored_value
from hxdp.compiler.ir import Op, ja, mov_k, mov_x
from hxdp.models import alu
from hxdp.models.maps import MapLayout

# Kinds whose bpf_map_lookup_elem is pure address arithmetic: the kernel's verifier inlines exactly these
# (array_map_gen_lookup); per-CPU arrays have one copy on the single-core executor. Devmaps are left to the
# helper because an empty slot (ifindex 0) reads as a miss.
INLINE_KINDS = frozenset({"array", "percpu_array"})
LOOKUP = 1


def _handle_before(ops: list[Op], i: int) -> int | None:
    """The lddw value r1 holds at ops[i], when its last definition in the block is a lddw."""
    for prev in reversed(ops[:i]):
        if 1 in prev.defs():
            return prev.imm64 if prev.kind == "lddw" else None
    return None


def _stored_constant(ops: list[Op], i: int, rng: tuple[int, int], states: dict[int, State]) -> int | None:
    """The value of stack bytes rng at ops[i] when the block stores them as one constant before it."""
    lo, hi = rng
    for prev in reversed(ops[:i]):
        if prev.is_call:
            return None
        if not (prev.is_store or prev.is_atomic):
            continue
        st = states.get(id(prev))
        acc = access_of(prev, st)
        if acc.region is None or (acc.region == "stack" and acc.lo is None):
            return None  # may write anywhere on the stack
        if acc.region != "stack" or acc.lo + acc.size <= lo or hi <= acc.lo:
            continue
        if prev.is_atomic or (acc.lo, acc.lo + acc.size) != rng:
            return None
        return stored_value(prev, st)
    return None


def inline_array_lookups(cfg: Cfg, layout: MapLayout) -> int:
    """`call map_lookup_elem` on an array map with a key known at compile time -> `r0 = value address` (or 0).

    The key is known when its 4 stack bytes were never written on any path (the stack starts zeroed: key 0) or
    when the same block stores them as one constant. Saves the helper's row and its stall; the null check that
    follows is folded by fold_branches.
    """
    states = provenance(cfg)
    done = 0
    for bid in cfg.order:
        ops = cfg.blocks[bid].ops
        for i, op in enumerate(ops):
            if not (op.is_call and op.imm == LOOKUP and op.src == 0) or id(op) not in states:
                continue
            handle = _handle_before(ops, i)
            map_id = layout.map_of_handle(handle) if handle is not None else None
            if map_id is None:
                continue
            region = layout.region(map_id)
            st = states[id(op)]
            key_ptr = st.regs.get(2)
            if region.kind not in INLINE_KINDS or key_ptr is None or key_ptr[0] != "stack" or key_ptr[1] is None:
                continue
            rng = (key_ptr[1], key_ptr[1] + region.key_size)
            if rng[0] < -params.STACK_SIZE or rng[1] > 0:
                continue
            key = 0 if not st.written & stack_bits(rng) else _stored_constant(ops, i, rng, states)
            if key is None:
                continue
            if key < region.max_entries:  # the tagged pointer a lookup returns (execution contract section 4)
                new = Op(0x18, 0, 0, 0, 0, layout.value_pointer(map_id, region.slot_addr(key)), op.slot)
            else:
                new = mov_k(0, 0, op.slot)
            new.text = op.text
            ops[i] = new
            done += 1
    return done


def _operand(st: State, reg: int) -> int | str | None:
    """A register's value when known: an int, "nonnull" for a known map address, else None."""
    v = st.regs.get(reg)
    if v is None or len(v) < 2 or v[1] is None:
        return None
    if v[0] == "scalar":
        return v[1]
    if v[0] == "map":
        return "nonnull"
    return None


def fold_branches(cfg: Cfg) -> int:
    """Conditional branches whose outcome the provenance analysis knows become a jump or disappear."""
    states = provenance(cfg)
    folded = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        t = b.term
        if t is None or not t.is_cond or id(t) not in states:
            continue
        st = states[id(t)]
        info = t.info
        a = _operand(st, t.dst)
        c = _operand(st, t.src) if info.src_reg else alu.imm64(t.imm)
        if a is None or c is None:
            continue
        if isinstance(a, int) and isinstance(c, int):
            taken = alu.jump_taken(info.op, info.width, a, c)
        elif {a, c} == {"nonnull", 0} and info.op in ("jeq", "jne"):
            taken = info.op == "jne"  # a map-value pointer (MAP_BASE + offset, tagged) is never null, nor its low word
        else:
            continue
        if taken:
            new = ja(t.target, t.slot)
            new.text = t.text
            b.ops[-1] = new
            b.fall = None
        else:
            b.ops.pop()
        folded += 1
    if folded:
        cfg.simplify()
    return folded


def entry_data_loads(cfg: Cfg) -> int:
    """`rX = ctx->data` where a register still holds the packet start (r2 at entry, execution contract section 1)
    becomes `rX = rY`: copy propagation then lets the first packet loads read rY in row 0 instead of waiting a
    row for the context load."""
    states = provenance(cfg)
    done = 0
    for bid in cfg.order:
        ops = cfg.blocks[bid].ops
        for i, op in enumerate(ops):
            st = states.get(id(op))
            if st is None or st.adjusted or op.kind != "ldx" or op.info.width != 4 \
                    or op.off != params.CTX_FIELDS["data"] or st.regs.get(op.src) != ("ctx",):
                continue
            holders = [r for r in range(11) if st.regs.get(r) == ("pkt", 0)]
            if not holders:
                continue
            if op.dst in holders:  # it already holds the packet start: the load is a no-op
                ops[i] = None
            else:
                ops[i] = mov_x(op.dst, holders[0], op.slot)
                ops[i].text = op.text
            done += 1
        cfg.blocks[bid].ops = [op for op in ops if op is not None]
    return done
