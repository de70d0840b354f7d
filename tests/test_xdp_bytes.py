"""bpf_xdp_load_bytes / bpf_xdp_store_bytes (lowered by the compiler) against the kernel at every boundary: the
sequential model runs the calls, the VLIW model and the RTL the ROM the compiler emits."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import compile_bpf
from kernel_fixtures import kernel_test

from hxdp.compiler import compile_program
from hxdp.compiler.lowering import HELPER_RESULT
from hxdp.diff import run_diff
from hxdp.errors import CompileError
from hxdp.frontend.elf import load_program

SOURCE = Path(__file__).parent / "data" / "xdp_bytes" / "xdp_bytes.c"
PROGRAMS = ["load_var", "load_const", "load_far", "load_map", "load_huge", "store_var", "store_map"]
SIZES = (60, 61, 62, 64, 100)
U32 = 0xFFFFFFFF


def _offsets(size: int, length: int) -> list[int]:
    """The helper's u64 offset argument: inside, at the exact end, one past it, at and past 0xffff, and values
    whose low 32 bits are one of those (the kernel casts the argument to u32)."""
    edge = size - length
    base = [0, 1, edge - 1, edge, edge + 1, size, 0xFFFF, 0x10000, U32, 0x7FFFFFFF]
    return base + [(1 << 32) | 5, (U32 << 32) | (edge + 1), (U32 << 32) | edge]


def _packets(length: int) -> list[bytes]:
    out = []
    for size in SIZES:
        for off in _offsets(size, length):
            body = bytes((i * 7 + size) & 0xFF for i in range(size))
            out.append(off.to_bytes(8, "little") + body[8:])
    return out


# the length each variable-offset program copies (its offsets are chosen around size - length)
LENGTHS = {"load_var": 24, "load_map": 32, "store_var": 19, "store_map": 32}


@pytest.fixture(scope="module")
def obj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_bpf(SOURCE, tmp_path_factory.mktemp("xdp_bytes"))


@pytest.mark.parametrize("engine", ["seq-model", "vliw-model"])
@pytest.mark.parametrize("prog", PROGRAMS)
@pytest.mark.kernel
@kernel_test[1]
def test_models_match_kernel(obj: Path, prog: str, engine: str) -> None:
    packets = _packets(LENGTHS.get(prog, 24))
    report = run_diff(obj, packets, engine=engine, prog=prog)
    assert report.divergence is None, report.divergence
    assert report.packets == len(packets)


@pytest.mark.rtl
@pytest.mark.kernel
@kernel_test[1]
def test_rtl_matches_kernel_and_vliw_model(obj: Path) -> None:
    """The RTL runs the lowered ROM as the kernel runs the calls, and cycle for cycle as the VLIW model runs it."""
    from rtl_support import require_rtl

    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel
    from hxdp.rtl.sim import RtlSim

    require_rtl()
    for prog in PROGRAMS:
        packets = _packets(LENGTHS.get(prog, 24))
        report = run_diff(obj, packets, engine="rtl", prog=prog)
        assert report.divergence is None, (prog, report.divergence)
        res = compile_program(load_program(obj, prog=prog))
        s_rtl, s_vm = MapState(res.layout), MapState(res.layout)
        got = RtlSim(res.rom, res.layout, s_rtl).run_packets(packets)
        vm = VliwModel(res.rom, s_vm)
        for i, pkt in enumerate(packets):
            want = vm.run(pkt)
            assert (got[i].action, got[i].packet, got[i].cycles) == (want.action, want.packet, want.cycles), \
                f"{prog} packet {i}"
        assert s_rtl.dump() == s_vm.dump(), prog


def test_results_are_not_bounds_checks(obj: Path) -> None:
    """The lowered checks survive the packet bounds-check reduction (a -EINVAL at offset + len <= 60 included)."""
    res = compile_program(load_program(obj, prog="load_var"))
    assert not any(i.opcode == 0x85 for row in res.rom.rows for i in row)
    from hxdp.compiler.cfg import build_cfg
    from hxdp.compiler.lowering import lower_helpers
    from hxdp.compiler.reduce import remove_bounds_checks

    p = load_program(obj, prog="load_const")
    cfg = build_cfg(p.insns, lambda src, idx, off: 0x3000_0000_0000_0000, p.functions)
    assert lower_helpers(cfg) == 1
    tagged = [op for op in cfg.ops() if HELPER_RESULT in op.tags]
    assert len(tagged) == 1
    remove_bounds_checks(cfg)
    assert [op for op in cfg.ops() if HELPER_RESULT in op.tags] == tagged


VARIABLE_LEN = """
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int var_len(struct xdp_md *ctx)
{
	__u8 buf[32] = {};
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	if (data + 1 > end)
		return XDP_DROP;
	return bpf_xdp_load_bytes(ctx, 0, buf, (*(__u8 *)data & 31) + 1) ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
"""


LONG_COPY = """
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[40000]);
} big SEC(".maps");
SEC("xdp")
int long_copy(struct xdp_md *ctx)
{
	__u32 zero = 0;
	void *v = bpf_map_lookup_elem(&big, &zero);
	return v && bpf_xdp_store_bytes(ctx, 0, v, 40000) ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
"""


@pytest.mark.parametrize(("source", "message"), [
    (VARIABLE_LEN, r"not supported: bpf_xdp_load_bytes with a length not known at compile time, because"),
    (LONG_COPY, r"not supported: bpf_xdp_store_bytes of 40000 bytes, because a copy reaches at most 32768"),
], ids=["variable_length", "long_copy"])
def test_refused_with_the_reason(tmp_path: Path, source: str, message: str) -> None:
    from kernel_fixtures import build_bpf

    obj = build_bpf(tmp_path, source, "refused")
    with pytest.raises(CompileError, match=message):
        compile_program(load_program(obj))



def _calling_rom(helper: int):
    from hxdp.isa.insn import NOP, Insn
    from hxdp.isa.rom import Rom

    return Rom([[Insn(0xB7, 4, 0, 0, 8), NOP, NOP, NOP], [Insn(0x85, 0, 0, 0, helper), NOP, NOP, NOP],
                [Insn(0x96, 0, 0, 0, 2), NOP, NOP, NOP]])


@pytest.mark.parametrize("helper", [189, 190])
def test_rom_calling_a_lowered_helper_is_refused(helper: int) -> None:
    """They never reach the core: the schedule verifier refuses such a ROM, the VLIW model faults on it."""
    from hxdp.compiler.verify import verify_rom
    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel

    with pytest.raises(CompileError, match=f"helper {helper} is not implemented in hardware"):
        verify_rom(_calling_rom(helper))
    res = VliwModel(_calling_rom(helper), MapState.from_maps([])).run(bytes(range(64)))
    assert res.action == 0 and "helper" in (res.fault or "")


@pytest.mark.rtl
@pytest.mark.parametrize("helper", [189, 190])
def test_rom_calling_a_lowered_helper_faults_on_rtl(helper: int) -> None:
    from rtl_support import require_rtl

    from hxdp.models.maps import MapState
    from hxdp.models.vliw import VliwModel
    from hxdp.rtl.sim import RtlSim

    require_rtl()
    packet = bytes(range(64))
    want = VliwModel(_calling_rom(helper), MapState.from_maps([])).run(packet)
    got = RtlSim(_calling_rom(helper), state=MapState.from_maps([])).run_packets([packet])[0]
    assert (got.action, got.packet, got.cycles) == (want.action, want.packet, want.cycles) == \
        (0, packet, want.cycles)
