// The admin's teleport on the 8 x 8 km streamed world: a real ServerHost over
// highlands (streamed by the server's ColumnStreamer) and one full bot (a
// ClientConnection streaming its mirror) through a LinkSimulator with latency and
// loss. Bad teleport lines (unknown player, outside the world, garbage numbers, bad
// usage) are refused by the admin path without queueing anything or moving anyone.
// Then `teleport #ID X Z` sends the bot 5 km away: the bot's predicted player and the
// server's end up standing there, the prediction snaps (a teleport, not a
// correction), 0 desyncs, the mirror's world hash equals the server's, and the
// client recorded its time to playable (the ground around the new place present).
// A second teleport, with a height, puts it in the air near the spawn; it falls to
// the ground. Label stream: real time, two generators on two cores.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "net/client_connection.h"
#include "net/link_sim.h"
#include "net/server_host.h"
#include "tests/support/host_pacing.h"
#include "tests/support/streamed_highlands.h"
#include "server/admin.h"
#include "sim/gen/column_streamer.h"
#include "sim/gen/generator.h"
#include "sim/gen/scene.h"
#include "sim/systems/motion.h"
#include "sim/world/world_hash.h"

namespace {

using namespace loam;
using Clock = std::chrono::steady_clock;

TEST_CASE("teleport 5 km on highlands: refused when bad, followed exactly, time to playable recorded") {
  test::StreamedHighlands world = test::openStreamedHighlands("teleport");
  net::ServerHost& host = *world.host;

  net::LinkProfile profile;
  profile.latencyMs = 30;
  profile.loss = 0.02;
  auto link = net::LinkSimulator::open("127.0.0.1", host.port(), profile);
  REQUIRE_MESSAGE(link.has_value(), (link ? "" : link.error().message));
  auto made = net::ClientConnection::connect(test::streamedBotConfig((*link)->localPort(), "jumper"));
  REQUIRE_MESSAGE(made.has_value(), (made ? "" : made.error().message));
  net::ClientConnection& conn = **made;

  // The admin path as loam-server runs it: lines in, commands for the next tick out.
  std::vector<sim::Command> adminCommands;
  std::uint32_t adminSequence = 0;
  server::AdminContext ctx;
  ctx.host = &host;
  ctx.commands = &adminCommands;
  ctx.commandSequence = &adminSequence;

  const Clock::time_point start = Clock::now();
  auto nowMs = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
  loam::test::HostPacing pacing(host, start);
  bool sendInputs = true;
  // One tick: the server steps with what the admin queued, the bot follows and
  // stands still (an empty input every tick, so the server keeps acknowledging).
  auto tick = [&] {
    host.tick(adminCommands);
    adminCommands.clear();
    conn.service(nowMs(), 0);
    if (conn.phase() == net::ClientPhase::Playing && sendInputs) conn.sendInput(sim::PlayerInput{});
    (void)conn.takeEvents();
    pacing.wait();
  };
  auto alive = [&] {
    return conn.phase() != net::ClientPhase::Failed && conn.phase() != net::ClientPhase::Disconnected;
  };
  // Up to n steps (whatever the machine's load, the steps are what the checks need),
  // until done(); never longer than two minutes of wall time.
  auto steps = [&](int n, const auto& done) {
    const Clock::time_point until = Clock::now() + std::chrono::minutes(2);
    for (int i = 0; i < n && alive() && Clock::now() < until && !done(); ++i) tick();
  };
  auto never = [] { return false; };
  steps(90 * 60, [&] { return conn.phase() == net::ClientPhase::Playing; });
  INFO("bot: " << std::string(net::phaseName(conn.phase())) << " " << conn.error());
  REQUIRE(conn.phase() == net::ClientPhase::Playing);
  const std::string who = "#" + std::to_string(conn.playerId().value);
  auto serverPlayer = [&]() -> const sim::Player& {
    const sim::Player* p = host.state().findPlayer(conn.playerId());
    REQUIRE(p != nullptr);
    return *p;
  };
  // Settle on the ground by the spawn.
  steps(20 * 60, [&] { return serverPlayer().motion.onGround; });
  steps(30, never);

  // Bad lines: refused, nothing queued, nobody moved.
  const sim::Vec3i home = serverPlayer().motion.position;
  for (const std::string& line : std::vector<std::string>{"teleport", "teleport " + who, "teleport " + who + " 10", "teleport #999 10 10", "teleport nobody 10 10",
        "teleport " + who + " abc 10", "teleport " + who + " 10 nan", "teleport " + who + " 10 inf",
        "teleport " + who + " 10m 10", "teleport " + who + " 0x10 10", "teleport " + who + " 10 10 1 2",
        "teleport " + who + " 5000 0", "teleport " + who + " 0 -4096", "teleport " + who + " 1e9 0",
        "teleport " + who + " 0 0 -99999", "teleport " + who + " 0 0 1e30"}) {
    const server::AdminReply r = server::runAdminCommand(line, ctx);
    INFO(line << " -> " << r.text);
    CHECK_FALSE(r.ok);
    CHECK(adminCommands.empty());
  }
  {
    const server::AdminReply r = server::runAdminCommand("teleport " + who + " 5000 0", ctx);
    CHECK(r.text.find("outside the world") != std::string::npos);
  }
  steps(30, never);
  CHECK(serverPlayer().motion.position == home);
  CHECK(conn.stats().prediction.teleports == 0);

  // A dig beside the spawn (from the server: the console's way) reaches the bot, whose
  // column there now holds an edit.
  const auto digBeside = [&](std::int32_t dxMetres) {
    const std::int32_t vx = (home.x >> sim::kUnitShift) + dxMetres * sim::kVoxelsPerMetre, vz = home.z >> sim::kUnitShift;
    const std::int32_t top = sim::groundHeight(host.state().world, host.state().lut, vx, vz).value_or(0);
    const sim::VoxelCoord v{vx, top / sim::kUnitsPerVoxel - 1, vz};
    adminCommands.push_back({sim::kServerPlayer, ++adminSequence, sim::DigCommand{v, sim::ToolSize::Cm20}});
    return v;
  };
  const sim::VoxelCoord firstDig = digBeside(3);
  const sim::ChunkColumn homeColumn{firstDig.x >> 7, firstDig.z >> 7};
  steps(600, [&] { return host.state().world.get(firstDig) == sim::kAir && host.stats().streamUnacked == 0; });
  REQUIRE(host.state().world.get(firstDig) == sim::kAir);
  CHECK(conn.mirror().world.get(firstDig) == sim::kAir);
  CHECK(conn.mirror().world.columnModified(homeColumn));

  // 5 km away (3 km east, 4 km south), standing on the ground there.
  const double tx = 3000.0, tz = 4000.0;
  const server::AdminReply r = server::runAdminCommand("teleport " + who + " 3000 4000", ctx);
  INFO(r.text);
  REQUIRE(r.ok);
  REQUIRE(adminCommands.size() == 1);
  CHECK(std::holds_alternative<sim::TeleportCommand>(adminCommands[0].body));
  steps(20 * 60, [&] { return !conn.stats().teleportPlayableMs.empty(); });
  steps(60, never);  // stand there a moment
  // Far beyond its reach the bot drops the modified column (and tells the server);
  // a second dig near home, meanwhile, costs it nothing.
  steps(10 * 60, [&] { return conn.stats().cellsDropped > 0; });
  CHECK(conn.stats().cellsDropped > 0);
  CHECK_FALSE(conn.mirror().world.columnPresent(homeColumn));
  const sim::VoxelCoord secondDig = digBeside(-20);  // another cell: the first one's is unchanged
  steps(600, [&] { return host.state().world.get(secondDig) == sim::kAir; });
  REQUIRE(host.state().world.get(secondDig) == sim::kAir);
  CHECK_FALSE(conn.mirror().world.columnPresent(homeColumn));

  // Back near the spawn, 6 m above the ground: it falls and lands.
  const std::int32_t groundThere =
      sim::groundHeight(host.state().world, host.state().lut, 20 * sim::kVoxelsPerMetre, 20 * sim::kVoxelsPerMetre)
          .value_or(0);
  const double airY = static_cast<double>(groundThere) / sim::kUnitsPerMetre + 6.0;
  const server::AdminReply r2 =
      server::runAdminCommand("teleport " + who + " 20.5 20.5 " + std::to_string(airY), ctx);
  INFO(r2.text);
  REQUIRE(r2.ok);
  // The first teleport's place is checked before the second is applied (next tick).
  const sim::PlayerState there = serverPlayer().motion;
  const sim::PlayerState predictedThere = conn.predictor().state();
  steps(20 * 60, [&] { return conn.stats().teleportPlayableMs.size() >= 2; });
  steps(120, never);
  steps(20 * 60, [&] { return serverPlayer().motion.onGround; });  // fallen

  // Stop input, let every input be acknowledged and the last step arrive.
  sendInputs = false;
  steps(20 * 60, [&] { return conn.predictor().pending().empty() && host.stats().streamUnacked == 0; });
  for (int i = 0; i < 30 && host.stats().streamUnacked != 0; ++i) {
    conn.service(nowMs(), 5);
    host.waitForInput(0);
  }

  REQUIRE(conn.phase() == net::ClientPhase::Playing);
  const net::ClientStats s = conn.stats();
  MESSAGE("teleports " << s.prediction.teleports << ", time to playable (ms):"
                       << (s.teleportPlayableMs.empty() ? 0.0 : s.teleportPlayableMs[0]) << ", "
                       << (s.teleportPlayableMs.size() > 1 ? s.teleportPlayableMs[1] : 0.0) << "; holes met "
                       << s.holesMet << ", corrections " << s.prediction.corrections << ", desyncs " << s.desyncCount
                       << ", resident " << conn.mirror().world.presentColumns().size());
  // 5 km away, on the ground, the client agreeing with the server.
  const std::int32_t ux = sim::unitsFromMetres(tx), uz = sim::unitsFromMetres(tz);
  CHECK(std::abs(there.position.x - ux) < sim::unitsFromMetres(1.0));
  CHECK(std::abs(there.position.z - uz) < sim::unitsFromMetres(1.0));
  CHECK(there.position.y ==
        sim::groundHeight(host.state().world, host.state().lut, ux >> sim::kUnitShift, uz >> sim::kUnitShift));
  CHECK(predictedThere.position.x == there.position.x);
  CHECK(predictedThere.position.z == there.position.z);
  // Then near the spawn, fallen to the ground.
  const sim::PlayerState& back = serverPlayer().motion;
  CHECK(std::abs(back.position.x - sim::unitsFromMetres(20.5)) < sim::unitsFromMetres(0.5));
  CHECK(back.position.y < groundThere + sim::unitsFromMetres(0.5));
  CHECK(back.onGround);
  CHECK(conn.predictor().state() == back);

  CHECK(s.holesMet == 0);  // a teleport's disc is not a hole streaming left
  CHECK(s.prediction.teleports == 2);
  CHECK(s.prediction.corrections == 0);
  CHECK(s.desyncCount == 0);
  CHECK(s.teleportPlayableMs.size() == 2);
  for (double ms : s.teleportPlayableMs) CHECK(ms > 0.0);
  // The client has every step (those with nothing for it are skipped: its tick may
  // trail the server's by up to kStepHeartbeatTicks).
  CHECK(host.stats().streamUnacked == 0);
  CHECK(conn.serverTick() + net::kStepHeartbeatTicks > host.state().tick);
  // Back home, both digs came whole with the cell (the first dropped, the second made away).
  CHECK(sim::worldHash(conn.mirror().world) == sim::worldHash(host.state().world));
  CHECK(conn.mirror().world.get(firstDig) == sim::kAir);
  CHECK(conn.mirror().world.get(secondDig) == sim::kAir);
  CHECK(s.cellChecks > 0);
  // The mirror holds the ground around the new place.
  CHECK(conn.mirror().world.columnPresent(sim::ChunkColumn{(ux >> sim::kUnitShift) >> 7, (uz >> sim::kUnitShift) >> 7}));
}

}  // namespace
