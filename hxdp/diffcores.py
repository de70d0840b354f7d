"""Differential verification on several cores: the multi-core VLIW model or RTL against the kernel, core k on CPU k."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from hxdp.diff import DiffReport, Divergence, _EngineRunner, _kernel_program, compare, map_diff
from hxdp.errors import HxdpError
from hxdp.mapdump import SkipBytes, masked
from hxdp.params import CORES_MAX


def cores_refusal(engine: str, cores: int, chain: Any = None, fib: Any = None) -> str | None:
    """Why `hxdp diff`/`hxdp run` cannot run `engine` on `cores` cores (None: they can; `hxdp run` asks only for the
    models: the RTL checks its own, hxdp.rtl.sim.cores_refusal)."""
    if cores == 1:
        return None
    if not 1 <= cores <= CORES_MAX:
        return f"--cores {cores}: choose 1 to {CORES_MAX} (params.CORES_MAX)"
    if engine not in ("vliw-model", "rtl"):
        return (f"not supported: --cores {cores} on the {engine}, because only the VLIW model and the RTL have the "
                "cycles the cores interleave by (use --engine vliw-model or rtl)")
    if chain is not None:
        return f"not supported: --cores {cores} with --chain, because the dispatcher's chain runs on one core"
    if fib is not None:
        return (f"not supported: --cores {cores} with --fib, because the per-CPU comparison does not enter the FIB's "
                "network namespace")
    return None


def uses_cpu(runner: Any) -> bool:
    """Whether the program sees which core runs it: a per-CPU map or a get_smp_processor_id call."""
    if any(r.kind.startswith("percpu") for r in runner.state.layout.regions):
        return True
    return any(runner.model.cores[0].row_helper(ri) == "get_smp_processor_id"
               for ri in range(len(runner.model.cores[0].rows)))


def core_cpus(cores: int, per_cpu: bool) -> list[int]:
    """The CPU each core's packets run on in the kernel: core k on the k-th CPU this process may use, modulo their
    number when the program cannot tell (a program with per-CPU state needs a CPU per core)."""
    allowed = sorted(os.sched_getaffinity(0))
    if per_cpu and cores > len(allowed):
        raise HxdpError(f"not supported: --cores {cores} for a program with per-CPU maps or get_smp_processor_id on "
                        f"this machine, because the kernel oracle has {len(allowed)} CPU(s) to run core k on CPU k")
    return [allowed[k % len(allowed)] for k in range(cores)]


def on_kernel_cpus(result: Any, cpus: list[int]) -> Any:
    """`result` with each perf record of core k on CPU cpus[k], the CPU whose buffer the kernel wrote it to when it
    ran core k's packets (docs/execution_contract.md section 8, "The kernel comparison"); an index past the cores
    stays as it is."""
    events = [replace(e, cpu=cpus[e.cpu]) if e.kind == "perf" and e.cpu < len(cpus) else e for e in result.events]
    return replace(result, events=events) if events != result.events else result


def run_diff_cores(obj: str | Path, packets: list[bytes], cfg: dict[str, Any] | None, cores: int,
                   section: str | None = None, prog: str | None = None, ingress_ifindex: int = 1,
                   compile_options: Any = None, cfg_source: str | None = None, sizes: dict[str, int] | None = None,
                   skip: list[SkipBytes] | None = None, engine: str = "vliw-model") -> DiffReport:
    """Run the trace through hxdp.models.multicore (engine "rtl": the RTL's cores, hxdp.rtl.sim) on `cores` cores,
    and each packet in the kernel, in arrival order, on the CPU of the core the dispatcher gave it; compare every
    packet, then the maps once at the end, per-CPU maps core by core (docs/execution_contract.md section 8, "The
    kernel comparison")."""
    from hxdp.frontend.sizing import config_inner, config_sizes
    from hxdp.models.multicore import MulticoreModel

    obj = Path(obj)
    cfg = cfg or {"maps": {}}
    sizes = {**config_sizes(cfg, cfg_source or "map config"), **(sizes or {})}
    inner = config_inner(cfg, cfg_source or "map config")
    runner = _EngineRunner("vliw-model", obj, section, prog, cfg, compile_options, cfg_source, sizes, None, None,
                           inner)
    runner.model = MulticoreModel(runner.model.rom, runner.state, cores)
    cpus = core_cpus(cores, uses_cpu(runner))
    if engine == "rtl":
        run, dump = _rtl_cores(runner, packets, cores, ingress_ifindex)
    else:
        run, dump = runner.model.run(packets, ingress_ifindex=ingress_ifindex), runner.model.dump
    report = DiffReport(f"{engine} on {cores} cores")
    with _kernel_program(obj, section, prog, sizes, inner) as kernel:
        kernel.apply_config(cfg, source=cfg_source)
        for f in run.frames:
            cpu = cpus[f.core] if f.core is not None else cpus[0]
            kres = kernel.run(packets[f.index], ingress_ifindex=ingress_ifindex, cpu=cpu)
            report.packets += 1
            report.actions[kres.action] = report.actions.get(kres.action, 0) + 1
            div = compare(f.index, kres, on_kernel_cpus(f.result, cpus))
            if div is not None:
                div.detail.append(f"(core {f.core}, kernel CPU {cpu})")
                report.divergence = div
                return report
            report.events += len(kres.events)
        percpu = {r.name for r in runner.state.layout.regions if r.kind.startswith("percpu")}
        seen: set[int] = set()
        for k, cpu in enumerate(cpus):
            if cpu in seen:  # a CPU several cores share holds no per-CPU state of theirs (core_cpus refuses that)
                continue
            seen.add(cpu)
            kmaps, emaps = kernel.dump(cpu=cpu), dump(k)
            if k:
                kmaps = {n: v for n, v in kmaps.items() if n in percpu}
                emaps = {n: v for n, v in emaps.items() if n in percpu}
            lines = map_diff(masked(kmaps, skip or []), masked(emaps, skip or []))
            if lines:
                report.divergence = Divergence(len(packets) - 1, "map", "see detail", "see detail",
                                               [f"(maps compared after the whole trace: core {k}, kernel CPU {cpu})"]
                                               + lines)
                return report
    return report



def _rtl_cores(runner: Any, packets: list[bytes], cores: int, ingress_ifindex: int) -> tuple[Any, Any]:
    """The RTL's run on `cores` cores, as the multi-core model's (frames with their core and result) and its maps
    per core (core k's per-CPU copies)."""
    from types import SimpleNamespace

    from hxdp.rtl.sim import RtlSim

    sim = RtlSim(runner.model.cores[0].rom, runner.state.layout, runner.state, cores=cores)
    results = sim.run_packets([(p, ingress_ifindex, 0) for p in packets])
    frames = [SimpleNamespace(index=i, core=st.core if st.core >= 0 else None, result=r)
              for i, (r, st) in enumerate(zip(results, sim.stamps, strict=True))]
    per_cpu = sim.dump_per_cpu()
    names = {r.name for r in sim.percpu}

    def dump(k: int) -> dict:
        return {n: ({key: values[k] for key, values in v.items()} if n in names else v) for n, v in per_cpu.items()}

    return SimpleNamespace(frames=frames), dump
