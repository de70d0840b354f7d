"""Bad input on every `hxdp` subcommand: one line on stderr naming the problem and where, a non-zero exit, no output.

Each case of CASES is (command line, exit code, substring of the one-line message, paths that must not exist
afterwards). The command runs in a fresh folder that holds only `in/`, a link to the bad inputs built once per
session; after the command that folder must hold nothing new (no output file, no temporary file). Cases of parts
still being written by others are strict xfails naming the owner and the problem.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ELF_SOURCES, XDP_PROGS, compile_bpf

from hxdp import atomic_write, cli, params
from hxdp.atomic_write import OutputError, check_writable, write_atomic
from hxdp.cli import main
from hxdp.errors import HxdpError
from hxdp.models.maps import MapError, check_map_config
from hxdp.traffic.gen import generate
from hxdp.traffic.pcap import write_pcap

# --- bad inputs -------------------------------------------------------------------------------------------------

LONG_ROWS = params.IMEM_ROWS + 44  # a ROM file longer than the instruction memory
LONG_ROM_ERROR = f"in/long.rom: {LONG_ROWS} rows, instruction memory holds {params.IMEM_ROWS}"
HELPER_SRC = """#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int prog(struct xdp_md *ctx)
{
	return bpf_ktime_get_boot_ns() & 1 ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
"""

TAILCALL_SRC = """#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} jt SEC(".maps");
static __attribute__((noinline)) int stage(struct xdp_md *ctx)
{
	bpf_tail_call(ctx, &jt, 0);
	return XDP_PASS;
}
SEC("xdp")
int prog(struct xdp_md *ctx)
{
	return stage(ctx);
}
char _license[] SEC("license") = "GPL";
"""

QUEUE_SRC = """#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 16);
	__uint(value_size, sizeof(__u32));
} q SEC(".maps");
SEC("xdp")
int prog(struct xdp_md *ctx)
{
	__u32 v = 1;
	bpf_map_push_elem(&q, &v, 0);
	return XDP_PASS;
}
char _license[] SEC("license") = "GPL";
"""


def big_source(statements: int = params.IMEM_ROWS // 4 + 100) -> str:
    """A chain of dependent multiply-adds on a volatile: about 4 rows per statement, over IMEM_ROWS rows."""
    body = "".join(f"\tx = x * {2 * i + 3} + {i};\n" for i in range(statements))
    return f"""#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int prog(struct xdp_md *ctx)
{{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	if (data + 64 > end)
		return XDP_PASS;
	volatile __u64 x = *(__u64 *)data;
{body}	return x & 1 ? XDP_DROP : XDP_PASS;
}}
char _license[] SEC("license") = "GPL";
"""


MAP_CONFIGS = {
    "unk.json": '{"maps": {"nosuch": [{"key": "00000000", "value": "01000000"}]}}',
    "ksize.json": '{"maps": {"tx_port": [{"key": "0000", "value": "01000000"}]}}',
    "vsize.json": '{"maps": {"tx_port": [{"key": "00000000", "value": "0100"}]}}',
    "badhex.json": '{"maps": {"tx_port": [{"key": "zz000000", "value": "01000000"}]}}',
    "intkey.json": '{"maps": {"tx_port": [{"key": 0, "value": "01000000"}]}}',
    "novalue.json": '{"maps": {"tx_port": [{"key": "00000000"}]}}',
    "notlist.json": '{"maps": {"tx_port": {"key": "00000000", "value": "01000000"}}}',
    "toplist.json": "[1, 2]",
    "typo.json": '{"map": {"tx_port": []}}',
    "badjson.json": '{"maps": \n',
    "oob.json": '{"maps": {"tx_port": [{"key": "09000000", "value": "01000000"}]}}',
}


@pytest.fixture(scope="session")
def bad_inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every input of CASES, in one folder."""
    d = tmp_path_factory.mktemp("bad_inputs")
    drop = compile_bpf(XDP_PROGS / "xdp_drop.c", d, [XDP_PROGS])
    fw = compile_bpf(XDP_PROGS / "simple_firewall.c", d, [XDP_PROGS])
    shutil.copyfile(fw, d / "fw.o")
    for name, src in {"boot_ns": HELPER_SRC, "tailcall": TAILCALL_SRC, "queue": QUEUE_SRC,
                      "big": big_source()}.items():
        (d / f"{name}.c").write_text(src)
        compile_bpf(d / f"{name}.c", d)
    (d / "noprog.c").write_text("#include <linux/bpf.h>\nint x;\n")
    compile_bpf(d / "noprog.c", d)
    compile_bpf(ELF_SOURCES / "two_progs.c", d)
    (d / "badlayout.json").write_text('{"format": "hxdp-map-layout", "version": 1, "maps": [{"id": 0}]}')
    (d / "badlayout2.json").write_text('{"format": "hxdp-map-layout", "version": 1, "maps": 7}')
    (d / "v2.json").write_text('{"format": "hxdp-map-layout", "version": 2, "maps": []}')
    (d / "empty").write_bytes(b"")
    (d / "random.bin").write_bytes(random.Random(7).randbytes(3000))
    (d / "adir").mkdir()
    blob = drop.read_bytes()
    (d / "trunc.o").write_bytes(blob[:1000])
    (d / "elfmagic.o").write_bytes(blob[:4])
    write_pcap(d / "in.pcap", generate(2, 4, 64, "udp", 1))
    write_pcap(d / "zero.pcap", [])
    pcap = (d / "in.pcap").read_bytes()
    (d / "trunc.pcap").write_bytes(pcap[: 24 + 16 + 30])
    (d / "short.pcap").write_bytes(pcap[:10])
    (d / "ng.pcapng").write_bytes(struct.pack("<I", 0x0A0D0D0A) + bytes(28))
    shutil.copyfile(XDP_PROGS / "maps" / "simple_firewall.json", d / "fw.json")
    for name, text in MAP_CONFIGS.items():
        (d / name).write_text(text)
    # ROMs: a good one (xdp_drop), one with a bad row 3, one with a short row, one too long for instruction memory
    assert main(["compile", str(drop), "-o", str(d / "drop.rom")]) == 0
    assert main(["compile", str(fw), "-o", str(d / "fw.rom")]) == 0
    rows = (d / "drop.rom").read_text().splitlines()
    bad = list(rows)
    bad[2] = "G" + bad[2][1:]
    (d / "badrow.rom").write_text("\n".join(bad) + "\n")
    (d / "shortrow.rom").write_text(rows[0][:40] + "\n")
    (d / "long.rom").write_text("\n".join([rows[0]] * LONG_ROWS) + "\n")
    # raw programs for `hxdp exec`
    (d / "ok.hex").write_text("b7 00 00 00 01 00 00 00 95 00 00 00 00 00 00 00\n")
    (d / "odd.hex").write_text("b7 00 00 00 01 00 00 00 95 00 00\n")
    (d / "bad.hex").write_text("zz\n")
    (d / "helper.hex").write_text("85 00 00 00 7d 00 00 00 95 00 00 00 00 00 00 00\n")
    return d


