// sephirot_mapcfg: the map configuration table (one entry per map id), written by the host at load time.
`default_nettype none
`include "sephirot_params.vh"

// Entry layout (256 bits, from the compiler's map layout, docs/maps.md):
//   [7:0] type  [15:8] valid  [31:16] key_size  [47:32] value_size  [79:48] max_entries  [111:80] offset
//   [143:112] slots  [159:144] slot_size  [175:160] key_offset  [191:176] value_offset  [207:192] data_offset
//   [208] read-only (BPF_F_RDONLY_PROG: .rodata; sephirot_mapguard.v keeps a copy with the value size)
module sephirot_mapcfg #(
  parameter integer N = `SEPH_MAPS_MAX
) (
  input  wire          clk_i,
  input  wire          rst_ni,
  input  wire          we_i,
  input  wire [7:0]    widx_i,
  input  wire [255:0]  wdata_i,
  input  wire [31:0]   id_i,        // map id asked by the helper unit
  output reg  [255:0]  entry_o,     // its entry (valid field zero when the id is not configured)
  output wire [31:0]   count_o      // number of configured maps
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
  wire [$clog2(N)-1:0] ri = id_i[$clog2(N)-1:0];
  always @(*) begin
    entry_o = tab_q[ri];
    if (!(id_i < N && ok_q[ri])) entry_o[15:8] = 8'd0;
  end
  assign count_o = cnt_q;
endmodule
`default_nettype wire
