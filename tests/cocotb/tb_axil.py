"""cocotb testbench of sephirot_axil, the board's AXI-Lite register slave, driven by cocotbext-axi's AxiLiteMaster.

The slave's ports are s_<signal>_i / s_<signal>_o: the channel buses are cocotbext-axi's with a signal-name map
(cocotb-bus Bus takes a dict of attribute -> port name), so the RTL keeps its naming. Around the slave the testbench
models what the board connects to it: the map memory (a dict of 16-byte lines, its write port sometimes not ready),
the packet results (pkt_done_i pulses), the trace FIFO's inputs, and monitors of the one-cycle outputs (row and
configuration commits, counter clear, trace pop). An AXI checker runs throughout: a response stays valid, with its
data and resp unchanged, until it is taken, and never comes without its request.

Registers: hxdp/params.py AXI_* and docs/board.md section 1 (the register map)."""

from __future__ import annotations

import random

import cocotb
import cocotb.utils
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Combine, FallingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp
from cocotbext.axi.axil_channels import (
    AxiLiteARBus,
    AxiLiteAWBus,
    AxiLiteBBus,
    AxiLiteRBus,
    AxiLiteReadBus,
    AxiLiteWBus,
    AxiLiteWriteBus,
)

from hxdp import params as P

OKAY, SLVERR = AxiResp.OKAY, AxiResp.SLVERR
M32 = (1 << 32) - 1
LANES = P.LANES
ROWS = P.IMEM_ROWS
LINES = P.MAP_MEM_BYTES // P.AXI_LINE_BYTES
TRACE_WORDS = P.AXI_TRACE_WORDS


def _renamed(base, inputs: list[str], outputs: list[str]):
    """cocotbext-axi's channel bus `base` with the slave's port names: prefix s_, suffix _i (inputs) / _o.

    Every port is listed as a required signal and looked up by its exact name (case_insensitive=False, below): an
    optional signal, or a case-insensitive lookup, makes cocotb-bus call dir() on the toplevel, and once cocotb 1.9
    has discovered the toplevel's objects that way under Verilator 5.006, writes to its input ports through the
    handles are lost (the master's valid never reaches the slave). awprot and arprot are left out (not ports)."""
    return type(base.__name__ + "Seph", (base,), {
        "_signals": {**{s: f"{s}_i" for s in inputs}, **{s: f"{s}_o" for s in outputs}},
        "_optional_signals": {},
    })


AW = _renamed(AxiLiteAWBus, ["awaddr", "awvalid"], ["awready"])
W = _renamed(AxiLiteWBus, ["wdata", "wstrb", "wvalid"], ["wready"])
B = _renamed(AxiLiteBBus, ["bready"], ["bresp", "bvalid"])
AR = _renamed(AxiLiteARBus, ["araddr", "arvalid"], ["arready"])
R = _renamed(AxiLiteRBus, ["rready"], ["rdata", "rresp", "rvalid"])


def _channel(cls, dut):
    return cls.from_prefix(dut, "s", case_insensitive=False)


