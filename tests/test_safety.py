"""The kernel's safety rules without the kernel: one case per class (map-value overflow into a neighbour map, a
.rodata write, a ctx store, an unbounded loop), refused by the compiler as C, and as a ROM made by hand stopped by
the RTL and both models alike, with the neighbour map's and the .rodata bytes unchanged; corrupted map memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from hxdp import params
from hxdp.compiler import compile_program
from hxdp.errors import CompileError, HxdpError
from hxdp.frontend.elf import load_program
from hxdp.frontend.program import MapDef, Program
from hxdp.isa.rom import Rom
from hxdp.linux import kernel
from hxdp.models.maps import MapLayout, MapState
from hxdp.models.seq import SeqModel
from hxdp.models.vliw import VliwModel
from tests.conftest import compile_bpf
from tests.rtl_support import assert_rtl_equals_model, require_rtl, row

DATA = Path(__file__).parent / "data" / "safety"
ARRAY, HASH, LPM = 2, 1, 11

# the C programs: what the compiler's one-line refusal says (the instruction's slot is named in every case)
REFUSALS = {
    "map_overflow": "store of 8 bytes at offset 64 of a value of map small",
    "rodata_write": "store into the read-only map",
    "devmap_write": "store into the read-only map ports",
    "ctx_store": "store into the context",
    "unbounded_loop": "loop without a bound",
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_compile_refuses(tmp_path: Path, name: str) -> None:
    prog = load_program(compile_bpf(DATA / f"{name}.c", tmp_path))
    with pytest.raises(CompileError) as exc:
        compile_program(prog)
    msg = str(exc.value)
    assert REFUSALS[name] in msg and "slot " in msg and f"{name}.o" in msg and "\n" not in msg, msg


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_kernel_refuses_too(tmp_path: Path, name: str) -> None:
    """Each case is one the kernel verifier refuses: the compiler's rule is not stricter than the kernel's."""
    ok, why = kernel.available()
    if not ok:
        pytest.skip(why)
    obj = compile_bpf(DATA / f"{name}.c", tmp_path)
    with pytest.raises(HxdpError):
        kernel.KernelProgram(obj).close()


def test_bounded_loops_compile_and_the_kernel_agrees(tmp_path: Path) -> None:
    """Loops the verifier accepts (a counter against a constant, against a packet byte, a pointer walking to
    data_end) are not refused, and they run on the models like the kernel (a compile refusal would be a false
    positive of the loop check)."""
    obj = compile_bpf(DATA / "bounded_loops.c", tmp_path)
    prog = load_program(obj)
    rom = compile_program(prog).rom
    pkt = bytes(range(5, 69)) + bytes(40)
    res = VliwModel(rom, MapState(_layout())).run(pkt)
    assert res.fault is None, res
    ok, why = kernel.available()
    if ok:
        with kernel.KernelProgram(obj) as kp:
            assert kp.run(pkt).action == res.action


# --- ROMs made by hand ------------------------------------------------------------------------------------------
SMALL = MapDef("small", ARRAY, 4, 8, 1)
NEIGHBOUR = MapDef("neighbour", ARRAY, 4, 8, 8)
RODATA = MapDef("p.rodata", ARRAY, 4, 8, 1, params.BPF_F_RDONLY_PROG, initial=b"constant", section=".rodata")
LOOKUP_SMALL = [row(f"r1 = {hex(params.MAP_HANDLE_BASE)} ll"), row("r2 = r10"), row("r2 += -4"), row("call 1"),
                row("if r0 == 0 goto +2"), row("r9 = 57005")]


def _layout(*maps: MapDef) -> MapLayout:
    return MapLayout.from_maps(list(maps))


def _program(rom: Rom, maps: list[MapDef]) -> Program:
    """The ROM's slots in order as a sequential program (one instruction a row, no-ops left out)."""
    insns = [ins for r in rom.rows for ins in (r[:2] if r[0].opcode == 0x18 else r[:1])]
    return Program("hand", "xdp", insns, maps)


