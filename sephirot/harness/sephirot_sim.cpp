// sephirot_sim.cpp: the harness class: clocking, program and map loading, frame streaming, results and trace.
#include "sephirot_sim.h"
#include "sephirot_params.h"  // generated from hxdp/params.py

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <fstream>
#include <sstream>

#include "Vsephirot_top.h"
#include "verilated.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

namespace {
using seph::kFrame;
using seph::kLanes;
using seph::kMaxLen;
using seph::kRunt;

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parse_hex_bytes(const std::string& s, std::vector<uint8_t>& out) {
  out.clear();
  if (s == "-") return true;
  if (s.size() % 2) return false;
  for (size_t i = 0; i < s.size(); i += 2) {
    int a = hexval(s[i]), b = hexval(s[i + 1]);
    if (a < 0 || b < 0) return false;
    out.push_back(uint8_t(a * 16 + b));
  }
  return true;
}

// wide signals are arrays of 32-bit words
template <typename W>
uint64_t get64(const W& w, int bit) {
  int i = bit / 32;
  return uint64_t(w[i]) | (uint64_t(w[i + 1]) << 32);
}
template <typename W>
uint32_t get32(const W& w, int bit) { return w[bit / 32]; }

// bits [lo, lo + w) of a port (w <= 64), whichever type Verilator gave it: an integer up to 64 bits, VlWide above
// (the per-core ports of sephirot_top are CORES times wider than one core's)
inline uint64_t field(uint64_t v, int lo, int w) { return w >= 64 ? v >> lo : (v >> lo) & ((uint64_t(1) << w) - 1); }
template <std::size_t N>
uint64_t field(const VlWide<N>& v, int lo, int w) {
  uint64_t r = 0;
  for (int got = 0; got < w;) {
    int i = (lo + got) / 32, sh = (lo + got) % 32, n = std::min(32 - sh, w - got);
    r |= ((uint64_t(v[i]) >> sh) & ((uint64_t(1) << n) - 1)) << got;
    got += n;
  }
  return r;
}
}  // namespace

uint8_t OffChipMemory::read(uint64_t off) const {
  auto it = pages_.find(off / kPage);
  return it == pages_.end() ? 0 : it->second[off % kPage];
}

void OffChipMemory::write(uint64_t off, uint8_t b) {
  auto it = pages_.find(off / kPage);
  if (it == pages_.end()) {
    if (!b) return;  // zeros until written: a zero needs no page
    it = pages_.emplace(off / kPage, std::vector<uint8_t>(kPage, 0)).first;
  }
  it->second[off % kPage] = b;
}

SephirotSim::SephirotSim(int argc, char** argv) : ctx_(new VerilatedContext) {
  ctx_->commandArgs(argc, argv);
  top_.reset(new Vsephirot_top(ctx_.get()));
  tiers_.emplace_back("qdr", seph::kQdrBase, seph::kQdrBytes, seph::kQdrReadCycles, seph::kQdrReadBytesPerCycle);
  tiers_.emplace_back("ddr", seph::kDdrBase, seph::kDdrBytes, seph::kDdrReadCycles, seph::kDdrReadBytesPerCycle);
  for (int k = 0; k < kCores; k++) cur_pkt_[k] = SIZE_MAX;
  top_->xm_req_ready_i = 1;  // the controllers' write FIFOs take a request every cycle (writes are posted)
}

OffChipMemory* SephirotSim::tier_of(uint32_t addr) {
  for (auto& t : tiers_)
    if (t.holds(addr)) return &t;
  return nullptr;
}

