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
  input  wire                 h_rd_i,
  input  wire [31:0]          h_addr_i,
  input  wire [3:0]           h_size_i,
  output reg  [63:0]          h_rdata_o,
  output reg                  h_fault_o,
  // host (AXI map lines, loader and dump)
  input  wire                 host_we_i,
  input  wire [LW-1:0]        host_line_i,
  input  wire [127:0]         host_wdata_i,
  output reg  [127:0]         host_rdata_o,
  // helper unit: wide read of WB bytes at a byte offset (map FSM: slot header, key and value in one cycle)
  input  wire                 wa_en_i,        // helper writes (map updates), after the lanes' stores
  input  wire [31:0]          wa_off_i,
  input  wire [8*WB-1:0]      wa_data_i,
  input  wire [WB-1:0]        wa_mask_i,
  input  wire                 wc_en_i,        // a slot cleared before the write above (LRU eviction)
  input  wire [31:0]          wc_off_i,
  input  wire [8*WB-1:0]      wc_data_i,
  input  wire [WB-1:0]        wc_mask_i,
  input  wire                 wb_en_i,
  input  wire [31:0]          wb_off_i,
  input  wire [63:0]          wb_data_i,      // region header words (count, LRU clock), byte mask
  input  wire [7:0]           wb_mask_i,
  input  wire                 hw_en_i,
  input  wire [31:0]          hw_off_i,
  output reg  [8*WB-1:0]      hw_rdata_o
);
  localparam integer AW = $clog2(BYTES);
  localparam [31:0] MAP_BASE = `SEPH_MAP_BASE;
  reg [7:0] mem_q [0:BYTES-1];

  // one access of `size` bytes at `a`: {fault, data}
  function automatic [64:0] access(input rd, input wr, input [31:0] a, input [3:0] size);
    reg [31:0] o;
    integer bi;
    access = 65'd0;
    o = a - MAP_BASE;
    if ((rd || wr) && (o + {28'd0, size} > BYTES)) access[64] = 1'b1;
    else if (rd)
      for (bi = 0; bi < 8; bi = bi + 1)
        if (bi < {28'd0, size}) access[8*bi +: 8] = mem_q[o[AW-1:0] + bi[AW-1:0]];
  endfunction

  integer li;
  reg [64:0] acc;
  always @(*) begin
    rdata_o = {64*LANES{1'b0}};
    fault_o = {LANES{1'b0}};
    acc = 65'd0;
    for (li = 0; li < LANES; li = li + 1) begin
      acc = access(rd_i[li], wr_i[li], addr_i[32*li +: 32], size_i[4*li +: 4]);
      rdata_o[64*li +: 64] = acc[63:0];
      fault_o[li] = acc[64];
    end
  end
  reg [64:0] hacc;
  always @(*) begin
    hacc = access(h_rd_i, 1'b0, h_addr_i, h_size_i);
    h_rdata_o = hacc[63:0];
    h_fault_o = hacc[64];
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
    if (hw_en_i) for (wr = 0; wr < WB; wr = wr + 1) begin
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
    if (wc_en_i) begin  // before wa: on the same slot the insert wins
      for (hw = 0; hw < WB / 2; hw = hw + 1)
        if (wc_mask_i[hw]) mem_q[wc_off_i[AW-1:0] + hw[AW-1:0]] <= wc_data_i[8*hw +: 8];
      for (hw = WB / 2; hw < WB; hw = hw + 1)
        if (wc_mask_i[hw]) mem_q[wc_off_i[AW-1:0] + hw[AW-1:0]] <= wc_data_i[8*hw +: 8];
    end
    if (wa_en_i) begin  // two loops of WB/2 (each short enough to unroll)
      for (hw = 0; hw < WB / 2; hw = hw + 1)
        if (wa_mask_i[hw]) mem_q[wa_off_i[AW-1:0] + hw[AW-1:0]] <= wa_data_i[8*hw +: 8];
      for (hw = WB / 2; hw < WB; hw = hw + 1)
        if (wa_mask_i[hw]) mem_q[wa_off_i[AW-1:0] + hw[AW-1:0]] <= wa_data_i[8*hw +: 8];
    end
    if (wb_en_i)
      for (hw = 0; hw < 8; hw = hw + 1)
        if (wb_mask_i[hw]) mem_q[wb_off_i[AW-1:0] + hw[AW-1:0]] <= wb_data_i[8*hw +: 8];
    if (host_we_i)
      for (hw = 0; hw < 16; hw = hw + 1) mem_q[{host_line_i, hw[3:0]}] <= host_wdata_i[8*hw +: 8];
  end
endmodule
`default_nettype wire
