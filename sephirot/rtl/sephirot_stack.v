// sephirot_stack: the core's stack, byte addressed: RP load and WP store ports; the helper reads through load port 0
// and writes (fib_lookup) through store port 0.
`default_nettype none
`include "sephirot_params.vh"

// A row has at most RP stack loads and WP stack stores (execution contract, memory): the first RP lanes loading
// from the stack (lane order) get the load ports, the first WP storing lanes the store ports; the core faults a
// row that asks for more (over_o). A row calling a helper has no stack load (execution contract; the core faults a
// lane that tries): the helper's reads take load port 0 then (h_sel_i), as a port of its own was a third of the
// stack.
// Layout: byte a is in 8-byte word a/8; the even words' bytes are in banks 0..7 and the odd words' in banks
// 8..15 (byte a in bank a%16, row a/16). An access of up to 8 bytes touches two words at most, one in each half,
// so it touches each bank at most once, at one row per half.
// Zero at the start of every packet, in 0 cycles: a valid bit per word, cleared when the packet ends (clear_i).
// A word whose bit is clear reads 0; a store to it writes zeros into the bytes of the word it does not store
// (those banks are free: the store's other word is in the other half), so a word with its bit set holds this
// packet's bytes only. (A valid bit per byte was 512 flip-flops and 1.8K LUTs of set logic.)
// Two store ports: each port writes its own copy of a bank (a single write port: distributed RAM), and a byte is
// the XOR of its copies: a port writes its byte XOR the other copies' bytes at that row (the XOR multi-port
// memory). Where two ports write one byte, a stored byte wins over a zero, and the later port (lane order) over
// the earlier. Reads are combinational: the memory before the row.
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
  input  wire                 h_we_i,             // the helper writes (a row that stores nothing here, stalled):
  input  wire [OW-1:0]        h_woff_i,           // store port 0 is the helper's, and the write takes effect at
  input  wire [3:0]           h_wsize_i,          // the clock edge
  input  wire [63:0]          h_wdata_i,
  output reg  [LANES-1:0]     over_o,             // lane k's access finds no free port: the row faults
  output reg  [64*LANES-1:0]  rdata_o,            // bytes read by lane k in access order, zero above its size
  output wire [63:0]          h_rdata_o
);
  localparam integer SP = RP;                     // read ports: the lanes' load ports (the helper's is port 0)
  localparam integer NW = SSZ / 8;                // 8-byte words
  localparam integer NR = SSZ / 16;               // rows of a bank
  localparam integer WW = OW - 3;                 // bits of a word index
  localparam integer RW = OW - 4;                 // bits of a row
