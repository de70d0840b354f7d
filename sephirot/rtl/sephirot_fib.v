// sephirot_fib: bpf_fib_lookup (helper 69) on the FIB in map memory, for the helper unit (sephirot_helpers).
`default_nettype none
`include "sephirot_params.vh"

// The lookup of hxdp/fib/lookup.py (the kernel's bpf_xdp_fib_lookup without policy rules), one step a cycle:
//   cycle 0       struct outside the stack: helper fault; plen < 64 or unknown flags: -EINVAL (latency 1);
//                 flags SRC or DIRECT|TBID: helper fault (the FIB keeps no table ids, no source addresses)
//   6 cycles      the struct's bytes 0..47 (family .. ipv6_dst) through the helper's memory port, 8 a cycle
//   1 cycle       the FIB header (magic, counts) through the map window
//   I cycles      the ingress interface, two a window (I = max(1, ceil(interfaces / 2))): then -EAFNOSUPPORT,
//                 NOT_FWDED (an IPv6 link-local, multicast or loopback address), -ENODEV, FWD_DISABLED
//   R cycles      the routes, one a window, up to the first that matches (the FIB lists them best first: lowest
//                 rank, longest prefix, lowest metric), else all (R = max(1, routes)); none, or not unicast:
//                 NOT_FWDED, BLACKHOLE, UNREACHABLE, PROHIBIT
//   1 + I cycles  the route's gateway, the egress interface (MTU, MAC): FRAG_NEEDED, UNSUPP_LWT
//   N cycles      the neighbour of the next hop (N = max(1, neighbours); not with SKIP_NEIGH): NO_NEIGH
//   W cycles      the results into the struct through the stack's store port, one write of <= 8 bytes a cycle:
//                 W0 family (an IPv4 route through an IPv6 gateway), W1 mtu_result, W2 ifindex and rt_metric,
//                 W3 W4 the gateway, W5 the VLAN fields and smac[0..3], W6 smac[4..5] and dmac
// The FIB's byte format is docs/maps.md ("FIB"); the latency is the number of steps (docs/helpers.md).
module sephirot_fib (
  input  wire            clk_i,
  input  wire            rst_ni,
  input  wire            go_i,            // the row calls fib_lookup and the unit serves it this cycle
  input  wire            finish_i,        // the call ends this cycle
  input  wire [63:0]     r2_i,            // struct bpf_fib_lookup *
  input  wire [31:0]     r3_i,            // plen
  input  wire [31:0]     r4_i,            // flags
  // the struct's bytes through the helper's memory port (r2 + rd_off_o, 8 bytes)
  output wire            rd_en_o,
  output wire [31:0]     rd_off_o,
  input  wire [63:0]     rd_data_i,
  // the FIB through the map memory's window port
  output wire            mw_en_o,
  output reg  [31:0]     mw_off_o,
  input  wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] mw_rdata_i,
  // the results into the struct: the stack's store port (the row stores nothing else there)
  output wire            sw_en_o,
  output reg  [8:0]      sw_off_o,
  output reg  [3:0]      sw_size_o,
  output reg  [63:0]     sw_data_o,
  output wire            fault_o,         // a call the hardware does not serve: helper fault
  output wire            done_o,
  output wire [32:0]     lat_o,
  output wire [63:0]     ret_o
);
  localparam [3:0] PH_PAR = 4'd0, PH_HDR = 4'd1, PH_IN = 4'd2, PH_RT = 4'd3, PH_GW = 4'd4, PH_EG = 4'd5,
                   PH_NB = 4'd6, PH_WR = 4'd7, PH_DONE = 4'd8;
  localparam [31:0] BASE = `SEPH_FIB_OFFSET;
  localparam [31:0] S_LO = `SEPH_STACK_BASE;
  localparam [31:0] S_HI = `SEPH_STACK_TOP - 32'd`SEPH_FIB_PARAMS_BYTES;
  localparam [7:0] AF4 = `SEPH_FIB_AF_INET, AF6 = `SEPH_FIB_AF_INET6;
  localparam [31:0] F_DIRECT = `SEPH_FIB_FLAG_DIRECT, F_OUTPUT = `SEPH_FIB_FLAG_OUTPUT,
                    F_SKIP = `SEPH_FIB_FLAG_SKIP_NEIGH, F_TBID = `SEPH_FIB_FLAG_TBID, F_SRC = `SEPH_FIB_FLAG_SRC;
  localparam [7:0] T_UNI = `SEPH_FIB_RTN_UNICAST, T_BH = `SEPH_FIB_RTN_BLACKHOLE, T_UR = `SEPH_FIB_RTN_UNREACHABLE,
                   T_PR = `SEPH_FIB_RTN_PROHIBIT, T_TH = `SEPH_FIB_RTN_THROW, T_NAT = `SEPH_FIB_RTN_NAT,
                   T_XR = `SEPH_FIB_RTN_XRESOLVE;
  localparam [63:0] RET_OK = `SEPH_FIB_RET_SUCCESS, RET_BH = `SEPH_FIB_RET_BLACKHOLE,
                    RET_UR = `SEPH_FIB_RET_UNREACHABLE, RET_PR = `SEPH_FIB_RET_PROHIBIT,
                    RET_NF = `SEPH_FIB_RET_NOT_FWDED, RET_FD = `SEPH_FIB_RET_FWD_DISABLED,
                    RET_LWT = `SEPH_FIB_RET_UNSUPP_LWT, RET_NN = `SEPH_FIB_RET_NO_NEIGH,
                    RET_FRAG = `SEPH_FIB_RET_FRAG_NEEDED;
  localparam [63:0] E_INVAL = -64'd`SEPH_FIB_EINVAL, E_NODEV = -64'd`SEPH_FIB_ENODEV,
                    E_AFNO = -64'd`SEPH_FIB_EAFNOSUPPORT;
  localparam [8:0] NI_MAX = `SEPH_FIB_IFACES_MAX, NR_MAX = `SEPH_FIB_ROUTES_MAX, NN_MAX = `SEPH_FIB_NEIGH_MAX;
  localparam [7:0] RANK4 = `SEPH_FIB_RANK_V4_MAIN, RANK6L = `SEPH_FIB_RANK_V6_LOCAL, RANK6M = `SEPH_FIB_RANK_V6_MAIN;
  localparam [7:0] LWT = `SEPH_FIB_ROUTE_LWT, FWD4 = `SEPH_FIB_IFACE_FWD4, FWD6 = `SEPH_FIB_IFACE_FWD6;

  reg  [3:0]   ph_q, ph_d;
  reg  [8:0]   idx_q, idx_d;
  reg  [32:0]  st_q;                        // steps so far: the latency once done
  reg  [63:0]  ret_q, ret_d;
  reg  [7:0]   fam_q;                       // the struct's inputs: family, tot_len, ifindex, source, destination
  reg  [15:0]  tot_q;
  reg  [31:0]  if_q;
  reg  [127:0] src_q, dst_q;
  reg  [8:0]   ni_q, nr_q, nn_q;            // entries of the FIB (clamped to the capacity)
  reg          in_ok_q, in_ok_d;            // the ingress interface was found ...
  reg  [7:0]   in_fl_q, in_fl_d;            // ... with these flags
  reg          b_v_q, b_v_d;                // the best route so far
  reg  [8:0]   b_k_q, b_k_d;
  reg  [7:0]   b_type_q, b_type_d, b_gwf_q, b_gwf_d, b_fl_q, b_fl_d;
  reg  [15:0]  b_mtu_q, b_mtu_d;
  reg  [31:0]  b_oif_q, b_oif_d, b_met_q, b_met_d;
  reg  [127:0] gw_q;
  reg          eg_ok_q, eg_ok_d;
  reg  [15:0]  eg_m4_q, eg_m4_d, eg_m6_q, eg_m6_d;
  reg  [47:0]  eg_mac_q, eg_mac_d;
  reg          nb_ok_q, nb_ok_d;
  reg  [47:0]  nb_mac_q, nb_mac_d;
  reg  [6:0]   wm_q, wm_d;                  // write steps W0..W6 still to do

  // the call's inputs
  wire [7:0]   fam    = fam_q;
  wire         v6     = fam == AF6;
  wire [15:0]  totlen = tot_q;
  wire [31:0]  ifidx  = if_q;
  wire [127:0] src    = src_q;
  wire [127:0] dst    = v6 ? dst_q : {96'd0, dst_q[31:0]};
  wire         skip   = (r4_i & F_SKIP) != 32'd0;
  wire         start  = go_i && ph_q == PH_PAR && idx_q == 9'd0;
  wire         inval  = $signed(r3_i) < $signed(32'd`SEPH_FIB_PARAMS_BYTES) ||
                        (r4_i & ~`SEPH_FIB_FLAGS_MASK) != 32'd0;
  wire         nostk  = r2_i < {32'd0, S_LO} || r2_i > {32'd0, S_HI};
  wire         unsupp = (r4_i & F_SRC) != 32'd0 || ((r4_i & F_DIRECT) != 32'd0 && (r4_i & F_TBID) != 32'd0);
  assign fault_o = start && (nostk || (!inval && unsupp));

  // windows of a scan: at least one
  wire [8:0]   ni_w = (ni_q == 9'd0) ? 9'd1 : (ni_q + 9'd1) >> 1;
  wire [8:0]   nr_w = (nr_q == 9'd0) ? 9'd1 : nr_q;
  wire [8:0]   nn_w = (nn_q == 9'd0) ? 9'd1 : nn_q;

  // the first `bits` bits (most significant first in each byte) of a and b agree
  function automatic pmatch(input [127:0] a, input [127:0] b, input [7:0] bits);
    integer i;
    reg [7:0] m;
    begin
      pmatch = 1'b1;
      for (i = 0; i < 16; i = i + 1) begin
        if ({1'b0, bits} >= 9'd8 * (i[8:0] + 9'd1)) m = 8'hff;
        else if ({1'b0, bits} > 9'd8 * i[8:0]) m = ~(8'hff >> bits[2:0]);
        else m = 8'h00;
        if (((a[8*i +: 8] ^ b[8*i +: 8]) & m) != 8'd0) pmatch = 1'b0;
      end
    end
  endfunction
  // rt6_need_strict: multicast, link-local unicast, loopback
  function automatic strict6(input [127:0] a);
    strict6 = a[7:0] == 8'hff || (a[7:0] == 8'hfe && a[15:14] == 2'b10) || a == {8'd1, 120'd0};
  endfunction

  // the window this step reads
  assign rd_en_o  = go_i && ph_q == PH_PAR && !(idx_q == 9'd0 && (inval || fault_o));
  assign rd_off_o = {20'd0, idx_q, 3'd0};
  assign mw_en_o  = go_i && (ph_q == PH_HDR || ph_q == PH_IN || ph_q == PH_RT || ph_q == PH_GW || ph_q == PH_EG ||
                             (ph_q == PH_NB));
  always @(*) begin
    case (ph_q)
      PH_IN, PH_EG: mw_off_o = BASE + `SEPH_FIB_IFACES_AT + {18'd0, idx_q, 5'd0};
      PH_RT:        mw_off_o = BASE + `SEPH_FIB_ROUTES_AT + {18'd0, idx_q, 5'd0};
      PH_GW:        mw_off_o = BASE + `SEPH_FIB_GWS_AT + {19'd0, b_k_q, 4'd0};
      PH_NB:        mw_off_o = BASE + `SEPH_FIB_NEIGH_AT + {18'd0, idx_q, 5'd0};
      default:      mw_off_o = BASE;
    endcase
  end
  wire [255:0] w = mw_rdata_i;

  // one step
  reg          ok_rank, last, frag;
  reg  [7:0]   r_fam, r_plen, r_type, r_rank, r_gwf, r_fl;
  reg  [15:0]  mtu;
  reg  [8:0]   k0, k1;
  integer      e;
  always @(*) begin
    ph_d = ph_q; idx_d = idx_q; ret_d = ret_q;
    in_ok_d = in_ok_q; in_fl_d = in_fl_q;
    b_v_d = b_v_q; b_k_d = b_k_q; b_type_d = b_type_q; b_gwf_d = b_gwf_q;
    b_fl_d = b_fl_q; b_mtu_d = b_mtu_q; b_oif_d = b_oif_q; b_met_d = b_met_q;
    eg_ok_d = eg_ok_q; eg_m4_d = eg_m4_q; eg_m6_d = eg_m6_q; eg_mac_d = eg_mac_q;
    nb_ok_d = nb_ok_q; nb_mac_d = nb_mac_q; wm_d = wm_q;
    r_fam = w[7:0]; r_plen = w[15:8]; r_type = w[23:16]; r_rank = w[31:24]; r_gwf = w[39:32]; r_fl = w[47:40];
    ok_rank = 1'b0; last = 1'b0; frag = 1'b0; mtu = 16'd0;
    k0 = {idx_q[7:0], 1'b0}; k1 = {idx_q[7:0], 1'b1};
    case (ph_q)
      PH_PAR: begin
        if (idx_q == 9'd0 && inval) begin ret_d = E_INVAL; ph_d = PH_DONE; end
        else if (idx_q == 9'd`SEPH_FIB_PARAMS_READ_WORDS - 9'd1) begin ph_d = PH_HDR; idx_d = 9'd0; end
        else idx_d = idx_q + 9'd1;
      end
      PH_HDR: begin ph_d = PH_IN; idx_d = 9'd0; end
      PH_IN, PH_EG: begin
        for (e = 0; e < 2; e = e + 1) begin
          if ((e == 0 ? k0 : k1) < ni_q && w[128*e +: 32] != 32'd0) begin
            if (ph_q == PH_IN && !in_ok_d && w[128*e +: 32] == ifidx) begin
              in_ok_d = 1'b1; in_fl_d = w[128*e + 112 +: 8];
            end
            if (ph_q == PH_EG && !eg_ok_d && w[128*e +: 32] == b_oif_q) begin
              eg_ok_d = 1'b1; eg_m4_d = w[128*e + 32 +: 16]; eg_m6_d = w[128*e + 48 +: 16];
              eg_mac_d = w[128*e + 64 +: 48];
            end
          end
        end
        last = idx_q == ni_w - 9'd1;
        idx_d = last ? 9'd0 : idx_q + 9'd1;
        if (last && ph_q == PH_IN) begin
          ph_d = PH_DONE;
          if (fam != AF4 && fam != AF6) ret_d = E_AFNO;
          else if (v6 && (strict6(dst) || strict6(src))) ret_d = RET_NF;
          else if (!in_ok_d) ret_d = E_NODEV;
          else if ((in_fl_d & (v6 ? FWD6 : FWD4)) == 8'd0) ret_d = RET_FD;
          else ph_d = PH_RT;
        end
        if (last && ph_q == PH_EG) begin
          mtu = (b_mtu_q != 16'd0) ? b_mtu_q : (v6 ? eg_m6_d : eg_m4_d);
          ph_d = PH_DONE;
          if (!eg_ok_d) ret_d = RET_NF;
          else if (totlen > mtu) begin
            frag = 1'b1; ret_d = RET_FRAG; b_mtu_d = mtu; wm_d = 7'b0000010; ph_d = PH_WR;
          end
          else if ((b_fl_q & LWT) != 8'd0) ret_d = RET_LWT;
          else begin b_mtu_d = mtu; ph_d = skip ? PH_WR : PH_NB; end
        end
      end
      PH_RT: begin
        ok_rank = v6 ? ((r4_i & F_DIRECT) != 32'd0 ? r_rank == RANK6M : (r_rank == RANK6L || r_rank == RANK6M))
                     : r_rank == RANK4;
        if (idx_q < nr_q && r_fam == fam && ok_rank && r_plen <= (v6 ? 8'd128 : 8'd32) &&
            pmatch(w[255:128], dst, r_plen) &&
            !(!v6 && (r4_i & F_OUTPUT) != 32'd0 && r_type != T_BH && r_type != T_UR && r_type != T_PR &&
              r_type != T_TH && r_type != T_NAT && r_type != T_XR && w[95:64] != ifidx)) begin
          b_v_d = 1'b1; b_k_d = idx_q; b_type_d = r_type; b_gwf_d = r_gwf; b_fl_d = r_fl; b_mtu_d = w[63:48];
          b_oif_d = w[95:64]; b_met_d = w[127:96];
        end
        last = b_v_d || idx_q == nr_w - 9'd1;   // the routes are listed best first: the first match ends the scan
        idx_d = last ? 9'd0 : idx_q + 9'd1;
        if (last) begin
          ph_d = PH_DONE;
          if (!b_v_d) ret_d = RET_NF;
          else if (b_type_d == T_UNI) ph_d = PH_GW;
          else if (b_type_d == T_BH || (!v6 && (b_type_d == T_NAT || b_type_d == T_XR))) ret_d = RET_BH;
          else if (b_type_d == T_UR) ret_d = RET_UR;
          else if (b_type_d == T_PR) ret_d = RET_PR;
          else ret_d = RET_NF;
        end
      end
      PH_GW: ph_d = PH_EG;
      PH_NB: begin
        // the next hop: the gateway (an IPv4 one for an IPv4 lookup only), else the destination
        if (idx_q < nn_q && !nb_ok_d && w[31:0] == b_oif_q &&
            w[39:32] == ((b_gwf_q == AF6) ? AF6 : (v6 ? AF6 : AF4)) &&
            w[64 +: 128] == ((b_gwf_q == AF6 || (!v6 && b_gwf_q == AF4)) ?
                             ((b_gwf_q == AF6) ? gw_q : {96'd0, gw_q[31:0]}) : dst)) begin
          nb_ok_d = 1'b1; nb_mac_d = w[192 +: 48];
        end
        last = idx_q == nn_w - 9'd1;
        idx_d = last ? 9'd0 : idx_q + 9'd1;
        if (last) ph_d = PH_WR;
      end
      PH_WR: begin
        wm_d = wm_q & (wm_q - 7'd1);
        if (wm_d == 7'd0) ph_d = PH_DONE;
      end
      default: ;
    endcase
    // entering PH_WR from the egress or neighbour scan: the steps of the outcome
    if (ph_q != PH_WR && ph_d == PH_WR && !frag) begin
      ret_d = (skip || nb_ok_d) ? RET_OK : RET_NN;
      wm_d = {(skip || nb_ok_d) && !skip, skip || nb_ok_d, b_gwf_q == AF6,
              b_gwf_q == AF6 || (!v6 && b_gwf_q == AF4), 1'b1, skip || nb_ok_d, !v6 && b_gwf_q == AF6};
    end
  end

  // the write of this step: the lowest step left
  assign sw_en_o = go_i && ph_q == PH_WR;
  always @(*) begin
    sw_off_o = 9'd0; sw_size_o = 4'd8; sw_data_o = 64'd0;
    if (wm_q[0]) begin sw_off_o = 9'd0; sw_size_o = 4'd1; sw_data_o = {56'd0, AF6}; end
    else if (wm_q[1]) begin sw_off_o = 9'd6; sw_size_o = 4'd2; sw_data_o = {48'd0, b_mtu_q}; end
    else if (wm_q[2]) begin sw_off_o = 9'd8; sw_data_o = {b_met_q, b_oif_q}; end
    else if (wm_q[3]) begin sw_off_o = 9'd32; sw_size_o = (b_gwf_q == AF6) ? 4'd8 : 4'd4; sw_data_o = gw_q[63:0]; end
    else if (wm_q[4]) begin sw_off_o = 9'd40; sw_data_o = gw_q[127:64]; end
    else if (wm_q[5]) begin sw_off_o = 9'd48; sw_size_o = skip ? 4'd4 : 4'd8; sw_data_o = {eg_mac_q[31:0], 32'd0}; end
    else if (wm_q[6]) begin sw_off_o = 9'd56; sw_data_o = {nb_mac_q, eg_mac_q[47:32]}; end
    sw_off_o = sw_off_o + r2_i[8:0];
  end

  assign done_o = ph_q == PH_DONE;
  assign lat_o  = st_q;
  assign ret_o  = ret_q;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ph_q <= PH_PAR; idx_q <= 9'd0; st_q <= 33'd0; ret_q <= 64'd0;
      fam_q <= 8'd0; tot_q <= 16'd0; if_q <= 32'd0; src_q <= 128'd0; dst_q <= 128'd0;
      ni_q <= 9'd0; nr_q <= 9'd0; nn_q <= 9'd0; in_ok_q <= 1'b0; in_fl_q <= 8'd0;
      b_v_q <= 1'b0; b_k_q <= 9'd0; b_type_q <= 8'd0; b_gwf_q <= 8'd0;
      b_fl_q <= 8'd0; b_mtu_q <= 16'd0; b_oif_q <= 32'd0; b_met_q <= 32'd0; gw_q <= 128'd0;
      eg_ok_q <= 1'b0; eg_m4_q <= 16'd0; eg_m6_q <= 16'd0; eg_mac_q <= 48'd0; nb_ok_q <= 1'b0; nb_mac_q <= 48'd0;
      wm_q <= 7'd0;
    end else if (finish_i) begin
      ph_q <= PH_PAR; idx_q <= 9'd0; st_q <= 33'd0; ret_q <= 64'd0;
      in_ok_q <= 1'b0; b_v_q <= 1'b0; eg_ok_q <= 1'b0; nb_ok_q <= 1'b0; wm_q <= 7'd0;
    end else if (go_i && ph_q != PH_DONE) begin
      ph_q <= ph_d; idx_q <= idx_d; st_q <= st_q + 33'd1; ret_q <= ret_d;
      in_ok_q <= in_ok_d; in_fl_q <= in_fl_d;
      b_v_q <= b_v_d; b_k_q <= b_k_d; b_type_q <= b_type_d;
      b_gwf_q <= b_gwf_d; b_fl_q <= b_fl_d; b_mtu_q <= b_mtu_d; b_oif_q <= b_oif_d; b_met_q <= b_met_d;
      eg_ok_q <= eg_ok_d; eg_m4_q <= eg_m4_d; eg_m6_q <= eg_m6_d; eg_mac_q <= eg_mac_d;
      nb_ok_q <= nb_ok_d; nb_mac_q <= nb_mac_d; wm_q <= wm_d;
      if (ph_q == PH_PAR)   // (bytes 1..5 and 12..15, protocol, ports and tos/flowinfo, select nothing here)
        case (idx_q[2:0])
          3'd0: begin fam_q <= rd_data_i[7:0]; tot_q <= rd_data_i[63:48]; end
          3'd1: if_q <= rd_data_i[31:0];
          3'd2: src_q[63:0] <= rd_data_i;
          3'd3: src_q[127:64] <= rd_data_i;
          3'd4: dst_q[63:0] <= rd_data_i;
          default: dst_q[127:64] <= rd_data_i;
        endcase
      if (ph_q == PH_HDR) begin
        // no FIB (another magic): no interface, every lookup is -ENODEV; counts past the capacity read as it
        ni_q <= (w[31:0] != `SEPH_FIB_MAGIC) ? 9'd0 : (w[63:32] > {23'd0, NI_MAX}) ? NI_MAX : w[40:32];
        nr_q <= (w[31:0] != `SEPH_FIB_MAGIC) ? 9'd0 : (w[95:64] > {23'd0, NR_MAX}) ? NR_MAX : w[72:64];
        nn_q <= (w[31:0] != `SEPH_FIB_MAGIC) ? 9'd0 : (w[127:96] > {23'd0, NN_MAX}) ? NN_MAX : w[104:96];
      end
      if (ph_q == PH_GW) gw_q <= w[127:0];
    end
  end
endmodule
`default_nettype wire
