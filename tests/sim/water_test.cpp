// The water system (sim/systems/water.h): levelling and exact conservation, falling and
// spreading, draining into a dug hole, a waterfall source that stays bounded and
// fills a hole on its way, displacement by a placed block, determinism and the
// mirror, and that settled water costs nothing.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/step/mirror.h"
#include "sim/systems/sim_context.h"
#include "sim/step/step.h"
#include "sim/systems/water.h"
#include "sim/world/world_hash.h"
#include "tests/sim/sim_fixture.h"

using namespace loam::sim;
using loam::test::waterTick;
using loam::test::mat;

namespace {

// Fills the box [x0,x1) x [y0,y1) x [z0,z1) with m (world building, before the state).
void fill(BrickStore& w, int x0, int y0, int z0, int x1, int y1, int z1, MaterialId m) {
  for (int z = z0; z < z1; ++z)
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) w.set(VoxelCoord{x, y, z}, m);
}

// A stone-walled basin with inner floor [x0,x1) x [z0,z1) at y = 0 and walls up to y = h.
void basin(BrickStore& w, int x0, int z0, int x1, int z1, int h) {
  const MaterialId stone = mat("stone");
  fill(w, x0 - 1, 0, z0 - 1, x1 + 1, h, z0, stone);
  fill(w, x0 - 1, 0, z1, x1 + 1, h, z1 + 1, stone);
  fill(w, x0 - 1, 0, z0, x0, h, z1, stone);
  fill(w, x1, 0, z0, x1 + 1, h, z1, stone);
}

SimState stateFrom(BrickStore world, const Scene& scene = loam::test::testScene()) {
  return createSimStateFromWorld(scene, 7, std::move(world));
}


// All the water of s: its records' amounts and the implicit water of the bricks
// without a record (a full cell per liquid voxel).
std::uint64_t totalWater(const SimState& s) {
  std::uint64_t sum = 0;
  for (const std::uint32_t slot : s.water.grid.sorted()) {
    for (const std::uint16_t a : s.water.grid.brick(slot).amount) sum += a;
  }
  s.world.forEachBrick([&](BrickCoord b, const BrickView& v) {
    if (s.water.grid.find(b) >= 0) return;
    for (int i = 0; i < kBrickVoxels; ++i) sum += s.water.liquid[v.at(i)] ? kWaterPerVoxel : 0;
  });
  return sum;
}

// Every wet cell is air or water in the world; every cell of at least half a voxel
// is a water voxel; every water voxel holds some water.
void checkVoxelsAgree(const SimState& s) {
  const MaterialId water = mat("water");
  for (const std::uint32_t slot : s.water.grid.sorted()) {
    const auto& b = s.water.grid.brick(slot);
    for (int i = 0; i < kBrickVoxels; ++i) {
      const VoxelCoord v{b.coord.x * 8 + (i & 7), b.coord.y * 8 + ((i >> 3) & 7), b.coord.z * 8 + (i >> 6)};
      const MaterialId m = s.world.get(v);
      const unsigned a = b.amount[static_cast<std::size_t>(i)];
      if (a > 0) REQUIRE_MESSAGE((m == kAir || m == water), "water inside material " << unsigned{m});
      if (a >= kWaterPerVoxel / 2) REQUIRE(m == water);
      if (m == water) REQUIRE(a > 0);
    }
  }
}

int settle(SimState& s, int maxTicks) {
  for (int t = 0; t < maxTicks; ++t) {
    waterTick(s);
    const WaterStats st = waterStats(s.water);
    if (st.activeVoxels == 0 && st.processedVoxels == 0) return t + 1;
  }
  return -1;
}

}  // namespace

TEST_CASE("a pour in a closed basin levels out and conserves water exactly") {
  BrickStore w = loam::test::flatWorld();
  basin(w, 0, 0, 8, 8, 24);
  SimState s = stateFrom(std::move(w));
  constexpr std::uint32_t kPour = 64 * kWaterPerVoxel;  // one full layer over the 8x8 floor
  for (int i = 0; i < 4; ++i) {  // four buckets (a pour stands as a column before it spreads)
    waterTick(s, [&](SimContext& ctx) { REQUIRE(pourWater(s.water, ctx, VoxelCoord{3, 6, 4}, kPour / 4)); });
  }
  CHECK(totalWater(s) == kPour);
  const int ticks = settle(s, 3000);
  REQUIRE_MESSAGE(ticks > 0, "did not settle");
  MESSAGE("settled after " << ticks << " ticks");
  CHECK(totalWater(s) == kPour);
  // Levelled: every column of the basin holds one voxel of water, give or take a few units.
  for (int z = 0; z < 8; ++z) {
    for (int x = 0; x < 8; ++x) {
      unsigned column = 0;
      for (int y = 0; y < 24; ++y) column += waterAt(s.water, s.world, VoxelCoord{x, y, z});
      CHECK(column >= kWaterPerVoxel - 8);
      CHECK(column <= kWaterPerVoxel + 8);
    }
  }
  checkVoxelsAgree(s);
}

