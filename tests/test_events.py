"""Events to the host: perf_event_output and the ring buffer helpers on the models against the kernel, and the
records' rendering (JSON lines, pcap of packet samples)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import compile_bpf
from kernel_fixtures import requires_kernel

from hxdp import params
from hxdp.compiler import compile_program
from hxdp.diff import compare
from hxdp.events import Event, event_lines, perf_padded, same_event, samples
from hxdp.frontend.elf import load_program
from hxdp.models.maps import MapError, MapState
from hxdp.models.seq import SeqModel
from hxdp.models.vliw import VliwModel
from hxdp.result import RunResult

DATA = Path(__file__).parent / "data" / "models"
CUR = 0xFFFFFFFF
E2BIG, EINVAL, EFAULT, EAGAIN = 7, 22, 14, 11
PACKET = bytes(range(64))

# (op, a, b, c): op 0 perf_event_output(flags = b << 32 | a); op 1 b x ringbuf_output(size a, flags c);
# op 2 b x ringbuf_reserve(240, flags c), odd calls discarded
CASES = [(0, CUR, 0, 0), (0, CUR, 14, 0), (0, CUR, 64, 0), (0, CUR, 65, 0), (0, 0, 0, 0), (0, 0, 32, 0),
         (0, 1, 0, 0), (0, 0x80000000, 0, 0), (0, CUR, 0x100000, 0), (0, CUR, 0xFFFFF, 0),
         (1, 240, 17, 0), (1, 8, 16, 0), (1, 0, 3, 0), (1, 16, 2, 4), (1, 16, 2, 1), (1, 16, 2, 2),
         (2, 0, 17, 0), (2, 0, 3, 0), (2, 0, 2, 1)]


@pytest.fixture(scope="module")
def events_obj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_bpf(DATA / "events_kernel.c", tmp_path_factory.mktemp("events"))


def args_config(op: int, a: int, b: int, c: int) -> dict:
    rets = [{"key": f"{i:02x}000000", "value": "00" * 8} for i in range(20)]
    return {"maps": {"args": [{"key": f"{i:02x}000000", "value": v.to_bytes(4, "little").hex()}
                              for i, v in enumerate((op, a, b, c))], "rets": rets}}


def engines(obj: Path) -> dict[str, object]:
    prog = load_program(obj)
    result = compile_program(prog)
    return {"seq-model": SeqModel(prog, MapState(result.layout)),
            "vliw-model": VliwModel(result.rom, MapState(result.layout))}


def rets_of(dump: dict) -> list[int]:
    return [int.from_bytes(dump["rets"][i.to_bytes(4, "little")], "little", signed=True) for i in range(20)]


@requires_kernel
@pytest.mark.kernel
def test_event_helpers_match_kernel(events_obj: Path) -> None:
    from hxdp.linux.kernel import KernelProgram

    models = engines(events_obj)
    with KernelProgram(events_obj) as kp:
        for case in CASES:
            cfg = args_config(*case)
            kp.apply_config(cfg)
            want = kp.run(PACKET)
            kret = rets_of(kp.dump())
            for name, model in models.items():
                model.state.apply_config(cfg)
                got = model.run(PACKET)
                assert got.fault is None, (name, case, got.fault)
                assert compare(0, want, got) is None, (name, case, compare(0, want, got).render())
                assert rets_of(model.state.dump()) == kret, (name, case)
            assert want.events or case[0] != 1 or case[1:] == (16, 2, 4), case  # the cases do send records


def test_return_codes_of_the_cases(events_obj: Path) -> None:
    """The kernel's codes as Linux defines them (the same table the kernel comparison confirms)."""
    model = engines(events_obj)["seq-model"]
    expect = {(0, CUR, 65, 0): -EFAULT, (0, 1, 0, 0): -E2BIG, (0, CUR, 0x100000, 0): -EINVAL,
              (0, CUR, 64, 0): 0}
    for case, code in expect.items():
        model.state.apply_config(args_config(*case))
        model.run(PACKET)
        assert rets_of(model.state.dump())[0] == code, case
    model.state.apply_config(args_config(1, 240, 17, 0))
    res = model.run(PACKET)
    assert rets_of(model.state.dump())[:17] == [0] * 16 + [-EAGAIN]  # 16 x 248 ring bytes, no room for a 17th
    assert len(res.events) == 16 and all(e.size == 240 for e in res.events)
    model.state.apply_config(args_config(2, 0, 17, 0))
    res = model.run(PACKET)
    assert rets_of(model.state.dump())[:17] == [1] * 16 + [-1]  # a discarded record keeps its ring space
    assert [int.from_bytes(e.data[:8], "little") for e in res.events] == list(range(0, 16, 2))


