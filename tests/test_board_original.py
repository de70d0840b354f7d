"""Host tools against the model of the original hXDP register slave: probe, inject, counters, map lines by address."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hxdp import params
from hxdp.board import original as O
from hxdp.board import tools as H
from hxdp.board.transport import Board, BoardError, SumeBoard
from hxdp.cli import main
from hxdp.frontend.program import MapDef
from hxdp.isa.insn import Insn
from hxdp.isa.rom import Rom
from hxdp.models.maps import MapLayout, MapState

NOP = Insn.from_u64(0)


def cli(*args: str) -> int:
    return main(list(args))


def rom_of(n: int, action: int = params.XDP_DROP) -> Rom:
    """n rows: n - 2 moves into r2 (distinct per row, so a stale row shows) and `r0 = action; exit`."""
    rows = [[Insn.from_u64(((r + 7) << 32) | 0x02B7), NOP, NOP, NOP] for r in range(n - 2)]
    rows.append([Insn.from_u64((action << 32) | 0xB7), NOP, NOP, NOP])
    rows.append([Insn.from_u64(0x95), NOP, NOP, NOP])
    return Rom(rows)


class OursBoard(Board):
    """Registers of this project's bitstream, enough for the probe: the ID answers "hXDP"."""

    def __init__(self) -> None:
        self.regs = {params.AXI_ID: params.AXI_ID_VALUE}
        self.writes: list[tuple[int, int]] = []

    def read32(self, addr: int) -> int:
        return self.regs.get(addr, 0)

    def write32(self, addr: int, value: int) -> None:
        self.writes.append((addr, value))


def writes(slave: O.OriginalSlave) -> list[tuple[int, int]]:
    return [(a, v) for op, a, v in slave.log if op == "w"]


# --- probe ---------------------------------------------------------------------------------------------------------
def test_probe_tells_the_bitstreams_apart() -> None:
    assert O.probe(O.OriginalSlave()) == O.ORIGINAL
    assert O.probe(OursBoard()) == O.OURS
    other = OursBoard()
    other.regs[params.AXI_ID] = 0xDEADBEEF
    with pytest.raises(BoardError, match="neither this project's bitstream"):
        O.probe(other)
    with pytest.raises(BoardError, match="drop --original"):
        O.check_claim(OursBoard(), original=True)


def test_original_undecoded_reads_do_not_look_like_a_hold() -> None:
    """The original reads 0x01234567 at CTRL/STATUS (bit 0 set): the tools must not take it for a held input."""
    slave = O.OriginalSlave()
    assert slave.read32(params.AXI_CTRL) == O.UNDECODED and slave.read32(params.AXI_STATUS) & 1
    sume = SumeBoard("nf0", ioctl=slave.ioctl, sock=3)
    assert sume.hold_info() is None
    assert not H.has_extensions(sume)


# --- inject --------------------------------------------------------------------------------------------------------
def test_inject_rewrites_all_256_rows() -> None:
    """A shorter program after a longer one leaves no stale row: every row is written, zeros after the program."""
    slave = O.OriginalSlave()
    H.inject(slave, rom_of(40), extensions=False)
    rep = H.inject(slave, rom_of(3), extensions=False)
    assert rep.rows == 3 and rep.cleared == O.ROWS - 3 and not rep.atomic
    assert rep.writes == 9 * O.ROWS and rep.reads == 8 * O.ROWS
    short = rom_of(3)
    for r in range(O.ROWS):
        assert slave.imem[r] == O.row_words(short, r), r
    assert H.dump_imem(slave, 3).rows == short.rows


def test_inject_writes_like_the_artifact() -> None:
    """Row r: lane k low word at +8k, imm at +8k+4, then 1 to +0xFF; through the SUME ioctls."""
    slave = O.OriginalSlave()
    sume = SumeBoard("nf0", ioctl=slave.ioctl, sock=3)
    rom = rom_of(2)
    H.inject(sume, rom, extensions=False)
    w = writes(slave)
    lo = rom.rows[0][0].to_u64()
    assert w[0] == (0x8000_0000, lo & 0xFFFF_FFFF) and w[1] == (0x8000_0004, lo >> 32) and w[8] == (0x8000_00FF, 1)
    assert w[9 * 255 + 8] == (0x8000_FFFF, 1) and len(w) == 9 * 256


