// board_sim.cpp: the board harness class: clocking, AXI-Lite master, input ports, outputs, pcap replay and output.
#include "board_sim.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <sstream>

#include "../sephirot_params.h"  // generated from hxdp/params.py
#include "Vsephirot_board.h"
#include "verilated.h"

namespace {
using seph::kClockMhz;
using seph::kFrame;
using seph::kMaxLen;
using seph::kRunt;
constexpr uint64_t kAxiTimeout = 100000;

void put32(FILE* f, uint32_t v) { fwrite(&v, 4, 1, f); }

void pcap_header(FILE* f) {
  put32(f, 0xa1b2c3d4);
  uint16_t v[2] = {2, 4};
  fwrite(v, 2, 2, f);
  put32(f, 0);
  put32(f, 0);
  put32(f, 65535);
  put32(f, 1);
  fflush(f);
}

void pcap_record(FILE* f, uint64_t cycle, const std::vector<uint8_t>& d) {
  double us = cycle / kClockMhz;
  put32(f, uint32_t(us / 1e6));
  put32(f, uint32_t(uint64_t(us) % 1000000));
  put32(f, uint32_t(d.size()));
  put32(f, uint32_t(d.size()));
  fwrite(d.data(), 1, d.size(), f);
}

constexpr uint32_t kKindCpu = 1, kKindXsk = 2, kKindBcast = 3;  // params.REDIRECT_*
constexpr uint32_t kHostqPerKind = 8;                           // params.HOSTQ_PER_KIND
}  // namespace

bool read_pcap(const std::string& path, std::vector<std::vector<uint8_t>>& out, std::string* err) {
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) { *err = "cannot open " + path; return false; }
  uint8_t gh[24];
  if (fread(gh, 1, 24, f) != 24) { fclose(f); *err = path + ": not a pcap file (short header)"; return false; }
  uint32_t magic;
  memcpy(&magic, gh, 4);
  bool swap = false;
  if (magic == 0xa1b2c3d4 || magic == 0xa1b23c4d) swap = false;
  else if (magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1) swap = true;
  else { fclose(f); *err = path + ": not a pcap file (bad magic)"; return false; }
  auto rd = [&](const uint8_t* p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return swap ? __builtin_bswap32(v) : v;
  };
  uint8_t rh[16];
  while (fread(rh, 1, 16, f) == 16) {
    uint32_t incl = rd(rh + 8);
    if (incl > (1u << 20)) { fclose(f); *err = path + ": corrupt record length"; return false; }
    std::vector<uint8_t> d(incl);
    if (incl && fread(d.data(), 1, incl, f) != incl) break;
    out.push_back(std::move(d));
  }
  fclose(f);
  return true;
}

BoardSim::BoardSim(int ports, size_t keep) : ctx_(new VerilatedContext), ports_(ports), keep_(keep) {
  top_.reset(new Vsephirot_board(ctx_.get()));
  // a falling edge of rst_ni: Verilator starts every signal at 0, so holding it low from the start would never
  // trigger the asynchronous resets (registers with a non-zero reset value, e.g. the prandom state, stay 0)
  top_->rst_ni = 1;
  top_->clk_i = 0;
  top_->s_bready_i = 1;
  top_->s_rready_i = 1;
  top_->eval();
  top_->rst_ni = 0;
  top_->eval();
  top_->rst_ni = 1;
  top_->eval();
}

BoardSim::~BoardSim() {
  if (out_pcap_) fclose(out_pcap_);
  for (auto& kv : host_pcap_) fclose(kv.second);
  for (int fd : tap_)
    if (fd >= 0) close(fd);
  top_->final();
}

