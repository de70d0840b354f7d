"""The timing estimate (hxdp.eval.timing): LUT levels and delay of the longest path of a yosys netlist."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hxdp.eval import timing
from hxdp.eval.figures import resources


def chain_blif(luts: int, falling_start: bool = False) -> str:
    """A register, `luts` LUT1s in a row, a register (and a second path, with no LUT, back into the first)."""
    lines = [".model chain", ".inputs clk", ".outputs", f".subckt FDRE{'_1' if falling_start else ''} C=clk "
             "CE=$true D=start_q Q=start_q R=$false"]
    prev = "start_q"
    for k in range(luts):
        lines.append(f".subckt LUT1 I0={prev} O=n{k}")
        lines.append(".param INIT 01")
        prev = f"n{k}"
    lines.append(f".subckt FDRE C=clk CE=$true D={prev} Q=end_q R=$false")
    lines.append(".names $true\n1\n.end")
    return "\n".join(lines) + "\n"


def test_levels_that_fit_the_clock() -> None:
    """156.25 MHz: a flip-flop, n (net + LUT) levels, a net and the setup fit 6.4 ns up to 8 levels."""
    assert timing.levels_that_fit(6.4) == 8
    assert timing.levels_that_fit(3.2) == 3


@pytest.mark.parametrize("luts, fits", [(1, True), (8, True), (9, False), (12, False)])
def test_chain_levels_and_flag(luts: int, fits: bool) -> None:
    rec = timing.timing_record(chain_blif(luts))
    worst = rec["worst"]
    assert worst["levels"] == luts and worst["fits"] is fits
    assert (worst["start"], worst["end"], worst["start_pin"], worst["end_pin"]) == ("start_q", "end_q", "FDRE.Q",
                                                                                    "FDRE.D")
    want = timing.TCKO_NS + luts * (timing.NET_NS + timing.LUT_NS) + timing.NET_NS + timing.TSETUP_NS
    assert worst["delay_ns"] == pytest.approx(want, abs=1e-3)
    check = resources.timing_checks({"top": "chain", "timing": rec})[0]
    assert check.status == ("pass" if fits else "fail") and "start_q (FDRE.Q) -> end_q (FDRE.D)" in check.detail


def test_falling_edge_start_has_half_a_period() -> None:
    """A path from a falling-edge register (a block-RAM read) to a rising-edge one has 3.2 ns: 4 levels miss."""
    worst = timing.timing_record(chain_blif(4, falling_start=True))["worst"]
    assert worst["budget_ns"] == pytest.approx(3.2) and not worst["fits"]
    assert timing.timing_record(chain_blif(2, falling_start=True))["worst"]["fits"]


def test_instance_groups() -> None:
    assert timing.group_of("u_core.pc_q[3]") == "u_core"
    assert timing.group_of("gen_core[1].u_tile.u_core.pc_q[3]") == "u_core"
    assert timing.group_of("$flatten\\gen_core[0].u_tile.\\u_pktbuf.$abc$1.Y", 2) == "u_pktbuf"
    assert timing.group_of("$flatten\\u_core.\\u_stack.$abc$1$x.cc:5$2.Y[1]", 2) == "u_core.u_stack"
    assert timing.group_of("$abc$12$y") == timing.group_of("out_q[1]") == "(top)"


VERILOG = """
module xor36 (input wire clk_i, input wire [35:0] d_i, output reg q_o);
  reg [35:0] a_q;
  always @(posedge clk_i) begin a_q <= d_i; q_o <= ^a_q; end
endmodule
"""


def test_yosys_netlist_of_a_small_module(tmp_path: Path) -> None:
    """synth_xilinx of a 36-bit XOR between two registers: two levels of 6-input LUTs, inside the clock."""
    yosys = shutil.which("yosys")
    if yosys is None:
        pytest.skip("yosys is not installed")
    (tmp_path / "x.v").write_text(VERILOG)
    blif = tmp_path / "x.blif"
    subprocess.run([yosys, "-q", "-p", f"read_verilog {tmp_path / 'x.v'}; synth_xilinx -family xc7 -top xor36; "
                    f"flatten; write_blif -param {blif}"], check=True, capture_output=True, timeout=300)
    worst = timing.timing_record(blif.read_text())["worst"]
    assert worst["levels"] == 2 and worst["fits"], worst
    assert worst["start_pin"] == "FDRE.Q" and worst["end_pin"] == "FDRE.D"
    assert worst["start"].startswith("a_q[") and worst["end"] == "q_o"
