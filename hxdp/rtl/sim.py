"""Build the Verilator model of Sephirot once (cached by a hash of its sources) and run packets through it."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hxdp import params
from hxdp.atomic_write import install_file
from hxdp.errors import HxdpError
from hxdp.events import Event
from hxdp.isa.rom import Rom
from hxdp.models.multicore import UNSHARED_KINDS
from hxdp.paths import SEPHIROT
from hxdp.result import RunResult
from hxdp.rtl import manifest

RTL_DIR = SEPHIROT / "rtl"
HARNESS_DIR = SEPHIROT / "harness"
LINT_FILE = SEPHIROT / "lint.vlt"
MANIFEST_TARGET = "sim"  # the packet-stream model's target in sephirot/sephirot.core
TOP = manifest.toplevel(MANIFEST_TARGET)
BINARY = "sephirot_sim"
LINE_BYTES = 16
# Verilator's generated Makefile compiles the model with its own OPT_FAST (-Os), placed after -CFLAGS: set it. With
# clang++ at -O3 the model simulates about 30% more cycles per second than with g++ at -Os (0.82 -> 1.06 M on the
# experiment's busy loop); clang is installed for the BPF programs anyway, g++ is the fallback.
CLANG = shutil.which("clang++") is not None
MAKE_FLAGS = ["-MAKEFLAGS", ("CXX=clang++ LINK=clang++ " if CLANG else "") + "OPT_FAST=-O3 OPT_GLOBAL=-O2"]
# Profile-guided optimisation of the Sephirot model (clang's instrumentation, llvm-profdata): trained on these
# bundled programs' ROMs and traffic, the build simulates about 30% more cycles per second again, on other
# programs too (the busy loop: 1.04 -> 1.35 M). A build that cannot be trained is an ordinary one (build.txt says
# why); the profile changes how fast the model runs, never what it computes.
PGO_PROGRAMS = ("simple_firewall", "xdp_router_ipv4", "l4_load_balancer", "xdp_tx_iptunnel")
PGO_PACKETS = 2000
# The model reads the block-RAM banks of the map memory and the packet buffer combinationally (SEPH_COMB_READS,
# sephirot_bram.vh): the words the falling-edge registers that yosys synthesises would load, at about 12% more
# simulated cycles per second.
# build(structural=True) leaves the define out (tests/test_rtl_structural.py).
COMB_READS = "-DSEPH_COMB_READS"
BUILD_FLAGS = ["--cc", "--exe", "--build", "-O3", "--x-assign", "fast", "--x-initial", "fast", "-j", "2", "--trace",
               "-Wno-fatal", "--top-module", TOP, COMB_READS, *MAKE_FLAGS]
STRUCTURAL_FLAGS = [f for f in BUILD_FLAGS if f != COMB_READS]
# The test build: the execution contract's row rules as assertions (sephirot_contract.v); a ROM breaking one stops
# the simulation with the rule's message (tests/test_rtl_contract.py). An ordinary build: it only checks.
ASSERT_FLAGS = [*BUILD_FLAGS, "--assert", "-DSEPH_ASSERT"]
CFLAGS = "-O2 -std=c++17"


class RtlError(HxdpError):
    """The RTL model cannot be built or did not run to completion."""


def cache_root() -> Path:
    base = os.environ.get("HXDP_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "hxdp")
    return Path(base) / "verilator"


def verilog_files() -> list[Path]:
    """The modules under sephirot_top, from the manifest (the board files have their own build)."""
    return manifest.files(MANIFEST_TARGET, "verilogSource")


def harness_files() -> list[Path]:
    return manifest.files(MANIFEST_TARGET, "cppSource")


def sources() -> list[Path]:
    """What the model's cache key covers: the target's files in the manifest, and every RTL file besides
    (Verilator also finds a module left out of the manifest on its include path, so a file outside the key could
    leave a stale model in the cache)."""
    listed = manifest.sources(MANIFEST_TARGET)
    return listed + [f for f in sorted(RTL_DIR.glob("*.v")) + sorted(RTL_DIR.glob("*.vh")) if f not in listed]


def verilator_version() -> str:
    exe = shutil.which("verilator")
    if exe is None:
        return ""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


def available() -> tuple[bool, str]:
    """Whether Verilator is installed (the RTL tests skip with this reason otherwise)."""
    if not verilator_version():
        return False, "verilator is not installed (apt-get install verilator)"
    return True, ""


def pgo_available() -> bool:
    """Whether model builds are profile-guided (clang++ and llvm-profdata, and HXDP_NO_PGO unset)."""
    return CLANG and shutil.which("llvm-profdata") is not None and not os.environ.get("HXDP_NO_PGO")


def hash_sources(files: list[Path], flags: list[str], cflags: str) -> str:
    """Cache key of a Verilator build: the tool's version, the flags and every source file's name and bytes."""
    h = hashlib.sha256()
    h.update(verilator_version().encode())
    h.update(" ".join(flags + [cflags]).encode())
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def source_hash() -> str:
    return hash_sources(sources(), BUILD_FLAGS + (["pgo"] if pgo_available() else []), CFLAGS)


def _verilate(obj: Path, inputs: list[Path], flags: list[str], cflags: str, binary: str, top: str,
              error: type[HxdpError], verbose: bool, ldflags: str = "") -> Path:
    cmd = ["verilator", *flags, f"-I{RTL_DIR}", str(LINT_FILE), *map(str, inputs)]
    cmd += ["-CFLAGS", cflags, *(["-LDFLAGS", ldflags] if ldflags else []), "--Mdir", str(obj), "-o", binary]
    proc = subprocess.run(cmd, capture_output=not verbose, text=True)
    if proc.returncode != 0 or not (obj / binary).exists():
        tail = (proc.stderr or "")[-2000:] if not verbose else ""
        raise error(f"verilator build of {top} failed (exit {proc.returncode}): {tail}")
    return obj / binary


def _profile(out_dir: Path, inputs: list[Path], flags: list[str], cflags: str, binary: str, top: str,
             error: type[HxdpError], verbose: bool, train: Callable[[Path, dict[str, str]], None]) -> Path:
    """An instrumented build run by `train`: the merged profile for the optimised build."""
    gen = out_dir / "pgo-gen"
    shutil.rmtree(gen, ignore_errors=True)
    try:
        exe = _verilate(gen, inputs, flags, cflags + " -fprofile-instr-generate", binary, top, error, verbose,
                        ldflags="-fprofile-instr-generate")
        env = dict(os.environ, LLVM_PROFILE_FILE=str(gen / "run-%p.profraw"))
        train(exe, env)
        raws = sorted(gen.glob("run-*.profraw"))
        if not raws:
            raise error("the training runs wrote no profile")
        prof = out_dir / "model.profdata"
        proc = subprocess.run(["llvm-profdata", "merge", "-o", str(prof), *map(str, raws)], capture_output=True,
                              text=True)
        if proc.returncode != 0:
            raise error(f"llvm-profdata merge failed: {proc.stderr.strip()[-300:]}")
        return prof
    finally:
        shutil.rmtree(gen, ignore_errors=True)


@contextlib.contextmanager
def _status(text: str) -> Iterator[None]:
    """A spinner with `text` on stderr while a long build runs (nothing when stderr is not a terminal)."""
    if not sys.stderr.isatty():
        print(f"hxdp: {text}", file=sys.stderr)
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(text):
        yield


def verilator_build(out_dir: Path, inputs: list[Path], flags: list[str], cflags: str, binary: str, top: str,
                    error: type[HxdpError], verbose: bool = False,
                    train: Callable[[Path, dict[str, str]], None] | None = None) -> Path:
    """Build `binary` into out_dir once: concurrent callers (pytest-xdist workers) wait on a lock for the first.
    With `train` (run as train(instrumented binary, environment)), the build is profile-guided when it can be."""
    exe = out_dir / binary
    if exe.exists():
        return exe
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / ".lock", "w") as lock, _status(f"building {binary} from {top} with Verilator (first use "
                                                      f"of these sources; 1-3 minutes on 2 cores)"):
        fcntl.flock(lock, fcntl.LOCK_EX)
        if exe.exists():
            return exe
        note = "ordinary build"
        if train is not None:
            try:
                prof = _profile(out_dir, inputs, flags, cflags, binary, top, error, verbose, train)
                cflags += f" -fprofile-instr-use={prof} -Wno-profile-instr-out-of-date -Wno-profile-instr-unprofiled"
                note = "profile-guided build (clang -fprofile-instr-use), trained on " + ", ".join(PGO_PROGRAMS)
            except (HxdpError, OSError, subprocess.SubprocessError) as exc:
                note = f"ordinary build: profile-guided optimisation skipped ({exc})"
        obj = out_dir / "obj"
        built = _verilate(obj, inputs, flags, cflags, binary, top, error, verbose)
        (out_dir / "build.txt").write_text(note + "\n")
        shutil.copy2(built, exe.with_suffix(".tmp"))
        os.replace(exe.with_suffix(".tmp"), exe)
        shutil.rmtree(obj, ignore_errors=True)
    return exe


def _train_model(exe: Path, env: dict[str, str]) -> None:
    """The profile workload: the bundled programs' ROMs (roms/) on their traffic, from their initial maps."""
    from hxdp.models.maps import MapLayout, MapState
    from hxdp.suite import ROMS_DIR, programs
    from hxdp.traffic.pcap import read_pcap

    suite = {p.name: p for p in programs()}
    for name in PGO_PROGRAMS:
        prog = suite.get(name)
        if prog is None:
            raise RtlError(f"training program {name} is not in xdp_progs/")
        layout = MapLayout.load(ROMS_DIR / f"{name}.maps.json")
        state = MapState(layout)
        state.apply_config(prog.map_config())
        frames = read_pcap(prog.traffic)
        sim = RtlSim(Rom.load(ROMS_DIR / f"{name}.rom"), layout=layout, state=state, exe=exe, env=env)
        sim.run_packets([frames[i % len(frames)] for i in range(PGO_PACKETS)])


