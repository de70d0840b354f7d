// sephirot_mapguard: checks every access of the lanes and the helper port in the map memory against its pointer's tag.
`default_nettype none
`include "sephirot_params.vh"

// A pointer into the map memory carries a tag in bits 63:32 (execution contract section 4, params.map_tag): the
// start of the value it points into and its length, both in 8-byte words (values are 8-byte aligned and padded), and
// a read-only bit. An access faults unless [addr, addr + size) lies in [start, start + length) (an untagged pointer
// has length 0: it reaches nothing), and a store also faults on a read-only value (.rodata, BPF_F_RDONLY_PROG). The
// tag is self-contained, so the check reads no table: per client, an add and two compares on 8-byte word indices.
module sephirot_mapguard #(
  parameter integer LANES = `SEPH_LANES
) (
  // the lanes: lane k accesses the map memory this cycle (and writes), with bits 63:32 and 31:0 of its pointer
  input  wire [LANES-1:0]    l_en_i,
  input  wire [LANES-1:0]    l_wr_i,
  input  wire [32*LANES-1:0] l_tag_i,
  /* verilator lint_off UNUSEDSIGNAL */    // (addresses in the map region: bits 31:28 were decoded by the caller)
  input  wire [32*LANES-1:0] l_addr_i,
  /* verilator lint_on UNUSEDSIGNAL */
  input  wire [4*LANES-1:0]  l_size_i,
  output reg  [LANES-1:0]    l_fault_o,
  // the helper's read port (separate from the lanes': a helper call starts only when its row's lanes do not fault)
  input  wire                h_en_i,
  input  wire [31:0]         h_tag_i,
  /* verilator lint_off UNUSEDSIGNAL */
  input  wire [31:0]         h_addr_i,
  /* verilator lint_on UNUSEDSIGNAL */
  input  wire [3:0]          h_size_i,
  output wire                h_fault_o
);
  localparam integer SB = `SEPH_MAP_TAG_START_BITS;
  localparam integer LL = `SEPH_MAP_TAG_LEN_LSB;
  localparam integer LB = `SEPH_MAP_TAG_LEN_BITS;
  localparam integer RB = `SEPH_MAP_TAG_RDONLY_BIT;

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

  integer c;
  always @(*)
    for (c = 0; c < LANES; c = c + 1)
      l_fault_o[c] = l_en_i[c] && bad(l_tag_i[32*c +: 32], l_addr_i[32*c +: 28], l_size_i[4*c +: 4], l_wr_i[c]);
  assign h_fault_o = h_en_i && bad(h_tag_i, h_addr_i[27:0], h_size_i, 1'b0);
endmodule
`default_nettype wire
