"""The simulated board with two Sephirot cores: traffic through in arrival order, the counters, the CORES register,
a per-CPU array dumped and updated per core, a program the cores cannot share refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import compile_bpf

from hxdp import params
from hxdp.board import tools as H
from hxdp.board.transport import SimBoard
from hxdp.cli import main as cli_main
from hxdp.rtl.sim import available as verilator_available

DATA = Path(__file__).parent / "data"
_vok, _vwhy = verilator_available()
pytestmark = pytest.mark.skipif(not _vok, reason=_vwhy)
CORES = 2
PACKETS = 40


@pytest.fixture(scope="module")
def server():  # noqa: ANN201
    from hxdp.board.sim import BoardServer

    with BoardServer(ports=1, cores=CORES) as srv:
        yield srv


@pytest.fixture
def board(server) -> SimBoard:  # noqa: ANN001
    b = server.board()
    b.wait()
    b.outputs()  # (the outputs of the test before)
    yield b
    b.close()


def out_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    rc = cli_main(list(argv))
    got = capsys.readouterr()
    assert rc == 0, got.err
    return got.out


def frame(i: int) -> bytes:
    """Frame i: byte 0 odd (dropped) for every third frame, byte 1 its number, 64 to 190 bytes long."""
    return bytes([1 if i % 3 == 0 else 2, i]) + bytes(62 + 2 * i)


def test_two_cores_on_the_board(board: SimBoard, server, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    b = ["--board", server.spec]
    assert board.read32(params.AXI_CORES) == CORES
    obj = compile_bpf(DATA / "board_cores" / "cores.c", tmp_path)
    out_of(capsys, "prog", "load", str(obj), *b)
    board.write32(params.AXI_CNT_CLEAR, 1)
    pkts = [frame(i) for i in range(PACKETS)]
    board.inject(pkts)
    board.wait()
    outs = board.outputs()
    # every frame, in arrival order, with its action; the TX frames name the core that ran them
    dropped = [i for i in range(PACKETS) if i % 3 == 0]
    assert [o.action for o in outs] == [params.XDP_DROP if i in dropped else params.XDP_TX for i in range(PACKETS)]
    assert all(o.data == b"" for o in outs if o.action == params.XDP_DROP)  # (dropped: no output, no bytes)
    tx = [o for o in outs if o.action == params.XDP_TX]
    assert [o.data[1] for o in tx] == [i for i in range(PACKETS) if i not in dropped]
    assert [o.data[2:] for o in tx] == [pkts[o.data[1]][2:] for o in tx]
    assert {o.data[0] for o in tx} == set(range(CORES)), "the packets did not spread over the cores"
    assert json.loads(out_of(capsys, "prog", "show", "-j", *b))[0]["cores"] == CORES
    assert f"  cores {CORES}" in out_of(capsys, "prog", "show", *b).splitlines()[-2]
    counters = H.read_counters(board)
    assert (counters["rx"], counters["xdp_drop"], counters["xdp_tx"]) == (PACKETS, len(dropped),
                                                                       PACKETS - len(dropped))
    # per-CPU: core k's copy counts the packets core k ran, which the shared array counted by its core's number
    got = json.loads(out_of(capsys, "map", "dump", "pcount", "-j", *b))
    per_core = [int.from_bytes(bytes(int(x, 16) for x in v["value"]), "little") for v in got[0]["values"]]
    by_cpu = json.loads(out_of(capsys, "map", "dump", "bycpu", "-j", *b))
    shared = [int.from_bytes(bytes(int(x, 16) for x in e["value"]), "little") for e in by_cpu]
    assert [v["cpu"] for v in got[0]["values"]] == list(range(CORES))
    assert per_core == shared[:CORES] and sum(per_core) == PACKETS and all(per_core)
    assert shared[CORES:] == [0] * (8 - CORES)
    byte_counts = [int.from_bytes(bytes(int(x, 16) for x in v["value"]), "little") for v in got[1]["values"]]
    assert sum(byte_counts) == sum(len(p) for p in pkts) and all(byte_counts)
    plain = out_of(capsys, "map", "dump", "pcount", *b).splitlines()
    assert plain[:4] == ["key:", "00 00 00 00", f"value (CPU 00): {per_core[0]:02x} 00 00 00 00 00 00 00",
                         f"value (CPU 01): {per_core[1]:02x} 00 00 00 00 00 00 00"]
    # an update sets every core's copy, and leaves the other slot of each copy as it was
    out_of(capsys, "map", "update", "pcount", "key", "0", "0", "0", "0", "value", "7", "0", "0", "0", "0", "0", "0",
           "0", *b)
    got = json.loads(out_of(capsys, "map", "lookup", "pcount", "0", "0", "0", "0", "-j", *b))
    assert [v["value"][0] for v in got["values"]] == ["0x07"] * CORES
    got = json.loads(out_of(capsys, "map", "dump", "pcount", "-j", *b))
    assert [int.from_bytes(bytes(int(x, 16) for x in v["value"]), "little") for v in got[1]["values"]] == byte_counts


def test_program_the_cores_cannot_share_refused(server, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    # a per-CPU hash: its per-core copies would not share their keys (docs/execution_contract.md section 8)
    obj = compile_bpf(DATA / "board" / "pcpu.c", tmp_path)
    assert cli_main(["prog", "load", str(obj), "--board", server.spec]) == 1
    assert f"the board has {CORES} cores" in capsys.readouterr().err


def test_printk_records_of_both_cores(board: SimBoard) -> None:
    # printk_rom's first record carries its packet's number k (r4 = 0x75 | k << 16): each record is numbered with its
    # own packet, whichever core ran it, and none is lost between the cores
    from rtl_support import printk_rom

    H.inject(board, printk_rom())
    H.read_tracelog(board)
    board.write32(params.AXI_CNT_CLEAR, 1)
    n = params.PRINTK_FIFO_DEPTH // 2
    board.inject([(b"%x %u\0" + k.to_bytes(2, "little")).ljust(52, b"z") + b"ab%u" + bytes([64, 0x40, 0, 9]) +
                  bytes(20) for k in range(n)])
    board.wait()
    recs, dropped = H.read_tracelog(board)
    assert dropped == 0 and len(recs) == 2 * n
    assert [r.packet for r in recs] != sorted(r.packet for r in recs), "one core ran every packet"
    first = [r for r in recs if r.fmt == b"%x %u"]
    base = min(r.packet for r in first)
    assert sorted((r.packet - base, r.args[1] >> 16) for r in first) == [(k, k) for k in range(n)]
    assert sorted(r.packet - base for r in recs if r.fmt != b"%x %u") == list(range(n))


def test_burst_of_dropped_frames(board: SimBoard, server, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    # a slow packet holds back each other core's eight frames; the dropped ones then depart all at once, their
    # results reach the counters and the OUT records one a cycle, in arrival order, while new frames come in
    obj = compile_bpf(DATA / "rtl_cores" / "slow.c", tmp_path)
    out_of(capsys, "prog", "load", str(obj), "--board", server.spec)
    board.write32(params.AXI_CNT_CLEAR, 1)
    pkts = [bytes([200 if i == 0 else 0, 7, 0, int(0 < i < 24)]) + bytes(60 + i) for i in range(32)]
    board.inject(pkts)
    board.wait()
    outs = board.outputs()
    assert [o.action for o in outs] == [params.XDP_DROP if 0 < i < 24 else params.XDP_TX for i in range(32)]
    assert [len(o.data) for o in outs] == [0 if 0 < i < 24 else len(pkts[i]) for i in range(32)]
    counters = H.read_counters(board)
    assert (counters["rx"], counters["xdp_drop"], counters["xdp_tx"]) == (32, 23, 9)


def test_event_records_of_both_cores(board: SimBoard, tmp_path: Path) -> None:
    """Perf and ring buffer records of both cores reach the one event ring, in the order the multi-core model hands
    them over, each perf record on its core's CPU and numbered with its own packet."""
    from hxdp.board.events import read_events
    from hxdp.compiler import CompileOptions, compile_program
    from hxdp.frontend.elf import load_program
    from hxdp.models.maps import MapState
    from hxdp.models.multicore import MulticoreModel

    res = compile_program(load_program(compile_bpf(DATA / "multicore" / "events.c", tmp_path)), CompileOptions())
    H.configure_and_inject(board, res.rom, res.layout)
    read_events(board)
    board.write32(params.AXI_CNT_CLEAR, 1)
    pkts = [bytes([i % 4, i]) + bytes(62 + (i % 5) * 8) for i in range(params.EVENT_FIFO_DEPTH * 2 // 3)]
    want = MulticoreModel(res.rom, MapState(res.layout), CORES).run(pkts).events
    board.inject(pkts)
    board.wait()
    got, dropped = read_events(board, res.layout)
    assert dropped == 0 and len(got) == len(want) > len(pkts)
    start = got[0].packet - want[0].packet  # (the board numbers packets from its reset)
    assert [(e.packet - start, e.kind, e.map, e.cpu, e.data, e.ctxlen) for e in got] == \
        [(e.packet, e.kind, e.map, e.cpu, e.data, e.ctxlen) for e in want]
    assert {e.cpu for e in got if e.kind == "perf"} == set(range(CORES)), "one core sent every perf record"
