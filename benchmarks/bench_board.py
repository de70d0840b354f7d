#!/usr/bin/env python3
"""Board benchmark over the simulated board: rows injected per second (verified, atomic), map operations per
second (update/lookup/delete by name on a hash map), raw AXI accesses per second, with and without traffic.

    python3 benchmarks/bench_board.py [--repeat 5] [--json benchmarks/out/board.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "compiler"))

from hxdp import params  # noqa: E402
from hxdp.board import tools as H  # noqa: E402
from hxdp.board.sim import BoardServer  # noqa: E402
from hxdp.frontend.program import MapDef  # noqa: E402
from hxdp.isa.insn import Insn  # noqa: E402
from hxdp.isa.rom import Rom  # noqa: E402
from hxdp.models.maps import MapLayout  # noqa: E402
from hxdp.traffic.gen import generate  # noqa: E402
from hxdp.traffic.pcap import write_pcap  # noqa: E402


def full_rom() -> Rom:
    """256 rows of r0 = 1 ..., the last one exit: the largest program the instruction memory holds."""
    mov = Insn.from_u64(0x00000001_000000B7)
    rows = [[mov] * params.LANES for _ in range(params.IMEM_ROWS - 1)]
    rows.append([Insn.from_u64(0x0000_0000_0000_0095)] + [Insn.from_u64(0)] * (params.LANES - 1))
    return Rom(rows)


def hash_layout() -> MapLayout:
    return MapLayout.from_maps([MapDef(name="flows", type=1, key_size=8, value_size=8, max_entries=256)])


def bench(board: H.Board, repeat: int) -> dict[str, float]:
    rom = full_rom()
    t_inject = []
    for _ in range(repeat):
        rep = H.inject(board, rom)
        t_inject.append(rep.seconds)
    layout = hash_layout()
    H.configure_and_inject(board, Rom([[Insn.from_u64(0x00000001_00000096)] + [Insn.from_u64(0)] * 3]), layout)
    bm = H.BoardMaps(board, layout)
    n = 64
    keys = [i.to_bytes(8, "little") for i in range(n)]
    t0 = time.perf_counter()
    for k in keys:
        bm.update("flows", k, k)
    t_upd = time.perf_counter() - t0
    t0 = time.perf_counter()
    for k in keys:
        assert bm.lookup("flows", k) == k
    t_look = time.perf_counter() - t0
    t0 = time.perf_counter()
    for k in keys:
        bm.delete("flows", k)
    t_del = time.perf_counter() - t0
    t0 = time.perf_counter()
    board.read_many([params.AXI_CNT_RX] * 5000)
    t_axi = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(500):
        board.read32(params.AXI_CNT_RX)
    t_axi1 = time.perf_counter() - t0
    med = statistics.median(t_inject)
    return {"inject_rows_per_s": len(rom.rows) / med, "inject_256_rows_ms": med * 1e3,
            "map_update_per_s": n / t_upd, "map_lookup_per_s": n / t_look, "map_delete_per_s": n / t_del,
            "axi_reads_per_s_pipelined": 5000 / t_axi, "axi_reads_per_s_one_by_one": 500 / t_axi1,
            "hash_region_lines": layout.regions[0].size // 16}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    results = {}
    with BoardServer(ports=1) as srv:
        board = srv.board()
        results["idle"] = bench(board, args.repeat)
        pcap = Path(srv.socket_path).with_name("bench.pcap")
        write_pcap(pcap, generate(10, 100, 64))
        board.replay(pcap, loop=True)
        results["traffic"] = bench(board, args.repeat)
        board.stop_replay()
        results["traffic"]["packets_during_run"] = board.stat()["finished"]
    for mode, r in results.items():
        print(f"[{mode}] inject: {r['inject_rows_per_s']:,.0f} rows/s ({r['inject_256_rows_ms']:.1f} ms for 256 rows, "
              f"verified, atomic); map ops on a {r['hash_region_lines']}-line hash map: update "
              f"{r['map_update_per_s']:,.0f}/s, lookup {r['map_lookup_per_s']:,.0f}/s, delete "
              f"{r['map_delete_per_s']:,.0f}/s; AXI reads {r['axi_reads_per_s_pipelined']:,.0f}/s pipelined, "
              f"{r['axi_reads_per_s_one_by_one']:,.0f}/s one by one")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
