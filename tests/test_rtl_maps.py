"""RTL map FSM against the VLIW model: map_delete_elem and lru_hash refresh/update, cycle for cycle, on chip and in
the off-chip tiers."""

from __future__ import annotations

import random

import pytest
from rtl_support import first_divergence, require_rtl

from hxdp import params
from hxdp.frontend.program import MapDef
from hxdp.isa.insn import Insn, assemble_line
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.vliw import VliwModel
from hxdp.raw import sequential_rom
from hxdp.rtl.sim import RtlSim

pytestmark = pytest.mark.rtl

HASH, ARRAY, LRU_HASH, LPM_TRIE, DEVMAP, DEVMAP_HASH = 1, 2, 9, 11, 14, 25
LOOKUP, UPDATE, DELETE = 0, 1, 2

# key = ingress_ifindex (u32), op = rx_queue_index; the value (u64 or u32) is key * 3.
# lookup returns the value's low 32 bits (0 on a miss), update and delete their return code.
PROGRAM = """\
r6 = *(u32 *)(r1 + 12)
r7 = *(u32 *)(r1 + 16)
*(u32 *)(r10 - 4) = r6
r8 = r6
r8 *= 3
*(u64 *)(r10 - 16) = r8
r1 = {handle} ll
r2 = r10
r2 += -4
if r7 == 1 goto +6
if r7 == 2 goto +10
call 1
if r0 == 0 goto +2
r0 = *(u32 *)(r0 + 0)
exit
exit
r3 = r10
r3 += -16
r4 = 0
call 2
exit
call 3
exit"""


# lpm_trie: key = u32 prefixlen (ifindex >> 26) + u32 data (ifindex), at r10 - 8
LPM_PROGRAM = PROGRAM.replace("""*(u32 *)(r10 - 4) = r6
""", """*(u32 *)(r10 - 4) = r6
r9 = r6
r9 >>= 26
*(u32 *)(r10 - 8) = r9
""").replace("r2 += -4", "r2 += -8")


def map_rom(program: str = PROGRAM) -> Rom:
    insns: list[Insn] = []
    for line in program.format(handle=hex(params.MAP_HANDLE_BASE)).splitlines():
        insns += assemble_line(line)
    return sequential_rom(insns)


def _cosim(mtype: int, value_size: int, max_entries: int, ops: list[tuple[int, int]], key_size: int = 4,
           program: str = PROGRAM, flags: int = 0, tier: str = "bram") -> MapState:
    """Run (key, op) packets on the RTL and the model from the same empty map; compare per packet and the memory."""
    layout = MapLayout.from_maps([MapDef("m", mtype, key_size, value_size, max_entries, flags, tier=tier)])
    rom = map_rom(program)
    rtl_state, vm_state = MapState(layout), MapState(layout)
    packets = [(bytes(64), key, op) for key, op in ops]
    got = RtlSim(rom, state=rtl_state, trace=True).run_packets(packets)
    vm = VliwModel(rom, vm_state, trace=True)
    for i, (key, op) in enumerate(ops):
        want = vm.run(bytes(64), ingress_ifindex=key, rx_queue_index=op)
        div = first_divergence(got[i].trace, want.trace)
        assert div is None, f"packet {i} (key {key} op {op}): {div}"
        # (the RTL names a fault's kind, the model also its reason)
        assert (got[i].action, got[i].fault, got[i].cycles) == \
            (want.action, want.fault and want.fault.split(":")[0], want.cycles), \
            f"packet {i} (key {key} op {op}): RTL {got[i]} model {want}"
    assert bytes(rtl_state.mem[: layout.used_bytes()]) == bytes(vm_state.mem[: layout.used_bytes()])
    if tier != "bram":
        assert {n: bytes(p) for n, p in rtl_state.tiers[tier].pages.items()} == \
            {n: bytes(p) for n, p in vm_state.tiers[tier].pages.items()}
    return vm_state


@pytest.fixture(scope="module", autouse=True)
def _rtl() -> None:
    require_rtl()


def test_hash_delete_returns_and_frees_slots() -> None:
    ops = [(1, UPDATE), (2, UPDATE), (3, UPDATE), (2, DELETE), (2, LOOKUP), (2, DELETE), (9, DELETE),
           (5, UPDATE), (5, LOOKUP), (1, LOOKUP), (2, UPDATE), (2, LOOKUP)]
    state = _cosim(HASH, 8, 4, ops)
    assert state.count(0) == 4
    assert state.lookup(0, (2).to_bytes(4, "little")) == (6).to_bytes(8, "little")