_BUILT: dict[str, Path] = {}


def cores_flags(cores: int) -> tuple[list[str], str]:
    """The Verilator flags and C++ flags of a model with `cores` Sephirot cores (sephirot_top's CORES, the harness's
    SEPH_CORES); none for one core, so that its build is the one of before."""
    if not 1 <= cores <= params.CORES_MAX:
        raise RtlError(f"--cores {cores}: the RTL has 1 to {params.CORES_MAX} cores (params.CORES_MAX)")
    if cores == 1:
        return [], ""
    return [f"-GCORES={cores}"], f" -DSEPH_CORES={cores}"


def build(verbose: bool = False, structural: bool = False, assertions: bool = False, cores: int = 1) -> Path:
    """The simulator binary for the current sources, built on first use (about a minute on 2 cores). structural:
    the RTL exactly as yosys synthesises it (block-RAM reads at the falling edge; an ordinary build, slower);
    assertions: the test build checking the execution contract's row rules (an ordinary build); cores: the number
    of Sephirot cores (a model of several is an ordinary build: the profile is trained on one core)."""
    key = f"{cache_root()}:{structural}:{assertions}:{cores}"
    if key in _BUILT and _BUILT[key].exists():
        return _BUILT[key]
    exe = _build(verbose, structural, assertions, cores)
    _BUILT[key] = exe
    return exe


