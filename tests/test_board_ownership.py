"""One owner at a time on the board (issue 27, reliability report D1, D2, D13): the input hold, leases, map table."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from pathlib import Path

import pytest
from conftest import compile_bpf

from hxdp import params
from hxdp.board import tools as H
from hxdp.board.transport import SimBoard
from hxdp.cli import main as cli_main
from hxdp.compiler import CompileOptions, compile_program
from hxdp.frontend.elf import load_program
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapError
from hxdp.rtl.sim import available as verilator_available
from hxdp.traffic import gen as traffic

DATA = Path(__file__).parent / "data" / "board"
_vok, _vwhy = verilator_available()
LINE = params.AXI_LINE_BYTES
COUNT_ROWS = 250  # rows of `reg += 1` in the two programs below: a mix of them is told apart from either


def _insn(op: int, dst: int = 0, off: int = 0, imm: int = 0) -> int:
    return ((imm & 0xFFFFFFFF) << 32) | ((off & 0xFFFF) << 16) | (dst << 8) | op


def _row(lane0: int) -> str:
    return "0" * 48 + f"{lane0:016x}"  # lane 3 first in the text format


def counting_rom(reg: int) -> Rom:
    """COUNT_ROWS rows of `reg += 1`, then: PASS if r6 counted every row (program A), TX if r7 did (program B),
    DROP for any mix of the two (rows from both)."""
    rows = [_row(_insn(0x07, reg, imm=1)) for _ in range(COUNT_ROWS)]
    rows += [_row(_insn(0x55, 6, off=1, imm=COUNT_ROWS)), _row(_insn(0x96, imm=params.XDP_PASS)),
             _row(_insn(0x55, 7, off=1, imm=COUNT_ROWS)), _row(_insn(0x96, imm=params.XDP_TX)),
             _row(_insn(0x96, imm=params.XDP_DROP))]
    return Rom.from_text("\n".join(rows) + "\n")


class KilledMidway(Exception):
    """The emulated `hxdp inject` process died."""


class DiesAfter(SimBoard):
    """A client writing one register at a time (like the SUME ioctls) that dies after `limit` writes: its
    connection closes with no cleanup, as a `kill -9` would leave it."""

    limit = 1000

    def write_many(self, writes: Iterable[tuple[int, int]]) -> None:
        for n, (addr, value) in enumerate(writes):
            if n >= self.limit:
                self.close()
                raise KilledMidway
            self.write32(addr, value)


@pytest.fixture(scope="module")
def acl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("own")
    obj = compile_bpf(DATA / "acl.c", out)
    r = compile_program(load_program(str(obj)), CompileOptions())
    rom = out / "acl.rom"
    r.rom.save(rom)
    rom.with_suffix(".maps.json").write_text(r.layout.to_json())
    return rom, r


@pytest.fixture(scope="module")
def server():  # noqa: ANN201
    if not _vok:
        pytest.skip(_vwhy)
    from hxdp.board.sim import BoardServer

    with BoardServer(ports=1) as srv:
        yield srv


def actions(board: SimBoard, n: int) -> list[int]:
    board.inject(traffic.generate(8, n, 64, "udp", 3), 0)
    board.wait()
    return [o.action for o in board.outputs()]


def test_d1_hold_of_a_dead_inject_is_not_released_by_maps_update(server, acl, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """D1: inject killed midway leaves the input held; an unrelated `maps update` must not release it (the mixed
    program would run); monitor and dump-imem say who holds it; a new inject recovers."""
    rom_path, res = acl
    layout = rom_path.with_suffix(".maps.json")
    board = server.board()
    H.configure_and_inject(board, counting_rom(6), res.layout)  # A, with acl's map table
    assert set(actions(board, 8)) == {params.XDP_PASS}
    killer = DiesAfter(server.socket_path)
    with pytest.raises(KilledMidway):
        H.inject(killer, counting_rom(7))  # B, killed after 1000 register writes (rows 0..110 written)
    time.sleep(0.2)
    info = board.hold_info()
    assert info is not None and not info.alive and not info.mine
    assert board.read32(params.AXI_CTRL) & params.AXI_CTRL_HOLD
    before = board.stat()["finished"]
    board.inject(traffic.generate(8, 16, 64, "udp", 4), 0)
    board.run(20000)
    assert board.stat()["finished"] == before  # held: the half-written program runs no packet

    with pytest.raises(H.HoldError, match=r"held by .*\(gone\).*--force"):
        H.BoardMaps(board, res.layout).update("acl", bytes(4), bytes(4))
    spec = f"sim:{server.socket_path}"
    assert cli_main(["maps", "--board", spec, "--layout", str(layout), "update", "acl", "00000000", "01000000"]) == 1
    assert "(gone)" in capsys.readouterr().err
    assert board.read32(params.AXI_CTRL) & params.AXI_CTRL_HOLD  # still held after the refused update
    assert board.stat()["finished"] == before

    assert cli_main(["monitor", "--board", spec, "--count", "1", "--interval", "0"]) == 0
    assert "input HELD by" in capsys.readouterr().out
    assert cli_main(["dump-imem", "--board", spec, "1"]) == 0
    assert "held by" in capsys.readouterr().err

    H.inject(board, counting_rom(7))  # re-inject: the recovery the message offers
    assert board.hold_info() is None
    got = [o.action for o in board.outputs()] + actions(board, 8)
    assert set(got) == {params.XDP_TX}, "a packet ran a mix of the two programs"
    board.close()


def test_d1_force_takes_over_a_live_owners_hold(server, acl) -> None:  # noqa: ANN001
    """D1: a hold whose owner is still connected is refused even to inject; --force takes it over."""
    _, res = acl
    owner, other = server.board(), server.board()
    H.configure_and_inject(owner, counting_rom(6), res.layout)
    H.hold_input(owner)
    with pytest.raises(H.HoldError, match="held by"):
        H.inject(other, counting_rom(6))
    with pytest.raises(Exception, match="only its owner releases it"):
        other.write32(params.AXI_CTRL, 0)
    H.inject(other, counting_rom(6), force=True)
    assert other.hold_info() is None
    H.release_input(owner)  # the previous owner's hold is gone: releasing nothing is fine
    owner.close()
    other.close()


def test_d2_concurrent_line_writers_never_tear_a_line(server) -> None:  # noqa: ANN001
    """D2: two clients writing the same 3000 map lines at once: every line holds one writer's pattern whole."""
    first, n = 20000, 3000

    def pattern(x: int) -> bytes:
        return bytes([x] * 4 + [x + 1] * 4 + [x + 2] * 4 + [x + 3] * 4)

    def writer(x: int) -> None:
        with SimBoard(server.socket_path) as b:
            H.write_lines(b, {i: pattern(x) for i in range(first, first + n)})

    for _ in range(3):
        threads = [threading.Thread(target=writer, args=(x,)) for x in (0x10, 0x20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with SimBoard(server.socket_path) as b:
            data = H.read_lines(b, first, n)
        torn = [i for i in range(n) if data[LINE * i : LINE * (i + 1)] not in (pattern(0x10), pattern(0x20))]
        assert torn == [], f"torn lines {torn[:5]}"


def test_d2_a_lease_defers_other_writers(server) -> None:  # noqa: ANN001
    """D2: while one connection leases the board, another's register write waits for the lease to end."""
    a, b = server.board(), server.board()
    with a.lease():
        assert b.lease_state()["lease"] != "-" and b.lease_state()["mine"] == "0"
        done = threading.Event()
        t = threading.Thread(target=lambda: (b.write32(params.AXI_MAPS_LINE_ADDR, 5), done.set()))
        t.start()
        time.sleep(0.3)
        assert not done.is_set()
    t.join(10)
    assert done.is_set()
    a.close()
    b.close()


def test_d13_maps_refuses_a_layout_the_board_does_not_run(server, acl, tmp_path: Path) -> None:  # noqa: ANN001
    """D13: `hxdp maps` by another program's layout would write into the running program's maps: refused, and
    nothing is written."""
    _, res = acl
    other = compile_program(load_program(str(compile_bpf(DATA / "pcpu.c", tmp_path))), CompileOptions()).layout
    board = server.board()
    H.configure_and_inject(board, counting_rom(6), res.layout)
    r = res.layout.region(0)
    first, count = r.offset // LINE, (r.size + LINE - 1) // LINE
    before = H.read_lines(board, first, count + 64)
    name = other.regions[0].name
    key = bytes(other.regions[0].key_size)
    with pytest.raises(MapError, match="map table"):
        H.BoardMaps(board, other).update(name, key, bytes([1]) * other.regions[0].value_size)
    assert H.read_lines(board, first, count + 64) == before
    assert board.hold_info() is None
    H.BoardMaps(board, res.layout).update("acl", bytes(4), bytes([1, 0, 0, 0]))  # the right layout still works
    board.close()


def test_d1_d2_sume_lease_is_an_exclusive_lock_naming_its_holder(tmp_path: Path) -> None:
    """D1/D2 on the real board's transport: the lease is a flock that says who holds it; the hold's owner is noted,
    a gone owner is told apart, and only an inject or --force takes its hold over."""
    from test_board import FakeSume

    from hxdp.board.transport import BoardError, SumeBoard

    fake = FakeSume("nf1")
    fake.regs[params.AXI_CTRL] = 0
    a = SumeBoard("nf1", ioctl=fake, sock=3, lock_dir=tmp_path)
    b = SumeBoard("nf1", ioctl=fake, sock=3, lock_dir=tmp_path, lock_timeout=0.2)
    with a.lease():
        assert "[" in (tmp_path / "hxdp-sume-nf1.lock").read_text()
        with pytest.raises(BoardError, match=r"leased by .*\[\d+\]"):
            with b.lease():
                pass
    with b.lease():
        pass  # free again once a's lease ended
    fake.regs[params.AXI_STATUS] = params.AXI_STATUS_HELD
    H.hold_input(a)
    assert a.hold_info() is not None and a.hold_info().mine
    (tmp_path / "hxdp-sume-nf1.hold").write_text("hxdp-inject[999999999] 999999999\n")  # an owner that died
    info = b.hold_info()
    assert info is not None and not info.alive and not info.mine
    with pytest.raises(H.HoldError, match=r"\(gone\)"):
        with H.held(b):
            pass
    with H.held(b, recover=True):
        assert b.hold_info().mine
    assert b.hold_info() is None and fake.regs[params.AXI_CTRL] == 0


def test_d2_a_lease_kept_too_long_is_named(server) -> None:  # noqa: ANN001
    """D2: a client waiting for the lease longer than its timeout is told who keeps it."""
    from hxdp.board.transport import BoardError

    a = server.board()
    b = SimBoard(server.socket_path, timeout=0.5)
    with a.lease():
        with pytest.raises(BoardError, match=r"leased by .*\[\d+\] for more than"):
            with b.lease():
                pass
    b.close()
    with SimBoard(server.socket_path) as c, c.lease():
        pass  # free again
    a.close()