def test_lru_hash_update_and_lookup_refresh() -> None:
    ops = [(1, UPDATE), (2, UPDATE), (1, LOOKUP), (3, UPDATE), (2, UPDATE), (7, LOOKUP), (3, DELETE),
           (4, UPDATE), (1, LOOKUP)]
    state = _cosim(LRU_HASH, 8, 4, ops)
    r = state.layout.region(0)
    assert int.from_bytes(state.mem[r.offset + 4 : r.offset + 8], "little") == 7  # LRU clock: 5 updates, 2 hits


def test_array_and_devmap_delete() -> None:
    _cosim(ARRAY, 8, 4, [(1, UPDATE), (1, DELETE), (9, DELETE), (1, LOOKUP)])
    state = _cosim(DEVMAP, 4, 4, [(1, UPDATE), (2, UPDATE), (1, DELETE), (7, DELETE), (1, LOOKUP), (2, LOOKUP)])
    assert state.lookup(0, (1).to_bytes(4, "little")) is None


@pytest.mark.parametrize("mtype", [HASH, LRU_HASH, DEVMAP_HASH])
def test_random_update_lookup_delete(mtype: int) -> None:
    rng = random.Random(mtype)
    ops = [(rng.randrange(1, 7), rng.choice((LOOKUP, UPDATE, UPDATE, DELETE))) for _ in range(60)]
    value_size = 4 if mtype == DEVMAP_HASH else 8
    _cosim(mtype, value_size, 6, ops)  # six keys: the LRU map never needs an eviction


def test_lru_eviction_matches_model_state() -> None:
    """A full lru_hash evicts the smallest stamp: same return codes, map memory and cycles as MapState (the
    helper latency includes the scan of all slots: docs/helpers.md, eviction adds the bucket count to the probes)."""
    layout = MapLayout.from_maps([MapDef("m", LRU_HASH, 4, 8, 3)])
    r = layout.region(0)
    rng = random.Random(9)
    ops = [(k, UPDATE) for k in (1, 2, 3)] + [(rng.randrange(1, 9), rng.choice((LOOKUP, UPDATE, UPDATE, DELETE)))
                                              for _ in range(60)]
    rom = map_rom()
    rtl_state, vm_state = MapState(layout), MapState(layout)
    got = RtlSim(rom, state=rtl_state).run_packets([(bytes(64), key, op) for key, op in ops])
    vm = VliwModel(rom, vm_state)
    evictions = 0
    for i, (key, op) in enumerate(ops):
        full = vm_state.count(0) == r.max_entries
        missing = vm_state.lookup(0, key.to_bytes(4, "little")) is None
        want = vm.run(bytes(64), ingress_ifindex=key, rx_queue_index=op)
        assert (got[i].action, got[i].fault) == (want.action, want.fault), f"packet {i} (key {key} op {op})"
        evict = op == UPDATE and full and missing
        evictions += evict
        assert got[i].cycles == want.cycles, f"packet {i} (key {key} op {op}, eviction {evict}) cycles"
    assert evictions >= 5
    # the RTL's map memory is read back once, after the last packet
    assert bytes(rtl_state.mem[: layout.used_bytes()]) == bytes(vm_state.mem[: layout.used_bytes()])


def test_lpm_update_delete_lookup() -> None:
    """lpm_trie update (insert, replace, -EEXIST/-ENOENT/-ENOSPC/-EINVAL) and delete (high-water mark)."""
    rng = random.Random(11)
    bases = (0x00A8C0, 0x01A8C0, 0x00000A, 0x02A8C0)
    plens = (0, 8, 16, 20, 24, 32, 40)
    ops = [((8 << 26) | 0x0A, UPDATE), ((8 << 26) | 0x0A, DELETE), ((8 << 26) | 0x0A, DELETE)]
    ops += [((rng.choice(plens) << 26) | rng.choice(bases), rng.choice((LOOKUP, UPDATE, UPDATE, DELETE)))
            for _ in range(80)]
    state = _cosim(LPM_TRIE, 8, 6, ops, key_size=8, program=LPM_PROGRAM, flags=1)  # BPF_F_NO_PREALLOC
    assert 0 < state.count(0) <= 6


# keys longer than one 16-byte map line: the key sits at r10 - 64 (the bytes past its first word stay zero)
WIDE_KEY_PROGRAM = PROGRAM.replace("*(u32 *)(r10 - 4) = r6", "*(u32 *)(r10 - 64) = r6").replace(
    "*(u64 *)(r10 - 16) = r8", "*(u64 *)(r10 - 80) = r8").replace("r2 += -4", "r2 += -64").replace(
    "r3 += -16", "r3 += -80")


