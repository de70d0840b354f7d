// sephirot_regfile: the core's 16 x 64-bit registers: a write per lane and the helper's r0 per row, two reads per lane.
`default_nettype none
`include "sephirot_params.vh"

// A row writes up to one register per lane and the helper's result to r0, and reads two registers per lane. Kept
// in flip-flops, every register needed a five-way write multiplexer and every read a 16-way one (about 6.7K LUTs
// in yosys).
// Here each lane writes its own bank, which has one write port and so maps to distributed RAM (one copy per
// read, as the memory mapper makes them), and a live-value table says which bank holds each register's newest
// value (the highest lane writing a register in a row wins, as in lane-order commit; the helper's r0 lands after
// every lane). A register not written since the packet started reads its start value (r1, r2 and
// r10 from the caller, the rest 0): the table's valid bits are cleared at the end of a packet, in zero cycles.
// r0..r5 are also kept in flip-flops for the fixed reads (helper arguments, cmpxchg's r0, the row's r0 result):
// reading them from the banks would add a distributed-RAM copy per read.
module sephirot_regfile #(
  parameter integer LANES = `SEPH_LANES
) (
  input  wire                  clk_i,
  input  wire                  rst_ni,
  input  wire                  clear_i,          // the packet ends: every register back to its start value
  input  wire                  commit_i,         // the row's writes take effect at this clock edge
  input  wire [LANES-1:0]      wr_en_i,
  input  wire [4*LANES-1:0]    wr_idx_i,
  input  wire [64*LANES-1:0]   wr_val_i,
  input  wire                  h_wr_i,           // the helper's result to r0, after the lanes
  input  wire [63:0]           h_val_i,
  input  wire [63:0]           init_r1_i,
  input  wire [63:0]           init_r2_i,
  input  wire [8*LANES-1:0]    rd_idx_i,         // lane k reads rd_idx_i[8k +: 4] and rd_idx_i[8k+4 +: 4]
  output reg  [128*LANES-1:0]  rd_val_o,
  output wire [64*6-1:0]       fix_o             // r0..r5 (r0 in the low bits)
);
  localparam integer TW = $clog2(LANES + 1);   // a live-value entry: the lane bank, or LANES for the helper's r0

  // live-value table (the helper's r0 is read from the r0..r5 copies below, which hold r0's newest value)
  reg [TW-1:0] lvt_q [0:15];
  reg [15:0]   vld_q;
  integer ti;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      vld_q <= 16'd0;
      for (ti = 0; ti < 16; ti = ti + 1) lvt_q[ti] <= {TW{1'b0}};
    end else if (clear_i) begin
      vld_q <= 16'd0;
    end else if (commit_i) begin
      for (ti = 0; ti < LANES; ti = ti + 1)
        if (wr_en_i[ti]) begin
          lvt_q[wr_idx_i[4*ti +: 4]] <= ti[TW-1:0];
          vld_q[wr_idx_i[4*ti +: 4]] <= 1'b1;
        end
      if (h_wr_i) begin
        lvt_q[0] <= LANES[TW-1:0];
        vld_q[0] <= 1'b1;
      end
    end
  end

  reg [63:0] fix_q [0:5];     // r0..r5 (below)

  // one bank per lane (a single write port: distributed RAM); port p of bank b at bank_q[64 * (p * LANES + b)]
  wire [64*LANES*2*LANES-1:0] bank_q;
  genvar gb, gp;
  generate
    for (gb = 0; gb < LANES; gb = gb + 1) begin : gen_bank
      reg [63:0] mem_q [0:15];
      always @(posedge clk_i) if (commit_i && !clear_i && wr_en_i[gb]) mem_q[wr_idx_i[4*gb +: 4]] <= wr_val_i[64*gb +: 64];
      for (gp = 0; gp < 2 * LANES; gp = gp + 1) begin : gen_port
        assign bank_q[64*(gp*LANES+gb) +: 64] = mem_q[rd_idx_i[4*gp +: 4]];
      end
    end
  endgenerate

  // reads: the bank the table names, or else the helper's r0 or the start value: a select among the banks and
  // one among the others, then one between the two (for four lanes, two LUTs and a MUXF7 per bit on 7-series),
  // their codes worked out once per port (the start values spelled as a case on such a code: as a function of
  // the index, yosys made 400 LUTs more of them)
  integer pi, bi;
  reg [3:0]    ridx;
  reg [TW-1:0] rsel;
  reg          in_bank;
  reg [1:0]    ocode;
  reg [63:0]   bv, ov;
  always @(*) begin
    rd_val_o = {128*LANES{1'b0}};
    for (pi = 0; pi < 2 * LANES; pi = pi + 1) begin
      ridx = rd_idx_i[4*pi +: 4];
      rsel = lvt_q[ridx];
      in_bank = vld_q[ridx] && rsel != LANES[TW-1:0];
      ocode = vld_q[ridx] ? 2'd0 : (ridx == 4'd1) ? 2'd1 : (ridx == 4'd2) ? 2'd2 : 2'd3;
      bv = bank_q[64*(pi*LANES) +: 64];
      for (bi = 1; bi < LANES; bi = bi + 1)
        if (rsel == bi[TW-1:0]) bv = bank_q[64*(pi*LANES+bi) +: 64];
      case (ocode)
        2'd0:    ov = fix_q[0];   // valid and not in a bank: the helper's r0
        2'd1:    ov = init_r1_i;
        2'd2:    ov = init_r2_i;
        default: ov = (ridx == 4'd10) ? {32'd0, `SEPH_STACK_TOP} : 64'd0;
      endcase
      rd_val_o[64*pi +: 64] = in_bank ? bv : ov;
    end
  end

  // r0..r5 in flip-flops, written as the banks are (lane order, the helper's r0 last). Each takes the value of
  // the last lane writing it as a binary lane index, so that a bit is one 4:1 multiplexer behind the flip-flop's
  // enable; they are zeroed when the packet ends (the flip-flops' synchronous reset), so r0 and r3..r5 need no
  // start-value multiplexer (a priority chain over the lanes and a start-value select on every copy: 290 LUTs more)
  localparam integer LW = (LANES > 1) ? $clog2(LANES) : 1;
  reg [LW-1:0] fsel [0:5];
  reg [5:0]    fhit;
  reg [63:0]   fval [0:5];
  integer fi, fl;
  always @(*)   // (the simulation skips it in the rows without a register write)
    for (fi = 0; fi < 6; fi = fi + 1) begin
      fhit[fi] = 1'b0;
      fsel[fi] = {LW{1'b0}};
      fval[fi] = 64'd0;
      if (|wr_en_i) begin
        for (fl = 0; fl < LANES; fl = fl + 1)
          if (wr_en_i[fl] && wr_idx_i[4*fl +: 4] == fi[3:0]) begin
            fhit[fi] = 1'b1;
            fsel[fi] = fl[LW-1:0];
          end
        fval[fi] = wr_val_i[63:0];
        for (fl = 1; fl < LANES; fl = fl + 1)
          if (fsel[fi] == fl[LW-1:0]) fval[fi] = wr_val_i[64*fl +: 64];
      end
    end
  // (the reset as well as the clear is synchronous: beside an asynchronous reset the clear is a LUT a bit)
  /* verilator lint_off SYNCASYNCNET */
  always @(posedge clk_i)
    for (fi = 0; fi < 6; fi = fi + 1)
      if (!rst_ni || clear_i) fix_q[fi] <= 64'd0;
      else if (commit_i && fi == 0 && h_wr_i) fix_q[fi] <= h_val_i;
      else if (commit_i && fhit[fi]) fix_q[fi] <= fval[fi];
  /* verilator lint_on SYNCASYNCNET */
  assign fix_o = {fix_q[5], fix_q[4], fix_q[3], vld_q[2] ? fix_q[2] : init_r2_i, vld_q[1] ? fix_q[1] : init_r1_i,
                  fix_q[0]};
endmodule
`default_nettype wire
