"""Redundant masks: `x &= MASK` dropped where x has no bits outside MASK (a forward analysis of bit widths)."""

from __future__ import annotations

from hxdp.compiler.cfg import Cfg
from hxdp.compiler.ir import Op
from hxdp.isa import table as T


def _width_after(op: Op, width: dict[int, int]) -> int:
    """Upper bound on the bit length of op's result (64 when unknown)."""
    k = op.kind
    info = op.info
    w = width.get
    if k in ("ldx", "ldx6"):
        return 8 * op.size
    if k == "lddw":
        return max((op.imm64 & ((1 << 64) - 1)).bit_length(), 1)
    if k not in ("alu", "alu3") or (k == "alu" and op.off != 0):  # movsx, sdiv, smod: unknown
        return 32 if info.width == 32 and k == "alu" else 64
    cap = 32 if info.width == 32 else 64
    name = info.op
    a = w(op.src, 64) if k == "alu3" else w(op.dst, 64)
    if k == "alu" and info.src_reg:
        b = w(op.src, 64)
    else:
        imm = op.imm if info.width == 64 else op.imm & 0xFFFFFFFF
        b = imm.bit_length() if imm >= 0 else 64
    if name == "mov":
        r = b
    elif name == "and":
        r = min(a, b)
    elif name in ("or", "xor"):
        r = max(a, b)
    elif name == "add":
        r = max(a, b) + 1
    elif name == "lsh" and not info.src_reg:
        r = a + (op.imm & (cap - 1))
    elif name == "rsh" and not info.src_reg:
        r = max(a - (op.imm & (cap - 1)), 0)
    elif name == "mul":
        r = a + b
    elif name in ("div", "rsh"):
        r = a
    elif name == "mod":
        r = a  # x % 0 = x
    else:
        r = 64
    return min(max(r, 0), cap)


def _block_widths(ops: list[Op], width: dict[int, int]) -> dict[int, int]:
    width = dict(width)
    for op in ops:
        w = _width_after(op, width)
        for d in op.defs():
            width.pop(d, None)
        if op.kind in ("alu", "alu3", "ldx", "ldx6", "lddw"):
            width[op.dst] = w
    return width


def _entry_widths(cfg: Cfg) -> dict[int, dict[int, int]]:
    """Known bit-length bounds of registers at each block entry (forward analysis, join = max)."""
    start: dict[int, int] = {} if cfg.raw else {r: 0 for r in range(16)}
    if not cfg.raw:
        start[1] = start[10] = 32
    preds = cfg.preds()
    ins: dict[int, dict[int, int]] = {cfg.entry: start}
    outs: dict[int, dict[int, int]] = {}
    for _ in range(20):
        changed = False
        for bid in cfg.order:
            if bid != cfg.entry:
                ps = [outs[p] for p in preds[bid] if p in outs]
                if not ps:
                    continue
                new = {r: max(p.get(r, 64) for p in ps) for r in ps[0]}
                new = {r: w for r, w in new.items() if w < 64}
                if ins.get(bid) != new:
                    ins[bid] = new
                    changed = True
            elif preds[bid]:
                ps = [outs[p] for p in preds[bid] if p in outs] + [start]
                new = {r: max(p.get(r, 64) for p in ps) for r in start}
                new = {r: w for r, w in new.items() if w < 64}
                if ins.get(bid) != new:
                    ins[bid] = new
                    changed = True
            if bid in ins:
                outs[bid] = _block_widths(cfg.blocks[bid].ops, ins[bid])
        if not changed:
            return ins
    return {}


def redundant_masks(cfg: Cfg) -> int:
    """`x &= MASK` where x has no bits outside MASK (e.g. after a 2-byte load) is dropped; `y = x & MASK`
    becomes a copy."""
    entry = _entry_widths(cfg)
    n = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        width: dict[int, int] = dict(entry.get(bid, {}))
        keep: list[Op] = []
        for op in b.ops:
            info = op.info
            if op.kind in ("alu", "alu3") and info.op == "and" and not (op.kind == "alu" and info.src_reg):
                src = op.src if op.kind == "alu3" else op.dst
                imm = op.imm if info.width == 64 else op.imm & 0xFFFFFFFF
                have = width.get(src, 64)
                full = (1 << have) - 1
                if have < 64 and imm >= 0 and imm & full == full and (info.width == 64 or have <= 32):
                    n += 1
                    if op.kind == "alu":
                        continue  # value unchanged
                    op = op.copy(opcode=T.BY_NAME["mov64_x"].opcode, imm=0)
            if info.name == "mov32_x" and op.off == 0 and width.get(op.src, 64) <= 32:
                op = op.copy(opcode=T.BY_NAME["mov64_x"].opcode)  # zero-extension of a 32-bit value: a copy
                n += 1
            w = _width_after(op, width)
            for d in op.defs():
                width.pop(d, None)
            if op.kind in ("alu", "alu3", "ldx", "ldx6", "lddw") and op.dst not in (10,):
                width[op.dst] = w
            keep.append(op)
        b.ops = keep
    return n
