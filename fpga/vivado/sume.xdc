# sume.xdc: constraints of sephirot_sume_top in the NetFPGA-SUME reference NIC (xc7vx690tffg1761-3).
# The board's pins, its 200 MHz system clock and the reference design's clocks are constrained by the reference
# project's own XDC files (kept by build.tcl). This file adds what the hXDP datapath brings in:
# - core_clk, 156.25 MHz, is hxdp_clk_wiz's output: Vivado derives it from the constrained axis_aclk;
# - the streams and the register slave cross between axis_aclk/axi_aclk and core_clk only through Xilinx clock
#   converters (asynchronous mode, each with its own constraints), so the domains are timed apart;
# - the core reset is synchronised into core_clk by core_rst_q (asynchronous assertion, MMCM lock as its input).

set core_clk [get_clocks -of_objects [get_pins -hierarchical -filter {NAME =~ *u_sume/u_clk/clk_out1}]]
set axis_clk [get_clocks -of_objects [get_pins -hierarchical -filter {NAME =~ *u_sume/u_clk/clk_in1}]]
set axi_clk [get_clocks -of_objects [get_pins -hierarchical -filter {NAME =~ *u_sume/u_axil/s_axi_aclk}]]
set_clock_groups -asynchronous -group $core_clk -group [lsort -unique [concat $axis_clk $axi_clk]]

set_false_path -to [get_pins -hierarchical -filter {NAME =~ *u_sume/core_rst_q_reg[*]/CLR}]
set_false_path -to [get_pins -hierarchical -filter {NAME =~ *u_sume/core_rst_q_reg[0]/D}]
