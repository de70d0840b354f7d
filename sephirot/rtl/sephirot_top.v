// sephirot_top: CORES Sephirot cores (tiles) running one ROM, sharing the map memory, its configuration and ports.
`default_nettype none
`include "sephirot_params.vh"

// Execution contract section 8 "Several cores". Each tile (sephirot_tile) has its own core, packet buffer, helper
// unit and lane off-chip port logic, and its copy of the instruction memory (every copy written alike). Shared: the
// map memory, the map configuration (sephirot_mapcfg: a read port per core) and the two off-chip ports (xm_: the
// lanes', xh_: the map unit's). A row touching the maps runs while its core holds the map grant (sephirot_grant):
// shared by the rows that only read the map memory, apart by those writing their core's per-CPU copies (or whose
// helper reads a key or buffer in a writable value), in write mode by one row whose lanes store in the map memory,
// beside shared rows only, exclusive by one row alone (a map helper that writes, an off-chip access); so each map
// helper, BPF atomic and lane access there is atomic across cores, and a spin_lock keeps the grant exclusive until
// its spin_unlock's row ends (one grant serves every lock).
// The map memory is one copy per core (sephirot_mapmem in each tile, MAP_BYTES), so that the shared rows of several
// cores read in the same cycle: core k reads copy k. Every write reaches every copy in the same cycle: the
// exclusive holder's ports (lane stores and atomics, map unit windows; the x_ wires below) drive every other copy
// while it holds the grant, the write holder's lane store (the w_ wires) is written into every other copy while
// their cores' shared rows read them, and the host's lines go to all (when no copy is written by a core); an apart
// row's writes (its core's per-CPU copy, at + k * PERCPU_STRIDE, sephirot_percpu) go to its own copy only, which alone
// the core and the host read there: the host reads the bytes at [k * PERCPU_STRIDE, (k + 1) * PERCPU_STRIDE) from
// copy k (the maps are below the stride, hxdp.rtl.sim.cores_refusal), the others from copy 0. Only the exclusive
// holder reaches the off-chip ports.
// The input register feeds the dispatcher (sephirot_dispatch: a packet to the lowest-numbered idle core) and the
// reorder stage (sephirot_reorder) lets the output frames leave in arrival order. Results, printk and event records
// and the trace are per core: port bits [W*k +: W] are core k's (the harness follows each core's packets from
// pkt_start_o). CORES = 1 is the single core of before, cycle for cycle (one copy, always held exclusive).
module sephirot_top #(
  parameter integer CORES     = 1,            // 1 .. `SEPH_CORES_MAX
  parameter integer LANES     = `SEPH_LANES,
  parameter integer AW        = `SEPH_IMEM_AW,
  parameter integer MAP_BYTES = `SEPH_MAP_MEM_BYTES,
  parameter integer NBUF      = `SEPH_PKT_BUFS_ONE,
  parameter integer LW        = $clog2(MAP_BYTES / 16)
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  // program load
  input  wire                 imem_we_i,
  input  wire [AW-1:0]        imem_waddr_i,
  input  wire [64*LANES-1:0]  imem_wdata_i,
  input  wire [AW:0]          imem_rows_i,
  // map memory lines
  input  wire                 map_we_i,
  input  wire [LW-1:0]        map_line_i,
  input  wire [127:0]         map_wdata_i,
  output wire [127:0]         map_rdata_o,
  output wire                 map_wready_o,   // map_we_i is taken this cycle (the core's writes come first)
  // map configuration table (one 256-bit entry per map id, sephirot_mapcfg.v)
  input  wire                 mcfg_we_i,
  input  wire [7:0]           mcfg_idx_i,
  input  wire [255:0]         mcfg_wdata_i,
  // raw mode (ISA tests): r1 = data, r2 = packet length instead of r1 = ctx
  input  wire                 raw_i,
  // input frames
  input  wire                 in_valid_i,
  output wire                 in_ready_o,
  input  wire [255:0]         in_data_i,
  input  wire                 in_sop_i,
  input  wire                 in_eop_i,
  input  wire [15:0]          in_len_i,
  input  wire [31:0]          in_ifindex_i,
  input  wire [31:0]          in_rxq_i,
  // output frames
  output wire                 out_valid_o,
  output wire [255:0]         out_data_o,
  output wire                 out_sop_o,
  output wire                 out_eop_o,
  output wire [5:0]           out_bytes_o,
  output wire [31:0]          out_action_o,
  output wire [7:0]           out_meta_o,      // leading bytes of the emission that are XDP metadata
  output wire [7:0]           out_drops_o,     // frames dropped in order this cycle, before out_* (several cores)
  // per-packet result (core k's at bits [W*k +: W])
  output wire [CORES-1:0]     pkt_start_o,
  output wire [CORES-1:0]     pkt_done_o,
  output wire [32*CORES-1:0]  res_action_o,
  output wire [3*CORES-1:0]   res_fault_o,
  output wire [64*CORES-1:0]  res_r0_o,
  output wire [32*CORES-1:0]  res_cycles_o,
  output wire [CORES-1:0]     res_redir_valid_o,
  output wire [2*CORES-1:0]   res_redir_kind_o,   // REDIRECT_PORT: port is an ifindex; _CPU, _XSK: a host queue
  output wire [32*CORES-1:0]  res_redir_port_o,
  output wire [16*CORES-1:0]  res_redir_size_o,   // _CPU, _XSK: the host queue's size (sephirot_hostq)
  // trace_printk records (sephirot_helpers: one per committed call; the board queues them for the host)
  output wire [CORES-1:0]     prk_valid_o,
  output wire [8*CORES-1:0]   prk_len_o,
  output wire [8*`SEPH_PRINTK_FMT_MAX*CORES-1:0] prk_fmt_o,
  output wire [192*CORES-1:0] prk_args_o,
  // event records (sephirot_events: a record's words as they are read, then the record; the board queues them)
  output wire [CORES-1:0]     evw_en_o,
  output wire [9*CORES-1:0]   evw_idx_o,
  output wire [64*CORES-1:0]  evw_data_o,
  output wire [CORES-1:0]     evp_valid_o,
  output wire [CORES-1:0]     evp_drop_o,
  output wire [CORES-1:0]     evp_kind_o,
  output wire [8*CORES-1:0]   evp_map_o,
  output wire [32*CORES-1:0]  evp_cpu_o,
  output wire [16*CORES-1:0]  evp_size_o,
  output wire [16*CORES-1:0]  evp_ctxlen_o,
  // trace
  output wire [CORES-1:0]     trc_valid_o,
  output wire [AW*CORES-1:0]  trc_pc_o,
  output wire [LANES*CORES-1:0] trc_wr_en_o,
  output wire [4*LANES*CORES-1:0] trc_wr_idx_o,
  output wire [64*LANES*CORES-1:0] trc_wr_val_o,
  output wire [LANES*CORES-1:0] trc_st_en_o,
  output wire [32*LANES*CORES-1:0] trc_st_addr_o,
  output wire [4*LANES*CORES-1:0] trc_st_size_o,
  output wire [64*LANES*CORES-1:0] trc_st_data_o,
  output wire [CORES-1:0]     trc_call_o,
  output wire [64*CORES-1:0]  trc_ret_o,
  output wire [2*CORES-1:0]   trc_call_lane_o,
  output wire [32*CORES-1:0]  trc_cost_o,
  output wire [32*CORES-1:0]  trc_next_o,
  output wire [CORES-1:0]     trc_exit_o,
  output wire [3*CORES-1:0]   trc_fault_o,
  // the off-chip map memory port (QDR and DDR tiers, sephirot_xmem): requests, and the responses of the reads
  output wire                 xm_req_valid_o,
  input  wire                 xm_req_ready_i,
  output wire                 xm_req_we_o,
  output wire [31:0]          xm_req_addr_o,
  output wire [1:0]           xm_req_len_o,
  output wire [127:0]         xm_req_wdata_o,
  output wire [15:0]          xm_req_be_o,
  input  wire                 xm_resp_valid_i,
  input  wire [127:0]         xm_resp_data_i,
  // the map unit's off-chip port (sephirot_mapfsm: the slots of hash maps in the QDR and DDR tiers): a read of
  // xh_req_len_o windows of MAP_WINDOW_BYTES, answered in order by one response with them all; a write (posted) of
  // one window with a byte enable per byte
  output wire                 xh_req_valid_o,
  output wire                 xh_req_we_o,
  output wire [31:0]          xh_req_addr_o,
  output wire [1:0]           xh_req_len_o,
  output wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] xh_req_wdata_o,
  output wire [`SEPH_MAP_WINDOW_BYTES-1:0]   xh_req_be_o,
  input  wire                 xh_resp_valid_i,
  input  wire [3*8*`SEPH_MAP_WINDOW_BYTES-1:0] xh_resp_data_i
);
  localparam integer MWB = `SEPH_MAP_WINDOW_BYTES;
  localparam integer KW  = (CORES > 1) ? $clog2(CORES) : 1;   // bits of a core's number
  // with several cores a finished frame waits in its core's packet buffers for its turn at the output, while the
  // core runs the next packets: more buffers (as many fit the block RAM of three), so that a core is rarely full
  localparam integer TNBUF = (CORES > 1) ? `SEPH_PKT_BUFS_SEVERAL : NBUF;
  localparam integer SW = $clog2(TNBUF + 1);

  // configuration inputs are registered (they change only between runs)
  reg          raw_q;
  reg [AW:0]   rows_q;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      raw_q <= 1'b0; rows_q <= {(AW+1){1'b0}};
    end else begin
      raw_q <= raw_i; rows_q <= imem_rows_i;
    end
  end

  // input register (the head of the input queue): the packet buffers see registered frames only
  reg          iv_q, isop_q, ieop_q;
  reg [255:0]  idata_q;
  reg [15:0]   ilen_q;
  reg [31:0]   iifx_q, irxq_q;
  wire [CORES-1:0] t_in_ready, t_idle, d_sel;
  wire             d_ready, d_push;
  wire [KW-1:0]    d_push_core;
  assign in_ready_o = !iv_q || d_ready;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      iv_q <= 1'b0; isop_q <= 1'b0; ieop_q <= 1'b0; idata_q <= 256'd0; ilen_q <= 16'd0; iifx_q <= 32'd0;
      irxq_q <= 32'd0;
    end else if (in_ready_o) begin
      iv_q <= in_valid_i; isop_q <= in_sop_i; ieop_q <= in_eop_i; idata_q <= in_data_i; ilen_q <= in_len_i;
      iifx_q <= in_ifindex_i; irxq_q <= in_rxq_i;
    end
  end

  // the shared clock of several cores (ktime_get_ns, contract section 8): 0 in the cycle the first packet's first
  // row runs, counting from there
  reg         clk_run_q;
  reg  [63:0] clk_cnt_q;
  wire [63:0] clock = clk_run_q ? clk_cnt_q : 64'd0;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      clk_run_q <= 1'b0; clk_cnt_q <= 64'd0;
    end else if (clk_run_q || |pkt_start_o) begin
      clk_run_q <= 1'b1; clk_cnt_q <= clock + 64'd1;
    end
  end

  sephirot_dispatch #(.CORES(CORES)) u_dispatch (
    .clk_i, .rst_ni, .valid_i(iv_q), .sop_i(isop_q), .ready_i(t_in_ready), .idle_i(t_idle), .sel_o(d_sel),
    .ready_o(d_ready), .push_o(d_push), .push_core_o(d_push_core)
  );

  // the tiles' ports towards the shared units, core k's at [W*k +: W]
  wire [CORES-1:0]           g_req, g_excl, g_wr, g_ap, g_keep, g_gnt;
  wire [KW-1:0]              g_k;              // the core holding the grant exclusive (with g_x)
  wire [KW-1:0]              g_wk;             // the core holding it in write mode (with g_w)
  wire                       g_w;
  wire [KW-1:0]              xm_who, xh_who;   // the cores the off-chip responses of this cycle are for
  wire                       g_x;
  wire [LANES*CORES-1:0]     t_mm_rd, t_mm_wr;
  wire [32*LANES*CORES-1:0]  t_mm_addr;
  wire [4*LANES*CORES-1:0]   t_mm_size;
  wire [64*LANES*CORES-1:0]  t_mm_wdata;
  wire [CORES-1:0]           t_mm_commit, t_mm_hold, t_mh_rd, t_ww_en, t_hw_en;
  wire [32*CORES-1:0]        t_mh_addr, t_ww_off, t_hw_off, t_mid;
  wire [4*CORES-1:0]         t_mh_size;
  wire [8*MWB*CORES-1:0]     t_ww_data;
  wire [MWB*CORES-1:0]       t_ww_mask;
  wire [CORES-1:0]           t_xm_valid, t_xm_we, t_xh_valid, t_xh_we;
  wire [32*CORES-1:0]        t_xm_addr, t_xh_addr;
  wire [2*CORES-1:0]         t_xm_len, t_xh_len;
  wire [128*CORES-1:0]       t_xm_wdata;
  wire [16*CORES-1:0]        t_xm_be;
  wire [8*MWB*CORES-1:0]     t_xh_wdata;
  wire [MWB*CORES-1:0]       t_xh_be;
  wire [CORES-1:0]           t_out_valid, t_out_sop, t_out_eop, r_ready;
  wire [256*CORES-1:0]       t_out_data;
  wire [6*CORES-1:0]         t_out_bytes;
  wire [32*CORES-1:0]        t_out_action;
  wire [8*CORES-1:0]         t_out_meta;
  wire [256*CORES-1:0]       m_entry;
  wire [CORES-1:0]           t_fin, t_fin_drop;
  wire [SW*CORES-1:0]        r_skip;
  wire [31:0]                m_count;
  wire [`SEPH_MAPS_MAX-1:0]  m_lkx;

  // the exclusive holder's map-memory ports, for every other core's copy (sephirot_tile)
  wire [LANES-1:0]     x_rd = t_mm_rd[LANES*g_k +: LANES], x_wr = t_mm_wr[LANES*g_k +: LANES];
  wire [32*LANES-1:0]  x_addr = t_mm_addr[32*LANES*g_k +: 32*LANES];
  wire [4*LANES-1:0]   x_size = t_mm_size[4*LANES*g_k +: 4*LANES];
  wire [64*LANES-1:0]  x_wdata = t_mm_wdata[64*LANES*g_k +: 64*LANES];
  wire                 x_hrd = t_mh_rd[g_k], x_commit = t_mm_commit[g_k], x_hold = t_mm_hold[g_k];
  wire                 x_wwen = t_ww_en[g_k], x_hwen = t_hw_en[g_k];
  wire [31:0]          x_haddr = t_mh_addr[32*g_k +: 32], x_wwoff = t_ww_off[32*g_k +: 32];
  wire [31:0]          x_hwoff = t_hw_off[32*g_k +: 32];
  wire [3:0]           x_hsize = t_mh_size[4*g_k +: 4];
  wire [8*MWB-1:0]     x_wwdata = t_ww_data[8*MWB*g_k +: 8*MWB];
  wire [MWB-1:0]       x_wwmask = t_ww_mask[MWB*g_k +: MWB];
  // the write holder's lane store, for every other core's copy
  localparam integer MWW = $clog2(MAP_BYTES) - 3;
  wire [CORES-1:0]     t_st_en;
  wire [MWW*CORES-1:0] t_st_word;
  wire [128*CORES-1:0] t_st_data;
  wire [16*CORES-1:0]  t_st_mask;
  wire                 w_en = t_st_en[g_wk];
  wire [MWW-1:0]       w_word = t_st_word[MWW*g_wk +: MWW];
  wire [127:0]         w_data = t_st_data[128*g_wk +: 128];
  wire [15:0]          w_mask = t_st_mask[16*g_wk +: 16];
  // the host's lines: written into every copy in a cycle in which no copy is written by a core; read from the copy
  // that holds them (per-CPU copy k's bytes from copy k, the rest from copy 0)
  localparam integer SSH = $clog2(`SEPH_PERCPU_STRIDE);
  wire [CORES-1:0]     c_wready;
  wire [128*CORES-1:0] c_hrdata;
  /* verilator lint_off UNUSEDSIGNAL */
  wire [31:0]          ho_byte = {{(28-LW){1'b0}}, map_line_i, 4'd0};   // (its copy's bits are used)
  /* verilator lint_on UNUSEDSIGNAL */
  wire [31:0]          ho_copy = ho_byte >> SSH;
  wire [KW-1:0]        ho_k = (ho_copy < CORES) ? ho_copy[KW-1:0] : {KW{1'b0}};
  assign map_wready_o = &c_wready;
  assign map_rdata_o = c_hrdata[128*ho_k +: 128];
  genvar gk;
  generate
    for (gk = 0; gk < CORES; gk = gk + 1) begin : gen_core
      sephirot_tile #(.LANES(LANES), .AW(AW), .NBUF(TNBUF), .CORE(gk), .CORES(CORES), .MAP_BYTES(MAP_BYTES),
                      .SKIP_DROPS((CORES > 1) ? 1 : 0)) u_tile (
        .clk_i, .rst_ni, .imem_we_i, .imem_waddr_i, .imem_wdata_i, .imem_rows_i(rows_q), .raw_i(raw_q),
        .mcfg_we_i, .mcfg_wdata_i,
        .in_valid_i(iv_q && d_sel[gk]), .in_ready_o(t_in_ready[gk]), .in_data_i(idata_q), .in_sop_i(isop_q),
        .in_eop_i(ieop_q), .in_len_i(ilen_q), .in_ifindex_i(iifx_q), .in_rxq_i(irxq_q), .idle_o(t_idle[gk]),
        .clock_en_i(CORES > 1), .clock_i(clock),
        .out_ready_i(r_ready[gk]), .out_fin_o(t_fin[gk]), .out_fin_drop_o(t_fin_drop[gk]),
        .out_skip_i(r_skip[SW*gk +: SW]), .out_valid_o(t_out_valid[gk]), .out_data_o(t_out_data[256*gk +: 256]),
        .out_sop_o(t_out_sop[gk]), .out_eop_o(t_out_eop[gk]), .out_bytes_o(t_out_bytes[6*gk +: 6]),
        .out_action_o(t_out_action[32*gk +: 32]), .out_meta_o(t_out_meta[8*gk +: 8]),
        .pkt_start_o(pkt_start_o[gk]), .pkt_done_o(pkt_done_o[gk]), .res_action_o(res_action_o[32*gk +: 32]),
        .res_fault_o(res_fault_o[3*gk +: 3]), .res_r0_o(res_r0_o[64*gk +: 64]),
        .res_cycles_o(res_cycles_o[32*gk +: 32]), .res_redir_valid_o(res_redir_valid_o[gk]),
        .res_redir_kind_o(res_redir_kind_o[2*gk +: 2]), .res_redir_port_o(res_redir_port_o[32*gk +: 32]),
        .res_redir_size_o(res_redir_size_o[16*gk +: 16]),
        .prk_valid_o(prk_valid_o[gk]), .prk_len_o(prk_len_o[8*gk +: 8]),
        .prk_fmt_o(prk_fmt_o[8*`SEPH_PRINTK_FMT_MAX*gk +: 8*`SEPH_PRINTK_FMT_MAX]),
        .prk_args_o(prk_args_o[192*gk +: 192]),
        .evw_en_o(evw_en_o[gk]), .evw_idx_o(evw_idx_o[9*gk +: 9]), .evw_data_o(evw_data_o[64*gk +: 64]),
        .evp_valid_o(evp_valid_o[gk]), .evp_drop_o(evp_drop_o[gk]), .evp_kind_o(evp_kind_o[gk]),
        .evp_map_o(evp_map_o[8*gk +: 8]), .evp_cpu_o(evp_cpu_o[32*gk +: 32]), .evp_size_o(evp_size_o[16*gk +: 16]),
        .evp_ctxlen_o(evp_ctxlen_o[16*gk +: 16]),
        .trc_valid_o(trc_valid_o[gk]), .trc_pc_o(trc_pc_o[AW*gk +: AW]),
        .trc_wr_en_o(trc_wr_en_o[LANES*gk +: LANES]), .trc_wr_idx_o(trc_wr_idx_o[4*LANES*gk +: 4*LANES]),
        .trc_wr_val_o(trc_wr_val_o[64*LANES*gk +: 64*LANES]), .trc_st_en_o(trc_st_en_o[LANES*gk +: LANES]),
        .trc_st_addr_o(trc_st_addr_o[32*LANES*gk +: 32*LANES]),
        .trc_st_size_o(trc_st_size_o[4*LANES*gk +: 4*LANES]),
        .trc_st_data_o(trc_st_data_o[64*LANES*gk +: 64*LANES]), .trc_call_o(trc_call_o[gk]),
        .trc_ret_o(trc_ret_o[64*gk +: 64]), .trc_call_lane_o(trc_call_lane_o[2*gk +: 2]),
        .trc_cost_o(trc_cost_o[32*gk +: 32]), .trc_next_o(trc_next_o[32*gk +: 32]), .trc_exit_o(trc_exit_o[gk]),
        .trc_fault_o(trc_fault_o[3*gk +: 3]),
        .gnt_req_o(g_req[gk]), .gnt_excl_o(g_excl[gk]), .gnt_wr_o(g_wr[gk]), .gnt_ap_o(g_ap[gk]),
        .gnt_i(g_gnt[gk]), .gnt_keep_o(g_keep[gk]),
        .gnt_lkx_i(m_lkx),
        .mm_rd_o(t_mm_rd[LANES*gk +: LANES]), .mm_wr_o(t_mm_wr[LANES*gk +: LANES]),
        .mm_addr_o(t_mm_addr[32*LANES*gk +: 32*LANES]), .mm_size_o(t_mm_size[4*LANES*gk +: 4*LANES]),
        .mm_wdata_o(t_mm_wdata[64*LANES*gk +: 64*LANES]), .mm_commit_o(t_mm_commit[gk]),
        .mm_hold_o(t_mm_hold[gk]),
        .mh_rd_o(t_mh_rd[gk]), .mh_addr_o(t_mh_addr[32*gk +: 32]), .mh_size_o(t_mh_size[4*gk +: 4]),

        .ww_en_o(t_ww_en[gk]), .ww_off_o(t_ww_off[32*gk +: 32]), .ww_data_o(t_ww_data[8*MWB*gk +: 8*MWB]),
        .ww_mask_o(t_ww_mask[MWB*gk +: MWB]), .hw_en_o(t_hw_en[gk]), .hw_off_o(t_hw_off[32*gk +: 32]),
        .mx_i(g_x && {{(32-KW){1'b0}}, g_k} != gk), .mx_rd_i(x_rd), .mx_wr_i(x_wr), .mx_addr_i(x_addr),
        .mx_size_i(x_size), .mx_wdata_i(x_wdata), .mx_commit_i(x_commit), .mx_hold_i(x_hold), .mx_hrd_i(x_hrd),
        .mx_haddr_i(x_haddr), .mx_hsize_i(x_hsize), .mx_wwen_i(x_wwen), .mx_wwoff_i(x_wwoff), .mx_wwdata_i(x_wwdata),
        .mx_wwmask_i(x_wwmask), .mx_hwen_i(x_hwen), .mx_hwoff_i(x_hwoff),
        .st_en_o(t_st_en[gk]), .st_word_o(t_st_word[MWW*gk +: MWW]), .st_data_o(t_st_data[128*gk +: 128]),
        .st_mask_o(t_st_mask[16*gk +: 16]), .ws_i(g_w && {{(32-KW){1'b0}}, g_wk} != gk), .ws_en_i(w_en),
        .ws_word_i(w_word), .ws_data_i(w_data), .ws_mask_i(w_mask),
        .host_we_i(map_we_i && map_wready_o), .host_line_i(map_line_i), .host_wdata_i(map_wdata_i),
        .host_rdata_o(c_hrdata[128*gk +: 128]), .host_wready_o(c_wready[gk]),
        .mid_o(t_mid[32*gk +: 32]), .mentry_i(m_entry[256*gk +: 256]), .mcount_i(m_count),
        .xm_req_valid_o(t_xm_valid[gk]), .xm_req_ready_i(xm_req_ready_i), .xm_req_we_o(t_xm_we[gk]),
        .xm_req_addr_o(t_xm_addr[32*gk +: 32]), .xm_req_len_o(t_xm_len[2*gk +: 2]),
        .xm_req_wdata_o(t_xm_wdata[128*gk +: 128]), .xm_req_be_o(t_xm_be[16*gk +: 16]),
        .xm_resp_valid_i(xm_resp_valid_i && {{(32-KW){1'b0}}, xm_who} == gk), .xm_resp_data_i(xm_resp_data_i),
        .xh_req_valid_o(t_xh_valid[gk]), .xh_req_we_o(t_xh_we[gk]), .xh_req_addr_o(t_xh_addr[32*gk +: 32]),
        .xh_req_len_o(t_xh_len[2*gk +: 2]), .xh_req_wdata_o(t_xh_wdata[8*MWB*gk +: 8*MWB]),
        .xh_req_be_o(t_xh_be[MWB*gk +: MWB]), .xh_resp_valid_i(xh_resp_valid_i && {{(32-KW){1'b0}}, xh_who} == gk),
        .xh_resp_data_i(xh_resp_data_i)
      );
    end
  endgenerate

  // each off-chip response goes to the core whose read it answers (sephirot_respq), which holds the grant unless its
  // call let the read go (a fault)
  sephirot_respq #(.CORES(CORES)) u_xm_respq (
    .clk_i, .rst_ni, .push_i(xm_req_valid_o && xm_req_ready_i && !xm_req_we_o), .core_i(g_k),
    .pop_i(xm_resp_valid_i), .head_o(xm_who)
  );
  sephirot_respq #(.CORES(CORES)) u_xh_respq (
    .clk_i, .rst_ni, .push_i(xh_req_valid_o && !xh_req_we_o), .core_i(g_k), .pop_i(xh_resp_valid_i),
    .head_o(xh_who)
  );

  sephirot_grant #(.CORES(CORES)) u_grant (
    .clk_i, .rst_ni, .req_i(g_req), .excl_i(g_excl), .wr_i(g_wr), .ap_i(g_ap), .keep_i(g_keep), .gnt_o(g_gnt),
    .x_o(g_x), .xk_o(g_k), .w_o(g_w), .wk_o(g_wk)
  );

  sephirot_mapcfg #(.CORES(CORES)) u_mapcfg (
    .clk_i, .rst_ni, .we_i(mcfg_we_i), .widx_i(mcfg_idx_i), .wdata_i(mcfg_wdata_i), .id_i(t_mid),
    .entry_o(m_entry), .count_o(m_count), .lkx_o(m_lkx)
  );

  // the off-chip ports: the exclusive holder's
  assign xm_req_valid_o = g_x && t_xm_valid[g_k];
  assign xm_req_we_o    = t_xm_we[g_k];
  assign xm_req_addr_o  = t_xm_addr[32*g_k +: 32];
  assign xm_req_len_o   = t_xm_len[2*g_k +: 2];
  assign xm_req_wdata_o = t_xm_wdata[128*g_k +: 128];
  assign xm_req_be_o    = t_xm_be[16*g_k +: 16];
  assign xh_req_valid_o = g_x && t_xh_valid[g_k];
  assign xh_req_we_o    = t_xh_we[g_k];
  assign xh_req_addr_o  = t_xh_addr[32*g_k +: 32];
  assign xh_req_len_o   = t_xh_len[2*g_k +: 2];
  assign xh_req_wdata_o = t_xh_wdata[8*MWB*g_k +: 8*MWB];
  assign xh_req_be_o    = t_xh_be[MWB*g_k +: MWB];

  sephirot_reorder #(.CORES(CORES), .DEPTH(CORES * TNBUF), .NBUF(TNBUF)) u_reorder (
    .clk_i, .rst_ni, .push_i(d_push), .push_core_i(d_push_core), .fin_i(t_fin), .fin_drop_i(t_fin_drop),
    .skip_o(r_skip), .drops_o(out_drops_o), .valid_i(t_out_valid), .data_i(t_out_data),
    .sop_i(t_out_sop), .eop_i(t_out_eop), .bytes_i(t_out_bytes), .action_i(t_out_action), .meta_i(t_out_meta),
    .ready_o(r_ready), .out_valid_o, .out_data_o, .out_sop_o, .out_eop_o, .out_bytes_o, .out_action_o, .out_meta_o
  );

`ifdef SEPH_ASSERT
  // an event helper's row holds the map grant exclusive (contract section 8), so at most one core sends record words
  // or a record in a cycle: the board's one event ring takes whichever core's (sephirot_board)
  // (in reset no core sends anything, so the check needs no reset term)
  always @(posedge clk_i) begin
    assert ($onehot0(evw_en_o)) else $error("contract: several cores write event record words in one cycle");
    assert ($onehot0(evp_valid_o)) else $error("contract: several cores send an event record in one cycle");
  end
`endif
endmodule
`default_nettype wire
