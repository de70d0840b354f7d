// sephirot_results: the per-packet results of several cores for the board, one a cycle in arrival order.
`default_nettype none
`include "sephirot_params.vh"

// The board's counters, its host queues and the daemon's record of each packet take one result a cycle, in the
// order the packets arrived (the order of their frames at the reorder stage's output). Several cores finish
// packets in any order, and several in one cycle: each packet gets a slot of a ring at its start (one start a cycle:
// the input bus brings one first frame a cycle), its core remembers the slot while it runs it (one packet a core),
// writes its result there when it finishes, and the ring's oldest slot leaves once it holds its result. A slot is
// taken until its result leaves; the packets started and not taken out are at most those in the cores' buffers
// (CORES * NBUF) and the departed ones whose results wait for the one a cycle, which drain faster than the input
// brings new packets: 2 * CORES * NBUF slots never overflow. With one core the results pass through in the cycle
// they come, as before.
module sephirot_results #(
  parameter integer CORES = 1,
  parameter integer NBUF  = `SEPH_PKT_BUFS_SEVERAL,
  parameter integer RW    = 32 + 3 + 32 + 1 + 2 + 32 + 16   // action, fault, cycles, redirect valid, kind, port, size
) (
  input  wire               clk_i,
  input  wire               rst_ni,
  input  wire [CORES-1:0]   start_i,      // core k started a packet this cycle
  input  wire [CORES-1:0]   done_i,       // core k finished it; its result is res_i[RW*k +: RW]
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
      localparam integer OW = $clog2(2 * CORES * NBUF);
      reg [RW-1:0]   res_q [0:(1 << OW)-1];
      reg [(1 << OW)-1:0] ok_q;               // the slot holds its result
      reg [OW-1:0]   wr_q, rd_q;
      reg [OW-1:0]   slot_q [0:CORES-1];      // the slot of the packet each core runs
      integer k;
      assign done_o = ok_q[rd_q];   // (a slot not given since it left holds no result)
      assign res_o = res_q[rd_q];
      always @(posedge clk_i) begin
        for (k = 0; k < CORES; k = k + 1) begin
          // (a packet of one row finishes in the cycle it starts: its slot is the one given now)
          if (done_i[k]) res_q[start_i[k] ? wr_q : slot_q[k]] <= res_i[RW*k +: RW];
          if (start_i[k]) slot_q[k] <= wr_q;
        end
      end
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          wr_q <= {OW{1'b0}}; rd_q <= {OW{1'b0}}; ok_q <= {(1 << OW){1'b0}};
        end else begin
          if (|start_i) wr_q <= wr_q + {{(OW-1){1'b0}}, 1'b1};
          if (done_o) rd_q <= rd_q + {{(OW-1){1'b0}}, 1'b1};
          for (k = 0; k < CORES; k = k + 1)
            if (done_i[k]) ok_q[start_i[k] ? wr_q : slot_q[k]] <= 1'b1;
          if (done_o) ok_q[rd_q] <= 1'b0;
        end
      end
    end
  endgenerate
endmodule
`default_nettype wire
