// sephirot_grant: the map grant of several cores in four modes (shared, apart, write, exclusive), round robin.
`default_nettype none
`include "sephirot_params.vh"

// Execution contract section 8 "The grant": a core's row that touches the map memory (a lane's access in the map
// memory or an off-chip tier, a map helper, a BPF atomic there) asks for the grant in its first cycle (req_i), in
// the mode its core says: exclusive (excl_i), else write (wr_i: its lanes store in the map memory), else apart
// (ap_i: it writes its own per-CPU copy, or its helper reads a key or buffer in a writable value), else shared (it
// only reads). It runs only while its core holds it; the holder keeps it to the row's last cycle (keep_i: the row
// stalls on, or its taken-branch or conditional-exit bubble, a part of its cost), and from spin_lock's row to the
// end of spin_unlock's (keep_i too: spin_lock's row is exclusive, so the lock keeps it exclusive), then the next
// row asking may start in the following cycle. Modes held together: shared with shared, apart and write; apart with
// apart; so at most one writer, beside shared rows only, and exclusive alone. In a cycle in which no core keeps it
// exclusive, the cores asking are walked from the one after the last core granted (k+1, k+2, ..., CORES-1, 0, ...;
// core 0 first after reset): the first decides, granted when its mode goes with every mode kept this cycle, and its
// mode stands for the others granted or not; each next one is granted when its mode goes with the kept modes, the
// first's and those granted before it in the walk. The deciding core, granted, is the last core granted. The answer
// is combinational (the row starts in the cycle it is granted), from the requests and registers. x_o / xk_o: the
// grant is held exclusive this cycle, by core xk_o (the one whose ports reach the off-chip tiers and write every
// copy of the map memory, sephirot_top); w_o / wk_o: in write mode by core wk_o (whose lane stores reach every
// copy). With one core the grant is always held, exclusive.
module sephirot_grant #(
  parameter integer CORES = 1,
  parameter integer KW    = (CORES > 1) ? $clog2(CORES) : 1   // bits of a core's number
) (
  input  wire             clk_i,
  input  wire             rst_ni,
  input  wire [CORES-1:0] req_i,
  input  wire [CORES-1:0] excl_i,      // core k's asking row wants it exclusive
  input  wire [CORES-1:0] wr_i,        // (not exclusive) in write mode
  input  wire [CORES-1:0] ap_i,        // (not exclusive, not write) apart
  input  wire [CORES-1:0] keep_i,
  output reg  [CORES-1:0] gnt_o,       // the cores holding it this cycle
  output reg              x_o,         // it is held exclusive this cycle
  output reg  [KW-1:0]    xk_o,        // by this core (valid with x_o)
  output reg              w_o,         // it is held in write mode this cycle
  output reg  [KW-1:0]    wk_o         // by this core (valid with w_o)
);
  generate
    if (CORES == 1) begin : gen_one
      always @(*) begin gnt_o = 1'b1; x_o = 1'b1; xk_o = 1'b0; w_o = 1'b0; wk_o = 1'b0; end
      wire unused = &{1'b0, clk_i, rst_ni, req_i, excl_i, wr_i, ap_i, keep_i};
    end else begin : gen_rr
      localparam integer LAST0 = CORES - 1;
      reg [CORES-1:0] own_q;          // the cores keeping the grant this cycle (their rows go on)
      reg [CORES-1:0] ap_q;           // those of them keeping it apart
      reg             ownx_q, ownw_q; // the grant is kept exclusive, in write mode
      reg [KW-1:0]    ownk_q, ownwk_q, last_q; // the core keeping it exclusive, in write mode; the last granted
      wire [CORES-1:0] ask = req_i & ~own_q;
      wire [CORES-1:0] mw = wr_i & ~excl_i;             // each asker's mode: write,
      wire [CORES-1:0] mp = ap_i & ~wr_i & ~excl_i;     // apart (the others shared, or exclusive)
      wire [KW-1:0]   pick;           // the asker that decides: the first after the last core granted
      wire            pick_v;
      reg             pick_g;
      reg             sw, sp;         // a writer, an apart row, keeps the grant, is granted or decides
      reg [KW:0]      cand;           // (pick + j < 2 CORES: one bit more than a number)
      reg [KW-1:0]    c;
      integer         j;
      sephirot_rrpick #(.N(CORES), .KW(KW)) u_pick (.req_i(ask), .last_i(last_q), .pick_o(pick), .any_o(pick_v));
      always @(*) begin
        gnt_o = own_q; x_o = ownx_q; xk_o = ownk_q; w_o = ownw_q; wk_o = ownwk_q; pick_g = 1'b0;
        sw = ownw_q; sp = |ap_q; cand = {(KW+1){1'b0}}; c = {KW{1'b0}};
        if (!ownx_q && pick_v) begin
          if (excl_i[pick]) begin
            // alone: when no row keeps the grant; its mode stands either way (nobody else is granted)
            if (own_q == {CORES{1'b0}}) begin gnt_o[pick] = 1'b1; x_o = 1'b1; xk_o = pick; pick_g = 1'b1; end
          end else begin
            if (mw[pick] ? !(sw || sp) : mp[pick] ? !sw : 1'b1) begin
              gnt_o[pick] = 1'b1; pick_g = 1'b1;
              if (mw[pick]) begin w_o = 1'b1; wk_o = pick; end
            end
            if (mw[pick]) sw = 1'b1;
            if (mp[pick]) sp = 1'b1;
            for (j = 1; j < CORES; j = j + 1) begin
              cand = {1'b0, pick} + j[KW:0];
              if (cand >= CORES[KW:0]) cand = cand - CORES[KW:0];
              c = cand[KW-1:0];
              if (ask[c] && !excl_i[c]) begin
                if (mw[c]) begin
                  if (!sw && !sp) begin gnt_o[c] = 1'b1; w_o = 1'b1; wk_o = c; sw = 1'b1; end
                end else if (mp[c]) begin
                  if (!sw) begin gnt_o[c] = 1'b1; sp = 1'b1; end
                end else gnt_o[c] = 1'b1;
              end
            end
          end
        end
      end
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          own_q <= {CORES{1'b0}}; ap_q <= {CORES{1'b0}}; ownx_q <= 1'b0; ownw_q <= 1'b0; ownk_q <= {KW{1'b0}};
          ownwk_q <= {KW{1'b0}}; last_q <= LAST0[KW-1:0];
        end else begin
          own_q <= gnt_o & keep_i; ap_q <= gnt_o & keep_i & ((own_q & ap_q) | (~own_q & mp));
          ownx_q <= x_o && keep_i[xk_o]; ownk_q <= xk_o;
          ownw_q <= w_o && keep_i[wk_o]; ownwk_q <= wk_o;
          if (pick_g) last_q <= pick;
        end
      end
    end
  endgenerate
endmodule
`default_nettype wire
