"""Several Sephirot cores in the RTL (execution contract section 8): the same outputs in arrival order as one core,
fewer cycles per packet back to back, map rows atomic across cores, get_smp_processor_id, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import compile_bpf
from rtl_support import first_divergence, require_rtl

from hxdp import params
from hxdp.cli import main
from hxdp.compiler import compile_program
from hxdp.frontend.elf import load_program
from hxdp.models.maps import MapState
from hxdp.models.multicore import MulticoreModel
from hxdp.models.vliw import VliwModel
from hxdp.paths import ROMS_DIR
from hxdp.rtl import sim as rtl
from hxdp.rtl.sim import RtlError, RtlSim
from hxdp.suite import programs
from hxdp.traffic.pcap import read_pcap, write_pcap

pytestmark = pytest.mark.rtl

RACE = Path(__file__).parent / "data" / "rtl_cores" / "race.c"
CLOCK = Path(__file__).parent / "data" / "rtl_cores" / "clock.c"
# drop, tx, redirect and redirect_map programs, and the forwarding programs with per-CPU counters; not
# simple_firewall, whose replies look up the flow their request creates: back to back on several cores a reply may
# run before its request's update, as on two Linux CPUs (the contract's race, section 8)
SAME = ("xdp_drop", "xdp_tx", "xdp_redirect", "xdp_redirect_map", "xdp_router_ipv4", "xdp_tx_iptunnel",
        "l4_load_balancer")
PACKETS = 48


def _suite(name: str):
    prog = {p.name: p for p in programs()}[name]
    if not prog.obj.exists():
        pytest.skip(f"{prog.obj} not built (run `make progs`)")
    return prog


def _summed(values: list[bytes]) -> bytes:
    """Per-CPU values summed across the cores, word by word (the counters of a struct; 4-byte words if its size
    asks)."""
    w = 8 if len(values[0]) % 8 == 0 else 4
    return b"".join((sum(int.from_bytes(v[i : i + w], "little") for v in values) % (1 << 8 * w)).to_bytes(w, "little")
                    for i in range(0, len(values[0]), w))


def _run(prog, res, packets: list[bytes], cores: int) -> tuple[list, dict, list]:
    """Per-packet results, the maps after the run (per-CPU arrays summed across the cores) and the stamps."""
    state = MapState(res.layout)
    state.apply_config(prog.map_config())
    sim = RtlSim(res.rom, res.layout, state, cores=cores)
    results = sim.run_packets(packets)
    maps = sim.dump_per_cpu() if cores > 1 else state.dump()
    for r in sim.percpu:
        maps[r.name] = {k: _summed(v) for k, v in maps[r.name].items()}
    maps = {name: dict(entries) for name, entries in maps.items()}
    return results, maps, sim.stamps


def _require(cores: int) -> None:
    require_rtl()
    rtl.build(cores=cores)


@pytest.mark.parametrize("cores", [2, 4])
@pytest.mark.parametrize("name", SAME)
def test_same_outputs_in_arrival_order(name: str, cores: int) -> None:
    prog = _suite(name)
    _require(cores)
    res = compile_program(prog.load())
    traffic = read_pcap(prog.traffic)
    packets = [traffic[i % len(traffic)] for i in range(PACKETS)]
    one, maps_one, _ = _run(prog, res, packets, 1)
    many, maps_many, stamps = _run(prog, res, packets, cores)
    # (xdp_drop's one row ends before the input brings the next frame, and its dropped frames leave no output to
    # wait for: core 0 takes every packet, as the contract's dispatcher does)
    assert len({s.core for s in stamps}) > (name != "xdp_drop"), f"{name}: every packet ran on one core of {cores}"
    for i, (a, b) in enumerate(zip(one, many, strict=True)):
        assert (a.action, a.packet, a.redirect, a.host, a.cycles, a.meta, a.printk) == \
            (b.action, b.packet, b.redirect, b.host, b.cycles, b.meta, b.printk), f"{name} packet {i} on {cores} cores"
    assert maps_one == maps_many, f"{name}: maps differ on {cores} cores"
    outs = [s.out for s in stamps]
    assert outs == sorted(outs), f"{name}: frames left out of arrival order on {cores} cores: {outs}"


def _steady(stamps: list) -> float:
    half = len(stamps) // 2
    ends = sorted(s.end for s in stamps)
    return (ends[-1] - ends[half - 1]) / (len(stamps) - half)


def _cycles_per_packet(name: str, cores: int, frame: int = 0) -> float:
    """Steady-state cycles per packet of one frame of the program's traffic (cut to 64 bytes) back to back."""
    prog = _suite(name)
    _require(cores)
    res = compile_program(prog.load())
    _, _, stamps = _run(prog, res, [read_pcap(prog.traffic)[frame][:64]] * PACKETS, cores)
    return _steady(stamps)


