// sephirot_rrpick: round robin: the first requester after the last one served, in the order last+1, ..., N-1, 0, ...
`default_nettype none

// Combinational. Serves the map grant (sephirot_grant) and the printk records of several cores (sephirot_prkarb):
// each keeps its own `last` register, updated when its pick is served, so a requester waits at most N - 1 picks.
module sephirot_rrpick #(
  parameter integer N  = 2,           // requesters (2 or more)
  parameter integer KW = $clog2(N)    // bits of a requester's number
) (
  input  wire [N-1:0]  req_i,
  input  wire [KW-1:0] last_i,        // the requester served last (below N)
  output reg  [KW-1:0] pick_o,        // the first requester after it (valid with any_o)
  output reg           any_o
);
  reg [KW:0] cand;                    // (last_i + j < 2N: one bit more than a number)
  integer    j;
  always @(*) begin
    // the lowest distance from last_i wins: walk the distances down and overwrite
    pick_o = {KW{1'b0}}; any_o = 1'b0;
    for (j = N; j >= 1; j = j - 1) begin
      cand = {1'b0, last_i} + j[KW:0];
      if (cand >= N[KW:0]) cand = cand - N[KW:0];
      if (req_i[cand[KW-1:0]]) begin pick_o = cand[KW-1:0]; any_o = 1'b1; end
    end
  end
endmodule
`default_nettype wire
