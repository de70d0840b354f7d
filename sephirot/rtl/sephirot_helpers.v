// sephirot_helpers: the helper-function unit (one call per row; the core stalls until done).
`default_nettype none
`include "sephirot_params.vh"

// Latencies (extra cycles beyond the row's own cycle) follow compiler/hxdp/helpers.py helper_latency:
// ktime_get_ns, get_prandom_u32, get_smp_processor_id 0; redirect, xdp_adjust_tail, xdp_adjust_meta,
// trace_printk 1; xdp_adjust_head 1 (metadata in front of data is not moved: -EINVAL); csum_diff
// 1 + ceil((from_size + to_size) / 8), reading 8 bytes per cycle through the helper memory port. Helpers not
// implemented here end the packet with a helper fault.
module sephirot_helpers (
  input  wire            clk_i,
  input  wire            rst_ni,
  input  wire            pkt_start_i,     // a new packet starts: forget the redirect target
  input  wire            req_i,
  input  wire [31:0]     id_i,
  input  wire [64*5-1:0] args_i,          // r1..r5
  input  wire [63:0]     cycles_i,        // packet cycles so far (ktime_get_ns)
  output reg             done_o,
  output reg  [63:0]     ret_o,
  output reg             illegal_o,
  output reg             fault_o,
  output reg             access_o,        // a memory read of the helper faulted
  // memory read port (any region)
  output reg             hm_en_o,
  output reg  [31:0]     hm_addr_o,
  output reg  [3:0]      hm_size_o,
  input  wire [63:0]     hm_rdata_i,
  input  wire            hm_fault_i,
  // packet adjustment (sephirot_pktbuf)
  output reg  [1:0]      adj_kind_o,
  output wire [31:0]     adj_delta_o,
  output wire            adj_commit_o,
  input  wire [7:0]      adj_err_i,
  // redirect target of the current packet, as it is after this cycle
  output wire            redir_valid_o,
  output wire [31:0]     redir_port_o
);
  localparam [31:0] H_KTIME = `SEPH_HELPER_KTIME_GET_NS;
  localparam [31:0] H_PRINTK = `SEPH_HELPER_TRACE_PRINTK;
  localparam [31:0] H_PRANDOM = `SEPH_HELPER_GET_PRANDOM_U32;
  localparam [31:0] H_SMP = `SEPH_HELPER_GET_SMP_PROCESSOR_ID;
  localparam [31:0] H_REDIRECT = `SEPH_HELPER_REDIRECT;
  localparam [31:0] H_HEAD = `SEPH_HELPER_XDP_ADJUST_HEAD;
  localparam [31:0] H_META = `SEPH_HELPER_XDP_ADJUST_META;
  localparam [31:0] H_TAIL = `SEPH_HELPER_XDP_ADJUST_TAIL;
  localparam [31:0] H_CSUM = `SEPH_HELPER_CSUM_DIFF;

  wire [63:0] r1 = args_i[63:0];
  wire [63:0] r2 = args_i[127:64];
  wire [63:0] r3 = args_i[191:128];
  wire [63:0] r4 = args_i[255:192];
  wire [63:0] r5 = args_i[319:256];

  // csum_diff: sums of the 32-bit words of `from` and `to`, 8 bytes per cycle
  wire [31:0] fsz = r2[31:0];
  wire [31:0] tsz = r4[31:0];
  wire [32:0] csz = {1'b0, fsz} + {1'b0, tsz};
  reg  [32:0] cs_off_q;
  reg  [63:0] sum_f_q, sum_t_q;
  reg         cs_bad_q;
  wire        cs_go = req_i && id_i == H_CSUM && cs_off_q < csz;
  wire [32:0] cs_left = cs_off_q < {1'b0, fsz} ? {1'b0, fsz} - cs_off_q : csz - cs_off_q;
  always @(*) begin
    hm_en_o = cs_go;
    hm_size_o = (cs_left >= 33'd8) ? 4'd8 : cs_left[3:0];
    hm_addr_o = (cs_off_q < {1'b0, fsz}) ? r1[31:0] + cs_off_q[31:0] : r3[31:0] + (cs_off_q[31:0] - fsz);
  end
  wire [63:0] cs_words = {32'd0, hm_rdata_i[31:0]} + {32'd0, hm_rdata_i[63:32]};

  function automatic [31:0] part(input [63:0] x);  // csum_partial of a plain word sum (0 only for 0)
    reg [32:0] y;
    reg [32:0] z;
    y = {1'b0, x[31:0]} + {1'b0, x[63:32]};
    z = {1'b0, y[31:0]} + {32'd0, y[32]};
    part = (x == 64'd0) ? 32'd0 : z[31:0] + {31'd0, z[32]};
  endfunction
  function automatic [31:0] cadd(input [31:0] a, input [31:0] b);
    reg [32:0] r;
    r = {1'b0, a} + {1'b0, b};
    cadd = r[31:0] + {31'd0, r[32]};
  endfunction
  function automatic [15:0] fold16(input [31:0] v);
    reg [31:0] w;
    w = v + {v[15:0], v[31:16]};
    fold16 = w[31:16];
  endfunction
  wire [31:0] seed = r5[31:0];
  wire [31:0] p_to = part({32'd0, seed} + sum_t_q);
  wire [31:0] p_fr = part(sum_f_q);
  wire [31:0] p_fr_only = ~part({32'd0, ~seed} + sum_f_q);
  reg  [15:0] csum;
  always @(*) begin
    if (fsz != 32'd0 && tsz != 32'd0) csum = fold16(cadd(p_to, ~p_fr));
    else if (tsz != 32'd0) csum = fold16(p_to);
    else if (fsz != 32'd0) csum = fold16(p_fr_only);
    else csum = fold16(seed);
  end
  wire [32:0] csum_lat = 33'd1 + ((csz + 33'd7) >> 3);

  reg         busy_q;
  reg         redir_valid_q, redir_valid_d;
  reg [31:0]  redir_port_q, redir_port_d;
  reg [32:0]  cnt_q;
  reg [31:0]  rnd_q;
  reg [32:0]  lat;
  reg         known;

  always @(*) begin
    known = 1'b1;
    lat = 33'd1;
    adj_kind_o = 2'd0;
    case (id_i)
      H_KTIME, H_PRANDOM, H_SMP: lat = 33'd0;
      H_REDIRECT, H_PRINTK: lat = 33'd1;
      H_CSUM: lat = csum_lat;
      H_HEAD: adj_kind_o = 2'd0;
      H_TAIL: adj_kind_o = 2'd1;
      H_META: adj_kind_o = 2'd2;
      default: known = 1'b0;
    endcase
  end
  assign adj_delta_o = r2[31:0];

  wire [31:0] rnd_next0 = rnd_q ^ (rnd_q << 13);
  wire [31:0] rnd_next1 = rnd_next0 ^ (rnd_next0 >> 17);
  wire [31:0] rnd_next  = rnd_next1 ^ (rnd_next1 << 5);
  wire [63:0] ktime_ns  = (cycles_i * 64'd32) / 64'd5;

  wire finish = req_i && (busy_q ? (cnt_q >= lat) : (lat == 33'd0 || !known));
  wire is_adj = (id_i == H_HEAD) || (id_i == H_TAIL) || (id_i == H_META);
  assign adj_commit_o = finish && known && is_adj;

  always @(*) begin
    done_o = finish;
    illegal_o = 1'b0;
    fault_o = finish && !known;
    access_o = finish && known && id_i == H_CSUM && cs_bad_q;
    ret_o = 64'd0;
    case (id_i)
      H_KTIME:    ret_o = ktime_ns;
      H_CSUM:     ret_o = {48'd0, csum};
      H_PRANDOM:  ret_o = {32'd0, rnd_next};
      H_REDIRECT: ret_o = (r2 != 64'd0) ? 64'd`SEPH_XDP_ABORTED : 64'd`SEPH_XDP_REDIRECT;
      H_HEAD, H_TAIL, H_META: ret_o = (adj_err_i == 8'd0) ? 64'd0 : -{56'd0, adj_err_i};
      default:    ret_o = 64'd0;
    endcase
  end

  always @(*) begin
    redir_valid_d = pkt_start_i ? 1'b0 : redir_valid_q;
    redir_port_d = redir_port_q;
    if (finish && known && id_i == H_REDIRECT && r2 == 64'd0) begin
      redir_valid_d = 1'b1; redir_port_d = r1[31:0];
    end
  end
  assign redir_valid_o = redir_valid_d;
  assign redir_port_o = redir_port_d;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0; cnt_q <= 33'd0; rnd_q <= 32'h2545F491;
      cs_off_q <= 33'd0; sum_f_q <= 64'd0; sum_t_q <= 64'd0; cs_bad_q <= 1'b0;
      redir_valid_q <= 1'b0; redir_port_q <= 32'd0;
    end else begin
      redir_valid_q <= redir_valid_d; redir_port_q <= redir_port_d;
      if (cs_go) begin
        cs_off_q <= cs_off_q + {29'd0, hm_size_o};
        if (cs_off_q < {1'b0, fsz}) sum_f_q <= sum_f_q + cs_words;
        else sum_t_q <= sum_t_q + cs_words;
        if (hm_fault_i) cs_bad_q <= 1'b1;
      end
      if (finish) begin
        busy_q <= 1'b0; cnt_q <= 33'd0;
        cs_off_q <= 33'd0; sum_f_q <= 64'd0; sum_t_q <= 64'd0; cs_bad_q <= 1'b0;
        if (known && id_i == H_PRANDOM) rnd_q <= rnd_next;
      end else if (req_i) begin
        busy_q <= 1'b1; cnt_q <= cnt_q + 33'd1;
      end
    end
  end
endmodule
`default_nettype wire
