// sephirot_div: the core's unsigned 64-bit divider, restoring, BITS quotient bits per cycle (multi-cycle).
`default_nettype none
`include "sephirot_params.vh"

// The operands come straight from the row being executed, which stays in place while the core stalls it
// (execution contract section 6: each div/mod lane costs its row DIV_EXTRA_CYCLES more), so they are not latched: the
// divider only keeps the partial remainder and the quotient. first_i starts a division (partial remainder 0).
// quot_o/rem_o are the quotient and remainder after this cycle's step: in the 64/BITS-th cycle with run_i high
// they are n_i / d_i and n_i % d_i (d_i = 0: all ones and n_i), so the result is taken as the division ends.
module sephirot_div #(
  parameter integer BITS = `SEPH_DIV_BITS_PER_CYCLE
) (
  input  wire        clk_i,
  input  wire        run_i,     // do one cycle of the division
  input  wire        first_i,   // this is its first cycle
  input  wire [63:0] n_i,       // dividend
  input  wire [63:0] d_i,       // divisor
  output wire [63:0] quot_o,
  output wire [63:0] rem_o
);
  localparam integer STEPS = 64 / BITS;
  localparam integer CW = $clog2(STEPS);

  reg [63:0]   rem_q, quot_q;
  reg [CW-1:0] step_q;          // cycles done (0 on the first cycle)

  // the dividend bits of this cycle, most significant first
  wire [CW-1:0] step = first_i ? {CW{1'b0}} : step_q;
  wire [5:0]    top  = 6'd63 - BITS[5:0] * {{(6-CW){1'b0}}, step};
  wire [BITS-1:0] nbits = n_i[top -: BITS];

  reg [64:0]     r;
  reg [65:0]     diff;
  reg [63:0]     rem_d, quot_d;
  reg [BITS-1:0] qbits;
  integer k;
  always @(*) begin
    rem_d = first_i ? 64'd0 : rem_q;
    qbits = {BITS{1'b0}};
    r = 65'd0;
    diff = 66'd0;
    if (run_i)  // only while dividing (the simulation skips the steps otherwise)
    for (k = BITS - 1; k >= 0; k = k - 1) begin
      r = {rem_d, nbits[k]};
      diff = {1'b0, r} - {2'b0, d_i};   // one carry chain: its borrow is the comparison
      if (!diff[65]) begin
        r = diff[64:0];
        qbits[k] = 1'b1;
      end
      rem_d = r[63:0];
    end
    quot_d = ((first_i ? 64'd0 : quot_q) << BITS) | {{(64-BITS){1'b0}}, qbits};
  end

  always @(posedge clk_i) begin
    if (run_i) begin
      rem_q <= rem_d;
      quot_q <= quot_d;
      step_q <= step + {{(CW-1){1'b0}}, 1'b1};
    end
  end

  assign quot_o = quot_d;
  assign rem_o = rem_d;
endmodule
`default_nettype wire
