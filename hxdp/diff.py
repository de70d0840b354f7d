"""Differential verification: run a program on one of our engines and in the Linux kernel, packet by packet."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hxdp.errors import HxdpError
from hxdp.events import Event, same_event
from hxdp.mapdump import MapDump, SkipBytes, differing_keys, masked
from hxdp.result import RunResult

if TYPE_CHECKING:
    from hxdp.fib.table import Fib

ENGINES = ("seq-model", "vliw-model", "rtl", "original-model")



@dataclass
class Divergence:
    """The first point where the engine and the kernel part."""

    packet: int
    what: str  # "action", "bytes", "meta", "events", "map"
    expected: str
    got: str
    detail: list[str] = field(default_factory=list)

    def render(self) -> str:
        lines = [f"packet {self.packet}: {self.what} differs: kernel {self.expected}, engine {self.got}"]
        lines += [f"  {d}" for d in self.detail]
        return "\n".join(lines)


@dataclass
class DiffReport:
    engine: str
    packets: int = 0
    divergence: Divergence | None = None
    actions: dict[int, int] = field(default_factory=dict)
    events: int = 0  # records to the host (perf, ring buffer) the kernel sent and the engine matched
    repro: str | None = None
    repro_error: str | None = None  # the reproducer could not be written (the divergence is reported all the same)

    @property
    def ok(self) -> bool:
        return self.divergence is None

    def to_json(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "packets": self.packets,
            "ok": self.ok,
            "actions": {str(k): v for k, v in sorted(self.actions.items())},
            "events": self.events,
            "divergence": None if self.divergence is None else self.divergence.__dict__,
            "repro": self.repro,
            "repro_error": self.repro_error,
        }


def byte_diff(expected: bytes, got: bytes, limit: int = 8) -> list[str]:
    """Lines naming the differing byte offsets (at most `limit`), and a length mismatch."""
    out: list[str] = []
    if len(expected) != len(got):
        out.append(f"length: kernel {len(expected)}, engine {len(got)}")
    for i in range(min(len(expected), len(got))):
        if expected[i] != got[i]:
            out.append(f"byte {i:4d}: kernel {expected[i]:02x}, engine {got[i]:02x}")
            if len(out) >= limit:
                out.append("...")
                break
    return out


def map_diff(expected: MapDump, got: MapDump, limit: int = 8) -> list[str]:
    """Lines naming the differing map entries of maps both sides know."""
    out: list[str] = []
    for name in sorted(set(expected) & set(got)):
        e, g = expected[name], got[name]
        if e == g:
            continue
        for key in differing_keys(e, g):
            ev, gv = e.get(key), g.get(key)
            if ev != gv:
                out.append(
                    f"map {name} key {key.hex()}: kernel {ev.hex() if ev is not None else 'absent'}, "
                    f"engine {gv.hex() if gv is not None else 'absent'}"
                )
                if len(out) >= limit:
                    return out + ["..."]
    return out


def compare(index: int, kernel: RunResult, engine: RunResult, meta: bool = True) -> Divergence | None:
    """The first field of one packet's result where the engine and the kernel differ: action, bytes, XDP
    metadata (data_meta..data; `meta` False when one side does not report it), then the records the packet sent
    to the host (perf_event_output, ring buffer: hxdp.events). The single comparison of
    `hxdp diff` and `hxdp fuzz`, so that a fuzz reproducer shows its divergence when run alone."""
    fault = [f"engine fault: {engine.fault}"] if engine.fault else []
    if (kernel.action & 0xFFFFFFFF) != (engine.action & 0xFFFFFFFF):
        return Divergence(index, "action", str(kernel.action), str(engine.action), fault)
    if kernel.packet != engine.packet:
        return Divergence(index, "bytes", f"{len(kernel.packet)} bytes", f"{len(engine.packet)} bytes",
                          byte_diff(kernel.packet, engine.packet) + fault)
    if meta and kernel.meta != engine.meta:
        return Divergence(index, "meta", kernel.meta.hex() or "-", engine.meta.hex() or "-", fault)
    lines = event_diff(kernel.events, engine.events)
    if lines:
        return Divergence(index, "events", f"{len(kernel.events)} events", f"{len(engine.events)} events",
                          lines + fault)
    return None


def _by_output(events: list[Event]) -> list[Event]:
    # the kernel's readers give each map's records in order, not the interleaving of several maps
    return sorted(events, key=lambda e: (e.kind, e.map))


def event_diff(expected: list[Event], got: list[Event], limit: int = 4) -> list[str]:
    """Lines naming the records (perf_event_output, ring buffer) of one packet where the two sides differ."""
    out: list[str] = []
    exp, eng = _by_output(expected), _by_output(got)
    for i in range(max(len(exp), len(eng))):
        e = exp[i] if i < len(exp) else None
        g = eng[i] if i < len(eng) else None
        if e is not None and g is not None and same_event(e, g):
            continue
        out.append(f"event {i}: kernel {_show(e)}, engine {_show(g)}")
        if len(out) >= limit:
            return out + ["..."]
    return out


def _show(e: Event | None) -> str:
    if e is None:
        return "none"
    data = e.data.hex()
    return f"{e.kind} {e.map} cpu {e.cpu} {e.size} bytes {data[:64]}{'...' if len(data) > 64 else ''}"


def dump_to_config(dump: MapDump) -> dict[str, Any]:
    return {"maps": {name: [{"key": k.hex(), "value": v.hex()} for k, v in sorted(entries.items())]
                     for name, entries in sorted(dump.items())}}


def write_repro(folder: Path, obj: Path, packets: list[bytes], maps_before: MapDump, report: DiffReport,
                section: str | None, prog: str | None, sizes: dict[str, int] | None = None,
                prog_entries: dict[str, list] | None = None, fib: Fib | None = None,
                ingress_ifindex: int = 1, inner_maps: dict[str, Any] | None = None) -> None:
    """A self-contained reproducer: the object, the packets, the map contents before the first of them, and the
    command (a map of maps' slots as the configuration's "inner_maps" set them: `inner_maps`). The models'
    reproducer is the divergent packet alone (with the maps just before it); the RTL runs a trace back to back,
    where a packet's result may depend on the packets around it in the pipeline, so its reproducer is the whole
    trace from the initial maps."""
    from hxdp.atomic_write import OutputError, write_atomic
    from hxdp.traffic.pcap import write_pcap

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{folder}: cannot create the reproducer folder: {exc.strerror}") from None
    copy = folder / obj.name
    if not (copy.exists() and os.path.samefile(copy, obj)):  # --repro may be the object's own folder
        shutil.copyfile(obj, copy)
    write_pcap(folder / "packet.pcap", packets)
    config = dump_to_config(maps_before)
    config["maps"].update(prog_entries or {})  # PROG_ARRAYs, by program name (no dump shows them: docs/maps.md)
    if sizes:
        config["max_entries"] = dict(sorted(sizes.items()))
    if inner_maps:
        config["inner_maps"] = inner_maps
    write_atomic(folder / "maps.json", json.dumps(config, indent=1) + "\n")
    sel = (f" --section {section}" if section else "") + (f" --prog {prog}" if prog else "")
    if fib is not None:  # (the kernel side runs in the FIB's namespace: it must still exist)
        write_atomic(folder / "fib.json", fib.to_json())
        sel += f" --fib fib.json --ingress-ifindex {ingress_ifindex}"
    where = ""
    if len(packets) > 1 and report.divergence:
        where = (f"(the divergence is at packet {report.divergence.packet} of these {len(packets)}: the RTL runs "
                 f"them back to back, from the maps in maps.json)\n")
    write_atomic(folder / "README.txt",
        f"{report.divergence.render() if report.divergence else ''}\n\nreproduce with:\n"
        f"  hxdp diff {obj.name}{sel} --pcap packet.pcap --maps maps.json --engine {report.engine}\n{where}"
    )


@dataclass(frozen=True)
class Chain:
    """The programs after the first of a dispatcher's chain ((object, program or None) each), and every program's
    chain-call actions, the first program's included."""

    links: list[tuple[str, str | None]]
    actions: list[frozenset[int]]


