// Players per core: the server runs flat in this process pinned to
// CPU 0; loam-bots --mode swarm runs as a child pinned to CPU 1 with N walking bots.
// With --server-cores 2 nothing is pinned: the server and the swarm share both cores,
// the swarm at nice 19 so the load generator does not preempt what it measures. Both
// processes' CPU (user + system, all threads, over the measured seconds) is reported.
// For each N: wait until all N play, then measure the whole server tick (receive,
// step, send) for --seconds. A count "holds" when p99 <= 16.7 ms and the 60 Hz loop
// never fell behind. Target: at least 300 (the engine we replace: 100 on one core).
//
// Run: build/release/bench/net_capacity_bench [--counts 100,200,300,400,600] [--seconds 20]
//      [--scene PATH] [--bots PATH-to-loam-bots] [--server-cores 1|2]
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "bench/net_bench_util.h"

using namespace loam;

namespace {

// Payload KB/s the server sent, by message type, between two stats readings.
std::string byType(const net::ServerStats& before, const net::ServerStats& after, double seconds) {
  std::string out;
  char buf[96];
  for (const auto& [name, t] : after.sent) {
    auto it = before.sent.find(name);
    const std::uint64_t b = it == before.sent.end() ? 0 : it->second.bytes;
    std::snprintf(buf, sizeof buf, "%s\"%s\": %.0f", out.empty() ? "" : ", ", name.c_str(),
                  static_cast<double>(t.bytes - b) / 1024 / seconds);
    out += buf;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> counts{100, 200, 300, 400, 600};
  double seconds = 20;
  std::string scenePath = bench::repoPath("scenes/flat.toml");
  std::string botsPath = LOAM_BOTS_PATH;
  int serverCores = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--counts")) {
      counts.clear();
      std::stringstream ss(argv[i + 1]);
      std::string item;
      while (std::getline(ss, item, ',')) counts.push_back(std::atoi(item.c_str()));
    } else if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--scene")) scenePath = argv[i + 1];
    else if (!std::strcmp(argv[i], "--bots")) botsPath = argv[i + 1];
    else if (!std::strcmp(argv[i], "--server-cores")) serverCores = std::atoi(argv[i + 1]);
  }
  const bool oneCore = serverCores <= 1;
  const bool pinned = oneCore && bench::pinToCpu(0);
  net::ServerConfig config;
  config.maxPlayers = 2048;
  auto host = bench::openServer(scenePath, 1, config);
  bench::Pacer pacer;

  std::printf("{\n  \"bench\": \"net_capacity\",\n  \"scene\": \"%s\",\n  \"server_pinned_cpu0\": %s,\n"
              "  \"server_cores\": %d,\n  \"runs\": [",
              scenePath.c_str(), pinned ? "true" : "false", oneCore ? 1 : 2);
  int best = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    int n = counts[r];
    pid_t bots = bench::spawnChild({botsPath, "--server", "127.0.0.1:" + std::to_string(host->port()), "--count",
                                    std::to_string(n), "--mode", "swarm", "--duration", "0"},
                                   oneCore ? 1 : -1, oneCore ? 0 : 19);
    double start = bench::nowMs();
    while (host->stats().players < static_cast<std::uint32_t>(n) && bench::nowMs() - start < 60000) {
      pacer.wait(host.get());
      host->tick();
    }
    double joinSeconds = (bench::nowMs() - start) / 1000;
    std::uint32_t joined = host->stats().players;
    // Two seconds to settle: the join wave's backlog is not the steady crowd (it was
    // the one overrun of every run when measured from here).
    for (double settle = bench::nowMs(); bench::nowMs() - settle < 2000;) {
      pacer.wait(host.get());
      host->tick();
    }
    std::vector<double> ticks;
    std::uint64_t overrunsBefore = pacer.overruns();
    net::ServerStats before = host->stats();
    const double serverCpuBefore = bench::cpuSeconds(getpid()), botsCpuBefore = bench::cpuSeconds(bots);
    double from = bench::nowMs();
    while (bench::nowMs() - from < seconds * 1000) {
      pacer.wait(host.get());
      host->tick();
      ticks.push_back(host->lastTickTimes().totalUs / 1000.0);
    }
    net::ServerStats after = host->stats();
    const double serverCpu = (bench::cpuSeconds(getpid()) - serverCpuBefore) / seconds;
    const double botsCpu = (bench::cpuSeconds(bots) - botsCpuBefore) / seconds;
    std::uint64_t overruns = pacer.overruns() - overrunsBefore;
    bench::Percentiles p = bench::percentiles(ticks);
    bool holds = joined == static_cast<std::uint32_t>(n) && p.p99 <= 16.7 && overruns == 0;
    if (holds) best = std::max(best, n);
    std::printf("%s\n    {\"bots\": %d, \"playing\": %u, \"join_s\": %.1f, \"tick_ms\": {\"mean\": %.3f, \"p50\": %.3f, "
                "\"p99\": %.3f, \"max\": %.3f}, \"overruns\": %" PRIu64 ", \"out_kb_per_s\": %.0f, \"in_kb_per_s\": %.0f, "
                "\"holds_60hz\": %s, \"cores_used\": {\"server\": %.2f, \"bots\": %.2f}, \"out_kb_per_s_by_type\": {%s}}",
                r ? "," : "", n, joined, joinSeconds, p.mean, p.p50, p.p99, p.max, overruns,
                static_cast<double>(after.bytesOut - before.bytesOut) / 1024 / seconds,
                static_cast<double>(after.bytesIn - before.bytesIn) / 1024 / seconds, holds ? "true" : "false",
                serverCpu, botsCpu,
                byType(before, after, seconds).c_str());
    std::fflush(stdout);
    bench::stopChild(bots);
    // Let the server notice the disconnects before the next count.
    double wait = bench::nowMs();
    while (host->stats().players > 0 && bench::nowMs() - wait < 30000) {
      pacer.wait(host.get());
      host->tick();
    }
  }
  std::printf("\n  ],\n  \"largest_count_holding_60hz\": %d\n}\n", best);
  return 0;
}
