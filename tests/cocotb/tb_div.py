"""cocotb testbench of sephirot_div: the core's unsigned 64-bit restoring divider, BITS quotient bits per cycle.

A division is 64 / BITS cycles with run_i high (first_i on the first one); run_i low pauses it (the core pauses the
divider while its row waits for packet bytes). After the s-th run cycle quot_o/rem_o are the quotient and remainder
of the dividend's top BITS * s bits, so after the last one they are n / d and n % d (d = 0: all ones and n)."""

from __future__ import annotations

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

M64 = (1 << 64) - 1
CORNERS = [0, 1, 2, 3, 7, 10, 0xFF, 0xFFFF_FFFF, 0x1_0000_0000, 0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000,
           0x8000_0000_0000_0001, M64, M64 - 1, 0x8000_0000, 0x7FFF_FFFF]


def partial(n: int, d: int, bits_done: int) -> tuple[int, int]:
    """Quotient and remainder of the dividend's top `bits_done` bits (what the divider holds after those steps)."""
    top = n >> (64 - bits_done)
    if d == 0:
        return (1 << bits_done) - 1, top
    return top // d, top % d


async def divide(dut, rng: random.Random, n: int, d: int, steps: int, bits: int, pause: float) -> int:
    """One division with random pauses; checks every run cycle's partial result; returns the cycles it took."""
    dut.n_i.value = n
    dut.d_i.value = d
    done = cycles = 0
    while done < steps:
        await FallingEdge(dut.clk_i)
        run = rng.random() >= pause
        dut.run_i.value = int(run)
        dut.first_i.value = int(done == 0)
        cycles += 1
        if run:
            await ReadOnly()
            q, r = int(dut.quot_o.value), int(dut.rem_o.value)
            if done + 1 == steps or rng.random() < 0.3:  # every final result, some partial ones
                wq, wr = partial(n, d, bits * (done + 1))
                assert (q, r) == (wq, wr), (f"{n:#x} / {d:#x} after {done + 1} of {steps} steps: quot {q:#x} rem "
                                            f"{r:#x}, want {wq:#x} {wr:#x}")
            done += 1
        await RisingEdge(dut.clk_i)
    dut.run_i.value = 0
    return cycles


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def quotient_and_remainder_in_64_over_bits_cycles(dut):
    bits = int(dut.BITS.value)
    steps = 64 // bits
    cocotb.start_soon(Clock(dut.clk_i, 10, units="ns").start())
    dut.run_i.value = 0
    dut.first_i.value = 0
    await RisingEdge(dut.clk_i)
    rng = random.Random(7)
    cases = [(n, d) for n in CORNERS for d in CORNERS]
    cases += [(rng.getrandbits(64), rng.getrandbits(rng.choice([3, 8, 17, 32, 33, 63, 64]))) for _ in range(300)]
    cases += [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(100)]
    for i, (n, d) in enumerate(cases):
        pause = 0.0 if i % 3 else 0.4  # a third of them paused at random (the run cycles still count 64 / BITS)
        await divide(dut, rng, n, d, steps, bits, pause)
        if i % 7 == 0:  # idle cycles between divisions: the divider's state must not matter to the next one
            dut.n_i.value = rng.getrandbits(64)
            dut.d_i.value = rng.getrandbits(64)
            for _ in range(rng.randrange(1, 4)):
                await RisingEdge(dut.clk_i)
    dut._log.info("BITS=%d: %d divisions, each %d run cycles", bits, len(cases), steps)


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def a_paused_division_keeps_its_state(dut):
    """run_i low for many cycles in the middle (operands held): the result is as if it had never stopped."""
    bits = int(dut.BITS.value)
    steps = 64 // bits
    cocotb.start_soon(Clock(dut.clk_i, 10, units="ns").start())
    rng = random.Random(11)
    for _ in range(20):
        n, d = rng.getrandbits(64), rng.getrandbits(rng.choice([5, 31, 64]))
        cycles = await divide(dut, rng, n, d, steps, bits, pause=0.8)
        assert cycles >= steps
