"""Wide loads: byte loads shifted and or-ed together (clang's unaligned field reads) -> one wider load."""

from __future__ import annotations

from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import State, access_of, live_after, liveness, provenance
from hxdp.compiler.ir import Op
from hxdp.isa import table as T

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
