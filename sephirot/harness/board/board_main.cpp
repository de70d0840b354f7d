// board_main.cpp: the simulated board daemon: sephirot_board under Verilator behind a Unix socket (docs/board.md).
#include <fcntl.h>
#include <poll.h>
#include <grp.h>
#include <sys/stat.h>
#include <time.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "board_sim.h"
#include "../sephirot_params.h"  // generated from hxdp/params.py
#include "verilated.h"

using seph::kCtrlAddr;

namespace {
volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct Options {
  std::string socket = "/tmp/hxdp-board.sock";
  int ports = 1;
  std::string pcap, out, host_dir;
  bool host_hold = false;
  std::vector<std::string> taps;
  int pcap_port = 0;
  bool loop = false;
  bool step = false;
  size_t keep = 100000;
  uint64_t chunk = 64;
  int group = -1;  // --group: the socket is 0660 with this group (else 0600)
};

bool parse_u64(const std::string& s, uint64_t* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long x = strtoull(s.c_str(), &end, 0);
  if (errno || *end) return false;
  *v = x;
  return true;
}

// the OUT line's redirect field: -, an ifindex, cpu:N / xsk:N (a host queue; `:dropped` when its queue was full or
// missing) or bcast:MASK (the ports of a broadcast, bit 31 exclude the ingress port)
std::string redirect_text(const BoardOutput& o) {
  if (!o.redirect) return "-";
  if (o.redir_kind == 0) return std::to_string(o.redir_port);
  if (o.redir_kind == 3) return "bcast:" + std::to_string(o.redir_port);
  return std::string(o.redir_kind == 2 ? "xsk:" : "cpu:") + std::to_string(o.redir_port) + (o.host_ok ? "" : ":dropped");
}

bool parse_hex(const std::string& s, std::vector<uint8_t>& out) {
  if (s.size() % 2) return false;
  out.clear();
  for (size_t i = 0; i < s.size(); i += 2) {
    char b[3] = {s[i], s[i + 1], 0};
    char* end = nullptr;
    long v = strtol(b, &end, 16);
    if (*end) return false;
    out.push_back(uint8_t(v));
  }
  return true;
}

std::string hex(const std::vector<uint8_t>& d) {
  static const char* k = "0123456789abcdef";
  std::string s;
  s.reserve(2 * d.size());
  for (uint8_t b : d) { s.push_back(k[b >> 4]); s.push_back(k[b & 15]); }
  return s.empty() ? "-" : s;
}

// Limits that keep one client from stalling the daemon or growing its memory without bound (docs/board.md).
constexpr size_t kMaxLine = 1 << 20;          // longest request line (a 9 KiB frame is 18 KiB of hex)
constexpr size_t kMaxOutBuf = 1 << 20;        // replies not yet taken: no further request of the client is read
constexpr int kStuckMs = 10000;               // a client that takes none of its replies for this long is dropped
constexpr uint64_t kMaxRun = 100000000;       // RUN N and WAIT MAX upper bound (cycles)
constexpr uint64_t kSlice = 4096;             // cycles of a RUN/WAIT run between serving the other clients
constexpr size_t kMaxReplayBytes = 64u << 20;  // frames staged for a replay per client

struct Client {
  int id = 0;
  std::string in, out;       // unprocessed input, replies not yet written
  size_t scanned = 0;        // bytes of `in` already searched for a newline
  std::string name;          // the lease owner's name when this client leases the board
  uint64_t run_left = 0;     // a sliced RUN: cycles still to run
  uint64_t wait_left = 0;    // a sliced WAIT: cycles still allowed
  bool waiting = false, running = false;
  uint64_t wait_max = 0;
  std::vector<std::vector<uint8_t>> staged;  // RF frames for the next RGO
  size_t staged_bytes = 0;
  int64_t stuck_since = -1;  // ms when its replies stopped draining
  bool dead = false;
};

int64_t now_ms() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

std::string token(const std::string& s) {
  std::string t;
  for (char c : s.substr(0, 120)) t.push_back((c > ' ' && c < 127) ? c : '_');
  return t.empty() ? "-" : t;
}

class Server {
 public:
  Server(const Options& o) : opt_(o), sim_(o.ports, o.keep) {}
  int run();

