// sephirot_pktbuf: packet buffers (input of 32-byte frames, active packet for the lanes, emission), xdp_md ctx.
`default_nettype none
`include "sephirot_params.vh"

// NBUF buffers are used in turn: the input fills one while the core works on the previous one and the output
// emits an older one (emission in parallel with the reading of the next packet). The core may start as soon as
// the first frame is in (early processor start): a lane access to packet bytes that have not arrived yet waits.
// Every byte has a valid bit cleared when the buffer is allocated: bytes never written (headroom, growth by
// adjust_head/adjust_tail) read as zero, so no byte of a previous packet is ever visible.
// adjust_head with metadata in front of data moves the metadata with data (the kernel's memmove): while the helper
// stalls, 16 bytes per cycle are read into a staging buffer (so the move sees memory as it was before the row);
// the commit writes them at the new place after the row's stores (the helper's effects land last). Old bytes stay.
// Like a lane access, the move waits (adj_busy_o holds the helper) until the input has delivered every packet byte
// it reads or overwrites, so a later input frame cannot overwrite moved metadata.
// Emission sends data_meta..data_end: the first out_meta_o bytes are the metadata, the rest is the frame
// (out_data_o is 0 in the cycles without a frame).
// The bytes are kept in 64-bit words (two banks) and written as whole words with byte masks, in the byte order of
// the original byte-wise writes: Verilator evaluates each write site of an array every cycle, and the byte-wise
// version (256 sites for the metadata move alone) halved the simulation speed; yosys keeps the words as memories.
module sephirot_pktbuf #(
  parameter integer LANES = `SEPH_LANES,
  parameter integer RP    = `SEPH_PKT_LOAD_PORTS,   // packet loads and stores per row (execution contract)
  parameter integer WP    = `SEPH_PKT_STORE_PORTS,
  parameter integer NBUF  = 3,
  parameter integer BSZ   = `SEPH_PKT_BUF_SIZE,
  parameter integer FB    = `SEPH_INPUT_BYTES_PER_CYCLE
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  // input frames
  input  wire                 in_valid_i,
  output wire                 in_ready_o,
  input  wire [8*FB-1:0]      in_data_i,
  input  wire                 in_sop_i,
  input  wire                 in_eop_i,
  input  wire [15:0]          in_len_i,        // packet length, valid with sop
  input  wire [31:0]          in_ifindex_i,    // valid with sop
  input  wire [31:0]          in_rxq_i,        // valid with sop
  // core control
  output wire                 core_ready_o,    // the next packet has its first frame in
  output wire                 core_filled_o,   // the current packet has all its frames in
  input  wire                 core_done_i,     // the core finished the current packet
  input  wire [31:0]          core_action_i,
  // data bus from the lanes (ctx and packet regions)
  input  wire [LANES-1:0]     rd_i,
  input  wire [LANES-1:0]     wr_i,
  input  wire [32*LANES-1:0]  addr_i,
  input  wire [4*LANES-1:0]   size_i,
  input  wire [64*LANES-1:0]  wdata_i,
  input  wire                 commit_i,
  output reg  [64*LANES-1:0]  rdata_o,
  output reg  [LANES-1:0]     fault_o,
  output reg  [LANES-1:0]     wait_o,
  input  wire                 h_rd_i,
  input  wire [31:0]          h_addr_i,
  input  wire [3:0]           h_size_i,
  output reg  [63:0]          h_rdata_o,
  output reg                  h_fault_o,
  // packet adjustment from the helper unit (0 head, 1 tail, 2 meta)
  input  wire [1:0]           adj_kind_i,
  input  wire [31:0]          adj_delta_i,
  input  wire                 adj_commit_i,
  input  wire                 adj_step_i,      // an adjust_head stalls this cycle: read the next metadata chunk
  output reg  [7:0]           adj_err_o,
  output wire [8:0]           adj_metalen_o,   // data - data_meta of the current packet
  output wire                 adj_busy_o,      // the adjust_head metadata move is not staged yet: do not commit
  output wire [31:0]          ctx_data_o,
  output wire [31:0]          ctx_end_o,
  // output frames
  output reg                  out_valid_o,
  output reg  [8*FB-1:0]      out_data_o,
  output reg                  out_sop_o,
  output reg                  out_eop_o,
  output reg  [5:0]           out_bytes_o,     // valid bytes of this frame
  output reg  [31:0]          out_action_o,
  output reg  [7:0]           out_meta_o       // leading bytes of the emission that are XDP metadata
);
  localparam integer OW = $clog2(BSZ);
  localparam integer PW = (NBUF > 1) ? $clog2(NBUF) : 1;
  localparam integer HEAD = `SEPH_PKT_HEADROOM;
  localparam integer FRAME_RESERVED = 40;   // xdp_frame kept free at the start (the kernel's limit)
  localparam integer SHINFO_RESERVED = 320; // skb_shared_info kept free at the end (the kernel's limit)
  localparam [3:0] R_CTX = `SEPH_REGION_CTX;
  localparam [3:0] R_PKT = `SEPH_REGION_PKT;
  localparam [31:0] PKT_BASE = `SEPH_PKT_BASE;

  // The packet is kept in 64-bit words, the even words of every buffer in bank 0 and the odd ones in bank 1, so
  // that an access of up to 8 bytes at any byte offset reads or writes one word of each bank.
  localparam integer WA = OW - 3;     // bits of a word index in a buffer
  localparam integer IX = PW + WA - 1; // bits of a bank index: {buffer, word / 2}
  reg [63:0]    mem0_q [0:NBUF*BSZ/16-1];
  reg [63:0]    mem1_q [0:NBUF*BSZ/16-1];
  localparam integer VW = BSZ / 64;   // valid bits are kept in 64-bit words (fast to clear and to simulate)
  reg [63:0]    vld_q [0:NBUF*VW-1];
  reg [VW-1:0]  wv_q [0:NBUF-1];      // word k of vld_q is meaningful (flash clear of a whole buffer)
  reg [NBUF-1:0] busy_q, filled_q, done_q;
  reg [15:0]    len_q [0:NBUF-1];
  reg [15:0]    arr_q [0:NBUF-1];      // bytes arrived
  reg [OW:0]    dstart_q [0:NBUF-1];   // data, data_end, data_meta as offsets in the buffer
  reg [OW:0]    dend_q [0:NBUF-1];
  reg [OW:0]    dmeta_q [0:NBUF-1];
  reg [31:0]    ifx_q [0:NBUF-1];
  reg [31:0]    rxq_q [0:NBUF-1];
  reg [31:0]    act_q [0:NBUF-1];
  reg [PW-1:0]  in_ptr_q, core_ptr_q, out_ptr_q;
  reg [15:0]    out_off_q;            // bytes emitted of the packet at out_ptr

  // (the read and write helpers keep to 64-bit values: Verilator zeroes a function's wider locals at every
  // evaluation of the process that calls it, whether the call runs or not)
  function automatic [63:0] rdw(input [PW-1:0] b, input [WA-1:0] w);   // word w of buffer b
    rdw = w[0] ? mem1_q[{b, w[WA-1:1]}] : mem0_q[{b, w[WA-1:1]}];
  endfunction
  function automatic [63:0] funnel8(input [63:0] lo, input [63:0] hi, input [2:0] s);   // bytes s.. of {hi, lo}
    funnel8 = (s == 3'd0) ? lo : (lo >> {s, 3'd0}) | (hi << {3'd0 - s, 3'd0});
  endfunction
  // the 8 bytes from byte offset o of buffer b (byte offsets wrap in the buffer), whether valid or not
  function automatic [63:0] rd8(input [PW-1:0] b, input [OW-1:0] o);
    rd8 = funnel8(rdw(b, o[OW-1:3]), rdw(b, o[OW-1:3] + {{(WA-1){1'b0}}, 1'b1}), o[2:0]);
  endfunction
  function automatic [63:0] vword(input [PW-1:0] b, input [WA-4:0] k);
    vword = wv_q[b][k] ? vld_q[{b, k}] : 64'd0;
  endfunction
  // the valid bits of the 64 bytes from byte offset o of buffer b
  function automatic [63:0] vbits(input [PW-1:0] b, input [OW-1:0] o);
    vbits = (o[5:0] == 6'd0) ? vword(b, o[OW-1:6])
          : (vword(b, o[OW-1:6]) >> o[5:0]) | (vword(b, o[OW-1:6] + {{(WA-4){1'b0}}, 1'b1}) << (7'd64 - {1'b0, o[5:0]}));
  endfunction
  function automatic [63:0] merge(input [63:0] v, input [63:0] d, input [7:0] m);   // bytes m of d over v
    reg [63:0] bm;
    bm = {{8{m[7]}}, {8{m[6]}}, {8{m[5]}}, {8{m[4]}}, {8{m[3]}}, {8{m[2]}}, {8{m[1]}}, {8{m[0]}}};
    merge = (v & ~bm) | (d & bm);
  endfunction

  function automatic [PW-1:0] inc(input [PW-1:0] p);
    inc = ({{(32-PW){1'b0}}, p} == NBUF - 1) ? {PW{1'b0}} : p + {{(PW-1){1'b0}}, 1'b1};
  endfunction

  wire [PW-1:0] cb = core_ptr_q;
  assign in_ready_o   = !busy_q[in_ptr_q] || !filled_q[in_ptr_q];
  wire   in_fire      = in_valid_i && in_ready_o;
  assign core_ready_o = busy_q[cb] && !done_q[cb] && arr_q[cb] != 16'd0;
  assign core_filled_o = filled_q[cb];
  assign ctx_data_o   = PKT_BASE + {{(31-OW){1'b0}}, dstart_q[cb]};
  assign ctx_end_o    = PKT_BASE + {{(31-OW){1'b0}}, dend_q[cb]};

  // ---------------------------------------------------------------------------------------------------------
  // lane accesses to the current packet (buffer core_ptr) and to its xdp_md
  wire [31:0] meta_abs = PKT_BASE + {{(31-OW){1'b0}}, dmeta_q[cb]};
  wire [8*24-1:0] ctx_img = {32'd0, rxq_q[cb], ifx_q[cb], meta_abs, ctx_end_o, ctx_data_o};
  // one access of `size` bytes at `a`: its flags {wait, fault} and its data (two results within 64 bits, as the
  // simulator zeroes a wider function result at every evaluation of the process that calls it)
  function automatic [1:0] acc_flags(input rd, input wr, input [31:0] a, input [3:0] size);
    reg [31:0] o, e;
    acc_flags = 2'd0;
    e = a + {28'd0, size};
    if (rd || wr) begin
      if (a[31:28] == R_CTX) begin
        o = a - `SEPH_CTX_BASE;
        if (wr || o + {28'd0, size} > `SEPH_CTX_SIZE) acc_flags[0] = 1'b1;
      end else if (a[31:28] == R_PKT) begin
        if (a < meta_abs || e > ctx_end_o) acc_flags[0] = 1'b1;
        // bytes of the input packet that have not arrived yet: wait
        else if (!filled_q[cb] && e > PKT_BASE + HEAD + {16'd0, arr_q[cb]} && a < PKT_BASE + HEAD + {16'd0, len_q[cb]})
          acc_flags[1] = 1'b1;
      end else begin
        acc_flags[0] = 1'b1;
      end
    end
  endfunction
  // a load's bytes: of the xdp_md (acc_ctx) or of the packet (acc_pkt; bytes never written read 0)
  function automatic [63:0] acc_ctx(input rd, input [31:0] a, input [3:0] size);
    reg [31:0] o;
    integer bi;
    acc_ctx = 64'd0;
    o = a - `SEPH_CTX_BASE;
    if (rd && a[31:28] == R_CTX && !(o + {28'd0, size} > `SEPH_CTX_SIZE))
      for (bi = 0; bi < 8; bi = bi + 1)
        if (bi < {28'd0, size}) acc_ctx[8*bi +: 8] = ctx_img[8*(o[4:0] + bi[4:0]) +: 8];
  endfunction
  function automatic [63:0] acc_pkt(input rd, input [31:0] a, input [3:0] size);
    reg [OW-1:0] bo;
    reg [63:0] d, v;
    integer bi;
    acc_pkt = 64'd0;
    if (rd && a[31:28] == R_PKT && !(a < meta_abs || a + {28'd0, size} > ctx_end_o)) begin
      bo = a[OW-1:0];   // (the offset in the buffer: PKT_BASE is aligned far above the buffer size)
      d = rd8(cb, bo);
      v = vbits(cb, bo);
      for (bi = 0; bi < 8; bi = bi + 1)
        if (bi < {28'd0, size} && v[bi]) acc_pkt[8*bi +: 8] = d[8*bi +: 8];
    end
  endfunction

  // The packet loads and stores of a row get the ports in lane order (sephirot_portsel); a lane past them faults
  // its row in the core, so its access is never served here.
  reg [LANES-1:0]    l_pkt;                       // lanes accessing the packet region
  wire [LANES*RP-1:0] p_sel;                      // lanes of load port p
  wire [32*RP-1:0]   p_addr;
  wire [4*RP-1:0]    p_size;
  reg  [64*RP-1:0]   p_rdata;
  wire [WP-1:0]      q_used;                      // store port q stores this cycle (only in the cycle that commits)
  wire [32*WP-1:0]   q_addr;
  wire [4*WP-1:0]    q_size;
  wire [64*WP-1:0]   q_data;
  integer li, pp;
  always @(*) for (li = 0; li < LANES; li = li + 1) l_pkt[li] = addr_i[32*li+28 +: 4] == R_PKT;
  /* verilator lint_off PINCONNECTEMPTY */
  sephirot_portsel #(.LANES(LANES), .NP(RP), .AWD(32)) u_ld (
    .req_i(rd_i & l_pkt), .addr_i(addr_i), .size_i(size_i), .data_i({64*LANES{1'b0}}), .sel_o(p_sel), .used_o(),
    .addr_o(p_addr), .size_o(p_size), .data_o(), .left_o()
  );
  sephirot_portsel #(.LANES(LANES), .NP(WP), .AWD(32)) u_st (
    .req_i(commit_i ? (wr_i & l_pkt) : {LANES{1'b0}}), .addr_i(addr_i), .size_i(size_i), .data_i(wdata_i),
    .sel_o(), .used_o(q_used), .addr_o(q_addr), .size_o(q_size), .data_o(q_data), .left_o()
  );
  /* verilator lint_on PINCONNECTEMPTY */
  reg [1:0] acc;
  always @(*) begin
    for (pp = 0; pp < RP; pp = pp + 1)
      p_rdata[64*pp +: 64] = acc_pkt(|p_sel[LANES*pp +: LANES], p_addr[32*pp +: 32], p_size[4*pp +: 4]);
    rdata_o = {64*LANES{1'b0}};
    fault_o = {LANES{1'b0}};
    wait_o = {LANES{1'b0}};
    acc = 2'd0;
    for (li = 0; li < LANES; li = li + 1) begin
      acc = acc_flags(rd_i[li], wr_i[li], addr_i[32*li +: 32], size_i[4*li +: 4]);
      rdata_o[64*li +: 64] = acc_ctx(rd_i[li] && !wr_i[li], addr_i[32*li +: 32], size_i[4*li +: 4]);
      for (pp = 0; pp < RP; pp = pp + 1)
        if (p_sel[LANES*pp + li]) rdata_o[64*li +: 64] = p_rdata[64*pp +: 64];
      fault_o[li] = acc[0];
      wait_o[li] = acc[1];
    end
  end
  // the helper unit's read port: the core holds a call whose buffers point into the packet until the packet
  // is complete (core_filled_o), so its reads never see bytes that have not arrived
  reg [1:0] hacc;
  always @(*) begin
    hacc = acc_flags(h_rd_i, 1'b0, h_addr_i, h_size_i);
    h_rdata_o = acc_ctx(h_rd_i, h_addr_i, h_size_i) | acc_pkt(h_rd_i, h_addr_i, h_size_i);
    h_fault_o = hacc[0];
  end

  // ---------------------------------------------------------------------------------------------------------
  // packet adjustment (bpf_xdp_adjust_head/tail/meta), checked as the kernel does
  // adj_err_o: 0 on success, else the errno the helper returns negated (EINVAL 22, EACCES 13)
  reg [31:0] adj_new;
  wire [31:0] d_start = {{(31-OW){1'b0}}, dstart_q[cb]};
  wire [31:0] d_end   = {{(31-OW){1'b0}}, dend_q[cb]};
  wire [31:0] d_meta  = {{(31-OW){1'b0}}, dmeta_q[cb]};
  reg  [31:0] metalen;
  wire [31:0] cur_meta = d_start - d_meta;
  assign adj_metalen_o = cur_meta[8:0];
  always @(*) begin
    adj_err_o = 8'd0;
    adj_new = 32'd0;
    metalen = 32'd0;
    case (adj_kind_i)
      2'd0: begin  // head: data += delta; FRAME_RESERVED + metalen <= data <= data_end - 14
        adj_new = d_start + adj_delta_i;
        if ($signed(adj_new) < $signed(FRAME_RESERVED + cur_meta) || $signed(adj_new) > $signed(d_end - 32'd14))
          adj_err_o = 8'd22;
      end
      2'd1: begin  // tail: data_end += delta; data + 14 <= data_end <= BSZ - SHINFO_RESERVED
        adj_new = d_end + adj_delta_i;
        if ($signed(adj_new) < $signed(d_start + 32'd14) || $signed(adj_new) > BSZ - SHINFO_RESERVED)
          adj_err_o = 8'd22;
      end
      default: begin  // meta: data_meta += delta; FRAME_RESERVED <= meta <= data, (data - meta) % 4 == 0, <= 255
        adj_new = d_meta + adj_delta_i;
        metalen = d_start - adj_new;
        if ($signed(adj_new) < FRAME_RESERVED || $signed(adj_new) > $signed(d_start)) adj_err_o = 8'd22;
        else if (metalen[1:0] != 2'd0 || metalen > 32'd255) adj_err_o = 8'd13;
      end
    endcase
  end
  wire adj_ok = adj_err_o == 8'd0;

  // adjust_head's metadata move: chunk k (16 bytes from data_meta + 16 k) is staged in stall cycle k
  localparam integer MVB = 256;               // staging bytes (metadata is at most 252 bytes)
  reg  [63:0]   mv_q [0:MVB/8+1];          // staged metadata, aligned as at its new place (words from mv_new / 8)
  reg  [4:0]    mv_cnt_q;
  wire [31:0]   mv_hi = (adj_new > d_start) ? adj_new : d_start;   // end of the bytes the move reads or writes
  wire          mv_in = filled_q[cb] || mv_hi <= HEAD + {16'd0, arr_q[cb]};
  wire          mv_need = adj_kind_i == 2'd0 && adj_ok && cur_meta != 32'd0;
  wire          mv_staged = {23'd0, mv_cnt_q, 4'd0} >= cur_meta;
  wire          mv_rd = adj_step_i && mv_need && mv_in && !mv_staged;
  assign adj_busy_o = mv_need && !mv_staged;
  /* verilator lint_off UNUSEDSIGNAL */
  wire [31:0]   mv_new = d_meta + adj_delta_i;   // the metadata's new start (in the buffer when adj_ok)
  /* verilator lint_on UNUSEDSIGNAL */
  wire          mv_commit = adj_commit_i && adj_ok && adj_kind_i == 2'd0 && cur_meta != 32'd0;
  // 8 bytes of the metadata to move, from byte offset src of the current buffer (not valid: 0)
  function automatic [63:0] mv_src8(input [OW-1:0] src);
    reg [63:0] d, v;
    integer    mb;
    d = rd8(cb, src);
    v = vbits(cb, src);
    mv_src8 = 64'd0;
    for (mb = 0; mb < 8; mb = mb + 1) if (v[mb]) mv_src8[8*mb +: 8] = d[8*mb +: 8];
  endfunction
  // The chunk staged in stall cycle k (bytes data_meta + 16 k .. + 15) goes to bytes p = mv_new % 8 + 16 k .. + 15
  // of mv_q: word n (0 .. 2) from word p / 8 on.
  wire [7:0]    mv_st_p = {mv_cnt_q[3:0], 4'd0} + {5'd0, mv_new[2:0]};
  wire [23:0]   mv_st_m = {8'd0, 16'hffff} << mv_st_p[2:0];
  wire [OW-1:0] mv_src = d_meta[OW-1:0] + {{(OW-8){1'b0}}, mv_cnt_q[3:0], 4'd0};
  // (the functions called in unrolled loops take a signal argument: yosys evaluates a call whose arguments are
  // all constant as a constant function)
  function automatic [MWB-1:0] mv_st_ix(input [4:0] p, input [1:0] n);
    mv_st_ix = {1'b0, p} + {{(MWB-2){1'b0}}, n};
  endfunction
  function automatic [63:0] mv_st_val(input [7:0] p, input [1:0] n);
    reg [63:0] lo, hi;   // chunk words n - 1 and n (0 outside the chunk)
    lo = (n == 2'd0) ? 64'd0 : mv_src8(mv_src + ((n == 2'd2) ? 8 : 0));
    hi = (n == 2'd2) ? 64'd0 : mv_src8(mv_src + ((n == 2'd1) ? 8 : 0));
    mv_st_val = merge(mv_q[mv_st_ix(p[7:3], n)], (p[2:0] == 3'd0) ? hi : funnel8(lo, hi, 3'd0 - p[2:0]),
                      mv_st_m[8*n +: 8]);
  endfunction

  // ---------------------------------------------------------------------------------------------------------
  // output: emit the oldest finished packet, one frame per cycle, data..data_end
  wire [PW-1:0] ob = out_ptr_q;
  wire          out_go = busy_q[ob] && done_q[ob] && filled_q[ob];
  wire [15:0]   out_len = {{(15-OW){1'b0}}, dend_q[ob]} - {{(15-OW){1'b0}}, dmeta_q[ob]};
  /* verilator lint_off UNUSEDSIGNAL */
  wire [OW:0]   out_mlen = dstart_q[ob] - dmeta_q[ob];   // at most 252
  /* verilator lint_on UNUSEDSIGNAL */
  wire [15:0]   out_left = out_len - out_off_q;
  wire          out_last = {16'd0, out_left} <= FB;
  wire [OW-1:0] ooff = dmeta_q[ob][OW-1:0] + out_off_q[OW-1:0];
  // the frame's bytes (bytes not valid: 0)
  function automatic [8*FB-1:0] out_frame(input [OW-1:0] off);
    reg [63:0] v;
    integer    oi;
    for (oi = 0; oi < FB / 8; oi = oi + 1) out_frame[64*oi +: 64] = rd8(ob, off + 8 * oi[OW-1:0]);
    v = vbits(ob, off);
    for (oi = 0; oi < FB; oi = oi + 1)
      if (!(oi < out_left && v[oi])) out_frame[8*oi +: 8] = 8'd0;
  endfunction
  always @(*) begin
    out_valid_o = out_go;
    out_sop_o = out_off_q == 16'd0;
    out_eop_o = out_last;
    out_bytes_o = out_last ? out_left[5:0] : FB[5:0];
    out_action_o = act_q[ob];
    out_meta_o = out_mlen[7:0];
    // (0 in the cycles without a frame: the simulation skips the reads)
    out_data_o = {8*FB{1'b0}};
    if (out_go) out_data_o = out_frame(ooff);
  end

  // ---------------------------------------------------------------------------------------------------------
  // state
  wire [15:0]  in_base = in_sop_i ? 16'd0 : arr_q[in_ptr_q];   // bytes of the packet before this frame
  wire [15:0]  in_len  = in_sop_i ? in_len_i : len_q[in_ptr_q];
  // the input frame's offset in the buffer (a multiple of FB) and its bytes inside the packet
  wire [OW-1:0] in_off0 = HEAD[OW-1:0] + in_base[OW-1:0];
  reg  [FB-1:0] in_m;
  integer so;
  always @(*) begin
    in_m = {FB{1'b0}};
    if (in_fire) for (so = 0; so < FB; so = so + 1) in_m[so] = in_base + so[15:0] < in_len;
  end

  // bytes [lo, hi) that fall in word k (adjust_tail growth reads as zero)
  function automatic [63:0] grow_word(input [OW-7:0] k, input [OW:0] lo, input [OW:0] hi);
    reg [OW:0] base, l, h;
    base = {1'b0, k, 6'd0};
    l = (lo > base) ? lo - base : {(OW+1){1'b0}};
    h = (hi > base) ? hi - base : {(OW+1){1'b0}};
    grow_word = ((l >= 64) ? 64'd0 : (~64'd0 << l[5:0])) & ((h >= 64) ? ~64'd0 : ~(~64'd0 << h[5:0]));
  endfunction

  // valid-bit words written this cycle: two per lane store, one input frame, two adjust_tail edge words, five
  // for the moved metadata. Targets naming the same word get the same merged value, so the order of the writes
  // does not matter.
  localparam integer NMV = 5;
  localparam integer NT = 2 * WP + 3 + NMV;
  localparam integer WW = OW - 6;
  wire              grow = adj_commit_i && adj_ok && adj_kind_i == 2'd1 && adj_new[OW:0] > dend_q[cb];
  wire              in_clear = in_fire && in_sop_i;
  reg [NT-1:0]      t_en;
  reg [PW-1:0]      t_buf [0:NT-1];
  reg [WW-1:0]      t_word [0:NT-1];
  reg [63:0]        t_set [0:NT-1];
  reg [63:0]        t_val [0:NT-1];
  reg [VW-1:0]      wv_d [0:NBUF-1];
  reg [OW:0]        gend;
  integer tl, tb, tt, ts, tk;
  reg any_st;
  always @(*) any_st = |q_used;
  wire vld_busy = any_st || in_fire || grow || mv_commit;   // valid bits change this cycle
  reg [127:0]       st_m;
  reg [64*NMV-1:0]  mv_vm;
  always @(*) begin
    st_m = 128'd0;
    for (tt = 0; tt < NT; tt = tt + 1) begin
      t_en[tt] = 1'b0; t_buf[tt] = cb; t_word[tt] = {WW{1'b0}}; t_set[tt] = 64'd0;
    end
    // (all targets are off in a cycle without a write: their masks are computed only in the cycles that write)
    mv_vm = {64*NMV{1'b0}};
    gend = {(OW+1){1'b0}};
    if (vld_busy) begin
      if (any_st) for (tl = 0; tl < WP; tl = tl + 1) begin
        st_m = {{(128-8){1'b0}}, q_size[4*tl+3] ? 8'hff : ~(8'hff << q_size[4*tl +: 3])} << q_addr[32*tl +: 6];
        t_word[2*tl] = q_addr[32*tl+6 +: WW];
        t_word[2*tl+1] = q_addr[32*tl+6 +: WW] + {{(WW-1){1'b0}}, 1'b1};
        t_en[2*tl] = q_used[tl] && |st_m[63:0]; t_set[2*tl] = st_m[63:0];
        t_en[2*tl+1] = q_used[tl] && |st_m[127:64]; t_set[2*tl+1] = st_m[127:64];
      end
      // (the frame is inside one valid-bit word: its offset is a multiple of FB, FB divides 64)
      t_en[2*WP] = in_fire; t_buf[2*WP] = in_ptr_q; t_word[2*WP] = in_off0[OW-1:6];
      t_set[2*WP] = {{(64-FB){1'b0}}, in_m} << in_off0[5:0];
      gend = adj_new[OW:0] - {{OW{1'b0}}, 1'b1};
      t_en[2*WP+1] = grow; t_word[2*WP+1] = dend_q[cb][OW-1:6];
      t_en[2*WP+2] = grow; t_word[2*WP+2] = gend[OW-1:6];
      if (mv_commit) mv_vm = {{(64*NMV-MVB){1'b0}}, ~({MVB{1'b1}} << cur_meta[7:0])} << mv_new[5:0];
      for (tt = 0; tt < NMV; tt = tt + 1) begin
        t_en[2*WP+3+tt] = mv_commit && |mv_vm[64*tt +: 64];
        t_word[2*WP+3+tt] = mv_new[OW-1:6] + tt[WW-1:0];
        t_set[2*WP+3+tt] = mv_vm[64*tt +: 64];
      end
    end
    // merged values
    for (tt = 0; tt < NT; tt = tt + 1) t_val[tt] = 64'd0;
    // (only the targets written this cycle: the others' values are not used, and skipping them keeps the
    // simulation fast)
    for (tt = 0; tt < NT; tt = tt + 1) if (vld_busy && t_en[tt]) begin
      t_val[tt] = (wv_q[t_buf[tt]][t_word[tt]] && !(in_clear && t_buf[tt] == in_ptr_q)) ?
                  vld_q[{t_buf[tt], t_word[tt]}] : 64'd0;
      if (grow && t_buf[tt] == cb) t_val[tt] = t_val[tt] & ~grow_word(t_word[tt], dend_q[cb], adj_new[OW:0]);
      for (ts = 0; ts < NT; ts = ts + 1)
        if (t_en[ts] && t_buf[ts] == t_buf[tt] && t_word[ts] == t_word[tt]) t_val[tt] = t_val[tt] | t_set[ts];
    end
    // word-valid bits
    for (tk = 0; tk < NBUF; tk = tk + 1) wv_d[tk] = wv_q[tk];
    if (vld_busy) for (tk = 0; tk < NBUF; tk = tk + 1) begin
      wv_d[tk] = (in_clear && in_ptr_q == tk[PW-1:0]) ? {VW{1'b0}} : wv_q[tk];
      if (grow && cb == tk[PW-1:0])
        for (tb = 0; tb < VW; tb = tb + 1)  // words entirely inside the growth
          if ({1'b0, tb[WW-1:0], 6'd0} >= dend_q[cb] && {1'b0, tb[WW-1:0], 6'd0} + 64 <= adj_new[OW:0])
            wv_d[tk][tb] = 1'b0;
      for (tt = 0; tt < NT; tt = tt + 1)
        if (t_en[tt] && t_buf[tt] == tk[PW-1:0]) wv_d[tk][t_word[tt]] = 1'b1;
    end
  end

  // Packet words written this cycle. The byte-wise order is lane stores in lane order, then the moved metadata,
  // then the input frame. Per bank the words are written in the order input frame, moved metadata, lane stores,
  // and each value holds the bytes of every write of the cycle to its word that comes earlier byte-wise or in
  // that order (and the word's old bytes): the last write to a word is the byte-wise result. The values are
  // functions evaluated in the clocked process, only in the cycles that write (a simulation cost otherwise).
  localparam integer NIW = FB / 16;            // input words per bank (HEAD and FB are multiples of 16)
  localparam integer NMW = MVB / 16 + 1;       // moved-metadata words per bank (252 bytes at any offset: 33 words)
  localparam integer IWB = $clog2(2 * NIW);
  localparam integer MWB = $clog2(2 * NMW);
  wire [WA-1:0]       in_w0 = in_off0[OW-1:3];
  wire [WA-1:0]       mv_w0 = mv_new[OW-1:3];
  // bank b's k-th word from word w0 on: its index in the bank (within the buffer)
  function automatic [WA-2:0] bank_ix(input [WA-1:0] w0, input b, input [MWB-2:0] k);
    bank_ix = w0[WA-1:1] + {{(WA-2){1'b0}}, w0[0] & ~b} + {{(WA-MWB){1'b0}}, k};
  endfunction
  // the bytes of the metadata words (from mv_w0) that move (metadata is at most 252 bytes: cur_meta[7:0])
  reg  [8*2*NMW-1:0]  mv_wm;
  always @(*) begin
    mv_wm = {8*2*NMW{1'b0}};
    if (mv_commit) mv_wm = {{(8*2*NMW-MVB){1'b0}}, ~({MVB{1'b1}} << cur_meta[7:0])} << mv_new[2:0];
  end
  // the input frame's and the moved metadata's bytes of word w, over v
  function automatic [63:0] over_in(input [63:0] v, input [PW-1:0] b, input [WA-1:0] w);
    reg [WA-1:0] i;
    i = w - in_w0;
    over_in = v;
    if (in_fire && b == in_ptr_q && {{(32-WA){1'b0}}, i} < 2 * NIW)
      over_in = merge(v, in_data_i[64*i[IWB-1:0] +: 64], in_m[8*i[IWB-1:0] +: 8]);
  endfunction
  function automatic [63:0] over_mv(input [63:0] v, input [WA-1:0] w);
    reg [WA-1:0] j;
    j = w - mv_w0;
    over_mv = v;
    if (mv_commit && {{(32-WA){1'b0}}, j} < 2 * NMW) over_mv = merge(v, mv_q[j[MWB-1:0]], mv_wm[8*j[MWB-1:0] +: 8]);
  endfunction
  // Store port l's access: the word it writes in bank b, the bytes and their mask. (Verilator folds the constant
  // arguments of the functions below (b, l, k); the ones called from the clocked process also take a signal
  // (the buffer pb): yosys evaluates a call whose arguments are all constant as a constant function, which fails
  // on the signals it reads.)
  function automatic [WA-1:0] lane_word(input b, input integer l);
    lane_word = q_addr[32*l+3 +: WA] + {{(WA-1){1'b0}}, q_addr[32*l+3] ^ b};
  endfunction
  function automatic [7:0] lane_mask(input b, input integer l);
    reg [15:0] m;
    m = {8'd0, q_size[4*l+3] ? 8'hff : ~(8'hff << q_size[4*l +: 3])} << q_addr[32*l +: 3];
    lane_mask = (q_addr[32*l+3] == b) ? m[7:0] : m[15:8];
  endfunction
  function automatic [63:0] lane_data(input b, input integer l);
    reg [63:0] wd;
    reg [2:0]  s;
    wd = q_data[64*l +: 64];
    s = q_addr[32*l +: 3];
    if (q_addr[32*l+3] == b) lane_data = wd << {s, 3'd0};
    else lane_data = (s == 3'd0) ? 64'd0 : wd >> {3'd0 - s, 3'd0};
  endfunction
  function automatic lane_en(input [WP-1:0] used, input b, input integer l);
    lane_en = used[l] && |lane_mask(b, l);
  endfunction
  function automatic [IX-1:0] lane_ix(input [PW-1:0] pb, input b, input integer l);
    reg [WA-2:0] i;
    i = bank_ix(q_addr[32*l+3 +: WA], b, {(MWB-1){1'b0}});
    lane_ix = {pb, i};
  endfunction
  // the value of store port l's word in bank b: the ports' bytes in port (lane) order, then the metadata's and the input's
  function automatic [63:0] lane_val(input [PW-1:0] pb, input b, input integer l);
    reg [WA-1:0] w;
    reg [IX-1:0] ix;
    integer      q;
    w = lane_word(b, l);
    ix = lane_ix(pb, b, l);
    lane_val = (b == 1'b1) ? mem1_q[ix] : mem0_q[ix];
    for (q = 0; q < WP; q = q + 1)
      if (q_used[q] && lane_word(b, q) == w) lane_val = merge(lane_val, lane_data(b, q), lane_mask(b, q));
    lane_val = over_in(over_mv(lane_val, w), pb, w);
  endfunction
  // bank b's k-th word of the input frame (i: its word in the frame)
  function automatic [IWB-1:0] in_i(input b, input [IWB-2:0] k);
    in_i = {k, in_w0[0] ^ b};
  endfunction
  function automatic in_en(input [FB-1:0] m, input b, input [IWB-2:0] k);
    reg [IWB-1:0] i;
    i = in_i(b, k);
    in_en = |m[8*i +: 8];
  endfunction
  function automatic [IX-1:0] in_ix(input [PW-1:0] pb, input b, input [IWB-2:0] k);
    reg [WA-2:0] i;
    i = bank_ix(in_w0, b, {{(MWB-IWB){1'b0}}, k});
    in_ix = {pb, i};
  endfunction
  function automatic [63:0] in_val(input [PW-1:0] pb, input b, input [IWB-2:0] k);
    reg [IWB-1:0] i;
    reg [IX-1:0]  ix;
    i = in_i(b, k);
    ix = in_ix(pb, b, k);
    in_val = merge((b == 1'b1) ? mem1_q[ix] : mem0_q[ix], in_data_i[64*i +: 64], in_m[8*i +: 8]);
  endfunction
  // bank b's k-th word of the moved metadata (j: its word from mv_w0)
  function automatic [MWB-1:0] mv_j(input b, input [MWB-2:0] k);
    mv_j = {k, mv_w0[0] ^ b};
  endfunction
  function automatic mv_en(input w0, input b, input [MWB-2:0] k);   // w0: bit 0 of mv_w0
    reg [MWB-1:0] j;
    j = {k, w0 ^ b};
    mv_en = |mv_wm[8*j +: 8];
  endfunction
  function automatic [IX-1:0] mv_ix(input [PW-1:0] pb, input b, input [MWB-2:0] k);
    reg [WA-2:0] i;
    i = bank_ix(mv_w0, b, k);
    mv_ix = {pb, i};
  endfunction
  function automatic [63:0] mv_val(input [PW-1:0] pb, input b, input [MWB-2:0] k);
    reg [MWB-1:0] j;
    reg [IX-1:0]  ix;
    j = mv_j(b, k);
    ix = mv_ix(pb, b, k);
    mv_val = over_in(merge((b == 1'b1) ? mem1_q[ix] : mem0_q[ix], mv_q[j], mv_wm[8*j +: 8]), pb,
                     mv_w0 + {{(WA-MWB){1'b0}}, j});
  endfunction

  integer gk;
  always @(posedge clk_i) begin
    if (in_fire)
      for (gk = 0; gk < NIW; gk = gk + 1) begin
        if (in_en(in_m, 1'b0, gk[IWB-2:0])) mem0_q[in_ix(in_ptr_q, 1'b0, gk[IWB-2:0])] <= in_val(in_ptr_q, 1'b0, gk[IWB-2:0]);
        if (in_en(in_m, 1'b1, gk[IWB-2:0])) mem1_q[in_ix(in_ptr_q, 1'b1, gk[IWB-2:0])] <= in_val(in_ptr_q, 1'b1, gk[IWB-2:0]);
      end
    if (mv_commit) begin
      for (gk = 0; gk < NMW; gk = gk + 1)
        if (mv_en(mv_w0[0], 1'b0, gk[MWB-2:0])) mem0_q[mv_ix(cb, 1'b0, gk[MWB-2:0])] <= mv_val(cb, 1'b0, gk[MWB-2:0]);
      for (gk = 0; gk < NMW; gk = gk + 1)
        if (mv_en(mv_w0[0], 1'b1, gk[MWB-2:0])) mem1_q[mv_ix(cb, 1'b1, gk[MWB-2:0])] <= mv_val(cb, 1'b1, gk[MWB-2:0]);
    end
    if (any_st)
      for (gk = 0; gk < WP; gk = gk + 1) begin
        if (lane_en(q_used, 1'b0, gk)) mem0_q[lane_ix(cb, 1'b0, gk)] <= lane_val(cb, 1'b0, gk);
        if (lane_en(q_used, 1'b1, gk)) mem1_q[lane_ix(cb, 1'b1, gk)] <= lane_val(cb, 1'b1, gk);
      end
    for (gk = 0; gk < NT; gk = gk + 1)
      if (t_en[gk]) vld_q[{t_buf[gk], t_word[gk]}] <= t_val[gk];
    if (mv_rd)
      for (gk = 0; gk < 3; gk = gk + 1)
        if (|mv_st_m[8*gk +: 8]) mv_q[mv_st_ix(mv_st_p[7:3], gk[1:0])] <= mv_st_val(mv_st_p, gk[1:0]);
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= {NBUF{1'b0}}; filled_q <= {NBUF{1'b0}}; done_q <= {NBUF{1'b0}};
      for (gk = 0; gk < NBUF; gk = gk + 1) wv_q[gk] <= {VW{1'b0}};
      in_ptr_q <= {PW{1'b0}}; core_ptr_q <= {PW{1'b0}}; out_ptr_q <= {PW{1'b0}}; out_off_q <= 16'd0;
      mv_cnt_q <= 5'd0;
    end else begin
      for (gk = 0; gk < NBUF; gk = gk + 1) wv_q[gk] <= wv_d[gk];
      // packet adjustment
      if (adj_commit_i && adj_ok) begin
        case (adj_kind_i)
          2'd0: begin dstart_q[cb] <= adj_new[OW:0]; dmeta_q[cb] <= mv_new[OW:0]; end
          2'd1: begin
            dend_q[cb] <= adj_new[OW:0];
          end
          default: dmeta_q[cb] <= adj_new[OW:0];
        endcase
      end
      mv_cnt_q <= mv_rd ? mv_cnt_q + 5'd1 : (adj_step_i ? mv_cnt_q : 5'd0);
      // core finished the packet
      if (core_done_i) begin
        done_q[cb] <= 1'b1;
        act_q[cb] <= core_action_i;
        core_ptr_q <= inc(cb);
      end
      // input frames
      if (in_fire) begin
        if (in_sop_i) begin
          busy_q[in_ptr_q] <= 1'b1; done_q[in_ptr_q] <= 1'b0;
          len_q[in_ptr_q] <= in_len_i; ifx_q[in_ptr_q] <= in_ifindex_i; rxq_q[in_ptr_q] <= in_rxq_i;
          dstart_q[in_ptr_q] <= HEAD[OW:0]; dmeta_q[in_ptr_q] <= HEAD[OW:0];
          dend_q[in_ptr_q] <= HEAD[OW:0] + in_len_i[OW:0];
        end
        arr_q[in_ptr_q] <= in_base + FB[15:0];
        if (in_eop_i) begin
          filled_q[in_ptr_q] <= 1'b1;
          in_ptr_q <= inc(in_ptr_q);
        end else begin
          filled_q[in_ptr_q] <= 1'b0;
        end
      end
      // output frames (the harness's MAC is always ready)
      if (out_go) begin
        if (out_last) begin
          out_off_q <= 16'd0;
          busy_q[ob] <= 1'b0; filled_q[ob] <= 1'b0; done_q[ob] <= 1'b0;
          out_ptr_q <= inc(ob);
        end else begin
          out_off_q <= out_off_q + FB[15:0];
        end
      end
    end
  end
endmodule
`default_nettype wire
