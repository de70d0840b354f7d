"""The board: AXI-Lite register map, operator workflow, hxdp map/prog as bpftool, sume transport, bad input."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import struct
import time
from pathlib import Path

import pytest
from conftest import compile_bpf
from kernel_fixtures import requires_kernel
from rtl_support import printk_rom, row

from hxdp import params
from hxdp.board import tools as H
from hxdp.board.transport import (
    SUME_IOCTL_READ,
    SUME_IOCTL_WRITE,
    Board,
    BoardAddressError,
    BoardError,
    SimBoard,
    SumeBoard,
    imem_commit_addr,
    imem_word_addr,
    open_board,
)
from hxdp.cli import bpftool as B
from hxdp.cli import main as cli_main
from hxdp.compiler import CompileOptions, compile_program
from hxdp.frontend.elf import load_program
from hxdp.isa.rom import Rom, RomError
from hxdp.models.maps import MapError, MapLayout, MapState
from hxdp.rtl.sim import available as verilator_available
from hxdp.traffic import gen as traffic
from hxdp.traffic.pcap import read_pcap, write_pcap

DATA = Path(__file__).parent / "data" / "board"
_vok, _vwhy = verilator_available()
needs_sim = pytest.mark.skipif(not _vok, reason=_vwhy)
LINE = params.AXI_LINE_BYTES


@pytest.fixture(scope="module")
def objs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("board_objs")
    return {src.stem: compile_bpf(src, out) for src in sorted(DATA.glob("*.c"))}


@pytest.fixture(scope="module")
def compiled(objs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, object]]:
    """name -> (ROM path with PROG.maps.json next to it, CompileResult)."""
    out = tmp_path_factory.mktemp("board_roms")
    res = {}
    for name, obj in objs.items():
        r = compile_program(load_program(str(obj)), CompileOptions())
        rom = out / f"{name}.rom"
        r.rom.save(rom)
        rom.with_suffix(".maps.json").write_text(r.layout.to_json())
        res[name] = (rom, r)
    return res


@pytest.fixture(scope="module")
def server():  # noqa: ANN201
    if not _vok:
        pytest.skip(_vwhy)
    from hxdp.board.sim import BoardServer

    with BoardServer(ports=2) as srv:
        yield srv


@pytest.fixture
def board(server) -> SimBoard:  # noqa: ANN001
    b = server.board()
    b.write32(params.AXI_CTRL, 0)
    b.stop_replay()
    b.wait()
    b.outputs()
    yield b
    b.close()


def cli(*argv: str) -> int:
    return cli_main(list(argv))


def let_flow(board: SimBoard, packets: int, timeout: float = 20.0) -> None:
    """Return once `packets` more packets have left the free-running board."""
    start = board.stat()["finished"]
    deadline = time.monotonic() + timeout
    while board.stat()["finished"] < start + packets:
        assert time.monotonic() < deadline, "traffic does not flow"
        time.sleep(0.005)


def ipv4_packets(n: int, seed: int = 1) -> list[bytes]:
    return traffic.generate(8, n, 64, "udp", seed)


# --- register map ----------------------------------------------------------------------------------------------------
@needs_sim
def test_register_map(board: SimBoard) -> None:
    assert board.read32(params.AXI_ID) == params.AXI_ID_VALUE
    assert board.read32(params.AXI_IMEM_CAPACITY) == params.IMEM_ROWS
    assert board.read32(params.AXI_MAP_LINES) == params.MAP_MEM_BYTES // LINE
    assert board.read32(params.AXI_CORES) == 1  # (a board of several: tests/test_board_cores.py)
    # a row: staging words, commit, read back; the staging row is zeroed by the commit
    words = [0x11 * (k + 1) for k in range(8)]
    board.write_many([(imem_word_addr(200, k // 2, bool(k % 2)), w) for k, w in enumerate(words)])
    assert board.read32(imem_word_addr(200, 0, False)) == 0  # not committed yet
    board.write32(imem_commit_addr(200), 1)
    assert board.read_many([imem_word_addr(200, k // 2, bool(k % 2)) for k in range(8)]) == words
    board.write32(imem_commit_addr(201), 1)
    assert board.read_many([imem_word_addr(201, k // 2, bool(k % 2)) for k in range(8)]) == [0] * 8
    board.write32(imem_commit_addr(200), 1)
    # map lines: staging, commit to line N (value), read through LINE_ADDR
    data = bytes(range(16))
    H.write_line(board, 60000, data)
    assert board.read32(params.AXI_MAPS_LINE_ADDR) == 60000
    assert H.read_line(board, 60000) == data
    assert H.read_line(board, 59999) == bytes(16)
    H.write_line(board, 60000, bytes(16))
    # unknown addresses and out-of-range values answer SLVERR
    assert board.read32(params.AXI_HOSTQ_PER_KIND) == params.HOSTQ_PER_KIND
    last_queue = params.AXI_HOSTQ_BASE + params.AXI_HOSTQ_STRIDE * 2 * params.HOSTQ_PER_KIND
    for addr in (0x8000_0020, 0x8001_0020, 0x8002_0000, 0x8005_0010, 0x8006_0014, 0x8007_0000, 0x9000_0000,
                 0x8000_0001, params.AXI_TRACE_POP, params.AXI_TRACE_HEAD + 4 * params.AXI_TRACE_WORDS, last_queue,
                 params.AXI_EVENT_POP, params.AXI_EVENT_HEAD + 4 * params.AXI_EVENT_WORDS):
        with pytest.raises(BoardAddressError, match=f"0x{addr:08x}"):
            board.read32(addr)
    with pytest.raises(BoardAddressError):
        board.write32(params.AXI_ROWS, params.IMEM_ROWS + 1)
    with pytest.raises(BoardAddressError):
        board.write32(params.AXI_MAPS_BASE + params.AXI_MAPS_COMMIT, params.MAP_MEM_BYTES // LINE)
    # map configuration entries: staging, commit to map id N, read back through MCFG_ADDR
    entry = int.from_bytes(bytes(range(1, 33)), "little")
    board.write_many([(params.AXI_MCFG_BASE + 4 * w, (entry >> (32 * w)) & 0xFFFFFFFF) for w in range(8)])
    board.write32(params.AXI_MCFG_COMMIT, params.MAPS_MAX - 1)
    assert H.read_map_config(board)[params.MAPS_MAX - 1] == entry
    with pytest.raises(BoardAddressError):
        board.write32(params.AXI_MCFG_COMMIT, params.MAPS_MAX)
    # counters clear; cycle counter runs
    board.write32(params.AXI_CNT_CLEAR, 1)
    c = H.read_counters(board)
    assert c["rx"] == c["tx"] == c["drop"] == 0 and c["cycles"] > 0


# --- the operator workflow --------------------------------------------------------------------------------------------
@needs_sim
def test_operator_workflow(board: SimBoard, server, objs, compiled, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    spec = server.spec
    rom_gmode, res_gmode = compiled["gmode"]
    rom_drop, _ = compiled["drop"]
    # load = compile + configure maps + inject
    assert cli("load", str(objs["gmode"]), "--board", spec, "-o", str(tmp_path / "gmode.rom")) == 0
    assert "loaded gmode.o" in capsys.readouterr().out
    assert cli("axi", "--board", spec, "-a", "0x80020040", "-w", "1") == 0  # clear the counters
    # traffic from a pcap, counters read with the rwaxi equivalent
    pkts = ipv4_packets(20)
    pcap = tmp_path / "in.pcap"
    write_pcap(pcap, pkts)
    assert cli("board", "send", str(pcap), "--board", spec, "--wait") == 0
    capsys.readouterr()
    assert cli("axi", "--board", spec, "-a", hex(params.AXI_CNT_RX)) == 0
    assert capsys.readouterr().out.strip() == "0x00000014"
    assert [o.action for o in board.outputs()] == [params.XDP_PASS] * 20
    # update the map while traffic flows (pcap replay in a loop at full speed): the behaviour changes
    board.replay(pcap, port=1, loop=True)
    let_flow(board, 300)
    layout = ["--board", spec, "--layout", str(tmp_path / "gmode.maps.json")]
    assert cli("maps", *layout, "update", "gmode.data", "key", "hex", "00", "00", "00", "00", "value", "hex", "03",
               "00", "00", "00") == 0
    let_flow(board, 300)
    # swap the ROM at run time without restarting
    assert cli("inject", str(rom_drop), "--board", spec) == 0
    assert "verified" in capsys.readouterr().out
    let_flow(board, 300)
    board.stop_replay()
    board.wait()
    assert board.stat()["outputs_dropped"] == 0
    outs = board.outputs()
    actions = [o.action for o in outs]
    assert len(outs) >= 900
    assert all(o.fault == 0 and o.port == 1 for o in outs)
    # PASS, then TX (MACs swapped), then DROP: each packet saw one program and one map state
    first_tx, first_drop = actions.index(params.XDP_TX), actions.index(params.XDP_DROP)
    assert 0 < first_tx < first_drop
    assert set(actions[:first_tx]) == {params.XDP_PASS}
    assert set(actions[first_tx:first_drop]) == {params.XDP_TX}
    assert set(actions[first_drop:]) == {params.XDP_DROP}
    swapped = {p[6:12] + p[:6] + p[12:] for p in pkts}
    assert all(o.data in swapped for o in outs[first_tx:first_drop])
    assert all(o.data in pkts for o in outs[:first_tx])
    # counters agree with the outputs
    c = H.read_counters(board)
    assert c["rx"] == 20 + len(outs)
    assert c["tx"] == c["xdp_tx"] == actions.count(params.XDP_TX)
    assert c["xdp_pass"] == 20 + actions.count(params.XDP_PASS)
    assert c["drop"] == c["xdp_drop"] == actions.count(params.XDP_DROP) and c["xdp_aborted"] == 0
    # dump-imem shows the DROP program
    assert cli("dump-imem", "--board", spec) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("   0  ") and "exit 1" in text


@needs_sim
def test_maps_by_name(board: SimBoard, server, compiled, capsys) -> None:  # noqa: ANN001
    rom, res = compiled["acl"]
    H.configure_and_inject(board, res.rom, res.layout)
    assert H.read_map_config(board) == H.map_config_entries(res.layout)
    ref = MapState(res.layout)
    bm = H.BoardMaps(board, res.layout)
    keys = [bytes([10, 0, 0, i]) for i in range(1, 40)]
    for i, k in enumerate(keys):
        assert bm.update("acl", k, (i % 4).to_bytes(4, "little")) == 0
        ref.update(0, k, (i % 4).to_bytes(4, "little"))
    for k in keys[::3]:
        assert bm.delete("acl", k) == 0
        ref.delete(0, k)
    assert bm.delete("acl", b"\x01\x02\x03\x04") == -errno.ENOENT
    assert bm.update("acl", keys[1], b"\x09\0\0\0", flags=1) == -errno.EEXIST
    assert bm.dump("acl") == ref.dump_map(0)
    assert bm.lookup("acl", keys[1]) == ref.lookup(0, keys[1])
    assert bm.lookup("acl", keys[0]) is None
    assert {m["name"]: m["entries"] for m in bm.list()} == {"acl": ref.count(0), "stats": 5}
    # a lookup reads the header and the probe sequence only, not the whole region
    bm.lines_read = 0
    bm.lookup("acl", keys[5])
    assert 0 < bm.lines_read < res.layout.regions[0].size // LINE // 8
    # the board's memory equals the reference image line for line
    first, count = res.layout.regions[0].offset // LINE, res.layout.regions[0].size // LINE + 1
    assert H.read_lines(board, first, count) == bytes(ref.mem[first * LINE : (first + count) * LINE])
    # CLI: bpftool-like JSON, key of the wrong size, unknown map
    spec = ["--board", server.spec, "--rom", str(rom)]
    assert cli("maps", *spec, "lookup", "acl", keys[1].hex()) == 0
    out = capsys.readouterr().out
    assert '"0x0a"' in out and '"value"' in out
    before = H.read_lines(board, first, count)
    assert cli("maps", *spec, "update", "acl", "0a0000", "01000000") == 1
    assert "key of 3 bytes, the map's key size is 4" in capsys.readouterr().err
    assert cli("maps", *spec, "update", "acl", "0a000001", "01") == 1
    assert "value of 1 bytes, the map's value size is 4" in capsys.readouterr().err
    assert board.read32(params.AXI_CTRL) == 0  # not left holding the input
    assert cli("maps", *spec, "lookup", "nosuch", "00") == 1
    assert "no map named 'nosuch'" in capsys.readouterr().err
    assert H.read_lines(board, first, count) == before
    assert cli("maps", *spec, "list") == 0
    assert "hash  name acl" in capsys.readouterr().out


# --- bpftool's OBJECT COMMAND shape: hxdp map ..., hxdp prog ... ---------------------------------------------------
@pytest.fixture(autouse=True)
def _load_notes(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `prog load`/`inject` note about the loaded program goes to a folder of this test session."""
    monkeypatch.setenv(H.STATE_ENV, str(tmp_path_factory.getbasetemp() / "hxdp-state"))


