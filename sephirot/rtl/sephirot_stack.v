// sephirot_stack: the core's stack, byte addressed: a read port per lane and for the helper, a write port per lane.
`default_nettype none
`include "sephirot_params.vh"

// Byte a of the stack is byte a/8 of bank a%8, so that an access of up to 8 bytes at any offset touches each bank
// at most once: a bank has one read port per port and one write port per lane instead of one per byte. A bank is
// written by up to LANES lanes in one cycle, so each lane writes its own copy of the bank (a single write port:
// distributed RAM), and a live-value table remembers which copy holds each word's last write (the highest lane
// of the row: stores commit in lane order). A valid bit per byte makes bytes not written in this packet read 0
// (clear_i zeroes the stack in 0 cycles). Reads are combinational: the memory before the row.
module sephirot_stack #(
  parameter integer LANES = `SEPH_LANES,
  parameter integer SSZ   = `SEPH_STACK_SIZE,
  parameter integer SP    = LANES + 1,            // read ports: the lanes, then the helper
  parameter integer OW    = $clog2(SSZ)
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  input  wire                 clear_i,            // the packet ends: every byte reads 0 from the next cycle
  input  wire                 commit_i,           // the row commits: lane stores take effect at the clock edge
  input  wire [LANES-1:0]     wr_i,               // lane k stores (its port's offset, size and wdata)
  input  wire [OW*SP-1:0]     off_i,              // byte offset of port p's access
  input  wire [4*SP-1:0]      size_i,             // bytes of port p's access (at most 8)
  input  wire [64*LANES-1:0]  wdata_i,
  output wire [64*SP-1:0]     rdata_o             // bytes read by port p in access order, zero above its size
);
  localparam integer SW  = SSZ / 8;               // words of a bank
  localparam integer SWW = OW - 3;
  localparam integer LB  = (LANES > 1) ? $clog2(LANES) : 1;  // bits of a lane number
  wire [64*SP-1:0] bank_rd;                        // byte read by port p from bank b: bank_rd[64*p + 8*b +: 8]
  genvar gp, gb, gk;
  generate
    for (gp = 0; gp < SP; gp = gp + 1) begin : gen_port
      // the variable part-selects below are on this port's own slices: an 8:1 byte mux each
      wire [63:0] prd = bank_rd[64*gp +: 64];
      for (gb = 0; gb < 8; gb = gb + 1) begin : gen_byte
        wire [2:0] bank = off_i[OW*gp +: 3] + gb[2:0];
        assign rdata_o[64*gp + 8*gb +: 8] = ({1'b0, gb[2:0]} < size_i[4*gp +: 4]) ? prd[8*bank +: 8] : 8'd0;
      end
    end
    for (gb = 0; gb < 8; gb = gb + 1) begin : gen_bank
      reg [SW-1:0]      vld_q;
      reg [LB*SW-1:0]   lvt_q;
      wire [SWW*SP-1:0] word;               // word of this bank touched by port p
      wire [3*SP-1:0]   idx;                // byte of port p's access that falls in this bank
      wire [SP-1:0]     hit;
      wire [8*SP*LANES-1:0] crd;            // byte read by port p from lane k's copy: crd[8*(SP*k + p) +: 8]
      for (gp = 0; gp < SP; gp = gp + 1) begin : gen_bport
        wire [OW-1:0]  off = off_i[OW*gp +: OW];
        wire [SWW-1:0] w = word[SWW*gp +: SWW];
        wire [LB-1:0]  live;
        for (gk = 0; gk < LB; gk = gk + 1) begin : gen_live
          assign live[gk] = lvt_q[SW*gk + {{(32-SWW){1'b0}}, w}];
        end
        wire [8*LANES-1:0] cp;              // this port's byte from each copy
        for (gk = 0; gk < LANES; gk = gk + 1) begin : gen_cp
          assign cp[8*gk +: 8] = crd[8*(SP*gk + gp) +: 8];
        end
        assign idx[3*gp +: 3] = gb[2:0] - off[2:0];
        // the access crosses into the next word of this bank when off%8 + idx carries
        assign word[SWW*gp +: SWW] = off[OW-1:3] + {{(SWW-1){1'b0}}, idx[3*gp +: 3] > ~off[2:0]};
        assign hit[gp] = {1'b0, idx[3*gp +: 3]} < size_i[4*gp +: 4];
        assign bank_rd[64*gp + 8*gb +: 8] = vld_q[w] ? cp[8*live +: 8] : 8'd0;
      end
      for (gk = 0; gk < LANES; gk = gk + 1) begin : gen_copy
        reg [7:0] mem_q [0:SW-1];
        wire [SWW-1:0] ww = word[SWW*gk +: SWW];
        wire [63:0]    wd = wdata_i[64*gk +: 64];
        always @(posedge clk_i)
          if (commit_i && wr_i[gk] && hit[gk]) mem_q[ww] <= wd[8*idx[3*gk +: 3] +: 8];
        for (gp = 0; gp < SP; gp = gp + 1) begin : gen_crd
          assign crd[8*(SP*gk + gp) +: 8] = mem_q[word[SWW*gp +: SWW]];
        end
      end
      // words written this row, one-hot per lane; the live-value table is kept as LB bit planes (plane k: bit k
      // of the lane number), so that its update is a few bitwise operations per lane
      reg [SW-1:0]    wdec [0:LANES-1];
      reg [SW-1:0]    vld_set;
      reg [LB*SW-1:0] lvt_d;
      integer vl, vk;
      always @(*) begin
        vld_set = {SW{1'b0}};
        lvt_d = lvt_q;
        for (vl = 0; vl < LANES; vl = vl + 1) wdec[vl] = {SW{1'b0}};
        if (commit_i && |wr_i)  // (the simulation skips the rows without a stack store)
        for (vl = 0; vl < LANES; vl = vl + 1) begin  // lane order: the last store wins
          wdec[vl] = {{(SW-1){1'b0}}, wr_i[vl] && hit[vl]} << word[SWW*vl +: SWW];
          vld_set = vld_set | wdec[vl];
          for (vk = 0; vk < LB; vk = vk + 1)
            lvt_d[SW*vk +: SW] = (lvt_d[SW*vk +: SW] & ~wdec[vl]) | (vl[vk] ? wdec[vl] : {SW{1'b0}});
        end
      end
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) vld_q <= {SW{1'b0}};
        else if (clear_i) vld_q <= {SW{1'b0}};
        else if (commit_i && |wr_i) vld_q <= vld_q | vld_set;
      end
      always @(posedge clk_i) if (commit_i && |wr_i) lvt_q <= lvt_d;
    end
  endgenerate
endmodule
`default_nettype wire
