// sephirot_mapmem: map memory, byte addressed, four lane ports and a host port of 128-bit lines.
`default_nettype none
`include "sephirot_params.vh"

module sephirot_mapmem #(
  parameter integer LANES = `SEPH_LANES,
  parameter integer BYTES = `SEPH_MAP_MEM_BYTES,
  parameter integer LW    = $clog2(BYTES / 16),  // line address width
  parameter integer WB    = 80                    // bytes of the helper's wide read
) (
  input  wire                 clk_i,
  // lanes (map region addresses; loads see memory before the row, stores commit in lane order)
  input  wire [LANES-1:0]     rd_i,
  input  wire [LANES-1:0]     wr_i,
  input  wire [32*LANES-1:0]  addr_i,
  input  wire [4*LANES-1:0]   size_i,
  input  wire [64*LANES-1:0]  wdata_i,
  input  wire                 commit_i,
  output reg  [64*LANES-1:0]  rdata_o,
  output reg  [LANES-1:0]     fault_o,
  // host (AXI map lines, loader and dump)
  input  wire                 host_we_i,
  input  wire [LW-1:0]        host_line_i,
  input  wire [127:0]         host_wdata_i,
  output reg  [127:0]         host_rdata_o,
  // helper unit: wide read of WB bytes at a byte offset (map FSM: slot header, key and value in one cycle)
  input  wire [31:0]          hw_off_i,
  output reg  [8*WB-1:0]      hw_rdata_o
);
  localparam integer AW = $clog2(BYTES);
  localparam [31:0] MAP_BASE = `SEPH_MAP_BASE;
  reg [7:0] mem_q [0:BYTES-1];

  integer li, bi;
  reg [31:0] o;
  always @(*) begin
    rdata_o = {64*LANES{1'b0}};
    fault_o = {LANES{1'b0}};
    for (li = 0; li < LANES; li = li + 1) begin
      o = addr_i[32*li +: 32] - MAP_BASE;
      if ((rd_i[li] || wr_i[li]) && (o + {28'd0, size_i[4*li +: 4]} > BYTES)) fault_o[li] = 1'b1;
      else if (rd_i[li])
        for (bi = 0; bi < 8; bi = bi + 1)
          if (bi < {28'd0, size_i[4*li +: 4]}) rdata_o[64*li + 8*bi +: 8] = mem_q[o[AW-1:0] + bi[AW-1:0]];
    end
  end

  integer hi;
  always @(*) begin
    for (hi = 0; hi < 16; hi = hi + 1) host_rdata_o[8*hi +: 8] = mem_q[{host_line_i, hi[3:0]}];
  end

  integer wr;
  reg [AW-1:0] wro;
  always @(*) begin
    hw_rdata_o = {8*WB{1'b0}};
    wro = {AW{1'b0}};
    for (wr = 0; wr < WB; wr = wr + 1) begin
      wro = hw_off_i[AW-1:0] + wr[AW-1:0];
      if ({1'b0, hw_off_i} + wr < {1'b0, BYTES[31:0]}) hw_rdata_o[8*wr +: 8] = mem_q[wro];
    end
  end

  integer wi, wb, hw;
  always @(posedge clk_i) begin
    if (commit_i) begin
      for (wi = 0; wi < LANES; wi = wi + 1)
        if (wr_i[wi])
          for (wb = 0; wb < 8; wb = wb + 1)
            if (wb < {28'd0, size_i[4*wi +: 4]})
              mem_q[addr_i[32*wi +: AW] + wb[AW-1:0]] <= wdata_i[64*wi + 8*wb +: 8];
    end
    if (host_we_i)
      for (hw = 0; hw < 16; hw = hw + 1) mem_q[{host_line_i, hw[3:0]}] <= host_wdata_i[8*hw +: 8];
  end
endmodule
`default_nettype wire
