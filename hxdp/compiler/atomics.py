"""Read-modify-write of one memory word (`x = *p; x += v; *p = x`) -> one atomic add."""

from __future__ import annotations

from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import access_of, live_after, liveness, provenance
from hxdp.compiler.ir import Op
from hxdp.isa import table as T


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


_SPLIT = {"add": "add", "or": "or", "and": "and", "xor": "xor"}  # the atomics without a fetched result


def split_atomics(cfg: Cfg) -> int:
    """`lock *p OP= v` -> `t = *p; t OP= v; *p = t`, for a core without atomics that runs one packet at a time
    (the original hXDP: nothing else writes between the load and the store). Fetching atomics stay (refused)."""
    n = 0
    for bid in cfg.order:
        b = cfg.blocks[bid]
        new: list[Op] = []
        for op in b.ops:
            aop = T.ATOMIC_OPS.get(op.imm, "") if op.kind == "atomic" else ""
            if aop not in _SPLIT:
                new.append(op)
                continue
            size = "w" if op.info.width == 4 else "dw"
            width = 32 if size == "w" else 64
            t = cfg.new_vreg()
            new += [Op(T.BY_NAME[f"ldx{size}"].opcode, t, op.dst, op.off, slot=op.slot, text=op.text),
                    Op(T.BY_NAME[f"{_SPLIT[aop]}{width}_x"].opcode, t, op.src, slot=op.slot, text=op.text),
                    Op(T.BY_NAME[f"stx{size}"].opcode, op.dst, t, op.off, slot=op.slot, text=op.text)]
            n += 1
        b.ops = new
    return n
