// sephirot_board: the board top: AXI-Lite registers, NPORTS input ports arbitrated per packet, CORES Sephirot cores.
`default_nettype none
`include "sephirot_params.vh"

// Input port k carries ingress_ifindex k + 1. The arbiter is round robin between whole packets (a packet's frames
// are never interleaved with another port's). While the host holds the input (CTRL bit 0), no new packet starts;
// STATUS.held reads 1 once no packet is in the core, so a program swap happens between two packets.
// With CORES > 1 (sephirot_top: the dispatcher, the map grant, the reorder stage) the cores' per-packet results
// reach the counters, the host queues and pkt_done_o one a cycle in arrival order (sephirot_results), their
// trace_printk records the FIFO one a cycle (sephirot_prkarb), each with the number of its own packet. The event
// ring takes core 0's records: the host tools refuse the event maps on several cores (docs/board.md), so the other
// cores make none.
module sephirot_board #(
  parameter integer NPORTS    = 1,
  parameter integer CORES     = 1,            // 1 .. `SEPH_CORES_MAX
  parameter integer LANES     = `SEPH_LANES,
  parameter integer AW        = `SEPH_IMEM_AW,
  parameter integer MAP_BYTES = `SEPH_MAP_MEM_BYTES,
  parameter integer LW        = $clog2(MAP_BYTES / 16),
  parameter integer PW        = NPORTS > 1 ? $clog2(NPORTS) : 1
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
  output wire [1:0]           s_bresp_o,
  output wire                 s_bvalid_o,
  input  wire                 s_bready_i,
  input  wire [31:0]          s_araddr_i,
  input  wire                 s_arvalid_i,
  output wire                 s_arready_o,
  output wire [31:0]          s_rdata_o,
  output wire [1:0]           s_rresp_o,
  output wire                 s_rvalid_o,
  input  wire                 s_rready_i,
  // input ports (32-byte frames)
  input  wire [NPORTS-1:0]     in_valid_i,
  output reg  [NPORTS-1:0]     in_ready_o,
  input  wire [256*NPORTS-1:0] in_data_i,
  input  wire [NPORTS-1:0]     in_sop_i,
  input  wire [NPORTS-1:0]     in_eop_i,
  input  wire [16*NPORTS-1:0]  in_len_i,
  // output frames (the MAC is always ready)
  output wire                 out_valid_o,
  output wire [255:0]         out_data_o,
  output wire                 out_sop_o,
  output wire                 out_eop_o,
  output wire [5:0]           out_bytes_o,
  output wire [31:0]          out_action_o,
  output wire [7:0]           out_meta_o,      // leading bytes of the emission that are XDP metadata
  output wire [7:0]           out_drops_o,     // several cores: frames dropped in order this cycle (no output)
  // per-packet result (with several cores: one a cycle, in arrival order)
  output wire                 pkt_done_o,
  output wire [31:0]          res_action_o,
  output wire [2:0]           res_fault_o,
  output wire [31:0]          res_cycles_o,
  output wire                 res_redir_valid_o,
  output wire [1:0]           res_redir_kind_o,
  output wire [31:0]          res_redir_port_o,
  output wire                 res_host_ok_o,    // a frame redirected to a host queue was delivered (not dropped)
  // the host's DMA engine took the oldest frame of host queue host_pop_q_i (sephirot_hostq)
  input  wire                 host_pop_i,
  input  wire [31:0]          host_pop_q_i
);
  wire                imem_we;
  wire [AW-1:0]       imem_waddr;
  wire [64*LANES-1:0] imem_wdata;
  wire [AW:0]         imem_rows;
  wire                map_we;
  wire [LW-1:0]       map_line;
  wire [127:0]        map_wdata, map_rdata;
  wire                map_wready;
  wire                mcfg_we;
  wire [7:0]          mcfg_idx;
  wire [255:0]        mcfg_wdata;
  wire                hold;
  wire                trc_pop, cnt_clr;
  wire [31:0]         trc_count, trc_dropped;
  wire [64+8*`SEPH_PRINTK_FMT_MAX+192-1:0] trc_head;
  wire [CORES-1:0]    prk_valid;
  wire [8*CORES-1:0]  prk_len;
  wire [8*`SEPH_PRINTK_FMT_MAX*CORES-1:0] prk_fmt;
  wire [192*CORES-1:0] prk_args;
  wire                ev_pop, ev_rd;
  wire [31:0]         ev_count, ev_dropped, ev_rdata;
  wire [9:0]          ev_word;
  // (the event ring takes core 0's records: the other cores' are unused, the tools refuse event maps on them)
  /* verilator lint_off UNUSEDSIGNAL */
  wire [CORES-1:0]    evw_en, evp_valid, evp_drop, evp_kind;
  wire [9*CORES-1:0]  evw_idx;
  wire [64*CORES-1:0] evw_data;
  wire [8*CORES-1:0]  evp_map;
  wire [32*CORES-1:0] evp_cpu;
  wire [16*CORES-1:0] evp_size, evp_ctxlen;
  /* verilator lint_on UNUSEDSIGNAL */
  wire [CORES-1:0]    pkt_start;
  reg  [31:0]         pkt_num_q;   // packets the cores started since reset (a record's packet number)
  reg  [15:0]         inflight_q;
  reg                 locked_q;
  reg  [PW-1:0]       sel_q, rr_q;
  wire                held = hold && !locked_q && inflight_q == 16'd0;

  sephirot_axil #(.LANES(LANES), .AW(AW), .LW(LW), .CORES(CORES)) u_axil (
    .clk_i, .rst_ni,
    .s_awaddr_i, .s_awvalid_i, .s_awready_o, .s_wdata_i, .s_wstrb_i, .s_wvalid_i, .s_wready_o,
    .s_bresp_o, .s_bvalid_o, .s_bready_i, .s_araddr_i, .s_arvalid_i, .s_arready_o,
    .s_rdata_o, .s_rresp_o, .s_rvalid_o, .s_rready_i,
    .imem_we_o(imem_we), .imem_waddr_o(imem_waddr), .imem_wdata_o(imem_wdata), .imem_rows_o(imem_rows),
    .map_we_o(map_we), .map_line_o(map_line), .map_wdata_o(map_wdata), .map_rdata_i(map_rdata), .map_wready_i(map_wready),
    .mcfg_we_o(mcfg_we), .mcfg_idx_o(mcfg_idx), .mcfg_wdata_o(mcfg_wdata),
    .hold_o(hold), .held_i(held), .inflight_i(inflight_q),
    .pkt_done_i(pkt_done_o), .res_action_i(res_action_o), .res_fault_i(res_fault_o),
    .trc_count_i(trc_count), .trc_dropped_i(trc_dropped), .trc_head_i(trc_head), .trc_pop_o(trc_pop),
    .hq_rdata_i(hq_rdata), .hq_rok_i(hq_rok),
    .ev_count_i(ev_count), .ev_dropped_i(ev_dropped), .ev_rd_o(ev_rd), .ev_word_o(ev_word), .ev_rdata_i(ev_rdata),
    .ev_pop_o(ev_pop),
    .cnt_clr_o(cnt_clr)
  );

  // host queues: frames redirected to a CPU (cpumap) or an AF_XDP socket (xskmap)
  wire        hq_rok;
  wire [31:0] hq_rdata;
  wire [15:0] res_redir_size;
  wire        hq_done = pkt_done_o && res_action_o == 32'd`SEPH_XDP_REDIRECT && res_redir_valid_o &&
                        (res_redir_kind_o == 2'd`SEPH_REDIRECT_CPU || res_redir_kind_o == 2'd`SEPH_REDIRECT_XSK);
  sephirot_hostq u_hostq (
    .clk_i, .rst_ni, .done_i(hq_done), .xsk_i(res_redir_kind_o == 2'd`SEPH_REDIRECT_XSK), .id_i(res_redir_port_o),
    .size_i(res_redir_size), .deliver_o(res_host_ok_o), .pop_i(host_pop_i), .pop_q_i(host_pop_q_i),
    .clr_i(cnt_clr), .raddr_i(s_araddr_i[15:0]), .rdata_o(hq_rdata), .rok_o(hq_rok)
  );

  // trace_printk records, each with the number of its core's packet (packets started before it)
  localparam integer PRW = 8 + 32 + 8 * `SEPH_PRINTK_FMT_MAX + 192;
  reg  [31:0]          core_pkt_q [0:CORES-1];
  wire [PRW*CORES-1:0] prk_recs;
  wire [PRW-1:0]       prk_rec;
  wire [31:0]          prk_lost;
  wire                 prk_push;
  // the event ring takes the records of whichever core writes one: event helpers' rows hold the map grant exclusive
  // (execution contract section 8), so at most one core writes record words or pushes a record in a cycle
  reg                  e_wr, e_push, e_drop, e_kind;
  reg  [8:0]           e_idx;
  reg  [63:0]          e_data;
  reg  [7:0]           e_map;
  reg  [31:0]          e_cpu, ev_num;
  reg  [15:0]          e_size, e_ctxlen;
  integer              ek;
  always @(*) begin
    e_wr = 1'b0; e_idx = 9'd0; e_data = 64'd0;
    e_push = 1'b0; e_drop = 1'b0; e_kind = 1'b0; e_map = 8'd0; e_cpu = 32'd0; e_size = 16'd0; e_ctxlen = 16'd0;
    ev_num = (CORES == 1) ? pkt_num_q - 32'd1 : 32'd0;
    for (ek = 0; ek < CORES; ek = ek + 1) begin
      if (evw_en[ek]) begin e_wr = 1'b1; e_idx = evw_idx[9*ek +: 9]; e_data = evw_data[64*ek +: 64]; end
      if (evp_valid[ek]) begin
        e_push = 1'b1; e_drop = evp_drop[ek]; e_kind = evp_kind[ek]; e_map = evp_map[8*ek +: 8];
        e_cpu = evp_cpu[32*ek +: 32]; e_size = evp_size[16*ek +: 16]; e_ctxlen = evp_ctxlen[16*ek +: 16];
        if (CORES > 1) ev_num = core_pkt_q[ek];
      end
    end
  end
  genvar gk;
  generate
    for (gk = 0; gk < CORES; gk = gk + 1) begin : gen_prk
      // (one core: pkt_num_q - 1, its count of packets includes the one in the core, the same number)
      wire [31:0] num = (CORES == 1) ? pkt_num_q - 32'd1 : core_pkt_q[gk];
      assign prk_recs[PRW*gk +: PRW] = {prk_args[192*gk +: 192], prk_fmt[8*`SEPH_PRINTK_FMT_MAX*gk +:
                                        8*`SEPH_PRINTK_FMT_MAX], num, prk_len[8*gk +: 8]};
      always @(posedge clk_i) if (pkt_start[gk]) core_pkt_q[gk] <= pkt_num_q;
    end
  endgenerate
  sephirot_prkarb #(.CORES(CORES)) u_prkarb (
    .clk_i, .rst_ni, .valid_i(prk_valid), .rec_i(prk_recs), .push_o(prk_push), .rec_o(prk_rec), .lost_o(prk_lost)
  );
  sephirot_tracefifo u_tracefifo (
    .clk_i, .rst_ni, .push_i(prk_push), .push_len_i(prk_rec[7:0]), .push_pkt_i(prk_rec[8 +: 32]),
    .push_fmt_i(prk_rec[40 +: 8*`SEPH_PRINTK_FMT_MAX]), .push_args_i(prk_rec[PRW-192 +: 192]), .pop_i(trc_pop),
    .clr_i(cnt_clr), .lost_i(prk_lost), .count_o(trc_count), .dropped_o(trc_dropped), .head_o(trc_head)
  );

  // the records of perf_event_output and the ring buffer helpers, each numbered with its core's packet
  sephirot_eventring u_eventring (
    .clk_i, .rst_ni, .wr_i(e_wr), .wr_idx_i(e_idx), .wr_data_i(e_data),
    .push_i(e_push), .push_drop_i(e_drop), .push_kind_i(e_kind), .push_map_i(e_map),
    .push_cpu_i(e_cpu), .push_size_i(e_size), .push_ctxlen_i(e_ctxlen),
    .push_pkt_i(ev_num),
    .pop_i(ev_pop), .clr_i(cnt_clr), .count_o(ev_count), .dropped_o(ev_dropped), .rd_i(ev_rd), .rd_word_i(ev_word),
    .rd_data_o(ev_rdata)
  );

  // ---------------------------------------------------------------------------------------------------------
  // input arbiter: a port is granted at a start of packet and keeps the core input until its end of packet
  reg [PW-1:0] pick;
  reg          pick_ok;
  integer      pi;
  reg [PW:0]   cand;
  always @(*) begin
    pick = rr_q;
    pick_ok = 1'b0;
    for (pi = NPORTS - 1; pi >= 0; pi = pi - 1) begin
      cand = {1'b0, rr_q} + pi[PW:0];
      if (cand >= NPORTS[PW:0]) cand = cand - NPORTS[PW:0];
      if (in_valid_i[cand[PW-1:0]] && in_sop_i[cand[PW-1:0]]) begin
        pick = cand[PW-1:0];
        pick_ok = 1'b1;
      end
    end
  end
  wire [PW-1:0] cur     = locked_q ? sel_q : pick;
  wire          grant   = locked_q || (pick_ok && !hold);
  wire          c_valid = grant && in_valid_i[cur];
  wire          c_ready;
  wire          c_fire  = c_valid && c_ready;
  wire          c_sop   = in_sop_i[cur];
  wire          c_eop   = in_eop_i[cur];
  integer       ri;
  always @(*) begin
    for (ri = 0; ri < NPORTS; ri = ri + 1) in_ready_o[ri] = grant && c_ready && cur == ri[PW-1:0];
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      locked_q <= 1'b0; sel_q <= {PW{1'b0}}; rr_q <= {PW{1'b0}}; inflight_q <= 16'd0; pkt_num_q <= 32'd0;
    end else begin
      if (|pkt_start) pkt_num_q <= pkt_num_q + 32'd1;   // (one first frame a cycle: one start)
      if (c_fire) begin
        if (c_eop) begin
          locked_q <= 1'b0;
          rr_q <= ({1'b0, cur} + 1'b1 >= NPORTS[PW:0]) ? {PW{1'b0}} : cur + 1'b1;
        end else begin
          locked_q <= 1'b1;
          sel_q <= cur;
        end
      end
      inflight_q <= inflight_q + {15'd0, c_fire && c_sop} - {15'd0, pkt_done_o};
    end
  end

  // ---------------------------------------------------------------------------------------------------------
  /* verilator lint_off UNUSEDSIGNAL */
  wire [CORES-1:0]           trc_valid, trc_call, trc_exit;
  wire [AW*CORES-1:0]        trc_pc;
  wire [LANES*CORES-1:0]     trc_wr_en, trc_st_en;
  wire [4*LANES*CORES-1:0]   trc_wr_idx, trc_st_size;
  wire [64*LANES*CORES-1:0]  trc_wr_val, trc_st_data;
  wire [32*LANES*CORES-1:0]  trc_st_addr;
  wire [64*CORES-1:0]        trc_ret, res_r0;
  wire [2*CORES-1:0]         trc_call_lane;
  wire [32*CORES-1:0]        trc_cost, trc_next;
  wire [3*CORES-1:0]         trc_fault;
  /* verilator lint_on UNUSEDSIGNAL */
  // each core's result (sephirot_top: core k's at [W*k +: W]), one a cycle in arrival order (sephirot_results)
  localparam integer RW = 32 + 3 + 32 + 1 + 2 + 32 + 16;
  wire [CORES-1:0]     t_done, t_rvalid;
  wire [32*CORES-1:0]  t_action, t_cycles, t_rport;
  wire [3*CORES-1:0]   t_fault;
  wire [2*CORES-1:0]   t_rkind;
  wire [16*CORES-1:0]  t_rsize;
  wire [RW*CORES-1:0]  t_res;
  generate
    for (gk = 0; gk < CORES; gk = gk + 1) begin : gen_res
      assign t_res[RW*gk +: RW] = {t_action[32*gk +: 32], t_fault[3*gk +: 3], t_cycles[32*gk +: 32], t_rvalid[gk],
                                   t_rkind[2*gk +: 2], t_rport[32*gk +: 32], t_rsize[16*gk +: 16]};
    end
  endgenerate
  sephirot_results #(.CORES(CORES)) u_results (
    .clk_i, .rst_ni, .start_i(pkt_start), .done_i(t_done), .res_i(t_res), .done_o(pkt_done_o),
    .res_o({res_action_o, res_fault_o, res_cycles_o, res_redir_valid_o, res_redir_kind_o, res_redir_port_o,
            res_redir_size})
  );

  sephirot_top #(.CORES(CORES), .LANES(LANES), .AW(AW), .MAP_BYTES(MAP_BYTES), .LW(LW)) u_top (
    .clk_i, .rst_ni,
    .imem_we_i(imem_we), .imem_waddr_i(imem_waddr), .imem_wdata_i(imem_wdata), .imem_rows_i(imem_rows),
    .map_we_i(map_we), .map_line_i(map_line), .map_wdata_i(map_wdata), .map_rdata_o(map_rdata), .map_wready_o(map_wready),
    .mcfg_we_i(mcfg_we), .mcfg_idx_i(mcfg_idx), .mcfg_wdata_i(mcfg_wdata),
    .raw_i(1'b0),
    .in_valid_i(c_valid), .in_ready_o(c_ready), .in_data_i(in_data_i[256*cur +: 256]), .in_sop_i(c_sop),
    .in_eop_i(c_eop), .in_len_i(in_len_i[16*cur +: 16]), .in_ifindex_i({{(32-PW){1'b0}}, cur} + 32'd1),
    .in_rxq_i(32'd0),
    .out_valid_o, .out_data_o, .out_sop_o, .out_eop_o, .out_bytes_o, .out_action_o, .out_meta_o, .out_drops_o,
    .pkt_start_o(pkt_start), .pkt_done_o(t_done), .res_action_o(t_action), .res_fault_o(t_fault), .res_r0_o(res_r0),
    .res_cycles_o(t_cycles), .res_redir_valid_o(t_rvalid), .res_redir_kind_o(t_rkind), .res_redir_port_o(t_rport),
    .res_redir_size_o(t_rsize),
    .prk_valid_o(prk_valid), .prk_len_o(prk_len), .prk_fmt_o(prk_fmt), .prk_args_o(prk_args),
    .evw_en_o(evw_en), .evw_idx_o(evw_idx), .evw_data_o(evw_data), .evp_valid_o(evp_valid), .evp_drop_o(evp_drop),
    .evp_kind_o(evp_kind), .evp_map_o(evp_map), .evp_cpu_o(evp_cpu), .evp_size_o(evp_size),
    .evp_ctxlen_o(evp_ctxlen),
    .trc_valid_o(trc_valid), .trc_pc_o(trc_pc), .trc_wr_en_o(trc_wr_en), .trc_wr_idx_o(trc_wr_idx),
    .trc_wr_val_o(trc_wr_val), .trc_st_en_o(trc_st_en), .trc_st_addr_o(trc_st_addr), .trc_st_size_o(trc_st_size),
    .trc_st_data_o(trc_st_data), .trc_call_o(trc_call), .trc_ret_o(trc_ret), .trc_call_lane_o(trc_call_lane),
    .trc_cost_o(trc_cost), .trc_next_o(trc_next), .trc_exit_o(trc_exit), .trc_fault_o(trc_fault),
    .xm_req_valid_o(xm_valid), .xm_req_ready_i(1'b1), .xm_req_we_o(xm_we), .xm_req_addr_o(xm_addr),
    .xm_req_len_o(xm_len), .xm_req_wdata_o(xm_wdata), .xm_req_be_o(xm_be), .xm_resp_valid_i(xm_rvalid_q),
    .xm_resp_data_i(128'd0),
    .xh_req_valid_o(xh_valid), .xh_req_we_o(xh_we), .xh_req_addr_o(xh_addr), .xh_req_len_o(xh_len),
    .xh_req_wdata_o(xh_wdata), .xh_req_be_o(xh_be), .xh_resp_valid_i(xh_rvalid_q),
    .xh_resp_data_i({3*8*`SEPH_MAP_WINDOW_BYTES{1'b0}})
  );

  // no off-chip memory controller is in the board's design yet (docs/maps.md "Memory tiers"): the board tools
  // refuse a layout with an off-chip map, and the port answers a read (only a forged pointer makes one) with zeros
  // in the next cycle, so that the core never waits forever; writes are dropped
  /* verilator lint_off UNUSEDSIGNAL */
  wire                 xm_valid, xm_we;
  wire [31:0]          xm_addr;
  wire [1:0]           xm_len;
  wire [127:0]         xm_wdata;
  wire [15:0]          xm_be;
  // (the same for the map unit's port: the host's map table holds no off-chip map, so only a forged entry reads)
  wire                 xh_valid, xh_we;
  wire [31:0]          xh_addr;
  wire [1:0]           xh_len;
  wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] xh_wdata;
  wire [`SEPH_MAP_WINDOW_BYTES-1:0]   xh_be;
  /* verilator lint_on UNUSEDSIGNAL */
  reg                  xm_rvalid_q, xh_rvalid_q;
  always @(posedge clk_i or negedge rst_ni)
    if (!rst_ni) begin
      xm_rvalid_q <= 1'b0; xh_rvalid_q <= 1'b0;
    end else begin
      xm_rvalid_q <= xm_valid && !xm_we; xh_rvalid_q <= xh_valid && !xh_we;
    end
endmodule
`default_nettype wire