void BoardSim::drive() {
  top_->host_pop_i = !host_pops_.empty();
  top_->host_pop_q_i = host_pops_.empty() ? 0 : host_pops_.front();
  uint32_t valid = 0, sop = 0, eop = 0;
  uint64_t len = 0;
  for (int p = 0; p < kMaxPorts; p++) {
    if (in_[p].empty()) continue;
    const BoardPacket& pk = in_[p].front();
    size_t off = in_off_[p];
    valid |= 1u << p;
    if (off == 0) sop |= 1u << p;
    if (off + kFrame >= pk.data.size()) eop |= 1u << p;
    len = (len & ~(uint64_t(0xffff) << (16 * p))) | (uint64_t(pk.data.size()) << (16 * p));
    if (driven_[p] == fired_[p]) continue;  // this frame is already on the port
    driven_[p] = fired_[p];
    for (int w = 0; w < kFrame / 4; w++) {
      uint32_t v = 0;
      for (int b = 0; b < 4; b++) {
        size_t i = off + 4 * w + b;
        if (i < pk.data.size()) v |= uint32_t(pk.data[i]) << (8 * b);
      }
      top_->in_data_i[8 * p + w] = v;
    }
  }
  top_->in_len_i = len;
  top_->in_valid_i = valid;
  top_->in_sop_i = sop;
  top_->in_eop_i = eop;
}

void BoardSim::sample() {
  if (top_->host_pop_i) host_pops_.pop_front();  // taken at this clock edge
  uint32_t fire = top_->in_valid_i & top_->in_ready_o;
  for (int p = 0; p < kMaxPorts; p++) {
    if (!((fire >> p) & 1)) continue;
    if (in_off_[p] == 0) { order_.push_back(p); accepted_++; }
    fired_[p]++;
    in_off_[p] += kFrame;
    if (in_off_[p] >= in_[p].front().data.size()) { in_[p].pop_front(); in_off_[p] = 0; }
  }
  if (top_->pkt_done_o) {
    BoardOutput r;
    r.seq = seq_++;
    r.port = order_.empty() ? 0 : order_.front();
    if (!order_.empty()) order_.pop_front();
    r.action = top_->res_action_o;
    r.fault = top_->res_fault_o;
    r.cycles = top_->res_cycles_o;
    r.redirect = top_->res_redir_valid_o;
    r.redir_port = top_->res_redir_port_o;
    r.redir_kind = top_->res_redir_kind_o;
    r.host_ok = top_->res_host_ok_o;
    results_.push_back(r);
  }
  drops_departed_ += top_->out_drops_o;  // several cores: dropped frames depart in order without output
  if (top_->out_valid_o) {
    if (top_->out_sop_o) { cur_out_.clear(); cur_meta_ = top_->out_meta_o; }
    for (unsigned b = 0; b < top_->out_bytes_o; b++) cur_out_.push_back((top_->out_data_o[b / 4] >> (8 * (b % 4))) & 0xff);
    if (top_->out_eop_o) {
      // the MAC sends the frame only: the XDP metadata in front of it has no place on the wire
      size_t m = std::min<size_t>(cur_meta_, cur_out_.size());
      frames_out_.emplace_back(cur_out_.begin() + m, cur_out_.end());
    }
  }
  // each result in arrival order takes its frame from the output, or (several cores) a dropped frame's departure
  while (!results_.empty()) {
    bool leaves = results_.front().action == 2 || results_.front().action == 3 || results_.front().action == 4;
    if (kCores > 1 && !leaves) {
      if (drops_departed_ == 0) break;
      drops_departed_--;
    } else {
      if (frames_out_.empty()) break;
      results_.front().data = std::move(frames_out_.front());
      frames_out_.pop_front();
    }
    {
      BoardOutput r = std::move(results_.front());
      results_.pop_front();
      r.cycle = cycle_;
      finished_++;
      bool host = r.action == 4 && r.redirect && (r.redir_kind == kKindCpu || r.redir_kind == kKindXsk);
      if (out_pcap_ && (r.action == 3 || r.action == 4) && !host) {
        pcap_record(out_pcap_, cycle_, r.data);
        out_pcap_count_++;
      }
      if (host) to_host(r);
      else emit_tap(r);
      if (keep_) {
        outputs_.push_back(std::move(r));
        if (outputs_.size() > keep_) { outputs_.pop_front(); dropped_outputs_++; }
      }
    }
  }
}

