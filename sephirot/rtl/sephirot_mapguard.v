// sephirot_mapguard: checks every access of the lanes and the helper port in the map memory against its pointer's tag.
`default_nettype none
`include "sephirot_params.vh"

// A pointer into the map memory carries a tag in bits 63:32 (execution contract section 4, params.map_tag): the
// start of the value it points into and its length, both in 8-byte words (values are 8-byte aligned and padded), and
// a read-only bit. An access faults unless [addr, addr + size) lies in [start, start + length) (an untagged pointer
// has length 0: it reaches nothing), and a store also faults on a read-only value (.rodata, BPF_F_RDONLY_PROG). The
// tag is self-contained, so the check reads no table: per client, an add and two compares on 8-byte word indices.
// The off-chip tiers (docs/maps.md "Memory tiers") keep the tag's shape with their own field widths, chosen by the
// address's region: QDR (region 0x6) starts and lengths in 8-byte words of 22 and 9 bits, DDR (addr[31] set) in
// 16-byte units of 27 and 4 bits (params.map_tag); the on-chip check is the one before tiers.
module sephirot_mapguard #(
  parameter integer LANES = `SEPH_LANES
) (
  // the lanes: lane k accesses the map memory this cycle (and writes), with bits 63:32 and 31:0 of its pointer
  input  wire [LANES-1:0]    l_en_i,
  input  wire [LANES-1:0]    l_wr_i,
  input  wire [32*LANES-1:0] l_tag_i,
  input  wire [32*LANES-1:0] l_addr_i,     // (in a map memory tier: the caller decoded the region)
  input  wire [4*LANES-1:0]  l_size_i,
  output reg  [LANES-1:0]    l_fault_o,
  // the helper's read port (separate from the lanes': a helper call starts only when its row's lanes do not fault)
  input  wire                h_en_i,
  input  wire [31:0]         h_tag_i,
  /* verilator lint_off UNUSEDSIGNAL */    // (the helper port reaches the on-chip tier only: bits 31:28 are R_MAP)
  input  wire [31:0]         h_addr_i,
  /* verilator lint_on UNUSEDSIGNAL */
  input  wire [3:0]          h_size_i,
  output wire                h_fault_o
);
  localparam integer SB = `SEPH_MAP_TAG_START_BITS;
  localparam integer LL = `SEPH_MAP_TAG_LEN_LSB;
  localparam integer LB = `SEPH_MAP_TAG_LEN_BITS;
  localparam integer RB = `SEPH_MAP_TAG_RDONLY_BIT;
  localparam integer QSB = `SEPH_QDR_TAG_START_BITS;
  localparam integer QLB = `SEPH_QDR_TAG_LEN_BITS;
  localparam integer DSB = `SEPH_DDR_TAG_START_BITS;
  localparam integer DLB = `SEPH_DDR_TAG_LEN_BITS;
  localparam [3:0]   R_QDR = `SEPH_REGION_QDR;

  // an access of `size` (1..8) bytes at offset `off` of the map region through a pointer tagged `tag` faults: its
  // first 8-byte word is below the value's, or its last word is at or past the value's end (words of 8 bytes: the
  // last is the first plus one when the access crosses a word boundary)
  function automatic bad(input [31:0] tag, input [27:0] off, input [3:0] size, input wr);
    reg [25:0] first, last, start, stop;
    begin
      first = {1'b0, off[27:3]};
      last = first + {25'd0, {1'b0, off[2:0]} + size > 4'd8};
      start = {{(26-SB){1'b0}}, tag[SB-1:0]};
      stop = start + {{(26-LB){1'b0}}, tag[LL +: LB]};
      bad = (tag >> (RB + 1)) != 32'd0 || first < start || last >= stop || (wr && tag[RB]);
    end
  endfunction

  // the same in QDR: 8-byte words, QSB start and QLB length bits (the region's offsets past its 24 MiB fault)
  function automatic qbad(input [31:0] tag, input [27:0] off, input [3:0] size, input wr);
    reg [21:0] first, last, start;
    reg [22:0] stop;
    begin
      first = off[24:3];
      last = first + {21'd0, {1'b0, off[2:0]} + size > 4'd8};
      start = tag[QSB-1:0];
      stop = {1'b0, start} + {{(23-QLB){1'b0}}, tag[QSB +: QLB]};
      qbad = (tag >> (RB + 1)) != 32'd0 || {4'd0, off} >= `SEPH_QDR_BYTES || {1'b0, first} < {1'b0, start} ||
             {1'b0, last} >= stop || (wr && tag[RB]);
    end
  endfunction
  // in DDR: 16-byte units, DSB start and DLB length bits (the 2 GiB window: bits 30:0 of the address)
  function automatic dbad(input [31:0] tag, input [30:0] off, input [3:0] size, input wr);
    reg [27:0] first, last, start, stop;   // (a unit more than the window: the last may be past it)
    begin
      first = {1'b0, off[30:4]};
      last = first + {27'd0, {1'b0, off[3:0]} + {1'b0, size} > 5'd16};
      start = {1'b0, tag[DSB-1:0]};
      stop = start + {{(28-DLB){1'b0}}, tag[DSB +: DLB]};
      dbad = (tag >> (RB + 1)) != 32'd0 || first < start || last >= stop || (wr && tag[RB]);
    end
  endfunction

  integer c;
  reg [31:0] la;
  always @(*)
    for (c = 0; c < LANES; c = c + 1) begin
      la = l_addr_i[32*c +: 32];
      if (la[31])
        l_fault_o[c] = l_en_i[c] && dbad(l_tag_i[32*c +: 32], la[30:0], l_size_i[4*c +: 4], l_wr_i[c]);
      else if (la[31:28] == R_QDR)
        l_fault_o[c] = l_en_i[c] && qbad(l_tag_i[32*c +: 32], la[27:0], l_size_i[4*c +: 4], l_wr_i[c]);
      else
        l_fault_o[c] = l_en_i[c] && bad(l_tag_i[32*c +: 32], la[27:0], l_size_i[4*c +: 4], l_wr_i[c]);
    end
  assign h_fault_o = h_en_i && bad(h_tag_i, h_addr_i[27:0], h_size_i, 1'b0);
endmodule
`default_nettype wire
