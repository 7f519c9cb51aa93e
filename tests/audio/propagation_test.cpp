// Propagation (audio/propagation.h): the segment walker, straight-through losses of
// walls and foliage, paths through a tunnel's mouth, and determinism across threads,
// on small hand-built worlds.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include "audio/internal/voxel_walk.h"
#include "audio/propagation.h"
#include "sim/world/brick_store.h"
#include "tests/audio/box_world.h"
#include "sim/world/coarse_grid.h"
#include "tests/support/materials.h"

using namespace loam;
using namespace loam::audio;
using loam::test::materialId;
using loam::test::materials;

namespace {

const TransmissionTable& table() {
  static const TransmissionTable t = makeTransmissionTable(materials());
  return t;
}

/// Sets every voxel of [min, max) to m: whole bricks at once, voxels at the edges.
using loam::test::fillBox;

/// 12.8 m of air either way round the origin.
sim::BrickStore emptyWorld() {
  return sim::BrickStore(sim::WorldBounds{{-32, -32, -32}, {32, 32, 32}}, sim::makeCoarseLut(materials()));
}

/// A layer of material across z from voxel z0 to z1, 4 m wide in x and y round the origin.
sim::BrickStore layerWorld(const char* material, int z0, int z1) {
  sim::BrickStore s = emptyWorld();
  fillBox(s, {-40, -40, z0}, {40, 40, z1}, materialId(material));
  return s;
}

/// Flat stone ground (top at y = 0), plus a stone block x -6..6 m, y 0..6 m,
/// z -16..0 m, with a 3 x 3 m tunnel along z from its deep end (z = -15 m) to the
/// mouth at z = 0, open to the flat outdoors south of it (+z).
sim::BrickStore tunnelWorld() {
  sim::BrickStore s(sim::WorldBounds{{-48, -16, -48}, {48, 32, 48}}, sim::makeCoarseLut(materials()));
  const sim::MaterialId stone = materialId("stone");
  fillBox(s, {-384, -128, -384}, {384, 0, 384}, stone);
  fillBox(s, {-120, 0, -320}, {120, 120, 0}, stone);
  fillBox(s, {-30, 0, -300}, {30, 60, 0}, sim::kAir);
  return s;
}

constexpr Vec3f kDeepInTunnel{0.0f, 1.5f, -12.0f};
constexpr Vec3f kOutsideAside{8.0f, 1.5f, 6.0f};

/// The listener deep in the tunnel with one opening: the mouth, straight ahead (+z).
ListenerPaths tunnelListener(float openingDistance = 12.0f) {
  ListenerPaths p;
  p.position = kDeepInTunnel;
  p.openings[0] = Opening{{0, 0, 1}, 0.01f, openingDistance};
  p.openingCount = 1;
  return p;
}

float db(float gain) { return 20.0f * std::log10(std::max(gain, 1e-30f)); }
float angleDeg(const Vec3f& a, const Vec3f& b) {
  float la = std::sqrt(a.x * a.x + a.y * a.y + a.z * a.z), lb = std::sqrt(b.x * b.x + b.y * b.y + b.z * b.z);
  float c = (a.x * b.x + a.y * b.y + a.z * b.z) / (la * lb);
  return std::acos(std::clamp(c, -1.0f, 1.0f)) * 180.0f / 3.14159265f;
}

struct Run {
  sim::MaterialId m;
  float metres;
};

std::vector<Run> runsOf(const sim::BrickStore& s, Vec3f a, Vec3f b) {
  std::vector<Run> out;
  internal::walkSegment(s, a, b, [&](sim::MaterialId m, float metres) { out.push_back({m, metres}); });
  return out;
}

}  // namespace

