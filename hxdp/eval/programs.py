"""The programs under measurement: the bundled suite, generated programs, and the compiler that builds them."""

from __future__ import annotations

import importlib
import inspect
import platform
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import fields, is_dataclass, replace
from typing import Any

from hxdp import params
from hxdp.eval.harness import Context, ExperimentError, NotAvailable
from hxdp.paths import ROOT

# The compiler and the programs are imported lazily: a missing piece makes its points 'n/a', not the run fail.

MAP_ACCESS = tuple(f"map_access_k{k}" for k in (1, 2, 4, 8, 16))
CSUM_DIFF = tuple(f"csum_diff_x{n}" for n in (1, 10, 20, 40))
QUICK_PROGRAMS = ("xdp_drop", "xdp_tx", "xdp1")
OPTIMISATIONS = ("bounds", "zeroing", "ldst6", "alu3", "exit_action")
# fig9: passes switched on one group at a time, at 4 lanes
FIG9_STEPS = (
    ("parallel", "instruction parallelization", {o: False for o in (*OPTIMISATIONS, "code_motion")}),
    ("reduce", "bounds checks + zeroing", {o: False for o in ("ldst6", "alu3", "exit_action", "code_motion")}),
    ("extend", "ISA extensions", {"code_motion": False}),
    ("all", "code motion", {}),
)


def compile_switches(variant: str) -> tuple[int, dict[str, bool]]:
    """Lanes and pass switches of a compile variant: 'all', 'none', 'only-OPT', 'lanesN' or a fig9 step."""
    if variant == "none":
        return params.LANES, {o: False for o in OPTIMISATIONS}
    if variant.startswith("only-"):
        return params.LANES, {o: o == variant[5:] for o in OPTIMISATIONS}
    if variant.startswith("lanes"):
        return int(variant[5:]), {}
    if variant == "all":
        return params.LANES, {}
    step = {s[0]: s[2] for s in FIG9_STEPS}.get(variant)
    if step is None:
        raise ExperimentError(f"unknown compile variant {variant}")
    return params.LANES, dict(step)


def _suite() -> dict[str, Any]:
    from hxdp.suite import programs

    return {p.name: p for p in programs()}


def suite_has(name: str) -> bool:
    return name in _suite()


def suite_names(ctx: Context, only: Iterable[str] | None = None) -> list[str]:
    names = list(_suite())
    if only is not None:
        want = list(only)
        names = [n for n in want if n in names]
    if ctx.quick:
        names = [n for n in names if n in QUICK_PROGRAMS] or names[:3]
    return names


def suite_program(name: str) -> Any:
    prog = _suite().get(name)
    if prog is None:
        raise NotAvailable(f"{name} is not in xdp_progs/")
    if not prog.obj.exists():
        raise NotAvailable(f"{prog.obj.relative_to(ROOT)} is not built (make -C xdp_progs)")
    return prog


def load(ctx: Context, name: str) -> Any:
    key = ("program", name)
    if key not in ctx.cache:
        ctx.cache[key] = suite_program(name).load()
    return ctx.cache[key]


def _compiler() -> Any:
    try:
        return importlib.import_module("hxdp.compiler")
    except ImportError as exc:
        raise NotAvailable(f"compiler not importable ({exc})") from None


def compile_fn() -> Callable[..., Any]:
    fn = getattr(_compiler(), "compile_program", None)
    if fn is None:
        raise NotAvailable("hxdp.compiler has no compile_program")
    return fn


# Our switch name -> names the compiler's options may use for it (a boolean that is True when the pass runs).
OPTION_ALIASES: dict[str, tuple[str, ...]] = {
    "bounds": ("bounds", "bounds_checks", "remove_bounds_checks", "remove_bounds", "reduce_bounds"),
    "zeroing": ("zeroing", "remove_zeroing", "zero_init", "reduce_zeroing"),
    "ldst6": ("ldst6", "six_byte", "ld6", "mem6", "load_store6", "ldst48"),
    "alu3": ("alu3", "three_operand", "three_op", "alu3op"),
    "exit_action": ("exit_action", "exit_with_action", "exit_imm", "early_exit"),
    "code_motion": ("code_motion", "motion", "hoist", "code_movement"),
}


def _options_class() -> Any:
    mod = _compiler()
    for name in ("CompileOptions", "Options"):
        cls = getattr(mod, name, None)
        if cls is not None:
            return cls
    raise NotAvailable("hxdp.compiler has no CompileOptions/Options class")


