"""The multi-core VLIW model against docs/execution_contract.md section 8: dispatch, the map grant, spin locks,
per-CPU copies and the reorder stage, on hand-written ROMs whose cycles the contract fixes."""

from __future__ import annotations

import pytest
from bpf_asm import alu64, atomic, call, exit_action, jmp, lddw, ldx, mov, row, stx

from hxdp import params
from hxdp.errors import HxdpError
from hxdp.frontend.program import MapDef
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapState
from hxdp.models.multicore import MulticoreModel
from hxdp.models.vliw import VliwModel

FRAME = bytes(range(64))
DROP = [row(exit_action(params.XDP_DROP))]
SPIN_LOCK, SPIN_UNLOCK = params.HELPER_IDS["spin_lock"], params.HELPER_IDS["spin_unlock"]
SMP_ID = params.HELPER_IDS["get_smp_processor_id"]


def straight(rows: int, action: int = params.XDP_DROP) -> list[list]:
    """A ROM of `rows` one-cycle rows, the last exiting with `action`."""
    return [row(mov(3, i)) for i in range(rows - 1)] + [row(exit_action(action))]


def run(rows: list[list], frames: list[bytes], cores: int, maps: list[MapDef] | None = None):
    state = MapState.from_maps(maps or [])
    return MulticoreModel(Rom(rows), state, cores).run(frames), state


def counter(kind: str = "array") -> tuple[list[MapDef], int]:
    """One map of one u64 value, and the tagged pointer to it."""
    maps = [MapDef("cnt", params.MAP_TYPE_IDS[kind], 4, 8, 1)]
    return maps, MapState.from_maps(maps).layout.value_addr(0)


def test_one_core_drop_back_to_back_every_two_cycles() -> None:
    """The 1-core case is the single core's timing: 64-byte frames every 2 cycles (the input bus), one row each."""
    r, _ = run(DROP, [FRAME] * 8, 1)
    assert [f.start for f in r.frames] == [0, 2, 4, 6, 8, 10, 12, 14]
    assert [f.end for f in r.frames] == [f.start for f in r.frames]
    assert r.cycles_per_packet == 2


def test_one_core_long_program_runs_back_to_back() -> None:
    """One core, a 10-cycle packet: the next frame starts the cycle after the exit row's last cycle."""
    r, _ = run(straight(10), [FRAME] * 4, 1)
    assert [(f.start, f.end) for f in r.frames] == [(0, 9), (10, 19), (20, 29), (30, 39)]
    assert r.cycles_per_packet == 10


def test_dispatch_to_lowest_numbered_idle_core() -> None:
    """4 cores, 10 cycles a packet: frames go out every 2 cycles to cores 0..3, then each waits for core 0, 1, ..."""
    r, _ = run(straight(10), [FRAME] * 8, 4)
    assert [(f.core, f.start) for f in r.frames] == [(0, 0), (1, 2), (2, 4), (3, 6), (0, 10), (1, 12), (2, 14),
                                                     (3, 16)]
    assert r.cycles_per_packet == 2.5


def test_frame_length_holds_the_input_bus() -> None:
    """A 100-byte frame is 4 input words: the next frame is dispatched 4 cycles later whatever the cores."""
    r, _ = run(DROP, [bytes(100)] * 4, 4)
    assert [f.start for f in r.frames] == [0, 4, 8, 12]


def test_arrivals_delay_dispatch() -> None:
    r, _ = run(DROP, [FRAME] * 3, 2)
    assert [f.start for f in r.frames] == [0, 2, 4]
    state = MapState.from_maps([])
    late = MulticoreModel(Rom(DROP), state, 2).run([FRAME] * 3, arrivals=[0, 7, 7])
    assert [f.start for f in late.frames] == [0, 7, 9]
    with pytest.raises(HxdpError, match="non-decreasing"):
        MulticoreModel(Rom(DROP), state, 2).run([FRAME] * 2, arrivals=[5, 1])


