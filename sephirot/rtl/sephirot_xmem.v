// sephirot_xmem: the lanes' loads, stores and atomics in the off-chip map memory tiers, through one request/response port.
`default_nettype none
`include "sephirot_params.vh"

// The off-chip port (docs/maps.md "Memory tiers"): a request (valid/ready) carries an 8-byte aligned address in the
// QDR or DDR region, a length of 1 or 2 8-byte words, and for a write the data and a byte enable per byte; a read
// is answered, in request order, by one response (valid) with its words, after a latency the memory decides (the
// harness's QDRII+ and DDR3 models: params.tier_read_cycles). Writes are posted: no response.
// A row's off-chip reads (loads and atomics, in lane order) go out one at a time: the first in the row's first
// cycle, each next one in the cycle its predecessor's data comes, and the row waits (wait_o) until the last has
// come; so a row costs the sum of its reads' latencies more (execution contract section 6). Its store (at most one:
// the map memory's store port counts the three tiers) goes out in the cycle the row commits, and the row waits in
// that cycle while the port does not take it. go_i is low in a row that faults: none of its reads goes out.
module sephirot_xmem #(
  parameter integer LANES = `SEPH_LANES
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  // lanes accessing an off-chip tier this cycle (the caller decoded the region)
  input  wire [LANES-1:0]     rd_i,
  input  wire [LANES-1:0]     wr_i,
  input  wire [32*LANES-1:0]  addr_i,
  input  wire [4*LANES-1:0]   size_i,
  input  wire [64*LANES-1:0]  wdata_i,
  input  wire                 go_i,       // the row runs: its reads may go out
  input  wire                 hold_i,     // the row of the last cycle again
  input  wire                 commit_i,   // the row commits at the end of this cycle: its store goes out
  output reg  [64*LANES-1:0]  rdata_o,
  output wire                 wait_o,
  // the off-chip port
  output reg                  req_valid_o,
  input  wire                 req_ready_i,
  output reg                  req_we_o,
  output reg  [31:0]          req_addr_o,
  output reg  [1:0]           req_len_o,
  output reg  [127:0]         req_wdata_o,
  output reg  [15:0]          req_be_o,
  input  wire                 resp_valid_i,
  input  wire [127:0]         resp_data_i
);
`include "sephirot_bytes.vh"

  // The port's inputs enter through a register (the memory controller's output stage; the harness answers a cycle
  // earlier, so a read still costs tier_read_cycles): an input that reached the core's stall and load data
  // combinationally made the whole core input-dependent logic, which Verilator evaluates on every eval() (the
  // simulator ran at 57% of its speed), and a path from the board's pins into the core's commit cannot make the
  // clock. `ready` is the controller's of the cycle before (its write FIFO had room).
  reg         ready_q, rvalid_q;
  reg [127:0] rdata_q;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ready_q <= 1'b1; rvalid_q <= 1'b0;
    end else begin
      ready_q <= req_ready_i; rvalid_q <= resp_valid_i;
    end
  end
  always @(posedge clk_i) rdata_q <= resp_data_i;

  reg [LANES-1:0]    got_q;        // lanes of the row whose data came
  reg [64*LANES-1:0] data_q;
  reg                busy_q;       // a read is out
  reg [LANES-1:0]    cur_q;        // its lane (one-hot)

  wire [LANES-1:0] got  = hold_i ? got_q : {LANES{1'b0}};
  wire [LANES-1:0] resp = (busy_q && rvalid_q) ? cur_q : {LANES{1'b0}};
  wire [LANES-1:0] left = rd_i & ~(got | resp);
  wire [LANES-1:0] nxt  = left & (~left + {{(LANES-1){1'b0}}, 1'b1});   // the lowest lane still to read
  wire [LANES-1:0] st   = wr_i & (~wr_i + {{(LANES-1){1'b0}}, 1'b1});   // the row's store lane
  wire             rd_go = go_i && (!busy_q || rvalid_q) && |left;
  wire             wr_go = commit_i && |wr_i;
  assign wait_o = go_i && (|left || (|wr_i && !ready_q));

  // the request: the next read, or the store of a committing row (never both: a row commits with no read left)
  integer k;
  reg [31:0] a;
  reg [3:0]  sz;
  reg [63:0] wd;
  always @(*) begin
    a = 32'd0; sz = 4'd0; wd = 64'd0;
    for (k = 0; k < LANES; k = k + 1)
      if ((rd_go ? nxt[k] : st[k])) begin
        a = addr_i[32*k +: 32]; sz = size_i[4*k +: 4]; wd = wdata_i[64*k +: 64];
      end
    req_valid_o = rd_go || wr_go;
    req_we_o = !rd_go && wr_go;
    req_addr_o = {a[31:3], 3'd0};
    req_len_o = ({1'b0, a[2:0]} + sz > 4'd8) ? 2'd2 : 2'd1;
    req_wdata_o = 128'd0; req_be_o = 16'd0;
    if (req_we_o) begin
      req_wdata_o = {64'd0, wd} << {a[2:0], 3'd0};
      req_be_o = {8'd0, sizemask(sz)} << a[2:0];
    end
  end

  // the data: the bytes of the lane's access from the response's two words
  integer j;
  reg [63:0] rb;
  always @(*) begin
    rdata_o = {64*LANES{1'b0}};
    for (j = 0; j < LANES; j = j + 1) begin
      rb = funnel8(rdata_q[63:0], rdata_q[127:64], addr_i[32*j +: 3]) &
           bytemask(sizemask(size_i[4*j +: 4]));
      if (resp[j]) rdata_o[64*j +: 64] = rb;
      else if (got[j]) rdata_o[64*j +: 64] = data_q[64*j +: 64];
    end
  end

  integer m;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      got_q <= {LANES{1'b0}}; data_q <= {64*LANES{1'b0}}; busy_q <= 1'b0; cur_q <= {LANES{1'b0}};
    end else begin
      got_q <= got | resp;
      for (m = 0; m < LANES; m = m + 1)
        if (resp[m]) data_q[64*m +: 64] <= rdata_o[64*m +: 64];
      if (rd_go && ready_q) begin
        busy_q <= 1'b1; cur_q <= nxt;
      end else if (rvalid_q) begin
        busy_q <= 1'b0;
      end
    end
  end
endmodule
`default_nettype wire