class _EngineRunner:
    """Runs packets one at a time on an engine and exposes its map contents."""

    def __init__(self, engine: str, obj: Path, section: str | None, prog: str | None, cfg: dict[str, Any],
                 compile_options: Any = None, cfg_source: str | None = None,
                 sizes: dict[str, int] | None = None, chain: Chain | None = None, fib: Fib | None = None,
                 inner: dict[str, dict[bytes, str]] | None = None) -> None:
        from hxdp.frontend.elf import load_program
        from hxdp.frontend.sizing import apply_tiers, config_tiers
        from hxdp.models.maps import MapState

        self.engine = engine
        if chain is not None:
            from hxdp.frontend.chain import load_chain

            program = load_chain([(str(obj), prog), *chain.links], chain.actions, sizes)
        else:
            program = load_program(obj, section=section, prog=prog, sizes=sizes, inner=inner)
        program = apply_tiers(program, config_tiers(cfg, cfg_source or "map config"))
        if engine == "seq-model":
            from hxdp.fib import uses_fib
            from hxdp.models.seq import SeqModel

            self.state = MapState.for_program(program, fib=uses_fib(program.insns))
            self.state.apply_config(cfg, source=cfg_source)
            if fib is not None:
                fib.install(self.state.mem)
            self.model: Any = SeqModel(program, self.state)
        elif engine in ("vliw-model", "rtl", "original-model"):
            from hxdp.compiler import CompileOptions, compile_program

            if engine == "original-model":  # compiled for the original core (--target hxdp-original)
                compile_options = replace(compile_options or CompileOptions(), target="hxdp-original")
            result = compile_program(program, compile_options)
            self.state = MapState(result.layout)
            self.state.apply_config(cfg, source=cfg_source)
            if fib is not None:
                fib.install(self.state.mem)
            if engine == "vliw-model":
                from hxdp.models.vliw import VliwModel

                self.model = VliwModel(result.rom, self.state)
            elif engine == "original-model":
                from hxdp.models.original import OriginalModel

                self.model = OriginalModel(result.rom, self.state)
            else:
                from hxdp.rtl.sim import RtlSim

                self.model = RtlSim(result.rom, layout=result.layout, state=self.state)
        else:
            raise HxdpError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")

    def run_all(self, packets: list[bytes], ingress_ifindex: int) -> list[RunResult] | None:
        """The RTL runs a whole trace in one simulator process; the models go packet by packet."""
        if self.engine == "rtl":
            return self.model.run_packets([(p, ingress_ifindex, 0) for p in packets])
        return None

    def run(self, packet: bytes, ingress_ifindex: int) -> RunResult:
        return self.model.run(packet, ingress_ifindex=ingress_ifindex)

    def dump(self) -> MapDump:
        return self.state.dump()