def test_runt_never_reaches_a_core() -> None:
    r, _ = run(DROP, [bytes(40), FRAME], 2)
    runt, frame = r.frames
    assert (runt.core, runt.start, runt.action, runt.departure) == (None, None, params.XDP_DROP, 0)
    assert (frame.core, frame.start) == (0, 0)


def reorder_rom() -> list[list]:
    """Byte 0 of the frame = 1: a 20-row path; else exit at once. Both XDP_TX."""
    return [row(ldx("b", 3, 2, 0)), row(jmp("jne", 3, 20 - 2, 1))] + straight(20 - 2, params.XDP_TX)[:-1] + \
        [row(exit_action(params.XDP_TX)), row(exit_action(params.XDP_TX))]


def test_reorder_stage_keeps_arrival_order() -> None:
    """A long frame then a short one: the short one finishes first on core 1, and leaves after the long one, once
    its 2 output words are out."""
    long, short = bytes([1]) + FRAME[1:], bytes([0]) + FRAME[1:]
    r, _ = run(reorder_rom(), [long, short], 2)
    f0, f1 = r.frames
    assert (f0.core, f1.core) == (0, 1)
    assert f1.end < f0.end
    assert f0.departure == f0.end + 1
    assert f1.departure == f0.departure + 2  # 64 bytes on the 32-byte output
    assert r.reorder_peak == 1


def test_dropped_frames_leave_no_output_cycles() -> None:
    r, _ = run(DROP, [FRAME] * 3, 2)
    assert [f.departure for f in r.frames] == [f.end + 1 for f in r.frames]
    assert r.reorder_peak == 0


def grant_rom(ptr: int, write: bool = True) -> list[list]:
    """Row 1 stores into the map value (exclusive; `write` False: loads it, shared) and divides (17 cycles holding
    the grant); rows 0 and 2 touch no map."""
    access = stx("dw", 1, 5, 0) if write else ldx("dw", 3, 1, 0)
    return [row(*lddw(1, ptr), mov(5, 3)), row(access, alu64("div", 4, src=5)), row(exit_action(params.XDP_DROP))]


def test_exclusive_grant_stalls_the_second_core() -> None:
    """Core 0 holds the grant exclusive in cycles 1..17; core 1 asks in cycle 3 and its row starts in cycle 18."""
    maps, ptr = counter()
    r, _ = run(grant_rom(ptr), [FRAME] * 2, 2, maps)
    f0, f1 = r.frames
    assert (f0.waits, f0.end) == (0, 18)
    assert (f1.waits, f1.end) == (15, 35)
    assert f1.result.cycles == f0.result.cycles == 19  # waits are not the packet's cycles


def test_shared_readers_run_together() -> None:
    """The same rows loading the value instead of storing it: both cores hold the grant shared, core 1 from cycle
    3 while core 0's row goes on to cycle 17; nobody waits, and 2 cores double the packet rate of 1."""
    maps, ptr = counter()
    r, _ = run(grant_rom(ptr, write=False), [FRAME] * 4, 2, maps)
    assert [(f.core, f.start, f.end) for f in r.frames] == [(0, 0, 18), (1, 2, 20), (0, 19, 37), (1, 21, 39)]
    assert all(f.waits == 0 for f in r.frames)


def test_grant_goes_round_robin() -> None:
    """Cores 0 and 2 ask in cycle 35 while core 1 held the grant last: core 2 gets it first (a fixed priority would
    give it to core 0)."""
    maps, ptr = counter()
    r, _ = run(grant_rom(ptr), [FRAME] * 4, 3, maps)
    assert [(f.core, f.start) for f in r.frames] == [(0, 0), (1, 2), (2, 4), (0, 19)]
    assert [f.waits for f in r.frames] == [0, 15, 30, 32]