def compiler_options(lanes: int = params.LANES, extra: dict[str, Any] | None = None, **switches: bool) -> Any:
    """Build the compiler's options: lanes, and passes switched off by our names (see OPTION_ALIASES)."""
    cls = _options_class()
    names = {f.name for f in fields(cls)} if is_dataclass(cls) else set(inspect.signature(cls).parameters)
    kw: dict[str, Any] = {k: v for k, v in (extra or {}).items() if k in names}
    if "lanes" in names:
        kw["lanes"] = lanes
    elif lanes != params.LANES:
        raise NotAvailable("compiler options have no 'lanes'")
    disable: list[str] = []
    for sw, on in switches.items():
        field_name = next((a for a in OPTION_ALIASES.get(sw, (sw,)) if a in names), None)
        if field_name is not None:
            kw[field_name] = on
        elif not on:
            disable.append(sw)
    opts = cls(**kw)
    if disable:
        for attr in ("disabled", "disable", "off", "no"):
            if attr in names:
                cur = set(getattr(opts, attr) or ())
                opts = replace(opts, **{attr: type(getattr(opts, attr) or set())(cur | set(disable))}) \
                    if is_dataclass(opts) else opts
                break
        else:
            raise NotAvailable(f"the compiler has no option to switch off {', '.join(disable)}")
    return opts


def compile_variant(ctx: Context, name: str, lanes: int = params.LANES, **switches: bool) -> Any:
    key = ("compile", name, lanes, tuple(sorted(switches.items())))
    if key not in ctx.cache:
        program = load(ctx, name)
        opts = compiler_options(lanes, **switches)
        ctx.cache[key] = compile_fn()(program, opts)
    return ctx.cache[key]


def all_insns(program: Any) -> list[Any]:
    """The slots of a program and of the programs resident for its tail calls (one ROM holds them all)."""
    return [ins for p in (program, *getattr(program, "resident", [])) for ins in p.insns]


def ebpf_count(insns: Iterable[Any]) -> int:
    """eBPF instructions as llvm-objdump lists them: a lddw (two slots) counts once."""
    n = 0
    skip = False
    for ins in insns:
        if skip:
            skip = False
            continue
        n += 1
        skip = ins.opcode == 0x18
    return n


def rom_count(rom: Any) -> int:
    """Instructions in a ROM (non-empty lanes, an lddw and its high half counting once)."""
    n = 0
    for row in rom.rows:
        skip = False
        for ins in row:
            if skip:
                skip = False
                continue
            if not ins.is_nop:
                n += 1
            skip = ins.opcode == 0x18
    return n


def small_report(rep: Any) -> dict[str, Any]:
    if not isinstance(rep, dict):
        return {}
    return {k: v for k, v in rep.items() if isinstance(v, int | float | str) or
            (isinstance(v, dict) and all(isinstance(x, int | float) for x in v.values()))}


SYNTHETIC_SIZES = (25, 50, 100, 200, 400, 800)
SYNTHETIC_C = """/* generated by hxdp experiment (toolchain speed): N unrolled read-modify-write steps on the packet */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int synthetic(struct xdp_md *ctx)
{
	unsigned char *p = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	unsigned int acc = 7;
	if ((void *)(p + 64) > end)
		return XDP_PASS;
#pragma unroll
	for (int i = 0; i < N; i++) {
		acc = acc * 31 + p[(i * 13) % 64];
		if (acc & (1u << (i % 31)))
			p[(i * 7) % 64] ^= (unsigned char)acc;
	}
	return (acc & 1) ? XDP_DROP : XDP_TX;
}
char _license[] SEC("license") = "GPL";
"""


LOOP_C = """/* generated by hxdp experiment (simulator speed): a bounded loop of LOOPS iterations per packet */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int loop(struct xdp_md *ctx)
{
	unsigned char *p = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	unsigned int acc = 7;
	if ((void *)(p + 64) > end)
		return XDP_PASS;
#pragma nounroll
	for (int i = 0; i < LOOPS; i++)
		acc = acc * 31 + p[i & 63];
	return (acc & 1) ? XDP_DROP : XDP_TX;
}
char _license[] SEC("license") = "GPL";
"""


def _clang_build(ctx: Context, stem: str, text: str) -> Any:
    from hxdp.frontend.elf import load_program

    clang = shutil.which("clang") or shutil.which("clang-14")
    if clang is None:
        raise NotAvailable("clang is not installed")
    d = ctx.out / "work" / "synthetic"
    d.mkdir(parents=True, exist_ok=True)
    src, obj = d / f"{stem}.c", d / f"{stem}.o"
    src.write_text(text)
    proc = subprocess.run([clang, "-O2", "-target", "bpf", "-mcpu=v3", f"-I/usr/include/{platform.machine()}-linux-gnu",
                           "-c", str(src), "-o", str(obj)], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise NotAvailable(f"clang failed on {src.name}: {proc.stderr.strip()[-200:]}")
    return load_program(obj)


def loop_program(ctx: Context) -> Any:
    """A small program whose packets each take thousands of cycles (simulated cycles/s, not packet overhead)."""
    return _clang_build(ctx, "loop", LOOP_C.replace("LOOPS", "4000"))


def synthetic_program(ctx: Context, n: int) -> Any:
    """A generated program of about 10N eBPF instructions, compiled with clang (for compile time vs size)."""
    return _clang_build(ctx, f"synthetic_{n}", SYNTHETIC_C.replace("i < N", f"i < {n}"))

