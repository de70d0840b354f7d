// sephirot_sume_emit: the board's emitted packets to one NetFPGA AXI-Stream (store and forward, tuser on beat 1).
`default_nettype none
`include "sephirot_params.vh"

// The board emits every packet, whatever its action, one 32-byte frame a cycle and never waits (its MAC is always
// ready); the packet's result (action, redirect) comes first (pkt_done), in the order the packets entered. This
// module keeps the ingress port of each packet (acc_*: a packet's first frame taken by the board), turns the result
// into NetFPGA destination bits (tuser[31:24], one-hot: port k = bit 2k, the host's DMA queue of port k = bit 2k+1):
//   XDP_TX -> the ingress port; XDP_REDIRECT to ifindex i -> port i - 1 (i > NPORTS: dropped); a broadcast -> the
//   ports of its mask (bit 31: without the ingress port); a host queue (cpumap, xskmap) -> the ingress port's DMA
//   queue, if the board delivered it (then its queue is popped: the DMA engine took it); XDP_PASS -> the ingress
//   port's DMA queue (the host stack); DROP, ABORTED, other -> nowhere.
// A packet that goes somewhere is stored whole (frames in block RAM, then a descriptor: length, source, destination)
// and sent with tuser = {dst, src, length} on its first beat. Dropped here, counted in drops_o: a packet finding
// less than MAXF free frames or a full descriptor queue (the output queues are slower than the board), and a packet
// with XDP metadata in front (bpf_xdp_adjust_meta: stripping it needs a byte realignment this module lacks).
module sephirot_sume_emit #(
  parameter integer NPORTS = 4,
  parameter integer DEPTH  = 512,  // frames of 32 bytes stored (16 KiB)
  parameter integer MAXF   = 72,   // frames of the longest emission (2304 bytes: a frame behind 256 bytes of head)
  parameter integer NDESC  = 16
) (
  input  wire              clk_i,
  input  wire              rst_ni,
  // a packet's first frame was taken by the board from port acc_port_i
  input  wire              acc_i,
  input  wire [1:0]        acc_port_i,
  // the result of the oldest packet in the core
  input  wire              done_i,
  input  wire [31:0]       action_i,
  input  wire              redir_valid_i,
  input  wire [1:0]        redir_kind_i,
  input  wire [31:0]       redir_port_i,
  input  wire              host_ok_i,
  // the emission (results and emissions come in the same order)
  input  wire              out_valid_i,
  input  wire [255:0]      out_data_i,
  input  wire              out_sop_i,
  input  wire              out_eop_i,
  input  wire [5:0]        out_bytes_i,
  input  wire [7:0]        out_meta_i,
  // the host's DMA engine took a frame of host queue host_pop_q_o
  output reg               host_pop_o,
  output reg  [31:0]       host_pop_q_o,
  output reg  [31:0]       drops_o,
  // AXI-Stream master (NetFPGA: 256-bit data, 128-bit tuser)
  output wire [255:0]      m_tdata_o,
  output wire [31:0]       m_tkeep_o,
  output wire [127:0]      m_tuser_o,
  output wire              m_tvalid_o,
  input  wire              m_tready_i,
  output wire              m_tlast_o
);
  localparam integer FW = $clog2(DEPTH);
  localparam integer DW = $clog2(NDESC);
  localparam integer RQ = 16;  // packets between acceptance and emission (the core and its buffers hold fewer)

  // --- ingress ports in order, then the results with their destination ---------------------------------------------
  reg [1:0]  port_q [0:RQ-1];
  reg [3:0]  pw_q, pr_q;
  reg [14:0] res_q [0:RQ-1];   // {host pop, host queue id [5:0], destination [7:0]}
  reg [1:0]  src_q [0:RQ-1];
  reg [3:0]  rw_q, rr_q;
  wire [1:0] in_port = port_q[pr_q];

  function automatic [7:0] port_bit(input [31:0] p);  // port p (0-based) as the NetFPGA's one-hot bit
    port_bit = (p < NPORTS) ? (8'd1 << {p[1:0], 1'b0}) : 8'd0;
  endfunction

  reg [7:0] dst;
  reg [5:0] hq;
  reg       hpop;
  integer   bi;
  always @(*) begin
    dst = 8'd0; hq = 6'd0; hpop = 1'b0;
    if (action_i == 32'd`SEPH_XDP_TX) dst = port_bit({30'd0, in_port});
    else if (action_i == 32'd`SEPH_XDP_PASS) dst = port_bit({30'd0, in_port}) << 1;
    else if (action_i == 32'd`SEPH_XDP_REDIRECT && redir_valid_i) begin
      case (redir_kind_i)
        2'd`SEPH_REDIRECT_PORT: dst = (redir_port_i != 32'd0) ? port_bit(redir_port_i - 32'd1) : 8'd0;
        2'd`SEPH_REDIRECT_BROADCAST: begin
          for (bi = 0; bi < NPORTS; bi = bi + 1)
            if (redir_port_i[bi] && !(redir_port_i[31] && bi[1:0] == in_port)) dst = dst | port_bit(bi);
        end
        default: begin  // a host queue: the frame goes up by the DMA queue of its ingress port
          hpop = host_ok_i;
          hq = {redir_kind_i == 2'd`SEPH_REDIRECT_XSK, redir_port_i[4:0]};
          dst = host_ok_i ? port_bit({30'd0, in_port}) << 1 : 8'd0;
        end
      endcase
    end
  end

  always @(posedge clk_i) begin
    if (acc_i) port_q[pw_q] <= acc_port_i;
    if (done_i) begin
      res_q[rw_q] <= {hpop, hq, dst};
      src_q[rw_q] <= in_port;
    end
  end

  // --- store: frames of a kept packet, its descriptor at its end --------------------------------------------------
  reg [261:0]  mem_q [0:DEPTH-1];  // {bytes, data}
  reg [FW:0]   wp_q, rp_q;
  reg [31:0]   desc_q [0:NDESC-1];  // {source bit [7:0], destination [7:0], length [15:0]}
  reg [DW:0]   dw_q, dr_q;
  reg          keep_q;
  reg [15:0]   len_q;
  wire [14:0]  res = res_q[rr_q];
  wire [FW:0]  used = wp_q - rp_q;
  wire         room = (DEPTH[FW:0] - used) >= MAXF[FW:0] && (dw_q - dr_q) < NDESC[DW:0];
  wire         keep_now = out_sop_i ? (res[7:0] != 8'd0 && out_meta_i == 8'd0 && room) : keep_q;
  wire         wr = out_valid_i && keep_now;
  wire [15:0]  len_now = (out_sop_i ? 16'd0 : len_q) + {10'd0, out_bytes_i};

  always @(posedge clk_i) begin
    if (wr) mem_q[wp_q[FW-1:0]] <= {out_bytes_i, out_data_i};
    if (wr && out_eop_i)
      desc_q[dw_q[DW-1:0]] <= {port_bit({30'd0, src_q[rr_q]}), res[7:0], len_now};
  end

  // --- forward: a descriptor's packet, its tuser on the first beat --------------------------------------------------
  // The frame memory is read only into the output register (a block RAM with its read enable); where a packet
  // ends is counted from its descriptor (every frame but the last is full: sephirot_pktbuf emits 32-byte frames).
  reg          ov_q, olast_q, inpkt_q;
  reg [7:0]    rem_q;          // frames of the packet still to read after this one
  reg [255:0]  odata_q;
  reg [5:0]    obytes_q;
  reg [31:0]   ouser_q;
  wire         adv = !ov_q || m_tready_i;
  wire         avail = used != {(FW+1){1'b0}} && (inpkt_q || dw_q != dr_q);
  wire         rd_en = adv && avail;
  wire [31:0]  d = desc_q[dr_q[DW-1:0]];
  // frames = ceil(length / 32), at most MAXF (72): bits 12:5 of length + 31
  /* verilator lint_off UNUSEDSIGNAL */
  wire [15:0]  d_len31 = d[15:0] + 16'd31;
  /* verilator lint_on UNUSEDSIGNAL */
  wire [7:0]   rem_next = inpkt_q ? rem_q - 8'd1 : d_len31[12:5] - 8'd1;

  always @(posedge clk_i) begin
    if (rd_en) begin
      {obytes_q, odata_q} <= mem_q[rp_q[FW-1:0]];
      ouser_q <= inpkt_q ? 32'd0 : {d[23:16], d[31:24], d[15:0]};  // {dst, src, length}
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pw_q <= 4'd0; pr_q <= 4'd0; rw_q <= 4'd0; rr_q <= 4'd0; wp_q <= {(FW+1){1'b0}}; rp_q <= {(FW+1){1'b0}};
      dw_q <= {(DW+1){1'b0}}; dr_q <= {(DW+1){1'b0}}; keep_q <= 1'b0; len_q <= 16'd0; ov_q <= 1'b0;
      inpkt_q <= 1'b0; rem_q <= 8'd0; olast_q <= 1'b0; drops_o <= 32'd0; host_pop_o <= 1'b0; host_pop_q_o <= 32'd0;
    end else begin
      if (acc_i) pw_q <= pw_q + 4'd1;
      if (done_i) begin
        rw_q <= rw_q + 4'd1;
        pr_q <= pr_q + 4'd1;
      end
      host_pop_o <= 1'b0;
      if (out_valid_i) begin
        keep_q <= keep_now;
        len_q <= len_now;
        if (out_sop_i && res[7:0] != 8'd0 && !keep_now) drops_o <= drops_o + 32'd1;
        if (out_eop_i) begin
          rr_q <= rr_q + 4'd1;
          if (keep_now) begin
            dw_q <= dw_q + {{DW{1'b0}}, 1'b1};
            host_pop_o <= res[14];
            host_pop_q_o <= {27'd0, res[13] ? 5'd`SEPH_HOSTQ_PER_KIND + res[12:8] : res[12:8]};
          end
        end
      end
      if (wr) wp_q <= wp_q + {{FW{1'b0}}, 1'b1};
      if (adv) ov_q <= avail;
      if (rd_en) begin
        rp_q <= rp_q + {{FW{1'b0}}, 1'b1};
        if (!inpkt_q) dr_q <= dr_q + {{DW{1'b0}}, 1'b1};
        rem_q <= rem_next;
        inpkt_q <= rem_next != 8'd0;
        olast_q <= rem_next == 8'd0;
      end
    end
  end

  assign m_tvalid_o = ov_q;
  assign m_tdata_o = odata_q;
  assign m_tkeep_o = (obytes_q >= 6'd32) ? 32'hFFFF_FFFF : ((32'd1 << obytes_q[4:0]) - 32'd1);
  assign m_tuser_o = {96'd0, ouser_q};
  assign m_tlast_o = olast_q;
endmodule
`default_nettype wire