def two_values() -> tuple[list[MapDef], int, int]:
    """A u64 array value in the map memory and one in QDR (an off-chip store is exclusive: the tiers have one port),
    and the tagged pointers to them."""
    maps = [MapDef("cnt", params.MAP_TYPE_IDS["array"], 4, 8, 1), MapDef("far", params.MAP_TYPE_IDS["array"], 4, 8, 1,
                                                                         tier="qdr")]
    layout = MapState.from_maps(maps).layout
    return maps, layout.value_addr(0), layout.value_addr(1)


def roles_rom(ptr: int, sptr: int | None = None) -> list[list]:
    """Byte 0 of the frame picks row 2's grant: 0 a 17-cycle shared row (a load of the map value and a division),
    1 a 17-cycle row storing at `sptr` (default `ptr`: a write row; a QDR value: exclusive, its posted write costs
    what a store on chip does), 2 a 1-cycle shared row. Rows 0 and 1 touch no map; row 1 costs 1 cycle for byte 0
    and 2 (a taken branch) for bytes 1 and 2."""
    return [row(*lddw(1, ptr), ldx("b", 3, 2, 0), mov(5, 3)),
            row(*lddw(7, ptr if sptr is None else sptr), jmp("jeq", 3, 2, 1), jmp("jeq", 3, 4, 2)),
            row(ldx("dw", 4, 1, 0), alu64("div", 6, src=5)), row(exit_action(params.XDP_DROP)),
            row(stx("dw", 7, 5, 0), alu64("div", 6, src=5)), row(exit_action(params.XDP_DROP)),
            row(ldx("dw", 4, 1, 0)), row(exit_action(params.XDP_DROP))]


def roles(*bytes0: int) -> list[bytes]:
    return [bytes([b]) + FRAME[1:] for b in bytes0]


def test_exclusive_waits_for_the_shared_rows_and_shared_askers_wait_with_it() -> None:
    """Core 0 reads shared in cycles 2..18. Core 1 asks exclusive in cycle 5 and waits for that row to end: it runs
    in 19..35. Core 2 asks shared in cycle 7, while a shared row is under way: core 1 comes first after core 0 and
    decides, so core 2 waits with it (to cycle 36) rather than pass it."""
    maps, ptr, far = two_values()
    r, _ = run(roles_rom(ptr, far), roles(0, 1, 2), 3, maps)
    assert [(f.core, f.end, f.waits) for f in r.frames] == [(0, 19, 0), (1, 36, 14), (2, 37, 29)]


def test_round_robin_decides_between_shared_and_exclusive() -> None:
    """Core 1 holds the grant exclusive in cycles 5..21; core 2 asks exclusive in 7, core 0 (its second frame)
    shared in 9. In cycle 22 core 2 comes first after core 1: its exclusive row runs (22..38) and core 0, lower
    numbered, waits to 39. When the shared asker comes first, it runs and the exclusive asker waits for its row."""
    maps, ptr, far = two_values()
    r, _ = run(roles_rom(ptr, far), roles(2, 1, 1, 2), 3, maps)
    assert [(f.core, f.start, f.end, f.waits) for f in r.frames] == [(0, 0, 4, 0), (1, 2, 22, 0), (2, 4, 39, 15),
                                                                    (0, 6, 40, 30)]
    # core 0 exclusive in 3..19; cores 1 (shared, asking in 5) and 2 (exclusive, in 7) wait: core 1 decides in 20
    r, _ = run(roles_rom(ptr, far), roles(1, 2, 1), 3, maps)
    assert [(f.core, f.end, f.waits) for f in r.frames] == [(0, 20, 0), (1, 21, 15), (2, 38, 14)]


def test_per_cpu_stores_are_shared() -> None:
    """Stores into a per-CPU array reach the core's own copy: the grant is shared and 2 cores run together; the
    same stores into a plain array wait for each other."""
    for kind, waits in (("percpu_array", [0, 0]), ("array", [0, 15])):
        maps, ptr = counter(kind)
        r, _ = run(grant_rom(ptr), [FRAME] * 2, 2, maps)
        assert [f.waits for f in r.frames] == waits, kind


