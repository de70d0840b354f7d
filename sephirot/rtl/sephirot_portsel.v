// sephirot_portsel: a memory's NP ports given to the requesting lanes in lane order (the contract's port rules).
`default_nettype none

// Port p takes the lowest requesting lane not taken by ports 0..p-1, as one-hot selects and AND-OR muxes (a lane
// counter made adders and comparators). A lane left without a port (left_o) faults its row in the core, so its
// access is never served. Loads and stores take separate instances: an atomic's store data depends on its load.
module sephirot_portsel #(
  parameter integer LANES = 4,
  parameter integer NP    = 2,     // ports
  parameter integer AWD   = 32,    // bits of an address or offset
  parameter integer DW    = 64     // bits of store data (1 for loads: hierarchy is kept in synthesis, so data
                                   // muxes left unconnected would still cost their LUTs)
) (
  input  wire [LANES-1:0]     req_i,
  input  wire [AWD*LANES-1:0] addr_i,
  input  wire [4*LANES-1:0]   size_i,
  input  wire [DW*LANES-1:0]  data_i,
  output reg  [LANES*NP-1:0]  sel_o,     // lanes of port p at sel_o[LANES*p +: LANES], one-hot or none
  output reg  [NP-1:0]        used_o,
  output reg  [AWD*NP-1:0]    addr_o,
  output reg  [4*NP-1:0]      size_o,
  output reg  [DW*NP-1:0]     data_o,
  output reg  [LANES-1:0]     left_o     // requesting lanes without a port
);
  function automatic [LANES-1:0] lowest(input [LANES-1:0] m);
    lowest = m & (~m + {{(LANES-1){1'b0}}, 1'b1});
  endfunction
  integer p, j;
  always @(*) begin
    left_o = req_i;
    addr_o = {AWD*NP{1'b0}};
    size_o = {4*NP{1'b0}};
    for (p = 0; p < NP; p = p + 1) begin
      sel_o[LANES*p +: LANES] = lowest(left_o);
      left_o = left_o & ~sel_o[LANES*p +: LANES];
      used_o[p] = |sel_o[LANES*p +: LANES];
      for (j = 0; j < LANES; j = j + 1)
        if (sel_o[LANES*p + j]) begin
          addr_o[AWD*p +: AWD] = addr_i[AWD*j +: AWD];
          size_o[4*p +: 4] = size_i[4*j +: 4];
        end
    end
  end
  // (a block of its own: a store's data may depend, through its lane, on a load this row's ports serve)
  integer q, k;
  always @(*) begin
    data_o = {DW*NP{1'b0}};
    for (q = 0; q < NP; q = q + 1)
      for (k = 0; k < LANES; k = k + 1)
        if (sel_o[LANES*q + k]) data_o[DW*q +: DW] = data_i[DW*k +: DW];
  end
endmodule
`default_nettype wire
