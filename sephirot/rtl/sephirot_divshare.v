// sephirot_divshare: the core's one divider, shared by the dividing lanes of a row in lane order.
`default_nettype none
`include "sephirot_params.vh"

// A row with k div/mod lanes stalls k * DIV_EXTRA_CYCLES cycles (execution contract section 6): the lowest lane
// whose division is pending runs in sephirot_div, then the next. The row stays in place while it stalls, so the
// operands are not latched. In the last step of a division its result, fixed up for the lane's form, goes to the
// lane's hold register, which the lane reads when the row commits.
// A division is unsigned on absolute values; signed forms and a zero divisor are fixed around it (eBPF: x / 0 = 0,
// x % 0 = x; the quotient's sign is a's xor b's, the remainder's is a's).
module sephirot_divshare #(
  parameter integer LANES = `SEPH_LANES
) (
  input  wire                clk_i,
  input  wire                rst_ni,
  input  wire                run_i,       // the row is stalled for a pending division: run one step of it
  input  wire                clear_i,     // the row leaves (commits or ends the packet): forget its divisions
  input  wire [LANES-1:0]    div_i,       // lanes with a div/mod
  input  wire [64*LANES-1:0] a_i,         // per lane: dividend, divisor (before truncation to 32 bits)
  input  wire [64*LANES-1:0] b_i,
  input  wire [LANES-1:0]    signed_i,    // sdiv/smod
  input  wire [LANES-1:0]    mod_i,       // mod (else div)
  input  wire [LANES-1:0]    is64_i,
  output wire                pending_o,   // a division of the row has not run yet: the row waits
  output reg  [64*LANES-1:0] res_o        // per lane: quotient or remainder (valid once pending_o is low)
);
  localparam integer STEPS = `SEPH_DIV_EXTRA_CYCLES;
  localparam integer SW = $clog2(STEPS + 1);
  localparam integer LB = (LANES > 1) ? $clog2(LANES) : 1;

  reg  [LANES-1:0] done_q;                 // lanes whose division has run
  reg  [SW-1:0]    step_q;                 // steps of the current division
  wire [LANES-1:0] pend = div_i & ~done_q;
  assign pending_o = |pend;

  // the lane dividing now: the lowest pending one, and its operands (muxes written out: a part-select at 64 * cur
  // becomes a 256-bit shifter in yosys)
  reg [LB-1:0] cur;
  reg [63:0]   ra, rb;
  reg          w64, sg, md;
  integer ci;
  always @(*) begin
    cur = {LB{1'b0}};
    for (ci = LANES - 1; ci >= 0; ci = ci - 1) if (pend[ci]) cur = ci[LB-1:0];
    ra = a_i[63:0]; rb = b_i[63:0]; w64 = is64_i[0]; sg = signed_i[0]; md = mod_i[0];
    for (ci = 1; ci < LANES; ci = ci + 1)
      if (cur == ci[LB-1:0]) begin
        ra = a_i[64*ci +: 64]; rb = b_i[64*ci +: 64]; w64 = is64_i[ci]; sg = signed_i[ci]; md = mod_i[ci];
      end
  end

  // its operands at its width, with their signs
  wire [63:0] a = w64 ? ra : {32'd0, ra[31:0]};
  wire [63:0] b = w64 ? rb : {32'd0, rb[31:0]};
  wire        a_neg = sg && (w64 ? a[63] : a[31]);
  wire        b_neg = sg && (w64 ? b[63] : b[31]);
  wire [63:0] n_abs = a_neg ? (w64 ? -a : {32'd0, -a[31:0]}) : a;
  wire [63:0] d_abs = b_neg ? (w64 ? -b : {32'd0, -b[31:0]}) : b;
  wire [63:0] q_abs, r_abs;
  wire        last = (step_q == STEPS[SW-1:0] - {{(SW-1){1'b0}}, 1'b1});
  sephirot_div u_div (
    .clk_i(clk_i), .run_i(run_i), .first_i(step_q == {SW{1'b0}}), .n_i(n_abs), .d_i(d_abs), .quot_o(q_abs),
    .rem_o(r_abs)
  );
  // one negation for either result: the remainder takes a's sign, the quotient a's xor b's
  wire [63:0] x = md ? r_abs : q_abs;
  wire        neg = md ? a_neg : (a_neg ^ b_neg);
  wire [63:0] fixed = (b == 64'd0) ? (md ? a : 64'd0) : (neg ? -x : x);

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      done_q <= {LANES{1'b0}};
      step_q <= {SW{1'b0}};
    end else if (clear_i) begin
      done_q <= {LANES{1'b0}};
      step_q <= {SW{1'b0}};
    end else if (run_i) begin
      step_q <= last ? {SW{1'b0}} : step_q + {{(SW-1){1'b0}}, 1'b1};
      if (last) done_q[cur] <= 1'b1;
    end
  end
  genvar gl;
  generate
    for (gl = 0; gl < LANES; gl = gl + 1) begin : gen_hold
      always @(posedge clk_i) if (!clear_i && run_i && last && cur == gl) res_o[64*gl +: 64] <= fixed;
    end
  endgenerate
endmodule
`default_nettype wire
