// sephirot_mapmem: map memory, byte addressed, the lanes' load and store ports and a host port of 128-bit lines.
`default_nettype none
`include "sephirot_params.vh"

// The bytes are kept in 64-bit words and written as whole words with byte masks. Every word written in a cycle
// gets the result of all the cycle's writes to it, applied in the byte-wise order (the lanes' store, the helper
// unit's window, the host line), so where two write sites hit the same word they write the same value. Verilator
// evaluates each write site of an array every cycle: the byte-wise version had about 220 of them and was most of
// the simulator's time.
// Per cycle the helper unit reads one window and writes one (MAP_WINDOW_BYTES, 8-byte aligned), and a row calling
// a map helper has no lane store here (execution contract): with the lanes' ports, what block RAM can serve.
// A row has MAP_LOAD_PORTS loads and MAP_STORE_PORTS stores in this memory (execution contract): the lanes get the
// ports in lane order, and a lane past them faults its row in the core, so its access is never served here.
module sephirot_mapmem #(
  parameter integer LANES = `SEPH_LANES,
  parameter integer RP    = `SEPH_MAP_LOAD_PORTS,
  parameter integer WP    = `SEPH_MAP_STORE_PORTS,
  parameter integer BYTES = `SEPH_MAP_MEM_BYTES,
  parameter integer LW    = $clog2(BYTES / 16),  // line address width
  parameter integer RB    = `SEPH_MAP_WINDOW_BYTES  // bytes of the helper's window (read and write)
) (
  input  wire                 clk_i,
  // lanes (map region addresses; loads see memory before the row, stores commit in lane order)
  input  wire [LANES-1:0]     rd_i,
  input  wire [LANES-1:0]     wr_i,
  input  wire [32*LANES-1:0]  addr_i,
  input  wire [4*LANES-1:0]   size_i,
  input  wire [64*LANES-1:0]  wdata_i,
  input  wire                 commit_i,
  input  wire                 hold_i,         // the row of the last cycle again: its loads keep their data
  output reg  [64*LANES-1:0]  rdata_o,
  output reg  [LANES-1:0]     fault_o,
  input  wire                 h_rd_i,
  input  wire [31:0]          h_addr_i,
  input  wire [3:0]           h_size_i,
  output reg  [63:0]          h_rdata_o,
  output reg                  h_fault_o,
  // host (AXI map lines, loader and dump)
  input  wire                 host_we_i,
  input  wire [LW-1:0]        host_line_i,
  input  wire [127:0]         host_wdata_i,
  output reg  [127:0]         host_rdata_o,
  // helper unit (map FSM): a window of RB bytes written (byte mask) and one read, at byte offsets
  input  wire                 ww_en_i,
  input  wire [31:0]          ww_off_i,
  input  wire [8*RB-1:0]      ww_data_i,
  input  wire [RB-1:0]        ww_mask_i,
  input  wire                 hw_en_i,
  input  wire [31:0]          hw_off_i,
  output reg  [8*RB-1:0]      hw_rdata_o
);
  localparam integer AW = $clog2(BYTES);
  localparam integer NW = BYTES / 8;          // words
  localparam integer WW = AW - 3;             // bits of a word index
  localparam integer RN = RB / 8 + 1;         // words an RB-byte access at any byte offset touches
  localparam [31:0] MAP_BASE = `SEPH_MAP_BASE;
  reg [63:0] mem_q [0:NW-1];

  function automatic [63:0] funnel8(input [63:0] lo, input [63:0] hi, input [2:0] s);   // bytes s.. of {hi, lo}
    funnel8 = (s == 3'd0) ? lo : (lo >> {s, 3'd0}) | (hi << {3'd0 - s, 3'd0});
  endfunction
  function automatic [63:0] bytemask(input [7:0] m);
    bytemask = {{8{m[7]}}, {8{m[6]}}, {8{m[5]}}, {8{m[4]}}, {8{m[3]}}, {8{m[2]}}, {8{m[1]}}, {8{m[0]}}};
  endfunction
  function automatic [63:0] merge(input [63:0] v, input [63:0] d, input [7:0] m);   // bytes m of d over v
    merge = (v & ~bytemask(m)) | (d & bytemask(m));
  endfunction
  function automatic [7:0] sizemask(input [3:0] size);   // the first `size` bytes (1..8)
    sizemask = size[3] ? 8'hff : ~(8'hff << size[2:0]);
  endfunction

  // one access of `size` bytes at `a` (bytes wrap in the memory): whether it faults, its data (two results
  // rather than one of 65 bits, as the simulator zeroes a wider function result at every evaluation of the caller)
  function automatic acc_fault(input rd, input wr, input [31:0] a, input [3:0] size);
    reg [31:0] o;
    o = a - MAP_BASE;
    acc_fault = (rd || wr) && (o + {28'd0, size} > BYTES);
  endfunction
  function automatic [63:0] acc_data(input rd, input [31:0] a, input [3:0] size);
    reg [31:0] o;
    reg [WW-1:0] w;
    o = a - MAP_BASE;
    w = o[AW-1:3];
    acc_data = 64'd0;
    if (rd && !(o + {28'd0, size} > BYTES))
      acc_data = funnel8(mem_q[w], mem_q[w + {{(WW-1){1'b0}}, 1'b1}], o[2:0]) & bytemask(sizemask(size));
  endfunction

  // ports to lanes, in lane order (sephirot_portsel)
  wire [LANES*RP-1:0] p_sel;                      // lanes of load port p, one-hot (or none)
  wire [LANES*WP-1:0] q_sel;                      // lanes of store port q
  wire [32*RP-1:0]    p_addr;
  wire [4*RP-1:0]     p_size;
  wire [32*WP-1:0]    q_addr;
  wire [4*WP-1:0]     q_size;
  wire [64*WP-1:0]    q_data;
  /* verilator lint_off PINCONNECTEMPTY */
  sephirot_portsel #(.LANES(LANES), .NP(RP), .AWD(32)) u_ld (
    .req_i(rd_i), .addr_i(addr_i), .size_i(size_i), .data_i({64*LANES{1'b0}}), .sel_o(p_sel), .used_o(),
    .addr_o(p_addr), .size_o(p_size), .data_o(), .left_o()
  );
  sephirot_portsel #(.LANES(LANES), .NP(WP), .AWD(32)) u_st (
    .req_i(commit_i ? wr_i : {LANES{1'b0}}), .addr_i(addr_i), .size_i(size_i), .data_i(wdata_i), .sel_o(q_sel),
    .used_o(), .addr_o(q_addr), .size_o(q_size), .data_o(q_data), .left_o()
  );
  /* verilator lint_on PINCONNECTEMPTY */
  // A row's loads see the memory as it was before the row: through a stall (a helper call, which may write its
  // windows in its last cycles) the ports keep the data of the row's first cycle.
  reg [64*RP-1:0]    p_live, p_rdata;
  reg [64*RP-1:0]    p_hold_q;
  always @(posedge clk_i) if (!hold_i) p_hold_q <= p_live;
  integer li, pp;
  always @(*) begin
    for (pp = 0; pp < RP; pp = pp + 1)
      p_live[64*pp +: 64] = acc_data(|p_sel[LANES*pp +: LANES], p_addr[32*pp +: 32], p_size[4*pp +: 4]);
    p_rdata = hold_i ? p_hold_q : p_live;
    rdata_o = {64*LANES{1'b0}};
    for (li = 0; li < LANES; li = li + 1) begin
      for (pp = 0; pp < RP; pp = pp + 1)
        if (p_sel[LANES*pp + li]) rdata_o[64*li +: 64] = p_rdata[64*pp +: 64];
      fault_o[li] = acc_fault(rd_i[li], wr_i[li], addr_i[32*li +: 32], size_i[4*li +: 4]);
    end
  end
  always @(*) begin
    h_rdata_o = acc_data(h_rd_i, h_addr_i, h_size_i);
    h_fault_o = acc_fault(h_rd_i, 1'b0, h_addr_i, h_size_i);
  end

  always @(*) host_rdata_o = {mem_q[{host_line_i, 1'b1}], mem_q[{host_line_i, 1'b0}]};

  // the helper's window: RB bytes from hw_off (bytes at or past the end of the memory read 0)
  integer hk;
  reg [64*RN-1:0] hw_words;
  reg [WW-1:0]    hw_w0;
  reg [31:0]      hw_lim;   // bytes of the window inside the memory
  always @(*) begin
    hw_rdata_o = {8*RB{1'b0}};
    hw_words = {64*RN{1'b0}};
    hw_w0 = hw_off_i[AW-1:3];
    hw_lim = (hw_off_i < BYTES) ? BYTES - hw_off_i : 32'd0;
    if (hw_en_i) begin
      for (hk = 0; hk < RN; hk = hk + 1) hw_words[64*hk +: 64] = mem_q[hw_w0 + hk[WW-1:0]];
      hw_words = hw_words >> {hw_off_i[2:0], 3'd0};
      for (hk = 0; hk < RB; hk = hk + 1)
        if (hk < hw_lim) hw_rdata_o[8*hk +: 8] = hw_words[8*hk +: 8];
    end
  end

  // Each write source as words: its first word, and its bytes and byte mask shifted to that word's byte 0.
  reg  [WP-1:0]          ln_en;
  reg  [WW-1:0]          ln_w0 [0:WP-1];
  reg  [127:0]           ln_d [0:WP-1];
  reg  [15:0]            ln_m [0:WP-1];
  integer lk;
  always @(*) begin
    for (lk = 0; lk < WP; lk = lk + 1) begin
      ln_en[lk] = |q_sel[LANES*lk +: LANES];
      ln_w0[lk] = q_addr[32*lk+3 +: WW];
      ln_d[lk] = 128'd0;
      ln_m[lk] = 16'd0;
      if (ln_en[lk]) begin
        ln_d[lk] = {64'd0, q_data[64*lk +: 64]} << {q_addr[32*lk +: 3], 3'd0};
        ln_m[lk] = {8'd0, sizemask(q_size[4*lk +: 4])} << q_addr[32*lk +: 3];
      end
    end
  end
  wire [WW-1:0]    ww_w0 = ww_off_i[AW-1:3];
  wire [WW-1:0]    ho_w0 = {host_line_i, 1'b0};
  reg  [64*RN-1:0] ww_d;
  reg  [8*RN-1:0]  ww_m;
  always @(*) begin
    ww_d = {64*RN{1'b0}}; ww_m = {8*RN{1'b0}};
    if (ww_en_i) begin
      ww_d = {{(64*RN-8*RB){1'b0}}, ww_data_i} << {ww_off_i[2:0], 3'd0};
      ww_m = {{(8*RN-RB){1'b0}}, ww_mask_i} << ww_off_i[2:0];
    end
  end

  // word w after every write of this cycle, in the byte-wise order (called only where a word is written; the
  // argument is a signal so that yosys does not evaluate the call as a constant function)
  function automatic [63:0] wval(input [WW-1:0] w);
    reg [WW-1:0] k;
    integer q;
    wval = mem_q[w];
    for (q = 0; q < WP; q = q + 1) begin
      k = w - ln_w0[q];
      if (ln_en[q] && k < 2) wval = merge(wval, ln_d[q][64*k[0] +: 64], ln_m[q][8*k[0] +: 8]);
    end
    k = w - ww_w0;
    if (ww_en_i && {{(32-WW){1'b0}}, k} < RN) wval = merge(wval, ww_d[64*k[2:0] +: 64], ww_m[8*k[2:0] +: 8]);
    k = w - ho_w0;
    if (host_we_i && k < 2) wval = host_wdata_i[64*k[0] +: 64];
  endfunction

  integer wk;
  always @(posedge clk_i) begin
    for (wk = 0; wk < WP; wk = wk + 1) begin
      if (ln_en[wk] && |ln_m[wk][7:0])  mem_q[ln_w0[wk]] <= wval(ln_w0[wk]);
      if (ln_en[wk] && |ln_m[wk][15:8]) mem_q[ln_w0[wk] + 1'b1] <= wval(ln_w0[wk] + 1'b1);
    end
    if (ww_en_i)
      for (wk = 0; wk < RN; wk = wk + 1)
        if (|ww_m[8*wk +: 8]) mem_q[ww_w0 + wk[WW-1:0]] <= wval(ww_w0 + wk[WW-1:0]);
    if (host_we_i) begin
      mem_q[ho_w0] <= wval(ho_w0);
      mem_q[ho_w0 + 1'b1] <= wval(ho_w0 + 1'b1);
    end
  end
endmodule
`default_nettype wire
