// sephirot_board: the board top: AXI-Lite registers, NPORTS input ports arbitrated per packet, the Sephirot top.
`default_nettype none
`include "sephirot_params.vh"

// Input port k carries ingress_ifindex k + 1. The arbiter is round robin between whole packets (a packet's frames
// are never interleaved with another port's). While the host holds the input (CTRL bit 0), no new packet starts;
// STATUS.held reads 1 once no packet is in the core, so a program swap happens between two packets.
module sephirot_board #(
  parameter integer NPORTS    = 1,
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
  // per-packet result
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
  wire                prk_valid;
  wire [7:0]          prk_len;
  wire [8*`SEPH_PRINTK_FMT_MAX-1:0] prk_fmt;
  wire [191:0]        prk_args;
  wire                ev_pop, ev_rd;
  wire [31:0]         ev_count, ev_dropped, ev_rdata;
  wire [9:0]          ev_word;
  wire                evw_en, evp_valid, evp_drop, evp_kind;
  wire [8:0]          evw_idx;
  wire [63:0]         evw_data;
  wire [7:0]          evp_map;
  wire [31:0]         evp_cpu;
  wire [15:0]         evp_size, evp_ctxlen;
  reg  [31:0]         pkt_num_q;   // packets the core started since reset (the record's packet number)
  reg  [15:0]         inflight_q;
  reg                 locked_q;
  reg  [PW-1:0]       sel_q, rr_q;
  wire                held = hold && !locked_q && inflight_q == 16'd0;

  sephirot_axil #(.LANES(LANES), .AW(AW), .LW(LW)) u_axil (
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

  // trace_printk records of the packet in the core (pkt_num_q - 1: the count includes it)
  sephirot_tracefifo u_tracefifo (
    .clk_i, .rst_ni, .push_i(prk_valid), .push_len_i(prk_len), .push_pkt_i(pkt_num_q - 32'd1), .push_fmt_i(prk_fmt),
    .push_args_i(prk_args), .pop_i(trc_pop), .clr_i(cnt_clr), .count_o(trc_count), .dropped_o(trc_dropped),
    .head_o(trc_head)
  );

  // the records of perf_event_output and the ring buffer helpers, of the packet in the core
  sephirot_eventring u_eventring (
    .clk_i, .rst_ni, .wr_i(evw_en), .wr_idx_i(evw_idx), .wr_data_i(evw_data),
    .push_i(evp_valid), .push_drop_i(evp_drop), .push_kind_i(evp_kind), .push_map_i(evp_map), .push_cpu_i(evp_cpu),
    .push_size_i(evp_size), .push_ctxlen_i(evp_ctxlen), .push_pkt_i(pkt_num_q - 32'd1),
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

  wire pkt_start;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      locked_q <= 1'b0; sel_q <= {PW{1'b0}}; rr_q <= {PW{1'b0}}; inflight_q <= 16'd0; pkt_num_q <= 32'd0;
    end else begin
      if (pkt_start) pkt_num_q <= pkt_num_q + 32'd1;
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
  wire                 trc_valid, trc_call, trc_exit;
  wire [AW-1:0]        trc_pc;
  wire [LANES-1:0]     trc_wr_en, trc_st_en;
  wire [4*LANES-1:0]   trc_wr_idx, trc_st_size;
  wire [64*LANES-1:0]  trc_wr_val, trc_st_data;
  wire [32*LANES-1:0]  trc_st_addr;
  wire [63:0]          trc_ret, res_r0;
  wire [1:0]           trc_call_lane;
  wire [31:0]          trc_cost, trc_next;
  wire [2:0]           trc_fault;
  /* verilator lint_on UNUSEDSIGNAL */

  sephirot_top #(.LANES(LANES), .AW(AW), .MAP_BYTES(MAP_BYTES), .LW(LW)) u_top (
    .clk_i, .rst_ni,
    .imem_we_i(imem_we), .imem_waddr_i(imem_waddr), .imem_wdata_i(imem_wdata), .imem_rows_i(imem_rows),
    .map_we_i(map_we), .map_line_i(map_line), .map_wdata_i(map_wdata), .map_rdata_o(map_rdata), .map_wready_o(map_wready),
    .mcfg_we_i(mcfg_we), .mcfg_idx_i(mcfg_idx), .mcfg_wdata_i(mcfg_wdata),
    .raw_i(1'b0),
    .in_valid_i(c_valid), .in_ready_o(c_ready), .in_data_i(in_data_i[256*cur +: 256]), .in_sop_i(c_sop),
    .in_eop_i(c_eop), .in_len_i(in_len_i[16*cur +: 16]), .in_ifindex_i({{(32-PW){1'b0}}, cur} + 32'd1),
    .in_rxq_i(32'd0),
    .out_valid_o, .out_data_o, .out_sop_o, .out_eop_o, .out_bytes_o, .out_action_o, .out_meta_o,
    .pkt_start_o(pkt_start), .pkt_done_o, .res_action_o, .res_fault_o, .res_r0_o(res_r0), .res_cycles_o,
    .res_redir_valid_o, .res_redir_kind_o, .res_redir_port_o, .res_redir_size_o(res_redir_size),
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
