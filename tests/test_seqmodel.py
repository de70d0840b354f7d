"""The sequential model: XDP semantics, calls and frames, maps through lddw, helpers and their kernel limits."""

from __future__ import annotations

import pytest
from bpf_asm import alu64, atomic, call, call_local, exit_, jmp, lddw, ldx, mov, movr, st, stx

from hxdp import params
from hxdp.frontend.program import MapDef, Program
from hxdp.isa import table as T
from hxdp.models.helpers import csum_diff, xorshift32
from hxdp.models.maps import MapState
from hxdp.models.seq import ModelError, SeqModel

PKT = bytes(range(64))
H = params.HELPER_IDS


def run(insns: list, maps: list[MapDef] | None = None, packet: bytes = PKT, **kw):
    m = SeqModel(Program("t", "xdp", insns, maps or []), MapState.from_maps(maps or []), **kw)
    return m, m.run(packet)


def data_regs() -> list:
    return [ldx("w", 2, 1, 0), ldx("w", 3, 1, 4)]


def test_mac_swap_tx() -> None:
    prog = data_regs() + [ldx("6", 4, 2, 0), ldx("6", 5, 2, 6), stx("6", 2, 5, 0), stx("6", 2, 4, 6),
                          mov(0, params.XDP_TX), exit_()]
    _, res = run(prog)
    assert res.action == params.XDP_TX and res.packet == PKT[6:12] + PKT[:6] + PKT[12:]
    assert res.cycles == len(prog) and res.fault is None


def test_action_is_low_32_bits_of_r0() -> None:
    _, res = run(lddw(0, 0xFFFF_FFFF_0000_0002) + [exit_()])
    assert res.action == 2


def test_ctx_fields() -> None:
    prog = [ldx("w", 0, 1, 12), ldx("w", 2, 1, 16), alu64("lsh", 2, 8), alu64("or", 0, src=2), exit_()]
    m = SeqModel(Program("t", "xdp", prog), MapState.from_maps([]))
    assert m.run(PKT, ingress_ifindex=7, rx_queue_index=3).action == 7 | (3 << 8)


def test_bpf_to_bpf_call_frames_and_callee_saved() -> None:
    prog = [
        mov(6, 11), st("dw", 10, -8, 5),  # caller: r6 and its stack slot
        mov(1, 3), call_local(5),  # -> slot 9
        ldx("dw", 2, 10, -8), alu64("add", 0, src=2), alu64("add", 0, src=6),  # 2*3 + 5 + 11
        alu64("and", 0, 0xFF), exit_(),
        # callee: clobbers r6, writes its own frame, r0 = 2 * r1
        mov(6, 99), st("dw", 10, -8, 77), movr(0, 1), alu64("add", 0, src=1), exit_(),
    ]
    m, res = run(prog)
    assert res.action == 6 + 5 + 11 and res.fault is None
    assert m.regs[10] == params.STACK_TOP


def test_instruction_limit() -> None:
    _, res = run([mov(0, 2), jmp("jeq", 0, -1, 2), exit_()], max_insns=1000)
    assert res.action == params.XDP_ABORTED and res.fault == "cycle limit" and res.cycles == 1000


@pytest.mark.parametrize("prog,what", [
    ([mov(2, 0), ldx("b", 0, 2, 0), exit_()], "NULL"),
    ([ldx("w", 2, 1, 4), ldx("b", 0, 2, 0), exit_()], "data_end"),
    ([st("w", 1, 0, 0), mov(0, 2), exit_()], "ctx store"),
    ([ldx("b", 0, 10, 0), exit_()], "above the stack"),
    ([ldx("b", 0, 10, -513), exit_()], "below the stack"),
    (lddw(2, params.MAP_HANDLE_BASE) + [ldx("b", 0, 2, 0), exit_()], "map handle"),
])
def test_access_faults(prog: list, what: str) -> None:
    _, res = run(prog)
    assert res.action == params.XDP_ABORTED and res.fault.startswith("access fault"), what


def test_illegal_instruction() -> None:
    from hxdp.isa.insn import Insn

    _, res = run([Insn(0x20, 0, 0, 0, 0), exit_()])  # legacy ld_abs
    assert res.action == 0 and res.fault.startswith("illegal instruction")