def test_inject_without_claim_or_no_hold_is_refused() -> None:
    """Probed as the original and asked for an atomic inject: refused (no hold there), nothing written."""
    slave = O.OriginalSlave()
    with pytest.raises(O.OriginalUnsupported, match="no input hold"):
        H.inject(slave, rom_of(3))
    assert writes(slave) == []
    H.inject(slave, rom_of(3), atomic=False)  # --no-hold: the artifact's way
    assert slave.imem[1] == O.row_words(rom_of(3), 1)
    ours = OursBoard()
    with pytest.raises(BoardError, match="drop --original"):
        H.inject(ours, rom_of(3), extensions=False)
    assert ours.writes == []


# --- map lines -----------------------------------------------------------------------------------------------------
def test_map_lines_by_address() -> None:
    """Line N lands in line N (address bits 15:8), reads return line N, not line 0."""
    slave = O.OriginalSlave()
    data = {n: bytes((n * 7 + i) & 0xFF for i in range(16)) for n in (0, 1, 16, 200, 255)}
    H.write_lines(slave, data)
    for n, d in data.items():
        assert slave.map_memory()[16 * n : 16 * n + 16] == d
        assert H.read_line(slave, n) == d
    assert H.read_lines(slave, 15, 3) == bytes(16) + data[16] + bytes(16)
    assert (0x8001_C810, int.from_bytes(data[200][:4], "little")) in writes(slave)  # line 200 word 0 by address


def test_map_line_past_255_is_refused_before_writing() -> None:
    """Line 256 would carry into 0x8002_xxxx (the counters): refused, nothing written, nothing read."""
    slave = O.OriginalSlave()
    with pytest.raises(O.OriginalUnsupported, match="lines 0..255"):
        H.write_lines(slave, {3: bytes(16), 256: bytes(16)})
    with pytest.raises(O.OriginalUnsupported, match="lines 0..255"):
        H.read_lines(slave, 250, 10)
    assert writes(slave) == [] and not [a for op, a, _ in slave.log if op == "r" and a != params.AXI_ID]


def _layout() -> MapLayout:
    return MapLayout.from_maps([MapDef("arr", 2, 4, 8, 4), MapDef("hsh", 1, 4, 8, 8)], mem_bytes=4096)


def test_map_update_by_key_lands_where_the_model_says() -> None:
    """Updates by key on the original write the lines MapState places them in; lookups read them back."""
    slave = O.OriginalSlave()
    layout = _layout()
    with pytest.raises(O.OriginalUnsupported, match="no input hold"):
        H.BoardMaps(slave, layout).update("hsh", b"\1\2\3\4", b"A" * 8)
    assert writes(slave) == []
    bm = H.BoardMaps(slave, layout, atomic=False)
    want = MapState(layout)
    for name, key, value in (("arr", b"\2\0\0\0", b"B" * 8), ("hsh", b"\1\2\3\4", b"A" * 8),
                             ("hsh", b"\x09\x09\x09\x09", b"C" * 8)):
        assert bm.update(name, key, value) == 0 and want.update(layout.map_id(name), key, value) == 0
    assert slave.map_memory()[: len(want.mem)] == bytes(want.mem)
    assert H.BoardMaps(slave, layout, atomic=False).lookup("hsh", b"\1\2\3\4") == b"A" * 8
    assert H.BoardMaps(slave, layout, atomic=False).dump("arr")[b"\2\0\0\0"] == b"B" * 8


def test_load_writes_maps_and_all_rows() -> None:
    layout = _layout()
    slave = O.OriginalSlave()
    cfg = {"maps": {"arr": [{"key": "01000000", "value": "0102030405060708"}]}}
    rep = H.configure_and_inject(slave, rom_of(5), layout, cfg, extensions=False)
    want = MapState(layout)
    want.apply_config(cfg)
    assert slave.map_memory()[: len(want.mem)] == bytes(want.mem) and rep.inject.cleared == O.ROWS - 5
    big = MapLayout.from_maps([MapDef("big", 2, 4, 64, 100)])
    before = writes(slave)
    with pytest.raises(O.OriginalUnsupported, match="lines 0..255"):
        H.configure_and_inject(slave, rom_of(5), big, extensions=False)
    assert writes(slave) == before


def test_load_writes_no_map_table_into_line_16() -> None:
    """Our map table's staging words (0x8001_1000 + 4w) are line 16 on the original: a load that was not told the
    bitstream (`--no-hold` alone) probes it and writes no table, so map line 16 keeps its value (the issue's `load`
    overwrote line 16)."""
    slave = O.OriginalSlave()
    marker = bytes(range(0xA0, 0xB0))
    H.write_line(slave, 16, marker)
    small = MapLayout.from_maps([MapDef("arr", 2, 4, 8, 4)], mem_bytes=4096)
    assert max(hi for _lo, hi in small.used_spans()) <= 16 * 16  # the layout itself does not reach line 16
    before = len(writes(slave))
    H.configure_and_inject(slave, rom_of(3), small, atomic=False)
    assert H.read_line(slave, 16) == marker
    assert not [a for a, _v in writes(slave)[before:] if 0x8001_1000 <= a <= 0x8001_10FF]


