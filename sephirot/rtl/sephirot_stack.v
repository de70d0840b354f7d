// sephirot_stack: the core's stack, byte addressed: RP load and WP store ports; the helper reads through load port 0.
`default_nettype none
`include "sephirot_params.vh"

// A row has at most RP stack loads and WP stack stores (execution contract, memory): the first RP lanes loading
// from the stack (lane order) get the load ports, the first WP storing lanes the store ports; the core faults a
// row that asks for more (over_o). Byte a of the stack is byte a/8 of bank a%8, so that an access of up to 8 bytes
// at any offset touches each bank at most once. A bank is written by up to WP ports in one cycle, so each store
// port writes its own copy of the bank (a single write port: distributed RAM). A byte is the XOR of its copies: a
// store writes its byte XOR the other copies' bytes at that word, so the copies XOR to it (the XOR multi-port
// memory; a live-value table naming the copy with the last write was 512 flip-flops and about 1K LUTs more).
// Where two ports store to one byte, the later one (lane order) writes. A valid bit per byte makes bytes not
// written in this packet read 0 (clear_i zeroes the stack in 0 cycles). Reads are combinational: the memory
// before the row. A row calling a helper has no stack load (execution contract; the core faults a lane that
// tries): the helper's reads take load port 0 then (h_sel_i), as a port of its own was a third of the stack.
module sephirot_stack #(
  parameter integer LANES = `SEPH_LANES,
  parameter integer SSZ   = `SEPH_STACK_SIZE,
  parameter integer RP    = `SEPH_STACK_LOAD_PORTS,
  parameter integer WP    = `SEPH_STACK_STORE_PORTS,
  parameter integer OW    = $clog2(SSZ)
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  input  wire                 clear_i,            // the packet ends: every byte reads 0 from the next cycle
  input  wire                 commit_i,           // the row commits: the stores take effect at the clock edge
  input  wire [LANES-1:0]     rd_i,               // lane k loads from the stack (its offset and size)
  input  wire [LANES-1:0]     wr_i,               // lane k stores to the stack (its offset, size and wdata)
  input  wire [OW*LANES-1:0]  off_i,              // byte offset of lane k's access
  input  wire [4*LANES-1:0]   size_i,             // bytes of lane k's access (at most 8)
  input  wire [64*LANES-1:0]  wdata_i,
  input  wire                 h_sel_i,            // the row calls a helper: load port 0 serves the helper's read
  input  wire [OW-1:0]        h_off_i,            // the helper's read
  input  wire [3:0]           h_size_i,
  output reg  [LANES-1:0]     over_o,             // lane k's access finds no free port: the row faults
  output reg  [64*LANES-1:0]  rdata_o,            // bytes read by lane k in access order, zero above its size
  output wire [63:0]          h_rdata_o
);
  localparam integer SP  = RP;                    // read ports: the lanes' load ports (the helper's is port 0)
  localparam integer SW  = SSZ / 8;               // words of a bank
  localparam integer SWW = OW - 3;

  // ports to lanes, in lane order (sephirot_portsel); port 0 is the helper's in a row calling one
  wire [LANES*RP-1:0] p_sel;                      // lanes of load port p, one-hot (or none)
  wire [LANES-1:0]    r_left, w_left;
  wire [OW*RP-1:0]    l_off;
  wire [4*RP-1:0]     l_size;
  wire [OW*WP-1:0]    q_off;
  wire [4*WP-1:0]     q_size;
  wire [64*WP-1:0]    q_data;
  wire [WP-1:0]       q_used;
  wire [OW*SP-1:0]    p_off;
  wire [4*SP-1:0]     p_size;
  generate
    if (SP > 1) begin : gen_more
      assign p_off[OW*SP-1:OW] = l_off[OW*SP-1:OW];
      assign p_size[4*SP-1:4] = l_size[4*SP-1:4];
    end
  endgenerate
  assign p_off[OW-1:0] = h_sel_i ? h_off_i : l_off[OW-1:0];
  assign p_size[3:0] = h_sel_i ? h_size_i : l_size[3:0];
  /* verilator lint_off PINCONNECTEMPTY */
  sephirot_portsel #(.LANES(LANES), .NP(RP), .AWD(OW), .DW(1)) u_ld (
    .req_i(rd_i), .addr_i(off_i), .size_i(size_i), .data_i({LANES{1'b0}}), .sel_o(p_sel), .used_o(), .addr_o(l_off),
    .size_o(l_size), .data_o(), .left_o(r_left)
  );
  sephirot_portsel #(.LANES(LANES), .NP(WP), .AWD(OW)) u_st (
    .req_i(wr_i), .addr_i(off_i), .size_i(size_i), .data_i(wdata_i), .sel_o(), .used_o(q_used),
    .addr_o(q_off), .size_o(q_size), .data_o(q_data), .left_o(w_left)
  );
  /* verilator lint_on PINCONNECTEMPTY */
  integer pp, k;
  always @(*) over_o = r_left | w_left;

  wire [64*SP-1:0] prdata;                         // bytes read by port p in access order
  always @(*) begin
    rdata_o = {64*LANES{1'b0}};
    for (k = 0; k < LANES; k = k + 1)
      for (pp = 0; pp < RP; pp = pp + 1)
        if (p_sel[LANES*pp + k]) rdata_o[64*k +: 64] = prdata[64*pp +: 64];
  end
  assign h_rdata_o = prdata[63:0];

  wire [64*SP-1:0] bank_rd;                        // byte read by port p from bank b: bank_rd[64*p + 8*b +: 8]
  genvar gp, gb, gk;
  generate
    for (gp = 0; gp < SP; gp = gp + 1) begin : gen_port
      // the variable part-selects below are on this port's own slices: an 8:1 byte mux each
      wire [63:0] prd = bank_rd[64*gp +: 64];
      for (gb = 0; gb < 8; gb = gb + 1) begin : gen_byte
        wire [2:0] bank = p_off[OW*gp +: 3] + gb[2:0];
        assign prdata[64*gp + 8*gb +: 8] = ({1'b0, gb[2:0]} < p_size[4*gp +: 4]) ? prd[8*bank +: 8] : 8'd0;
      end
    end
    // the valid bits' set terms, shared by the banks: the one-hot word each store port starts in
    reg [SW-1:0] wbase [0:WP-1];
    integer vq;
    always @(*)
      for (vq = 0; vq < WP; vq = vq + 1)
        wbase[vq] = (commit_i && q_used[vq]) ? {{(SW-1){1'b0}}, 1'b1} << q_off[OW*vq+3 +: SWW] : {SW{1'b0}};
    for (gb = 0; gb < 8; gb = gb + 1) begin : gen_bank
      reg [SW-1:0]      vld_q;
      wire [SWW*WP-1:0] wword;              // word of this bank written by store port q
      wire [WP-1:0]     whit;               // store port q writes this bank
      wire [WP-1:0]     wlo;                // ... in the word it starts in (else the next one)
      wire [WP-1:0]     wen;                // ... and no later port writes the same word (the last store wins)
      wire [8*SP*WP-1:0] crd;               // byte read by port p from copy q: crd[8*(SP*q + p) +: 8]
      wire [8*WP*WP-1:0] xrd;               // byte of copy q at the word store port r writes: xrd[8*(WP*q + r) +: 8]
      wire [SWW*SP-1:0] rword;              // word of this bank read by port p
      for (gp = 0; gp < SP; gp = gp + 1) begin : gen_bport
        wire [OW-1:0]  off = p_off[OW*gp +: OW];
        wire [2:0]     idx = gb[2:0] - off[2:0];
        // the access crosses into the next word of this bank when off%8 + idx carries
        wire [SWW-1:0] w = off[OW-1:3] + {{(SWW-1){1'b0}}, idx > ~off[2:0]};
        reg  [7:0]     x;
        integer        xq;
        always @(*) begin
          x = 8'd0;
          if (vld_q[w]) for (xq = 0; xq < WP; xq = xq + 1) x = x ^ crd[8*(SP*xq + gp) +: 8];
        end
        assign rword[SWW*gp +: SWW] = w;
        assign bank_rd[64*gp + 8*gb +: 8] = x;
      end
      for (gk = 0; gk < WP; gk = gk + 1) begin : gen_copy
        reg [7:0] mem_q [0:SW-1];
        wire [OW-1:0]  off = q_off[OW*gk +: OW];
        wire [2:0]     idx = gb[2:0] - off[2:0];
        wire           carry = idx > ~off[2:0];
        wire [SWW-1:0] ww = off[OW-1:3] + {{(SWW-1){1'b0}}, carry};
        wire [63:0]    wd = q_data[64*gk +: 64];
        reg  [7:0]     wx;                  // the byte XOR the other copies' bytes at ww: all copies XOR to it
        reg            later;
        integer        wq;
        always @(*) begin
          wx = 8'd0;
          later = 1'b0;
          if (commit_i && whit[gk]) begin   // (the simulation skips the rows without a store to this bank)
            wx = wd[8*idx +: 8];
            for (wq = 0; wq < WP; wq = wq + 1) begin
              if (wq != gk) wx = wx ^ xrd[8*(WP*wq + gk) +: 8];
              if (wq > gk && whit[wq] && wword[SWW*wq +: SWW] == ww) later = 1'b1;
            end
          end
        end
        assign wword[SWW*gk +: SWW] = ww;
        assign whit[gk] = q_used[gk] && ({1'b0, idx} < q_size[4*gk +: 4]);
        assign wlo[gk] = !carry;
        assign wen[gk] = whit[gk] && !later;
        always @(posedge clk_i)
          if (commit_i && wen[gk]) mem_q[ww] <= wx;
        for (gp = 0; gp < SP; gp = gp + 1) begin : gen_crd
          assign crd[8*(SP*gk + gp) +: 8] = mem_q[rword[SWW*gp +: SWW]];
        end
        for (gp = 0; gp < WP; gp = gp + 1) begin : gen_xrd
          assign xrd[8*(WP*gk + gp) +: 8] = mem_q[wword[SWW*gp +: SWW]];
        end
      end
      // valid bits: word i of this bank is set by a store port starting in word i (its low part) or in word i-1
      // (its high part): two shared one-hot vectors and two bits per port, no decoder per bank and port
      // (AND-OR on replicated bits: as a multiplexer per port, yosys kept two 64-bit multiplexers per bank and port)
      reg [SW-1:0] vld_set;
      integer vl;
      always @(*) begin
        vld_set = {SW{1'b0}};
        if (commit_i && |q_used)
        for (vl = 0; vl < WP; vl = vl + 1)
          vld_set = vld_set | ({SW{whit[vl] && wlo[vl]}} & wbase[vl])
                            | ({SW{whit[vl] && !wlo[vl]}} & {wbase[vl][SW-2:0], wbase[vl][SW-1]});
      end
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) vld_q <= {SW{1'b0}};
        else if (clear_i) vld_q <= {SW{1'b0}};
        else if (commit_i && |q_used) vld_q <= vld_q | vld_set;
      end
    end
  endgenerate
endmodule
`default_nettype wire
