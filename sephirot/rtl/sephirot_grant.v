// sephirot_grant: the map grant of several cores: one holds it at a time, round robin among the cores asking.
`default_nettype none
`include "sephirot_params.vh"

// Execution contract section 8 "The grant": a core's row that touches the map memory (a lane's access in the map
// memory or an off-chip tier, a map helper, a BPF atomic there) asks for the grant in its first cycle (req_i) and
// runs only while its core holds it; the holder keeps it to the row's last cycle (keep_i: the row stalls on, or its
// taken-branch or conditional-exit bubble, a part of its cost), and from spin_lock's row to the end of
// spin_unlock's (keep_i too), then the next holder's row starts in the following cycle. Among the cores asking in one cycle the grant goes to the first after the last holder, in the
// order k+1, k+2, ..., CORES-1, 0, ... (core 0 first after reset): a core waits at most CORES-1 rows of the others.
// The answer is combinational (the row starts in the cycle it is granted), from the requests and two registers.
// With one core the grant is always held.
module sephirot_grant #(
  parameter integer CORES = 1,
  parameter integer KW    = (CORES > 1) ? $clog2(CORES) : 1   // bits of a core's number
) (
  input  wire             clk_i,
  input  wire             rst_ni,
  input  wire [CORES-1:0] req_i,
  input  wire [CORES-1:0] keep_i,
  output reg  [CORES-1:0] gnt_o,       // one-hot (or none)
  output reg  [KW-1:0]    holder_o,    // the core granted this cycle (valid with |gnt_o)
  output wire             any_o        // some core holds the grant this cycle
);
  generate
    if (CORES == 1) begin : gen_one
      always @(*) begin gnt_o = 1'b1; holder_o = 1'b0; end
      assign any_o = 1'b1;
      wire unused = &{1'b0, clk_i, rst_ni, req_i, keep_i};
    end else begin : gen_rr
      localparam integer LAST0 = CORES - 1;
      reg       own_q;                // the holder keeps the grant this cycle
      reg [KW-1:0] own_k_q, last_q;   // the core keeping it; the last core that held it
      reg [KW-1:0] pick;
      reg       pick_v;
      integer   j;
      /* verilator lint_off UNUSEDSIGNAL */
      integer   kk;                   // (a core's number: its low KW bits are used)
      /* verilator lint_on UNUSEDSIGNAL */
      always @(*) begin
        // the lowest distance from last_q wins: walk the distances down and overwrite
        pick = {KW{1'b0}}; pick_v = 1'b0; kk = 0;
        for (j = CORES; j >= 1; j = j - 1) begin
          kk = ({{(32-KW){1'b0}}, last_q} + j) % CORES;
          if (req_i[kk]) begin pick = kk[KW-1:0]; pick_v = 1'b1; end
        end
        holder_o = own_q ? own_k_q : pick;
        gnt_o = {CORES{1'b0}};
        if (own_q || pick_v) gnt_o[holder_o] = 1'b1;
      end
      assign any_o = own_q || pick_v;
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          own_q <= 1'b0; own_k_q <= {KW{1'b0}}; last_q <= LAST0[KW-1:0];
        end else if (any_o) begin
          own_q <= keep_i[holder_o]; own_k_q <= holder_o; last_q <= holder_o;
        end
      end
    end
  endgenerate
endmodule
`default_nettype wire
