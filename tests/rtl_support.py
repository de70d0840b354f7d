"""Shared helpers of the RTL tests: the built simulator (once per session), trace comparison."""

from __future__ import annotations

import pytest
from hxdp import params, rtl
from hxdp.isa import NOP, Insn, assemble_line


def require_rtl() -> None:
    """Skip (with the reason) when Verilator is missing; build the model once (cached across runs)."""
    ok, why = rtl.available()
    if not ok:
        pytest.skip(why)
    rtl.build()


def first_divergence(rtl_trace: list, model_trace: list) -> str | None:
    """None when the traces agree row by row, else a message naming the first differing row and lane."""
    for i, (a, b) in enumerate(zip(rtl_trace, model_trace, strict=False)):
        if a.row != b.row:
            return f"step {i}: RTL executed row {a.row}, model row {b.row}"
        ra = {(lane, reg): v for lane, reg, v in a.regs}
        rb = {(lane, reg): v for lane, reg, v in b.regs}
        for key in sorted(set(ra) | set(rb)):
            if ra.get(key) != rb.get(key):
                lane, reg = key
                va, vb = ra.get(key), rb.get(key)
                return (f"step {i} row {a.row} lane {lane}: r{reg} RTL "
                        f"{'-' if va is None else hex(va)} model {'-' if vb is None else hex(vb)}")
        if a.mem != b.mem:
            for (la, aa, da), (lb, ab, db) in zip(a.mem, b.mem, strict=False):
                if (la, aa, da) != (lb, ab, db):
                    return (f"step {i} row {a.row} lane {la}: store RTL 0x{aa:08x}={da.hex()} "
                            f"model 0x{ab:08x}={db.hex()}")
            return f"step {i} row {a.row}: RTL stores {a.mem}, model {b.mem}"
        if a.next != b.next:
            return f"step {i} row {a.row}: next row RTL {a.next} model {b.next}"
        if a.cycles != b.cycles:
            return f"step {i} row {a.row}: cycles RTL {a.cycles} model {b.cycles}"
    if len(rtl_trace) != len(model_trace):
        return f"RTL executed {len(rtl_trace)} rows, model {len(model_trace)}"
    return None


def row(*texts: str) -> list[Insn]:
    """One ROM row from assembly texts, padded with no-ops."""
    lanes = [i for t in texts for i in assemble_line(t)]
    return lanes + [NOP] * (params.LANES - len(lanes))