@pytest.mark.parametrize("name", ["xdp_redirect_map", "l4_load_balancer", "xdp_router_ipv4"])
def test_fewer_cycles_per_packet_back_to_back(name: str) -> None:
    cycles = {cores: _cycles_per_packet(name, cores) for cores in (1, 2, 4)}
    assert cycles[1] > cycles[2] > cycles[4], f"{name}: cycles per packet on 1, 2, 4 cores: {cycles}"


@pytest.mark.parametrize("name", ["xdp_drop", "xdp_tx", "xdp_redirect", "xdp_redirect_map"])
def test_line_rate_on_four_cores(name: str) -> None:
    # 4x10G for 64-byte frames: at most 2.625 cycles a packet across the cores (issue 26); xdp_redirect_map's
    # per-CPU counter and redirect_map rows take the map grant shared, so its cores run them together
    assert _cycles_per_packet(name, 4) <= 2.625


def _against_model(rom, layout, packets: list[bytes], cores: int, config=None, waits: bool | None = True):
    """The RTL's per-packet core, start and end cycles are the multi-core VLIW model's (contract section 8), shifted
    by the cycles the input register and the packet buffer's write take before a packet's first row (the RTL's
    start of packet 0); actions, cycles and the maps (core 0's per-CPU copies) equal. waits: some row waits for the
    map grant (else none: every row touching the maps takes it shared; None: either). Returns the model's run."""
    rtl_state, model_state = MapState(layout), MapState(layout)
    if config is not None:
        rtl_state.apply_config(config)
        model_state.apply_config(config)
    sim = RtlSim(rom, layout, rtl_state, cores=cores)
    results = sim.run_packets(packets)
    run = MulticoreModel(rom, model_state, cores).run(packets)
    s0 = sim.stamps[0].start
    got = [(s.core, s.start - s0, s.end - s0, r.action, r.cycles) for s, r in zip(sim.stamps, results, strict=True)]
    want = [(f.core, f.start, f.end, f.result.action, f.result.cycles) for f in run.frames]
    assert got == want
    assert rtl_state.dump() == model_state.dump()
    if waits:
        assert sum(f.waits for f in run.frames) > 0, "no row waited for the map grant: the test shows nothing"
    elif waits is not None:
        assert all(f.waits == 0 for f in run.frames), "a row waited for the map grant"
    return run


# the grant, its round robin, spin locks (flow_meter), hash updates racing (the firewall's flows: exclusive rows
# waiting), per-CPU copies and shared rows only (redirect_map, router: their rows read the maps or write per-CPU
# counters, and no row waits)
@pytest.mark.parametrize("cores", [2, 4])
@pytest.mark.parametrize(("name", "waits"), [("xdp_redirect_map", False), ("xdp_flow_meter", True),
                                             ("xdp_router_ipv4", False), ("simple_firewall", True)])
def test_cycles_equal_the_multicore_model(name: str, waits: bool, cores: int) -> None:
    prog = _suite(name)
    _require(cores)
    res = compile_program(prog.load())
    traffic = read_pcap(prog.traffic)
    _against_model(res.rom, res.layout, [traffic[i % len(traffic)] for i in range(PACKETS)], cores,
                   prog.map_config(), waits)


# rows waiting for packet bytes (contract section 6; issue 26): a first frame meeting the previous packet's store row
# in the write buffer (xdp_tx, the tunnel, the load balancer), loads and map keys of bytes not in yet (map_access,
# xdp2), adjust_tail's whole packet and zeroing (xdp_adjust_tail); on one core the input filling three packet buffers
# ahead of the core, a long frame's output holding one back (xdp2: no row waits there, the input does)
BYTE_WAITS = ["l4_load_balancer", "map_access_k16", "map_access_k8", "xdp2", "xdp_adjust_tail", "xdp_balancer",
              "xdp_tx", "xdp_tx_iptunnel"]


