// sephirot_mapcfg: the map configuration table (one entry per map id, a read port per core), written by the host.
`default_nettype none
`include "sephirot_params.vh"

// Entry layout (256 bits, from the compiler's map layout, docs/maps.md):
//   [7:0] type  [15:8] valid  [31:16] key_size  [47:32] value_size  [79:48] max_entries  [111:80] offset
//   [143:112] slots  [159:144] slot_size  [175:160] key_offset  [191:176] value_offset  [207:192] data_offset
//   [208] read-only (BPF_F_RDONLY_PROG: .rodata; sephirot_mapguard.v keeps a copy with the value size)
//   [210:209] tier (params.TIERS)
// Each core's helper unit reads its own entry (id_i, entry_o: core k's at [W*k +: W]): the shared rows of several
// cores call map helpers in the same cycle (execution contract section 8). lkx_o has a bit per map id, set when
// the host writes the entry: map_lookup_elem on that map asks for the map grant exclusive (the map is off chip, or
// its lookup writes: params.LOOKUP_WRITE_KINDS); 0 for an id not configured (a bad handle asks shared).
module sephirot_mapcfg #(
  parameter integer N     = `SEPH_MAPS_MAX,
  parameter integer CORES = 1
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  input  wire                 we_i,
  input  wire [7:0]           widx_i,
  input  wire [255:0]         wdata_i,
  input  wire [32*CORES-1:0]  id_i,        // map id asked by each core's helper unit
  output reg  [256*CORES-1:0] entry_o,     // its entry (valid field zero when the id is not configured)
  output wire [31:0]          count_o,     // number of configured maps
  output reg  [N-1:0]         lkx_o        // a lookup of map id i takes the grant exclusive
);
  // distributed RAM, no reset (as flip-flops, 16 x 256 with their read mux cost 1.6K LUT and 4.1K FF). An entry
  // the host has not written since reset reads with a zero valid field [15:8]: the helper unit reads no other field
  // of an entry that is not valid (a bad map handle)
  reg [255:0] tab_q [0:N-1];
  reg [N-1:0] ok_q;
  reg [31:0]  cnt_q;
  wire        w = we_i && {24'd0, widx_i} < N;
  always @(posedge clk_i) if (w) tab_q[widx_i[$clog2(N)-1:0]] <= wdata_i;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ok_q <= {N{1'b0}};
      cnt_q <= 32'd0;
    end else if (w) begin
      ok_q[widx_i[$clog2(N)-1:0]] <= 1'b1;
      if ({24'd0, widx_i} >= cnt_q) cnt_q <= {24'd0, widx_i} + 32'd1;
    end
  end
  localparam [255:0] LKW = `SEPH_MAP_TYPES_LOOKUP_WRITE;
  wire lkx_w = wdata_i[15:8] != 8'd0 && (wdata_i[210:209] != `SEPH_TIER_BRAM || LKW[wdata_i[7:0]]);
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) lkx_o <= {N{1'b0}};
    else if (w) lkx_o[widx_i[$clog2(N)-1:0]] <= lkx_w;
  end
  integer c;
  reg [31:0]          id;
  reg [$clog2(N)-1:0] ri;
  always @(*) begin
    for (c = 0; c < CORES; c = c + 1) begin
      id = id_i[32*c +: 32];
      ri = id[$clog2(N)-1:0];
      entry_o[256*c +: 256] = tab_q[ri];
      if (!(id < N && ok_q[ri])) entry_o[256*c + 8 +: 8] = 8'd0;
    end
  end
  assign count_o = cnt_q;
endmodule
`default_nettype wire
