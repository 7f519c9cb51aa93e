// World generation: the same world for any thread count and chunk order, locality of
// changes (a rule or feature changes only the cells it reaches), per-column
// consistency, and every shipped scene generates a sane world.
#include "sim/gen/generator.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim/gen/gen_random.h"
#include "sim/gen/internal/shapes.h"
#include "sim/gen/internal/world_field.h"
#include "sim/gen/scatter.h"
#include "sim/world/world_hash.h"

using namespace loam::sim;

namespace {

std::shared_ptr<const MaterialTable> materials() {
  static std::shared_ptr<const MaterialTable> table = [] {
    auto t = MaterialTable::load(std::string(LOAM_SOURCE_DIR) + "/sim/data/materials.toml");
    REQUIRE(t.has_value());
    return std::make_shared<const MaterialTable>(std::move(t).value());
  }();
  return table;
}

Scene loadShipped(const std::string& name) {
  auto s = loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/" + name + ".toml");
  if (!s) FAIL(s.error().message);
  return std::move(s).value();
}

Scene parse(const std::string& text) {
  auto s = parseScene(text, "locality.toml", materials());
  if (!s) FAIL(s.error().message);
  return std::move(s).value();
}

BrickStore generate(const Scene& scene, std::uint64_t seed, int threads = 0, std::uint64_t order = 0) {
  GenerateOptions o;
  o.threads = threads;
  o.orderSeed = order;
  auto w = generateWorld(scene, seed, kGeneratorVersion, o);
  if (!w) FAIL(w.error().message);
  return std::move(w).value();
}

/// The cells (12.8 m) a voxel box touches.
std::set<std::pair<int, int>> cellsOf(const VoxelBox& b) {
  std::set<std::pair<int, int>> out;
  constexpr int kShift = kBrickShift + kCellShift;
  for (int z = b.min.z >> kShift; z <= (b.max.z - 1) >> kShift; ++z) {
    for (int x = b.min.x >> kShift; x <= (b.max.x - 1) >> kShift; ++x) out.insert({x, z});
  }
  return out;
}

// A 76.8 m square test scene with every kind of shape; the locality cases edit it.
const std::string kLocality = R"(name = "locality"
[bounds]
min = [-38.4, -6.4, -38.4]
max = [38.4, 19.2, 38.4]
[terrain]
base_height = 1.0
[[terrain.layer]]
wavelength = 30.0
amplitude = 1.5
octaves = 3
[[biome]]
name = "ring"
inside = [{ center = [0.0, 0.0], radius = 30.0 }]
[[biome]]
name = "rest"
[[scatter]]
name = "trees"
kind = "tree"
spacing = 9.0
density = 0.6
biomes = ["ring"]
canopy_radius = [1.0, 1.6]
[[scatter]]
name = "rocks"
kind = "rock"
spacing = 4.0
density = 0.4
radius = [0.4, 0.9]
inside = [{ center = [20.0, -20.0], radius = 9.0 }]
[[scatter]]
name = "grass"
kind = "grass"
spacing = 3.0
density = 0.5
[[tunnel]]
points = [[-20.0, 0.5, -20.0], [-5.0, 0.5, -20.0]]
radius = 1.2
[[structure]]
kind = "wall"
material = "stone"
from = [10.0, 0.0, 10.0]
to = [20.0, 3.0, 10.6]
[[pond]]
center = [-15.0, 15.0]
radius = 4.0
depth = 1.0
)";

/// Cells whose hashes differ between the worlds of two scenes.
std::set<std::pair<int, int>> changedCells(const Scene& a, const Scene& b) {
  BrickStore wa = generate(a, 3), wb = generate(b, 3);
  std::set<std::pair<int, int>> out;
  for (const CellCoord& c : differingCells(hashContent(wa).cells, hashContent(wb).cells)) out.insert({c.x, c.z});
  return out;
}

