"""ISA extensions (paper 3.2): three-operand ALU, 6-byte load/store, exit with action."""

from __future__ import annotations

from dataclasses import replace

from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import State, access_of, live_after, liveness, provenance
from hxdp.compiler.ir import Op
from hxdp.isa import table as T

ALU3_64 = {op: code for code, op in T.EXT_ALU3_64.items()}
ALU3_32 = {op: code for code, op in T.EXT_ALU3_32.items()}


# --- exit with action ------------------------------------------------------------------------------------
def _exit_only(cfg: Cfg, bid: int) -> bool:
    ops = cfg.blocks[bid].ops
    return len(ops) == 1 and ops[0].kind == "exit"


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


def exit_truncations(cfg: Cfg) -> int:
    """`w0 = w0` before `exit` is dropped on XDP: the result is the low 32 bits of r0 anyway (contract 3). Not in
    raw mode, where all of r0 is observable."""
    if cfg.raw:
        return 0
    n = 0
    for bid in cfg.order:
        ops = cfg.blocks[bid].ops
        if not ops or ops[-1].kind != "exit":
            continue
        for j in range(len(ops) - 2, -1, -1):
            op = ops[j]
            if op.info.name == "mov32_x" and op.dst == 0 and op.src == 0 and op.off == 0:
                del ops[j]
                n += 1
                break
            if 0 in op.uses() or 0 in op.defs():
                break
    return n


def fold_offsets(cfg: Cfg) -> int:
    """`r += K` whose result is only the base of later loads/stores (until r is redefined or dies) is deleted and
    K added to their offsets: the accesses no longer wait a row for the add."""
    _, live_out = liveness(cfg)
    n = 0
    for bid in cfg.order:
        ops = cfg.blocks[bid].ops
        i = 0
        while i < len(ops):
            op = ops[i]
            if op.info.name != "add64_k" or op.dst == 10:
                i += 1
                continue
            r, k = op.dst, op.imm
            users: list[int] = []
            ok, redefined = True, False
            for j in range(i + 1, len(ops)):
                o = ops[j]
                if r in o.uses():
                    if not (o.kind in ("ldx", "ldxsx", "ldx6", "st", "stx", "st6", "stx6") and o.base == r
                            and (o.kind not in ("stx", "stx6") or o.src != r)
                            and -32768 <= o.off + k < 32768):
                        ok = False
                        break
                    users.append(j)
                if r in o.defs():
                    redefined = True
                    break
            if not ok or not users or (not redefined and r in live_out[bid]):
                i += 1
                continue
            for j in users:
                ops[j] = ops[j].copy(off=ops[j].off + k)
            del ops[i]
            n += 1
    return n


def exit_actions(cfg: Cfg) -> int:
    """`exit` where r0 is a known constant on every path -> `exit K`; branches to a shared `exit` whose r0 is a
    known constant at the branch are given their own `exit K` block."""
    states = provenance(cfg)
    n = 0
    made: dict[int, int] = {}
    for bid in list(cfg.order):
        b = cfg.blocks[bid]
        t = b.term
        if t is None or not t.is_cond or id(t) not in states:
            continue
        r0 = states[id(t)].regs.get(0)
        k = _action_of(cfg, r0)
        if k is None:
            continue
        if t.target is not None and _exit_only(cfg, t.target):
            if k not in made:
                nb = cfg.new_block()
                nb.ops = [Op(T.EXT_EXIT_ACTION, imm=_s32(k), slot=t.slot, text=f"exit {k}")]
                cfg.order.append(nb.id)
                made[k] = nb.id
            t.target = made[k]
            n += 1
    for bid in cfg.order:
        b = cfg.blocks[bid]
        t = b.term
        if t is None or t.kind != "exit" or id(t) not in states:
            continue
        r0 = states[id(t)].regs.get(0)
        k = _action_of(cfg, r0)
        if k is None:
            continue
        b.ops[-1] = Op(T.EXT_EXIT_ACTION, imm=_s32(k), slot=t.slot, text=t.text)
        n += 1
    if n:
        cfg.simplify()
    return n


def _action_of(cfg: Cfg, r0: object) -> int | None:
    """The `exit K` immediate equivalent to `exit` with this known r0, or None. `exit K` yields the u32 K; on
    XDP only the low 32 bits of r0 are the result, but in raw mode (`hxdp exec`) all 64 bits are observable."""
    if not isinstance(r0, tuple) or r0[0] != "scalar" or r0[1] is None:
        return None
    v = r0[1] & 0xFFFFFFFFFFFFFFFF
    if cfg.raw and v > 0xFFFFFFFF:
        return None
    return v & 0xFFFFFFFF


