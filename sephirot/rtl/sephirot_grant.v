// sephirot_grant: the map grant of several cores, shared by readers or held by one writer, round robin.
`default_nettype none
`include "sephirot_params.vh"

// Execution contract section 8 "The grant": a core's row that touches the map memory (a lane's access in the map
// memory or an off-chip tier, a map helper, a BPF atomic there) asks for the grant in its first cycle (req_i), in
// the mode excl_i says (shared: it only reads the map memory or writes its own per-CPU copies; exclusive
// otherwise), and runs only while its core holds it; the holder keeps it to the row's last cycle (keep_i: the row
// stalls on, or its taken-branch or conditional-exit bubble, a part of its cost), and from spin_lock's row to the
// end of spin_unlock's (keep_i too: spin_lock's row is exclusive, so the lock keeps it exclusive), then the next
// row asking may start in the following cycle. Any number of cores hold it shared, or one exclusive. In a cycle in
// which no core keeps it exclusive, the cores asking are ordered from the one after the last core granted (k+1,
// k+2, ..., CORES-1, 0, ...; core 0 first after reset) and the first decides: exclusive, it is granted when no core
// keeps a shared row going this cycle, else nobody is; shared, every core asking shared is granted. The deciding
// core, granted, is the last core granted. The answer is combinational (the row starts in the cycle it is granted),
// from the requests and registers. x_o / xk_o: the grant is held exclusive this cycle, by core xk_o (the one whose
// ports reach the off-chip tiers and write every copy of the map memory, sephirot_top). With one core the grant is
// always held, exclusive.
module sephirot_grant #(
  parameter integer CORES = 1,
  parameter integer KW    = (CORES > 1) ? $clog2(CORES) : 1   // bits of a core's number
) (
  input  wire             clk_i,
  input  wire             rst_ni,
  input  wire [CORES-1:0] req_i,
  input  wire [CORES-1:0] excl_i,      // core k's asking row wants it exclusive
  input  wire [CORES-1:0] keep_i,
  output reg  [CORES-1:0] gnt_o,       // the cores holding it this cycle
  output reg              x_o,         // it is held exclusive this cycle
  output reg  [KW-1:0]    xk_o         // by this core (valid with x_o)
);
  generate
    if (CORES == 1) begin : gen_one
      always @(*) begin gnt_o = 1'b1; x_o = 1'b1; xk_o = 1'b0; end
      wire unused = &{1'b0, clk_i, rst_ni, req_i, excl_i, keep_i};
    end else begin : gen_rr
      localparam integer LAST0 = CORES - 1;
      reg [CORES-1:0] own_q;          // the cores keeping the grant this cycle (their rows go on)
      reg             ownx_q;         // the one keeping it holds it exclusive
      reg [KW-1:0]    ownk_q, last_q; // that core; the last core granted
      wire [CORES-1:0] ask = req_i & ~own_q;
      wire [KW-1:0]   pick;           // the asker that decides: the first after the last core granted
      wire            pick_v;
      reg             pick_g;
      sephirot_rrpick #(.N(CORES), .KW(KW)) u_pick (.req_i(ask), .last_i(last_q), .pick_o(pick), .any_o(pick_v));
      always @(*) begin
        gnt_o = own_q; x_o = ownx_q; xk_o = ownk_q; pick_g = 1'b0;
        if (!ownx_q && pick_v) begin
          if (!excl_i[pick]) begin
            gnt_o = own_q | (ask & ~excl_i); pick_g = 1'b1;
          end else if (own_q == {CORES{1'b0}}) begin
            gnt_o[pick] = 1'b1; x_o = 1'b1; xk_o = pick; pick_g = 1'b1;
          end
        end
      end
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          own_q <= {CORES{1'b0}}; ownx_q <= 1'b0; ownk_q <= {KW{1'b0}}; last_q <= LAST0[KW-1:0];
        end else begin
          own_q <= gnt_o & keep_i; ownx_q <= x_o && keep_i[xk_o]; ownk_q <= xk_o;
          if (pick_g) last_q <= pick;
        end
      end
    end
  endgenerate
endmodule
`default_nettype wire
