"""Bundled XDP programs: the RTL agrees with the VLIW model packet for packet (action, bytes, redirect target, cycles,
metadata, trace_printk records, events to the host) and leaves the same map memory, for every program whose helpers
the hardware implements."""

from __future__ import annotations

import pytest
from rtl_support import first_divergence, require_rtl

from hxdp.compiler import compile_program
from hxdp.models.maps import MapState
from hxdp.models.vliw import VliwModel
from hxdp.rtl.sim import RtlSim
from hxdp.suite import programs
from hxdp.traffic.pcap import read_pcap

pytestmark = pytest.mark.rtl

# lru_hash eviction is not in the hardware map FSM (sephirot/README.md); the suite stays below capacity
NEEDS_MAP_UPDATE: set[str] = set()
FAST = {"simple_firewall", "xdp1", "xdp_router_ipv4", "xdp_redirect_map", "csum_diff_x10", "xdp_adjust_tail",
        "map_access_k16", "xdp_redirect_cpu", "xdp_sock_steer", "xdp_flood", "xdp_map_in_map"}
SUITE = [p if p.name in FAST else pytest.param(p, marks=pytest.mark.slow)
         for p in programs() if p.name not in NEEDS_MAP_UPDATE]
MAX_PACKETS = 40


@pytest.mark.parametrize("prog", SUITE, ids=[getattr(p, "values", [p])[0].name for p in SUITE])
def test_program_rtl_equals_vliw_model(prog) -> None:
    if not prog.obj.exists():
        pytest.skip(f"{prog.obj} not built (run `make progs`)")
    require_rtl()
    res = compile_program(prog.load())
    packets = read_pcap(prog.traffic)[:MAX_PACKETS]
    s_rtl, s_vm = MapState(res.layout), MapState(res.layout)
    s_rtl.apply_config(prog.map_config())
    s_vm.apply_config(prog.map_config())
    got = RtlSim(res.rom, res.layout, s_rtl, trace=True).run_packets(packets)
    vm = VliwModel(res.rom, s_vm, trace=True)
    for i, pkt in enumerate(packets):
        want = vm.run(pkt)
        div = first_divergence(got[i].trace, want.trace)
        assert div is None, f"{prog.name} packet {i}: {div}"
        assert (got[i].action, got[i].packet, got[i].redirect, got[i].host, got[i].broadcast, got[i].cycles,
                got[i].meta, got[i].printk, got[i].events) == \
            (want.action, want.packet, want.redirect, want.host, want.broadcast, want.cycles, want.meta,
             want.printk, want.events), f"{prog.name} packet {i}"
    assert s_rtl.dump() == s_vm.dump(), f"{prog.name}: map contents differ"
    assert s_rtl.mem == s_vm.mem, f"{prog.name}: map memory differs (ring record headers included)"