def _build(verbose: bool, structural: bool, assertions: bool = False, cores: int = 1) -> Path:
    ok, why = available()
    if not ok:
        raise RtlError(why)
    gflags, cdefs = cores_flags(cores)
    if cores > 1:
        # the drop tap: the bytes of the frames dropped without output, for the results (sephirot_pktbuf)
        flags = [*(STRUCTURAL_FLAGS if structural else ASSERT_FLAGS if assertions else BUILD_FLAGS), *gflags,
                 "-DSEPH_DROP_TAP"]
        cdefs += " -DSEPH_DROP_TAP"
        return verilator_build(cache_root() / f"cores{cores}-{hash_sources(sources(), flags, CFLAGS + cdefs)}",
                               verilog_files() + harness_files(), flags, CFLAGS + cdefs, BINARY, TOP, RtlError,
                               verbose)
    for wanted, name, flags in ((structural, "structural", STRUCTURAL_FLAGS), (assertions, "assert", ASSERT_FLAGS)):
        if wanted:
            return verilator_build(cache_root() / f"{name}-{hash_sources(sources(), flags, CFLAGS)}",
                                   verilog_files() + harness_files(), flags, CFLAGS, BINARY, TOP, RtlError, verbose)
    return verilator_build(cache_root() / source_hash(), verilog_files() + harness_files(), BUILD_FLAGS, CFLAGS,
                           BINARY, TOP, RtlError, verbose, train=_train_model if pgo_available() else None)


