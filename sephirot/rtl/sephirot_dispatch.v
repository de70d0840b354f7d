// sephirot_dispatch: hands each input frame to the lowest-numbered idle core, a packet's frames to one core.
`default_nettype none
`include "sephirot_params.vh"

// Execution contract section 8 "Input and dispatch": the input register (sephirot_top) holds one 32-byte word of
// a frame a cycle; a packet's first word goes to the lowest-numbered core that is idle (its previous packet has
// exited) and whose packet buffer takes it, and the packet's other words follow it to that core. The core starts
// the packet as soon as the first word is in (early start). Each dispatch is pushed to the reorder stage
// (push_o, push_core_o), which lets the cores' output frames leave in that order. With one core every frame goes
// to it as soon as its packet buffer takes it (that buffer then also holds the next packet while the core runs).
module sephirot_dispatch #(
  parameter integer CORES = 1,
  parameter integer KW    = (CORES > 1) ? $clog2(CORES) : 1   // bits of a core's number
) (
  input  wire             clk_i,
  input  wire             rst_ni,
  input  wire             valid_i,     // the input register holds a word
  input  wire             sop_i,       // it is a packet's first
  input  wire [CORES-1:0] ready_i,     // each core's packet buffer takes a word this cycle
  input  wire [CORES-1:0] idle_i,
  output reg  [CORES-1:0] sel_o,       // the core the word goes to (one-hot)
  output reg              ready_o,     // that core takes it this cycle
  output wire             push_o,      // a packet's first word is taken (by core push_core_o)
  output wire [KW-1:0]    push_core_o
);
  generate
    if (CORES == 1) begin : gen_one
      always @(*) begin sel_o = 1'b1; ready_o = ready_i[0]; end
      assign push_o = valid_i && sop_i && ready_i[0];
      assign push_core_o = 1'b0;
      wire unused = &{1'b0, clk_i, rst_ni, idle_i};
    end else begin : gen_many
      reg [KW-1:0] cur_q;          // the core of the packet whose words are coming
      reg [KW-1:0] first;
      reg       any;
      integer   k;
      always @(*) begin
        first = {KW{1'b0}}; any = 1'b0;
        for (k = CORES - 1; k >= 0; k = k - 1)
          if (idle_i[k] && ready_i[k]) begin first = k[KW-1:0]; any = 1'b1; end
        sel_o = {CORES{1'b0}};
        if (sop_i) begin
          ready_o = any;
          if (any) sel_o[first] = 1'b1;
        end else begin
          ready_o = ready_i[cur_q];
          sel_o[cur_q] = 1'b1;
        end
      end
      assign push_o = valid_i && sop_i && any;
      assign push_core_o = first;
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) cur_q <= {KW{1'b0}};
        else if (push_o) cur_q <= first;
      end
    end
  endgenerate
endmodule
`default_nettype wire