def test_perf_sample_appends_packet_bytes(events_obj: Path) -> None:
    model = engines(events_obj)["vliw-model"]
    model.state.apply_config(args_config(0, CUR, 20, 0))
    res = model.run(PACKET)
    (ev,) = res.events
    assert (ev.kind, ev.map, ev.cpu, ev.ctxlen, ev.size) == ("perf", "perf", 0, 20, 36)
    assert ev.sample() == PACKET[:20] and ev.data[:8] == bytes([1] * 8)


def test_a_whole_frame_fits_a_record(events_obj: Path) -> None:
    """A perf record holds the program's bytes and a whole frame of PKT_MAX_LEN bytes (packet-capture programs)."""
    model = engines(events_obj)["vliw-model"]
    frame = bytes(range(256)) * (params.PKT_MAX_LEN // 256)
    model.state.apply_config(args_config(0, CUR, len(frame), 0))
    res = model.run(frame)
    assert rets_of(model.state.dump())[0] == 0 and res.events[0].sample() == frame
    assert res.events[0].size == 16 + params.PKT_MAX_LEN <= params.EVENT_DATA_MAX


def test_a_ring_is_one_per_packet(events_obj: Path) -> None:
    """The host takes the records after every packet: the next packet finds the whole ring free again."""
    model = engines(events_obj)["vliw-model"]
    model.state.apply_config(args_config(1, 240, 17, 0))
    for _ in range(3):
        assert len(model.run(PACKET).events) == 16


def test_event_maps_have_no_entries(events_obj: Path) -> None:
    state = engines(events_obj)["seq-model"].state
    assert "perf" not in state.dump() and "ring" not in state.dump()
    with pytest.raises(MapError, match="ringbuf has no entries"):
        state.apply_config({"maps": {"ring": [{"key": "", "value": ""}]}})


def test_ringbuf_size_is_checked() -> None:
    from hxdp.frontend.program import MapDef
    from hxdp.models.maplayout import MapLayout

    ring = params.LINUX_MAP_TYPE_IDS["ringbuf"]
    for size in (0, 1000, 4096 + 4096 * 2):
        with pytest.raises(MapError, match="power of two multiple of 4096"):
            MapLayout.from_maps([MapDef("r", ring, 0, 0, size)])
    layout = MapLayout.from_maps([MapDef("r", ring, 0, 0, 8192),
                                  MapDef("p", params.LINUX_MAP_TYPE_IDS["perf_event_array"], 4, 4, 0)])
    assert layout.regions[0].size == 8192 and layout.regions[1].max_entries == params.EVENT_CPUS


def test_compare_finds_a_missing_event() -> None:
    kern = RunResult(2, b"x", events=[Event("ringbuf", "r", 0, b"abc")])
    assert compare(3, kern, RunResult(2, b"x", events=[Event("ringbuf", "r", 0, b"abc")])) is None
    div = compare(3, kern, RunResult(2, b"x"))
    assert div is not None and div.what == "events" and "kernel ringbuf r" in div.detail[0]
    padded = Event("perf", "p", 0, b"\1\2\3\4" + b"\xee" * 0, exact=False)
    assert perf_padded(3) == 4 and same_event(padded, Event("perf", "p", 0, b"\1\2\3"))
    assert not same_event(padded, Event("perf", "p", 0, b"\1\2\4"))


def test_event_lines_and_samples() -> None:
    evs = [Event("perf", "cap", 0, b"\xaa" * 4 + b"\x01\x02", ctxlen=2, packet=5), Event("ringbuf", "r", 0, b"\x07")]
    lines = [json.loads(x) for x in event_lines(evs).splitlines()]
    assert lines[0] == {"packet": 5, "kind": "perf", "map": "cap", "cpu": 0, "size": 6, "data": "aaaaaaaa0102",
                        "ctxlen": 2}
    assert lines[1]["kind"] == "ringbuf" and "ctxlen" not in lines[1]
    assert samples(evs) == [b"\x01\x02"]


@pytest.mark.rtl
def test_event_helpers_rtl_equal_vliw_model(events_obj: Path) -> None:
    """Every case on the RTL: r0s, records, cycles and the ring headers in map memory are the VLIW model's."""
    from rtl_support import require_rtl

    from hxdp.rtl.sim import RtlSim

    require_rtl()
    result = compile_program(load_program(events_obj))
    for case in CASES + [(1, 8, 18, 0), (2, 0, 20, 0)]:  # past EVENT_PACKET_MAX: refused, dropped
        s_rtl, s_vm = MapState(result.layout), MapState(result.layout)
        for s in (s_rtl, s_vm):
            s.apply_config(args_config(*case))
        packets = [PACKET, bytes(range(100, 200))]
        got = RtlSim(result.rom, result.layout, s_rtl).run_packets(packets)
        vm = VliwModel(result.rom, s_vm)
        for i, pkt in enumerate(packets):
            want = vm.run(pkt)
            assert (got[i].action, got[i].fault, got[i].cycles, got[i].events) == \
                (want.action, want.fault, want.cycles, want.events), (case, i)
        assert s_rtl.mem == s_vm.mem, case


@pytest.mark.rtl
def test_run_events_and_the_events_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """hxdp run --events FILE writes the records numbered by packet; hxdp events FILE prints them and writes the
    capture program's packet samples as a pcap."""
    from rtl_support import require_rtl

    from hxdp.cli import main as cli_main
    from hxdp.events import read_event_lines
    from hxdp.suite import programs
    from hxdp.traffic.pcap import read_pcap

    require_rtl()
    prog = {p.name: p for p in programs()}["xdp_pktcap"]
    if not prog.obj.exists():
        pytest.skip(f"{prog.obj} not built (make -C xdp_progs)")
    rom, events, cap = tmp_path / "cap.rom", tmp_path / "ev.jsonl", tmp_path / "cap.pcap"
    assert cli_main(["compile", str(prog.obj), "-o", str(rom)]) == 0
    assert cli_main(["run", str(rom), "--pcap", str(prog.traffic), "--events", str(events)]) == 0
    frames = read_pcap(prog.traffic)
    recs = read_event_lines(events.read_text())
    assert [e.packet for e in recs] == list(range(len(frames)))
    assert [e.sample() for e in recs] == [f[:256] for f in frames]
    capsys.readouterr()
    assert cli_main(["events", str(events), "--pcap", str(cap)]) == 0
    assert capsys.readouterr().out == events.read_text()
    assert read_pcap(cap) == [f[:256] for f in frames]
    events.write_text('{"kind": "perf"}\n')
    assert cli_main(["events", str(events)]) == 1
    assert "ev.jsonl:1: not an event record" in capsys.readouterr().err


@requires_kernel
@pytest.mark.kernel
def test_kernel_run_events_equal_the_models(tmp_path: Path) -> None:
    """hxdp kernel-run --events writes the kernel's ring buffer records: those of the VLIW model, line for line."""
    from hxdp.cli import main as cli_main
    from hxdp.events import run_events
    from hxdp.suite import programs
    from hxdp.traffic.pcap import read_pcap

    prog = {p.name: p for p in programs()}["xdp_flowevents"]
    if not prog.obj.exists():
        pytest.skip(f"{prog.obj} not built (make -C xdp_progs)")
    out = tmp_path / "k.jsonl"
    assert cli_main(["kernel-run", str(prog.obj), "--pcap", str(prog.traffic), "--events", str(out)]) == 0
    result = compile_program(prog.load())
    vm = VliwModel(result.rom, MapState(result.layout))
    want = event_lines(run_events(vm.run(p) for p in read_pcap(prog.traffic)))
    assert out.read_text() == want and want.count("\n") == 12


@requires_kernel
@pytest.mark.kernel
def test_diff_counts_the_events_it_compared() -> None:
    from hxdp.diff import run_diff
    from hxdp.suite import programs
    from hxdp.traffic.pcap import read_pcap

    prog = {p.name: p for p in programs()}["xdp_flowevents"]
    if not prog.obj.exists():
        pytest.skip(f"{prog.obj} not built (make -C xdp_progs)")
    report = run_diff(prog.obj, read_pcap(prog.traffic), prog.map_config(), engine="seq-model")
    assert report.ok and report.events == 12 and report.to_json()["events"] == 12
