// sephirot_mapfsm: the helper unit's map FSM (map_lookup_elem, map_update_elem, map_delete_elem, redirect_map).
`default_nettype none
`include "sephirot_params.vh"

// map_lookup_elem (array, percpu_array, devmap, hash, percpu_hash, lru_hash with the LRU refresh, devmap_hash,
// lpm_trie), map_update_elem (arrays, hash maps; a full lru_hash evicts the oldest stamp after a scan of all slots
// for the victim, as docs/maps.md), map_delete_elem (hash maps, devmap; arrays -EINVAL) and redirect_map (devmap,
// devmap_hash; cpumap and xskmap: a host queue, the maps the host alone writes), probing as MapState (docs/maps.md);
// the array kinds take their slot by index, without a hash or a probe (m_array, a_lat). The key and an update's
// value are read 8 bytes a cycle through the helper unit's memory read port (shared with csum_diff and
// trace_printk), the map one MAP_WINDOW_BYTES window a cycle; an update's or delete's writes leave one window a
// cycle in the last cycles of the call. sephirot_helpers owns the call (its cycle count, its end) and the read
// faults.
module sephirot_mapfsm (
  input  wire            clk_i,
  input  wire            rst_ni,
  // the helper call: request, helper id, arguments, and where it is (sephirot_helpers)
  input  wire            req_i,
  input  wire [31:0]     id_i,
  input  wire [63:0]     r1_i,            // map handle
  input  wire [31:0]     r2_i,            // key address (redirect_map: the key)
  input  wire [63:0]     r3_i,            // value address (update), flags (redirect_map)
  input  wire [63:0]     r4_i,            // flags (update)
  input  wire            busy_i,          // the call is past its first cycle
  input  wire [32:0]     cnt_i,           // its cycles so far
  input  wire            finish_i,        // it ends this cycle
  // key and value reads through the helper unit's memory read port: rd_left_o bytes from rd_base_o + rd_off_o,
  // rd_size_i (at most 8) of them read this cycle
  output wire            rd_en_o,
  output wire            rd_val_o,        // the read is an update's value (r3), else the key (r2)
  output wire [31:0]     rd_base_o,
  output wire [31:0]     rd_off_o,
  output wire [31:0]     rd_left_o,
  input  wire [3:0]      rd_size_i,
  input  wire [63:0]     rd_data_i,
  input  wire            rd_bad_i,        // a read of the call faulted: it writes no map
  // map configuration entry of map `mid_o` and the map memory's window read port
  output wire [31:0]     mid_o,
  input  wire [255:0]    mcfg_i,
  input  wire [31:0]     mcount_i,
  output wire            mw_en_o,
  output reg  [31:0]     mw_off_o,
  input  wire [8*`SEPH_MAP_WINDOW_BYTES-1:0] mw_rdata_i,   // MAP_WINDOW_BYTES from mw_off_o
  // map memory writes, one window (MAP_WINDOW_BYTES at an 8-byte aligned offset, byte mask) a cycle
  output reg             mww_en_o,
  output reg  [31:0]     mww_off_o,
  output reg  [8*`SEPH_MAP_WINDOW_BYTES-1:0] mww_data_o,
  output reg  [`SEPH_MAP_WINDOW_BYTES-1:0]   mww_mask_o,
  output wire            mww_x_o,         // this write is to an off-chip map: it leaves through the off-chip port
  // the off-chip port (a map in the QDR or DDR tier, docs/maps.md "Memory tiers"): a read of xr_len_o windows
  // (MAP_WINDOW_BYTES each) from xr_addr_o, answered by one response (xr_rvalid_i, xr_rdata_i) after a latency the
  // memory decides; the writes (mww_*, mww_x_o) are posted
  output wire            xr_valid_o,
  output wire [31:0]     xr_addr_o,
  output wire [1:0]      xr_len_o,
  input  wire            xr_rvalid_i,
  input  wire [3*8*`SEPH_MAP_WINDOW_BYTES-1:0] xr_rdata_i,
  // the call's outcome
  output wire            fault_o,         // a map call that faults at once (HelperFault: handle, map kind, sizes)
  output wire            ufault_o,        // a fault found later in the call
  output wire            done_o,          // the FSM has decided: lat_o is the call's latency
  output wire [32:0]     lat_o,
  output reg  [63:0]     ret_o,           // r0 of a map call
  output wire            redir_o,         // redirect_map: its end sets the packet's redirect target to
  output wire            redir_valid_o,   // this validity,
  output wire [1:0]      redir_kind_o,    // kind (REDIRECT_PORT, _CPU, _XSK: a port or a host queue)
  output wire [31:0]     redir_port_o,    // and port (ifindex) or host queue (cpu, xsk queue id)
  output wire [15:0]     redir_size_o     // host queue: its size (cpumap qsize, xskmap ring size)
);
  localparam [31:0] H_LOOKUP = `SEPH_HELPER_MAP_LOOKUP_ELEM;
  localparam [31:0] H_REDIRMAP = `SEPH_HELPER_REDIRECT_MAP;
  localparam [31:0] H_UPDATE = `SEPH_HELPER_MAP_UPDATE_ELEM;
  localparam [31:0] H_DELETE = `SEPH_HELPER_MAP_DELETE_ELEM;
  localparam [1:0]  RK_PORT = `SEPH_REDIRECT_PORT;
  localparam [1:0]  RK_CPU = `SEPH_REDIRECT_CPU;
  localparam [1:0]  RK_XSK = `SEPH_REDIRECT_XSK;
  localparam [1:0]  RK_BCAST = `SEPH_REDIRECT_BROADCAST;

  localparam [31:0] HBASE = `SEPH_MAP_HANDLE_BASE;
  localparam integer KMAX = `SEPH_MAP_KEY_MAX_HW;
  localparam integer SH = `SEPH_MAP_SLOT_HEADER;
  localparam integer MW = `SEPH_MAP_WINDOW_BYTES;   // bytes of the map memory's window read per cycle
  localparam integer MWL = $clog2(MW);
  // Offsets into a map memory tier and slot indices and counts are MA bits wide: a layout fits its tiers
  // (maps.MapLayout), the largest the DDR window of 2^31 bytes, and a slot is at least 8 bytes, so every offset, slot
  // count, max_entries, entry count and LPM high-water mark of a loaded layout is below 2^MA
  localparam integer MA = `SEPH_DDR_ADDR_BITS;
  localparam [MA-1:0] ONE = 1;
  wire        is_map   = (id_i == H_LOOKUP) || (id_i == H_REDIRMAP) || (id_i == H_UPDATE) || (id_i == H_DELETE);
  wire        is_upd   = id_i == H_UPDATE;
  wire        is_del   = id_i == H_DELETE;
  assign mid_o = r1_i[31:0] - HBASE;
  wire [7:0]  m_type   = mcfg_i[7:0];
  wire [31:0] m_ks     = {16'd0, mcfg_i[31:16]};
  wire [MA-1:0] m_max  = mcfg_i[48 +: MA];
  wire [MA-1:0] m_off  = mcfg_i[80 +: MA];
  wire [MA-1:0] m_slots = mcfg_i[112 +: MA];
  wire [31:0] m_ssz    = {16'd0, mcfg_i[159:144]};
  wire [31:0] m_voff   = {16'd0, mcfg_i[191:176]};
  wire [MA-1:0] m_doff = {{(MA-16){1'b0}}, mcfg_i[207:192]};
  // the tier holding the map (configuration bits 210:209: 0 on chip, 1 QDR, 2 DDR; docs/maps.md "Memory tiers")
  wire [1:0]  m_tier   = mcfg_i[210:209];
  wire        m_x      = m_tier != `SEPH_TIER_BRAM;
  wire        m_cpu    = m_type == `SEPH_MAP_TYPE_CPUMAP;
  wire        m_xsk    = m_type == `SEPH_MAP_TYPE_XSKMAP;
  // maps of maps: a slot holds an inner map's id (an array_of_maps slot's first word; a hash_of_maps slot's header
  // second word, read with the slot's state), a lookup returns that map's handle (docs/maps.md)
  wire        m_aom    = m_type == `SEPH_MAP_TYPE_ARRAY_OF_MAPS;
  wire        m_hom    = m_type == `SEPH_MAP_TYPE_HASH_OF_MAPS;
  wire        m_outer  = m_aom || m_hom;
  // the array kinds: slot `key` of the region, no hash and no probe (helpers.INDEXED_KINDS); a plain array's lookup
  // is that slot's address alone, read from nothing (helpers.ADDRESS_KINDS)
  wire        m_array  = m_type == `SEPH_MAP_TYPE_ARRAY || m_type == `SEPH_MAP_TYPE_PERCPU_ARRAY ||
                         m_type == `SEPH_MAP_TYPE_DEVMAP || m_cpu || m_xsk || m_aom;
  wire        m_aonly  = id_i == H_LOOKUP && (m_type == `SEPH_MAP_TYPE_ARRAY || m_type == `SEPH_MAP_TYPE_PERCPU_ARRAY);
  wire        m_hash   = m_type == `SEPH_MAP_TYPE_HASH || m_type == `SEPH_MAP_TYPE_PERCPU_HASH ||
                         m_type == `SEPH_MAP_TYPE_LRU_HASH || m_type == `SEPH_MAP_TYPE_DEVMAP_HASH || m_hom;
  wire        m_dev    = m_type == `SEPH_MAP_TYPE_DEVMAP || m_type == `SEPH_MAP_TYPE_DEVMAP_HASH;
  wire        m_lpm    = m_type == `SEPH_MAP_TYPE_LPM_TRIE && id_i == H_LOOKUP;
  wire        m_lru    = m_type == `SEPH_MAP_TYPE_LRU_HASH;
  wire        m_lpmu   = m_type == `SEPH_MAP_TYPE_LPM_TRIE && (is_upd || is_del);   // LPM update / delete
  wire [31:0] m_vs     = {16'd0, mcfg_i[47:32]};
  // updates: values of up to KMAX bytes in slots of up to 80 bytes; deletes: slots of up to 80 bytes
  localparam [31:0] SWMAX = `SEPH_MAP_SLOT_WRITE_MAX;   // (the slot image below is this long)
  wire        upd_bad  = (is_upd && (m_vs > KMAX || ((m_hash || m_lpmu) && m_voff + m_vs > SWMAX))) ||
                         (is_del && m_ssz > SWMAX);
  wire        handle_ok = r1_i[63:32] == 32'd0 && r1_i[31:0] >= HBASE && mid_o < mcount_i && mcfg_i[15:8] != 8'd0;
  wire [31:0] rflags   = r3_i[31:0];
  // (broadcast and exclude-ingress are devmap flags: a cpumap or xskmap takes the action bits alone)
  wire        rm_badflags = id_i == H_REDIRMAP && (r3_i[63:32] != 32'd0 ||
                                                   (rflags & ~(m_dev ? 32'h1B : 32'h03)) != 32'd0);
  // BPF_F_BROADCAST: a scan of every slot (devmap: max_entries, devmap_hash: buckets), one window each, collecting
  // the ports its entries name (ifindex 1..31, params.BCAST_PORTS) in bcmask_q
  wire        bc       = id_i == H_REDIRMAP && m_dev && rflags[3] && !rm_badflags;
  // faults (HelperFault in the model): bad handle, map kind the call cannot use, key too long
  wire        m_fault  = is_map && (!handle_ok || !(m_array || m_hash || m_lpm || m_lpmu) || m_ks > KMAX || upd_bad ||
                         (id_i == H_REDIRMAP && !(m_dev || m_cpu || m_xsk)) ||
                         ((is_upd || is_del) && (m_cpu || m_xsk || m_outer)));   // the host's entries (docs/maps.md)

  reg  [8*KMAX-1:0] key_q;
  reg  [7:0]  kcnt_q;          // key bytes read (at most KMAX: a longer key faults)
  reg         mdone_q, mhit_q, mprob_q;
  reg  [MA-1:0] pidx_q, pn_q, mres_q;
  reg  [31:0] mval_q;
  reg  [15:0] msize_q;
  wire        k_go     = req_i && (id_i == H_LOOKUP || is_upd || is_del) && !m_fault && {24'd0, kcnt_q} < m_ks;
  // The slot an update writes, built as its key and value arrive (8 bytes a cycle through the helper port): the value
  // at its offset (arrays at 0), a hash map's key at SH (key word w is slot word w + 1), an LPM key's data at SH
  // (key word w goes to the upper half of slot word w and the lower half of word w + 1; its first four bytes, the
  // prefix length, land on the header, which the write replaces). kmask_q and vmask_q are the bytes placed, so the
  // write needs no byte ranges worked out from the sizes and offsets (as 80-bit masks and a three-way select per
  // byte, that was about 1K LUTs). The key is placed before the value, which wins where the two meet (the zeros
  // above an LPM key's last byte).
  reg  [8*80-1:0] vimg_q;
  reg  [79:0]     kmask_q, vmask_q;
  reg  [7:0]  vcnt_q;
  wire        v_go     = req_i && is_upd && !m_fault && {24'd0, kcnt_q} >= m_ks && {24'd0, vcnt_q} < m_vs;
  wire [31:0] val_left = m_vs - {24'd0, vcnt_q};
  wire        kdone    = id_i == H_REDIRMAP || {24'd0, kcnt_q} >= m_ks;   // probing starts once the key is in
  wire        vdone    = !is_upd || {24'd0, vcnt_q} >= m_vs;              // the value is read while probing
  // (redirect_map's key is r2's low word; devmaps have 4-byte keys, so the bytes above it are never used)
  wire [8*KMAX-1:0] key = {key_q[8*KMAX-1:32], (id_i == H_REDIRMAP) ? r2_i : key_q[31:0]};
  wire [31:0] key_left = m_ks - {24'd0, kcnt_q};
  // the read port: the key, then an update's value
  assign rd_en_o   = k_go || v_go;
  assign rd_base_o = k_go ? r2_i : r3_i[31:0];
  assign rd_val_o  = !k_go;
  assign rd_off_o  = {24'd0, k_go ? kcnt_q : vcnt_q};
  assign rd_left_o = k_go ? key_left : val_left;
  // the bytes read (as compares, not a shift of a mask: with a shift here yosys's `share` pass ran out of memory)
  reg  [7:0]  hm_smask;
  integer hb;
  always @(*) for (hb = 0; hb < 8; hb = hb + 1) hm_smask[hb] = {1'b0, hb[2:0]} < rd_size_i;

  // hash of the key (maps.key_hash): x = len; x ^= rotl32(word i, 7 i mod 32); h = x * MULT; h ^ (h >> 16)
  reg  [31:0] hx, hw;
  reg  [4:0]  hr;
  integer hi;
  always @(*) begin
    hx = m_ks;
    hw = 32'd0;
    hr = 5'd0;
    if (p_want && m_hash) for (hi = 0; hi < KMAX / 4; hi = hi + 1)
      if (4 * hi < m_ks) begin
        hw = key[32*hi +: 32];
        hr = hi[4:0] * 5'd7;
        hx = hx ^ ((hw << hr) | ((hr == 5'd0) ? 32'd0 : (hw >> (6'd32 - {1'b0, hr}))));
      end
  end
  wire [31:0] hm0 = hx * `SEPH_MAP_HASH_MULT;
  // (only its bits below MA pick a slot: a hash map's slot count is a power of two below 2^MA)
  /* verilator lint_off UNUSEDSIGNAL */
  wire [31:0] hsh = hm0 ^ (hm0 >> 16);
  /* verilator lint_on UNUSEDSIGNAL */

  // probes through the map memory's window, hl_n windows a hash slot
  wire [63:0] uflags   = r4_i;
  wire        ubadfl   = is_upd && uflags > 64'd2;
  reg         ufree_v_q, uhdr_q, ufound_q, ufault_q;
  reg  [MA-1:0] ufree_q, ucount_q, uslot_q;
  reg  [31:0] ures_q, uclk_q;
  // LRU eviction: scan of every slot for the used one with the smallest stamp (first on a tie)
  reg         uev_q, vbest_v_q;
  reg  [MA-1:0] ustart_q, ufidx_q, vbest_q, uvoff_q;
  reg  [31:0] vstamp_q;
  wire [31:0] uclk1    = uclk_q + 32'd1;
  wire        p_want   = req_i && is_map && !m_fault && kdone && !mdone_q && !rm_badflags;
  wire        p_go     = p_want && (!m_xs || (x_hdr && (u_hdr || x_have)));   // (off chip: its data has come)
  // A probe of a hash slot (header and key) or a step of an LPM scan (header and prefix data) reads the slot
  // one MW-byte window per cycle, lc_q counting them; the decision is taken on the last one (p_do) from the
  // compares of every window (keq_q, pm_q) and the header of the first (s_state_q, s_plen_q, s_val_q). The other
  // steps (region headers, arrays, the LRU scan of stamps) read one window.
  reg  [1:0]  lc_q;
  reg         keq_q, pm_q;
  reg  [7:0]  s_state_q;
  reg  [31:0] s_plen_q, s_val_q;
  wire [31:0] hl_n     = (m_ks + SH + MW - 1) >> MWL;          // windows of a hash slot's header and key
  /* verilator lint_off UNUSEDSIGNAL */
  wire [31:0] ll_n     = (m_ks - 4 + SH + MW - 1) >> MWL;      // of an LPM slot's header and prefix data (1..3)
  /* verilator lint_on UNUSEDSIGNAL */
  // hash and LPM maps: the region header (entry count, LRU clock, high-water mark) is read in the first key-read
  // cycle (the window is idle then), so a hit that changes it (delete, LRU refresh) needs no cycle beyond the
  // probes, and an LPM lookup's scan starts with its first slot
  wire        hdr_go   = k_go && (m_hash || m_lpm || m_lpmu) && kcnt_q == 8'd0 && !m_x;
  assign mw_en_o = (p_go || hdr_go) && !m_x && !m_aonly;

  // Off-chip hash maps (docs/maps.md "Memory tiers"): the region header and then each slot the call visits (a
  // probe, or a slot of the LRU victim scan) are read through the off-chip port, one read of the probe's hl_n windows
  // at a time: the header in the call's first cycle (the key is read meanwhile), a slot when the FSM would read its
  // first window; its windows are then taken one a cycle as on chip. The insert's second look at the header uses the
  // words the first brought. xst_q counts the cycles a read is out (each read's latency, tier_read_cycles of hl_n
  // windows): the call's latency is the on-chip one plus xst_q, so (1 + probes) reads (helpers.off_chip_probe_cycles).
  // An off-chip array reads nothing: its lookup is an address, its update a write.
  wire        m_xs     = m_x && m_hash;
  localparam integer XW = 3 * 8 * MW;
  reg         xrv_q, xout_q, xhk_q, xh_q, xv_q, xstale_q;
  reg  [XW-1:0] xrd_q;                     // the last response (a visit's windows until the next request)
  reg  [63:0] xhw_q;                       // the header's first word (entry count, LRU clock)
  reg  [32:0] xst_q;
  wire        x_call   = req_i && is_map && !m_fault && m_xs && !rm_badflags && !xstale_q;
  wire        x_back   = xout_q && xrv_q && !xstale_q;   // the read out is answered this cycle
  wire        x_hdr    = xh_q || (x_back && xhk_q);
  wire        x_have   = xv_q || (x_back && !xhk_q);
  wire        x_free   = !xout_q || xrv_q;
  wire        x_hreq   = x_call && !xh_q && !xout_q && !mdone_q;
  wire        x_vreq   = x_call && p_want && !u_hdr && lc_q == 2'd0 && !x_have && x_hdr && x_free;
  wire [MA-1:0] x_off  = x_hreq ? m_off : slot_off;
  assign xr_valid_o = x_hreq || x_vreq;
  assign xr_addr_o  = ((m_tier == `SEPH_TIER_QDR) ? `SEPH_QDR_BASE : `SEPH_DDR_BASE) + {{(32-MA){1'b0}}, x_off};
  assign xr_len_o   = hl_n[1:0];
  wire [8*MW-1:0] x_win = u_hdr ? {{(8*MW-64){1'b0}}, xhw_q} : window(xrd_q, lc_q);
  // the window the FSM reads this cycle: the map memory's, or an off-chip read's
  wire [8*MW-1:0] mw_d  = m_x ? x_win : mw_rdata_i;
  // the region header: on chip in the first key-read cycle, off chip when its read comes
  wire        hdr_cap  = hdr_go || (x_back && xhk_q);
  wire [95:0] hdr_w    = m_x ? xrd_q[95:0] : mw_rdata_i[95:0];
  wire [31:0] a_idx    = key[31:0];
  wire [MA-1:0] cur    = (m_lpm || m_lpmu) ? pidx_q : (mprob_q ? pidx_q : (hsh[MA-1:0] & (m_slots - 1'b1)));
  wire        u_hdr    = m_hash && uhdr_q;   // this cycle reads the region header (entry count, LRU clock)
  // the offset of slot `idx` of the map (its region's data, then slots of m_ssz bytes)
  function automatic [MA-1:0] slot_at(input [MA-1:0] idx);
    slot_at = m_off + m_doff + idx * m_ssz[MA-1:0];
  endfunction
  wire [MA-1:0] slot_off = slot_at(bc ? pidx_q : (m_array ? a_idx[MA-1:0] : cur));
  wire [MA-1:0] bc_n    = m_array ? m_max : m_slots;   // the slots a broadcast scans
  reg  [30:0]   bcmask_q;                              // ports 1..31 (params.BCAST_PORTS)

  // LPM trie: scan the slots below the high-water mark (header word 2, read with the key), keep the longest
  // matching prefix
  // LPM update/delete: scan of the slots below the high-water mark (read with the key) for the exact entry,
  // the first free slot, the last other used slot; one more cycle decides
  reg         lex_v_q, lfree_v_q, ldec_q;
  reg  [MA-1:0] uhigh_q, lex_q, lfree_q, llast_q, lnhigh_q;
  reg         ucbig_q;             // the header's entry count is beyond MA bits (a corrupted header: full)
  wire        l_exact  = s_state == 8'd1 && s_plen == kplen && pmatch;
  wire [MA-1:0] l_slot = lex_v_q ? lex_q : (lfree_v_q ? lfree_q : uhigh_q);
  wire [MA-1:0] l_off  = slot_at(l_slot);
  reg  [8:0]  lbest_q;             // prefix lengths up to 8 (KMAX - 4) bits
  reg         lfound_q;
  wire [31:0] kplen    = key[31:0];
  wire [8:0]  dbits    = {m_ks[5:0] - 6'd4, 3'd0};          // (4 < m_ks <= KMAX, else the call faults)
  wire [8:0]  want     = (kplen < {23'd0, dbits}) ? kplen[8:0] : dbits;
  // (the probe's windows: declared here, after the LPM scan's state they depend on)
  wire        ml_hash  = m_hash && !uev_q && !uhdr_q && !(is_upd && ubadfl) && !bc;
  wire        ml_lpm   = m_lpm || (m_lpmu && !ldec_q && pidx_q < uhigh_q && !(is_upd && kplen > dbits));
  wire [1:0]  p_lmax   = ml_hash ? hl_n[1:0] - 2'd1 : (ml_lpm ? ll_n[1:0] - 2'd1 : 2'd0);
  wire        p_last   = lc_q == p_lmax;
  wire        p_do     = p_go && p_last;
  wire [31:0] s_plen   = (lc_q == 2'd0) ? mw_d[63:32] : s_plen_q;
  // the prefix covers data bytes 0 .. s_plen/8 - 1 entirely and the high s_plen % 8 bits of the next one
  // (a prefix of 8 (KMAX-4) bits or more covers every data byte)
  // The windows a probe compares are those of the slot image the key read builds (vimg_q): the hash key or the LPM
  // key's data at SH (its bytes past the key are not compared). redirect_map has no key read: its 4-byte
  // devmap_hash key is r2's low word.
  localparam integer XB = 3 * MW;
  wire [8*XB-1:0] kx = {{(8*XB-8*80){1'b0}}, vimg_q};
  // window lc of a slot's three windows (the key image's here, an off-chip read's below)
  function automatic [8*MW-1:0] window(input [8*XB-1:0] img, input [1:0] lc);
    window = img[0 +: 8*MW];
    if (lc == 2'd1) window = img[8*MW +: 8*MW];
    if (lc == 2'd2) window = img[16*MW +: 8*MW];
  endfunction
  reg  [8*MW-1:0] kwin;                      // window lc_q of the image
  always @(*) begin
    kwin = window(kx, lc_q);
    if (id_i == H_REDIRMAP) kwin[8*SH +: 32] = r2_i;
  end
  reg         pm_w, pmatch;
  reg  [6:0]  pbs;                          // a window byte's place in the slot
  reg  [6:0]  pbd;                          // and in the prefix data
  integer pb;
  wire        plong = s_plen >= 8 * (KMAX - 4);
  wire [7:0]  pmask = 8'hFF << (4'd8 - {1'b0, s_plen[2:0]});
  always @(*) begin
    pm_w = 1'b1;
    pbs = 7'd0; pbd = 7'd0;
    if (p_go && (m_lpm || m_lpmu))
      for (pb = 0; pb < MW; pb = pb + 1) begin
        pbs = {lc_q, pb[MWL-1:0]};
        pbd = pbs - SH[6:0];
        if (pbs >= SH[6:0] && {25'd0, pbd} < KMAX - 4) begin
          if (plong || pbd[5:0] < s_plen[8:3]) begin
            if (mw_d[8*pb +: 8] != kwin[8*pb +: 8]) pm_w = 1'b0;
          end else if (pbd[5:0] == s_plen[8:3] && s_plen[2:0] != 3'd0) begin
            if (((mw_d[8*pb +: 8] ^ kwin[8*pb +: 8]) & pmask) != 8'd0) pm_w = 1'b0;
          end
        end
      end
    pmatch = (lc_q == 2'd0 || pm_q) && pm_w;
  end
  wire        l_better = s_state == 8'd1 && s_plen[31:9] == 23'd0 && (!lfound_q || s_plen[8:0] > lbest_q) &&
                         s_plen[8:0] <= want && pmatch;
  reg         keq_w, keq;
  reg  [6:0]  kbs;
  integer ki;
  always @(*) begin
    mw_off_o = {{(32-MA){1'b0}}, ((u_hdr || hdr_go) ? m_off : slot_off) + {{(MA-2-MWL){1'b0}}, lc_q, {MWL{1'b0}}}};
    keq_w = 1'b1;
    kbs = 7'd0;
    if (p_go && m_hash)
      for (ki = 0; ki < MW; ki = ki + 1) begin
        kbs = {lc_q, ki[MWL-1:0]};
        if (kbs >= SH[6:0] && {25'd0, kbs} < SH + m_ks && mw_d[8*ki +: 8] != kwin[8*ki +: 8]) keq_w = 1'b0;
      end
    keq = (lc_q == 2'd0 || keq_q) && keq_w;
  end
  wire [7:0]  s_state  = (lc_q == 2'd0) ? mw_d[7:0] : s_state_q;
  // (value offsets are multiples of 8: the key is padded to 8 bytes, docs/maps.md)
  // (the value's first word, for redirect_map and devmap lookups: a devmap_hash value is in the first window)
  reg  [31:0] s_val_w, s_val;
  integer sv;
  always @(*) begin
    s_val_w = mw_d[31:0];
    if (!m_array)
      for (sv = 1; sv < MW / 8; sv = sv + 1) if (m_voff[MWL-1:3] == sv[MWL-4:0] && m_voff < MW) s_val_w = mw_d[64*sv +: 32];
    s_val = (lc_q == 2'd0) ? s_val_w : s_val_q;
  end
  wire [MA:0] pn_next  = {1'b0, pn_q} + 1'b1;
  wire [2:0]  klines   = m_ks[6:4] + {2'd0, m_ks[3:0] != 4'd0};   // 16-byte lines of a key (KMAX: at most 4)
  wire [32:0] vlines   = ({1'b0, m_vs} + 33'd15) >> 4;
  // the victim when the scan reads its last slot (this slot counts)
  wire        ev_this  = s_state == 8'd1 && (!vbest_v_q || mw_d[63:32] < vstamp_q);
  wire [MA-1:0] ev_victim = ev_this ? pidx_q : vbest_q;
  wire [MA-1:0] ev_off = slot_at(ev_victim);
  wire [MA:0] pn_upd   = {1'b0, pn_q} + (uev_q ? {1'b0, m_slots} : {(MA+1){1'b0}});   // eviction adds the scan
  // helpers.helper_latency: max(2 + probes * key lines, key words + probes * windows) (+ value lines for an
  // update). The second term is when the FSM is done with a key above 24 bytes (read 8 bytes per cycle before
  // probing, then hl_n windows a probe);
  // taking it in the formula keeps the latency a function of (probes, key size) alone
  wire [32:0] kwords   = ({1'b0, m_ks} + 33'd7) >> 3;
  wire [MA:0] pn_m     = is_upd ? pn_upd : {1'b0, pn_q};
  wire [32:0] pn_map   = {{(32-MA){1'b0}}, pn_m};
  // (key lines are 1 to 4 for keys of up to KMAX bytes: shifts and one add, not a multiplier)
  wire [32:0] l_lines  = 33'd2 + ((klines == 3'd2) ? {pn_map[31:0], 1'b0} :
                                  (klines == 3'd3) ? pn_map + {pn_map[31:0], 1'b0} :
                                  (klines == 3'd4) ? {pn_map[30:0], 2'b0} : pn_map);
  // (a probe reads hl_n windows: at most three for keys of up to KMAX bytes; the LRU scan's slots count as
  // probes here, so the formula stays a function of (probes, key size))
  wire [32:0] l_key    = kwords + ((hl_n == 32'd1) ? pn_map : (hl_n == 32'd2) ? {pn_map[31:0], 1'b0} :
                                   pn_map + {pn_map[31:0], 1'b0});
  wire [32:0] l_keyed  = (l_key > l_lines) ? l_key : l_lines;
  // an update also reads its value, 8 bytes per cycle after the key: max(keyed + value lines, key + value words)
  wire [32:0] vwords   = ({1'b0, m_vs} + 33'd7) >> 3;
  wire [32:0] u_lines  = l_keyed + vlines;
  wire [32:0] u_words  = kwords + vwords;
  // The array kinds (helpers.indexed_latency): the key comes in (kwords cycles), the next cycle checks the index and
  // takes the slot's address, where a plain array's lookup ends (a_now, below); a lookup that reads the slot (its
  // window read in that cycle, the outcome registered) and a delete (its writes from mres_q) end one cycle later; an
  // update's value comes in after the key and is written from vimg_q in the next cycle. redirect_map reads its slot
  // in the call's first cycle (the key is r2) and ends in the second.
  wire [32:0] a_lat    = (id_i == H_REDIRMAP) ? 33'd1 : is_upd ? u_words : kwords + {32'd0, !m_aonly};
  wire [32:0] m_lat    = (m_array && !bc) ? a_lat :
                         (id_i == H_LOOKUP || is_del) ? l_keyed :
                         is_upd ? ((u_words > u_lines) ? u_words : u_lines) :
                         33'd2 + {{(33-MA){1'b0}}, pn_q};

  // map memory writes of an update, at the end of its row. The slot's byte ranges are masks, and the value and key
  // are placed as whole words (a byte loop with a variable source index per byte gave synthesis hundreds of wide
  // shifters).
  // below(n): bytes 0 .. n-1 of a slot. Word w of it is all ones when w is below n's word, the low n % 8 bytes
  // when it is n's word, else zero: one LUT per byte on decodes of n shared by all 80 (as a shift of a mask it was
  // seven 80-bit multiplexer stages per call). Written by words, not bytes: an 80-step bit loop is not unrolled by
  // the simulator and made the whole model 3.5 times slower
  function automatic [79:0] below(input [31:0] n);
    reg [7:0] tail;
    integer k;
    for (k = 0; k < 8; k = k + 1) tail[k] = k[2:0] < n[2:0];   // (not a shift: yosys's `share` pass ran out of memory)
    for (k = 0; k < 10; k = k + 1)
      below[8*k +: 8] = (n >= 32'd80 || k[3:0] < n[6:3]) ? 8'hFF : (k[3:0] == n[6:3]) ? tail : 8'h00;
  endfunction
  wire [79:0] ssz_mask  = below(m_ssz);       // a whole slot (deletes, the LRU victim)
  // the word of vimg_q the value's next 8 bytes go to (the value is read 8 bytes per cycle from its offset 0, and
  // value offsets are multiples of 8: placing it as it arrives needs no shifter, which was 1.5K LUTs)
  wire [3:0]  vimg_w   = (m_array ? 4'd0 : m_voff[6:3]) + {1'b0, vcnt_q[5:3]};
  // the image's half words written this cycle: the word read, swapped for an LPM key, so that each half keeps its
  // place in a slot word (the key word's low half goes to the upper half of slot word w, its high half to the
  // lower half of word w + 1); a value word or a hash key word fills one slot word
  wire        img_lpm  = k_go && m_type == `SEPH_MAP_TYPE_LPM_TRIE;
  wire [63:0] img_d    = img_lpm ? {rd_data_i[31:0], rd_data_i[63:32]} : rd_data_i;
  wire [7:0]  img_m    = img_lpm ? {hm_smask[3:0], hm_smask[7:4]} : hm_smask;
  wire [3:0]  img_kw   = {1'b0, kcnt_q[5:3]};
  reg  [9:0]  img_lo, img_hi;
  integer iw;
  always @(*)
    for (iw = 0; iw < 10; iw = iw + 1) begin
      img_lo[iw] = (v_go && vimg_w == iw[3:0]) || (k_go && !m_array && img_kw + 4'd1 == iw[3:0]);
      img_hi[iw] = (v_go && vimg_w == iw[3:0]) ||
                   (k_go && !m_array && (img_lpm ? img_kw : img_kw + 4'd1) == iw[3:0]);
    end
  // The bytes a slot write carries: the slot image above, its bytes 0..7 replaced by the header of a hash or LPM
  // slot (state, then the LRU stamp or the prefix length). A delete or an LRU refresh has no value or key: its
  // data is zero (the image is taken only for an update) and it clears what its mask covers.
  wire [7:0]  hdr_st   = is_del ? (m_hash ? 8'd2 : 8'd0) : 8'd1;
  wire [31:0] hdr_wd   = is_del ? 32'd0 : (m_lpmu ? kplen : uclk1);
  // The call's writes, once it has decided (mdone_q): the victim's slot or the LPM header (C), the slot (A), the
  // hash header (B), each as bytes and a byte mask from its offset. They leave one window a cycle, C's then A's
  // then B's, from the cycle the map access alone would have ended in (m_lat): the latency grows by the windows
  // past the first (helpers.helper_latency, MapState.last_writes). C and A are different slots, or C clears the
  // slot A then writes, so the order is the byte-wise one.
  reg             wa_en, wb_en, wc_en;
  reg  [MA-1:0]   wa_off, wb_off, wc_off;
  reg  [8*80-1:0] wa_data, wc_data;
  reg  [79:0]     wa_mask, wc_mask;
  reg  [63:0]     wb_data;
  reg  [7:0]      wb_mask;
  always @(*) begin
    wa_data = is_upd ? vimg_q : {8*80{1'b0}};
    if (!m_array) wa_data[63:0] = {hdr_wd, 24'd0, hdr_st};
  end
  always @(*) begin
    wa_en = 1'b0; wa_off = mres_q; wa_mask = 80'd0;
    wb_en = 1'b0; wb_off = m_off; wb_data = {uclk1, {(32-MA){1'b0}}, ucount_q + 1'b1}; wb_mask = 8'h0F;
    wc_en = 1'b0; wc_off = uvoff_q; wc_data = {{8*79{1'b0}}, 8'd2}; wc_mask = 80'd0;
    if (req_i && is_upd && !m_fault && !ufault_q && mdone_q && ures_q == 32'd0 && !rd_bad_i) begin
      wa_en = 1'b1;
      if (m_array) begin
        wa_mask = vmask_q;
      end else if (m_lpmu) begin   // state, prefixlen, data, value; the header's count and high-water mark
        wa_mask = vmask_q | kmask_q | 80'hF1;
        wc_en = 1'b1; wc_off = m_off; wc_mask[11:0] = 12'hF0F;
        wc_data[31:0] = {{(32-MA){1'b0}}, ucount_q} + {31'd0, !lex_v_q}; wc_data[64 +: MA] = lnhigh_q;
      end else begin
        wa_mask = vmask_q | (ufound_q ? 80'd0 : kmask_q);
        if (!ufound_q) begin wa_mask[0] = 1'b1; wb_en = 1'b1; end
        if (m_lru) begin   // LRU stamp of the slot and the region's clock
          wa_mask[7:4] = 4'hF;
          wb_en = 1'b1; wb_mask = ufound_q ? 8'hF0 : 8'hFF;
          if (uev_q) begin   // the victim becomes a tombstone, the entry count is unchanged
            wb_data = {uclk1, {(32-MA){1'b0}}, ucount_q}; wc_en = 1'b1;
            wc_mask = ssz_mask;
          end
        end
      end
    end
    if (req_i && is_del && !m_fault && mdone_q && ures_q == 32'd0 && !rd_bad_i) begin
      wa_en = 1'b1;       // the slot cleared (hash maps: marked deleted), the entry count decremented
      wa_mask = ssz_mask;
      if (m_hash) begin
        wb_en = 1'b1; wb_data = {32'd0, {{(32-MA){1'b0}}, ucount_q} - 32'd1};
      end
      if (m_lpmu) begin    // LPM: the slot emptied; count - 1, the high-water mark recomputed
        wc_en = 1'b1; wc_off = m_off; wc_mask[11:0] = 12'hF0F; wc_data[7:0] = 8'd0;
        wc_data[31:0] = {{(32-MA){1'b0}}, ucount_q} - 32'd1; wc_data[64 +: MA] = lnhigh_q;
      end
    end
    if (req_i && id_i == H_LOOKUP && m_lru && !m_fault && mdone_q && mhit_q && !rd_bad_i) begin
      wa_en = 1'b1; wa_off = uslot_q; wa_mask[7:4] = 4'hF;
      wb_en = 1'b1; wb_mask = 8'hF0;
    end
  end
  // windows of each write: A from its slot's start to the end of what it writes, C a slot or the 12-byte header
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic [2:0] wins(input [6:0] n);   // windows covering n bytes (n <= 80: at most 3)
    reg [6:0] t;
    t = (n + MW[6:0] - 7'd1) >> MWL;
    wins = t[2:0];
  endfunction
  wire [31:0] wa_ext = is_del ? m_ssz : (is_upd ? (m_array ? m_vs : m_voff + m_vs) : 32'd8);
  /* verilator lint_on UNUSEDSIGNAL */
  wire [2:0]  wa_cnt = wa_en ? wins(wa_ext[6:0]) : 3'd0;
  wire [2:0]  wc_cnt = wc_en ? (m_lpmu ? 3'd1 : wins(m_ssz[6:0])) : 3'd0;
  wire [2:0]  w_all  = wa_cnt + wc_cnt + {2'd0, wb_en};
  wire [32:0] w_more = (w_all == 3'd0) ? 33'd0 : {30'd0, w_all - 3'd1};
  wire [32:0] m_end  = m_lat + xst_q;                   // (off chip: after the waits for its reads)
  wire [32:0] w_i    = cnt_i - m_end;                   // this cycle's window, counted from m_end
  wire [8*96-1:0] wa_pad = {128'd0, wa_data};
  wire [8*96-1:0] wc_pad = {128'd0, wc_data};
  wire [95:0]     wa_mpad = {16'd0, wa_mask};
  wire [95:0]     wc_mpad = {16'd0, wc_mask};
  reg  [1:0]      w_k;                      // the window of the write (0..2)
  always @(*) begin
    mww_en_o = 1'b0; mww_off_o = 32'd0; mww_data_o = {8*MW{1'b0}}; mww_mask_o = {MW{1'b0}};
    w_k = 2'd0;
    if (req_i && is_map && mdone_q && vdone && busy_i && cnt_i >= m_end && w_i < {30'd0, w_all}) begin
      mww_en_o = 1'b1;
      if (w_i[2:0] < wc_cnt) begin
        w_k = w_i[1:0];
        mww_off_o = {{(32-MA){1'b0}}, wc_off + {{(MA-2-MWL){1'b0}}, w_k, {MWL{1'b0}}}};
        mww_data_o = wc_pad[8*MW*w_k +: 8*MW]; mww_mask_o = wc_mpad[MW*w_k +: MW];
      end else if (w_i[2:0] < wc_cnt + wa_cnt) begin
        w_k = w_i[1:0] - wc_cnt[1:0];
        mww_off_o = {{(32-MA){1'b0}}, wa_off + {{(MA-2-MWL){1'b0}}, w_k, {MWL{1'b0}}}};
        mww_data_o = wa_pad[8*MW*w_k +: 8*MW]; mww_mask_o = wa_mpad[MW*w_k +: MW];
      end else begin
        mww_off_o = {{(32-MA){1'b0}}, wb_off};
        mww_data_o = {{(8*MW-64){1'b0}}, wb_data}; mww_mask_o = {{(MW-8){1'b0}}, wb_mask};
      end
    end
  end

  // a lookup's pointer carries the tag of its value (execution contract section 4, sephirot_mapguard.v): read-only
  // (configuration bit 208), the value's length and start in 8-byte words (values are 8-byte aligned and padded)
  localparam integer TS = `SEPH_MAP_TAG_START_BITS;
  localparam integer TL = `SEPH_MAP_TAG_LEN_BITS;
  localparam integer TR = `SEPH_MAP_TAG_RDONLY_BIT;
  // (value size [47:32] / 8, rounded up; bit 208 of the entry: read-only)
  // (off chip: the tier's field widths, and DDR counts in 16-byte units; params.map_tag)
  localparam integer QS = `SEPH_QDR_TAG_START_BITS;
  localparam integer QL = `SEPH_QDR_TAG_LEN_BITS;
  localparam integer DS = `SEPH_DDR_TAG_START_BITS;
  localparam integer DL = `SEPH_DDR_TAG_LEN_BITS;
  wire [TL-1:0] tag_len = {{(TL-13){1'b0}}, mcfg_i[47:35]} + {{(TL-1){1'b0}}, |mcfg_i[34:32]};
  wire [DL-1:0] tag_dlen = mcfg_i[36 +: DL] + {{(DL-1){1'b0}}, |mcfg_i[35:32]};   // (values of up to 240 bytes)
  wire [31:0] tag_ro    = {31'd0, mcfg_i[208]} << TR;
  // a plain array's lookup ends in the cycle after its key read: the index check and the slot's address from
  // key_q, not registered first (m_aonly's window is not read)
  wire        a_now    = m_aonly && p_want;
  wire        l_hit    = a_now ? a_idx < {{(32-MA){1'b0}}, m_max} : mhit_q;
  wire [MA-1:0] l_res  = a_now ? slot_off : mres_q;
  reg  [31:0] val_tag, val_addr;
  always @(*) begin
    val_tag = tag_ro | {{(32-TL){1'b0}}, tag_len} << TS | {{(32-TS){1'b0}}, l_res[TS+2:3]};
    val_addr = `SEPH_MAP_BASE + {{(32-MA){1'b0}}, l_res};
    if (m_tier == `SEPH_TIER_QDR) begin
      val_tag = tag_ro | {{(32-QL){1'b0}}, tag_len[QL-1:0]} << QS | {{(32-QS){1'b0}}, l_res[QS+2:3]};
      val_addr = `SEPH_QDR_BASE + {{(32-MA){1'b0}}, l_res};
    end else if (m_tier == `SEPH_TIER_DDR) begin
      val_tag = tag_ro | {{(32-DL){1'b0}}, tag_dlen} << DS | {{(32-DS){1'b0}}, l_res[DS+3:4]};
      val_addr = `SEPH_DDR_BASE + {{(32-MA){1'b0}}, l_res};
    end
  end
  // the call's outcome (the latency counts the writes' windows past the first)
  assign fault_o = m_fault;
  assign ufault_o = ufault_q;
  // (bad redirect_map flags are known in the first cycle: the call costs what its map kind's access costs)
  assign done_o = (mdone_q && vdone) || rm_badflags || a_now;
  assign lat_o = rm_badflags ? (m_array ? 33'd1 : 33'd3) : m_end + w_more;
  assign mww_x_o = m_x;
  always @(*) begin
    ret_o = 64'd0;
    case (id_i)
      H_LOOKUP:   ret_o = !l_hit ? 64'd0 : m_outer ? {32'd0, HBASE + mval_q} :
                          {val_tag, val_addr};
      H_UPDATE, H_DELETE: ret_o = {{32{ures_q[31]}}, ures_q};
      H_REDIRMAP: ret_o = rm_badflags ? 64'd`SEPH_XDP_ABORTED : (mhit_q ? 64'd`SEPH_XDP_REDIRECT : {62'd0, rflags[1:0]});
      default:    ret_o = 64'd0;
    endcase
  end
  assign redir_o = id_i == H_REDIRMAP && !m_fault && !rm_badflags;
  assign redir_valid_o = mhit_q;
  // (a broadcast: the ports, and bit 31 for BPF_F_EXCLUDE_INGRESS, which the output stage applies)
  assign redir_port_o = bc ? {rflags[4], bcmask_q} : mval_q;
  assign redir_size_o = msize_q;
  assign redir_kind_o = bc ? RK_BCAST : m_cpu ? RK_CPU : m_xsk ? RK_XSK : RK_PORT;

  integer bw;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      key_q <= {8*KMAX{1'b0}}; kcnt_q <= 8'd0; mdone_q <= 1'b0; mhit_q <= 1'b0; mprob_q <= 1'b0;
      pidx_q <= {MA{1'b0}}; pn_q <= {MA{1'b0}}; mres_q <= {MA{1'b0}}; mval_q <= 32'd0; msize_q <= 16'd0;
      lbest_q <= 9'd0; lfound_q <= 1'b0;
      vimg_q <= {8*80{1'b0}}; kmask_q <= 80'd0; vmask_q <= 80'd0; vcnt_q <= 8'd0; bcmask_q <= 31'd0;
      ufree_v_q <= 1'b0; uhdr_q <= 1'b0; ufound_q <= 1'b0;
      ufree_q <= {MA{1'b0}}; ucount_q <= {MA{1'b0}}; ures_q <= 32'd0; ufault_q <= 1'b0; uclk_q <= 32'd0;
      uslot_q <= {MA{1'b0}}; uev_q <= 1'b0; vbest_v_q <= 1'b0; ustart_q <= {MA{1'b0}}; ufidx_q <= {MA{1'b0}};
      vbest_q <= {MA{1'b0}}; vstamp_q <= 32'd0; uvoff_q <= {MA{1'b0}};
      lex_v_q <= 1'b0; lfree_v_q <= 1'b0; ldec_q <= 1'b0; uhigh_q <= {MA{1'b0}}; ucbig_q <= 1'b0;
      lex_q <= {MA{1'b0}}; lfree_q <= {MA{1'b0}}; llast_q <= {MA{1'b0}}; lnhigh_q <= {MA{1'b0}};
      lc_q <= 2'd0; keq_q <= 1'b0; pm_q <= 1'b0; s_state_q <= 8'd0; s_plen_q <= 32'd0; s_val_q <= 32'd0;
      xrv_q <= 1'b0; xout_q <= 1'b0; xhk_q <= 1'b0; xh_q <= 1'b0; xv_q <= 1'b0; xstale_q <= 1'b0;
      xhw_q <= 64'd0; xst_q <= 33'd0;
    end else begin
      // the off-chip reads: one out at a time; a read still out when its call ends (a fault) is let go by
      xrv_q <= xr_rvalid_i;
      if (xr_valid_o) begin
        xout_q <= 1'b1; xhk_q <= x_hreq;
      end else if (xout_q && xrv_q) begin
        xout_q <= 1'b0; xstale_q <= 1'b0;
      end
      if (x_back && xhk_q) begin xh_q <= 1'b1; xhw_q <= xrd_q[63:0]; end
      xv_q <= x_have && !(p_go && p_last);
      if (xr_valid_o || (xout_q && !xrv_q && !xstale_q)) xst_q <= xst_q + 33'd1;
      if (hdr_cap) begin
        // (a corrupted header walks no further than the map's slots: the scan stays in the region and in time)
        ucount_q <= hdr_w[MA-1:0]; uclk_q <= hdr_w[63:32];
        uhigh_q <= (hdr_w[95:64] > {{(32-MA){1'b0}}, m_slots}) ? m_slots : hdr_w[64 +: MA];
        ucbig_q <= hdr_w[31:MA] != {(32-MA){1'b0}};
      end
      // (the buffers are read 8 bytes per cycle from offset 0: every write is a whole aligned word, selected by a
      // compare per word; a part-select at 64 * count made yosys build a 64-to-512-bit shifter per buffer for the
      // data and another for its mask)
      for (bw = 0; bw < 10; bw = bw + 1) begin
        if (img_lo[bw]) vimg_q[64*bw +: 32] <= img_d[31:0];
        if (img_hi[bw]) vimg_q[64*bw+32 +: 32] <= img_d[63:32];
      end
      if (k_go) begin
        for (bw = 0; bw < KMAX / 8; bw = bw + 1) if (kcnt_q[5:3] == bw[2:0]) key_q[64*bw +: 64] <= rd_data_i;
        for (bw = 0; bw < 10; bw = bw + 1) begin
          if (img_lo[bw]) kmask_q[8*bw +: 4] <= img_m[3:0];
          if (img_hi[bw]) kmask_q[8*bw+4 +: 4] <= img_m[7:4];
        end
        kcnt_q <= kcnt_q + {4'd0, rd_size_i};
      end
      if (v_go) begin
        for (bw = 0; bw < 10; bw = bw + 1) if (img_lo[bw]) vmask_q[8*bw +: 8] <= img_m;
        vcnt_q <= vcnt_q + {4'd0, rd_size_i};
      end
      if (p_do && is_upd && (ubadfl || m_array)) begin
        mdone_q <= 1'b1; pn_q <= ONE; ures_q <= 32'd0;
        if (ubadfl) ures_q <= -32'd22;                                    // -EINVAL
        else if (a_idx >= m_max) ures_q <= -32'd7;                        // -E2BIG
        else if (uflags == 64'd1) ures_q <= -32'd17;                      // BPF_NOEXIST: -EEXIST
        mres_q <= slot_off;
      end else if (p_do && uev_q) begin               // LRU eviction: slot pidx_q of the scan
        pidx_q <= pidx_q + 1'b1;
        if (s_state == 8'd1 && (!vbest_v_q || mw_d[63:32] < vstamp_q)) begin
          vbest_v_q <= 1'b1; vbest_q <= pidx_q; vstamp_q <= mw_d[63:32];
        end
        if ({1'b0, pidx_q} + 1'b1 >= {1'b0, m_slots}) begin
          mdone_q <= 1'b1;
          uvoff_q <= ev_off;
          if (!vbest_v_q && !ev_this) ures_q <= -32'd7;   // a corrupted count: full with no entry to evict
          // the insert goes to the first free slot of the key's probe sequence, the victim's included
          if (!ufree_v_q || ((ev_victim - ustart_q) & (m_slots - 1'b1)) < ((ufidx_q - ustart_q) & (m_slots - 1'b1)))
            mres_q <= ev_off;
        end
      end else if (p_do && uhdr_q) begin              // hash region header: entry count, LRU clock
        mdone_q <= 1'b1; ucount_q <= mw_d[MA-1:0]; uclk_q <= mw_d[63:32];
        if (is_upd && !ufound_q) begin                                    // hash insert
          if (m_lru && mw_d[31:0] >= m_max) begin                   // LRU: evict, then insert
            mdone_q <= 1'b0; uhdr_q <= 1'b0; uev_q <= 1'b1; mprob_q <= 1'b1; pidx_q <= {MA{1'b0}};
          end else if (mw_d[31:0] >= m_max || !ufree_v_q) ures_q <= -32'd7;   // -E2BIG
          mres_q <= ufree_q;
        end
      end else if (p_do && is_del && m_array) begin                       // devmap: clear; arrays: -EINVAL
        mdone_q <= 1'b1; pn_q <= ONE; mres_q <= slot_off;
        ures_q <= (m_type != `SEPH_MAP_TYPE_DEVMAP || a_idx >= m_max) ? -32'd22 : 32'd0;
      end else if (p_do && is_upd && m_lpmu && kplen > dbits) begin       // LPM: prefix too long
        mdone_q <= 1'b1; pn_q <= ONE; ures_q <= -32'd22;
      end else if (p_do && m_lpmu && !ldec_q && pidx_q < uhigh_q) begin   // LPM update/delete: scan
        pidx_q <= pidx_q + 1'b1;
        if (l_exact) begin lex_v_q <= 1'b1; lex_q <= pidx_q; end
        else if (s_state == 8'd1) llast_q <= pidx_q + 1'b1;
        if (s_state != 8'd1 && !lfree_v_q) begin lfree_v_q <= 1'b1; lfree_q <= pidx_q; end
        if ({1'b0, pidx_q} + 1'b1 >= {1'b0, uhigh_q}) ldec_q <= 1'b1;
      end else if (p_do && m_lpmu) begin                                  // LPM update/delete: decide
        mdone_q <= 1'b1; pn_q <= (uhigh_q == {MA{1'b0}}) ? ONE : uhigh_q; mres_q <= l_off;
        ures_q <= 32'd0;
        if (is_del) begin
          if (!lex_v_q) ures_q <= -32'd2;                                 // -ENOENT
          lnhigh_q <= llast_q;
        end else begin
          if (lex_v_q && uflags == 64'd1) ures_q <= -32'd17;              // NOEXIST: -EEXIST
          else if (!lex_v_q && uflags == 64'd2) ures_q <= -32'd2;         // EXIST: -ENOENT
          else if (!lex_v_q && (ucount_q >= m_max || ucbig_q || l_slot >= m_slots)) ures_q <= -32'd28;   // -ENOSPC
          lnhigh_q <= ({1'b0, l_slot} + 1'b1 > {1'b0, uhigh_q}) ? l_slot + 1'b1 : uhigh_q;
        end
      end else if (p_do && is_del && m_hash) begin                        // hash delete: probe
        pn_q <= pn_next[MA-1:0];
        if (s_state == 8'd1 && keq) begin
          mdone_q <= 1'b1; mres_q <= slot_off; ures_q <= 32'd0;
        end else if (s_state == 8'd0 || pn_next >= {1'b0, m_slots}) begin
          mdone_q <= 1'b1; ures_q <= -32'd2;                              // -ENOENT
        end else begin
          mprob_q <= 1'b1; pidx_q <= (cur + 1'b1) & (m_slots - 1'b1);
        end
      end else if (p_do && is_upd && m_hash) begin                        // hash probe
        pn_q <= pn_next[MA-1:0];
        if (!mprob_q) ustart_q <= cur;
        if (s_state == 8'd1 && keq) begin
          ufound_q <= 1'b1; mres_q <= slot_off;
          ures_q <= (uflags == 64'd1) ? -32'd17 : 32'd0;                  // NOEXIST: -EEXIST
          mdone_q <= 1'b1;
        end else if (s_state == 8'd0 || pn_next >= {1'b0, m_slots}) begin
          if (s_state == 8'd0 && !ufree_v_q) begin ufree_v_q <= 1'b1; ufree_q <= slot_off; ufidx_q <= cur; end
          if (uflags == 64'd2 && m_type != `SEPH_MAP_TYPE_DEVMAP_HASH) begin
            mdone_q <= 1'b1; ures_q <= -32'd2;                            // EXIST: -ENOENT
          end else begin
            uhdr_q <= 1'b1; ures_q <= 32'd0;
          end
        end else begin
          if (s_state == 8'd2 && !ufree_v_q) begin ufree_v_q <= 1'b1; ufree_q <= slot_off; ufidx_q <= cur; end
          mprob_q <= 1'b1; pidx_q <= (cur + 1'b1) & (m_slots - 1'b1);
        end
      end else if (p_do && m_lpm) begin
        if (uhigh_q == {MA{1'b0}}) begin                                      // empty table: a miss
          mdone_q <= 1'b1; mhit_q <= 1'b0; pn_q <= ONE;
        end else begin
          pidx_q <= pidx_q + 1'b1;
          if (l_better) begin
            lfound_q <= 1'b1; lbest_q <= s_plen[8:0]; mres_q <= slot_off + m_voff[MA-1:0];
          end
          if ({1'b0, pidx_q} + 1'b1 >= {1'b0, uhigh_q}) begin
            mdone_q <= 1'b1; mhit_q <= lfound_q || l_better; pn_q <= uhigh_q;
          end
        end
      end else if (p_do && bc) begin                                      // broadcast: scan every slot
        pn_q <= pn_next[MA-1:0];
        for (bw = 0; bw < 31; bw = bw + 1)
          if ((m_array ? s_val != 32'd0 : s_state == 8'd1) && s_val == bw + 1) bcmask_q[bw] <= 1'b1;
        if ({1'b0, pidx_q} + 1'b1 >= {1'b0, bc_n}) begin
          mdone_q <= 1'b1; mhit_q <= 1'b1;
        end else begin
          pidx_q <= pidx_q + ONE;
        end
      end else if (p_do && !is_upd) begin
        pn_q <= pn_next[MA-1:0];
        if (m_array) begin
          mdone_q <= 1'b1;
          // an empty entry: devmap ifindex 0, cpumap qsize 0, xskmap bound word 0 (the slot's second word)
          mhit_q <= a_idx < m_max && !((m_type == `SEPH_MAP_TYPE_DEVMAP || m_cpu || m_aom) && s_val == 32'd0) &&
                    !(m_xsk && mw_d[63:32] == 32'd0);
          mres_q <= slot_off; mval_q <= m_cpu ? a_idx : s_val;
          msize_q <= m_xsk ? mw_d[47:32] : s_val[15:0];
        end else if (s_state == 8'd1 && keq) begin
          mhit_q <= 1'b1; mres_q <= slot_off + m_voff[MA-1:0]; mval_q <= m_hom ? s_plen : s_val; uslot_q <= slot_off;
          mdone_q <= 1'b1;
        end else if (s_state == 8'd0 || pn_next >= {1'b0, m_slots}) begin
          mdone_q <= 1'b1; mhit_q <= 1'b0;
        end else begin
          mprob_q <= 1'b1; pidx_q <= (cur + 1'b1) & (m_slots - 1'b1);
        end
      end
      // the windows of a probe: compares and the first window's header carried to the last
      if (p_go && !p_last) begin
        lc_q <= lc_q + 2'd1; keq_q <= keq; pm_q <= pmatch;
        if (lc_q == 2'd0) begin s_state_q <= mw_d[7:0]; s_plen_q <= mw_d[63:32]; s_val_q <= s_val_w; end
      end else if (p_go) begin
        lc_q <= 2'd0;
      end
      // (key_q and vimg_q keep their bytes after a call: a call only uses bytes below its key or value size, all
      // of which it reads itself, in whole aligned words with zeros above the size; clearing them cost about 400
      // LUTs, as their flip-flops' reset pins serve the asynchronous reset)
      if (finish_i) begin
        kmask_q <= 80'd0; vmask_q <= 80'd0; bcmask_q <= 31'd0;
        kcnt_q <= 8'd0; mdone_q <= 1'b0; mhit_q <= 1'b0; mprob_q <= 1'b0;
        pidx_q <= {MA{1'b0}}; pn_q <= {MA{1'b0}}; lfound_q <= 1'b0;
        vcnt_q <= 8'd0; ufree_v_q <= 1'b0; uhdr_q <= 1'b0; ufound_q <= 1'b0;
        ures_q <= 32'd0; ufault_q <= 1'b0; uev_q <= 1'b0; vbest_v_q <= 1'b0;
        lex_v_q <= 1'b0; lfree_v_q <= 1'b0; ldec_q <= 1'b0; llast_q <= {MA{1'b0}};
        lc_q <= 2'd0;
        xh_q <= 1'b0; xv_q <= 1'b0; xst_q <= 33'd0;
        if (xout_q && !xrv_q) xstale_q <= 1'b1;
      end
    end
  end
  // (a visit's windows stay in the response register: the next read goes out only once the visit is over)
  always @(posedge clk_i) if (xr_rvalid_i) xrd_q <= xr_rdata_i;
endmodule
`default_nettype wire