def _s32(x: int) -> int:
    return x - (1 << 32) if x & 0x80000000 else x


# --- byte loads combined into wider loads -------------------------------------------------------------------
_LDX = {1: "ldxb", 2: "ldxh", 4: "ldxw", 8: "ldxdw"}


def _def_before(ops: list[Op], j: int, reg: int) -> int | None:
    for i in range(j - 1, -1, -1):
        if reg in ops[i].defs():
            return i
    return None


def combine_loads(cfg: Cfg) -> int:
    """`a = u8[p+k+1]; b = u8[p+k]; a <<= 8; a |= b` -> `a = u16[p+k]` (little endian), and likewise 2+2 -> 4 and
    4+4 -> 8 bytes: the way clang reads unaligned header fields."""
    _, live_out = liveness(cfg)
    states = provenance(cfg)
    n = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        changed = True
        while changed:
            changed = False
            ops = b.ops
            after = live_after(ops, live_out[bid])
            for j, op in enumerate(ops):
                info = op.info
                if op.kind != "alu" or info.op != "or" or not info.src_reg or op.dst == op.src:
                    continue
                a, bb = op.dst, op.src
                sh = _def_before(ops, j, a)
                lb = _def_before(ops, j, bb)
                if sh is None or lb is None or bb in after[j]:
                    continue
                shop = ops[sh]
                la = _def_before(ops, sh, a)
                if la is None or shop.info.name not in ("lsh32_k", "lsh64_k") or shop.dst != a:
                    continue
                lda, ldb = ops[la], ops[lb]
                if lda.kind != "ldx" or ldb.kind != "ldx" or lda.size != ldb.size or lda.src != ldb.src:
                    continue
                size = lda.size
                if shop.imm != 8 * size or lda.off != ldb.off + size or size not in (1, 2, 4):
                    continue
                st = states.get(id(lda))
                if st is not None and (st.regs.get(lda.src) or ("",))[0] == "ctx":
                    continue  # xdp_md is read one 32-bit field at a time: a wider ctx load is an access fault
                if 2 * size == 8 and (info.width != 64 or shop.info.width != 64):
                    continue
                lo, hi = min(la, lb), max(la, lb)
                base = lda.src
                others = [m for m in range(lo, j + 1) if m not in (la, lb, sh, j)]
                if any(base in ops[m].defs() for m in range(lo, hi)):
                    continue
                if any(ops[m].is_store or ops[m].is_call or ops[m].is_atomic for m in range(lo, hi)):
                    continue
                # a and b are only touched by the pattern between the loads and the or
                if any(a in ops[m].uses() or a in ops[m].defs() for m in others if m > la) or \
                        any(bb in ops[m].uses() or bb in ops[m].defs() for m in others if m > lb):
                    continue
                if hi == lb and any(a in ops[m].uses() for m in range(la + 1, hi)):
                    continue
                wide = ldb.copy(opcode=T.BY_NAME[_LDX[2 * size]].opcode, dst=a)
                b.ops = [wide if m == hi else o for m, o in enumerate(ops) if m not in (lo, sh, j) or m == hi]
                n += 1
                changed = True
                break
    return n


# A value built from loaded bytes: (base register, version of that register, {byte position: offset}, region of
# the loads); every bit outside the listed bytes is zero.
_Bytes = tuple[int, int, dict[int, int], str | None]