`include "sephirot_bytes.vh"

  // ports to lanes, in lane order (sephirot_portsel); port 0 is the helper's in a row calling one
  wire [LANES*RP-1:0] p_sel;                      // lanes of load port p, one-hot (or none)
  wire [LANES-1:0]    r_left, w_left;
  wire [OW*RP-1:0]    l_off;
  wire [4*RP-1:0]     l_size;
  wire [OW*WP-1:0]    l_qoff;                     // the store ports as the lanes take them
  wire [4*WP-1:0]     l_qsize;
  wire [64*WP-1:0]    l_qdata;
  wire [WP-1:0]       l_qused;
  reg  [OW*WP-1:0]    q_off;                      // ... and with the helper's write on port 0
  reg  [4*WP-1:0]     q_size;
  reg  [64*WP-1:0]    q_data;
  reg  [WP-1:0]       q_used;
  always @(*) begin
    q_off = l_qoff; q_size = l_qsize; q_data = l_qdata; q_used = l_qused;
    if (h_we_i) begin
      q_off[OW-1:0] = h_woff_i; q_size[3:0] = h_wsize_i; q_data[63:0] = h_wdata_i; q_used[0] = 1'b1;
    end
  end
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
    .req_i(wr_i), .addr_i(off_i), .size_i(size_i), .data_i(wdata_i), .sel_o(), .used_o(l_qused),
    .addr_o(l_qoff), .size_o(l_qsize), .data_o(l_qdata), .left_o(w_left)
  );
  /* verilator lint_on PINCONNECTEMPTY */
  integer pp, k;
  always @(*) over_o = r_left | w_left;

  // the row of an access in half h: its first word's row, or the next row for the even half of an odd word
  function automatic [RW-1:0] row_of(input [WW-1:0] w0, input h);   // w0: the access's first word
    row_of = w0[WW-1:1] + {{(RW-1){1'b0}}, !h && w0[0]};
  endfunction

  reg  [NW-1:0]    vld_q;                         // word w was written in this packet
  // the valid bits of an access's two words: {w0 + 1, w0}
  function automatic [1:0] vld_pair(input [WW-1:0] w0);
    vld_pair = {vld_q[w0 + {{(WW-1){1'b0}}, 1'b1}], vld_q[w0]};
  endfunction

  // (the simulation evaluates the read side only in the cycles that read, the write side in those that commit a
  // store: Verilator evaluates every continuous assignment every cycle)
  wire             s_wr = (commit_i && |q_used) || h_we_i;
  reg  [SP-1:0]    s_rd;                          // load port p reads
  always @(*) begin
    for (pp = 0; pp < SP; pp = pp + 1) s_rd[pp] = |p_sel[LANES*pp +: LANES];
    s_rd[0] = s_rd[0] || h_sel_i;
  end
  wire [8*WP*WP-1:0] sbyte [0:15];                // bank b's copy q at the row store port r writes: [8*(WP*q + r)]
  wire [8*SP*WP-1:0] crd [0:15];                  // bank b's copy q at the row load port p reads: [8*(SP*q + p)]
  wire [64*SP-1:0] prdata;                        // bytes read by port p in access order
  always @(*) begin
    rdata_o = {64*LANES{1'b0}};
    for (k = 0; k < LANES; k = k + 1)
      for (pp = 0; pp < RP; pp = pp + 1)
        if (p_sel[LANES*pp + k]) rdata_o[64*k +: 64] = prdata[64*pp +: 64];
  end
  assign h_rdata_o = prdata[63:0];

  genvar gp, gb, gq, gr;
  generate
    // loads: the first word is in the half of off[3], the second in the other; each is the XOR of its copies
    // (one LUT a bit with the half's select), then the 8 bytes from off[2:0] of the two; the bytes of a word
    // without its valid bit, and those past the size, read 0
    for (gp = 0; gp < SP; gp = gp + 1) begin : gen_port
      wire [OW-1:0] off = p_off[OW*gp +: OW];
      wire [WW-1:0] w0 = off[OW-1:3];
      reg  [63:0]   lo, hi, pd;
      reg  [1:0]    wv;                           // the valid bits of the two words
      reg  [7:0]    keep;                         // the bytes read as stored
      integer       xb, xq;
      always @(*) begin
        lo = 64'd0;
        hi = 64'd0;
        pd = 64'd0;
        wv = 2'd0;
        keep = 8'd0;
        if (s_rd[gp]) begin
          for (xb = 0; xb < 8; xb = xb + 1)
            for (xq = 0; xq < WP; xq = xq + 1) begin
              lo[8*xb +: 8] = lo[8*xb +: 8] ^ crd[off[3] ? 8 + xb : xb][8*(SP*xq + gp) +: 8];
              hi[8*xb +: 8] = hi[8*xb +: 8] ^ crd[off[3] ? xb : 8 + xb][8*(SP*xq + gp) +: 8];
            end
          wv = vld_pair(w0);
          keep = sizemask(p_size[4*gp +: 4]) & ({8{wv[0]}} & (8'hff >> off[2:0]) | {8{wv[1]}} & ~(8'hff >> off[2:0]));
          pd = funnel8(lo, hi, off[2:0]) & bytemask(keep);
        end
      end
      assign prdata[64*gp +: 64] = pd;
    end

    // stores: port q's word w0, whether it crosses into w0 + 1, its bytes rotated to their banks (bank j of
    // either half takes byte (j - off) % 8)
    wire [WP-1:0]    xw;                          // store port q crosses into its second word
    wire [WW*WP-1:0] sw0;
    wire [2*WP-1:0]  swv;                         // the valid bits of port q's two words
    wire [64*WP-1:0] rot;
    wire [16*WP-1:0] smask;                       // the bytes port q stores in its two words
    wire [2*RW*WP-1:0] srow;                      // port q's row in half h: srow[RW*(2*q + h) +: RW]
    for (gq = 0; gq < WP; gq = gq + 1) begin : gen_sport
      wire [OW-1:0] off = q_off[OW*gq +: OW];
      wire [WW-1:0] w0 = off[OW-1:3];
      wire [63:0]   wd = q_data[64*gq +: 64];
      reg  [15:0]   m;
      reg  [1:0]    v;
      reg  [63:0]   r;
      integer       xb;
      always @(*) begin
        m = 16'd0;
        v = 2'd0;
        r = 64'd0;
        if (s_wr) begin
          m = {8'd0, sizemask(q_size[4*gq +: 4])} << off[2:0];
          v = vld_pair(w0);
          for (xb = 0; xb < 8; xb = xb + 1) r[8*xb +: 8] = wd[8*(xb[2:0] - off[2:0]) +: 8];
        end
      end
      assign sw0[WW*gq +: WW] = w0;
      assign smask[16*gq +: 16] = m;
      assign xw[gq] = |m[15:8];
      assign swv[2*gq +: 2] = v;
      assign rot[64*gq +: 64] = r;
      assign srow[RW*(2*gq) +: RW] = row_of(w0, 1'b0);
      assign srow[RW*(2*gq+1) +: RW] = row_of(w0, 1'b1);
    end

    for (gb = 0; gb < 16; gb = gb + 1) begin : gen_bank
      localparam integer H = gb / 8;              // half: even or odd words
      reg  [WP-1:0] dat;                          // store port q stores a byte in this bank
      reg  [WP-1:0] zer;                          // ... writes a zero: its word in this half had no valid bit
      reg           d;                            // this half holds the port's second word
      reg  [15:0]   km;
      reg  [1:0]    kv;
      integer       kq;
      always @(*) begin
        dat = {WP{1'b0}};
        zer = {WP{1'b0}};
        d = 1'b0;
        km = 16'd0;
        kv = 2'd0;
        if (s_wr)
          for (kq = 0; kq < WP; kq = kq + 1) begin
            d = H[0] ^ q_off[OW*kq + 3];
            km = smask[16*kq +: 16];
            kv = swv[2*kq +: 2];
            dat[kq] = q_used[kq] && km[{d, gb[2:0]}];
            zer[kq] = q_used[kq] && !km[{d, gb[2:0]}] && (!d || xw[kq]) && !kv[d];
          end
      end
      for (gq = 0; gq < WP; gq = gq + 1) begin : gen_copy
        reg  [7:0]    mem_q [0:NR-1];
        wire [RW-1:0] wr = srow[RW*(2*gq + H) +: RW];
        reg  [7:0]    wx;                         // the byte XOR the other copies' bytes at wr: all XOR to it
        reg           lose;                       // another port writes this byte, and wins
        integer       xq;
        always @(*) begin
          wx = 8'd0;
          lose = 1'b0;
          if (dat[gq] || zer[gq]) begin
            if (dat[gq]) wx = rot[64*gq + 8*(gb % 8) +: 8];
            for (xq = 0; xq < WP; xq = xq + 1)
              if (xq != gq) begin
                wx = wx ^ sbyte[gb][8*(WP*xq + gq) +: 8];
                if (srow[RW*(2*xq + H) +: RW] == wr &&
                    (dat[xq] && (!dat[gq] || xq > gq) || zer[xq] && zer[gq] && xq > gq)) lose = 1'b1;
              end
          end
        end
        always @(posedge clk_i)
          if ((dat[gq] || zer[gq]) && !lose) mem_q[wr] <= wx;
        for (gp = 0; gp < SP; gp = gp + 1) begin : gen_crd
          reg [7:0] c;
          always @(*) c = s_rd[gp] ? mem_q[row_of(p_off[OW*gp+3 +: WW], H[0])] : 8'd0;
          assign crd[gb][8*(SP*gq + gp) +: 8] = c;
        end
        for (gr = 0; gr < WP; gr = gr + 1) begin : gen_xrd
          reg [7:0] c;
          always @(*) c = s_wr ? mem_q[srow[RW*(2*gr + H) +: RW]] : 8'd0;
          assign sbyte[gb][8*(WP*gq + gr) +: 8] = c;
        end
      end
    end
  endgenerate

  // valid bits: a word becomes valid when a store port writes it (its first word, or its second when it crosses):
  // one decoder a port, its neighbour taken by a rotation
  reg [NW-1:0] vld_set, oh;
  integer vq;
  always @(*) begin
    vld_set = {NW{1'b0}};
    oh = {NW{1'b0}};
    if (s_wr)
      for (vq = 0; vq < WP; vq = vq + 1) begin
        oh = q_used[vq] ? {{(NW-1){1'b0}}, 1'b1} << sw0[WW*vq +: WW] : {NW{1'b0}};
        vld_set = vld_set | oh | ({NW{xw[vq]}} & {oh[NW-2:0], oh[NW-1]});
      end
  end
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) vld_q <= {NW{1'b0}};
    else if (clear_i) vld_q <= {NW{1'b0}};
    else if (s_wr) vld_q <= vld_q | vld_set;
  end
endmodule
`default_nettype wire