@pytest.mark.parametrize("mtype", [HASH, LRU_HASH])
@pytest.mark.parametrize("key_size", [17, 24, 32, 40, 64])
def test_wide_keys_cost_what_the_model_says(key_size: int, mtype: int) -> None:
    """Hash maps with keys of 2 to 4 map lines, collisions and deletions: same results, memory and cycles. Above
    24 bytes reading the key (8 bytes per cycle) outlasts the fixed part: docs/helpers.md."""
    rng = random.Random(key_size)
    ops = [(1, UPDATE), (2, UPDATE), (1, LOOKUP), (3, LOOKUP), (2, DELETE), (2, LOOKUP), (4, UPDATE), (4, LOOKUP)]
    ops += [(rng.randrange(1, 13), rng.choice((LOOKUP, LOOKUP, UPDATE, DELETE))) for _ in range(40)]
    _cosim(mtype, 8, 8, ops, key_size=key_size, program=WIDE_KEY_PROGRAM)


def _tail_key_program(key_size: int) -> str:
    """WIDE_KEY_PROGRAM with the varying word at the end of the key: keys differ only in the slot's last window."""
    return WIDE_KEY_PROGRAM.replace("*(u32 *)(r10 - 64) = r6", f"*(u32 *)(r10 - {64 - key_size + 4}) = r6")


@pytest.mark.parametrize("key_size", [28, 40, 64])
def test_wide_keys_differing_in_their_last_window(key_size: int) -> None:
    """A probe reads a slot one MAP_WINDOW_BYTES window per cycle: keys equal up to their last word are told
    apart by the compare of a later window (28 and 40 bytes: the second, 64: the third)."""
    rng = random.Random(100 + key_size)
    ops = [(1, UPDATE), (2, UPDATE), (1, LOOKUP), (3, LOOKUP), (2, DELETE), (2, LOOKUP), (3, UPDATE), (3, LOOKUP)]
    ops += [(rng.randrange(1, 9), rng.choice((LOOKUP, LOOKUP, UPDATE, DELETE))) for _ in range(40)]
    _cosim(HASH, 8, 8, ops, key_size=key_size, program=_tail_key_program(key_size))


# lpm_trie with 32 data bytes (two windows a slot): prefixlen = ifindex >> 24 at r10 - 64, the data's last word
# (bytes 28..31) = ifindex, the rest zero
WIDE_LPM_PROGRAM = PROGRAM.replace("""*(u32 *)(r10 - 4) = r6
""", """*(u32 *)(r10 - 32) = r6
r9 = r6
r9 >>= 24
*(u32 *)(r10 - 64) = r9
""").replace("*(u64 *)(r10 - 16) = r8", "*(u64 *)(r10 - 80) = r8").replace("r2 += -4", "r2 += -64").replace(
    "r3 += -16", "r3 += -80")


def test_lpm_prefix_across_windows() -> None:
    """Prefixes ending in the slot's second window (whole and partial bytes there) and in the first."""
    rng = random.Random(12)
    plens = (0, 8, 224, 228, 232, 240, 250, 255)
    lows = (0x00A8C0, 0x01A8C0, 0x00A8C1, 0x80A8C0)
    ops = [((rng.choice(plens) << 24) | rng.choice(lows), rng.choice((LOOKUP, UPDATE, UPDATE, DELETE)))
           for _ in range(80)]
    state = _cosim(LPM_TRIE, 8, 6, ops, key_size=36, program=WIDE_LPM_PROGRAM, flags=1)
    assert 0 < state.count(0) <= 6


# redirect_map (op 3) on the map, after updates (op 1), PROGRAM's first seven lines then: its key is r2's low word,
# not read through the helper port
REDIRECT_PROGRAM = "\n".join(PROGRAM.splitlines()[:7]) + """
if r7 == 3 goto +7
r2 = r10
r2 += -4
r3 = r10
r3 += -16
r4 = 0
call 2
exit
r2 = r6
r3 = 2
call 51
exit"""