void BoardSim::to_host(const BoardOutput& r) {
  if (!r.host_ok || host_hold_) return;
  host_frames_++;
  host_pops_.push_back((r.redir_kind == kKindXsk ? kHostqPerKind : 0) + r.redir_port);
  if (host_dir_.empty()) return;
  std::string name = (r.redir_kind == kKindXsk ? "xsk" : "cpu") + std::to_string(r.redir_port);
  FILE*& f = host_pcap_[name];
  if (!f) {
    f = fopen((host_dir_ + "/" + name + ".pcap").c_str(), "wb");
    if (!f) { fprintf(stderr, "cannot write %s/%s.pcap\n", host_dir_.c_str(), name.c_str()); return; }
    pcap_header(f);
  }
  pcap_record(f, cycle_, r.data);
}

void BoardSim::feed_replay() {
  if (replay_.empty()) return;
  while (in_[replay_port_].size() < 4) {
    if (replay_pos_ >= replay_.size()) {
      if (!replay_loop_) { replay_.clear(); return; }
      replay_pos_ = 0;
    }
    inject(replay_port_, replay_[replay_pos_++]);
    replayed_++;
  }
}

void BoardSim::tick() {
  feed_replay();
  drive();
  top_->clk_i = 0;
  top_->eval();
  sample();
  top_->clk_i = 1;
  top_->eval();
  cycle_++;
}

int BoardSim::axi_write(uint32_t addr, uint32_t value) {
  top_->s_awaddr_i = addr;
  top_->s_wdata_i = value;
  top_->s_wstrb_i = 0xf;
  top_->s_awvalid_i = 1;
  top_->s_wvalid_i = 1;
  top_->s_bready_i = 1;
  for (uint64_t n = 0; n < kAxiTimeout; n++) {
    feed_replay();
    drive();
    top_->clk_i = 0;
    top_->eval();
    bool aw = top_->s_awvalid_i && top_->s_awready_o;
    bool w = top_->s_wvalid_i && top_->s_wready_o;
    bool b = top_->s_bvalid_o;
    int resp = top_->s_bresp_o;
    sample();
    top_->clk_i = 1;
    top_->eval();
    cycle_++;
    if (aw) top_->s_awvalid_i = 0;
    if (w) top_->s_wvalid_i = 0;
    if (b) return resp;
  }
  top_->s_awvalid_i = 0;
  top_->s_wvalid_i = 0;
  return -1;
}

int BoardSim::axi_read(uint32_t addr, uint32_t* value) {
  top_->s_araddr_i = addr;
  top_->s_arvalid_i = 1;
  top_->s_rready_i = 1;
  for (uint64_t n = 0; n < kAxiTimeout; n++) {
    feed_replay();
    drive();
    top_->clk_i = 0;
    top_->eval();
    bool ar = top_->s_arvalid_i && top_->s_arready_o;
    bool r = top_->s_rvalid_o;
    uint32_t data = top_->s_rdata_o;
    int resp = top_->s_rresp_o;
    sample();
    top_->clk_i = 1;
    top_->eval();
    cycle_++;
    if (ar) top_->s_arvalid_i = 0;
    if (r) { *value = data; return resp; }
  }
  top_->s_arvalid_i = 0;
  return -1;
}

bool BoardSim::inject(int port, const std::vector<uint8_t>& data) {
  if (port < 0 || port >= ports_) return false;
  if (data.size() > kMaxLen) { runts_++; oversize_++; return true; }
  if (data.size() < kRunt) { runts_++; return true; }
  if (in_[port].size() >= kQueueMax) { queue_dropped_++; return true; }  // tail drop, as a full MAC FIFO
  in_[port].push_back({port, data});
  return true;
}

void BoardSim::run(uint64_t cycles) {
  for (uint64_t i = 0; i < cycles; i++) tick();
}

bool BoardSim::busy() const {
  if (!replay_.empty()) return true;
  for (int p = 0; p < kMaxPorts; p++)
    if (!in_[p].empty()) return true;
  return accepted_ != finished_;
}

bool BoardSim::drain(uint64_t max_cycles) {
  for (uint64_t i = 0; i < max_cycles; i++) {
    if (!busy()) return true;
    tick();
  }
  return !busy();
}

