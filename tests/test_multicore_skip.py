"""Randomized: the multi-core model, whose waiting cores ask for the map grant again only in the cycles where its
state can change (MulticoreModel._next_cycle), and whose rows waiting for packet bytes start in the first cycle their
bytes are in (MulticoreModel._byte_wait), gives exactly what the contract's rules transcribed cycle by cycle (section
8, "The grant": every waiting core asks again in the next cycle; section 6: a row waits a cycle while its packet bytes
or its packet buffer are not ready, and asks for the grant only once they are) give: the same cores, start and end
cycles, waits, outputs and final maps, on programs that contend for the grant in both modes (spin locks, atomics,
hash updates, shared lookups) and wait for packet bytes (stores meeting the input, adjust helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import compile_bpf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hxdp import suite
from hxdp.compiler import compile_program
from hxdp.frontend.elf import load_program
from hxdp.models.maps import MapState
from hxdp.models.multicore import MulticoreModel, _Running
from hxdp.models.vliw import EXCLUSIVE, SHARED
from hxdp.traffic.pcap import read_pcap

DATA = Path(__file__).parent / "data"
# programs of our own: a spin lock, an atomic and a hash update; lookups, updates, atomics and loads picked by frame
OWN = {"race": DATA / "rtl_cores" / "race.c", "grant_mix": DATA / "multicore" / "grant_mix.c"}
PROGRAMS = ["race", "grant_mix", "xdp_redirect_map", "xdp_router_ipv4", "l4_load_balancer", "simple_firewall", "xdp2",
            "xdp_tx", "xdp_adjust_tail", "xdp_tx_iptunnel"]
_compiled: dict[str, tuple] = {}


class EveryCycle(MulticoreModel):
    """The grant transcribed from the contract cycle by cycle: a core whose row is not granted asks again in the next
    cycle, one wait cycle more; a row whose packet bytes are not ready waits a cycle before it asks."""

    def _next_cycle(self, busy: list[_Running | None]) -> int | None:
        return min((p.t for p in busy if p is not None), default=None)

    def _cycle(self, t: int, busy: list[_Running | None], idle_from: list[int], out: list) -> None:
        self._now = t
        asking: list[tuple[int, str]] = []
        for k, p in enumerate(busy):
            if p is None or p.t != t:
                continue
            if not self._row_ready(k, p, t):  # (checked in every cycle, the grant's waits included)
                p.t, p.byte_waits = t + 1, p.byte_waits + 1
                continue
            mode = EXCLUSIVE if self._locker == k else self.cores[k].grant_mode(p.ri, p.regs)
            if mode is None or self._locker == k:
                self._advance(k, t, mode, busy, idle_from, out)
            else:
                asking.append((k, mode))
        granted: list[int] = []
        if asking and self._locker is None and self._excl_until <= t:
            n = len(self.cores)
            first, mode = min(asking, key=lambda km: (km[0] - self._last - 1) % n)
            if mode == EXCLUSIVE:
                granted = [first] if self._shared_until <= t else []
            else:
                granted = [k for k, m in asking if m == SHARED]
            if granted:
                self._last = first
        for k, mode in asking:
            p = busy[k]
            assert p is not None
            if k in granted:
                self._advance(k, t, mode, busy, idle_from, out)
            else:
                p.t, p.waits = t + 1, p.waits + 1


def compiled(name: str, tmp: Path) -> tuple:
    """(compile result, map configuration or None, frames to draw from), once per program."""
    if name not in _compiled:
        if name in OWN:
            frames = [bytes([k, s, 0, k * s]) + bytes(60) for k in range(8) for s in range(4)]
            _compiled[name] = (compile_program(load_program(compile_bpf(OWN[name], tmp))), None, frames)
        else:
            sp = suite.program(name)
            if not sp.obj.exists():
                pytest.skip(f"{sp.obj} is not built (make -C xdp_progs)")
            _compiled[name] = (compile_program(sp.load()), sp.map_config(), read_pcap(sp.traffic))
    return _compiled[name]


def run(model: type[MulticoreModel], cr, cfg, cores: int, packets: list[bytes], arrivals: list[int]):
    state = MapState(cr.layout)
    if cfg is not None:
        state.apply_config(cfg)
    r = model(cr.rom, state, cores).run(packets, arrivals)
    return [(f.core, f.start, f.end, f.waits, f.byte_waits, f.action, f.result.packet) for f in r.frames], state.dump()


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("skip")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.data())
def test_waiting_cores_skip_only_cycles_that_change_nothing(tmp: Path, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(PROGRAMS))
    cr, cfg, pool = compiled(name, tmp)
    picks = data.draw(st.lists(st.integers(0, len(pool) - 1), min_size=2, max_size=40))
    gaps = data.draw(st.lists(st.sampled_from([0, 0, 0, 1, 3, 9]), min_size=len(picks), max_size=len(picks)))
    arrivals = [sum(gaps[: i + 1]) for i in range(len(gaps))]
    cores = data.draw(st.integers(2, 8))
    packets = [pool[i] for i in picks]
    skipped = run(MulticoreModel, cr, cfg, cores, packets, arrivals)
    assert skipped == run(EveryCycle, cr, cfg, cores, packets, arrivals), f"{name} on {cores} cores"
