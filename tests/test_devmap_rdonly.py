"""A ROM made by hand that stores through a devmap lookup's pointer faults on the model and the RTL alike: the lookup's
tag marks the value read-only (MapRegion.prog_rdonly), as the kernel makes every devmap read-only to programs."""

from __future__ import annotations

import pytest
from rtl_support import require_rtl

from hxdp import params
from hxdp.frontend.program import MapDef
from hxdp.isa.insn import Insn, assemble_line
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.vliw import VliwModel
from hxdp.raw import sequential_rom

PROGRAM = f"""\
r1 = {hex(params.MAP_HANDLE_BASE)} ll
r6 = 1
*(u32 *)(r10 - 4) = r6
r2 = r10
r2 += -4
call 1
if r0 == 0 goto +2
r6 = 7
*(u32 *)(r0 + 0) = r6
r0 = 2
exit"""


def _setup(kind: str) -> tuple[Rom, MapState]:
    insns: list[Insn] = []
    for line in PROGRAM.splitlines():
        insns += assemble_line(line)
    state = MapState(MapLayout.from_maps([MapDef("m", params.MAP_TYPE_IDS[kind], 4, 4, 4, 0)]))
    assert state.update(0, (1).to_bytes(4, "little"), (5).to_bytes(4, "little")) == 0
    return sequential_rom(insns), state


@pytest.mark.parametrize(("kind", "stored"), [("devmap", False), ("devmap_hash", False), ("array", True)])
def test_model(kind: str, stored: bool) -> None:
    rom, state = _setup(kind)
    res = VliwModel(rom, state).run(bytes(64))
    assert (res.fault is None) == stored, res.fault
    assert res.action == (params.XDP_PASS if stored else params.XDP_ABORTED)
    assert state.lookup(0, (1).to_bytes(4, "little")) == (7 if stored else 5).to_bytes(4, "little")


@pytest.mark.rtl
@pytest.mark.parametrize("kind", ["devmap", "devmap_hash", "array"])
def test_rtl_equals_model(kind: str) -> None:
    require_rtl()
    from hxdp.rtl.sim import RtlSim

    rom, vm_state = _setup(kind)
    _rom, rtl_state = _setup(kind)
    got = RtlSim(rom, state=rtl_state).run_packets([bytes(64)])[0]
    want = VliwModel(rom, vm_state).run(bytes(64))
    assert (got.action, got.fault is None, got.cycles) == (want.action, want.fault is None, want.cycles)
    used = vm_state.layout.used_bytes()
    assert bytes(rtl_state.mem[:used]) == bytes(vm_state.mem[:used])
