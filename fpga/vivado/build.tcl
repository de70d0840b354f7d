# build.tcl: the NetFPGA-SUME reference NIC with Sephirot as its datapath: a Vivado project and its bitstream.
#
#   vivado -mode batch -source fpga/vivado/build.tcl -tclargs REFERENCE_NIC.xpr [OUT_DIR] [JOBS]
#
# REFERENCE_NIC.xpr: the reference NIC's Vivado project as NetFPGA's own flow creates it (NetFPGA-SUME-live,
# projects/reference_nic/hw: `make project`; the NetFPGA IP library built first). Nothing of it is changed: the
# project is saved as OUT_DIR/hxdp_sume (default out/vivado), where the reference datapath (nf_datapath.v: input
# arbiter, output port lookup, output queues) is replaced by fpga/rtl/nf_datapath.v (sephirot_sume_top: Sephirot in
# the output port lookup's place, docs/board.md section 5), the Xilinx IP it needs is generated, the hXDP register
# window is mapped at 0x8000_0000 (512 KiB) on the AXI-Lite interconnect, and synthesis, implementation and the
# bitstream run. Outputs: OUT_DIR/hxdp_sume.bit, utilization and timing reports. Exit 2 on a missing input, 1 when
# timing is not met. Untested on hardware: written from the public reference design's interfaces.

set here [file dirname [file normalize [info script]]]
set repo [file normalize [file join $here .. ..]]
source [file join $here manifest.tcl]

set part xc7vx690tffg1761-3   ;# the NetFPGA-SUME's Virtex-7
set axis_mhz 200.0            ;# the reference NIC's datapath clock (axis_aclk, clk_200)
set core_mhz 156.25           ;# Sephirot's clock: hxdp/params.py CLOCK_MHZ (the paper's)
set hxdp_base 0x80000000      ;# the register window of docs/board.md (rwaxi addresses)
set hxdp_range 512K           ;# 0x8000_0000 .. 0x8007_ffff

proc hxdp_fail {code msg} {
    puts stderr "build.tcl: $msg"
    exit $code
}

if {[llength $argv] < 1} {
    hxdp_fail 2 "usage: vivado -mode batch -source fpga/vivado/build.tcl -tclargs REFERENCE_NIC.xpr \[OUT_DIR\] \[JOBS\]"
}
set ref_xpr [file normalize [lindex $argv 0]]
set out_dir [file normalize [expr {[llength $argv] > 1 ? [lindex $argv 1] : [file join $repo out vivado]}]]
set jobs [expr {[llength $argv] > 2 ? [lindex $argv 2] : 4}]
if {![file exists $ref_xpr]} {
    hxdp_fail 2 "$ref_xpr: no such project (create the reference NIC's project with NetFPGA's flow first)"
}

# --- the project: a copy of the reference NIC's ----------------------------------------------------------------------
open_project $ref_xpr
if {[get_property PART [current_project]] ne $part} {
    hxdp_fail 2 "$ref_xpr is for [get_property PART [current_project]], not the NetFPGA-SUME's $part"
}
file mkdir $out_dir
save_project_as hxdp_sume [file join $out_dir hxdp_sume] -force

# the reference datapath and its output port lookup leave; ours comes in under the same module name
foreach f [get_files -quiet -of_objects [get_filesets sources_1] *nf_datapath.v] {
    remove_files $f
}
foreach ip [get_ips -quiet output_port_lookup_ip] {
    remove_files [get_files -of_objects [get_filesets sources_1] [get_property IP_FILE $ip]]
}

set rtl [hxdp_manifest_files [file join $repo sephirot sephirot.core] {headers rtl board}]
lappend rtl [file join $repo fpga rtl sephirot_sume_emit.v] [file join $repo fpga rtl sephirot_sume_top.v] \
    [file join $repo fpga rtl nf_datapath.v]
add_files -norecurse -fileset sources_1 $rtl
foreach f $rtl {
    if {[string match *.vh $f]} {
        set_property file_type {Verilog Header} [get_files $f]
    }
}
set_property include_dirs [list [file join $repo sephirot rtl]] [get_filesets sources_1]

