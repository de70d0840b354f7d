"""cocotb testbench of sephirot_divshare: the core's one divider shared by a row's dividing lanes in lane order.

Driven as sephirot_core drives it: a row's lanes are presented; while pending_o the row stalls and run_i steps the
division (unless the row also waits for packet bytes, a pause); clear_i is high in the cycle the row leaves. Checked:
every lane's div/mod, signed/unsigned, 32/64-bit result against hxdp.models.alu (eBPF: x / 0 = 0, x % 0 = x,
INT_MIN / -1 = INT_MIN), and the stall: exactly DIV_EXTRA_CYCLES run cycles per dividing lane (execution contract
section 6)."""

from __future__ import annotations

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from hxdp import params
from hxdp.models.alu import alu

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1
FORMS = [("div", 0), ("mod", 0), ("div", 1), ("mod", 1)]  # (op, off): off 1 is sdiv/smod
C64 = [0, 1, 2, 3, 7, M64, M64 - 1, M64 - 6, 1 << 63, (1 << 63) - 1, (1 << 63) + 1, 1 << 32, M32, 1 << 31,
       (1 << 31) - 1]
C32 = [0, 1, 2, 3, 7, M32, M32 - 1, M32 - 6, 1 << 31, (1 << 31) - 1, (1 << 31) + 1, 0xFFFF, 0x10000]


def corner_operands() -> list[tuple[int, int, int]]:
    """(width, a, b) over every pair of corner values of each width."""
    return [(64, a, b) for a in C64 for b in C64] + [(32, a, b) for a in C32 for b in C32]


def random_operand(rng: random.Random, width: int) -> int:
    v = rng.choice([rng.getrandbits(width), rng.getrandbits(rng.randrange(1, width + 1)),
                    -rng.getrandbits(rng.randrange(1, width)) & ((1 << width) - 1),
                    rng.choice(C64 if width == 64 else C32)])
    if width == 32:  # a 32-bit form ignores the register's high half: put garbage there
        v |= rng.getrandbits(32) << 32
    return v & M64


def pack(values: list[int], width: int) -> int:
    return sum(v << (width * i) for i, v in enumerate(values))


class Lane:
    def __init__(self, div: bool, op: str, off: int, width: int, a: int, b: int):
        self.div, self.op, self.off, self.width, self.a, self.b = div, op, off, width, a, b

    def want(self) -> int:
        return alu(self.op, self.width, self.a, self.b, self.off)

    def __repr__(self) -> str:
        s = "s" if self.off else ""
        return f"{'' if self.div else '(no div) '}{s}{self.op}{self.width} {self.a:#x}, {self.b:#x}"


async def reset(dut):
    cocotb.start_soon(Clock(dut.clk_i, 10, units="ns").start())
    for sig in (dut.run_i, dut.clear_i, dut.div_i, dut.a_i, dut.b_i, dut.signed_i, dut.mod_i, dut.is64_i):
        sig.value = 0
    dut.rst_ni.value = 0
    for _ in range(3):
        await RisingEdge(dut.clk_i)
    await FallingEdge(dut.clk_i)
    dut.rst_ni.value = 1


