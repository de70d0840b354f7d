// hxdp_axis_cdc: Xilinx AXI4-Stream Clock Converter (256-bit data, tkeep, tlast, 128-bit tuser), asynchronous clocks.
// A black box for yosys (its ports only): fpga/vivado/build.tcl generates the real IP in Vivado.
`default_nettype none

(* blackbox *)
module hxdp_axis_cdc (
  input  wire s_axis_aclk,
  input  wire s_axis_aresetn,
  input  wire s_axis_tvalid,
  output wire s_axis_tready,
  input  wire [255:0] s_axis_tdata,
  input  wire [31:0] s_axis_tkeep,
  input  wire s_axis_tlast,
  input  wire [127:0] s_axis_tuser,
  input  wire m_axis_aclk,
  input  wire m_axis_aresetn,
  output wire m_axis_tvalid,
  input  wire m_axis_tready,
  output wire [255:0] m_axis_tdata,
  output wire [31:0] m_axis_tkeep,
  output wire m_axis_tlast,
  output wire [127:0] m_axis_tuser
);
endmodule
`default_nettype wire