@dataclass
class PacketStamps:
    """Cycle stamps of one packet in the back-to-back run (first frame in, row 0, last core cycle, last out; with
    several cores a dropped frame's departure, which takes no output cycle)."""

    in_cycle: int
    start: int
    end: int
    out: int
    core: int = 0  # the core that ran it


def map_config_lines(layout: object, off_chip: bool = False) -> list[str]:
    """The hardware map table (sephirot_mapcfg.v) for a MapLayout: one `<id> <256-bit hex>` line per map, its tier in
    bits 210:209 (params.TIERS order). `off_chip`: the caller has the off-chip tiers (the RTL model); otherwise (the
    board, which has no off-chip memory controller yet) a map placed off chip is refused (docs/maps.md "Memory
    tiers")."""
    from hxdp.models.maplayout import MapError

    lines = []
    for r in layout.regions:
        if r.tier != "bram" and not off_chip:
            raise MapError(f"map {r.name} is placed in {r.tier}: not supported by the board yet "
                           "(hxdp.rtl.sim.map_config_lines), because its design has no off-chip memory controller "
                           f"(issue 25 part 2, docs/maps.md \"Memory tiers\"); place it on chip (--map "
                           f"{r.name}.tier=bram)")
        value = {"rdonly": int(r.prog_rdonly), "tier": params.TIERS.index(r.tier)}
        entry = 1 << 8 | sum((value[name] if name in value else getattr(r, name)) << lo
                             for name, lo, _bits in params.MCFG_FIELDS)
        lines.append(f"{r.id} {entry:064x}\n")
    return lines




def cores_refusal(layout: object, cores: int) -> str | None:
    """Why the RTL cannot run `layout` on `cores` cores: a map kind the models do not share either (their
    UNSHARED_KINDS), per-CPU arrays or rings the per-core copies of sephirot_percpu.v cannot hold, or None."""
    if cores == 1:
        return None
    where = f"not supported by the RTL with --cores {cores} (hxdp.rtl.sim), because"
    r = next((r for r in layout.regions if r.kind in UNSHARED_KINDS), None)
    if r is not None:
        return f"map {r.name} ({r.kind}): {where} {UNSHARED_KINDS[r.kind]}; run it on one core"
    percpu = copied_regions(layout)
    if len(percpu) > params.PERCPU_RANGES:
        return (f"{len(percpu)} per-CPU arrays and ring buffers: {where} the per-core copies serve "
                f"{params.PERCPU_RANGES} (params.PERCPU_RANGES)")
    for r in percpu:
        if r.tier != "bram":
            return f"map {r.name} ({r.kind}) in {r.tier}: {where} per-core copies are kept on chip only"
        if r.size != (r.max_entries if r.kind == "ringbuf" else r.data_offset + r.slots * r.slot_size):
            return f"map {r.name} ({r.kind}): {where} its region is not its slots (sephirot_percpu.v)"
    if percpu and layout.tier_end("bram") > params.PERCPU_STRIDE:
        return (f"the on-chip maps take {layout.tier_end('bram')} bytes: {where} core k's per-CPU copies are "
                f"k * {params.PERCPU_STRIDE} bytes above them (params.PERCPU_STRIDE)")
    if percpu and layout.fib:
        top = max(r.offset + r.size for r in percpu) + (cores - 1) * params.PERCPU_STRIDE
        if top > params.FIB_OFFSET:
            return f"{where} core {cores - 1}'s per-CPU copies would reach the FIB (params.FIB_OFFSET)"
    return None


def percpu_regions(layout: object) -> list:
    """The per-CPU arrays of `layout`: one copy per core on several cores (sephirot_percpu.v)."""
    return [r for r in layout.regions if r.kind == "percpu_array"]


def copied_regions(layout: object) -> list:
    """The regions of `layout` with one copy per core on several cores (sephirot_percpu.v): per-CPU arrays and ring
    buffers (params.PERCPU_COPY_KINDS)."""
    return [r for r in layout.regions if r.kind in params.PERCPU_COPY_KINDS]


