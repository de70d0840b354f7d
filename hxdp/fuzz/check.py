"""Running fuzz programs: clang builds a batch into one object, the object goes through hxdp.frontend.elf like a
user's object, the kernel (BPF_PROG_TEST_RUN) is the oracle and each engine (seq-model, vliw-model, rtl) must produce
the same action, bytes, metadata and map contents; divergences are minimised into self-contained cases."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hxdp.errors import HxdpError
from hxdp.fuzz.generator import Block, FuzzError, FuzzProgram, Node, gen_program, render_object
from hxdp.fuzz.inputs import gen_config, gen_packets

MapDump = dict[str, dict[bytes, bytes]]


# --- building -----------------------------------------------------------------------------------------------------
def clang_flags() -> list[str]:
    arch = subprocess.run(["clang", "-print-multiarch"], capture_output=True, text=True).stdout.strip() or \
        f"{os.uname().machine}-linux-gnu"
    return ["-O2", "-g", "-target", "bpf", "-mcpu=v3", "-Wall", "-Wno-unused-variable",
            "-Wno-unused-but-set-variable", "-Wno-unused-function", f"-I/usr/include/{arch}"]


_FLAGS: list[str] | None = None


def compile_c(src: str, out: Path) -> None:
    """clang -target bpf: C text -> object `out` (the .c is written next to it)."""
    global _FLAGS
    if _FLAGS is None:
        _FLAGS = clang_flags()
    c = out.with_suffix(".c")
    c.write_text(src)
    proc = subprocess.run(["clang", *_FLAGS, "-c", str(c), "-o", str(out)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise FuzzError(f"{c}: clang failed: {proc.stderr.strip()[-800:]}")


# --- running ------------------------------------------------------------------------------------------------------
@dataclass
class Outcome:
    """Per-packet results of one side (kernel or engine) and the map contents after each packet."""

    results: list[Any]
    maps: list[MapDump | None]
    meta: bool = True  # the side reports XDP metadata (RunResult.meta)


def kernel_outcome(obj: Path, prog: str, packets: list[bytes], cfg: dict[str, Any]) -> Outcome:
    from hxdp.frontend.sizing import config_sizes
    from hxdp.linux.kernel import KernelProgram

    res, maps = [], []
    with KernelProgram(obj, prog=prog, sizes=config_sizes(cfg)) as k:
        k.apply_config(cfg)
        for p in packets:
            res.append(k.run(p))
            maps.append(k.dump())
    return Outcome(res, maps)


def engine_outcome(engine: str, program: Any, packets: list[bytes], cfg: dict[str, Any]) -> Outcome:
    from hxdp.models.maps import MapState

    if engine == "seq-model":
        from hxdp.models.seq import SeqModel

        state = MapState.for_program(program)
        state.apply_config(cfg)
        model: Any = SeqModel(program, state)
    else:
        from hxdp.compiler import compile_program

        cr = compile_program(program)
        state = MapState(cr.layout)
        state.apply_config(cfg)
        if engine == "rtl":
            from hxdp.rtl.sim import RtlSim

            sim = RtlSim(cr.rom, layout=cr.layout, state=state)
            res = sim.run_packets(list(packets))
            return Outcome(res, [None] * (len(packets) - 1) + [state.dump()])
        from hxdp.models.vliw import VliwModel

        model = VliwModel(cr.rom, state)
    res, maps = [], []
    for p in packets:
        res.append(model.run(p))
        maps.append(state.dump())
    return Outcome(res, maps)


def first_divergence(kern: Outcome, eng: Outcome) -> tuple[int, str, list[str]] | None:
    """(packet index, field, detail lines) of the first difference, maps compared where the engine dumped them."""
    from hxdp.diff import compare, map_diff

    for i, (k, e) in enumerate(zip(kern.results, eng.results, strict=True)):
        div = compare(i, k, e, meta=kern.meta and eng.meta)
        if div is not None:
            if div.what == "action":
                return i, "action", [f"kernel action {div.expected}, engine {div.got}"] + div.detail
            if div.what == "meta":
                return i, "meta", [f"kernel {div.expected}", f"engine {div.got}"] + div.detail
            return i, div.what, div.detail
        fault = [f"engine fault: {e.fault}"] if e.fault else []
        if eng.maps[i] is not None:
            kmaps = kern.maps[i]
            assert kmaps is not None
            lines = map_diff(kmaps, eng.maps[i])  # type: ignore[arg-type]
            if lines:
                return i, "map", lines + fault
    return None


@dataclass
class CaseResult:
    """What happened to one generated program."""

    index: int
    name: str
    status: str  # ok, rejected (verifier), clang, engine-error, divergent
    detail: str = ""
    divergences: dict[str, tuple[int, str, list[str]]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    actions: dict[int, int] = field(default_factory=dict)
    insns: int = 0
    features: list[str] = field(default_factory=list)


def loaded_config(obj: Path, prog: str, cfg: dict[str, Any]) -> dict[str, Any]:
    """`cfg` without its PROG_ARRAY entries when the compiled program makes no tail call (clang removed a dead
    one): its callee is then not loaded beside it, on the kernel as on the NIC."""
    from hxdp.frontend.elf import load_program

    if "jmp" not in cfg.get("maps", {}) or load_program(obj, prog=prog).resident:
        return cfg
    return {**cfg, "maps": {k: v for k, v in cfg["maps"].items() if k != "jmp"}}


def check_program(obj: Path, prog: str, packets: list[bytes], cfg: dict[str, Any],
                  engines: tuple[str, ...]) -> tuple[str, str, Outcome | None, dict, dict]:
    """(status, detail, kernel outcome, divergences by engine, errors by engine) of one program of an object."""
    from hxdp.frontend.elf import load_program
    from hxdp.frontend.sizing import config_sizes
    from hxdp.linux.kernel import KernelError

    cfg = loaded_config(obj, prog, cfg)
    try:
        kern = kernel_outcome(obj, prog, packets, cfg)
    except KernelError as exc:
        return "rejected", str(exc).splitlines()[0][-300:], None, {}, {}
    program = load_program(obj, prog=prog, sizes=config_sizes(cfg))
    divs: dict[str, tuple[int, str, list[str]]] = {}
    errs: dict[str, str] = {}
    for eng in engines:
        try:
            out = engine_outcome(eng, program, packets, cfg)
        except HxdpError as exc:
            errs[eng] = f"{type(exc).__name__}: {exc}"
            continue
        d = first_divergence(kern, out)
        if d is not None:
            divs[eng] = d
    status = "divergent" if divs else ("engine-error" if errs else "ok")
    return status, "", kern, divs, errs


def run_batch(seed: int, indices: list[int], npackets: int, engines: tuple[str, ...], workdir: Path,
              keep: bool = False, exclude: frozenset[str] = frozenset()) -> list[CaseResult]:
    """Generate, compile and check the programs `indices` of campaign `seed`: one object for those without tail
    calls, one each for the others (every XDP program of an object is a tail call's possible target)."""
    progs = [gen_program(seed, i, exclude=exclude) for i in indices]
    plain = [(i, p) for i, p in zip(indices, progs, strict=True) if p.callee is None]
    out: list[CaseResult] = []
    for group in ([plain] if plain else []) + [[(i, p)] for i, p in zip(indices, progs, strict=True) if p.callee]:
        out += _run_object(seed, [i for i, _ in group], [p for _, p in group], npackets, engines, workdir, keep)
    return sorted(out, key=lambda c: c.index)


def _run_object(seed: int, indices: list[int], progs: list[FuzzProgram], npackets: int, engines: tuple[str, ...],
                workdir: Path, keep: bool) -> list[CaseResult]:
    workdir.mkdir(parents=True, exist_ok=True)
    obj = workdir / f"batch_{seed}_{indices[0]}.o"
    out: list[CaseResult] = []
    objs = [obj]
    try:
        compile_c(render_object(progs), obj)
        out = _check_all(seed, indices, progs, obj, npackets, engines)
    except FuzzError:
        # one bad function spoils the batch: compile them one by one to find it
        out = []
        for i, p in zip(indices, progs, strict=True):
            one = workdir / f"one_{seed}_{i}.o"
            objs.append(one)
            try:
                compile_c(render_object([p]), one)
            except FuzzError as exc:
                out.append(CaseResult(i, p.name, "clang", str(exc)[-400:]))
                continue
            out += _check_all(seed, [i], [p], one, npackets, engines)
    if not keep:
        for o in objs:
            for f in (o, o.with_suffix(".c")):
                f.unlink(missing_ok=True)
    return out


def _check_all(seed: int, indices: list[int], progs: list[FuzzProgram], obj: Path, npackets: int,
               engines: tuple[str, ...]) -> list[CaseResult]:
    out = []
    for i, p in zip(indices, progs, strict=True):
        packets = gen_packets(seed, i, npackets)
        cfg = gen_config(seed, i, p)
        try:
            status, detail, kern, divs, errs = check_program(obj, p.name, packets, cfg, engines)
        except HxdpError as exc:
            out.append(CaseResult(i, p.name, "engine-error", f"{type(exc).__name__}: {exc}"))
            continue
        cr = CaseResult(i, p.name, status, detail, divs, errs, features=sorted(p.features()))
        if kern is not None:
            for r in kern.results:
                cr.actions[r.action] = cr.actions.get(r.action, 0) + 1
        out.append(cr)
    return out


# --- reproducers and minimisation -----------------------------------------------------------------------------------
def diverges(prog: FuzzProgram, packets: list[bytes], cfg: dict[str, Any], engine: str, workdir: Path) -> bool:
    """Does this (possibly reduced) program still diverge on `engine`? (False when it no longer verifies.)"""
    from hxdp.linux.kernel import KernelError

    obj = workdir / "min.o"
    try:
        compile_c(render_object([prog]), obj)
        status, _, _, divs, errs = check_program(obj, prog.name, packets, cfg, (engine,))
    except (FuzzError, KernelError):
        return False
    except HxdpError:
        return False
    del status
    return engine in divs or engine in errs


def _stmt_lists(nodes: list[Node]) -> list[list[Node]]:
    """Every statement list of a tree, depth first (the same order for a deep copy)."""
    out = [nodes]
    for n in nodes:
        for b in n.blocks:
            out += _stmt_lists(b)
    return out


def minimise(prog: FuzzProgram, packets: list[bytes], cfg: dict[str, Any], engine: str, workdir: Path,
             deadline: float | None = None) -> tuple[FuzzProgram, list[bytes]]:
    """Greedy reduction: drop packets after the first divergent one and before it, then statements, while the
    divergence on `engine` persists."""
    import copy

    workdir.mkdir(parents=True, exist_ok=True)

    def out_of_time() -> bool:
        return deadline is not None and time.monotonic() > deadline

    # packets: the divergent one is the last kept; earlier ones only when needed
    for n in range(1, len(packets) + 1):
        if diverges(prog, packets[:n], cfg, engine, workdir):
            packets = packets[:n]
            break
    i = 0
    while i < len(packets) - 1 and not out_of_time():
        trial = packets[:i] + packets[i + 1:]
        if diverges(prog, trial, cfg, engine, workdir):
            packets = trial
        else:
            i += 1
    best = prog
    # statements: try removing every node (outermost first), then replacing a block by its body
    changed = True
    while changed and not out_of_time():
        changed = False
        nlists = len(_stmt_lists(best.body))
        for li in range(nlists):
            j = 0
            while j < len(_stmt_lists(best.body)[li]) and not out_of_time():
                cand = copy.deepcopy(best)
                target = _stmt_lists(cand.body)[li]
                node = target.pop(j)
                if diverges(cand, packets, cfg, engine, workdir):
                    best, changed = cand, True
                    break
                if isinstance(node, Block) and node.body:
                    target[j:j] = list(node.body)
                    if diverges(cand, packets, cfg, engine, workdir):
                        best, changed = cand, True
                        break
                j += 1
            if changed:
                break
    return best, packets


def write_case(folder: Path, prog: FuzzProgram, packets: list[bytes], cfg: dict[str, Any], engine: str,
               note: str = "", known: dict[str, str] | None = None) -> dict[str, Any]:
    """A self-contained regression case of a generated program (see write_case_src)."""
    return write_case_src(folder, render_object([prog]), prog.name, packets, cfg, engine, note, known)


def write_case_src(folder: Path, src: str, name: str, packets: list[bytes], cfg: dict[str, Any], engine: str,
                   note: str = "", known: dict[str, str] | None = None) -> dict[str, Any]:
    """A self-contained regression case: the C source, its object, the packets, the initial maps, and the kernel's
    results (action, bytes, maps after each packet) so that tests run without bpf(). `known` maps an engine to
    the reason it is still expected to differ (tests/test_fuzz.py marks those runs xfail, strict)."""
    from hxdp.diff import dump_to_config
    from hxdp.traffic.pcap import write_pcap

    folder.mkdir(parents=True, exist_ok=True)
    obj = folder / "prog.o"
    compile_c(src, obj)
    cfg = loaded_config(obj, name, cfg)
    write_pcap(folder / "packets.pcap", packets)
    (folder / "maps.json").write_text(json.dumps(cfg, indent=1) + "\n")
    kern = kernel_outcome(obj, name, packets, cfg)
    expected = [{"action": r.action, "packet": r.packet.hex(), "meta": r.meta.hex(),
                 "maps": dump_to_config(m)["maps"]} for r, m in zip(kern.results, kern.maps, strict=True)]
    case = {"prog": name, "engine": engine, "note": note, "known": known or {}, "expected": expected}
    (folder / "case.json").write_text(json.dumps(case, indent=1) + "\n")
    flags = " ".join(_FLAGS or clang_flags())
    (folder / "README.txt").write_text(
        f"{note}\n\nreproduce with:\n  hxdp diff prog.o --prog {name} --pcap packets.pcap --maps maps.json "
        f"--engine {engine}\n(prog.o is prog.c built with: clang {flags} -c prog.c -o prog.o)\n")
    return case


def load_case(folder: Path) -> tuple[Path, str, list[bytes], dict[str, Any], dict[str, Any]]:
    """(object, program name, packets, initial maps, case.json) of a case folder written by write_case."""
    from hxdp.traffic.pcap import read_pcap

    case = json.loads((folder / "case.json").read_text())
    cfg = json.loads((folder / "maps.json").read_text())
    return folder / "prog.o", case["prog"], list(read_pcap(folder / "packets.pcap")), cfg, case


def recorded_outcome(case: dict[str, Any]) -> Outcome:
    """The kernel's results stored in a case, as an Outcome."""
    from hxdp.result import RunResult

    res, maps = [], []
    for e in case["expected"]:
        res.append(RunResult(action=e["action"], packet=bytes.fromhex(e["packet"]),
                             meta=bytes.fromhex(e.get("meta", ""))))
        maps.append({name: {bytes.fromhex(x["key"]): bytes.fromhex(x["value"]) for x in entries}
                     for name, entries in e["maps"].items()})
    return Outcome(res, maps, meta=all("meta" in e for e in case["expected"]))


def tmpdir(prefix: str = "hxdp-fuzz-") -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))


def rmtree(p: Path) -> None:
    shutil.rmtree(p, ignore_errors=True)
