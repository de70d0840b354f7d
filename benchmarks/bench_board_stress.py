#!/usr/bin/env python3
"""Stress of one simulated board by concurrent host tools under looping traffic (issue 27): operations per
second, torn map lines, packets that ran a mix of two programs, lost or misrouted packets, the daemon's RSS and
the longest PING wait.

    python3 benchmarks/bench_board_stress.py [--seconds 180] [--clients 2] [--json benchmarks/out/board_stress.json]

Clients, each on its own connection: `--clients` injectors swapping program A (every packet PASS) and B (TX) --
rows of `r6 += 1` or `r7 += 1`, so a packet that ran rows of both ends DROP; `--clients` map updaters (update then
lookup on a hash map in the board's table); `--clients` line writers writing the same 64 map lines with their own
pattern and reading them back (a line holding neither whole pattern is torn); a monitor sampling the counters; a
drainer taking the outputs; a pinger timing PING. A pcap loops into port 0 meanwhile. At the end the replay stops,
the board drains, and accepted = finished = outputs taken is checked.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import threading
import time
from collections import Counter
from pathlib import Path

from hxdp import params
from hxdp.atomic_write import write_atomic
from hxdp.board import tools as H
from hxdp.board.sim import BoardServer
from hxdp.board.transport import SimBoard
from hxdp.frontend.program import MapDef
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout
from hxdp.traffic.gen import generate
from hxdp.traffic.pcap import write_pcap

OUT = Path(__file__).resolve().parent / "out" / "board_stress.json"
COUNT_ROWS = 200
LINES = range(60000, 60064)  # map lines no program here uses
BPF_MAP_TYPE_HASH = 1


def counting_rom(reg: int) -> Rom:
    """COUNT_ROWS rows of `reg += 1`; then PASS if r6 counted them all (A), TX if r7 did (B), DROP for a mix."""
    def row(op: int, dst: int = 0, off: int = 0, imm: int = 0) -> str:
        return "0" * 48 + f"{((imm & 0xFFFFFFFF) << 32) | ((off & 0xFFFF) << 16) | (dst << 8) | op:016x}"

    rows = [row(0x07, reg, imm=1) for _ in range(COUNT_ROWS)]
    rows += [row(0x55, 6, 1, COUNT_ROWS), row(0x96, imm=params.XDP_PASS), row(0x55, 7, 1, COUNT_ROWS),
             row(0x96, imm=params.XDP_TX), row(0x96, imm=params.XDP_DROP)]
    return Rom.from_text("\n".join(rows) + "\n")


class Stress:
    def __init__(self, server: BoardServer, seconds: float) -> None:
        self.server = server
        self.deadline = time.monotonic() + seconds
        self.ops: Counter[str] = Counter()
        self.errors: list[str] = []
        self.torn = 0
        self.actions: Counter[int] = Counter()
        self.misrouted = 0
        self.outputs = 0
        self.ping_max = 0.0
        self.pings: list[float] = []
        self.rss: list[tuple[float, int]] = []
        self.lock = threading.Lock()

    def running(self) -> bool:
        return time.monotonic() < self.deadline

    def count(self, what: str) -> None:
        with self.lock:
            self.ops[what] += 1

    def guard(self, name: str, body) -> None:  # noqa: ANN001
        try:
            body()
        except Exception as exc:  # a failed client is a finding: recorded, reported, counted
            with self.lock:
                self.errors.append(f"{name}: {type(exc).__name__}: {exc}")

    def injector(self, roms: list[Rom]) -> None:
        with SimBoard(self.server.socket_path) as b:
            k = 0
            while self.running():
                H.inject(b, roms[k % 2])
                k += 1
                self.count("inject")

    def updater(self, seed: int, layout: MapLayout) -> None:
        rng = random.Random(seed)
        with SimBoard(self.server.socket_path) as b:
            bm = H.BoardMaps(b, layout)
            while self.running():
                key = rng.randrange(32).to_bytes(4, "little")
                value = rng.getrandbits(64).to_bytes(8, "little")
                bm.update("h", key, value)
                self.count("map_update")
                got = bm.lookup("h", key)
                self.count("map_lookup")
                if got is None:
                    raise AssertionError(f"key {key.hex()} missing right after its update")

    def line_writer(self, pattern: int) -> None:
        mine = bytes([pattern, pattern + 1, pattern + 2, pattern + 3] * 4)
        with SimBoard(self.server.socket_path) as b:
            while self.running():
                H.write_lines(b, dict.fromkeys(LINES, mine))
                self.count("line_write_64")
                data = H.read_lines(b, LINES[0], len(LINES))
                self.count("line_read_64")
                for i in range(len(LINES)):
                    line = data[16 * i : 16 * i + 16]
                    if len(set(line[0::4])) != 1 or any(line[j] != line[0] + (j % 4) for j in range(16)):
                        with self.lock:
                            self.torn += 1

    def monitor(self) -> None:
        with SimBoard(self.server.socket_path) as b:
            mon = H.Monitor(b)
            while self.running():
                time.sleep(0.5)
                mon.sample()
                self.count("monitor")

    def drainer(self) -> None:
        with SimBoard(self.server.socket_path) as b:
            while self.running():
                time.sleep(0.5)
                self.take(b)

    def take(self, b: SimBoard) -> None:
        outs = b.outputs()
        with self.lock:
            self.outputs += len(outs)
            for o in outs:
                self.actions[o.action] += 1
                self.misrouted += o.port != 0 or o.redirect is not None

    def pinger(self) -> None:
        with SimBoard(self.server.socket_path) as b:
            while self.running():
                t0 = time.monotonic()
                b.ping()
                dt = time.monotonic() - t0
                self.pings.append(dt)
                self.ping_max = max(self.ping_max, dt)
                time.sleep(0.05)

    def rss_sampler(self) -> None:
        t0 = time.monotonic()
        assert self.server.proc is not None
        status = Path(f"/proc/{self.server.proc.pid}/status")
        while self.running():
            kb = next(int(line.split()[1]) for line in status.read_text().splitlines() if line.startswith("VmRSS:"))
            self.rss.append((round(time.monotonic() - t0, 1), kb))
            time.sleep(2.0)


def run(seconds: float, clients: int) -> dict:
    layout = MapLayout.from_maps([MapDef("h", BPF_MAP_TYPE_HASH, 4, 8, 32)])
    roms = [counting_rom(6), counting_rom(7)]
    with BoardServer(ports=1) as server:
        with server.board() as b:
            H.configure_and_inject(b, roms[0], layout)
            pcap = Path(server.socket_path).with_name("loop.pcap")
            write_pcap(pcap, generate(8, 64, 64, "udp", 1))
            b.replay(pcap, 0, loop=True)
        st = Stress(server, seconds)
        jobs = [("pinger", st.pinger, ()), ("monitor", st.monitor, ()), ("drainer", st.drainer, ()),
                ("rss", st.rss_sampler, ())]
        for k in range(clients):
            jobs += [(f"injector{k}", st.injector, (roms,)), (f"updater{k}", st.updater, (k, layout)),
                     (f"lines{k}", st.line_writer, (0x10 * (k + 1),))]
        threads = [threading.Thread(target=st.guard, args=(name, lambda f=f, a=a: f(*a)), name=name)
                   for name, f, a in jobs]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t0
        with server.board() as b:
            b.stop_replay()
            b.wait()
            st.take(b)
            stat = b.stat()
            counters = H.read_counters(b)
    rss = [kb for _, kb in st.rss]
    half = len(rss) // 2
    return {
        "seconds": round(elapsed, 1),
        "clients_per_kind": clients,
        "ops": dict(st.ops),
        "ops_per_second": {k: round(v / elapsed, 2) for k, v in st.ops.items()},
        "errors": st.errors,
        "torn_lines": st.torn,
        "mixed_programs": st.actions.get(params.XDP_DROP, 0) + st.actions.get(params.XDP_ABORTED, 0),
        "actions": {params.ACTION_NAMES[a]: n for a, n in sorted(st.actions.items())},
        "packets": {"accepted": stat["accepted"], "finished": stat["finished"], "outputs_taken": st.outputs,
                    "outputs_dropped": stat["outputs_dropped"], "queue_dropped": stat["queue_dropped"],
                    "rx_counter": counters["rx"]},
        "lost_packets": stat["accepted"] - st.outputs + stat["outputs_dropped"],
        "misrouted_packets": st.misrouted,
        "daemon_rss_kb": {"first": rss[0] if rss else None, "last": rss[-1] if rss else None,
                          "max": max(rss, default=None),
                          "first_half_mean": round(statistics.mean(rss[:half])) if half else None,
                          "second_half_mean": round(statistics.mean(rss[half:])) if half else None},
        "ping_wait_s": {"max": round(st.ping_max, 4), "median": round(statistics.median(st.pings), 5)
                        if st.pings else None, "count": len(st.pings)},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=180.0, help="length of the stress (default 180)")
    ap.add_argument("--clients", type=int, default=2, help="clients of each kind (default 2)")
    ap.add_argument("--json", default=str(OUT), help=f"figures (default {OUT})")
    args = ap.parse_args()
    doc = run(args.seconds, args.clients)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.json, json.dumps(doc, indent=1) + "\n")
    print(json.dumps(doc, indent=1))
    ok = not doc["errors"] and not doc["torn_lines"] and not doc["mixed_programs"] and not doc["lost_packets"] \
        and not doc["misrouted_packets"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