@pytest.mark.parametrize("cores", [1, 2])
@pytest.mark.parametrize("name", BYTE_WAITS)
def test_packet_byte_waits_equal_the_multicore_model(name: str, cores: int) -> None:
    prog = _suite(name)
    _require(cores)
    res = compile_program(prog.load())
    refusal = rtl.cores_refusal(res.layout, cores)
    if refusal is not None:
        pytest.skip(refusal)
    traffic = read_pcap(prog.traffic)
    run = _against_model(res.rom, res.layout, [traffic[i % len(traffic)] for i in range(PACKETS)], cores,
                         prog.map_config(), waits=None)
    if (name, cores) != ("xdp2", 1):
        assert sum(f.byte_waits for f in run.frames) > 0, f"{name}: no row waited for packet bytes"


@pytest.mark.parametrize("cores", [2, 4])
@pytest.mark.parametrize(("tier", "placed"), [("qdr", ("fw_config", "flows")), ("ddr", ("flows",))])
def test_firewall_off_chip_cycles_equal_the_multicore_model(tier: str, placed: tuple[str, ...], cores: int) -> None:
    prog = _suite("simple_firewall")
    _require(cores)
    program = prog.load()
    for m in program.maps:
        if m.name in placed:
            m.tier = tier
    res = compile_program(program)
    traffic = read_pcap(prog.traffic)
    _against_model(res.rom, res.layout, [traffic[i % len(traffic)] for i in range(PACKETS)], cores,
                   prog.map_config())


@pytest.fixture(scope="module")
def race(tmp_path_factory: pytest.TempPathFactory):
    return compile_program(load_program(str(compile_bpf(RACE, tmp_path_factory.mktemp("race")))))


@pytest.mark.parametrize("cores", [2, 4])
def test_race_on_one_bucket_and_one_counter(race, cores: int) -> None:
    _require(cores)
    packets = [bytes([i % 2, i]) + bytes(62) for i in range(PACKETS)]
    state = MapState(race.layout)
    sim = RtlSim(race.rom, race.layout, state, cores=cores)
    results = sim.run_packets(packets)
    assert all(r.action == params.XDP_TX for r in results)
    # get_smp_processor_id: the core that ran the packet, several of them
    assert [r.packet[0] for r in results] == [s.core for s in sim.stamps]
    assert len({s.core for s in sim.stamps}) > 1
    dump = state.dump()
    (totals,) = dump["totals"].values()
    # the atomic counter and the counter under the spin lock are exact (bpf_spin_lock takes 4 bytes, then padding)
    locked, atomic = int.from_bytes(totals[8:16], "little"), int.from_bytes(totals[16:24], "little")
    assert (locked, atomic) == (PACKETS, PACKETS)
    # the hash: one entry per flow key, as after the packets one after another in some order (the last packet of a
    # flow to run its update wins)
    last = {int.from_bytes(k, "little"): int.from_bytes(v, "little") for k, v in dump["last"].items()}
    assert set(last) == {0, 1}
    for key, seq in last.items():
        assert seq in {i for i in range(PACKETS) if i % 2 == key}


@pytest.mark.parametrize("cores", [2, 4])
def test_per_cpu_counters_per_core(cores: int) -> None:
    # xdp1 counts every packet in its per-CPU array rxcnt (one u64 per protocol): each core counts its own packets
    prog = _suite("xdp1")
    _require(cores)
    res = compile_program(prog.load())
    traffic = read_pcap(prog.traffic)
    packets = [traffic[i % len(traffic)] for i in range(PACKETS)]
    _, maps_one, _ = _run(prog, res, packets, 1)
    state = MapState(res.layout)
    state.apply_config(prog.map_config())
    sim = RtlSim(res.rom, res.layout, state, cores=cores)
    sim.run_packets(packets)
    per_cpu = sim.dump_per_cpu()["rxcnt"]
    ran = [sum(s.core == k for s in sim.stamps) for k in range(cores)]
    assert sum(1 for n in ran if n) > 1, f"every packet ran on one core: {ran}"
    counts = {key: [int.from_bytes(v, "little") for v in values] for key, values in per_cpu.items()}
    assert [sum(c[k] for c in counts.values()) for k in range(cores)] == ran
    assert {key: sum(c) for key, c in counts.items()} == \
        {key: int.from_bytes(v, "little") for key, v in maps_one["rxcnt"].items()}


def test_per_cpu_hash_refused() -> None:
    layout = type("Layout", (), {"regions": [type("Region", (), {"name": "h", "kind": "percpu_hash"})()]})()
    assert "percpu_hash" in rtl.cores_refusal(layout, 2)
    assert rtl.cores_refusal(layout, 1) is None


