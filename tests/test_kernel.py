"""Kernel oracle (hxdp.kernel): load, run, map config and dump, timing, raw mode, errors and cleanup."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_fixtures import build_bpf, kernel_test, requires_clang

from hxdp.errors import HxdpError
from hxdp.isa.insn import Insn
from hxdp.linux import kernel
from hxdp.linux.kernel import KernelError, KernelProgram

pytestmark = [*kernel_test, requires_clang]

MAPS_SRC = r"""
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 4); __type(key, __u32); __type(value, __u64); }
    counters SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 16); __type(key, __u32); __type(value, __u32); }
    verdict SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, 2); __type(key, __u32); __type(value, __u32); }
    pcpu SEC(".maps");

/* action = verdict[first 4 packet bytes] (PASS when absent); counts packets per action; byte 4 := 0xAA */
SEC("xdp")
int main_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 key, action = XDP_PASS, *v, z = 0;
	__u64 *c;

	if (data + 8 > data_end)
		return XDP_ABORTED;
	key = *(__u32 *)data;
	v = bpf_map_lookup_elem(&verdict, &key);
	if (v)
		action = *v;
	c = bpf_map_lookup_elem(&counters, &action);
	if (c)
		*c += 1;
	v = bpf_map_lookup_elem(&pcpu, &z);
	if (v)
		*v += ctx->rx_queue_index + ctx->ingress_ifindex;
	*(__u8 *)(data + 4) = 0xAA;
	return action;
}

