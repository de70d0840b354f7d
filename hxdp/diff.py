"""Differential verification: run a program on one of our engines and in the Linux kernel, packet by packet."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hxdp.errors import HxdpError
from hxdp.result import RunResult

ENGINES = ("seq-model", "vliw-model", "rtl")

MapDump = dict[str, dict[bytes, bytes]]


@dataclass
class Divergence:
    """The first point where the engine and the kernel part."""

    packet: int
    what: str  # "action", "bytes", "meta", "map"
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
        for key in sorted(set(e) | set(g)):
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
    """The first field of one packet's result where the engine and the kernel differ: action, bytes, then XDP
    metadata (data_meta..data; `meta` False when one side does not report it). The single comparison of
    `hxdp diff` and `hxdp fuzz`, so that a fuzz reproducer shows its divergence when run alone."""
    fault = [f"engine fault: {engine.fault}"] if engine.fault else []
    if (kernel.action & 0xFFFFFFFF) != (engine.action & 0xFFFFFFFF):
        return Divergence(index, "action", str(kernel.action), str(engine.action), fault)
    if kernel.packet != engine.packet:
        return Divergence(index, "bytes", f"{len(kernel.packet)} bytes", f"{len(engine.packet)} bytes",
                          byte_diff(kernel.packet, engine.packet) + fault)
    if meta and kernel.meta != engine.meta:
        return Divergence(index, "meta", kernel.meta.hex() or "-", engine.meta.hex() or "-", fault)
    return None


def dump_to_config(dump: MapDump) -> dict[str, Any]:
    return {"maps": {name: [{"key": k.hex(), "value": v.hex()} for k, v in sorted(entries.items())]
                     for name, entries in sorted(dump.items())}}


def write_repro(folder: Path, obj: Path, packets: list[bytes], maps_before: MapDump, report: DiffReport,
                section: str | None, prog: str | None, sizes: dict[str, int] | None = None) -> None:
    """A self-contained reproducer: the object, the packets, the map contents before the first of them, and the
    command. The models' reproducer is the divergent packet alone (with the maps just before it); the RTL runs a
    trace back to back, where a packet's result may depend on the packets around it in the pipeline, so its
    reproducer is the whole trace from the initial maps."""
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
    if sizes:
        config["max_entries"] = dict(sorted(sizes.items()))
    write_atomic(folder / "maps.json", json.dumps(config, indent=1) + "\n")
    sel = (f" --section {section}" if section else "") + (f" --prog {prog}" if prog else "")
    where = ""
    if len(packets) > 1 and report.divergence:
        where = (f"(the divergence is at packet {report.divergence.packet} of these {len(packets)}: the RTL runs "
                 f"them back to back, from the maps in maps.json)\n")
    write_atomic(folder / "README.txt",
        f"{report.divergence.render() if report.divergence else ''}\n\nreproduce with:\n"
        f"  hxdp diff {obj.name}{sel} --pcap packet.pcap --maps maps.json --engine {report.engine}\n{where}"
    )


class _EngineRunner:
    """Runs packets one at a time on an engine and exposes its map contents."""

    def __init__(self, engine: str, obj: Path, section: str | None, prog: str | None, cfg: dict[str, Any],
                 compile_options: Any = None, cfg_source: str | None = None,
                 sizes: dict[str, int] | None = None) -> None:
        from hxdp.frontend.elf import load_program
        from hxdp.models.maps import MapState

        self.engine = engine
        program = load_program(obj, section=section, prog=prog, sizes=sizes)
        if engine == "seq-model":
            from hxdp.models.seq import SeqModel

            self.state = MapState.for_program(program)
            self.state.apply_config(cfg, source=cfg_source)
            self.model: Any = SeqModel(program, self.state)
        elif engine in ("vliw-model", "rtl"):
            from hxdp.compiler import compile_program

            result = compile_program(program, compile_options)
            self.state = MapState(result.layout)
            self.state.apply_config(cfg, source=cfg_source)
            if engine == "vliw-model":
                from hxdp.models.vliw import VliwModel

                self.model = VliwModel(result.rom, self.state)
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


def run_diff(obj: str | Path, packets: list[bytes], cfg: dict[str, Any] | None = None, engine: str = "vliw-model",
             section: str | None = None, prog: str | None = None, ingress_ifindex: int = 1,
             repro_dir: str | Path | None = None, compile_options: Any = None,
             progress: Callable[[Iterable[int]], Iterable[int]] | None = None,
             cfg_source: str | None = None, sizes: dict[str, int] | None = None) -> DiffReport:
    """Compare every packet's action, bytes and (models: after every packet; RTL: at the end) map contents.

    cfg_source names the map configuration (its file) in error messages; sizes are the maps' max_entries set at
    load time (both sides), over the configuration's own "max_entries"."""
    from hxdp.frontend.sizing import config_sizes
    from hxdp.linux.kernel import KernelProgram

    obj = Path(obj)
    cfg = cfg or {"maps": {}}
    sizes = {**config_sizes(cfg, cfg_source or "map config"), **(sizes or {})}
    report = DiffReport(engine)
    runner = _EngineRunner(engine, obj, section, prog, cfg, compile_options, cfg_source, sizes)
    batch = runner.run_all(packets, ingress_ifindex)
    with KernelProgram(obj, section=section, prog=prog, sizes=sizes) as kernel:
        kernel.apply_config(cfg, source=cfg_source)
        maps_before = kernel.dump()
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
            kmaps: MapDump | None = None
            if div is None and batch is None:
                kmaps, emaps = kernel.dump(), runner.dump()
                lines = map_diff(kmaps, emaps)
                if lines:
                    div = Divergence(i, "map", "see detail", "see detail", lines)
            if div is not None:
                report.divergence = div
                if repro_dir is not None:
                    # the RTL's maps_before is the initial state: its reproducer is the whole trace
                    trace = list(packets) if batch is not None else [pkt]
                    _try_repro(Path(repro_dir), obj, trace, maps_before, report, section, prog, sizes)
                return report
            if kmaps is not None:
                maps_before = kmaps
        if batch is not None:
            lines = map_diff(kernel.dump(), runner.dump())
            if lines:
                report.divergence = Divergence(len(packets) - 1, "map", "see detail", "see detail",
                                               ["(RTL maps compared after the whole trace)"] + lines)
                if repro_dir is not None:
                    _try_repro(Path(repro_dir), obj, list(packets), maps_before, report, section, prog, sizes)
    return report


def _try_repro(folder: Path, obj: Path, packets: list[bytes], maps_before: MapDump, report: DiffReport,
               section: str | None, prog: str | None, sizes: dict[str, int] | None) -> None:
    """Write the reproducer; a failure is noted in the report, which keeps the divergence to print."""
    try:
        write_repro(folder, obj, packets, maps_before, report, section, prog, sizes)
        report.repro = str(folder)
    except (OSError, HxdpError) as exc:
        report.repro_error = str(exc)
