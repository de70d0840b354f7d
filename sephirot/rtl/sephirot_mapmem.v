// sephirot_mapmem: map memory, byte addressed, the lanes' load and store ports and a host port of 128-bit lines.
`default_nettype none
`include "sephirot_params.vh"
`include "sephirot_bram.vh"

// The bytes are kept in NB = 4 banks of 64-bit words (word w in bank w % 4), the shape of block RAM: each bank is
// written at most once a cycle, at the rising edge, with a byte mask, and read by each client at the falling edge
// into a register, so a read address set up by the rising edge gives its data within the same cycle (as the
// combinational reads of the model: the paper's "memory locations are pre-fetched" during decode). Every client
// reads at most four consecutive words, one from each bank: the lanes' load ports (8 bytes at any offset: two
// words), the helper's scalar read (two words), its window (MAP_WINDOW_BYTES = 32 at an 8-byte aligned offset:
// four words) and the host (a 16-byte line: two words). Writes: the lanes' store port (two words), the helper's
// window (four words: it writes one a cycle, and a row calling a map helper stores nothing here, execution
// contract, so the two never meet), another core's lane store (fs_: the write holder's, sephirot_top; the map grant
// never lets it meet this copy's own store or window, which only this core's exclusive, write or apart rows make)
// and the host line, which waits for a cycle with none (host_wready_o). This core's store goes out on st_ for the
// other copies. Yosys maps each bank to block RAM, one copy per reading client: each copy has the bank's one write
// port and one read port, so the clients read while the other core's store is written (a second write in the same
// cycle would take a second write port: twice the block RAM).
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
  output wire                 host_wready_o,  // host_we_i is taken this cycle (the lanes and the helper come first)
  // helper unit (map FSM): a window of RB bytes written (byte mask) and one read, at byte offsets
  input  wire                 ww_en_i,
  input  wire [31:0]          ww_off_i,
  input  wire [8*RB-1:0]      ww_data_i,
  input  wire [RB-1:0]        ww_mask_i,
  input  wire                 hw_en_i,
  input  wire [31:0]          hw_off_i,
  output reg  [8*RB-1:0]      hw_rdata_o,
  // the lanes' store as written here (its first word, 16 bytes from there and their byte mask), and another core's
  output wire                 st_en_o,
  output wire [$clog2(BYTES)-4:0] st_word_o,
  output wire [127:0]         st_data_o,
  output wire [15:0]          st_mask_o,
  input  wire                 fs_en_i,
  input  wire [$clog2(BYTES)-4:0] fs_word_i,
  input  wire [127:0]         fs_data_i,
  input  wire [15:0]          fs_mask_i
);
  localparam integer AW = $clog2(BYTES);
  localparam integer WW = AW - 3;             // bits of a word index
  localparam integer NB = 4;                  // banks
  localparam integer BI = WW - 2;             // bits of a word's index in its bank
  // the core's reading clients: the load ports, the helper's window. The helper's scalar read takes the last load
  // port: a row calling a helper has one map load less (execution contract; the core faults a lane past it)
  localparam integer NC = RP + 1;
  localparam integer CH = RP - 1, CW = RP;
  localparam [31:0] MAP_BASE = `SEPH_MAP_BASE;

