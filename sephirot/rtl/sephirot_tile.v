// sephirot_tile: one Sephirot core with its packet buffer, helper unit and lane off-chip port (data bus by region).
`default_nettype none
`include "sephirot_params.vh"

// What each of sephirot_top's cores has of its own (execution contract section 8): the core (registers, stack,
// its copy of the instruction memory), the packet buffer, the map-pointer guard, the helper unit (the map FSM
// included), the lanes' off-chip port logic, the translation of its accesses to per-CPU arrays into its own
// copies (sephirot_percpu) and its copy of the map memory (sephirot_mapmem, MAP_BYTES). Its map-memory ports run
// while this core holds the map grant (gnt_i, asked in the mode gnt_excl_o says; sephirot_grant): they reach its
// copy, and, out on the mm_, mh_, ww_ and hw_ ports, every other core's copy while it holds the grant exclusive;
// while another core holds it exclusive, that core's ports (mx_) drive this copy, so that every copy takes each
// write of the exclusive holder in the same cycle (sephirot_top); while another core holds it in write mode, that
// core's lane store (ws_) is written into this copy in the cycle its row commits, beside this core's own reads; an
// apart row's writes (its own per-CPU copies) reach this copy only, which this core and the host read there. The host's lines (host_) are written into
// every copy alike. What the cores share is outside, in sephirot_top: the map configuration and the two off-chip
// ports, reached through the mid_, xm_ and xh_ ports while this core holds the grant, and the input and output
// (sephirot_dispatch, sephirot_reorder). With one core the grant is always held exclusive and the output always
// ready: the tile is the single core of before, cycle for cycle.
module sephirot_tile #(
  parameter integer LANES = `SEPH_LANES,
  parameter integer AW    = `SEPH_IMEM_AW,
  parameter integer NBUF  = 3,
  parameter integer SKIP_DROPS = 0,           // several cores: dropped frames depart without output (sephirot_pktbuf)
  parameter integer SW    = $clog2(NBUF + 1),
  parameter integer CORE  = 0,                  // this core's number (get_smp_processor_id)
  parameter integer CORES = 1,                  // the cores of sephirot_top (per-CPU copies with more than one)
  parameter integer MAP_BYTES = `SEPH_MAP_MEM_BYTES,
  parameter integer LW    = $clog2(MAP_BYTES / 16),
  parameter integer MWW   = $clog2(MAP_BYTES) - 3    // bits of a word index of the map memory
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  input  wire                 imem_we_i,
  input  wire [AW-1:0]        imem_waddr_i,
  input  wire [64*LANES-1:0]  imem_wdata_i,
  input  wire [AW:0]          imem_rows_i,
  input  wire                 raw_i,
  // the map configuration as the host writes it (sephirot_mapcfg; sephirot_percpu takes the per-CPU ranges)
  input  wire                 mcfg_we_i,
  input  wire [255:0]         mcfg_wdata_i,
  // input frames (sephirot_dispatch: this core's share of the input register)
  input  wire                 in_valid_i,
  output wire                 in_ready_o,
  input  wire [255:0]         in_data_i,
  input  wire                 in_sop_i,
  input  wire                 in_eop_i,
  input  wire [15:0]          in_len_i,
  input  wire [31:0]          in_ifindex_i,
  input  wire [31:0]          in_rxq_i,
  output wire                 idle_o,         // no packet: the dispatcher may hand this core a first frame
  input  wire                 clock_en_i,     // several cores: ktime_get_ns reads clock_i (sephirot_core)
  input  wire [63:0]          clock_i,
  // output frames (sephirot_reorder: out_ready_i when this core's oldest frame is the next to leave)
  input  wire                 out_ready_i,
  output wire                 out_fin_o,      // SKIP_DROPS: the next frame in order is whole and finished ...
  output wire                 out_fin_drop_o, // ... and dropped
  input  wire [SW-1:0]        out_skip_i,     // the oldest out_skip_i frames (dropped) departed
  output wire                 out_valid_o,
  output wire [255:0]         out_data_o,
  output wire                 out_sop_o,
  output wire                 out_eop_o,
  output wire [5:0]           out_bytes_o,
  output wire [31:0]          out_action_o,
  output wire [7:0]           out_meta_o,
  // per-packet result
  output wire                 pkt_start_o,
  output wire                 pkt_done_o,
  output wire [31:0]          res_action_o,
  output wire [2:0]           res_fault_o,
  output wire [63:0]          res_r0_o,
  output wire [31:0]          res_cycles_o,
  output wire                 res_redir_valid_o,
  output wire [1:0]           res_redir_kind_o,
  output wire [31:0]          res_redir_port_o,
  output wire [15:0]          res_redir_size_o,
  output wire                 prk_valid_o,
  output wire [7:0]           prk_len_o,
  output wire [8*`SEPH_PRINTK_FMT_MAX-1:0] prk_fmt_o,
  output wire [191:0]         prk_args_o,
  output wire                 evw_en_o,
  output wire [8:0]           evw_idx_o,
  output wire [63:0]          evw_data_o,
  output wire                 evp_valid_o,
  output wire                 evp_drop_o,
  output wire                 evp_kind_o,
  output wire [7:0]           evp_map_o,
  output wire [31:0]          evp_cpu_o,
  output wire [15:0]          evp_size_o,
  output wire [15:0]          evp_ctxlen_o,
  output wire                 trc_valid_o,
  output wire [AW-1:0]        trc_pc_o,
  output wire [LANES-1:0]     trc_wr_en_o,
  output wire [4*LANES-1:0]   trc_wr_idx_o,
  output wire [64*LANES-1:0]  trc_wr_val_o,
  output wire [LANES-1:0]     trc_st_en_o,
  output wire [32*LANES-1:0]  trc_st_addr_o,
  output wire [4*LANES-1:0]   trc_st_size_o,
  output wire [64*LANES-1:0]  trc_st_data_o,
  output wire                 trc_call_o,
  output wire [63:0]          trc_ret_o,
  output wire [1:0]           trc_call_lane_o,
  output wire [31:0]          trc_cost_o,
  output wire [31:0]          trc_next_o,
  output wire                 trc_exit_o,
  output wire [2:0]           trc_fault_o,
  // the map grant (sephirot_grant)
  output wire                 gnt_req_o,
  output wire                 gnt_excl_o,
  output wire                 gnt_wr_o,
  output wire                 gnt_ap_o,
  input  wire                 gnt_i,
  output wire                 gnt_keep_o,
  input  wire [`SEPH_MAPS_MAX-1:0] gnt_lkx_i,   // a lookup of map id i is exclusive (sephirot_mapcfg)
  // this core's map-memory ports (the lanes', the helper's scalar read, the map unit's windows; addresses in its
  // per-CPU copies), for the other cores' copies while it holds the grant exclusive
  output wire [LANES-1:0]     mm_rd_o,
  output wire [LANES-1:0]     mm_wr_o,
  output wire [32*LANES-1:0]  mm_addr_o,
  output wire [4*LANES-1:0]   mm_size_o,
  output wire [64*LANES-1:0]  mm_wdata_o,
  output wire                 mm_commit_o,
  output wire                 mm_hold_o,
  output wire                 mh_rd_o,
  output wire [31:0]          mh_addr_o,
  output wire [3:0]           mh_size_o,
  output wire                 ww_en_o,
  output wire [31:0]          ww_off_o,
  output wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] ww_data_o,
  output wire [`SEPH_MAP_WINDOW_BYTES-1:0]   ww_mask_o,
  output wire                 hw_en_o,
  output wire [31:0]          hw_off_o,
  // this core's lane store as its copy writes it, for the other copies while it holds the grant in write mode, and
  // the write holder's, written into this copy while ws_i (another core holds it in write mode)
  output wire                 st_en_o,
  output wire [MWW-1:0]       st_word_o,
  output wire [127:0]         st_data_o,
  output wire [15:0]          st_mask_o,
  input  wire                 ws_i,
  input  wire                 ws_en_i,
  input  wire [MWW-1:0]       ws_word_i,
  input  wire [127:0]         ws_data_i,
  input  wire [15:0]          ws_mask_i,
  // the exclusive holder's ports, driving this core's copy while mx_i (another core holds the grant exclusive)
  input  wire                 mx_i,
  input  wire [LANES-1:0]     mx_rd_i,
  input  wire [LANES-1:0]     mx_wr_i,
  input  wire [32*LANES-1:0]  mx_addr_i,
  input  wire [4*LANES-1:0]   mx_size_i,
  input  wire [64*LANES-1:0]  mx_wdata_i,
  input  wire                 mx_commit_i,
  input  wire                 mx_hold_i,
  input  wire                 mx_hrd_i,
  input  wire [31:0]          mx_haddr_i,
  input  wire [3:0]           mx_hsize_i,
  input  wire                 mx_wwen_i,
  input  wire [31:0]          mx_wwoff_i,
  input  wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] mx_wwdata_i,
  input  wire [`SEPH_MAP_WINDOW_BYTES-1:0]   mx_wwmask_i,
  input  wire                 mx_hwen_i,
  input  wire [31:0]          mx_hwoff_i,
  // the host's map lines (sephirot_top: written into every copy when all are ready; read from the copy holding them)
  input  wire                 host_we_i,
  input  wire [LW-1:0]        host_line_i,
  input  wire [127:0]         host_wdata_i,
  output wire [127:0]         host_rdata_o,
  output wire                 host_wready_o,
  // the shared map configuration (sephirot_mapcfg)
  output wire [31:0]          mid_o,
  input  wire [255:0]         mentry_i,
  input  wire [31:0]          mcount_i,
  // the shared off-chip ports (as sephirot_top's xm_ and xh_ ports)
  output wire                 xm_req_valid_o,
  input  wire                 xm_req_ready_i,
  output wire                 xm_req_we_o,
  output wire [31:0]          xm_req_addr_o,
  output wire [1:0]           xm_req_len_o,
  output wire [127:0]         xm_req_wdata_o,
  output wire [15:0]          xm_req_be_o,
  input  wire                 xm_resp_valid_i,
  input  wire [127:0]         xm_resp_data_i,
  output wire                 xh_req_valid_o,
  output wire                 xh_req_we_o,
  output wire [31:0]          xh_req_addr_o,
  output wire [1:0]           xh_req_len_o,
  output wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] xh_req_wdata_o,
  output wire [`SEPH_MAP_WINDOW_BYTES-1:0]   xh_req_be_o,
  input  wire                 xh_resp_valid_i,
  input  wire [3*8*`SEPH_MAP_WINDOW_BYTES-1:0] xh_resp_data_i
);
  localparam [3:0] R_MAP = `SEPH_REGION_MAP;
  localparam [3:0] R_QDR = `SEPH_REGION_QDR;

  wire [LANES-1:0]    d_rd, d_wr, d_wait;
  wire [32*LANES-1:0] d_addr;
  wire [4*LANES-1:0]  d_size;
  wire [64*LANES-1:0] d_wdata;
  wire                d_commit, d_hold;
  reg  [64*LANES-1:0] d_rdata;
  reg  [LANES-1:0]    d_fault;
  reg  [LANES-1:0]    m_sel, x_sel;          // lanes in the on-chip map memory, in an off-chip tier
  wire                d_go, d_xwait;

  wire                hlp_req, hlp_done, hlp_illegal, hlp_fault, hlp_access;
  wire                hm_en, hm_fault, hb_rd;
  wire [31:0]         hm_addr, hm_tag;
  wire [32*LANES-1:0] d_tag;
  wire [3:0]          hm_size;
  wire [63:0]         hm_rdata;
  wire                hs_en;                  // fib_lookup's writes into its struct on the stack
  wire [8:0]          hs_off;
  wire [3:0]          hs_size;
  wire [63:0]         hs_data;
  wire [31:0]         m_id, m_count, mw_off;
  wire                mw_en, mww_en, mww_x, xr_valid;
  wire [31:0]         xr_addr;
  wire [1:0]          xr_len;
  wire [31:0]         mww_off;
  wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] mww_data;
  wire [`SEPH_MAP_WINDOW_BYTES-1:0]   mww_mask;
  wire [255:0]        m_entry;
  wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] mw_rdata;
  wire [31:0]         hlp_id;
  wire [64*5-1:0]     hlp_args;
  wire [63:0]         hlp_ret, hlp_cycles;
  wire                hlp_tc_jump;
  wire [31:0]         hlp_tc_row;
  wire [1:0]          adj_kind;
  wire [31:0]         adj_delta;
  wire                adj_commit, adj_step;
  wire [7:0]          adj_err;
  wire [8:0]          adj_metalen;
  wire                adj_busy, pb_hold;
  wire                core_ready, core_filled;
  wire [31:0]         ctx_data, ctx_end;

  wire         pb_ready;
  assign in_ready_o = pb_ready;
  // a core is idle from the cycle after its packet's exit until the dispatcher hands it the next first frame: a
  // first frame written in the exit's cycle starts the next packet in the cycle after it
  reg          busy_q;
  assign idle_o = !busy_q || pkt_done_o;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) busy_q <= 1'b0;
    else if (in_valid_i && pb_ready && in_sop_i) busy_q <= 1'b1;
    else if (pkt_done_o) busy_q <= 1'b0;
  end
  // the shared map memory keeps a stalled row's loads only for the core that held the grant in the last cycle too
  reg          gnt_q;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) gnt_q <= 1'b1;
    else gnt_q <= gnt_i;
  end

  wire [63:0] init_r1 = raw_i ? {32'd0, ctx_data} : {32'd0, `SEPH_CTX_BASE};
  // XDP mode: r2 = ctx->data at entry (execution contract section 1), so parsing need not wait for the ctx load
  wire [63:0] init_r2 = raw_i ? {32'd0, ctx_end - ctx_data} : {32'd0, ctx_data};

  sephirot_core #(.LANES(LANES), .AW(AW)) u_core (
    .clk_i, .rst_ni,
    .imem_we_i, .imem_waddr_i, .imem_wdata_i, .imem_rows_i,
    .pkt_ready_i(core_ready), .pkt_filled_i(core_filled), .init_r1_i(init_r1), .init_r2_i(init_r2),
    .pkt_start_o, .pkt_done_o, .res_action_o, .res_fault_o, .res_r0_o, .res_cycles_o,
    .dbus_rd_o(d_rd), .dbus_wr_o(d_wr), .dbus_addr_o(d_addr), .dbus_tag_o(d_tag), .dbus_size_o(d_size), .dbus_wdata_o(d_wdata),
    .dbus_commit_o(d_commit), .dbus_hold_o(d_hold), .dbus_rdata_i(d_rdata), .dbus_fault_i(d_fault), .dbus_wait_i(d_wait), .pkt_hold_i(pb_hold),
    .dbus_go_o(d_go), .dbus_xwait_i(d_xwait), .gnt_req_o, .gnt_excl_o, .gnt_wr_o, .gnt_ap_o, .gnt_i, .gnt_keep_o,
    .gnt_pcpu_i(pc_lane), .gnt_lkx_i,
    .hlp_req_o(hlp_req), .hlp_id_o(hlp_id), .hlp_args_o(hlp_args), .hlp_done_i(hlp_done), .hlp_ret_i(hlp_ret),
    .hlp_illegal_i(hlp_illegal), .hlp_fault_i(hlp_fault), .hlp_access_i(hlp_access), .hlp_cycles_o(hlp_cycles),
    .clock_en_i, .clock_i,
    .hlp_tc_jump_i(hlp_tc_jump), .hlp_tc_row_i(hlp_tc_row),
    .hm_en_i(hm_en), .hm_addr_i(hm_addr), .hm_size_i(hm_size), .hm_rdata_o(hm_rdata), .hm_fault_o(hm_fault),
    .hs_en_i(hs_en), .hs_off_i(hs_off), .hs_size_i(hs_size), .hs_data_i(hs_data),
    .hbus_rd_o(hb_rd), .hbus_rdata_i(hb_rdata), .hbus_fault_i(hb_fault),
    .trc_valid_o, .trc_pc_o, .trc_wr_en_o, .trc_wr_idx_o, .trc_wr_val_o, .trc_st_en_o, .trc_st_addr_o,
    .trc_st_size_o, .trc_st_data_o, .trc_call_o, .trc_ret_o, .trc_call_lane_o, .trc_cost_o, .trc_next_o, .trc_exit_o,
    .trc_fault_o
  );

  // route the data bus: map region to the map memory, the QDR and DDR regions to the off-chip port, ctx and packet
  // regions to the packet buffer
  integer li;
  always @(*) begin
    for (li = 0; li < LANES; li = li + 1) begin
      m_sel[li] = d_addr[32*li+28 +: 4] == R_MAP;
      x_sel[li] = d_addr[32*li+31] || d_addr[32*li+28 +: 4] == R_QDR;
    end
  end
  // the helper unit's read port goes to the packet buffer or the map memory by region
  wire [64*LANES-1:0]     p_rdata, m_rdata, x_rdata;
  wire [LANES-1:0]        p_fault, m_fault;
  wire [63:0]             ph_rdata, mh_rdata;
  wire                    ph_fault, mh_fault;
  wire                    hb_msel = hm_addr[31:28] == R_MAP;
  wire [63:0]             hb_rdata = hb_msel ? mh_rdata : ph_rdata;
  wire                    hb_fault = hb_msel ? (mh_fault || gh_fault) : ph_fault;
  always @(*) begin
    for (li = 0; li < LANES; li = li + 1) begin
      d_rdata[64*li +: 64] = m_sel[li] ? m_rdata[64*li +: 64] : x_sel[li] ? x_rdata[64*li +: 64] : p_rdata[64*li +: 64];
      d_fault[li] = m_sel[li] ? ((m_fault[li] && gnt_i) || g_fault[li]) : x_sel[li] ? g_fault[li] : p_fault[li];
    end
  end

  // map-value pointers (execution contract section 4): every lane access and helper read in the map memory is
  // checked against the value its pointer's tag names; a helper's pointer elsewhere must carry no tag
  wire [LANES-1:0] g_fault;
  wire             gh_fault;
  sephirot_mapguard #(.LANES(LANES)) u_mapguard (
    .l_en_i((d_rd | d_wr) & (m_sel | x_sel)), .l_wr_i(d_wr), .l_tag_i(d_tag), .l_addr_i(d_addr), .l_size_i(d_size),
    .l_fault_o(g_fault), .h_en_i(hb_rd && hb_msel), .h_tag_i(hm_tag), .h_addr_i(hm_addr), .h_size_i(hm_size),
    .h_fault_o(gh_fault)
  );
  wire hm_tag_bad = hm_en && hm_addr[31:28] != R_MAP && hm_tag != 32'd0;

  sephirot_pktbuf #(.LANES(LANES), .NBUF(NBUF), .SKIP_DROPS(SKIP_DROPS), .CORE(CORE)) u_pktbuf (
    .clk_i, .rst_ni,
    .in_valid_i, .in_ready_o(pb_ready), .in_data_i, .in_sop_i, .in_eop_i, .in_len_i, .in_ifindex_i, .in_rxq_i,
    .core_ready_o(core_ready), .core_filled_o(core_filled), .core_done_i(pkt_done_o), .core_action_i(res_action_o),
    .rd_i(d_rd & ~m_sel & ~x_sel), .wr_i(d_wr & ~m_sel & ~x_sel), .addr_i(d_addr), .size_i(d_size), .wdata_i(d_wdata),
    .commit_i(d_commit), .rdata_o(p_rdata), .fault_o(p_fault), .wait_o(d_wait),
    .h_rd_i(hb_rd && !hb_msel), .h_addr_i(hm_addr), .h_size_i(hm_size), .h_rdata_o(ph_rdata), .h_fault_o(ph_fault),
    .adj_kind_i(adj_kind), .adj_delta_i(adj_delta), .adj_commit_i(adj_commit), .adj_step_i(adj_step),
    .adj_err_o(adj_err), .adj_metalen_o(adj_metalen), .adj_busy_o(adj_busy), .hold_o(pb_hold),
    .ctx_data_o(ctx_data), .ctx_end_o(ctx_end),
    .out_ready_i, .fin_o(out_fin_o), .fin_drop_o(out_fin_drop_o), .skip_i(out_skip_i),
    .out_valid_o, .out_data_o, .out_sop_o, .out_eop_o, .out_bytes_o, .out_action_o, .out_meta_o
  );

  // the shared map memory (sephirot_top: this core's read copy, written by the exclusive holder or by this core);
  // inside a per-CPU array the address of this core's copy
  wire [LANES-1:0] pc_lane;
  sephirot_percpu #(.CORES(CORES), .CORE(CORE), .LANES(LANES)) u_percpu (
    .clk_i, .rst_ni, .mcfg_we_i, .mcfg_wdata_i, .l_addr_i(d_addr), .l_addr_o(mm_addr_o), .l_pcpu_o(pc_lane),
    .h_addr_i(hm_addr), .h_addr_o(mh_addr_o), .ww_off_i(mww_off), .ww_off_o(ww_off_o), .hw_off_i(mw_off),
    .hw_off_o(hw_off_o)
  );
  assign mm_rd_o = d_rd & m_sel;
  assign mm_wr_o = d_wr & m_sel;
  assign mm_size_o = d_size;
  assign mm_wdata_o = d_wdata;
  assign mm_commit_o = d_commit;
  assign mm_hold_o = d_hold && gnt_q;
  assign mh_rd_o = hb_rd && hb_msel;
  assign mh_size_o = hm_size;
  assign ww_en_o = mww_en && !mww_x;
  assign ww_data_o = mww_data;
  assign ww_mask_o = mww_mask;
  assign hw_en_o = mw_en;

  // this core's copy of the map memory: its own ports while it holds the grant (or nobody holds it exclusive), the
  // exclusive holder's while another core holds it (a core not holding the grant neither reads nor writes: its row
  // does not run)
  wire mm_on = gnt_i || mx_i;
  sephirot_mapmem #(.LANES(LANES), .BYTES(MAP_BYTES)) u_mapmem (
    .clk_i,
    .rd_i(!mm_on ? {LANES{1'b0}} : mx_i ? mx_rd_i : mm_rd_o),
    .wr_i(!mm_on ? {LANES{1'b0}} : mx_i ? mx_wr_i : mm_wr_o),
    .addr_i(mx_i ? mx_addr_i : mm_addr_o), .size_i(mx_i ? mx_size_i : mm_size_o),
    .wdata_i(mx_i ? mx_wdata_i : mm_wdata_o),
    .h_rd_i(mm_on && (mx_i ? mx_hrd_i : mh_rd_o)), .h_addr_i(mx_i ? mx_haddr_i : mh_addr_o),
    .h_size_i(mx_i ? mx_hsize_i : mh_size_o), .h_rdata_o(mh_rdata), .h_fault_o(mh_fault),
    .commit_i(mm_on && (mx_i ? mx_commit_i : mm_commit_o)), .rdata_o(m_rdata), .fault_o(m_fault),
    .host_we_i, .host_line_i, .host_wdata_i, .host_rdata_o, .host_wready_o,
    .hold_i(mm_on && (mx_i ? mx_hold_i : mm_hold_o)), .ww_en_i(mm_on && (mx_i ? mx_wwen_i : ww_en_o)),
    .ww_off_i(mx_i ? mx_wwoff_i : ww_off_o), .ww_data_i(mx_i ? mx_wwdata_i : ww_data_o),
    .ww_mask_i(mx_i ? mx_wwmask_i : ww_mask_o),
    .hw_en_i(mm_on && (mx_i ? mx_hwen_i : hw_en_o)), .hw_off_i(mx_i ? mx_hwoff_i : hw_off_o), .hw_rdata_o(mw_rdata),
    .st_en_o, .st_word_o, .st_data_o, .st_mask_o, .fs_en_i(ws_i && ws_en_i), .fs_word_i(ws_word_i),
    .fs_data_i(ws_data_i), .fs_mask_i(ws_mask_i)
  );

  sephirot_xmem #(.LANES(LANES)) u_xmem (
    .clk_i, .rst_ni, .rd_i(d_rd & x_sel), .wr_i(d_wr & x_sel), .addr_i(d_addr), .size_i(d_size), .wdata_i(d_wdata),
    .go_i(d_go), .hold_i(d_hold), .commit_i(d_commit), .rdata_o(x_rdata), .wait_o(d_xwait),
    .req_valid_o(xm_req_valid_o), .req_ready_i(xm_req_ready_i), .req_we_o(xm_req_we_o), .req_addr_o(xm_req_addr_o),
    .req_len_o(xm_req_len_o), .req_wdata_o(xm_req_wdata_o), .req_be_o(xm_req_be_o), .resp_valid_i(xm_resp_valid_i),
    .resp_data_i(xm_resp_data_i)
  );

  // the map unit's off-chip requests: a read, or a write of an off-chip map (never both: writes leave once the call
  // has decided, its reads done); a write's offset is in the map's tier
  wire [31:0] xh_base = (m_entry[210:209] == `SEPH_TIER_QDR) ? `SEPH_QDR_BASE : `SEPH_DDR_BASE;
  assign xh_req_valid_o = xr_valid || (mww_en && mww_x);
  assign xh_req_we_o    = !xr_valid;
  assign xh_req_addr_o  = xr_valid ? xr_addr : xh_base + mww_off;
  assign xh_req_len_o   = xr_valid ? xr_len : 2'd1;
  assign xh_req_wdata_o = mww_data;
  assign xh_req_be_o    = mww_mask;

  assign mid_o = m_id;
  assign m_entry = mentry_i;
  assign m_count = mcount_i;

  sephirot_helpers u_helpers (
    .clk_i, .rst_ni, .pkt_start_i(pkt_start_o), .core_i(CORE[2:0]),
    .req_i(hlp_req), .id_i(hlp_id), .args_i(hlp_args), .cycles_i(hlp_cycles),
    .pkt_data_i(ctx_data), .pkt_end_i(ctx_end),
    .done_o(hlp_done), .ret_o(hlp_ret), .illegal_o(hlp_illegal), .fault_o(hlp_fault), .access_o(hlp_access),
    .hm_en_o(hm_en), .hm_addr_o(hm_addr), .hm_tag_o(hm_tag), .hm_size_o(hm_size), .hm_rdata_i(hm_rdata),
    .hm_fault_i(hm_fault || hm_tag_bad),
    .mid_o(m_id), .mcfg_i(m_entry), .mcount_i(m_count), .mw_en_o(mw_en), .mw_off_o(mw_off),
    .mww_en_o(mww_en), .mww_off_o(mww_off), .mww_data_o(mww_data), .mww_mask_o(mww_mask), .mw_rdata_i(mw_rdata),
    .mww_x_o(mww_x), .xr_valid_o(xr_valid), .xr_addr_o(xr_addr), .xr_len_o(xr_len), .xr_rvalid_i(xh_resp_valid_i),
    .xr_rdata_i(xh_resp_data_i),
    .sw_en_o(hs_en), .sw_off_o(hs_off), .sw_size_o(hs_size), .sw_data_o(hs_data),
    .adj_kind_o(adj_kind), .adj_delta_o(adj_delta), .adj_commit_o(adj_commit), .adj_step_o(adj_step),
    .adj_err_i(adj_err), .adj_metalen_i(adj_metalen), .adj_busy_i(adj_busy),
    .tc_jump_o(hlp_tc_jump), .tc_row_o(hlp_tc_row),
    .redir_valid_o(res_redir_valid_o), .redir_kind_o(res_redir_kind_o), .redir_port_o(res_redir_port_o),
    .redir_size_o(res_redir_size_o),
    .pk_valid_o(prk_valid_o), .pk_len_o(prk_len_o), .pk_fmt_o(prk_fmt_o), .pk_args_o(prk_args_o),
    .evw_en_o, .evw_idx_o, .evw_data_o, .evp_valid_o, .evp_drop_o, .evp_kind_o, .evp_map_o, .evp_cpu_o,
    .evp_size_o, .evp_ctxlen_o
  );
endmodule
`default_nettype wire
