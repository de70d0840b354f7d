// sephirot_mapmem: map memory, byte addressed, stored as 16 banks of 64-bit words; lane, helper and host ports.
`default_nettype none
`include "sephirot_params.vh"

// Word w (bytes 8w..8w+7) is in bank w % 16, row w / 16. An access of n <= 121 bytes at byte offset o covers at
// most 16 consecutive words, one per bank: bank b holds its word w0 + ((b - w0) mod 16) (w0 = o / 8), in row
// w0 / 16, or the next row when b < w0 mod 16. So every port reads or writes at most one word per bank per
// cycle, and synthesis sees 16 small memories with one port per user instead of a byte array with a port per
// byte. Reads stay combinational; writes keep the byte array's order (lanes, wc, wa, wb, host: the last wins).
// BYTES is a power of two >= 512.
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
  localparam integer NB = 16;                  // banks
  localparam integer DEPTH = BYTES / (8 * NB);  // rows per bank
  localparam integer DW = AW - 7;              // row address width
  localparam integer NW = LANES + 4;           // write ports in commit order: lanes, wc, wa, wb, host
  localparam [31:0] MAP_BASE = `SEPH_MAP_BASE;

  // byte offset of each read port (below BYTES: the byte array's index wrapped the same way); the ports are kept
  // in separate signals so that no combinational path joins two of them
  reg  [AW*LANES-1:0]  off_l;
  wire [AW-1:0]        off_h = h_addr_i[AW-1:0] - MAP_BASE[AW-1:0];
  wire [AW-1:0]        off_n = {host_line_i, 4'd0};
  wire [AW-1:0]        off_w = hw_off_i[AW-1:0];
  integer li;
  always @(*) begin
    for (li = 0; li < LANES; li = li + 1) off_l[AW*li +: AW] = addr_i[32*li +: AW] - MAP_BASE[AW-1:0];
  end

  // row of bank b holding a word of an access at byte offset o
  function automatic [DW-1:0] row(input [AW-4:0] w, input [3:0] b);   // w: the offset's word index
    row = w[AW-4:4] + {{(DW-1){1'b0}}, b < w[3:0]};
  endfunction

  // writes, each spread over the banks: word, byte mask and row per bank and write port
  reg  [AW*NW-1:0]        w_off;
  reg  [8*WB*NW-1:0]      w_data;   // bytes from the offset (lanes 8, wc/wa WB, wb 8, host 16)
  reg  [WB*NW-1:0]        w_mask;
  reg  [64*NB*NW-1:0]     b_wdata;  // bank b, port q at NW*b + q
  reg  [8*NB*NW-1:0]      b_wmask;
  reg  [NB*NW-1:0]        b_we;
  reg  [64*NB-1:0]        wrot;
  reg  [8*NB-1:0]         mrot;
  reg  [64*NB-1:0]        wwin;
  reg  [8*NB-1:0]         mwin;
  integer q, bi, bb;
  always @(*) begin
    w_off = {AW*NW{1'b0}};
    w_data = {8*WB*NW{1'b0}};
    w_mask = {WB*NW{1'b0}};
    for (q = 0; q < LANES; q = q + 1) begin
      w_off[AW*q +: AW] = addr_i[32*q +: AW];
      w_data[8*WB*q +: 64] = wdata_i[64*q +: 64];
      for (bi = 0; bi < 8; bi = bi + 1)
        w_mask[WB*q + bi] = commit_i && wr_i[q] && bi < {28'd0, size_i[4*q +: 4]};
    end
    w_off[AW*LANES +: AW] = wc_off_i[AW-1:0];
    w_data[8*WB*LANES +: 8*WB] = wc_data_i;
    w_mask[WB*LANES +: WB] = wc_en_i ? wc_mask_i : {WB{1'b0}};
    w_off[AW*(LANES+1) +: AW] = wa_off_i[AW-1:0];
    w_data[8*WB*(LANES+1) +: 8*WB] = wa_data_i;
    w_mask[WB*(LANES+1) +: WB] = wa_en_i ? wa_mask_i : {WB{1'b0}};
    w_off[AW*(LANES+2) +: AW] = wb_off_i[AW-1:0];
    w_data[8*WB*(LANES+2) +: 64] = wb_data_i;
    w_mask[WB*(LANES+2) +: 8] = wb_en_i ? wb_mask_i : 8'd0;
    w_off[AW*(LANES+3) +: AW] = {host_line_i, 4'd0};
    w_data[8*WB*(LANES+3) +: 128] = host_wdata_i;
    w_mask[WB*(LANES+3) +: 16] = {16{host_we_i}};
    // the bytes shifted to the offset inside the 128-byte ring of the 16 banks, then rotated so that bank b gets
    // the ring's word b
    b_wdata = {64*NB*NW{1'b0}};
    b_wmask = {8*NB*NW{1'b0}};
    b_we = {NB*NW{1'b0}};
    wrot = {64*NB{1'b0}};
    mrot = {8*NB{1'b0}};
    wwin = {64*NB{1'b0}};
    mwin = {8*NB{1'b0}};
    for (q = 0; q < NW; q = q + 1)
      if (w_mask[WB*q +: WB] != {WB{1'b0}}) begin
        wwin = {{(64*NB-8*WB){1'b0}}, w_data[8*WB*q +: 8*WB]} << {w_off[AW*q +: 3], 3'd0};
        mwin = {{(8*NB-WB){1'b0}}, w_mask[WB*q +: WB]} << w_off[AW*q +: 3];
        wrot = (wwin << {w_off[AW*q+3 +: 4], 6'd0}) | (wwin >> (11'd1024 - {1'b0, w_off[AW*q+3 +: 4], 6'd0}));
        mrot = (mwin << {w_off[AW*q+3 +: 4], 3'd0}) | (mwin >> (8'd128 - {1'b0, w_off[AW*q+3 +: 4], 3'd0}));
        for (bb = 0; bb < NB; bb = bb + 1) begin
          b_wdata[64*(NW*bb+q) +: 64] = wrot[64*bb +: 64];
          b_wmask[8*(NW*bb+q) +: 8] = mrot[8*bb +: 8];
          b_we[NW*bb+q] = mrot[8*bb +: 8] != 8'd0;
        end
      end
  end

  // each read port's 16 words, bank b's at 64*b: the 128-byte ring around the port's offset
  wire [64*NB*LANES-1:0] ring_l;
  wire [64*NB-1:0]       ring_h, ring_n, ring_w;

  genvar gb, gp;
  generate
    for (gb = 0; gb < NB; gb = gb + 1) begin : gen_bank
      localparam [3:0] B = gb;
      reg [63:0] mem_q [0:DEPTH-1];
      for (gp = 0; gp < LANES; gp = gp + 1) begin : gen_rl
        assign ring_l[64*(NB*gp+gb) +: 64] = mem_q[row(off_l[AW*gp+3 +: AW-3], B)];
      end
      assign ring_h[64*gb +: 64] = mem_q[row(off_h[AW-1:3], B)];
      assign ring_n[64*gb +: 64] = mem_q[row(off_n[AW-1:3], B)];
      assign ring_w[64*gb +: 64] = mem_q[row(off_w[AW-1:3], B)];
      reg [DW*NW-1:0] w_row;
      integer rq, wq, wj;
      always @(*) begin
        for (rq = 0; rq < NW; rq = rq + 1) w_row[DW*rq +: DW] = row(w_off[AW*rq+3 +: AW-3], B);
      end
      always @(posedge clk_i) begin
        for (wq = 0; wq < NW; wq = wq + 1)
          if (b_we[NW*gb+wq])
            for (wj = 0; wj < 8; wj = wj + 1)
              if (b_wmask[8*(NW*gb+wq) + wj])
                mem_q[w_row[DW*wq +: DW]][8*wj +: 8] <= b_wdata[64*(NW*gb+wq) + 8*wj +: 8];
      end
    end
  endgenerate

  // the ring's bytes from byte offset o on (o: the offset's low 7 bits)
  function automatic [64*NB-1:0] window(input [64*NB-1:0] ring, input [6:0] o);
    window = (ring >> {o, 3'd0}) | (ring << (11'd1024 - {1'b0, o, 3'd0}));
  endfunction

  // one access of `size` bytes at `a`: {fault, data}
  function automatic [64:0] access(input rd, input wr, input [31:0] a, input [3:0] size, input [63:0] win);
    reg [31:0] o;
    integer i;
    access = 65'd0;
    o = a - MAP_BASE;
    if ((rd || wr) && (o + {28'd0, size} > BYTES)) access[64] = 1'b1;
    else if (rd)
      for (i = 0; i < 8; i = i + 1)
        if (i < {28'd0, size}) access[8*i +: 8] = win[8*i +: 8];
  endfunction

  reg [64*NB-1:0] lwin;
  reg [64:0] acc;
  always @(*) begin
    rdata_o = {64*LANES{1'b0}};
    fault_o = {LANES{1'b0}};
    acc = 65'd0;
    lwin = {64*NB{1'b0}};
    for (li = 0; li < LANES; li = li + 1) begin
      if (rd_i[li]) lwin = window(ring_l[64*NB*li +: 64*NB], off_l[AW*li +: 7]);
      acc = access(rd_i[li], wr_i[li], addr_i[32*li +: 32], size_i[4*li +: 4], lwin[63:0]);
      rdata_o[64*li +: 64] = acc[63:0];
      fault_o[li] = acc[64];
    end
  end
  reg [64*NB-1:0] hwin;
  reg [64:0] hacc;
  always @(*) begin
    hwin = h_rd_i ? window(ring_h, off_h[6:0]) : {64*NB{1'b0}};
    hacc = access(h_rd_i, 1'b0, h_addr_i, h_size_i, hwin[63:0]);
    h_rdata_o = hacc[63:0];
    h_fault_o = hacc[64];
  end

  reg [64*NB-1:0] lnwin;
  always @(*) begin
    lnwin = window(ring_n, off_n[6:0]);
    host_rdata_o = lnwin[127:0];
  end

  // bytes past the end of the memory read as zero
  reg [64*NB-1:0] wdwin;
  integer wr;
  always @(*) begin
    hw_rdata_o = {8*WB{1'b0}};
    wdwin = {64*NB{1'b0}};
    if (hw_en_i) begin
      wdwin = window(ring_w, off_w[6:0]);
      for (wr = 0; wr < WB; wr = wr + 1)
        if ({1'b0, hw_off_i} + wr < {1'b0, BYTES[31:0]}) hw_rdata_o[8*wr +: 8] = wdwin[8*wr +: 8];
    end
  end
endmodule
`default_nettype wire