`include "sephirot_bytes.vh"
  // an access of `size` bytes at `a` faults past the end of the memory
  function automatic acc_fault(input rd, input wr, input [31:0] a, input [3:0] size);
    reg [31:0] o;
    o = a - MAP_BASE;
    acc_fault = (rd || wr) && (o + {28'd0, size} > BYTES);
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
  sephirot_portsel #(.LANES(LANES), .NP(RP), .AWD(32), .DW(1)) u_ld (
    .req_i(rd_i), .addr_i(addr_i), .size_i(size_i), .data_i({LANES{1'b0}}), .sel_o(p_sel), .used_o(),
    .addr_o(p_addr), .size_o(p_size), .data_o(), .left_o()
  );
  sephirot_portsel #(.LANES(LANES), .NP(WP), .AWD(32)) u_st (
    .req_i(commit_i ? wr_i : {LANES{1'b0}}), .addr_i(addr_i), .size_i(size_i), .data_i(wdata_i), .sel_o(q_sel),
    .used_o(), .addr_o(q_addr), .size_o(q_size), .data_o(q_data), .left_o()
  );
  /* verilator lint_on PINCONNECTEMPTY */
  integer fi;
  always @(*)
    for (fi = 0; fi < LANES; fi = fi + 1)
      fault_o[fi] = acc_fault(rd_i[fi], wr_i[fi], addr_i[32*fi +: 32], size_i[4*fi +: 4]);

  // ---------------------------------------------------------------------------------------------------------
  // reads: client c's first word, and bank b's word for it, read at the falling edge
  reg  [WW*NC-1:0]    cw;
  wire [63:0]         rq [0:NB*NC-1];             // bank b's word for client c at rq[NB * c + b]
  /* verilator lint_off UNUSEDSIGNAL */
  reg  [31:0]         po;                         // (an offset: its word index is used)
  /* verilator lint_on UNUSEDSIGNAL */
  integer ci;
  always @(*) begin
    for (ci = 0; ci < RP; ci = ci + 1) begin
      po = p_addr[32*ci +: 32] - MAP_BASE;
      cw[WW*ci +: WW] = po[AW-1:3];
    end
    if (h_rd_i) begin po = h_addr_i - MAP_BASE; cw[WW*CH +: WW] = po[AW-1:3]; end
    cw[WW*CW +: WW] = hw_off_i[AW-1:3];
  end
  // word j (0..3) of client c, from bank (first word + j) % NB, at cwd[4 * c + j] (arrays, not part-selects of a
  // wide vector at a variable offset: those cost the simulator a third of its speed)
  reg  [63:0]         cwd [0:4*NC-1];
  reg  [1:0]          cb;
  integer cc, cj, ce;
  reg  [NC-1:0]       c_on;                       // clients reading this cycle (the others' words are not used)
  always @(*) begin
    for (ce = 0; ce < RP; ce = ce + 1) c_on[ce] = |p_sel[LANES*ce +: LANES];
    c_on[CH] = c_on[CH] || h_rd_i; c_on[CW] = hw_en_i;
  end
  always @(*) begin
    for (cc = 0; cc < NC; cc = cc + 1)
      for (cj = 0; cj < 4; cj = cj + 1) begin
        cb = cw[WW*cc +: 2] + cj[1:0];
        cwd[4*cc + cj] = c_on[cc] ? rq[NB*cc + {30'd0, cb}] : 64'd0;
      end
  end
  function automatic [63:0] cword(input integer c, input [1:0] j);
    cword = cwd[4*c + {30'd0, j}];
  endfunction

  // writes: bank b's word of each source (the helper's window, the lanes' store, the host line)
  wire [WW-1:0]  ww_w0 = ww_off_i[AW-1:3];        // (helper windows are 8-byte aligned: slots and regions are)
  /* verilator lint_off UNUSEDSIGNAL */
  wire [31:0]    ln_o  = q_addr[31:0] - MAP_BASE;  // (an offset: its word index is used)
  /* verilator lint_on UNUSEDSIGNAL */
  wire [WW-1:0]  ln_w0 = ln_o[AW-1:3];
  wire           ln_en = |q_sel[LANES-1:0];
  reg  [127:0]   ln_d;
  reg  [15:0]    ln_m;
  always @(*) begin   // (computed in the cycles that store: the simulator evaluates continuous wires every cycle)
    ln_d = 128'd0; ln_m = 16'd0;
    if (ln_en) begin
      ln_d = {64'd0, q_data[63:0]} << {q_addr[2:0], 3'd0};
      ln_m = {8'd0, sizemask(q_size[3:0])} << q_addr[2:0];
    end
  end
  assign st_en_o = ln_en;
  assign st_word_o = ln_w0;
  assign st_data_o = ln_d;
  assign st_mask_o = ln_m;
  wire [WW-1:0]  ho_w0 = {host_line_i, 1'b0};
  // (the host's reads have signals of their own: it is driven from outside the core, and a signal shared with the
  // core's clients would make the simulator evaluate the core's logic at every change of a top-level input)
  wire [63:0]    ho_q [0:NB-1];
  assign host_wready_o = !(ww_en_i || ln_en || fs_en_i);
  wire           ho_en = host_we_i && host_wready_o;

  // (B < x is constant for bank 0: the word index of bank 0 never carries)
  /* verilator lint_off CMPCONST */
  genvar gb, gc;
  generate
    for (gb = 0; gb < NB; gb = gb + 1) begin : gen_bank
      localparam [1:0] B = gb;
      reg [63:0] mem_q [0:(1 << BI)-1];
      // the source writing this bank: word (B - first word) % NB of the helper's window, the store or the line
      wire [1:0]    wj = B - ww_w0[1:0];
      wire [1:0]    lj = B - ln_w0[1:0];
      wire [1:0]    hj = B - ho_w0[1:0];
      wire [1:0]    fj = B - fs_word_i[1:0];
      reg           we;
      reg [BI-1:0]  wix;
      reg [63:0]    wd;
      reg [7:0]     wm;
      always @(*) begin
        we = 1'b0; wix = {BI{1'b0}}; wd = 64'd0; wm = 8'd0;
        if (ww_en_i) begin
          we = |ww_mask_i[8*wj +: 8]; wix = ww_w0[WW-1:2] + {{(BI-1){1'b0}}, B < ww_w0[1:0]};
          wd = ww_data_i[64*wj +: 64]; wm = ww_mask_i[8*wj +: 8];
        end else if (ln_en && lj < 2'd2) begin
          we = |ln_m[8*lj[0] +: 8]; wix = ln_w0[WW-1:2] + {{(BI-1){1'b0}}, B < ln_w0[1:0]};
          wd = ln_d[64*lj[0] +: 64]; wm = ln_m[8*lj[0] +: 8];
        end else if (fs_en_i && fj < 2'd2) begin
          we = |fs_mask_i[8*fj[0] +: 8]; wix = fs_word_i[WW-1:2] + {{(BI-1){1'b0}}, B < fs_word_i[1:0]};
          wd = fs_data_i[64*fj[0] +: 64]; wm = fs_mask_i[8*fj[0] +: 8];
        end else if (ho_en && hj < 2'd2) begin
          we = 1'b1; wix = ho_w0[WW-1:2];
          wd = host_wdata_i[64*hj[0] +: 64]; wm = 8'hff;
        end
      end
      integer k;
      always @(posedge clk_i)
        if (we) for (k = 0; k < 8; k = k + 1) if (wm[k]) mem_q[wix][8*k +: 8] <= wd[8*k +: 8];
      for (gc = 0; gc < NC; gc = gc + 1) begin : gen_rd
        wire [WW-1:0] w0 = cw[WW*gc +: WW];
        wire [BI-1:0] ix = w0[WW-1:2] + {{(BI-1){1'b0}}, B < w0[1:0]};
        reg  [63:0]   q;
        `SEPH_BRAM_READ(q, c_on[gc], mem_q[ix])
        assign rq[NB*gc+gb] = q;
      end
      wire [BI-1:0] ho_ix = ho_w0[WW-1:2] + {{(BI-1){1'b0}}, B < ho_w0[1:0]};
      reg  [63:0]   ho_r;
      `SEPH_BRAM_READ(ho_r, 1'b1, mem_q[ho_ix])
      assign ho_q[gb] = ho_r;
    end
  endgenerate
  /* verilator lint_on CMPCONST */

  // the lanes' loads: bytes of words 0 and 1 from the port's offset; through a stall (a helper call, which writes
  // its windows in its last cycles) a port keeps the data of the row's first cycle: loads see memory before the row
  reg [64*RP-1:0] p_live, p_rdata;
  reg [64*RP-1:0] p_hold_q;
  integer li, pp;
  always @(posedge clk_i) if (!hold_i) p_hold_q <= p_live;
  // port CH's bytes, for its lane or for the helper's scalar read (which has the port in a row calling a helper):
  // one funnel and one size mask (computed in the cycles that read: the simulator evaluates wires every cycle)
  reg [63:0] fch;
  always @(*) begin
    fch = 64'd0;
    if (h_rd_i || |p_sel[LANES*CH +: LANES])
      fch = funnel8(cword(CH, 2'd0), cword(CH, 2'd1), h_rd_i ? h_addr_i[2:0] : p_addr[32*CH +: 3]) &
            bytemask(sizemask(h_rd_i ? h_size_i : p_size[4*CH +: 4]));
  end
  always @(*) begin
    for (pp = 0; pp < RP; pp = pp + 1) begin
      p_live[64*pp +: 64] = 64'd0;
      if (|p_sel[LANES*pp +: LANES] && !acc_fault(1'b1, 1'b0, p_addr[32*pp +: 32], p_size[4*pp +: 4]))
        p_live[64*pp +: 64] = (pp == CH) ? fch : funnel8(cword(pp, 2'd0), cword(pp, 2'd1), p_addr[32*pp +: 3]) &
                                                 bytemask(sizemask(p_size[4*pp +: 4]));
    end
    p_rdata = hold_i ? p_hold_q : p_live;
    rdata_o = {64*LANES{1'b0}};
    for (li = 0; li < LANES; li = li + 1)
      for (pp = 0; pp < RP; pp = pp + 1)
        if (p_sel[LANES*pp + li]) rdata_o[64*li +: 64] = p_rdata[64*pp +: 64];
  end
  always @(*) begin
    h_fault_o = acc_fault(h_rd_i, 1'b0, h_addr_i, h_size_i);
    h_rdata_o = 64'd0;
    if (h_rd_i && !h_fault_o) h_rdata_o = fch;
  end
  always @(*) host_rdata_o = {ho_q[ho_w0[1:0] + 2'd1], ho_q[ho_w0[1:0]]};
`ifdef SEPH_ASSERT
  // the grant keeps a writer's store from every cycle in which this copy is written by its own core
  always @(posedge clk_i)
    assert (!(fs_en_i && (ln_en || ww_en_i))) else $error("contract: a copy of the map memory written twice in a cycle");
`endif

  // the helper's window: RB bytes from hw_off (bytes at or past the end of the memory read 0)
  integer hk;
  reg [31:0]     hw_lim;   // bytes of the window inside the memory
  reg [8*RB-1:0] hw_all;
  always @(*) begin
    hw_rdata_o = {8*RB{1'b0}};
    hw_lim = (hw_off_i < BYTES) ? BYTES - hw_off_i : 32'd0;
    hw_all = {cword(CW, 2'd3), cword(CW, 2'd2), cword(CW, 2'd1), cword(CW, 2'd0)};
    if (hw_en_i)
      for (hk = 0; hk < RB; hk = hk + 1)
        if (hk < hw_lim) hw_rdata_o[8*hk +: 8] = hw_all[8*hk +: 8];
  end
endmodule
`default_nettype wire
