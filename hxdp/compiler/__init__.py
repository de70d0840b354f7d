"""The parallelizing compiler: eBPF program -> VLIW ROM (CFG, reduction, ISA extensions, scheduling, verify)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Literal

from hxdp import params
from hxdp.compiler import (
    atomics,
    boundscheck,
    constmaps,
    copyprop,
    extend,
    loadcse,
    lowering,
    masks,
    reduce,
    safety,
    taildup,
    wideloads,
    widen,
)
from hxdp.compiler.cfg import Cfg, build_cfg
from hxdp.compiler.emit import emit, exit_actions_to_lane
from hxdp.compiler.regalloc import PHYS, RegisterPressure, allocate
from hxdp.compiler.schedule import schedule
from hxdp.compiler.verify import verify_rom
from hxdp.errors import CompileError, HxdpError
from hxdp.fib import uses_fib
from hxdp.frontend.program import Program
from hxdp.isa import original as O
from hxdp.isa import table as T
from hxdp.isa.insn import Insn
from hxdp.isa.rom import Rom
from hxdp.models.maps import OUTER_KINDS, MapLayout

__all__ = ["PIPELINE", "CompileError", "CompileOptions", "CompileResult", "Pass", "compile_insns", "compile_program"]


@dataclass
class CompileOptions:
    """Every pass can be switched off for the evaluation (paper Fig. 7-9)."""

    lanes: int = params.LANES
    bounds: bool = True  # remove packet bounds checks
    zeroing: bool = True  # remove zeroing of never-written stack bytes
    alu3: bool = True  # three-operand ALU
    ld6: bool = True  # 6-byte load/store
    exit_action: bool = True  # exit with action
    tail_dup: bool = True  # copy small exit blocks and small joins into their predecessors
    hoist: bool = True  # superblock scheduling: code motion across blocks, several branches per row
    speculate: bool = True  # move side-effect-free ops above side exits
    rename: bool = True  # register renaming onto r0-r15
    rewrite_checks: bool = True  # `p + K > data_end` -> `p > data_end - K` for the checks that remain
    wide_loads: bool = True  # byte loads shifted and or-ed together -> one wider load
    atomic_rmw: bool = True  # load/add/store of one memory word -> atomic add
    copyprop: bool = True  # read the source of a register copy instead of the copy
    load_cse: bool = True  # packet loads of bytes already loaded in a register -> copies of it
    const_lookup: bool = True  # array map lookups with a compile-time key -> the value's address
    fold_branches: bool = True  # branches whose outcome is known at compile time -> jump or nothing
    entry_data: bool = True  # `x = ctx->data` before any adjust -> a copy of r2 (the packet start at entry)
    lanes_sweep: tuple[int, ...] = ()  # also report rows for these lane counts (Fig. 8)
    imem_rows: int = params.IMEM_ROWS
    target: str = "hxdp"  # "hxdp" (our core) or "hxdp-original" (the original bitstream: hxdp.isa.original)

    @property
    def original(self) -> bool:
        return self.target == O.NAME

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls) if f.type in ("bool", bool)]


@dataclass
class CompileResult:
    rom: Rom
    layout: MapLayout
    report: dict = field(default_factory=dict)


Clean = Literal["never", "always", "if_changed"]
Builder = Callable[[], Cfg]


@dataclass(frozen=True)
class Pass:
    """One row of the pipeline: `run` when every CompileOptions switch in `needs` is on, then dead code removed
    (`clean`) and the op count recorded under report["counts"][`count`]."""

    name: str
    needs: tuple[str, ...]  # CompileOptions switches that must all be on; () = always runs
    run: Callable[[Cfg, MapLayout], int]  # returns how many rewrites it made
    clean: Clean = "never"
    count: str | None = None
    original: Callable[[Cfg, MapLayout], int] | None = None  # the run for --target hxdp-original, where it differs


# the original core's three-operand set: operation -> opcode
_ORIGINAL_ALU3 = ({op: code for code, op in O.ALU3_64.items()}, {op: code for code, op in O.ALU3_32.items()})
TARGETS = ("hxdp", O.NAME)


def _on_cfg(fn: Callable[[Cfg], int]) -> Callable[[Cfg, MapLayout], int]:
    """A pass that needs only the CFG (most of them; constant lookups also read the map layout)."""
    return lambda cfg, _layout: fn(cfg)


# The order is part of the output: roms/ and the evaluation were produced with it (any change of order changes
# ROMs). Reduction comes first so every later pass sees fewer ops; the bounds-check rewrite matches `add64_3`, so
# it runs after alu3 and only with it. Lowered helpers come before everything: every pass sees their loads and stores.
PIPELINE: tuple[Pass, ...] = (
    Pass("lower_helpers", (), _on_cfg(lowering.lower_helpers)),
    Pass("widen_jmp32", (), lambda _cfg, _layout: 0, original=_on_cfg(widen.widen_jmp32)),  # ours has JMP32
    Pass("split_atomics", (), lambda _cfg, _layout: 0, original=_on_cfg(atomics.split_atomics)),  # ours has them
    Pass("remove_bounds_checks", ("bounds",), _on_cfg(reduce.remove_bounds_checks)),
    Pass("remove_zeroing", ("zeroing",), _on_cfg(reduce.remove_zeroing)),
    Pass("inline_array_lookups", ("const_lookup",), constmaps.inline_array_lookups),
    Pass("fold_branches", ("fold_branches",), _on_cfg(constmaps.fold_branches)),
    Pass("dead_code", (), _on_cfg(reduce.dead_code), count="reduced"),
    Pass("dead_stack_stores", ("const_lookup",), _on_cfg(reduce.dead_stack_stores), clean="if_changed"),
    Pass("combine_loads", ("wide_loads",), _on_cfg(wideloads.combine_loads)),
    Pass("combine_byte_loads", ("wide_loads",), _on_cfg(wideloads.combine_byte_loads), clean="always"),
    Pass("duplicate_exits", ("tail_dup",), _on_cfg(taildup.duplicate_exits)),
    Pass("duplicate_joins", ("tail_dup",), _on_cfg(taildup.duplicate_joins)),
    Pass("redundant_loads", ("load_cse",), _on_cfg(loadcse.redundant_loads)),
    Pass("exit_actions", ("exit_action",), _on_cfg(extend.exit_actions), clean="always", count="exit_action"),
    Pass("redundant_masks", ("copyprop",), _on_cfg(masks.redundant_masks)),
    Pass("copy_propagation", ("copyprop",), _on_cfg(copyprop.copy_propagation), clean="always"),
    Pass("exit_truncations", ("exit_action",), _on_cfg(extend.exit_truncations), clean="if_changed"),
    Pass("fold_offsets", ("copyprop",), _on_cfg(copyprop.fold_offsets)),
    Pass("rmw_atomic", ("atomic_rmw",), _on_cfg(atomics.rmw_atomic)),
    Pass("alu3", ("alu3",), _on_cfg(extend.alu3), count="alu3",
         original=_on_cfg(lambda cfg: extend.alu3(cfg, *_ORIGINAL_ALU3))),
    Pass("rewrite_bounds_checks", ("alu3", "rewrite_checks"), _on_cfg(boundscheck.rewrite_bounds_checks)),
    Pass("ld6", ("ld6",), _on_cfg(extend.ld6), count="ld6"),
    Pass("dead_code", (), _on_cfg(reduce.dead_code), count="extended"),
)


def _run_passes(cfg: Cfg, opts: CompileOptions, layout: MapLayout) -> dict[str, int]:
    """Run the enabled rows of PIPELINE in order; returns the op counts they record."""
    counts = {"cfg": cfg.count()}
    for p in PIPELINE:
        if not all(getattr(opts, switch) for switch in p.needs):
            continue
        changed = (p.original if opts.original and p.original is not None else p.run)(cfg, layout)
        if p.clean == "always" or (p.clean == "if_changed" and changed):
            reduce.dead_code(cfg)
        if p.count is not None:
            counts[p.count] = cfg.count()
    return counts


def _allocate(cfg: Cfg, opts: CompileOptions) -> int:
    """Register renaming; returns the webs renamed."""
    # `x = ctx->data` -> `x = r2` after the 6-byte and wide load passes (they pair accesses on one base register);
    # renaming then gives x the register r2 where nothing else needs it (copies prefer their source's register)
    entry = opts.entry_data and not cfg.raw
    if entry:
        constmaps.entry_data_loads(cfg)
    renamed = allocate(cfg, rename=opts.rename, regs=O.REGS if opts.original else PHYS)
    # renaming may have freed r2 where the program had put another value in it (clang's data_end): the loads
    # left become copies too; where x kept its own register, its first uses read r2 instead
    if entry:
        constmaps.entry_data_loads(cfg)
        if opts.copyprop:
            copyprop.copy_propagation(cfg)
        reduce.dead_code(cfg)
    return renamed


def _pipeline(cfg: Cfg, opts: CompileOptions, lanes: int, report: dict | None,
              layout: MapLayout) -> tuple[Rom, set]:
    counts = _run_passes(cfg, opts, layout)
    if opts.original:  # what the passes left must mean the same there (a raw input is not checked before)
        for op in cfg.ops():
            why = O.meaning_problem(Insn(op.opcode, op.dst, op.src, op.off, op.imm))
            if why is not None and not (op.kind == "exit_action" or op.kind == "lddw"):
                raise CompileError(f"{op.where()}: not supported on {O.NAME}: {why}")
    if lanes < 2 and any(op.kind == "lddw" for op in cfg.ops()):
        raise CompileError(f"lddw needs two adjacent lanes; {lanes} lane(s) cannot hold it")
    renamed = _allocate(cfg, opts)
    sched = schedule(cfg, lanes, superblocks=opts.hoist, speculate=opts.speculate and opts.hoist)
    rows = emit(sched.rows, sched.start, lanes)
    if opts.original:
        rows = exit_actions_to_lane(rows, O.EXIT_ACTION_LANES)
    rom = Rom(rows, lanes)
    verify_rom(rom, sched.disjoint_stores, opts.imem_rows, sched.regions)
    if opts.original:
        try:
            O.check_rom(rom, "the compiled ROM")
        except HxdpError as exc:
            raise CompileError(str(exc)) from None
    if report is not None:
        report["counts"] = counts
        report["renamed_webs"] = renamed
    return rom, sched.disjoint_stores


def _pipelines(builds: list[Builder], opts: CompileOptions, lanes: int,
               report: dict | None, layout: MapLayout) -> tuple[Rom, list[int]]:
    """Every resident program's ROM, one after the other (branch offsets are relative: no relocation); returns the
    ROM and each program's entry row. The instruction memory's row limit applies to the total."""
    rows: list = []
    entries: list[int] = []
    for build in builds:
        sub: dict | None = {} if report is not None else None
        try:
            part, _ = _pipeline(build(), opts, lanes, sub, layout)
        except RegisterPressure:
            if not opts.load_cse:
                raise
            # the copies keep loaded values live longer: where the registers cannot hold them, load again
            sub = {} if report is not None else None
            part, _ = _pipeline(build(), replace(opts, load_cse=False), lanes, sub, layout)
        entries.append(len(rows))
        rows.extend(part.rows)
        if report is not None and sub is not None:  # the op counts of every program, summed
            counts = report.setdefault("counts", {})
            for key, n in sub["counts"].items():
                counts[key] = counts.get(key, 0) + n
            report["renamed_webs"] = report.get("renamed_webs", 0) + sub["renamed_webs"]
    rom = Rom(rows, lanes)
    if len(builds) > 1 and len(rows) > opts.imem_rows:
        raise CompileError(f"the {len(builds)} resident programs take {len(rows)} rows, the instruction memory "
                           f"holds {opts.imem_rows}")
    return rom, entries


def _compile(builds: list[Builder], names: list[str], original: int, layout: MapLayout, opts: CompileOptions,
             ) -> CompileResult:
    t0 = time.perf_counter()
    report: dict = {"program": names[0], "lanes": opts.lanes, "original_insns": original}
    rom, entries = _pipelines(builds, opts, opts.lanes, report, layout)
    if len(builds) > 1:
        layout.programs = dict(zip(names, entries, strict=True))
        report["programs"] = [{"name": n, "row": row, "rows": end - row}
                              for n, row, end in zip(names, entries, [*entries[1:], len(rom.rows)], strict=True)]
    report["counts"] = {"original": original, **report["counts"]}
    report["rows"] = len(rom.rows)
    report["imem_rows"] = opts.imem_rows  # the fill: rows of the instruction memory the program may use
    report["slots"] = rom.slots()
    report["static_ipc"] = round(original / len(rom.rows), 3) if rom.rows else 0.0
    report["options"] = {n: getattr(opts, n) for n in CompileOptions.names()}
    report["maps"] = [{"name": r.name, "type": r.kind, "max_entries": r.max_entries, "tier": r.tier,
                       "offset": r.offset, "bytes": r.size} for r in layout.regions]
    report["unused_maps"] = list(layout.unused)
    report["map_bytes"] = layout.used_bytes()
    report["map_tiers"] = layout.tier_use()
    if opts.lanes_sweep:
        sweep: dict[str, int | None] = {}
        for n in opts.lanes_sweep:
            try:
                r, _ = _pipelines(builds, opts, n, None, layout) if n != opts.lanes else (rom, None)
                sweep[str(n)] = len(r.rows)
            except CompileError:
                sweep[str(n)] = None
        report["rows_by_lanes"] = sweep
    report["compile_seconds"] = round(time.perf_counter() - t0, 4)
    return CompileResult(rom, layout, report)


def compile_program(program: Program, options: CompileOptions | None = None) -> CompileResult:
    """Compile a loaded XDP program (maps resolved through its MapLayout). A CompileError names the object and
    the program (the passes speak of slots and rows only), for every command that compiles."""
    try:
        return _compile_program(program, options or CompileOptions())
    except CompileError as exc:
        where = ": ".join(x for x in (program.source, program.name) if x)
        raise CompileError(f"{where}: {exc}") from None


def _for_original(program: Program, opts: CompileOptions) -> CompileOptions:
    """The options a ROM for the original core is compiled with; CompileError at the first instruction it lacks.
    Off: atomics (it has none), constant map lookups and the entry-data rewrite (they bake our core's data
    addresses and its r2 = ctx->data into the ROM); the instruction memory is its 256 rows."""
    if opts.lanes != params.LANES:
        raise CompileError(f"not supported on {O.NAME}: {opts.lanes} lanes, the original core has {params.LANES}")
    if program.resident:
        raise CompileError(f"not supported on {O.NAME}: resident programs (tail calls), the original runs one")
    for p in (program, *program.resident):
        why = O.program_problem(p.insns)
        if why is not None:
            raise CompileError(why)
    return _original_options(opts)


def _original_options(opts: CompileOptions) -> CompileOptions:
    return replace(opts, atomic_rmw=False, const_lookup=False, entry_data=False, imem_rows=O.ROWS)


def _compile_program(program: Program, opts: CompileOptions) -> CompileResult:
    if opts.target not in TARGETS:
        raise CompileError(f"unknown target {opts.target!r} (known: {', '.join(TARGETS)})")
    if opts.original:
        opts = _for_original(program, opts)
    for i, m in enumerate(program.maps):
        if m.type not in params.MAP_TYPES:
            kind = params.LINUX_MAP_TYPES.get(m.type, "unknown")
            raise CompileError(f"map {m.name} (id {i}): map type {m.type} ({kind}) is not supported by the hardware")
    try:
        layout = MapLayout.for_program(program, fib=uses_fib(program.insns))
    except HxdpError as exc:
        raise CompileError(str(exc)) from None
    if len(layout.regions) > params.MAPS_MAX:
        raise CompileError(f"the program places {len(layout.regions)} maps, the hardware map table holds "
                           f"{params.MAPS_MAX}")

    def map_ref(src: int, idx: int, off: int) -> int:
        if not 0 <= idx < len(program.maps):
            raise CompileError(f"map reference to map index {idx}: the program has {len(program.maps)} maps")
        if src == T.PSEUDO_MAP_FD:
            return layout.handle(idx)
        try:
            return layout.value_addr(idx, off)
        except HxdpError as exc:
            raise CompileError(str(exc)) from None

    spans = {layout.handle(r.id): (r.base, r.base + r.size, r.value_size)
             for r in layout.regions}
    outer = frozenset(layout.handle(r.id) for r in layout.regions if r.kind in OUTER_KINDS)

    def builder(p: Program) -> Builder:
        _check_tail_calls(p)

        def build() -> Cfg:
            cfg = build_cfg(p.insns, map_ref, p.functions)
            cfg.value_spans = spans
            cfg.outer_handles = outer
            cfg.entry_adjusted = p is not program  # entered by a tail call: the caller may have moved the packet
            return cfg

        return build

    progs = [program, *program.resident]
    builds = []
    for p in progs:
        try:
            build = builder(p)
            # the kernel verifier's rules that hold without the kernel: no ctx stores, no read-only map writes,
            # bounded loops
            safety.check(build(), layout)
            builds.append(build)
        except CompileError as exc:
            raise CompileError(f"{p.name}: {exc}" if p is not program else str(exc)) from None
    original = sum(len(p.insns) for p in progs)
    try:
        return _compile(builds, [p.name for p in progs], original, layout, opts)
    except CompileError as exc:
        if len(progs) > 1 and "resident programs" not in str(exc):
            raise CompileError(f"{exc} (in one of the resident programs {', '.join(p.name for p in progs)})") \
                from None
        raise


def _check_tail_calls(p: Program) -> None:
    """A tail call in a bpf-to-bpf function is refused: the core inlines functions, while the kernel returns to the
    function's caller when the target program exits."""
    entry_end = min((slot for slot in p.functions if slot > 0), default=len(p.insns))
    for i in range(entry_end, len(p.insns)):
        ins = p.insns[i]
        if ins.opcode == 0x85 and ins.src == T.CALL_HELPER and ins.imm == params.HELPER_IDS["tail_call"]:
            raise CompileError(f"slot {i} (call 12): not supported: a tail call inside the bpf-to-bpf function "
                               f"{p.functions.get(max(s for s in p.functions if s <= i), '?')}, because the core "
                               "inlines functions and the kernel returns to their caller after the target program")


def compile_insns(insns: list[Insn], options: CompileOptions | None = None) -> CompileResult:
    """Compile a raw instruction list with no maps (for `hxdp exec`); r1/r2 at entry are the caller's."""
    opts = options or CompileOptions()
    if opts.original:
        opts = _original_options(opts)
    layout = MapLayout.from_maps([])

    def build() -> Cfg:
        cfg = build_cfg(insns, None, None)
        cfg.raw = True
        return cfg

    return _compile([build], ["raw"], len(insns), layout, opts)
