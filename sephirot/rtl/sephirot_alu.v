// sephirot_alu: one lane's eBPF ALU/ALU64 (movsx, shifts, byte swaps; mul, div and mod come from the core's shared units).
`default_nettype none
`include "sephirot_isa.vh"

module sephirot_alu (
  input  wire [3:0]  op_i,     // ALU operation (opcode[7:4]); neg and end have their own codes
  input  wire        is64_i,   // ALU64 (1) or ALU (0)
  input  wire        swap_i,   // end: byte swap (be/bswap) rather than truncate (le)
  input  wire [63:0] a_i,      // first operand (dst, or src for the three-operand forms)
  input  wire [63:0] b_i,      // second operand (src register or sign-extended imm)
  input  wire [15:0] off_i,    // selects movsx (8/16/32)
  input  wire [31:0] imm_i,    // end/bswap width
  input  wire [63:0] div_i,    // div/mod: this lane's quotient or remainder from the core's shared divider
  input  wire [63:0] mul_i,    // mul: the product of this lane's operands from the core's multiplier (low 64 bits)
  output reg  [63:0] res_o,
  output wire        below_o   // sub: a < b, unsigned, at the operation width (a jump lane's comparison)
);
  // The operands are not truncated to 32 bits for ALU32: the low word of a sum, difference, product, bitwise
  // operation or left shift depends on the operands' low words only, and the result is truncated below; a right
  // shift takes a zero- or sign-extended low word, and a 32-bit compare the carry out of the low word (two 64-bit
  // truncation multiplexers less)
  wire [63:0] a = a_i;
  wire [63:0] b = b_i;

  // one shifter for lsh, rsh and arsh: a left shift is a right shift of the bit-reversed operand
  wire [5:0]  sh = is64_i ? b[5:0] : {1'b0, b[4:0]};
  wire        is_lsh  = (op_i == `SEPH_ALU_LSH);
  wire        is_arsh = (op_i == `SEPH_ALU_ARSH);
  reg  [63:0] a_rev, shr_rev;
  integer     ri;
  always @(*) begin  // only for lsh (the simulation skips the bit loop otherwise)
    a_rev = 64'd0;
    if (is_lsh) for (ri = 0; ri < 64; ri = ri + 1) a_rev[ri] = a[63-ri];
  end
  wire [63:0] shr_src = is_lsh ? a_rev : is64_i ? a : {is_arsh ? {32{a[31]}} : 32'd0, a[31:0]};
  wire        shr_fill = is_arsh && (is64_i ? a[63] : a[31]);
  // (an arithmetic shift of the fill bit and the operand: a separate shift of the fill mask was a second shifter)
  wire signed [64:0] shr_x = {shr_fill, shr_src};
  wire [64:0] shr_full = shr_x >>> sh;
  wire [63:0] shr = shr_full[63:0];
  always @(*) begin
    shr_rev = 64'd0;
    if (is_lsh) for (ri = 0; ri < 64; ri = ri + 1) shr_rev[ri] = shr[63-ri];
  end

  // movsx: sign-extend the low off bits of the source
  reg  [63:0] movv;
  always @(*) begin
    case (off_i)
      16'd8:   movv = {{56{b_i[7]}}, b_i[7:0]};
      16'd16:  movv = {{48{b_i[15]}}, b_i[15:0]};
      16'd32:  movv = is64_i ? {{32{b_i[31]}}, b_i[31:0]} : b_i;
      default: movv = b_i;
    endcase
  end

  // byte swaps (result zero-extended)
  reg  [63:0] endv;
  always @(*) begin
    case (imm_i)
      32'd16:  endv = swap_i ? {48'd0, a_i[7:0], a_i[15:8]} : {48'd0, a_i[15:0]};
      32'd32:  endv = swap_i ? {32'd0, a_i[7:0], a_i[15:8], a_i[23:16], a_i[31:24]} : {32'd0, a_i[31:0]};
      default: endv = swap_i ? {a_i[7:0], a_i[15:8], a_i[23:16], a_i[31:24], a_i[39:32], a_i[47:40],
                                a_i[55:48], a_i[63:56]} : a_i;
    endcase
  end

  // one adder for add, sub and neg (a - b = a + ~b + 1, -a = 0 + ~a + 1)
  wire        is_sub = (op_i == `SEPH_ALU_SUB) || (op_i == `SEPH_ALU_NEG);
  wire [63:0] add_x  = (op_i == `SEPH_ALU_NEG) ? 64'd0 : a;
  wire [63:0] add_y  = (op_i == `SEPH_ALU_NEG) ? a : b;
  wire [63:0] add_yy = is_sub ? ~add_y : add_y;
  wire [32:0] sum_lo = {1'b0, add_x[31:0]} + {1'b0, add_yy[31:0]} + {32'd0, is_sub};
  wire [32:0] sum_hi = {1'b0, add_x[63:32]} + {1'b0, add_yy[63:32]} + {32'd0, sum_lo[32]};
  wire [63:0] sum    = {sum_hi[31:0], sum_lo[31:0]};
  assign below_o = !(is64_i ? sum_hi[32] : sum_lo[32]);   // a - b borrows, at the operation width

  reg [63:0] r;
  always @(*) begin
    case (op_i)
      `SEPH_ALU_ADD:  r = sum;
      `SEPH_ALU_SUB:  r = sum;
      `SEPH_ALU_MUL:  r = mul_i;   // (its low 32 bits depend on the operands' low 32 bits only)
      `SEPH_ALU_DIV:  r = div_i;
      `SEPH_ALU_OR:   r = a | b;
      `SEPH_ALU_AND:  r = a & b;
      `SEPH_ALU_LSH:  r = shr_rev;
      `SEPH_ALU_RSH:  r = shr;
      `SEPH_ALU_NEG:  r = sum;
      `SEPH_ALU_MOD:  r = div_i;
      `SEPH_ALU_XOR:  r = a ^ b;
      `SEPH_ALU_MOV:  r = movv;
      `SEPH_ALU_ARSH: r = shr;
      `SEPH_ALU_END:  r = endv;
      default:        r = 64'd0;
    endcase
    res_o = (is64_i || op_i == `SEPH_ALU_END) ? r : {32'd0, r[31:0]};
  end
endmodule
`default_nettype wire