def _kernel_program(obj: Path, section: str | None, prog: str | None, sizes: dict[str, int],
                    inner: dict[str, dict[bytes, str]] | None = None) -> Any:
    """The kernel oracle through libbpf, or through our loader for objects libbpf cannot open (legacy `maps`
    sections, which libbpf 1.x refuses: the shape of older samples)."""
    from hxdp.frontend.elf import load_program
    from hxdp.linux.kernel import KernelProgram, LibbpfOpenError

    try:
        return KernelProgram(obj, section=section, prog=prog, sizes=sizes, inner=inner)
    except LibbpfOpenError:
        return KernelProgram.from_program(load_program(obj, section, prog, sizes))


def run_diff(obj: str | Path, packets: list[bytes], cfg: dict[str, Any] | None = None, engine: str = "vliw-model",
             section: str | None = None, prog: str | None = None, ingress_ifindex: int = 1,
             repro_dir: str | Path | None = None, compile_options: Any = None,
             progress: Callable[[Iterable[int]], Iterable[int]] | None = None,
             cfg_source: str | None = None, sizes: dict[str, int] | None = None,
             chain: Chain | None = None, fib: Fib | None = None,
             skip: list[SkipBytes] | None = None, maps_at_end: bool = False) -> DiffReport:
    """Compare every packet's action, bytes and (models: after every packet; RTL: at the end) map contents.

    cfg_source names the map configuration (its file) in error messages; sizes are the maps' max_entries set at
    load time (both sides), over the configuration's own "max_entries". `chain`: the programs that run after this
    one, as libxdp's dispatcher runs them (one ROM on the engine, program by program in the kernel). fib
    (hxdp.fib.table.Fib) is loaded into the engine's map memory, and the kernel runs in the network namespace it was
    read from (fib.netns), so that bpf_fib_lookup sees one FIB on both sides. `skip`: map value bytes left out of
    the map comparison (hxdp.mapdump.SkipBytes: the time a program stored, say). `maps_at_end`: compare the maps
    once, after the whole trace (as for the RTL), so that the kernel runs the packets back to back: a program that
    reads the time (Katran's new-connection rate) sees the same gaps between packets as on the NIC, not the time
    the map dumps take."""
    from hxdp.fib.netns import netns
    from hxdp.frontend.sizing import config_inner, config_sizes
    from hxdp.linux.dispatcher import KernelChain

    obj = Path(obj)
    cfg = cfg or {"maps": {}}
    sizes = {**config_sizes(cfg, cfg_source or "map config"), **(sizes or {})}
    inner = config_inner(cfg, cfg_source or "map config")
    if inner and chain is not None:
        raise HxdpError(f"{cfg_source or 'map config'}: not supported: \"inner_maps\" with --chain, because the "
                        "dispatcher's loader creates no inner maps (static `.values` slots work)")
    report = DiffReport(engine)
    runner = _EngineRunner(engine, obj, section, prog, cfg, compile_options, cfg_source, sizes, chain, fib, inner)
    batch = runner.run_all(packets, ingress_ifindex)
    oracle: Any = KernelChain([(obj, prog), *chain.links], chain.actions, sizes) if chain is not None else \
        _kernel_program(obj, section, prog, sizes, inner)
    with netns(fib.netns if fib is not None else None), oracle as kernel:
        kernel.apply_config(cfg, source=cfg_source)
        maps_before = kernel.dump()
        # the PROG_ARRAY entries the configuration sets: programs never change them (the verifier forbids it)
        progs = {n: e for n, e in cfg.get("maps", {}).items() if n in kernel.maps and n not in maps_before}
        indices: Iterable[int] = range(len(packets))
        if progress is not None:
            indices = progress(indices)
        for i in indices:
            pkt = packets[i]
            kres = kernel.run(pkt, ingress_ifindex=ingress_ifindex)
            eres = batch[i] if batch is not None else runner.run(pkt, ingress_ifindex)
            report.packets += 1
            report.actions[kres.action] = report.actions.get(kres.action, 0) + 1
            div = compare(i, kres, eres)
            report.events += len(kres.events) if div is None else 0
            kmaps: MapDump | None = None
            if div is None and batch is None and not maps_at_end:
                kmaps, emaps = kernel.dump(), runner.dump()
                lines = map_diff(masked(kmaps, skip or []), masked(emaps, skip or []))
                if lines:
                    div = Divergence(i, "map", "see detail", "see detail", lines)
            if div is not None:
                report.divergence = div
                if repro_dir is not None:
                    # the RTL's maps_before is the initial state: its reproducer is the whole trace
                    trace = list(packets) if batch is not None else list(packets[: i + 1]) if maps_at_end else [pkt]
                    _try_repro(Path(repro_dir), obj, trace, maps_before, report, section, prog, sizes, progs, fib,
                               ingress_ifindex, _maps_of_maps(kernel, cfg))
                return report
            if kmaps is not None:
                maps_before = kmaps
        if batch is not None or maps_at_end:
            lines = map_diff(masked(kernel.dump(), skip or []), masked(runner.dump(), skip or []))
            if lines:
                report.divergence = Divergence(len(packets) - 1, "map", "see detail", "see detail",
                                               ["(maps compared after the whole trace)"] + lines)
                if repro_dir is not None:
                    _try_repro(Path(repro_dir), obj, list(packets), maps_before, report, section, prog, sizes,
                               progs, fib, ingress_ifindex, _maps_of_maps(kernel, cfg))
    return report