# --- the Xilinx IP of sephirot_sume_top (module names as fpga/blackbox/ declares them) ---------------------------------
create_ip -name clk_wiz -vendor xilinx.com -library ip -module_name hxdp_clk_wiz
set_property -dict [list CONFIG.PRIM_IN_FREQ $axis_mhz CONFIG.CLKOUT1_REQUESTED_OUT_FREQ $core_mhz \
    CONFIG.USE_RESET true CONFIG.RESET_TYPE ACTIVE_LOW CONFIG.USE_LOCKED true \
    CONFIG.PRIM_SOURCE No_buffer] [get_ips hxdp_clk_wiz]

create_ip -name axis_clock_converter -vendor xilinx.com -library ip -module_name hxdp_axis_cdc
set_property -dict [list CONFIG.TDATA_NUM_BYTES 32 CONFIG.TUSER_WIDTH 128 CONFIG.HAS_TKEEP 1 CONFIG.HAS_TLAST 1 \
    CONFIG.IS_ACLK_ASYNC 1] [get_ips hxdp_axis_cdc]

create_ip -name axi_clock_converter -vendor xilinx.com -library ip -module_name hxdp_axil_cdc
set_property -dict [list CONFIG.PROTOCOL AXI4LITE CONFIG.ADDR_WIDTH 32 CONFIG.DATA_WIDTH 32 \
    CONFIG.ACLK_ASYNC 1] [get_ips hxdp_axil_cdc]

foreach ip {hxdp_clk_wiz hxdp_axis_cdc hxdp_axil_cdc} {
    generate_target all [get_ips $ip]
}

# --- the register window: the output port lookup's interconnect port (S1 of nf_datapath) at 0x8000_0000 --------------
# The reference NIC's block design (control_sub) reaches nf_datapath's S0/S1/S2 through the masters M00..M02 of its
# AXI interconnect; S1's segment moves to the hXDP window. Exactly one segment must match, else nothing is guessed.
set bd [get_files -quiet -of_objects [get_filesets sources_1] *control_sub.bd]
if {[llength $bd] != 1} {
    hxdp_fail 2 "the reference project has no single control_sub block design (found: $bd)"
}
open_bd_design $bd
set segs [get_bd_addr_segs -quiet -filter {NAME =~ *M01_AXI*}]
if {[llength $segs] != 1} {
    hxdp_fail 2 "expected one address segment of the interconnect's M01_AXI (nf_datapath S1), found: $segs"
}
set_property offset $hxdp_base $segs
set_property range $hxdp_range $segs
validate_bd_design
save_bd_design
generate_target all $bd

# --- constraints, top, runs --------------------------------------------------------------------------------------------
add_files -norecurse -fileset constrs_1 [file join $here sume.xdc]
set_property top top [get_filesets sources_1]
update_compile_order -fileset sources_1

launch_runs synth_1 -jobs $jobs
wait_on_run synth_1
if {[get_property PROGRESS [get_runs synth_1]] ne "100%"} {
    hxdp_fail 1 "synthesis failed: see [get_property DIRECTORY [get_runs synth_1]]"
}
launch_runs impl_1 -to_step write_bitstream -jobs $jobs
wait_on_run impl_1
if {[get_property PROGRESS [get_runs impl_1]] ne "100%"} {
    hxdp_fail 1 "implementation failed: see [get_property DIRECTORY [get_runs impl_1]]"
}

open_run impl_1
report_utilization -hierarchical -file [file join $out_dir utilization.txt]
report_timing_summary -file [file join $out_dir timing.txt]
set impl_dir [get_property DIRECTORY [get_runs impl_1]]
file copy -force [file join $impl_dir top.bit] [file join $out_dir hxdp_sume.bit]
set wns [get_property STATS.WNS [get_runs impl_1]]
if {$wns < 0} {
    hxdp_fail 1 "timing not met (WNS $wns ns): [file join $out_dir timing.txt]; the bitstream is kept but unsafe"
}
puts "build.tcl: [file join $out_dir hxdp_sume.bit] (WNS $wns ns); program it with testbed_scripts/program_fpga.sh"