class Bench:
    """The slave, an AxiLiteMaster on its port, and models of what the board connects to it."""

    def __init__(self, dut, seed: int):
        self.dut = dut
        self.rng = random.Random(seed)
        self.axi: AxiLiteMaster | None = None
        self.mem: dict[int, int] = {}          # map memory: line -> 128-bit value
        self.mem_stall = 0.0                   # probability that the map memory's write port is not ready
        self.imem_writes: list[tuple[int, int]] = []
        self.mcfg_writes: list[tuple[int, int]] = []
        self.clears = 0
        self.pops = 0
        self.ev_pops = 0
        self.ev_head: list[int] = []  # the event ring's head record, as 32-bit words
        self.protocol_errors: list[str] = []
        # cycles a response waited for the master's ready, and a request for the slave's ready
        self.waits = {"b": 0, "r": 0, "aw": 0, "w": 0, "ar": 0}

    async def start(self):
        dut = self.dut
        cocotb.start_soon(Clock(dut.clk_i, 10, units="ns").start())
        for sig in (dut.map_rdata_i, dut.held_i, dut.inflight_i, dut.pkt_done_i, dut.res_action_i, dut.res_fault_i,
                    dut.trc_count_i, dut.trc_dropped_i, dut.trc_head_i, dut.ev_count_i, dut.ev_dropped_i,
                    dut.ev_rdata_i):
            sig.value = 0
        dut.map_wready_i.value = 1
        bus = AxiLiteBus(AxiLiteWriteBus.from_channels(_channel(AW, dut), _channel(W, dut), _channel(B, dut)),
                         AxiLiteReadBus.from_channels(_channel(AR, dut), _channel(R, dut)))
        self.axi = AxiLiteMaster(bus, dut.clk_i, dut.rst_ni, reset_active_level=False)
        dut.rst_ni.value = 0
        await ClockCycles(dut.clk_i, 3)
        await FallingEdge(dut.clk_i)
        dut.rst_ni.value = 1
        cocotb.start_soon(self._board())
        cocotb.start_soon(self._axi_checker())
        await ClockCycles(dut.clk_i, 2)

    async def _board(self):
        """Each cycle, between the edges: the map memory (read port: the line map_line_o names; write port: taken
        when map_wready_i, which is sometimes low) and monitors of the one-cycle outputs."""
        dut = self.dut
        while True:
            await FallingEdge(dut.clk_i)
            line = int(dut.map_line_o.value)
            ready = self.rng.random() >= self.mem_stall
            dut.map_wready_i.value = int(ready)
            if int(dut.map_we_o.value) and ready:
                self.mem[line] = int(dut.map_wdata_o.value)
            dut.map_rdata_i.value = self.mem.get(line, 0)
            if int(dut.imem_we_o.value):
                self.imem_writes.append((int(dut.imem_waddr_o.value), int(dut.imem_wdata_o.value)))
            if int(dut.mcfg_we_o.value):
                self.mcfg_writes.append((int(dut.mcfg_idx_o.value), int(dut.mcfg_wdata_o.value)))
            self.clears += int(dut.cnt_clr_o.value)
            self.pops += int(dut.trc_pop_o.value)
            self.ev_pops += int(dut.ev_pop_o.value)
            # the event ring's word read: block RAM, its word is there in the cycle after the read's address
            if int(dut.ev_rd_o.value):
                word = int(dut.ev_word_o.value)
                dut.ev_rdata_i.value = self.ev_head[word] if word < len(self.ev_head) else 0

    async def _axi_checker(self):
        """AXI rules on the response channels, and responses only for requests (sampled once a cycle)."""
        dut = self.dut
        prev_b = prev_r = None
        aw = w = b = ar = r = 0
        while True:
            await FallingEdge(dut.clk_i)
            bvalid, bready, bresp = int(dut.s_bvalid_o.value), int(dut.s_bready_i.value), int(dut.s_bresp_o.value)
            rvalid, rready = int(dut.s_rvalid_o.value), int(dut.s_rready_i.value)
            rdata, rresp = int(dut.s_rdata_o.value), int(dut.s_rresp_o.value)
            if prev_b is not None and (not bvalid or bresp != prev_b):
                self.protocol_errors.append(f"B: bvalid dropped or bresp changed before bready ({prev_b} -> {bresp})")
            if prev_r is not None and (not rvalid or (rdata, rresp) != prev_r):
                self.protocol_errors.append(f"R: rvalid dropped or rdata/rresp changed before rready {prev_r}")
            prev_b = bresp if bvalid and not bready else None
            prev_r = (rdata, rresp) if rvalid and not rready else None
            self.waits["b"] += bvalid and not bready
            self.waits["r"] += rvalid and not rready
            for ch in ("aw", "w", "ar"):
                valid, ready = getattr(dut, f"s_{ch}valid_i"), getattr(dut, f"s_{ch}ready_o")
                self.waits[ch] += int(valid.value) and not int(ready.value)
            aw += int(dut.s_awvalid_i.value) & int(dut.s_awready_o.value)
            w += int(dut.s_wvalid_i.value) & int(dut.s_wready_o.value)
            ar += int(dut.s_arvalid_i.value) & int(dut.s_arready_o.value)
            b += bvalid & bready
            r += rvalid & rready
            if b > min(aw, w) or r > ar or aw > b + 1 or w > b + 1 or ar > r + 1:
                self.protocol_errors.append(f"handshakes AW {aw} W {w} B {b} AR {ar} R {r}")
            # (an exception here fails the running test at once: a lost response would otherwise hang the master)
            assert not self.protocol_errors, f"AXI rule broken at {cocotb.utils.get_sim_time('ns')} ns: " \
                                             f"{self.protocol_errors[0]}"

    # ---- register access ----------------------------------------------------------------------------------------
    # The map has registers at addresses that are not word aligned (the counters at 0x8002_0002..4, the commits at
    # +0xFF), read and written as whole 32-bit words at that exact address. The master's byte-addressed API cannot
    # express that (4 bytes at 0x...FF become two beats, 1 byte a beat with wdata in lane 3), so those accesses
    # are single beats put on the master's channels directly (while the master itself is idle).
    async def wr(self, addr: int, value: int, resp: AxiResp = OKAY) -> None:
        if addr % 4:
            got = AxiResp(await self.raw_write(addr, value & M32))
        else:
            got = (await self.axi.write(addr, (value & M32).to_bytes(4, "little"))).resp
        assert got == resp, f"write {value:#x} to {addr:#010x}: {got!r}, want {resp!r}"

    async def rd(self, addr: int, resp: AxiResp = OKAY) -> int:
        if addr % 4:
            data, got = await self.raw_read(addr)
            got = AxiResp(got)
        else:
            res = await self.axi.read(addr, 4)
            data, got = int.from_bytes(res.data, "little"), res.resp
        assert got == resp, f"read of {addr:#010x}: {got!r}, want {resp!r}"
        return data

    async def raw_read(self, addr: int) -> tuple[int, int]:
        """One AR beat at exactly `addr`; returns (rdata, rresp)."""
        rd_if = self.axi.read_if
        await rd_if.ar_channel.send(self._ar(addr))
        r = await rd_if.r_channel.recv()
        return int(r.rdata), int(r.rresp)

    def _ar(self, addr: int):
        ar = self.axi.read_if.ar_channel._transaction_obj()
        ar.araddr = addr
        return ar

    def _aw_w(self, addr: int, data: int, strb: int = 0xF):
        wr_if = self.axi.write_if
        aw = wr_if.aw_channel._transaction_obj()
        aw.awaddr = addr
        w = wr_if.w_channel._transaction_obj()
        w.wdata, w.wstrb = data, strb
        return aw, w

    async def raw_write(self, addr: int, data: int, strb: int = 0xF, w_first: int = 0, aw_first: int = 0) -> int:
        """One write beat with any strobes; AW or W may go `aw_first` / `w_first` cycles before the other. Returns
        bresp."""
        wr_if = self.axi.write_if
        aw, w = self._aw_w(addr, data, strb)
        if w_first:
            await wr_if.w_channel.send(w)
            await ClockCycles(self.dut.clk_i, w_first)
            await wr_if.aw_channel.send(aw)
        else:
            await wr_if.aw_channel.send(aw)
            await ClockCycles(self.dut.clk_i, aw_first)
            await wr_if.w_channel.send(w)
        b = await wr_if.b_channel.recv()
        return int(b.bresp)

    async def raw_burst(self, writes: list[tuple[int, int]], reads: list[int]) -> tuple[list[int], list[tuple]]:
        """Every write beat and every read beat queued on the channels at once (back to back, as fast as the
        slave takes them); returns the write responses and the (rdata, rresp) of the reads, in order."""
        wr_if, rd_if = self.axi.write_if, self.axi.read_if
        beats = [self._aw_w(addr, data) for addr, data in writes]

        async def feed(channel, items):  # (the master's channel queues hold a few beats: fed as they drain)
            for item in items:
                await channel.send(item)

        cocotb.start_soon(feed(wr_if.aw_channel, [aw for aw, _ in beats]))
        cocotb.start_soon(feed(wr_if.w_channel, [w for _, w in beats]))
        cocotb.start_soon(feed(rd_if.ar_channel, [self._ar(addr) for addr in reads]))

        async def bresps():
            return [int((await wr_if.b_channel.recv()).bresp) for _ in writes]

        async def rbeats():
            out = []
            for _ in reads:
                r = await rd_if.r_channel.recv()
                out.append((int(r.rdata), int(r.rresp)))
            return out

        b_task, r_task = cocotb.start_soon(bresps()), cocotb.start_soon(rbeats())
        await Combine(b_task, r_task)
        return b_task.result(), r_task.result()

    async def cycles(self, n: int = 1):
        await ClockCycles(self.dut.clk_i, n)

    def check_protocol(self):
        assert not self.protocol_errors, self.protocol_errors[:5]