def test_stack_zeroed_per_packet() -> None:
    prog = [ldx("dw", 0, 10, -8), st("dw", 10, -8, 9), exit_()]
    m = SeqModel(Program("t", "xdp", prog), MapState.from_maps([]))
    assert [m.run(PKT).action for _ in range(2)] == [0, 0]


def test_map_counter_and_global_data() -> None:
    maps = [MapDef("cnt", params.MAP_TYPE_IDS["percpu_array"], 4, 8, 2),
            MapDef(".data", params.MAP_TYPE_IDS["array"], 4, 8, 1, initial=(40).to_bytes(8, "little"),
                   section=".data")]
    prog = ([st("w", 10, -4, 1)] + lddw(1, 0, src=T.PSEUDO_MAP_FD) + [movr(2, 10), alu64("add", 2, -4),
            call(H["map_lookup_elem"]), jmp("jeq", 0, 3, 0), mov(1, 1), atomic("dw", 0, 1, 0, 0x01)]
            + [ja_(0)] + lddw(3, 1, src=T.PSEUDO_MAP_VALUE, hi=0) + [ldx("dw", 0, 3, 0), exit_()])
    maps_state = MapState.from_maps(maps)
    m = SeqModel(Program("t", "xdp", prog, maps), maps_state)
    for _ in range(3):
        assert m.run(PKT).action == 40
    assert maps_state.dump()["cnt"][(1).to_bytes(4, "little")] == (3).to_bytes(8, "little")


def ja_(off: int):
    from bpf_asm import ja

    return ja(off)


def helper_prog(helper: str, r2: int) -> list:
    return [movr(6, 1), mov(2, r2), call(H[helper]), exit_()]


def err(res) -> int:
    return res.action - (1 << 32) if res.action & 0x80000000 else res.action


# Limits measured on Linux 6.18 with BPF_PROG_TEST_RUN (tests/test_models_kernel.py re-checks them live).
@pytest.mark.parametrize("helper,arg,ret,length", [
    ("xdp_adjust_head", -216, 0, 64 + 216), ("xdp_adjust_head", -217, -22, 64),
    ("xdp_adjust_head", 50, 0, 14), ("xdp_adjust_head", 51, -22, 64),
    ("xdp_adjust_tail", 3456, 0, 3520), ("xdp_adjust_tail", 3457, -22, 64),
    ("xdp_adjust_tail", -50, 0, 14), ("xdp_adjust_tail", -51, -22, 64),
    ("xdp_adjust_meta", -4, 0, 64), ("xdp_adjust_meta", -3, -13, 64), ("xdp_adjust_meta", 4, -22, 64),
    ("xdp_adjust_meta", -216, 0, 64), ("xdp_adjust_meta", -220, -22, 64),
])
def test_adjust_limits(helper: str, arg: int, ret: int, length: int) -> None:
    _, res = run(helper_prog(helper, arg))
    assert err(res) == ret and len(res.packet) == length


def test_adjust_head_grow_keeps_meta_and_tail_grow_zeroes() -> None:
    prog = [movr(6, 1), mov(2, -8), call(H["xdp_adjust_meta"]), ldx("w", 2, 6, 8), st("dw", 2, 0, 0x1234),
            movr(1, 6), mov(2, -20), call(H["xdp_adjust_head"]),
            movr(1, 6), mov(2, -30), call(H["xdp_adjust_tail"]), movr(1, 6), mov(2, 20),
            call(H["xdp_adjust_tail"]), exit_()]
    _, res = run(prog)
    assert res.action == 0 and res.meta == (0x1234).to_bytes(8, "little")
    # the metadata moved with data; its old bytes stay where they were (the kernel's memmove)
    assert res.packet == bytes(12) + (0x1234).to_bytes(8, "little") + PKT[:34] + bytes(20)
    _, res = run([movr(6, 1), mov(2, -300), call(H["xdp_adjust_head"]), exit_()])
    assert err(res) == -22


def test_meta_limit_after_head_move() -> None:
    for meta, ret in ((-252, 0), (-256, -13)):
        prog = [movr(6, 1), mov(2, 100), call(H["xdp_adjust_head"]), movr(1, 6), mov(2, meta),
                call(H["xdp_adjust_meta"]), exit_()]
        _, res = run(prog, packet=bytes(200))
        assert err(res) == ret


