"""The NetFPGA-SUME integration (fpga/): yosys reads and synthesises it with the IP as black boxes, Verilator lints
it, and the Vivado script runs under tclsh with Vivado's commands recorded (a dry run)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hxdp.rtl import manifest

ROOT = Path(__file__).resolve().parent.parent
FPGA = ROOT / "fpga"
RTL = [FPGA / "rtl" / n for n in ("sephirot_sume_emit.v", "sephirot_sume_top.v", "nf_datapath.v")]
BLACKBOX = sorted((FPGA / "blackbox").glob("*.v"))
IP = {"input_arbiter_ip", "output_queues_ip", "hxdp_clk_wiz", "hxdp_axis_cdc", "hxdp_axil_cdc"}

needs_yosys = pytest.mark.skipif(shutil.which("yosys") is None, reason="yosys is not installed")
needs_tclsh = pytest.mark.skipif(shutil.which("tclsh") is None, reason="tclsh is not installed")


def board_files() -> list[Path]:
    return manifest.files("synth", "verilogSource")


def yosys(script: str, tmp_path: Path) -> str:
    proc = subprocess.run(["yosys", "-q", "-l", str(tmp_path / "yosys.log"), "-p", script], cwd=tmp_path,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return (tmp_path / "yosys.log").read_text()


def read_all(with_board: bool = True) -> str:
    files = (board_files() if with_board else []) + RTL + BLACKBOX
    inc = f"-I{ROOT / 'sephirot/rtl'}"
    lib = "" if with_board else f"read_verilog -sv -lib {inc} {ROOT / 'sephirot/rtl/sephirot_board.v'}; "
    return f"read_verilog -sv {inc} " + " ".join(map(str, files)) + "; " + lib


def test_blackboxes_are_the_ip() -> None:
    assert {p.stem for p in BLACKBOX} == IP
    for p in BLACKBOX:
        assert "(* blackbox *)" in p.read_text(), p


@needs_yosys
def test_yosys_resolves_the_whole_hierarchy(tmp_path: Path) -> None:
    """Every module under nf_datapath is ours or one of the five IP black boxes, and every port connected exists
    (hierarchy -check); without one black box it fails."""
    yosys(read_all() + "hierarchy -check -top nf_datapath", tmp_path)
    without = read_all().replace(str(FPGA / "blackbox" / "hxdp_clk_wiz.v"), "")
    proc = subprocess.run(["yosys", "-q", "-p", without + "hierarchy -check -top nf_datapath"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0 and "hxdp_clk_wiz" in proc.stdout + proc.stderr


@needs_yosys
def test_yosys_synthesises_the_integration(tmp_path: Path) -> None:
    """synth_xilinx of nf_datapath with the board (synthesised by the evaluation) and the IP as black boxes: the
    output buffer is four block RAMs (512 frames of 32 bytes)."""
    yosys(read_all(with_board=False) + "synth_xilinx -family xc7 -noiopad -top nf_datapath; "
          "tee -q -o stat.txt stat", tmp_path)
    stat = (tmp_path / "stat.txt").read_text()
    emit = stat.split("=== sephirot_sume_emit ===")[1].split("===")[0]
    assert re.search(r"RAMB36E1\s+4\b", emit), emit


@pytest.mark.slow
@needs_yosys
def test_yosys_synthesises_the_integration_with_the_board(tmp_path: Path) -> None:
    """The whole datapath, Sephirot included, through synth_xilinx (minutes)."""
    yosys(read_all() + "synth_xilinx -family xc7 -noiopad -top nf_datapath; tee -q -o stat.txt stat", tmp_path)
    assert "sephirot_board" in (tmp_path / "stat.txt").read_text()


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator is not installed")
def test_verilator_lint_clean() -> None:
    cmd = ["verilator", "--lint-only", "-Wall", f"-I{ROOT / 'sephirot/rtl'}", str(ROOT / "sephirot/lint.vlt"),
           str(FPGA / "lint.vlt"), *map(str, board_files() + RTL + BLACKBOX), "--top-module", "nf_datapath"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr[-3000:]


# --- the Vivado script, run by tclsh with Vivado's commands recorded ------------------------------------------------
STUBS = r"""
set ::calls {}
proc unknown {args} { lappend ::calls $args; return "" }
proc get_property {name args} {
    lappend ::calls [list get_property $name {*}$args]
    switch -- $name {
        PART { return $::stub_part }
        PROGRESS { return "100%" }
        STATS.WNS { return 0.125 }
        DIRECTORY { return $::stub_impl }
        IP_FILE { return opl.xci }
    }
    return ""
}
proc get_files {args} {
    lappend ::calls [list get_files {*}$args]
    if {[string match *control_sub.bd [lindex $args end]]} { return control_sub.bd }
    if {[string match *nf_datapath.v [lindex $args end]]} { return ref/nf_datapath.v }
    return [lindex $args end]
}
proc get_ips {args} { return [lindex $args end] }
proc get_bd_addr_segs {args} { lappend ::calls [list get_bd_addr_segs {*}$args]; return $::stub_segs }
rename exit ::hxdp_exit
proc exit {code} { puts "EXIT $code"; foreach c $::calls { puts "CALL $c" }; flush stdout; ::hxdp_exit $code }
"""


def dry_run(tmp_path: Path, part: str = "xc7vx690tffg1761-3", segs: str = "SEG_M01_AXI_Reg") -> tuple[int, str]:
    xpr = tmp_path / "reference_nic.xpr"
    xpr.write_text("")
    impl = tmp_path / "impl"
    impl.mkdir(exist_ok=True)
    (impl / "top.bit").write_bytes(b"bit")
    script = (STUBS + f"set ::stub_part {part}\nset ::stub_impl {impl}\nset ::stub_segs {{{segs}}}\n"
              + f"set argv [list {xpr} {tmp_path / 'out'} 2]\nset argc 3\n"
              + f"source {FPGA / 'vivado/build.tcl'}\n")  # tclsh's exit at the end of its input prints the calls
    proc = subprocess.run(["tclsh"], input=script, capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout + proc.stderr


@needs_tclsh
def test_manifest_tcl_reads_the_synthesis_files() -> None:
    """Vivado reads the files the manifest's synthesis target lists (headers included), in its order."""
    proc = subprocess.run(["tclsh"], input=f"source {FPGA / 'vivado/manifest.tcl'}\nputs [join [hxdp_manifest_files "
                          f"{ROOT / 'sephirot/sephirot.core'} {{headers rtl board}}] \\n]\n",
                          capture_output=True, text=True, timeout=60)
    got = [Path(x) for x in proc.stdout.split()]
    want = [p for p in manifest.files("synth", includes=True) if p.suffix in (".v", ".vh")]
    assert got == want


