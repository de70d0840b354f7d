// sephirot_events: the helper unit's event calls (perf_event_output, ringbuf_output/reserve/submit/discard).
`default_nettype none
`include "sephirot_params.vh"

// As hxdp/models/eventring.py (docs/helpers.md): the checks of a call are decided in its first cycle from its
// arguments, the map's configuration entry and the packet's own state (records sent, each ring's producer
// position, both cleared when a packet starts); a refused call ends after one cycle. A record's bytes are read 8
// a cycle through the helper unit's memory read port and leave on evw_* as 64-bit words (the program's bytes from
// word 0, a perf record's packet bytes from the next whole word); the record itself leaves on evp_* in the cycle
// the call ends. ringbuf_reserve writes the record's 8-byte header (length | busy, map id) into the ring's region
// of map memory; submit and discard read it back in their first cycle and write it in their last.
module sephirot_events (
  input  wire            clk_i,
  input  wire            rst_ni,
  input  wire            pkt_start_i,
  input  wire [2:0]      core_i,          // this core's number: BPF_F_CURRENT_CPU's perf slot
  input  wire            req_i,
  input  wire [31:0]     id_i,
  input  wire [64*5-1:0] args_i,          // r1..r5
  input  wire            busy_i,          // the call is past its first cycle
  input  wire            finish_i,        // it ends this cycle
  input  wire            bad_i,           // a read of the call faulted: no record, no header write
  input  wire [31:0]     pkt_data_i,      // ctx->data, ctx->data_end of the packet in the core
  input  wire [31:0]     pkt_end_i,
  output wire            sel_o,           // id_i is an event helper
  // reads through the helper unit's memory port: left bytes from base + off, size of them this cycle
  output wire            rd_en_o,
  output wire [31:0]     rd_base_o,
  output wire [31:0]     rd_off_o,
  output wire [31:0]     rd_left_o,
  output wire [31:0]     rd_tag_o,        // the tag of the pointer read (sephirot_mapguard)
  input  wire [3:0]      rd_size_i,
  input  wire [63:0]     rd_data_i,
  // the map configuration entry of map mid_o
  output wire [31:0]     mid_o,
  input  wire [255:0]    mcfg_i,
  input  wire [31:0]     mcount_i,
  // a record header written into map memory (one window write, the call's last cycle)
  output wire            mww_en_o,
  output wire [31:0]     mww_off_o,
  output wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] mww_data_o,
  output wire [`SEPH_MAP_WINDOW_BYTES-1:0]   mww_mask_o,
  // the call's outcome
  output wire            fault_o,         // faults at once: not a map handle, not the map kind of the call
  output wire            ufault_o,        // submit/discard of a pointer that is not a reserved record
  output wire [32:0]     lat_o,
  output wire [63:0]     ret_o,
  // the record: its words as they are read, then the record when the call ends
  output wire            evw_en_o,
  output wire [8:0]      evw_idx_o,
  output wire [63:0]     evw_data_o,
  output wire            evp_valid_o,
  output wire            evp_drop_o,      // a submitted record past the packet's EVENT_PACKET_MAX: counted, dropped
  output wire            evp_kind_o,      // 0 perf, 1 ringbuf
  output wire [7:0]      evp_map_o,
  output wire [31:0]     evp_cpu_o,
  output wire [15:0]     evp_size_o,      // all sample bytes (perf: the program's and the packet's)
  output wire [15:0]     evp_ctxlen_o     // perf: the packet's bytes
);
  localparam [31:0] H_PERF = `SEPH_HELPER_PERF_EVENT_OUTPUT;
  localparam [31:0] H_OUT = `SEPH_HELPER_RINGBUF_OUTPUT;
  localparam [31:0] H_RESV = `SEPH_HELPER_RINGBUF_RESERVE;
  localparam [31:0] H_SUBMIT = `SEPH_HELPER_RINGBUF_SUBMIT;
  localparam [31:0] H_DISCARD = `SEPH_HELPER_RINGBUF_DISCARD;
  localparam [31:0] HBASE = `SEPH_MAP_HANDLE_BASE;
  localparam [31:0] MBASE = `SEPH_MAP_BASE;
  localparam [31:0] DMAX = `SEPH_EVENT_DATA_MAX;
  localparam [4:0]  PMAX = `SEPH_EVENT_PACKET_MAX;
  localparam integer NM = `SEPH_MAPS_MAX;
  localparam integer TS = `SEPH_MAP_TAG_START_BITS;
  localparam integer TL = `SEPH_MAP_TAG_LEN_BITS;
  localparam integer TR = `SEPH_MAP_TAG_RDONLY_BIT;
  localparam [63:0] EINVAL = 64'd22, EFAULT = 64'd14, E2BIG = 64'd7, ENOSPC = 64'd28, EAGAIN = 64'd11;

  wire [63:0] r1 = args_i[63:0];
  wire [63:0] r2 = args_i[127:64];
  wire [63:0] r3 = args_i[191:128];
  wire [63:0] r4 = args_i[255:192];
  wire [63:0] r5 = args_i[319:256];
  wire is_perf = id_i == H_PERF;
  wire is_out = id_i == H_OUT;
  wire is_resv = id_i == H_RESV;
  wire is_sub = id_i == H_SUBMIT;
  wire is_dis = id_i == H_DISCARD;
  wire is_com = is_sub || is_dis;
  assign sel_o = is_perf || is_out || is_resv || is_com;

  // the packet's state: records sent, each ring's producer position
  reg  [4:0]  sent_q;
  reg  [23:0] pos_q [0:NM-1];   // (rings are at most the 1 MiB map memory)
  wire        full = sent_q >= PMAX;

  // the map: a handle (perf: r2, ringbuf output/reserve: r1), or a reserved record's header (submit/discard)
  reg  [63:0] hdr_q;                         // the header submit/discard read in their first cycle
  wire [31:0] hdr_len = {2'b00, hdr_q[29:0]};
  wire [31:0] hdr_mid = hdr_q[63:32];
  wire [63:0] handle = is_perf ? r2 : r1;
  assign mid_o = is_com ? hdr_mid : handle[31:0] - HBASE;
  wire        entry_ok = mid_o < mcount_i && mcfg_i[15:8] != 8'd0;
  wire [7:0]  m_type = mcfg_i[7:0];
  wire [31:0] m_max = mcfg_i[79:48];
  wire [31:0] m_off = mcfg_i[111:80];
  wire        handle_ok = handle[63:32] == 32'd0 && handle[31:0] >= HBASE && entry_ok;
  wire        want_perf = m_type == `SEPH_MAP_TYPE_PERF_EVENT_ARRAY;
  wire        want_ring = m_type == `SEPH_MAP_TYPE_RINGBUF;
  assign fault_o = req_i && ((is_perf && !(handle_ok && want_perf)) || ((is_out || is_resv) && !(handle_ok && want_ring)));
  wire [$clog2(NM)-1:0] mi = mid_o[$clog2(NM)-1:0];
  wire [23:0] pos = pos_q[mi];

  // perf_event_output(ctx, map, flags, data, size)
  wire [31:0] p_size = r5[31:0];
  wire [31:0] p_ctx = {12'd0, r3[51:32]};
  wire [31:0] p_idx = (r3[31:0] == 32'hFFFFFFFF) ? {29'd0, core_i} : r3[31:0];
  wire [32:0] p_total = {1'b0, p_size} + {1'b0, p_ctx};
  wire        p_inval = r3[63:52] != 12'd0;
  wire        p_fault = p_ctx > pkt_end_i - pkt_data_i;
  wire        p_big = p_idx >= m_max || p_total > {1'b0, DMAX};
  wire        p_ok = !p_inval && !p_fault && !p_big && !full;
  wire [63:0] p_ret = p_inval ? -EINVAL : p_fault ? -EFAULT : p_big ? -E2BIG : full ? -ENOSPC : 64'd0;
  // ringbuf_output(map, data, size, flags) and ringbuf_reserve(map, size, flags): a record of len ring bytes
  wire [63:0] r_size = is_out ? r3 : r2;
  wire        r_fits = r_size <= {32'd0, DMAX};
  wire [15:0] r_len = (r_size[15:0] + 16'd15) & ~16'd7;      // header and record rounded up to 8
  wire        r_room = r_fits && {8'd0, pos} + {16'd0, r_len} <= m_max - 32'd1;
  wire        o_inval = r4[63:2] != 62'd0;
  wire        o_ok = !o_inval && !full && r_room;
  wire        v_ok = r3 == 64'd0 && r_room;
  // a map-value pointer's tag (execution contract section 4, params.map_tag) of bytes bytes at map offset off,
  // writable: a reserved record's (its size rounded up to 8), or a header word's
  /* verilator lint_off UNUSEDSIGNAL */    // (offsets within the map memory, lengths within a tag's)
  function automatic [31:0] tag_of(input [31:0] off, input [15:0] bytes);
    reg [15:0] words;
    begin
      words = (bytes + 16'd7) >> 3;
      tag_of = {{(32-TR){1'b0}}, words[TL-1:0], off[3 +: TS]};
    end
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */
  wire [31:0] v_off = m_off + {8'd0, pos} + 32'd8;
  // submit/discard(data, flags): the header 8 bytes in front of the record
  wire [31:0] c_hdr = r1[31:0] - 32'd8;
  wire [31:0] c_off = c_hdr - MBASE;
  wire [32:0] c_end = {1'b0, c_off} + {17'd0, (hdr_len[15:0] + 16'd15) & ~16'd7};
  wire        c_map = c_hdr[31:28] == MBASE[31:28];
  // (the pointer is the one reserve returned: the record's tag; the header read is the unit's own, tagged by its word)
  wire        c_ok = r1[63:32] == tag_of(c_off + 32'd8, hdr_len[15:0]) && c_map && hdr_q[31] && hdr_len <= DMAX &&
                     entry_ok && want_ring && c_off >= m_off && c_end <= {1'b0, m_off} + {1'b0, m_max};
  assign ufault_o = req_i && is_com && busy_i && !c_ok && !bad_i;   // (a faulting header read: access fault)
  wire        c_send = is_sub && c_ok && !full;

  // reads: the call's bytes (perf: the program's, then the packet's), 8 a cycle
  reg  [15:0] d_off_q, q_off_q;
  wire [31:0] d_size = is_perf ? p_size : is_out ? r3[31:0] : hdr_len;
  wire [31:0] d_base = is_perf ? r4[31:0] : is_out ? r2[31:0] : r1[31:0];
  wire        copy = req_i && ((is_perf && p_ok) || (is_out && o_ok) || (is_sub && busy_i && c_send));
  wire        hdr_go = req_i && is_com && !busy_i;
  wire        d_go = copy && {16'd0, d_off_q} < d_size;
  wire        q_go = copy && is_perf && {16'd0, d_off_q} >= d_size && {16'd0, q_off_q} < p_ctx;
  wire [8:0]  d_words = d_size[11:3] + {8'd0, d_size[2:0] != 3'd0};
  wire [8:0]  q_words = p_ctx[11:3] + {8'd0, p_ctx[2:0] != 3'd0};
  assign rd_en_o = hdr_go || d_go || q_go;
  assign rd_base_o = hdr_go ? c_hdr : d_go ? d_base : pkt_data_i;
  assign rd_off_o = {16'd0, hdr_go ? 16'd0 : d_go ? d_off_q : q_off_q};
  assign rd_tag_o = hdr_go ? (c_map ? tag_of(c_off, 16'd8) : 32'd0) :
                    d_go ? (is_perf ? r4[63:32] : is_out ? r2[63:32] : r1[63:32]) : 32'd0;
  assign rd_left_o = hdr_go ? 32'd8 : d_go ? d_size - {16'd0, d_off_q} : p_ctx - {16'd0, q_off_q};
  reg  [63:0] rd_mask;
  integer bi;
  always @(*) for (bi = 0; bi < 8; bi = bi + 1) rd_mask[8*bi +: 8] = {8{bi[3:0] < rd_size_i}};
  assign evw_en_o = d_go || q_go;
  assign evw_idx_o = d_go ? d_off_q[11:3] : d_words + q_off_q[11:3];
  assign evw_data_o = rd_data_i & rd_mask;

  // latency and result
  reg [32:0] lat;
  reg [63:0] ret;
  always @(*) begin
    lat = 33'd1;
    ret = 64'd0;
    if (is_perf) begin
      ret = p_ret;
      if (p_ok) lat = 33'd1 + {24'd0, d_words} + {24'd0, q_words};
    end else if (is_out) begin
      ret = o_inval ? -EINVAL : o_ok ? 64'd0 : -EAGAIN;
      if (o_ok) lat = 33'd1 + {24'd0, d_words};
    end else if (is_resv) begin
      ret = v_ok ? {tag_of(v_off, r_size[15:0]), MBASE + v_off} : 64'd0;
    end else if (is_com) begin
      lat = (busy_i && c_send) ? 33'd2 + {24'd0, d_words} : 33'd2;
    end
  end
  assign lat_o = lat;
  assign ret_o = ret;

  // the header writes: reserve's (length | busy, map id), submit's and discard's (busy cleared, discard bit)
  wire        w_resv = is_resv && v_ok;
  wire        w_com = is_com && busy_i && c_ok;
  wire [63:0] hdr_w = w_resv ? {mid_o, 1'b1, 1'b0, 14'd0, r_size[15:0]} :
                      {hdr_mid, 1'b0, is_dis, hdr_q[29:0]};
  assign mww_en_o = finish_i && !bad_i && (w_resv || w_com);
  assign mww_off_o = w_resv ? m_off + {8'd0, pos} : c_off;
  assign mww_data_o = {{(8*`SEPH_MAP_WINDOW_BYTES-64){1'b0}}, hdr_w};
  assign mww_mask_o = {{(`SEPH_MAP_WINDOW_BYTES-8){1'b0}}, 8'hFF};

  // the record
  assign evp_valid_o = finish_i && !bad_i && ((is_perf && p_ok) || (is_out && o_ok) || (is_sub && busy_i && c_ok));
  assign evp_drop_o = is_sub && full;
  assign evp_kind_o = !is_perf;
  assign evp_map_o = mid_o[7:0];
  assign evp_cpu_o = is_perf ? p_idx : 32'd0;
  assign evp_size_o = is_perf ? p_total[15:0] : d_size[15:0];
  assign evp_ctxlen_o = is_perf ? p_ctx[15:0] : 16'd0;

  integer pi;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      sent_q <= 5'd0; hdr_q <= 64'd0; d_off_q <= 16'd0; q_off_q <= 16'd0;
      for (pi = 0; pi < NM; pi = pi + 1) pos_q[pi] <= 24'd0;
    end else begin
      if (hdr_go) hdr_q <= rd_data_i;
      if (d_go) d_off_q <= d_off_q + {12'd0, rd_size_i};
      if (q_go) q_off_q <= q_off_q + {12'd0, rd_size_i};
      if (finish_i) begin
        d_off_q <= 16'd0; q_off_q <= 16'd0;
      end
      if (pkt_start_i) begin
        sent_q <= 5'd0;
        for (pi = 0; pi < NM; pi = pi + 1) pos_q[pi] <= 24'd0;
      end else if (finish_i && !bad_i) begin
        if (evp_valid_o && !evp_drop_o) sent_q <= sent_q + 5'd1;
        if ((is_out && o_ok) || w_resv) pos_q[mi] <= pos + {8'd0, r_len};
      end
    end
  end
endmodule
`default_nettype wire
