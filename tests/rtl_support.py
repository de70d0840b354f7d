"""Shared helpers of the RTL tests: the built simulator (once per session), trace comparison."""

from __future__ import annotations

import pytest

from hxdp import params
from hxdp.isa.insn import NOP, Insn, assemble_line
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.vliw import VliwModel
from hxdp.result import RunResult
from hxdp.rtl import sim as rtl
from hxdp.rtl.sim import RtlSim


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


# Two trace_printk calls: format at r10 - 64 + (byte 57 & 0x38) with size byte 56 (reads min(size, 64) bytes:
# the stack ends at r10, so some calls fault), the stack filled from packet bytes 0..59 (NULs anywhere); then a
# second call with an 8-byte format and r0 of the first as r3.
def printk_rom() -> Rom:
    return Rom([
        row("r7 = *(u32 *)(r1 + 0)", "r6 = r1"),
        row("r2 = *(u64 *)(r7 + 0)", "r3 = *(u64 *)(r7 + 8)"),  # two packet loads per row (contract)
        row("r4 = *(u64 *)(r7 + 16)", "r5 = *(u64 *)(r7 + 24)"),
        row("*(u64 *)(r10 - 64) = r2", "*(u64 *)(r10 - 56) = r3"),  # two stack stores per row (contract)
        row("*(u64 *)(r10 - 48) = r4", "*(u64 *)(r10 - 40) = r5"),
        row("r2 = *(u64 *)(r7 + 32)", "r3 = *(u64 *)(r7 + 40)"),
        row("r4 = *(u64 *)(r7 + 48)", "r5 = *(u64 *)(r7 + 52)"),
        row("*(u64 *)(r10 - 32) = r2", "*(u64 *)(r10 - 24) = r3"),
        row("*(u64 *)(r10 - 16) = r4", "*(u64 *)(r10 - 8) = r5"),
        row("w2 = *(u8 *)(r7 + 56)", "w8 = *(u8 *)(r7 + 57)"),
        row("r3 = *(u64 *)(r7 + 0)", "r4 = *(u32 *)(r7 + 4)"),
        row("r8 &= 56", "r1 = r10", "r5 = -7"),
        row("r1 += r8"),
        row("r1 += -64"),
        row("call 6"),
        row("r1 = r10", "r2 = 8", "r3 = r0", "r4 = 7"),
        row("r1 += -8", "r5 = r6"),
        row("call 6"),
        row("exit 2"),
    ])


def assert_rtl_equals_model(rom: Rom, packets: list[bytes], what: str = "",
                            layout: MapLayout | None = None) -> list[RunResult]:
    """Packets back to back on the RTL and on the VLIW model, both from the empty maps of `layout` (none by
    default): the same rows, cycle by cycle, and the same action, bytes, fault or not, cycles, metadata and printk
    records, and in the end the same map memory; returns the RTL's results."""
    layout = layout if layout is not None else MapLayout.from_maps([])
    rtl_state, vm_state = MapState(layout), MapState(layout)
    got = RtlSim(rom, state=rtl_state if layout.regions else None, trace=True).run_packets(packets)
    vm = VliwModel(rom, vm_state, trace=True)
    for i, pkt in enumerate(packets):
        want = vm.run(pkt)
        where = f"{what} packet {i}".strip()
        div = first_divergence(got[i].trace, want.trace)
        assert div is None, f"{where}: {div}"
        assert (got[i].action, got[i].packet, got[i].fault is None, got[i].cycles) == \
            (want.action, want.packet, want.fault is None, want.cycles), f"{where}: {got[i]} vs {want}"
        assert got[i].meta == want.meta, f"{where}: metadata {got[i].meta.hex()} vs {want.meta.hex()}"
        assert got[i].printk == want.printk, f"{where}: printk {got[i].printk} vs {want.printk}"
    if layout.regions:
        used = layout.used_bytes()
        assert bytes(rtl_state.mem[:used]) == bytes(vm_state.mem[:used]), f"{what} map memory".strip()
    return got
