// sephirot_mapguard: checks every access of the lanes and the helper port in the map memory against its pointer's tag.
`default_nettype none
`include "sephirot_params.vh"

// A pointer into the map memory carries a tag in bits 63:32 (execution contract section 4, params.map_tag): a valid
// bit, the map id and the offset of the value it points into. An access faults unless the tag is valid, names a
// configured map, and [addr, addr + size) lies in [value, value + value size of that map); a store also faults when
// the map is read-only (BPF_F_RDONLY_PROG, bit 208 of its configuration entry). The value sizes and read-only bits
// are a copy of those fields of the map configuration table (sephirot_mapcfg.v), written with it, so that each
// client reads its own map's without a port of the table (16 x 18 flip-flops).
module sephirot_mapguard #(
  parameter integer N     = `SEPH_MAPS_MAX,
  parameter integer LANES = `SEPH_LANES
) (
  input  wire                clk_i,
  input  wire                rst_ni,
  input  wire                we_i,             // the map configuration table's write
  input  wire [7:0]          widx_i,
  input  wire [255:0]        wdata_i,
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
  localparam integer OB = `SEPH_MAP_TAG_OFF_BITS;
  localparam integer IL = `SEPH_MAP_TAG_ID_LSB;
  localparam integer IB = `SEPH_MAP_TAG_ID_BITS;
  localparam integer VB = `SEPH_MAP_TAG_VALID_BIT;
  localparam integer RO_BIT = 208;
  localparam integer NW = $clog2(N);

  reg [16*N-1:0] vsize_q;
  reg [N-1:0]    ro_q;
  reg [N-1:0]    ok_q;
  wire           w = we_i && {24'd0, widx_i} < N;
  integer wi;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      vsize_q <= {16*N{1'b0}};
      ro_q <= {N{1'b0}};
      ok_q <= {N{1'b0}};
    end else if (w) begin
      for (wi = 0; wi < N; wi = wi + 1)
        if (widx_i[NW-1:0] == wi[NW-1:0]) begin
          vsize_q[16*wi +: 16] <= wdata_i[47:32];
          ro_q[wi] <= wdata_i[RO_BIT];
          ok_q[wi] <= 1'b1;
        end
    end
  end

  // an access of `size` bytes at `addr` (in the map region) through a pointer tagged `tag` faults
  function automatic bad(input [31:0] tag, input [27:0] addr, input [3:0] size, input wr,
                         input [16*N-1:0] vsz, input [N-1:0] ro, input [N-1:0] ok);
    reg [IB-1:0] id;
    reg [28:0]   start, off;
    reg [15:0]   vs;
    reg          valid;
    begin
      id = tag[IL +: IB];
      start = {{(29-OB){1'b0}}, tag[OB-1:0]};
      off = {1'b0, addr};
      valid = tag[31:VB] == {{(31-VB){1'b0}}, 1'b1} && {{(32-IB){1'b0}}, id} < N && ok[id[NW-1:0]];
      vs = vsz[16*id[NW-1:0] +: 16];
      bad = !valid || off < start || off + {25'd0, size} > start + {13'd0, vs} || (wr && ro[id[NW-1:0]]);
    end
  endfunction

  integer c;
  always @(*)
    for (c = 0; c < LANES; c = c + 1)
      l_fault_o[c] = l_en_i[c] && bad(l_tag_i[32*c +: 32], l_addr_i[32*c +: 28], l_size_i[4*c +: 4], l_wr_i[c],
                                      vsize_q, ro_q, ok_q);
  assign h_fault_o = h_en_i && bad(h_tag_i, h_addr_i[27:0], h_size_i, 1'b0, vsize_q, ro_q, ok_q);
endmodule
`default_nettype wire
