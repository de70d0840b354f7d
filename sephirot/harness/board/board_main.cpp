// board_main.cpp: the simulated board daemon: sephirot_board under Verilator behind a Unix socket (docs/board.md).
#include <poll.h>
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
#include "verilated.h"

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

class Server {
 public:
  Server(const Options& o) : opt_(o), sim_(o.ports, o.keep) {}
  int run();

 private:
  std::string handle(const std::string& line, bool* quit);
  Options opt_;
  BoardSim sim_;
};

std::string Server::handle(const std::string& line, bool* quit) {
  std::istringstream in(line);
  std::vector<std::string> a;
  for (std::string w; in >> w;) a.push_back(w);
  if (a.empty()) return "";
  std::string cmd = a[0];
  for (char& c : cmd) c = char(toupper(c));
  uint64_t x = 0, y = 0;
  char buf[64];
  if (cmd == "PING") return "OK hxdp-board ports=" + std::to_string(sim_.ports());
  if (cmd == "R" && a.size() == 2 && parse_u64(a[1], &x) && x <= 0xffffffffu) {
    uint32_t v = 0;
    int resp = sim_.axi_read(uint32_t(x), &v);
    if (resp != 0) return resp < 0 ? "ERR axi timeout" : "ERR slverr";
    snprintf(buf, sizeof buf, "OK 0x%08x", v);
    return buf;
  }
  if (cmd == "W" && a.size() == 3 && parse_u64(a[1], &x) && parse_u64(a[2], &y) && x <= 0xffffffffu &&
      y <= 0xffffffffu) {
    int resp = sim_.axi_write(uint32_t(x), uint32_t(y));
    if (resp != 0) return resp < 0 ? "ERR axi timeout" : "ERR slverr";
    return "OK";
  }
  if (cmd == "I" && a.size() == 3 && parse_u64(a[1], &x)) {
    std::vector<uint8_t> d;
    if (!parse_hex(a[2], d)) return "ERR bad packet hex";
    if (!sim_.inject(int(x), d)) return "ERR no port " + a[1];
    return "OK";
  }
  if (cmd == "RUN" && a.size() == 2 && parse_u64(a[1], &x)) {
    sim_.run(x);
    return "OK " + std::to_string(sim_.cycle());
  }
  if (cmd == "WAIT") {
    uint64_t max = 50000000;
    if (a.size() == 2 && !parse_u64(a[1], &max)) return "ERR bad cycle count";
    if (!sim_.drain(max)) return "ERR still busy after " + std::to_string(max) + " cycles";
    return "OK " + std::to_string(sim_.cycle());
  }
  if (cmd == "OUT") {
    uint64_t max = UINT64_MAX;
    if (a.size() == 2 && !parse_u64(a[1], &max)) return "ERR bad count";
    auto& q = sim_.outputs();
    size_t n = std::min<uint64_t>(max, q.size());
    std::string r = "OK " + std::to_string(n);
    for (size_t i = 0; i < n; i++) {
      const BoardOutput& o = q.front();
      char h[160];
      snprintf(h, sizeof h, "\n%" PRIu64 " %d %u %u %u %s ", o.seq, o.port, o.action, o.fault, o.cycles,
               redirect_text(o).c_str());
      r += h;
      r += hex(o.data);
      q.pop_front();
    }
    return r;
  }
  if (cmd == "CLEAROUT") { sim_.outputs().clear(); return "OK"; }
  if (cmd == "STAT") return "OK " + sim_.stats();
  if (cmd == "PCAP" && a.size() >= 2) {
    uint64_t port = 0, loop = 0;
    if (a.size() >= 3 && !parse_u64(a[2], &port)) return "ERR bad port";
    if (a.size() >= 4 && !parse_u64(a[3], &loop)) return "ERR bad loop flag";
    std::string err;
    if (!sim_.replay(a[1], int(port), loop != 0, &err)) return "ERR " + err;
    return "OK";
  }
  if (cmd == "STOPPCAP") { sim_.stop_replay(); return "OK"; }
  if (cmd == "OUTPCAP" && a.size() == 2) {
    if (!sim_.open_out_pcap(a[1])) return "ERR cannot write " + a[1];
    return "OK";
  }
  if (cmd == "QUIT") { *quit = true; return "OK"; }
  return "ERR unknown or malformed request: " + line.substr(0, 80);
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
  int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (opt_.socket.size() >= sizeof addr.sun_path) { fprintf(stderr, "socket path too long\n"); return 1; }
  strcpy(addr.sun_path, opt_.socket.c_str());
  int probe = socket(AF_UNIX, SOCK_STREAM, 0);
  if (connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    fprintf(stderr, "another board is already serving on %s\n", opt_.socket.c_str());
    close(probe);
    return 1;
  }
  close(probe);
  unlink(opt_.socket.c_str());  // a stale socket file of a daemon that is gone
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 || listen(lfd, 8) < 0) {
    fprintf(stderr, "cannot listen on %s: %s\n", opt_.socket.c_str(), strerror(errno));
    return 1;
  }
  fprintf(stderr, "hxdp board: listening on %s (%d ports, %s)\n", opt_.socket.c_str(), opt_.ports,
          opt_.step ? "stepped clock" : "free-running clock");
  std::map<int, std::string> clients;  // fd -> unprocessed input
  bool quit = false;
  while (!quit && !g_stop) {
    std::vector<pollfd> fds{{lfd, POLLIN, 0}};
    for (auto& c : clients) fds.push_back({c.first, POLLIN, 0});
    size_t ntap_first = fds.size();
    for (int p = 0; p < sim_.ports(); p++)
      if (sim_.tap_fd(p) >= 0) fds.push_back({sim_.tap_fd(p), POLLIN, 0});
    bool running = !opt_.step && sim_.busy();
    int n = poll(fds.data(), fds.size(), running ? 0 : 20);
    if (n < 0 && errno != EINTR) break;
    if (n > 0) {
      if (fds[0].revents & POLLIN) {
        int cfd = accept(lfd, nullptr, nullptr);
        if (cfd >= 0) clients[cfd] = "";
      }
      for (size_t i = ntap_first; i < fds.size(); i++)
        if (fds[i].revents & POLLIN)
          for (int p = 0; p < sim_.ports(); p++)
            if (sim_.tap_fd(p) == fds[i].fd) sim_.read_tap(p);
      for (size_t i = 1; i < ntap_first; i++) {
        if (!fds[i].revents) continue;
        int fd = fds[i].fd;
        char rb[65536];
        ssize_t got = read(fd, rb, sizeof rb);
        if (got <= 0) { close(fd); clients.erase(fd); continue; }
        std::string& pending = clients[fd];
        pending.append(rb, size_t(got));
        std::string reply;
        size_t pos;
        while ((pos = pending.find('\n')) != std::string::npos) {
          std::string line = pending.substr(0, pos);
          pending.erase(0, pos + 1);
          if (!line.empty() && line.back() == '\r') line.pop_back();
          std::string r = handle(line, &quit);
          if (!r.empty()) reply += r + "\n";
          if (quit) break;
        }
        size_t off = 0;
        while (off < reply.size()) {
          ssize_t w = write(fd, reply.data() + off, reply.size() - off);
          if (w <= 0) break;
          off += size_t(w);
        }
        if (quit) break;
      }
    }
    if (!opt_.step && sim_.busy()) sim_.run(opt_.chunk);
  }
  for (auto& c : clients) close(c.first);
  close(lfd);
  unlink(opt_.socket.c_str());
  fprintf(stderr, "hxdp board: stopped at cycle %" PRIu64 " (%s)\n", sim_.cycle(), sim_.stats().c_str());
  return 0;
}

void usage(const char* argv0) {
  fprintf(stderr, "usage: %s [--socket PATH] [--ports N] [--pcap IN.pcap [--pcap-port P] [--loop]] [--out OUT.pcap] "
          "[--step] [--keep N] [--tap NAME[,NAME...]] [--host-pcap DIR] [--host-hold]\n", argv0);
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
