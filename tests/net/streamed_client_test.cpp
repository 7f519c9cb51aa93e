// Full clients on a streamed world: a real ServerHost over highlands (8 x 8 km, too
// big to generate whole, streamed by the server's ColumnStreamer) and two full bots
// (ClientConnections) that stream it too, through a LinkSimulator with latency and
// loss. One runs 150 m west, digging and building as it goes; the other stays by the
// spawn and digs there. Every step's hashes must agree (0 desyncs), prediction must be
// exact (0 corrections, which needs the ground under the runner to be the server's),
// and at the end each mirror's changed cells near its player equal the server's
// (interest follows residency: each holds only the cells within its reach). The runner's mirror must have generated ahead and released what
// it left behind. Water poured by the server before anyone joined is not in the join
// state (a streamed world's carries none): it must reach the bot by the spawn as the
// full state of its interest cell. Label stream: real time, three generators on two cores, too slow
// for the ASan run of the net label.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <thread>

#include "bots/bot_script.h"
#include "net/client_connection.h"
#include "net/link_sim.h"
#include "net/server_host.h"
#include "tests/support/host_pacing.h"
#include "tests/support/streamed_highlands.h"
#include "sim/gen/column_streamer.h"
#include "sim/gen/generator.h"
#include "sim/gen/scene.h"
#include "sim/trace/script.h"
#include "sim/systems/water.h"
#include "sim/world/world_hash.h"

namespace {

using namespace loam;
using Clock = std::chrono::steady_clock;

constexpr const char* kScript = R"(
at 1s p1 walkto -150,0 run
every 3s from 2s to 40s p1 dig ahead:3 20
every 4s from 3s to 40s p1 place ahead:4 +y 20 cobble
every 3s from 2s to 40s p2 dig 3,3 10
every 5s from 4s to 40s p2 place -3,3 +y 10 planks
)";