def devmaps() -> list[MapDef]:
    return [MapDef("ports", params.MAP_TYPE_IDS["devmap"], 4, 4, 8),
            MapDef("ports_h", params.MAP_TYPE_IDS["devmap_hash"], 4, 8, 8)]


@pytest.mark.parametrize("map_idx,key,flags,action,target", [
    (0, 3, 0, params.XDP_REDIRECT, 42), (0, 4, 0, params.XDP_ABORTED, None), (0, 4, 2, params.XDP_PASS, None),
    (0, 99, 1, params.XDP_DROP, None), (0, 3, 4, params.XDP_ABORTED, None),
    (1, 1000, 0, params.XDP_REDIRECT, 7), (1, 1001, 3, params.XDP_TX, None),
])
def test_redirect_map(map_idx: int, key: int, flags: int, action: int, target: int | None) -> None:
    maps = devmaps()
    state = MapState.from_maps(maps)
    assert state.update(0, (3).to_bytes(4, "little"), (42).to_bytes(4, "little")) == 0
    assert state.update(1, (1000).to_bytes(4, "little"), (7).to_bytes(4, "little") + bytes(4)) == 0
    prog = lddw(1, map_idx, src=T.PSEUDO_MAP_FD) + [mov(2, key), mov(3, flags), call(H["redirect_map"]), exit_()]
    res = SeqModel(Program("t", "xdp", prog, maps), state).run(PKT)
    assert (res.action, res.redirect) == (action, target)


def test_redirect_flags() -> None:
    _, res = run([mov(1, 9), mov(2, 0), call(H["redirect"]), exit_()])
    assert (res.action, res.redirect) == (params.XDP_REDIRECT, 9)
    _, res = run([mov(1, 9), mov(2, 1), call(H["redirect"]), exit_()])
    assert (res.action, res.redirect) == (params.XDP_ABORTED, None)


def test_csum_diff_helper() -> None:
    prog = data_regs() + [movr(1, 2), movr(3, 2), alu64("add", 3, 8), mov(2, 8), mov(4, 12), mov(5, 0),
                          call(H["csum_diff"]), exit_()]
    _, res = run(prog)
    assert res.action == csum_diff(PKT[:8], PKT[8:20], 0)


def test_csum_diff_values() -> None:
    # fold(sum(to) - sum(from)) for a 16-bit change, and the seed-only case
    assert csum_diff(b"\x00\x01\x00\x00", b"\x00\x02\x00\x00", 0) == 0x0100
    assert csum_diff(b"", b"", 0x7FFFFFFF) == 0x7FFF
    assert csum_diff(b"", b"\x01\x00\x00\x00", 0) == 1


def test_prandom_ktime_smp_printk() -> None:
    fmt = b"x=%d\0"
    prog = [st("w", 10, -8, int.from_bytes(fmt[:4], "little")), st("b", 10, -4, 0),
            call(H["get_prandom_u32"]), movr(7, 0), call(H["ktime_get_ns"]), movr(8, 0),
            call(H["get_smp_processor_id"]), movr(9, 0),
            movr(1, 10), alu64("add", 1, -8), mov(2, 5), mov(3, 42), call(H["trace_printk"]),
            movr(0, 7), exit_()]
    m, res = run(prog)
    assert res.action == xorshift32(0x2545F491)
    assert m.run(PKT).action == xorshift32(xorshift32(0x2545F491))
    assert res.printk == [(b"x=%d", (42, 0, 0))]


def test_run_raw() -> None:
    prog = [ldx("w", 0, 1, 0), alu64("add", 0, src=2), st("b", 1, 0, 0xAA), exit_()]
    m = SeqModel(Program("raw", "raw", prog), MapState.from_maps([]))
    assert m.run_raw(b"\x10\x00\x00\x00") == 0x14
    assert m.raw_out == b"\xaa\x00\x00\x00"
    with pytest.raises(ModelError, match="access fault"):
        SeqModel(Program("raw", "raw", [ldx("w", 0, 1, 4), exit_()]), MapState.from_maps([])).run_raw(bytes(4))
