"""The RTL as yosys synthesises it (block-RAM reads at the falling clock edge) against the fast simulation build
(the same words read combinationally, SEPH_COMB_READS): packet for packet the same rows, registers, stores,
cycles, per-packet stamps and map memory, on the bundled programs that use the map memory most."""

from __future__ import annotations

import pytest
from rtl_support import first_divergence, require_rtl

from hxdp.compiler import compile_program
from hxdp.models.maps import MapState
from hxdp.rtl import sim as rtl
from hxdp.rtl.sim import RtlSim
from hxdp.suite import programs
from hxdp.traffic.pcap import read_pcap

pytestmark = pytest.mark.rtl

MAP_HEAVY = ("l4_load_balancer", "simple_firewall", "xdp_router_ipv4", "map_access_k16", "xdp_redirect_map")
SUITE = [p for p in programs() if p.name in MAP_HEAVY]
PACKETS = 60


@pytest.fixture(scope="module")
def structural_exe():
    require_rtl()
    return rtl.build(structural=True)


def test_the_structural_build_is_another_binary(structural_exe) -> None:
    assert structural_exe != rtl.build()
    assert "-DSEPH_COMB_READS" in rtl.BUILD_FLAGS and "-DSEPH_COMB_READS" not in rtl.STRUCTURAL_FLAGS


@pytest.mark.parametrize("prog", SUITE, ids=[p.name for p in SUITE])
def test_structural_rtl_equals_the_fast_build(prog, structural_exe) -> None:
    if not prog.obj.exists():
        pytest.skip(f"{prog.obj} not built (run `make progs`)")
    res = compile_program(prog.load())
    frames = read_pcap(prog.traffic)
    packets = [frames[i % len(frames)] for i in range(PACKETS)]
    states = [MapState(res.layout), MapState(res.layout)]
    for st in states:
        st.apply_config(prog.map_config())
    fast = RtlSim(res.rom, res.layout, states[0], trace=True)
    slow = RtlSim(res.rom, res.layout, states[1], trace=True, exe=structural_exe)
    got_fast, got_slow = fast.run_packets(packets), slow.run_packets(packets)
    for i, (a, b) in enumerate(zip(got_fast, got_slow, strict=True)):
        div = first_divergence(b.trace, a.trace)
        assert div is None, f"{prog.name} packet {i}: {div}"
        assert (b.action, b.packet, b.redirect, b.cycles, b.meta, b.fault) == \
            (a.action, a.packet, a.redirect, a.cycles, a.meta, a.fault), f"{prog.name} packet {i}"
    assert slow.stamps == fast.stamps, f"{prog.name}: per-packet cycle stamps differ"
    assert states[1].dump() == states[0].dump(), f"{prog.name}: map contents differ"
