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
#include "sim/gen/internal/world_field.h"
#include "sim/gen/landscape_plan.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/systems/water.h"
#include "sim/world/world_hash.h"
#include "tests/sim/sim_fixture.h"
#include "tests/support/process_util.h"

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

TEST_CASE("settlements: every building on levelled ground; roads keep their grade and stay out of lakes and the sea") {
  const Scene scene = loadRiverlands();
  const auto plan = landscapePlan(scene, 11);
  REQUIRE(plan != nullptr);
  REQUIRE(plan->settlements().size() >= 3);
  const TerrainSampler sampler(scene, 11);
  // Roads: every segment within the grade (its level changes by at most max_grade per
  // metre of run), and no road point stands in a lake or the sea.
  const double maxGrade = scene.landscape->roads.maxGrade;
  int steep = 0, flooded = 0;
  double km = 0;
  for (const RoadSegment& s : plan->roadSegments()) {
    const RoadPoint& a = plan->roadPoints()[s.a];
    const RoadPoint& b = plan->roadPoints()[s.b];
    const double run = std::hypot(b.at.x - a.at.x, b.at.z - a.at.z);
    km += run / 1000.0;
    if (std::abs(b.level - a.level) > maxGrade * run + 1e-9) ++steep;
    double level = 0, depth = 0;
    bool sea = false;
    if (plan->standingWater(a.at.x, a.at.z, level, sea, depth) && depth > 0.99) ++flooded;
  }
  CHECK(km > 5.0);
  CHECK(steep == 0);
  CHECK(flooded == 0);
  // Buildings: the ground under every footprint is its pad, exactly (not buried, not
  // floating: the plinth reaches a metre below it).
  const internal::WorldField field(scene, 11);
  int misplaced = 0;
  for (const internal::Building& b : field.buildings()) {
    const std::int32_t pad = internal::voxelFromMetres(b.pad);
    for (const Vec2 p : {Vec2{b.x0 + 0.1, b.z0 + 0.1}, Vec2{b.x1 - 0.1, b.z0 + 0.1}, Vec2{b.x0 + 0.1, b.z1 - 0.1},
                         Vec2{b.x1 - 0.1, b.z1 - 0.1}, Vec2{(b.x0 + b.x1) / 2, (b.z0 + b.z1) / 2}}) {
      const TerrainSample t = sampler.at(toVoxel(p.x), toVoxel(p.z));
      if (t.column.ground != pad || t.column.water > t.column.ground) ++misplaced;
    }
  }
  CHECK(field.buildings().size() >= 4 * plan->settlements().size());
  CHECK(misplaced == 0);
  // The scene clears its settlements by an ecotope on settlement_distance.
  int village = -1;
  for (std::size_t i = 0; i < scene.biomes.size(); ++i)
    if (scene.biomes[i].name == "village") village = static_cast<int>(i);
  for (const Settlement& st : plan->settlements()) {
    CAPTURE(st.centre.x);
    CAPTURE(st.centre.z);
    CHECK(sampler.at(toVoxel(st.centre.x + 20.0), toVoxel(st.centre.z)).biome == village);
  }
  MESSAGE("riverlands: ", plan->settlements().size(), " settlements, ", field.buildings().size(), " buildings, ", km,
          " km of road");
}

TEST_CASE("changing one settlement changes only the chunks within its reach") {
  // Two scenes that differ in the hand-placed site's buildings and walls: its lots
  // change, while the sites (and so the roads and every other settlement) stay.
  const std::string file = loam::test::readText(std::string(LOAM_SOURCE_DIR) + "/scenes/riverlands.toml");
  const std::string at = "at = [960.0, -4384.0]\n";
  const std::size_t site = file.find(at);
  REQUIRE(site != std::string::npos);
  const Scene base = loadRiverlands();
  auto variant = [&](int buildings, const char* wall) {
    std::string text = file;
    text.insert(site + at.size(), "buildings = " + std::to_string(buildings) + "\nwall = \"" + wall + "\"\n");
    auto scene = parseScene(text, "riverlands+site", base.materials);
    REQUIRE_MESSAGE(scene.has_value(), (scene ? "" : scene.error().message));
    return std::move(scene).value();
  };
  const Scene a = variant(4, "planks"), b = variant(14, "brick");
  const auto planA = landscapePlan(a, 11), planB = landscapePlan(b, 11);
  REQUIRE(planA->settlements().size() == planB->settlements().size());
  CHECK(planA->settlements()[0].centre.x == 960.0);
  CHECK(planA->roadPoints().size() == planB->roadPoints().size());
  // Chunk columns on four lines out from the site, to twice its radius plus a margin.
  const Vec2 c = planA->settlements()[0].centre;
  const double reach = a.landscape->settlements.radius + 30.0;  // lots, pads, blends and crowns
  constexpr double kChunkMetres = kChunkBricks * kBrickSize / static_cast<double>(kVoxelsPerMetre);
  std::vector<ChunkColumn> line;
  for (double d = 0.0; d < 2.0 * reach; d += kChunkMetres) {
    for (const Vec2 dir : {Vec2{1, 0}, Vec2{-1, 0}, Vec2{0, 1}, Vec2{0, -1}}) {
      const auto x = static_cast<std::int32_t>(std::floor((c.x + dir.x * d) / kChunkMetres));
      const auto z = static_cast<std::int32_t>(std::floor((c.z + dir.z * d) / kChunkMetres));
      line.push_back({x, z});
    }
  }
  auto ga = generateRegion(a, 11, line, kGeneratorVersion, GenerateOptions{2, 0, {}});
  auto gb = generateRegion(b, 11, line, kGeneratorVersion, GenerateOptions{2, 0, {}});
  REQUIRE(ga.has_value());
  REQUIRE(gb.has_value());
  int changedNear = 0, changedFar = 0;
  for (ChunkColumn col : line) {
    // The column's nearest point to the centre.
    const double x0 = col.x * kChunkMetres, z0 = col.z * kChunkMetres;
    const double dx = std::max({x0 - c.x, 0.0, c.x - x0 - kChunkMetres});
    const double dz = std::max({z0 - c.z, 0.0, c.z - z0 - kChunkMetres});
    const bool same = hashColumns(*ga, std::span(&col, 1)).world == hashColumns(*gb, std::span(&col, 1)).world;
    if (same) continue;
    if (std::hypot(dx, dz) > reach) {
      ++changedFar;
    } else {
      ++changedNear;
    }
  }
  CHECK(changedNear > 0);
  CHECK(changedFar == 0);
  MESSAGE(line.size(), " chunk columns on lines out from a site: ", changedNear, " changed within ", reach, " m, ",
          changedFar, " beyond");
}
