"""An instruction memory of IMEM_ROWS (4,096) rows: addressing past row 255, ROM files, the compiler's and the tools'
limits, and a program of over 1,000 rows on the RTL and on the simulated board."""

from __future__ import annotations

from pathlib import Path

import pytest
from bigprog import source
from conftest import compile_bpf
from rtl_support import assert_rtl_equals_model, require_rtl, row

from hxdp import params
from hxdp.board import tools as H
from hxdp.board.transport import BoardAddressError, imem_commit_addr, imem_word_addr
from hxdp.cli import main as cli_main
from hxdp.compiler import CompileOptions, CompileResult, compile_program
from hxdp.frontend.elf import load_program
from hxdp.isa.rom import Rom, RomError
from hxdp.models.maps import MapState
from hxdp.models.vliw import VliwModel
from hxdp.rtl.sim import available as verilator_available
from hxdp.traffic import gen as traffic

BIG_STATEMENTS = 200  # about 2,600 eBPF instructions: some 1,560 rows


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> CompileResult:
    """A compiled program of over 1,000 rows (branches from below row 256 to above it and back)."""
    out = tmp_path_factory.mktemp("imem")
    src = out / "big.c"
    src.write_text(source(BIG_STATEMENTS))
    res = compile_program(load_program(compile_bpf(src, out)), CompileOptions())
    assert 1000 < len(res.rom.rows) <= params.IMEM_ROWS
    return res


def packets() -> list[bytes]:
    return traffic.generate(8, 6, 64, "udp", 3) + [bytes(range(60)), bytes(64)]


def over_capacity() -> Rom:
    return Rom([row("r0 = 2") for _ in range(params.IMEM_ROWS)] + [row("exit")])


def test_rows_past_255_are_in_the_extended_window() -> None:
    assert imem_word_addr(255, 3, True) == params.AXI_IMEM_BASE + (255 << 8) + 28  # the original window
    assert imem_word_addr(256, 0, False) == params.AXI_IMEM_EXT_BASE + (256 << 8)
    assert imem_commit_addr(params.IMEM_ROWS - 1) == params.AXI_IMEM_EXT_BASE + ((params.IMEM_ROWS - 1) << 8) + 0xFF
    # the extended window does not reach into the map memory's or any other register page
    assert params.AXI_IMEM_BASE + (params.AXI_IMEM_WINDOW_ROWS << 8) == params.AXI_MAPS_BASE
    assert imem_commit_addr(params.IMEM_ROWS - 1) < params.AXI_IMEM_EXT_BASE + (1 << 20)


def test_rom_file_is_padded_only_when_it_fits_the_original(big: CompileResult, tmp_path: Path) -> None:
    small = Rom([row("r0 = 2"), row("exit")])
    assert len(small.to_text().splitlines()) == params.ORIGINAL_IMEM_ROWS
    path = tmp_path / "big.rom"
    big.rom.save(path)
    assert len(path.read_text().splitlines()) == len(big.rom.rows)
    assert Rom.load(path).rows == big.rom.rows


def test_over_capacity_is_refused_in_one_line(tmp_path: Path) -> None:
    rom = over_capacity()
    msg = f"program needs {params.IMEM_ROWS + 1} rows, instruction memory holds {params.IMEM_ROWS}"
    with pytest.raises(RomError, match=msg):
        rom.to_text()
    path = tmp_path / "huge.rom"
    path.write_text(rom.to_text(max_rows=None))
    with pytest.raises(RomError, match=f"{params.IMEM_ROWS + 1} rows, instruction memory holds {params.IMEM_ROWS}$"):
        Rom.load(path)
    with pytest.raises(H.InjectError, match=f"instruction memory holds {params.IMEM_ROWS}$"):
        H.check_rom(rom)


def test_compile_report_shows_the_fill(big: CompileResult) -> None:
    assert big.report["imem_rows"] == params.IMEM_ROWS
    assert big.report["rows"] == len(big.rom.rows)


@pytest.mark.rtl
def test_big_program_runs_on_the_rtl(big: CompileResult) -> None:
    require_rtl()
    got = assert_rtl_equals_model(big.rom, packets(), "1,000+ rows", big.layout)
    assert max(r.cycles for r in got) > 300  # the packets ran well past row 256


_vok, _vwhy = verilator_available()


@pytest.mark.rtl
@pytest.mark.skipif(not _vok, reason=_vwhy)
def test_big_program_on_the_simulated_board(big: CompileResult, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from hxdp.board.sim import BoardServer

    with BoardServer() as srv:
        board = srv.board()
        try:
            rep = H.configure_and_inject(board, big.rom, big.layout)
            assert rep.inject.rows == len(big.rom.rows)
            assert board.read32(params.AXI_ROWS) == len(big.rom.rows)
            assert H.dump_imem(board).rows == big.rom.rows
            # the same row through the original window (rows below 256) and the extended one
            assert board.read32(params.AXI_IMEM_EXT_BASE + (7 << 8)) == board.read32(params.AXI_IMEM_BASE + (7 << 8))
            with pytest.raises(BoardAddressError):
                board.read32(params.AXI_IMEM_EXT_BASE + (params.IMEM_ROWS << 8))
            pkts = packets()
            board.inject(pkts, port=0)
            board.wait()
            outs = board.outputs()
            vm = VliwModel(big.rom, MapState(big.layout))
            want = [vm.run(p) for p in pkts]
            assert [(o.action, o.data) for o in outs] == [(w.action, w.packet) for w in want]
            # the command-line tools: dump-imem writes every row back, an over-capacity ROM is refused in one line
            out = tmp_path / "dumped.rom"
            assert cli_main(["dump-imem", "--board", srv.spec, "-o", str(out)]) == 0
            assert Rom.load(out).rows == big.rom.rows
            huge = tmp_path / "huge.rom"
            huge.write_text(over_capacity().to_text(max_rows=None))
            capsys.readouterr()
            assert cli_main(["inject", str(huge), "--board", srv.spec]) == 1
            err = capsys.readouterr().err.strip()
            assert err.endswith(f"{params.IMEM_ROWS + 1} rows, instruction memory holds {params.IMEM_ROWS}")
            assert len(err.splitlines()) == 1
            assert H.dump_imem(board).rows == big.rom.rows  # nothing written
        finally:
            board.close()
