#!/usr/bin/env python3
"""Compile-time benchmark: CPU seconds per program (the suite, generated programs of growing size, given objects),
written to a JSON file, with the growth of compile time against instructions.

    python3 benchmarks/bench_compile_time.py [--sizes 2000,4000,8000] [--object OBJ ...] \
        [--map NAME.max_entries=N ...] [--json benchmarks/out/compile_time.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from bigprog import source, statements_for  # noqa: E402

from hxdp.compiler import CompileOptions, compile_program  # noqa: E402
from hxdp.errors import HxdpError  # noqa: E402
from hxdp.frontend.elf import load_program  # noqa: E402
from hxdp.frontend.program import Program  # noqa: E402
from hxdp.suite import programs  # noqa: E402

CFLAGS = ["-O2", "-target", "bpf", "-mcpu=v3", "-I/usr/include/x86_64-linux-gnu"]


def timed(name: str, program: Program) -> dict:
    """One compile of `program` (no row limit): instructions, rows and CPU seconds, or the compiler's error."""
    t0 = time.process_time()
    try:
        res = compile_program(program, CompileOptions(imem_rows=1 << 20))
    except HxdpError as exc:
        return {"program": name, "insns": len(program.insns), "error": str(exc)}
    return {"program": name, "insns": len(program.insns), "rows": res.report["rows"],
            "cpu_s": round(time.process_time() - t0, 3)}


def generated(sizes: list[int], tmp: Path) -> list[dict]:
    out = []
    for size in sizes:
        src = tmp / f"gen{size}.c"
        src.write_text(source(statements_for(size)))
        obj = src.with_suffix(".o")
        subprocess.run(["clang", *CFLAGS, "-c", str(src), "-o", str(obj)], check=True)
        out.append(timed(f"generated_{size}", load_program(obj)))
    return out


def given(objects: list[str], sizes: dict[str, int]) -> list[dict]:
    out = []
    for path in objects:
        program = load_program(path)
        for m in program.maps:
            if m.name in sizes:
                m.max_entries = sizes[m.name]
        out.append(timed(Path(path).stem, program))
    return out


def growth(rows: list[dict]) -> list[dict]:
    """Between successive generated programs: size ratio and time ratio (near equal when compile time is linear)."""
    ok = [r for r in rows if "cpu_s" in r]
    return [{"from": a["insns"], "to": b["insns"], "size_ratio": round(b["insns"] / a["insns"], 2),
             "time_ratio": round(b["cpu_s"] / a["cpu_s"], 2)} for a, b in zip(ok, ok[1:], strict=False)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000,4000,8000", help="instructions of the generated programs")
    ap.add_argument("--object", action="append", default=[], help="an eBPF object to time as well (repeatable)")
    ap.add_argument("--map", action="append", default=[], metavar="NAME.max_entries=N",
                    help="max_entries of a map of the given objects, as a loader sets it (repeatable)")
    ap.add_argument("--no-suite", action="store_true", help="leave out the bundled programs")
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "out" / "compile_time.json"))
    args = ap.parse_args()
    sizes = {k.removesuffix(".max_entries"): int(v) for k, v in (a.split("=", 1) for a in args.map)}
    out: dict = {"suite": [], "generated": [], "objects": []}
    if not args.no_suite:
        out["suite"] = [timed(p.name, p.load()) for p in programs() if p.obj.exists()]
    with tempfile.TemporaryDirectory() as tmp:
        out["generated"] = generated([int(s) for s in args.sizes.split(",") if s], Path(tmp))
    out["objects"] = given(args.object, sizes)
    out["growth"] = growth(out["generated"])
    for r in out["suite"] + out["generated"] + out["objects"]:
        print(f"{r['program']:24s} {r['insns']:6d} insns  " +
              (f"{r['rows']:5d} rows  {r['cpu_s']:7.3f} s" if "cpu_s" in r else f"error: {r['error']}"))
    for g in out["growth"]:
        print(f"{g['from']} -> {g['to']} insns: x{g['size_ratio']} size, x{g['time_ratio']} time")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