 private:
  enum class Act { kReply, kDefer, kPending };
  Act handle(Client& c, const std::string& line, std::string* reply, bool* quit);
  std::string who(const Client& c) const { return c.name.empty() ? "conn" + std::to_string(c.id) : c.name; }
  bool blocked_by_lease(const Client& c) const { return lease_ >= 0 && lease_ != c.id; }
  void process(Client& c, bool* quit);
  void slice(Client& c);
  void flush(int fd, Client& c);
  void drop(int fd);
  Options opt_;
  BoardSim sim_;
  std::map<int, Client> clients_;  // by fd
  int next_id_ = 1;
  int lease_ = -1;                 // client id leasing the board (multi-register operations), -1: free
  std::string lease_name_;
  std::string hold_name_;          // who set the input hold (only it releases it), empty: not held by a client
  int hold_id_ = -1;               // its client id while connected, -1 when gone
};

// One request. kDefer: not now (the board is leased by another client); the line stays queued.
Server::Act Server::handle(Client& c, const std::string& line, std::string* reply, bool* quit) {
  std::istringstream in(line);
  std::vector<std::string> a;
  for (std::string w; in >> w;) a.push_back(w);
  if (a.empty()) { *reply = "ERR empty request"; return Act::kReply; }
  std::string cmd = a[0];
  for (char& ch : cmd) ch = char(toupper(ch));
  uint64_t x = 0, y = 0;
  char buf[64];
  std::string& r = *reply;
  if (cmd == "PING") { r = "OK hxdp-board ports=" + std::to_string(sim_.ports()); return Act::kReply; }
  if (cmd == "LOCK") {  // lease the board for a multi-register operation; waits while another client holds it
    if (blocked_by_lease(c)) return Act::kDefer;
    lease_ = c.id;
    c.name = a.size() >= 2 ? token(a[1]) : "";
    lease_name_ = who(c);
    r = "OK";
    return Act::kReply;
  }
  if (cmd == "UNLOCK") {
    if (lease_ != c.id) { r = "ERR this connection does not lease the board"; return Act::kReply; }
    lease_ = -1;
    lease_name_.clear();
    r = "OK";
    return Act::kReply;
  }
  if (cmd == "LEASE") {  // who leases the board and who holds the input (alive: still connected)
    r = "OK lease=" + (lease_ < 0 ? std::string("-") : lease_name_) + " mine=" + (lease_ == c.id ? "1" : "0") +
        " hold=" + (hold_name_.empty() ? std::string("-") : hold_name_) + " hold_alive=" + (hold_id_ >= 0 ? "1" : "0") +
        " hold_mine=" + (hold_id_ == c.id ? "1" : "0");
    return Act::kReply;
  }
  if (cmd == "TAKEHOLD") {  // recovery (--force, or a new inject): the input hold passes to this client
    if (blocked_by_lease(c)) return Act::kDefer;
    r = "OK " + (hold_name_.empty() ? std::string("-") : hold_name_);
    if (!hold_name_.empty()) { hold_name_ = who(c); hold_id_ = c.id; }
    return Act::kReply;
  }
  if (cmd == "R" && a.size() == 2 && parse_u64(a[1], &x) && x <= 0xffffffffu) {
    uint32_t v = 0;
    int resp = sim_.axi_read(uint32_t(x), &v);
    if (resp != 0) { r = resp < 0 ? "ERR axi timeout" : "ERR slverr"; return Act::kReply; }
    snprintf(buf, sizeof buf, "OK 0x%08x", v);
    r = buf;
    return Act::kReply;
  }
  if (cmd == "W" && a.size() == 3 && parse_u64(a[1], &x) && parse_u64(a[2], &y) && x <= 0xffffffffu &&
      y <= 0xffffffffu) {
    if (blocked_by_lease(c)) return Act::kDefer;  // writes never interleave with a leased operation
    if (x == kCtrlAddr) {
      bool hold = y & 1;
      if (!hold_name_.empty() && hold_id_ != c.id) {
        r = "ERR input held by " + hold_name_ + (hold_id_ >= 0 ? "" : " (gone)") +
            ": only its owner releases it (inject the program again, or --force)";
        return Act::kReply;
      }
      int resp = sim_.axi_write(uint32_t(x), uint32_t(y));
      if (resp != 0) { r = resp < 0 ? "ERR axi timeout" : "ERR slverr"; return Act::kReply; }
      hold_name_ = hold ? who(c) : "";
      hold_id_ = hold ? c.id : -1;
      r = "OK";
      return Act::kReply;
    }
    int resp = sim_.axi_write(uint32_t(x), uint32_t(y));
    r = resp == 0 ? "OK" : resp < 0 ? "ERR axi timeout" : "ERR slverr";
    return Act::kReply;
  }
  if (cmd == "I" && a.size() == 3) {
    if (!parse_u64(a[1], &x) || x >= uint64_t(sim_.ports())) { r = "ERR no port " + a[1].substr(0, 24); return Act::kReply; }
    std::vector<uint8_t> d;
    if (a[2] != "-" && !parse_hex(a[2], d)) { r = "ERR bad packet hex"; return Act::kReply; }
    sim_.inject(int(x), d);
    r = "OK";
    return Act::kReply;
  }
  if (cmd == "RUN" && a.size() == 2 && parse_u64(a[1], &x)) {
    if (x > kMaxRun) { r = "ERR RUN " + a[1] + ": at most " + std::to_string(kMaxRun) + " cycles"; return Act::kReply; }
    c.running = true;
    c.run_left = x;
    return Act::kPending;
  }
  if (cmd == "WAIT") {
    uint64_t max = 50000000;
    if (a.size() == 2 && !parse_u64(a[1], &max)) { r = "ERR bad cycle count"; return Act::kReply; }
    if (max > kMaxRun) { r = "ERR WAIT " + a[1] + ": at most " + std::to_string(kMaxRun) + " cycles"; return Act::kReply; }
    if (sim_.looping()) { r = "ERR a loop replay is running: the board never drains (STOPPCAP first)"; return Act::kReply; }
    c.waiting = true;
    c.wait_left = c.wait_max = max;
    return Act::kPending;
  }
  if (cmd == "OUT") {
    uint64_t max = UINT64_MAX;
    if (a.size() == 2 && !parse_u64(a[1], &max)) { r = "ERR bad count"; return Act::kReply; }
    auto& q = sim_.outputs();
    size_t n = std::min<uint64_t>(max, q.size());
    r = "OK " + std::to_string(n);
    for (size_t i = 0; i < n; i++) {
      const BoardOutput& o = q.front();
      char h[160];
      snprintf(h, sizeof h, "\n%" PRIu64 " %d %u %u %u %s ", o.seq, o.port, o.action, o.fault, o.cycles,
               redirect_text(o).c_str());
      r += h;
      r += hex(o.data);
      q.pop_front();
    }
    return Act::kReply;
  }
  if (cmd == "CLEAROUT" && a.size() == 1) { sim_.outputs().clear(); r = "OK"; return Act::kReply; }
  if (cmd == "STAT" && a.size() == 1) { r = "OK " + sim_.stats(); return Act::kReply; }
  if (cmd == "RF" && a.size() == 2) {  // stage a replay frame: the pcap streams over the connection
    std::vector<uint8_t> d;
    if (a[1] != "-" && !parse_hex(a[1], d)) { r = "ERR bad packet hex"; return Act::kReply; }
    if (c.staged_bytes + d.size() > kMaxReplayBytes) {
      r = "ERR replay larger than " + std::to_string(kMaxReplayBytes) + " bytes";
      return Act::kReply;
    }
    c.staged_bytes += d.size();
    c.staged.push_back(std::move(d));
    r = "OK";
    return Act::kReply;
  }
  if (cmd == "RGO" && a.size() == 3) {  // replay the staged frames into PORT (LOOP 1: forever)
    uint64_t loop = 0;
    if (!parse_u64(a[1], &x) || x >= uint64_t(sim_.ports())) { r = "ERR no port " + a[1].substr(0, 24); return Act::kReply; }
    if (!parse_u64(a[2], &loop) || loop > 1) { r = "ERR bad loop flag"; return Act::kReply; }
    if (c.staged.empty()) { r = "ERR no frames staged (RF HEX first)"; return Act::kReply; }
    sim_.replay_frames(std::move(c.staged), int(x), loop != 0);
    c.staged.clear();
    c.staged_bytes = 0;
    r = "OK";
    return Act::kReply;
  }
  if (cmd == "STOPPCAP" && a.size() == 1) { sim_.stop_replay(); r = "OK"; return Act::kReply; }
  if (cmd == "QUIT" && a.size() == 1) { *quit = true; r = "OK"; return Act::kReply; }
  r = "ERR unknown or malformed request: " + token(line.substr(0, 80));
  return Act::kReply;
}

// Run the client's complete lines until one must wait (lease, a sliced RUN/WAIT) or its replies pile up.
void Server::process(Client& c, bool* quit) {
  while (!c.dead && !c.running && !c.waiting && c.out.size() < kMaxOutBuf && !*quit) {
    size_t pos = c.in.find('\n', c.scanned);
    if (pos == std::string::npos) {
      c.scanned = c.in.size();
      if (c.in.size() > kMaxLine) {
        c.out += "ERR request line longer than " + std::to_string(kMaxLine) + " bytes\n";
        c.dead = true;
      }
      return;
    }
    std::string line = c.in.substr(0, pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string reply;
    Act act = handle(c, line, &reply, quit);
    if (act == Act::kDefer) return;
    c.in.erase(0, pos + 1);
    c.scanned = 0;
    if (act == Act::kReply) c.out += reply + "\n";
  }
}

// A slice of a client's RUN or WAIT: the other clients are served between slices.
void Server::slice(Client& c) {
  if (c.running) {
    uint64_t n = std::min(c.run_left, kSlice);
    sim_.run(n);
    c.run_left -= n;
    if (!c.run_left) { c.running = false; c.out += "OK " + std::to_string(sim_.cycle()) + "\n"; }
  } else if (c.waiting) {
    uint64_t n = std::min(c.wait_left, kSlice);
    bool done = sim_.drain(n);
    c.wait_left -= std::min(c.wait_left, n);
    if (done) { c.waiting = false; c.out += "OK " + std::to_string(sim_.cycle()) + "\n"; }
    else if (!c.wait_left) {
      c.waiting = false;
      c.out += "ERR still busy after " + std::to_string(c.wait_max) + " cycles\n";
    }
  }
}

void Server::flush(int fd, Client& c) {
  while (!c.out.empty()) {
    ssize_t w = send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w <= 0) {
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      c.dead = true;
      return;
    }
    c.out.erase(0, size_t(w));
    c.stuck_since = -1;
  }
  if (c.out.empty()) c.stuck_since = -1;
  else if (c.stuck_since < 0) c.stuck_since = now_ms();
  else if (now_ms() - c.stuck_since > kStuckMs) c.dead = true;  // it does not read its replies
}

void Server::drop(int fd) {
  Client& c = clients_[fd];
  if (lease_ == c.id) { lease_ = -1; lease_name_.clear(); }
  if (hold_id_ == c.id) hold_id_ = -1;  // the hold stays set: packets never see a half-written program
  close(fd);
  clients_.erase(fd);
}

// Listen on a Unix socket created 0600 (or 0660 with the operator's group); only a stale socket is replaced.
int listen_socket(const Options& o) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (o.socket.size() >= sizeof addr.sun_path) { fprintf(stderr, "socket path too long\n"); return -1; }
  strcpy(addr.sun_path, o.socket.c_str());
  struct stat st;
  if (lstat(o.socket.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      fprintf(stderr, "%s exists and is not a socket: not replaced\n", o.socket.c_str());
      return -1;
    }
    int probe = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      fprintf(stderr, "another board is already serving on %s\n", o.socket.c_str());
      close(probe);
      return -1;
    }
    close(probe);
    unlink(o.socket.c_str());  // a stale socket of a daemon that is gone
  }
  int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
  mode_t old = umask(0177);  // created 0600: no other user reaches the board
  int ok = bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  umask(old);
  if (ok < 0 || listen(lfd, 64) < 0) {
    fprintf(stderr, "cannot listen on %s: %s\n", o.socket.c_str(), strerror(errno));
    close(lfd);
    return -1;
  }
  if (o.group >= 0 && (chown(o.socket.c_str(), uid_t(-1), gid_t(o.group)) < 0 || chmod(o.socket.c_str(), 0660) < 0)) {
    fprintf(stderr, "cannot give %s to group %d: %s\n", o.socket.c_str(), o.group, strerror(errno));
    close(lfd);
    unlink(o.socket.c_str());
    return -1;
  }
  fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
  return lfd;
}

