"""RFC 2544 zero-loss throughput search: the binary search, the MoonGen summary, a short search on the simulated
board (step mode: arrivals at exact cycles, a receive FIFO of a few packets)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hxdp import params
from hxdp.board import rfc2544 as R
from hxdp.board import tools as H
from hxdp.board.transport import BoardError
from hxdp.isa.insn import Insn
from hxdp.isa.rom import Rom
from hxdp.rtl.sim import available as verilator_available

_vok, _vwhy = verilator_available()
needs_sim = pytest.mark.skipif(not _vok, reason=_vwhy)
NOP = Insn.from_u64(0)
LUA = Path(__file__).resolve().parent.parent / "testbed_scripts" / "moongen_4port.lua"


def capacity_trial(capacity: float, calls: list[float]) -> R.TrialFn:
    def run(rate: float) -> R.Trial:
        calls.append(rate)
        return R.Trial(rate, 100, 0 if rate <= capacity else 1, 100)
    return run


@pytest.mark.parametrize("capacity, want", [(7.3, 7.3), (100.0, 40.0), (0.01, 0.0)])
def test_search_finds_the_highest_passing_rate(capacity: float, want: float) -> None:
    calls: list[float] = []
    res = R.search(capacity_trial(capacity, calls), 40.0, 0.1)
    assert calls[0] == 40.0  # the highest rate first
    assert res.throughput_mpps <= capacity and want - res.throughput_mpps <= 0.1 + 1e-9
    assert len(calls) <= 1 + 9  # log2(40 / 0.1) halvings at most
    assert all(t.passed == (t.rate_mpps <= capacity) for t in res.trials)


def test_search_rejects_bad_bounds() -> None:
    with pytest.raises(ValueError, match="expected 0 <= min < max"):
        R.search(capacity_trial(1.0, []), 0.0, 0.1)


def test_moongen_summary_is_read() -> None:
    text = "junk\nport 0 tx 100 rx 99\nport 1 tx 50 rx 50\nlatency_ns p50 900 p99 1500 samples 30\n"
    assert R.parse_moongen(text) == (150, 149)
    with pytest.raises(BoardError, match="no `port N tx PKTS rx PKTS` line"):
        R.parse_moongen("nothing")
    # the script prints the lines this reads
    fmt = re.search(r'"(port %d tx %d rx %d)"', LUA.read_text())
    assert fmt and R.COUNTER_LINE.match(fmt.group(1).replace("%d", "7"))


def drop_rom() -> Rom:
    return Rom([[Insn.from_u64((params.XDP_DROP << 32) | 0xB7), NOP, NOP, NOP], [Insn.from_u64(0x95), NOP, NOP, NOP]])


FRAMES = [bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0]) + bytes(range(46))]


@needs_sim
def test_search_on_the_simulated_board() -> None:
    """The board's zero-loss rate for 60-byte frames of a two-row XDP_DROP program is its input port's: two 32-byte
    frames a packet at one frame a cycle, CLOCK_MHZ / 2 = 78.1 Mpps (the core needs fewer cycles); a short trial's
    buffers (the FIFO's 4 packets, the packet buffer's) absorb a little more. A trial at the answer passes, one
    1 Mpps above loses packets, and the board processed every packet of every trial."""
    from hxdp.board.sim import BoardServer

    with BoardServer(ports=1, step=True) as srv:
        b = srv.board()
        H.inject(b, drop_rom())
        trial = R.sim_trial(b, FRAMES, packets=400, buffer=4)
        res = R.search(trial, 150.0, 0.5)
        assert params.CLOCK_MHZ / 2 - 1 < res.throughput_mpps < params.CLOCK_MHZ / 2 + 1, res
        assert trial(res.throughput_mpps).passed and not trial(res.throughput_mpps + 1.0).passed
        assert all(t.processed == t.sent == 400 for t in res.trials)
        cycles = [o.cycles for o in b.outputs()]
        assert cycles == []  # each trial took its outputs off the board


@needs_sim
def test_a_free_running_board_is_refused() -> None:
    from hxdp.board.sim import BoardServer

    with BoardServer(ports=1) as srv, pytest.raises(BoardError, match="--step"):
        R.sim_trial(srv.board(), FRAMES, packets=10)
