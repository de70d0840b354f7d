// sephirot_prkarb: the trace_printk records of several cores into the board's one FIFO, one a cycle.
`default_nettype none
`include "sephirot_params.vh"

// Each core's committed trace_printk record waits in a slot of its own (with the number of the packet it belongs
// to) until the FIFO takes it: one slot a cycle, round robin from the core after the last one taken, so each waits
// at most CORES - 1 cycles. A core's record that finds its slot still full (several cores printing within a few
// cycles of each other) is dropped and counted (lost_o, added to TRACE_DROPPED: docs/board.md), as a record that
// finds the FIFO full. With one core the record passes through in its cycle, as before.
module sephirot_prkarb #(
  parameter integer CORES  = 1,
  parameter integer FMTMAX = `SEPH_PRINTK_FMT_MAX,
  parameter integer RW     = 8 + 32 + 8 * FMTMAX + 192   // length, packet number, format, r3 r4 r5
) (
  input  wire                clk_i,
  input  wire                rst_ni,
  input  wire [CORES-1:0]    valid_i,
  input  wire [RW*CORES-1:0] rec_i,
  output wire                push_o,
  output wire [RW-1:0]       rec_o,
  output wire [31:0]         lost_o       // records dropped this cycle
);
  generate
    if (CORES == 1) begin : gen_one
      assign push_o = valid_i[0];
      assign rec_o = rec_i;
      assign lost_o = 32'd0;
      wire unused = &{1'b0, clk_i, rst_ni};
    end else begin : gen_many
      localparam integer KW = $clog2(CORES);
      localparam integer KLAST = CORES - 1;   // (so that core 0 comes first after reset)
      reg [CORES-1:0] full_q;
      reg [RW-1:0]    slot_q [0:CORES-1];
      reg [KW-1:0]    last_q;
      wire [KW-1:0]   pick;
      wire            any;
      integer k;
      sephirot_rrpick #(.N(CORES)) u_pick (.req_i(full_q), .last_i(last_q), .pick_o(pick), .any_o(any));
      assign push_o = any;
      assign rec_o = slot_q[pick];
      reg [31:0] lost;
      always @(*) begin
        lost = 32'd0;
        for (k = 0; k < CORES; k = k + 1)
          if (valid_i[k] && full_q[k] && !(any && pick == k[KW-1:0])) lost = lost + 32'd1;
      end
      assign lost_o = lost;
      always @(posedge clk_i) begin
        for (k = 0; k < CORES; k = k + 1)
          if (valid_i[k] && (!full_q[k] || (any && pick == k[KW-1:0]))) slot_q[k] <= rec_i[RW*k +: RW];
      end
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          full_q <= {CORES{1'b0}}; last_q <= KLAST[KW-1:0];
        end else begin
          if (any) last_q <= pick;
          for (k = 0; k < CORES; k = k + 1)
            if (valid_i[k]) full_q[k] <= 1'b1;
            else if (any && pick == k[KW-1:0]) full_q[k] <= 1'b0;
        end
      end
    end
  endgenerate
endmodule
`default_nettype wire
