"""Decoding, bpf-to-bpf call inlining and the control-flow graph of basic blocks (networkx for graph queries)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import networkx as nx

from hxdp import params
from hxdp.compiler.ir import FP, Op, add_k, ja, mov_x
from hxdp.errors import CompileError
from hxdp.isa import table as T
from hxdp.isa.insn import Insn, disasm, lddw_value

MapRef = Callable[[int, int, int], int]  # (pseudo src, map index, offset) -> imm64


@dataclass
class Block:
    """A basic block; the last op may be a control op. `fall` is the fall-through successor (None after ja/exit)."""

    id: int
    ops: list[Op] = field(default_factory=list)
    fall: int | None = None

    @property
    def term(self) -> Op | None:
        return self.ops[-1] if self.ops and self.ops[-1].is_control else None

    @property
    def body(self) -> list[Op]:
        return self.ops[:-1] if self.term is not None else self.ops


@dataclass
class Cfg:
    blocks: dict[int, Block]
    order: list[int]  # layout order (entry first)
    next_vreg: int = 16
    next_block: int = 0
    raw: bool = False  # entry registers are the caller's (hxdp exec), not the XDP entry state
    # a tail-call target (or a dispatcher's later program): the packet may have been adjusted before its entry, so
    # nothing is assumed of its length (no PKT_MIN_LEN bytes, no removed bounds checks, no speculated packet loads)
    entry_adjusted: bool = False
    # lddw map handle -> (first, end) absolute addresses of the map's region and its value size: where the
    # values a lookup returns lie (set from the MapLayout; empty for raw programs)
    value_spans: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    # handles of the maps of maps: a lookup in one returns an inner map's handle, not a value pointer
    outer_handles: frozenset[int] = frozenset()

    @property
    def entry(self) -> int:
        return self.order[0]

    def new_vreg(self) -> int:
        self.next_vreg += 1
        return self.next_vreg - 1

    def new_block(self) -> Block:
        b = Block(self.next_block)
        self.next_block += 1
        self.blocks[b.id] = b
        return b

    def succs(self, bid: int) -> list[int]:
        b = self.blocks[bid]
        t = b.term
        out: list[int] = []
        if t is not None and t.is_branch and t.target is not None:
            out.append(t.target)
        if b.fall is not None and (t is None or t.is_cond):
            out.insert(0, b.fall)
        return out

    def preds(self) -> dict[int, list[int]]:
        p: dict[int, list[int]] = {b: [] for b in self.order}
        for b in self.order:
            for s in self.succs(b):
                p[s].append(b)
        return p

    def graph(self) -> nx.DiGraph:
        g = nx.DiGraph()
        g.add_nodes_from(self.order)
        for b in self.order:
            for s in self.succs(b):
                g.add_edge(b, s)
        return g

    def ops(self) -> list[Op]:
        return [op for b in self.order for op in self.blocks[b].ops]

    def count(self) -> int:
        """Instruction slots (lddw counts two, as in the object file)."""
        return sum(op.slots for op in self.ops())

    # --- clean-up ----------------------------------------------------------------------------------------
    def simplify(self) -> None:
        """Drop unreachable blocks, jumps to the next block, branches whose both edges agree, empty blocks."""
        changed = True
        while changed:
            changed = False
            reach = set(nx.descendants(self.graph(), self.entry)) | {self.entry}
            if len(reach) != len(self.order):
                self.order = [b for b in self.order if b in reach]
                for b in list(self.blocks):
                    if b not in reach:
                        del self.blocks[b]
                changed = True
            for bid in self.order:
                b = self.blocks[bid]
                t = b.term
                if t is not None and t.is_cond and t.target == b.fall:
                    b.ops.pop()
                    changed = True
            # thread empty blocks (not the entry): every edge into them goes to their successor
            for bid in list(self.order):
                b = self.blocks[bid]
                if bid == self.entry or b.ops or b.fall is None or b.fall == bid:
                    continue
                succ = b.fall
                for other in self.order:
                    ob = self.blocks[other]
                    t = ob.term
                    if t is not None and t.is_branch and t.target == bid:
                        t.target = succ
                        changed = True
                    if ob.fall == bid and other != bid:
                        ob.fall = succ
                        changed = True
            # merge a block into its only predecessor when that one falls or jumps into it unconditionally
            preds = self.preds()
            for bid in list(self.order):
                if bid not in self.blocks:
                    continue
                b = self.blocks[bid]
                t = b.term
                succ = t.target if (t is not None and t.kind == "ja") else (b.fall if t is None else None)
                if succ is None or succ == bid or succ == self.entry or len(preds.get(succ, ())) != 1:
                    continue
                s = self.blocks[succ]
                if t is not None:
                    b.ops.pop()
                b.ops += s.ops
                b.fall = s.fall
                del self.blocks[succ]
                self.order.remove(succ)
                preds = self.preds()
                changed = True
            # a ja to the block laid out next is a fall-through
            for i, bid in enumerate(self.order):
                b = self.blocks[bid]
                t = b.term
                if t is not None and t.kind == "ja" and i + 1 < len(self.order) and t.target == self.order[i + 1]:
                    b.ops.pop()
                    b.fall = t.target
                    changed = True

    def check(self) -> None:
        """Internal consistency: every branch target and fall-through names a block."""
        for bid in self.order:
            b = self.blocks[bid]
            for op in b.ops[:-1]:
                assert not op.is_control, (bid, op)
            t = b.term
            if t is None or t.is_cond:
                assert b.fall in self.blocks, (bid, b.fall)
            if t is not None and t.is_branch:
                assert t.target in self.blocks, (bid, t)


# --- decoding ------------------------------------------------------------------------------------------------
def decode(insns: list[Insn], map_ref: MapRef | None) -> dict[int, Op]:
    """Slot index -> Op (lddw merged into its first slot), rejecting what the target cannot run."""
    ops: dict[int, Op] = {}
    i = 0
    n = len(insns)
    while i < n:
        ins = insns[i]
        nxt = insns[i + 1] if i + 1 < n else None
        text = disasm(ins, nxt)
        info = T.OPCODES.get(ins.opcode)
        if info is None:
            raise CompileError(f"slot {i} ({text}): unknown opcode 0x{ins.opcode:02x}")
        if not info.supported or info.kind == "legacy_ld":
            raise CompileError(f"slot {i} ({text}): legacy packet access (LD_ABS/LD_IND) is not supported")
        if info.extension:
            raise CompileError(f"slot {i} ({text}): hXDP extension opcode in an eBPF input program")
        op = Op(ins.opcode, ins.dst, ins.src, ins.off, ins.imm, slot=i, text=text)
        if info.kind == "lddw":
            if nxt is None or nxt.opcode != 0:
                raise CompileError(f"slot {i} ({text}): lddw without its second slot")
            if ins.src == T.PSEUDO_IMM64:
                op.imm64 = lddw_value(ins, nxt)
            elif ins.src in (T.PSEUDO_MAP_FD, T.PSEUDO_MAP_VALUE):
                if map_ref is None:
                    raise CompileError(f"slot {i} ({text}): map reference in a program without maps")
                op.imm64 = map_ref(ins.src, ins.imm, nxt.imm)
            else:
                what = "function pointers (callbacks such as bpf_loop)" if ins.src == T.PSEUDO_FUNC else \
                    f"lddw pseudo source {ins.src}"
                raise CompileError(f"slot {i} ({text}): {what} not supported")
            op.src = 0
            ops[i] = op
            i += 2
            continue
        if info.kind == "call":
            if ins.src == T.CALL_HELPER:
                if ins.imm not in params.HELPERS and ins.imm not in params.LOWERED_HELPERS:
                    raise CompileError(f"slot {i} ({text}): helper {ins.imm} is not implemented in hardware")
            elif ins.src != T.CALL_LOCAL:
                raise CompileError(f"slot {i} ({text}): kfunc calls are not supported")
        if info.kind == "atomic" and ins.imm not in T.ATOMIC_OPS:
            raise CompileError(f"slot {i} ({text}): unknown atomic operation 0x{ins.imm:x}")
        if info.kind in ("alu", "neg", "end", "bswap", "alu3") and ins.dst == FP:
            raise CompileError(f"slot {i} ({text}): writes the read-only frame pointer r10")
        if info.kind in ("ldx", "ldxsx") and ins.dst == FP:
            raise CompileError(f"slot {i} ({text}): writes the read-only frame pointer r10")
        ops[i] = op
        i += 1
    return ops


def _jump_dest(op: Op) -> int:
    if op.info.name == "gotol":
        return op.slot + 1 + op.imm
    return op.slot + 1 + op.off


def _frame_depth(ops: list[Op]) -> int:
    """Bytes of stack a function uses below its frame pointer (its frame size, multiple of 8)."""
    lowest = 0
    fp_copies: dict[int, int] = {}
    for op in ops:
        if op.is_mem:
            if op.base == FP:
                lowest = min(lowest, op.off)
            elif op.base in fp_copies:
                lowest = min(lowest, fp_copies[op.base] + op.off)
        name = op.info.name
        if name == "mov64_x" and op.src == FP:
            fp_copies[op.dst] = 0
        elif name == "add64_k" and op.dst in fp_copies:
            fp_copies[op.dst] += op.imm
            lowest = min(lowest, fp_copies[op.dst])
        else:
            for d in op.defs():
                fp_copies.pop(d, None)
    return (-lowest + 7) // 8 * 8


class _Inliner:
    def __init__(self, ops: dict[int, Op], nslots: int, entries: list[int]) -> None:
        self.ops = ops
        self.nslots = nslots
        self.entries = sorted(set(entries))
        self.next_label = 0
        self.next_vreg = 16

    def label(self) -> int:
        self.next_label += 1
        return self.next_label - 1

    def func_range(self, start: int) -> range:
        later = [e for e in self.entries if e > start]
        return range(start, later[0] if later else self.nslots)

    def expand(self, start: int, base: int, regmap: dict[int, int], ret: int | None,
               active: tuple[int, ...]) -> list[Op | int]:
        """Flat list of ops and labels (ints) for the function at `start`, its frame `base` bytes below r10."""
        rng = self.func_range(start)
        fops = [self.ops[s] for s in rng if s in self.ops]
        depth = _frame_depth(fops)
        if base + depth > params.STACK_SIZE:
            raise CompileError(f"slot {start}: combined stack of inlined calls is {base + depth} bytes, "
                               f"more than {params.STACK_SIZE}")
        labels: dict[int, int] = {}

        def lab(slot: int, where: Op) -> int:
            if slot not in rng or slot not in self.ops:
                raise CompileError(f"{where.where()}: jump target slot {slot} is outside the function")
            if slot not in labels:
                labels[slot] = self.label()
            return labels[slot]

        for op in fops:
            if op.is_branch:
                lab(_jump_dest(op), op)
        out: list[Op | int] = []
        for op in fops:
            if op.slot in labels:
                out.append(labels[op.slot])
            k = op.kind
            if k == "call" and op.src == T.CALL_LOCAL:
                callee = op.slot + 1 + op.imm
                if callee not in self.ops or callee < 0:
                    raise CompileError(f"{op.where()}: call target slot {callee} is not an instruction")
                if callee in active:
                    raise CompileError(f"{op.where()}: recursive bpf-to-bpf call")
                sub = {r: r for r in range(6)}
                for r in range(6, 10):
                    sub[r] = self.next_vreg
                    self.next_vreg += 1
                after = self.label()
                out += self.expand(callee, base + depth, sub, after, active + (callee,))
                out.append(after)
                continue
            new = op.copy()
            if k == "exit" and ret is not None:
                out.append(ja(-1, op.slot))
                out[-1].target = ret
                out[-1].text = op.text
                continue
            if op.is_branch:
                new.target = lab(_jump_dest(op), op)
            out += self._map_regs(new, base, regmap)
        return out

    def _map_regs(self, op: Op, base: int, regmap: dict[int, int]) -> list[Op]:
        uses = set(op.uses()) | set(op.defs())
        if FP in uses and base:
            if op.is_mem and op.base == FP and not (op.kind in ("stx", "stx6", "atomic") and op.src == FP):
                op.off -= base
                if op.off < -32768:
                    raise CompileError(f"{op.where()}: inlined stack offset out of range")
            elif op.info.name == "mov64_x" and op.src == FP:
                op.dst = regmap.get(op.dst, op.dst)
                return [op, add_k(op.dst, -base, op.slot)]
            else:
                raise CompileError(f"{op.where()}: this use of r10 in an inlined function is not supported")
        if op.kind not in ("call", "exit", "exit_action", "ja"):
            op.dst = regmap.get(op.dst, op.dst) if op.dst != FP else FP
            if op.src != FP:
                op.src = regmap.get(op.src, op.src)
        return [op]


def build_cfg(insns: list[Insn], map_ref: MapRef | None = None, functions: dict[int, str] | None = None) -> Cfg:
    ops = decode(insns, map_ref)
    if not ops:
        raise CompileError("empty program")
    entries = [0] + list((functions or {}).keys())
    for op in ops.values():
        if op.kind == "call" and op.src == T.CALL_LOCAL:
            entries.append(op.slot + 1 + op.imm)
    inl = _Inliner(ops, len(insns), entries)
    flat = inl.expand(0, 0, {r: r for r in range(11)}, None, (0,))
    cfg = Cfg({}, [], next_vreg=inl.next_vreg)
    label_block: dict[int, int] = {}
    cur = cfg.new_block()
    cfg.order.append(cur.id)
    pending: list[Block] = []  # blocks whose fall-through is the next block created

    def start_block() -> Block:
        b = cfg.new_block()
        cfg.order.append(b.id)
        return b

    for item in flat:
        if isinstance(item, int):
            if cur.ops or item in label_block:
                nb = start_block()
                if cur.term is None or cur.term.is_cond:
                    cur.fall = nb.id
                cur = nb
            label_block[item] = cur.id
            continue
        if cur.term is not None:
            nb = start_block()
            if cur.term.is_cond:
                cur.fall = nb.id
            cur = nb
        cur.ops.append(item)
    del pending
    last = cfg.blocks[cfg.order[-1]]
    if last.term is None or last.term.is_cond:
        t = last.term
        where = t.where() if t else (last.ops[-1].where() if last.ops else "end of program")
        raise CompileError(f"{where}: control falls off the end of the program")
    for b in cfg.blocks.values():
        t = b.term
        if t is not None and t.is_branch:
            t.target = label_block[t.target]
    # jump-to-label fix: labels that start an empty block are resolved above; empty blocks fall through
    for bid in cfg.order:
        b = cfg.blocks[bid]
        if not b.ops and b.fall is None:
            i = cfg.order.index(bid)
            b.fall = cfg.order[i + 1] if i + 1 < len(cfg.order) else None
    cfg.simplify()
    cfg.check()
    return cfg


def linear_ops(cfg: Cfg) -> list[Op]:
    return cfg.ops()


__all__ = ["Block", "Cfg", "build_cfg", "decode", "mov_x"]
