// sephirot_eventring: the event ring the host reads over AXI-Lite (records dropped and counted when full).
`default_nettype none
`include "sephirot_params.vh"

// A record is four 32-bit words, {map id << 8 | kind}, cpu, {ctx length << 16 | size}, packet number, then its
// sample as RW 64-bit words (the program's bytes from word 0, a perf record's packet bytes from the next whole
// word; docs/board.md). The words of the record being read by the helper unit go to the slot behind the last
// record: the ring has DEPTH + 1 slots, so that slot is never one the host has still to read. A push finding DEPTH
// records, or a record the helper unit dropped (past the packet's EVENT_PACKET_MAX), is counted in dropped_o.
module sephirot_eventring #(
  parameter integer DEPTH = `SEPH_EVENT_FIFO_DEPTH,
  parameter integer RW    = `SEPH_EVENT_RECORD_WORDS
) (
  input  wire        clk_i,
  input  wire        rst_ni,
  input  wire        wr_i,            // a word of the record being read
  input  wire [8:0]  wr_idx_i,
  input  wire [63:0] wr_data_i,
  input  wire        push_i,          // the record, when its call ends
  input  wire        push_drop_i,
  input  wire        push_kind_i,
  input  wire [7:0]  push_map_i,
  input  wire [31:0] push_cpu_i,
  input  wire [15:0] push_size_i,
  input  wire [15:0] push_ctxlen_i,
  input  wire [31:0] push_pkt_i,
  input  wire        pop_i,
  input  wire        clr_i,           // clear the drop counter
  output wire [31:0] count_o,
  output reg  [31:0] dropped_o,
  input  wire        rd_i,            // read word rd_word_i of the head record
  input  wire [9:0]  rd_word_i,       // (32-bit words)
  output wire [31:0] rd_data_o        // the word read in the cycle before (zero when the ring was empty)
);
  localparam integer SLOTS = DEPTH + 1;
  localparam integer PW = $clog2(SLOTS);
  localparam integer AW = $clog2(SLOTS * RW);
  localparam [PW-1:0] LAST = SLOTS[PW-1:0] - 1'b1;
  reg [63:0]  data_q [0:SLOTS*RW-1];
  reg [127:0] info_q [0:SLOTS-1];
  reg [PW-1:0] rd_q, wr_q;
  reg [PW:0]   cnt_q;
  wire         full = cnt_q == DEPTH[PW:0];
  wire         empty = cnt_q == {(PW+1){1'b0}};
  wire         do_push = push_i && !push_drop_i && !full;
  wire         do_pop = pop_i && !empty;
  wire [AW-1:0] wslot = wr_q * RW[AW-1:0];
  wire [AW-1:0] rslot = rd_q * RW[AW-1:0];

  assign count_o = {{(31-PW){1'b0}}, cnt_q};
  wire [9:0]  dw = rd_word_i - 10'd4;
  wire        rd_data = rd_word_i >= 10'd4 && {1'b0, dw[9:1]} < RW[9:0];
  // the read: the sample word (block RAM, registered) and which half of it, or the header word, or zero
  reg  [63:0] dword_q;
  reg  [31:0] info_q_word;
  reg  [1:0]  sel_q;             // 0 zero, 1 header word, 2 low half, 3 high half of the sample word
  always @(posedge clk_i) begin
    if (rd_i) begin
      dword_q <= data_q[rslot + {{(AW-9){1'b0}}, dw[9:1]}];
      info_q_word <= info_q[rd_q][32*rd_word_i[1:0] +: 32];
      sel_q <= empty ? 2'd0 : (rd_word_i < 10'd4) ? 2'd1 : rd_data ? {1'b1, dw[0]} : 2'd0;
    end
  end
  assign rd_data_o = (sel_q == 2'd1) ? info_q_word : (sel_q == 2'd2) ? dword_q[31:0] :
                     (sel_q == 2'd3) ? dword_q[63:32] : 32'd0;

  always @(posedge clk_i) begin
    if (wr_i && {1'b0, wr_idx_i} < RW[9:0]) data_q[wslot + {{(AW-9){1'b0}}, wr_idx_i}] <= wr_data_i;
    if (do_push)
      info_q[wr_q] <= {push_pkt_i, push_ctxlen_i, push_size_i, push_cpu_i, 16'd0, push_map_i, 7'd0, push_kind_i};
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_q <= {PW{1'b0}}; wr_q <= {PW{1'b0}}; cnt_q <= {(PW+1){1'b0}}; dropped_o <= 32'd0;
    end else begin
      if (do_push) wr_q <= (wr_q == LAST) ? {PW{1'b0}} : wr_q + 1'b1;
      if (do_pop) rd_q <= (rd_q == LAST) ? {PW{1'b0}} : rd_q + 1'b1;
      cnt_q <= cnt_q + {{PW{1'b0}}, do_push} - {{PW{1'b0}}, do_pop};
      if (clr_i) dropped_o <= 32'd0;
      else if (push_i && (push_drop_i || full)) dropped_o <= dropped_o + 32'd1;
    end
  end
endmodule
`default_nettype wire