def _maps_of_maps(kernel: Any, cfg: dict[str, Any]) -> tuple[set[str], dict[str, Any]]:
    """The kernel oracle's maps of maps by name, and the configuration's "inner_maps" (for a reproducer)."""
    from hxdp.linux.kernel import MAP_IN_MAP_TYPES

    maps = getattr(kernel, "maps", {})
    return {n for n, m in maps.items() if m.type in MAP_IN_MAP_TYPES}, cfg.get("inner_maps") or {}


def _try_repro(folder: Path, obj: Path, packets: list[bytes], maps_before: MapDump, report: DiffReport,
               section: str | None, prog: str | None, sizes: dict[str, int] | None,
               prog_entries: dict[str, list] | None = None, fib: Fib | None = None, ingress_ifindex: int = 1,
               inner: tuple[set[str], dict[str, Any]] = (set(), {})) -> None:
    """Write the reproducer; a failure is noted in the report, which keeps the divergence to print. `inner`: the
    maps of maps (their slots come from the object and the configuration's "inner_maps", not from a dump)."""
    outer, inner_maps = inner
    maps_before = {n: e for n, e in maps_before.items() if n not in outer}
    try:
        write_repro(folder, obj, packets, maps_before, report, section, prog, sizes, prog_entries, fib,
                    ingress_ifindex, inner_maps)
        report.repro = str(folder)
    except (OSError, HxdpError) as exc:
        report.repro_error = str(exc)
