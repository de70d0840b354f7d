"""RFC 2544 zero-loss throughput: a binary search over the offered rate, with trials on the simulated board or MoonGen.

A trial offers `packets` frames at `rate` Mpps and counts what was lost. The search (RFC 2544 section 26.1) first
tries the highest rate, then halves the interval between the highest rate without loss and the lowest with loss
until it is narrower than the resolution; the answer is the highest rate a trial passed.

On the simulated board (`hxdp board serve --step`: its clock advances only when asked) a trial is exact and
repeatable: frame i enters port P at cycle round(i * CLOCK_MHZ / rate), and a frame that finds `buffer` packets
already waiting at the port is lost, as at a NIC's receive FIFO of that many packets (the daemon's own queue is
4096 deep and would hide the loss). The first loss of a trial is exact; the count after it is an upper bound (the
lost frame was queued anyway). On the testbed, testbed_scripts/moongen_4port.lua sends at the rate from four ports
and prints its counters, which `moongen_trial` reads (untested here: no MoonGen or NIC on this machine).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hxdp import params
from hxdp.board.transport import BoardError, SimBoard


@dataclass
class Trial:
    rate_mpps: float
    sent: int
    lost: int
    processed: int  # packets the board finished (sim) or received back (MoonGen)

    @property
    def passed(self) -> bool:
        return self.lost == 0


@dataclass
class SearchResult:
    throughput_mpps: float  # the highest rate a trial passed (0.0 when none did)
    trials: list[Trial] = field(default_factory=list)


TrialFn = Callable[[float], Trial]


def search(trial: TrialFn, max_mpps: float, resolution_mpps: float = 0.1, min_mpps: float = 0.0) -> SearchResult:
    """The highest rate in [min_mpps, max_mpps] whose trial loses nothing, to within resolution_mpps."""
    if not 0 <= min_mpps < max_mpps or resolution_mpps <= 0:
        raise ValueError(f"rates {min_mpps}..{max_mpps} Mpps with resolution {resolution_mpps}: expected "
                         "0 <= min < max and a resolution above 0")
    trials: list[Trial] = []
    top = trial(max_mpps)
    trials.append(top)
    if top.passed:
        return SearchResult(max_mpps, trials)
    good, bad = min_mpps, max_mpps
    while bad - good > resolution_mpps:
        mid = (good + bad) / 2
        t = trial(mid)
        trials.append(t)
        if t.passed:
            good = mid
        else:
            bad = mid
    passed = [t.rate_mpps for t in trials if t.passed]
    return SearchResult(max(passed) if passed else 0.0, trials)


# --- trials on the simulated board ----------------------------------------------------------------------------------
def require_step_mode(board: SimBoard, frame: bytes, port: int = 0) -> None:
    """A trial times arrivals by the board's clock: on a free-running board (which runs whenever it has work) a
    frame is taken without a RUN; in step mode it waits for one."""
    before = board.stat()["accepted"]
    board.inject([frame], port)
    deadline = time.monotonic() + 0.3
    free = False
    while not free and time.monotonic() < deadline:
        time.sleep(0.02)
        free = board.stat()["accepted"] != before
    board.wait()
    board.request("CLEAROUT")
    if free:
        raise BoardError(f"{board.name}: the board's clock runs freely; an RFC 2544 trial needs one started with "
                         "`hxdp board serve --step` (arrivals at exact cycles)")


def sim_trial(board: SimBoard, frames: Sequence[bytes], packets: int, port: int = 0,
              buffer: int = 8) -> TrialFn:
    """A trial function on the simulated board in step mode: `packets` frames (cycled from `frames`) at the rate,
    a receive FIFO of `buffer` packets in front of the port."""
    if not frames or packets < 1 or buffer < 1:
        raise ValueError("a trial needs frames, at least one packet and a buffer of at least one packet")
    require_step_mode(board, bytes(frames[0]), port)

    def run(rate_mpps: float) -> Trial:
        interval = params.CLOCK_MHZ / rate_mpps  # cycles between two arrivals
        before = board.stat()
        lines: list[str] = []
        now = 0
        for i in range(packets):
            lines.append(f"I {port} {bytes(frames[i % len(frames)]).hex()}")
            due = round((i + 1) * interval)
            if due > now:
                lines.append(f"RUN {due - now}")
                now = due
            lines.append("STAT")
        replies = board.pipeline(lines)
        waiting = [int(dict(kv.split("=", 1) for kv in r.split())["queued"]) for line, r in zip(lines, replies,
                   strict=True) if line == "STAT"]
        # frame i + 1 arrives after the i-th STAT: lost when `buffer` packets were waiting then
        lost = sum(1 for q in waiting[:-1] if q >= buffer)
        board.wait()
        after = board.stat()
        board.request("CLEAROUT")
        return Trial(rate_mpps, packets, lost, after["finished"] - before["finished"])

    return run


# --- trials with MoonGen on the testbed ------------------------------------------------------------------------------
COUNTER_LINE = re.compile(r"^port (\d+) tx (\d+) rx (\d+)$", re.M)


def parse_moongen(text: str) -> tuple[int, int]:
    """Sent and received packets from moongen_4port.lua's summary lines (`port N tx PKTS rx PKTS`)."""
    rows = COUNTER_LINE.findall(text)
    if not rows:
        raise BoardError("MoonGen printed no `port N tx PKTS rx PKTS` line (see testbed_scripts/moongen_4port.lua)")
    return sum(int(r[1]) for r in rows), sum(int(r[2]) for r in rows)