TEST_CASE("voxel walk: runs in order, lengths add up, uniform and mixed bricks agree") {
  const sim::MaterialId stone = materialId("stone");
  // A 5 cm layer (mixed bricks): air, stone, air.
  sim::BrickStore thin = layerWorld("stone", 0, 1);
  std::vector<Run> r = runsOf(thin, {0.31f, 0.33f, -2.0f}, {0.31f, 0.33f, 2.0f});
  REQUIRE(r.size() == 3);
  CHECK(r[0].m == sim::kAir);
  CHECK(r[1].m == stone);
  CHECK(r[1].metres == doctest::Approx(0.05).epsilon(0.001));
  CHECK(r[2].m == sim::kAir);
  CHECK(r[0].metres + r[1].metres + r[2].metres == doctest::Approx(4.0).epsilon(1e-4));

  // Oblique, through uniform bricks, expanded and collapsed chunks and out of the bounds.
  sim::BrickStore thick = layerWorld("stone", 0, 8);
  const Vec3f a{-1.5f, -1.2f, -15.0f}, b{1.3f, 1.1f, 11.4f};
  float sum = 0, stoneLen = 0;
  int stoneRuns = 0;
  sim::MaterialId last = 255;
  internal::walkSegment(thick, a, b, [&](sim::MaterialId m, float metres) {
    CHECK(m != last);  // consecutive runs differ
    last = m;
    sum += metres;
    if (m == stone) {
      stoneLen += metres;
      ++stoneRuns;
    }
  });
  const float dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z, len = std::sqrt(dx * dx + dy * dy + dz * dz);
  CHECK(sum == doctest::Approx(len).epsilon(1e-4));
  CHECK(stoneRuns == 1);
  CHECK(stoneLen == doctest::Approx(0.4 * len / dz).epsilon(1e-3));

  // A visitor returning false stops the walk.
  int calls = 0;
  internal::walkSegment(thin, {0.31f, 0.33f, -2.0f}, {0.31f, 0.33f, 2.0f}, [&](sim::MaterialId, float) {
    ++calls;
    return false;
  });
  CHECK(calls == 1);

  // The same 40 cm layer brick-aligned (uniform bricks) and offset by half a brick
  // (mixed bricks only) costs the same.
  sim::BrickStore offset = layerWorld("stone", 4, 12);
  auto l1 = straightLossDb(thick, table(), {0.3f, 0.2f, -3.0f}, {1.1f, 0.5f, 3.0f});
  auto l2 = straightLossDb(offset, table(), {0.3f, 0.2f, -2.8f}, {1.1f, 0.5f, 3.2f});
  for (std::size_t i = 0; i < 3; ++i) CHECK(l1[i] == doctest::Approx(l2[i]).epsilon(1e-3));
  CHECK(l1[1] > 60.0f);
}

TEST_CASE("transmission table: walls, foliage, air and unknown ids") {
  const TransmissionTable& t = table();
  CHECK(t.wall[materialId("stone")] == 1);
  CHECK(t.wall[materialId("water")] == 1);
  CHECK(t.wall[materialId("leaves")] == 0);
  CHECK(t.wall[sim::kAir] == 0);
  CHECK(t.density[materialId("stone")] == doctest::Approx(2600));
  CHECK(t.lossDbPerMetre[materialId("leaves")][2] == doctest::Approx(4.0));
  CHECK(t.lossDbPerMetre[sim::kAir][1] == 0.0f);
  CHECK(t.wall[255] == 1);
  CHECK(t.density[255] == doctest::Approx(2600));
  CHECK(t.lossDbPerMetre[255][1] == doctest::Approx(60));
}

TEST_CASE("straight loss: stone layer, rock, leaves, air, a source on a surface") {
  const Vec3f a{0.31f, 0.33f, -2.0f}, b{0.31f, 0.33f, 2.0f};
  SUBCASE("one 5 cm stone layer: the mass law, 43 / 55 / 67 dB") {
    auto l = straightLossDb(layerWorld("stone", 0, 1), table(), a, b);
    CHECK(l[0] == doctest::Approx(43.0).epsilon(1.5 / 43.0));
    CHECK(l[1] == doctest::Approx(55.0).epsilon(1.5 / 55.0));
    CHECK(l[2] == doctest::Approx(67.0).epsilon(1.5 / 67.0));
    // Either way round.
    auto back = straightLossDb(layerWorld("stone", 0, 1), table(), b, a);
    CHECK(back[1] == doctest::Approx(l[1]).epsilon(1e-4));
  }
  SUBCASE("a metre of rock: over 100 dB in every band") {
    auto l = straightLossDb(layerWorld("rock", 0, 20), table(), a, b);
    for (float x : l) CHECK(x > 100.0f);
  }
  SUBCASE("two metres of leaves: 1 / 3 / 8 dB") {
    auto l = straightLossDb(layerWorld("leaves", 0, 40), table(), a, b);
    CHECK(l[0] == doctest::Approx(1.0).epsilon(0.05));
    CHECK(l[1] == doctest::Approx(3.0).epsilon(0.05));
    CHECK(l[2] == doctest::Approx(8.0).epsilon(0.05));
  }
  SUBCASE("air: nothing") {
    auto l = straightLossDb(emptyWorld(), table(), a, b);
    for (float x : l) CHECK(x == 0.0f);
  }
  SUBCASE("a source on (or in the top voxel of) a stone surface is not walled in") {
    sim::BrickStore ground = emptyWorld();
    fillBox(ground, {-200, -100, -200}, {200, 0, 200}, materialId("stone"));
    const Vec3f listener{4.0f, 1.7f, 3.0f};
    // On the surface, at its top voxel's centre, near its bottom; also at a grazing angle.
    for (Vec3f e : {Vec3f{0.3f, 0.0f, 0.3f}, Vec3f{0.3f, -0.025f, 0.3f}, Vec3f{0.33f, -0.045f, 0.31f},
                    Vec3f{-8.0f, -0.025f, -6.0f}}) {
      auto l = straightLossDb(ground, table(), e, listener);
      CAPTURE(e.y);
      for (float x : l) CHECK(x < 0.01f);
    }
    // ... and from the far side of its surface voxel it is walled in (not snapped
    // out of the wrong face);
    auto below = straightLossDb(ground, table(), {0.3f, -0.025f, 0.3f}, {2.0f, -5.0f, 1.0f});
    CHECK(below[0] > 40.0f);
    // ... so is one buried 30 cm deep.
    auto buried = straightLossDb(ground, table(), {0.3f, -0.3f, 0.3f}, listener);
    CHECK(buried[0] > 40.0f);
  }
}