// The port's request of this cycle (sephirot_xmem.v): a write goes into the memory now (posted: a later read sees
// it), a read takes its bytes now and answers `latency` cycles later, in request order.
void SephirotSim::offchip_request() {
  if (top_->xm_resp_valid_i && !responses_.empty()) responses_.pop_front();
  if (!(top_->xm_req_valid_o && top_->xm_req_ready_i)) return;
  uint32_t addr = top_->xm_req_addr_o;
  unsigned n = 8 * top_->xm_req_len_o;
  bool we = top_->xm_req_we_o;
  OffChipMemory* t = tier_of(addr);
  Response r{0, {0, 0, 0, 0}};
  for (unsigned b = 0; t && b < n && b < 16; b++) {
    uint32_t a = addr + b;
    if (!t->holds(a)) break;  // (the map guard keeps every access inside its value)
    if (we) {
      if ((top_->xm_req_be_o >> b) & 1) t->write(a - t->base(), (top_->xm_req_wdata_o[b / 4] >> (8 * (b % 4))) & 0xff);
    } else {
      r.words[b / 4] |= uint32_t(t->read(a - t->base())) << (8 * (b % 4));
    }
  }
  if (we) return;
  // sephirot_xmem registers the response: driven a cycle before the read's latency is up, it arrives on time
  r.due = cycle_ + uint64_t(t ? t->latency(n) : 1) - 1;
  responses_.push_back(r);
}

// The map unit's port (sephirot_mapfsm.v, top xh_*): a read of len windows, answered by one response holding them
// all after the tier's latency for that many bytes; a write of one window, byte-enabled, posted.
void SephirotSim::mapunit_request() {
  if (top_->xh_resp_valid_i && !map_responses_.empty()) map_responses_.pop_front();
  if (!top_->xh_req_valid_o) return;
  constexpr unsigned kWin = seph::kMapWindowBytes;
  uint32_t addr = top_->xh_req_addr_o;
  bool we = top_->xh_req_we_o;
  unsigned n = we ? kWin : kWin * top_->xh_req_len_o;
  OffChipMemory* t = tier_of(addr);
  MapResponse r{0, {}};
  for (unsigned b = 0; t && b < n; b++) {
    uint32_t a = addr + b;
    if (!t->holds(a)) break;
    if (we) {
      if ((uint64_t(top_->xh_req_be_o) >> b) & 1)
        t->write(a - t->base(), (top_->xh_req_wdata_o[b / 4] >> (8 * (b % 4))) & 0xff);
    } else {
      r.words[b / 4] |= uint32_t(t->read(a - t->base())) << (8 * (b % 4));
    }
  }
  if (we) return;
  r.due = cycle_ + uint64_t(t ? t->latency(n) : 1) - 1;  // (registered in sephirot_mapfsm, as the lanes' port)
  map_responses_.push_back(r);
}

void SephirotSim::offchip_drive() {
  bool due = !responses_.empty() && responses_.front().due <= cycle_;
  top_->xm_resp_valid_i = due;
  for (int w = 0; w < 4; w++) top_->xm_resp_data_i[w] = due ? responses_.front().words[w] : 0;
  bool mdue = !map_responses_.empty() && map_responses_.front().due <= cycle_;
  top_->xh_resp_valid_i = mdue;
  for (int w = 0; w < kMapResponseWords; w++) top_->xh_resp_data_i[w] = mdue ? map_responses_.front().words[w] : 0;
}

bool SephirotSim::load_offchip(const std::string& path) {
  std::ifstream f(path);
  if (!f) { fprintf(stderr, "cannot read off-chip map memory %s\n", path.c_str()); return false; }
  std::string name, page, hex;
  std::vector<uint8_t> b;
  while (f >> name >> page >> hex) {
    OffChipMemory* t = nullptr;
    for (auto& x : tiers_)
      if (x.name() == name) t = &x;
    uint64_t n = std::stoull(page, nullptr, 16);
    if (!t || !parse_hex_bytes(hex, b) || b.size() != OffChipMemory::kPage || n * OffChipMemory::kPage >= t->bytes()) {
      fprintf(stderr, "bad off-chip page %s %s\n", name.c_str(), page.c_str());
      return false;
    }
    t->set_page(n, b);
  }
  return true;
}