def _run_everywhere(rom: Rom, maps: list[MapDef], what: str) -> list[tuple[str, str | None, bytes]]:
    """(engine, fault, map memory) on the VLIW model, the sequential model and (when Verilator is there) the RTL,
    which must agree with the VLIW model row by row and byte by byte."""
    layout = _layout(*maps)
    pkt = bytes(range(64))
    out = []
    st = MapState(layout)
    res = VliwModel(rom, st).run(pkt)
    out.append(("vliw-model", res.fault, bytes(st.mem[: layout.used_bytes()])))
    st = MapState(layout)
    res = SeqModel(_program(rom, maps), st).run(pkt)
    out.append(("seq-model", res.fault, bytes(st.mem[: layout.used_bytes()])))
    try:
        require_rtl()
    except pytest.skip.Exception:
        return out
    got = assert_rtl_equals_model(rom, [pkt], what, layout=layout)[0]
    out.append(("rtl", got.fault, out[0][2]))  # (its map memory equals the model's: assert_rtl_equals_model)
    return out


def _untouched(layout: MapLayout, name: str, mem: bytes, want: bytes) -> bool:
    r = layout.region(layout.map_id(name))
    return mem[r.offset : r.offset + r.size] == want


@pytest.mark.parametrize("how", ["lane store", "store at an untagged address", "helper read"])
def test_rom_map_value_overflow(how: str) -> None:
    maps = [SMALL, NEIGHBOUR]
    layout = _layout(*maps)
    neighbour = layout.region(1)
    if how == "lane store":
        tail = [row("*(u64 *)(r0 + 64) = r9")]  # 64 bytes past small's only value: neighbour's first
    elif how == "store at an untagged address":  # a pointer the program made up (no tag)
        tail = [row(f"r3 = {hex(params.MAP_BASE + neighbour.offset)} ll"), row("*(u64 *)(r3 + 0) = r9")]
    else:  # csum_diff reads 16 bytes of an 8-byte value through the helper's port
        tail = [row("r1 = r0"), row("r2 = 16"), row("r3 = 0"), row("r4 = 0"), row("r5 = 0"), row("call 28")]
    rom = Rom([*LOOKUP_SMALL[:5], *LOOKUP_SMALL[5:], *tail, row("exit 1")])
    for engine, fault, mem in _run_everywhere(rom, maps, how):
        assert fault is not None and fault.startswith("access fault"), (engine, fault)
        assert _untouched(layout, "neighbour", mem, bytes(neighbour.size)), engine


def test_rom_in_value_access_still_works() -> None:
    """The same lookup writing inside its value commits (the check is not a blanket refusal)."""
    maps = [SMALL, NEIGHBOUR]
    layout = _layout(*maps)
    rom = Rom([*LOOKUP_SMALL, row("*(u64 *)(r0 + 0) = r9"), row("exit 1")])
    for engine, fault, mem in _run_everywhere(rom, maps, "in-value store"):
        assert fault is None, (engine, fault)
        small = layout.region(0)
        assert mem[small.offset : small.offset + 8] == (57005).to_bytes(8, "little"), engine


@pytest.mark.parametrize("how", ["store", "atomic", "store through a lookup"])
def test_rom_rodata_write(how: str) -> None:
    """A .rodata value is read-only through its global-data address and through a lookup of its map (the map FSM
    tags the pointer from the map's configuration entry)."""
    maps = [RODATA]
    layout = _layout(*maps)
    ptr = layout.value_addr(0, 0)
    if how == "store through a lookup":
        rom = Rom([*LOOKUP_SMALL[:4], row("r1 = r0"), row("r9 = 1"), row("r0 = *(u32 *)(r1 + 4)"),
                   row("*(u32 *)(r1 + 0) = r9"), row("exit 1")])
    else:
        access = "*(u32 *)(r1 + 0) = r9" if how == "store" else "lock *(u32 *)(r1 + 0) += r9"
        rom = Rom([row(f"r1 = {hex(ptr)} ll"), row("r9 = 1"), row("r0 = *(u32 *)(r1 + 4)"), row(access),
                   row("exit 1")])
    for engine, fault, mem in _run_everywhere(rom, maps, f".rodata {how}"):
        assert fault is not None and fault.startswith("access fault"), (engine, fault)
        assert mem[:8] == b"constant", engine


