"""Records to the host on several cores (docs/execution_contract.md section 8, "Events"): each packet's records as on
one core, perf records on the core's CPU, a ring's reservations in the core's own copy of its region, and the records
of all cores in the order their rows ran (MulticoreRun.events)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from bpf_asm import row, stx
from conftest import compile_bpf

from hxdp import params, suite
from hxdp.cli import main
from hxdp.diff import _EngineRunner
from hxdp.events import read_event_lines
from hxdp.frontend.program import MapDef
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapState
from hxdp.models.multicore import MulticoreModel, MulticoreRun
from hxdp.models.vliw import VliwModel
from hxdp.paths import ROMS_DIR
from hxdp.traffic.pcap import read_pcap

EVENTS = Path(__file__).parent / "data" / "multicore" / "events.c"


@pytest.fixture(scope="module")
def events_obj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_bpf(EVENTS, tmp_path_factory.mktemp("events"))


def event_frames(n: int, seed: int = 5, sizes: tuple[int, ...] = (62, 100, 200)) -> list[bytes]:
    """Frames of `sizes` bytes cycling through events.c's four cases (byte 0 & 3), byte 1 random (discards)."""
    rng = random.Random(seed)
    return [bytes([i % 4, rng.randrange(256)]) + rng.randbytes(rng.choice(sizes) - 2) for i in range(n)]


def run_on(obj: Path, packets: list[bytes], cores: int, cfg: dict | None = None, prog: str | None = None,
           sizes: dict | None = None) -> tuple[MulticoreRun, dict]:
    r = _EngineRunner("vliw-model", obj, None, prog, cfg or {"maps": {}}, sizes=sizes)
    model = MulticoreModel(r.model.rom, r.state, cores)
    return model.run(packets), model.dump()


def per_packet(run: MulticoreRun) -> list[list[tuple[str, str, bytes]]]:
    return [[(e.kind, e.map, e.data) for e in f.result.events] for f in run.frames]


@pytest.mark.parametrize("cores", [2, 4])
def test_records_per_packet_as_on_one_core(events_obj: Path, cores: int) -> None:
    """Every packet sends the records it sends on one core; a perf record is on its core's CPU (BPF_F_CURRENT_CPU),
    a ring record 0's. Packets of case 3 hold a reservation while other cores reserve theirs: a ring region shared by
    the cores without per-core copies would mix their records."""
    packets = event_frames(48)
    one, _ = run_on(events_obj, packets, 1)
    many, _ = run_on(events_obj, packets, cores)
    assert per_packet(many) == per_packet(one)
    assert sum(map(len, per_packet(one))) > len(packets) // 2
    for f in many.frames:
        assert [e.cpu for e in f.result.events] == [f.core if e.kind == "perf" else 0 for e in f.result.events]
    assert {f.core for f in many.frames} == set(range(cores))


def test_records_in_the_order_their_rows_ran(events_obj: Path) -> None:
    """MulticoreRun.events: all cores' records by the cycle their row ended, each cycle once (event rows hold the
    grant exclusive); the packets' records interleave (a later packet's record before an earlier one's)."""
    run, _ = run_on(events_obj, event_frames(48), 4)
    order = run.events
    cycles = [e.cycle for e in order]
    assert cycles == sorted(cycles) and len(set(cycles)) == len(cycles) and cycles[0] >= 0
    packets = [e.packet for e in order]
    assert packets != sorted(packets)
    assert sorted(packets) == [f.index for f in run.frames for _ in f.result.events]


def test_perf_array_of_size_zero_has_a_slot_per_possible_cpu(events_obj: Path) -> None:
    r = _EngineRunner("vliw-model", events_obj, None, None, {"maps": {}})
    perf = next(x for x in r.state.layout.regions if x.kind == "perf_event_array")
    assert perf.max_entries == params.EVENT_CPUS == params.CORES_MAX


def test_flowevents_on_two_cores_as_on_one() -> None:
    """The bundled ring buffer program: records per packet and the final maps equal one core's on 2 cores (its
    flows' packets are far enough apart in its traffic for no insert race)."""
    sp = suite.program("xdp_flowevents")
    packets = read_pcap(sp.traffic)
    one, maps1 = run_on(sp.obj, packets, 1, sp.map_config(), sp.prog, sp.sizes())
    two, maps2 = run_on(sp.obj, packets, 2, sp.map_config(), sp.prog, sp.sizes())
    assert per_packet(two) == per_packet(one) and maps2 == maps1
    assert {f.core for f in two.frames if f.result.events} == {0, 1}


def test_pktcap_sequence_race_on_two_cores() -> None:
    """xdp_pktcap reads its sequence number, then adds 1: two cores read the same number (as two Linux CPUs can),
    so records carry a repeated sequence number while the counter, added atomically, counts every frame."""
    sp = suite.program("xdp_pktcap")
    packets = read_pcap(sp.traffic)
    two, maps = run_on(sp.obj, packets, 2, sp.map_config(), sp.prog, sp.sizes())
    seqs = [int.from_bytes(f.result.events[0].data[12:16], "little") for f in two.frames]
    assert len(set(seqs)) < len(seqs)
    assert int.from_bytes(maps["sequence"][bytes(4)], "little") == len(packets)
    assert {e.cpu for e in two.events} == {0, 1}


def test_cli_run_writes_the_records_of_all_cores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`hxdp run ROM --engine vliw-model --cores 4 --events FILE`: xdp_pktcap's records in the order they left, each
    on its core's CPU (the JSON lines `hxdp events` reads)."""
    sp = suite.program("xdp_pktcap")
    out = tmp_path / "ev.jsonl"
    assert main(["run", str(ROMS_DIR / "xdp_pktcap.rom"), "--pcap", str(sp.traffic), "--engine", "vliw-model",
                 "--cores", "4", "--events", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    events = read_event_lines(out.read_text())
    core = {p["packet"]: p["core"] for p in doc["packets"]}
    assert doc["summary"]["events"] == len(events) == len(core)
    assert [e.cpu for e in events] == [core[e.packet] for e in events] and len({e.cpu for e in events}) == 4


@pytest.mark.parametrize("kind,mode", [("ringbuf", "apart"), ("array", "write")])
def test_a_store_into_a_ring_record_is_apart(kind: str, mode: str) -> None:
    """A lane store inside a ring's region writes the core's own copy (a reserved record): it takes the grant apart,
    as a per-CPU store (sephirot_percpu marks those lanes alike); the same store into an array is a write."""
    size = (0, 0, 4096) if kind == "ringbuf" else (4, 8, 4)
    state = MapState.from_maps([MapDef("m", params.MAP_TYPE_IDS[kind], *size)])
    region = state.layout.regions[0]
    core = VliwModel(Rom([row(stx("dw", 1, 2, 8))]), state)
    regs = [0] * params.NUM_REGS
    regs[1] = params.MAP_BASE + region.offset + 16
    assert core.grant_mode(0, regs) == mode
