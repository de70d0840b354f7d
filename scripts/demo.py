"""The newcomer's demo: compile every bundled XDP program, run its traffic on Sephirot and in Linux, compare."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import track
from rich.table import Table

from hxdp import params
from hxdp.compiler import compile_program
from hxdp.diff import compare, map_diff
from hxdp.errors import HxdpError
from hxdp.linux.kernel import available
from hxdp.models.maps import MapState
from hxdp.rtl.sim import RtlSim
from hxdp.suite import programs
from hxdp.traffic.pcap import read_pcap

ACTIONS = params.ACTION_NAMES


def main() -> int:
    console = Console(width=None if sys.stdout.isatty() else 150)
    kernel_ok, why = available()
    if not kernel_ok:
        console.print(f"[yellow]Linux XDP comparison skipped: {why}[/]")
    out_dir = Path("out/demo")
    out_dir.mkdir(parents=True, exist_ok=True)
    table = Table(title="hxdp demo: bundled programs on Sephirot (cycle-accurate RTL) vs Linux XDP, on each "
                        "program's sample traffic (xdp_progs/traffic/)")
    for col in ("program", "eBPF insns", "rows", "static IPC", "packets", "actions (Sephirot)", "cycles/pkt",
                "Mpps @156.25MHz", "same as kernel"):
        table.add_column(col, justify="right" if col not in ("program", "actions (Sephirot)") else "left")
    failures = 0
    summary = []
    for prog in track(programs(), description="compiling and running", console=console):
        if not prog.obj.exists() or not prog.traffic.exists():
            continue
        try:
            program = prog.load()
            t0 = time.perf_counter()
            result = compile_program(program)
            compile_s = time.perf_counter() - t0
            rom_path = out_dir / f"{prog.name}.rom"
            result.rom.save(rom_path)
            packets = read_pcap(prog.traffic)
            cfg = prog.map_config()
            state = MapState(result.layout)
            state.apply_config(cfg)
            sim = RtlSim(result.rom, layout=result.layout, state=state)
            t0 = time.perf_counter()
            res = sim.run_packets(packets)
            sim_s = time.perf_counter() - t0
            counts: dict[str, int] = {}
            for r in res:
                name = ACTIONS.get(r.action, str(r.action))
                counts[name] = counts.get(name, 0) + 1
            # Back to back: the spacing of packets leaving the core, as `hxdp run` reports it.
            st = sim.stamps
            cpp = (st[-1].out - st[0].out) / (len(st) - 1) if len(st) > 1 else float(st[0].out - st[0].in_cycle)
            same = "n/a"
            if kernel_ok:
                with prog.kernel() as kp:
                    kp.apply_config(cfg)
                    kres = [kp.run(p) for p in packets]
                    kmaps = kp.dump()
                # The same checks as `hxdp diff`; the RTL's maps are compared after the whole trace.
                divs = [d for i, (k, e) in enumerate(zip(kres, res, strict=True)) if (d := compare(i, k, e))]
                map_lines = map_diff(kmaps, state.dump())
                if divs:
                    same = f"NO: packet {divs[0].packet} {divs[0].what}"
                elif map_lines:
                    same = f"NO: {map_lines[0]}"
                else:
                    same = "yes"
                failures += same != "yes"
            rep = result.report
            table.add_row(prog.name, str(rep.get("original_insns", "")), str(len(result.rom)),
                          f"{rep.get('static_ipc', 0):.2f}", str(len(packets)),
                          " ".join(f"{k}:{v}" for k, v in sorted(counts.items())), f"{cpp:.1f}",
                          f"{params.CLOCK_MHZ / cpp:.1f}" if cpp else "-", same)
            summary.append({"program": prog.name, "rows": len(result.rom), "report": rep, "actions": counts,
                            "cycles_per_packet": cpp, "same_as_kernel": same, "compile_s": compile_s,
                            "sim_s": sim_s})
        except HxdpError as exc:
            failures += 1
            table.add_row(prog.name, "", "", "", "", f"[red]error: {exc}[/]", "", "", "")
    console.print(table)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    console.print("cycles/pkt: back-to-back spacing on this traffic, which mixes frame sizes (a 32-byte input bus "
                  "takes 2 cycles per 64 bytes); 64-byte figures: `hxdp experiment fig12_13 --out DIR`.")
    console.print(f"ROMs and summary.json in {out_dir}/")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