def test_redirect_map_on_devmap_hash_matches_keys_from_r2() -> None:
    """The probe compares a devmap_hash slot's key with r2 (the other map calls compare the key they read)."""
    ops = [(1, UPDATE), (2, UPDATE), (7, UPDATE), (2, 3), (5, 3), (7, 3), (1, 3), (9, 3)]
    layout = MapLayout.from_maps([MapDef("m", DEVMAP_HASH, 4, 4, 8, 0)])
    rom = map_rom(REDIRECT_PROGRAM)
    rtl_state, vm_state = MapState(layout), MapState(layout)
    got = RtlSim(rom, state=rtl_state, trace=True).run_packets([(bytes(64), key, op) for key, op in ops])
    vm = VliwModel(rom, vm_state, trace=True)
    actions = []
    for i, (key, op) in enumerate(ops):
        want = vm.run(bytes(64), ingress_ifindex=key, rx_queue_index=op)
        assert first_divergence(got[i].trace, want.trace) is None, f"packet {i}"
        assert (got[i].action, got[i].fault, got[i].cycles, got[i].redirect) == \
            (want.action, want.fault, want.cycles, want.redirect), f"packet {i}: RTL {got[i]} model {want}"
        actions.append(want.action)
    # hits redirect (to the stored ifindex, key * 3), misses return the flags' action (2: XDP_PASS)
    assert actions[3:] == [params.XDP_REDIRECT, params.XDP_PASS, params.XDP_REDIRECT, params.XDP_REDIRECT,
                           params.XDP_PASS]
    assert got[3].redirect == 6 and got[5].redirect == 21


# The map unit off chip (docs/maps.md "Memory tiers"): the region header and every slot it visits read through its
# off-chip port, writes posted; the same results, memory and cycles as the VLIW model.
@pytest.mark.parametrize("tier", ["qdr", "ddr"])
def test_off_chip_hash_delete_and_lru_refresh(tier: str) -> None:
    ops = [(1, UPDATE), (2, UPDATE), (3, UPDATE), (2, DELETE), (2, LOOKUP), (2, DELETE), (9, DELETE),
           (5, UPDATE), (5, LOOKUP), (1, LOOKUP), (2, UPDATE), (2, LOOKUP)]
    state = _cosim(HASH, 8, 4, ops, tier=tier)
    assert state.lookup(0, (2).to_bytes(4, "little")) == (6).to_bytes(8, "little")
    ops = [(1, UPDATE), (2, UPDATE), (1, LOOKUP), (3, UPDATE), (2, UPDATE), (7, LOOKUP), (3, DELETE),
           (4, UPDATE), (1, LOOKUP)]
    state = _cosim(LRU_HASH, 8, 4, ops, tier=tier)
    assert state.count(0) == 3


@pytest.mark.parametrize("tier", ["qdr", "ddr"])
def test_off_chip_array_update_lookup_delete(tier: str) -> None:
    state = _cosim(ARRAY, 8, 4, [(1, UPDATE), (1, LOOKUP), (1, DELETE), (9, DELETE), (9, UPDATE), (3, LOOKUP),
                                 (3, UPDATE), (3, LOOKUP)], tier=tier)
    assert state.lookup(0, (3).to_bytes(4, "little")) == (9).to_bytes(8, "little")


@pytest.mark.parametrize("tier", ["qdr", "ddr"])
@pytest.mark.parametrize("mtype", [HASH, LRU_HASH])
def test_off_chip_random_update_lookup_delete_with_evictions(mtype: int, tier: str) -> None:
    # four slots for up to 8 keys: probes wrap, the LRU map evicts (its victim scan reads every slot off chip)
    rng = random.Random(mtype * 7 + len(tier))
    ops = [(rng.randrange(1, 9), rng.choice((LOOKUP, UPDATE, UPDATE, DELETE))) for _ in range(60)]
    _cosim(mtype, 8, 4, ops, tier=tier)


@pytest.mark.parametrize(("key_size", "tier"), [(28, "ddr"), (56, "ddr"), (64, "qdr"), (64, "ddr")])
def test_off_chip_wide_keys(key_size: int, tier: str) -> None:
    # slots of two and three windows: one read of all of them per slot visited. A 64-byte key in DDR puts the
    # value at 80 (16-byte grain): its updates are beyond the slot the map unit writes, a helper fault on both
    rng = random.Random(200 + key_size)
    ops = [(1, UPDATE), (2, UPDATE), (1, LOOKUP), (3, LOOKUP), (2, DELETE), (2, LOOKUP), (3, UPDATE), (3, LOOKUP)]
    ops += [(rng.randrange(1, 9), rng.choice((LOOKUP, LOOKUP, UPDATE, DELETE))) for _ in range(30)]
    state = _cosim(HASH, 8, 8, ops, key_size=key_size, program=_tail_key_program(key_size), tier=tier)
    assert (state.count(0) == 0) == (key_size == 64 and tier == "ddr")
