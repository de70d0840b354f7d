"""Faults end the packet with XDP_ABORTED and the next packet runs normally; packet-path cycle targets."""

from __future__ import annotations

import pytest
from rtl_support import assert_rtl_equals_model, require_rtl, row

from hxdp import params
from hxdp.frontend.program import MapDef
from hxdp.isa.insn import NOP, Insn, assemble_line
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.vliw import VliwModel
from hxdp.rtl.sim import RtlSim

pytestmark = pytest.mark.rtl


def _a(text: str) -> Insn:
    return assemble_line(text)[0]


@pytest.fixture(scope="module", autouse=True)
def _rtl() -> None:
    require_rtl()


def _dispatch_rom(fault_row: list[Insn]) -> Rom:
    """Packet byte 0 == 1 runs `fault_row`, anything else returns XDP_PASS with byte 1 incremented."""
    return Rom([
        [_a("r2 = *(u32 *)(r1 + 0)"), NOP, NOP, NOP],
        [_a("r3 = *(u8 *)(r2 + 0)"), _a("r4 = *(u8 *)(r2 + 1)"), NOP, NOP],
        [_a("if r3 == 1 goto +2"), _a("r4 += 1"), NOP, NOP],
        [_a("*(u8 *)(r2 + 1) = r4"), NOP, NOP, NOP],
        [_a("exit 2"), NOP, NOP, NOP],
        fault_row,
        [_a("exit 2"), NOP, NOP, NOP],
    ])


