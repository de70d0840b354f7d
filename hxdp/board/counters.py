"""The board's packet counters, read over AXI-Lite, and the monitor's rates and 64-bit totals."""

from __future__ import annotations

import time

from hxdp import params
from hxdp.board.transport import Board

MASK32 = 0xFFFF_FFFF

COUNTERS = {"rx": params.AXI_CNT_RX, "tx": params.AXI_CNT_TX, "drop": params.AXI_CNT_DROP}
# per-action counters are named xdp_<action> (rx/tx/drop are the original design's aggregate counters)
ACTION_COUNTERS = {"xdp_" + params.ACTION_NAMES[a].lower(): params.AXI_CNT_ACTION_BASE + 4 * a for a in range(5)}


def read_counters(board: Board, extended: bool = True) -> dict[str, int]:
    names = list(COUNTERS)
    addrs = list(COUNTERS.values())
    if extended:
        names += list(ACTION_COUNTERS) + ["faults", "cycles_lo", "cycles_hi"]
        addrs += list(ACTION_COUNTERS.values()) + [params.AXI_CNT_FAULTS, params.AXI_CNT_CYCLES_LO,
                                                   params.AXI_CNT_CYCLES_HI]
    assert len(set(names)) == len(names)
    vals = dict(zip(names, board.read_many(addrs), strict=True))
    if extended:
        vals["cycles"] = vals.pop("cycles_lo") | (vals.pop("cycles_hi") << 32)
    return vals


def wrap_delta(new: int, old: int) -> int:
    """Increment of a 32-bit wrapping counter."""
    return (new - old) & MASK32


class Monitor:
    """Rates and 64-bit totals from 32-bit counters sampled at intervals (each counter wraps independently)."""

    def __init__(self, board: Board, extended: bool = True) -> None:
        self.board = board
        self.extended = extended
        self.last = read_counters(board, extended)
        self.last_t = time.monotonic()
        self.totals = {k: 0 for k in self.last if k != "cycles"}

    def sample(self) -> dict[str, float]:
        now = read_counters(self.board, self.extended)
        t = time.monotonic()
        dt = max(t - self.last_t, 1e-9)
        out: dict[str, float] = {"seconds": dt}
        for k in self.totals:
            d = wrap_delta(now[k], self.last[k])
            self.totals[k] += d
            out[k] = d
            out[f"{k}_mpps"] = d / dt / 1e6
        if self.extended:
            dc = (now["cycles"] - self.last["cycles"]) & ((1 << 64) - 1)
            out["cycles"] = dc
            # packets per simulated (or real) clock cycle at the board clock: the rate the hardware would reach
            out["rx_mpps_clock"] = (out["rx"] / dc * params.CLOCK_MHZ) if dc else 0.0
        self.last, self.last_t = now, t
        return out


def format_sample(s: dict[str, float], totals: dict[str, int]) -> str:
    text = (f"RX {s['rx_mpps']:8.3f} Mpps  TX {s['tx_mpps']:8.3f} Mpps  DROP {s['drop_mpps']:8.3f} Mpps")
    if "xdp_redirect" in s:
        text += f"  REDIRECT {s['xdp_redirect_mpps']:8.3f} Mpps  PASS {s['xdp_pass_mpps']:8.3f} Mpps"
    if s.get("cycles"):
        text += f"  | at {params.CLOCK_MHZ} MHz: {s['rx_mpps_clock']:7.2f} Mpps"
    text += f"  | totals rx {totals['rx']} tx {totals['tx']} drop {totals['drop']}"
    if "xdp_redirect" in totals:
        text += f" redirect {totals['xdp_redirect']} pass {totals['xdp_pass']} aborted {totals['xdp_aborted']}"
    return text
