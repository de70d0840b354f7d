"""The measurements, one point each (keys are 'kind:args'), and the packets and engines they run."""

from __future__ import annotations

import importlib
import statistics
import struct
import time
from pathlib import Path
from typing import Any

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.eval.harness import CLOCK_MHZ, NS_PER_CYCLE, Context, ExperimentError, NotAvailable, Record
from hxdp.eval.programs import (
    all_insns,
    compile_fn,
    compile_switches,
    compile_variant,
    compiler_options,
    ebpf_count,
    load,
    loop_program,
    rom_count,
    small_report,
    suite_program,
    synthetic_program,
)

THROUGHPUT_FRAME_BYTES = 64  # the paper's packet size for throughput (Figs. 12-15)
CTIME_RUNS = 3  # compilations per compile-time point; the median is reported
LINUX_REPEAT = 300_000  # frames per call: test_run of a frame the program leaves as it was, live frames
LINUX_RUNS = 5  # runs of each Linux mode; the baseline reports their median
LINUX_TEST_RUNS = 20_000  # test_run calls of one frame each, for frames the program rewrites

# ----------------------------------------------------------------------------------------------------------------
# packets and the engines that run them
# ----------------------------------------------------------------------------------------------------------------


def _read_pcap(path: Path) -> list[bytes]:
    from hxdp.linux.baseline import read_pcap

    return read_pcap(path)