@pytest.mark.parametrize("helper", [False, True])
def test_rom_tag_outside_the_map_memory(helper: bool) -> None:
    """Only a map-value pointer carries a tag: a stack pointer with bits 63:32 set faults, for a lane and for a
    helper's read alike."""
    tagged = hex(params.map_tag(0, 8) << 32 | params.STACK_TOP - 16)
    use = [row("r1 = r6"), row("r2 = 8"), row("r3 = 0"), row("r4 = 0"), row("r5 = 0"), row("call 28")] if helper \
        else [row("r0 = *(u64 *)(r6 + 0)")]
    rom = Rom([row(f"r6 = {tagged} ll"), *use, row("exit 2")])
    for engine, fault, _mem in _run_everywhere(rom, [], "tagged stack pointer"):
        assert fault is not None and fault.startswith("access fault"), (engine, fault)


def test_rom_ctx_store() -> None:
    rom = Rom([row("r9 = 1"), row("*(u32 *)(r1 + 0) = r9"), row("exit 2")])
    for engine, fault, _mem in _run_everywhere(rom, [], "ctx store"):
        assert fault is not None and fault.startswith("access fault"), (engine, fault)


def test_rom_unbounded_loop() -> None:
    """A loop that never ends stops at the cycle limit (the sequential model counts instructions)."""
    rom = Rom([row("r0 = 2"), row("r0 += 1"), row("goto -2")])
    for engine, fault, _mem in _run_everywhere(rom, [], "unbounded loop"):
        assert fault == params.FAULT_NAMES[params.FAULT_RUNAWAY], (engine, fault)


# --- corrupted map memory -----------------------------------------------------------------------------------------
def _lookup_rom(key_bytes: int) -> Rom:
    stores = [row(f"*(u8 *)(r10 - {8 - i}) = {10 + i}") for i in range(key_bytes)]
    return Rom([*stores, row(f"r1 = {hex(params.MAP_HANDLE_BASE)} ll"), row("r2 = r10"), row("r2 += -8"),
                row("call 1"), row("if r0 == 0 goto +1"), row("r0 = *(u8 *)(r0 + 0)"), row("exit 2")])


@pytest.mark.parametrize("what", ["lpm high", "lpm count", "lpm prefix length", "hash states"])
def test_corrupted_map_memory(what: str) -> None:
    """A corrupted header or slot gives a bounded walk (no packet near the cycle limit), the same result on the RTL
    and the model, no Python exception, and host operations that stay inside the map."""
    m = MapDef("t", LPM if what.startswith("lpm") else HASH, 8 if what.startswith("lpm") else 4, 8, 4)
    layout = _layout(m)
    r = layout.region(0)
    st = MapState(layout)
    key = (32).to_bytes(4, "little") + bytes([10, 11, 12, 13]) if what.startswith("lpm") else bytes([10, 11, 12, 13])
    assert st.update(0, key, bytes(8)) == 0
    if what == "lpm high":
        st.mem[r.offset + 8 : r.offset + 12] = (0xFFFFF).to_bytes(4, "little")
    elif what == "lpm prefix length":
        st.mem[r.slot_addr(0) + 4 : r.slot_addr(0) + 8] = (0xFFFFFFFF).to_bytes(4, "little")
        key = (0xFFFFFFFF).to_bytes(4, "little") + key[4:]  # the host deletes with the same corrupted length
    elif what == "lpm count":
        st.mem[r.offset : r.offset + 4] = (0).to_bytes(4, "little")
        for i in range(r.slots):
            st.mem[r.slot_addr(i)] = 1
    else:
        for i in range(r.slots):
            st.mem[r.slot_addr(i)] = 7  # no state the format knows
    before = bytes(st.mem)
    rom = _lookup_rom(8 if what.startswith("lpm") else 4)
    vm_state = MapState(layout)
    vm_state.mem[:] = before
    res = VliwModel(rom, vm_state).run(bytes(64))
    assert res.fault is None and res.cycles < 10 * (r.slots + 20), res
    other = (99).to_bytes(4, "little") + bytes(4) if what.startswith("lpm") else bytes(4)
    for op in (lambda: st.lookup(0, key), lambda: st.update(0, other, bytes(8)), lambda: st.delete(0, key),
               lambda: st.dump()):
        try:
            op()
        except HxdpError:
            pass
    assert bytes(st.mem[: r.offset]) == before[: r.offset]
    assert bytes(st.mem[r.offset + r.size :]) == before[r.offset + r.size :]
    try:
        require_rtl()
    except pytest.skip.Exception:
        return
    from hxdp.rtl.sim import RtlSim

    rtl_state = MapState(layout)
    rtl_state.mem[:] = before
    got = RtlSim(rom, state=rtl_state).run_packets([bytes(64)])[0]
    assert (got.action, got.fault, got.cycles) == (res.action, res.fault, res.cycles)
    assert bytes(rtl_state.mem) == bytes(vm_state.mem)


