// sephirot_sume_emit_tb: drives the emit module as sephirot_board would (acceptances, results, emissions) and
// prints every AXI-Stream beat it sends, with a stalling receiver; tests/test_fpga.py checks the beats.
`default_nettype none
`include "sephirot_params.vh"

module sephirot_sume_emit_tb;
  reg          clk = 1'b0, rst_n = 1'b0;
  reg          acc = 1'b0, done = 1'b0, rv = 1'b0, hok = 1'b0;
  reg  [1:0]   acc_port = 2'd0, rk = 2'd0;
  reg  [31:0]  action = 32'd0, rport = 32'd0;
  reg          ov = 1'b0, osop = 1'b0, oeop = 1'b0;
  reg  [255:0] odata = 256'd0;
  reg  [5:0]   obytes = 6'd0;
  reg  [7:0]   ometa = 8'd0;
  wire         hpop;
  wire [31:0]  hq, drops;
  // the checks look at the first data byte and tuser[31:0] (the rest of tuser is zero by construction)
  /* verilator lint_off UNUSEDSIGNAL */
  wire [255:0] tdata;
  wire [127:0] tuser;
  /* verilator lint_on UNUSEDSIGNAL */
  wire [31:0]  tkeep;
  wire         tvalid, tlast;
  reg          tready = 1'b0;
  integer      cyc = 0;

  sephirot_sume_emit dut (
    .clk_i(clk), .rst_ni(rst_n), .acc_i(acc), .acc_port_i(acc_port), .done_i(done), .action_i(action),
    .redir_valid_i(rv), .redir_kind_i(rk), .redir_port_i(rport), .host_ok_i(hok),
    .out_valid_i(ov), .out_data_i(odata), .out_sop_i(osop), .out_eop_i(oeop), .out_bytes_i(obytes),
    .out_meta_i(ometa), .host_pop_o(hpop), .host_pop_q_o(hq), .drops_o(drops),
    .m_tdata_o(tdata), .m_tkeep_o(tkeep), .m_tuser_o(tuser), .m_tvalid_o(tvalid), .m_tready_i(tready),
    .m_tlast_o(tlast)
  );

  /* verilator lint_off BLKSEQ */
  always #5 clk = ~clk;
  /* verilator lint_on BLKSEQ */

  // the receiver stalls every third cycle
  always @(posedge clk) begin
    cyc <= cyc + 1;
    tready <= (cyc % 3) != 0;
    if (tvalid && tready)
      $display("BEAT user=%08x keep=%08x last=%0d data0=%02x", tuser[31:0], tkeep, tlast, tdata[7:0]);
    if (hpop) $display("HOSTPOP q=%0d", hq);
  end

  task automatic step; @(posedge clk); #1; endtask

  task automatic accept(input [1:0] port);
    acc = 1'b1; acc_port = port; step; acc = 1'b0;
  endtask

  task automatic result(input [31:0] act, input valid, input [1:0] kind, input [31:0] p, input ok);
    done = 1'b1; action = act; rv = valid; rk = kind; rport = p; hok = ok; step; done = 1'b0;
  endtask

  // a packet of len bytes, the first byte of frame f being tag + f, meta bytes of XDP metadata in front
  task automatic emit(input integer len, input [7:0] tag, input [7:0] meta);
    integer off, f;
    /* verilator lint_off UNUSEDSIGNAL */
    integer n;  // bytes of this frame (at most 32)
    /* verilator lint_on UNUSEDSIGNAL */
    off = 0; f = 0;
    while (off < len) begin
      n = (len - off <= 32) ? len - off : 32;
      ov = 1'b1; osop = off == 0; oeop = len - off <= 32; obytes = n[5:0];
      ometa = meta; odata = {248'd0, tag + f[7:0]};
      step;
      off = off + 32; f = f + 1;
    end
    ov = 1'b0; osop = 1'b0; oeop = 1'b0;
  endtask

  initial begin
    step; step; rst_n = 1'b1; step;
    // A: XDP_TX from port 2, 60 bytes
    accept(2'd2); result(32'd`SEPH_XDP_TX, 1'b0, 2'd0, 32'd0, 1'b0); emit(60, 8'h10, 8'd0);
    // B: XDP_DROP from port 0: nothing leaves
    accept(2'd0); result(32'd`SEPH_XDP_DROP, 1'b0, 2'd0, 32'd0, 1'b0); emit(60, 8'h20, 8'd0);
    // C: XDP_PASS from port 1, 100 bytes: up the DMA queue of port 1
    accept(2'd1); result(32'd`SEPH_XDP_PASS, 1'b0, 2'd0, 32'd0, 1'b0); emit(100, 8'h30, 8'd0);
    // D: XDP_REDIRECT to ifindex 4 (port 3) from port 0, 64 bytes
    accept(2'd0); result(32'd`SEPH_XDP_REDIRECT, 1'b1, 2'd`SEPH_REDIRECT_PORT, 32'd4, 1'b0); emit(64, 8'h40, 8'd0);
    // E: a broadcast to ports 0, 1, 3 without the ingress (port 1) from port 1
    accept(2'd1); result(32'd`SEPH_XDP_REDIRECT, 1'b1, 2'd`SEPH_REDIRECT_BROADCAST, 32'h8000_000B, 1'b0);
    emit(33, 8'h50, 8'd0);
    // F: XDP_TX with XDP metadata in front: dropped and counted
    accept(2'd3); result(32'd`SEPH_XDP_TX, 1'b0, 2'd0, 32'd0, 1'b0); emit(60, 8'h60, 8'd4);
    // G: an xskmap redirect to queue 2 from port 3, delivered: port 3's DMA queue, host queue 10 popped
    accept(2'd3); result(32'd`SEPH_XDP_REDIRECT, 1'b1, 2'd`SEPH_REDIRECT_XSK, 32'd2, 1'b1); emit(60, 8'h70, 8'd0);
    // H: a redirect to ifindex 9 (no such port): nothing leaves
    accept(2'd0); result(32'd`SEPH_XDP_REDIRECT, 1'b1, 2'd`SEPH_REDIRECT_PORT, 32'd9, 1'b0); emit(60, 8'h80, 8'd0);
    repeat (60) step;
    $display("DROPS %0d", drops);
    $finish;
  end
endmodule
`default_nettype wire