def moongen_trial(command: Sequence[str], seconds: float) -> TrialFn:
    """A trial function running MoonGen (`command`: MoonGen, the script and its ports), the rate split over the
    ports by the script; lost = sent - received back (a program that forwards: XDP_TX or a redirect)."""

    def run(rate_mpps: float) -> Trial:
        argv = [*command, "--mpps", f"{rate_mpps:.4f}", "--time", f"{seconds:g}"]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BoardError(f"{argv[0]}: {exc}") from None
        sent, received = parse_moongen(proc.stdout)
        return Trial(rate_mpps, sent, max(sent - received, 0), received)

    return run


# --- the command (testbed_scripts/rfc2544.py) ----------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    import argparse
    import json
    import shlex

    from hxdp.traffic.pcap import read_pcap

    p = argparse.ArgumentParser(prog="rfc2544.py", description="RFC 2544 zero-loss throughput (binary search)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--board", help="sim:SOCKET, a simulated board started with `hxdp board serve --step`")
    src.add_argument("--moongen", help="the MoonGen command, e.g. 'MoonGen testbed_scripts/moongen_4port.lua 0 1 2 3'")
    p.add_argument("--pcap", help="(sim) the frames to offer, cycled")
    p.add_argument("--port", type=int, default=0, help="(sim) input port")
    p.add_argument("--packets", type=int, default=1000, help="(sim) packets per trial")
    p.add_argument("--buffer", type=int, default=8, help="(sim) receive FIFO in packets: an arrival finding it "
                   "full is lost")
    p.add_argument("--seconds", type=float, default=60.0, help="(MoonGen) seconds per trial (RFC 2544: 60)")
    p.add_argument("--max-mpps", type=float, required=True, help="highest rate tried (first trial)")
    p.add_argument("--resolution", type=float, default=0.1, help="stop when the interval is this narrow (Mpps)")
    p.add_argument("--json", action="store_true", help="the result and every trial as JSON")
    args = p.parse_args(argv)
    try:
        if args.board:
            from hxdp.board.transport import open_board

            if not args.pcap:
                p.error("--board needs --pcap")
            board = open_board(args.board)
            if not isinstance(board, SimBoard):
                p.error("--board: trials on a real board are run by MoonGen (--moongen)")
            trial = sim_trial(board, read_pcap(args.pcap), args.packets, args.port, args.buffer)
        else:
            trial = moongen_trial(shlex.split(args.moongen), args.seconds)
        res = search(trial, args.max_mpps, args.resolution)
    except (BoardError, ValueError, OSError) as exc:
        print(f"rfc2544.py: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"throughput_mpps": res.throughput_mpps, "trials": [
            {"rate_mpps": t.rate_mpps, "sent": t.sent, "lost": t.lost, "processed": t.processed}
            for t in res.trials]}))
    else:
        for t in res.trials:
            print(f"{t.rate_mpps:9.4f} Mpps: sent {t.sent} lost {t.lost} processed {t.processed} "
                  f"{'pass' if t.passed else 'FAIL'}")
        print(f"zero-loss throughput: {res.throughput_mpps:.4f} Mpps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
