// sephirot_reorder: the output of several cores: frames leave in the order their packets arrived.
`default_nettype none
`include "sephirot_params.vh"

// Execution contract section 8 "Output: the reorder stage": one input port, so frames leave in arrival order, as a
// NIC queue keeps them. The dispatcher pushes the core of each packet it hands out (push_i) into a FIFO; the core at
// its head may emit (ready_o), one 32-byte word a cycle from its packet buffer, and its packet's last word pops it.
// A finished packet waits in its core's packet buffer until its turn (a dropped one too: it leaves as a record
// with its action and no bytes' worth of use of the MAC, as with one core). A core may hold at most its buffers'
// packets, so DEPTH >= CORES * NBUF entries never overflow. With one core the output passes through.
module sephirot_reorder #(
  parameter integer CORES = 1,
  parameter integer DEPTH = 32,
  parameter integer KW    = (CORES > 1) ? $clog2(CORES) : 1   // bits of a core's number
) (
  input  wire               clk_i,
  input  wire               rst_ni,
  input  wire               push_i,
  input  wire [KW-1:0]      push_core_i,
  input  wire [CORES-1:0]   valid_i,
  input  wire [256*CORES-1:0] data_i,
  input  wire [CORES-1:0]   sop_i,
  input  wire [CORES-1:0]   eop_i,
  input  wire [6*CORES-1:0] bytes_i,
  input  wire [32*CORES-1:0] action_i,
  input  wire [8*CORES-1:0] meta_i,
  output reg  [CORES-1:0]   ready_o,
  output wire               out_valid_o,
  output wire [255:0]       out_data_o,
  output wire               out_sop_o,
  output wire               out_eop_o,
  output wire [5:0]         out_bytes_o,
  output wire [31:0]        out_action_o,
  output wire [7:0]         out_meta_o
);
  generate
    if (CORES == 1) begin : gen_one
      always @(*) ready_o = 1'b1;
      assign out_valid_o = valid_i[0];
      assign out_data_o = data_i;
      assign out_sop_o = sop_i[0];
      assign out_eop_o = eop_i[0];
      assign out_bytes_o = bytes_i;
      assign out_action_o = action_i;
      assign out_meta_o = meta_i;
      wire unused = &{1'b0, clk_i, rst_ni, push_i, push_core_i};
    end else begin : gen_fifo
      localparam integer PW = $clog2(DEPTH);
      reg [KW-1:0] q [0:(1 << PW)-1];   // (DEPTH rounded up to a power of two: the pointers wrap)
      reg [PW-1:0] wr_q, rd_q;
      reg [PW:0] cnt_q;
      wire       live = cnt_q != {(PW+1){1'b0}};
      wire [KW-1:0] head = q[rd_q];
      always @(*) begin
        ready_o = {CORES{1'b0}};
        if (live) ready_o[head] = 1'b1;
      end
      assign out_valid_o = live && valid_i[head];
      assign out_data_o = data_i[256*head +: 256];
      assign out_sop_o = sop_i[head];
      assign out_eop_o = eop_i[head];
      assign out_bytes_o = bytes_i[6*head +: 6];
      assign out_action_o = action_i[32*head +: 32];
      assign out_meta_o = meta_i[8*head +: 8];
      wire pop = out_valid_o && out_eop_o;
      always @(posedge clk_i) if (push_i) q[wr_q] <= push_core_i;
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          wr_q <= {PW{1'b0}}; rd_q <= {PW{1'b0}}; cnt_q <= {(PW+1){1'b0}};
        end else begin
          if (push_i) wr_q <= wr_q + {{(PW-1){1'b0}}, 1'b1};
          if (pop) rd_q <= rd_q + {{(PW-1){1'b0}}, 1'b1};
          cnt_q <= cnt_q + {{PW{1'b0}}, push_i} - {{PW{1'b0}}, pop};
        end
      end
    end
  endgenerate
endmodule
`default_nettype wire
