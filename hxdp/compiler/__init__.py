"""The parallelizing compiler: eBPF program -> VLIW ROM (CFG, reduction, ISA extensions, scheduling, verify)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields

from hxdp import params
from hxdp.compiler import constmaps, extend, reduce
from hxdp.compiler.cfg import Cfg, build_cfg
from hxdp.compiler.regalloc import allocate
from hxdp.compiler.schedule import emit, schedule
from hxdp.compiler.verify import verify_rom
from hxdp.errors import CompileError, HxdpError
from hxdp.frontend.program import Program
from hxdp.isa import table as T
from hxdp.isa.insn import Insn
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout

__all__ = ["CompileError", "CompileOptions", "CompileResult", "compile_insns", "compile_program"]


@dataclass
class CompileOptions:
    """Every pass can be switched off for the evaluation (paper Fig. 7-9)."""

    lanes: int = params.LANES
    bounds: bool = True  # remove packet bounds checks
    zeroing: bool = True  # remove zeroing of never-written stack bytes
    alu3: bool = True  # three-operand ALU
    ld6: bool = True  # 6-byte load/store
    exit_action: bool = True  # exit with action
    tail_dup: bool = True  # copy small exit blocks into their predecessors
    hoist: bool = True  # superblock scheduling: code motion across blocks, several branches per row
    speculate: bool = True  # move side-effect-free ops above side exits
    rename: bool = True  # register renaming onto r0-r15
    rewrite_checks: bool = True  # `p + K > data_end` -> `p > data_end - K` for the checks that remain
    wide_loads: bool = True  # byte loads shifted and or-ed together -> one wider load
    atomic_rmw: bool = True  # load/add/store of one memory word -> atomic add
    copyprop: bool = True  # read the source of a register copy instead of the copy
    const_lookup: bool = True  # array map lookups with a compile-time key -> the value's address
    fold_branches: bool = True  # branches whose outcome is known at compile time -> jump or nothing
    entry_data: bool = True  # `x = ctx->data` before any adjust -> a copy of r2 (the packet start at entry)
    lanes_sweep: tuple[int, ...] = ()  # also report rows for these lane counts (Fig. 8)
    imem_rows: int = params.IMEM_ROWS

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls) if f.type in ("bool", bool)]


@dataclass
class CompileResult:
    rom: Rom
    layout: MapLayout
    report: dict = field(default_factory=dict)


def _count(cfg: Cfg) -> int:
    return cfg.count()


def _pipeline(cfg: Cfg, opts: CompileOptions, lanes: int, report: dict | None,
              layout: MapLayout) -> tuple[Rom, set]:
    counts: dict[str, int] = {}
    counts["cfg"] = _count(cfg)
    if opts.bounds:
        reduce.remove_bounds_checks(cfg)
    if opts.zeroing:
        reduce.remove_zeroing(cfg)
    if opts.const_lookup:
        constmaps.inline_array_lookups(cfg, layout)
    if opts.fold_branches:
        constmaps.fold_branches(cfg)
    reduce.dead_code(cfg)
    counts["reduced"] = _count(cfg)
    if opts.wide_loads:
        extend.combine_loads(cfg)
        extend.combine_byte_loads(cfg)
        reduce.dead_code(cfg)
    if opts.tail_dup:
        extend.duplicate_exits(cfg)
    if opts.exit_action:
        extend.exit_actions(cfg)
        reduce.dead_code(cfg)
        counts["exit_action"] = _count(cfg)
    if opts.copyprop:
        extend.redundant_masks(cfg)
        extend.copy_propagation(cfg)
        reduce.dead_code(cfg)
    if opts.exit_action and extend.exit_truncations(cfg):
        reduce.dead_code(cfg)
    if opts.copyprop:
        extend.fold_offsets(cfg)
    if opts.atomic_rmw:
        extend.rmw_atomic(cfg)
    if opts.alu3:
        extend.alu3(cfg)
        counts["alu3"] = _count(cfg)
    if opts.alu3 and opts.rewrite_checks:
        extend.rewrite_bounds_checks(cfg)
    if opts.ld6:
        extend.ld6(cfg)
        counts["ld6"] = _count(cfg)
    reduce.dead_code(cfg)
    counts["extended"] = _count(cfg)
    if lanes < 2 and any(op.kind == "lddw" for op in cfg.ops()):
        raise CompileError(f"lddw needs two adjacent lanes; {lanes} lane(s) cannot hold it")
    # `x = ctx->data` -> `x = r2` after the 6-byte and wide load passes (they pair accesses on one base register);
    # renaming then gives x the register r2 where nothing else needs it (copies prefer their source's register)
    entry = opts.entry_data and not cfg.raw
    if entry:
        constmaps.entry_data_loads(cfg)
    renamed = allocate(cfg, rename=opts.rename)
    # renaming may have freed r2 where the program had put another value in it (clang's data_end): the loads
    # left become copies too; where x kept its own register, its first uses read r2 instead
    if entry:
        constmaps.entry_data_loads(cfg)
        if opts.copyprop:
            extend.copy_propagation(cfg)
        reduce.dead_code(cfg)
    sched = schedule(cfg, lanes, superblocks=opts.hoist, speculate=opts.speculate and opts.hoist)
    rows = emit(sched.rows, sched.start, lanes)
    rom = Rom(rows, lanes)
    verify_rom(rom, sched.disjoint_stores, opts.imem_rows, sched.regions)
    if report is not None:
        report["counts"] = counts
        report["renamed_webs"] = renamed
    return rom, sched.disjoint_stores


def _compile(build, original: int, layout: MapLayout, opts: CompileOptions, name: str) -> CompileResult:
    t0 = time.perf_counter()
    report: dict = {"program": name, "lanes": opts.lanes, "original_insns": original}
    rom, _ = _pipeline(build(), opts, opts.lanes, report, layout)
    report["counts"] = {"original": original, **report["counts"]}
    report["rows"] = len(rom.rows)
    report["slots"] = rom.slots()
    report["static_ipc"] = round(original / len(rom.rows), 3) if rom.rows else 0.0
    report["options"] = {n: getattr(opts, n) for n in CompileOptions.names()}
    if opts.lanes_sweep:
        sweep: dict[str, int | None] = {}
        for n in opts.lanes_sweep:
            try:
                r, _ = _pipeline(build(), opts, n, None, layout) if n != opts.lanes else (rom, None)
                sweep[str(n)] = len(r.rows)
            except CompileError:
                sweep[str(n)] = None
        report["rows_by_lanes"] = sweep
    report["compile_seconds"] = round(time.perf_counter() - t0, 4)
    return CompileResult(rom, layout, report)


# Names of the Linux map types the hardware lacks, for error messages (enum bpf_map_type).
LINUX_MAP_TYPE_NAMES = {
    3: "prog_array", 4: "perf_event_array", 7: "stack_trace", 8: "cgroup_array", 10: "lru_percpu_hash",
    12: "array_of_maps", 13: "hash_of_maps", 15: "sockmap", 16: "cpumap", 17: "xskmap", 18: "sockhash",
    20: "reuseport_sockarray", 22: "queue", 23: "stack", 24: "sk_storage", 26: "struct_ops", 27: "ringbuf",
    28: "inode_storage", 29: "task_storage", 30: "bloom_filter", 31: "user_ringbuf", 32: "cgrp_storage",
}


def compile_program(program: Program, options: CompileOptions | None = None) -> CompileResult:
    """Compile a loaded XDP program (maps resolved through its MapLayout)."""
    opts = options or CompileOptions()
    # Tail calls come first: their prog_array map would otherwise be reported as a mere unsupported map type.
    for i, ins in enumerate(program.insns):
        if ins.opcode == 0x85 and ins.src == T.CALL_HELPER and ins.imm == 12:
            raise CompileError(f"slot {i} (call 12): tail calls (bpf_tail_call) are not supported")
    for i, m in enumerate(program.maps):
        if m.type not in params.MAP_TYPES:
            kind = LINUX_MAP_TYPE_NAMES.get(m.type, "unknown")
            raise CompileError(f"map {m.name} (id {i}): map type {m.type} ({kind}) is not supported by the hardware")
    try:
        layout = MapLayout.from_maps(program.maps)
    except HxdpError as exc:
        raise CompileError(str(exc)) from None

    def map_ref(src: int, idx: int, off: int) -> int:
        if not 0 <= idx < len(program.maps):
            raise CompileError(f"map reference to map index {idx}: the program has {len(program.maps)} maps")
        if src == T.PSEUDO_MAP_FD:
            return layout.handle(idx)
        try:
            return layout.value_addr(idx, off)
        except HxdpError as exc:
            raise CompileError(str(exc)) from None

    spans = {layout.handle(r.id): (params.MAP_BASE + r.offset, params.MAP_BASE + r.offset + r.size, r.value_size)
             for r in layout.regions}

    def build() -> Cfg:
        cfg = build_cfg(program.insns, map_ref, program.functions)
        cfg.value_spans = spans
        return cfg

    return _compile(build, len(program.insns), layout, opts, program.name)


def compile_insns(insns: list[Insn], options: CompileOptions | None = None) -> CompileResult:
    """Compile a raw instruction list with no maps (for `hxdp exec`); r1/r2 at entry are the caller's."""
    opts = options or CompileOptions()
    layout = MapLayout.from_maps([])

    def build() -> Cfg:
        cfg = build_cfg(insns, None, None)
        cfg.raw = True
        return cfg

    return _compile(build, len(insns), layout, opts, "raw")