def trio_rom(choices: list[list], ptrs: tuple[int, int, int]) -> list[list]:
    """Byte 0 of the frame (0, 1, 2) picks one of three rows (`choices`, lanes), with r1, r7 and r8 the pointers
    `ptrs` and r5 = 3; after it the byte at offset 1 of the frame takes r4 (what a load of the row read) and the
    frame leaves (XDP_TX). Rows 0 to 2 touch no map; row 2 costs 1 cycle for byte 0 and 2 (a taken branch) for the
    others."""
    rom = [row(*lddw(1, ptrs[0]), ldx("b", 3, 2, 0), mov(5, 3)), row(*lddw(7, ptrs[1]), *lddw(8, ptrs[2])),
           row(jmp("jeq", 3, 3, 1), jmp("jeq", 3, 6, 2))]
    for lanes in choices:
        rom += [row(*lanes), row(stx("b", 2, 4, 1)), row(exit_action(params.XDP_TX))]
    return rom


def trio_maps() -> tuple[list[MapDef], tuple[int, int, int]]:
    """An array value (r1), another (r7) and a per-CPU array value (r8), u64 each."""
    maps = [MapDef("a", params.MAP_TYPE_IDS["array"], 4, 8, 1), MapDef("b", params.MAP_TYPE_IDS["array"], 4, 8, 1),
            MapDef("p", params.MAP_TYPE_IDS["percpu_array"], 4, 8, 1)]
    layout = MapState.from_maps(maps).layout
    return maps, (layout.value_addr(0), layout.value_addr(1), layout.value_addr(2))


# 17-cycle rows (a division): a load of a's value, a store of 3 into it, a 1-cycle load of it
VISIBILITY = [[ldx("dw", 4, 1, 0), alu64("div", 6, src=5)], [stx("dw", 1, 5, 0), alu64("div", 6, src=5)],
              [ldx("dw", 4, 1, 0)]]


def visibility_run(arrival: int) -> tuple[list, MapState]:
    """4 cores: frame 0 stores 3 into a's value in a write row (its cycles 4..20), frame 1 loads it in a 17-cycle
    shared row from cycle 5 (to 21, past the store's last cycle), frames 2 and 3 in a 1-cycle row, 4 cycles after
    their start (frame 3 arriving at `arrival`)."""
    maps, ptrs = trio_maps()
    state = MapState.from_maps(maps)
    run = MulticoreModel(Rom(trio_rom(VISIBILITY, ptrs)), state, 4).run(roles(1, 0, 2, 2), arrivals=[0, 0, 0, arrival])
    return run.frames, state


@pytest.mark.parametrize(("arrival", "seen"), [(16, 0), (17, 3)])
def test_write_row_runs_beside_shared_readers_and_is_seen_after_its_last_cycle(arrival: int, seen: int) -> None:
    """Nobody waits: the writer holds the grant beside the shared readers. A load in a row starting by cycle 20, the
    store's last, reads the bytes before it (0), even in a row that goes on past it; from cycle 21 on it reads 3."""
    frames, state = visibility_run(arrival)
    assert [(f.core, f.start, f.end, f.waits) for f in frames] == [(0, 0, 22, 0), (1, 2, 23, 0), (2, 4, 10, 0),
                                                                   (2, arrival, arrival + 6, 0)]
    assert [f.result.packet[1] for f in frames[1:]] == [0, 0, seen]
    assert state.dump()["a"][bytes(4)] == (3).to_bytes(8, "little")


