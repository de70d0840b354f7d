"""Timing estimate of a yosys synth_xilinx netlist: its longest register-to-register paths in LUT levels and ns."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hxdp.eval.harness import NS_PER_CYCLE

# A delay model of a Virtex-7 -2 part, in ns (docs/evaluation.md, "Timing estimate", gives the sources). Placement
# and routing are unknown after synthesis: every net between two cells that are not in one slice costs NET_NS.
TCKO_NS = 0.40  # flip-flop clock to Q (UG474 T_CKO)
TSETUP_NS = 0.10  # flip-flop D setup (UG474 T_AS / T_DICK)
LUT_NS = 0.12  # LUT input to output (UG474 T_ILO)
NET_NS = 0.50  # one routed net (an estimate: routing is not known before place and route)
MUXF_NS = 0.30  # MUXF7/MUXF8 in the slice (no routed net before it)
CARRY_IN_NS = 0.45  # into a CARRY4 from its S/DI inputs (a carry chain's first stage)
CARRY_BYP_NS = 0.12  # through a CARRY4 from the one below (dedicated carry routing)
BRAM_CKO_NS = 1.80  # block RAM clock to DO, without its output register
BRAM_SETUP_NS = 0.45  # block RAM address/enable/data setup
DSP_COMB_NS = 3.90  # DSP48E1 with no pipeline register, A/B to P
DSP_CASCADE_NS = 1.80  # DSP48E1 with no pipeline register, from the one below (PCIN) to P
DSP_CKO_NS = 0.60  # DSP48E1 register to output
DSP_SETUP_NS = 0.60  # DSP48E1 input setup


def levels_that_fit(budget_ns: float = NS_PER_CYCLE) -> int:
    """LUT levels of a flip-flop to flip-flop path (each a routed net and a LUT, then a net into the flip-flop)
    that fit `budget_ns`: 8 at 156.25 MHz (6.4 ns)."""
    return max(0, math.floor((budget_ns - TCKO_NS - TSETUP_NS - NET_NS) / (LUT_NS + NET_NS) + 1e-9))


# output ports of the 7-series cells synth_xilinx leaves (a bus's bits are PORT[i] in BLIF)
OUTPUT_PORTS = frozenset({
    "O", "CO", "Q", "Q31", "P", "PCOUT", "ACOUT", "BCOUT", "CARRYOUT", "CARRYCASCOUT", "MULTSIGNOUT", "OVERFLOW",
    "UNDERFLOW", "PATTERNDETECT", "PATTERNBDETECT", "SPO", "DPO", "DOA", "DOB", "DOC", "DOD", "DOADO", "DOBDO",
    "DOPADOP", "DOPBDOP", "CASCADEOUTA", "CASCADEOUTB", "DBITERR", "SBITERR", "ECCPARITY", "RDADDRECC",
})
LUT = re.compile(r"^(LUT[1-6]|INV)$")
LUTRAM = re.compile(r"^RAM\d+[XM]\w*$")
SRL = re.compile(r"^SRL\w+$")
FF = re.compile(r"^(FD[RSCPE]+\w*|LD\w*)$")
BRAM = re.compile(r"^RAMB\w+$")
PASS = frozenset({"IBUF", "OBUF", "BUFG", "BUF", "IBUFG", "$alias"})
CLOCK_PINS = frozenset({"C", "CLK", "WCLK", "CLKARDCLK", "CLKBWRCLK", "CLKA", "CLKB"})
# block-RAM pins of the read port A (the others belong to port B's clock; in SDP mode every DO is port A's)
BRAM_A = re.compile(r"^(ADDRARDADDR|ENARDEN|REGCEAREGCE|RSTRAMARSTRAM|RSTREGARSTREG|DOADO|DOPADOP)$")


def _port(pin: str) -> str:
    return pin.split("[", 1)[0]


@dataclass
class Cell:
    """One cell of the netlist: its type, parameters and pins (pin name -> net)."""

    type: str
    pins: dict[str, str]
    params: dict[str, str] = field(default_factory=dict)


@dataclass
class Netlist:
    """A flat netlist read from yosys `write_blif -param`."""

    name: str
    inputs: list[str]
    outputs: list[str]
    cells: list[Cell]


def _blif_lines(text: str) -> Iterator[list[str]]:
    """The statements of a BLIF text: continuation lines joined, comments dropped, split on blanks."""
    buf = ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0] if raw.lstrip().startswith("#") else raw
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        line = buf + line
        buf = ""
        if line.strip():
            yield line.split()


def parse_blif(text: str) -> Netlist:
    """The first model of a BLIF netlist (yosys `write_blif -param`: `.subckt` cells, `.names` buffers and
    constants); a `.names` buffer becomes an `$alias` cell (no delay)."""
    name, inputs, outputs, cells = "", [], [], []
    names_out: list[str] | None = None
    for f in _blif_lines(text):
        key = f[0]
        if key == ".model":
            if name:
                break
            name = f[1]
        elif key == ".inputs":
            inputs += f[1:]
        elif key == ".outputs":
            outputs += f[1:]
        elif key == ".subckt":
            names_out = None
            cells.append(Cell(f[1], dict(p.split("=", 1) for p in f[2:])))
        elif key == ".param" and cells and names_out is None:
            cells[-1].params[f[1]] = f[2] if len(f) > 2 else ""
        elif key == ".names":
            names_out = f[1:]
            if len(names_out) == 2:
                cells.append(Cell("$alias", {"I": names_out[0], "O": names_out[1]}))
        elif key == ".end":
            break
    return Netlist(name, inputs, outputs, cells)


@dataclass
class Path:
    """The longest path ending in one group of endpoints: LUT levels, estimated delay against its budget, and
    where it starts and ends (net names)."""

    group: str
    levels: int
    delay_ns: float
    budget_ns: float
    start: str
    end: str
    cells: list[str]
    start_pin: str = ""  # the start's cell and pin (FDRE.Q, RAMB36E1.DOADO[3], or "input")
    end_pin: str = ""  # the endpoint's cell and pin (FDRE.D, RAMB36E1.ADDRARDADDR[5], or "output")

    @property
    def slack_ns(self) -> float:
        return self.budget_ns - self.delay_ns

    @property
    def fits(self) -> bool:
        return self.slack_ns >= -1e-9

    def record(self) -> dict[str, Any]:
        kinds: dict[str, int] = {}
        for c in self.cells:
            k = "LUT" if LUT.match(c) or LUTRAM.match(c) or SRL.match(c) else c
            kinds[k] = kinds.get(k, 0) + 1
        return {"group": self.group, "levels": self.levels, "delay_ns": round(self.delay_ns, 3),
                "budget_ns": self.budget_ns, "slack_ns": round(self.slack_ns, 3), "fits": self.fits,
                "levels_that_fit": levels_that_fit(self.budget_ns), "start": self.start, "end": self.end,
                "start_pin": self.start_pin, "end_pin": self.end_pin, "cells": kinds}


def _flag(cell: Cell, name: str) -> bool:
    return cell.params.get(name, "0").strip("'b0") == "1"


def _clock_pin(cell: Cell, pin: str) -> tuple[str, bool]:
    """The clock pin of a sequential cell's pin, and whether the cell inverts that clock itself (a parameter)."""
    if FF.match(cell.type):
        return "C", cell.type.endswith("_1") or _flag(cell, "IS_C_INVERTED")
    if BRAM.match(cell.type):
        side_a = BRAM_A.match(_port(pin)) is not None or (cell.params.get("RAM_MODE", "").strip('"') == "SDP" and
                                                          _port(pin).startswith("DO"))
        clk = "CLKARDCLK" if side_a else "CLKBWRCLK"
        return clk, _flag(cell, f"IS_{clk}_INVERTED")
    if LUTRAM.match(cell.type):
        return "WCLK", _flag(cell, "IS_WCLK_INVERTED")
    if SRL.match(cell.type):
        return "CLK", _flag(cell, "IS_CLK_INVERTED")
    return "CLK", False