@needs_tclsh
def test_build_tcl_dry_run(tmp_path: Path) -> None:
    code, out = dry_run(tmp_path)
    assert code == 0 and "EXIT 0" in out, out[-3000:]
    calls = [line[5:] for line in out.splitlines() if line.startswith("CALL ")]
    text = "\n".join(calls)
    assert f"open_project {tmp_path / 'reference_nic.xpr'}" in text
    assert "remove_files ref/nf_datapath.v" in text
    added = next(c for c in calls if c.startswith("add_files -norecurse -fileset sources_1"))
    for f in board_files() + RTL:
        assert str(f) in added, f
    for ip in IP - {"input_arbiter_ip", "output_queues_ip"}:  # the reference project brings those two
        assert f"-module_name {ip}" in text, ip
    assert "set_property offset 0x80000000 SEG_M01_AXI_Reg" in text
    assert f"add_files -norecurse -fileset constrs_1 {FPGA / 'vivado/sume.xdc'}" in text
    assert "launch_runs impl_1 -to_step write_bitstream -jobs 2" in text
    assert (tmp_path / "out" / "hxdp_sume.bit").read_bytes() == b"bit"


@needs_tclsh
def test_build_tcl_refuses_what_it_cannot_use(tmp_path: Path) -> None:
    code, out = dry_run(tmp_path, part="xc7vx485tffg1761-2")
    assert code == 2 and "not the NetFPGA-SUME's xc7vx690tffg1761-3" in out
    code, out = dry_run(tmp_path, segs="SEG_A SEG_B")
    assert code == 2 and "expected one address segment" in out
    assert "launch_runs" not in out


@needs_tclsh
def test_xdc_is_tcl_of_vivados_commands() -> None:
    script = STUBS + "proc get_clocks {args} { return clk[llength $::calls] }\n" \
        + f"source {FPGA / 'vivado/sume.xdc'}\n"  # tclsh's exit at the end of its input prints the calls
    proc = subprocess.run(["tclsh"], input=script, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    calls = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("CALL ")]
    assert calls.count("set_clock_groups") == 1 and calls.count("set_false_path") == 2, proc.stdout


# --- the output path, simulated (Verilator, a SystemVerilog testbench) ----------------------------------------------
# (tuser[31:0] = {destination, source, length}, tkeep, tlast, first data byte) of every beat the receiver took, in
# order, for the testbench's packets A..H (fpga/tb/sephirot_sume_emit_tb.sv)
EMIT_BEATS = [
    ("1010003c", "ffffffff", 0, "10"), ("00000000", "0fffffff", 1, "11"),  # A: TX, port 2 -> port 2, 60 bytes
    # B: DROP, nothing
    ("08040064", "ffffffff", 0, "30"), ("00000000", "ffffffff", 0, "31"),  # C: PASS, port 1 -> its DMA queue
    ("00000000", "ffffffff", 0, "32"), ("00000000", "0000000f", 1, "33"),
    ("40010040", "ffffffff", 0, "40"), ("00000000", "ffffffff", 1, "41"),  # D: REDIRECT ifindex 4 -> port 3
    ("41040021", "ffffffff", 0, "50"), ("00000000", "00000001", 1, "51"),  # E: broadcast 0,1,3 but not port 1
    # F: XDP metadata in front, dropped (DROPS 1)
    ("8040003c", "ffffffff", 0, "70"), ("00000000", "0fffffff", 1, "71"),  # G: xskmap queue 2 -> port 3's DMA
    # H: REDIRECT to ifindex 9 (no such port), nothing
]


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator is not installed")
def test_emit_destinations_and_tuser(tmp_path: Path) -> None:
    """Each action's NetFPGA destination, tuser on the first beat, tkeep of the last, a stalling receiver; the
    metadata packet counted as dropped; the xskmap frame pops host queue 8 + 2."""
    build = subprocess.run(["verilator", "--binary", "--timing", "-Wall", f"-I{ROOT / 'sephirot/rtl'}",
                            "--top-module", "sephirot_sume_emit_tb", "-Mdir", str(tmp_path / "obj"),
                            str(FPGA / "tb/sephirot_sume_emit_tb.sv"), str(FPGA / "rtl/sephirot_sume_emit.v")],
                           capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run([str(tmp_path / "obj" / "Vsephirot_sume_emit_tb")], capture_output=True, text=True,
                         timeout=120)
    beats = [(m[0], m[1], int(m[2]), m[3]) for m in
             re.findall(r"BEAT user=(\w+) keep=(\w+) last=(\d) data0=(\w+)", run.stdout)]
    assert beats == EMIT_BEATS, run.stdout
    assert "HOSTPOP q=10" in run.stdout and "DROPS 1" in run.stdout
