// Far edits: an edit far beyond a client's reach reaches its far view. A real
// ServerHost over streamed highlands and one full bot (a ClientConnection streaming its
// mirror, reach 96 m). The server digs a crater 600 m from the bot (the 40 cm hole
// of a dig, scaled up to 8 m so that the far view's 6.4-12.8 m cells there see it).
// The bot's mirror never holds those columns; its SurfaceChanges do: every patch the
// crater touched, each equal to what the server sums from its own world, and nothing
// elsewhere. A later build on the crater's floor replaces the patches' changes.
// Label stream: real time, two generators.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <map>

#include "mesh/far_terrain.h"
#include "net/client_connection.h"
#include "net/server_host.h"
#include "sim/systems/motion.h"
#include "sim/world/surface_change.h"
#include "tests/support/host_pacing.h"
#include "tests/support/streamed_highlands.h"

namespace {

using namespace loam;
using Clock = std::chrono::steady_clock;

TEST_CASE("far edits: a crater 600 m away reaches the bot as SurfaceChanges equal to the server's") {
  test::StreamedHighlands world = test::openStreamedHighlands("far-edits");
  net::ServerHost& host = *world.host;

  auto made = net::ClientConnection::connect(test::streamedBotConfig(host.port(), "watcher"));
  REQUIRE_MESSAGE(made.has_value(), (made ? "" : made.error().message));
  net::ClientConnection& conn = **made;

  std::vector<sim::Command> commands;
  std::uint32_t sequence = 0;
  const Clock::time_point start = Clock::now();
  auto nowMs = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
  test::HostPacing pacing(host, start);
  std::map<std::pair<std::int32_t, std::int32_t>, sim::SurfaceChange> received;
  auto tick = [&] {
    host.tick(commands);
    commands.clear();
    conn.service(nowMs(), 0);
    if (conn.phase() == net::ClientPhase::Playing) conn.sendInput(sim::PlayerInput{});
    (void)conn.takeEvents();
    for (const sim::SurfaceChange& c : conn.takeSurfaceChanges()) received[{c.x, c.z}] = c;
    pacing.wait();
  };
  auto alive = [&] {
    return conn.phase() != net::ClientPhase::Failed && conn.phase() != net::ClientPhase::Disconnected;
  };
  auto steps = [&](int n, const auto& done) {
    const Clock::time_point until = Clock::now() + std::chrono::minutes(2);
    for (int i = 0; i < n && alive() && Clock::now() < until && !done(); ++i) tick();
  };
  steps(90 * 60, [&] { return conn.phase() == net::ClientPhase::Playing; });
  INFO("bot: " << std::string(net::phaseName(conn.phase())) << " " << conn.error());
  REQUIRE(conn.phase() == net::ClientPhase::Playing);
  const sim::Player* me = host.state().findPlayer(conn.playerId());
  REQUIRE(me != nullptr);
  const sim::Vec3i home = me->motion.position;
  CHECK(received.empty());  // nothing was ever dug

  // The crater: 8 x 8 m around a point 600 m east, dug two 40 cm layers deep with the
  // largest tool, from the server (the console's way).
  const std::int32_t cx = (home.x >> sim::kUnitShift) + 600 * sim::kVoxelsPerMetre, cz = home.z >> sim::kUnitShift;
  const std::int32_t half = 4 * sim::kVoxelsPerMetre;
  const sim::BrickStore& serverWorld = host.state().world;
  for (int layer = 0; layer < 2; ++layer) {
    for (std::int32_t z = cz - half; z < cz + half; z += 8) {
      for (std::int32_t x = cx - half; x < cx + half; x += 8) {
        const std::int32_t top = sim::groundHeight(serverWorld, host.state().lut, x, z).value_or(0);
        commands.push_back({sim::kServerPlayer, ++sequence,
                            sim::DigCommand{{x, top / sim::kUnitsPerVoxel - 1, z}, sim::ToolSize::Cm40}});
      }
    }
    steps(3, [] { return false; });
  }
  const sim::MaterialMask trees = sim::treePartsOf(*host.state().materials);
  // Every patch the crater's digs may reach (radius 8 voxels around the targets).
  const std::int32_t px0 = sim::surfacePatchOf(cx - half - 8), px1 = sim::surfacePatchOf(cx + half + 8);
  const std::int32_t pz0 = sim::surfacePatchOf(cz - half - 8), pz1 = sim::surfacePatchOf(cz + half + 8);
  std::map<std::pair<std::int32_t, std::int32_t>, sim::SurfaceChange> expected;
  auto serverChanges = [&] {
    expected.clear();
    for (std::int32_t z = pz0; z <= pz1; ++z)
      for (std::int32_t x = px0; x <= px1; ++x) {
        const sim::SurfaceChange c = sim::surfaceChange(serverWorld, host.state().lut, trees, x, z);
        if (c.rise != 0 || c.material != sim::kAir) expected[{x, z}] = c;
      }
  };
  serverChanges();
  REQUIRE(expected.size() >= 100);  // 10 x 10 patches at least
  std::int64_t sunk = 0;
  for (const auto& [k, c] : expected) sunk += c.rise;
  CHECK(sunk < -100 * 256 * 8);  // more than 40 cm deep on average over 100 patches

  const std::uint64_t dugTick = host.state().tick;
  steps(10 * 60, [&] { return received == expected && host.stats().surfaceDue == 0; });
  REQUIRE(conn.stats().received.contains("SurfaceChanges"));
  MESSAGE("crater: " << expected.size() << " patches reached the bot " << host.state().tick - dugTick
                     << " ticks after the digs in " << conn.stats().received.at("SurfaceChanges").messages
                     << " messages, " << conn.stats().received.at("SurfaceChanges").bytes << " bytes");
  CHECK(host.stats().surfaceDue == 0);
  CHECK(host.stats().surfacePatches == expected.size());
  CHECK(received.size() == expected.size());
  CHECK(received == expected);
  CHECK(conn.stats().surfacePatches == expected.size());
  CHECK(conn.stats().surfaceRefused == 0);
  // Far beyond the bot's reach: its mirror never held the crater's columns.
  const sim::ChunkColumn craterColumn{cx >> 7, cz >> 7};
  CHECK_FALSE(conn.mirror().world.columnPresent(craterColumn));

  // The far level there (600 m: level 3, 6.4 m cells) sinks where the crater is, and
  // only there: the tile holding it built with and without the bot's changes.
  {
    mesh::FarSurface surface;
    std::vector<sim::SurfaceChange> all;
    for (const auto& [k, c] : received) all.push_back(c);
    surface.apply(all);
    const mesh::FarTerrainConfig fc;
    constexpr int kLevel = 3;
    const double tile = mesh::farTileMetres(fc, kLevel), cell = mesh::farCellMetres(fc, kLevel);
    const double mx = double(cx) / sim::kVoxelsPerMetre, mz = double(cz) / sim::kVoxelsPerMetre;
    const mesh::FarTileKey key{kLevel, static_cast<std::int32_t>(std::floor(mx / tile)),
                               static_cast<std::int32_t>(std::floor(mz / tile))};
    const mesh::FarTileMesh plain = mesh::buildFarTile(*conn.terrainSampler(), fc, key);
    const mesh::FarTileMesh edited = mesh::buildFarTile(*conn.terrainSampler(), fc, key, &surface);
    int lowered = 0, moved = 0;
    for (int j = 0; j < mesh::kFarTileSide; ++j) {
      for (int i = 0; i < mesh::kFarTileSide; ++i) {
        const auto v = static_cast<std::size_t>(j * mesh::kFarTileSide + i);
        const float dy = edited.vertices[v].height - plain.vertices[v].height;
        if (dy == 0) continue;
        ++moved;
        const double vx = key.x * tile + i * cell, vz = key.z * tile + j * cell;
        CHECK(std::abs(vx - mx) < 4 + cell);  // within the crater and a cell around it
        CHECK(std::abs(vz - mz) < 4 + cell);
        if (dy < -0.1f) ++lowered;
      }
    }
    CHECK(lowered >= 1);
    CHECK(moved <= 9);
  }

  // A block placed on the crater's floor: only its patch changes, and the bot is told.
  const std::int32_t floorY =
      sim::groundHeight(serverWorld, host.state().lut, cx, cz).value_or(0) / sim::kUnitsPerVoxel;
  const sim::SurfaceChange before = sim::surfaceChange(serverWorld, host.state().lut, trees, sim::surfacePatchOf(cx),
                                                       sim::surfacePatchOf(cz));
  commands.push_back({sim::kServerPlayer, ++sequence,
                      sim::PlaceCommand{{cx, floorY - 1, cz}, sim::Face::PosY, sim::ToolSize::Cm20,
                                        host.state().materials->find("stone").value()}});
  steps(3, [] { return false; });
  serverChanges();
  const auto key = std::make_pair(sim::surfacePatchOf(cx), sim::surfacePatchOf(cz));
  REQUIRE(expected.contains(key));
  CHECK(expected[key].rise > before.rise);
  steps(10 * 60, [&] { return received == expected && host.stats().surfaceDue == 0; });
  CHECK(received == expected);
  CHECK(conn.stats().desyncCount == 0);
}

}  // namespace