async def run_row(dut, rng: random.Random, lanes: list[Lane], pause: float = 0.0, abort_after: int | None = None):
    """Present one row and run it as the core does; returns (run cycles, cycles the row took) or None if aborted.
    Starts and ends at a falling edge."""
    dut.div_i.value = pack([int(ln.div) for ln in lanes], 1)
    dut.a_i.value = pack([ln.a for ln in lanes], 64)
    dut.b_i.value = pack([ln.b for ln in lanes], 64)
    dut.signed_i.value = pack([ln.off for ln in lanes], 1)
    dut.mod_i.value = pack([int(ln.op == "mod") for ln in lanes], 1)
    dut.is64_i.value = pack([int(ln.width == 64) for ln in lanes], 1)
    before = int(dut.res_o.value)
    runs = cycles = 0
    while True:
        await Timer(1, "ns")  # the row's inputs have settled: pending_o is this cycle's
        pending = bool(dut.pending_o.value)
        if abort_after is not None and runs >= abort_after:
            # the packet ends in the middle of the row's divisions (a fault or the cycle limit): the row leaves
            dut.run_i.value = 0
            dut.clear_i.value = 1
            await FallingEdge(dut.clk_i)
            dut.clear_i.value = 0
            return None
        wait = rng.random() < pause  # the row also waits for packet bytes: the divider pauses
        dut.run_i.value = int(pending and not wait)
        dut.clear_i.value = int(not (pending or wait))
        cycles += 1
        runs += int(pending and not wait)
        if not (pending or wait):
            break  # the row commits at this clock edge: the results are the hold registers' now
        await FallingEdge(dut.clk_i)
    res = int(dut.res_o.value)
    for k, ln in enumerate(lanes):
        got = res >> (64 * k) & M64
        if ln.div:
            # a 32-bit form's result is zero-extended by the lane's ALU (sephirot_alu.v): compare its low half
            mask = M64 if ln.width == 64 else M32
            assert got & mask == ln.want(), f"lane {k} {ln}: RTL {got & mask:#x}, eBPF {ln.want():#x}"
        else:
            assert got == before >> (64 * k) & M64, f"lane {k} does not divide, its result changed"
    await FallingEdge(dut.clk_i)
    dut.run_i.value = 0
    dut.clear_i.value = 0
    return runs, cycles


def nlanes(dut) -> int:
    return int(dut.LANES.value)


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def every_form_on_corner_operands(dut):
    """Every pair of corner operands (0, 1, -1, INT_MIN, INT_MAX, ...) in every form and width, one division a row."""
    await reset(dut)
    rng = random.Random(1)
    n = nlanes(dut)
    extra = params.DIV_EXTRA_CYCLES
    count = 0
    for width, a, b in corner_operands():
        for op, off in FORMS:
            lane = rng.randrange(n)
            lanes = [Lane(False, "div", 0, 64, rng.getrandbits(64), rng.getrandbits(64)) for _ in range(n)]
            lanes[lane] = Lane(True, op, off, width, a, b)
            runs, cycles = await run_row(dut, rng, lanes)
            assert runs == extra and cycles == extra + 1, f"{lanes[lane]}: {runs} run cycles, {cycles} in all"
            count += 1
    dut._log.info("%d corner divisions, %d cycles each", count, extra)


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def rows_of_several_divisions_stall_k_times(dut):
    """Random rows of 0..LANES dividing lanes of random forms, widths and operands, some paused: each dividing lane
    costs DIV_EXTRA_CYCLES run cycles, and every lane gets its own result."""
    await reset(dut)
    rng = random.Random(2)
    n = nlanes(dut)
    extra = params.DIV_EXTRA_CYCLES
    assert extra == 64 // params.DIV_BITS_PER_CYCLE
    for i in range(250):
        lanes = []
        for _ in range(n):
            op, off = rng.choice(FORMS)
            width = rng.choice([32, 64])
            lanes.append(Lane(rng.random() < 0.6, op, off, width, random_operand(rng, width),
                              random_operand(rng, width)))
        k = sum(ln.div for ln in lanes)
        pause = 0.3 if i % 4 == 0 else 0.0
        runs, cycles = await run_row(dut, rng, lanes, pause)
        assert runs == k * extra, f"row {lanes}: {runs} run cycles for {k} divisions, want {k * extra}"
        if not pause:
            assert cycles == k * extra + 1


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def a_row_that_leaves_mid_division_is_forgotten(dut):
    """clear_i while divisions are pending (the packet faulted or hit the cycle limit): the next row starts afresh
    and still takes its full stall with correct results."""
    await reset(dut)
    rng = random.Random(3)
    n = nlanes(dut)
    extra = params.DIV_EXTRA_CYCLES
    for _ in range(40):
        lanes = [Lane(True, *rng.choice(FORMS), 64, random_operand(rng, 64), random_operand(rng, 64))
                 for _ in range(n)]
        assert await run_row(dut, rng, lanes, abort_after=rng.randrange(0, n * extra)) is None
        lanes = [Lane(rng.random() < 0.7, *rng.choice(FORMS), 64, random_operand(rng, 64), random_operand(rng, 64))
                 for _ in range(n)]
        runs, _ = await run_row(dut, rng, lanes)
        assert runs == sum(ln.div for ln in lanes) * extra