bool BoardSim::replay(const std::string& path, int port, bool loop, std::string* err) {
  if (port < 0 || port >= ports_) { *err = "no such port"; return false; }
  std::vector<std::vector<uint8_t>> pk;
  if (!read_pcap(path, pk, err)) return false;
  if (pk.empty()) { *err = path + ": no packets"; return false; }
  replay_ = std::move(pk);
  replay_pos_ = 0;
  replay_port_ = port;
  replay_loop_ = loop;
  return true;
}

void BoardSim::replay_frames(std::vector<std::vector<uint8_t>>&& frames, int port, bool loop) {
  replay_ = std::move(frames);
  replay_pos_ = 0;
  replay_port_ = port;
  replay_loop_ = loop;
}

bool BoardSim::open_out_pcap(const std::string& path) {
  if (out_pcap_) fclose(out_pcap_);
  out_pcap_ = fopen(path.c_str(), "wb");
  if (!out_pcap_) return false;
  pcap_header(out_pcap_);
  return true;
}

std::string BoardSim::stats() const {
  size_t queued = 0;
  for (int p = 0; p < kMaxPorts; p++) queued += in_[p].size();
  std::ostringstream s;
  s << "cycle=" << cycle_ << " ports=" << ports_ << " queued=" << queued << " accepted=" << accepted_
    << " finished=" << finished_ << " runts=" << runts_ << " oversize=" << oversize_
    << " queue_dropped=" << queue_dropped_ << " outputs=" << outputs_.size()
    << " outputs_dropped=" << dropped_outputs_ << " replaying=" << (replay_.empty() ? 0 : 1)
    << " replayed=" << replayed_ << " out_pcap=" << out_pcap_count_ << " tap_in=" << tap_in_ << " tap_out=" << tap_out_
    << " host_frames=" << host_frames_;
  if (out_pcap_) fflush(out_pcap_);
  for (auto& kv : host_pcap_) fflush(kv.second);
  return s.str();
}

bool BoardSim::open_tap(int port, const std::string& name, std::string* err) {
  if (port < 0 || port >= ports_) { *err = "no port " + std::to_string(port); return false; }
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
  if (fd < 0) { *err = std::string("cannot open /dev/net/tun: ") + strerror(errno); return false; }
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
    *err = "cannot create TAP " + name + ": " + strerror(errno);
    close(fd);
    return false;
  }
  tap_[port] = fd;
  return true;
}

void BoardSim::read_tap(int port) {
  int fd = tap_[port];
  if (fd < 0) return;
  uint8_t buf[4096];
  for (int n = 0; n < 64 && in_[port].size() < 256; n++) {
    ssize_t got = read(fd, buf, sizeof buf);
    if (got <= 0) return;
    tap_in_++;
    std::vector<uint8_t> frame(buf, buf + got);
    if (frame.size() < kRunt) frame.resize(kRunt, 0);  // the sender's NIC pads short frames on the wire
    inject(port, frame);
  }
}

void BoardSim::emit_tap(const BoardOutput& r) {
  int port = -1;
  if (r.action == 4 && r.redirect && r.redir_kind == kKindBcast) {  // a copy to every port of the mask
    for (int p = 0; p < ports_; p++) {
      bool excluded = (r.redir_port >> 31) && p == r.port;
      if (!((r.redir_port >> p) & 1) || excluded || tap_[p] < 0 || r.data.empty()) continue;
      if (write(tap_[p], r.data.data(), r.data.size()) > 0) tap_out_++;
    }
    return;
  }
  if (r.action == 3) port = r.port;
  else if (r.action == 4 && r.redirect && r.redir_port >= 1 && r.redir_port <= uint32_t(ports_)) port = int(r.redir_port) - 1;
  else if (r.action == 2) port = (r.port + 1) % ports_;
  if (port < 0 || tap_[port] < 0 || r.data.empty()) return;
  if (write(tap_[port], r.data.data(), r.data.size()) > 0) tap_out_++;
}