def parse_redirect(text: str, ingress_ifindex: int) -> tuple[int | None, tuple[str, int] | None,
                                                              tuple[int, ...] | None]:
    """The harness's `redirect` field as (redirect, host, broadcast) of RunResult: `-`, `port:N` (an ifindex),
    `cpu:N` / `xsk:N` (a host queue) or `bcast:MASK` (the ports of a broadcast, params.BCAST_PORTS)."""
    if text == "-":
        return None, None, None
    kind, _, num = text.partition(":")
    if kind == "port":
        return int(num), None, None
    if kind == "bcast":
        return None, None, RunResult.broadcast_ports(int(num), ingress_ifindex)
    return None, (kind, int(num)), None


def parse_trace_line(line: str) -> tuple[int, object]:
    """One harness trace line -> (packet index, vliwmodel.TraceRecord). A model of several cores ends the head
    with the core's number."""
    from hxdp.models.vliw import TraceRecord

    head, regs_txt, mem_txt = line.rstrip("\n").split("|")
    _t, pkt, _cycle, row, nxt, cost = head.split()[:6]
    regs: list[tuple[int, int, int]] = []
    f = regs_txt.split()
    for i in range(0, len(f), 4):
        regs.append((int(f[i + 1]), int(f[i + 2]), int(f[i + 3], 16)))
    mem: list[tuple[int, int, bytes]] = []
    f = mem_txt.split()
    for i in range(0, len(f), 4):
        mem.append((int(f[i + 1]), int(f[i + 2], 16), bytes.fromhex(f[i + 3])))
    return int(pkt), TraceRecord(int(row), regs, mem, None if nxt == "-" else int(nxt), int(cost))


Packet = bytes | tuple[bytes, int, int]


