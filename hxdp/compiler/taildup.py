"""Tail duplication: small exit blocks copied into the blocks that jump or fall into them."""

from __future__ import annotations

from hxdp.compiler.cfg import Cfg


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