def test_one_writer_at_a_time_and_apart_rows_not_beside_it() -> None:
    """Byte 0: 0 an apart row (a store into the core's per-CPU copy), 1 and 2 write rows (a store, an atomic add into
    another value). Core 0's writer holds the grant in cycles 4..20: core 1's writer (asking in 6) and apart row
    (asking in 5) wait for it; core 0's apart row holds it in 3..19 and core 1's writer (asking in 6) waits for it;
    two apart rows run together."""
    maps, ptrs = trio_maps()
    rom = trio_rom([[stx("dw", 8, 5, 0), alu64("div", 6, src=5)], [stx("dw", 1, 5, 0), alu64("div", 6, src=5)],
                    [atomic("dw", 7, 5, 0, ADD), alu64("div", 6, src=5)]], ptrs)
    for bytes0, waits in (((1, 2), [0, 15]), ((1, 0), [0, 16]), ((0, 1), [0, 14]), ((0, 0), [0, 0])):
        r, _ = run(rom, roles(*bytes0), 2, maps)
        assert [f.waits for f in r.frames] == waits, bytes0


def test_writer_deciding_lets_shared_rows_pass_not_apart_ones() -> None:
    """3 cores: core 0's apart row holds the grant in cycles 3..19; core 1's writer asks in 6 and decides (it comes
    first after core 0): it waits for the apart row (to 20); core 2's shared row, asking in 8, goes beside them at
    once; core 2's next frame, an apart row asking in 14, waits for the writer's row (20..36) to end."""
    maps, ptrs = trio_maps()
    rom = trio_rom([[stx("dw", 8, 5, 0), alu64("div", 6, src=5)], [stx("dw", 1, 5, 0), alu64("div", 6, src=5)],
                    [ldx("dw", 4, 7, 0)]], ptrs)
    r, _ = run(rom, roles(0, 1, 2, 0), 3, maps)
    assert [(f.core, f.start, f.waits) for f in r.frames] == [(0, 0, 0), (1, 2, 14), (2, 4, 0), (2, 11, 23)]


def keyed_rom(ptr: int, handle: int, key: int) -> list[list]:
    """Byte 0 of the frame: 1 a 17-cycle write row (a store into the value at `ptr`); else a row looking up map
    `handle` with its key at `key` (r2), then XDP_DROP."""
    return [row(ldx("b", 3, 2, 0), mov(5, 3), *lddw(7, ptr)), row(jmp("jeq", 3, 3, 1)),
            row(*lddw(1, handle), *lddw(2, key)), row(call(LOOKUP)), row(exit_action(params.XDP_DROP)),
            row(stx("dw", 7, 5, 0), alu64("div", 6, src=5)), row(exit_action(params.XDP_DROP))]


def keyed_cases() -> tuple[list[MapDef], dict[str, list[list]]]:
    """Array a (the written value, also a key) and array b (looked up), and keyed_rom with b's key in a's value (the
    lookup apart: it reads bytes a writer stores) or on the stack (shared)."""
    maps = [MapDef("a", params.MAP_TYPE_IDS["array"], 4, 8, 1), MapDef("b", params.MAP_TYPE_IDS["array"], 4, 8, 2)]
    layout = MapState.from_maps(maps).layout
    ptr, handle = layout.value_addr(0), layout.handle(1)
    return maps, {"value": keyed_rom(ptr, handle, ptr), "stack": keyed_rom(ptr, handle, params.STACK_TOP - 8)}


@pytest.mark.parametrize(("key", "waits"), [("value", [0, 15]), ("stack", [0, 0])])
def test_lookup_keyed_by_a_map_value_is_kept_from_a_writer(key: str, waits: list[int]) -> None:
    """Core 0 writes a's value in cycles 3..19; core 1's lookup, asking in 5, waits for it when its key is in a
    writable map value (apart), and goes beside it when its key is on the stack (shared)."""
    maps, roms = keyed_cases()
    r, _ = run(roms[key], roles(1, 0), 2, maps)
    assert [f.waits for f in r.frames] == waits
    assert all(f.result.fault is None for f in r.frames)


def test_rows_without_the_grant_do_not_wait() -> None:
    """A program that touches no map runs on 2 cores exactly as on 1, packet by packet."""
    r, _ = run(straight(7), [FRAME] * 6, 2)
    assert all(f.waits == 0 and f.result.cycles == 7 for f in r.frames)