SEC("xdp/other")
int other_prog(struct xdp_md *ctx)
{
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
"""

BAD_SRC = r"""
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int bad_prog(struct xdp_md *ctx)
{
	return *(__u8 *)(long)ctx->data;   /* no bounds check: the verifier refuses it */
}
char _license[] SEC("license") = "GPL";
"""


@pytest.fixture(scope="module")
def obj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bpf(tmp_path_factory.mktemp("kobj"), MAPS_SRC, "maps_prog")


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def pkt(key: int, size: int = 60) -> bytes:
    return struct.pack("<I", key) + bytes(range(size - 4))


def test_available_reports_reason() -> None:
    ok, reason = kernel.available()
    assert ok and "work" in reason


def test_run_default_and_maps(obj: Path) -> None:
    with KernelProgram(obj, section="xdp") as kp:
        assert kp.name == "main_prog"
        assert set(kp.maps) == {"counters", "verdict", "pcpu"}
        r = kp.run(pkt(7))
        assert r.action == 2 and r.redirect is None and r.fault is None
        assert r.packet == pkt(7)[:4] + b"\xaa" + pkt(7)[5:]
        kp.apply_config(
            {"maps": {"verdict": [{"key": "07000000", "value": "01000000"}, {"key": "08000000", "value": "03000000"}]}}
        )
        assert [kp.run(pkt(k)).action for k in (7, 8, 9, 8)] == [1, 3, 2, 3]
        d = kp.dump()
        assert d["counters"] == {struct.pack("<I", i): struct.pack("<Q", n) for i, n in enumerate([0, 1, 2, 2])}
        assert d["verdict"] == {
            bytes.fromhex("07000000"): bytes.fromhex("01000000"),
            bytes.fromhex("08000000"): bytes.fromhex("03000000"),
        }
        # per-CPU: the slot of the CPU the runs executed on; 5 runs with ingress lo (1), queue 0
        assert d["pcpu"][bytes(4)] == struct.pack("<I", 5)
        assert d["pcpu"][struct.pack("<I", 1)] == bytes(4)


def test_ingress_context(obj: Path) -> None:
    with KernelProgram(obj, section="xdp") as kp:
        kp.run(pkt(1), ingress_ifindex=1, rx_queue_index=0)
        assert kp.dump()["pcpu"][bytes(4)] == struct.pack("<I", 1)
        with pytest.raises(KernelError, match="rx_queue_index 1"):
            kp.run(pkt(1), ingress_ifindex=1, rx_queue_index=1)  # lo has one rx queue
        with pytest.raises(KernelError, match="ENODEV"):
            kp.run(pkt(1), ingress_ifindex=1 << 30)


def test_select_program(obj: Path) -> None:
    assert sorted(kernel.list_programs(obj)) == [("xdp", "main_prog"), ("xdp/other", "other_prog")]
    with KernelProgram(obj, prog="other_prog") as kp:
        assert kp.run(pkt(0)).action == 3
    with pytest.raises(KernelError, match="several programs"):
        KernelProgram(obj)
    with pytest.raises(KernelError, match="no program matches"):
        KernelProgram(obj, section="nope")


def test_config_errors(obj: Path, tmp_path: Path) -> None:
    with KernelProgram(obj, section="xdp") as kp:
        with pytest.raises(KernelError, match="no map named"):
            kp.apply_config({"maps": {"missing": []}})
        with pytest.raises(KernelError, match="map wants key 4 value 4"):
            kp.apply_config({"maps": {"verdict": [{"key": "07", "value": "01000000"}]}})
        with pytest.raises(KernelError, match="not hex"):
            kp.apply_config({"maps": {"verdict": [{"key": "zz", "value": "01000000"}]}})
        with pytest.raises(KernelError, match="E2BIG|refused"):
            kp.apply_config({"maps": {"counters": [{"key": "09000000", "value": "0000000000000000"}]}})
        path = tmp_path / "cfg.json"
        path.write_text(json.dumps({"maps": {"verdict": [{"key": "01000000", "value": "01000000"}]}}))
        kp.apply_config(path)
        assert kp.run(pkt(1)).action == 1


def test_verifier_failure_is_one_line_with_log(tmp_path: Path) -> None:
    bad = build_bpf(tmp_path, BAD_SRC, "bad")
    before = fds()
    with pytest.raises(KernelError) as exc:
        KernelProgram(bad)
    msg = str(exc.value)
    assert "\n" not in msg and "bad_prog" in msg and "[log: " in msg
    assert "insn 1 (r0 = *(u8 *)(r1 +0)): invalid access to packet" in msg
    log = Path(msg.split("[log: ")[1].rstrip("]"))
    assert "invalid access to packet" in log.read_text()
    log.unlink()
    assert fds() == before


def test_missing_and_non_bpf_object(tmp_path: Path) -> None:
    with pytest.raises(KernelError, match="no such object"):
        KernelProgram(tmp_path / "nope.o")
    junk = tmp_path / "junk.o"
    junk.write_bytes(b"not an elf file at all")
    with pytest.raises(KernelError, match="cannot open"):
        KernelProgram(junk)


def test_no_fd_leak_and_no_pins(obj: Path) -> None:
    pins = set(os.listdir("/sys/fs/bpf")) if os.path.isdir("/sys/fs/bpf") else set()
    before = fds()
    for _ in range(3):
        with KernelProgram(obj, section="xdp") as kp:
            kp.apply_config({"maps": {"verdict": [{"key": "07000000", "value": "01000000"}]}})
            kp.run(pkt(7))
            kp.dump()
            assert fds() > before
    assert fds() == before
    kp.close()  # closing twice is harmless
    with pytest.raises(KernelError, match="closed"):
        kp.run(pkt(7))
    if os.path.isdir("/sys/fs/bpf"):
        assert set(os.listdir("/sys/fs/bpf")) == pins


def test_timing_uses_a_fresh_copy(obj: Path) -> None:
    with KernelProgram(obj, section="xdp") as kp:
        kp.apply_config({"maps": {"verdict": [{"key": "07000000", "value": "01000000"}]}})
        t = kp.timing(pkt(7), repeat=1000)
        assert t.action == 1 and t.repeat == 1000 and t.kernel_ns >= 0 and t.wall_ns >= 0
        assert kp.dump()["counters"][struct.pack("<I", 1)] == bytes(8)  # the oracle's own maps untouched
        assert kp.time(pkt(7), repeat=10) >= 0


def test_run_raw_returns_64_bit_r0_and_memory() -> None:
    r0, out = kernel.run_raw([Insn(0x18, dst=0, imm=5), Insn(0, imm=-1), Insn(0x95)], bytes(16))
    assert r0 == 0xFFFFFFFF00000005 and out == bytes(16)
    # r2 = len(mem); body stores into the buffer and returns a loaded byte plus the length
    prog = [
        Insn(0x71, dst=0, src=1, off=3),  # r0 = *(u8 *)(r1 + 3)
        Insn(0x72, dst=1, off=0, imm=0x55),  # *(u8 *)(r1 + 0) = 0x55
        Insn(0x0F, dst=0, src=2),  # r0 += r2
        Insn(0x95),
    ]
    r0, out = kernel.run_raw(prog, bytes([1, 2, 3, 4]))
    assert r0 == 4 + 4 and out == bytes([0x55, 2, 3, 4])
    # registers and stack start at zero (the execution contract's start state)
    r0, _ = kernel.run_raw([Insn(0x79, dst=0, src=10, off=-8), Insn(0x0F, dst=0, src=9), Insn(0x95)], bytes(20))
    assert r0 == 0


def test_run_raw_rejects() -> None:
    with pytest.raises(KernelError, match=r"insn 0 \(r0 = \*\(u8 \*\)\(r1 \+100\)\): invalid access") as exc:
        kernel.run_raw([Insn(0x71, dst=0, src=1, off=100), Insn(0x95)], bytes(8))  # beyond mem
    Path(str(exc.value).split("[log: ")[1].rstrip("]")).unlink()
    with pytest.raises(KernelError, match="bpf-to-bpf"):
        kernel.run_raw([Insn(0x85, src=1, imm=1), Insn(0x95)], bytes(8))


def test_cli_kernel_run(obj: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hxdp.cli import main

    pcap = tmp_path / "in.pcap"
    records = b"".join(struct.pack("<4I", 0, 0, 60, 60) + pkt(k) for k in (7, 8, 9))
    pcap.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1) + records)
    cfg = tmp_path / "maps.json"
    cfg.write_text(
        json.dumps(
            {"maps": {"verdict": [{"key": "07000000", "value": "01000000"}, {"key": "08000000", "value": "03000000"}]}}
        )
    )
    out = tmp_path / "out.pcap"
    cmd = [
        sys.executable,
        "-m",
        "hxdp.cli",
        "kernel-run",
        str(obj),
        "--section",
        "xdp",
        "--pcap",
        str(pcap),
        "--maps",
        str(cfg),
        "--json",
        "--dump-maps",
        "--out",
        str(out),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert [p["action_name"] for p in doc["packets"]] == ["DROP", "TX", "PASS"]
    assert doc["counts"] == {"DROP": 1, "PASS": 1, "TX": 1}
    counters = {e["key"]: e["value"] for e in doc["maps"]["counters"]}
    assert counters["03000000"] == "0100000000000000"
    assert out.stat().st_size > 24
    assert main([*cmd[3:-4], "--time", "10"]) == 0
    outerr = capsys.readouterr()
    assert "summary: DROP 1, PASS 1, TX 1 (3 packets)" in outerr.out
    assert "timing (10 repeats per packet, fresh program copy): kernel median" in outerr.out
    assert outerr.out.splitlines()[1] == "     1 TX  (out 60 bytes, modified)"
    assert main(["kernel-run", str(obj), "--pcap", str(pcap)]) == 1
    outerr = capsys.readouterr()
    assert "several programs" in outerr.err and outerr.err.count("\n") == 1


def test_errors_are_hxdp_errors() -> None:
    assert issubclass(KernelError, HxdpError)


SETPRIV = ["setpriv", "--bounding-set=-sys_admin,-bpf,-perfmon,-net_admin", "--inh-caps=-all"]


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/setpriv"), reason="needs root and setpriv")
def test_without_bpf_permission_reports_plainly(obj: Path, tmp_path: Path) -> None:
    """Without CAP_BPF/CAP_SYS_ADMIN the oracle says why, the CLI prints one line, and kernel tests skip."""
    code = "from hxdp.linux import kernel; ok, why = kernel.available(); print(ok); print(why)"
    res = subprocess.run([*SETPRIV, sys.executable, "-c", code], capture_output=True, text=True)
    if res.returncode != 0 and "setpriv" in res.stderr:
        pytest.skip(f"setpriv cannot drop capabilities here: {res.stderr.strip()}")
    ok, why = res.stdout.splitlines()[-2:]
    assert ok == "False" and "EPERM" in why and "not permitted" in why
    pcap = tmp_path / "in.pcap"
    pcap.write_bytes(
        struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1) + struct.pack("<4I", 0, 0, 60, 60) + pkt(1)
    )
    cli = [*SETPRIV, sys.executable, "-m", "hxdp.cli", "kernel-run", str(obj), "--section", "xdp", "--pcap", str(pcap)]
    res = subprocess.run(cli, capture_output=True, text=True)
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "not permitted" in res.stderr, res.stderr
    here = Path(__file__).resolve()
    res = subprocess.run(
        [
            *SETPRIV,
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            f"{here}::test_available_reports_reason",
        ],
        capture_output=True,
        text=True,
        cwd=here.parent,
    )
    assert res.returncode == 0 and "1 skipped" in res.stdout, res.stdout + res.stderr
    assert "kernel oracle unavailable" in res.stdout


META_SRC = r"""
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int meta_prog(struct xdp_md *ctx)
{
	void *data, *meta;

	if (bpf_xdp_adjust_meta(ctx, -8))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	meta = (void *)(long)ctx->data_meta;
	if (meta + 8 > data)
		return XDP_ABORTED;
	*(__u64 *)meta = 0x1122334455667788ULL;
	return XDP_PASS;
}
char _license[] SEC("license") = "GPL";
"""


def test_metadata_is_split_from_the_frame(tmp_path: Path) -> None:
    with KernelProgram(build_bpf(tmp_path, META_SRC, "meta")) as kp:
        r = kp.run(pkt(3))
    assert r.action == 2 and r.packet == pkt(3) and r.meta == struct.pack("<Q", 0x1122334455667788)


LEGACY_SRC = r"""
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
struct bpf_map_def { unsigned int type, key_size, value_size, max_entries, map_flags; };
struct bpf_map_def SEC("maps") verdict = { .type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 4,
                                           .max_entries = 16 };
SEC("xdp")
int legacy_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 key, *v;

	if (data + 4 > data_end)
		return XDP_ABORTED;
	key = *(__u32 *)data;
	v = bpf_map_lookup_elem(&verdict, &key);
	return v ? *v : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
"""

GLOBALS_SRC = r"""
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
static volatile const __u32 base_action = 2;   /* .rodata */
__u64 seen = 0;                                 /* .bss */
__u32 bump = 5;                                 /* .data */

static __attribute__((noinline)) int pick(__u32 x)
{
	return x == 7 ? 1 : base_action;
}

SEC("xdp")
int globals_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;

	if (data + 4 > data_end)
		return XDP_ABORTED;
	seen += bump;
	bump++;
	return pick(*(__u32 *)data);
}
char _license[] SEC("license") = "GPL";
"""


def test_from_program_runs_legacy_maps(tmp_path: Path) -> None:
    from hxdp.frontend.elf import load_program

    obj = build_bpf(tmp_path, LEGACY_SRC, "legacy")
    with pytest.raises(KernelError, match="cannot open"):
        KernelProgram(obj)  # libbpf 1.x refuses legacy map definitions
    before = fds()
    with KernelProgram.from_program(load_program(obj)) as kp:
        assert kp.name == "legacy_prog" and set(kp.maps) == {"verdict"}
        kp.apply_config({"maps": {"verdict": [{"key": "07000000", "value": "01000000"}]}})
        assert [kp.run(pkt(k)).action for k in (7, 8)] == [1, 2]
        assert kp.dump() == {"verdict": {struct.pack("<I", 7): struct.pack("<I", 1)}}
        assert kp.timing(pkt(7), repeat=10).action == 1
    assert fds() == before


def test_from_program_agrees_with_libbpf_on_globals_and_calls(tmp_path: Path) -> None:
    from hxdp.frontend.elf import load_program

    obj = build_bpf(tmp_path, GLOBALS_SRC, "globals")
    outcomes = []
    for make in (lambda: KernelProgram(obj), lambda: KernelProgram.from_program(load_program(obj))):
        with make() as kp:
            actions = [kp.run(pkt(k)).action for k in (7, 8, 9)]
            outcomes.append((actions, {name.split(".")[-1]: v for name, v in kp.dump().items()}))
    assert outcomes[0] == outcomes[1]
    actions, maps = outcomes[0]
    assert actions == [1, 2, 2]
    assert maps["bss"] == {bytes(4): struct.pack("<Q", 5 + 6 + 7)} and maps["data"] == {bytes(4): struct.pack("<I", 8)}


def test_cli_loader_hxdp(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hxdp.cli import main

    obj = build_bpf(tmp_path, LEGACY_SRC, "legacy")
    pcap = tmp_path / "in.pcap"
    records = b"".join(struct.pack("<4I", 0, 0, 60, 60) + pkt(k) for k in (7, 8))
    pcap.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1) + records)
    cfg = tmp_path / "maps.json"
    cfg.write_text(json.dumps({"maps": {"verdict": [{"key": "07000000", "value": "03000000"}]}}))
    args = ["kernel-run", str(obj), "--pcap", str(pcap), "--maps", str(cfg)]
    assert main(args) == 1 and "cannot open" in capsys.readouterr().err
    assert main([*args, "--loader", "hxdp"]) == 0
    assert "summary: PASS 1, TX 1 (2 packets)" in capsys.readouterr().out