async def bench(dut, seed: int) -> Bench:
    tb = Bench(dut, seed)
    await tb.start()
    return tb


def row_word(row: int, k: int, high: bool) -> int:
    return P.imem_row_base(row) + 8 * k + 4 * high  # rows past 255: the extended window


# ------------------------------------------------------------------------------------------------------------------
@cocotb.test(timeout_time=200, timeout_unit="us")
async def identity_and_read_only_registers(dut):
    """ID, sizes, FIFO constants, STATUS from held_i, packets in flight, the trace FIFO's count, drops and head."""
    tb = await bench(dut, 1)
    assert await tb.rd(P.AXI_ID) == P.AXI_ID_VALUE
    assert await tb.rd(P.AXI_IMEM_CAPACITY) == ROWS
    assert await tb.rd(P.AXI_MAP_LINES) == LINES
    assert await tb.rd(P.AXI_TRACE_DEPTH) == P.PRINTK_FIFO_DEPTH
    assert await tb.rd(P.AXI_TRACE_FMT_MAX) == P.PRINTK_FMT_MAX
    assert await tb.rd(P.AXI_ROWS) == 0, "ROWS resets to 0 (every packet aborts until a program is injected)"
    assert await tb.rd(P.AXI_CTRL) == 0
    for held in (0, 1):
        dut.held_i.value = held
        assert await tb.rd(P.AXI_STATUS) == held
    for inflight in (0, 1, 3, 0xFFFF):
        dut.inflight_i.value = inflight
        assert await tb.rd(P.AXI_INFLIGHT) == inflight
    dut.trc_count_i.value = 5
    dut.trc_dropped_i.value = 0xDEADBEEF
    head = [tb.rng.getrandbits(32) for _ in range(TRACE_WORDS)]
    dut.trc_head_i.value = sum(v << (32 * i) for i, v in enumerate(head))
    assert await tb.rd(P.AXI_TRACE_COUNT) == 5
    assert await tb.rd(P.AXI_TRACE_DROPPED) == 0xDEADBEEF
    for i, v in enumerate(head):
        assert await tb.rd(P.AXI_TRACE_HEAD + 4 * i) == v, f"trace head word {i}"
    tb.check_protocol()