def test_spin_lock_holds_the_grant_until_unlock() -> None:
    """Core 0 locks in cycle 1 and unlocks in cycle 4: core 1's spin_lock row, asking in cycle 3, starts in 5."""
    maps = [MapDef("cnt", params.MAP_TYPE_IDS["array"], 4, 8, 1, lock_offset=0)]
    ptr = MapState.from_maps(maps).layout.value_addr(0)
    rom = [row(*lddw(1, ptr)), row(call(SPIN_LOCK)), row(mov(3, 1)), row(mov(3, 2)), row(call(SPIN_UNLOCK)),
           row(exit_action(params.XDP_DROP))]
    r, _ = run(rom, [FRAME] * 2, 2, maps)
    assert [f.waits for f in r.frames] == [0, 2]
    # without the lock, the row after spin_lock's would not keep the grant: core 1 would not wait
    unlocked = [rom[0], row(call(SPIN_UNLOCK)), *rom[2:]]
    r, _ = run(unlocked, [FRAME] * 2, 2, maps)
    assert [f.waits for f in r.frames] == [0, 0]


def test_spin_lock_holds_off_shared_readers() -> None:
    """Core 0 holds the lock in cycles 2..5 (spin_lock to spin_unlock's row); core 1's load of the value, shared,
    asks in cycle 5 and runs in 6, after the unlock row. Without the lock (nor the unlock) it runs in 5."""
    maps = [MapDef("cnt", params.MAP_TYPE_IDS["array"], 4, 16, 1, lock_offset=0)]  # the lock, a u64
    ptr = MapState.from_maps(maps).layout.value_addr(0)
    rom = [row(*lddw(1, ptr), ldx("b", 3, 2, 0)), row(jmp("jeq", 3, 5, 1)), row(call(SPIN_LOCK)), row(mov(3, 1)),
           row(mov(3, 2)), row(call(SPIN_UNLOCK)), row(exit_action(params.XDP_DROP)),
           row(ldx("dw", 4, 1, 8)), row(exit_action(params.XDP_DROP))]
    r, _ = run(rom, roles(0, 1), 2, maps)
    assert [(f.core, f.end, f.waits, f.result.fault) for f in r.frames] == [(0, 6, 0, None), (1, 7, 1, None)]
    r, _ = run([*rom[:2], row(mov(3, 0)), *rom[3:5], row(mov(3, 3)), *rom[6:]], roles(0, 1), 2, maps)
    assert [(f.core, f.end, f.waits) for f in r.frames] == [(0, 6, 0), (1, 6, 0)]


def smp_rom(ptr: int) -> list[list]:
    """Store get_smp_processor_id() + 10 into the per-CPU value and into byte 0 of the frame (12 cycles)."""
    return [row(*lddw(1, ptr), call(SMP_ID)), row(alu64("add", 0, 10)),
            row(stx("dw", 1, 0, 0), stx("b", 2, 0, 0)), *straight(9, params.XDP_TX)]


def test_per_cpu_copies_and_processor_id() -> None:
    maps, ptr = counter("percpu_array")
    state = MapState.from_maps(maps)
    model = MulticoreModel(Rom(smp_rom(ptr)), state, 4)
    r = model.run([FRAME] * 4)
    assert [f.core for f in r.frames] == [0, 1, 2, 3]
    assert [f.result.packet[0] for f in r.frames] == [10, 11, 12, 13]
    for k in range(4):
        assert model.dump(k)["cnt"][bytes(4)] == (10 + k).to_bytes(8, "little")


