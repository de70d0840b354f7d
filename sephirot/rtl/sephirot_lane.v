// sephirot_lane: decode and execute one 64-bit slot of a row (ALU, branch condition, address, load formatting).
`default_nettype none
`include "sephirot_isa.vh"
`include "sephirot_params.vh"

module sephirot_lane #(
  parameter integer AW = `SEPH_IMEM_AW
) (
  input  wire [63:0]   slot_i,        // this lane's slot
  input  wire [31:0]   next_op_i,     // the next lane's opcode/regs/off (all 0 for an lddw high half)
  input  wire [31:0]   next_imm_i,    // the next lane's imm (lddw high word)
  input  wire          lddw_hi_i,     // this slot is the high half of the previous lane's lddw
  input  wire          has_next_i,    // a next lane exists
  input  wire [AW-1:0] pc_i,          // row index of this row
  input  wire [63:0]   dst_val_i,
  input  wire [63:0]   src_val_i,
  input  wire [63:0]   ld_data_i,     // bytes read at mem_addr_o (little endian, zero above mem_size_o)
  output wire          is_atomic_o,   // an atomic: sephirot_atomic computes the value it stores
  output wire          atomic_is64_o, // ... on 64 bits (else 32)
  input  wire [63:0]   atomic_new_i,
  // register write
  output reg           wr_en_o,
  output reg  [3:0]    wr_idx_o,
  output wire [63:0]   wr_val_o,
  // memory access
  output reg           mem_rd_o,
  output reg           mem_wr_o,
  output wire [63:0]   mem_addr_o,
  output reg  [3:0]    mem_size_o,
  output wire [63:0]   mem_wdata_o,
  // control
  output reg           is_branch_o,   // a jump lane (conditional or not)
  output reg           is_jump_o,     // an unconditional jump (ja, gotol): taken whatever the registers hold
  output reg           br_taken_o,
  output reg  [31:0]   br_target_o,   // row index, may be out of range
  output reg           is_exit_o,
  output reg           exit_imm_o,    // exit with action (0x96): action is imm
  output wire [31:0]   imm_o,
  output reg           is_call_o,
  output reg           is_div_o,      // an ALU div/mod: the row waits for the core's divider
  output wire [63:0]   div_a_o,       // its operands and form, for sephirot_divshare
  output wire [63:0]   div_b_o,
  output wire          div_signed_o,
  output wire          div_mod_o,
  output wire          div_is64_o,
  input  wire [63:0]   div_res_i,
  output wire          is_mul_o,      // a mul (32 or 64 bit): its operands are div_a_o and div_b_o
  input  wire [63:0]   mul_res_i,     // their product from the core's multiplier
  output reg           illegal_o
);
  localparam [255:0] SUPPORTED = `SEPH_OP_SUPPORTED_MASK;
  localparam [3:0]   FP = `SEPH_FP_REG;

  wire [7:0]  opcode = slot_i[7:0];
  wire [3:0]  dst    = slot_i[11:8];
  wire [3:0]  src    = slot_i[15:12];
  wire [15:0] off    = slot_i[31:16];
  wire [31:0] imm    = slot_i[63:32];
  wire [2:0]  cls    = opcode[2:0];
  wire [3:0]  code   = opcode[7:4];
  wire        use_x  = opcode[3];
  wire [63:0] imm64  = {{32{imm[31]}}, imm};
  wire [63:0] offx   = {{48{off[15]}}, off};
  assign imm_o = imm;

  wire is_alu   = (cls == `SEPH_CLASS_ALU) || (cls == `SEPH_CLASS_ALU64);
  wire is_jmpc  = (cls == `SEPH_CLASS_JMP) || (cls == `SEPH_CLASS_JMP32);
  // three-operand ALU: the original hXDP core's encodings and operations (0xD7 stays RFC 9669 BSWAP here)
  wire alu3_64  = (opcode == `SEPH_OP_ADD64_3) || (opcode == `SEPH_OP_OR64_3) || (opcode == `SEPH_OP_AND64_3) ||
                  (opcode == `SEPH_OP_LSH64_3) || (opcode == `SEPH_OP_RSH64_3) || (opcode == `SEPH_OP_XOR64_3);
  wire alu3_32  = (opcode == `SEPH_OP_ADD32_3) || (opcode == `SEPH_OP_SUB32_3) || (opcode == `SEPH_OP_LSH32_3) ||
                  (opcode == `SEPH_OP_RSH32_3) || (opcode == `SEPH_OP_XOR32_3) || (opcode == `SEPH_OP_AND32_3) ||
                  (opcode == `SEPH_OP_OR32_3);
  wire is_alu3  = alu3_64 || alu3_32;
  reg  [3:0] alu3_op;
  always @(*) begin
    case (opcode)
      `SEPH_OP_ADD64_3, `SEPH_OP_ADD32_3: alu3_op = `SEPH_ALU_ADD;
      `SEPH_OP_SUB32_3:                   alu3_op = `SEPH_ALU_SUB;
      `SEPH_OP_AND64_3, `SEPH_OP_AND32_3: alu3_op = `SEPH_ALU_AND;
      `SEPH_OP_LSH64_3, `SEPH_OP_LSH32_3: alu3_op = `SEPH_ALU_LSH;
      `SEPH_OP_RSH64_3, `SEPH_OP_RSH32_3: alu3_op = `SEPH_ALU_RSH;
      `SEPH_OP_OR64_3,  `SEPH_OP_OR32_3:  alu3_op = `SEPH_ALU_OR;
      default:                            alu3_op = `SEPH_ALU_XOR;
    endcase
  end

  wire is_end   = (opcode == `SEPH_OP_LE) || (opcode == `SEPH_OP_BE) || (opcode == `SEPH_OP_BSWAP);
  wire is_nop   = (slot_i == 64'd0);
  wire is_lddw = (opcode == `SEPH_OP_LDDW);
  wire is_exit  = (opcode == `SEPH_OP_EXIT);
  wire is_exita = (opcode == `SEPH_OP_EXIT_ACTION);
  wire is_call  = (opcode == `SEPH_OP_CALL);
  wire is_ja    = (opcode == `SEPH_OP_JA) || (opcode == `SEPH_OP_GOTOL);
  wire is_ldx   = (cls == `SEPH_CLASS_LDX) && (opcode[7:5] == `SEPH_MODE_MEM);
  wire is_ldxsx = (cls == `SEPH_CLASS_LDX) && (opcode[7:5] == `SEPH_MODE_MEMSX);
  wire is_st    = (cls == `SEPH_CLASS_ST) && (opcode[7:5] == `SEPH_MODE_MEM);
  wire is_stx   = (cls == `SEPH_CLASS_STX) && (opcode[7:5] == `SEPH_MODE_MEM);
  wire is_atom  = (cls == `SEPH_CLASS_STX) && (opcode[7:5] == `SEPH_MODE_ATOMIC);
  wire is_ldx6  = (opcode == `SEPH_OP_LDX6);
  wire is_stx6  = (opcode == `SEPH_OP_STX6);
  wire is_st6   = (opcode == `SEPH_OP_ST6);

  reg [3:0] size_bytes;
  always @(*) begin
    case (opcode[4:3])
      `SEPH_SIZE_W:  size_bytes = 4'd4;
      `SEPH_SIZE_H:  size_bytes = 4'd2;
      `SEPH_SIZE_B:  size_bytes = 4'd1;
      default:       size_bytes = 4'd8;
    endcase
  end

  // ALU
  // a conditional jump subtracts its operands in the ALU (at 32 or 64 bits) for the unsigned comparison
  wire        alu_is64 = is_alu3 ? alu3_64 : is_jmpc ? (cls == `SEPH_CLASS_JMP) : (cls == `SEPH_CLASS_ALU64) || is_end;
  wire [3:0]  alu_op   = is_alu3 ? alu3_op : is_jmpc ? `SEPH_ALU_SUB : (is_end ? `SEPH_ALU_END : code);
  wire [63:0] alu_a    = is_alu3 ? src_val_i : dst_val_i;
  wire [63:0] alu_b    = (is_alu3 || !use_x) ? imm64 : src_val_i;
  wire        off_used = !is_alu3 && use_x && (code == `SEPH_ALU_MOV);
  wire [63:0] alu_res;
  wire        alu_below;
  sephirot_alu u_alu (
    .op_i(alu_op), .is64_i(alu_is64), .swap_i(opcode != `SEPH_OP_LE), .a_i(alu_a), .b_i(alu_b),
    .off_i(off_used ? off : 16'd0), .imm_i(imm), .div_i(div_res_i), .mul_i(mul_res_i), .res_o(alu_res),
    .below_o(alu_below)
  );
  assign div_a_o = alu_a;
  assign div_b_o = alu_b;
  assign div_signed_o = (off == 16'd1);
  assign div_mod_o = (code == `SEPH_ALU_MOD);
  assign div_is64_o = alu_is64;
  assign is_mul_o = is_alu && !is_alu3 && code == `SEPH_ALU_MUL && !lddw_hi_i;

  // branch condition
  // dst against the ALU's second operand (src or the immediate, as a jump is not a three-operand form); jmp32
  // ignores the high words' compares rather than truncating the operands (a 64-bit multiplexer per operand)
  wire        j32  = (cls == `SEPH_CLASS_JMP32);
  wire        sa   = j32 ? dst_val_i[31] : dst_val_i[63];
  wire        sb   = j32 ? alu_b[31] : alu_b[63];
  wire        ult  = alu_below;
  wire        slt  = (sa != sb) ? sa : ult;
  wire        eq   = dst_val_i[31:0] == alu_b[31:0] && (j32 || dst_val_i[63:32] == alu_b[63:32]);
  wire        jset = (dst_val_i[31:0] & alu_b[31:0]) != 32'd0 ||
                     (!j32 && (dst_val_i[63:32] & alu_b[63:32]) != 32'd0);
  reg         cond;
  always @(*) begin
    case (code)
      `SEPH_JMP_JEQ:  cond = eq;
      `SEPH_JMP_JGT:  cond = !ult && !eq;
      `SEPH_JMP_JGE:  cond = !ult;
      `SEPH_JMP_JSET: cond = jset;
      `SEPH_JMP_JNE:  cond = !eq;
      `SEPH_JMP_JSGT: cond = !slt && !eq;
      `SEPH_JMP_JSGE: cond = !slt;
      `SEPH_JMP_JLT:  cond = ult;
      `SEPH_JMP_JLE:  cond = ult || eq;
      `SEPH_JMP_JSLT: cond = slt;
      `SEPH_JMP_JSLE: cond = slt || eq;
      default:        cond = 1'b0;
    endcase
  end
  wire [31:0] pc32 = {{(32-AW){1'b0}}, pc_i};
  wire [31:0] jmp_off = (opcode == `SEPH_OP_GOTOL) ? imm : {{16{off[15]}}, off};

  // memory address: base register + off (64-bit; bits 63:32 must be zero for a valid pointer)
  wire        base_is_src = is_ldx || is_ldxsx || is_ldx6;
  assign mem_addr_o = (base_is_src ? src_val_i : dst_val_i) + offx;

  // atomics
  wire [7:0]  aop      = imm[7:0];
  wire        aop_ok   = (imm[31:8] == 24'd0) && (aop == `SEPH_ATOMIC_ADD || aop == `SEPH_ATOMIC_OR ||
                          aop == `SEPH_ATOMIC_AND || aop == `SEPH_ATOMIC_XOR || aop == `SEPH_ATOMIC_FETCH_ADD ||
                          aop == `SEPH_ATOMIC_FETCH_OR || aop == `SEPH_ATOMIC_FETCH_AND ||
                          aop == `SEPH_ATOMIC_FETCH_XOR || aop == `SEPH_ATOMIC_XCHG || aop == `SEPH_ATOMIC_CMPXCHG);
  wire        a64      = (opcode[4:3] == `SEPH_SIZE_DW);
  wire [63:0] amask    = a64 ? 64'hFFFF_FFFF_FFFF_FFFF : 64'h0000_0000_FFFF_FFFF;
  wire [63:0] aold     = ld_data_i & amask;
  reg [63:0] ld_val;
  always @(*) begin
    ld_val = ld_data_i;
    if (is_ldxsx) begin
      case (opcode[4:3])
        `SEPH_SIZE_B: ld_val = {{56{ld_data_i[7]}}, ld_data_i[7:0]};
        `SEPH_SIZE_H: ld_val = {{48{ld_data_i[15]}}, ld_data_i[15:0]};
        default:      ld_val = {{32{ld_data_i[31]}}, ld_data_i[31:0]};
      endcase
    end
  end

  // register write value and store data (the load-dependent parts are kept out of the decode block)
  reg [1:0] wr_sel;    // 0 ALU, 1 load, 2 atomic old value
  reg       wr_imm64;  // lddw
  reg       wd_imm;    // store of the immediate
  assign wr_val_o    = wr_imm64 ? {next_imm_i, imm} : (wr_sel == 2'd1) ? ld_val : (wr_sel == 2'd2) ? aold : alu_res;
  assign mem_wdata_o = is_atom ? atomic_new_i : (wd_imm ? imm64 : src_val_i);
  assign is_atomic_o = is_atom;
  assign atomic_is64_o = a64;

  always @(*) begin
    wr_en_o = 1'b0; wr_idx_o = dst; wr_sel = 2'd0; wr_imm64 = 1'b0;
    mem_rd_o = 1'b0; mem_wr_o = 1'b0; mem_size_o = size_bytes; wd_imm = 1'b0;
    is_branch_o = 1'b0; is_jump_o = 1'b0; br_taken_o = 1'b0; br_target_o = pc32 + 32'd1 + jmp_off;
    is_exit_o = 1'b0; exit_imm_o = 1'b0; is_call_o = 1'b0; is_div_o = 1'b0; illegal_o = 1'b0;
    if (lddw_hi_i || is_nop) begin
      // second half of lddw, or an empty slot: nothing
    end else if (!SUPPORTED[opcode]) begin
      illegal_o = 1'b1;
    end else if (is_lddw) begin
      wr_en_o = 1'b1; wr_imm64 = 1'b1;
      illegal_o = !has_next_i || (next_op_i != 32'd0) || (src != 4'd0);
    end else if (is_alu3 || is_alu || is_end) begin
      wr_en_o = 1'b1;
      if (is_end && imm != 32'd16 && imm != 32'd32 && imm != 32'd64) illegal_o = 1'b1;
      if (!is_alu3 && (code == `SEPH_ALU_DIV || code == `SEPH_ALU_MOD) && off != 16'd0 && off != 16'd1)
        illegal_o = 1'b1;
      is_div_o = is_alu && !is_alu3 && (code == `SEPH_ALU_DIV || code == `SEPH_ALU_MOD);
    end else if (is_exit || is_exita) begin
      is_exit_o = 1'b1; exit_imm_o = is_exita;
    end else if (is_call) begin
      is_call_o = 1'b1; illegal_o = (src != 4'd0);
    end else if (is_jmpc || is_ja) begin
      is_branch_o = 1'b1; is_jump_o = is_ja; br_taken_o = is_ja ? 1'b1 : cond;
    end else if (is_ldx || is_ldxsx || is_ldx6) begin
      mem_rd_o = 1'b1; wr_en_o = 1'b1; wr_sel = 2'd1;
      if (is_ldx6) mem_size_o = 4'd6;
    end else if (is_st || is_st6) begin
      mem_wr_o = 1'b1; wd_imm = 1'b1;
      if (is_st6) mem_size_o = 4'd6;
    end else if (is_stx || is_stx6) begin
      mem_wr_o = 1'b1;
      if (is_stx6) mem_size_o = 4'd6;
    end else if (is_atom) begin
      mem_rd_o = 1'b1; mem_wr_o = 1'b1;
      illegal_o = !aop_ok;
      if (aop == `SEPH_ATOMIC_CMPXCHG) begin
        wr_en_o = 1'b1; wr_idx_o = 4'd0; wr_sel = 2'd2;
      end else if (aop[0]) begin
        wr_en_o = 1'b1; wr_idx_o = src; wr_sel = 2'd2;
      end
    end else begin
      illegal_o = 1'b1;
    end
    if (wr_en_o && wr_idx_o == FP) illegal_o = 1'b1;
  end
endmodule
`default_nettype wire
