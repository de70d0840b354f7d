// sephirot_atomic: the core's one read-modify-write unit, for the row's atomic (a row has at most one).
`default_nettype none
`include "sephirot_isa.vh"
`include "sephirot_params.vh"

// A row with an atomic has no other memory access and no second atomic (execution contract, memory), so one unit
// serves the four lanes: it takes the operands of the lowest atomic lane and returns the value that lane stores.
// (One per lane was about 370 LUTs each in yosys.) The lane keeps the rest: the old value it returns, the
// register it writes, the illegal-operation check.
module sephirot_atomic #(
  parameter integer LANES = `SEPH_LANES
) (
  input  wire [LANES-1:0]    atom_i,      // lanes whose slot is an atomic
  input  wire [8*LANES-1:0]  aop_i,       // per lane: the operation (imm[7:0])
  input  wire [LANES-1:0]    is64_i,      // per lane: a 64-bit access (else 32)
  input  wire [64*LANES-1:0] old_i,       // per lane: the bytes its load returns (the memory before the row)
  input  wire [64*LANES-1:0] src_i,       // per lane: its src register
  input  wire [63:0]         r0_i,        // r0 before the row (cmpxchg compares with it)
  output reg  [63:0]         new_o        // the value the atomic lane stores
);
  // the operands of the lowest atomic lane (AND-OR of one-hot selects: a part-select at 64 * lane is a shifter)
  reg [LANES-1:0] first;
  reg [7:0]       aop;
  reg             a64;
  reg [63:0]      old, src;
  integer k;
  always @(*) begin
    first = atom_i & (~atom_i + {{(LANES-1){1'b0}}, 1'b1});
    aop = 8'd0; a64 = 1'b0; old = 64'd0; src = 64'd0;
    for (k = 0; k < LANES; k = k + 1)
      if (first[k]) begin
        aop = aop_i[8*k +: 8]; a64 = is64_i[k]; old = old_i[64*k +: 64]; src = src_i[64*k +: 64];
      end
  end

  wire [63:0] amask = a64 ? 64'hFFFF_FFFF_FFFF_FFFF : 64'h0000_0000_FFFF_FFFF;
  wire [63:0] aold  = old & amask;
  wire [63:0] asrc  = src & amask;
  always @(*) begin
    new_o = 64'd0;
    if (|atom_i) begin   // (the simulation skips the rows without an atomic)
      case (aop & 8'hF0)
        `SEPH_ATOMIC_ADD:                new_o = (aold + asrc) & amask;
        `SEPH_ATOMIC_OR:                 new_o = aold | asrc;
        `SEPH_ATOMIC_AND:                new_o = aold & asrc;
        `SEPH_ATOMIC_XOR:                new_o = aold ^ asrc;
        `SEPH_ATOMIC_XCHG & 8'hF0:       new_o = asrc;
        default:                         new_o = ((r0_i & amask) == aold) ? asrc : aold;   // cmpxchg
      endcase
    end
  end
endmodule
`default_nettype wire