/// The cells reached by the features of rule `rule` in scene s.
std::set<std::pair<int, int>> ruleCells(const Scene& s, int rule) {
  std::set<std::pair<int, int>> out;
  for (const FeatureInfo& f : enumerateFeatures(s, 3)) {
    if (f.id.rule != rule) continue;
    for (auto c : cellsOf(f.bounds)) out.insert(c);
  }
  return out;
}

void checkSubset(const std::set<std::pair<int, int>>& changed, const std::set<std::pair<int, int>>& allowed) {
  CHECK(!changed.empty());
  for (auto c : changed) {
    CAPTURE(c.first);
    CAPTURE(c.second);
    CHECK(allowed.count(c) == 1);
  }
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t p = text.find(from);
  REQUIRE(p != std::string::npos);
  return text.replace(p, from.size(), to);
}

}  // namespace

TEST_CASE("glade: same world hash on 1, 2 and 8 threads and in shuffled chunk orders") {
  Scene glade = loadShipped("glade");
  WorldHashes ref = hashContent(generate(glade, 1, 1, 0));
  std::printf("glade world hash %016" PRIx64 " (%zu cells)\n", ref.world, ref.cells.size());
  struct Run {
    int threads;
    std::uint64_t order;
  };
  for (Run r : {Run{2, 0}, Run{8, 12345}, Run{2, 7}}) {
    CAPTURE(r.threads);
    CAPTURE(r.order);
    WorldHashes h = hashContent(generate(glade, 1, r.threads, r.order));
    CHECK(h.world == ref.world);
    CHECK(h.cells == ref.cells);
  }
}

TEST_CASE("a different seed gives a different world; a different generator version is refused") {
  Scene s = parse(kLocality);
  CHECK(hashContent(generate(s, 1)).world != hashContent(generate(s, 2)).world);
  auto bad = generateWorld(s, 1, kGeneratorVersion + 1);
  REQUIRE(!bad);
  CHECK(bad.error().message.find("generator version") != std::string::npos);
}

