// board_sim.h: Verilator harness of sephirot_board: AXI-Lite master, input ports, output collection, pcap I/O.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

class Vsephirot_board;
class VerilatedContext;

// the board's cores (sephirot_board's CORES: hxdp.board.sim builds with -GCORES=N -DSEPH_CORES=N); with several,
// dropped frames depart without output (out_drops_o)
#ifndef SEPH_CORES
#define SEPH_CORES 1
#endif
constexpr int kCores = SEPH_CORES;

struct BoardPacket {
  int port = 0;
  std::vector<uint8_t> data;
};

struct BoardOutput {
  uint64_t seq = 0;       // packet number (order of entry into the core)
  int port = 0;           // input port
  uint32_t action = 0;
  uint32_t fault = 0;
  uint32_t cycles = 0;
  bool redirect = false;
  uint32_t redir_port = 0;  // kind 0: ifindex; 1, 2: CPU or AF_XDP queue id; 3: broadcast port mask (bit 31 exclude)
  uint32_t redir_kind = 0;  // params.REDIRECT_PORT, _CPU, _XSK, _BROADCAST
  bool host_ok = false;     // a host-queue frame was delivered (else its queue was full or missing)
  uint64_t cycle = 0;     // cycle of the last output frame
  std::vector<uint8_t> data;
};

class BoardSim {
 public:
  static constexpr int kMaxPorts = 4;
  static constexpr size_t kQueueMax = 4096;  // frames an input port queues; more are dropped (counted in STAT)  // the model is built with NPORTS = 4; --ports N uses the first N
  BoardSim(int ports, size_t keep);
  ~BoardSim();
  // AXI-Lite transactions (the packet path keeps running meanwhile); return the AXI response (0 OKAY, 2 SLVERR)
  int axi_write(uint32_t addr, uint32_t value);
  int axi_read(uint32_t addr, uint32_t* value);
  // packets: queue on a port; runts (< 60 bytes) and frames over 2048 bytes are dropped by the MAC
  bool inject(int port, const std::vector<uint8_t>& data);
  void run(uint64_t cycles);
  // run until the ports are empty and every packet has left (false when max_cycles passed first)
  bool drain(uint64_t max_cycles);
  bool busy() const;
  // pcap replay into a port at full speed (loop: start over at the end) and pcap output of TX/REDIRECT frames
  bool replay(const std::string& path, int port, bool loop, std::string* err);
  void replay_frames(std::vector<std::vector<uint8_t>>&& frames, int port, bool loop);
  void stop_replay() { replay_.clear(); replay_loop_ = false; }
  bool looping() const { return replay_loop_ && !replay_.empty(); }  // a loop replay: the board never drains
  bool open_out_pcap(const std::string& path);
  // host queues: frames delivered into a CPU's or an AF_XDP socket's queue are written to DIR/cpuN.pcap or
  // DIR/xskN.pcap and taken at once by the simulated host (its DMA completion); with hold the host takes nothing,
  // so a queue fills up to its size and further frames are dropped (counted by the board's host-queue registers)
  void set_host(const std::string& dir, bool hold) { host_dir_ = dir; host_hold_ = hold; }
  // TAP interfaces (bump in the wire): frames read from port k's TAP enter port k; TX leaves by the same TAP,
  // REDIRECT to ifindex i by port i-1's TAP, PASS by the next port's TAP (to the other side of the wire)
  bool open_tap(int port, const std::string& name, std::string* err);
  int tap_fd(int port) const { return tap_[port]; }
  void read_tap(int port);
  std::deque<BoardOutput>& outputs() { return outputs_; }
  uint64_t cycle() const { return cycle_; }
  int ports() const { return ports_; }
  std::string stats() const;

 private:
  void tick();
  void drive();
  void sample();
  void feed_replay();
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vsephirot_board> top_;
  int ports_;
  size_t keep_;
  uint64_t cycle_ = 0;
  // input ports: queued packets and the frame offset of the front packet
  std::deque<BoardPacket> in_[kMaxPorts];
  size_t in_off_[kMaxPorts] = {};
  uint64_t fired_[kMaxPorts] = {};            // frames taken per port
  uint64_t driven_[kMaxPorts] = {~0ull, ~0ull, ~0ull, ~0ull};  // fired_ count when the data was last driven
  std::deque<int> order_;         // input port of each packet in the core, in order
  std::deque<BoardOutput> results_;  // core results waiting for their output frames
  std::deque<std::vector<uint8_t>> frames_out_;  // output frames waiting for their results
  uint64_t drops_departed_ = 0;  // several cores: dropped frames departed, waiting for their results
  std::deque<BoardOutput> outputs_;  // finished packets (bounded by keep_)
  std::vector<uint8_t> cur_out_;
  unsigned cur_meta_ = 0;  // leading metadata bytes of the packet being emitted
  uint64_t seq_ = 0;
  uint64_t accepted_ = 0, finished_ = 0, runts_ = 0, oversize_ = 0, dropped_outputs_ = 0, queue_dropped_ = 0;
  // pcap
  std::vector<std::vector<uint8_t>> replay_;
  size_t replay_pos_ = 0;
  int replay_port_ = 0;
  bool replay_loop_ = false;
  uint64_t replayed_ = 0;
  void emit_tap(const BoardOutput& r);
  void to_host(const BoardOutput& r);
  std::string host_dir_;
  bool host_hold_ = false;
  std::map<std::string, FILE*> host_pcap_;  // per host queue (cpuN, xskN)
  std::deque<uint32_t> host_pops_;          // frames the host took, one pop a cycle
  uint64_t host_frames_ = 0;
  int tap_[kMaxPorts] = {-1, -1, -1, -1};
  uint64_t tap_in_ = 0, tap_out_ = 0;
  FILE* out_pcap_ = nullptr;
  uint64_t out_pcap_count_ = 0;
};

bool read_pcap(const std::string& path, std::vector<std::vector<uint8_t>>& out, std::string* err);