bool SephirotSim::dump_offchip(const std::string& path) const {
  FILE* d = fopen(path.c_str(), "w");
  if (!d) return false;
  for (const auto& t : tiers_)
    for (const auto& [n, data] : t.pages()) {
      fprintf(d, "%s %" PRIx64 " ", t.name().c_str(), n);
      for (uint8_t x : data) fprintf(d, "%02x", x);
      fprintf(d, "\n");
    }
  fclose(d);
  return true;
}

SephirotSim::~SephirotSim() {
#if VM_TRACE
  if (vcd_) { vcd_->close(); delete vcd_; }
#endif
  if (trace_) fclose(trace_);
  top_->final();
}

void SephirotSim::open_vcd(const std::string& path) {
#if VM_TRACE
  ctx_->traceEverOn(true);
  vcd_ = new VerilatedVcdC;
  top_->trace(vcd_, 99);
  vcd_->open(path.c_str());
#else
  fprintf(stderr, "this build has no VCD support (built without --trace): %s not written\n", path.c_str());
#endif
}

void SephirotSim::open_trace(const std::string& path) { trace_ = fopen(path.c_str(), "w"); }

void SephirotSim::tick() {
  top_->clk_i = 0;
  top_->eval();
#if VM_TRACE
  if (vcd_) vcd_->dump(time_);
#endif
  time_ += 5;
  sample();
  offchip_request();
  mapunit_request();
  top_->clk_i = 1;
  top_->eval();
#if VM_TRACE
  if (vcd_) vcd_->dump(time_);
#endif
  time_ += 5;
  cycle_++;
  offchip_drive();
}