int Server::run() {
  if (!opt_.pcap.empty()) {
    std::string err;
    if (!sim_.replay(opt_.pcap, opt_.pcap_port, opt_.loop, &err)) { fprintf(stderr, "%s\n", err.c_str()); return 1; }
  }
  for (size_t p = 0; p < opt_.taps.size(); p++) {
    std::string err;
    if (!sim_.open_tap(int(p), opt_.taps[p], &err)) { fprintf(stderr, "%s\n", err.c_str()); return 1; }
  }
  sim_.set_host(opt_.host_dir, opt_.host_hold);
  if (!opt_.out.empty() && !sim_.open_out_pcap(opt_.out)) {
    fprintf(stderr, "cannot write %s\n", opt_.out.c_str());
    return 1;
  }
  int lfd = listen_socket(opt_);
  if (lfd < 0) return 1;
  fprintf(stderr, "hxdp board: listening on %s (%d ports, %s)\n", opt_.socket.c_str(), opt_.ports,
          opt_.step ? "stepped clock" : "free-running clock");
  bool quit = false;
  while (!quit && !g_stop) {
    std::vector<pollfd> fds{{lfd, POLLIN, 0}};
    bool work = false;
    for (auto& [fd, c] : clients_) {
      short ev = 0;
      if (c.out.size() < kMaxOutBuf && !c.running && !c.waiting) ev |= POLLIN;
      if (!c.out.empty()) ev |= POLLOUT;
      fds.push_back({fd, ev, 0});
      work = work || c.running || c.waiting;
    }
    size_t ntap_first = fds.size();
    for (int p = 0; p < sim_.ports(); p++)
      if (sim_.tap_fd(p) >= 0) fds.push_back({sim_.tap_fd(p), POLLIN, 0});
    bool running = work || (!opt_.step && sim_.busy());
    int n = poll(fds.data(), fds.size(), running ? 0 : 20);
    if (n < 0 && errno != EINTR) break;
    if (n > 0) {
      if (fds[0].revents & POLLIN) {
        for (int k = 0; k < 64; k++) {
          int cfd = accept(lfd, nullptr, nullptr);
          if (cfd < 0) break;
          fcntl(cfd, F_SETFL, fcntl(cfd, F_GETFL) | O_NONBLOCK);
          clients_[cfd].id = next_id_++;
        }
      }
      for (size_t i = ntap_first; i < fds.size(); i++)
        if (fds[i].revents & POLLIN)
          for (int p = 0; p < sim_.ports(); p++)
            if (sim_.tap_fd(p) == fds[i].fd) sim_.read_tap(p);
      for (size_t i = 1; i < ntap_first; i++) {
        auto it = clients_.find(fds[i].fd);
        if (it == clients_.end() || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char rb[65536];
        ssize_t got = recv(fds[i].fd, rb, sizeof rb, MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) it->second.dead = true;
        else if (got > 0) it->second.in.append(rb, size_t(got));
      }
    }
    // every client in turn: its lines (a lease released by one lets a deferred one go on), a slice of its run
    for (int pass = 0; pass < 2; pass++)
      for (auto& [fd, c] : clients_) process(c, &quit);
    for (auto& [fd, c] : clients_) {
      slice(c);
      process(c, &quit);
      flush(fd, c);
    }
    std::vector<int> gone;
    for (auto& [fd, c] : clients_)
      if (c.dead) gone.push_back(fd);
    for (int fd : gone) {
      flush(fd, clients_[fd]);
      drop(fd);
    }
    if (!opt_.step && sim_.busy() && !work) sim_.run(opt_.chunk);
  }
  for (auto& [fd, c] : clients_) { flush(fd, c); close(fd); }
  close(lfd);
  struct stat st;
  if (lstat(opt_.socket.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) unlink(opt_.socket.c_str());
  fprintf(stderr, "hxdp board: stopped at cycle %" PRIu64 " (%s)\n", sim_.cycle(), sim_.stats().c_str());
  return 0;
}

void usage(const char* argv0) {
  fprintf(stderr, "usage: %s [--socket PATH] [--ports N] [--pcap IN.pcap [--pcap-port P] [--loop]] [--out OUT.pcap] "
          "[--step] [--keep N] [--group G] [--tap NAME[,NAME...]] [--host-pcap DIR] [--host-hold]\n", argv0);
}
}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { usage(argv[0]); exit(2); }
      return argv[++i];
    };
    uint64_t v = 0;
    if (a == "--socket") o.socket = next();
    else if (a == "--ports") { if (!parse_u64(next(), &v) || v < 1 || v > BoardSim::kMaxPorts) { usage(argv[0]); return 2; } o.ports = int(v); }
    else if (a == "--pcap") o.pcap = next();
    else if (a == "--pcap-port") { if (!parse_u64(next(), &v)) { usage(argv[0]); return 2; } o.pcap_port = int(v); }
    else if (a == "--loop") o.loop = true;
    else if (a == "--out") o.out = next();
    else if (a == "--group") {
      std::string g = next();
      struct group* gr = getgrnam(g.c_str());
      if (gr) o.group = int(gr->gr_gid);
      else if (parse_u64(g, &v) && v < 0x7fffffff) o.group = int(v);
      else { fprintf(stderr, "no group %s\n", g.c_str()); return 2; }
    }
    else if (a == "--host-pcap") o.host_dir = next();
    else if (a == "--host-hold") o.host_hold = true;
    else if (a == "--step") o.step = true;
    else if (a == "--tap") {
      std::string list = next();
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        o.taps.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    }
    else if (a == "--keep") { if (!parse_u64(next(), &v)) { usage(argv[0]); return 2; } o.keep = v; }
    else if (a == "-h" || a == "--help") { usage(argv[0]); return 0; }
    else { usage(argv[0]); return 2; }
  }
  if (o.taps.size() > size_t(o.ports)) o.ports = int(std::min<size_t>(o.taps.size(), BoardSim::kMaxPorts));
  if (o.taps.size() > size_t(BoardSim::kMaxPorts)) { usage(argv[0]); return 2; }
  signal(SIGPIPE, SIG_IGN);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  Server s(o);
  return s.run();
}