@cocotb.test(timeout_time=200, timeout_unit="us")
async def event_ring_registers(dut):
    """The event ring's count, drops and constants; its head record's words (read a cycle after their address, the
    ring's block RAM); a pop is one pulse."""
    tb = await bench(dut, 11)
    assert await tb.rd(P.AXI_EVENT_DEPTH) == P.EVENT_FIFO_DEPTH
    assert await tb.rd(P.AXI_EVENT_DATA_MAX) == P.EVENT_DATA_MAX
    dut.ev_count_i.value = 3
    dut.ev_dropped_i.value = 0xFEEDF00D
    assert await tb.rd(P.AXI_EVENT_COUNT) == 3
    assert await tb.rd(P.AXI_EVENT_DROPPED) == 0xFEEDF00D
    tb.ev_head = [tb.rng.getrandbits(32) for _ in range(P.AXI_EVENT_WORDS)]
    for i in list(range(12)) + [P.AXI_EVENT_WORDS // 2, P.AXI_EVENT_WORDS - 1]:
        assert await tb.rd(P.AXI_EVENT_HEAD + 4 * i) == tb.ev_head[i], f"event head word {i}"
    assert await tb.rd(P.AXI_EVENT_COUNT) == 3, "a register read after a ring read"
    await tb.wr(P.AXI_EVENT_POP, 1)
    await tb.cycles(2)
    assert (tb.ev_pops, tb.pops) == (1, 0)
    tb.check_protocol()


@cocotb.test(timeout_time=200, timeout_unit="us")
async def instruction_rows_stage_commit_and_read_back(dut):
    """Lane words staged, a commit writes the row in one cycle (one imem write of the whole row), the staging row is
    zeroed, a commit of 0 does nothing, the committed row reads back, the commit address reads 0."""
    tb = await bench(dut, 2)
    committed = {}
    for row in (0, 1, 77, 255, 256, 1000, ROWS - 1):
        words = [tb.rng.getrandbits(32) for _ in range(2 * LANES)]
        for k in range(LANES):
            await tb.wr(row_word(row, k, False), words[2 * k])
            await tb.wr(row_word(row, k, True), words[2 * k + 1])
        assert not tb.imem_writes, "staging a word writes no row"
        await tb.wr(P.imem_row_base(row) + P.AXI_IMEM_COMMIT, 1)
        await tb.cycles(2)
        value = sum(w << (32 * i) for i, w in enumerate(words))
        assert tb.imem_writes == [(row, value)], f"row {row}: imem writes {tb.imem_writes}"
        tb.imem_writes.clear()
        committed[row] = words
    for row, words in committed.items():
        for i, w in enumerate(words):
            assert await tb.rd(P.imem_row_base(row) + 4 * i) == w, f"row {row} word {i}"
        assert await tb.rd(P.imem_row_base(row) + P.AXI_IMEM_COMMIT) == 0
        # every row, those below 256 too, also in the extended window
        assert await tb.rd(P.AXI_IMEM_EXT_BASE + (row << 8) + 4) == words[1], f"row {row} in the extended window"
    # the extended window past the last row answers SLVERR
    assert (await tb.axi.read(P.AXI_IMEM_EXT_BASE + (ROWS << 8), 4)).resp == SLVERR
    # writing 0 (bit 0 clear) to a commit address commits nothing; the staging row was zeroed by the last commit
    await tb.wr(row_word(5, 2, True), 0x12345678)
    await tb.wr(P.AXI_IMEM_BASE + (5 << 8) + P.AXI_IMEM_COMMIT, 0)
    await tb.wr(P.AXI_IMEM_BASE + (5 << 8) + P.AXI_IMEM_COMMIT, 2)
    await tb.cycles(2)
    assert tb.imem_writes == []
    await tb.wr(P.AXI_IMEM_BASE + (6 << 8) + P.AXI_IMEM_COMMIT, 1)
    await tb.cycles(2)
    assert tb.imem_writes == [(6, 0x12345678 << (32 * 5))], "only the word staged since the last commit"
    tb.imem_writes.clear()
    await tb.wr(P.AXI_IMEM_BASE + (7 << 8) + P.AXI_IMEM_COMMIT, 1)
    await tb.cycles(2)
    assert tb.imem_writes == [(7, 0)], "a commit zeroes the staging row"
    tb.check_protocol()


@cocotb.test(timeout_time=200, timeout_unit="us")
async def write_strobes_merge_into_staging_words(dut):
    """A partial write changes only its strobed bytes (the master's 1- and 2-byte writes at a word address, and
    single beats with any strobe)."""
    tb = await bench(dut, 3)
    addr = row_word(9, 1, False)
    await tb.wr(addr, 0x11223344)
    assert (await tb.axi.write(addr, b"\xAA")).resp == OKAY  # strobe 0001
    assert await tb.raw_write(addr, 0x55667788, strb=0b0100) == OKAY
    assert await tb.raw_write(addr, 0x99000000, strb=0b1000) == OKAY
    assert await tb.raw_write(addr, 0xFFFFFFFF, strb=0) == OKAY
    await tb.wr(P.AXI_IMEM_BASE + (9 << 8) + P.AXI_IMEM_COMMIT, 1)
    assert await tb.rd(addr) == 0x996633AA
    # map line staging words merge the same way
    await tb.wr(P.AXI_MAPS_BASE + 4, 0xA0B0C0D0)
    assert (await tb.axi.write(P.AXI_MAPS_BASE + 4, b"\x01\x02")).resp == OKAY  # strobe 0011
    await tb.wr(P.AXI_MAPS_BASE + P.AXI_MAPS_COMMIT, 3)
    await tb.cycles(3)
    assert tb.mem[3] == 0xA0B00201 << 32
    tb.check_protocol()


@cocotb.test(timeout_time=200, timeout_unit="us")
async def map_lines_write_commit_and_read(dut):
    """Staging words, a commit to line N (one memory write of the 16 bytes, LINE_ADDR = N, staging zeroed), reads of
    line LINE_ADDR through the memory's read port, N out of range: SLVERR and nothing written. The memory's write
    port is often not ready: the line write waits, and so does every later transaction."""
    tb = await bench(dut, 4)
    tb.mem_stall = 0.6
    assert await tb.rd(P.AXI_MAPS_LINE_ADDR) == 0
    for line in (0, 1, 12345, LINES - 1):
        words = [tb.rng.getrandbits(32) for _ in range(4)]
        for i, w in enumerate(words):
            await tb.wr(P.AXI_MAPS_BASE + 4 * i, w)
        await tb.wr(P.AXI_MAPS_BASE + P.AXI_MAPS_COMMIT, line)
        # the next transaction waits for the memory to take the line: this read sees the new line
        assert await tb.rd(P.AXI_MAPS_LINE_ADDR) == line
        value = sum(w << (32 * i) for i, w in enumerate(words))
        assert tb.mem.get(line) == value, f"line {line}: memory {tb.mem.get(line, 0):#x}, want {value:#x}"
        for i, w in enumerate(words):
            assert await tb.rd(P.AXI_MAPS_BASE + 4 * i) == w, f"line {line} word {i}"
    await tb.wr(P.AXI_MAPS_BASE + P.AXI_MAPS_COMMIT, 200)
    await tb.rd(P.AXI_ID)
    assert tb.mem[200] == 0, "a commit zeroes the staging line"
    # LINE_ADDR selects the line the word reads return
    tb.mem[4242] = 0x0123456789ABCDEF_FEDCBA9876543210
    await tb.wr(P.AXI_MAPS_LINE_ADDR, 4242)
    assert await tb.rd(P.AXI_MAPS_LINE_ADDR) == 4242
    assert [await tb.rd(P.AXI_MAPS_BASE + 4 * i) for i in range(4)] == [0x76543210, 0xFEDCBA98, 0x89ABCDEF,
                                                                         0x01234567]
    # a line past the memory: SLVERR, nothing written, LINE_ADDR unchanged
    before = dict(tb.mem)
    await tb.wr(P.AXI_MAPS_BASE, 0x5A5A5A5A)
    await tb.wr(P.AXI_MAPS_BASE + P.AXI_MAPS_COMMIT, LINES, SLVERR)
    await tb.wr(P.AXI_MAPS_BASE + P.AXI_MAPS_COMMIT, 0xFFFFFFFF, SLVERR)
    await tb.cycles(4)
    assert tb.mem == before
    assert await tb.rd(P.AXI_MAPS_LINE_ADDR) == 4242
    tb.check_protocol()


@cocotb.test(timeout_time=200, timeout_unit="us")
async def map_configuration_entries(dut):
    """Eight staging words, a commit to map id N < 16 (one write of the 256-bit entry, MCFG_ADDR = N, staging zeroed)
    read back through MCFG_ADDR; id 16 and above: SLVERR and nothing written."""
    tb = await bench(dut, 5)
    entries = {}
    for mid in (0, 5, P.MAPS_MAX - 1):
        words = [tb.rng.getrandbits(32) for _ in range(8)]
        for i, w in enumerate(words):
            await tb.wr(P.AXI_MCFG_BASE + 4 * i, w)
        await tb.wr(P.AXI_MCFG_COMMIT, mid)
        await tb.cycles(2)
        value = sum(w << (32 * i) for i, w in enumerate(words))
        assert tb.mcfg_writes == [(mid, value)]
        tb.mcfg_writes.clear()
        assert await tb.rd(P.AXI_MCFG_ADDR) == mid
        assert [await tb.rd(P.AXI_MCFG_BASE + 4 * i) for i in range(8)] == words
        entries[mid] = words
    await tb.wr(P.AXI_MCFG_COMMIT, 3)  # nothing staged since the last commit: an all-zero entry
    await tb.cycles(2)
    assert tb.mcfg_writes == [(3, 0)]
    tb.mcfg_writes.clear()
    await tb.wr(P.AXI_MCFG_BASE, 0x77)
    await tb.wr(P.AXI_MCFG_COMMIT, P.MAPS_MAX, SLVERR)
    await tb.wr(P.AXI_MCFG_COMMIT, 0x100 + 5, SLVERR)
    await tb.cycles(2)
    assert tb.mcfg_writes == []
    for mid, words in entries.items():
        await tb.wr(P.AXI_MCFG_ADDR, mid)
        assert [await tb.rd(P.AXI_MCFG_BASE + 4 * i) for i in range(8)] == words
    await tb.wr(P.AXI_MCFG_ADDR, P.MAPS_MAX)  # no such map: its entry reads as zeros
    assert [await tb.rd(P.AXI_MCFG_BASE + 4 * i) for i in range(8)] == [0] * 8
    tb.check_protocol()


@cocotb.test(timeout_time=200, timeout_unit="us")
async def packet_counters_cycle_counter_and_clear(dut):
    """Packets with every action (and r0 above REDIRECT, and faults) counted in received / tx / drop / per action /
    other / faults; the 64-bit cycle counter (low word latches the high word); the clear register."""
    tb = await bench(dut, 6)
    expect = {a: 0 for a in ("rx", "tx", "drop", "other", "faults", 0, 1, 2, 3, 4)}
    for _ in range(300):
        await FallingEdge(dut.clk_i)
        done = tb.rng.random() < 0.7
        action = tb.rng.choice([0, 1, 2, 3, 4, 5, 7, 0x80000002, 0xFFFFFFFF])
        fault = tb.rng.choice([0, 0, 0, 1, 2, 4, 7])
        dut.pkt_done_i.value = int(done)
        dut.res_action_i.value = action
        dut.res_fault_i.value = fault
        if done:
            expect["rx"] += 1
            expect["tx"] += action in (3, 4)
            expect["drop"] += action in (0, 1)
            expect["other"] += action > 4
            expect["faults"] += fault != 0
            if action <= 4:
                expect[action] += 1
    await FallingEdge(dut.clk_i)
    dut.pkt_done_i.value = 0
    got = {"rx": await tb.rd(P.AXI_CNT_RX), "tx": await tb.rd(P.AXI_CNT_TX),
           "drop": await tb.rd(P.AXI_CNT_DROP), "other": await tb.rd(P.AXI_CNT_OTHER),
           "faults": await tb.rd(P.AXI_CNT_FAULTS)}
    for a in range(5):
        got[a] = await tb.rd(P.AXI_CNT_ACTION_BASE + 4 * a)
    assert got == expect
    # the cycle counter: the low word advances with the clock, the high word (latched by the low read) is 0 here
    lo1 = await tb.rd(P.AXI_CNT_CYCLES_LO)
    assert await tb.rd(P.AXI_CNT_CYCLES_HI) == 0
    await tb.cycles(100)
    lo2 = await tb.rd(P.AXI_CNT_CYCLES_LO)
    assert 300 < lo1 < 600 and 100 < lo2 - lo1 < 120, (lo1, lo2)
    await tb.wr(P.AXI_CNT_CLEAR, 0)
    await tb.cycles(1)
    assert tb.clears == 1
    for addr in (P.AXI_CNT_RX, P.AXI_CNT_TX, P.AXI_CNT_DROP):
        assert await tb.rd(addr) == 0
    for addr in [P.AXI_CNT_ACTION_BASE + 4 * a for a in range(5)] + [P.AXI_CNT_OTHER, P.AXI_CNT_FAULTS]:
        assert await tb.rd(addr) == 0
    lo3 = await tb.rd(P.AXI_CNT_CYCLES_LO)
    assert lo3 < 60, f"cycle counter {lo3} after clear"
    tb.check_protocol()


@cocotb.test(timeout_time=200, timeout_unit="us")
async def control_rows_and_trace_pop(dut):
    """CTRL's hold bit (hold_o, STATUS bit 1), ROWS (0..IMEM_ROWS, above: SLVERR, unchanged), TRACE_POP's pulse."""
    tb = await bench(dut, 7)
    await tb.wr(P.AXI_CTRL, 1)
    assert int(dut.hold_o.value) == 1
    assert await tb.rd(P.AXI_CTRL) == 1
    dut.held_i.value = 1
    assert await tb.rd(P.AXI_STATUS) == 0b11
    dut.held_i.value = 0
    assert await tb.rd(P.AXI_STATUS) == 0b10
    await tb.wr(P.AXI_CTRL, 0xFFFFFFFE)  # only bit 0 is hold
    assert int(dut.hold_o.value) == 0 and await tb.rd(P.AXI_CTRL) == 0
    for rows in (5, 0, ROWS, 1):
        await tb.wr(P.AXI_ROWS, rows)
        assert await tb.rd(P.AXI_ROWS) == rows and int(dut.imem_rows_o.value) == rows
    for bad in (ROWS + 1, 2 * ROWS - 1, 0xFFFFFFFF):
        await tb.wr(P.AXI_ROWS, bad, SLVERR)
        assert await tb.rd(P.AXI_ROWS) == 1
    for _ in range(3):
        await tb.wr(P.AXI_TRACE_POP, tb.rng.getrandbits(32))
    await tb.cycles(1)
    assert tb.pops == 3
    tb.check_protocol()


# addresses outside the register map (reads), and registers that cannot be written (writes)
BAD_READS = [0x0, 0x7FFF_FFFC, 0x8000_0000 + 8 * LANES, 0x8000_0001, 0x8000_0002, 0x8000_00FE, 0x8001_0001,
             0x8001_0014, 0x8001_0020, 0x8001_00FF, 0x8001_1001, 0x8001_1024, 0x8001_10FF, 0x8002_0000, 0x8002_0001,
             0x8002_0005, 0x8002_0008, 0x8002_0012, 0x8002_002C, 0x8002_0038, 0x8002_0040, 0x8003_0001,
             0x8003_0020, 0x8003_0100, P.AXI_TRACE_POP, 0x8004_0014, 0x8004_00FC,
             P.AXI_TRACE_HEAD + 4 * TRACE_WORDS, P.AXI_TRACE_HEAD + 1, P.AXI_EVENT_POP, 0x8006_0014,
             P.AXI_EVENT_HEAD + 4 * P.AXI_EVENT_WORDS, P.AXI_EVENT_HEAD + 2, 0x8007_0000, 0x9000_0000, 0xFFFF_FFFC]
BAD_WRITES = [0x0, 0x8000_0000 + 8 * LANES, 0x8000_0002, 0x8000_00FE, 0x8001_0001, 0x8001_0014, 0x8001_1024,
              P.AXI_CNT_RX, P.AXI_CNT_TX, P.AXI_CNT_DROP, P.AXI_CNT_ACTION_BASE, P.AXI_CNT_CYCLES_LO, P.AXI_STATUS,
              P.AXI_ID, P.AXI_INFLIGHT, P.AXI_IMEM_CAPACITY, P.AXI_MAP_LINES, P.AXI_CORES, P.AXI_TRACE_COUNT,
              P.AXI_TRACE_DEPTH, P.AXI_TRACE_HEAD, P.AXI_EVENT_COUNT, P.AXI_EVENT_DEPTH, P.AXI_EVENT_HEAD, 0x8007_0000,
              0xFFFF_FFFC]


@cocotb.test(timeout_time=200, timeout_unit="us")
async def unknown_addresses_answer_slverr(dut):
    """Every read outside the map answers SLVERR with data 0; every write to an unknown or read-only address
    answers SLVERR and changes nothing (no commit, no pulse, staging and registers as they were)."""
    tb = await bench(dut, 8)
    for addr in BAD_READS:
        data, resp = await tb.raw_read(addr)
        assert (data, resp) == (0, SLVERR), f"read of {addr:#010x}: data {data:#x} resp {resp}"
    await tb.wr(row_word(3, 0, False), 0xCAFEF00D)
    await tb.wr(P.AXI_ROWS, 9)
    for addr in BAD_WRITES:
        assert await tb.raw_write(addr, 0xFFFFFFFF) == SLVERR, f"write to {addr:#010x}"
    await tb.cycles(2)
    assert (tb.imem_writes, tb.mcfg_writes, tb.clears, tb.pops, tb.ev_pops, tb.mem) == ([], [], 0, 0, 0, {})
    assert await tb.rd(P.AXI_ROWS) == 9 and await tb.rd(P.AXI_CTRL) == 0
    await tb.wr(P.AXI_IMEM_BASE + (3 << 8) + P.AXI_IMEM_COMMIT, 1)
    await tb.cycles(2)
    assert tb.imem_writes == [(3, 0xCAFEF00D)], "the bad writes left the staging row alone"
    tb.check_protocol()


@cocotb.test(timeout_time=200, timeout_unit="us")
async def address_and_data_in_either_order(dut):
    """AW and W are independent channels: the write happens once both are in, whichever came first and however late."""
    tb = await bench(dut, 9)
    for gap in (0, 1, 5):
        assert await tb.raw_write(P.AXI_CTRL, 1, w_first=gap) == OKAY
        assert int(dut.hold_o.value) == 1
        assert await tb.raw_write(P.AXI_CTRL, 0, aw_first=gap) == OKAY
        assert int(dut.hold_o.value) == 0
    assert await tb.raw_write(0x8007_0000, 1, w_first=3) == SLVERR
    tb.check_protocol()


def pattern(rng: random.Random, p: float):
    """A pause generator: 1 (pause) with probability p each cycle."""
    while True:
        yield int(rng.random() < p)


CONSTANTS = [(P.AXI_ID, P.AXI_ID_VALUE, OKAY), (P.AXI_IMEM_CAPACITY, ROWS, OKAY), (P.AXI_MAP_LINES, LINES, OKAY),
             (P.AXI_CORES, 1, OKAY),  # (the slave's default CORES: a board of several, tests/test_board_cores.py)
             (P.AXI_TRACE_DEPTH, P.PRINTK_FIFO_DEPTH, OKAY), (0x8007_0004, 0, SLVERR),
             (P.AXI_EVENT_DATA_MAX, P.EVENT_DATA_MAX, OKAY),
             (P.AXI_TRACE_FMT_MAX, P.PRINTK_FMT_MAX, OKAY)]
PRESSURE = [(0, 0, 0, 0, 0, 0), (0.5, 0.5, 0, 0, 0, 0), (0.7, 0.3, 0.5, 0.2, 0.4, 0.5), (0.2, 0.8, 0.3, 0.6, 0, 0.3)]


@cocotb.test(timeout_time=200, timeout_unit="us")
async def back_to_back_with_backpressure(dut):
    """Many writes and reads in flight at once, with the master holding bready and rready low at random and leaving
    gaps in awvalid / wvalid / arvalid, and the map memory stalling its write port. First through the master's API
    (concurrent word writes of staging rows and reads), then as single beats queued on the channels all at once
    (stage, commit, a bad address, map line words and commit, ...). Every write lands in order with its response,
    every read returns its register, and the checker sees responses wait for ready unchanged."""
    tb = await bench(dut, 10)
    rng = tb.rng
    wr_if, rd_if = tb.axi.write_if, tb.axi.read_if
    for rnd, (pb, pr, paw, pw, par, stall) in enumerate(PRESSURE):
        wr_if.b_channel.set_pause_generator(pattern(rng, pb))
        rd_if.r_channel.set_pause_generator(pattern(rng, pr))
        wr_if.aw_channel.set_pause_generator(pattern(rng, paw))
        wr_if.w_channel.set_pause_generator(pattern(rng, pw))
        rd_if.ar_channel.set_pause_generator(pattern(rng, par))
        tb.mem_stall = stall
        # 1. the master's API: 4 rows of staging words (aligned words) and 30 reads, all started at once
        rows = {16 * rnd + r: [rng.getrandbits(32) for _ in range(2 * LANES)] for r in range(4)}
        reads = [rng.choice(CONSTANTS) for _ in range(30)]
        for row, words in rows.items():
            wr_ops = [cocotb.start_soon(tb.axi.write(P.imem_row_base(row) + 4 * i, w.to_bytes(4, "little")))
                      for i, w in enumerate(words)]
            rd_ops = [cocotb.start_soon(tb.axi.read(a, 4)) for a, _, _ in reads[:8]]
            reads = reads[8:] + reads[:8]
            await Combine(*wr_ops, *rd_ops)
            assert all(op.result().resp == OKAY for op in wr_ops), f"round {rnd} row {row}"
            for op in rd_ops:
                res = op.result()
                want = next(c for c in CONSTANTS if c[0] == res.address)
                assert (int.from_bytes(res.data, "little"), res.resp) == (want[1], want[2]), \
                    f"round {rnd}: read of {res.address:#010x}: {res.data.hex()} {res.resp!r}"
            # its commit, a single beat at +0xFF
            await tb.wr(P.imem_row_base(row) + P.AXI_IMEM_COMMIT, 1)
        # 2. single beats, all queued at once: staging + commit of 4 more rows and 4 map lines, bad addresses
        writes, want_b, lines = [], [], {}
        for r in range(4):
            row = 16 * rnd + 8 + r
            words = [rng.getrandbits(32) for _ in range(2 * LANES)]
            writes += [(P.imem_row_base(row) + 4 * i, w) for i, w in enumerate(words)]
            writes.append((P.imem_row_base(row) + P.AXI_IMEM_COMMIT, 1))
            rows[row] = words
            writes.append((0x8007_0000 + 4 * r, r))
            line = 100 * rnd + r
            lw = [rng.getrandbits(32) for _ in range(4)]
            writes += [(P.AXI_MAPS_BASE + 4 * i, w) for i, w in enumerate(lw)]
            writes.append((P.AXI_MAPS_BASE + P.AXI_MAPS_COMMIT, line))
            lines[line] = sum(w << (32 * i) for i, w in enumerate(lw))
            want_b += [OKAY] * (2 * LANES + 1) + [SLVERR] + [OKAY] * 5
        reads = [rng.choice(CONSTANTS) for _ in range(30)]
        tb.imem_writes.clear()
        bresps, rbeats = await tb.raw_burst(writes, [a for a, _, _ in reads])
        assert bresps == want_b, f"round {rnd}: write responses {bresps}"
        assert rbeats == [(v, resp) for _, v, resp in reads], f"round {rnd}: reads {rbeats}"
        await tb.cycles(4)
        assert [row for row, _ in tb.imem_writes] == [16 * rnd + 8 + r for r in range(4)]
        for line, value in lines.items():
            assert tb.mem.get(line) == value, f"round {rnd}: line {line}"
        for row, words in rows.items():
            got = [await tb.rd(P.imem_row_base(row) + 4 * i) for i in range(2 * LANES)]
            assert got == words, f"round {rnd}: row {row} reads back {got}"
    tb.check_protocol()
    dut._log.info("cycles waiting: %s", tb.waits)
    assert all(tb.waits.values()), f"some channel never waited: {tb.waits}"
