// sephirot_helpers: the helper-function unit (one call per row; the core stalls until done).
`default_nettype none
`include "sephirot_params.vh"

// Latencies (extra cycles beyond the row's own cycle) follow hxdp/models/helpers.py helper_latency:
// ktime_get_ns, get_prandom_u32, get_smp_processor_id (the core's number) 0; redirect, xdp_adjust_tail,
// xdp_adjust_meta 1;
// tail_call 1 (the PROG_ARRAY entry read in its second cycle; the core then jumps: sephirot_core.v);
// trace_printk 1 + ceil(min(size, PRINTK_FMT_MAX) / 8) (the format is read 8 bytes per cycle, then the record
// (format up to its first NUL, r3..r5) leaves on pk_*_o for the trace FIFO); xdp_adjust_head
// 1 + ceil(metadata bytes moved / 16) (the contract's latency: sephirot_pktbuf copies the metadata after the row,
// while the next row waits; 1 on -EINVAL); csum_diff 1 + ceil((from_size + to_size) / 8), reading 8 bytes per
// cycle through the helper memory port; the map helpers as docs/helpers.md, their map memory writes one 32-byte
// window a cycle in their last cycles; the event calls (perf_event_output, ringbuf_*) as docs/helpers.md, in
// sephirot_events; fib_lookup as sephirot_fib.v (u_fib) walks the FIB (docs/helpers.md). Helpers not implemented
// here end the packet with a helper fault.
module sephirot_helpers (
  input  wire            clk_i,
  input  wire            rst_ni,
  input  wire            pkt_start_i,     // a new packet starts: forget the redirect target
  input  wire [2:0]      core_i,          // this core's number (get_smp_processor_id; sephirot_top's gen_core)
  input  wire            req_i,
  input  wire [31:0]     id_i,
  input  wire [64*5-1:0] args_i,          // r1..r5
  input  wire [63:0]     cycles_i,        // packet cycles so far (ktime_get_ns)
  input  wire [31:0]     pkt_data_i,      // ctx->data and ctx->data_end of the packet in the core (events)
  input  wire [31:0]     pkt_end_i,
  output reg             done_o,
  output reg  [63:0]     ret_o,
  output reg             illegal_o,
  output reg             fault_o,
  output reg             access_o,        // a memory read of the helper faulted
  // memory read port (any region)
  output reg             hm_en_o,
  output reg  [31:0]     hm_addr_o,
  output reg  [31:0]     hm_tag_o,          // bits 63:32 of the pointer read (a map-value tag, sephirot_mapguard)
  output reg  [3:0]      hm_size_o,
  input  wire [63:0]     hm_rdata_i,
  input  wire            hm_fault_i,
  // map configuration entry of map `mid_o` and the map memory's window read port (map FSM)
  output wire [31:0]     mid_o,
  input  wire [255:0]    mcfg_i,
  input  wire [31:0]     mcount_i,
  // map memory writes, one window (MAP_WINDOW_BYTES at an 8-byte aligned offset, byte mask) a cycle, in the
  // last cycles of the call
  output wire            mww_en_o,
  output wire [31:0]     mww_off_o,
  output wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] mww_data_o,
  output wire [`SEPH_MAP_WINDOW_BYTES-1:0]   mww_mask_o,
  output wire            mw_en_o,
  output wire [31:0]     mw_off_o,
  input  wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] mw_rdata_i,   // MAP_WINDOW_BYTES from mw_off_o
  // the map FSM's off-chip port (sephirot_mapfsm): its reads, and whether the write above is to an off-chip map
  output wire            mww_x_o,
  output wire            xr_valid_o,
  output wire [31:0]     xr_addr_o,
  output wire [1:0]      xr_len_o,
  input  wire            xr_rvalid_i,
  input  wire [3*8*`SEPH_MAP_WINDOW_BYTES-1:0] xr_rdata_i,
  // stack writes of fib_lookup (its results into the struct), one of up to 8 bytes a cycle in its stall cycles
  output wire            sw_en_o,
  output wire [8:0]      sw_off_o,
  output wire [3:0]      sw_size_o,
  output wire [63:0]     sw_data_o,
  // packet adjustment (sephirot_pktbuf)
  output reg  [1:0]      adj_kind_o,
  output wire [31:0]     adj_delta_o,
  output wire            adj_commit_o,
  output wire            adj_step_o,      // an adjust_head stalls: the packet buffer stages a metadata chunk
  input  wire [7:0]      adj_err_i,
  input  wire [8:0]      adj_metalen_i,
  input  wire            adj_busy_i,      // adjust_head with metadata: its stall cycles (1 per 16 bytes) are not over
  // tail_call: the call that ends this cycle jumps to the entry row tc_row_o (its PROG_ARRAY entry - 1)
  output wire            tc_jump_o,
  output wire [31:0]     tc_row_o,
  // redirect target of the current packet, as it is after this cycle
  output wire            redir_valid_o,
  output wire [1:0]      redir_kind_o,    // REDIRECT_PORT (port = ifindex), _CPU or _XSK (port = host queue)
  output wire [31:0]     redir_port_o,
  output wire [15:0]     redir_size_o,    // a host queue's size (sephirot_hostq)
  // trace_printk record, valid for one cycle when its row commits
  output wire            pk_valid_o,
  output reg  [7:0]      pk_len_o,        // format bytes before the first NUL (or all bytes read)
  output reg  [8*`SEPH_PRINTK_FMT_MAX-1:0] pk_fmt_o,   // those bytes, byte 0 in bits 7:0, the rest zero
  output wire [64*3-1:0] pk_args_o,       // r3, r4, r5 (r3 in the low bits)
  // event records (sephirot_events): the words of a record as they are read, then the record
  output wire            evw_en_o,
  output wire [8:0]      evw_idx_o,
  output wire [63:0]     evw_data_o,
  output wire            evp_valid_o,
  output wire            evp_drop_o,
  output wire            evp_kind_o,
  output wire [7:0]      evp_map_o,
  output wire [31:0]     evp_cpu_o,
  output wire [15:0]     evp_size_o,
  output wire [15:0]     evp_ctxlen_o
);
  localparam [31:0] H_KTIME = `SEPH_HELPER_KTIME_GET_NS;
  localparam [31:0] H_KCOARSE = `SEPH_HELPER_KTIME_GET_COARSE_NS;
  localparam [31:0] H_LOCK = `SEPH_HELPER_SPIN_LOCK;
  localparam [31:0] H_UNLOCK = `SEPH_HELPER_SPIN_UNLOCK;
  localparam [31:0] H_PRINTK = `SEPH_HELPER_TRACE_PRINTK;
  localparam [31:0] H_PRANDOM = `SEPH_HELPER_GET_PRANDOM_U32;
  localparam [31:0] H_SMP = `SEPH_HELPER_GET_SMP_PROCESSOR_ID;
  localparam [31:0] H_REDIRECT = `SEPH_HELPER_REDIRECT;
  localparam [31:0] H_HEAD = `SEPH_HELPER_XDP_ADJUST_HEAD;
  localparam [31:0] H_META = `SEPH_HELPER_XDP_ADJUST_META;
  localparam [31:0] H_TAIL = `SEPH_HELPER_XDP_ADJUST_TAIL;
  localparam [31:0] H_CSUM = `SEPH_HELPER_CSUM_DIFF;
  localparam [31:0] H_LOOKUP = `SEPH_HELPER_MAP_LOOKUP_ELEM;
  localparam [31:0] H_REDIRMAP = `SEPH_HELPER_REDIRECT_MAP;
  localparam [31:0] H_UPDATE = `SEPH_HELPER_MAP_UPDATE_ELEM;
  localparam [31:0] H_DELETE = `SEPH_HELPER_MAP_DELETE_ELEM;
  localparam [31:0] H_PERF = `SEPH_HELPER_PERF_EVENT_OUTPUT;
  localparam [31:0] H_RBOUT = `SEPH_HELPER_RINGBUF_OUTPUT;
  localparam [31:0] H_RESV = `SEPH_HELPER_RINGBUF_RESERVE;
  localparam [31:0] H_SUBMIT = `SEPH_HELPER_RINGBUF_SUBMIT;
  localparam [31:0] H_DISCARD = `SEPH_HELPER_RINGBUF_DISCARD;
  localparam [31:0] H_TAILCALL = `SEPH_HELPER_TAIL_CALL;
  localparam [31:0] H_FIB = `SEPH_HELPER_FIB_LOOKUP;

  wire [63:0] r1 = args_i[63:0];
  wire [63:0] r2 = args_i[127:64];
  wire [63:0] r3 = args_i[191:128];
  wire [63:0] r4 = args_i[255:192];
  wire [63:0] r5 = args_i[319:256];

  // csum_diff: sums of the 32-bit words of `from` and `to`, 8 bytes per cycle
  wire [31:0] fsz = r2[31:0];
  wire [31:0] tsz = r4[31:0];
  wire [32:0] csz = {1'b0, fsz} + {1'b0, tsz};
  reg  [32:0] cs_off_q;
  reg  [63:0] sum_f_q, sum_t_q;
  reg         cs_bad_q;
  wire        cs_go = req_i && id_i == H_CSUM && cs_off_q < csz;
  wire [32:0] cs_left = cs_off_q < {1'b0, fsz} ? {1'b0, fsz} - cs_off_q : csz - cs_off_q;
  // trace_printk: min(size, FMTMAX) format bytes, 8 per cycle
  localparam integer FMTMAX = `SEPH_PRINTK_FMT_MAX;
  wire [31:0] pk_n    = (r2[31:0] > FMTMAX) ? FMTMAX : r2[31:0];
  reg  [31:0] pk_off_q;
  reg  [8*FMTMAX-1:0] fmt_q;
  wire        pk_go   = req_i && id_i == H_PRINTK && pk_off_q < pk_n;
  wire [31:0] pk_left = pk_n - pk_off_q;
  wire [32:0] pk_lat  = 33'd1 + {4'd0, pk_n[31:3]} + {32'd0, pk_n[2:0] != 3'd0};
  // the map FSM (u_mapfsm, below): its key and value reads, its outcome
  wire        mf_rd_en, mf_rd_val, m_fault, mf_ufault, mf_done, mf_redir, mf_redir_valid;
  wire [31:0] mf_rd_base, mf_rd_off, mf_rd_left, mf_redir_port;
  wire [1:0]  mf_redir_kind;
  wire [15:0] mf_redir_size;
  wire [32:0] mf_lat;
  wire [63:0] mf_ret;
  // tail_call(ctx, r2 = prog_array, r3 = index): the map FSM's configuration read names r2's map (mid_o); a bad
  // handle or a map of another kind faults at once. An index below max_entries with fewer than MAX_TAIL_CALL_CNT
  // calls so far counts a call and reads the entry (u32 at offset + 8 index: a prog_array slot is 8 bytes) through
  // the read port in the call's second cycle; a non-zero entry is the target's row + 1
  reg         busy_q;           // a call is past its first cycle
  reg [32:0]  cnt_q;            // its cycles so far
  localparam integer MA = $clog2(`SEPH_MAP_MEM_BYTES);
  localparam [31:0] HBASE = `SEPH_MAP_HANDLE_BASE;
  wire        is_tc    = id_i == H_TAILCALL;
  wire        tc_fault = req_i && is_tc && !(r2[63:32] == 32'd0 && r2[31:0] >= HBASE && mid_o < mcount_i &&
                         mcfg_i[15:8] != 8'd0 && mcfg_i[7:0] == `SEPH_MAP_TYPE_PROG_ARRAY);
  reg  [5:0]  tc_cnt_q;         // tail calls of the packet so far
  // the index is the helper's u32 argument: r3's upper half is ignored, as the kernel's JIT compares w3
  wire        tc_go    = req_i && is_tc && !tc_fault && busy_q &&
                         r3[31:0] < {{(32-MA){1'b0}}, mcfg_i[48 +: MA]} && tc_cnt_q < `SEPH_MAX_TAIL_CALL_CNT;
  wire [31:0] tc_off   = {{(32-MA){1'b0}}, mcfg_i[80 +: MA]} + {r3[28:0], 3'd0};
  wire [31:0] tc_addr  = `SEPH_MAP_BASE + tc_off;
  // the entry read is the helper unit's own: its tag (sephirot_mapguard) names that one writable 8-byte slot
  localparam integer TS = `SEPH_MAP_TAG_START_BITS;
  localparam integer TL = `SEPH_MAP_TAG_LEN_BITS;
  localparam integer TR = `SEPH_MAP_TAG_RDONLY_BIT;
  wire [31:0] tc_tag   = {{(32-TR){1'b0}}, {{(TL-1){1'b0}}, 1'b1}, tc_off[3 +: TS]};
  // fib_lookup (u_fib, below): its struct reads, its outcome
  wire        fb_go = req_i && id_i == H_FIB;
  wire        fb_rd_en, fb_fault, fb_done;
  wire [31:0] fb_rd_off;
  wire [32:0] fb_lat;
  wire [63:0] fb_ret;
  // the read port's address is a base argument plus the bytes read so far: one adder for the four readers
  reg  [31:0] hm_base, hm_off;
  reg  [31:0] hm_left;
  // the event calls (u_events, below): their reads, map id, header writes and outcome
  wire        ev_sel, ev_rd_en, ev_fault, ev_ufault, ev_mww_en;
  wire [31:0] ev_rd_base, ev_rd_off, ev_rd_left, ev_rd_tag, ev_mid, mf_mid, ev_mww_off, mf_mww_off;
  wire [32:0] ev_lat;
  wire [63:0] ev_ret;
  wire        mf_mww_en;
  wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] ev_mww_data, mf_mww_data;
  wire [`SEPH_MAP_WINDOW_BYTES-1:0]   ev_mww_mask, mf_mww_mask;
  wire        ufault = mf_ufault || ev_ufault;
  always @(*) begin
    hm_en_o = cs_go || mf_rd_en || pk_go || ev_rd_en || tc_go || fb_rd_en;
    hm_base = (cs_off_q < {1'b0, fsz}) ? r1[31:0] : r3[31:0];
    hm_tag_o = (cs_off_q < {1'b0, fsz}) ? r1[63:32] : r3[63:32];
    hm_off = (cs_off_q < {1'b0, fsz}) ? cs_off_q[31:0] : cs_off_q[31:0] - fsz;
    hm_left = (cs_left >= 33'd8) ? 32'd8 : cs_left[31:0];
    if (mf_rd_en) begin
      hm_base = mf_rd_base; hm_off = mf_rd_off; hm_left = mf_rd_left; hm_tag_o = mf_rd_val ? r3[63:32] : r2[63:32];
    end else if (ev_rd_en) begin
      hm_base = ev_rd_base; hm_off = ev_rd_off; hm_left = ev_rd_left; hm_tag_o = ev_rd_tag;
    end else if (pk_go) begin
      hm_base = r1[31:0]; hm_off = pk_off_q; hm_left = pk_left; hm_tag_o = r1[63:32];
    end else if (tc_go) begin
      hm_base = tc_addr; hm_off = 32'd0; hm_left = 32'd4; hm_tag_o = tc_tag;
    end else if (fb_rd_en) begin
      hm_base = r2[31:0]; hm_off = fb_rd_off; hm_left = 32'd8; hm_tag_o = r2[63:32];
    end
    hm_size_o = (hm_left >= 32'd8) ? 4'd8 : hm_left[3:0];
    hm_addr_o = hm_base + hm_off;
  end
  // trace_printk's record: the format up to its first NUL. The NUL is looked for in each word as it is read (8
  // byte tests a cycle, not a 64-byte scan at the end), and the bytes from it on are stored as zeros; fmt_q is
  // cleared when any call ends (a synchronous clear, free on the flip-flops' reset pins), so the words a call does
  // not read are zero too and the record is fmt_q itself
  reg         pk_nul_q;             // the format read so far has a NUL, at byte pk_len_q
  reg  [7:0]  pk_len_q;
  reg  [63:0] pk_word;              // the word read this cycle, zero from its first NUL on
  reg         pk_zero;              // a NUL seen before this byte of the word
  reg  [2:0]  pk_at;                // position of the word's first NUL
  reg         pk_hit;               // the word has a NUL (among the bytes read)
  integer pki;
  always @(*) begin
    pk_word = hm_rdata_i;
    pk_zero = pk_nul_q;
    pk_hit = 1'b0;
    pk_at = 3'd0;
    for (pki = 0; pki < 8; pki = pki + 1) begin
      if (!pk_zero && pki < hm_size_o && hm_rdata_i[8*pki +: 8] == 8'd0) begin
        pk_zero = 1'b1; pk_hit = 1'b1; pk_at = pki[2:0];
      end
      if (pk_zero) pk_word[8*pki +: 8] = 8'd0;
    end
  end
  always @(*) begin
    pk_len_o = pk_nul_q ? pk_len_q : pk_n[7:0];
    pk_fmt_o = fmt_q;
  end
  assign pk_args_o = {r5, r4, r3};
  wire [63:0] cs_words = {32'd0, hm_rdata_i[31:0]} + {32'd0, hm_rdata_i[63:32]};

  // csum_partial of a plain word sum: its halves added with the carry wrapped around. One wrap is enough (the
  // halves' sum is at most 2^33 - 2, so with its carry set its low word is at most 2^32 - 2), and the result is
  // 0 only for 0 (a carry adds 1 to the low word)
  function automatic [31:0] part(input [63:0] x);
    reg [32:0] y;
    y = {1'b0, x[31:0]} + {1'b0, x[63:32]};
    part = y[31:0] + {31'd0, y[32]};
  endfunction
  function automatic [31:0] cadd(input [31:0] a, input [31:0] b);
    reg [32:0] r;
    r = {1'b0, a} + {1'b0, b};
    cadd = r[31:0] + {31'd0, r[32]};
  endfunction
  function automatic [15:0] fold16(input [31:0] v);
    reg [31:0] w;
    w = v + {v[15:0], v[31:16]};
    fold16 = w[31:16];
  endfunction
  wire [31:0] seed = r5[31:0];
  wire [31:0] p_to = part({32'd0, seed} + sum_t_q);
  wire [31:0] p_fr = part(sum_f_q);
  wire [31:0] p_fr_only = ~part({32'd0, ~seed} + sum_f_q);
  reg  [15:0] csum;
  always @(*) begin
    if (fsz != 32'd0 && tsz != 32'd0) csum = fold16(cadd(p_to, ~p_fr));
    else if (tsz != 32'd0) csum = fold16(p_to);
    else if (fsz != 32'd0) csum = fold16(p_fr_only);
    else csum = fold16(seed);
  end
  wire [32:0] csum_lat = 33'd1 + ((csz + 33'd7) >> 3);

  // the map helpers (map_lookup_elem, map_update_elem, map_delete_elem, redirect_map): sephirot_mapfsm
  wire        finish;           // it ends this cycle (below)
  sephirot_mapfsm u_mapfsm (
    .clk_i, .rst_ni,
    .req_i, .id_i, .r1_i(is_tc ? r2 : r1), .r2_i(r2[31:0]), .r3_i(r3), .r4_i(r4),
    .busy_i(busy_q), .cnt_i(cnt_q), .finish_i(finish),
    .rd_en_o(mf_rd_en), .rd_val_o(mf_rd_val), .rd_base_o(mf_rd_base), .rd_off_o(mf_rd_off), .rd_left_o(mf_rd_left),
    .rd_size_i(hm_size_o), .rd_data_i(hm_rdata_i), .rd_bad_i(cs_bad_q),
    .mid_o(mf_mid), .mcfg_i, .mcount_i, .mw_en_o(mf_mw_en), .mw_off_o(mf_mw_off), .mw_rdata_i,
    .mww_en_o(mf_mww_en), .mww_off_o(mf_mww_off), .mww_data_o(mf_mww_data), .mww_mask_o(mf_mww_mask),
    .mww_x_o(mf_mww_x), .xr_valid_o, .xr_addr_o, .xr_len_o, .xr_rvalid_i, .xr_rdata_i,
    .fault_o(m_fault), .ufault_o(mf_ufault), .done_o(mf_done), .lat_o(mf_lat), .ret_o(mf_ret),
    .redir_o(mf_redir), .redir_valid_o(mf_redir_valid), .redir_kind_o(mf_redir_kind),
    .redir_port_o(mf_redir_port), .redir_size_o(mf_redir_size)
  );

  sephirot_events u_events (
    .clk_i, .rst_ni, .pkt_start_i, .core_i, .req_i, .id_i, .args_i, .busy_i(busy_q), .finish_i(finish), .bad_i(cs_bad_q),
    .pkt_data_i, .pkt_end_i, .sel_o(ev_sel),
    .rd_en_o(ev_rd_en), .rd_base_o(ev_rd_base), .rd_off_o(ev_rd_off), .rd_left_o(ev_rd_left),
    .rd_tag_o(ev_rd_tag),
    .rd_size_i(hm_size_o), .rd_data_i(hm_rdata_i),
    .mid_o(ev_mid), .mcfg_i, .mcount_i,
    .mww_en_o(ev_mww_en), .mww_off_o(ev_mww_off), .mww_data_o(ev_mww_data), .mww_mask_o(ev_mww_mask),
    .fault_o(ev_fault), .ufault_o(ev_ufault), .lat_o(ev_lat), .ret_o(ev_ret),
    .evw_en_o, .evw_idx_o, .evw_data_o, .evp_valid_o, .evp_drop_o, .evp_kind_o, .evp_map_o, .evp_cpu_o,
    .evp_size_o, .evp_ctxlen_o
  );
  // one map id, one map memory write port: the event calls' or the map FSM's (one helper call at a time)
  assign mid_o = ev_sel ? ev_mid : mf_mid;
  assign mww_en_o = ev_sel ? ev_mww_en : mf_mww_en;
  assign mww_off_o = ev_sel ? ev_mww_off : mf_mww_off;
  assign mww_data_o = ev_sel ? ev_mww_data : mf_mww_data;
  assign mww_mask_o = ev_sel ? ev_mww_mask : mf_mww_mask;
  wire        mf_mww_x;
  assign mww_x_o = !ev_sel && mf_mww_x;

  // bpf_fib_lookup: sephirot_fib, which reads the FIB through the map window while no map helper runs
  wire        mf_mw_en, fb_mw_en;
  wire [31:0] mf_mw_off, fb_mw_off;
  sephirot_fib u_fib (
    .clk_i, .rst_ni, .go_i(fb_go), .finish_i(finish), .r2_i(r2), .r3_i(r3[31:0]), .r4_i(r4[31:0]),
    .rd_en_o(fb_rd_en), .rd_off_o(fb_rd_off), .rd_data_i(hm_rdata_i),
    .mw_en_o(fb_mw_en), .mw_off_o(fb_mw_off), .mw_rdata_i,
    .sw_en_o, .sw_off_o, .sw_size_o, .sw_data_o,
    .fault_o(fb_fault), .done_o(fb_done), .lat_o(fb_lat), .ret_o(fb_ret)
  );
  assign mw_en_o = mf_mw_en || fb_mw_en;
  assign mw_off_o = fb_mw_en ? fb_mw_off : mf_mw_off;

  reg         redir_valid_q, redir_valid_d;
  reg [31:0]  redir_port_q, redir_port_d;
  reg [1:0]   redir_kind_q, redir_kind_d;
  reg [15:0]  redir_size_q, redir_size_d;
  reg [31:0]  rnd_q;
  reg [32:0]  lat;
  reg         known;

  always @(*) begin
    known = 1'b1;
    lat = 33'd1;
    adj_kind_o = 2'd0;
    case (id_i)
      H_KTIME, H_KCOARSE, H_PRANDOM, H_SMP: lat = 33'd0;
      // the core holds the map grant from spin_lock's row to spin_unlock's (sephirot_core.v): the lock is free
      H_LOCK, H_UNLOCK: lat = 33'd0;
      H_REDIRECT, H_TAILCALL: lat = 33'd1;
      H_PRINTK: lat = pk_lat;
      H_CSUM: lat = csum_lat;
      H_LOOKUP, H_REDIRMAP, H_UPDATE, H_DELETE:
        lat = mf_done ? mf_lat : {33{1'b1}};
      H_FIB: lat = fb_done ? fb_lat : {33{1'b1}};
      H_HEAD: lat = (adj_err_i != 8'd0) ? 33'd1 : 33'd1 + {28'd0, adj_metalen_i[8:4]} +
                    {32'd0, adj_metalen_i[3:0] != 4'd0};
      H_TAIL: adj_kind_o = 2'd1;
      H_META: adj_kind_o = 2'd2;
      H_PERF, H_RBOUT, H_RESV, H_SUBMIT, H_DISCARD: lat = ev_lat;
      default: known = 1'b0;
    endcase
  end
  assign adj_delta_o = r2[31:0];

  wire [31:0] rnd_next0 = rnd_q ^ (rnd_q << 13);
  wire [31:0] rnd_next1 = rnd_next0 ^ (rnd_next0 >> 17);
  wire [31:0] rnd_next  = rnd_next1 ^ (rnd_next1 << 5);
  // ktime_get_ns: cycles * 32 / 5 (6.4 ns per cycle at 156.25 MHz), the division by 5 as long division one bit per
  // step: a generic 64-bit divider cell made yosys's `share` pass run out of memory. Only evaluated for the call
  // that returns it
  function automatic [63:0] div5(input [63:0] x);
    reg [3:0] t;
    reg [2:0] r;
    integer i;
    r = 3'd0;
    for (i = 63; i >= 0; i = i - 1) begin   // (a table per step: t <= 9, as r <= 4)
      t = {r, x[i]};
      div5[i] = 1'b1;
      case (t)
        4'd5: r = 3'd0;
        4'd6: r = 3'd1;
        4'd7: r = 3'd2;
        4'd8: r = 3'd3;
        4'd9: r = 3'd4;
        default: begin div5[i] = 1'b0; r = t[2:0]; end
      endcase
    end
  endfunction
  reg  [63:0] ktime_ns;
  always @(*) begin   // (an if, not ?:, which the simulator evaluates on both sides)
    ktime_ns = 64'd0;
    if (req_i && (id_i == H_KTIME || id_i == H_KCOARSE)) ktime_ns = div5({cycles_i[58:0], 5'd0});
  end

  assign finish = req_i && (m_fault || ev_fault || tc_fault || fb_fault ||
                           (busy_q ? (cnt_q >= lat) : (lat == 33'd0 || !known))) &&
                !(id_i == H_HEAD && adj_busy_i);
  wire is_adj = (id_i == H_HEAD) || (id_i == H_TAIL) || (id_i == H_META);
  assign adj_commit_o = finish && known && is_adj;
  assign adj_step_o = req_i && id_i == H_HEAD && !finish;

  always @(*) begin
    done_o = finish;
    illegal_o = 1'b0;
    fault_o = finish && (!known || m_fault || ev_fault || ufault || tc_fault || fb_fault);
    access_o = finish && known && !ufault && !ev_fault && (id_i == H_CSUM || id_i == H_LOOKUP || id_i == H_UPDATE ||
               id_i == H_DELETE || id_i == H_PRINTK || ev_sel) && cs_bad_q;
    ret_o = 64'd0;
    case (id_i)
      H_KTIME, H_KCOARSE: ret_o = ktime_ns;
      H_CSUM:     ret_o = {48'd0, csum};
      H_LOOKUP, H_UPDATE, H_DELETE, H_REDIRMAP: ret_o = mf_ret;
      H_PERF, H_RBOUT, H_RESV, H_SUBMIT, H_DISCARD: ret_o = ev_ret;
      H_FIB:      ret_o = fb_ret;
      H_PRANDOM:  ret_o = {32'd0, rnd_next};
      H_SMP:      ret_o = {61'd0, core_i};
      H_REDIRECT: ret_o = (r2 != 64'd0) ? 64'd`SEPH_XDP_ABORTED : 64'd`SEPH_XDP_REDIRECT;
      H_HEAD, H_TAIL, H_META: ret_o = (adj_err_i == 8'd0) ? 64'd0 : -{56'd0, adj_err_i};
      default:    ret_o = 64'd0;
    endcase
  end

  always @(*) begin
    redir_valid_d = pkt_start_i ? 1'b0 : redir_valid_q;
    redir_port_d = redir_port_q;
    redir_kind_d = redir_kind_q;
    redir_size_d = redir_size_q;
    if (finish && known && id_i == H_REDIRECT && r2 == 64'd0) begin
      redir_valid_d = 1'b1; redir_port_d = r1[31:0]; redir_kind_d = 2'd`SEPH_REDIRECT_PORT;
    end
    if (finish && mf_redir) begin
      redir_valid_d = mf_redir_valid; redir_port_d = mf_redir_port; redir_kind_d = mf_redir_kind;
      redir_size_d = mf_redir_size;
    end
  end
  assign pk_valid_o = finish && known && id_i == H_PRINTK && !cs_bad_q;
  assign tc_jump_o = finish && tc_go && !hm_fault_i && hm_rdata_i[31:0] != 32'd0;
  assign tc_row_o = hm_rdata_i[31:0] - 32'd1;
  assign redir_valid_o = redir_valid_d;
  assign redir_port_o = redir_port_d;
  assign redir_kind_o = redir_kind_d;
  assign redir_size_o = redir_size_d;

  // (fmt_q has no asynchronous reset, so that its clear uses the flip-flops' synchronous reset pins; fmt_clr_q
  // clears it in the first cycle out of reset)
  reg fmt_clr_q;
  integer fw;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) fmt_clr_q <= 1'b1;
    else fmt_clr_q <= 1'b0;
  end
  always @(posedge clk_i) begin
    if (fmt_clr_q || finish) fmt_q <= {8*FMTMAX{1'b0}};
    else if (pk_go)
      for (fw = 0; fw < FMTMAX / 8; fw = fw + 1) if (pk_off_q[5:3] == fw[2:0]) fmt_q[64*fw +: 64] <= pk_word;
  end
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0; cnt_q <= 33'd0; rnd_q <= 32'h2545F491;
      cs_off_q <= 33'd0; sum_f_q <= 64'd0; sum_t_q <= 64'd0; cs_bad_q <= 1'b0;
      redir_valid_q <= 1'b0; redir_port_q <= 32'd0; redir_kind_q <= 2'd0; redir_size_q <= 16'd0;
      pk_off_q <= 32'd0; pk_nul_q <= 1'b0; pk_len_q <= 8'd0; tc_cnt_q <= 6'd0;
    end else begin
      if (pkt_start_i) tc_cnt_q <= 6'd0;
      else if (finish && tc_go) tc_cnt_q <= tc_cnt_q + 6'd1;
      redir_valid_q <= redir_valid_d; redir_port_q <= redir_port_d; redir_kind_q <= redir_kind_d;
      redir_size_q <= redir_size_d;
      if (mf_rd_en && hm_fault_i) cs_bad_q <= 1'b1;   // the map FSM's key or value read
      if (ev_rd_en && hm_fault_i) cs_bad_q <= 1'b1;   // an event call's header or record read
      if (pk_go) begin
        pk_off_q <= pk_off_q + {28'd0, hm_size_o};
        if (!pk_nul_q && pk_hit) begin pk_nul_q <= 1'b1; pk_len_q <= {pk_off_q[7:3], pk_at}; end
        if (hm_fault_i) cs_bad_q <= 1'b1;
      end
      if (cs_go) begin
        cs_off_q <= cs_off_q + {29'd0, hm_size_o};
        if (cs_off_q < {1'b0, fsz}) sum_f_q <= sum_f_q + cs_words;
        else sum_t_q <= sum_t_q + cs_words;
        if (hm_fault_i) cs_bad_q <= 1'b1;
      end
      if (finish) begin
        busy_q <= 1'b0; cnt_q <= 33'd0;
        cs_off_q <= 33'd0; sum_f_q <= 64'd0; sum_t_q <= 64'd0; cs_bad_q <= 1'b0;
        pk_off_q <= 32'd0; pk_nul_q <= 1'b0;
        if (known && id_i == H_PRANDOM) rnd_q <= rnd_next;
      end else if (req_i) begin
        busy_q <= 1'b1; cnt_q <= cnt_q + 33'd1;
      end
    end
  end
endmodule
`default_nettype wire