TEST_CASE("two full bots stream highlands with the server: no desync, exact prediction, equal world hashes") {
  test::StreamedHighlands world = test::openStreamedHighlands("streamed");
  net::ServerHost& host = *world.host;
  // Water poured before anyone joins, 4 m from the spawn, left to spread for 2 s.
  const sim::VoxelCoord pourAt{4 * sim::kVoxelsPerMetre, 0, -4 * sim::kVoxelsPerMetre};
  {
    std::int32_t y = 60 * sim::kVoxelsPerMetre;
    while (y > -60 * sim::kVoxelsPerMetre &&
           host.state().world.get(sim::VoxelCoord{pourAt.x, y, pourAt.z}) == sim::kAir)
      --y;
    const sim::VoxelCoord at{pourAt.x, y + 1, pourAt.z};
    for (std::uint32_t k = 0; k < 120; ++k) {
      std::vector<sim::Command> cmds;
      if (k < 8) cmds.push_back({sim::kServerPlayer, k + 1, sim::PourCommand{at, sim::kMaxPourAmount}});
      host.tick(cmds);
    }
  }
  const sim::CellCoord pourCell = sim::cellOf(sim::brickOf(pourAt));
  REQUIRE_FALSE(sim::waterInCell(host.state().water, pourCell).empty());

  net::LinkProfile profile;
  profile.latencyMs = 50;
  profile.loss = 0.02;
  auto link = net::LinkSimulator::open("127.0.0.1", host.port(), profile);
  REQUIRE_MESSAGE(link.has_value(), (link ? "" : link.error().message));
  auto script = sim::parseScript(kScript, "streamed");
  REQUIRE_MESSAGE(script.has_value(), (script ? "" : script.error().message));

  struct Bot {
    std::unique_ptr<net::ClientConnection> conn;
    std::unique_ptr<bots::BotScript> script;
    std::uint64_t ticks = 0;
  };
  std::vector<Bot> bots(2);
  for (std::size_t i = 0; i < bots.size(); ++i) {
    net::ClientConfig cfg = test::streamedBotConfig((*link)->localPort(), "streamer" + std::to_string(i + 1));
    // Less than the run crosses (the runner must release), and no less than the
    // floor of twice the columns within the stream radius (about 400 at 72 m).
    cfg.streamRadiusMetres = 72.0;
    cfg.residentColumns = 800;
    auto conn = net::ClientConnection::connect(cfg);
    REQUIRE_MESSAGE(conn.has_value(), (conn ? "" : conn.error().message));
    bots[i].conn = std::move(*conn);
    bots[i].script = std::make_unique<bots::BotScript>(*script, static_cast<std::uint32_t>(i + 1));
  }

  const Clock::time_point start = Clock::now();
  auto nowMs = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
  loam::test::HostPacing pacing(host, start);
  auto failed = [&] {
    for (Bot& b : bots)
      if (b.conn->phase() == net::ClientPhase::Failed || b.conn->phase() == net::ClientPhase::Disconnected) return true;
    return false;
  };
  auto playing = [&] {
    for (Bot& b : bots)
      if (b.conn->phase() != net::ClientPhase::Playing) return false;
    return true;
  };
  bots::BotTick tick;
  const std::uint64_t playSteps = 42 * sim::kTicksPerSecond;
  std::uint64_t played = 0;
  const Clock::time_point deadline = start + std::chrono::seconds(150);
  // Play the script, then stop sending input until every input is acknowledged.
  while (!failed() && Clock::now() < deadline) {
    host.tick();
    const double now = nowMs();
    bool acknowledged = true;
    for (Bot& b : bots) {
      b.conn->service(now, 0);
      if (b.conn->phase() != net::ClientPhase::Playing) continue;
      acknowledged = acknowledged && b.conn->predictor().pending().empty();
      if (b.ticks < playSteps) {
        b.script->tick(b.ticks++, b.conn->predictor().state(), &b.conn->mirror(), tick);
        b.conn->sendInput(tick.input);
        for (const sim::CommandBody& a : tick.actions) b.conn->sendAction(a);
      }
      (void)b.conn->takeEvents();
    }
    if (playing()) ++played;
    if (playing() && played > playSteps + 60 && acknowledged) break;
    pacing.wait();
  }
  // Drain: the bots have every item of their ordered streams (the server's last step
  // among them, unless it held nothing for them).
  const Clock::time_point drainEnd = Clock::now() + std::chrono::seconds(10);
  bool drained = false;
  while (!drained && !failed() && Clock::now() < drainEnd) {
    for (Bot& b : bots) b.conn->service(nowMs(), 0);
    host.waitForInput(0);
    drained = host.stats().streamUnacked == 0;
    pacing.wait();
  }

  for (std::size_t i = 0; i < bots.size(); ++i) {
    const net::ClientConnection& c = *bots[i].conn;
    const std::string state = std::string(net::phaseName(c.phase())) + " " + c.error();
    INFO("bot " << i + 1 << ": " << state);
    REQUIRE(c.phase() == net::ClientPhase::Playing);
    const net::ClientStats s = c.stats();
    MESSAGE("bot " << i + 1 << ": join " << s.joinMs << " ms (generating " << s.generateMs << " ms), steps "
                   << s.stepsApplied << ", desyncs " << s.desyncCount << ", corrections " << s.prediction.corrections
                   << ", columns: generated ahead " << s.stream.prefetched << ", faulted " << s.stream.faults
                   << ", holes met " << s.holesMet << ", released " << s.stream.released << ", peak resident "
                   << s.stream.peakResident << ", resident " << c.mirror().world.presentColumns().size());
    CHECK(s.streamed);
    // The far view's terrain: built on first request, once, from the server's scene.
    const auto sampler = c.terrainSampler();
    REQUIRE(sampler != nullptr);
    CHECK(c.terrainSampler() == sampler);
    const sim::TerrainSampler reference(*sim::loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/highlands.toml"),
                                        c.mirror().seed);
    for (std::int32_t x : {-4000, 0, 3000})
      CHECK(sampler->at(x, -x / 2).column.ground == reference.at(x, -x / 2).column.ground);
    CHECK(s.holesMet == 0);
    CHECK(s.desyncCount == 0);
    CHECK(s.prediction.corrections == 0);
    CHECK(s.stepsApplied > playSteps / 2 / net::kStepHeartbeatTicks);
    CHECK(c.serverTick() <= host.state().tick);
    CHECK(c.serverTick() + net::kStepHeartbeatTicks > host.state().tick);
    // Interest follows residency: each mirror holds the cells within its reach (the
    // runner is 150 m from the spawn's digs), and those equal the server's.
    const sim::Vec3i p = host.state().findPlayer(c.playerId())->motion.position;
    const auto near = [&](sim::CellCoord cell) {
      const double cx = (cell.x + 0.5) * sim::kCellBricks * sim::kBrickSize * sim::kUnitsPerVoxel;
      const double cz = (cell.z + 0.5) * sim::kCellBricks * sim::kBrickSize * sim::kUnitsPerVoxel;
      return std::hypot(cx - p.x, cz - p.z) < 80.0 * sim::kUnitsPerMetre;
    };
    std::map<std::pair<std::int32_t, std::int32_t>, std::pair<std::uint64_t, std::uint64_t>> cells;
    for (const sim::CellHash& h : sim::cellHashes(host.state().world))
      if (near(h.cell)) cells[{h.cell.x, h.cell.z}].first = h.hash;
    for (const sim::CellHash& h : sim::cellHashes(c.mirror().world))
      if (near(h.cell)) cells[{h.cell.x, h.cell.z}].second = h.hash;
    std::size_t differ = 0;
    for (const auto& [cell, hashes] : cells) differ += hashes.first != hashes.second;
    MESSAGE("bot " << i + 1 << ": " << cells.size() << " changed cells within 80 m, " << differ << " differ");
    CHECK(!cells.empty());
    CHECK(differ == 0);
  }
  // The poured water reached the bot by the spawn, whose join state had none.
  {
    const auto theirs = sim::waterInCell(host.state().water, pourCell);
    const auto ours = sim::waterInCell(bots[1].conn->mirror().water, pourCell);
    CHECK(ours.size() == theirs.size());
    CHECK(ours == theirs);
  }
  // The runner went far: its mirror generated ahead of it and let the start go.
  const net::ClientStats runner = bots[0].conn->stats();
  CHECK(runner.stream.prefetched > 0);
  CHECK(runner.stream.released > 0);
  const sim::PlayerState& pos = bots[0].conn->predictor().state();
  CHECK(pos.position.x < sim::unitsFromMetres(-100.0));
  // Neither mirror holds the whole world (about 1.6 million columns).
  CHECK(bots[0].conn->mirror().world.presentColumns().size() <= 900);
  // Every column the mirrors generated was reported with its hash; the server checked
  // those it held unmodified against its own, and none differed.
  const net::ServerStats st = host.stats();
  MESSAGE("generated columns: reported " << runner.columnsReported << " + " << bots[1].conn->stats().columnsReported
                                         << ", checked " << st.columnsChecked << ", unchecked " << st.columnsUnchecked);
  CHECK(runner.columnsReported >= runner.stream.prefetched + runner.stream.faults);
  CHECK(st.columnsChecked > 0);
  CHECK(st.columnMismatches == 0);
}

}  // namespace
