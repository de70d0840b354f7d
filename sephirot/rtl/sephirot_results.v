// sephirot_results: the per-packet results of several cores for the board, one a cycle in arrival order.
`default_nettype none
`include "sephirot_params.vh"

// The board's counters, its host queues and the daemon's record of each packet take one result a cycle, in the
// order the packets arrived (the order of their frames at the reorder stage's output). Several cores finish
// packets in any order, and several in one cycle: each core's results wait in a FIFO of its own (pushed at its
// pkt_done), and a FIFO of the cores in the order their packets started (one start a cycle: the input bus brings
// one first frame a cycle) says whose result is next. A core's results not yet taken are at most its packets not yet
// departed, which its packet buffers bound (NBUF each), so neither FIFO overflows. With one core the results pass
// through in the cycle they come, as before.
module sephirot_results #(
  parameter integer CORES = 1,
  parameter integer NBUF  = `SEPH_PKT_BUFS_SEVERAL,
  parameter integer RW    = 32 + 3 + 32 + 1 + 2 + 32 + 16   // action, fault, cycles, redirect valid, kind, port, size
) (
  input  wire               clk_i,
  input  wire               rst_ni,
  input  wire [CORES-1:0]   start_i,      // core k started a packet this cycle
  input  wire [CORES-1:0]   done_i,       // core k finished one; its result is res_i[RW*k +: RW]
  input  wire [RW*CORES-1:0] res_i,
  output wire               done_o,       // the next result in arrival order
  output wire [RW-1:0]      res_o
);
  generate
    if (CORES == 1) begin : gen_one
      assign done_o = done_i[0];
      assign res_o = res_i;
      wire unused = &{1'b0, clk_i, rst_ni, start_i};
    end else begin : gen_many
      localparam integer KW = $clog2(CORES);
      localparam integer OW = $clog2(CORES * NBUF);   // the order FIFO (CORES * NBUF entries, a power of two)
      localparam integer BW = $clog2(NBUF);
      reg [KW-1:0] ord_q [0:(1 << OW)-1];
      reg [OW-1:0] owr_q, ord_rd_q;
      reg [OW:0]   ocnt_q;
      reg [RW-1:0] res_q [0:CORES*NBUF-1];        // core k's results at k * NBUF + index
      reg [BW-1:0] rwr_q [0:CORES-1];
      reg [BW-1:0] rrd_q [0:CORES-1];
      reg [BW:0]   rcnt_q [0:CORES-1];
      reg [KW-1:0] starter;
      integer k;
      always @(*) begin
        starter = {KW{1'b0}};
        for (k = 0; k < CORES; k = k + 1) if (start_i[k]) starter = k[KW-1:0];
      end
      wire [KW-1:0] head = ord_q[ord_rd_q];
      wire          pop = ocnt_q != {(OW+1){1'b0}} && rcnt_q[head] != {(BW+1){1'b0}};
      assign done_o = pop;
      assign res_o = res_q[{{(32-KW){1'b0}}, head} * NBUF + {{(32-BW){1'b0}}, rrd_q[head]}];
      always @(posedge clk_i) begin
        if (|start_i) ord_q[owr_q] <= starter;
        for (k = 0; k < CORES; k = k + 1)
          if (done_i[k]) res_q[k * NBUF + {{(32-BW){1'b0}}, rwr_q[k]}] <= res_i[RW*k +: RW];
      end
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          owr_q <= {OW{1'b0}}; ord_rd_q <= {OW{1'b0}}; ocnt_q <= {(OW+1){1'b0}};
          for (k = 0; k < CORES; k = k + 1) begin
            rwr_q[k] <= {BW{1'b0}}; rrd_q[k] <= {BW{1'b0}}; rcnt_q[k] <= {(BW+1){1'b0}};
          end
        end else begin
          if (|start_i) owr_q <= owr_q + {{(OW-1){1'b0}}, 1'b1};
          if (pop) ord_rd_q <= ord_rd_q + {{(OW-1){1'b0}}, 1'b1};
          ocnt_q <= ocnt_q + {{OW{1'b0}}, |start_i} - {{OW{1'b0}}, pop};
          for (k = 0; k < CORES; k = k + 1) begin
            if (done_i[k]) rwr_q[k] <= rwr_q[k] + {{(BW-1){1'b0}}, 1'b1};
            if (pop && head == k[KW-1:0]) rrd_q[k] <= rrd_q[k] + {{(BW-1){1'b0}}, 1'b1};
            rcnt_q[k] <= rcnt_q[k] + {{BW{1'b0}}, done_i[k]} - {{BW{1'b0}}, pop && head == k[KW-1:0]};
          end
        end
      end
    end
  endgenerate
endmodule
`default_nettype wire