def _registered_dsp(cell: Cell) -> bool:
    return any(cell.params.get(k, "1").strip("'b0") not in ("", "0") for k in ("AREG", "BREG", "MREG", "PREG"))


@dataclass
class _Arc:
    """How a combinational cell's output depends on its inputs: the delay, whether each input comes over a routed
    net, whether it is a LUT level."""

    cell: Cell
    delay: float
    lut: bool
    inputs: list[tuple[str, float]]  # (net, net delay before the cell)


def _comb_arc(cell: Cell, out_pin: str) -> _Arc | None:
    """The arc to `out_pin` of a combinational cell (None: the pin is a sequential output, a path start)."""
    t = cell.type
    ins = [(p, n) for p, n in cell.pins.items() if _port(p) not in OUTPUT_PORTS and _port(p) not in CLOCK_PINS]
    if LUT.match(t):
        return _Arc(cell, LUT_NS, True, [(n, NET_NS) for _, n in ins])
    if t in PASS:
        return _Arc(cell, 0.0, False, [(n, 0.0) for _, n in ins])
    if t in ("MUXF7", "MUXF8"):
        return _Arc(cell, MUXF_NS, False, [(n, 0.0) for _, n in ins])
    if t == "CARRY4":
        chain = [(n, 0.0) for p, n in ins if _port(p) == "CI"]
        local = [(n, 0.0) for p, n in ins if _port(p) in ("S", "DI", "CYINIT")]
        return _Arc(cell, CARRY_IN_NS, False, local + chain)  # (the chain input is timed apart: _arrival)
    if LUTRAM.match(t) or SRL.match(t):  # the read is combinational from the address; the write is clocked
        if _port(out_pin) == "Q31":
            return None
        addr = [(n, NET_NS) for p, n in ins if re.match(r"^(A\d*|ADDR[A-D]?|DPRA\d*|A)$", _port(p))]
        return _Arc(cell, LUT_NS, True, addr)
    if t.startswith("DSP48") and not _registered_dsp(cell):
        # (a cascade input comes over dedicated routing and through the post-adder only: its "net" takes the
        # difference off the cell's delay)
        cascade = ("PCIN", "CARRYCASCIN", "MULTSIGNIN")
        return _Arc(cell, DSP_COMB_NS, False, [(n, DSP_CASCADE_NS - DSP_COMB_NS if _port(p) in cascade else NET_NS)
                                               for p, n in ins])
    return None


