// sephirot_main.cpp: command line of the Sephirot simulator (plusargs), one process for a whole packet stream.
#include <chrono>
#include <ctime>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "sephirot_sim.h"
#include "verilated.h"

static std::string plusarg(int argc, char** argv, const std::string& name, const std::string& dflt = "") {
  std::string key = "+" + name + "=";
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a.rfind(key, 0) == 0) return a.substr(key.size());
    if (a == "+" + name) return "1";
  }
  return dflt;
}

int main(int argc, char** argv) {
  std::string rom = plusarg(argc, argv, "rom");
  std::string packets = plusarg(argc, argv, "packets");
  if (rom.empty() || packets.empty()) {
    fprintf(stderr, "usage: %s +rom=ROM +packets=FILE [+out=FILE] [+maps=IMG] [+mapcfg=CFG] [+mapdump=FILE +mapdump_lines=N] "
            "[+xmem=PAGES] [+xmemdump=FILE] [+raw] [+vcd=FILE] [+trace=FILE] [+max_cycles=N]\n", argv[0]);
    return 2;
  }
  SephirotSim sim(argc, argv);
  std::string vcd = plusarg(argc, argv, "vcd");
  if (!vcd.empty()) sim.open_vcd(vcd);
  std::string trace = plusarg(argc, argv, "trace");
  if (!trace.empty()) sim.open_trace(trace);
  sim.set_mapcfg(plusarg(argc, argv, "mapcfg"));
  std::string xmem = plusarg(argc, argv, "xmem");
  if (!xmem.empty() && !sim.load_offchip(xmem)) return 1;
  if (!sim.setup(rom, plusarg(argc, argv, "maps"), packets, !plusarg(argc, argv, "raw").empty())) return 1;
  uint64_t max_cycles = std::stoull(plusarg(argc, argv, "max_cycles", "100000000000"));
  auto t0 = std::chrono::steady_clock::now();
  std::clock_t c0 = std::clock();
  bool ok = sim.run(max_cycles);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
  if (!sim.finish(plusarg(argc, argv, "out"), plusarg(argc, argv, "mapdump"),
                  std::stoull(plusarg(argc, argv, "mapdump_lines", "0")))) return 1;
  std::string xdump = plusarg(argc, argv, "xmemdump");
  if (!xdump.empty() && !sim.dump_offchip(xdump)) return 1;
  fprintf(stderr, "simulated %" PRIu64 " cycles in %.3f s wall, %.3f s cpu (%.0f cycles/s of cpu time)\n",
          sim.cycles(), secs, cpu, cpu > 0 ? sim.cycles() / cpu : 0.0);
  return ok ? 0 : 3;
}