def write_pcap(path: Path, frames: list[bytes]) -> None:
    from hxdp.atomic_write import write_atomic

    parts = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for i, f in enumerate(frames):
        parts.append(struct.pack("<IIII", 1_000_000_000 + i // 1_000_000, i % 1_000_000, len(f), len(f)) + f)
    write_atomic(path, b"".join(parts))


def program_frames(ctx: Context, name: str) -> list[bytes]:
    """The program's traffic (xdp_progs/traffic/NAME.pcap); 64-byte UDP flows when it has none."""
    key = ("frames", name)
    if key not in ctx.cache:
        prog = suite_program(name)
        if prog.traffic.exists():
            frames = _read_pcap(prog.traffic)
        else:
            from hxdp.traffic.gen import generate

            frames = generate(10, 10, 64, "udp", seed=1)
        ctx.cache[key] = frames
    return ctx.cache[key]


def packets_64(ctx: Context, name: str) -> tuple[list[bytes], str]:
    """The back-to-back trace for throughput: the traffic's frames of at most 64 bytes, repeated to n_packets."""
    frames = program_frames(ctx, name)
    size = THROUGHPUT_FRAME_BYTES
    small = [f for f in frames if len(f) == size]
    what = f"{size}-byte frames of the program's traffic"
    if not small:
        small = [f for f in frames if len(f) <= size]
        what = f"frames of at most {size} bytes of the program's traffic"
    if not small:
        small = frames
        what = f"program's traffic (no frame <= {size} B; mean {statistics.mean(len(f) for f in frames):.0f} B)"
    n = ctx.n_packets
    return [small[i % len(small)] for i in range(n)], what


def program_paths(name: str) -> list[str]:
    """The program's main path (xdp_progs/paths.json) first, then the other actions its traffic takes."""
    from hxdp.suite import programs

    prog = next((p for p in programs() if p.name == name), None)
    if prog is None:
        raise NotAvailable(f"{name} is not in xdp_progs/")
    try:
        main = prog.main_path()
    except HxdpError as exc:
        raise ExperimentError(str(exc)) from None  # a missing entry is a harness error, not a silent default
    return [main, *(a for a in prog.expected_actions() if a != main)]


def frame_action(ctx: Context, name: str, frame: bytes) -> str:
    """The action the program gives the frame from its initial maps (the VLIW model decides)."""
    from hxdp.models.vliw import VliwModel

    key = ("action", name, frame)
    if key not in ctx.cache:
        cr = compile_variant(ctx, name)
        res = VliwModel(cr.rom, map_state(ctx, name, cr.layout)).run(frame)
        ctx.cache[key] = params.ACTION_NAMES.get(res.action, str(res.action))
    return ctx.cache[key]


def path_frames(ctx: Context, name: str, path: str) -> tuple[list[bytes], str]:
    """The back-to-back trace of one path: the frames of the program's traffic that take `path` from its initial
    maps, the 64-byte ones (or ones resized to 64 bytes that still take it; else the smallest that do), repeated
    to n_packets."""
    size = THROUGHPUT_FRAME_BYTES
    mine = list(dict.fromkeys(f for f in program_frames(ctx, name) if frame_action(ctx, name, f) == path))
    if not mine:
        raise NotAvailable(f"no frame of {name}'s traffic takes its {path} path from the initial maps")
    pick = [f for f in mine if len(f) == size]
    what = f"{size}-byte frames of the program's traffic on its {path} path"
    if not pick:
        resized = list(dict.fromkeys(resize_frame(f, size) for f in mine))
        pick = [f for f in resized if frame_action(ctx, name, f) == path]
        what = f"frames of the program's traffic on its {path} path resized to {size} bytes"
    if not pick:
        smallest = min(len(f) for f in mine)
        pick = [f for f in mine if len(f) == smallest]
        what = f"{smallest}-byte frames (the smallest of the program's traffic on its {path} path)"
    n = ctx.n_packets
    return [pick[i % len(pick)] for i in range(n)], what


def map_state(ctx: Context, name: str, layout: Any) -> Any:
    from hxdp.models.maps import MapState

    state = MapState(layout)
    state.apply_config(suite_program(name).map_config())
    return state


def _rtl_module() -> Any:
    try:
        return importlib.import_module("hxdp.rtl.sim")
    except ImportError as exc:
        raise NotAvailable(f"RTL driver hxdp.rtl not importable ({exc})") from None


def rtl_run(ctx: Context, name: str, packets: list[bytes], **switches: bool) -> tuple[list[Any], Any]:
    """Run packets back to back through the Verilator model (one process); returns (results, the RtlSim)."""
    mod = _rtl_module()
    sim_cls = getattr(mod, "RtlSim", None)
    if sim_cls is None:
        raise NotAvailable("hxdp.rtl.sim has no RtlSim")
    ok, why = mod.available() if hasattr(mod, "available") else (True, "")
    if not ok:
        raise NotAvailable(why)
    if name == "loop":  # the generated busy-loop program of the simulator-speed measurement
        from hxdp.models.maps import MapState

        key = ("compile", "loop")
        if key not in ctx.cache:
            ctx.cache[key] = compile_fn()(loop_program(ctx), compiler_options())
        cr = ctx.cache[key]
        state = MapState(cr.layout)
    else:
        cr = compile_variant(ctx, name, **switches)
        state = map_state(ctx, name, cr.layout)
    try:
        sim = sim_cls(cr.rom, layout=cr.layout, state=state)
    except HxdpError as exc:
        raise NotAvailable(f"RTL model could not be built: {exc}") from None
    return sim.run_packets(packets), sim


def _stamps(sim: Any) -> list[Any]:
    return list(getattr(sim, "stamps", None) or [])


def back_to_back_cycles(results: list[Any], sim: Any, first: int = 0) -> tuple[float, str]:
    """Cycles per packet of a back-to-back run: the steady-state interval between the cycles at which the core
    finishes consecutive packets (second half of the run), from the RTL's per-packet stamps; of the packets from
    `first` on (those before it only fill the maps, e.g. the connections a reuse path comes back on)."""
    measured = results[first:]
    n = len(measured)
    if n == 0:
        raise NotAvailable("the RTL returned no per-packet results")
    st = _stamps(sim)[first:]
    if n >= 4 and len(st) == n:
        half = n // 2
        ends = sorted(s.end for s in st)
        return (ends[-1] - ends[half - 1]) / (n - half), "steady-state interval between core completions (RTL)"
    total = getattr(sim, "total_cycles", 0)
    if total and not first:
        return total / n, "total cycles of the run / packets (RTL)"
    return statistics.mean(r.cycles for r in measured), "mean of per-packet cycles (RTL)"


# ----------------------------------------------------------------------------------------------------------------
# measurements (one point each; keys are 'kind:args')
# ----------------------------------------------------------------------------------------------------------------


def m_compile(ctx: Context, key: str) -> Record:
    """compile:NAME:VARIANT with VARIANT 'all', 'none', 'only-OPT', 'lanesN' or a fig9 step."""
    _, name, variant = key.split(":")
    program = load(ctx, name)
    lanes, sw = compile_switches(variant)
    t0 = time.perf_counter()
    try:
        cr = compile_variant(ctx, name, lanes, **sw)
    except HxdpError as exc:
        if not variant.startswith("lanes"):
            raise
        # a genuine limit of the target (e.g. an lddw needs two adjacent lanes): a result, not a harness error
        return {"program": name, "variant": variant, "lanes": lanes, "original": ebpf_count(all_insns(program)),
                "rows": None, "does_not_fit": str(exc)}
    dt = time.perf_counter() - t0
    return {"program": name, "variant": variant, "lanes": lanes, "original": ebpf_count(all_insns(program)),
            "slots_original": len(all_insns(program)), "instructions": rom_count(cr.rom), "rows": len(cr.rom),
            "compile_s": round(dt, 4), "report": small_report(getattr(cr, "report", None))}


def m_ipc(ctx: Context, key: str) -> Record:
    """ipc:NAME: static IPC and dynamic IPC on the traffic's executed paths (sequential model vs VLIW model)."""
    from hxdp.models.maps import MapLayout
    from hxdp.models.seq import SeqModel
    from hxdp.models.vliw import VliwModel

    _, name = key.split(":")
    program = load(ctx, name)
    cr = compile_variant(ctx, name)
    frames = program_frames(ctx, name)[: ctx.n_packets]
    seq = SeqModel(program, map_state(ctx, name, MapLayout.for_program(program)))
    vliw = VliwModel(cr.rom, map_state(ctx, name, cr.layout), trace=True)
    executed = rows = cycles = mismatches = 0
    for f in frames:
        a = seq.run(f)
        b = vliw.run(f)
        executed += a.cycles
        rows += len(b.trace)
        cycles += b.cycles
        mismatches += not a.same_outcome(b)
    original = ebpf_count(all_insns(program))
    return {"program": name, "instructions": original, "rows": len(cr.rom),
            "static_ipc": original / len(cr.rom), "slots": len(all_insns(program)),
            "static_ipc_slots": len(all_insns(program)) / len(cr.rom), "packets": len(frames),
            "executed_insns": executed, "executed_rows": rows, "model_cycles": cycles,
            "dynamic_ipc": executed / rows if rows else None, "model_mismatches": mismatches}


def _trace(ctx: Context, name: str, variant: list[str]) -> tuple[list[bytes], str, str | None]:
    """The trace of a throughput point: the 64-byte mix of the traffic, or one path's frames ('path-ACTION')."""
    path = next((v[5:] for v in variant if v.startswith("path-")), None)
    if path is None:
        return (*packets_64(ctx, name), None)
    return (*path_frames(ctx, name, path), path)


def m_model(ctx: Context, key: str) -> Record:
    """model:NAME[:path-ACTION]: VLIW model cycles per packet on the 64-byte mix of the traffic or on one path
    (the contract's cycle model, no overlap)."""
    from hxdp.models.vliw import VliwModel

    _, name, *variant = key.split(":")
    packets, what, path = _trace(ctx, name, variant)
    cr = compile_variant(ctx, name)
    vliw = VliwModel(cr.rom, map_state(ctx, name, cr.layout))
    cyc = [vliw.run(p).cycles for p in packets]
    mean = statistics.mean(cyc)
    return {"program": name, "path": path, "model_cycles": mean, "model_mpps": CLOCK_MHZ / mean if mean else None,
            "packets": len(packets), "trace": what, "rows": len(cr.rom)}


def m_rtl(ctx: Context, key: str) -> Record:
    """rtl:NAME[:no-OPT][:path-ACTION]: Sephirot RTL cycles per packet back to back on the 64-byte mix of the
    traffic or on one path, Mpps at 156.25 MHz, and agreement with the model."""
    from hxdp.models.vliw import VliwModel

    _, name, *variant = key.split(":")
    off = {v[3:]: False for v in variant if v.startswith("no-")}
    packets, what, path = _trace(ctx, name, variant)
    t0 = time.perf_counter()
    results, sim = rtl_run(ctx, name, packets, **off)
    wall = time.perf_counter() - t0
    cpp, how = back_to_back_cycles(results, sim)
    cr = compile_variant(ctx, name, **off)
    vliw = VliwModel(cr.rom, map_state(ctx, name, cr.layout))
    mism = sum(1 for p, r in zip(packets, results, strict=False) if not vliw.run(p).same_outcome(r))
    actions = sorted({params.ACTION_NAMES.get(r.action, str(r.action)) for r in results})
    return {"program": name, "path": path, "rtl_cycles": cpp, "rtl_mpps": CLOCK_MHZ / cpp if cpp else None,
            "method": how, "packets": len(results), "trace": what, "actions": actions, "model_mismatches": mism,
            "off_path": sum(1 for r in results if path and params.ACTION_NAMES.get(r.action) != path),
            "core_cycles_mean": statistics.mean(r.cycles for r in results),
            "total_cycles": getattr(sim, "total_cycles", None), "wall_s": round(wall, 3)}


LINUX_FRAMES_PER_PATH = 2  # distinct frames of each path the Linux baseline measures
LINUX_MIX_FRAMES = 4  # and the most frequent distinct frames of the 64-byte mix (its weights: their counts)


def m_linux(ctx: Context, key: str) -> Record:
    """linux:NAME: the Linux XDP baseline on this machine (hxdp.linux.baseline: BPF_PROG_TEST_RUN, live frames
    through a veth, native XDP on a veth), per path (every frame starting from its own bytes, the path checked)
    and for the 64-byte mix of the traffic."""
    from hxdp.linux import baseline

    _, name = key.split(":")
    ok, why = baseline.available()
    if not ok:
        raise NotAvailable(f"bpf() not usable here: {why}")
    prog = suite_program(name)
    paths = program_paths(name)
    mix, what = packets_64(ctx, name)
    mix_counts = {f: mix.count(f) for f in dict.fromkeys(mix)}
    frames: list[bytes] = []
    for path in paths:
        try:
            frames += list(dict.fromkeys(path_frames(ctx, name, path)[0]))[:LINUX_FRAMES_PER_PATH]
        except NotAvailable:
            continue
    common = sorted(mix_counts, key=lambda f: -mix_counts[f])[:LINUX_MIX_FRAMES]
    frames = list(dict.fromkeys(frames + common))
    pcap = ctx.out / "work" / "traces" / f"{name}-paths.pcap"
    pcap.parent.mkdir(parents=True, exist_ok=True)
    write_pcap(pcap, frames)
    opts = baseline.Options(repeat=20_000 if ctx.quick else LINUX_REPEAT, test_runs=2_000 if ctx.quick else
                            LINUX_TEST_RUNS, runs=1 if ctx.quick else LINUX_RUNS, max_packets=len(frames),
                            veth=not ctx.quick, native=not ctx.quick)
    res = baseline.run_baseline(str(prog.obj), str(pcap), prog=prog.prog,
                                maps=str(prog.maps) if prog.maps.exists() else None, sizes=prog.sizes(), options=opts)
    rec: Record = {"program": name, "path": paths[0], "trace": what, "skipped": res.skipped,
                   "loadavg": [res.loadavg_before, res.loadavg_after]}
    for m in res.modes:
        rec[f"{m.mode}_paths"] = {a: p["mpps"] for a, p in m.paths.items()}
        rec[f"{m.mode}_verified"] = {a: p["verified"] for a, p in m.paths.items()}
        rec[f"{m.mode}_mpps"] = m.paths.get(paths[0], {}).get("mpps")
        weights = [(baseline.packet_rate_ns(m, p), mix_counts.get(frames[p.index], 0)) for p in m.packets]
        rate = baseline.weighted_mean(weights)
        rec[f"{m.mode}_mix_mpps"] = 1000.0 / rate if rate > 0 else None
        rec[f"{m.mode}_overhead_ns"] = m.overhead_ns
    return rec


def resize_frame(frame: bytes, size: int) -> bytes:
    """The same flow's frame with its payload grown or cut so that it is `size` bytes (IP/UDP lengths fixed)."""
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    pkt = Ether(frame)
    if IP not in pkt:
        if len(frame) >= size:
            return frame[:size]
        return frame + bytes(size - len(frame))
    ip = pkt[IP]
    l4 = ip.getlayer(UDP) or ip.getlayer(TCP) or ip
    head = len(frame) - len(bytes(l4.payload))
    l4.remove_payload()
    l4.add_payload(Raw(bytes(max(0, size - head))))
    del ip.len, ip.chksum
    if UDP in pkt:
        del pkt[UDP].len, pkt[UDP].chksum
    if TCP in pkt:
        del pkt[TCP].chksum
    out = bytes(pkt)
    if len(out) < size:
        out += bytes(size - len(out))
    return out[:size]


def _forwarded_frame(ctx: Context, name: str, size: int) -> bytes:
    """The first frame of the program's traffic, resized, that the program sends out (TX or REDIRECT) from its
    initial maps (the VLIW model decides); a dropped frame has no 'last byte out'."""
    from hxdp.models.vliw import VliwModel

    cr = compile_variant(ctx, name)
    frames = program_frames(ctx, name)
    for f in frames:
        rf = resize_frame(f, size)
        res = VliwModel(cr.rom, map_state(ctx, name, cr.layout)).run(rf)
        if res.action in (params.XDP_TX, params.XDP_REDIRECT):
            return rf
    raise NotAvailable(f"no frame of {name}'s traffic resized to {size} B is sent out (TX/REDIRECT)")


def m_latency(ctx: Context, key: str) -> Record:
    """latency:NAME:SIZE: first byte in to last byte out in the RTL, ns at 156.25 MHz, one packet at a time."""
    _, name, size_s = key.split(":")
    size = int(size_s)
    frame = _forwarded_frame(ctx, name, size)
    results, sim = rtl_run(ctx, name, [frame])
    st = _stamps(sim)
    if len(st) != 1:
        raise NotAvailable("the RTL driver does not report per-packet in/out stamps")
    s = st[0]
    r = results[0]
    if r.action in (params.XDP_DROP, params.XDP_ABORTED) or s.out < s.in_cycle:
        raise NotAvailable(f"the {len(frame)}-byte packet was {r.action_name}: no byte left the NIC")
    cyc = s.out - s.in_cycle + 1  # both stamps are cycles in which a frame moved: count both ends
    return {"program": name, "size": size, "latency_cycles": cyc, "latency_ns": cyc * NS_PER_CYCLE,
            "core_start_cycle": s.start - s.in_cycle, "core_cycles": s.end - s.start + 1,
            "action": r.action_name, "out_bytes": len(r.packet)}


def m_ctime(ctx: Context, key: str) -> Record:
    """ctime:NAME or ctime:synthetic-N: compile time (median of 3) against program size; synthetic programs are
    compiled with an instruction memory as large as they need (the speed of the compiler, not the fit)."""
    _, name = key.split(":")
    if name.startswith("synthetic-"):
        program = synthetic_program(ctx, int(name.split("-")[1]))
        opts = compiler_options(extra={"imem_rows": 1 << 20})
    else:
        program = load(ctx, name)
        opts = compiler_options()
    fn = compile_fn()
    times = []
    cr = None
    for _ in range(1 if ctx.quick else CTIME_RUNS):
        t0 = time.perf_counter()
        cr = fn(program, opts)
        times.append(time.perf_counter() - t0)
    assert cr is not None
    return {"program": name, "instructions": ebpf_count(all_insns(program)), "rows": len(cr.rom),
            "compile_s": statistics.median(times)}


def m_simspeed(ctx: Context, key: str) -> Record:
    """simspeed:NAME: simulated cycles/s and packets/s of the Verilator model, from two run lengths (the fixed
    cost of starting the simulator and loading ROM and maps cancels out)."""
    _, name = key.split(":")
    if name == "loop":
        from hxdp.traffic.gen import generate

        packets = generate(4, 4, 64, "udp", seed=3)
        small, big = (4, 32) if ctx.quick else (20, 200)
    else:
        packets, _what = packets_64(ctx, name)
        small, big = (256, 2048) if ctx.quick else (2000, 20000)
    rtl_run(ctx, name, packets[:2])  # builds the model first when its sources changed (not timed)
    runs = []
    for n in (small, big):
        trace = [packets[i % len(packets)] for i in range(n)]
        t0 = time.perf_counter()
        results, sim = rtl_run(ctx, name, trace)
        wall = time.perf_counter() - t0
        runs.append((n, getattr(sim, "total_cycles", 0) or sum(r.cycles for r in results), wall))
    (n1, c1, w1), (n2, c2, w2) = runs
    dt = w2 - w1
    if dt <= 0:
        raise NotAvailable(f"timing noise: {n2} packets ran no slower than {n1}")
    return {"program": name, "packets": n2, "sim_cycles": c2, "wall_s": w2, "packets_per_s": (n2 - n1) / dt,
            "sim_cycles_per_s": (c2 - c1) / dt, "fixed_cost_s": w1 - (c1 / ((c2 - c1) / dt)),
            "note": f"rates from the difference between runs of {n1} and {n2} packets"}

