// sephirot_mapcfg: the map configuration table (one entry per map id), written by the host at load time.
`default_nettype none
`include "sephirot_params.vh"

// Entry layout (256 bits, from the compiler's map layout, docs/maps.md):
//   [7:0] type  [15:8] valid  [31:16] key_size  [47:32] value_size  [79:48] max_entries  [111:80] offset
//   [143:112] slots  [159:144] slot_size  [175:160] key_offset  [191:176] value_offset  [207:192] data_offset
module sephirot_mapcfg #(
  parameter integer N = `SEPH_MAPS_MAX
) (
  input  wire          clk_i,
  input  wire          rst_ni,
  input  wire          we_i,
  input  wire [7:0]    widx_i,
  input  wire [255:0]  wdata_i,
  input  wire [31:0]   id_i,        // map id asked by the helper unit
  output reg  [255:0]  entry_o,     // its entry (all zero when the id is not configured)
  output wire [31:0]   count_o      // number of configured maps
);
  reg [255:0] tab_q [0:N-1];
  reg [31:0]  cnt_q;
  integer i;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (i = 0; i < N; i = i + 1) tab_q[i] <= 256'd0;
      cnt_q <= 32'd0;
    end else if (we_i && {24'd0, widx_i} < N) begin
      tab_q[widx_i[$clog2(N)-1:0]] <= wdata_i;
      if ({24'd0, widx_i} >= cnt_q) cnt_q <= {24'd0, widx_i} + 32'd1;
    end
  end
  always @(*) entry_o = (id_i < N) ? tab_q[id_i[$clog2(N)-1:0]] : 256'd0;
  assign count_o = cnt_q;
endmodule
`default_nettype wire
