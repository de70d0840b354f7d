// sephirot_core: four-lane VLIW core: fetch (synchronous imem), decode/execute, commit, stack, register file.
`default_nettype none
`include "sephirot_isa.vh"
`include "sephirot_params.vh"

// Pipeline (sephirot/README.md): IF reads the row from the synchronous instruction memory (row 0 is kept in a
// register so that a new packet starts without a fetch); ID/IE read the register file and the data memories and
// evaluate the four lanes; commit writes registers and memories at the clock edge, so row i+1 sees row i's
// results (full forwarding). Branches resolve in IE: the row fetched behind a taken branch is discarded (one
// bubble; not for a jump to the next row, nor for an unconditional jump that is its row's first branch or exit
// lane: its target is fetched in the row's last cycle). An exit with no branch lane before it ends the packet in
// its own cycle (early exit); the next packet's row 0 comes from the row-0 register in the next cycle.
module sephirot_core #(
  parameter integer LANES       = `SEPH_LANES,
  parameter integer IMEM_ROWS   = `SEPH_IMEM_ROWS,
  parameter integer AW          = `SEPH_IMEM_AW,
  parameter integer CYCLE_LIMIT = `SEPH_CYCLE_LIMIT
) (
  input  wire                  clk_i,
  input  wire                  rst_ni,
  // instruction memory write port (host)
  input  wire                  imem_we_i,
  input  wire [AW-1:0]         imem_waddr_i,
  input  wire [64*LANES-1:0]   imem_wdata_i,
  input  wire [AW:0]           imem_rows_i,     // rows of the program: running outside them is illegal
  // packet control
  input  wire                  pkt_ready_i,     // the next packet may start
  input  wire                  pkt_filled_i,    // every frame of the running packet has arrived
  input  wire [63:0]           init_r1_i,       // r1 at program start (CTX_BASE; raw mode: buffer pointer)
  input  wire [63:0]           init_r2_i,       // r2 at program start (0; raw mode: buffer length)
  output wire                  pkt_start_o,     // this cycle runs row 0 of a new packet
  output wire                  pkt_done_o,      // the packet ends at the end of this cycle
  output reg  [31:0]           res_action_o,
  output reg  [2:0]            res_fault_o,
  output reg  [63:0]           res_r0_o,
  output wire [31:0]           res_cycles_o,
  // data bus towards ctx, packet and maps (the stack is inside the core)
  output reg  [LANES-1:0]      dbus_rd_o,
  output reg  [LANES-1:0]      dbus_wr_o,
  output reg  [32*LANES-1:0]   dbus_addr_o,
  output reg  [32*LANES-1:0]   dbus_tag_o,      // bits 63:32 of each lane's pointer (a map-value tag, sephirot_mapguard)
  output reg  [4*LANES-1:0]    dbus_size_o,
  output reg  [64*LANES-1:0]   dbus_wdata_o,
  output wire                  dbus_commit_o,   // writes of this cycle take effect at the clock edge
  output reg                   dbus_hold_o,     // this cycle presents the row of the last one again (a stall)
  input  wire [64*LANES-1:0]   dbus_rdata_i,
  input  wire [LANES-1:0]      dbus_fault_i,
  input  wire [LANES-1:0]      dbus_wait_i,
  input  wire                  pkt_hold_i,      // the packet buffer finishes a deferred store, a zeroing or a move
  output wire                  dbus_go_o,       // the row runs (no fault, no arrival wait): off-chip reads may go out
  input  wire                  dbus_xwait_i,    // the row waits for off-chip map memory (sephirot_xmem: core cycles)
  // the map grant of several cores (sephirot_grant, execution contract section 8): a row touching the maps runs
  // only while its core holds the grant, and waits for it (not a core cycle)
  output wire                  gnt_req_o,       // the row in its first cycle needs the grant
  output wire                  gnt_excl_o,      // in the exclusive mode (else as gnt_wr_o and gnt_ap_o say)
  output wire                  gnt_wr_o,        // (not exclusive) in the write mode: its lanes store in the map memory
  output wire                  gnt_ap_o,        // (not exclusive) apart: it writes its per-CPU copy or a helper
                                                // reads a key or buffer in a writable value (else shared)
  input  wire                  gnt_i,           // this core holds the grant this cycle
  output wire                  gnt_keep_o,      // keep it next cycle: the row goes on, or a spin lock is held
  input  wire [LANES-1:0]      gnt_pcpu_i,      // each lane's address is in a per-CPU array (sephirot_percpu)
  input  wire [`SEPH_MAPS_MAX-1:0] gnt_lkx_i,   // a lookup of map id i is exclusive (sephirot_mapcfg)
  // helper port
  output wire                  hlp_req_o,
  output reg  [31:0]           hlp_id_o,
  output wire [64*5-1:0]       hlp_args_o,      // r1..r5 (r1 in the low bits)
  input  wire                  hlp_done_i,
  input  wire [63:0]           hlp_ret_i,
  input  wire                  hlp_illegal_i,
  input  wire                  hlp_fault_i,
  input  wire                  hlp_access_i,    // the helper's memory read faulted (access fault)
  input  wire                  hlp_tc_jump_i,   // the helper is a tail call that jumps to row hlp_tc_row_i
  input  wire [31:0]           hlp_tc_row_i,
  // helper memory read port (csum_diff, map keys): any region, read only
  input  wire                  hm_en_i,
  input  wire [31:0]           hm_addr_i,
  input  wire [3:0]            hm_size_i,
  output reg  [63:0]           hm_rdata_o,
  output reg                   hm_fault_o,
  // helper stack write port (fib_lookup's results): in the stall cycles of a row that stores nothing to the stack
  input  wire                  hs_en_i,
  input  wire [8:0]            hs_off_i,
  input  wire [3:0]            hs_size_i,
  input  wire [63:0]           hs_data_i,
  output reg                   hbus_rd_o,       // the helper port's access to ctx/packet/maps
  input  wire [63:0]           hbus_rdata_i,
  input  wire                  hbus_fault_i,
  output wire [63:0]           hlp_cycles_o,    // ktime_get_ns's cycle: the row's start (below)
  input  wire                  clock_en_i,      // several cores: ktime_get_ns reads the shared clock_i
  input  wire [63:0]           clock_i,         // the cycles since the first packet's first row (sephirot_top)
  // trace of the row committed (or faulted) this cycle
  output wire                  trc_valid_o,
  output wire [AW-1:0]         trc_pc_o,
  output reg  [LANES-1:0]      trc_wr_en_o,
  output reg  [4*LANES-1:0]    trc_wr_idx_o,
  output reg  [64*LANES-1:0]   trc_wr_val_o,
  output reg  [LANES-1:0]      trc_st_en_o,
  output reg  [32*LANES-1:0]   trc_st_addr_o,
  output reg  [4*LANES-1:0]    trc_st_size_o,
  output reg  [64*LANES-1:0]   trc_st_data_o,
  output wire                  trc_call_o,
  output wire [63:0]           trc_ret_o,       // the helper's r0
  output reg  [1:0]            trc_call_lane_o,
  output wire [31:0]           trc_cost_o,      // cycles of the row (stalls, taken-branch/exit bubble)
  output wire [31:0]           trc_next_o,      // next row
  output wire                  trc_exit_o,
  output wire [2:0]            trc_fault_o
);
  localparam integer SSZ = `SEPH_STACK_SIZE;
  localparam integer SAW = $clog2(SSZ);
  localparam integer MUL_N = `SEPH_MUL_UNITS;
  localparam integer CR_STACK = `SEPH_CALL_ROW_STACK_LOADS;
  localparam integer CR_PKT = `SEPH_CALL_ROW_PKT_LOADS;
  localparam integer CR_MAP = `SEPH_CALL_ROW_MAP_LOADS;
  localparam [3:0] R_STACK = `SEPH_REGION_STACK;
  localparam [3:0] R_CTX   = `SEPH_REGION_CTX;
  localparam [3:0] R_PKT   = `SEPH_REGION_PKT;
  localparam [3:0] R_MAP   = `SEPH_REGION_MAP;
  localparam [3:0] R_QDR   = `SEPH_REGION_QDR;
  localparam integer PKT_LD = `SEPH_PKT_LOAD_PORTS;
  localparam integer PKT_ST = `SEPH_PKT_STORE_PORTS;
  localparam integer MAP_LD = `SEPH_MAP_LOAD_PORTS;
  localparam integer MAP_ST = `SEPH_MAP_STORE_PORTS;
  localparam [2:0] F_NONE = `SEPH_FAULT_NONE, F_ILLEGAL = `SEPH_FAULT_ILLEGAL, F_ACCESS = `SEPH_FAULT_ACCESS,
                   F_RUNAWAY = `SEPH_FAULT_RUNAWAY, F_HELPER = `SEPH_FAULT_HELPER;

  // ---------------------------------------------------------------------------------------------------------
  // instruction memory (synchronous read) and the row-0 register
  reg [64*LANES-1:0] imem_q [0:IMEM_ROWS-1];
  reg [64*LANES-1:0] row_q;
  reg [64*LANES-1:0] row0_q;
  reg                fetch_en;
  reg [AW-1:0]       fetch_addr;

  always @(posedge clk_i) begin
    if (imem_we_i) imem_q[imem_waddr_i] <= imem_wdata_i;
    if (fetch_en) row_q <= imem_q[fetch_addr];
  end
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) row0_q <= {64*LANES{1'b0}};
    else if (imem_we_i && imem_waddr_i == {AW{1'b0}}) row0_q <= imem_wdata_i;
  end

  // ---------------------------------------------------------------------------------------------------------
  // control state
  reg          running_q, running_d;
  reg          bubble_q, bubble_d;          // this cycle is the bubble behind a taken branch / conditional exit
  reg          end_bubble_q, end_bubble_d;  // the bubble ends the packet (conditional exit)
  reg          at_row0_q, at_row0_d;        // the row executing is row 0 (from the row-0 register)
  reg [AW-1:0] pc_q, pc_d;                  // row index of the row in execute
  reg [31:0]   cyc_q, cyc_d;                // cycles used by the packet so far
  reg [31:0]   stl_q, stl_d;                // stall cycles of the row in execute
  reg          pc_bad_q, pc_bad_d;          // the next row is outside the program
  reg [63:0]   tot_q, tot_d;                // cycles of all finished packets
  reg [31:0]   pend_action_q, pend_action_d;
  reg [63:0]   pend_r0_q, pend_r0_d;

  wire start    = !running_q && pkt_ready_i;
  wire use_row0 = start || at_row0_q;
  wire exec     = start || (running_q && !bubble_q);
  // checked before a row (its first cycle), as the model does: a row that started in time finishes its stall
  wire limit    = running_q && !bubble_q && (stl_q == 32'd0) && (cyc_q >= CYCLE_LIMIT);
  wire [AW-1:0] pc = start ? {AW{1'b0}} : pc_q;
  wire [64*LANES-1:0] row = use_row0 ? row0_q : row_q;

  // ---------------------------------------------------------------------------------------------------------
  // register file (sephirot_regfile): two reads per lane, r0..r5 for the fixed reads; written at commit below
  wire [8*LANES-1:0]   rf_idx;
  wire [128*LANES-1:0] rf_val;
  wire [64*6-1:0]      rf_fix;
  wire [63:0] r0_val = rf_fix[63:0];
  wire [63:0] r1_val = rf_fix[127:64];
  wire [63:0] r2_val = rf_fix[191:128];
  wire [63:0] r3_val = rf_fix[255:192];

  // stack: SSZ bytes with valid bits (an invalid byte reads 0: zeroing in 0 cycles), in the banks below

  // ---------------------------------------------------------------------------------------------------------
  // lanes
  wire [LANES-1:0]    l_wr_en, l_rd, l_wr, l_branch, l_taken, l_exit, l_exit_imm, l_call, l_div, l_illegal;
  wire [LANES-1:0]    l_jump;                   // lanes holding an unconditional jump
  wire                div_run;                  // the row's pending division runs a step this cycle
  wire                div_wait;                 // a division of the row has not run yet (sephirot_divshare)
  wire                stall;                    // the row stays (division, packet bytes, helper)
  wire [LANES-1:0]    l_dsig, l_dmod, l_d64;
  wire [64*LANES-1:0] l_da, l_db, l_dres;
  wire [LANES-1:0]    l_mul;                    // lanes multiplying
  wire [63:0]         mul_res;
  wire [4*LANES-1:0]  l_wr_idx, l_size;
  wire [64*LANES-1:0] l_wr_val, l_addr, l_wdata;
  wire [32*LANES-1:0] l_target, l_imm;
  reg  [64*LANES-1:0] l_ld;
  reg  [LANES-1:0]    l_fault, l_ext;

  // lane k holds the high half of an lddw when lane k-1 holds its low half
  reg [LANES-1:0] l_hi;
  integer hk;
  always @(*) begin
    l_hi[0] = 1'b0;
    for (hk = 1; hk < LANES; hk = hk + 1)
      l_hi[hk] = (row[64*(hk-1) +: 8] == `SEPH_OP_LDDW) && !l_hi[hk-1];
  end

  // the row's atomic (at most one): operands of each lane for the shared read-modify-write unit
  wire [LANES-1:0]    l_atom, l_a64;
  wire [63:0]         atom_new;
  reg  [8*LANES-1:0]  l_aop;
  reg  [64*LANES-1:0] l_src;
  integer ai;
  always @(*)
    for (ai = 0; ai < LANES; ai = ai + 1) begin
      l_aop[8*ai +: 8] = l_imm[32*ai +: 8];
      l_src[64*ai +: 64] = rf_val[128*ai+64 +: 64];
    end

  genvar gl;
  generate
    for (gl = 0; gl < LANES; gl = gl + 1) begin : gen_lane
      wire [63:0] slot = row[64*gl +: 64];
      assign rf_idx[8*gl +: 8] = slot[15:8];   // dst, src
      wire [31:0] nxt_op;
      wire [31:0] nxt_imm;
      if (gl + 1 < LANES) begin : gen_next
        assign nxt_op  = row[64*(gl+1) +: 32];
        assign nxt_imm = row[64*(gl+1)+32 +: 32];
      end else begin : gen_last
        assign nxt_op  = 32'd0;
        assign nxt_imm = 32'd0;
      end
      sephirot_lane #(.AW(AW)) u_lane (
        .slot_i(slot), .next_op_i(nxt_op), .next_imm_i(nxt_imm), .lddw_hi_i(l_hi[gl]), .has_next_i(gl + 1 < LANES), .pc_i(pc),
        .dst_val_i(rf_val[128*gl +: 64]), .src_val_i(rf_val[128*gl+64 +: 64]),
        .ld_data_i(l_ld[64*gl +: 64]), .is_atomic_o(l_atom[gl]), .atomic_is64_o(l_a64[gl]),
        .atomic_new_i(atom_new),
        .wr_en_o(l_wr_en[gl]), .wr_idx_o(l_wr_idx[4*gl +: 4]), .wr_val_o(l_wr_val[64*gl +: 64]),
        .mem_rd_o(l_rd[gl]), .mem_wr_o(l_wr[gl]), .mem_addr_o(l_addr[64*gl +: 64]),
        .mem_size_o(l_size[4*gl +: 4]), .mem_wdata_o(l_wdata[64*gl +: 64]),
        .is_branch_o(l_branch[gl]), .is_jump_o(l_jump[gl]), .br_taken_o(l_taken[gl]), .br_target_o(l_target[32*gl +: 32]),
        .is_exit_o(l_exit[gl]), .exit_imm_o(l_exit_imm[gl]), .imm_o(l_imm[32*gl +: 32]),
        .is_call_o(l_call[gl]), .is_div_o(l_div[gl]), .div_a_o(l_da[64*gl +: 64]), .div_b_o(l_db[64*gl +: 64]),
        .div_signed_o(l_dsig[gl]), .div_mod_o(l_dmod[gl]), .div_is64_o(l_d64[gl]), .div_res_i(l_dres[64*gl +: 64]),
        .is_mul_o(l_mul[gl]), .mul_res_i(mul_res), .illegal_o(l_illegal[gl])
      );
    end
  endgenerate

  sephirot_atomic #(.LANES(LANES)) u_atomic (
    .atom_i(l_atom), .aop_i(l_aop), .is64_i(l_a64), .old_i(l_ld), .src_i(l_src), .r0_i(r0_val), .new_o(atom_new)
  );

  sephirot_divshare #(.LANES(LANES)) u_divshare (
    .clk_i, .rst_ni, .run_i(div_run), .clear_i(!stall), .div_i(l_div), .a_i(l_da), .b_i(l_db), .signed_i(l_dsig),
    .mod_i(l_dmod), .is64_i(l_d64), .pending_o(div_wait), .res_o(l_dres)
  );

  // ---------------------------------------------------------------------------------------------------------
  // memory access: stack inside, ctx/packet/maps on the data bus
  // an access of `size` (1..8) bytes at stack address `a` (region R_STACK) reaches past the stack's SSZ bytes: the
  // stack is a power of two at the region's base, so its offset is bits 27:0 of `a`, and it passes the end when
  // it is at or past SSZ or in the last 8 bytes with its place there plus the size over 8 (as a - STACK_BASE +
  // size > SSZ in 32 bits it was three carry chains a lane)
  function automatic stack_past(input [27:0] a, input [3:0] size);
    stack_past = a[27:SAW] != {(28-SAW){1'b0}} || (&a[SAW-1:3] && {1'b0, a[2:0]} + size > 4'd8);
  endfunction
  // an address in a map memory tier: on chip, QDR or DDR (docs/maps.md "Memory tiers")
  function automatic map_tier(input [3:0] region);
    map_tier = region[3] || region == R_MAP || region == R_QDR;
  endfunction
  // requests (independent of the data returned)
  integer li;
  reg [63:0] a64;
  reg [LANES-1:0] l_stk, l_bad;
  reg [LANES-1:0] m_pld, m_pst, m_mld, m_mst;   // the lanes loading from / storing to the packet and the maps
  reg [9*LANES-1:0] l_addr_lo9;             // stack offset of each lane's access
  always @(*) begin
    dbus_rd_o = {LANES{1'b0}};
    dbus_wr_o = {LANES{1'b0}};
    dbus_addr_o = {32*LANES{1'b0}};
    dbus_tag_o = {32*LANES{1'b0}};
    dbus_size_o = l_size;
    l_ext = {LANES{1'b0}};
    l_stk = {LANES{1'b0}};
    l_bad = {LANES{1'b0}};
    m_pld = {LANES{1'b0}}; m_pst = {LANES{1'b0}}; m_mld = {LANES{1'b0}}; m_mst = {LANES{1'b0}};
    l_addr_lo9 = {9*LANES{1'b0}};
    for (li = 0; li < LANES; li = li + 1) begin
      a64 = l_addr[64*li +: 64];
      l_addr_lo9[9*li +: 9] = a64[8:0];
      dbus_addr_o[32*li +: 32] = a64[31:0];
      dbus_tag_o[32*li +: 32] = a64[63:32];
      if (exec && (l_rd[li] || l_wr[li])) begin
        // only a map-value pointer carries a tag (bits 63:32); the map memory checks it (sephirot_mapguard), in
        // every tier: on chip, QDR (region 0x6) and DDR (addr[31])
        if (a64[63:32] != 32'd0 && !map_tier(a64[31:28])) begin
          l_bad[li] = 1'b1;
        end else if (a64[31:28] == R_STACK) begin
          l_stk[li] = 1'b1;
          if (stack_past(a64[27:0], l_size[4*li +: 4])) l_bad[li] = 1'b1;
        end else if (a64[31:28] == R_CTX || a64[31:28] == R_PKT || map_tier(a64[31:28])) begin
          l_ext[li] = 1'b1;
          dbus_rd_o[li] = l_rd[li];
          dbus_wr_o[li] = l_wr[li];
          m_pld[li] = l_rd[li] && a64[31:28] == R_PKT;
          m_pst[li] = l_wr[li] && a64[31:28] == R_PKT;
          m_mld[li] = l_rd[li] && map_tier(a64[31:28]);   // (the map memory's ports serve the three tiers)
          m_mst[li] = l_wr[li] && map_tier(a64[31:28]);
        end else begin
          l_bad[li] = 1'b1;
        end
      end
    end
  end
  always @(*) dbus_wdata_o = l_wdata;

  // the packet buffer's and the map memory's ports per row (execution contract): the lanes get them in lane order,
  // a lane past them faults (the lanes left once the n lowest have taken theirs: no counters)
  function automatic [LANES-1:0] beyond(input [LANES-1:0] m, input integer n);
    integer k;
    begin
      beyond = m;
      for (k = 0; k < n; k = k + 1) beyond = beyond & (beyond - {{(LANES-1){1'b0}}, 1'b1});
    end
  endfunction
  wire [LANES-1:0] l_over = beyond(m_pld, PKT_LD) | beyond(m_pst, PKT_ST) | beyond(m_mld, MAP_LD) |
                            beyond(m_mst, MAP_ST);

  // helper read port
  always @(*) begin
    hbus_rd_o = hm_en_i && (hm_addr_i[31:28] == R_CTX || hm_addr_i[31:28] == R_PKT || hm_addr_i[31:28] == R_MAP);
  end
  always @(*) begin
    hm_rdata_o = 64'd0;
    hm_fault_o = 1'b0;
    if (hbus_rd_o) begin
      hm_rdata_o = hbus_rdata_i;
      hm_fault_o = hbus_fault_i;
    end else if (hm_en_i) begin
      if (hm_addr_i[31:28] == R_STACK) begin
        if (stack_past(hm_addr_i[27:0], hm_size_i)) hm_fault_o = 1'b1;
        else hm_rdata_o = s_hld;
      end else begin
        hm_fault_o = 1'b1;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------------------
  // stack (sephirot_stack): STACK_LOAD_PORTS loads and STACK_STORE_PORTS stores per row (lane order); a lane beyond
  // them faults its row (an access fault, execution contract), as does a load (or atomic) in a row calling a helper
  // past CALL_ROW_*_LOADS: the helper's reads take the first load port of the stack and of the packet buffer and the
  // last of the map memory
  wire [64*LANES-1:0] s_ld;                 // bytes read by lane k in access order, zero above its size
  wire [63:0]         s_hld;
  wire [LANES-1:0]    s_over;
  sephirot_stack #(.LANES(LANES), .SSZ(SSZ)) u_stack (
    .clk_i(clk_i), .rst_ni(rst_ni), .clear_i(pkt_done_o || tail_jump), .commit_i(commit), .rd_i(l_rd & l_stk),
    .wr_i(l_wr & l_stk), .off_i(l_addr_lo9), .size_i(l_size), .wdata_i(l_wdata), .h_sel_i(|l_call),
    .h_off_i(hm_addr_i[8:0]),
    .h_size_i(hm_size_i), .h_we_i(hs_en_i), .h_woff_i(hs_off_i), .h_wsize_i(hs_size_i), .h_wdata_i(hs_data_i), .over_o(s_over), .rdata_o(s_ld), .h_rdata_o(s_hld)
  );

  // responses
  integer lj;
  always @(*) begin
    l_ld = {64*LANES{1'b0}};
    l_fault = l_bad | s_over | l_over | (l_ext & dbus_fault_i) |
              ({LANES{|l_call}} & (beyond(l_rd & l_stk, CR_STACK) | beyond(m_pld, CR_PKT) | beyond(m_mld, CR_MAP)));
    for (lj = 0; lj < LANES; lj = lj + 1) begin
      if (l_ext[lj]) l_ld[64*lj +: 64] = dbus_rdata_i[64*lj +: 64];
      else if (l_stk[lj] && !l_bad[lj]) l_ld[64*lj +: 64] = s_ld[64*lj +: 64];
    end
  end

  // ---------------------------------------------------------------------------------------------------------
  // row outcome
  reg         ctl_found, ctl_exit, ctl_cond_exit, seen_branch, two_calls, call_any;
  reg         ctl_seen, jump_first;   // the row's first branch or exit lane (in lane order) is an unconditional jump
  reg [31:0]  ctl_target, call_imm, exit_action;
  reg         exit_imm;
  integer     ci;
  always @(*) begin
    ctl_found = 1'b0; ctl_exit = 1'b0; ctl_cond_exit = 1'b0; seen_branch = 1'b0; ctl_target = 32'd0;
    exit_imm = 1'b0; exit_action = 32'd0; two_calls = 1'b0; call_any = 1'b0; call_imm = 32'd0;
    ctl_seen = 1'b0; jump_first = 1'b0;
    for (ci = 0; ci < LANES; ci = ci + 1) begin
      if (!ctl_seen && (l_exit[ci] || l_branch[ci])) begin
        ctl_seen = 1'b1; jump_first = l_jump[ci];
      end
      if (!ctl_found && l_exit[ci]) begin
        ctl_found = 1'b1; ctl_exit = 1'b1; ctl_cond_exit = seen_branch;
        exit_imm = l_exit_imm[ci]; exit_action = l_imm[32*ci +: 32];
      end else if (!ctl_found && l_branch[ci] && l_taken[ci]) begin
        ctl_found = 1'b1; ctl_target = l_target[32*ci +: 32];
      end
      if (l_branch[ci]) seen_branch = 1'b1;
      if (l_call[ci]) begin
        if (call_any) two_calls = 1'b1;
        call_any = 1'b1; call_imm = l_imm[32*ci +: 32];
      end
    end
  end

  // a jump to the next row finds that row already fetched: it costs nothing more than falling through. A tail
  // call that jumps wins over the row's branches and exits (they come after it in the program) and always costs
  // the bubble; the target program starts with the registers and the stack as at packet start (cleared below)
  wire        tail       = call_any && hlp_tc_jump_i;
  wire        taken      = !tail && ctl_found && !ctl_exit && ctl_target != {{(32-AW){1'b0}}, pc} + 32'd1;
  // an unconditional jump that is the row's first branch or exit lane is folded into the fetch: its target is known
  // from the row alone (no register compare decides it), so the target row is fetched in the row's last cycle in
  // place of the next one and no bubble follows (execution contract section 6)
  wire        fold       = taken && jump_first;
  wire [31:0] next_row   = tail ? hlp_tc_row_i : taken ? ctl_target : {{(32-AW){1'b0}}, pc} + 32'd1;
  wire        next_bad   = next_row >= {{(31-AW){1'b0}}, imem_rows_i};
  wire        pc_outside = start ? (imem_rows_i == {(AW+1){1'b0}}) : pc_bad_q;
  // the row's multiplication: one multiplier (MUL_UNITS, execution contract) takes the first multiplying lane's
  // operands; a row with more multiplications is illegal (a multiplier per lane was 240 LUTs and 10 DSPs each)
  reg [63:0] mul_a, mul_b;
  integer mi;
  always @(*) begin
    mul_a = 64'd0; mul_b = 64'd0;
    for (mi = LANES - 1; mi >= 0; mi = mi - 1)
      if (l_mul[mi]) begin mul_a = l_da[64*mi +: 64]; mul_b = l_db[64*mi +: 64]; end
  end
  assign mul_res = mul_a * mul_b;
  wire        many_muls  = |beyond(l_mul, MUL_N);
  wire        illegal    = exec && ((|l_illegal) || two_calls || many_muls || pc_outside);
  // a row calling a helper that writes the map memory (or the packet, or the stack) through its own port stores
  // nothing else there (execution contract): the helper unit may then write it in any of its stall cycles
  localparam [255:0] HW_MAP = `SEPH_HELPERS_WRITING_MAP;
  localparam [255:0] HW_PKT = `SEPH_HELPERS_WRITING_PKT;
  localparam [255:0] HW_STACK = `SEPH_HELPERS_WRITING_STACK;
  wire        call_lo    = call_any && call_imm < 32'd256;
  wire        hw_store   = call_lo && ((HW_MAP[call_imm[7:0]] && |m_mst) || (HW_PKT[call_imm[7:0]] && |m_pst) ||
                                       (HW_STACK[call_imm[7:0]] && |(l_wr & l_stk)));
  wire        afault     = exec && ((|l_fault) || hw_store);
  // a helper that reads memory through its own port (map keys and values, csum_diff buffers, printk formats)
  // from the packet starts once the whole packet is in, so that it never reads bytes that have not arrived;
  // buffers on the stack or in a map value need no wait
  wire        a1_pkt     = r1_val >> `SEPH_REGION_SHIFT == {60'd0, `SEPH_REGION_PKT};
  wire        a2_pkt     = r2_val >> `SEPH_REGION_SHIFT == {60'd0, `SEPH_REGION_PKT};
  wire        a3_pkt     = r3_val >> `SEPH_REGION_SHIFT == {60'd0, `SEPH_REGION_PKT};
  wire        hlp_reads  = ((call_imm == `SEPH_HELPER_MAP_LOOKUP_ELEM || call_imm == `SEPH_HELPER_MAP_DELETE_ELEM) &&
                            a2_pkt) ||
                           (call_imm == `SEPH_HELPER_MAP_UPDATE_ELEM && (a2_pkt || a3_pkt)) ||
                           (call_imm == `SEPH_HELPER_CSUM_DIFF && (a1_pkt || a3_pkt)) ||
                           (call_imm == `SEPH_HELPER_TRACE_PRINTK && a1_pkt) ||
                           (call_imm == `SEPH_HELPER_RINGBUF_OUTPUT && a2_pkt) ||
                           call_imm == `SEPH_HELPER_PERF_EVENT_OUTPUT;   // (its packet bytes, and r4's data)
  // the packet adjustments start once the whole packet is in too: the bytes they expose are zeroed, and a later
  // input frame would write over them (sephirot_pktbuf.v); while the packet buffer writes a zeroing, a moved
  // metadata or a deferred store, the row waits (pkt_hold_i). Neither wait is a core cycle.
  wire        adj_call   = call_imm == `SEPH_HELPER_XDP_ADJUST_HEAD || call_imm == `SEPH_HELPER_XDP_ADJUST_TAIL ||
                           call_imm == `SEPH_HELPER_XDP_ADJUST_META;
  wire        byte_wait  = exec && ((|(dbus_wait_i & l_ext)) || (call_any && (hlp_reads || adj_call) && !pkt_filled_i) ||
                                    pkt_hold_i);
  // the map grant: a lane's access in the map memory or an off-chip tier, or a helper that may reach the maps
  // (not one of GRANT_FREE; csum_diff and trace_printk only with a buffer there). Asked from the row's addresses
  // once its bytes are in, never from what the shared memory returns (the arbiter answers in the same cycle)
  localparam [255:0] G_FREE = `SEPH_HELPERS_GRANT_FREE;
  wire        a1_map     = map_tier(r1_val[31:28]);
  wire        a3_map     = map_tier(r3_val[31:28]);
  wire        g_call     = call_any && (!call_lo ? 1'b1 :
                                        call_imm == `SEPH_HELPER_CSUM_DIFF ? (a1_map || a3_map) :
                                        call_imm == `SEPH_HELPER_TRACE_PRINTK ? a1_map : !G_FREE[call_imm[7:0]]);
  assign      gnt_req_o  = exec && !limit && !byte_wait && ((|(m_mld | m_mst)) || g_call);
  // its mode (execution contract section 8, "Rows that take the map grant"): exclusive for a lane's access off
  // chip (one port), a helper not of GRANT_SHARED (an id past 255 too), map_lookup_elem on a map off chip or whose
  // lookup writes (an LRU hit's stamp), and a row both write and apart; write for a lane's store or atomic in the
  // map memory outside the core's per-CPU copies; apart for one inside them, and for a reading helper whose key or
  // buffer (GRANT_APART_Rn) is in the map memory or a tier and not read-only (the pointer's bit 63); shared
  // otherwise: loads of the map memory, the reading helpers, a lookup with a bad handle (it faults)
  localparam [255:0] G_SHARED = `SEPH_HELPERS_GRANT_SHARED;
  localparam integer MX = `SEPH_MAPS_MAX;
  localparam [31:0]  HBASE = `SEPH_MAP_HANDLE_BASE;
  reg  [LANES-1:0] m_on;                       // the lanes whose address is in the map memory (on chip)
  integer gi;
  always @(*)
    for (gi = 0; gi < LANES; gi = gi + 1) m_on[gi] = dbus_addr_o[32*gi+28 +: 4] == R_MAP;
  wire [31:0] lk_id      = r1_val[31:0] - HBASE;
  wire        lk_x       = r1_val[63:32] == 32'd0 && r1_val[31:0] >= HBASE && lk_id < MX &&
                           gnt_lkx_i[lk_id[$clog2(MX)-1:0]];
  wire        x_call     = g_call && (!call_lo ? 1'b1 : call_imm == `SEPH_HELPER_MAP_LOOKUP_ELEM ? lk_x :
                                                  !G_SHARED[call_imm[7:0]]);
  localparam [255:0] G_AP1 = `SEPH_HELPERS_GRANT_APART_R1;
  localparam [255:0] G_AP2 = `SEPH_HELPERS_GRANT_APART_R2;
  localparam [255:0] G_AP3 = `SEPH_HELPERS_GRANT_APART_R3;
  localparam integer RO = `SEPH_MAP_RDONLY_PTR_BIT;
  wire        a2_map     = map_tier(r2_val[31:28]);
  wire        ap_arg     = call_lo && ((G_AP1[call_imm[7:0]] && a1_map && !r1_val[RO]) ||
                                       (G_AP2[call_imm[7:0]] && a2_map && !r2_val[RO]) ||
                                       (G_AP3[call_imm[7:0]] && a3_map && !r3_val[RO]));
  wire        g_x        = (|((m_mld | m_mst) & ~m_on)) || x_call;
  wire        g_w        = |(m_mst & m_on & ~gnt_pcpu_i);
  wire        g_ap       = (|(m_mst & m_on & gnt_pcpu_i)) || (g_call && ap_arg);
  assign      gnt_excl_o = g_x || (g_w && g_ap);
  assign      gnt_wr_o   = g_w;
  assign      gnt_ap_o   = g_ap;
  wire        gnt_wait   = gnt_req_o && !gnt_i;
  wire        ext_wait   = byte_wait || gnt_wait;
  wire        row_bad    = illegal || afault;
  // a div/mod row stalls DIV_EXTRA_CYCLES per dividing lane (div_wait: one divider), and a helper call in the row
  // starts after the divisions; the divider pauses while the row waits for packet bytes: those waits are not core
  // cycles, the division's are
  // the row's off-chip reads come first (sephirot_xmem), then its divisions, then its helper call: their cycles add
  assign      dbus_go_o  = exec && !limit && !row_bad && !ext_wait;
  assign      div_run    = exec && !limit && !row_bad && div_wait && !ext_wait && !dbus_xwait_i;
  assign      hlp_req_o  = exec && !limit && call_any && !row_bad && !ext_wait && !dbus_xwait_i && !div_wait;
  wire        hlp_bad    = hlp_req_o && hlp_done_i && (hlp_illegal_i || hlp_fault_i || hlp_access_i);
  assign      stall      = exec && !limit && !row_bad && (ext_wait || dbus_xwait_i || div_wait ||
                                                          (call_any && !hlp_done_i));
  wire        commit     = exec && !limit && !row_bad && !stall && !hlp_bad;
  wire        fault_end  = limit || (exec && row_bad) || hlp_bad;
  wire        early_exit = commit && ctl_exit && !ctl_cond_exit && !tail;
  wire        tail_jump  = commit && tail;
  wire        bubble_end = running_q && bubble_q && end_bubble_q;
  // spin_lock keeps the grant until spin_unlock's row ends (or the packet: only a fault ends it there)
  reg         lock_q;
  wire        lock_d     = (commit && call_any && call_imm == `SEPH_HELPER_SPIN_LOCK) ? 1'b1 :
                           ((commit && call_any && call_imm == `SEPH_HELPER_SPIN_UNLOCK) || pkt_done_o) ? 1'b0 : lock_q;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) lock_q <= 1'b0;
    else lock_q <= lock_d;
  end
  // (a row's cost includes its taken-branch, tail-call or conditional-exit bubble: the grant is kept through it)
  assign gnt_keep_o = gnt_i && ((stall && !pkt_done_o) || lock_d || bubble_d);
  assign pkt_done_o  = fault_end || early_exit || bubble_end;
  assign pkt_start_o = start;
  assign dbus_commit_o = commit;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) dbus_hold_o <= 1'b0;
    else dbus_hold_o <= stall;
  end
  always @(*) begin
    hlp_id_o = call_imm;
  end
  assign hlp_args_o = rf_fix[64*6-1:64];

  // r0 as the row leaves it
  reg [63:0] r0_after;
  integer wi;
  always @(*) begin
    r0_after = r0_val;
    for (wi = 0; wi < LANES; wi = wi + 1)
      if (l_wr_en[wi] && l_wr_idx[4*wi +: 4] == 4'd0) r0_after = l_wr_val[64*wi +: 64];
    if (call_any) r0_after = hlp_ret_i;
  end

  wire [31:0] row_action = exit_imm ? exit_action : r0_after[31:0];
  wire [63:0] row_r0     = exit_imm ? {32'd0, exit_action} : r0_after;

  always @(*) begin
    res_fault_o = F_NONE;
    res_action_o = row_action;
    res_r0_o = row_r0;
    if (limit) begin
      res_fault_o = F_RUNAWAY; res_action_o = 32'd0; res_r0_o = 64'd0;
    end else if (bubble_end) begin
      res_action_o = pend_action_q; res_r0_o = pend_r0_q;
    end else if (illegal || (hlp_bad && hlp_illegal_i)) begin
      res_fault_o = F_ILLEGAL; res_action_o = 32'd0; res_r0_o = 64'd0;
    end else if (afault) begin
      res_fault_o = F_ACCESS; res_action_o = 32'd0; res_r0_o = 64'd0;
    end else if (hlp_bad && hlp_access_i) begin
      res_fault_o = F_ACCESS; res_action_o = 32'd0; res_r0_o = 64'd0;
    end else if (hlp_bad) begin
      res_fault_o = F_HELPER; res_action_o = 32'd0; res_r0_o = 64'd0;
    end
  end
  assign res_cycles_o = bubble_end ? cyc_q + 32'd1 : (fault_end ? cyc_q - stl_q : cyc_q + 32'd1);
  // one core: the packet cycles of all earlier packets + this one's before the row (without gaps between packets,
  // the running cycle count); several cores: the shared clock's cycle in which the row started (contract section 8)
  assign hlp_cycles_o = clock_en_i ? clock_i - {32'd0, stl_q} : tot_q + {32'd0, cyc_q - stl_q};

  // ---------------------------------------------------------------------------------------------------------
  // next state
  always @(*) begin
    running_d = running_q; bubble_d = 1'b0; end_bubble_d = 1'b0; at_row0_d = at_row0_q; pc_d = pc_q;
    cyc_d = cyc_q; pend_action_d = pend_action_q; pend_r0_d = pend_r0_q;
    stl_d = stl_q; pc_bad_d = pc_bad_q; tot_d = tot_q;
    fetch_en = 1'b0; fetch_addr = pc + {{(AW-1){1'b0}}, 1'b1};
    if (pkt_done_o) begin
      running_d = 1'b0; at_row0_d = 1'b0; cyc_d = 32'd0; stl_d = 32'd0; pc_bad_d = 1'b0;
      tot_d = tot_q + {32'd0, res_cycles_o};
    end else if (running_q && bubble_q) begin
      cyc_d = cyc_q + 32'd1;
      fetch_en = 1'b1; fetch_addr = pc_q;  // the branch target
    end else if (stall) begin
      // waiting for packet bytes still arriving is not a core cycle (contract section 6: the model's cycles
      // leave arrival out; the per-packet stamps still show it)
      running_d = 1'b1; at_row0_d = use_row0; pc_d = pc;
      if (!ext_wait) begin cyc_d = cyc_q + 32'd1; stl_d = stl_q + 32'd1; end
    end else if (commit) begin
      running_d = 1'b1; cyc_d = cyc_q + 32'd1; at_row0_d = 1'b0; stl_d = 32'd0; pc_bad_d = next_bad;
      if (tail) begin  // the bubble fetches the target program's entry row
        bubble_d = 1'b1; pc_d = hlp_tc_row_i[AW-1:0];
      end else if (ctl_exit) begin  // conditional exit: one bubble, then the packet ends
        bubble_d = 1'b1; end_bubble_d = 1'b1; pend_action_d = row_action; pend_r0_d = row_r0;
      end else if (fold) begin
        fetch_en = 1'b1; fetch_addr = ctl_target[AW-1:0]; pc_d = ctl_target[AW-1:0];
      end else if (taken) begin
        bubble_d = 1'b1; pc_d = ctl_target[AW-1:0];
      end else begin
        fetch_en = 1'b1; pc_d = pc + {{(AW-1){1'b0}}, 1'b1};
      end
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      running_q <= 1'b0; bubble_q <= 1'b0; end_bubble_q <= 1'b0; at_row0_q <= 1'b0; pc_q <= {AW{1'b0}};
      cyc_q <= 32'd0; pend_action_q <= 32'd0; pend_r0_q <= 64'd0;
      stl_q <= 32'd0; pc_bad_q <= 1'b0; tot_q <= 64'd0;
    end else begin
      stl_q <= stl_d; pc_bad_q <= pc_bad_d; tot_q <= tot_d;
      running_q <= running_d; bubble_q <= bubble_d; end_bubble_q <= end_bubble_d; at_row0_q <= at_row0_d;
      pc_q <= pc_d; cyc_q <= cyc_d; pend_action_q <= pend_action_d; pend_r0_q <= pend_r0_d;
    end
  end

  // register file commit (lane order; a helper result lands in r0 last)
  sephirot_regfile #(.LANES(LANES)) u_regfile (
    .clk_i(clk_i), .rst_ni(rst_ni), .clear_i(pkt_done_o || tail_jump), .commit_i(commit), .wr_en_i(l_wr_en),
    .wr_idx_i(l_wr_idx), .wr_val_i(l_wr_val), .h_wr_i(call_any), .h_val_i(hlp_ret_i), .init_r1_i(init_r1_i),
    .init_r2_i(init_r2_i), .rd_idx_i(rf_idx), .rd_val_o(rf_val), .fix_o(rf_fix)
  );

  // ---------------------------------------------------------------------------------------------------------
  // trace
  integer ti;
  always @(*) begin
    for (ti = 0; ti < LANES; ti = ti + 1) begin
      trc_wr_en_o[ti] = commit && l_wr_en[ti];
      trc_wr_idx_o[4*ti +: 4] = l_wr_idx[4*ti +: 4];
      trc_wr_val_o[64*ti +: 64] = l_wr_val[64*ti +: 64];
      trc_st_en_o[ti] = commit && l_wr[ti];
      trc_st_addr_o[32*ti +: 32] = l_addr[64*ti +: 32];
      trc_st_size_o[4*ti +: 4] = l_size[4*ti +: 4];
      trc_st_data_o[64*ti +: 64] = l_wdata[64*ti +: 64];
    end
  end
  assign trc_valid_o = commit;
  assign trc_cost_o  = stl_q + 32'd1 + (((taken && !fold) || tail || ctl_cond_exit) ? 32'd1 : 32'd0);
  integer tl;
  always @(*) begin
    trc_call_lane_o = 2'd0;
    for (tl = LANES - 1; tl >= 0; tl = tl - 1)
      if (l_call[tl]) trc_call_lane_o = tl[1:0];
  end
  assign trc_pc_o    = pc;
  assign trc_call_o  = commit && call_any;
  assign trc_ret_o   = hlp_ret_i;
  assign trc_exit_o  = commit && ctl_exit && !tail;
  assign trc_next_o  = next_row;
  assign trc_fault_o = fault_end ? res_fault_o : F_NONE;
`ifdef SEPH_ASSERT
  // the contract's row rules the core relies on without checking them (the test build's assertions)
  sephirot_contract #(.LANES(LANES)) u_contract (
    .clk_i, .rst_ni, .commit_i(commit), .call_i(call_any), .wr_en_i(l_wr_en), .wr_idx_i(l_wr_idx), .st_i(l_wr),
    .ld_i(l_rd), .atomic_i(l_atom), .addr_i(dbus_addr_o), .size_i(l_size)
  );
`endif
endmodule
`default_nettype wire