TEST_CASE("water falls down a shaft and spreads on the floor") {
  // A stone block y in [1, 20) with a one-voxel shaft at (0, z = 0); the layer y = 0
  // under it is open, so water that reaches the bottom spreads there.
  BrickStore w = loam::test::flatWorld();
  fill(w, -12, 1, -12, 12, 20, 12, mat("stone"));
  fill(w, 0, 1, 0, 1, 20, 1, kAir);
  SimState s = stateFrom(std::move(w));
  constexpr std::uint32_t kPour = 24 * kWaterPerVoxel;
  // Poured on the block next to the shaft: it stands as a column, collapses and runs
  // over the shaft's edge.
  waterTick(s, [&](SimContext& ctx) {
    REQUIRE(pourWater(s.water, ctx, VoxelCoord{1, 25, 0}, kPour));
    CHECK(waterAt(s.water, s.world, VoxelCoord{1, 20, 0}) == kWaterPerVoxel);  // landed on the block
    CHECK(waterAt(s.water, s.world, VoxelCoord{1, 43, 0}) == kWaterPerVoxel);  // a column 24 voxels high
  });
  REQUIRE(settle(s, 4000) > 0);
  CHECK(totalWater(s) == kPour);
  std::uint64_t floor = 0;
  int wetFloorVoxels = 0;
  for (int z = -40; z < 40; ++z) {
    for (int x = -40; x < 40; ++x) {
      const unsigned a = waterAt(s.water, s.world, VoxelCoord{x, 0, z});
      floor += a;
      wetFloorVoxels += a > 0 ? 1 : 0;
    }
  }
  MESSAGE("on the floor: " << floor << " units in " << wetFloorVoxels << " voxels");
  CHECK(floor > kPour / 2);  // most of it went down the shaft
  CHECK(wetFloorVoxels > 20);  // and spread
  for (int y = 1; y < 20; ++y) CHECK(waterAt(s.water, s.world, VoxelCoord{0, y, 0}) == 0);  // nothing stays in the shaft
  checkVoxelsAgree(s);
}

TEST_CASE("a dug hole under a pond drains into it") {
  BrickStore w = loam::test::flatWorld();
  basin(w, 0, 0, 8, 8, 8);
  fill(w, 0, 0, 0, 8, 4, 8, mat("water"));  // a generated pond, four voxels deep
  SimState s = stateFrom(std::move(w));
  const std::uint64_t initial = totalWater(s);
  REQUIRE(initial == 8u * 8u * 4u * kWaterPerVoxel);
  CHECK(waterStats(s.water).activeVoxels == 0);  // generated water sleeps
  CHECK(s.water.grid.brickCount() == 0);         // implicitly: no record until it moves
  waterTick(s);
  CHECK(waterStats(s.water).processedVoxels == 0);
  // Dig a three-voxel hole under the pond's floor (edits before water, as a dig does).
  waterTick(s, [&](SimContext& ctx) {
    for (int y = -3; y < 0; ++y) ctx.setVoxel(VoxelCoord{4, y, 4}, kAir);
  });
  REQUIRE(settle(s, 3000) > 0);
  CHECK(totalWater(s) == initial);
  for (int y = -3; y < 0; ++y) CHECK(waterAt(s.water, s.world, VoxelCoord{4, y, 4}) == kWaterPerVoxel);
  // The surface dropped: the top layer lost three voxels.
  unsigned top = 0;
  for (int z = 0; z < 8; ++z)
    for (int x = 0; x < 8; ++x) top += waterAt(s.water, s.world, VoxelCoord{x, 3, z});
  CHECK(top == 64 * kWaterPerVoxel - 3 * kWaterPerVoxel);
  checkVoxelsAgree(s);
}