# --- the table ----------------------------------------------------------------------------------------------------

KERNEL = pytest.mark.kernel
RTL = pytest.mark.rtl


def xfail(owner: str, what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"{owner}: {what}")


def case(cmd: str, code: int, text: str, absent: tuple[str, ...] = (), marks: tuple = (), id: str | None = None):
    return pytest.param(cmd, code, text, absent, marks=marks, id=id or cmd)


PCAP = "--pcap in/in.pcap"
FWPCAP = "--pcap in/in.pcap"
BASE = "--no-veth --no-native --repeat 1000 --runs 1 -q"

CASES = [
    # disasm: objects and ROMs
    case("disasm missing.o", 1, "missing.o: cannot read: No such file"),
    case("disasm in/adir", 1, "in/adir: cannot read: Is a directory"),
    case("disasm in/empty", 1, "in/empty: empty ROM file"),
    case("disasm in/random.bin", 1, "in/random.bin:1: not a ROM text file (byte 0x"),
    case("disasm in/trunc.o", 1, "in/trunc.o: truncated file"),
    case("disasm in/elfmagic.o", 1, "in/elfmagic.o: truncated ELF header"),
    case("disasm in/badrow.rom", 1, "in/badrow.rom:3: not a hex row"),
    case("disasm in/shortrow.rom", 1, "in/shortrow.rom:1: a row is 16 hex digits per lane, got 40 digits"),
    case("disasm in/long.rom", 1, LONG_ROM_ERROR),
    case("disasm in/drop.rom --maps missing.json", 1, "missing.json: no such map layout file"),
    case("disasm in/drop.rom --maps in/random.bin", 1, "in/random.bin: not a map layout"),
    case("disasm in/drop.rom --maps in/fw.json", 1, "in/fw.json: not an hxdp map layout"),
    case("disasm in/drop.rom --maps in/badlayout.json", 1, "in/badlayout.json: map layout: maps[0] is malformed"),
    case("disasm in/drop.rom --maps in/badlayout2.json", 1, 'in/badlayout2.json: map layout: "maps" must be a list'),
    case("disasm in/drop.rom --maps in/v2.json", 1, "in/v2.json: map layout version 2 is not 1"),
    case("disasm in/drop.rom --linked", 1, "apply to ELF objects, not ROMs"),
    case("disasm in/xdp_drop.o --section nosuch", 1, "in/xdp_drop.o: no section 'nosuch'"),
    case("disasm in/xdp_drop.o --prog nosuch", 1, "in/xdp_drop.o: no program 'nosuch'"),
    # traffic: outputs and --info inputs
    case("traffic", 1, "give an output file OUT.pcap"),
    case("traffic nodir/x.pcap", 1, "nodir/x.pcap: cannot write: folder nodir does not exist", ("nodir",)),
    case("traffic in/adir", 1, "in/adir: cannot write: it is a directory"),
    case("traffic in/empty/x.pcap", 1, "in/empty/x.pcap: cannot write: in/empty is not a folder"),
    case("traffic x.pcap --count -1", 1, "--count must not be negative", ("x.pcap",)),
    case("traffic x.pcap --size 10", 1, "--size 10 is smaller than", ("x.pcap",)),
    case("traffic x.pcap --start -5", 1, "--start -5.0: must be a time in seconds", ("x.pcap",)),
    case("traffic x.pcap --count 2 --gap nan", 1, "--gap nan", ("x.pcap",)),
    case("traffic x.pcap --proto foo", 2, "argument --proto: invalid choice: 'foo'", ("x.pcap",)),
    case("traffic x.pcap --count many", 2, "argument --count: invalid int value: 'many'", ("x.pcap",)),
    case("traffic --info missing.pcap", 1, "missing.pcap: cannot read: No such file"),
    case("traffic --info in/empty", 1, "in/empty: truncated pcap: 0 bytes"),
    case("traffic --info in/short.pcap", 1, "in/short.pcap: truncated pcap: 10 bytes"),
    case("traffic --info in/trunc.pcap", 1, "in/trunc.pcap: truncated pcap: packet 0 at offset 24"),
    case("traffic --info in/random.bin", 1, "in/random.bin: not a pcap file (magic 0x"),
    case("traffic --info in/ng.pcapng", 1, "in/ng.pcapng: pcapng is not supported"),
    # compile: malformed objects, unsupported features, too large, outputs
    case("compile missing.o -o out.rom", 1, "missing.o: cannot read", ("out.rom", "out.maps.json")),
    case("compile in/adir -o out.rom", 1, "in/adir: cannot read: Is a directory", ("out.rom",)),
    case("compile in/empty -o out.rom", 1, "in/empty: not an ELF file", ("out.rom", "out.maps.json")),
    case("compile in/random.bin -o out.rom", 1, "in/random.bin: not an ELF file", ("out.rom",)),
    case("compile in/trunc.o -o out.rom", 1, "in/trunc.o: truncated file", ("out.rom",)),
    case("compile in/drop.rom -o out.rom", 1, "in/drop.rom: not an ELF file", ("out.rom",)),
    case("compile in/boot_ns.o -o out.rom", 1, "helper 125 is not implemented in hardware",
         ("out.rom", "out.maps.json")),
    case("compile in/queue.o -o out.rom", 1, "map q (id 0): map type 22 (queue) is not supported",
         ("out.rom", "out.maps.json")),
    case("compile in/big.o -o out.rom", 1, f"instruction memory holds {params.IMEM_ROWS}",
         ("out.rom", "out.maps.json")),
    case("compile in/tailcall.o -o out.rom", 1,
         "in/tailcall.o: prog: slot 6 (call 12): not supported: a tail call inside the bpf-to-bpf function stage",
         ("out.rom", "out.maps.json")),
    case("compile in/xdp_drop.o -o nodir/out.rom", 1,
         "nodir/out.rom: cannot write the ROM: folder nodir does not exist", ("nodir",)),
    case("compile in/xdp_drop.o -o in/adir", 1, "in/adir: cannot write the ROM: it is a directory"),
    case("compile in/xdp_drop.o -o out.rom --report nodir/r.json", 1, "nodir/r.json",
         ("out.rom", "out.maps.json", "nodir")),
    case("compile in/xdp_drop.o --lanes 0", 1, "--lanes 0: must be 1..16", ("in/xdp_drop.rom",)),
    case("compile in/xdp_drop.o --sweep 1-x", 2, "lane counts", ()),
    case("compile in/xdp_drop.o --section nosuch -o out.rom", 1, "no section 'nosuch'", ("out.rom",)),
    case("compile in/two_progs.o -o out.rom", 1, "in/two_progs.o: 3 programs (xdp:first_drop, xdp:second_pass, "
         "xdp.frags:frags_prog): choose one with --section or --prog", ("out.rom",)),
    case("compile in/noprog.o -o out.rom", 1, "in/noprog.o: no XDP program", ("out.rom",)),
    # exec: raw programs
    case("exec missing.hex", 1, "missing.hex: cannot read: No such file"),
    case("exec --engine seq-model in/empty", 1, "in/empty: empty program"),
    case("exec --engine seq-model in/odd.hex", 1, "11 bytes is not a whole number of 8-byte instructions"),
    case("exec --engine seq-model in/bad.hex", 1, "in/bad.hex: not a hex byte string"),
    case("exec --engine seq-model --mem zz in/ok.hex", 1, "--mem is not a hex byte string"),
    case("exec --engine vliw-model in/helper.hex", 1, "helper 125 is not implemented in hardware"),
    case("exec --engine seq-model in/random.bin", 1, "in/random.bin: not"),
    # run: ROM and pcap inputs (all refused before the simulator starts)
    case(f"run missing.rom {PCAP}", 1, "missing.rom: cannot read ROM: No such file"),
    case(f"run in/adir {PCAP}", 1, "in/adir: cannot read ROM: Is a directory"),
    case(f"run in/empty {PCAP}", 1, "in/empty: empty ROM file"),
    case(f"run in/random.bin {PCAP}", 1, "in/random.bin:1: not a ROM text file"),
    case(f"run in/xdp_drop.o {PCAP}", 1, "in/xdp_drop.o: an ELF object, not a ROM (compile it first"),
    case(f"run in/badrow.rom {PCAP}", 1, "in/badrow.rom:3: not a hex row"),
    case(f"run in/long.rom {PCAP}", 1, LONG_ROM_ERROR),
    case("run in/drop.rom --pcap in/trunc.pcap", 1, "in/trunc.pcap: truncated pcap: packet 0"),
    case("run in/drop.rom --pcap in/random.bin", 1, "in/random.bin: not a pcap file"),
    case("run in/drop.rom --pcap missing.pcap", 1, "missing.pcap: cannot read: No such file"),
    case(f"run in/fw.rom {FWPCAP} --maps in/unk.json", 1, "in/unk.json"),
    case(f"run in/fw.rom {FWPCAP} --maps in/random.bin", 1, "in/random.bin: not a JSON map configuration"),
    case(f"run in/drop.rom {PCAP} --layout in/random.bin", 1, "in/random.bin: not a map layout"),
    case(f"run in/drop.rom {PCAP} --vcd nodir/x.vcd", 1, "nodir/x.vcd", ("nodir",)),
    case(f"run in/drop.rom {PCAP} --trace nodir/x.trace", 1, "nodir/x.trace", ("nodir",)),
    # kernel-run: objects, pcaps, map configurations, outputs
    case(f"kernel-run missing.o {PCAP}", 1, "missing.o: no such object file", (), (KERNEL,)),
    case(f"kernel-run in/adir {PCAP}", 1, "in/adir: is a directory, not an object file", (), (KERNEL,)),
    case(f"kernel-run in/random.bin {PCAP}", 1, "in/random.bin: cannot open: not an ELF object", (), (KERNEL,)),
    case(f"kernel-run in/empty {PCAP}", 1, "in/empty: cannot open: not an ELF object", (), (KERNEL,)),
    case(f"kernel-run in/trunc.o {PCAP}", 1, "in/trunc.o: libbpf cannot open the object", (), (KERNEL,)),
    case(f"kernel-run --loader hxdp in/trunc.o {PCAP}", 1, "in/trunc.o: truncated file", (), (KERNEL,)),
    case(f"kernel-run in/noprog.o {PCAP}", 1, "in/noprog.o: no program in the object", (), (KERNEL,)),
    case(f"kernel-run in/two_progs.o {PCAP}", 1, "in/two_progs.o: several programs match, choose with "
         "--section/--prog", (), (KERNEL,)),
    case(f"kernel-run in/two_progs.o {PCAP} --section nosuch", 1, "in/two_progs.o: no program matches --section "
         "nosuch (have: xdp/first_drop", (), (KERNEL,)),
    case(f"kernel-run --loader hxdp in/queue.o {PCAP}", 1, "map q of type 22 cannot be created without libbpf",
         (), (KERNEL,)),
    case("kernel-run in/xdp_drop.o --pcap in/trunc.pcap", 1, "in/trunc.pcap: truncated pcap", (), (KERNEL,)),
    case(f"kernel-run in/xdp_drop.o {PCAP} --out nodir/o.pcap", 1, "nodir/o.pcap: cannot write the output pcap",
         ("nodir",), (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps missing.json", 1, "missing.json: cannot read the map configuration",
         (), (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/adir", 1, "in/adir: cannot read the map configuration", (),
         (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/random.bin", 1, "in/random.bin: not a JSON map configuration",
         (), (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/badjson.json", 1, "in/badjson.json:2:1: map configuration is "
         "not valid JSON", (), (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/unk.json", 1, "in/unk.json: no map named 'nosuch' in in/fw.o "
         "(maps: fw_config, flows, tx_port)", (), (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/ksize.json", 1, "in/ksize.json: maps.tx_port[0]: map tx_port: "
         "entry of 2/4 bytes, map wants key 4 value 4", (), (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/vsize.json", 1, "in/vsize.json: maps.tx_port[0]: map tx_port: "
         "entry of 4/2 bytes", (), (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/badhex.json", 1, "in/badhex.json: maps.tx_port[0].key: not hex "
         "bytes: 'zz000000'", (), (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/intkey.json", 1, "in/intkey.json: maps.tx_port[0].key: expected "
         "a hex string, got int", (), (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/novalue.json", 1, 'maps.tx_port[0]: an entry needs "key" and '
         '"value"', (), (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/notlist.json", 1, "in/notlist.json: maps.tx_port: must be a list",
         (), (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/toplist.json", 1, "in/toplist.json: top level must be a JSON "
         "object", (), (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/typo.json", 1, "in/typo.json: unknown top-level key 'map'", (),
         (KERNEL,)),
    case(f"kernel-run in/fw.o {FWPCAP} --maps in/oob.json", 1, "in/oob.json: maps.tx_port[0]: map tx_port: update "
         "of key 09000000 refused (E2BIG", (), (KERNEL,)),
    case("kernel-run in/xdp_drop.o --pcap in/zero.pcap", 1, "in/zero.pcap: no packets", (), (KERNEL,)),
    case(f"kernel-run in/xdp_drop.o {PCAP} --rxq -1", 1, "rx_queue_index -1: must be a u32", (), (KERNEL,)),
    case(f"kernel-run in/xdp_drop.o {PCAP} --ifindex 99999", 1, "ENODEV", (), (KERNEL,)),
    case("diff in/xdp_drop.o --pcap in/zero.pcap", 1, "in/zero.pcap: no packets (nothing to compare)",
         ("hxdp-repro",), (KERNEL,)),
    case(f"baseline in/xdp_drop.o --pcap in/zero.pcap {BASE}", 1, "in/zero.pcap: no packets to measure", (),
         (KERNEL,)),
    case("run in/drop.rom --pcap in/zero.pcap", 1, "in/zero.pcap: no packets"),
    # diff: the engine side checks the same configurations with the models' maps (MapState)
    case(f"diff in/fw.o {FWPCAP} --engine seq-model --maps in/random.bin", 1, "in/random.bin: not a JSON map "
         "configuration", ("hxdp-repro",), (KERNEL,)),
    case(f"diff in/fw.o {FWPCAP} --engine seq-model --maps in/unk.json", 1, "in/unk.json: no map named 'nosuch'",
         ("hxdp-repro",), (KERNEL,)),
    case(f"diff in/fw.o {FWPCAP} --engine seq-model --maps in/ksize.json", 1, "in/ksize.json: maps.tx_port[0].key: "
         "2 bytes", ("hxdp-repro",), (KERNEL,)),
    case(f"diff in/fw.o {FWPCAP} --engine seq-model --maps in/intkey.json", 1, "in/intkey.json: maps.tx_port[0]"
         ".key: expected a hex string", ("hxdp-repro",), (KERNEL,)),
    case(f"diff in/fw.o {FWPCAP} --engine seq-model --maps in/notlist.json", 1, "in/notlist.json: maps.tx_port: "
         "must be a list", ("hxdp-repro",), (KERNEL,)),
    case(f"diff in/fw.o {FWPCAP} --engine seq-model --maps in/oob.json", 1, "in/oob.json: maps.tx_port[0]: map "
         "tx_port: initial entry 09000000 rejected (E2BIG: index 9 is beyond max_entries 4)", ("hxdp-repro",),
         (KERNEL,)),
    case(f"diff in/boot_ns.o {PCAP}", 1, "helper 125 is not implemented in hardware", ("hxdp-repro",), (KERNEL,)),
    case(f"diff in/random.bin {PCAP}", 1, "in/random.bin: not an ELF file", ("hxdp-repro",), (KERNEL,)),
    case(f"diff in/xdp_drop.o {PCAP} --repro in/empty", 1, "--repro in/empty: exists and is not a folder", (),
         (KERNEL,)),
    # baseline: everything refused before any measurement
    case(f"baseline missing.o {PCAP} {BASE}", 1, "missing.o: no such object file", (), (KERNEL,)),
    case(f"baseline in/random.bin {PCAP} {BASE}", 1, "in/random.bin: cannot open: not an ELF object", (), (KERNEL,)),
    case(f"baseline in/xdp_drop.o --pcap in/trunc.pcap {BASE}", 1, "in/trunc.pcap: truncated pcap", (), (KERNEL,)),
    case(f"baseline in/fw.o {FWPCAP} --maps in/unk.json {BASE}", 1, "in/unk.json: no map named 'nosuch'", (),
         (KERNEL,)),
    case(f"baseline in/fw.o {FWPCAP} --maps in/intkey.json {BASE}", 1, "in/intkey.json: maps.tx_port[0].key: "
         "expected a hex string", (), (KERNEL,)),
    case(f"baseline in/xdp_drop.o {PCAP} {BASE} --json nodir/b.json", 1, "nodir/b.json: cannot write the JSON "
         "results: folder nodir does not exist", ("nodir",), (KERNEL,)),
    case(f"baseline in/xdp_drop.o {PCAP} --no-veth -q --repeat 0", 1, "--repeat must be at least 2", (), (KERNEL,)),
    # experiment and fuzz: output folders
    case("experiment nosuch --out exp", 1, "unknown experiment nosuch (choose from", ("exp",)),
    case("experiment fig7 --quick --no-progress --out in/empty", 1, "in/empty: exists and is not a folder"),
    case("fuzz --count 1 --quiet --out in/empty", 1, "in/empty: exists and is not a folder"),
    case("fuzz --count -1 --quiet", 1, "--count, --packets, --jobs and --batch must be >= 1"),
    # board host tools: inputs checked before any board is contacted
    case("inject in/random.bin --board sim:nosuch.sock", 1, "in/random.bin:1: not a ROM text file"),
    case("inject in/long.rom --board sim:nosuch.sock", 1, LONG_ROM_ERROR),
    case("axi -a zz --board sim:nosuch.sock", 1, "address 'zz' is not a number"),
    case("dump-imem --board sim:nosuch.sock", 1, "no simulated board answers at nosuch.sock"),
    # hxdp map / hxdp prog (bpftool's shape): operands checked before a board is contacted
    case("map dump --board sim:nosuch.sock", 1, "map dump: which map? (MAP is NAME, name NAME or id ID)"),
    case("map show id zz --board sim:nosuch.sock", 1, "can't parse 'zz' as a map id"),
    case("map show name --board sim:nosuch.sock", 1, "name: missing the map's name"),
    case("map dump acl extra --board sim:nosuch.sock", 1, "map dump: unexpected 'extra' after the map"),
    case("map dump acl --layout in/fw.json --board sim:nosuch.sock", 1, "no simulated board answers at nosuch.sock"),
    case("map show --board sim:nosuch.sock", 1, "no simulated board answers at nosuch.sock"),
    case("prog dump jited --board sim:nosuch.sock", 1, "prog dump: unexpected 'jited' (expected [xlated|rows] "
         "[opcodes])"),
    case("prog show --board sim:nosuch.sock", 1, "no simulated board answers at nosuch.sock"),
    case("prog load in/empty --board sim:nosuch.sock", 1, "in/empty: not an ELF file"),
    case("prog load missing.o --board sim:nosuch.sock", 1, "missing.o: cannot read"),
]


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if not p.is_relative_to(root / "in")}


@pytest.mark.parametrize(("cmd", "code", "text", "absent"), CASES)
def test_bad_input_one_line(cmd: str, code: int, text: str, absent: tuple[str, ...], bad_inputs: Path,
                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    if cmd.startswith(("kernel-run", "diff", "baseline")):
        from hxdp.linux import kernel

        ok, why = kernel.available()
        if not ok:
            pytest.skip(f"kernel oracle unavailable: {why}")
    (tmp_path / "in").symlink_to(bad_inputs)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    before = _tree(tmp_path)
    try:
        rc = main(cmd.split())
    except SystemExit as exc:  # argparse usage errors
        rc = exc.code if isinstance(exc.code, int) else 1
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    name = cmd.split()[0]
    assert rc == code, f"exit {rc}, expected {code}; stderr:\n{err}"
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{err}"
    assert lines[0].startswith(f"hxdp {name}: error: "), lines[0]
    assert "Traceback" not in err and "internal error" not in err, err
    assert text in lines[0], f"{text!r} not in {lines[0]!r}"
    for path in absent:
        assert not (tmp_path / path).exists(), f"{path} left behind"
    assert _tree(tmp_path) == before, f"files left behind: {sorted(_tree(tmp_path) - before)}"


# --- the command line itself --------------------------------------------------------------------------------------


def _subcommands() -> dict[str, str | None]:
    parser = cli.build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {c.dest: c.help for c in action._choices_actions}
    return {name: helps.get(name) for name in action.choices}


def test_help_lists_every_subcommand_with_one_line() -> None:
    res = subprocess.run([sys.executable, "-m", "hxdp.cli", "--help"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stderr == "", res.stderr  # every command module loads, no warning
    subs = _subcommands()
    for expected in ("disasm", "traffic", "compile", "exec", "run", "kernel-run", "diff", "baseline", "experiment",
                     "fuzz", "board"):
        assert expected in subs, f"`hxdp {expected}` missing from hxdp --help"
    for name, text in subs.items():
        assert name in res.stdout
        assert text and "\n" not in text and len(text) <= 100, f"hxdp {name}: help {text!r} is not one short line"


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_subcommand_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([name, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: hxdp {name}")


def _missing_help(name: str, parser: argparse.ArgumentParser) -> list[str]:
    out = []
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sub, sp in a.choices.items():
                out += _missing_help(f"{name} {sub}", sp)
        elif not a.help and a.dest != "help":
            out.append(f"{name} {'/'.join(a.option_strings) or a.dest}")
    return out


HELP_GAPS: dict[str, str] = {}  # subcommand -> owner, for arguments still without a help text


@pytest.mark.parametrize("name", [pytest.param(n, marks=xfail(HELP_GAPS[n], "arguments without a help text"))
                                  if n in HELP_GAPS else n for n in sorted(_subcommands())])
def test_every_argument_has_help(name: str) -> None:
    parser = cli.build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert _missing_help(name, action.choices[name]) == []


def test_usage_error_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["compile"])
    assert exc.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("hxdp compile: error: the following arguments are required: object")
    assert line.endswith("(see `hxdp compile --help`)")
    with pytest.raises(SystemExit) as exc:
        main(["nosuchcommand"])
    assert exc.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("hxdp: error: argument COMMAND: invalid choice: 'nosuchcommand'")


def test_unexpected_exception_is_one_line_unless_debug(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The safety net: a bug is one line with exit 3 and a hint; HXDP_DEBUG=1 gives the traceback instead."""
    import hxdp.cli.traffic

    def broken(args: argparse.Namespace) -> int:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(hxdp.cli.traffic, "run", broken)
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    assert main(["traffic", "x.pcap"]) == cli.EXIT_INTERNAL
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("hxdp traffic: internal error: ZeroDivisionError: division by zero at test_cli_errors.py")
    assert "HXDP_DEBUG=1" in line
    monkeypatch.setenv(cli.DEBUG_ENV, "1")
    with pytest.raises(ZeroDivisionError):
        main(["traffic", "x.pcap"])


def test_hxdp_error_traceback_with_debug(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(cli.DEBUG_ENV, "1")
    assert main(["traffic", "--info", str(tmp_path / "missing.pcap")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith("hxdp traffic: error: ")


def test_multiline_error_becomes_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import hxdp.cli.traffic

    def fails(args: argparse.Namespace) -> int:
        raise HxdpError("first line\n  second line\n")

    monkeypatch.setattr(hxdp.cli.traffic, "run", fails)
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    assert main(["traffic", "x.pcap"]) == 1
    assert capsys.readouterr().err == "hxdp traffic: error: first line | second line\n"


def _blocked_reading_stdin(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return len(fields) > 1 and fields[0] == "0" and fields[1] == "0x0"  # read(0, ...) on x86-64


@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64", reason="reads /proc/PID/syscall")
@pytest.mark.parametrize(("sig", "code", "word"), [(signal.SIGINT, 130, "interrupted"),
                                                   (signal.SIGTERM, 143, "terminated")])
def test_ctrl_c_and_sigterm_are_one_line(sig: int, code: int, word: str, tmp_path: Path) -> None:
    """Ctrl-C or SIGTERM while a command waits (`hxdp exec` reading its program from stdin): one line, 130/143."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop(cli.DEBUG_ENV, None)
    # a shell without job control starts background commands with SIGINT ignored, and Python keeps it so: the
    # child gets the default disposition back, as it has when a user presses Ctrl-C in a terminal
    proc = subprocess.Popen([sys.executable, "-m", "hxdp.cli", "exec", "--engine", "seq-model"], cwd=tmp_path,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not _blocked_reading_stdin(proc.pid):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "hxdp exec never waited on stdin"
            time.sleep(0.05)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err
    assert err == f"hxdp exec: {word}\n"
    assert list(tmp_path.iterdir()) == []


SETPRIV_NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all"]


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_unwritable_and_unreadable_without_root_override(tmp_path: Path) -> None:
    """As a user without CAP_DAC_OVERRIDE: a read-only output folder and an unreadable input, one line each."""
    ro = tmp_path / "ro"
    ro.mkdir()
    secret = tmp_path / "secret.pcap"
    write_pcap(secret, generate(1, 1, 64, "udp", 0))
    ro.chmod(0o555)
    secret.chmod(0o000)
    try:
        base = [*SETPRIV_NO_DAC, sys.executable, "-m", "hxdp.cli"]
        probe = subprocess.run([*SETPRIV_NO_DAC, "true"], capture_output=True, text=True)
        if probe.returncode != 0:
            pytest.skip(f"setpriv cannot drop capabilities here: {probe.stderr.strip()}")
        res = subprocess.run([*base, "traffic", str(ro / "x.pcap")], capture_output=True, text=True, timeout=120)
        assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
        assert f"{ro / 'x.pcap'}: cannot write: Permission denied" in res.stderr
        assert list(ro.iterdir()) == []
        res = subprocess.run([*base, "traffic", "--info", str(secret)], capture_output=True, text=True, timeout=120)
        assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
        assert f"{secret}: cannot read: Permission denied" in res.stderr
    finally:
        ro.chmod(0o755)
        secret.chmod(0o644)


# --- output files --------------------------------------------------------------------------------------------------


def test_write_atomic_interrupted_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out.rom"

    def interrupted(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic_write.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "data")
    assert list(tmp_path.iterdir()) == []
    target.write_text("old\n")
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new\n")
    assert list(tmp_path.iterdir()) == [target] and target.read_text() == "old\n"


def test_write_atomic_errors_name_the_path(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match=r"nodir/a: cannot write: folder .*nodir does not exist"):
        write_atomic(tmp_path / "nodir" / "a", "x")
    with pytest.raises(OutputError, match=r"file/a: cannot write: .*file is not a folder"):
        write_atomic(tmp_path / "file" / "a", "x")
    with pytest.raises(OSError, match="it is a directory"):  # OutputError is also an OSError
        write_atomic(tmp_path, "x")
    with pytest.raises(OutputError, match="cannot write the report: folder .*nodir does not exist"):
        check_writable(tmp_path / "nodir" / "r.json", "report")
    with pytest.raises(OutputError, match="it is a directory"):
        check_writable(tmp_path)
    check_writable(tmp_path / "new.json")
    check_writable(tmp_path / "file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_write_atomic_keeps_devices_fifos_and_symlinks(tmp_path: Path) -> None:
    """`-o /dev/stdout` or a FIFO is written in place (never replaced by a file); a symlink's target is replaced."""
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_atomic(fifo, b"through the pipe")
    reader.join(timeout=10)
    assert got == [b"through the pipe"] and fifo.is_fifo()
    target = tmp_path / "target.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomic(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link.txt", "target.txt"]


def test_map_config_checks_name_source_and_entry() -> None:
    assert check_map_config({"maps": {"a": [{"key": "01 00", "value": "ff"}]}}) == {"a": [(b"\x01\x00", b"\xff")]}
    assert check_map_config({}) == {}
    with pytest.raises(MapError, match=r"^f.json: maps.a\[1\].value: not hex bytes: 'xy'$"):
        check_map_config({"maps": {"a": [{"key": "00", "value": "00"}, {"key": "00", "value": "xy"}]}}, "f.json")
    with pytest.raises(MapError, match=r"unknown field 'vaule'"):
        check_map_config({"maps": {"a": [{"key": "00", "value": "00", "vaule": "00"}]}})
    with pytest.raises(MapError, match=r"unknown top-level key 'map'"):
        check_map_config({"map": {}})


# --- results for scripts -------------------------------------------------------------------------------------------


def test_json_outputs_parse(bad_inputs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    """Scripts read results as JSON: traffic (written and --info) and the compile report."""
    import json

    monkeypatch.chdir(tmp_path)
    assert main(["traffic", "t.pcap", "--count", "6", "--flows", "3", "--proto", "tcp", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"file": "t.pcap", "packets": 6, "flows": 3, "size": 64,
                                                   "proto": "tcp", "seed": 0}
    assert main(["traffic", "--info", "t.pcap", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["packets"] == 6 and doc["flows"] == 3 and doc["protocols"] == {"tcp": 6} and doc["sizes"] == {"64": 6}
    assert main(["compile", str(bad_inputs / "xdp_drop.o"), "-o", "d.rom", "--report", "r.json"]) == 0
    capsys.readouterr()
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["rows"] >= 1 and report["object"] == "xdp_drop.o"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.maps.json", "d.rom", "r.json", "t.pcap"]


def test_json_switch_before_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`hxdp -j CMD` as bpftool's `bpftool -j map dump`: the command's own JSON switch, or a one-line refusal."""
    import json

    pcap = tmp_path / "in.pcap"
    write_pcap(pcap, generate(flows=2, count=4, size=64))
    assert main(["-j", "traffic", "--info", str(pcap)]) == 0
    assert json.loads(capsys.readouterr().out)["packets"] == 4
    with pytest.raises(SystemExit) as exc:
        main(["-j", "compile", str(pcap)])
    assert exc.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "-j/-p: `hxdp compile` has no JSON output switch" in line
