// sephirot_pktbuf: packet buffers (input of 32-byte frames, active packet for the lanes, emission), xdp_md ctx.
`default_nettype none
`include "sephirot_params.vh"
`include "sephirot_bram.vh"

// NBUF buffers are used in turn: the input fills one while the core works on the previous one and the output
// emits an older one (emission in parallel with the reading of the next packet). The core may start as soon as
// the first frame is in (early processor start): a lane access to packet bytes that have not arrived yet waits.
// The bytes are kept in NB = 8 banks of 64-bit words (word w of buffer b in bank w % 8 at {b, w / 8}), the shape
// of block RAM: each bank is written at most once a cycle at the rising edge, with a byte mask, and read by each
// client at the falling edge into a register (sephirot_bram.vh). Clients: the two load ports (8 bytes at any
// offset: two words), the helper's read port, which the metadata copy also uses (8 bytes: two words),
// and the output (32 bytes at any offset: five words). Writes, one per bank and cycle, in this order: the lanes'
// two store ports (the first also writes a deferred store and the metadata copy), the zeroing, the input frame.
// - Two stores of a row to different words of one bank: the second port's store is written again, whole, through
//   the first port in the next cycle (deferred), while the next row waits (hold_o: a wait, not a core cycle,
//   execution contract section 6). Two stores to one word merge (their bytes never overlap).
// - The input frame (four words, 32-byte aligned) is written in the cycle it comes when its four banks are free;
//   otherwise it waits in a one-frame write buffer (the stores keep their cycle) and is written in the first cycle
//   in which its banks are free, beside the next frame when that one takes the other four banks. The input stops
//   (in_ready_o low) only when the buffer is full and stays full and the new frame cannot be written either. A
//   64-byte packet's two frames take the two halves of the banks, so a program whose packet stores are in one row
//   lets the input run a frame a cycle: the buffer takes the frame that meets that row, and from then on the
//   store row meets a packet's second frame, in the other half. A lane access to the bytes of the buffered frame
//   waits for them (as for bytes that have not arrived), a packet is complete for the helpers (core_filled_o)
//   and for the output only once they are written.
// - No byte of a previous packet is ever visible, with no valid bits: a program reaches bytes outside the input
//   packet only through adjust_head/adjust_meta (below data_meta) and adjust_tail growth, and these are zeroed
//   when exposed: the tail growth (the kernel's memset) and the bytes below the lowest data_meta the packet had
//   (lw_q: bytes between it and the input packet are the packet's own). The engine writes the zeros after the
//   helper's row, 32 bytes a cycle, while the next row waits; the adjust helpers start only once the whole packet
//   is in (sephirot_core.v), so no later input frame writes over them.
// - adjust_head with metadata moves the metadata with data (the kernel's memmove): after the row (and after the
//   zeroing) the engine copies it 8 bytes a cycle, reading a chunk through the helper's port while it writes the
//   one before, from the low end when the metadata moves down and from the high end when it moves up, so that no
//   chunk is read after its bytes were overwritten. Old bytes stay. (The helper still stalls one cycle per 16
//   bytes, the latency of the contract.)
// Emission sends data_meta..data_end: the first out_meta_o bytes are the metadata, the rest is the frame
// (out_data_o is 0 in the cycles without a frame, and past the frame's bytes). With SKIP_DROPS (several cores,
// sephirot_reorder) a dropped frame (XDP_DROP, XDP_ABORTED) is not emitted: the buffer reports each frame as it
// becomes whole and finished, in order (fin_o, fin_drop_o), and frees its oldest skip_i buffers (dropped frames
// whose turn came) in one cycle, emitting from the one after them.
module sephirot_pktbuf #(
  parameter integer LANES = `SEPH_LANES,
  parameter integer RP    = `SEPH_PKT_LOAD_PORTS,   // packet loads and stores per row (execution contract)
  parameter integer WP    = `SEPH_PKT_STORE_PORTS,
  parameter integer NBUF  = 3,
  parameter integer BSZ   = `SEPH_PKT_BUF_SIZE,
  parameter integer FB    = `SEPH_INPUT_BYTES_PER_CYCLE,
  parameter integer SKIP_DROPS = 0,
  /* verilator lint_off UNUSEDPARAM */
  parameter integer CORE  = 0,                 // (the drop tap of the simulation names the core)
  /* verilator lint_on UNUSEDPARAM */
  parameter integer SW    = $clog2(NBUF + 1)
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
  output wire                 adj_busy_o,      // adjust_head with metadata: its stall cycles are not over yet
  output wire                 hold_o,          // the core's next row waits: a deferred store or a zeroing or move runs
  output wire [31:0]          ctx_data_o,
  output wire [31:0]          ctx_end_o,
  // output frames
  input  wire                 out_ready_i,     // the output takes this buffer's frames (sephirot_reorder: its turn)
  output wire                 fin_o,           // SKIP_DROPS: the next frame in order is whole and finished
  output wire                 fin_drop_o,      // ... and dropped
  input  wire [SW-1:0]        skip_i,          // SKIP_DROPS: the oldest skip_i frames (dropped) departed: free them
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
  localparam [31:0] CTX_BASE = `SEPH_CTX_BASE;      // 32-byte aligned
  localparam integer CTXW = `SEPH_CTX_SIZE / 4;     // xdp_md's fields (at most 8)
  localparam integer WA = OW - 3;           // bits of a word index in a buffer
  localparam integer NB = `SEPH_PKT_BANKS;  // banks (the bank index is 3 bits below: 8)
  localparam integer BW = WA - 3;           // bits of a word's row in its bank, within a buffer
  // reading clients: the load ports, the output. The helper's reads and the metadata copy take load port 0: a row
  // calling a helper has no packet load (execution contract; the core faults a lane that tries), and the copy runs
  // while the next row waits (a client of their own was 8 block RAMs and about 500 LUTs)
  localparam integer NC = RP + 1;
  localparam integer CO = RP;
  localparam integer NIW = FB / 8;          // words of an input frame

  reg [NBUF-1:0] busy_q, filled_q, done_q;
  reg [NBUF-1:0] rep_q;                // SKIP_DROPS: the frame was reported (fin_o: all buffers may hold reported ones)
  reg [15:0]    len_q [0:NBUF-1];
  reg [15:0]    arr_q [0:NBUF-1];      // bytes arrived
  reg [OW:0]    dstart_q [0:NBUF-1];   // data, data_end, data_meta as offsets in the buffer
  reg [OW:0]    dend_q [0:NBUF-1];
  reg [OW:0]    dmeta_q [0:NBUF-1];
  reg [OW:0]    lw_q [0:NBUF-1];       // the lowest data_meta of the packet: bytes below it are not the packet's
  reg [31:0]    ifx_q [0:NBUF-1];
  reg [31:0]    rxq_q [0:NBUF-1];
  reg [31:0]    act_q [0:NBUF-1];
  reg [PW-1:0]  in_ptr_q, core_ptr_q, out_ptr_q, fin_ptr_q;
  reg [15:0]    out_off_q;            // bytes emitted of the packet at out_ptr
  // the input's write buffer: a frame whose banks were taken by the stores in the cycle it came
  reg            hv_q;
  reg [PW-1:0]   hb_q;                 // its buffer
  reg [15:0]     hbase_q;              // bytes of the packet before it
  reg [BW-1:0]   hw_q;                 // its four words' row in their banks
  reg            hw_q0;                // its banks: 4..7 (else 0..3)
  reg [8*FB-1:0] hd_q;

`include "sephirot_bytes.vh"
  function automatic [PW-1:0] inc(input [PW-1:0] p);
    inc = ({{(32-PW){1'b0}}, p} == NBUF - 1) ? {PW{1'b0}} : p + {{(PW-1){1'b0}}, 1'b1};
  endfunction
  function automatic [PW-1:0] add(input [PW-1:0] p, input [SW-1:0] n);   // p + n, n <= NBUF, in the ring
    integer a;
    a = {{(32-PW){1'b0}}, p} + {{(32-SW){1'b0}}, n};
    add = (a >= NBUF) ? a[PW-1:0] - NBUF[PW-1:0] : a[PW-1:0];
  endfunction
  function automatic dropped(input [31:0] action);   // a frame that does not leave (sephirot_reorder)
    dropped = action != 32'd`SEPH_XDP_PASS && action != 32'd`SEPH_XDP_TX && action != 32'd`SEPH_XDP_REDIRECT;
  endfunction
  wire [PW-1:0] cb = core_ptr_q;
  wire [SW-1:0] skip = (SKIP_DROPS != 0) ? skip_i : {SW{1'b0}};
  wire [PW-1:0] ob = add(out_ptr_q, skip);   // the buffer emitting (after the dropped frames departing now)
  assign core_ready_o = busy_q[cb] && !done_q[cb] && arr_q[cb] != 16'd0;
  assign core_filled_o = filled_q[cb] && !(hv_q && hb_q == cb);
  assign ctx_data_o   = PKT_BASE + {{(31-OW){1'b0}}, dstart_q[cb]};
  assign ctx_end_o    = PKT_BASE + {{(31-OW){1'b0}}, dend_q[cb]};

  // ---------------------------------------------------------------------------------------------------------
  // lane accesses to the current packet (buffer core_ptr) and to its xdp_md
  wire [31:0] meta_abs = PKT_BASE + {{(31-OW){1'b0}}, dmeta_q[cb]};
  wire [32*CTXW-1:0] ctx_img = {32'd0, rxq_q[cb], ifx_q[cb], meta_abs, ctx_end_o, ctx_data_o};
  // (the compares on the offset in the buffer only: PKT_BASE's low 28 bits are zero)
  function automatic pkt_ok(input [31:0] a, input [3:0] size);   // an access inside [data_meta, data_end)
    reg [OW+1:0] e;
    e = {1'b0, a[OW:0]} + {{(OW-2){1'b0}}, size};
    pkt_ok = a[31:28] == R_PKT && a[27:OW+1] == {(27-OW){1'b0}} && a[OW:0] >= dmeta_q[cb] && e <= {1'b0, dend_q[cb]};
  endfunction
  // one of xdp_md's 32-bit fields, the only ctx access the kernel's verifier allows (execution contract section 4)
  function automatic ctx_ok(input [31:0] a, input [3:0] size);
    ctx_ok = a[31:5] == CTX_BASE[31:5] && size == 4'd4 && a[1:0] == 2'd0 && {29'd0, a[4:2]} < CTXW;
  endfunction
  // one access of `size` bytes at `a`: its flags {wait, fault}
  function automatic [1:0] acc_flags(input rd, input wr, input [31:0] a, input [3:0] size);
    reg [15:0] e;
    acc_flags = 2'd0;
    e = {{(15-OW){1'b0}}, a[OW:0]} + {12'd0, size};
    if (rd || wr) begin
      if (a[31:28] == R_CTX) begin
        if (wr || !ctx_ok(a, size)) acc_flags[0] = 1'b1;
      end else if (a[31:28] == R_PKT) begin
        if (!pkt_ok(a, size)) acc_flags[0] = 1'b1;
        // bytes of the input packet that have not arrived yet, or wait in the write buffer: wait
        else if (!filled_q[cb] && e > HEAD[15:0] + arr_q[cb] && {{(15-OW){1'b0}}, a[OW:0]} < HEAD[15:0] + len_q[cb])
          acc_flags[1] = 1'b1;
        else if (hv_q && hb_q == cb && e > HEAD[15:0] + hbase_q &&
                 {{(15-OW){1'b0}}, a[OW:0]} < HEAD[15:0] + hbase_q + FB[15:0])
          acc_flags[1] = 1'b1;
      end else begin
        acc_flags[0] = 1'b1;
      end
    end
  endfunction
  function automatic [63:0] acc_ctx(input rd, input [31:0] a, input [3:0] size);
    acc_ctx = 64'd0;
    if (rd && ctx_ok(a, size)) acc_ctx = {32'd0, ctx_img[32*a[4:2] +: 32]};
  endfunction

  // The packet loads and stores of a row get the ports in lane order (sephirot_portsel); a lane past them faults
  // its row in the core, so its access is never served here.
  reg [LANES-1:0]    l_pkt;                       // lanes accessing the packet region
  wire [LANES*RP-1:0] p_sel;                      // lanes of load port p
  wire [32*RP-1:0]   p_addr;
  wire [4*RP-1:0]    p_size;
  wire [WP-1:0]      q_used;                      // store port q stores this cycle (only in the cycle that commits)
  wire [32*WP-1:0]   q_addr;
  wire [4*WP-1:0]    q_size;
  wire [64*WP-1:0]   q_data;
  integer li, pp;
  always @(*) for (li = 0; li < LANES; li = li + 1) l_pkt[li] = addr_i[32*li+28 +: 4] == R_PKT;
  /* verilator lint_off PINCONNECTEMPTY */
  sephirot_portsel #(.LANES(LANES), .NP(RP), .AWD(32), .DW(1)) u_ld (
    .req_i(rd_i & l_pkt), .addr_i(addr_i), .size_i(size_i), .data_i({LANES{1'b0}}), .sel_o(p_sel), .used_o(),
    .addr_o(p_addr), .size_o(p_size), .data_o(), .left_o()
  );
  sephirot_portsel #(.LANES(LANES), .NP(WP), .AWD(32)) u_st (
    .req_i(commit_i ? (wr_i & l_pkt) : {LANES{1'b0}}), .addr_i(addr_i), .size_i(size_i), .data_i(wdata_i),
    .sel_o(), .used_o(q_used), .addr_o(q_addr), .size_o(q_size), .data_o(q_data), .left_o()
  );
  /* verilator lint_on PINCONNECTEMPTY */

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
  wire adj_go = adj_commit_i && adj_ok;
  /* verilator lint_off UNUSEDSIGNAL */
  wire [31:0]   mv_new = d_meta + adj_delta_i;   // adjust_head: the metadata's new start (in the buffer when adj_ok)
  /* verilator lint_on UNUSEDSIGNAL */
  // the new data_meta of a successful adjust_head or adjust_meta (adjust_tail: the old one)
  wire [OW:0]   new_meta = (adj_kind_i == 2'd0) ? mv_new[OW:0] : (adj_kind_i == 2'd2) ? adj_new[OW:0] : dmeta_q[cb];

  // adjust_head with metadata stalls one cycle per 16 bytes of it (the contract's latency); the engine moves it
  reg  [4:0]    mv_cnt_q;
  wire          mv_need = adj_kind_i == 2'd0 && adj_ok && cur_meta != 32'd0;
  wire          mv_stalled = {23'd0, mv_cnt_q, 4'd0} >= cur_meta;
  wire          mv_step = adj_step_i && mv_need && !mv_stalled;
  assign adj_busy_o = mv_need && !mv_stalled;

  // the last store port's store, deferred when one of its words found its bank taken by another word: written
  // again, whole, through port 0 in the next cycle (its other word, if written, gets the same bytes again; a row's
  // stores never overlap: execution contract)
  reg            df_v_q;
  reg  [PW-1:0]  df_b_q;
  reg  [OW-1:0]  df_a_q;
  reg  [63:0]    df_x_q;
  reg  [3:0]     df_s_q;

  // the engine: zeroing [z_lo, z_hi) of buffer e_b (four words a cycle), then the copy of c_len bytes from c_src
  // to c_dst (8-byte chunks in the order c_up says: chunk c_k is read through the helper's port while the chunk
  // read before is written through store port 0's shifter, the lanes' stores waiting meanwhile)
  reg  [PW-1:0]  e_b_q;
  reg  [OW:0]    z_lo_q, z_hi_q;
  reg            c_go_q, c_up_q, cr_v_q;
  reg  [OW-1:0]  c_src_q, c_dst_q;
  reg  [7:0]     c_len_q;
  reg  [5:0]     c_k_q;                           // chunks read
  reg  [4:0]     cr_k_q;                          // the chunk in cr_q
  reg  [63:0]    cr_q;
  wire [5:0]     c_n = {1'b0, c_len_q[7:3]} + {5'd0, |c_len_q[2:0]};   // chunks
  wire [4:0]     c_kk = c_up_q ? c_k_q[4:0] : c_n[4:0] - 5'd1 - c_k_q[4:0];   // the chunk read now (c_k < c_n)
  wire           z_run = z_lo_q < z_hi_q;
  wire           c_rd = c_go_q && !z_run && c_k_q < c_n;
  wire           cp_wr = cr_v_q && !z_run && !df_v_q;        // the chunk read last cycle is written now
  wire [OW-1:0]  cw_o = c_dst_q + {{(OW-8){1'b0}}, cr_k_q, 3'd0};   // its destination
  wire [7:0]     cw_left = c_len_q - {cr_k_q, 3'd0};
  wire [3:0]     cw_size = (cw_left >= 8'd8) ? 4'd8 : cw_left[3:0];

  // ---------------------------------------------------------------------------------------------------------
  // reads: client c's buffer and first word; bank b's word for it, read at the falling edge
  wire [OW-1:0] ooff = dmeta_q[ob][OW-1:0] + out_off_q[OW-1:0];
  wire [OW-1:0] c_src = c_src_q + {{(OW-8){1'b0}}, c_kk, 3'd0};
  wire [OW-1:0] h_off = c_rd ? c_src : h_addr_i[OW-1:0];   // (PKT_BASE is aligned far above the buffer size)
  wire          h_sel = h_rd_i || c_rd;                    // load port 0 reads for the helper or the copy
  reg  [WA*NC-1:0] cw;
  always @(*) begin
    for (pp = 0; pp < RP; pp = pp + 1) cw[WA*pp +: WA] = p_addr[32*pp+3 +: WA];
    if (h_sel) cw[WA-1:0] = h_off[OW-1:3];
    cw[WA*CO +: WA] = {WA{1'b0}};   // (the output's word is co_w0)
  end
  wire [WA-1:0] co_w0 = ooff[OW-1:3];
  wire [63:0]   rq [0:NB*NC-1];                   // bank b's word for client c at rq[NB * c + b]
  function automatic [63:0] cword(input integer c, input [2:0] w0, input [2:0] j);   // word w0 + j of client c
    reg [2:0] b;
    b = w0 + j;
    cword = rq[NB*c + {29'd0, b}];
  endfunction

  // ---------------------------------------------------------------------------------------------------------
  // writes: the sources' words, then per bank the first source that has a word there
  // store ports: words w and w + 1 of port q, the bytes and masks shifted to them
  reg  [WA-1:0]  sw [0:2*WP-1];
  reg  [63:0]    sd [0:2*WP-1];
  reg  [7:0]     sm [0:2*WP-1];
  reg  [127:0]   st_d;
  reg  [15:0]    st_m;
  reg  [OW-1:0]  st_a;
  reg  [63:0]    st_x;
  reg  [3:0]     st_s;
  integer sq;
  always @(*) begin
    for (sq = 0; sq < WP; sq = sq + 1) begin
      st_d = 128'd0; st_m = 16'd0;
      st_a = q_addr[32*sq +: OW]; st_x = q_data[64*sq +: 64]; st_s = q_size[4*sq +: 4];
      if (sq == 0 && df_v_q) begin st_a = df_a_q; st_x = df_x_q; st_s = df_s_q; end
      else if (sq == 0 && cp_wr) begin st_a = cw_o; st_x = cr_q; st_s = cw_size; end
      if (q_used[sq] || (sq == 0 && (df_v_q || cp_wr))) begin
        st_d = {64'd0, st_x & bytemask(sizemask(st_s))} << {st_a[2:0], 3'd0};   // (zero past the store: merged by OR)
        st_m = {8'd0, sizemask(st_s)} << st_a[2:0];
      end
      sw[2*sq] = st_a[OW-1:3];
      sw[2*sq+1] = st_a[OW-1:3] + {{(WA-1){1'b0}}, 1'b1};
      sd[2*sq] = st_d[63:0];   sm[2*sq] = st_m[7:0];
      sd[2*sq+1] = st_d[127:64]; sm[2*sq+1] = st_m[15:8];
    end
  end
  wire any_st = |q_used;
  wire [PW-1:0] st_b = df_v_q ? df_b_q : cp_wr ? e_b_q : cb;   // the stores' buffer

  wire           e_busy = z_run || c_go_q || cr_v_q;
  wire           e_run = e_busy && !df_v_q;
  assign hold_o = df_v_q || e_busy;
  // the zeroing's words this cycle: four from z_w0, with their byte masks
  wire [WA-1:0]  z_w0 = z_lo_q[OW-1:3];
  wire [OW:0]    z_span = z_hi_q - {1'b0, z_w0, 3'd0};
  wire [5:0]     z_top = (z_span > 32) ? 6'd32 : z_span[5:0];
  wire           z_wr = e_run && z_run;
  reg  [31:0]    z_m;
  always @(*) begin   // (only when the engine zeroes: the simulator evaluates the shifts otherwise)
    z_m = 32'd0;
    if (z_wr) z_m = (32'hffffffff << z_lo_q[2:0]) & (z_top[5] ? 32'hffffffff : ~(32'hffffffff << z_top[4:0]));
  end

  // the input frame
  wire [15:0]   in_base = in_sop_i ? 16'd0 : arr_q[in_ptr_q];   // bytes of the packet before this frame
  // (HEAD and the frames are 32-byte aligned: the frame is words 4 in_q .. 4 in_q + 3, bank b takes its word b % 4)
  wire [WA-3:0] in_q = HEAD[OW-1:5] + in_base[OW-1:5];
  wire          in_room = !busy_q[in_ptr_q] || !filled_q[in_ptr_q];

  // per bank: the word written this cycle
  reg  [NB-1:0]     bk_we, bk_df;                  // bk_df: the second store port's word waits for the next cycle
  reg  [PW+BW-1:0]  bk_ix [0:NB-1];
  reg  [63:0]       bk_d [0:NB-1];
  reg  [7:0]        bk_m [0:NB-1];
  reg  [NB-1:0]     bk_in;                         // banks of the input frame
  reg  [2:0]        bj;
  integer bk, bs;
  always @(*) begin
    bj = 3'd0;
    for (bk = 0; bk < NB; bk = bk + 1) begin
      bk_we[bk] = 1'b0; bk_df[bk] = 1'b0; bk_ix[bk] = {(PW+BW){1'b0}}; bk_d[bk] = 64'd0; bk_m[bk] = 8'd0;
      if (any_st || cp_wr || df_v_q) begin
        // port 0's word, then port 1's: merged into the same word, deferred from another one
        for (bs = 0; bs < 2 * WP; bs = bs + 1)
          if (|sm[bs] && sw[bs][2:0] == bk[2:0]) begin
            if (!bk_we[bk]) begin
              bk_we[bk] = 1'b1; bk_ix[bk] = {st_b, sw[bs][WA-1:3]}; bk_d[bk] = sd[bs]; bk_m[bk] = sm[bs];
            end else if (bk_ix[bk] == {st_b, sw[bs][WA-1:3]}) begin
              bk_d[bk] = bk_d[bk] | sd[bs]; bk_m[bk] = bk_m[bk] | sm[bs];
            end else begin
              bk_df[bk] = 1'b1;
            end
          end
      end else if (z_wr) begin
        bj = bk[2:0] - z_w0[2:0];
        if (bj < 3'd4) begin
          bk_ix[bk] = {e_b_q, z_w0[WA-1:3] + {{(BW-1){1'b0}}, bk[2:0] < z_w0[2:0]}};
          bk_m[bk] = z_m[8*bj[1:0] +: 8];
          bk_we[bk] = |bk_m[bk];
        end
      end
    end
  end
  // the input frame's banks; the buffered frame's. The buffered frame is written when its banks are free, the new
  // one when its banks are free of the stores and of the buffered frame; a new frame that is not written goes
  // into the buffer, which must then be empty at the end of the cycle.
  always @(*) bk_in = in_q[0] ? 8'hf0 : 8'h0f;
  wire [NB-1:0] bk_h = hw_q0 ? 8'hf0 : 8'h0f;
  wire h_wr = hv_q && !(|(bk_we & bk_h));
  wire in_free = !(|((bk_we | (h_wr ? bk_h : {NB{1'b0}})) & bk_in));
  assign in_ready_o = in_room && (in_free || !hv_q || h_wr);
  wire in_fire = in_valid_i && in_ready_o;
  wire in_wr = in_fire && in_free;
  wire in_hold = in_fire && !in_free;

  // ---------------------------------------------------------------------------------------------------------
  // the banks
  reg  [NC-1:0]     c_en;                          // clients reading this cycle (below)
  // (B < x is constant for bank 0: the row of bank 0 never carries)
  /* verilator lint_off CMPCONST */
  genvar gb, gc;
  generate
    for (gb = 0; gb < NB; gb = gb + 1) begin : gen_bank
      localparam [2:0] B = gb;
      (* ram_style = "block" *) reg [63:0] mem_q [0:NBUF*BSZ/64-1];
      wire             iw = in_wr && bk_in[gb];
      wire             hw = h_wr && bk_h[gb];
      wire [PW+BW-1:0] wix = iw ? {in_ptr_q, in_q[WA-3:1]} : hw ? {hb_q, hw_q} : bk_ix[gb];
      wire [63:0]      wd = iw ? in_data_i[64*B[1:0] +: 64] : hw ? hd_q[64*B[1:0] +: 64] : bk_d[gb];
      wire [7:0]       wm = (iw || hw) ? 8'hff : bk_m[gb];
      integer k;
      always @(posedge clk_i)
        if (iw || hw || bk_we[gb]) for (k = 0; k < 8; k = k + 1) if (wm[k]) mem_q[wix][8*k +: 8] <= wd[8*k +: 8];
      for (gc = 0; gc < NC; gc = gc + 1) begin : gen_rd
        wire [WA-1:0]    w0 = (gc == CO) ? co_w0 : cw[WA*gc +: WA];
        // (the copy reads the engine's buffer: the packet may have ended in the adjust_head row, cb is the next one)
        wire [PW-1:0]    rb = (gc == CO) ? ob : (gc == 0 && c_rd) ? e_b_q : cb;
        wire [BW-1:0]    r  = w0[WA-1:3] + {{(BW-1){1'b0}}, B < w0[2:0]};
        reg  [63:0]      q;
        `SEPH_BRAM_READ(q, c_en[gc], mem_q[{rb, r}])
        assign rq[NB*gc+gb] = q;
      end
    end
  endgenerate

`ifdef SEPH_DROP_TAP
  // simulation only (hxdp.rtl.sim with several cores): a dropped frame leaves nowhere, but the harness reports its
  // bytes (data_meta..data_end, the first of them metadata) as the packet's result, which the kernel comparison
  // reads; they are read here at once when the frame departs, nothing of it is hardware
  import "DPI-C" function void seph_drop_frame(input int core, input int metalen);
  import "DPI-C" function void seph_drop_byte(input int core, input byte data);
  function automatic [63:0] tap_word(input [PW-1:0] b, input [WA-1:0] w);
    case (w[2:0])
      3'd0: tap_word = gen_bank[0].mem_q[{b, w[WA-1:3]}];
      3'd1: tap_word = gen_bank[1].mem_q[{b, w[WA-1:3]}];
      3'd2: tap_word = gen_bank[2].mem_q[{b, w[WA-1:3]}];
      3'd3: tap_word = gen_bank[3].mem_q[{b, w[WA-1:3]}];
      3'd4: tap_word = gen_bank[4].mem_q[{b, w[WA-1:3]}];
      3'd5: tap_word = gen_bank[5].mem_q[{b, w[WA-1:3]}];
      3'd6: tap_word = gen_bank[6].mem_q[{b, w[WA-1:3]}];
      default: tap_word = gen_bank[7].mem_q[{b, w[WA-1:3]}];
    endcase
  endfunction
  integer tj, tb;
  reg [PW-1:0] tbuf;
  reg [63:0]   tword;
  /* verilator lint_off BLKSEQ */
  /* verilator lint_off UNSIGNED */
  always @(posedge clk_i)
    for (tj = 0; tj < NBUF; tj = tj + 1)
      if (tj < {{(32-SW){1'b0}}, skip}) begin
        tbuf = add(out_ptr_q, tj[SW-1:0]);
        seph_drop_frame(CORE, {{(31-OW){1'b0}}, dstart_q[tbuf]} - {{(31-OW){1'b0}}, dmeta_q[tbuf]});
        for (tb = {{(31-OW){1'b0}}, dmeta_q[tbuf]}; tb < {{(31-OW){1'b0}}, dend_q[tbuf]}; tb = tb + 1) begin
          tword = tap_word(tbuf, tb[OW-1:3]);
          seph_drop_byte(CORE, tword[8*tb[2:0] +: 8]);
        end
      end
  /* verilator lint_on UNSIGNED */
  /* verilator lint_on BLKSEQ */
`endif
  /* verilator lint_on CMPCONST */

  // ---------------------------------------------------------------------------------------------------------
  // the lanes' loads and the helper's read
  // port 0's funnel, shared by its lane and the helper or the copy: 8 bytes from their offset (computed in the cycles
  // that read: the simulator evaluates continuous wires every cycle)
  reg [63:0] f0;
  always @(*) begin
    f0 = 64'd0;
    if (h_sel || |p_sel[LANES-1:0])
      f0 = funnel8(cword(0, cw[2:0], 3'd0), cword(0, cw[2:0], 3'd1), h_sel ? h_off[2:0] : p_addr[2:0]);
  end
  reg [64*RP-1:0] p_rdata;
  reg [1:0]       acc;
  always @(*) begin
    for (pp = 0; pp < RP; pp = pp + 1) begin
      p_rdata[64*pp +: 64] = 64'd0;
      if (|p_sel[LANES*pp +: LANES] && pkt_ok(p_addr[32*pp +: 32], p_size[4*pp +: 4]))
        p_rdata[64*pp +: 64] = ((pp == 0) ? f0 : funnel8(cword(pp, cw[WA*pp +: 3], 3'd0),
                                 cword(pp, cw[WA*pp +: 3], 3'd1), p_addr[32*pp +: 3])) &
                               bytemask(sizemask(p_size[4*pp +: 4]));
    end
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
  reg [1:0]  hacc;
  // (the copy's chunk, 8 bytes from c_src, comes through the same funnel)
  reg  [63:0] h_raw;
  always @(*) begin
    h_raw = 64'd0;
    if (h_sel) h_raw = f0;
    hacc = acc_flags(h_rd_i, 1'b0, h_addr_i, h_size_i);
    h_rdata_o = acc_ctx(h_rd_i, h_addr_i, h_size_i);
    if (h_rd_i && pkt_ok(h_addr_i, h_size_i)) h_rdata_o = h_raw & bytemask(sizemask(h_size_i));
    h_fault_o = hacc[0];
  end

  // ---------------------------------------------------------------------------------------------------------
  // output: emit the oldest finished packet, one frame per cycle, data_meta..data_end
  // a buffer is whole and finished: its packet ended, its frames are in, no write to it is pending
  function automatic whole(input [PW-1:0] b);
    whole = busy_q[b] && done_q[b] && filled_q[b] && !(e_busy && e_b_q == b) && !(df_v_q && df_b_q == b) &&
            !(hv_q && hb_q == b);
  endfunction
  wire          out_go = out_ready_i && whole(ob) && !(SKIP_DROPS != 0 && dropped(act_q[ob]));
  // SKIP_DROPS: each frame reported once, in order, as it becomes whole
  wire [PW-1:0] fb = fin_ptr_q;
  assign fin_o = SKIP_DROPS != 0 && whole(fb) && !rep_q[fb];
  assign fin_drop_o = dropped(act_q[fb]);
  wire [15:0]   out_len = {{(15-OW){1'b0}}, dend_q[ob]} - {{(15-OW){1'b0}}, dmeta_q[ob]};
  /* verilator lint_off UNUSEDSIGNAL */
  wire [OW:0]   out_mlen = dstart_q[ob] - dmeta_q[ob];   // at most 252
  /* verilator lint_on UNUSEDSIGNAL */
  wire [15:0]   out_left = out_len - out_off_q;
  wire          out_last = {16'd0, out_left} <= FB;
  reg  [64*(NIW+1)-1:0] o_words;
  wire [FB-1:0] o_keep = out_last ? ~({FB{1'b1}} << out_left[5:0]) : {FB{1'b1}};   // the frame's bytes
  integer oi;
  always @(*) begin
    out_valid_o = out_go;
    out_sop_o = out_off_q == 16'd0;
    out_eop_o = out_last;
    out_bytes_o = out_last ? out_left[5:0] : FB[5:0];
    out_action_o = act_q[ob];
    out_meta_o = out_mlen[7:0];
    // (0 in the cycles without a frame: the simulation skips the shifts)
    out_data_o = {8*FB{1'b0}};
    o_words = {64*(NIW+1){1'b0}};
    if (out_go) begin
      for (oi = 0; oi <= NIW; oi = oi + 1) o_words[64*oi +: 64] = cword(CO, co_w0[2:0], oi[2:0]);
      o_words = o_words >> {ooff[2:0], 3'd0};
      for (oi = 0; oi < FB; oi = oi + 1) if (o_keep[oi]) out_data_o[8*oi +: 8] = o_words[8*oi +: 8];
    end
  end

  always @(*) begin
    for (pp = 0; pp < RP; pp = pp + 1) c_en[pp] = |p_sel[LANES*pp +: LANES];
    c_en[0] = c_en[0] || h_sel;
    c_en[CO] = out_go;
  end

  // ---------------------------------------------------------------------------------------------------------
  // state
  always @(posedge clk_i) begin
    if (c_rd && e_run) begin cr_q <= h_raw; cr_k_q <= c_kk; end
    // the last store port's store, in case it is deferred
    df_a_q <= q_addr[32*(WP-1) +: OW]; df_x_q <= q_data[64*(WP-1) +: 64]; df_s_q <= q_size[4*(WP-1) +: 4];
    df_b_q <= cb;
    if (in_hold) begin hb_q <= in_ptr_q; hw_q <= in_q[WA-3:1]; hw_q0 <= in_q[0]; hbase_q <= in_base; hd_q <= in_data_i; end
  end
  // (only the last port's words can find their bank taken: port 0 comes first, and its two words are in two banks)
  wire df_d = WP > 1 && !df_v_q && any_st && |bk_df;
  integer sk;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= {NBUF{1'b0}}; filled_q <= {NBUF{1'b0}}; done_q <= {NBUF{1'b0}}; rep_q <= {NBUF{1'b0}};
      in_ptr_q <= {PW{1'b0}}; core_ptr_q <= {PW{1'b0}}; out_ptr_q <= {PW{1'b0}}; fin_ptr_q <= {PW{1'b0}};
      out_off_q <= 16'd0;
      mv_cnt_q <= 5'd0; df_v_q <= 1'b0; hv_q <= 1'b0;
      e_b_q <= {PW{1'b0}}; z_lo_q <= {(OW+1){1'b0}}; z_hi_q <= {(OW+1){1'b0}};
      c_go_q <= 1'b0; c_up_q <= 1'b0; cr_v_q <= 1'b0; c_src_q <= {OW{1'b0}}; c_dst_q <= {OW{1'b0}};
      c_len_q <= 8'd0; c_k_q <= 6'd0;
    end else begin
      df_v_q <= df_d;
      hv_q <= in_hold || (hv_q && !h_wr);
      // the engine: four words a cycle
      if (e_run) begin
        if (z_run) z_lo_q <= (z_span > 32) ? {1'b0, z_w0 + {{(WA-3){1'b0}}, 3'd4}, 3'd0} : z_hi_q;
        else begin
          cr_v_q <= c_rd;
          if (c_rd) c_k_q <= c_k_q + 6'd1;
          else c_go_q <= 1'b0;
        end
      end
      // packet adjustment: the new pointers, and the engine's zeroing and move (after the row)
      mv_cnt_q <= mv_step ? mv_cnt_q + 5'd1 : (adj_step_i ? mv_cnt_q : 5'd0);
      if (adj_go) begin
        case (adj_kind_i)
          2'd0: begin dstart_q[cb] <= adj_new[OW:0]; dmeta_q[cb] <= mv_new[OW:0]; end
          2'd1: dend_q[cb] <= adj_new[OW:0];
          default: dmeta_q[cb] <= adj_new[OW:0];
        endcase
        e_b_q <= cb;
        if (adj_kind_i == 2'd1) begin
          if (adj_new[OW:0] > dend_q[cb]) begin z_lo_q <= dend_q[cb]; z_hi_q <= adj_new[OW:0]; end
        end else if (new_meta < lw_q[cb]) begin
          z_lo_q <= new_meta; z_hi_q <= lw_q[cb]; lw_q[cb] <= new_meta;
        end
        if (mv_need && adj_delta_i != 32'd0) begin
          c_go_q <= 1'b1; c_k_q <= 6'd0; c_src_q <= d_meta[OW-1:0]; c_dst_q <= mv_new[OW-1:0];
          c_len_q <= cur_meta[7:0]; c_up_q <= mv_new[OW:0] < dmeta_q[cb];
        end
      end
      // core finished the packet
      if (core_done_i) begin
        done_q[cb] <= 1'b1;
        act_q[cb] <= core_action_i;
        core_ptr_q <= inc(cb);
      end
      // input frames
      if (in_fire) begin
        if (in_sop_i) begin
          busy_q[in_ptr_q] <= 1'b1; done_q[in_ptr_q] <= 1'b0; rep_q[in_ptr_q] <= 1'b0;
          len_q[in_ptr_q] <= in_len_i; ifx_q[in_ptr_q] <= in_ifindex_i; rxq_q[in_ptr_q] <= in_rxq_i;
          dstart_q[in_ptr_q] <= HEAD[OW:0]; dmeta_q[in_ptr_q] <= HEAD[OW:0]; lw_q[in_ptr_q] <= HEAD[OW:0];
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
      // output frames (the MAC is always ready; several cores take turns, sephirot_reorder); the dropped frames
      // that departed now are freed (SKIP_DROPS: they are the oldest, before ob)
      if (fin_o) begin fin_ptr_q <= inc(fb); rep_q[fb] <= 1'b1; end
      // (without SKIP_DROPS skip is 0: the compare is constant)
      /* verilator lint_off UNSIGNED */
      for (sk = 0; sk < NBUF; sk = sk + 1)
        if (sk < {{(32-SW){1'b0}}, skip}) begin
          busy_q[add(out_ptr_q, sk[SW-1:0])] <= 1'b0; filled_q[add(out_ptr_q, sk[SW-1:0])] <= 1'b0;
          done_q[add(out_ptr_q, sk[SW-1:0])] <= 1'b0;
        end
      /* verilator lint_on UNSIGNED */
      if (out_go && out_last) begin
        out_off_q <= 16'd0;
        busy_q[ob] <= 1'b0; filled_q[ob] <= 1'b0; done_q[ob] <= 1'b0;
        out_ptr_q <= inc(ob);
      end else begin
        if (out_go) out_off_q <= out_off_q + FB[15:0];
        out_ptr_q <= ob;
      end
    end
  end
endmodule
`default_nettype wire