TEST_CASE("a waterfall keeps flowing, fills a hole on its way and stays bounded") {
  // A 2 m cliff (x < 0) over a stone plain; a pond dug into the plain at x in
  // [40, 60) with its outlet just above the water; a pit on the way at x in [10, 13).
  BrickStore w = loam::test::flatWorld();
  const MaterialId stone = mat("stone");
  fill(w, -64, 0, -32, 0, 40, 32, stone);
  fill(w, 40, -8, -10, 60, 0, 10, kAir);
  fill(w, 40, -8, -10, 60, -2, 10, mat("water"));
  fill(w, 10, -3, -1, 13, 0, 2, kAir);
  Scene scene = loam::test::testScene();
  WaterSource fall;
  fall.name = "falls";
  fall.kind = WaterSourceKind::Waterfall;
  fall.position = {-0.1, 2.0, 0.0};
  fall.flowRate = 10.0;  // litres per second: 341 units per tick
  fall.width = 0.5;
  scene.waterSources.push_back(fall);
  Pond pond;
  pond.name = "pond";
  pond.center = {2.5, 0.0};
  pond.radius = 0.6;
  scene.ponds.push_back(pond);
  SimState s = stateFrom(std::move(w), scene);
  REQUIRE(s.water.sources.size() == 1);
  REQUIRE(s.water.outlets.size() == 1);
  CHECK(s.water.outlets[0].y == -2);
  const std::uint64_t pondWater = totalWater(s);

  std::uint64_t splashes = 0;
  std::vector<std::uint64_t> totals;
  for (int t = 0; t < 1500; ++t) {
    const StepOutput out = waterTick(s);
    for (const Event& e : out.events) splashes += std::holds_alternative<SplashEvent>(e) ? 1 : 0;
    totals.push_back(totalWater(s));
  }
  // The pit filled (27 voxels) and then the water ran on to the pond and out.
  for (int y = -3; y < 0; ++y)
    for (int z = -1; z < 2; ++z)
      for (int x = 10; x < 13; ++x) CHECK(waterAt(s.water, s.world, VoxelCoord{x, y, z}) >= kWaterPerVoxel / 2);
  CHECK(s.water.sources[0].end == internal::WaterRouteEnd::Leaves);
  const std::uint64_t end = totals.back();
  MESSAGE("water: pond " << pondWater << ", end " << end << ", splashes " << splashes);
  CHECK(end >= pondWater + 27 * kWaterPerVoxel);        // the pit is full
  CHECK(end <= pondWater + (27 + 32) * kWaterPerVoxel);  // what spilt while re-routing is small
  for (std::size_t t = totals.size() - 300; t < totals.size(); ++t) CHECK(totals[t] == end);  // bounded: steady
  CHECK(splashes > 0);
  CHECK(splashes <= 2 * 1500);
  checkVoxelsAgree(s);
  // Nothing left to simulate: the flow passes along its route.
  const WaterStats st = waterStats(s.water);
  CHECK(st.processedVoxels == 0);
}

TEST_CASE("placing a block in water displaces it deterministically") {
  auto run = [](std::vector<WaterChange>& records) {
    BrickStore w = loam::test::flatWorld();
    basin(w, 0, 0, 8, 8, 8);
    fill(w, 0, 0, 0, 8, 2, 8, mat("water"));
    SimState s = stateFrom(std::move(w));
    const std::uint64_t initial = totalWater(s);
    CHECK(s.water.grid.brickCount() == 0);  // the pond's water is implicit
    const StepOutput out = waterTick(s, [&](SimContext& ctx) { ctx.setVoxel(VoxelCoord{3, 0, 3}, mat("stone")); });
    CHECK(waterAt(s.water, s.world, VoxelCoord{3, 0, 3}) == 0);
    CHECK(waterAt(s.water, s.world, VoxelCoord{3, 2, 3}) > 0);  // pushed up over the full cell above
    records.assign(out.water.begin(), out.water.end());
    REQUIRE(settle(s, 3000) > 0);
    CHECK(totalWater(s) == initial);
    CHECK(waterAt(s.water, s.world, VoxelCoord{3, 0, 3}) == 0);
    checkVoxelsAgree(s);
    return s;
  };
  std::vector<WaterChange> a, b;
  const SimState first = run(a);
  const SimState second = run(b);
  CHECK(a == b);
  CHECK_FALSE(diffWater(first.water, second.water).has_value());
}