# --- the event helpers' pointers (execution contract section 4, docs/helpers.md) ----------------------------------
RING = MapDef("ring", params.LINUX_MAP_TYPE_IDS["ringbuf"], 0, 0, 4096)
PERF = MapDef("perf", params.LINUX_MAP_TYPE_IDS["perf_event_array"], 4, 4, 0)
RESERVE_8 = [row(f"r1 = {hex(params.MAP_HANDLE_BASE + 2)} ll"), row("r2 = 8"), row("r3 = 0"), row("call 131"),
             row("if r0 == 0 goto +9"), row("r9 = 57005")]  # ring = map 2 (after small and neighbour)
SUBMIT = [row("r2 = 0"), row("call 132")]
# what each case's ROM does after the lookup of small (r0: its 8-byte value) or the reservation of an 8-byte record
EVENT_CASES = {
    "record store and submit": (RESERVE_8, [row("*(u64 *)(r0 + 0) = r9"), row("r1 = r0"), *SUBMIT], None),
    "store past the record": (RESERVE_8, [row("*(u64 *)(r0 + 8) = r9"), row("r1 = r0"), *SUBMIT], "access fault"),
    "submit of an untagged record": (RESERVE_8, [row("r1 = r0"), row("r1 <<= 32"), row("r1 >>= 32"), *SUBMIT],
                                     "helper fault"),
    "ringbuf_output past a value": (LOOKUP_SMALL, [row("r2 = r0"), row(f"r1 = {hex(params.MAP_HANDLE_BASE + 2)} ll"),
                                                   row("r3 = 16"), row("r4 = 0"), row("call 130")], "access fault"),
    "perf_event_output past a value": (LOOKUP_SMALL, [row("r4 = r0"), row(f"r2 = {hex(params.MAP_HANDLE_BASE + 3)} ll"),
                                                      row("w3 = -1"), row("r5 = 16"), row("call 25")],
                                       "access fault"),
}


@pytest.mark.parametrize("case", sorted(EVENT_CASES))
def test_rom_event_pointers(case: str) -> None:
    """ringbuf_reserve returns a pointer tagged with its record: stores into the record pass, past it fault, and
    submit takes only that pointer (its header is the unit's own read); the output helpers read the program's bytes
    through its pointer's tag. The RTL equals the VLIW model row by row, and the sequential model faults alike."""
    head, tail, want = EVENT_CASES[case]
    rom = Rom([*head, *tail, row("exit 1")])
    maps = [SMALL, NEIGHBOUR, RING, PERF]
    for engine, fault, _mem in _run_everywhere(rom, maps, case):
        if want is None:
            assert fault is None, (engine, fault)
        else:
            assert fault is not None and fault.startswith(want), (engine, fault)
    if want is None:
        res = VliwModel(rom, MapState(_layout(*maps))).run(bytes(range(64)))
        assert [e.data for e in res.events] == [(57005).to_bytes(8, "little")], res.events
