// sephirot_tracefifo: the trace_printk FIFO the host reads over AXI-Lite (records dropped and counted when full).
`default_nettype none
`include "sephirot_params.vh"

// A record is {r5, r4, r3, format bytes, packet number, format length}: the AXI words of docs/board.md in order
// (word 0 length, word 1 packet number, words 2.. the format, then r3, r4, r5 low word first). A push finding
// DEPTH records dropped and counts it (a pop in the same cycle does not make room for it), so the host sees the
// oldest records and how many are missing; records several cores dropped before the FIFO (lost_i) count as well.
module sephirot_tracefifo #(
  parameter integer DEPTH  = `SEPH_PRINTK_FIFO_DEPTH,
  parameter integer FMTMAX = `SEPH_PRINTK_FMT_MAX,
  parameter integer RW     = 64 + 8 * FMTMAX + 192
) (
  input  wire              clk_i,
  input  wire              rst_ni,
  input  wire              push_i,
  input  wire [7:0]        push_len_i,
  input  wire [31:0]       push_pkt_i,
  input  wire [8*FMTMAX-1:0] push_fmt_i,
  input  wire [191:0]      push_args_i,
  input  wire              pop_i,
  input  wire              clr_i,          // clear the drop counter
  input  wire [31:0]       lost_i,         // records dropped before the FIFO this cycle (sephirot_prkarb)
  output wire [31:0]       count_o,
  output reg  [31:0]       dropped_o,
  output wire [RW-1:0]     head_o          // zero when empty
);
  localparam integer PW = $clog2(DEPTH);
  reg [RW-1:0] mem_q [0:DEPTH-1];
  reg [PW-1:0] rd_q, wr_q;
  reg [PW:0]   cnt_q;
  wire         full = cnt_q == DEPTH[PW:0];
  wire         do_push = push_i && !full;
  wire         do_pop = pop_i && cnt_q != {(PW+1){1'b0}};

  assign count_o = {{(31-PW){1'b0}}, cnt_q};
  assign head_o = (cnt_q == {(PW+1){1'b0}}) ? {RW{1'b0}} : mem_q[rd_q];

  always @(posedge clk_i) begin
    if (do_push) mem_q[wr_q] <= {push_args_i, push_fmt_i, push_pkt_i, 24'd0, push_len_i};
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_q <= {PW{1'b0}}; wr_q <= {PW{1'b0}}; cnt_q <= {(PW+1){1'b0}}; dropped_o <= 32'd0;
    end else begin
      if (do_push) wr_q <= wr_q + {{(PW-1){1'b0}}, 1'b1};
      if (do_pop) rd_q <= rd_q + {{(PW-1){1'b0}}, 1'b1};
      cnt_q <= cnt_q + {{PW{1'b0}}, do_push} - {{PW{1'b0}}, do_pop};
      if (clr_i) dropped_o <= 32'd0;
      else dropped_o <= dropped_o + {31'd0, push_i && full} + lost_i;
    end
  end
endmodule
`default_nettype wire