def combine_byte_loads(cfg: Cfg) -> int:
    """Any shift-and-or tree of zero-extended loads from one base register that ends up as the little-endian
    bytes base+k .. base+k+n-1 (n = 2, 4, 8) in positions 0..n-1 -> one n-byte load at its root (the component
    loads die). Covers the orders and widths clang mixes when it copies unaligned packet fields (`memcpy` of a
    16-byte key), which the pairwise pattern of combine_loads misses. No call, and no store that may reach the
    loaded region, may come between the first component load and the root; the base register is unchanged."""
    _, live_out = liveness(cfg)
    states = provenance(cfg)
    for bid in cfg.order:
        _rename_loads_over_their_base(cfg, bid, live_out[bid], states)
    states = provenance(cfg)
    n = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        sym: dict[int, _Bytes] = {}
        version: dict[int, int] = {}
        new_ops: list[Op] = []
        for op in b.ops:
            info = op.info
            out: _Bytes | None = None
            if op.is_call:
                sym.clear()
            elif op.is_store or op.is_atomic:
                region = access_of(op, states.get(id(op))).region
                for r in [r for r, v in sym.items() if region in (None, "scalar") or v[3] in (None, region)]:
                    del sym[r]
            elif op.kind == "ldx" and op.src != op.dst:
                base = states[id(op)].regs.get(op.src) if id(op) in states else None
                region = base[0] if base is not None and base[0] in ("pkt", "stack", "map", "ctx") else None
                # (xdp_md is read one 32-bit field at a time: a wider ctx load is an access fault)
                if region != "ctx":
                    out = (op.src, version.get(op.src, 0), {i: op.off + i for i in range(op.size)}, region)
            elif op.kind == "alu" and info.op == "lsh" and not info.src_reg and op.imm % 8 == 0 and op.dst in sym:
                base, ver, pos, region = sym[op.dst]
                out = (base, ver, {p + op.imm // 8: o for p, o in pos.items()}, region)
            elif op.kind == "alu" and info.op == "or" and info.src_reg and op.dst in sym and op.src in sym:
                (ba, va, pa, ra), (bb, vb, pb, _) = sym[op.dst], sym[op.src]
                if ba == bb and va == vb and not set(pa) & set(pb):
                    out = (ba, va, {**pa, **pb}, ra)
            elif op.kind == "alu" and info.op == "mov" and info.src_reg and op.src in sym:
                out = sym[op.src]
            if out is not None and op.kind == "alu" and max(out[2]) >= info.width // 8:
                out = None  # bytes shifted out of the operation's width are lost
            for d in op.defs():
                sym.pop(d, None)
                version[d] = version.get(d, 0) + 1
                for r in [r for r, v in sym.items() if v[0] == d]:
                    del sym[r]
            if out is not None and op.dst != out[0]:
                sym[op.dst] = out
                pos = out[2]
                size = len(pos)
                if op.kind == "alu" and info.op == "or" and size in (2, 4, 8) and set(pos) == set(range(size)) \
                        and all(pos[i] == pos[0] + i for i in range(size)) and version.get(out[0], 0) == out[1]:
                    new_ops.append(Op(T.BY_NAME[_LDX[size]].opcode, op.dst, out[0], pos[0], slot=op.slot,
                                      text=op.text))
                    n += 1
                    continue
            new_ops.append(op)
        b.ops = new_ops
    return n


def _rename_loads_over_their_base(cfg: Cfg, bid: int, live_out: set[int], states: dict[int, State]) -> None:
    """`r1 = *(u16 *)(r1 + k)` (a packet field piece) overwrites the base that later loads of the same tree still
    need: give the loaded value (and the ops that go on updating it) a fresh virtual register up to the next
    plain overwrite of r1 in the block (renaming allocates registers later). Left alone when that value is still
    live at the block's end, and when the value feeds no shift or or."""
    ops = cfg.blocks[bid].ops
    for i, op in enumerate(ops):
        if op.kind != "ldx" or op.dst != op.src or op.dst in (0, 10) or op.size == 8:  # r0: cmpxchg operand
            continue
        base = states[id(op)].regs.get(op.src) if id(op) in states else None
        if base is None or base[0] != "pkt":
            continue
        r = op.dst
        end = next((k for k in range(i + 1, len(ops)) if r in ops[k].defs() and r not in ops[k].uses()), None)
        if end is None and r in live_out:
            continue
        stop = end if end is not None else len(ops)
        if any(o.is_call for o in ops[i + 1 : stop]):  # a call reads r1-r5 implicitly
            continue
        if not any(o.kind == "alu" and o.info.op in ("lsh", "or") and r in o.uses() for o in ops[i + 1 : stop]):
            continue  # not a piece of a shift-and-or tree
        v = cfg.new_vreg()
        op.dst = v
        for o in ops[i + 1 : stop]:
            o.rename({r: v})


# --- remaining packet bounds checks ---------------------------------------------------------------------
_UNSIGNED = frozenset({"jgt", "jge", "jlt", "jle"})


def rewrite_bounds_checks(cfg: Cfg) -> int:
    """`p2 = p + K; if p2 > data_end` (p2 used nowhere else) -> `e = data_end - K; if p > e`: the subtraction
    depends only on data_end, so the check no longer waits for the pointer add. Exact for packet addresses
    (no wrap-around: data_end is far above K)."""
    states = provenance(cfg)
    live_in, live_out = liveness(cfg)
    n = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        t = b.term
        if t is None or not t.is_cond or t.info.width != 64 or not t.info.src_reg or t.info.op not in _UNSIGNED:
            continue
        st = states.get(id(t))
        if st is None or st.adjusted:
            continue
        a, c = st.regs.get(t.dst), st.regs.get(t.src)
        if a is not None and a[0] == "pkt" and c == ("end",):
            ptr, end, left = t.dst, t.src, True
        elif c is not None and c[0] == "pkt" and a == ("end",):
            ptr, end, left = t.src, t.dst, False
        else:
            continue
        after = set(live_in.get(t.target, set()))
        if b.fall is not None:
            after |= live_in.get(b.fall, set())
        if ptr in after:
            continue
        ops = b.ops
        j = len(ops) - 1
        d = None
        for i in range(j - 1, -1, -1):
            o = ops[i]
            if ptr in o.defs():
                d = i
                break
            if ptr in o.uses() or end in o.defs():
                break
        if d is None:
            continue
        dop = ops[d]
        if dop.info.name != "add64_3" or not 0 <= dop.imm < (1 << 16) or dop.src == end:
            continue
        base = dop.src
        if any(base in ops[m].defs() or end in ops[m].defs() for m in range(d + 1, j)):
            continue
        tmp = cfg.new_vreg()
        ops[d] = dop.copy(src=end, dst=tmp, imm=-dop.imm)
        ops[j] = t.copy(dst=base, src=tmp) if left else t.copy(dst=tmp, src=base)
        n += 1
    return n


# --- redundant masks ----------------------------------------------------------------------------------
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


# --- read-modify-write to atomic add ----------------------------------------------------------------------
def rmw_atomic(cfg: Cfg) -> int:
    """`x = *p; x += v; *p = x` (x dead after) -> `lock *p += v`: one memory row instead of a 3-row chain."""
    states = provenance(cfg)
    _, live_out = liveness(cfg)
    n = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        ops = b.ops
        after = live_after(ops, live_out[bid])
        i = 0
        while i < len(ops):
            ld = ops[i]
            if ld.kind != "ldx" or ld.size not in (4, 8) or ld.dst == ld.src:
                i += 1
                continue
            x, width = ld.dst, 8 * ld.size
            found = None
            for j in range(i + 1, len(ops)):
                o = ops[j]
                if x in o.uses() or x in o.defs() or ld.src in o.defs() or o.is_call or o.is_control:
                    found = j if x in o.uses() else None
                    break
            if found is None:
                i += 1
                continue
            add = ops[found]
            info = add.info
            if add.kind != "alu" or info.op != "add" or info.width != width or add.dst != x or \
                    (info.src_reg and add.src == x):
                i += 1
                continue
            st_idx = None
            for j in range(found + 1, len(ops)):
                o = ops[j]
                if x in o.uses():
                    if o.kind == "stx" and o.src == x and o.dst == ld.src and o.off == ld.off and o.size == ld.size \
                            and x not in after[j]:
                        st_idx = j
                    break
                if x in o.defs() or ld.src in o.defs() or o.is_call or o.is_control or \
                        (info.src_reg and add.src in o.defs()):
                    break
            if st_idx is None:
                i += 1
                continue
            acc = access_of(ld, states.get(id(ld)))
            clash = False
            for m in range(i + 1, st_idx):
                o = ops[m]
                if m == found or not (o.is_mem or o.is_call):
                    continue
                same_base = o.is_mem and o.base == ld.src and (o.off + o.size <= ld.off or ld.off + ld.size <= o.off)
                if not same_base and (o.is_call or not acc.disjoint(access_of(o, states.get(id(o))))):
                    clash = True
                    break
            if clash:
                i += 1
                continue
            code = T.BY_NAME["atomicdw" if width == 64 else "atomicw"].opcode
            new: list[Op] = []
            if info.src_reg:
                val = add.src
            else:
                val = cfg.new_vreg()
                new.append(Op(T.BY_NAME["mov64_k"].opcode, val, 0, 0, add.imm, slot=add.slot, text=add.text))
            new.append(Op(code, ld.src, val, ld.off, 0x00, slot=ops[st_idx].slot, text=ops[st_idx].text))
            ops = ops[:i] + ops[i + 1:found] + ops[found + 1:st_idx] + new + ops[st_idx + 1:]
            after = live_after(ops, live_out[bid])
            n += 1
        b.ops = ops
    return n


# --- copy propagation ----------------------------------------------------------------------------------
def _read_fields(op: Op) -> tuple[bool, bool]:
    """Which of the dst/src fields are pure reads that may name another register holding the same value."""
    k = op.kind
    info = op.info
    if k == "jmp":
        return True, info.src_reg
    if k in ("st", "st6"):
        return True, False
    if k in ("stx", "stx6"):
        return True, True
    if k in ("ldx", "ldxsx", "ldx6", "alu3"):
        return False, True
    if k == "alu" and info.src_reg:
        return False, True
    return False, False


def copy_propagation(cfg: Cfg) -> int:
    """After `rX = rY`, read rY instead of rX (while both hold the value) so the copy is off the critical path."""
    n = 0
    preds = cfg.preds()
    out: dict[int, dict[int, int]] = {}
    for bid in cfg.order:
        ps = preds[bid]
        copies: dict[int, int] = dict(out[ps[0]]) if len(ps) == 1 and ps[0] in out and bid != cfg.entry else {}
        for op in cfg.blocks[bid].ops:
            rd_dst, rd_src = _read_fields(op)
            if rd_dst and op.dst in copies:
                op.dst = copies[op.dst]
                n += 1
            if rd_src and op.src in copies:
                op.src = copies[op.src]
                n += 1
            for d in op.defs():
                copies.pop(d, None)
                for x in [x for x, y in copies.items() if y == d]:
                    del copies[x]
            if op.info.name == "mov64_x" and op.off == 0 and op.src != op.dst:
                copies[op.dst] = op.src
        out[bid] = copies
    return n


# --- three-operand ALU -----------------------------------------------------------------------------------
def alu3(cfg: Cfg) -> int:
    """`dst = src; dst OP= imm` -> `dst = src OP imm` when dst is not read in between and src is unchanged."""
    n = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        ops = b.ops
        dead: set[int] = set()
        for j, op in enumerate(ops):
            info = op.info
            if op.kind != "alu" or info.src_reg or info.op not in ("add", "sub", "and", "or", "xor", "lsh", "rsh"):
                continue
            table = ALU3_64 if info.width == 64 else ALU3_32
            name, imm = info.op, op.imm
            if name == "sub":
                if imm == -(1 << 31):
                    continue
                name, imm = "add", -imm
            if name not in table:
                continue
            if name in ("lsh", "rsh") and not 0 <= imm < info.width:
                continue
            for i in range(j - 1, -1, -1):
                if i in dead:
                    continue
                prev = ops[i]
                if op.dst in prev.defs():
                    # a 32-bit op reads only the low half, so a 64-bit copy before it fuses as well
                    movnames = ("mov64_x",) if info.width == 64 else ("mov32_x", "mov64_x")
                    if prev.info.name in movnames and prev.off == 0 and prev.src != op.dst \
                            and not any(prev.src in ops[m].defs() for m in range(i + 1, j) if m not in dead):
                        ops[j] = op.copy(opcode=table[name], src=prev.src, imm=imm)
                        dead.add(i)
                        n += 1
                    break
                if op.dst in prev.uses():
                    break
        b.ops = [op for i, op in enumerate(ops) if i not in dead]
    return n


# --- 6-byte load/store ------------------------------------------------------------------------------------
def _versions(ops: list[Op]) -> list[dict[int, int]]:
    """For each op, the index of the last def of every register before it (absent: block entry)."""
    cur: dict[int, int] = {}
    out = []
    for i, op in enumerate(ops):
        out.append(dict(cur))
        for d in op.defs():
            cur[d] = i
    return out


def ld6(cfg: Cfg) -> int:
    """Copies of 6 contiguous bytes done as 4+2 / 2+2+2 / ... byte loads and stores -> one ldx6 + one stx6."""
    states = provenance(cfg)
    _, live_out = liveness(cfg)
    n = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        changed = True
        while changed:
            changed = False
            ops = b.ops
            after = live_after(ops, live_out[bid])
            ver = _versions(ops)
            pairs = []
            for i, ld in enumerate(ops):
                if ld.kind != "ldx" or ld.size not in (1, 2, 4) or ld.dst == ld.src:
                    continue
                r = ld.dst
                for j in range(i + 1, len(ops)):
                    o = ops[j]
                    if r in o.uses():
                        if o.kind == "stx" and o.size == ld.size and o.src == r and o.dst != r \
                                and r not in after[j]:
                            pairs.append((i, j))
                        break
                    if r in o.defs():
                        break
            groups: dict[tuple, list[tuple[int, int]]] = {}
            for i, j in pairs:
                ld, stx = ops[i], ops[j]
                key = (ld.src, ver[i].get(ld.src, -1), stx.dst, ver[j].get(stx.dst, -1), stx.off - ld.off)
                groups.setdefault(key, []).append((i, j))
            for members in groups.values():
                members.sort(key=lambda p: ops[p[0]].off)
                for start in range(len(members)):
                    got = _run6(ops, members, start)
                    if got and _combine(ops, got, states):
                        n += 1
                        changed = True
                        break
                if changed:
                    break
    return n


def _run6(ops: list[Op], members: list[tuple[int, int]], start: int) -> list[tuple[int, int]] | None:
    a0 = ops[members[start][0]].off
    pos = a0
    run = []
    for i, j in members[start:]:
        if ops[i].off != pos:
            return None
        run.append((i, j))
        pos += ops[i].size
        if pos - a0 == 6:
            return run if len(run) > 1 else None
        if pos - a0 > 6:
            return None
    return None


def _combine(ops: list[Op], run: list[tuple[int, int]], states: dict[int, State]) -> bool:
    loads = sorted(i for i, _ in run)
    stores = sorted(j for _, j in run)
    first, last = loads[0], stores[-1]
    members = set(loads) | set(stores)
    # moving loads up to `first`: no store that may alias in between
    for i in loads[1:]:
        acc = access_of(ops[i], states.get(id(ops[i])))
        for m in range(first, i):
            o = ops[m]
            if m in members:
                continue
            if o.is_call or o.is_atomic or (o.is_store and not acc.disjoint(access_of(o, states.get(id(o))))):
                return False
    for j in stores[:-1]:
        acc = access_of(ops[j], states.get(id(ops[j])))
        for m in range(j + 1, last + 1):
            o = ops[m]
            if m in members:
                continue
            if o.is_call or o.is_atomic or (o.is_mem and not acc.disjoint(access_of(o, states.get(id(o))))):
                return False
    lo_ld = min(loads, key=lambda i: ops[i].off)
    base_ld, base_st = ops[lo_ld], ops[min(stores, key=lambda j: ops[j].off)]
    # the group's own loads move up past its own stores (and stores down past loads): only when the copied
    # ranges do not overlap (same base register, so offsets compare)
    if max(loads) > min(stores):
        src6 = replace(access_of(base_ld, states.get(id(base_ld))), size=6)
        dst6 = replace(access_of(base_st, states.get(id(base_st))), size=6)
        same_base = base_ld.src == base_st.dst and abs(base_st.off - base_ld.off) >= 6 and \
            not any(base_ld.src in ops[m].defs() for m in range(first, last + 1))
        if not same_base and not src6.disjoint(dst6):
            return False
    src_base, dst_base = base_ld.src, base_st.dst
    for cand in [ops[i].dst for i in loads]:
        if cand in (src_base, dst_base):
            continue
        ok = True
        for m in range(first, last + 1):
            if m in members:
                continue
            o = ops[m]
            if cand in o.uses() or cand in o.defs():
                ok = False
                break
        if not ok:
            continue
        # the base registers must hold the same value at the combined positions
        if any(src_base in ops[m].defs() for m in range(first, max(loads))) or \
                any(dst_base in ops[m].defs() for m in range(min(stores), last)):
            return False
        new_ld = base_ld.copy(opcode=T.EXT_LDX6, dst=cand)
        new_st = base_st.copy(opcode=T.EXT_STX6, src=cand)
        new_ld.tags.add("ld6")
        states[id(new_ld)] = states.get(id(ops[first]))
        states[id(new_st)] = states.get(id(ops[last]))
        repl = {first: new_ld, last: new_st}
        rebuilt = []
        for m, o in enumerate(ops):
            if m in repl:
                rebuilt.append(repl[m])
            elif m not in members:
                rebuilt.append(o)
        ops[:] = rebuilt
        return True
    return False