def _endpoint_pins(cell: Cell) -> list[tuple[str, str]]:
    """The pins of a cell where paths end (a sequential cell's data, enable, reset and address inputs)."""
    t = cell.type
    ins = [(p, n) for p, n in cell.pins.items() if _port(p) not in OUTPUT_PORTS and _port(p) not in CLOCK_PINS]
    if LUT.match(t) or t in PASS or t in ("MUXF7", "MUXF8", "CARRY4"):
        return []
    if t.startswith("DSP48") and not _registered_dsp(cell):
        return []
    if LUTRAM.match(t) or SRL.match(t):
        return [(p, n) for p, n in ins if not re.match(r"^(A\d*|ADDR[A-D]?|DPRA\d*)$", _port(p))]
    return ins


def _setup(cell: Cell) -> float:
    if BRAM.match(cell.type):
        return BRAM_SETUP_NS
    if cell.type.startswith("DSP48"):
        return DSP_SETUP_NS
    return TSETUP_NS


def _cko(cell: Cell) -> float:
    if BRAM.match(cell.type):
        return BRAM_CKO_NS
    if cell.type.startswith("DSP48"):
        return DSP_CKO_NS
    return TCKO_NS


class _Timer:
    """Arrival times of every net from the starts of one clock edge (rising or falling), longest first."""

    def __init__(self, nl: Netlist, period: float) -> None:
        self.period = period
        self.driver: dict[str, tuple[Cell, str]] = {}
        for c in nl.cells:
            for p, n in c.pins.items():
                if _port(p) in OUTPUT_PORTS or (c.type == "$alias" and p == "O"):
                    self.driver[n] = (c, p)
        self.inputs = set(nl.inputs)
        # a public name of an internal net (yosys connects a register's internal output net to its name)
        self.public: dict[str, str] = {}
        for c in nl.cells:
            if c.type == "$alias" and c.pins["I"].startswith("$") and not c.pins["O"].startswith("$"):
                self.public.setdefault(c.pins["I"], c.pins["O"])

    def name(self, net: str) -> str:
        return self.public.get(net, net)

    def inverted(self, cell: Cell, pin: str) -> bool:
        """The pin of a sequential cell belongs to the falling edge: its clock pin is inverted by the cell or by
        inverters on the clock net (synth_xilinx puts an INV before a falling-edge block RAM's clock pin)."""
        clk, inv = _clock_pin(cell, pin)
        net = cell.pins.get(clk)
        for _ in range(8):  # (a clock net has a buffer or two, never a long chain)
            drv = self.driver.get(net) if net is not None else None
            if drv is None:
                break
            c, _ = drv
            if c.type == "INV" or (c.type == "LUT1" and c.params.get("INIT", "").endswith("01")):
                inv = not inv
            elif c.type not in PASS:
                break
            net = next((n for p, n in c.pins.items() if _port(p) not in OUTPUT_PORTS and p != "O"), None)
        return inv

    def arrivals(self, launch_falling: bool) -> dict[str, tuple[float, int, str | None, Cell | None]]:
        """net -> (arrival ns, LUT levels, previous net on the longest path, the cell that drives it); a
        combinational loop (none after synthesis of this RTL) is cut where it closes."""
        memo: dict[str, tuple[float, int, str | None, Cell | None]] = {}
        busy: set[str] = set()
        for root in [*self.driver, *self.inputs]:
            stack = [root]
            while stack:
                net = stack[-1]
                if net in memo:
                    stack.pop()
                    continue
                start = self._start(net, launch_falling)
                if start is not None:
                    memo[net] = start
                    stack.pop()
                    continue
                cell, pin = self.driver[net]
                arc = _comb_arc(cell, pin)
                assert arc is not None  # (_start answers for every other net)
                todo = [n for n, _ in arc.inputs if n not in memo and n not in busy]
                if todo and net not in busy:
                    busy.add(net)
                    stack.extend(todo)
                    continue
                if todo:  # every input was pushed once: the ones still open close a loop
                    stack.extend(n for n in todo if n not in busy)
                    if any(n not in busy for n in todo):
                        continue
                busy.discard(net)
                memo[net] = self._through(arc, cell, memo)
                stack.pop()
        return memo

    def _through(self, arc: _Arc, cell: Cell, memo: dict[str, tuple[float, int, str | None, Cell | None]]
                 ) -> tuple[float, int, str | None, Cell | None]:
        """The arrival at a combinational cell's output: its latest input, the net before it and its delay."""
        best: tuple[float, int, str | None, Cell | None] = (-math.inf, 0, None, None)
        chain = {n for p, n in cell.pins.items() if _port(p) == "CI"} if cell.type == "CARRY4" else set()
        for n, wire in arc.inputs:
            a, lv, _, _ = memo.get(n, (-math.inf, 0, None, None))
            delay = arc.delay
            if n in chain:
                prev = self.driver.get(n)
                delay = CARRY_BYP_NS if prev and prev[0].type == "CARRY4" else CARRY_IN_NS
            if a + wire + delay > best[0]:
                best = (a + wire + delay, lv + int(arc.lut), n, cell)
        return best

    def _start(self, net: str, launch_falling: bool) -> tuple[float, int, str | None, Cell | None] | None:
        """The arrival of a path start (a module input or a sequential output), or None for a combinational net."""
        if net in self.inputs:  # a module input: registered outside, at the rising edge
            return (TCKO_NS if not launch_falling else -math.inf, 0, None, None)
        if net not in self.driver:
            return (-math.inf, 0, None, None)
        cell, pin = self.driver[net]
        if _comb_arc(cell, pin) is not None:
            return None
        if self.inverted(cell, pin) != launch_falling:
            return (-math.inf, 0, None, cell)
        return ((self.period / 2 if launch_falling else 0.0) + _cko(cell), 0, None, cell)


