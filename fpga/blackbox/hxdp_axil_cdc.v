// hxdp_axil_cdc: Xilinx AXI Clock Converter, AXI4-Lite, 32-bit address and data, asynchronous clocks.
// A black box for yosys (its ports only): fpga/vivado/build.tcl generates the real IP in Vivado.
`default_nettype none

(* blackbox *)
module hxdp_axil_cdc (
  input  wire s_axi_aclk,
  input  wire s_axi_aresetn,
  input  wire [31:0] s_axi_awaddr,
  input  wire [2:0] s_axi_awprot,
  input  wire s_axi_awvalid,
  output wire s_axi_awready,
  input  wire [31:0] s_axi_wdata,
  input  wire [3:0] s_axi_wstrb,
  input  wire s_axi_wvalid,
  output wire s_axi_wready,
  output wire [1:0] s_axi_bresp,
  output wire s_axi_bvalid,
  input  wire s_axi_bready,
  input  wire [31:0] s_axi_araddr,
  input  wire [2:0] s_axi_arprot,
  input  wire s_axi_arvalid,
  output wire s_axi_arready,
  output wire [31:0] s_axi_rdata,
  output wire [1:0] s_axi_rresp,
  output wire s_axi_rvalid,
  input  wire s_axi_rready,
  input  wire m_axi_aclk,
  input  wire m_axi_aresetn,
  output wire [31:0] m_axi_awaddr,
  output wire [2:0] m_axi_awprot,
  output wire m_axi_awvalid,
  input  wire m_axi_awready,
  output wire [31:0] m_axi_wdata,
  output wire [3:0] m_axi_wstrb,
  output wire m_axi_wvalid,
  input  wire m_axi_wready,
  input  wire [1:0] m_axi_bresp,
  input  wire m_axi_bvalid,
  output wire m_axi_bready,
  output wire [31:0] m_axi_araddr,
  output wire [2:0] m_axi_arprot,
  output wire m_axi_arvalid,
  input  wire m_axi_arready,
  input  wire [31:0] m_axi_rdata,
  input  wire [1:0] m_axi_rresp,
  input  wire m_axi_rvalid,
  output wire m_axi_rready
);
endmodule
`default_nettype wire
