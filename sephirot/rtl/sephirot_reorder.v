// sephirot_reorder: the output of several cores: frames leave in the order their packets arrived.
`default_nettype none
`include "sephirot_params.vh"

// Execution contract section 8 "Output: the reorder stage": one input port, so frames leave in arrival order, as a
// NIC queue keeps them. The dispatcher pushes the core of each packet it hands out (push_i) into a FIFO; the core at
// its head may emit (ready_o), one 32-byte word a cycle from its packet buffer, and its packet's last word pops it.
// A finished packet waits in its core's packet buffer until its turn. A dropped one (XDP_DROP, XDP_ABORTED) takes no
// output cycle: each core reports its frames as they become whole and finished (fin_i, in its order; fin_drop_i a
// dropped one), which marks their entries (each core keeps the entries of its frames not yet finished, in order), and
// the marked dropped entries at the head depart together (drops_o, in order, in the cycle they are marked at the
// earliest) with the first frame that leaves behind them, which may emit in that cycle; each core frees the buffers
// of its dropped frames that departed (skip_o, its oldest: they are in its order) and emits from the next one. A core
// may hold at most its buffers' packets, so DEPTH >= CORES * NBUF entries never overflow. With one core the output
// passes through, dropped frames included (a word a cycle, as the single core's section 6 leaves them).
module sephirot_reorder #(
  parameter integer CORES = 1,
  parameter integer DEPTH = 32,
  parameter integer NBUF  = `SEPH_PKT_BUFS_SEVERAL,             // each core's packet buffers
  parameter integer KW    = (CORES > 1) ? $clog2(CORES) : 1,   // bits of a core's number
  parameter integer SW    = $clog2(NBUF + 1)                   // bits of a count of one core's frames
) (
  input  wire               clk_i,
  input  wire               rst_ni,
  input  wire               push_i,
  input  wire [KW-1:0]      push_core_i,
  input  wire [CORES-1:0]   fin_i,
  input  wire [CORES-1:0]   fin_drop_i,
  output reg  [SW*CORES-1:0] skip_o,
  output reg  [7:0]         drops_o,      // frames dropped (departed without output) this cycle
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
      always @(*) begin ready_o = 1'b1; skip_o = {SW{1'b0}}; drops_o = 8'd0; end
      assign out_valid_o = valid_i[0];
      assign out_data_o = data_i;
      assign out_sop_o = sop_i[0];
      assign out_eop_o = eop_i[0];
      assign out_bytes_o = bytes_i;
      assign out_action_o = action_i;
      assign out_meta_o = meta_i;
      wire unused = &{1'b0, clk_i, rst_ni, push_i, push_core_i, fin_i, fin_drop_i};
    end else begin : gen_fifo
      localparam integer PW = $clog2(DEPTH);
      localparam integer D  = 1 << PW;   // (DEPTH rounded up to a power of two: the pointers wrap)
      localparam integer BW = $clog2(NBUF);
      reg [KW-1:0] q [0:D-1];
      reg [D-1:0]  fin_q, drp_q;          // the entry's frame is whole and finished; it is dropped
      reg [PW-1:0] wr_q, rd_q;
      reg [PW:0]   cnt_q;
      // each core's entries whose frames have not finished yet, oldest first (NBUF: its buffers)
      reg [PW-1:0] sq_q [0:CORES*NBUF-1];
      reg [BW-1:0] swr_q [0:CORES-1];
      reg [BW-1:0] srd_q [0:CORES-1];
      reg [D-1:0]  fin_now, drp_now;      // entries marked in this cycle
      integer k, j;
      always @(*) begin
        fin_now = {D{1'b0}}; drp_now = {D{1'b0}};
        for (k = 0; k < CORES; k = k + 1)
          if (fin_i[k]) begin
            fin_now[sq_q[k * NBUF + {{(32-BW){1'b0}}, srd_q[k]}]] = 1'b1;
            drp_now[sq_q[k * NBUF + {{(32-BW){1'b0}}, srd_q[k]}]] = fin_drop_i[k];
          end
      end
      wire [D-1:0] fin = fin_q | fin_now;
      wire [D-1:0] drp = drp_q | drp_now;
      // the dropped entries at the head depart; the first entry behind them is the one that may emit
      reg [PW:0]   nskip;
      reg          run;
      reg [PW-1:0] e;
      always @(*) begin
        nskip = {(PW+1){1'b0}}; run = 1'b1;
        skip_o = {SW*CORES{1'b0}};
        for (j = 0; j < D; j = j + 1) begin
          e = rd_q + j[PW-1:0];
          if (run && j[PW:0] < cnt_q && fin[e] && drp[e]) begin
            nskip = nskip + {{PW{1'b0}}, 1'b1};
            skip_o[SW*q[e] +: SW] = skip_o[SW*q[e] +: SW] + {{(SW-1){1'b0}}, 1'b1};
          end else begin
            run = 1'b0;
          end
        end
        drops_o = {{(8-PW-1){1'b0}}, nskip};
      end
      wire [PW-1:0] h = rd_q + nskip[PW-1:0];
      wire          live = nskip < cnt_q;
      wire [KW-1:0] head = q[h];
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
      wire          pop = out_valid_o && out_eop_o;
      wire [PW:0]   gone = nskip + {{PW{1'b0}}, pop};
      always @(posedge clk_i) begin
        if (push_i) begin
          q[wr_q] <= push_core_i;
          sq_q[{{(32-KW){1'b0}}, push_core_i} * NBUF + {{(32-BW){1'b0}}, swr_q[push_core_i]}] <= wr_q;
        end
      end
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          wr_q <= {PW{1'b0}}; rd_q <= {PW{1'b0}}; cnt_q <= {(PW+1){1'b0}};
          fin_q <= {D{1'b0}}; drp_q <= {D{1'b0}};
          for (k = 0; k < CORES; k = k + 1) begin swr_q[k] <= {BW{1'b0}}; srd_q[k] <= {BW{1'b0}}; end
        end else begin
          if (push_i) wr_q <= wr_q + {{(PW-1){1'b0}}, 1'b1};
          rd_q <= rd_q + gone[PW-1:0];
          cnt_q <= cnt_q + {{PW{1'b0}}, push_i} - gone;
          // (an entry pushed is not finished: its flags are cleared as it is written)
          fin_q <= (fin_q | fin_now) & ~(push_i ? ({{(D-1){1'b0}}, 1'b1} << wr_q) : {D{1'b0}});
          drp_q <= (drp_q | drp_now) & ~(push_i ? ({{(D-1){1'b0}}, 1'b1} << wr_q) : {D{1'b0}});
          for (k = 0; k < CORES; k = k + 1) begin
            if (push_i && push_core_i == k[KW-1:0]) swr_q[k] <= swr_q[k] + {{(BW-1){1'b0}}, 1'b1};
            if (fin_i[k]) srd_q[k] <= srd_q[k] + {{(BW-1){1'b0}}, 1'b1};
          end
        end
      end
    end
  endgenerate
endmodule
`default_nettype wire
