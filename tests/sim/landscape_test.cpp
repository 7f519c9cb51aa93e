// Landscapes from rules (sim/gen/landscape_plan.h) on the shipped 16 x 16 km scene
// riverlands: the plan is the same bits every time, its rivers never run uphill and
// end where water can leave; chunks near a river are a function of their coordinates
// alone; ecotope rules pick biomes by height, slope, moisture and distances; and a
// generated river is at rest in the water system and held at its level.
#include <doctest/doctest.h>

#include <bit>
#include <functional>
#include <cmath>
#include <string>
#include <vector>

#include "sim/gen/column_streamer.h"
#include "sim/gen/generator.h"
#include "sim/gen/landscape_plan.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/systems/water.h"
#include "sim/world/world_hash.h"
#include "tests/sim/sim_fixture.h"

using namespace loam::sim;
using loam::test::waterTick;

namespace {

Scene loadRiverlands() {
  auto scene = loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/riverlands.toml");
  REQUIRE_MESSAGE(scene.has_value(), (scene ? "" : scene.error().message));
  return std::move(scene).value();
}

std::int32_t toVoxel(double metres) { return static_cast<std::int32_t>(std::floor(metres * kVoxelsPerMetre)); }

/// A river point well inland (above sea level, not in a lake) whose channel holds
/// water at least 5 m wide: the column at its centre.
struct RiverSpot {
  std::int32_t x = 0, z = 0;  // voxel column
  std::int32_t top = 0;       // first voxel above the held water
  std::int32_t ground = 0;
};

RiverSpot findRiver(const Scene& scene, std::uint64_t seed) {
  const auto plan = landscapePlan(scene, seed);
  REQUIRE(plan != nullptr);
  const TerrainSampler sampler(scene, seed);
  for (const RiverSegment& s : plan->riverSegments()) {
    const RiverPoint& p = plan->riverPoints()[s.up];
    if (p.halfWidth < 2.5 || p.level < 5.0) continue;
    RiverSpot spot{toVoxel(p.at.x), 0, 0, 0};
    spot.z = toVoxel(p.at.z);
    spot.top = sampler.heldWaterTop(spot.x, spot.z);
    if (spot.top == INT32_MIN) continue;  // where a lake covers it
    spot.ground = sampler.at(spot.x, spot.z).column.ground;
    return spot;
  }
  FAIL("no river point found");
  return {};
}


}  // namespace

TEST_CASE("the landscape plan: the same bits when built again; rivers run downhill to the sea, a lake or the edge") {
  const Scene scene = loadRiverlands();
  const auto a = LandscapePlan::build(scene, 11);
  const auto b = LandscapePlan::build(scene, 11);
  REQUIRE(a->nodesX() == b->nodesX());
  REQUIRE(a->nodesZ() == b->nodesZ());
  bool same = true;
  int sea = 0;
  for (int j = 0; j < a->nodesZ(); ++j) {
    for (int i = 0; i < a->nodesX(); ++i) {
      same = same && std::bit_cast<std::uint64_t>(a->nodeHeight(i, j)) == std::bit_cast<std::uint64_t>(b->nodeHeight(i, j));
      same = same && a->nodeSea(i, j) == b->nodeSea(i, j);
      sea += a->nodeSea(i, j) ? 1 : 0;
    }
  }
  CHECK(same);
  REQUIRE(a->riverPoints().size() == b->riverPoints().size());
  REQUIRE(a->riverSegments().size() == b->riverSegments().size());
  for (std::size_t i = 0; i < a->riverPoints().size(); ++i) {
    const RiverPoint& p = a->riverPoints()[i];
    const RiverPoint& q = b->riverPoints()[i];
    REQUIRE((p.at.x == q.at.x && p.at.z == q.at.z && p.level == q.level && p.halfWidth == q.halfWidth));
  }
  // Another seed, another map.
  const auto other = LandscapePlan::build(scene, 12);
  CHECK(other->nodeHeight(200, 200) != a->nodeHeight(200, 200));

  // An island with a coast, lakes and a river network of tens of kilometres.
  CHECK(sea > a->nodesX() * a->nodesZ() / 10);
  CHECK(a->lakeCount() > 5);
  double km = 0;
  int uphill = 0;
  std::vector<int> outgoing(a->riverPoints().size(), 0);
  for (const RiverSegment& s : a->riverSegments()) {
    const RiverPoint& up = a->riverPoints()[s.up];
    const RiverPoint& down = a->riverPoints()[s.down];
    if (down.level > up.level) ++uphill;
    km += std::hypot(down.at.x - up.at.x, down.at.z - up.at.z) / 1000.0;
    ++outgoing[s.up];
  }
  CHECK(uphill == 0);
  CHECK(km > 20.0);
  MESSAGE("riverlands: ", a->riverSegments().size(), " river segments, ", km, " km, ", a->lakeCount(), " lakes");
  // Every river point runs on (one segment down), or ends in the sea, in a lake or at
  // the plan's edge: water always has somewhere to go.
  int ends = 0, badEnds = 0;
  for (std::size_t i = 0; i < a->riverPoints().size(); ++i) {
    CHECK(outgoing[i] <= 1);
    if (outgoing[i] == 1) continue;
    ++ends;
    const RiverPoint& p = a->riverPoints()[i];
    const int ni = static_cast<int>(std::lround((p.at.x - a->origin().x) / a->cell()));
    const int nj = static_cast<int>(std::lround((p.at.z - a->origin().z) / a->cell()));
    const bool edge = ni <= 0 || nj <= 0 || ni >= a->nodesX() - 1 || nj >= a->nodesZ() - 1;
    if (!(a->nodeSea(ni, nj) || a->nodeLake(ni, nj) > -1e30 || edge)) ++badEnds;
  }
  CHECK(ends > 0);
  CHECK(badEnds == 0);
}