def out_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """stdout of a command that must succeed."""
    rc = cli(*argv)
    got = capsys.readouterr()
    assert rc == 0, got.err
    return got.out


def jbytes(b: bytes) -> list[str]:
    return [f"0x{x:02x}" for x in b]


def test_parse_elem_bpftool_operands() -> None:
    p = B.parse_elem
    # bpftool's DATA: `hex` bytes, C-syntax bytes (decimal, 0x.., 0.. octal); `key`/`value` may be left out
    assert p("key hex 11 00 00 00".split(), 4, 8, False) == B.Elem(b"\x11\0\0\0")
    assert p("hex 11 00 00 00".split(), 4, 8, False) == B.Elem(b"\x11\0\0\0")
    assert p("17 0 0 0".split(), 4, 8, False) == B.Elem(b"\x11\0\0\0")
    assert p("key 0x11 021 0 0".split(), 4, 8, False) == B.Elem(b"\x11\x11\0\0")
    elem = p("key hex 11 00 00 00 value hex 01 00 00 00 00 00 00 00 noexist".split(), 4, 8, True)
    assert elem == B.Elem(b"\x11\0\0\0", b"\x01" + bytes(7), 1)
    assert p("17 0 0 0 1 2 3 4 5 6 7 8 exist".split(), 4, 8, True) == B.Elem(b"\x11\0\0\0", bytes(range(1, 9)), 2)
    assert p("value 1 0 key 2 0".split(), 2, 2, True) == B.Elem(b"\x02\0", b"\x01\0", 0)
    # hxdp's shorthand: one hex token (also after key/value), `flags any|noexist|exist`
    assert p(["0a000001"], 4, 4, False) == B.Elem(b"\x0a\0\0\x01")
    assert p(["0a"], 1, 4, False) == B.Elem(b"\x0a")  # a lone token stays hex, as it always was
    assert p("0a000001 01000000 flags exist".split(), 4, 4, True) == B.Elem(b"\x0a\0\0\x01", b"\x01\0\0\0", 2)
    assert p("key 0x0a000001 value 0a,00,00,02".split(), 4, 4, True) == B.Elem(b"\x0a\0\0\x01", b"\x0a\0\0\x02")
    # too few bytes stay short (the map refuses the size, naming it); bad bytes and words are named
    assert p("key 1 2 3".split(), 4, 4, False).key == b"\x01\x02\x03"
    for tokens, want, msg in (("hex zz 00 00 00", False, "error parsing byte 'zz'"),
                              ("300 0 0 0", False, "error parsing byte '300'"),
                              ("09 0 0 0", False, "error parsing byte '09'"),
                              ("1 0 0 0 5", False, "unexpected '5'"),
                              ("key 1 0 0 0", True, "missing the value"),
                              ("key", False, "key: no bytes given"),
                              ("1 0 0 0 noexist", False, "unexpected 'noexist'")):
        with pytest.raises(MapError, match=msg):
            p(tokens.split(), 4, 4, want)


