// sephirot_sim.h: Verilator harness of sephirot_top: load a ROM and map memory, stream packets, collect results.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sephirot_params.h"

// the number of cores of the model (sephirot_top's CORES: hxdp.rtl.sim builds with -GCORES=N -DSEPH_CORES=N)
#ifndef SEPH_CORES
#define SEPH_CORES 1
#endif
constexpr int kCores = SEPH_CORES;

class Vsephirot_top;
class VerilatedVcdC;
class VerilatedContext;

struct SimPacket {
  uint32_t ifindex = 1;
  uint32_t rxq = 0;
  std::vector<uint8_t> data;
};

struct SimResult {
  uint32_t action = 0;
  uint32_t fault = 0;
  uint64_t r0 = 0;
  uint64_t cycles = 0;
  uint64_t in_cycle = 0;     // first frame accepted
  uint64_t start_cycle = 0;  // row 0 executed
  uint64_t end_cycle = 0;    // last cycle of the packet in the core
  uint64_t out_cycle = 0;    // last output frame
  bool redirect = false;
  uint32_t port = 0;
  uint32_t kind = 0;         // redirect kind: 0 port (ifindex), 1 cpu host queue, 2 xsk host queue, 3 broadcast
  bool runt = false;         // dropped by the MAC, never reached the core
  bool tapped = false;       // dropped by its program with several cores: its bytes come from the drop tap
  int core = -1;             // the core that ran it
  std::vector<uint8_t> out;
  std::vector<uint8_t> meta;  // XDP metadata (data_meta..data) emitted in front of the frame
  struct Printk { std::vector<uint8_t> fmt; uint64_t args[3]; };
  std::vector<Printk> printk;  // trace_printk records, in call order
  // cycle: the cycle the event unit handed it over (the order of several cores' records)
  struct Event { unsigned kind, map, cpu, ctxlen; std::vector<uint8_t> data; uint64_t cycle; };
  std::vector<Event> events;  // perf_event_output and ring buffer records, in call order
};

// An off-chip map memory tier (QDRII+ or DDR3, docs/maps.md "Memory tiers"): its bytes in 4 KiB pages allocated on
// first write (a 128 MiB map costs what its written slots cost), and its read latency (params.tier_read_cycles).
class OffChipMemory {
 public:
  static constexpr uint64_t kPage = 4096;
  OffChipMemory(const char* name, uint32_t base, uint64_t bytes, int read_cycles, int bytes_per_cycle)
      : name_(name), base_(base), bytes_(bytes), read_cycles_(read_cycles), bytes_per_cycle_(bytes_per_cycle) {}
  bool holds(uint32_t addr) const { return addr >= base_ && uint64_t(addr) - base_ < bytes_; }
  // cycles from a read request of n bytes to its data
  int latency(unsigned n) const { return read_cycles_ + int((n + bytes_per_cycle_ - 1) / bytes_per_cycle_) - 1; }
  uint8_t read(uint64_t off) const;
  void write(uint64_t off, uint8_t b);
  const std::string& name() const { return name_; }
  uint64_t bytes() const { return bytes_; }
  uint32_t base() const { return base_; }
  const std::unordered_map<uint64_t, std::vector<uint8_t>>& pages() const { return pages_; }
  void set_page(uint64_t n, const std::vector<uint8_t>& data) { pages_[n] = data; }

 private:
  std::string name_;
  uint32_t base_;
  uint64_t bytes_;
  int read_cycles_, bytes_per_cycle_;
  std::unordered_map<uint64_t, std::vector<uint8_t>> pages_;
};

class SephirotSim {
 public:
  SephirotSim(int argc, char** argv);
  ~SephirotSim();
  // load the ROM (text rows), optional map image ("<line> <32 hex>") and the packet stream
  bool setup(const std::string& rom, const std::string& maps, const std::string& packets, bool raw);
  // run until every packet has its result and its output frames, or max_cycles
  bool run(uint64_t max_cycles);
  // write the results (and the map image when dump_path is not empty)
  bool finish(const std::string& out_path, const std::string& dump_path, uint64_t dump_lines);
  uint64_t cycles() const { return cycle_; }
  void set_mapcfg(const std::string& path) { mapcfg_ = path; }
  // off-chip map memory pages ("<tier> <page number hex> <8192 hex digits>"), loaded before the run, and written
  // (every page in use) after it
  bool load_offchip(const std::string& path);
  bool dump_offchip(const std::string& path) const;
  void open_vcd(const std::string& path);
  void open_trace(const std::string& path);

 private:
  void tick();
  void sample();
  void sample_core(int k);  // core k's start, trace, printk and event records, result
  void take_drop_taps();  // the dropped frames' bytes from the drop tap (several cores), into their results
  void offchip_request();  // at the clock edge: take the port's request
  void offchip_drive();    // after the edge: the responses due in the new cycle (both ports)
  void mapunit_request();  // at the clock edge: take the map unit's request
  OffChipMemory* tier_of(uint32_t addr);
  std::vector<OffChipMemory> tiers_;
  struct Response { uint64_t due; uint32_t words[4]; };
  std::deque<Response> responses_;
  static constexpr int kMapResponseWords = 3 * seph::kMapWindowBytes / 4;
  struct MapResponse { uint64_t due; uint32_t words[kMapResponseWords]; };
  std::deque<MapResponse> map_responses_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vsephirot_top> top_;
  VerilatedVcdC* vcd_ = nullptr;
  FILE* trace_ = nullptr;
  uint64_t cycle_ = 0;
  uint64_t time_ = 0;
  bool raw_ = false;
  std::string mapcfg_;
  std::vector<SimPacket> packets_;
  std::vector<SimResult> results_;
  // input frames
  struct Frame { size_t pkt; size_t off; bool sop; bool eop; };
  std::deque<Frame> frames_;
  size_t done_ = 0;      // packets with a core result
  size_t emitted_ = 0;   // packets with their output
  std::vector<size_t> core_order_;  // packet index of the k-th packet entering the core
  size_t started_ = 0;
  size_t cur_pkt_[kCores];  // the packet each core runs (SIZE_MAX: none yet)
  std::vector<uint8_t> cur_out_;
  unsigned cur_meta_ = 0;
  uint64_t ev_words_[kCores][512] = {};  // each core's words of the event record being read (sephirot_events evw_*)
};
