// sephirot_percpu: per-CPU arrays on several cores: a core's map memory accesses inside them reach its own copy.
`default_nettype none
`include "sephirot_params.vh"

// Execution contract section 8: a per-CPU array (percpu_array) has one copy per core at the same addresses, and so
// has a ring buffer's region (the records a core reserved: sephirot_events); a core's lane and helper accesses in
// them reach its copy. Core k's copy of a byte at map-memory offset o is at
// o + k * PERCPU_STRIDE (core 0's is the map's own place; hxdp.rtl.sim loads every copy and reads them back, and
// refuses a layout whose maps reach past the stride). The per-CPU ranges are taken from the map configuration as the
// host writes it (once after reset): up to PERCPU_RANGES of them, [offset, offset + data_offset + slots * slot_size)
// for an array, [offset, offset + max_entries) for a ring.
// Each tile has one (sephirot_tile: CORE is its core's number), translating its own ports: the lanes' addresses
// (map region), the helper's scalar read address and the map unit's window offsets; l_pcpu_o tells the core which
// lanes are inside a per-CPU array (a store there takes the map grant shared, sephirot_core). With one core nothing
// is translated and no lane is per-CPU.
module sephirot_percpu #(
  parameter integer CORES = 1,
  parameter integer CORE  = 0,
  parameter integer LANES = `SEPH_LANES
) (
  input  wire                clk_i,
  input  wire                rst_ni,
  input  wire                mcfg_we_i,      // the host writes a map configuration entry (sephirot_mapcfg)
  input  wire [255:0]        mcfg_wdata_i,
  input  wire [32*LANES-1:0] l_addr_i,       // the core's lanes' addresses
  output reg  [32*LANES-1:0] l_addr_o,
  output reg  [LANES-1:0]    l_pcpu_o,       // the lane's address is in the map region, inside a per-CPU array
  input  wire [31:0]         h_addr_i,       // its helper's scalar read address
  output wire [31:0]         h_addr_o,
  input  wire [31:0]         ww_off_i,       // its map unit's window offsets (write, read)
  output wire [31:0]         ww_off_o,
  input  wire [31:0]         hw_off_i,
  output wire [31:0]         hw_off_o
);
  generate
    if (CORES == 1) begin : gen_one
      always @(*) begin l_addr_o = l_addr_i; l_pcpu_o = {LANES{1'b0}}; end
      assign h_addr_o = h_addr_i;
      assign ww_off_o = ww_off_i;
      assign hw_off_o = hw_off_i;
      wire unused = &{1'b0, clk_i, rst_ni, mcfg_we_i, mcfg_wdata_i};
    end else begin : gen_copies
      localparam integer NR = `SEPH_PERCPU_RANGES;
      localparam [31:0] STRIDE = `SEPH_PERCPU_STRIDE;
      localparam [31:0] MAP_BASE = `SEPH_MAP_BASE;
      localparam [3:0]  R_MAP = `SEPH_REGION_MAP;
      reg [31:0] lo_q [0:NR-1];
      reg [31:0] hi_q [0:NR-1];
      reg [NR-1:0] on_q;
      // an entry of a per-CPU array or a ring buffer (params.PERCPU_COPY_KINDS): its range, the array's slots or the
      // ring's max_entries bytes (the product only when the host writes the table)
      wire        pc_ring = mcfg_wdata_i[7:0] == `SEPH_MAP_TYPE_RINGBUF;
      wire        pc_w = mcfg_we_i && (mcfg_wdata_i[7:0] == `SEPH_MAP_TYPE_PERCPU_ARRAY || pc_ring) &&
                         mcfg_wdata_i[15:8] != 8'd0;
      wire [31:0] pc_lo = mcfg_wdata_i[111:80];
      wire [31:0] pc_hi = pc_ring ? pc_lo + mcfg_wdata_i[79:48] :
                          pc_lo + {16'd0, mcfg_wdata_i[207:192]} +
                          mcfg_wdata_i[143:112] * {16'd0, mcfg_wdata_i[159:144]};
      wire unused = &{1'b0, mcfg_wdata_i[255:208], mcfg_wdata_i[191:160], mcfg_wdata_i[47:16]};   // (other fields)
      reg  [NR-1:0] first_free;
      integer f;
      always @(*) begin
        first_free = {NR{1'b0}};
        for (f = NR - 1; f >= 0; f = f - 1)
          if (!on_q[f]) first_free = {{(NR-1){1'b0}}, 1'b1} << f;
      end
      integer r;
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          on_q <= {NR{1'b0}};
        end else if (pc_w) begin
          for (r = 0; r < NR; r = r + 1)
            if (first_free[r]) begin on_q[r] <= 1'b1; lo_q[r] <= pc_lo; hi_q[r] <= pc_hi; end
        end
      end
      function automatic in_pcpu(input [31:0] o);
        integer j;
        begin
          in_pcpu = 1'b0;
          for (j = 0; j < NR; j = j + 1)
            if (on_q[j] && o >= lo_q[j] && o < hi_q[j]) in_pcpu = 1'b1;
        end
      endfunction
      localparam [31:0] SHIFT = STRIDE * CORE;
      wire [31:0] shift = SHIFT;
      integer li;
      reg [31:0] a;
      always @(*) begin
        for (li = 0; li < LANES; li = li + 1) begin
          a = l_addr_i[32*li +: 32];
          l_pcpu_o[li] = a[31:28] == R_MAP && in_pcpu(a - MAP_BASE);
          l_addr_o[32*li +: 32] = l_pcpu_o[li] ? a + shift : a;
        end
      end
      assign h_addr_o = (h_addr_i[31:28] == R_MAP && in_pcpu(h_addr_i - MAP_BASE)) ? h_addr_i + shift : h_addr_i;
      assign ww_off_o = in_pcpu(ww_off_i) ? ww_off_i + shift : ww_off_i;
      assign hw_off_o = in_pcpu(hw_off_i) ? hw_off_i + shift : hw_off_i;
    end
  endgenerate
endmodule
`default_nettype wire