def _region(kind: str, key: int, value: int) -> object:
    from hxdp.frontend.program import MapDef

    t = {v: k for k, v in params.MAP_TYPES.items()}[kind]
    return MapLayout.from_maps([MapDef("m", t, key, value, 4, 0)]).regions[0]


def test_entry_shapes_like_bpftool() -> None:
    a = _region("array", 4, 8)
    key, value = b"\x01\0\0\0", bytes(range(8))
    assert B.entry_json(a, key, value) == {"key": jbytes(key), "value": jbytes(value)}
    assert B.entry_plain(a, key, value) == "key: 01 00 00 00  value: 00 01 02 03 04 05 06 07"
    pc = _region("percpu_array", 4, 8)
    assert B.entry_json(pc, key, value) == {"key": jbytes(key), "values": [{"cpu": 0, "value": jbytes(value)}]}
    assert B.entry_plain(pc, key, value) == "key:\n01 00 00 00\nvalue (CPU 00): 00 01 02 03 04 05 06 07"
    # key + value above 24 bytes: two lines; either above 16: the names on lines of their own
    h = _region("hash", 8, 20)
    assert B.entry_plain(h, bytes(8), bytes(20)) == "key:\n" + " ".join(["00"] * 8) + "\nvalue:\n" + \
        " ".join(["00"] * 20)
    h = _region("hash", 12, 16)
    assert B.entry_plain(h, bytes(12), bytes(16)).split("\n") == ["key: " + " ".join(["00"] * 12),
                                                                  "value: " + " ".join(["00"] * 16)]
    assert B.entry_plain(_region("hash", 8, 16), bytes(8), bytes(16)).count("\n") == 0  # 24 bytes: one line
    assert B.dump_plain(a, {key: value}).endswith("\nFound 1 element")
    assert B.dump_plain(a, {}) == "Found 0 elements"
    info = B.map_info(a, 4)
    assert list(info)[:7] == ["id", "type", "name", "flags", "bytes_key", "bytes_value", "max_entries"]
    assert B.map_info_plain(info).startswith("0: array  name m  flags 0x0\n\tkey 4B  value 8B  max_entries 4")


def test_layout_from_the_board_table(compiled) -> None:  # noqa: ANN001
    """The map configuration table gives back every field of the layout but the names."""
    for _name, (_rom, res) in compiled.items():
        got = H.layout_from_config(H.map_config_entries(res.layout))
        for a, b in zip(got.regions, res.layout.regions, strict=True):
            assert (a.id, a.kind, a.key_size, a.value_size, a.max_entries, a.offset, a.size, a.slots, a.slot_size,
                    a.key_offset, a.value_offset, a.data_offset) == \
                (b.id, b.kind, b.key_size, b.value_size, b.max_entries, b.offset, b.size, b.slots, b.slot_size,
                 b.key_offset, b.value_offset, b.data_offset)
            assert a.name == ""
        assert len(got.regions) == len(res.layout.regions)


def test_xlated_lines() -> None:
    from bpf_asm import exit_, lddw, mov

    lo, hi = lddw(1, 0x1122334455667788)
    rom = Rom([row(), [mov(0, 2), lo, hi, exit_()]])
    insns = H.xlated(rom)
    assert [(i["row"], i["lane"], i["code"]) for i in insns] == [(1, 0, "0xb7"), (1, 1, "0x18"), (1, 3, "0x95")]
    assert len(insns[1]["bytes"]) == 16 and insns[1]["bytes"][:2] == ["0x18", "0x01"]
    assert B.xlated_plain(insns, opcodes=True)[:2] == ["   1.0: (b7) r0 = 2", "       b7 00 00 00 02 00 00 00"]
    assert B.xlated_plain(insns)[1] == "   1.1: (18) r1 = 0x1122334455667788 ll"