# --- counters ------------------------------------------------------------------------------------------------------
def test_counters_have_the_originals_meanings() -> None:
    """RX counts arrivals (a packet still in the core too), DROP excludes ABORTED, TX counts TX and REDIRECT."""
    slave = O.OriginalSlave()
    mon = O.OriginalMonitor(slave)
    for a in (params.XDP_ABORTED, params.XDP_DROP, params.XDP_DROP, params.XDP_PASS, params.XDP_TX,
              params.XDP_REDIRECT):
        slave.packet(a)
    slave.packet(params.XDP_DROP, finished=False)
    assert O.read_counters(slave) == {"arrived": 7, "tx": 2, "xdp_drop": 2}
    s = mon.sample()
    assert s["arrived"] == 7 and mon.totals == {"arrived": 7, "tx": 2, "xdp_drop": 2}
    assert "ARRIVED" in O.format_sample(s, mon.totals)


# --- what the original cannot do --------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, what", [
    (lambda b: H.read_tracelog(b), "tracelog"),
    (lambda b: __import__("hxdp.board.events", fromlist=["x"]).read_events(b), "events"),
    (lambda b: H.prog_info(b), "original bitstream has neither"),
    (lambda b: H.dump_imem(b), "no row count register"),
])
def test_refused_on_the_original(call, what: str) -> None:  # noqa: ANN001
    slave = O.OriginalSlave()
    with pytest.raises(BoardError, match=what):
        call(slave)
    assert writes(slave) == []


# --- the commands, on a model kept in a file -----------------------------------------------------------------------
def test_cli_on_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    board = f"model:{tmp_path / 'orig.json'}"
    rom = tmp_path / "p.rom"
    rom.write_text(rom_of(4).to_text())
    assert cli("inject", str(rom), "--board", board) == 1
    assert "no input hold" in capsys.readouterr().err
    assert cli("inject", str(rom), "--board", board, "--original") == 0
    assert "not atomic: 252 rows after the program zeroed" in capsys.readouterr().out
    assert cli("maps", "--board", board, "line", "7", "00112233445566778899aabbccddeeff") == 0
    assert cli("maps", "--board", board, "line", "7") == 0
    assert capsys.readouterr().out.strip() == "00112233445566778899aabbccddeeff"
    assert cli("axi", "--board", board, "-a", "0x80010710") == 0
    assert capsys.readouterr().out.strip() == "0x33221100"
    assert cli("monitor", "--board", board, "--count", "1", "--interval", "0", "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["bitstream"] == "original" and "arrived" in doc["totals"]
    for cmd in (["tracelog"], ["events"], ["prog", "show"]):
        assert cli(*cmd, "--board", board) == 1, cmd
        err = capsys.readouterr().err
        assert "original" in err and len(err.strip().splitlines()) == 1, (cmd, err)


def test_a_rom_for_our_core_never_reaches_the_original() -> None:
    """What the original's core cannot run (here a JMP32 and a register past r10) is refused before a write."""
    slave = O.OriginalSlave()
    jmp32 = Insn.from_u64((1 << 32) | (0 << 16) | (0x02 << 12) | 0x16)  # if w2 == 1 goto +0 (JMP32)
    for bad in ([jmp32, NOP, NOP, NOP], [Insn.from_u64(0x0BB7), NOP, NOP, NOP]):  # r11 = 0
        rom = Rom([bad, *rom_of(2).rows])
        with pytest.raises(BoardError, match="not a ROM for the original hXDP core.*--target hxdp-original"):
            O.inject(slave, rom)
        assert writes(slave) == []


def test_load_on_the_original_needs_its_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hxdp.suite import program

    prog = program("xdp_drop")
    if not prog.obj.exists():
        pytest.skip("xdp_progs not built")
    board = f"model:{tmp_path / 'orig.json'}"
    assert cli("load", str(prog.obj), "--board", board, "--original", "--no-kernel-verify") == 1
    err = [line for line in capsys.readouterr().err.splitlines() if "warning: --no-kernel-verify" not in line]
    assert len(err) == 1 and "--target hxdp-original" in err[0]
    assert cli("load", str(prog.obj), "--board", board, "--original", "--no-kernel-verify",
               "--target", "hxdp-original") == 0