def group_of(net: str, depth: int = 1) -> str:
    """The instance a net belongs to: the first `depth` levels of its hierarchical name (`u_core.pc_q[3]` and
    yosys's `$flatten\\u_core.$abc$12.Y` -> `u_core`; a core's tile is transparent: `gen_core[1].u_tile.u_core.x` ->
    `u_core`), `(top)` for the top module's own nets."""
    name = net.lstrip("\\")
    if name.startswith("$flatten\\"):
        name = name[len("$flatten\\"):]
    elif name.startswith("$"):
        return "(top)"
    parts = re.sub(r"\[[^\]]*\]", "", name.replace("\\", "")).split(".")
    internal = next((i for i, p in enumerate(parts) if p.startswith("$")), None)
    parts = parts[:internal] if internal is not None else parts[:-1]  # (the net's own name is not an instance)
    if parts[:2] == ["gen_core", "u_tile"]:  # a core's tile of sephirot_top: its modules group as one core's did
        parts = parts[2:]
    return ".".join(parts[:depth]) if parts else "(top)"


def longest_paths(nl: Netlist, period: float = NS_PER_CYCLE, depths: tuple[int, ...] = (1,)) -> dict[str, Path]:
    """Per group of endpoints (group_of the endpoint's cell output or net, at each of `depths` levels of the
    hierarchy: `u_core` and `u_core.u_stack`), the path with the least slack: from a
    rising-edge start to the next edge of its endpoint's clock (a falling-edge endpoint: half a period), or from
    a falling-edge start (block RAM read at the falling edge) to the next rising edge (half a period)."""
    timer = _Timer(nl, period)
    worst: dict[str, Path] = {}
    ends = [(c, p, n) for c in nl.cells for p, n in _endpoint_pins(c)]
    ends += [(None, o, o) for o in nl.outputs]
    for falling in (False, True):
        arr = timer.arrivals(falling)
        for cell, pin, net in ends:
            a, lv, _, _ = arr.get(net, (-math.inf, 0, None, None))
            if a == -math.inf:
                continue
            capture_falling = cell is not None and timer.inverted(cell, pin)
            launch = period / 2 if falling else 0.0
            capture = (period / 2 if capture_falling else period) + (period if falling and capture_falling else 0.0)
            setup = _setup(cell) if cell is not None else TSETUP_NS
            delay = a + NET_NS + setup - launch
            budget = capture - launch
            name = _endpoint_name(cell, net)
            for group in {group_of(name, d) for d in depths}:
                cur = worst.get(group)
                if cur is None or budget - delay < cur.slack_ns:
                    first = _trace(arr, net)
                    drv = timer.driver.get(first)
                    worst[group] = Path(group, lv, delay, budget, timer.name(first), name, _cells(arr, net),
                                        f"{drv[0].type}.{drv[1]}" if drv else "input",
                                        f"{cell.type}.{pin}" if cell is not None else "output")
    return worst