@needs_sim
def test_map_commands(board: SimBoard, server, objs, compiled, tmp_path: Path, monkeypatch,  # noqa: ANN001
                      capsys) -> None:  # noqa: ANN001
    """hxdp map show/dump/lookup/update/delete: plain text, -j, -p; bpftool's operands; maps by name and by id."""
    b = ["--board", server.spec]
    assert "loaded acl.o" in out_of(capsys, "prog", "load", str(objs["acl"]), *b)
    # names come from the note `prog load` left: no --layout needed
    assert out_of(capsys, "map", "show", *b).splitlines() == [
        "0: hash  name acl  flags 0x0", "\tkey 4B  value 4B  max_entries 64  entries 0  at 0x0 (3088B)",
        "1: array  name stats  flags 0x0", "\tkey 4B  value 8B  max_entries 5  entries 5  at 0xc40 (40B)"]
    shown = json.loads(out_of(capsys, "map", "-j", "show", *b))
    assert [(m["id"], m["name"], m["type"], m["bytes_key"], m["bytes_value"], m["max_entries"]) for m in shown] == \
        [(0, "acl", "hash", 4, 4, 64), (1, "stats", "array", 4, 8, 5)]
    assert json.loads(out_of(capsys, "map", "show", "id", "1", "-j", *b))["name"] == "stats"  # one map: an object
    # update with bpftool's operands: hex bytes, decimal bytes, keywords left out, flags
    assert out_of(capsys, "map", "update", "acl", "key", "hex", "0a", "00", "00", "01", "value", "hex", "02", "00",
                  "00", "00", *b) == ""
    assert out_of(capsys, "map", "update", "name", "acl", "10", "0", "0", "2", "value", "1", "0", "0", "0",
                  "noexist", "-j", *b) == "null\n"
    assert cli("map", "update", "acl", "10", "0", "0", "2", "value", "1", "0", "0", "0", "noexist", *b) == 1
    assert "update of key 0a 00 00 02 failed: File exists" in capsys.readouterr().err
    assert out_of(capsys, "map", "lookup", "acl", "hex", "0a", "00", "00", "01", *b) == \
        "key: 0a 00 00 01  value: 02 00 00 00\n"
    assert json.loads(out_of(capsys, "map", "lookup", "id", "0", "10", "0", "0", "2", "-j", *b)) == \
        {"key": jbytes(b"\x0a\0\0\x02"), "value": jbytes(b"\x01\0\0\0")}
    dumped = out_of(capsys, "map", "dump", "acl", "-j", *b)
    assert "\n" not in dumped.strip() and sorted(json.loads(dumped), key=str) == sorted(
        [{"key": jbytes(b"\x0a\0\0\x01"), "value": jbytes(b"\x02\0\0\0")},
         {"key": jbytes(b"\x0a\0\0\x02"), "value": jbytes(b"\x01\0\0\0")}], key=str)
    pretty = out_of(capsys, "map", "dump", "acl", "-p", *b)
    assert json.loads(pretty) == json.loads(dumped) and '\n    {\n        "key": [\n' in pretty
    text = out_of(capsys, "map", "dump", "acl", *b).splitlines()
    assert sorted(text[:2]) == ["key: 0a 00 00 01  value: 02 00 00 00", "key: 0a 00 00 02  value: 01 00 00 00"]
    assert text[2] == "Found 2 elements"
    assert out_of(capsys, "map", "delete", "acl", "key", "10", "0", "0", "2", "-j", *b) == "null\n"
    assert cli("map", "lookup", "acl", "10", "0", "0", "2", *b) == 1
    assert "map acl: key 0a 00 00 02 not found" in capsys.readouterr().err
    # the old verbs: same output as before; `maps lookup NAME hex ..` is accepted now
    rom, res = compiled["acl"]
    old = ["--board", server.spec, "--rom", str(rom)]
    assert json.loads(out_of(capsys, "maps", *old, "lookup", "acl", "hex", "0a", "00", "00", "01")) == \
        {"key": jbytes(b"\x0a\0\0\x01"), "value": jbytes(b"\x02\0\0\0")}
    assert out_of(capsys, "maps", *old, "dump", "acl") == \
        H.dump_json({b"\x0a\0\0\x01": b"\x02\0\0\0"}) + "\n"
    # without a note (another host loaded it): the board's table gives the maps by id, without names
    monkeypatch.setenv(H.STATE_ENV, str(tmp_path / "other-host"))
    assert out_of(capsys, "map", "show", *b).splitlines()[0] == "0: hash  flags 0x0"
    assert out_of(capsys, "map", "dump", "id", "0", *b) == "key: 0a 00 00 01  value: 02 00 00 00\nFound 1 element\n"
    assert cli("map", "dump", "acl", *b) == 1
    assert "the board's map table holds no names; use `id N`" in capsys.readouterr().err
    assert "Found 1 element" in out_of(capsys, "map", "dump", "acl", "--layout", str(rom.with_suffix(".maps.json")),
                                       *b)
    assert cli("map", "dump", "id", "7", *b) == 1
    assert "no map with id 7 (the program has 2 maps)" in capsys.readouterr().err
    # a layout of another program is said to be one
    gmode_rom, _ = compiled["gmode"]
    assert cli("map", "show", "--rom", str(gmode_rom), *b) == 0
    assert "does not describe the maps on" in capsys.readouterr().err


@needs_sim
def test_percpu_maps(board: SimBoard, server, objs, capsys) -> None:  # noqa: ANN001
    """Per-CPU maps have one CPU on the board: bpftool's "values" list with CPU 0, `value (CPU 00):` lines."""
    b = ["--board", server.spec]
    out_of(capsys, "prog", "load", str(objs["pcpu"]), *b)
    pkts = traffic.generate(4, 12, 64, "mix", 3)
    board.inject(pkts)
    board.wait()
    assert {o.action for o in board.outputs()} == {params.XDP_PASS}
    got = json.loads(out_of(capsys, "map", "dump", "pcount", "-j", *b))
    want = [12, sum(len(p) for p in pkts)]  # packets, bytes
    values = [[{"cpu": 0, "value": jbytes(n.to_bytes(8, "little"))}] for n in want]
    assert got == [{"key": jbytes(bytes([k, 0, 0, 0])), "values": v} for k, v in enumerate(values)]
    assert out_of(capsys, "map", "dump", "pcount", *b).splitlines()[:3] == \
        ["key:", "00 00 00 00", "value (CPU 00): 0c 00 00 00 00 00 00 00"]
    protos = json.loads(out_of(capsys, "map", "dump", "perproto", "-j", *b))
    counts = {int(e["key"][0], 16): int(e["values"][0]["value"][0], 16) for e in protos}
    assert sum(counts.values()) == len(pkts) and 17 in counts  # every frame holds 20 bytes past Ethernet
    assert out_of(capsys, "map", "update", "perproto", "key", "99", "0", "0", "0", "value", "hex", "2a", "0", "0", "0",
                  "0", "0", "0", "0", *b) == ""
    assert json.loads(out_of(capsys, "map", "lookup", "perproto", "99", "0", "0", "0", "-j", *b))["values"] == \
        [{"cpu": 0, "value": jbytes(b"\x2a" + bytes(7))}]


