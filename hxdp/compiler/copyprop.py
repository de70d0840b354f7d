"""Copy propagation, and constant pointer offsets folded into the loads and stores that use them."""

from __future__ import annotations

from hxdp.compiler.cfg import Cfg
from hxdp.compiler.dataflow import liveness
from hxdp.compiler.ir import Op


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