TEST_CASE("same run twice gives identical states, and the mirror follows the records") {
  auto script = [](SimState& s, int t) -> StepOutput {
    return waterTick(s, [&](SimContext& ctx) {
      if (t == 1) pourWater(s.water, ctx, VoxelCoord{2, 10, 2}, 40 * kWaterPerVoxel);
      if (t == 30) pourWater(s.water, ctx, VoxelCoord{20, 3, -4}, 9 * kWaterPerVoxel);
      if (t == 60) ctx.setVoxel(VoxelCoord{4, 0, 4}, mat("stone"));
      if (t == 90)
        for (int y = -4; y < 0; ++y) ctx.setVoxel(VoxelCoord{1, y, 1}, kAir);
    });
  };
  BrickStore w = loam::test::flatWorld();
  basin(w, 0, 0, 8, 8, 6);
  fill(w, 0, 0, 0, 8, 1, 8, mat("water"));
  const SimState initial = stateFrom(std::move(w));
  SimState one = initial, two = initial, mirror = initial;
  for (int t = 1; t <= 400; ++t) {
    const StepOutput a = script(one, t);
    const StepOutput b = script(two, t);
    REQUIRE(a.water == b.water);
    REQUIRE(a.edits == b.edits);
    applyStepOutput(mirror, a);
    if (auto d = diffWater(one.water, two.water)) FAIL("tick " << t << " run two: " << *d);
    if (auto d = diffWater(one.water, mirror.water)) FAIL("tick " << t << " mirror: " << *d);
  }
  CHECK(worldHash(one.world) == worldHash(mirror.world));
  CHECK(worldHash(one.world) == worldHash(two.world));
  CHECK(totalWater(one) == totalWater(mirror));
  for (const CellCoord cell : {cellOf(BrickCoord{0, 0, 0}), cellOf(brickOf(VoxelCoord{20, 3, -4}))})
    CHECK(waterInCell(one.water, cell) == waterInCell(mirror.water, cell));
}

TEST_CASE("settled water costs nothing: the active set empties") {
  BrickStore w = loam::test::flatWorld();
  basin(w, 0, 0, 6, 6, 8);
  SimState s = stateFrom(std::move(w));
  waterTick(s, [&](SimContext& ctx) { REQUIRE(pourWater(s.water, ctx, VoxelCoord{2, 4, 2}, 50 * kWaterPerVoxel)); });
  REQUIRE(settle(s, 3000) > 0);
  for (int t = 0; t < 10; ++t) {
    const StepOutput out = waterTick(s);
    const WaterStats st = waterStats(s.water);
    CHECK(st.processedVoxels == 0);
    CHECK(st.activeVoxels == 0);
    CHECK(out.water.empty());
    CHECK(out.edits.empty());
  }
  // An edit next to the water wakes it; it settles again.
  waterTick(s, [&](SimContext& ctx) { ctx.setVoxel(VoxelCoord{6, 0, 2}, kAir); });
  CHECK(waterStats(s.water).activeVoxels > 0);
  REQUIRE(settle(s, 3000) > 0);
  CHECK(waterAt(s.water, s.world, VoxelCoord{6, 0, 2}) > 0);
  checkVoxelsAgree(s);
}

TEST_CASE("pour: solid targets are refused without changes; the pour splashes where it lands") {
  SimState s = loam::test::flatState();
  const StepOutput refused = waterTick(s, [&](SimContext& ctx) {
    CHECK_FALSE(pourWater(s.water, ctx, VoxelCoord{0, -1, 0}, kWaterPerVoxel));
  });
  CHECK(refused.water.empty());
  CHECK(refused.edits.empty());
  const StepOutput poured = waterTick(s, [&](SimContext& ctx) {
    CHECK(pourWater(s.water, ctx, VoxelCoord{0, 40, 0}, 3 * kWaterPerVoxel));
    // It dropped to the floor and stands three voxels high (until the tick spreads it).
    CHECK(waterAt(s.water, s.world, VoxelCoord{0, 0, 0}) == kWaterPerVoxel);
    CHECK(waterAt(s.water, s.world, VoxelCoord{0, 2, 0}) == kWaterPerVoxel);
    CHECK(waterAt(s.water, s.world, VoxelCoord{0, 3, 0}) == 0);
  });
  bool splash = false;
  for (const Event& e : poured.events) {
    if (const auto* sp = std::get_if<SplashEvent>(&e)) {
      splash = true;
      CHECK(sp->position == VoxelCoord{0, 0, 0});
      CHECK(sp->speed > 0);
    }
  }
  CHECK(splash);
  CHECK(totalWater(s) == 3 * kWaterPerVoxel);
}
