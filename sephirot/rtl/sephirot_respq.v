// sephirot_respq: the core each in-order off-chip read response belongs to (its requester, not the grant's holder).
`default_nettype none

// An off-chip port answers its reads in request order. A core's read normally comes back while it still holds the
// map grant, but a call that faults lets go of a read still out (sephirot_mapfsm's stale read) and the grant moves
// on: its response must reach the core that asked, so that core drops it and the new holder is not handed data it
// did not ask for. Each core has at most one read out on a port, so CORES entries hold every read out.
module sephirot_respq #(
  parameter integer CORES = 1,
  parameter integer KW    = (CORES > 1) ? $clog2(CORES) : 1
) (
  input  wire          clk_i,
  input  wire          rst_ni,
  input  wire          push_i,    // a read request leaves this cycle
  input  wire [KW-1:0] core_i,    // for this core
  input  wire          pop_i,     // a response comes this cycle
  output wire [KW-1:0] head_o     // the core it is for
);
  generate
    if (CORES == 1) begin : gen_one
      assign head_o = {KW{1'b0}};
      wire unused = &{1'b0, clk_i, rst_ni, push_i, core_i, pop_i};
    end else begin : gen_fifo
      localparam integer LASTI = CORES - 1;
      localparam [KW-1:0] LAST = LASTI[KW-1:0];
      reg [KW-1:0] q_q [0:CORES-1];
      reg [KW-1:0] rd_q, wr_q;
      integer i;
      assign head_o = q_q[rd_q];
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          rd_q <= {KW{1'b0}}; wr_q <= {KW{1'b0}};
          for (i = 0; i < CORES; i = i + 1) q_q[i] <= {KW{1'b0}};
        end else begin
          if (push_i) begin
            q_q[wr_q] <= core_i;
            wr_q <= (wr_q == LAST) ? {KW{1'b0}} : wr_q + 1'b1;
          end
          if (pop_i) rd_q <= (rd_q == LAST) ? {KW{1'b0}} : rd_q + 1'b1;
        end
      end
    end
  endgenerate
endmodule
`default_nettype wire
