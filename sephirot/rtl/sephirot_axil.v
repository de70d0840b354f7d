// sephirot_axil: AXI-Lite register slave of the board: instruction memory rows, map lines, counters, control.
`default_nettype none
`include "sephirot_params.vh"

// Register map (design.md section 6 plus the extensions documented in docs/board.md):
//   0x8000_0000 + (row << 8) + 8k / +8k+4  lane k low / high word of the staging row (reads: committed row)
//   0x8000_0000 + (row << 8) + 0xFF        write 1: commit the staging row to `row` (staging is then zeroed)
//   0x8010_0000 + (row << 8) + ...         the same for every row 0..IMEM_ROWS-1 (rows from 256 on are only here:
//                                          the original window's row field is 8 bits)
//   0x8001_0000 + 4w (w = 0..3)            write: staging map line word w; read: word w of line LINE_ADDR
//   0x8001_0010                            LINE_ADDR (read address of map lines)
//   0x8001_00FF                            write N: commit the staging line to line N (and LINE_ADDR = N)
//   0x8001_1000 + 4w (w = 0..7)            write: staging map configuration entry word w; read: word w of entry MCFG_ADDR
//   0x8001_1020                            MCFG_ADDR (read address of map configuration entries)
//   0x8001_10FF                            write N: commit the staging entry as the configuration of map id N
//   0x8002_0002 / 3 / 4                    received / transmitted (TX + REDIRECT) / dropped (DROP + ABORTED)
//   0x8002_0010 + 4a (a = 0..4)            packets per XDP action; +0x24 other actions; +0x28 faults
//   0x8002_0030 / 0x34                     cycle counter low (reading it latches high) / high
//   0x8002_0040                            write: clear every counter
//   0x8003_0000 CTRL (bit 0 hold input at a packet boundary); 0x8003_0004 STATUS (bit 0 held, bit 1 hold);
//   0x8003_0008 ROWS (program rows); 0x8003_000C ID "hXDP"; 0x8003_0010 packets in flight;
//   0x8003_0014 instruction memory rows; 0x8003_0018 map lines; 0x8003_001C cores (CORES).
//   0x8004_0000 trace FIFO records; 0x8004_0004 records dropped (FIFO full); 0x8004_0008 write: pop the head;
//   0x8004_000C FIFO depth; 0x8004_0010 format bytes per record; 0x8004_0100 + 4w word w of the head record.
//   0x8005_xxxx host queues (sephirot_hostq: queues per kind, delivered, dropped full, dropped no queue; per queue
//   at 0x8005_0100 + 16q: delivered, taken by the host, dropped full, size).
//   0x8006_0000 event ring records; 0x8006_0004 records dropped; 0x8006_0008 write: pop the head;
//   0x8006_000C ring depth; 0x8006_0010 sample bytes per record; 0x8006_0100 + 4w word w of the head record.
// Any other address answers SLVERR. Row and line commits are single-cycle writes: a packet never sees half of one.
module sephirot_axil #(
  parameter integer LANES = `SEPH_LANES,
  parameter integer AW    = `SEPH_IMEM_AW,
  parameter integer LW    = 16,
  parameter integer NMAPS = `SEPH_MAPS_MAX,
  parameter integer CORES = 1
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  // AXI-Lite slave
  input  wire [31:0]          s_awaddr_i,
  input  wire                 s_awvalid_i,
  output wire                 s_awready_o,
  input  wire [31:0]          s_wdata_i,
  input  wire [3:0]           s_wstrb_i,
  input  wire                 s_wvalid_i,
  output wire                 s_wready_o,
  output reg  [1:0]           s_bresp_o,
  output reg                  s_bvalid_o,
  input  wire                 s_bready_i,
  input  wire [31:0]          s_araddr_i,
  input  wire                 s_arvalid_i,
  output wire                 s_arready_o,
  output wire [31:0]          s_rdata_o,
  output reg  [1:0]           s_rresp_o,
  output reg                  s_rvalid_o,
  input  wire                 s_rready_i,
  // instruction memory
  output reg                  imem_we_o,
  output reg  [AW-1:0]        imem_waddr_o,
  output reg  [64*LANES-1:0]  imem_wdata_o,
  output reg  [AW:0]          imem_rows_o,
  // map memory lines
  output wire                 map_we_o,
  output wire [LW-1:0]        map_line_o,
  output wire [127:0]         map_wdata_o,
  input  wire [127:0]         map_rdata_i,
  input  wire                 map_wready_i,   // the line write is taken this cycle (else it waits)
  // map configuration table (one 256-bit entry per map id)
  output reg                  mcfg_we_o,
  output reg  [7:0]           mcfg_idx_o,
  output reg  [255:0]         mcfg_wdata_o,
  // control and status
  output reg                  hold_o,
  input  wire                 held_i,
  input  wire [15:0]          inflight_i,
  // per-packet results
  input  wire                 pkt_done_i,
  input  wire [31:0]          res_action_i,
  input  wire [2:0]           res_fault_i,
  // trace_printk FIFO (sephirot_tracefifo)
  input  wire [31:0]          trc_count_i,
  input  wire [31:0]          trc_dropped_i,
  input  wire [32*`SEPH_AXI_TRACE_WORDS-1:0] trc_head_i,
  output wire                 trc_pop_o,
  // host queue registers (sephirot_hostq, decoding the read address itself)
  input  wire [31:0]          hq_rdata_i,
  input  wire                 hq_rok_i,
  // event ring (sephirot_eventring)
  input  wire [31:0]          ev_count_i,
  input  wire [31:0]          ev_dropped_i,
  output wire                 ev_rd_o,        // a read of the head record's word ev_word_o (block RAM: its
  output wire [9:0]           ev_word_o,      // word is ev_rdata_i in the next cycle)
  input  wire [31:0]          ev_rdata_i,
  output wire                 ev_pop_o,
  output wire                 cnt_clr_o
);
  localparam integer ROWS = 1 << AW;
  localparam [31:0] ID = 32'h68584450;  // "hXDP"
  localparam [15:0] PAGE_IMEM = 16'h8000, PAGE_MAPS = 16'h8001, PAGE_CNT = 16'h8002, PAGE_CTRL = 16'h8003;
  localparam [31:0] IMEM_EXT = `SEPH_AXI_IMEM_EXT_BASE;
  localparam [11:0] PAGE_IMEM_EXT = IMEM_EXT[31:20];  // a 1 MiB window: rows 0..4095 at row << 8
  localparam [31:0] HQ_BASE = `SEPH_AXI_HOSTQ_BASE;
  localparam [15:0] PAGE_HOSTQ = HQ_BASE[31:16];
  localparam [31:0] TR_COUNT = `SEPH_AXI_TRACE_COUNT, TR_DROPPED = `SEPH_AXI_TRACE_DROPPED;
  localparam [31:0] TR_POP = `SEPH_AXI_TRACE_POP, TR_DEPTH = `SEPH_AXI_TRACE_DEPTH;
  localparam [31:0] TR_FMT_MAX = `SEPH_AXI_TRACE_FMT_MAX, TR_HEAD = `SEPH_AXI_TRACE_HEAD;
  localparam integer TRW = `SEPH_AXI_TRACE_WORDS;
  localparam [31:0] EV_COUNT = `SEPH_AXI_EVENT_COUNT, EV_DROPPED = `SEPH_AXI_EVENT_DROPPED;
  localparam [31:0] EV_POP = `SEPH_AXI_EVENT_POP, EV_DEPTH = `SEPH_AXI_EVENT_DEPTH;
  localparam [31:0] EV_DATA_MAX = `SEPH_AXI_EVENT_DATA_MAX, EV_HEAD = `SEPH_AXI_EVENT_HEAD;
  localparam integer EVW = `SEPH_AXI_EVENT_WORDS;
  localparam [1:0] OKAY = 2'b00, SLVERR = 2'b10;
  localparam integer NCNT = 10;  // rx tx drop | aborted drop pass tx redirect other | faults

  // ---------------------------------------------------------------------------------------------------------
  // write channel: address and data captured independently, one write performed when both are present
  reg         aw_q, w_q;
  reg         map_we_q;   // a map line write is pending (below)
  reg [31:0]  awaddr_q, wdata_q;
  reg [3:0]   wstrb_q;
  assign s_awready_o = !aw_q && !s_bvalid_o;
  assign s_wready_o  = !w_q && !s_bvalid_o;
  wire        aw_have = aw_q || (s_awvalid_i && s_awready_o);
  wire        w_have  = w_q || (s_wvalid_i && s_wready_o);
  wire [31:0] wa      = aw_q ? awaddr_q : s_awaddr_i;
  wire [31:0] wd      = w_q ? wdata_q : s_wdata_i;
  wire [3:0]  ws      = w_q ? wstrb_q : s_wstrb_i;
  wire        wr_go   = aw_have && w_have && !s_bvalid_o && !map_we_q;   // (a line write waits for the memory)

  // write decode
  wire        wa_imem_x = wa[31:20] == PAGE_IMEM_EXT;
  wire        wa_imem   = wa[31:16] == PAGE_IMEM || wa_imem_x;
  wire        wa_maps   = wa[31:16] == PAGE_MAPS;
  wire        wa_cnt    = wa[31:16] == PAGE_CNT;
  wire        wa_ctrl   = wa[31:16] == PAGE_CTRL;
  wire [11:0] wa_row    = wa_imem_x ? wa[19:8] : {4'd0, wa[15:8]};
  wire        row_ok    = {20'd0, wa_row} < ROWS;
  wire        imem_word = wa_imem && row_ok && {24'd0, wa[7:0]} < 8 * LANES && wa[1:0] == 2'b00;
  wire        imem_cmt  = wa_imem && row_ok && wa[7:0] == 8'hFF;
  wire        maps_word = wa_maps && wa[15:4] == 12'd0 && wa[1:0] == 2'b00;
  wire        maps_addr = wa_maps && wa[15:0] == 16'h0010;
  wire        maps_cmt  = wa_maps && wa[15:0] == 16'h00FF;
  wire        mcfg_word = wa_maps && wa[15:5] == 11'h080 && wa[1:0] == 2'b00;   // 0x1000..0x101C
  wire        mcfg_addr = wa_maps && wa[15:0] == 16'h1020;
  wire        mcfg_cmt  = wa_maps && wa[15:0] == 16'h10FF;
  wire        mcfg_ok   = wd < NMAPS;
  wire        line_ok   = (wd >> LW) == 32'd0;
  wire        cnt_clr   = wa_cnt && wa[15:0] == 16'h0040;
  wire        ctrl_reg  = wa_ctrl && wa[15:0] == 16'h0000;
  wire        rows_reg  = wa_ctrl && wa[15:0] == 16'h0008;
  wire        rows_ok   = wd <= ROWS;
  wire        trc_pop   = wa == TR_POP;
  wire        ev_pop    = wa == EV_POP;
  wire        wr_ok     = imem_word || imem_cmt || maps_word || maps_addr || (maps_cmt && line_ok) || cnt_clr ||
                          mcfg_word || mcfg_addr || (mcfg_cmt && mcfg_ok) ||
                          ctrl_reg || (rows_reg && rows_ok) || trc_pop || ev_pop;

  function automatic [31:0] merge(input [31:0] old, input [31:0] val, input [3:0] strb);
    integer b;
    for (b = 0; b < 4; b = b + 1) merge[8*b +: 8] = strb[b] ? val[8*b +: 8] : old[8*b +: 8];
  endfunction

  reg [64*LANES-1:0] stage_q;
  reg [127:0]        line_q;
  reg [LW-1:0]       line_addr_q;
  reg [LW-1:0]       map_wline_q;
  reg [64*LANES-1:0] shadow_q [0:ROWS-1];  // committed rows, for read-back (the core's imem is write-only)
  reg [255:0]        mstage_q;
  reg [7:0]          mcfg_addr_q;
  reg [255:0]        mshadow_q [0:NMAPS-1];  // committed map configuration entries, for read-back
  reg [31:0]         cnt_q [0:NCNT-1];
  reg [31:0]         cyc_hi_q;
  reg [63:0]         cyc_q;
  wire [$clog2(2*LANES)-1:0] wword = wa[2 +: $clog2(2*LANES)];

  assign map_we_o    = map_we_q;
  assign map_line_o  = map_we_q ? map_wline_q : line_addr_q;
  assign map_wdata_o = line_q;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      aw_q <= 1'b0; w_q <= 1'b0; awaddr_q <= 32'd0; wdata_q <= 32'd0; wstrb_q <= 4'd0;
      s_bvalid_o <= 1'b0; s_bresp_o <= OKAY;
      stage_q <= {64*LANES{1'b0}}; line_q <= 128'd0; line_addr_q <= {LW{1'b0}};
      map_we_q <= 1'b0; map_wline_q <= {LW{1'b0}};
      imem_we_o <= 1'b0; imem_waddr_o <= {AW{1'b0}}; imem_wdata_o <= {64*LANES{1'b0}};
      imem_rows_o <= {(AW+1){1'b0}}; hold_o <= 1'b0;
      mstage_q <= 256'd0; mcfg_addr_q <= 8'd0; mcfg_we_o <= 1'b0; mcfg_idx_o <= 8'd0; mcfg_wdata_o <= 256'd0;
    end else begin
      imem_we_o <= 1'b0;
      mcfg_we_o <= 1'b0;
      if (map_wready_i) map_we_q <= 1'b0;
      if (s_awvalid_i && s_awready_o && !wr_go) begin aw_q <= 1'b1; awaddr_q <= s_awaddr_i; end
      if (s_wvalid_i && s_wready_o && !wr_go) begin w_q <= 1'b1; wdata_q <= s_wdata_i; wstrb_q <= s_wstrb_i; end
      if (s_bvalid_o && s_bready_i) s_bvalid_o <= 1'b0;
      if (wr_go) begin
        aw_q <= 1'b0; w_q <= 1'b0;
        s_bvalid_o <= 1'b1;
        s_bresp_o <= wr_ok ? OKAY : SLVERR;
        if (imem_word) stage_q[32*wword +: 32] <= merge(stage_q[32*wword +: 32], wd, ws);
        if (imem_cmt && wd[0]) begin
          imem_we_o <= 1'b1; imem_waddr_o <= wa_row[AW-1:0]; imem_wdata_o <= stage_q;
          stage_q <= {64*LANES{1'b0}};
        end
        if (maps_word) line_q[32*wa[3:2] +: 32] <= merge(line_q[32*wa[3:2] +: 32], wd, ws);
        if (maps_addr) line_addr_q <= wd[LW-1:0];
        if (maps_cmt && line_ok) begin
          map_we_q <= 1'b1; map_wline_q <= wd[LW-1:0]; line_addr_q <= wd[LW-1:0];
        end
        if (mcfg_word) mstage_q[32*wa[4:2] +: 32] <= merge(mstage_q[32*wa[4:2] +: 32], wd, ws);
        if (mcfg_addr) mcfg_addr_q <= wd[7:0];
        if (mcfg_cmt && mcfg_ok) begin
          mcfg_we_o <= 1'b1; mcfg_idx_o <= wd[7:0]; mcfg_wdata_o <= mstage_q; mcfg_addr_q <= wd[7:0];
          mstage_q <= 256'd0;
        end
        if (ctrl_reg) hold_o <= wd[0];
        if (rows_reg && rows_ok) imem_rows_o <= wd[AW:0];
      end
      if (map_we_q && map_wready_i) line_q <= 128'd0;
    end
  end

  always @(posedge clk_i) begin
    if (imem_we_o) shadow_q[imem_waddr_o] <= imem_wdata_o;
    if (mcfg_we_o) mshadow_q[mcfg_idx_o[$clog2(NMAPS)-1:0]] <= mcfg_wdata_o;
  end

  // ---------------------------------------------------------------------------------------------------------
  // counters (32-bit, wrapping; the cycle counter is 64-bit, high word latched when the low word is read)
  wire        clr = wr_go && cnt_clr;
  assign cnt_clr_o = clr;
  assign trc_pop_o = wr_go && trc_pop;
  assign ev_pop_o = wr_go && ev_pop;
  wire [2:0]  act = res_action_i[2:0];
  wire        act_std = res_action_i <= 32'd4;
  // one increment per counter and cycle, computed first (a single write per counter)
  reg [NCNT-1:0] inc;
  always @(*) begin
    inc = {NCNT{1'b0}};
    if (pkt_done_i) begin
      inc[0] = 1'b1;
      inc[1] = act_std && (act == 3'd3 || act == 3'd4);
      inc[2] = act_std && (act == 3'd0 || act == 3'd1);
      inc[3] = act_std && act == 3'd0;
      inc[4] = act_std && act == 3'd1;
      inc[5] = act_std && act == 3'd2;
      inc[6] = act_std && act == 3'd3;
      inc[7] = act_std && act == 3'd4;
      inc[8] = !act_std;
      inc[9] = res_fault_i != 3'd0;
    end
  end
  integer ci;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (ci = 0; ci < NCNT; ci = ci + 1) cnt_q[ci] <= 32'd0;
      cyc_q <= 64'd0;
    end else if (clr) begin
      for (ci = 0; ci < NCNT; ci = ci + 1) cnt_q[ci] <= 32'd0;
      cyc_q <= 64'd0;
    end else begin
      cyc_q <= cyc_q + 64'd1;
      for (ci = 0; ci < NCNT; ci = ci + 1) cnt_q[ci] <= cnt_q[ci] + {31'd0, inc[ci]};
    end
  end

  // ---------------------------------------------------------------------------------------------------------
  // read channel: one read at a time, data registered; reads wait for a write performed in the same cycle
  assign s_arready_o = !s_rvalid_o && !wr_go && !map_we_q;
  wire        ra_imem_x = s_araddr_i[31:20] == PAGE_IMEM_EXT;
  wire        ra_imem = s_araddr_i[31:16] == PAGE_IMEM || ra_imem_x;
  wire        ra_maps = s_araddr_i[31:16] == PAGE_MAPS;
  wire        ra_cnt  = s_araddr_i[31:16] == PAGE_CNT;
  wire        ra_ctrl = s_araddr_i[31:16] == PAGE_CTRL;
  wire [15:0] ro      = s_araddr_i[15:0];
  wire [11:0] ra_row   = ra_imem_x ? s_araddr_i[19:8] : {4'd0, ro[15:8]};
  wire        r_row_ok = {20'd0, ra_row} < ROWS;
  wire [31:0] tr_idx   = (s_araddr_i - TR_HEAD) >> 2;
  wire        tr_word  = s_araddr_i >= TR_HEAD && s_araddr_i[1:0] == 2'b00 && tr_idx < TRW;
  wire [31:0] ev_idx   = (s_araddr_i - EV_HEAD) >> 2;
  wire        ev_word  = s_araddr_i >= EV_HEAD && s_araddr_i[1:0] == 2'b00 && ev_idx < EVW;
  assign ev_word_o = ev_idx[9:0];
  assign ev_rd_o = s_arvalid_i && s_arready_o && ev_word;
  // the row shadow is read synchronously (block RAM); the word is selected after the register
  reg  [64*LANES-1:0] srow_q;
  reg                 imem_rd_q;
  reg  [$clog2(2*LANES)-1:0] rword_q;
  reg  [31:0]         rdata_q;
  reg                 ev_rd_q;   // the data is the event ring's registered word
  assign s_rdata_o = imem_rd_q ? srow_q[32*rword_q +: 32] : ev_rd_q ? ev_rdata_i : rdata_q;
  wire        imem_rd = ra_imem && r_row_ok && {24'd0, ro[7:0]} < 8 * LANES && ro[1:0] == 2'b00;
  always @(posedge clk_i) begin
    if (s_arvalid_i && s_arready_o) srow_q <= shadow_q[ra_row[AW-1:0]];
  end
  wire [255:0]        mentry = mshadow_q[mcfg_addr_q[$clog2(NMAPS)-1:0]];
  wire [$clog2(2*LANES)-1:0] rword = ro[2 +: $clog2(2*LANES)];
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      s_rvalid_o <= 1'b0; rdata_q <= 32'd0; s_rresp_o <= OKAY; cyc_hi_q <= 32'd0;
      imem_rd_q <= 1'b0; rword_q <= {$clog2(2*LANES){1'b0}}; ev_rd_q <= 1'b0;
    end else begin
      if (s_rvalid_o && s_rready_i) s_rvalid_o <= 1'b0;
      if (s_arvalid_i && s_arready_o) begin
        s_rvalid_o <= 1'b1;
        rdata_q <= 32'd0;
        s_rresp_o <= OKAY;
        imem_rd_q <= imem_rd;
        rword_q <= rword;
        ev_rd_q <= 1'b0;
        if (imem_rd) rdata_q <= 32'd0;
        else if (ra_imem && r_row_ok && ro[7:0] == 8'hFF) rdata_q <= 32'd0;
        else if (ra_maps && ro[15:4] == 12'd0 && ro[1:0] == 2'b00) rdata_q <= map_rdata_i[32*ro[3:2] +: 32];
        else if (ra_maps && ro == 16'h0010) rdata_q <= {{(32-LW){1'b0}}, line_addr_q};
        else if (ra_maps && ro[15:5] == 11'h080 && ro[1:0] == 2'b00)
          rdata_q <= ({24'd0, mcfg_addr_q} < NMAPS) ? mentry[32*ro[4:2] +: 32] : 32'd0;
        else if (ra_maps && ro == 16'h1020) rdata_q <= {24'd0, mcfg_addr_q};
        else if (ra_cnt && (ro == 16'h0002 || ro == 16'h0003 || ro == 16'h0004)) rdata_q <= cnt_q[ro[3:0] - 4'd2];
        else if (ra_cnt && ro >= 16'h0010 && ro <= 16'h0028 && ro[1:0] == 2'b00)
          rdata_q <= cnt_q[ro[5:2] - 4'd1];
        else if (ra_cnt && ro == 16'h0030) begin rdata_q <= cyc_q[31:0]; cyc_hi_q <= cyc_q[63:32]; end
        else if (ra_cnt && ro == 16'h0034) rdata_q <= cyc_hi_q;
        else if (ra_ctrl && ro == 16'h0000) rdata_q <= {31'd0, hold_o};
        else if (ra_ctrl && ro == 16'h0004) rdata_q <= {30'd0, hold_o, held_i};
        else if (ra_ctrl && ro == 16'h0008) rdata_q <= {{(31-AW){1'b0}}, imem_rows_o};
        else if (ra_ctrl && ro == 16'h000C) rdata_q <= ID;
        else if (ra_ctrl && ro == 16'h0010) rdata_q <= {16'd0, inflight_i};
        else if (ra_ctrl && ro == 16'h0014) rdata_q <= ROWS;
        else if (ra_ctrl && ro == 16'h0018) rdata_q <= 32'd1 << LW;
        else if (s_araddr_i == `SEPH_AXI_CORES) rdata_q <= CORES;
        else if (s_araddr_i == TR_COUNT) rdata_q <= trc_count_i;
        else if (s_araddr_i == TR_DROPPED) rdata_q <= trc_dropped_i;
        else if (s_araddr_i == TR_DEPTH) rdata_q <= `SEPH_PRINTK_FIFO_DEPTH;
        else if (s_araddr_i == TR_FMT_MAX) rdata_q <= `SEPH_PRINTK_FMT_MAX;
        else if (tr_word) rdata_q <= trc_head_i[32*tr_idx[4:0] +: 32];
        else if (s_araddr_i[31:16] == PAGE_HOSTQ && hq_rok_i) rdata_q <= hq_rdata_i;
        else if (s_araddr_i == EV_COUNT) rdata_q <= ev_count_i;
        else if (s_araddr_i == EV_DROPPED) rdata_q <= ev_dropped_i;
        else if (s_araddr_i == EV_DEPTH) rdata_q <= `SEPH_EVENT_FIFO_DEPTH;
        else if (s_araddr_i == EV_DATA_MAX) rdata_q <= `SEPH_EVENT_DATA_MAX;
        else if (ev_word) ev_rd_q <= 1'b1;
        else s_rresp_o <= SLVERR;
      end
    end
  end
endmodule
`default_nettype wire