@needs_sim
def test_prog_commands(board: SimBoard, server, objs, compiled, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """hxdp prog show/dump/load: what runs (tag, name if this host loaded it, rows, maps, counters), its
    instructions; the old verbs load and dump-imem print what they printed."""
    b = ["--board", server.spec]
    rom, res = compiled["gmode"]
    assert out_of(capsys, "load", str(objs["gmode"]), *b).startswith("loaded gmode.o: ")
    board.write32(params.AXI_CNT_CLEAR, 1)
    board.inject(ipv4_packets(6))
    board.wait()
    (info,) = json.loads(out_of(capsys, "prog", "show", "-j", *b))
    assert (info["id"], info["type"], info["name"], info["tag"]) == (0, "xdp", "gmode", H.program_tag(res.rom))
    assert info["rows"] == len(res.rom.rows) and info["map_ids"] == list(range(len(res.layout.regions)))
    assert info["cores"] == 1 and "cores" not in out_of(capsys, "prog", "show", *b)
    assert info["run_cnt"] == 6 == info["counters"]["xdp_pass"] and info["source"] == str(objs["gmode"].resolve())
    text = out_of(capsys, "prog", "show", *b).splitlines()
    assert text[0] == f"0: xdp  name gmode  tag {H.program_tag(res.rom)}"
    assert text[1].startswith("\tloaded_at ") and text[2].startswith(
        f"\trows {len(res.rom.rows)} (of {params.IMEM_ROWS})  xlated ")
    assert text[3].startswith("\trun_cnt 6  aborted 0  drop 0  pass 6  tx 0  redirect 0  faults 0  cycles ")
    # prog dump xlated: one instruction a line, map names from the note; rows: what dump-imem prints
    xl = out_of(capsys, "prog", "dump", "xlated", *b).splitlines()
    assert xl == B.xlated_plain(H.xlated(res.rom, res.layout)) and "map[gmode.data]" in "\n".join(xl)
    assert xl[0].startswith("   0.0: (")
    assert json.loads(out_of(capsys, "prog", "dump", "-j", *b)) == H.xlated(res.rom, res.layout)
    rows = out_of(capsys, "prog", "dump", "rows", "--layout", str(rom.with_suffix(".maps.json")), *b)
    assert rows == out_of(capsys, "dump-imem", "--layout", str(rom.with_suffix(".maps.json")), *b)
    assert out_of(capsys, "prog", "dump", "opcodes", *b).splitlines()[1].startswith("       ")
    # inject notes the ROM (and the layout next to it); a program written behind the tools' back has no name
    drop_rom, _ = compiled["drop"]
    assert "verified" in out_of(capsys, "inject", str(drop_rom), *b)
    assert json.loads(out_of(capsys, "prog", "show", "-j", *b))[0]["name"] == "drop"
    H.inject(board, res.rom)
    (info,) = json.loads(out_of(capsys, "prog", "show", "-j", *b))
    assert "name" not in info and info["tag"] == H.program_tag(res.rom)
    # prog load -j, -o as load
    doc = json.loads(out_of(capsys, "prog", "load", str(objs["acl"]), "-o", str(tmp_path / "acl.rom"), "-j", *b))
    assert doc["name"] == "acl" and doc["maps"] == ["acl", "stats"] and (tmp_path / "acl.maps.json").exists()


# --- results equal the kernel's ---------------------------------------------------------------------------------------
@needs_sim
@pytest.mark.kernel
@requires_kernel
@pytest.mark.parametrize("mode", [params.XDP_PASS, params.XDP_TX, params.XDP_DROP])
def test_board_equals_kernel(board: SimBoard, objs, compiled, mode: int) -> None:  # noqa: ANN001
    from hxdp.linux.kernel import KernelProgram

    _rom, res = compiled["gmode"]
    cfg = {"maps": {"gmode.data": [{"key": "00000000", "value": mode.to_bytes(4, "little").hex()}]}}
    H.configure_and_inject(board, res.rom, res.layout, cfg)
    pkts = ipv4_packets(12, seed=mode) + [bytes(14) + bytes(50)]  # a non-IPv4 frame takes the other branch
    board.inject(pkts, port=0)
    board.wait()
    outs = board.outputs()
    with KernelProgram(str(objs["gmode"])) as k:
        k.apply_config(cfg)
        want = [k.run(p) for p in pkts]
        kdump = k.dump()
    assert [o.action for o in outs] == [w.action for w in want]
    assert [o.data for o in outs] == [w.packet for w in want]
    assert H.BoardMaps(board, res.layout).dump_all() == kdump


@needs_sim
@pytest.mark.kernel
@requires_kernel
def test_board_equals_kernel_hash_map(board: SimBoard, objs, compiled) -> None:  # noqa: ANN001
    """acl.c (hash map lookups, atomic counters in an array): entries written by the host tools are found by the
    hardware where the kernel finds them; actions, bytes and the maps agree before and after an update."""
    from hxdp.linux.kernel import KernelProgram

    _rom, res = compiled["acl"]
    pkts = traffic.generate(16, 48, 64, "udp", 7)
    srcs = sorted({p[26:30] for p in pkts})
    entries = {src: (i % 4).to_bytes(4, "little") for i, src in enumerate(srcs[:10])}
    H.configure_and_inject(board, res.rom, res.layout)
    bm = H.BoardMaps(board, res.layout)
    with KernelProgram(str(objs["acl"])) as k:
        for round_ in range(2):
            for key, value in entries.items():
                assert bm.update("acl", key, value) == 0
            k.apply_config({"maps": {"acl": [{"key": a.hex(), "value": v.hex()} for a, v in entries.items()]}})
            board.inject(pkts, port=0)
            board.wait()
            outs = board.outputs()
            want = [k.run(p) for p in pkts]
            assert [o.action for o in outs] == [w.action for w in want], f"round {round_}"
            assert [o.data for o in outs] == [w.packet for w in want]
            assert bm.dump_all() == k.dump()
            # change the table: delete two entries on both sides, flip the others
            for key in list(entries)[:2]:
                assert bm.delete("acl", key) == 0
                k.delete("acl", key)
                del entries[key]
            entries = {key: ((int.from_bytes(v, "little") + 1) % 4).to_bytes(4, "little") for key, v in entries.items()}
        assert len({o.action for o in outs}) >= 3


# --- bad input --------------------------------------------------------------------------------------------------------
class DyingBoard(Board):
    """Forwards to a board, then goes away after `budget` writes (a link or daemon lost mid-inject)."""

    def __init__(self, inner: Board, budget: int) -> None:
        self.inner, self.budget, self.name = inner, budget, "dying"

    def read32(self, addr: int) -> int:
        return self.inner.read32(addr)

    def write32(self, addr: int, value: int) -> None:
        if self.budget <= 0:
            raise BoardError("dying: board went away")
        self.budget -= 1
        self.inner.write32(addr, value)


@needs_sim
def test_bad_input(board: SimBoard, server, compiled, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    _rom, res = compiled["gmode"]
    H.configure_and_inject(board, res.rom, res.layout)
    before = H.dump_imem(board).rows
    # ROM too large, malformed, empty: refused before any write
    big = Rom([[res.rom.rows[0][0]] + [res.rom.rows[0][1]] * 3 for _ in range(params.IMEM_ROWS + 1)])
    with pytest.raises(H.InjectError, match=f"holds {params.IMEM_ROWS}"):
        H.inject(board, big)
    bad = tmp_path / "bad.rom"
    bad.write_text("0123\n")
    assert cli("inject", str(bad), "--board", server.spec) == 1
    assert "a row is 16 hex digits per lane, got 4 digits" in capsys.readouterr().err
    with pytest.raises(RomError):
        H.load_rom(bad)
    assert H.dump_imem(board).rows == before
    # unknown address through the CLI
    assert cli("axi", "--board", server.spec, "-a", "0x90000000") == 1
    assert "no register at 0x90000000" in capsys.readouterr().err
    # a board that goes away mid-inject: the input stays held, no packet runs a half-written program
    new = Rom(res.rom.rows[::-1])
    with pytest.raises(BoardError, match="went away"):
        H.inject(DyingBoard(board, 40), new)
    assert board.read32(params.AXI_STATUS) & params.AXI_STATUS_HELD
    board.inject(ipv4_packets(3), port=0)
    board.run(2000)
    assert board.outputs() == [] and board.read32(params.AXI_INFLIGHT) == 0
    H.configure_and_inject(board, res.rom, res.layout)  # a complete load releases the input
    board.wait()
    assert [o.action for o in board.outputs()] == [params.XDP_PASS] * 3
    # the daemon itself goes away: a clear error
    from hxdp.board.sim import BoardServer

    with BoardServer(ports=1, step=True) as other:
        b2 = other.board()
        other.proc.kill()
        other.proc.wait()
        with pytest.raises(BoardError, match="went away"):
            H.inject(b2, res.rom)
    with pytest.raises(BoardError, match="another board is already serving"):
        BoardServer(server.socket_path).start()
    with pytest.raises(BoardError, match="no simulated board answers"):
        open_board(f"sim:{tmp_path / 'none.sock'}")
    with pytest.raises(BoardError, match="expected sume"):
        open_board("pcie:0")


# --- the sume transport against a fake register device ----------------------------------------------------------------
class FakeSume:
    """Stands in for the NetFPGA-SUME driver: decodes the ifreq like the kernel does and records each ioctl."""

    def __init__(self, iface: str = "nf0") -> None:
        self.iface = iface
        self.regs: dict[int, int] = {params.AXI_ID: params.AXI_ID_VALUE}  # this project's bitstream
        self.calls: list[tuple[str, int, int]] = []

    def __call__(self, fd: int, req: int, ifr: bytearray) -> int:
        assert len(ifr) == 40
        name = bytes(ifr[:16]).rstrip(b"\0").decode()
        if name != self.iface:
            raise OSError(errno.ENODEV, os.strerror(errno.ENODEV))
        (ptr,) = struct.unpack_from("P", ifr, 16)
        regs = ctypes.cast(ptr, ctypes.POINTER(ctypes.c_uint32 * 2)).contents
        if req == SUME_IOCTL_WRITE:
            self.calls.append(("w", regs[0], regs[1]))
            self.regs[regs[0]] = regs[1]
        elif req == SUME_IOCTL_READ:
            self.calls.append(("r", regs[0], 0))
            regs[1] = self.regs.get(regs[0], 0xDEADBEEF)
        else:
            raise OSError(errno.EINVAL, "bad request")
        return 0


def test_sume_transport_fake_device(compiled) -> None:  # noqa: ANN001
    fake = FakeSume("nf1")
    b = SumeBoard("nf1", ioctl=fake, sock=3)
    b.write32(0x8002_0002, 7)
    assert b.read32(0x8002_0002) == 7 and b.read32(0x8002_0003) == 0xDEADBEEF
    assert fake.calls == [("w", 0x8002_0002, 7), ("r", 0x8002_0002, 0), ("r", 0x8002_0003, 0)]
    assert H.axi(b, 0x8002_0002) == "0x00000007"
    # inject on the original bitstream (its ID address reads 0x01234567): eight words and a commit for every one
    # of its 256 rows (no stale row of a longer program), then the read-back
    _rom, res = compiled["drop"]
    fake.regs[params.AXI_ID] = 0x0123_4567
    fake.calls.clear()
    rep = H.inject(b, res.rom, extensions=False)
    nrows = len(res.rom.rows)
    writes = [c for c in fake.calls if c[0] == "w"]
    assert len(writes) == 9 * 256 and rep.rows == nrows and rep.cleared == 256 - nrows
    assert writes[8] == ("w", 0x8000_00FF, 1)
    lo = res.rom.rows[0][0].to_u64()
    assert writes[0] == ("w", 0x8000_0000, lo & 0xFFFFFFFF) and writes[1] == ("w", 0x8000_0004, lo >> 32)
    assert H.dump_imem(b, nrows).rows == res.rom.rows
    # no board: ENODEV from the driver -> a clear error (and exit 1 from the CLI)
    with pytest.raises(BoardError, match="no NetFPGA-SUME board answers on nf0"):
        SumeBoard("nf0", ioctl=fake, sock=3).read32(0x8002_0002)
    with pytest.raises(BoardError, match="longer than 15"):
        SumeBoard("x" * 16, ioctl=fake, sock=3)


def test_sume_cli_without_board(capsys) -> None:  # noqa: ANN001
    assert cli("axi", "-i", "hxdpnoboard0", "-a", "0x80020002") == 1
    assert "no NetFPGA-SUME board answers on hxdpnoboard0" in capsys.readouterr().err


# --- monitor ----------------------------------------------------------------------------------------------------------
class CounterBoard(Board):
    def __init__(self) -> None:
        self.regs: dict[int, int] = {}

    def read32(self, addr: int) -> int:
        return self.regs.get(addr, 0)

    def write32(self, addr: int, value: int) -> None:
        self.regs[addr] = value


def test_monitor_counter_wrap() -> None:
    assert H.wrap_delta(5, 0xFFFF_FFFE) == 7 and H.wrap_delta(9, 4) == 5
    b = CounterBoard()
    b.regs[params.AXI_CNT_RX] = 0xFFFF_FF00
    b.regs[params.AXI_CNT_CYCLES_LO] = 1000
    mon = H.Monitor(b)
    b.regs[params.AXI_CNT_RX] = 0x100  # wrapped: 0x200 packets
    b.regs[params.AXI_CNT_CYCLES_LO] = 1000 + 0x200 * 4
    s = mon.sample()
    assert s["rx"] == 0x200 and mon.totals["rx"] == 0x200
    assert s["rx_mpps_clock"] == pytest.approx(params.CLOCK_MHZ / 4)
    b.regs[params.AXI_CNT_RX] = 0x150
    mon.sample()
    assert mon.totals["rx"] == 0x250
    assert "totals rx 592" in H.format_sample(mon.sample(), mon.totals)


@needs_sim
def test_pcap_replay_and_output(server, compiled, tmp_path: Path) -> None:  # noqa: ANN001
    """A daemon started with --pcap --out replays at full speed and writes the TX frames to a pcap."""
    from hxdp.board.sim import BoardServer

    _rom, res = compiled["gmode"]
    pkts = ipv4_packets(10)
    write_pcap(tmp_path / "in.pcap", pkts)
    with BoardServer(ports=1, pcap=str(tmp_path / "in.pcap"), out=str(tmp_path / "out.pcap")) as srv:
        b = srv.board()
        b.wait()
        b.outputs()  # the first replay ran with an empty program (aborted)
        cfg = {"maps": {"gmode.data": [{"key": "00000000", "value": "03000000"}]}}
        H.configure_and_inject(b, res.rom, res.layout, cfg)
        b.replay(tmp_path / "in.pcap")
        b.wait()
        assert [o.action for o in b.outputs()] == [params.XDP_TX] * 10
        b.stat()  # flushes the output pcap
        b.shutdown()
    out = read_pcap(tmp_path / "out.pcap")
    assert len(out) == 10 and all(o[:6] == p[6:12] and o[6:12] == p[:6] for o, p in zip(out, pkts, strict=True))


# --- TAP interfaces: Linux traffic between two network namespaces through the simulated NIC ---------------------------
RECV = """import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.77.0.2", 9999))
s.settimeout(1.5)
n = 0
try:
    while n < 5:
        s.recv(100)
        n += 1
except OSError:
    pass
print(n)
"""
SEND = """import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(5):
    s.sendto(b"x" * 40, ("10.77.0.2", 9999))
    time.sleep(0.02)
"""


def _tap_reason() -> str | None:
    import shutil

    if os.geteuid() != 0:
        return "TAP interfaces and network namespaces need root"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun"
    if shutil.which("ip") is None:
        return "iproute2 (ip) is not installed"
    return None


@needs_sim
def test_tap_bump_in_the_wire(compiled) -> None:  # noqa: ANN001
    """Namespace A -> TAP 0 -> board -> TAP 1 -> namespace B: UDP passes, then a map update makes it drop."""
    import subprocess
    import sys

    reason = _tap_reason()
    if reason:
        pytest.skip(reason)
    from hxdp.board.sim import BoardServer

    tag = f"{os.getpid() % 100000}"
    ns = [f"hxbA{tag}", f"hxbB{tag}"]
    taps = [f"hxt{tag}a", f"hxt{tag}b"]

    def sh(*cmd: str) -> None:
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, f"{' '.join(cmd)}: {r.stderr}"

    def udp() -> int:
        rx = subprocess.Popen(["ip", "netns", "exec", ns[1], sys.executable, "-c", RECV], stdout=subprocess.PIPE,
                              text=True)
        time.sleep(0.3)
        sh("ip", "netns", "exec", ns[0], sys.executable, "-c", SEND)
        return int(rx.communicate(timeout=10)[0])

    _rom, res = compiled["gmode"]
    with BoardServer(ports=2, taps=taps) as srv:
        b = srv.board()
        cfg = {"maps": {"gmode.data": [{"key": "00000000", "value": "02000000"}]}}
        H.configure_and_inject(b, res.rom, res.layout, cfg)
        try:
            for n, t, ip in zip(ns, taps, ("10.77.0.1", "10.77.0.2"), strict=True):
                sh("ip", "netns", "add", n)
                sh("ip", "link", "set", t, "netns", n)
                sh("ip", "netns", "exec", n, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
                sh("ip", "-n", n, "addr", "add", f"{ip}/24", "dev", t)
                sh("ip", "-n", n, "link", "set", t, "up")
            assert udp() == 5  # ARP (not IPv4) and UDP pass through the board
            H.BoardMaps(b, res.layout).update("gmode.data", bytes(4), params.XDP_DROP.to_bytes(4, "little"))
            assert udp() == 0
            c = H.read_counters(b)
            assert c["drop"] == 5 and c["xdp_pass"] >= 5 and b.stat()["tap_in"] == c["rx"]
        finally:
            for n in ns:
                subprocess.run(["ip", "netns", "del", n], capture_output=True)


@needs_sim
def test_input_ports(board: SimBoard, compiled) -> None:  # noqa: ANN001
    """Two ports fed at once: whole packets are arbitrated (never interleaved), port k has ingress_ifindex k+1."""
    _rom, res = compiled["ifx"]
    H.configure_and_inject(board, res.rom, res.layout)
    a = traffic.generate(5, 30, 64, "udp", 1)
    c = traffic.generate(5, 30, 300, "udp", 2)
    H.hold_input(board)  # queue on both ports before the first packet goes in
    board.inject(a, port=0)
    board.inject(c, port=1)
    H.release_input(board)
    board.wait()
    outs = board.outputs()
    assert len(outs) == 60
    by_port = {p: [o for o in outs if o.port == p] for p in (0, 1)}
    assert [o.data for o in by_port[0]] == a and [o.data for o in by_port[1]] == c
    assert {o.action for o in by_port[0]} == {params.XDP_PASS} and {o.action for o in by_port[1]} == {params.XDP_DROP}
    assert {o.port for o in outs[:10]} == {0, 1}  # both ports are served while both have packets
    with pytest.raises(BoardError, match="no port 2"):
        board.inject([a[0]], port=2)


@needs_sim
def test_cli_serve_monitor_out(compiled, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """`hxdp board serve` as an operator starts it, then monitor, out --pcap, stat, shutdown through the CLI."""
    import subprocess
    import sys

    sock = str(tmp_path / "b.sock")
    proc = subprocess.Popen([sys.executable, "-m", "hxdp.cli", "board", "serve", "--socket", sock],
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:  # the socket file exists from bind(), before listen(): wait for an answer
            try:
                SimBoard(sock).close()
                break
            except BoardError:
                assert proc.poll() is None and time.monotonic() < deadline, "the daemon did not start"
                time.sleep(0.05)
        spec = f"sim:{sock}"
        rom, res = compiled["gmode"]
        with SimBoard(sock) as b:
            H.configure_and_inject(b, res.rom, res.layout, {"maps": {"gmode.data": [{"key": "00000000",
                                                                                      "value": "03000000"}]}})
            b.inject(ipv4_packets(7))
            b.wait()
        assert cli("monitor", "--board", spec, "--count", "1", "--interval", "0.05", "--json") == 0
        sample = json.loads(capsys.readouterr().out)
        assert sample["totals"]["tx"] == 0  # counted before the monitor started
        assert cli("board", "out", "--board", spec, "--pcap", str(tmp_path / "tx.pcap")) == 0
        assert len(read_pcap(tmp_path / "tx.pcap")) == 7
        assert cli("dump-imem", "--board", spec, "-o", str(tmp_path / "back.rom")) == 0
        assert Rom.load(tmp_path / "back.rom").rows == res.rom.rows
        assert cli("board", "stat", "--board", spec) == 0
        assert '"finished": 7' in capsys.readouterr().out
        assert cli("board", "shutdown", "--board", spec) == 0
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()


@needs_sim
def test_redirect_counters(board: SimBoard, compiled) -> None:  # noqa: ANN001
    """bpf_redirect to the other port: the redirect target per packet, REDIRECT and TX counters."""
    _rom, res = compiled["redir"]
    H.configure_and_inject(board, res.rom, res.layout)
    board.write32(params.AXI_CNT_CLEAR, 1)
    pkts = ipv4_packets(6)
    board.inject(pkts[:4], port=0)
    board.inject(pkts[4:], port=1)
    board.wait()
    outs = board.outputs()
    assert sorted((o.port, o.action, o.redirect) for o in outs) == [(0, params.XDP_REDIRECT, 2)] * 4 + \
        [(1, params.XDP_REDIRECT, 1)] * 2
    c = H.read_counters(board)
    assert c["xdp_redirect"] == 6 and c["tx"] == 6 and c["xdp_tx"] == 0 and c["drop"] == 0 and c["rx"] == 6


def _printk_packet(k: int) -> bytes:
    """A packet for printk_rom: format "%x %u" with r3 = its first 8 bytes, r4 = bytes 4..7 (k in bytes 6, 7);
    a second record with format "ab%u@@" (8 bytes read, NUL at 6)."""
    return (b"%x %u\0" + k.to_bytes(2, "little")).ljust(52, b"z") + b"ab%u" + bytes([64, 0x40, 0, 9]) + bytes(20)


@needs_sim
def test_trace_printk_fifo(board: SimBoard, server, capsys) -> None:  # noqa: ANN001
    from hxdp.models.vliw import VliwModel

    rom = printk_rom()
    H.inject(board, rom)
    H.read_tracelog(board)
    board.write32(params.AXI_CNT_CLEAR, 1)
    assert board.read_many([params.AXI_TRACE_COUNT, params.AXI_TRACE_DROPPED, params.AXI_TRACE_DEPTH,
                            params.AXI_TRACE_FMT_MAX]) == [0, 0, params.PRINTK_FIFO_DEPTH, params.PRINTK_FMT_MAX]
    # two records per packet: 10 packets overflow the FIFO, the newest records are dropped and counted
    pkts = [_printk_packet(k) for k in range(10)]
    board.inject(pkts)
    board.wait()
    depth = params.PRINTK_FIFO_DEPTH
    assert board.read_many([params.AXI_TRACE_COUNT, params.AXI_TRACE_DROPPED]) == [depth, 20 - depth]
    vm = VliwModel(rom, MapState(MapLayout.from_maps([])))
    want = [rec for p in pkts for rec in vm.run(p).printk]
    assert want[0][0] == b"%x %u" and want[1][0] == b"ab%u@@"
    recs, dropped = H.read_tracelog(board)
    assert [(r.fmt, r.args) for r in recs] == want[:depth] and dropped == 20 - depth
    assert [r.packet - recs[0].packet for r in recs] == [k // 2 for k in range(depth)]
    assert board.read32(params.AXI_TRACE_COUNT) == 0
    assert recs[2].line() == f"pkt {recs[0].packet + 1}: bpf_trace_printk: 25207825 {0x75 | 1 << 16}"
    # popping an empty FIFO is harmless; the CLI prints like bpftool prog tracelog and reports the drops
    board.write32(params.AXI_TRACE_POP, 1)
    board.inject([_printk_packet(7)])
    board.wait()
    assert cli("tracelog", "--board", server.spec) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[0].endswith(f"bpf_trace_printk: 25207825 {0x75 | 7 << 16}")
    assert len(out.out.splitlines()) == 2 and "4 records dropped" in out.err
    board.write32(params.AXI_CNT_CLEAR, 1)
    assert board.read32(params.AXI_TRACE_DROPPED) == 0


def test_format_printk() -> None:
    assert H.format_printk(b"x=%d y=%llx %u%% %c|%5d|%-4x|%08llx %s %p %d", (2**32 - 5, 0xDEADBEEF12, 7)) == \
        "x=-5 y=deadbeef12 7% %c|%5d|%-4x|%08llx %s %p %d"
    assert H.format_printk(b"%5d|%-4x|%08llx|%ld\n", (3, 10, 0x1234)) == "    3|a   |00001234|%ld"
    assert H.format_printk(b"%c%s %p", (0x41, 0x10000010, 0x30000100)) == "A<string at 0x10000010> 0x30000100"


@needs_sim
def test_fresh_board_prandom_equals_model() -> None:
    """A board that has just been reset: get_prandom_u32 starts from the xorshift state's reset value, as in the
    model (the board harness gives the asynchronous reset a falling edge; holding rst_ni low from time 0 left
    the state at 0)."""
    from hxdp.board.sim import BoardServer
    from hxdp.models.vliw import VliwModel

    rom = Rom([
        row("r6 = *(u32 *)(r1 + 0)", f"call {params.HELPER_IDS['get_prandom_u32']}"),
        row("*(u64 *)(r6 + 0) = r0"),
        row("exit 3"),
    ])
    pkts = ipv4_packets(5)
    with BoardServer(ports=1) as srv:
        b = srv.board()
        try:
            H.inject(b, rom)
            b.inject(pkts)
            b.wait()
            outs = b.outputs()
        finally:
            b.close()
    vm = VliwModel(rom, MapState(MapLayout.from_maps([])))
    want = [vm.run(p).packet for p in pkts]
    assert int.from_bytes(want[0][:8], "little") != 0
    assert [o.data for o in outs] == want


@needs_sim
def test_event_ring(board: SimBoard, server, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """xdp_pktcap and xdp_flowevents on the simulated board: the event ring holds the VLIW model's records, with
    the packet numbers of the board; past its depth records are dropped and counted; hxdp events prints them and
    writes the packet samples as pcap."""
    from hxdp.board.events import read_events
    from hxdp.events import read_event_lines
    from hxdp.models.vliw import VliwModel
    from hxdp.suite import programs

    suite = {p.name: p for p in programs()}
    for name in ("xdp_pktcap", "xdp_flowevents"):
        prog = suite[name]
        if not prog.obj.exists():
            pytest.skip(f"{prog.obj} not built (make -C xdp_progs)")
        res = compile_program(prog.load(), CompileOptions())
        H.configure_and_inject(board, res.rom, res.layout)
        read_events(board)
        board.write32(params.AXI_CNT_CLEAR, 1)
        assert board.read_many([params.AXI_EVENT_COUNT, params.AXI_EVENT_DROPPED, params.AXI_EVENT_DEPTH,
                                params.AXI_EVENT_DATA_MAX]) == [0, 0, params.EVENT_FIFO_DEPTH, params.EVENT_DATA_MAX]
        pkts = (read_pcap(prog.traffic) * 2)[: params.EVENT_FIFO_DEPTH + 4]  # pktcap: 4 records past the depth
        vm = VliwModel(res.rom, MapState(res.layout))
        want = [(i, e) for i, p in enumerate(pkts) for e in vm.run(p).events]
        board.inject(pkts)
        board.wait()
        got, dropped = read_events(board, res.layout)
        start = got[0].packet - want[0][0]  # the board numbers packets from its reset
        assert dropped == max(0, len(want) - params.EVENT_FIFO_DEPTH)
        assert dropped == (4 if name == "xdp_pktcap" else 0)
        assert [(e.packet - start, e.kind, e.map, e.cpu, e.data, e.ctxlen) for e in got] == \
            [(i, e.kind, e.map, e.cpu, e.data, e.ctxlen) for i, e in want][: params.EVENT_FIFO_DEPTH]
    # the command: JSON lines and the packet samples of the capture program, maps named from the load note
    prog = suite["xdp_pktcap"]
    assert cli("load", str(prog.obj), "--board", server.spec) == 0
    pkts = read_pcap(prog.traffic)[:5]
    board.inject(pkts)
    board.wait()
    capsys.readouterr()
    assert cli("events", "--board", server.spec, "--pcap", str(tmp_path / "cap.pcap")) == 0
    events = read_event_lines(capsys.readouterr().out)
    assert [e.map for e in events] == ["capture"] * 5
    assert read_pcap(tmp_path / "cap.pcap") == [p[:256] for p in pkts]
    assert board.read32(params.AXI_EVENT_COUNT) == 0