def test_one_core_is_the_vliw_model() -> None:
    """N = 1: the same results, cycles and maps as VliwModel.run, frame by frame."""
    maps, ptr = counter("percpu_array")
    frames = [bytes([i]) + FRAME[1:] for i in range(5)]
    a = MapState.from_maps(maps)
    ref = [VliwModel(Rom(smp_rom(ptr)), a).run(f) for f in frames]
    r, b = run(smp_rom(ptr), frames, 1, maps)
    assert [(x.action, x.packet, x.cycles) for x in ref] == [(f.action, f.result.packet, f.result.cycles)
                                                            for f in r.frames]
    assert a.dump() == b.dump()


@pytest.mark.parametrize("kind", ["percpu_hash"])
def test_unshared_maps_refused_on_several_cores(kind: str) -> None:
    state = MapState.from_maps([MapDef("m", params.MAP_TYPE_IDS[kind], 4, 8, 4)])
    MulticoreModel(Rom(DROP), state, 1)
    with pytest.raises(HxdpError, match=f"not supported: map m \\({kind}\\) with --cores 2"):
        MulticoreModel(Rom(DROP), state, 2)


@pytest.mark.parametrize("cores", [0, params.CORES_MAX + 1])
def test_core_count_bounds(cores: int) -> None:
    with pytest.raises(HxdpError, match="choose 1 to 8"):
        MulticoreModel(Rom(DROP), MapState.from_maps([]), cores)


def grant_of(lanes: list, regs: dict[int, int], maps: list[MapDef] | None = None) -> str | None:
    """The grant mode of a one-row ROM run with `regs` (the others 0)."""
    core = VliwModel(Rom([row(*lanes)]), MapState.from_maps(maps or []))
    r = [0] * params.NUM_REGS
    for reg, value in regs.items():
        r[reg] = value
    return core.grant_mode(0, r)


@pytest.mark.parametrize("helper,regs,mode", [
    ("csum_diff", {1: params.PKT_BASE + 256, 3: params.STACK_BASE}, None),  # packet and stack buffers
    ("csum_diff", {1: params.PKT_BASE + 256, 3: params.MAP_BASE + 64}, "apart"),  # `to` is a map value
    ("csum_diff", {1: params.map_pointer(64, 8, rdonly=True), 3: params.STACK_BASE}, "shared"),  # read-only
    ("trace_printk", {1: params.STACK_BASE}, None),
    ("trace_printk", {1: params.map_pointer(0, 16, rdonly=True)}, "shared"),  # a .rodata format
    ("trace_printk", {1: params.map_pointer(0, 16)}, "apart"),  # a format in a writable value
    ("map_lookup_elem", {1: params.MAP_HANDLE_BASE, 2: params.map_pointer(0, 8)}, "apart"),  # its key in a value
    ("map_lookup_elem", {1: params.MAP_HANDLE_BASE, 2: params.STACK_BASE}, "shared"),
    ("redirect_map", {1: params.MAP_HANDLE_BASE, 2: params.MAP_BASE}, "shared"),  # (r2 is the key itself)
    ("xdp_adjust_head", {1: params.CTX_BASE}, None),
    ("get_smp_processor_id", {}, None),
    ("tail_call", {1: params.CTX_BASE}, "shared"),  # it reads the PROG_ARRAY
    ("redirect_map", {1: params.MAP_HANDLE_BASE}, "shared"),
    ("fib_lookup", {1: params.CTX_BASE}, "shared"),
    ("map_update_elem", {1: params.MAP_HANDLE_BASE}, "exclusive"),
    ("map_delete_elem", {1: params.MAP_HANDLE_BASE}, "exclusive"),
    ("spin_lock", {1: params.MAP_BASE}, "exclusive"),
    ("spin_unlock", {1: params.MAP_BASE}, "exclusive"),
    ("ringbuf_output", {1: params.MAP_HANDLE_BASE}, "exclusive"),
])
def test_which_helper_rows_take_the_grant(helper: str, regs: dict[int, int], mode: str | None) -> None:
    assert grant_of([call(params.HELPER_IDS[helper])], regs) == mode


LOOKUP = params.HELPER_IDS["map_lookup_elem"]


