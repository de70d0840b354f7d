"""cocotb testbench of sephirot_portsel (combinational): a memory's NP ports given to the requesting lanes in lane
order. Port p takes the lowest requesting lane not taken by ports 0..p-1 and forwards its address, size and data;
the requesting lanes left over are left_o (the core faults their row)."""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import Timer


def model(lanes: int, np_: int, dw: int, req: int, addr: list[int], size: list[int], data: list[int]) -> dict[str, int]:
    """What the selector must output, from the contract's rule (written as a loop over lanes, not bit tricks)."""
    taken = [j for j in range(lanes) if req >> j & 1][:np_]
    sel = used = a_o = s_o = d_o = 0
    for p, j in enumerate(taken):
        sel |= 1 << (lanes * p + j)
        used |= 1 << p
        a_o |= addr[j] << (32 * p)
        s_o |= size[j] << (4 * p)
        d_o |= data[j] << (dw * p)
    left = req & ~sum(1 << j for j in taken)
    return {"sel_o": sel, "used_o": used, "addr_o": a_o, "size_o": s_o, "data_o": d_o, "left_o": left}


def pack(values: list[int], width: int) -> int:
    return sum((v & ((1 << width) - 1)) << (width * i) for i, v in enumerate(values))


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def every_request_pattern_and_random_operands(dut):
    """All 2^LANES request masks many times over with random addresses, sizes and data, against the model."""
    lanes, np_, awd, dw = (int(dut.LANES.value), int(dut.NP.value), int(dut.AWD.value), int(dut.DW.value))
    assert awd == 32
    rng = random.Random(4242)
    masks = [m for m in range(1 << lanes) for _ in range(12)] + [rng.randrange(1 << lanes) for _ in range(400)]
    rng.shuffle(masks)
    checked = 0
    for req in masks:
        addr = [rng.choice([0, 0xFFFF_FFFF, rng.getrandbits(32)]) for _ in range(lanes)]
        size = [rng.choice([1, 2, 4, 8, rng.getrandbits(4)]) for _ in range(lanes)]
        data = [rng.getrandbits(dw) for _ in range(lanes)]
        dut.req_i.value = req
        dut.addr_i.value = pack(addr, 32)
        dut.size_i.value = pack(size, 4)
        dut.data_i.value = pack(data, dw)
        await Timer(1, "ns")
        want = model(lanes, np_, dw, req, addr, size, data)
        for name, value in want.items():
            got = int(getattr(dut, name).value)
            assert got == value, (f"req={req:0{lanes}b} addr={[hex(a) for a in addr]} size={size}: {name} "
                                  f"RTL {got:#x}, model {value:#x}")
        # the port outputs are one-hot or none, and served + left = requested
        sel = int(dut.sel_o.value)
        served = 0
        for p in range(np_):
            s = sel >> (lanes * p) & ((1 << lanes) - 1)
            assert s & (s - 1) == 0, f"port {p} selects {s:0{lanes}b}"
            assert served & s == 0, f"lane mask {s:0{lanes}b} taken by two ports"
            served |= s
        assert served | int(dut.left_o.value) == req and served & int(dut.left_o.value) == 0
        checked += 1
    dut._log.info("LANES=%d NP=%d DW=%d: %d request patterns match the model", lanes, np_, dw, checked)
