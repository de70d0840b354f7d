// hxdp_clk_wiz: Xilinx Clocking Wizard: clk_out1 = 156.25 MHz (the core clock) from clk_in1 = axis_aclk.
// A black box for yosys (its ports only): fpga/vivado/build.tcl generates the real IP in Vivado.
`default_nettype none

(* blackbox *)
module hxdp_clk_wiz (
  input  wire clk_in1,
  input  wire resetn,
  output wire clk_out1,
  output wire locked
);
endmodule
`default_nettype wire
