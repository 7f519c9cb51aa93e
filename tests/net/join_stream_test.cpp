// The join stream: a world whose join state is far larger than the stream's window
// (100,000 scattered single-voxel edits, the griefers' way to make a world
// unjoinable) is joined by a full bot through JoinChunks with flow control, and the
// bot's world hash equals the server's. Server and bot tick on the test thread.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "net/client_connection.h"
#include "net/host/join_stream.h"
#include "net/server_host.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_state.h"
#include "sim/world/brick_store.h"
#include "sim/world/world_hash.h"

namespace {

using namespace loam;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

TEST_CASE("a world with 100,000 scattered single-voxel edits is joined through the stream") {
  auto scene = sim::loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/glade.toml");
  REQUIRE_MESSAGE(scene.has_value(), (scene ? "" : scene.error().message));
  auto generated = sim::createSimState(*scene, scene->defaultSeed);
  REQUIRE_MESSAGE(generated.has_value(), (generated ? "" : generated.error().message));
  const net::HostedWorld hosted = net::describeHostedWorld(scene->name, generated->world);

  // Griefing: one voxel changed in each of 100,000 random places (a few land in the
  // same brick). Solid becomes air, air becomes the scene's first solid material.
  sim::SimState state(*generated);
  const sim::WorldBounds b = state.world.bounds();
  const int x0 = b.minBrick.x * sim::kBrickSize, y0 = b.minBrick.y * sim::kBrickSize, z0 = b.minBrick.z * sim::kBrickSize;
  const int x1 = b.maxBrick.x * sim::kBrickSize, y1 = b.maxBrick.y * sim::kBrickSize, z1 = b.maxBrick.z * sim::kBrickSize;
  std::mt19937 rng(16);
  std::uniform_int_distribution<int> dx(x0, x1 - 1), dy(y0, y1 - 1), dz(z0, z1 - 1);
  for (int i = 0; i < 100000; ++i) {
    const sim::VoxelCoord v{dx(rng), dy(rng), dz(rng)};
    const sim::MaterialId m = state.world.get(v);
    REQUIRE(state.world.set(v, m == sim::kAir ? sim::MaterialId{1} : sim::kAir));
  }
  const std::size_t modified = state.world.modifiedCount();
  CAPTURE(modified);
  REQUIRE(modified > 90000);

  net::ServerConfig sc;
  sc.name = "join-stream";
  sc.bindAddress = "127.0.0.1";
  sc.port = 0;
  auto server = net::ServerHost::open(sc, std::move(state), hosted);
  REQUIRE_MESSAGE(server.has_value(), (server ? "" : server.error().message));
  net::ServerHost& host = **server;

  const sim::SimState& shared = *generated;
  net::ClientConfig cfg;
  cfg.port = host.port();
  cfg.name = "joiner";
  cfg.sceneDir = std::string(LOAM_SOURCE_DIR) + "/scenes";
  cfg.kind = net::ClientKind::FullBot;
  cfg.worldFactory = [&shared](const sim::Scene&, std::uint64_t, const std::function<void(double)>& progress)
      -> sim::Result<sim::SimState> {
    progress(1.0);
    return sim::SimState(shared);
  };
  auto conn = net::ClientConnection::connect(cfg);
  REQUIRE_MESSAGE(conn.has_value(), (conn ? "" : conn.error().message));
  net::ClientConnection& bot = **conn;

  const Clock::time_point t0 = Clock::now();
  const auto period = std::chrono::microseconds(16667);
  Clock::time_point next = t0;
  std::uint64_t playingTicks = 0;
  double maxTickUs = 0;  // the join's capture is on the tick; its encoding is not
  while (msSince(t0) < 45000 && playingTicks < 60) {
    host.tick();
    maxTickUs = std::max(maxTickUs, host.lastTickTimes().totalUs);
    bot.service(msSince(t0));
    const net::ClientPhase p = bot.phase();
    if (p == net::ClientPhase::Failed || p == net::ClientPhase::Disconnected) break;
    if (p == net::ClientPhase::Playing) ++playingTicks;
    next += period;
    std::this_thread::sleep_until(next);
  }
  const std::string why = std::string(net::phaseName(bot.phase())) + " " + bot.error();
  CAPTURE(why);
  REQUIRE(bot.phase() == net::ClientPhase::Playing);

  const net::ServerStats st = host.stats();
  const net::TrafficCounters& chunks = st.sent.at("JoinChunk");
  MESSAGE("join state: " << chunks.bytes << " bytes in " << chunks.messages << " chunks; join "
                         << bot.stats().joinMs << " ms; longest server tick " << maxTickUs / 1000 << " ms");
  // Larger than one window: the stream waited for acknowledgements on the way.
  CHECK(chunks.bytes > net::host::kJoinWindowBytes);
  CHECK(chunks.messages > 2);
  CHECK(st.rejected == 0);
  CHECK(bot.stats().desyncCount == 0);
  CHECK(bot.stats().stepsApplied > 0);
  CHECK(bot.serverTick() == host.state().tick);
  CHECK(sim::hashWorld(bot.mirror().world).world == sim::hashWorld(host.state().world).world);
  bot.disconnect();
}