bool SephirotSim::setup(const std::string& rom, const std::string& maps, const std::string& packets, bool raw) {
  raw_ = raw;
  // a falling edge of rst_ni: Verilator starts every signal at 0, so holding it low from the start would never
  // trigger the asynchronous resets (and registers with a non-zero reset value, e.g. the prandom state, stay 0)
  top_->rst_ni = 1;
  top_->clk_i = 0;
  top_->eval();
  top_->rst_ni = 0;
  top_->eval();
  top_->rst_ni = 1;
  top_->eval();
  // ROM: one row per line, lane 3 first
  std::ifstream rf(rom);
  if (!rf) { fprintf(stderr, "cannot read ROM %s\n", rom.c_str()); return false; }
  std::string line;
  int row = 0, rows = 0;
  while (std::getline(rf, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (line.size() != 16 * kLanes) { fprintf(stderr, "ROM row %d: bad length\n", row); return false; }
    if (row >= seph::kImemRows) {
      fprintf(stderr, "ROM %s: more than %d rows (the instruction memory)\n", rom.c_str(), seph::kImemRows);
      return false;
    }
    bool nonzero = false;
    for (int lane = 0; lane < kLanes; lane++) {
      uint64_t v = std::stoull(line.substr(16 * (kLanes - 1 - lane), 16), nullptr, 16);
      top_->imem_wdata_i[2 * lane] = uint32_t(v);
      top_->imem_wdata_i[2 * lane + 1] = uint32_t(v >> 32);
      if (v) nonzero = true;
    }
    top_->imem_we_i = 1;
    top_->imem_waddr_i = row;
    tick();
    row++;
    if (nonzero) rows = row;
  }
  top_->imem_we_i = 0;
  top_->imem_rows_i = rows;
  // map memory image
  if (!maps.empty()) {
    std::ifstream mf(maps);
    if (!mf) { fprintf(stderr, "cannot read map image %s\n", maps.c_str()); return false; }
    while (std::getline(mf, line)) {
      std::istringstream ls(line);
      std::string idx, hex;
      if (!(ls >> idx >> hex)) continue;
      std::vector<uint8_t> b;
      if (!parse_hex_bytes(hex, b) || b.size() != 16) { fprintf(stderr, "bad map line %s\n", line.c_str()); return false; }
      top_->map_we_i = 1;
      top_->map_line_i = std::stoul(idx, nullptr, 16);
      for (int w = 0; w < 4; w++)
        top_->map_wdata_i[w] = b[4 * w] | (b[4 * w + 1] << 8) | (b[4 * w + 2] << 16) | (uint32_t(b[4 * w + 3]) << 24);
      top_->eval();
      if (!top_->map_wready_o) { fprintf(stderr, "map memory busy while loading line %s\n", idx.c_str()); return false; }
      tick();
    }
    top_->map_we_i = 0;
  }
  // map configuration table: "<map id> <64 hex digits>" (256-bit entry, most significant digit first)
  if (!mapcfg_.empty()) {
    std::ifstream cf(mapcfg_);
    if (!cf) { fprintf(stderr, "cannot read map configuration %s\n", mapcfg_.c_str()); return false; }
    while (std::getline(cf, line)) {
      std::istringstream ls(line);
      std::string idx, hex;
      if (!(ls >> idx >> hex)) continue;
      if (hex.size() != 64) { fprintf(stderr, "bad map configuration line %s\n", line.c_str()); return false; }
      top_->mcfg_we_i = 1;
      top_->mcfg_idx_i = std::stoul(idx);
      for (int w = 0; w < 8; w++) top_->mcfg_wdata_i[w] = std::stoul(hex.substr(64 - 8 * (w + 1), 8), nullptr, 16);
      tick();
    }
    top_->mcfg_we_i = 0;
  }
  // packets: "<ifindex> <rxq> <hex>"
  std::ifstream pf(packets);
  if (!pf) { fprintf(stderr, "cannot read packets %s\n", packets.c_str()); return false; }
  while (std::getline(pf, line)) {
    std::istringstream ls(line);
    SimPacket p;
    std::string hex;
    if (!(ls >> p.ifindex >> p.rxq >> hex)) continue;
    if (!parse_hex_bytes(hex, p.data)) { fprintf(stderr, "bad packet line\n"); return false; }
    packets_.push_back(p);
  }
  results_.resize(packets_.size());
  for (size_t i = 0; i < packets_.size(); i++) {
    const SimPacket& p = packets_[i];
    if (!raw_ && (p.data.size() < kRunt || p.data.size() > kMaxLen)) {  // the MAC drops runts and giants
      results_[i].runt = true;
      results_[i].action = 1;
      results_[i].out = p.data;
      continue;
    }
    core_order_.push_back(i);
    size_t n = p.data.size();
    size_t nf = n ? (n + kFrame - 1) / kFrame : 1;
    for (size_t f = 0; f < nf; f++) frames_.push_back({i, f * kFrame, f == 0, f == nf - 1});
  }
  top_->raw_i = raw_ ? 1 : 0;
  tick();  // the configuration inputs are registered
  cycle_ = 0;
  return true;
}

void SephirotSim::sample() {
  // input frame accepted at this edge?
  if (!frames_.empty() && top_->in_valid_i && top_->in_ready_o) {
    const Frame& f = frames_.front();
    if (f.sop) results_[f.pkt].in_cycle = cycle_;
    frames_.pop_front();
  }
  // each core's events; a packet starts on one core a cycle at most (the input bus brings one first frame a cycle)
  for (int k = 0; k < kCores; k++) sample_core(k);
  // frames dropped in order this cycle (several cores: without output), before the frame on out_*
  for (unsigned d = top_->out_drops_o; d > 0 && emitted_ < core_order_.size(); d--) {
    SimResult& r = results_[core_order_[emitted_++]];
    r.out_cycle = cycle_;
    r.tapped = true;
  }
  if (top_->out_valid_o && emitted_ < core_order_.size()) {
    if (top_->out_sop_o) { cur_out_.clear(); cur_meta_ = top_->out_meta_o; }
    for (unsigned b = 0; b < top_->out_bytes_o; b++) cur_out_.push_back((top_->out_data_o[b / 4] >> (8 * (b % 4))) & 0xff);
    if (top_->out_eop_o) {
      SimResult& r = results_[core_order_[emitted_]];
      size_t m = std::min<size_t>(cur_meta_, cur_out_.size());
      r.meta.assign(cur_out_.begin(), cur_out_.begin() + m);
      r.out.assign(cur_out_.begin() + m, cur_out_.end());
      r.out_cycle = cycle_;
      emitted_++;
    }
  }
}

void SephirotSim::sample_core(int k) {
  constexpr int kAw = seph::kImemAw;
  if (field(top_->pkt_start_o, k, 1)) {  // the cycle row 0 runs (not end - cycles: waits for bytes are not core cycles)
    if (started_ < core_order_.size()) {
      cur_pkt_[k] = core_order_[started_];
      results_[cur_pkt_[k]].start_cycle = cycle_;
    }
    started_++;
  }
  size_t pkt = cur_pkt_[k];
  bool live = pkt < results_.size();
  if (trace_ && field(top_->trc_valid_o, k, 1)) {
    fprintf(trace_, "T %zu %" PRIu64 " %u ", live ? pkt : 0, cycle_, unsigned(field(top_->trc_pc_o, kAw * k, kAw)));
    if (field(top_->trc_exit_o, k, 1)) fprintf(trace_, "-");
    else fprintf(trace_, "%u", unsigned(field(top_->trc_next_o, 32 * k, 32)));
    fprintf(trace_, " %u", unsigned(field(top_->trc_cost_o, 32 * k, 32)));
    if (kCores > 1) fprintf(trace_, " %d", k);  // the core (hxdp.rtl.sim.parse_trace_line)
    fprintf(trace_, " |");
    for (int l = 0; l < kLanes; l++)
      if (field(top_->trc_wr_en_o, kLanes * k + l, 1))
        fprintf(trace_, " w %d %u %016" PRIx64, l, unsigned(field(top_->trc_wr_idx_o, 4 * (kLanes * k + l), 4)),
                get64(top_->trc_wr_val_o, 64 * (kLanes * k + l)));
    if (field(top_->trc_call_o, k, 1))
      fprintf(trace_, " w %u 0 %016" PRIx64, unsigned(field(top_->trc_call_lane_o, 2 * k, 2)),
              field(top_->trc_ret_o, 64 * k, 64));
    fprintf(trace_, " |");
    for (int l = 0; l < kLanes; l++)
      if (field(top_->trc_st_en_o, kLanes * k + l, 1)) {
        unsigned size = unsigned(field(top_->trc_st_size_o, 4 * (kLanes * k + l), 4));
        uint64_t d = get64(top_->trc_st_data_o, 64 * (kLanes * k + l));
        fprintf(trace_, " m %d %08x ", l, get32(top_->trc_st_addr_o, 32 * (kLanes * k + l)));
        for (unsigned b = 0; b < size; b++) fprintf(trace_, "%02x", unsigned((d >> (8 * b)) & 0xff));
      }
    fprintf(trace_, "\n");
  }
  if (field(top_->prk_valid_o, k, 1) && live) {
    constexpr int kFmtBits = 8 * seph::kPrintkFmtMax;
    SimResult::Printk p;
    unsigned len = unsigned(field(top_->prk_len_o, 8 * k, 8));
    for (unsigned b = 0; b < len; b++) p.fmt.push_back(uint8_t(field(top_->prk_fmt_o, kFmtBits * k + 8 * b, 8)));
    for (int a = 0; a < 3; a++) p.args[a] = get64(top_->prk_args_o, 192 * k + 64 * a);
    results_[pkt].printk.push_back(p);
  }
  uint64_t* words = ev_words_[k];
  if (field(top_->evw_en_o, k, 1)) words[field(top_->evw_idx_o, 9 * k, 9) & 511] = field(top_->evw_data_o, 64 * k, 64);
  if (field(top_->evp_valid_o, k, 1) && !field(top_->evp_drop_o, k, 1) && live) {
    // the program's bytes from word 0, a perf record's packet bytes from the next whole word
    SimResult::Event e{unsigned(field(top_->evp_kind_o, k, 1)), unsigned(field(top_->evp_map_o, 8 * k, 8)),
                       unsigned(field(top_->evp_cpu_o, 32 * k, 32)), unsigned(field(top_->evp_ctxlen_o, 16 * k, 16)),
                       {}, cycle_};
    unsigned own = unsigned(field(top_->evp_size_o, 16 * k, 16)) - e.ctxlen;
    unsigned at = (own + 7) / 8 * 8;
    for (unsigned b = 0; b < own; b++) e.data.push_back((words[b / 8] >> (8 * (b % 8))) & 0xff);
    for (unsigned b = 0; b < e.ctxlen; b++) e.data.push_back((words[(at + b) / 8] >> (8 * ((at + b) % 8))) & 0xff);
    results_[pkt].events.push_back(e);
  }
  if (field(top_->pkt_done_o, k, 1) && live) {
    SimResult& r = results_[pkt];
    r.action = unsigned(field(top_->res_action_o, 32 * k, 32));
    r.fault = unsigned(field(top_->res_fault_o, 3 * k, 3));
    r.r0 = field(top_->res_r0_o, 64 * k, 64);
    r.cycles = field(top_->res_cycles_o, 32 * k, 32);
    r.end_cycle = cycle_;
    r.redirect = field(top_->res_redir_valid_o, k, 1);
    r.port = unsigned(field(top_->res_redir_port_o, 32 * k, 32));
    r.kind = unsigned(field(top_->res_redir_kind_o, 2 * k, 2));
    r.core = k;
    cur_pkt_[k] = SIZE_MAX;
    done_++;
  }
}

bool SephirotSim::run(uint64_t max_cycles) {
  uint64_t limit = cycle_ + max_cycles;
  while (emitted_ < core_order_.size() || done_ < core_order_.size()) {
    if (cycle_ >= limit) {
      fprintf(stderr, "simulation stopped after %" PRIu64 " cycles (%zu of %zu packets done, %zu out)\n", max_cycles,
              done_, core_order_.size(), emitted_);
      return false;
    }
    if (!frames_.empty()) {
      const Frame& f = frames_.front();
      const SimPacket& p = packets_[f.pkt];
      top_->in_valid_i = 1;
      top_->in_sop_i = f.sop;
      top_->in_eop_i = f.eop;
      top_->in_len_i = uint16_t(p.data.size());
      top_->in_ifindex_i = p.ifindex;
      top_->in_rxq_i = p.rxq;
      for (int w = 0; w < kFrame / 4; w++) {
        uint32_t v = 0;
        for (int b = 0; b < 4; b++) {
          size_t i = f.off + 4 * w + b;
          if (i < p.data.size()) v |= uint32_t(p.data[i]) << (8 * b);
        }
        top_->in_data_i[w] = v;
      }
    } else {
      top_->in_valid_i = 0;
    }
    tick();
  }
  return true;
}

// The drop tap (sephirot_pktbuf, SEPH_DROP_TAP: simulation only): each core's dropped frames, in its order, as they
// depart; a frame's bytes are data_meta..data_end, the first `metalen` of them metadata.
namespace {
struct DropFrame { int metalen; std::vector<uint8_t> bytes; };
std::deque<DropFrame> g_drops[kCores];
}  // namespace

#ifdef SEPH_DROP_TAP
extern "C" void seph_drop_frame(int core, int metalen) { g_drops[core].push_back({metalen, {}}); }
extern "C" void seph_drop_byte(int core, char data) { g_drops[core].back().bytes.push_back(uint8_t(data)); }
#endif

void SephirotSim::take_drop_taps() {
  for (SimResult& r : results_) {
    if (!r.tapped || r.core < 0 || g_drops[r.core].empty()) continue;
    DropFrame& d = g_drops[r.core].front();
    size_t m = std::min<size_t>(size_t(d.metalen), d.bytes.size());
    r.meta.assign(d.bytes.begin(), d.bytes.begin() + m);
    r.out.assign(d.bytes.begin() + m, d.bytes.end());
    g_drops[r.core].pop_front();
  }
}

bool SephirotSim::finish(const std::string& out_path, const std::string& dump_path, uint64_t dump_lines) {
  take_drop_taps();
  FILE* f = out_path.empty() ? stdout : fopen(out_path.c_str(), "w");
  if (!f) return false;
  for (size_t i = 0; i < results_.size(); i++) {
    const SimResult& r = results_[i];
    fprintf(f, "pkt %zu action %u fault %u r0 %016" PRIx64 " cycles %" PRIu64 " in %" PRIu64 " start %" PRIu64
            " end %" PRIu64 " out %" PRIu64 " redirect ", i, r.action, r.fault, r.r0, r.cycles, r.in_cycle,
            r.start_cycle, r.end_cycle, r.out_cycle);
    static const char* kinds[] = {"port", "cpu", "xsk", "bcast"};
    if (r.redirect) fprintf(f, "%s:%u", kinds[r.kind & 3], r.port); else fprintf(f, "-");
    fprintf(f, " runt %d core ", r.runt ? 1 : 0);
    if (r.core < 0) fprintf(f, "-"); else fprintf(f, "%d", r.core);
    fprintf(f, " data ");
    if (r.out.empty()) fprintf(f, "-");
    for (uint8_t b : r.out) fprintf(f, "%02x", b);
    fprintf(f, " meta ");
    if (r.meta.empty()) fprintf(f, "-");
    for (uint8_t b : r.meta) fprintf(f, "%02x", b);
    fprintf(f, "\n");
    for (const SimResult::Printk& p : r.printk) {
      fprintf(f, "printk %zu fmt ", i);
      if (p.fmt.empty()) fprintf(f, "-");
      for (uint8_t b : p.fmt) fprintf(f, "%02x", b);
      fprintf(f, " args %016" PRIx64 " %016" PRIx64 " %016" PRIx64 "\n", p.args[0], p.args[1], p.args[2]);
    }
    for (const SimResult::Event& e : r.events) {
      fprintf(f, "event %zu kind %u map %u cpu %u ctxlen %u cycle %" PRIu64 " data ", i, e.kind, e.map, e.cpu,
              e.ctxlen, e.cycle);
      if (e.data.empty()) fprintf(f, "-");
      for (uint8_t b : e.data) fprintf(f, "%02x", b);
      fprintf(f, "\n");
    }
  }
  fprintf(f, "total_cycles %" PRIu64 "\n", cycle_);
  if (f != stdout) fclose(f);
  if (!dump_path.empty()) {
    FILE* d = fopen(dump_path.c_str(), "w");
    if (!d) return false;
    top_->in_valid_i = 0;
    for (uint64_t line = 0; line < dump_lines; line++) {
      // the map memory is block RAM: a line is read at a falling clock edge (the core is idle by now)
      top_->map_line_i = line;
      top_->clk_i = 0;
      top_->eval();
      bool nz = false;
      for (int w = 0; w < 4; w++) nz |= top_->map_rdata_o[w] != 0;
      top_->clk_i = 1;
      top_->eval();
      if (!nz) continue;
      fprintf(d, "%" PRIx64 " ", line);
      for (int b = 0; b < 16; b++) fprintf(d, "%02x", (top_->map_rdata_o[b / 4] >> (8 * (b % 4))) & 0xff);
      fprintf(d, "\n");
    }
    fclose(d);
  }
  return true;
}
