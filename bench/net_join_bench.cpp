// Join time and snapshot size: the server hosts glade with N edits
// made (server digs and places at keyed positions around the spawn), then a client
// connects; the time from connect to Playing (the client streams: the spawn columns,
// then the ground around the player), then to the readable disc (every column sound
// may read, streamed in behind), and the join state's size (the JoinChunks' bytes)
// are measured, over a few joins. Target: at most 1 s to playable (issue 17). With
// --latency-ms and --loss the client joins through the link simulator (one-way
// latency, loss each way; issue 20's bar: 5 s at 300 ms and 20 %), and each join
// also prints when each phase began (phases_ms: awaiting welcome, generating,
// awaiting snapshot, playing).
//
// Run: build/release/bench/net_join_bench [--edits 400] [--joins 3] [--scene PATH]
//                                          [--latency-ms MS] [--loss P] [--seed N]
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/net_bench_util.h"
#include "net/client_connection.h"
#include "sim/step/commands.h"
#include "sim/world/material.h"

using namespace loam;

namespace {

// Keyed positions: a small xorshift (not state: the server applies what it is given).
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  int edits = 400, joins = 3;
  std::string scenePath = bench::repoPath("scenes/glade.toml");
  net::LinkProfile link;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--latency-ms")) link.latencyMs = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--loss")) link.loss = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seed")) link.seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--edits")) edits = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--joins")) joins = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--scene")) scenePath = argv[i + 1];
  }
  auto host = bench::openServer(scenePath, 1, net::ServerConfig{});

  // N edits in the 60 m around the spawn: digs (20 cm) and places (10 cm stone) on
  // the ground; the server's own commands skip reach and rate checks.
  std::vector<sim::Command> cmds;
  std::uint32_t seq = 0;
  const sim::MaterialId stone = host->state().materials->find("stone").value_or(sim::MaterialId{5});
  for (int i = 0; i < edits; ++i) {
    std::uint64_t r = mix(0x10a4ull + static_cast<std::uint64_t>(i));
    sim::VoxelCoord v{static_cast<std::int32_t>(r % 1200) - 600, 0, static_cast<std::int32_t>((r >> 16) % 1200) - 600};
    // Search the column for the ground (top solid voxel) in the server's world.
    const sim::BrickStore& w = host->state().world;
    std::int32_t y = 400;
    while (y > -120 && w.get(sim::VoxelCoord{v.x, y, v.z}) == sim::kAir) --y;
    v.y = y;
    cmds.clear();
    if (i % 2 == 0)
      cmds.push_back({sim::kServerPlayer, ++seq, sim::DigCommand{v, sim::ToolSize::Cm20}});
    else
      cmds.push_back({sim::kServerPlayer, ++seq, sim::PlaceCommand{v, sim::Face::PosY, sim::ToolSize::Cm10, stone}});
    host->tick(cmds);
  }

  std::printf("{\n  \"bench\": \"net_join\",\n  \"scene\": \"%s\",\n  \"edits\": %d,\n  \"latency_ms\": %.0f,\n"
              "  \"loss\": %.2f,\n  \"joins\": [",
              scenePath.c_str(), edits, link.latencyMs, link.loss);
  bool ok = true;
  for (int j = 0; j < joins; ++j) {
    net::LinkProfile joinLink = link;
    joinLink.seed = link.seed + static_cast<std::uint64_t>(j);  // each join its own losses
    auto client = bench::connectClient(*host, "joiner" + std::to_string(j), joinLink);
    auto& c = *client;
    bench::Pacer pacer;
    double start = bench::nowMs();
    while (c.phase() != net::ClientPhase::Playing) {
      pacer.wait(host.get());
      host->tick();
      c.service(bench::nowMs());
      if (c.phase() == net::ClientPhase::Failed || bench::nowMs() - start > 60000) {
        std::fprintf(stderr, "bench: join failed: %s\n", c.error().c_str());
        return 1;
      }
    }
    // On until the streamer has filled the readable disc in (sound waits for it).
    while (!c.worldReadable() && bench::nowMs() - start < 30000) {
      pacer.wait(host.get());
      host->tick();
      c.service(bench::nowMs());
    }
    const double readableMs = bench::nowMs() - start;
    net::ClientStats st = c.stats();
    auto snap = st.received.find("JoinChunk");
    std::uint64_t snapBytes = snap == st.received.end() ? 0 : snap->second.bytes;
    std::string phases;
    for (const net::PhaseChange& p : st.phaseLog) phases += (phases.empty() ? "" : ", ") + std::to_string(static_cast<int>(p.atMs));
    std::printf("%s\n    {\"join_ms\": %.0f, \"generate_ms\": %.0f, \"restore_ms\": %.0f, \"hold_ms\": %.0f, "
                "\"readable_ms\": %.0f, \"snapshot_bytes\": %" PRIu64 ", \"phases_ms\": [%s]}",
                j ? "," : "", st.joinMs, st.generateMs, st.restoreMs, st.holdMs, readableMs, snapBytes, phases.c_str());
    ok = ok && st.joinMs <= (link.active() ? 5000 : 1000);
    c.disconnect();
    for (int k = 0; k < 30; ++k) {
      pacer.wait(host.get());
      host->tick();
    }
  }
  std::printf("\n  ],\n  \"modified_bricks\": %zu\n}\n", host->state().world.modifiedCount());
  return ok ? 0 : 1;
}
