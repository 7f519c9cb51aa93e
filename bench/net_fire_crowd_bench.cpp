// Fire with a crowd: forest-fires with its five ignition points lit by the scene as
// a hosted server lights them (at 0, 10, 20, 30 and 40 s of the world's time: the
// first burns while the players join) and 25 players sending input at the full
// 60 Hz walking around the clearing (loam-bots swarm as a child on CPU 1; the server in this process on CPU 0). Measures the
// whole server tick while the fires burn. Target: p99 <= 16.7 ms (the engine we
// replace could not hold it).
//
// Run: build/release/bench/net_fire_crowd_bench [--players 25] [--seconds 60] [--bots PATH]
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/net_bench_util.h"
#include "sim/systems/fire.h"

using namespace loam;

int main(int argc, char** argv) {
  int players = 25;
  double seconds = 60;
  std::string botsPath = LOAM_BOTS_PATH;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--players")) players = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--bots")) botsPath = argv[i + 1];
  }
  bool pinned = bench::pinToCpu(0);
  net::ServerConfig config;
  config.maxPlayers = std::max<std::uint32_t>(config.maxPlayers, static_cast<std::uint32_t>(players));
  auto host = bench::openServer(bench::repoPath("scenes/forest-fires.toml"), 1, config);
  bench::Pacer pacer;

  pid_t bots = bench::spawnChild({botsPath, "--server", "127.0.0.1:" + std::to_string(host->port()), "--count",
                                  std::to_string(players), "--mode", "swarm", "--duration", "0"},
                                 1);
  double start = bench::nowMs();
  while (host->stats().players < static_cast<std::uint32_t>(players) && bench::nowMs() - start < 60000) {
    pacer.wait(host.get());
    host->tick();
  }
  std::vector<double> ticks, burningTicks, stepMs, sendMs;
  std::size_t maxBurning = 0;
  std::uint64_t edits = 0;
  double from = bench::nowMs();
  while (bench::nowMs() - from < seconds * 1000) {
    pacer.wait(host.get());
    const sim::StepOutput& out = host->tick();
    edits += out.edits.size();
    const net::ServerHost::TickTimes times = host->lastTickTimes();
    const double ms = times.totalUs / 1000.0;
    ticks.push_back(ms);
    stepMs.push_back(times.stepUs / 1000.0);
    sendMs.push_back(times.sendUs / 1000.0);
    std::size_t burning = host->state().fire.cells.size();
    maxBurning = std::max(maxBurning, burning);
    if (burning > 0) burningTicks.push_back(ms);
  }
  bench::Percentiles all = bench::percentiles(ticks), burning = bench::percentiles(burningTicks);
  bench::Percentiles step = bench::percentiles(stepMs), send = bench::percentiles(sendMs);
  net::ServerStats st = host->stats();
  bench::stopChild(bots);
  std::string byType;
  for (const auto& [name, t] : st.sent) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s\"%s\": %.0f", byType.empty() ? "" : ", ", name.c_str(),
                  static_cast<double>(t.bytes) / 1024 / seconds / std::max(1u, st.players));
    byType += buf;
  }
  std::printf("{\n  \"bench\": \"net_fire_crowd\",\n  \"server_pinned_cpu0\": %s,\n  \"players\": %u,\n"
              "  \"seconds\": %.0f,\n  \"max_burning_cells\": %zu,\n  \"edits_per_s\": %.0f,\n"
              "  \"tick_ms\": {\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f},\n"
              "  \"tick_ms_while_burning\": {\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f},\n"
              "  \"sim_step_ms\": {\"mean\": %.3f, \"p99\": %.3f},\n  \"send_ms\": {\"mean\": %.3f, \"p99\": %.3f},\n"
              "  \"kb_per_s_per_player_by_type\": {%s},\n"
              "  \"stream_resent_kb_per_s_per_player\": %.0f,\n"
              "  \"overruns\": %" PRIu64 ",\n  \"holds_60hz\": %s\n}\n",
              pinned ? "true" : "false", st.players, seconds, maxBurning, static_cast<double>(edits) / seconds, all.mean,
              all.p50, all.p99, all.max, burning.mean, burning.p50, burning.p99, burning.max, step.mean, step.p99, send.mean,
              send.p99, byType.c_str(),
              static_cast<double>(st.streamResentBytes) / 1024 / seconds / std::max(1u, st.players), pacer.overruns(),
              burning.p99 <= 16.7 && pacer.overruns() == 0 ? "true" : "false");
  return 0;
}
