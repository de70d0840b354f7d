// sephirot_hostq: the host queues of the board: the DMA path to the host for frames redirected to a CPU or a socket.
`default_nettype none
`include "sephirot_params.vh"

// HOSTQ_PER_KIND queues of each kind: queue q < HOSTQ_PER_KIND is CPU q's (cpumap redirects), queue
// HOSTQ_PER_KIND + i the AF_XDP queue i's (xskmap redirects). A finished packet redirected to a host queue is delivered
// when its queue holds fewer frames than its size (the cpumap entry's qsize, the xskmap entry's ring size, as the map
// FSM read them), else dropped and counted; a queue the board lacks drops it too. The host takes a queue's oldest
// frame with pop_i (its DMA engine's completion). Registers (docs/board.md): read at raddr_i, an offset in the
// AXI_HOSTQ page, as rdata_o when rok_o.
module sephirot_hostq #(
  parameter integer NK = `SEPH_HOSTQ_PER_KIND
) (
  input  wire        clk_i,
  input  wire        rst_ni,
  input  wire        done_i,      // a packet redirected to a host queue finished this cycle
  input  wire        xsk_i,       // its queue is an AF_XDP socket's (else a CPU's)
  input  wire [31:0] id_i,        // CPU or AF_XDP queue id
  input  wire [15:0] size_i,      // the queue's size from the map entry
  output wire        deliver_o,   // the packet of done_i goes to its queue (else it is dropped)
  input  wire        pop_i,       // the host took the oldest frame of queue pop_q_i
  input  wire [31:0] pop_q_i,
  input  wire        clr_i,       // clear every counter (the queues empty)
  input  wire [15:0] raddr_i,
  output reg  [31:0] rdata_o,
  output reg         rok_o
);
  localparam integer NQ = 2 * NK;
  localparam integer QW = $clog2(NQ);
  localparam [31:0] A_KIND = `SEPH_AXI_HOSTQ_PER_KIND, A_DELIV = `SEPH_AXI_HOSTQ_DELIVERED;
  localparam [31:0] A_FULL = `SEPH_AXI_HOSTQ_FULL, A_NOQ = `SEPH_AXI_HOSTQ_NOQUEUE, A_BASE = `SEPH_AXI_HOSTQ_BASE;
  localparam [15:0] R_KIND = A_KIND[15:0], R_DELIV = A_DELIV[15:0], R_FULL = A_FULL[15:0], R_NOQ = A_NOQ[15:0];
  localparam [15:0] R_BASE = A_BASE[15:0];
  localparam integer STRIDE = `SEPH_AXI_HOSTQ_STRIDE;

  reg  [31:0] tail_q [0:NQ-1];   // frames delivered
  reg  [31:0] head_q [0:NQ-1];   // frames the host took
  reg  [31:0] drop_q [0:NQ-1];   // frames dropped, queue full
  reg  [15:0] size_q [0:NQ-1];   // size at the last frame
  reg  [31:0] deliv_q, full_q, noq_q;

  wire        have  = id_i < NK;
  wire [QW-1:0] q   = {xsk_i, id_i[QW-2:0]};
  wire [31:0] used  = tail_q[q] - head_q[q];
  wire        room  = used < {16'd0, size_i};
  assign deliver_o = done_i && have && room;
  wire        pop_ok = pop_i && pop_q_i < NQ && tail_q[pop_q_i[QW-1:0]] != head_q[pop_q_i[QW-1:0]];

  integer i;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (i = 0; i < NQ; i = i + 1) begin
        tail_q[i] <= 32'd0; head_q[i] <= 32'd0; drop_q[i] <= 32'd0; size_q[i] <= 16'd0;
      end
      deliv_q <= 32'd0; full_q <= 32'd0; noq_q <= 32'd0;
    end else if (clr_i) begin
      for (i = 0; i < NQ; i = i + 1) begin
        tail_q[i] <= 32'd0; head_q[i] <= 32'd0; drop_q[i] <= 32'd0; size_q[i] <= 16'd0;
      end
      deliv_q <= 32'd0; full_q <= 32'd0; noq_q <= 32'd0;
    end else begin
      if (done_i && !have) noq_q <= noq_q + 32'd1;
      if (done_i && have) size_q[q] <= size_i;
      if (deliver_o) begin tail_q[q] <= tail_q[q] + 32'd1; deliv_q <= deliv_q + 32'd1; end
      if (done_i && have && !room) begin drop_q[q] <= drop_q[q] + 32'd1; full_q <= full_q + 32'd1; end
      if (pop_ok) head_q[pop_q_i[QW-1:0]] <= head_q[pop_q_i[QW-1:0]] + 32'd1;
    end
  end

  // registers: the totals, then STRIDE bytes a queue
  wire [15:0] roff = raddr_i - R_BASE;
  wire [15:0] rq   = roff / STRIDE[15:0];
  always @(*) begin
    rok_o = 1'b1;
    rdata_o = 32'd0;
    if (raddr_i == R_KIND) rdata_o = NK;
    else if (raddr_i == R_DELIV) rdata_o = deliv_q;
    else if (raddr_i == R_FULL) rdata_o = full_q;
    else if (raddr_i == R_NOQ) rdata_o = noq_q;
    else if (raddr_i >= R_BASE && {16'd0, rq} < NQ && raddr_i[1:0] == 2'b00)
      case (roff[3:2])
        2'd0: rdata_o = tail_q[rq[QW-1:0]];
        2'd1: rdata_o = head_q[rq[QW-1:0]];
        2'd2: rdata_o = drop_q[rq[QW-1:0]];
        default: rdata_o = {16'd0, size_q[rq[QW-1:0]]};
      endcase
    else rok_o = 1'b0;
  end
endmodule
`default_nettype wire
