"""Packet bounds checks that remain after reduction: `p + K > data_end` -> `p > data_end - K` (shorter chain)."""

from __future__ import annotations

from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import liveness, provenance

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
