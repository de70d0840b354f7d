"""Equivalence check: a compiled ROM on the VLIW model against the program on the sequential model."""

from __future__ import annotations

from dataclasses import dataclass

from hxdp.frontend.program import Program
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.result import RunResult


@dataclass
class Mismatch:
    packet_index: int
    what: str
    seq: object
    vliw: object

    def __str__(self) -> str:
        return f"packet {self.packet_index}: {self.what} differs: seq {self.seq!r} vliw {self.vliw!r}"


def _cmp(i: int, a: RunResult, b: RunResult) -> Mismatch | None:
    act_a = a.action if a.fault is None else 0
    act_b = b.action if b.fault is None else 0
    if act_a != act_b:
        return Mismatch(i, "action", (a.action, a.fault), (b.action, b.fault))
    if a.fault is not None and b.fault is not None:
        return None
    if a.packet != b.packet:
        return Mismatch(i, "packet", a.packet.hex(), b.packet.hex())
    if a.redirect != b.redirect:
        return Mismatch(i, "redirect", a.redirect, b.redirect)
    return None


def check(program: Program, rom: Rom, packets: list[bytes], config: dict | None = None,
          ingress_ifindex: int = 1, layout: MapLayout | None = None) -> list[Mismatch]:
    """Run every packet on both models (map state carried across packets); report every difference. `layout` is
    the ROM's (the compiler's): it places the program's maps as MapState.for_program does, and gives the entry
    rows of resident programs (tail calls), whose PROG_ARRAY values then differ from the sequential model's."""
    from hxdp.models.seq import SeqModel
    from hxdp.models.vliw import VliwModel

    s_state = MapState.for_program(program)
    assert layout is not None or not s_state.layout.programs, "tail calls: give the ROM's layout (entry rows)"
    v_state = MapState(layout) if layout is not None else MapState.for_program(program)
    if config:
        s_state.apply_config(config)
        v_state.apply_config(config)
    seq = SeqModel(program, s_state)
    vliw = VliwModel(rom, v_state)
    out: list[Mismatch] = []
    for i, pkt in enumerate(packets):
        a = seq.run(pkt, ingress_ifindex=ingress_ifindex)
        b = vliw.run(pkt, ingress_ifindex=ingress_ifindex)
        m = _cmp(i, a, b)
        if m is not None:
            out.append(m)
        progs = {r.name for r in s_state.layout.regions if r.kind == "prog_array"}
        sd = {n: d for n, d in s_state.dump().items() if n not in progs}
        vd = {n: d for n, d in v_state.dump().items() if n not in progs}
        if sd != vd:
            for name in sd:
                if sd[name] != vd.get(name):
                    out.append(Mismatch(i, f"map {name}", _diff(sd[name], vd.get(name, {})), ""))
            break
    return out


def _diff(a: dict[bytes, bytes], b: dict[bytes, bytes]) -> str:
    keys = sorted(set(a) | set(b))
    for k in keys:
        if a.get(k) != b.get(k):
            return f"key {k.hex()}: seq {a.get(k, b'').hex()} vliw {b.get(k, b'').hex()}"
    return "?"
