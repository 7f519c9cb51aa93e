// Time to playable after a teleport: the server hosts a streamed scene (highlands by
// default), one full client joins and stands still (an empty input every tick), and
// the server teleports it onto the ground 5 km away, N times, each to a place no one
// has been (sim::TeleportCommand, what the admin's `teleport #ID X Z` queues). Two
// figures per teleport: the client's own (net::ClientStats::teleportPlayableMs, from
// the Snapshot that moved it to the ground around the new place being present)
// and the whole way (from queueing the command on the server to that moment: the
// step, the Snapshot's trip and the client's stat). Target: at most 1.5 s to playable.
//
// Run: build/release/bench/net_teleport_bench [--teleports 6] [--scene PATH]
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "bench/net_bench_util.h"
#include "net/client_connection.h"
#include "sim/step/commands.h"

using namespace loam;

namespace {

// Each 5 km from the one before (and the first from the spawn at 0,0), at least 1 km
// apart: every teleport lands where nothing is generated yet.
constexpr double kPlaces[][2] = {{3000, 4000},  {-2000, 4000}, {-2000, -1000}, {3000, -1000},
                                 {-1000, 2000}, {-1000, -3000}, {3000, 0}};

struct Summary {
  double min = 0, median = 0, max = 0;
};

Summary summarise(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2], v.back()};
}

void printList(const char* name, const std::vector<double>& v) {
  std::printf("  \"%s\": [", name);
  for (std::size_t i = 0; i < v.size(); ++i) std::printf("%s%.0f", i ? ", " : "", v[i]);
  const Summary s = summarise(v);
  std::printf("],\n  \"%s_min\": %.0f, \"%s_median\": %.0f, \"%s_max\": %.0f,\n", name, s.min, name, s.median,
              name, s.max);
}

}  // namespace

int main(int argc, char** argv) {
  int teleports = 6;
  std::string scenePath = bench::repoPath("scenes/highlands.toml");
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--teleports")) teleports = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--scene")) scenePath = argv[i + 1];
  }
  const int maxTeleports = static_cast<int>(std::size(kPlaces));
  if (teleports < 1 || teleports > maxTeleports) {
    std::fprintf(stderr, "bench: --teleports 1..%d\n", maxTeleports);
    return 2;
  }
  auto host = bench::openServer(scenePath, 1, net::ServerConfig{});
  auto client = bench::connectClient(*host, "jumper");
  net::ClientConnection& c = *client;
  bench::Pacer pacer;
  auto tick = [&](std::vector<sim::Command>* cmds) {
    pacer.wait(host.get());
    if (cmds) {
      host->tick(*cmds);
      cmds->clear();
    } else {
      host->tick();
    }
    c.service(bench::nowMs());
    if (c.phase() == net::ClientPhase::Playing) c.sendInput(sim::PlayerInput{});
    (void)c.takeEvents();
    if (c.phase() == net::ClientPhase::Failed || c.phase() == net::ClientPhase::Disconnected) {
      std::fprintf(stderr, "bench: client ended: %s\n", c.error().c_str());
      std::exit(1);
    }
  };
  const double joinStart = bench::nowMs();
  while (c.phase() != net::ClientPhase::Playing) {
    tick(nullptr);
    if (bench::nowMs() - joinStart > 60000) {
      std::fprintf(stderr, "bench: join timed out\n");
      return 1;
    }
  }
  for (int i = 0; i < 60; ++i) tick(nullptr);  // a second on the ground by the spawn

  std::vector<double> clientMs, wholeMs;
  std::vector<sim::Command> cmds;
  std::uint32_t seq = 0;
  for (int t = 0; t < teleports; ++t) {
    const sim::Vec3i to{static_cast<std::int32_t>(kPlaces[t][0] * sim::kUnitsPerMetre), 0,
                        static_cast<std::int32_t>(kPlaces[t][1] * sim::kUnitsPerMetre)};
    cmds.push_back({sim::kServerPlayer, ++seq, sim::TeleportCommand{c.playerId(), to, true}});
    const std::size_t before = c.stats().teleportPlayableMs.size();
    const double queued = bench::nowMs();
    tick(&cmds);
    while (c.stats().teleportPlayableMs.size() == before) {
      tick(nullptr);
      if (bench::nowMs() - queued > 30000) {
        std::fprintf(stderr, "bench: teleport %d never became playable\n", t + 1);
        return 1;
      }
    }
    wholeMs.push_back(bench::nowMs() - queued);
    clientMs.push_back(c.stats().teleportPlayableMs.back());
    for (int i = 0; i < 60; ++i) tick(nullptr);  // stand there a second
  }
  const net::ClientStats st = c.stats();
  const Summary s = summarise(clientMs);
  const bool ok = s.max <= 1500 && st.desyncCount == 0;
  std::printf("{\n  \"bench\": \"net_teleport\",\n  \"scene\": \"%s\",\n  \"teleports\": %d,\n  \"distance_m\": 5000,\n",
              scenePath.c_str(), teleports);
  printList("playable_ms", clientMs);
  printList("queued_to_playable_ms", wholeMs);
  std::printf("  \"teleports_seen\": %" PRIu64 ", \"corrections\": %" PRIu64 ", \"desyncs\": %" PRIu64
              ",\n  \"columns_faulted\": %" PRIu64 ", \"columns_wasted\": %" PRIu64 ", \"overruns\": %" PRIu64
              ",\n  \"target_ms\": 1500, \"ok\": %s\n}\n",
              st.prediction.teleports, st.prediction.corrections, st.desyncCount, st.stream.faults, st.stream.wasted,
              pacer.overruns(), ok ? "true" : "false");
  c.disconnect();
  return ok ? 0 : 1;
}
