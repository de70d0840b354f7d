"""Try XDP objects built from public sources as a new user would: kernel verifier, `hxdp compile`, `hxdp diff`.

    python3 scripts/corpus.py OBJ_DIR [--json OUT.json] [--size N]

Every XDP program of every OBJ_DIR/*.o is loaded into the kernel's verifier (maps the object leaves unsized get
--size entries, as a loader would give them), compiled for the NIC, and compared with the kernel packet by packet
on the vliw-model over mixed generated traffic (UDP, TCP, ICMP, IPv6, VLAN). One line per program with the first
blocker; --json writes every result. Nothing of the objects is kept in this repository.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from hxdp.errors import HxdpError


def traffic() -> list[bytes]:
    from hxdp.traffic.gen import generate

    return [p for proto, seed in (("udp", 1), ("tcp", 2), ("icmp", 3), ("ipv6", 4), ("vlan", 5), ("mix", 6))
            for p in generate(4, 6, 128, proto, seed)]


def unsized(obj: Path, size: int) -> dict[str, int]:
    from hxdp.frontend.elf import load_maps

    data = (".data", ".rodata", ".bss", ".kconfig")
    return {m.name: size for m in load_maps(obj) if m.max_entries == 0 and not m.section.startswith(data)}


def clock_or_random(rom: object) -> bool:
    from hxdp import params

    helpers = {params.HELPER_IDS[n] for n in ("ktime_get_ns", "get_prandom_u32")}
    return any(ins.opcode == 0x85 and ins.imm in helpers for row in rom.rows for ins in row)  # type: ignore[attr-defined]


def try_program(obj: Path, section: str, prog: str, size: int, packets: list[bytes]) -> dict:
    from hxdp.compiler import compile_program
    from hxdp.diff import run_diff
    from hxdp.frontend.elf import load_program
    from hxdp.linux.kernel import verify

    out = {"object": obj.name, "section": section, "prog": prog}
    try:
        sizes = unsized(obj, size)
        verify(obj, section, prog, sizes)
    except HxdpError as exc:
        return {**out, "stage": "verifier", "why": str(exc).split(": ", 1)[-1][:300]}
    try:
        result = compile_program(load_program(obj, section, prog, sizes))
    except HxdpError as exc:
        return {**out, "stage": "compile", "why": str(exc).split(": ", 2)[-1][:300]}
    try:
        report = run_diff(obj, packets, {"maps": {}}, section=section, prog=prog, sizes=sizes)
    except HxdpError as exc:
        return {**out, "stage": "diff-error", "why": str(exc)[:300], "rows": len(result.rom.rows)}
    if not report.ok:
        assert report.divergence is not None
        if clock_or_random(result.rom):  # the NIC's clock and generator are not the host's: no byte-exact match
            return {**out, "stage": "time/random", "why": report.divergence.render()[:300],
                    "rows": len(result.rom.rows)}
        return {**out, "stage": "diverges", "why": report.divergence.render()[:300], "rows": len(result.rom.rows)}
    return {**out, "stage": "match", "rows": len(result.rom.rows),
            "actions": {str(k): v for k, v in report.actions.items()}}


def main() -> int:
    from hxdp.frontend.elf import list_programs

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("objects", type=Path, help="folder of BPF objects (*.o)")
    ap.add_argument("--json", type=Path, help="write every result here")
    ap.add_argument("--size", type=int, default=64, help="max_entries of maps left unsized (default 64)")
    args = ap.parse_args()
    packets = traffic()
    results = []
    for obj in sorted(args.objects.glob("*.o")):
        try:
            progs = list_programs(obj)
        except HxdpError as exc:
            results.append({"object": obj.name, "stage": "elf", "why": str(exc)[:300]})
            continue
        for section, prog in progs:
            r = try_program(obj, section, prog, args.size, packets)
            results.append(r)
            print(f"{r['stage']:10s} {obj.name} {section}/{prog}: {r.get('why', r.get('actions', ''))}", flush=True)
    stages = Counter(r["stage"] for r in results)
    accepted = sum(n for s, n in stages.items() if s not in ("verifier", "elf"))
    share = 100 * stages["match"] / max(accepted, 1)
    print(f"{len(results)} programs: " + ", ".join(f"{s} {n}" for s, n in stages.most_common()) +
          f"; of the {accepted} the kernel accepts, {stages['match']} compile and match ({share:.0f}%)")
    if args.json:
        args.json.write_text(json.dumps({"stages": dict(stages), "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
