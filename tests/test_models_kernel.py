"""The models against the Linux kernel: raw ALU programs (hypothesis), helper limits, and the program suite."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from bpf_asm import alu32, alu64, exit_, jmp, ldx, mov, stx
from conftest import compile_bpf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernel_fixtures import requires_kernel

from hxdp.frontend.program import Program
from hxdp.isa import table as T
from hxdp.isa.insn import Insn
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapState
from hxdp.models.seq import SeqModel
from hxdp.models.vliw import VliwModel

pytestmark = [pytest.mark.kernel, requires_kernel]

DATA = Path(__file__).parent / "data" / "models"
REGS = [0, 3, 4, 5, 6, 7, 8, 9]  # r1 holds the buffer, r2 its length
MEM_LEN = 8 * len(REGS)


def seq_raw(insns: list[Insn], mem: bytes) -> tuple[int, bytes]:
    m = SeqModel(Program("raw", "raw", insns), MapState.from_maps([]))
    r0 = m.run_raw(mem)
    return r0, m.raw_out


def vliw_raw(insns: list[Insn], mem: bytes) -> tuple[int, bytes]:
    """One instruction per row: the VLIW model must then agree with the sequential semantics."""
    rows = [[ins, Insn(0), Insn(0), Insn(0)] for ins in insns]
    m = VliwModel(Rom(rows), MapState.from_maps([]))
    r0 = m.run_raw(mem)
    return r0, m.raw_out


def kernel_raw(insns: list[Insn], mem: bytes) -> tuple[int, bytes]:
    from hxdp.linux import kernel

    return kernel.run_raw(insns, mem)


def wrap(body: list[Insn]) -> list[Insn]:
    """Load every register from the buffer, run the body, store every register back, return r0."""
    pro = [ldx("dw", r, 1, 8 * i) for i, r in enumerate(REGS)]
    epi = [stx("dw", 1, r, 8 * i) for i, r in enumerate(REGS)]
    return pro + body + epi + [exit_()]


# --- hypothesis: straight-line ALU programs ----------------------------------------------------------------------
ALU_OPS = ["add", "sub", "mul", "div", "or", "and", "lsh", "rsh", "mod", "xor", "mov", "arsh"]
reg = st.sampled_from(REGS)
imm = st.one_of(st.integers(-(1 << 31), (1 << 31) - 1), st.sampled_from([0, 1, -1, 31, 32, 63, 0x7FFFFFFF]))


@st.composite
def alu_insn(draw) -> list[Insn]:
    kind = draw(st.sampled_from(["alu", "alu", "alu", "neg", "end", "movsx", "sdiv", "jmp"]))
    width = draw(st.sampled_from([32, 64]))
    mk = alu64 if width == 64 else alu32
    d = draw(reg)
    if kind == "alu":
        name = draw(st.sampled_from(ALU_OPS))
        if draw(st.booleans()):
            return [mk(name, d, src=draw(reg))]
        k = draw(imm)
        if name in ("lsh", "rsh", "arsh"):
            k &= width - 1  # the verifier refuses constant shifts out of range
        if name in ("div", "mod") and k == 0:
            k = 3  # the verifier refuses a constant division by zero
        return [mk(name, d, k)]
    if kind == "neg":
        return [Insn(T.BY_NAME[f"neg{width}"].opcode, d)]
    if kind == "end":
        name = draw(st.sampled_from(["le", "be", "bswap"]))
        return [Insn(T.BY_NAME[name].opcode, d, 0, 0, draw(st.sampled_from([16, 32, 64])))]
    if kind == "movsx":
        off = draw(st.sampled_from([8, 16] if width == 32 else [8, 16, 32]))
        return [mk("mov", d, src=draw(reg), off=off)]
    if kind == "sdiv":
        name = draw(st.sampled_from(["div", "mod"]))
        if draw(st.booleans()):
            return [mk(name, d, src=draw(reg), off=1)]
        k = draw(st.sampled_from([-1, 1, 2, -3, 7, -(1 << 31)]))
        return [mk(name, d, k, off=1)]
    cond = draw(st.sampled_from(list(T.JMP_OPS)))
    skipped = draw(st.sampled_from(ALU_OPS[:3] + ["xor"]))
    jw = draw(st.sampled_from([32, 64]))
    j = jmp(cond, d, 1, src=draw(reg), width=jw) if draw(st.booleans()) else jmp(cond, d, 1, draw(imm), width=jw)
    return [j, mk(skipped, draw(reg), draw(imm))]


programs = st.lists(alu_insn(), min_size=1, max_size=12).map(lambda xs: [i for x in xs for i in x])
memories = st.binary(min_size=MEM_LEN, max_size=MEM_LEN)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, memories)
def test_alu_programs_match_kernel(body: list[Insn], mem: bytes) -> None:
    prog = wrap(body)
    want = kernel_raw(prog, mem)
    assert seq_raw(prog, mem) == want
    assert vliw_raw(prog, mem) == want


SPECIAL = [0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x8000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 63, (1 << 63) - 1,
           (1 << 64) - 1, 0xFFFFFFFF00000000, 0x0000000180000000]


@pytest.mark.parametrize("op,width,off", [(o, w, f) for o in ("div", "mod") for w in (32, 64) for f in (0, 1)]
                         + [("lsh", 64, 0), ("rsh", 32, 0), ("arsh", 64, 0), ("arsh", 32, 0)])
def test_division_and_shift_corners_match_kernel(op: str, width: int, off: int) -> None:
    """Every pair of special values (incl. division by zero, INT_MIN / -1) in one program per operation."""
    mk = alu64 if width == 64 else alu32
    rng = random.Random(op + str(width) + str(off))
    pairs = [(a, b) for a in SPECIAL for b in SPECIAL]
    rng.shuffle(pairs)
    for chunk in range(0, len(pairs), 4):
        part = pairs[chunk : chunk + 4]
        mem = b"".join(a.to_bytes(8, "little") + b.to_bytes(8, "little") for a, b in part)
        mem += bytes(MEM_LEN - len(mem))
        body = [mk(op, 0, src=3, off=off), mk(op, 4, src=5, off=off), mk(op, 6, src=7, off=off),
                mk(op, 8, src=9, off=off)]
        prog = wrap(body)
        want = kernel_raw(prog, mem)
        assert seq_raw(prog, mem) == want, [(hex(a), hex(b)) for a, b in part]
        assert vliw_raw(prog, mem) == want


def test_atomics_on_the_stack_match_kernel() -> None:
    from bpf_asm import atomic
    from bpf_asm import st as store

    body = [stx("dw", 10, 3, -8), stx("w", 10, 4, -16), mov(0, 0)]
    for aop in (0x00, 0x01, 0x41, 0x51, 0xA1, 0xE1, 0xF1):
        body += [atomic("dw", 10, 5, -8, aop), atomic("w", 10, 6, -16, aop)]
    body += [ldx("dw", 7, 10, -8), ldx("w", 8, 10, -16), store("w", 10, -24, 0)]
    mem = bytes(range(1, MEM_LEN + 1))
    prog = wrap(body)
    want = kernel_raw(prog, mem)
    assert seq_raw(prog, mem) == want
    assert vliw_raw(prog, mem) == want


# --- helpers through a compiled object ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def helpers_obj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_bpf(DATA / "helpers_kernel.c", tmp_path_factory.mktemp("models"))


HELPER_CASES = ([(0, d, 0) for d in (-216, -217, -100, 0, 46, 50, 51, 60)]
                + [(1, d, 0) for d in (3456, 3457, 1000, -50, -51, -60, 3)]
                + [(2, d, 0) for d in (-4, -3, 4, -216, -220, -252, -256, 0)]
                + [(3, d, 0) for d in (-20, 20, -208, -209, 50)]
                + [(op, 0, s) for op in (4, 5, 6, 7, 8) for s in (0, 1, 0x7FFFFFFF, -1, 0x12345)]
                + [(op, k, f) for op in (9, 10) for k in (0, 1, 2, 5) for f in (0, 1, 2, 3, 4, 16, 19)]
                + [(11, 1, f) for f in (0, 1)])


def test_helpers_match_kernel(helpers_obj: Path) -> None:
    from hxdp.frontend.elf import load_program
    from hxdp.linux import kernel

    prog = load_program(helpers_obj)
    state = MapState.for_program(prog)
    model = SeqModel(prog, state)
    rng = random.Random(3)
    packets = [bytes(rng.getrandbits(8) for _ in range(n)) for n in (64, 100)] + [bytes(64), b"\xff" * 64]
    ports = {"maps": {"ports": [{"key": "02000000", "value": "01000000"}],
                      "ports_h": [{"key": "05000000", "value": "01000000"}]}}
    state.apply_config(ports)
    with kernel.KernelProgram(helpers_obj) as kp:
        kp.apply_config(ports)
        for op, delta, seed in HELPER_CASES:
            cfg = {"maps": {"args": [{"key": f"{i:02x}000000", "value": (v & 0xFFFFFFFF).to_bytes(4, "little").hex()}
                                     for i, v in enumerate((op, delta, seed))]}}
            kp.apply_config(cfg)
            state.apply_config(cfg)
            for pkt in packets:
                want = kp.run(pkt)
                got = model.run(pkt)
                assert got.fault is None
                assert (got.action, got.meta, got.packet) == (want.action, want.meta, want.packet), \
                    (op, delta, seed, len(pkt))
                if got.action == 4:
                    assert got.redirect == 1  # lo: the devmap entries and bpf_redirect's ifindex


# --- the bundled program suite -----------------------------------------------------------------------------------
def suite_programs() -> list:
    try:
        from hxdp.suite import programs
    except ImportError:
        return []
    return [p for p in programs() if p.obj.exists() and p.traffic.exists()]


@pytest.mark.parametrize("sp", suite_programs(), ids=lambda p: p.name)
def test_suite_program_matches_kernel(sp) -> None:
    """Action, bytes and final map contents agree with the kernel on the program's traffic (first 48 packets)."""
    from hxdp.traffic.pcap import read_pcap

    prog = sp.load()
    state = MapState.for_program(prog)
    cfg = sp.map_config()
    state.apply_config(cfg)
    model = SeqModel(prog, state)
    with sp.kernel() as kp:
        kp.apply_config(cfg)
        for i, pkt in enumerate(read_pcap(sp.traffic)[:48]):
            want, got = kp.run(pkt), model.run(pkt)
            assert got.fault is None, f"packet {i}: {got.fault}"
            assert got.action == want.action, f"packet {i}: action {got.action} != kernel {want.action}"
            assert (got.meta, got.packet) == (want.meta, want.packet), f"packet {i}: bytes differ"
        kdump = kp.dump()
    mdump = state.dump()
    for name, entries in kdump.items():
        if name.endswith(".rodata") or name not in mdump:
            continue
        assert mdump[name] == entries, f"map {name} differs"