def _endpoint_name(cell: Cell | None, net: str) -> str:
    """A readable name of an endpoint: the register's output net, or the next-state net it loads (yosys's
    `$0\\q_o[0:0]` for q_o) when the output has only an internal name."""
    if cell is not None:
        outs = [n for p, n in cell.pins.items() if _port(p) in OUTPUT_PORTS and not n.startswith("$")]
        if outs:
            return outs[0]
    m = re.match(r"^\$0\\(.+?)(\[[^\]]*\])?$", net)
    return m.group(1) if m else net


def _trace(arr: dict[str, tuple[float, int, str | None, Cell | None]], net: str) -> str:
    """The start of the longest path into `net`: the first net (a register's output or a module input)."""
    seen = set()
    while net not in seen:
        seen.add(net)
        prev = arr.get(net, (0, 0, None, None))[2]
        if prev is None:
            break
        net = prev
    return net


def _cells(arr: dict[str, tuple[float, int, str | None, Cell | None]], net: str) -> list[str]:
    out, seen = [], set()
    while net not in seen:
        seen.add(net)
        a, _, prev, cell = arr.get(net, (0, 0, None, None))
        if prev is None:
            break
        if cell is not None and cell.type != "$alias":
            out.append(cell.type)
        net = prev
    return out[::-1]


def timing_record(blif_text: str, period: float = NS_PER_CYCLE) -> dict[str, Any]:
    """The timing estimate of a flattened netlist: per instance of its top its longest path (groups), the same per
    instance one level down (detail: `u_core.u_stack`), and the worst of all."""
    paths = longest_paths(parse_blif(blif_text), period, depths=(1, 2))
    top = {g: p for g, p in paths.items() if "." not in g}
    groups = {g: p.record() for g, p in sorted(top.items())}
    detail = {g: p.record() for g, p in sorted(paths.items()) if "." in g}
    worst = min(top.values(), key=lambda p: p.slack_ns).record() if top else None
    return {"period_ns": period, "levels_that_fit": levels_that_fit(period), "groups": groups, "detail": detail,
            "worst": worst}