TEST_CASE("near a river, a chunk column generated alone equals the same column generated with its neighbours") {
  const Scene scene = loadRiverlands();
  const RiverSpot spot = findRiver(scene, 11);
  CHECK(spot.top > spot.ground);
  const std::vector<ChunkColumn> near = columnsAround(scene.worldBounds, spot.x, spot.z, 200);
  REQUIRE(near.size() >= 4);
  auto region = generateRegion(scene, 11, near, kGeneratorVersion, GenerateOptions{2, 7, {}});
  REQUIRE(region.has_value());
  for (ChunkColumn c : near) {
    CAPTURE(c.x);
    CAPTURE(c.z);
    auto alone = generateRegion(scene, 11, std::vector<ChunkColumn>{c}, kGeneratorVersion, GenerateOptions{1, 0, {}});
    REQUIRE(alone.has_value());
    CHECK(hashColumns(*alone, std::span(&c, 1)).world == hashColumns(*region, std::span(&c, 1)).world);
  }
  // The channel holds water up to the sampler's surface, on the river's bed.
  const MaterialId water = *scene.materials->find("water");
  CHECK(region->get(spot.x, spot.top - 1, spot.z) == water);
  CHECK(region->get(spot.x, spot.top, spot.z) != water);
  CHECK(region->get(spot.x, spot.ground - 1, spot.z) == *scene.materials->find("gravel"));
}

TEST_CASE("ecotopes: beaches by the sea, rock on cliffs, stone on the summits, forest where it is moist") {
  const Scene scene = loadRiverlands();
  const TerrainSampler sampler(scene, 11);
  auto biomeIndex = [&](const std::string& name) {
    for (std::size_t i = 0; i < scene.biomes.size(); ++i)
      if (scene.biomes[i].name == name) return static_cast<int>(i);
    return -2;
  };
  // A coarse census over the island: every rule-driven ecotope appears, and each where
  // its rule says.
  std::vector<int> count(scene.biomes.size(), 0);
  int beachHigh = 0, summitLow = 0;
  for (std::int32_t z = -150000; z < 150000; z += 1999) {
    for (std::int32_t x = -150000; x < 150000; x += 1999) {
      const TerrainSample t = sampler.at(x, z);
      if (t.biome < 0) continue;
      ++count[static_cast<std::size_t>(t.biome)];
      const double height = t.column.ground / static_cast<double>(kVoxelsPerMetre);
      if (t.biome == biomeIndex("beach") && height > 4.0) ++beachHigh;
      if (t.biome == biomeIndex("summit") && height < 215.0) ++summitLow;
    }
  }
  for (std::string name : {"beach", "cliff", "summit", "marsh", "forest", "meadow", "scree"}) {
    CAPTURE(name);
    CHECK(count[static_cast<std::size_t>(biomeIndex(name))] > 0);
  }
  CHECK(beachHigh == 0);
  CHECK(summitLow == 0);
}

TEST_CASE("a generated river is at rest and held: a hole dug under it fills, a pour on it is carried away") {
  const Scene scene = loadRiverlands();
  const RiverSpot spot = findRiver(scene, 11);
  auto streamer = ColumnStreamer::create(scene, 11, {.threads = 1});
  REQUIRE(streamer.has_value());
  auto state = createStreamedSimState(scene, 11, **streamer);
  REQUIRE(state.has_value());
  SimState& s = *state;
  const VoxelCoord surface{spot.x, spot.top - 1, spot.z};
  CHECK(s.world.get(surface) == s.water.water);
  // 600 steps of the water system on a fresh world: nothing moves, no record is made.
  std::size_t processed = 0;
  for (int t = 0; t < 600; ++t) {
    waterTick(s);
    processed += waterStats(s.water).processedVoxels;
  }
  CHECK(processed == 0);
  CHECK(s.water.grid.brickCount() == 0);

  // A hole four voxels deep under the bed: the held river fills it and stays full.
  waterTick(s, [&](SimContext& ctx) {
    for (int y = spot.ground - 4; y < spot.ground; ++y) ctx.setVoxel(VoxelCoord{spot.x, y, spot.z}, kAir);
  });
  int settled = -1;
  for (int t = 0; t < 3000 && settled < 0; ++t) {
    waterTick(s);
    const WaterStats st = waterStats(s.water);
    if (st.activeVoxels == 0 && st.processedVoxels == 0) settled = t;
  }
  REQUIRE(settled >= 0);
  for (int y = spot.ground - 4; y < spot.ground; ++y) CHECK(waterAt(s.water, s.world, VoxelCoord{spot.x, y, spot.z}) == kWaterPerVoxel);
  CHECK(waterAt(s.water, s.world, surface) == kWaterPerVoxel);
  CHECK(s.water.grid.brickCount() < 64);  // the disturbance stayed local

  // A pour onto the river: it reaches the surface and leaves there (a stream's sink),
  // the river's level unchanged.
  waterTick(s, [&](SimContext& ctx) { CHECK(pourWater(s.water, ctx, VoxelCoord{spot.x, spot.top + 6, spot.z}, 8 * kWaterPerVoxel)); });
  settled = -1;
  for (int t = 0; t < 3000 && settled < 0; ++t) {
    waterTick(s);
    const WaterStats st = waterStats(s.water);
    if (st.activeVoxels == 0 && st.processedVoxels == 0) settled = t;
  }
  REQUIRE(settled >= 0);
  CHECK(waterAt(s.water, s.world, surface) == kWaterPerVoxel);
  CHECK(waterAt(s.water, s.world, VoxelCoord{spot.x, spot.top, spot.z}) == 0);
  CHECK(s.world.get(VoxelCoord{spot.x, spot.top, spot.z}) == kAir);
}
