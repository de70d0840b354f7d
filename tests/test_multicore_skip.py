"""Randomized: the multi-core model, whose waiting cores ask for the map grant again only in the cycles where its
state can change (MulticoreModel._next_cycle), which defers only a write row's lane stores to the cycle after its last
(MulticoreModel._defer), and whose rows waiting for packet bytes start in the first cycle their bytes are in
(MulticoreModel._byte_wait), gives exactly what the contract transcribed cycle by cycle gives (section 8, "The
grant": every waiting core asks again in the next cycle, the askers walked from the first after the last core
granted; every row's writes of the map memory seen by the rows starting after its last cycle, whatever its mode;
section 6: a row waits a cycle while its packet bytes or its packet buffer are not ready, and asks for the grant only
once they are): the same cores, start and end cycles, waits, outputs and final maps, on programs that contend for the
grant in every mode (spin locks, atomics, hash updates, shared lookups, lookups keyed by a map value, per-CPU
counters) and wait for packet bytes (stores meeting the input, adjust helpers)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from bpf_asm import alu64, atomic, ldx, stx
from conftest import compile_bpf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_multicore import ADD, VISIBILITY, roles, trio_maps, trio_rom

from hxdp import suite
from hxdp.compiler import compile_program
from hxdp.frontend.elf import load_program
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapState
from hxdp.models.multicore import MulticoreModel, _Running
from hxdp.models.vliw import APART, EXCLUSIVE, SHARED, WRITE, VliwModel
from hxdp.traffic.pcap import read_pcap

DATA = Path(__file__).parent / "data"
# programs of our own: a spin lock, an atomic and a hash update; lookups, updates, atomics and loads picked by frame
OWN = {"race": DATA / "rtl_cores" / "race.c", "grant_mix": DATA / "multicore" / "grant_mix.c"}
# hand-written ROMs of tests/test_multicore.py whose write rows take 17 cycles beside readers of the bytes they write
# (byte 0 of the frame picks the row): a store and loads; an apart per-CPU store, an atomic add and a load
HAND = {"visibility": VISIBILITY,
        "apart_write": [[stx("dw", 8, 5, 0), alu64("div", 6, src=5)], [atomic("dw", 1, 5, 0, ADD),
                                                                      alu64("div", 6, src=5)], [ldx("dw", 4, 1, 0)]]}
PROGRAMS = ["race", "grant_mix", "xdp_redirect_map", "xdp_router_ipv4", "l4_load_balancer", "simple_firewall", "xdp2",
            "xdp_tx", "xdp_adjust_tail", "xdp_tx_iptunnel", *HAND]
_compiled: dict[str, tuple] = {}
# the contract's table of the modes two cores may hold the grant in together
TOGETHER = {SHARED: {SHARED, APART, WRITE}, APART: {SHARED, APART}, WRITE: {SHARED}, EXCLUSIVE: set()}
CHUNK = 4096


class EveryCycle(MulticoreModel):
    """The grant transcribed from the contract cycle by cycle: a core whose row is not granted asks again in the next
    cycle, one wait cycle more. The map memory as the contract says each row reads it: every row's changes of it
    (outside the per-CPU copies, which only their core reads) are taken back when the row has run and made again
    before the rows of the cycle after its last run. A row whose packet
    bytes are not ready waits a cycle before it asks."""

    def _next_cycle(self, busy: list[_Running | None]) -> int | None:
        return min((p.t for p in busy if p is not None), default=None)

    def _defer(self, core: VliwModel, seen: int) -> None:
        pass  # (every row's changes are taken back in _advance)

    def _cycle(self, t: int, busy: list[_Running | None], idle_from: list[int], out: list) -> None:
        self._now = t
        for _seen, off, data in [w for w in self._pending if w[0] <= t]:
            self.state.mem[off : off + len(data)] = data
        self._pending = [w for w in self._pending if w[0] > t]
        holding = getattr(self, "_holding", {})
        self._holding = holding
        asking: list[tuple[int, str]] = []
        for k, p in enumerate(busy):
            if p is None or p.t != t:
                continue
            if not self._row_ready(k, p, t):  # (checked in every cycle, the grant's waits included)
                p.t, p.byte_waits = t + 1, p.byte_waits + 1
                continue
            mode = EXCLUSIVE if self._locker == k else self.cores[k].grant_mode(p.ri, p.regs)
            if mode is None or self._locker == k:
                self._run_row(k, t, mode, busy, idle_from, out)
            else:
                asking.append((k, mode))
        held = [mode for mode, until in holding.values() if until > t]  # (a spin lock's row of this cycle too)
        n = len(self.cores)
        asking.sort(key=lambda km: (km[0] - self._last - 1) % n)
        granted: list[int] = []
        if asking and self._locker is None:
            first, mode = asking[0]
            stand = [*held, mode]
            if all(m in TOGETHER[mode] for m in held):
                granted.append(first)
                self._last = first
            for k, m in asking[1:]:
                if all(other in TOGETHER[m] for other in stand):
                    granted.append(k)
                    stand.append(m)
        for k, mode in asking:
            p = busy[k]
            assert p is not None
            if k in granted:
                self._run_row(k, t, mode, busy, idle_from, out)
            else:
                p.t, p.waits = t + 1, p.waits + 1

    def _run_row(self, k: int, t: int, mode: str | None, busy: list[_Running | None], idle_from: list[int],
                 out: list) -> None:
        p = busy[k]
        assert p is not None
        if mode is None:
            self._advance(k, t, mode, busy, idle_from, out)
            return
        self._own(k)
        mem = self.state.mem
        before = bytes(mem)
        self._advance(k, t, mode, busy, idle_from, out)
        self._holding[k] = (mode, p.t)
        copies = [(lo, hi) for m, lo, hi in self._percpu if m is mem]
        for c in range(0, len(mem), CHUNK):
            if mem[c : c + CHUNK] == before[c : c + CHUNK]:
                continue
            for i in range(c, min(c + CHUNK, len(mem))):
                if mem[i] != before[i] and not any(lo <= i < hi for lo, hi in copies):
                    self._pending.append((p.t, i, bytes(mem[i : i + 1])))
                    mem[i] = before[i]


def compiled(name: str, tmp: Path) -> tuple:
    """(compile result, map configuration or None, frames to draw from), once per program."""
    if name not in _compiled:
        if name in HAND:
            maps, ptrs = trio_maps()
            rom = Rom(trio_rom(HAND[name], ptrs))
            _compiled[name] = (SimpleNamespace(rom=rom, layout=MapState.from_maps(maps).layout), None, roles(0, 1, 2))
        elif name in OWN:
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