TEST_CASE("straight loss: a fire in a wooden wall's voxel sounds from its own face only") {
  sim::BrickStore s = layerWorld("wood", 0, 8);  // 40 cm of wood across z
  const Vec3f listener{0.2f, 0.1f, -3.0f};
  auto nearFace = straightLossDb(s, table(), {0.31f, 0.12f, 0.025f}, listener);
  auto farFace = straightLossDb(s, table(), {0.31f, 0.12f, 0.375f}, listener);
  for (float x : nearFace) CHECK(x < 0.01f);
  CHECK(farFace[1] > 20.0f);
}

TEST_CASE("listener paths: openings copied, distances at least half a metre") {
  RoomEstimate room;
  room.openings[0] = Opening{{0, 0, 1}, 0.3f, 0.0f};
  room.openings[1] = Opening{{1, 0, 0}, 0.1f, 7.0f};
  room.openingCount = 2;
  ListenerPaths p = listenerPaths({1, 2, 3}, room);
  CHECK(p.position.y == 2.0f);
  REQUIRE(p.openingCount == 2);
  CHECK(p.openings[0].distance == 0.5f);
  CHECK(p.openings[1].distance == 7.0f);
  CHECK(p.openings[1].share == 0.1f);
}

TEST_CASE("propagate: a tunnel's mouth carries the sound, filtered and from the mouth") {
  const sim::BrickStore world = tunnelWorld();

  SUBCASE("straight path through the rock: more than 60 dB") {
    ListenerPaths none = tunnelListener();
    none.openingCount = 0;
    PathResult r = propagate(world, table(), none, kOutsideAside);
    CHECK(r.directLossDb[1] > 60.0f);
    CHECK(db(r.gain[1]) < -60.0f);
    CHECK(r.openingPaths == 0);
    for (int b = 0; b < 3; ++b)
      CHECK(r.gain[static_cast<std::size_t>(b)] ==
            doctest::Approx(std::pow(10.0f, -r.directLossDb[static_cast<std::size_t>(b)] / 20.0f)));
  }

  SUBCASE("through the mouth: audible, darker, from the mouth") {
    PathResult r = propagate(world, table(), tunnelListener(), kOutsideAside);
    MESSAGE("tunnel: gain dB ", db(r.gain[0]), " / ", db(r.gain[1]), " / ", db(r.gain[2]), ", direct loss ",
            r.directLossDb[1], " dB, direction ", r.direction.x, " ", r.direction.y, " ", r.direction.z);
    CHECK(r.directLossDb[1] > 60.0f);
    CHECK(db(r.gain[1]) > -40.0f);
    CHECK(db(r.gain[1]) < -3.0f);
    CHECK(db(r.gain[2]) <= db(r.gain[0]) - 6.0f);
    CHECK(angleDeg(r.direction, {0, 0, 1}) < 15.0f);
    CHECK(r.openingPaths == 1);
    CHECK(r.reverbSend == doctest::Approx(r.gain[1]));
    // An opening placed a little inside the tunnel (as the probe may put it) too.
    PathResult inside = propagate(world, table(), tunnelListener(11.0f), kOutsideAside);
    CHECK(db(inside.gain[1]) > -40.0f);
    CHECK(angleDeg(inside.direction, {0, 0, 1}) < 15.0f);
  }

  SUBCASE("a walled mouth leaves only the straight loss") {
    sim::BrickStore walled = world;
    fillBox(walled, {-30, 0, -10}, {30, 60, 0}, materialId("stone"));  // 50 cm plug in the mouth
    PathResult open = propagate(world, table(), tunnelListener(11.0f), kOutsideAside);
    PathResult r = propagate(walled, table(), tunnelListener(11.0f), kOutsideAside);
    CHECK(open.openingPaths == 1);
    CHECK(r.openingPaths == 0);
    CHECK(db(r.gain[1]) < -60.0f);
    CHECK(r.directLossDb[1] > 60.0f);
  }

  SUBCASE("a clear line of sight: free field, the true direction") {
    const Vec3f e{0.5f, 2.0f, -6.0f};
    PathResult r = propagate(world, table(), tunnelListener(), e);
    for (float g : r.gain) CHECK(g == 1.0f);
    CHECK(r.reverbSend == 1.0f);
    const Vec3f d{e.x - kDeepInTunnel.x, e.y - kDeepInTunnel.y, e.z - kDeepInTunnel.z};
    CHECK(angleDeg(r.direction, d) < 0.1f);
    for (float x : r.directLossDb) CHECK(x == 0.0f);
  }
}