TEST_CASE("chunk-column columns equal single-column evaluation") {
  // The generator computes a chunk column's columns in bulk (with flat-cell
  // shortcuts); scatter placement evaluates single columns. They must agree.
  for (const char* name : {"glade", "flat", "court"}) {
    CAPTURE(name);
    Scene s = loadShipped(name);
    internal::WorldField field(s, 11);
    std::vector<internal::GridSample> lattice;
    std::vector<internal::Column> cols;
    std::vector<std::uint8_t> flat;
    // A chunk column with the pond/stream in glade, the court's edge, flat's centre.
    const std::int32_t x0 = 128, z0 = 128;
    field.columns(x0, z0, 128, lattice, cols, flat);
    internal::ColumnWindow win{cols.data(), flat.data(), x0, z0, 128};
    int mismatches = 0;
    for (std::int32_t z = z0; z < z0 + 128; ++z) {
      for (std::int32_t x = x0; x < x0 + 128; ++x) {
        internal::Column a = win.at(x, z), b = field.columnAt(x, z);
        bool same = a.ground == b.ground && a.water == b.water && a.deepTop == b.deepTop && a.surface == b.surface &&
                    a.waterMaterial == b.waterMaterial && a.biome == b.biome;
        if (!same) ++mismatches;
      }
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("locality: changing one scatter rule changes only the cells its features reach") {
  Scene a = parse(kLocality);
  Scene b = parse(replaced(kLocality, "density = 0.4", "density = 0.7"));  // the rocks rule
  auto allowed = ruleCells(a, 1);
  for (auto c : ruleCells(b, 1)) allowed.insert(c);
  auto changed = changedCells(a, b);
  MESSAGE(changed.size() << " cells changed; the rock features reach " << allowed.size());
  checkSubset(changed, allowed);
  CHECK(changed.size() <= 9);  // of 36 cells: the rule only places rocks in a 9 m circle

  Scene c = parse(replaced(kLocality, "canopy_radius = [1.0, 1.6]", "canopy_radius = [1.2, 1.9]"));  // the trees
  auto allowedTrees = ruleCells(a, 0);
  for (auto cell : ruleCells(c, 0)) allowedTrees.insert(cell);
  checkSubset(changedCells(a, c), allowedTrees);
}

TEST_CASE("locality: adding or moving one feature changes only the cells it covers") {
  Scene a = parse(kLocality);
  // One more structure: a 1 m box at (5, 0, -25).
  Scene b = parse(kLocality + "[[structure]]\nkind = \"box\"\nmaterial = \"planks\"\nfrom = [5.0, 1.0, -25.0]\n"
                              "to = [6.0, 6.0, -24.0]\n");
  checkSubset(changedCells(a, b), cellsOf({{100, 20, -500}, {120, 120, -480}}));

  // Moving the tunnel's end changes only cells along its old and new course.
  Scene c = parse(replaced(kLocality, "[-5.0, 0.5, -20.0]", "[-5.0, 0.5, -14.0]"));
  // Old course x -20..-5 at z -20; new course ends at z -14; radius 1.2 m (+1 voxel).
  auto allowed = cellsOf({{-20 * 20 - 30, -100, -20 * 20 - 30}, {-5 * 20 + 30, 100, -20 * 20 + 30}});
  for (auto cell : cellsOf({{-20 * 20 - 30, -100, -20 * 20 - 30}, {-5 * 20 + 30, 100, -14 * 20 + 30}})) {
    allowed.insert(cell);
  }
  checkSubset(changedCells(a, c), allowed);
}

TEST_CASE("scatter items scale, lean toward a keyed heading and stretch, within their features' bounds") {
  // The rocks spread wider and thinner than kLocality's, so more stand alone.
  const std::string base = replaced(replaced(kLocality, "spacing = 4.0", "spacing = 6.0"),
                                    "inside = [{ center = [20.0, -20.0], radius = 9.0 }]",
                                    "inside = [{ center = [18.0, -18.0], radius = 18.0 }]");
  const Scene a = parse(base);
  std::string text = replaced(base, "canopy_radius = [1.0, 1.6]",
                              "canopy_radius = [1.0, 1.6]\ntilt = [20.0, 20.0]\nscale = [1.3, 1.3]");
  text = replaced(text, "radius = [0.4, 0.9]\n", "radius = [0.4, 0.9]\nstretch = [2.0, 2.0]\ntilt = [30.0, 30.0]\n");
  const Scene b = parse(text);
  const BrickStore wa = generate(a, 3), wb = generate(b, 3);
  const MaterialId wood = *b.materials->find("wood"), rock = *b.materials->find("rock");

  // A trunk followed up from 1 m above its foot, row by row (its centroid within
  // 0.6 m of the row below): its lean over 3 m of height, and the heading it leans to.
  double heading = 0;
  auto leanDegrees = [&](const BrickStore& w, const FeatureInfo& f) {
    const auto foot = static_cast<std::int32_t>(std::lround(f.position.y * kVoxelsPerMetre));
    double cx = f.position.x * kVoxelsPerMetre, cz = f.position.z * kVoxelsPerMetre, x0 = 0, z0 = 0;
    for (std::int32_t y = foot + 20; y <= foot + 80; ++y) {
      double sx = 0, sz = 0, n = 0;
      for (auto z = static_cast<std::int32_t>(cz) - 12; z <= static_cast<std::int32_t>(cz) + 12; ++z)
        for (auto x = static_cast<std::int32_t>(cx) - 12; x <= static_cast<std::int32_t>(cx) + 12; ++x)
          if (w.get(x, y, z) == wood && std::hypot(x + 0.5 - cx, z + 0.5 - cz) < 12.0) {
            sx += x + 0.5;
            sz += z + 0.5;
            ++n;
          }
      if (n == 0) return -1.0;  // lost it (hidden by leaves or another tree)
      cx = sx / n;
      cz = sz / n;
      if (y == foot + 20) x0 = cx, z0 = cz;
    }
    heading = std::atan2(cz - z0, cx - x0) * 180.0 / 3.14159265358979;
    return std::atan2(std::hypot(cx - x0, cz - z0), 60.0) * 180.0 / 3.14159265358979;
  };
  int leaning = 0, measured = 0;
  double east = 0, north = 0;  // the headings' mean direction (near 0 when they are spread)
  for (const FeatureInfo& f : enumerateFeatures(b, 3)) {
    if (f.id.rule != 0) continue;
    const double lean = leanDegrees(wb, f);
    if (lean < 0) continue;
    ++measured;
    leaning += std::abs(lean - 20.0) < 3.0 ? 1 : 0;
    east += std::cos(heading * 3.14159265358979 / 180.0);
    north += std::sin(heading * 3.14159265358979 / 180.0);
  }
  int upright = 0, uprightMeasured = 0;
  for (const FeatureInfo& f : enumerateFeatures(a, 3)) {
    if (f.id.rule != 0) continue;
    const double lean = leanDegrees(wa, f);
    if (lean < 0) continue;
    ++uprightMeasured;
    upright += lean < 1.0 ? 1 : 0;
  }
  MESSAGE(leaning, " of ", measured, " tilted trunks lean 20 +- 3 degrees; ", upright, " of ", uprightMeasured,
          " upright ones under 1 degree");
  CHECK(measured >= 5);
  CHECK(leaning == measured);
  CHECK(std::hypot(east, north) < 0.6 * measured);  // headings keyed per tree, not one for all
  CHECK(upright == uprightMeasured);

  // Stretched rocks: the ratio of a rock's longest horizontal extent to its width
  // across it (from the second moments of its voxels' columns), for rocks whose
  // bounds meet no other rock's.
  auto elongation = [&](const BrickStore& w, const FeatureInfo& f) {
    double n = 0, mx = 0, mz = 0, xx = 0, zz = 0, xz = 0;
    for (std::int32_t z = f.bounds.min.z; z < f.bounds.max.z; ++z)
      for (std::int32_t x = f.bounds.min.x; x < f.bounds.max.x; ++x)
        for (std::int32_t y = f.bounds.min.y; y < f.bounds.max.y; ++y)
          if (w.get(x, y, z) == rock) {
            n += 1, mx += x, mz += z, xx += double(x) * x, zz += double(z) * z, xz += double(x) * z;
            break;
          }
    mx /= n, mz /= n;
    const double a11 = xx / n - mx * mx, a22 = zz / n - mz * mz, a12 = xz / n - mx * mz;
    const double mid = (a11 + a22) / 2, half = std::sqrt((a11 - a22) * (a11 - a22) / 4 + a12 * a12);
    return std::sqrt((mid + half) / std::max(mid - half, 1e-9));
  };
  auto alone = [](const std::vector<FeatureInfo>& all, const FeatureInfo& f) {
    for (const FeatureInfo& o : all)
      if (o.id.rule == 1 && !(o.id == f.id) && o.bounds.min.x < f.bounds.max.x && f.bounds.min.x < o.bounds.max.x &&
          o.bounds.min.z < f.bounds.max.z && f.bounds.min.z < o.bounds.max.z)
        return false;
    return true;
  };
  int long2 = 0, rocks = 0;
  const std::vector<FeatureInfo> fb = enumerateFeatures(b, 3);
  for (const FeatureInfo& f : fb) {
    if (f.id.rule != 1 || !alone(fb, f)) continue;
    ++rocks;
    long2 += elongation(wb, f) > 1.5 ? 1 : 0;
  }
  int round = 0, roundRocks = 0;
  const std::vector<FeatureInfo> fa = enumerateFeatures(a, 3);
  for (const FeatureInfo& f : fa) {
    if (f.id.rule != 1 || !alone(fa, f)) continue;
    ++roundRocks;
    round += elongation(wa, f) < 1.35 ? 1 : 0;
  }
  MESSAGE(long2, " of ", rocks, " stretched rocks over 1.5 times longer than wide; ", round, " of ", roundRocks,
          " plain ones under 1.35");
  CHECK(rocks >= 3);
  CHECK(long2 == rocks);
  CHECK(round == roundRocks);

  // Locality: what changed lies within the changed rules' features.
  auto allowed = ruleCells(a, 0);
  for (int rule : {0, 1}) {
    for (auto c : ruleCells(b, rule)) allowed.insert(c);
    for (auto c : ruleCells(a, rule)) allowed.insert(c);
  }
  checkSubset(changedCells(a, b), allowed);
}

TEST_CASE("features have stable ids: removing a rule leaves the others in place") {
  Scene a = parse(kLocality);
  Scene b = parse(replaced(kLocality, "density = 0.5", "density = 0.0"));  // grass off
  auto fa = enumerateFeatures(a, 3), fb = enumerateFeatures(b, 3);
  std::vector<FeatureInfo> keptA;
  for (const FeatureInfo& f : fa) {
    if (f.id.rule != 2) keptA.push_back(f);
  }
  REQUIRE(keptA.size() == fb.size());
  for (size_t i = 0; i < fb.size(); ++i) {
    CHECK(keptA[i].id == fb[i].id);
    CHECK(keptA[i].position.x == fb[i].position.x);
    CHECK(keptA[i].position.z == fb[i].position.z);
  }
}

TEST_CASE("every shipped scene generates a sane world") {
  for (const char* name : {"glade", "court", "flat", "forest-fires"}) {
    CAPTURE(name);
    Scene s = loadShipped(name);
    BrickStore w = generate(s, s.defaultSeed);
    const MaterialTable& mats = *s.materials;
    CHECK(w.modifiedCount() == 0);
    std::size_t mixed = 0;
    w.forEachBrick([&](BrickCoord, BrickView) { ++mixed; }, BrickFilter::Mixed);
    CHECK(mixed > 0);
    // Spawn points stand on solid, dry ground inside the world.
    for (const SpawnPoint& sp : s.spawns) {
      VoxelCoord v = placementVoxel(s, s.defaultSeed, sp.position, sp.onGround);
      CAPTURE(sp.name);
      CAPTURE(v.x);
      CAPTURE(v.y);
      CAPTURE(v.z);
      CHECK(w.bounds().containsVoxel(v));
      MaterialId below = w.get(v.x, v.y - 1, v.z);
      CHECK(mats[below].solid);
      CHECK(!mats[below].liquid);
      CHECK(!mats[w.get(v)].liquid);
    }
    for (const AnimalDen& d : s.dens) {
      CHECK(w.bounds().containsVoxel(placementVoxel(s, s.defaultSeed, d.position, d.onGround)));
    }
  }
}

TEST_CASE("glade has what the issue asks for") {
  Scene s = loadShipped("glade");
  CHECK((s.worldBounds.maxBrick.x - s.worldBounds.minBrick.x) * kBrickSize >= 128 * kVoxelsPerMetre);
  CHECK((s.worldBounds.maxBrick.z - s.worldBounds.minBrick.z) * kBrickSize >= 128 * kVoxelsPerMetre);
  REQUIRE(!s.spawns.empty());
  const Vec3 spawn = s.spawns[0].position;
  bool waterfall = false;
  for (const WaterSource& w : s.waterSources) {
    if (w.kind != WaterSourceKind::Waterfall) continue;
    double dx = w.position.x - spawn.x, dz = w.position.z - spawn.z;
    double d2 = dx * dx + dz * dz;
    waterfall = waterfall || (d2 > 12.0 * 12.0 && d2 < 16.0 * 16.0);
  }
  CHECK(waterfall);
  CHECK(!s.ponds.empty());
  CHECK(!s.streams.empty());
  bool longTunnel = false;
  for (const Tunnel& t : s.tunnels) {
    double len = 0;
    for (size_t i = 0; i + 1 < t.points.size(); ++i) {
      double dx = t.points[i + 1].x - t.points[i].x, dy = t.points[i + 1].y - t.points[i].y,
             dz = t.points[i + 1].z - t.points[i].z;
      len += std::sqrt(dx * dx + dy * dy + dz * dz);
    }
    longTunnel = longTunnel || len >= 20.0;
  }
  CHECK(longTunnel);
  int trees = 0, grass = 0, rocks = 0;
  for (const FeatureInfo& f : enumerateFeatures(s, 1)) {
    trees += f.kind == ScatterKind::Tree;
    grass += f.kind == ScatterKind::Grass;
    rocks += f.kind == ScatterKind::Rock;
    if (f.kind == ScatterKind::Tree) CHECK(!f.leafClusters.empty());
  }
  CHECK(trees > 50);
  CHECK(grass > 100);
  CHECK(rocks > 10);
  // Water is in the world: the pond centre column holds water voxels.
  BrickStore w = generate(s, 1);
  TerrainColumn c = terrainColumnAt(s, 1, static_cast<std::int32_t>(s.ponds[0].center.x * kVoxelsPerMetre),
                                    static_cast<std::int32_t>(s.ponds[0].center.z * kVoxelsPerMetre));
  REQUIRE(c.water > c.ground);
  MaterialId m = w.get(static_cast<int>(s.ponds[0].center.x * kVoxelsPerMetre), c.ground,
                       static_cast<int>(s.ponds[0].center.z * kVoxelsPerMetre));
  CHECK((*s.materials)[m].liquid);
  // The tunnel is a tunnel: air at its middle point with solid rock above it.
  const Tunnel& t = s.tunnels[0];
  const Vec3 mid = t.points[1];
  int vx = static_cast<int>(mid.x * kVoxelsPerMetre), vz = static_cast<int>(mid.z * kVoxelsPerMetre);
  int vy = static_cast<int>((mid.y + 0.5) * kVoxelsPerMetre);
  CHECK(w.get(vx, vy, vz) == kAir);
  CHECK((*s.materials)[w.get(vx, vy + static_cast<int>(3.0 * kVoxelsPerMetre), vz)].solid);
}

namespace {

/// Every chunk column of the scene's bounds, in canonical (z, x) order.
std::vector<ChunkColumn> allColumns(const WorldBounds& wb) {
  std::vector<ChunkColumn> out;
  for (std::int32_t cz = wb.minBrick.z >> kChunkShift; cz < (wb.maxBrick.z >> kChunkShift); ++cz)
    for (std::int32_t cx = wb.minBrick.x >> kChunkShift; cx < (wb.maxBrick.x >> kChunkShift); ++cx)
      out.push_back({cx, cz});
  return out;
}

/// Bricks of column c that differ between a and b (content, voxel by voxel).
int differingBricks(const BrickStore& a, const BrickStore& b, ChunkColumn c) {
  const WorldBounds& wb = a.bounds();
  int differ = 0;
  MaterialId va[kBrickVoxels], vb[kBrickVoxels];
  for (std::int32_t cy = wb.minBrick.y >> kChunkShift; cy < (wb.maxBrick.y >> kChunkShift); ++cy) {
    for (int local = 0; local < kChunkBricks * kChunkBricks * kChunkBricks; ++local) {
      const BrickCoord b0{c.x * kChunkBricks + (local & 15), cy * kChunkBricks + ((local >> 4) & 15),
                          c.z * kChunkBricks + (local >> 8)};
      a.readBrick(b0, va);
      b.readBrick(b0, vb);
      if (std::memcmp(va, vb, sizeof va) != 0) ++differ;
    }
  }
  return differ;
}

}  // namespace

TEST_CASE("on demand: columns generated one at a time, on two threads, adopted in any order, equal the whole world") {
  Scene glade = loadShipped("glade");
  const BrickStore whole = generate(glade, 1);
  auto gen = ChunkGenerator::create(glade, 1);
  REQUIRE_MESSAGE(gen.has_value(), (gen ? "" : gen.error().message));

  // Each column into a store of its own, half of them on a second thread.
  std::vector<ChunkColumn> columns = allColumns(glade.worldBounds);
  std::vector<BrickStore> parts;
  for (std::size_t i = 0; i < columns.size(); ++i) parts.emplace_back(glade.worldBounds);
  std::thread other([&] {
    for (std::size_t i = 1; i < columns.size(); i += 2) gen->generateColumn(columns[i], parts[i]);
  });
  for (std::size_t i = 0; i < columns.size(); i += 2) gen->generateColumn(columns[i], parts[i]);
  other.join();

  // Adopted into a world that starts empty, in a keyed shuffle.
  BrickStore world(glade.worldBounds);
  world.markGenerated();
  std::vector<std::pair<std::uint64_t, std::size_t>> order;
  for (std::size_t i = 0; i < columns.size(); ++i)
    order.push_back({genHash(99, GenPurpose::ChunkOrder, columns[i].x, columns[i].z), i});
  std::sort(order.begin(), order.end());
  int adopted = 0;
  for (const auto& [key, i] : order) adopted += world.adoptChunks(parts[i]);

  CHECK(adopted == whole.chunkCount());
  CHECK(world.chunkCount() == whole.chunkCount());
  const WorldHashes a = hashContent(world), b = hashContent(whole);
  CHECK(a.world == b.world);
  CHECK(a.cells == b.cells);
  // Adopted chunks are generated content: nothing is modified, the world hash is
  // the generated world's, and an edit and its undo move both worlds alike.
  CHECK(world.modifiedCount() == 0);
  CHECK(worldHash(world) == worldHash(whole));
  BrickStore edited = whole;
  const VoxelCoord v{100, static_cast<std::int32_t>(terrainColumnAt(glade, 1, 100, 100).ground) - 1, 100};
  const MaterialId was = world.get(v);
  REQUIRE(was != kAir);
  world.set(v, kAir);
  edited.set(v, kAir);
  CHECK(worldHash(world) == worldHash(edited));
  CHECK(worldHash(world) != worldHash(whole));
  world.set(v, was);
  CHECK(worldHash(world) == worldHash(whole));
  // A chunk already resident (it may hold edits) is never replaced.
  BrickStore again(glade.worldBounds);
  gen->generateColumn(columns[0], again);
  CHECK(world.adoptChunks(again) == 0);
}

TEST_CASE("a region: a chunk column generated alone equals the same column generated with its neighbours") {
  Scene glade = loadShipped("glade");
  const BrickStore whole = generate(glade, 1);
  // A 20 m radius around a point near the middle: a handful of columns.
  const std::vector<ChunkColumn> near = columnsAround(glade.worldBounds, 300, 300, 400);
  REQUIRE(near.size() >= 4);
  auto region = generateRegion(glade, 1, near);
  REQUIRE_MESSAGE(region.has_value(), (region ? "" : region.error().message));
  for (ChunkColumn c : near) {
    CAPTURE(c.x);
    CAPTURE(c.z);
    auto alone = generateRegion(glade, 1, std::vector<ChunkColumn>{c}, kGeneratorVersion, GenerateOptions{1, 0, {}});
    REQUIRE(alone.has_value());
    CHECK(differingBricks(*alone, whole, c) == 0);
    CHECK(differingBricks(*region, whole, c) == 0);
  }
  // Outside the region nothing was generated.
  const ChunkColumn far{(glade.worldBounds.minBrick.x >> kChunkShift), (glade.worldBounds.minBrick.z >> kChunkShift)};
  CHECK(std::find(near.begin(), near.end(), far) == near.end());
  for (int i : region->canonicalChunks()) {
    const ChunkCoord cc = region->chunkCoord(i);
    CHECK(std::find(near.begin(), near.end(), ChunkColumn{cc.x, cc.z}) != near.end());
  }
  // A column outside the bounds is an error, not a crash.
  auto outside = generateRegion(glade, 1, std::vector<ChunkColumn>{{1 << 19, 0}});
  REQUIRE(!outside);
  CHECK(outside.error().message.find("outside the world bounds") != std::string::npos);
}

TEST_CASE("columnsAround lists the columns within the radius, nearest first, clipped to the bounds") {
  WorldBounds wb{{-64, 0, -64}, {64, 32, 64}};  // 8 x 8 chunk columns
  const std::vector<ChunkColumn> one = columnsAround(wb, 5, 5, 0);
  REQUIRE(one.size() == 1);
  CHECK(one[0] == ChunkColumn{0, 0});
  const std::vector<ChunkColumn> ring = columnsAround(wb, 64, 64, 200);  // centre of column (0, 0)
  REQUIRE(ring.size() >= 9);
  CHECK(ring[0] == ChunkColumn{0, 0});
  std::int64_t last = 0;
  for (ChunkColumn c : ring) {
    const std::int64_t dx = c.x < 0 ? 64 - (c.x * 128 + 127) : (c.x > 0 ? c.x * 128 - 64 : 0);
    const std::int64_t dz = c.z < 0 ? 64 - (c.z * 128 + 127) : (c.z > 0 ? c.z * 128 - 64 : 0);
    const std::int64_t d2 = dx * dx + dz * dz;
    CHECK(d2 <= 200 * 200);
    CHECK(d2 >= last);
    last = d2;
  }
  // The whole world fits in a large radius; nothing outside it is listed.
  CHECK(columnsAround(wb, 0, 0, 1 << 20).size() == 64);
  CHECK(columnsAround(wb, 10'000'000, 0, 100).empty());
  CHECK(columnsAround(wb, 0, 0, -1).empty());
}

TEST_CASE("a chunk does not depend on the world's bounds: glade's middle in a +-32 km world equals glade's") {
  Scene glade = loadShipped("glade");
  std::ifstream in(std::string(LOAM_SOURCE_DIR) + "/scenes/glade.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text = replaced(text, "min = [-64.0, -6.4, -64.0]", "min = [-32768.0, -6.4, -32768.0]");
  text = replaced(text, "max = [64.0, 25.6, 64.0]", "max = [32768.0, 25.6, 32768.0]");
  auto big = parseScene(text, "glade-32km.toml", materials());
  REQUIRE_MESSAGE(big.has_value(), (big ? "" : big.error().message));
  // Whole, it is refused with a reason (not allocated); by region it is cheap.
  auto whole = generateWorld(*big, 1);
  REQUIRE(!whole);
  CHECK(whole.error().message.find("too many to generate whole") != std::string::npos);
  const std::vector<ChunkColumn> middle = columnsAround(glade.worldBounds, 0, 0, 200);  // 10 m
  REQUIRE(!middle.empty());
  auto small = generateRegion(glade, 1, middle);
  auto wide = generateRegion(*big, 1, middle);
  REQUIRE(small.has_value());
  REQUIRE(wide.has_value());
  for (ChunkColumn c : middle) CHECK(differingBricks(*small, *wide, c) == 0);
  // Far out, the same rules make ground too.
  auto far = generateRegion(*big, 1, columnsAround(big->worldBounds, 600'000, -400'000, 100));
  REQUIRE(far.has_value());
  CHECK(far->chunkCount() > 0);
  CHECK(far->memoryBytes() < 64u << 20);
}