class RtlSim:
    """The Sephirot RTL under Verilator: `run_packets` streams packets back to back through one process."""

    def __init__(self, rom: Rom, layout: object | None = None, state: object | None = None,
                 trace: bool = False, vcd: str | os.PathLike[str] | None = None,
                 trace_file: str | os.PathLike[str] | None = None, exe: Path | None = None,
                 env: dict[str, str] | None = None, cores: int = 1) -> None:
        if rom.lanes != params.LANES:
            raise RtlError(f"the ROM has {rom.lanes} lanes a row; the Sephirot RTL is built with {params.LANES} "
                           f"(params.LANES); the VLIW model (hxdp.models.vliw) runs any lane count")
        self.rom = rom
        self.state = state
        self.layout = layout if layout is not None else getattr(state, "layout", None)
        self.trace_enabled = trace or trace_file is not None
        self.vcd = vcd
        self.trace_file = trace_file
        if self.layout is not None:
            refusal = self.layout.off_chip_refusal("the RTL") or cores_refusal(self.layout, cores)
            if refusal is not None:
                raise RtlError(refusal)
        self.cores = cores
        several = cores > 1 and self.layout is not None
        self.percpu = percpu_regions(self.layout) if several else []
        self.copied = copied_regions(self.layout) if several else []  # per-CPU arrays and rings
        self.per_cpu: dict[str, list[bytes]] = {}
        # (exe: a given binary, for the profile training runs)
        self.exe = exe if exe is not None else build(cores=cores)
        self.env = env
        self.stamps: list[PacketStamps] = []
        self.total_cycles = 0
        self.r0: list[int] = []
        self.log = ""

    def _image(self, nlines: int) -> bytearray:
        """The map memory the run starts from: the state's lines, and on several cores every core's copy of each
        per-CPU array and ring (core k's at + k * PERCPU_STRIDE, sephirot_percpu.v), set alike as the kernel's
        update sets every CPU's slot."""
        if not nlines:
            return bytearray()
        image = bytearray(self.state.mem[: nlines * LINE_BYTES]).ljust(nlines * LINE_BYTES, b"\0")
        for r in self.copied:
            for k in range(1, self.cores):
                dst = r.offset + k * params.PERCPU_STRIDE
                end = -(-(dst + r.size) // LINE_BYTES) * LINE_BYTES
                image.extend(bytes(max(0, end - len(image))))
                image[dst : dst + r.size] = self.state.mem[r.offset : r.offset + r.size]
        return image

    def _take_copies(self, image: bytearray) -> None:
        """Each core's copy of each per-CPU array after a run (core 0's is the map's own place)."""
        self.per_cpu = {r.name: [bytes(image[r.offset + k * params.PERCPU_STRIDE :
                                             r.offset + k * params.PERCPU_STRIDE + r.size])
                                 for k in range(self.cores)] for r in self.percpu}

    def dump_per_cpu(self) -> dict:
        """Every map's contents after the last run, a per-CPU array's values as a list with one value per core
        (bpftool's `value (CPU k)` lines; as hxdp.models.multicore)."""
        from hxdp.models.maps import MapState

        out = dict(self.state.dump())
        for r in self.percpu:
            copies = []
            for data in self.per_cpu[r.name]:
                view = MapState(self.layout)
                view.mem[:] = self.state.mem
                view.mem[r.offset : r.offset + r.size] = data
                copies.append(view.dump()[r.name])
            out[r.name] = {key: [c[key] for c in copies] for key in copies[0]}
        return out

    def _map_lines(self) -> int:
        if self.state is None:
            return 0
        used = self.layout.used_bytes() if self.layout is not None else len(self.state.mem)
        return (used + LINE_BYTES - 1) // LINE_BYTES

    def _run(self, packets: list[Packet], raw: bool) -> list[RunResult]:
        with tempfile.TemporaryDirectory(prefix="hxdp-rtl-") as tmp:
            t = Path(tmp)
            (t / "rom.txt").write_text(self.rom.to_text())
            lines = []
            for p in packets:
                data, ifindex, rxq = (p, 1, 0) if isinstance(p, (bytes, bytearray)) else p
                lines.append(f"{ifindex} {rxq} {bytes(data).hex() or '-'}\n")
            (t / "packets.txt").write_text("".join(lines))
            args = [str(self.exe), f"+rom={t / 'rom.txt'}", f"+packets={t / 'packets.txt'}", f"+out={t / 'out.txt'}"]
            nlines = self._map_lines()
            image = self._image(nlines)
            if nlines:
                img = []
                for i in range(len(image) // LINE_BYTES):
                    chunk = bytes(image[i * LINE_BYTES : (i + 1) * LINE_BYTES])
                    if any(chunk):
                        img.append(f"{i:x} {chunk.hex()}\n")
                (t / "maps.txt").write_text("".join(img))
                args += [f"+maps={t / 'maps.txt'}", f"+mapdump={t / 'dump.txt'}",
                         f"+mapdump_lines={len(image) // LINE_BYTES}"]
            if self.layout is not None and self.layout.regions:
                if len(self.layout.regions) > params.MAPS_MAX:
                    raise RtlError(f"{len(self.layout.regions)} maps: the hardware map table holds {params.MAPS_MAX}")
                (t / "mapcfg.txt").write_text("".join(map_config_lines(self.layout, off_chip=True)))
                args.append(f"+mapcfg={t / 'mapcfg.txt'}")
            tiers = getattr(self.state, "tiers", {})
            if tiers:  # the off-chip tiers' pages in use, and back after the run (sephirot_sim.cpp OffChipMemory)
                (t / "xmem.txt").write_text("".join(f"{name} {n:x} {bytes(page).hex()}\n"
                                                    for name, mem in tiers.items() for n, page in mem.pages.items()))
                args += [f"+xmem={t / 'xmem.txt'}", f"+xmemdump={t / 'xdump.txt'}"]
            if raw:
                args.append("+raw")
            trace_path = t / "trace.txt"  # written here, then put in place whole: a concurrent run never
            if self.trace_enabled:  # reads or leaves a half-written trace or waveform (D25)
                args.append(f"+trace={trace_path}")
            if self.vcd:
                args.append(f"+vcd={t / 'wave.vcd'}")
            limit = (params.CYCLE_LIMIT + 10_000) * max(1, len(packets)) + 100_000
            args.append(f"+max_cycles={limit}")
            proc = subprocess.run(args, capture_output=True, text=True, env=self.env)
            self.log = proc.stderr
            if proc.returncode != 0:
                # (Verilator prints a failed assertion's $error on stdout)
                said = (proc.stdout.strip() + "\n" + proc.stderr.strip()).strip()
                raise RtlError(f"sephirot simulation failed (exit {proc.returncode}): {said[-500:]}")
            results, self.stamps, self.r0 = [], [], []
            for line in (t / "out.txt").read_text().splitlines():
                f = line.split()
                if f[0] == "total_cycles":
                    self.total_cycles = int(f[1])
                    continue
                if f[0] == "printk":  # printk PKT fmt HEX|- args R3 R4 R5 (follows its packet's line)
                    fmt = b"" if f[3] == "-" else bytes.fromhex(f[3])
                    results[int(f[1])].printk.append((fmt, tuple(int(x, 16) for x in f[5:8])))
                    continue
                if f[0] == "event":  # event PKT kind K map M cpu C ctxlen L cycle T data HEX|-
                    results[int(f[1])].events.append(self._event(f))
                    continue
                kv = dict(zip(f[0::2], f[1::2], strict=True))
                action = int(kv["action"])
                fault = int(kv["fault"])
                pkt = packets[len(results)]
                ingress = 1 if isinstance(pkt, (bytes, bytearray)) else pkt[1]
                redirect, host, bcast = parse_redirect(kv["redirect"], ingress)
                data = b"" if kv["data"] == "-" else bytes.fromhex(kv["data"])
                meta = b"" if kv["meta"] == "-" else bytes.fromhex(kv["meta"])
                results.append(RunResult(
                    action=action, packet=data,
                    redirect=redirect if action == params.XDP_REDIRECT else None,
                    host=host if action == params.XDP_REDIRECT else None,
                    broadcast=bcast if action == params.XDP_REDIRECT else None,
                    fault=params.FAULT_NAMES.get(fault, f"fault {fault}") if fault else None,
                    cycles=int(kv["cycles"]), meta=meta,
                ))
                self.r0.append(int(kv["r0"], 16))
                core = -1 if kv.get("core", "-") == "-" else int(kv["core"])
                self.stamps.append(PacketStamps(int(kv["in"]), int(kv["start"]), int(kv["end"]), int(kv["out"]),
                                                core))
            if self.trace_enabled and trace_path.exists():
                for line in trace_path.read_text().splitlines():
                    pkt, rec = parse_trace_line(line)
                    results[pkt].trace.append(rec)
                if self.trace_file:
                    install_file(trace_path, self.trace_file)
            if self.vcd and (t / "wave.vcd").exists():
                install_file(t / "wave.vcd", self.vcd)
            if nlines and (t / "dump.txt").exists():
                image = bytearray(len(image))
                for line in (t / "dump.txt").read_text().splitlines():
                    idx, hexdata = line.split()
                    off = int(idx, 16) * LINE_BYTES
                    image[off : off + LINE_BYTES] = bytes.fromhex(hexdata)[: max(0, len(image) - off)]
                mem = self.state.mem
                n = min(len(mem), nlines * LINE_BYTES)
                mem[:n] = image[:n]
                self._take_copies(image)
            if tiers and (t / "xdump.txt").exists():
                for mem in tiers.values():
                    mem.pages.clear()
                for line in (t / "xdump.txt").read_text().splitlines():
                    name, n, hexdata = line.split()
                    tiers[name].pages[int(n, 16)] = bytearray.fromhex(hexdata)
        return results

    def _event(self, f: list[str]) -> Event:
        kv = dict(zip(f[2::2], f[3::2], strict=True))
        map_id = int(kv["map"])
        regions = self.layout.regions if self.layout is not None else []
        name = regions[map_id].name if map_id < len(regions) else f"map#{map_id}"
        data = b"" if kv["data"] == "-" else bytes.fromhex(kv["data"])
        return Event(("perf", "ringbuf")[int(kv["kind"])], name, int(kv["cpu"]), data, int(kv["ctxlen"]),
                     cycle=int(kv["cycle"]))

    def run_packets(self, packets: list[Packet]) -> list[RunResult]:
        """Packets (bytes, or (bytes, ingress_ifindex, rx_queue_index)) back to back; one RunResult each."""
        return self._run(packets, raw=False)

    def run(self, packet: bytes, ingress_ifindex: int = 1, rx_queue_index: int = 0) -> RunResult:
        return self._run([(packet, ingress_ifindex, rx_queue_index)], raw=False)[0]

    def run_raw(self, mem: bytes) -> int:
        """ISA tests: r1 = pointer to `mem` (packet region), r2 = len(mem); returns r0 (u64)."""
        res = self._run([bytes(mem)], raw=True)[0]
        self.last_result = res
        self.last_cycles = res.cycles
        self.raw_out = res.packet
        if res.fault:
            raise HxdpError(f"raw program faulted: {res.fault}")
        return self.r0[0]