@pytest.mark.parametrize("cores", [0, params.CORES_MAX + 1])
def test_core_count_refused(cores: int) -> None:
    with pytest.raises(RtlError, match="1 to 8 cores"):
        rtl.cores_flags(cores)


def test_hxdp_run_on_cores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _require(2)
    pcap = tmp_path / "in.pcap"
    write_pcap(pcap, [bytes(range(64))] * 8)
    assert main(["run", str(ROMS_DIR / "xdp_tx.rom"), "--pcap", str(pcap), "--cores", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["cores"] == 2
    assert {p["core"] for p in doc["packets"]} == {0, 1}
    assert [p["action_name"] for p in doc["packets"]] == ["TX"] * 8
    outs = [p["out_cycle"] for p in doc["packets"]]
    assert outs == sorted(outs)


@pytest.mark.parametrize("cores", [2, 4])
def test_race_cycles_equal_the_multicore_model(race, cores: int) -> None:
    # (on four cores a first frame meets its core's last store row and waits a cycle in the write buffer, and the
    # grant's order follows it: the model counts that wait too)
    _require(cores)
    _against_model(race.rom, race.layout, [bytes([i % 2, i]) + bytes(62) for i in range(PACKETS)], cores)


@pytest.mark.parametrize("name", ["xdp_redirect", "xdp_sock_steer"])
def test_trace_per_core(name: str, tmp_path: Path) -> None:
    # each core's rows reach the trace with its packet (and the core's number on the line): every packet's trace
    # is the VLIW model's, row for row
    prog = _suite(name)
    _require(2)
    res = compile_program(prog.load())
    traffic = read_pcap(prog.traffic)
    packets = [traffic[i % len(traffic)][:64] for i in range(16)]
    state = MapState(res.layout)
    state.apply_config(prog.map_config())
    sim = RtlSim(res.rom, res.layout, state, cores=2, trace_file=tmp_path / "trace.txt")
    got = sim.run_packets(packets)
    cores = {int(line.split("|")[0].split()[6]) for line in (tmp_path / "trace.txt").read_text().splitlines()}
    assert cores == {0, 1}
    model_state = MapState(res.layout)
    model_state.apply_config(prog.map_config())
    vm = VliwModel(res.rom, model_state, trace=True)
    for i, pkt in enumerate(packets):
        div = first_divergence(got[i].trace, vm.run(pkt).trace)
        assert div is None, f"{name} packet {i}: {div}"


@pytest.mark.parametrize("cores", [2, 4])
@pytest.mark.parametrize("tier", ["qdr", "ddr"])
def test_race_off_chip(tier: str, cores: int, tmp_path: Path) -> None:
    # the maps off chip: the lanes' port (the counters, the spin lock's section) and the map unit's (the hash) are
    # shared like the map memory; the counters exact, the cycles the model's
    _require(cores)
    program = load_program(str(compile_bpf(RACE, tmp_path)))
    for m in program.maps:
        m.tier = tier
    res = compile_program(program)
    assert {r.tier for r in res.layout.regions} == {tier}
    packets = [bytes([i % 2, i]) + bytes(62) for i in range(PACKETS)]
    state = MapState(res.layout)
    RtlSim(res.rom, res.layout, state, cores=cores).run_packets(packets)
    (totals,) = state.dump()["totals"].values()
    assert (int.from_bytes(totals[8:16], "little"), int.from_bytes(totals[16:24], "little")) == (PACKETS, PACKETS)
    _against_model(res.rom, res.layout, packets, cores)


@pytest.mark.parametrize("cores", [2, 4])
def test_ktime_reads_the_shared_clock(cores: int, tmp_path: Path) -> None:
    # ktime_get_ns: the shared clock's cycle in which its row starts (contract section 8), as the model's
    _require(cores)
    res = compile_program(load_program(str(compile_bpf(CLOCK, tmp_path))))
    packets = [bytes(64)] * PACKETS
    sim = RtlSim(res.rom, res.layout, MapState(res.layout), cores=cores)
    got = [r.packet[:8] for r in sim.run_packets(packets)]
    run = MulticoreModel(res.rom, MapState(res.layout), cores).run(packets)
    assert got == [f.result.packet[:8] for f in run.frames]
    assert len(set(got)) == PACKETS