TEST_CASE("propagate: identical results from two threads at once; cost per call") {
  const sim::BrickStore world = tunnelWorld();
  const ListenerPaths lp = tunnelListener();
  std::vector<Vec3f> emitters;
  for (int i = 0; i < 64; ++i)
    emitters.push_back({-15.0f + 0.47f * static_cast<float>(i), 0.3f + 0.09f * static_cast<float>(i % 11),
                        -14.0f + 0.5f * static_cast<float>(i)});
  auto runAll = [&](std::vector<PathResult>& out) {
    out.resize(emitters.size());
    for (std::size_t i = 0; i < emitters.size(); ++i) out[i] = propagate(world, table(), lp, emitters[i]);
  };
  std::vector<PathResult> ref, t1, t2;
  runAll(ref);
  std::thread a([&] { runAll(t1); });
  std::thread b([&] { runAll(t2); });
  a.join();
  b.join();
  auto same = [](const PathResult& x, const PathResult& y) {
    return std::memcmp(&x.gain, &y.gain, sizeof x.gain) == 0 &&
           std::memcmp(&x.direction, &y.direction, sizeof x.direction) == 0 &&
           x.reverbSend == y.reverbSend && std::memcmp(&x.directLossDb, &y.directLossDb, sizeof x.directLossDb) == 0 &&
           x.openingPaths == y.openingPaths;
  };
  int audible = 0;
  for (std::size_t i = 0; i < emitters.size(); ++i) {
    CHECK(same(ref[i], t1[i]));
    CHECK(same(ref[i], t2[i]));
    if (ref[i].gain[1] > 0.01f) ++audible;
  }
  CHECK(audible > 0);  // the set covers both sides of the rock

  // Cost: a 30 m segment across a glade-like place (ground, a canopy of scattered
  // leaf voxels in mixed bricks, a trunk) plus one sky opening.
  sim::BrickStore glade(sim::WorldBounds{{-48, -16, -48}, {48, 32, 48}}, sim::makeCoarseLut(materials()));
  fillBox(glade, {-384, -128, -384}, {384, 0, 384}, materialId("stone"));
  fillBox(glade, {-384, 0, -384}, {384, 4, 384}, materialId("grass"));
  const sim::MaterialId leaves = materialId("leaves");
  for (int z = -240; z < 240; ++z)
    for (int y = 80; y < 96; ++y)
      for (int x = -240; x < 240; ++x)
        if (((static_cast<unsigned>(x) * 73856093u) ^ (static_cast<unsigned>(y) * 19349663u) ^
             (static_cast<unsigned>(z) * 83492791u)) % 7u == 0)
          glade.set(x, y, z, leaves);
  fillBox(glade, {100, 0, 100}, {110, 90, 110}, materialId("wood"));
  ListenerPaths sky;
  sky.position = {-10.0f, 1.7f, -10.0f};
  sky.openings[0] = Opening{{0, 1, 0}, 0.5f, 4.0f};
  sky.openingCount = 1;
  const Vec3f e{10.0f, 4.6f, 12.0f};  // in the canopy, ~30 m away
  PathResult warm = propagate(glade, table(), sky, e);
  CHECK(warm.directLossDb[2] > 0.0f);  // through the canopy
  CHECK(warm.directLossDb[2] < 40.0f);
  const int n = 2000;
  float sink = 0;
  const std::clock_t c0 = std::clock();  // process CPU time: the machine may be busy
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i)
    sink += propagate(glade, table(), sky, {e.x, e.y, e.z + 1e-4f * static_cast<float>(i)}).gain[1];
  auto t1c = std::chrono::steady_clock::now();
  const std::clock_t c1 = std::clock();
  const double us = std::chrono::duration<double, std::micro>(t1c - t0).count() / n;
  const double cpuUs = 1e6 * static_cast<double>(c1 - c0) / CLOCKS_PER_SEC / n;
  MESSAGE("propagate, 30 m into a dense 24 m canopy + 1 sky opening: ", us, " us per call (wall), ", cpuUs,
          " us CPU; gain mid ", sink / n);
  CHECK(sink > 0.0f);
}