@pytest.mark.parametrize("kind,tier,mode", [
    ("array", None, "shared"), ("hash", None, "shared"), ("percpu_array", None, "shared"),
    ("lru_hash", None, "exclusive"),  # a hit refreshes the slot's stamp
    ("hash", "ddr", "exclusive"), ("array", "qdr", "exclusive"),  # the tiers have one port
])
def test_which_lookups_take_the_grant_shared(kind: str, tier: str | None, mode: str) -> None:
    maps = [MapDef("pad", params.MAP_TYPE_IDS["array"], 4, 8, 1),
            MapDef("m", params.MAP_TYPE_IDS[kind], 4, 8, 16, tier=tier)]
    assert grant_of([call(LOOKUP)], {1: params.MAP_HANDLE_BASE + 1}, maps) == mode  # map 1, whatever map 0 is
    maps[0], maps[1] = maps[1], maps[0]
    assert grant_of([call(LOOKUP)], {1: params.MAP_HANDLE_BASE}, maps) == mode
    assert grant_of([call(LOOKUP)], {1: params.MAP_HANDLE_BASE + 7}, maps) == "shared"  # a bad handle: it faults


PERCPU = [MapDef("a", params.MAP_TYPE_IDS["array"], 4, 8, 4), MapDef("p", params.MAP_TYPE_IDS["percpu_array"], 4, 8, 4)]
ADD = 0x00  # BPF_ADD


@pytest.mark.parametrize("lanes,where,mode", [
    ([ldx("w", 3, 1, 4)], ("a", 0), "shared"),
    ([ldx("w", 3, 1, 4)], ("pkt", 0), None),
    ([ldx("w", 3, 1, 4)], ("stack", 0), None),
    ([ldx("w", 3, 1, 4)], ("ddr", 8), "exclusive"),  # off chip: one port
    ([ldx("w", 3, 1, 4)], ("qdr", 0), "exclusive"),
    ([stx("w", 1, 3, 4)], ("a", 0), "write"),  # a writer: beside readers only
    ([stx("w", 1, 3, 4)], ("p", 0), "apart"),  # the core's own copy: kept from a writer (its copy's write port)
    ([stx("w", 1, 3, 28)], ("p", 0), "apart"),  # its last word
    ([stx("w", 1, 3, -4)], ("p", 0), "write"),  # before it
    ([stx("w", 1, 3, 32)], ("p", 0), "write"),  # past it
    ([atomic("w", 1, 3, 8, ADD)], ("p", 0), "apart"),
    ([atomic("w", 1, 3, 8, ADD)], ("a", 0), "write"),
    ([stx("w", 1, 3, 4)], ("ddr", 0), "exclusive"),
    ([ldx("w", 4, 2, 0), stx("w", 1, 3, 4)], ("a", 0), "write"),  # a row's most demanding access decides
    ([stx("w", 1, 3, 4), call(params.HELPER_IDS["redirect_map"])], ("a", 0), "write"),  # simple_firewall's row
    ([stx("w", 1, 3, 4), call(params.HELPER_IDS["map_lookup_elem"])], ("a", 0), "exclusive"),  # write, key in p
    ([ldx("w", 4, 1, 0), call(params.HELPER_IDS["map_update_elem"])], ("a", 0), "exclusive"),
    ([ldx("w", 4, 1, 0), call(params.HELPER_IDS["get_smp_processor_id"])], ("a", 0), "shared"),
])
def test_which_lane_accesses_take_the_grant(lanes: list, where: tuple[str, int], mode: str | None) -> None:
    regions = {r.name: r.base for r in MapState.from_maps(PERCPU).layout.regions}
    base = {**regions, "pkt": params.PKT_BASE + 256, "stack": params.STACK_BASE, **params.TIER_BASE}
    base.pop("bram")
    assert grant_of(lanes, {1: base[where[0]] + where[1], 2: regions["p"]}, PERCPU) == mode