FAULTS = {
    "illegal opcode": ([Insn(0x8D), NOP, NOP, NOP], "illegal instruction"),
    "unsupported legacy load": ([_a("r0 = *(u32 *)skb[4]"), NOP, NOP, NOP], "illegal instruction"),
    "packet out of range": ([_a("r0 = *(u32 *)(r2 + 2000)"), NOP, NOP, NOP], "access fault"),
    "store to ctx": ([_a("*(u32 *)(r1 + 0) = r3"), NOP, NOP, NOP], "access fault"),
    # xdp_md is read one aligned 32-bit field at a time, the only ctx load the kernel's verifier allows
    "ctx load of 8 bytes": ([_a("r0 = *(u64 *)(r1 + 8)"), NOP, NOP, NOP], "access fault"),
    "ctx load of 2 bytes": ([_a("r0 = *(u16 *)(r1 + 12)"), NOP, NOP, NOP], "access fault"),
    "misaligned ctx load": ([_a("r0 = *(u32 *)(r1 + 2)"), NOP, NOP, NOP], "access fault"),
    "ctx load past xdp_md": ([_a("r0 = *(u32 *)(r1 + 24)"), NOP, NOP, NOP], "access fault"),
    "stack overflow": ([_a("*(u64 *)(r10 - 520) = r3"), NOP, NOP, NOP], "access fault"),
    "stack above r10": ([_a("r0 = *(u8 *)(r10 + 0)"), NOP, NOP, NOP], "access fault"),
    "NULL": ([_a("r0 = *(u8 *)(r5 + 0)"), NOP, NOP, NOP], "access fault"),
    "map handle": ([_a("r5 = 0x50000000 ll"), NOP, NOP], "access fault"),  # completed below
    "stack stores beyond the ports": ([_a("*(u8 *)(r10 - 1) = r3"), _a("*(u8 *)(r10 - 2) = r3"),
                                    _a("*(u8 *)(r10 - 3) = r3"), NOP], "access fault"),
    "stack loads beyond the ports": ([_a("r5 = *(u8 *)(r10 - 1)"), _a("r6 = *(u8 *)(r10 - 2)"),
                                   _a("r7 = *(u8 *)(r10 - 3)"), NOP], "access fault"),
    "packet stores beyond the ports": ([_a("*(u8 *)(r2 + 1) = r3"), _a("*(u8 *)(r2 + 2) = r3"),
                                     _a("*(u8 *)(r2 + 3) = r3"), NOP], "access fault"),
    "packet loads beyond the ports": ([_a("r5 = *(u8 *)(r2 + 1)"), _a("r6 = *(u8 *)(r2 + 2)"),
                                    _a("r7 = *(u8 *)(r2 + 3)"), NOP], "access fault"),
    # the helper reads the stack and the packet through the lanes' load port: a load there beside a call faults
    "stack load beside a helper call": ([_a("r5 = *(u8 *)(r10 - 1)"), _a("call 7"), NOP, NOP], "access fault"),
    "packet load beside a helper call": ([_a("call 7"), _a("r5 = *(u8 *)(r2 + 3)"), NOP, NOP], "access fault"),
    "two multiplications in a row": ([_a("r5 *= r3"), NOP, _a("w6 *= 7"), NOP], "illegal instruction"),
    "runaway loop": ([_a("goto -1"), NOP, NOP, NOP], "cycle limit"),
    # 18-cycle rows (division stall, taken branch): the limit is reached inside a row, checked before the next
    "runaway division loop": ([_a("r0 /= 3"), _a("goto -1"), NOP, NOP], "cycle limit"),
    "jump outside the program": ([_a("goto +40"), NOP, NOP, NOP], "illegal instruction"),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_fault_then_normal_packet(name: str) -> None:
    row, fault = FAULTS[name]
    if name == "map handle":
        rom = _dispatch_rom([*assemble_line("r5 = 0x50000000 ll"), NOP, NOP])
        rom.rows.insert(6, [_a("r0 = *(u8 *)(r5 + 0)"), NOP, NOP, NOP])
    else:
        rom = _dispatch_rom(row)
    normal = bytes([0, 41]) + bytes(range(62))
    bad = bytes([1, 7]) + bytes(range(62))
    res = RtlSim(rom).run_packets([normal, bad, normal, bad, normal])
    vm = VliwModel(rom, MapState(MapLayout.from_maps([])))
    for i, pkt in enumerate([normal, bad, normal, bad, normal]):
        want = vm.run(pkt)
        if pkt is bad:
            assert res[i].action == params.XDP_ABORTED and res[i].fault == fault, (name, i, res[i])
        else:
            assert res[i].action == params.XDP_PASS and res[i].fault is None, (name, i, res[i])
            assert res[i].packet == bytes([0, 42]) + bytes(range(62))
        assert (res[i].action, res[i].packet, res[i].cycles) == (want.action, want.packet, want.cycles), (name, i)


def test_no_byte_of_previous_packet_visible() -> None:
    """A long packet then a short one: the stack written by the first reads as zero in the second, and the
    bytes past the short packet's end fault instead of showing the long packet's bytes."""
    rom = Rom([
        [_a("r2 = *(u32 *)(r1 + 0)"), _a("r3 = *(u32 *)(r1 + 4)"), _a("r6 = *(u64 *)(r10 - 8)"), NOP],
        [_a("*(u64 *)(r10 - 8) = r3"), _a("r4 = *(u32 *)(r2 + 56)"), _a("*(u64 *)(r2 + 0) = r6"), NOP],
        [_a("r5 = *(u8 *)(r2 + 60)"), NOP, NOP, NOP],
        [_a("exit 3"), NOP, NOP, NOP],
    ])
    long_pkt = bytes([0xAA]) * 200
    short = bytes([0x55]) * 60
    res = RtlSim(rom).run_packets([long_pkt, short, long_pkt])
    assert res[0].action == params.XDP_TX and res[0].packet == bytes(8) + bytes([0xAA]) * 192
    assert res[1].action == params.XDP_ABORTED and res[1].fault == "access fault"
    assert res[2].action == params.XDP_TX and res[2].packet == bytes(8) + bytes([0xAA]) * 192


def test_drop_and_tx_cycles_back_to_back() -> None:
    """64-byte packets back to back: XDP_DROP (one row) and a MAC swap returning XDP_TX (two rows: the loads, then
    the stores beside the exit) both run a packet every 2 cycles, the input's pace (2 frames of 32 bytes): 4x10G
    line rate of 64-byte frames needs 2.625 cycles at 156.25 MHz. The swap's store row meets the next packet's
    first frame; the frame waits in the packet buffer's write buffer instead of stopping the input."""
    pkts = [bytes(range(64))] * 20
    drop = Rom([[_a("exit 1"), NOP, NOP, NOP]])
    sim = RtlSim(drop)
    res = sim.run_packets(pkts)
    assert all(r.action == params.XDP_DROP and r.cycles == 1 for r in res)
    per_packet = (sim.stamps[-1].end - sim.stamps[0].end) / (len(pkts) - 1)
    assert per_packet <= 2, per_packet
    swap = Rom([  # (r2 = ctx->data at entry: execution contract section 1)
        [_a("r3 = *(u48 *)(r2 + 0)"), _a("r4 = *(u48 *)(r2 + 6)"), NOP, NOP],
        [_a("*(u48 *)(r2 + 0) = r4"), _a("*(u48 *)(r2 + 6) = r3"), _a("exit 3"), NOP],
    ])
    sim = RtlSim(swap)
    res = sim.run_packets(pkts)
    assert all(r.action == params.XDP_TX and r.packet == pkts[0][6:12] + pkts[0][:6] + pkts[0][12:] for r in res)
    assert all(r.cycles == 2 for r in res)
    half = len(pkts) // 2  # the steady state: the first packets set the phase of the frames against the stores
    per_packet = (sim.stamps[-1].out - sim.stamps[half].out) / (len(pkts) - 1 - half)
    assert per_packet <= 2, per_packet


@pytest.mark.parametrize("kind, n, ok", [
    ("load", params.MAP_LOAD_PORTS, True), ("load", params.MAP_LOAD_PORTS + 1, False),
    ("store", params.MAP_STORE_PORTS, True), ("store", params.MAP_STORE_PORTS + 1, False),
])
def test_map_memory_ports(kind: str, n: int, ok: bool) -> None:
    """A row may load from the map memory through MAP_LOAD_PORTS lanes and store through MAP_STORE_PORTS; one more
    is an access fault, on the RTL as in the model (the addresses are inside an array map's value)."""
    layout = MapLayout.from_maps([MapDef("m", 2, 4, 64, 4, 0)])  # an array of 4 64-byte values
    value = layout.value_pointer(0, layout.regions[0].slot_addr(1))  # a tagged map-value pointer
    acc = [f"r{3 + k} = *(u8 *)(r2 + {k})" if kind == "load" else f"*(u8 *)(r2 + {k}) = r9" for k in range(n)]
    rom = Rom([row(f"r2 = {hex(value)} ll", "r9 = 77"), row(*acc), row("r0 = *(u8 *)(r2 + 0)"), row("exit")])
    res = assert_rtl_equals_model(rom, [bytes(64)], f"{n} map {kind}s", layout=layout)[0]
    assert (res.fault is None) == ok, res
    if ok and kind == "store":
        assert res.action == 77


@pytest.mark.parametrize("n, ok", [(1, True), (2, False)])
def test_map_loads_beside_a_helper_call(n: int, ok: bool) -> None:
    """A row calling a helper has CALL_ROW_LOADS["map"] (one) map loads at most: the helper's reads take the last
    load port. One more is an access fault, on the RTL as in the model."""
    assert params.CALL_ROW_LOADS["map"] == params.MAP_LOAD_PORTS - 1 == 1
    layout = MapLayout.from_maps([MapDef("m", 2, 4, 64, 4, 0)])
    value = layout.value_pointer(0, layout.regions[0].slot_addr(1))  # a tagged map-value pointer
    acc = [f"r{3 + k} = *(u8 *)(r2 + {k})" for k in range(n)]
    rom = Rom([row(f"r2 = {hex(value)} ll"), row(*acc, "call 7"), row("r0 = 2"), row("exit")])
    res = assert_rtl_equals_model(rom, [bytes(64)], f"{n} map loads beside a call", layout=layout)[0]
    assert (res.fault is None) == ok, res


@pytest.mark.parametrize("together", [True, False])
def test_map_store_beside_a_map_helper(together: bool) -> None:
    """A row calling a helper that writes the map memory (here map_lookup_elem, which refreshes lru_hash stamps)
    stores nothing else there: an access fault on the RTL as in the model; the store a row later is fine."""
    layout = MapLayout.from_maps([MapDef("m", 2, 4, 64, 4, 0)])  # an array of 4 64-byte values
    value = layout.value_pointer(0, layout.regions[0].slot_addr(1))  # a tagged map-value pointer
    call_rows = ([row("call 1", "*(u8 *)(r6 + 0) = r9")] if together else
                 [row("call 1"), row("*(u8 *)(r6 + 0) = r9")])
    rom = Rom([row(f"r1 = {hex(params.MAP_HANDLE_BASE)} ll", f"r6 = {hex(value)} ll"), row("r2 = r10", "r9 = 77"),
               row("r2 += -4"), *call_rows, row("r0 = *(u8 *)(r6 + 0)"), row("exit")])
    res = assert_rtl_equals_model(rom, [bytes(64)], f"store {'beside' if together else 'after'} the call",
                                  layout=layout)[0]
    assert (res.fault is not None) == together, res
    if not together:
        assert res.action == 77


def test_packet_store_beside_adjust_head() -> None:
    """xdp_adjust_head moves the metadata with data through the helper unit: a packet store in its row faults."""
    rom = Rom([row("r6 = *(u32 *)(r1 + 0)", "r2 = 0", "r9 = 7"), row("call 44", "*(u8 *)(r6 + 20) = r9"),
               row("exit 2")])
    res = assert_rtl_equals_model(rom, [bytes(64)], "packet store beside adjust_head")[0]
    assert res.fault is not None, res
