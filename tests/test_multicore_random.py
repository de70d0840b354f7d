"""Randomized: the same traffic on 1 core and on N cores gives the same outputs, frame by frame and so flow by flow,
and the same final maps (per-CPU maps summed over the cores), for the bundled programs whose outputs do not depend on
what another frame running at the same time writes (docs/execution_contract.md section 8). (Their paths may: the load
balancer's second frame of a new flow takes the new-connection path when both run at once, in more cycles, with the
same output and the same connection entry.)"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hxdp import suite
from hxdp.compiler import compile_program
from hxdp.models.maps import MapState
from hxdp.models.multicore import MulticoreModel
from hxdp.traffic.pcap import read_pcap

# counters (atomic or per-CPU), tables the host fills, packet rewriting: no frame's output depends on another's
PROGRAMS = ["xdp1", "xdp2", "xdp_redirect_map", "xdp_router_ipv4", "xdp_tx_iptunnel", "xdp_rxq_info",
            "l4_load_balancer", "csum_diff_x10"]
_compiled: dict[str, tuple] = {}


def compiled(name: str) -> tuple:
    """(compile result, map configuration, the program's own frames), once per program."""
    if name not in _compiled:
        sp = suite.program(name)
        if not sp.obj.exists():
            pytest.skip(f"{sp.obj} is not built (make -C xdp_progs)")
        _compiled[name] = (compile_program(sp.load()), sp.map_config(), read_pcap(sp.traffic))
    return _compiled[name]


def summed(model: MulticoreModel, cores: int) -> dict:
    """The final maps, each per-CPU array's values summed over the cores word by word (u64, wrapping)."""
    base = model.dump(0)
    percpu = [r.name for r in model.state.layout.regions if r.kind == "percpu_array"]
    out = {name: dict(entries.items()) for name, entries in base.items()}
    for name in percpu:
        for k in range(1, cores):
            for key, value in model.dump(k)[name].items():
                old = out[name][key]
                out[name][key] = b"".join(
                    ((int.from_bytes(old[i:i + 8], "little") + int.from_bytes(value[i:i + 8], "little"))
                     % (1 << 64)).to_bytes(8, "little") for i in range(0, len(value), 8))
    return out


def run(name: str, cores: int, packets: list[bytes], arrivals: list[int]):
    cr, cfg, _ = compiled(name)
    state = MapState(cr.layout)
    state.apply_config(cfg)
    model = MulticoreModel(cr.rom, state, cores)
    return model.run(packets, arrivals), summed(model, cores)


@st.composite
def traffic(draw: st.DrawFn) -> tuple[str, int, list[bytes], list[int]]:
    name = draw(st.sampled_from(PROGRAMS))
    pool = compiled(name)[2]
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=40))
    gaps = draw(st.lists(st.integers(0, 12), min_size=len(picks), max_size=len(picks)))
    arrivals, t = [], 0
    for g in gaps:
        t += g
        arrivals.append(t)
    return name, draw(st.integers(2, 8)), [pool[i] for i in picks], arrivals


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traffic())
def test_same_outputs_and_maps_on_one_and_n_cores(case: tuple[str, int, list[bytes], list[int]]) -> None:
    name, cores, packets, arrivals = case
    one, maps_one = run(name, 1, packets, arrivals)
    many, maps_many = run(name, cores, packets, arrivals)
    for a, b in zip(one.frames, many.frames, strict=True):
        assert (a.action, a.result.packet, a.result.fault) == (b.action, b.result.packet, b.result.fault), \
            f"{name} on {cores} cores: frame {a.index} differs"
        if b.core is not None:  # its time on the core: its cycles, its waits for the grant and for packet bytes
            assert b.end - b.start + 1 == b.result.cycles + b.waits + b.byte_waits
            assert b.start >= b.arrival and b.departure > b.end
    assert maps_one == maps_many, f"{name} on {cores} cores: final maps differ"
    departures = [f.departure for f in many.frames if f.core is not None]
    assert departures == sorted(departures)  # the reorder stage keeps arrival order
