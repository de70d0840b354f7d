"""The map helpers' latency per map kind (docs/helpers.md "Latency"), one case a line: the call row's cost on the
VLIW model, and on the RTL cycle for cycle. The array kinds index their slot (no hash, no probe)."""

from __future__ import annotations

import pytest
from rtl_support import first_divergence, require_rtl

from hxdp import params
from hxdp.frontend.program import MapDef
from hxdp.isa.insn import Insn, assemble_line
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.vliw import VliwModel
from hxdp.raw import sequential_rom

T = params.MAP_TYPE_IDS
LOOKUP, UPDATE, DELETE, REDIRECT = 0, 1, 2, 3
BROADCAST, BAD_FLAGS = 8, 0x40

# key = ingress_ifindex (u32) at r10 - 4, op = rx_queue_index; an update's value is key * 3 (u64) at r10 - 72 and
# zeros after it; redirect_map's key is r2 and its flags are the packet's first byte.
PROGRAM = """\
r6 = *(u32 *)(r1 + 12)
r7 = *(u32 *)(r1 + 16)
r9 = *(u32 *)(r1 + 0)
*(u32 *)(r10 - 4) = r6
r8 = r6
r8 *= 3
*(u64 *)(r10 - 72) = r8
r1 = {handle} ll
r2 = r10
r2 += -4
if r7 == 1 goto +4
if r7 == 2 goto +8
if r7 == 3 goto +9
call 1
exit
r3 = r10
r3 += -72
r4 = 0
call 2
exit
call 3
exit
r2 = r6
r3 = *(u8 *)(r9 + 0)
call 51
exit"""

# (kind, value size, max entries, host entries {key: u32 value}, op, key, flags, extra cycles of the call)
CASES = [
    # plain arrays: the key read, then the index check and the address (no slot read)
    ("array", 8, 4, {}, LOOKUP, 1, 0, 1),
    ("array", 8, 4, {}, LOOKUP, 9, 0, 1),  # past max_entries: NULL, as fast
    ("percpu_array", 8, 4, {}, LOOKUP, 2, 0, 1),
    # an update: the key, the value 8 bytes a cycle, the write; windows past the first cost a cycle each
    ("array", 8, 4, {}, UPDATE, 1, 0, 2),
    ("array", 8, 4, {}, UPDATE, 7, 0, 2),  # -E2BIG
    ("array", 64, 4, {}, UPDATE, 1, 0, 1 + 8 + 1),
    ("array", 8, 4, {}, DELETE, 1, 0, 2),  # -EINVAL
    # the entry read: empty or not
    ("devmap", 4, 4, {1: 5}, LOOKUP, 1, 0, 2),
    ("devmap", 4, 4, {1: 5}, DELETE, 1, 0, 2),
    ("cpumap", 4, 4, {1: 8}, LOOKUP, 1, 0, 2),
    # redirect_map on the array kinds: the entry read in the first cycle, the call ends in the second (tail_call's 1)
    ("devmap", 4, 4, {1: 5}, REDIRECT, 1, 0, 1),
    ("devmap", 4, 4, {1: 5}, REDIRECT, 2, 2, 1),  # empty entry: the flags' action
    ("devmap", 4, 4, {1: 5}, REDIRECT, 9, 2, 1),  # past max_entries
    ("devmap", 4, 4, {1: 5}, REDIRECT, 1, BAD_FLAGS, 1),  # XDP_ABORTED
    ("cpumap", 4, 4, {1: 8}, REDIRECT, 1, 0, 1),
    ("cpumap", 4, 4, {1: 8}, REDIRECT, 3, 2, 1),
    ("xskmap", 4, 4, {1: 3}, REDIRECT, 1, 0, 1),
    ("xskmap", 4, 4, {1: 3}, REDIRECT, 0, 2, 1),
    # what keeps its scan or its probes: a broadcast reads every slot, devmap_hash and hash maps hash and probe
    ("devmap", 4, 4, {1: 5}, REDIRECT, 0, BROADCAST, 2 + 4),
    ("devmap_hash", 4, 4, {1: 5}, REDIRECT, 1, 0, 2 + 1),
    ("devmap_hash", 4, 4, {1: 5}, REDIRECT, 1, BAD_FLAGS, 3),
    ("hash", 8, 4, {1: 5}, LOOKUP, 1, 0, 2 + 1),
]
IDS = [f"{kind}-{('lookup', 'update', 'delete', 'redirect')[op]}-k{key}-f{flags:x}"
       for kind, _vs, _n, _h, op, key, flags, _lat in CASES]


def _setup(kind: str, value_size: int, max_entries: int, host: dict[int, int]) -> tuple[Rom, MapState]:
    insns: list[Insn] = []
    for line in PROGRAM.format(handle=hex(params.MAP_HANDLE_BASE)).splitlines():
        insns += assemble_line(line)
    state = MapState(MapLayout.from_maps([MapDef("m", T[kind], 4, value_size, max_entries, 0)]))
    for key, value in host.items():
        assert state.update(0, key.to_bytes(4, "little"), value.to_bytes(value_size, "little")) == 0
    return sequential_rom(insns), state


def _call_cost(trace: list) -> int:
    """The cost of the row holding the call (one instruction a row): the one before the closing exit."""
    return trace[-2].cycles


@pytest.mark.parametrize(("kind", "value_size", "max_entries", "host", "op", "key", "flags", "extra"), CASES, ids=IDS)
def test_model_latency(kind: str, value_size: int, max_entries: int, host: dict[int, int], op: int, key: int,
                       flags: int, extra: int) -> None:
    rom, state = _setup(kind, value_size, max_entries, host)
    res = VliwModel(rom, state, trace=True).run(bytes([flags]) + bytes(63), ingress_ifindex=key, rx_queue_index=op)
    assert res.fault is None, res.fault
    assert _call_cost(res.trace) == 1 + extra


@pytest.mark.rtl
@pytest.mark.parametrize(("kind", "value_size", "max_entries", "host", "op", "key", "flags", "extra"), CASES, ids=IDS)
def test_rtl_latency(kind: str, value_size: int, max_entries: int, host: dict[int, int], op: int, key: int,
                     flags: int, extra: int) -> None:
    require_rtl()
    from hxdp.rtl.sim import RtlSim

    rom, vm_state = _setup(kind, value_size, max_entries, host)
    _rom, rtl_state = _setup(kind, value_size, max_entries, host)
    pkt = bytes([flags]) + bytes(63)
    got = RtlSim(rom, state=rtl_state, trace=True).run_packets([(pkt, key, op)])[0]
    want = VliwModel(rom, vm_state, trace=True).run(pkt, ingress_ifindex=key, rx_queue_index=op)
    assert first_divergence(got.trace, want.trace) is None
    assert (got.action, got.fault, got.cycles, got.redirect, got.host) == \
        (want.action, want.fault, want.cycles, want.redirect, want.host)
    assert _call_cost(got.trace) == 1 + extra
    layout = vm_state.layout
    assert bytes(rtl_state.mem[: layout.used_bytes()]) == bytes(vm_state.mem[: layout.used_bytes()])
