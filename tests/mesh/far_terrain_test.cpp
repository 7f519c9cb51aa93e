#include "mesh/far_terrain.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sim/gen/scene.h"
#include "sim/world/voxel.h"

using namespace loam;
using namespace loam::mesh;

namespace {

const sim::TerrainSampler& gladeSampler() {
  static const std::shared_ptr<const sim::TerrainSampler> sampler = [] {
    auto scene = sim::loadScene(LOAM_SOURCE_DIR "/scenes/glade.toml");
    REQUIRE_MESSAGE(scene.has_value(), (scene ? "" : scene.error().message));
    return std::make_shared<const sim::TerrainSampler>(*scene, scene->defaultSeed);
  }();
  return *sampler;
}

std::shared_ptr<const sim::TerrainSampler> gladeSamplerPtr() {
  return std::shared_ptr<const sim::TerrainSampler>(&gladeSampler(), [](const sim::TerrainSampler*) {});
}

/// A tile's square in level-0 tile units: [x0, x1) x [z0, z1).
struct Square {
  std::int64_t x0, z0, x1, z1;
};

Square squareOf(const FarTileKey& k) {
  const std::int64_t n = std::int64_t{1} << k.level;
  return {k.x * n, k.z * n, (k.x + 1) * n, (k.z + 1) * n};
}

/// The segment two squares share (positive length), in level-0 tile units, or false.
bool sharedEdge(const Square& a, const Square& b, std::array<std::int64_t, 4>& seg) {
  const std::int64_t zlo = std::max(a.z0, b.z0), zhi = std::min(a.z1, b.z1);
  const std::int64_t xlo = std::max(a.x0, b.x0), xhi = std::min(a.x1, b.x1);
  if ((a.x1 == b.x0 || b.x1 == a.x0) && zlo < zhi) {
    const std::int64_t x = a.x1 == b.x0 ? a.x1 : a.x0;
    seg = {x, zlo, x, zhi};
    return true;
  }
  if ((a.z1 == b.z0 || b.z1 == a.z0) && xlo < xhi) {
    const std::int64_t z = a.z1 == b.z0 ? a.z1 : a.z0;
    seg = {xlo, z, xhi, z};
    return true;
  }
  return false;
}

struct Eye {
  double x, z;
};

const std::vector<Eye> kEyes = {{0.0, 0.0},        {13.3, -7.9},     {-1234.5, 777.3}, {12345.67, -9876.54},
                                {-0.3, -25.7},     {25.6, 51.2},     {-819.2, 409.6}};

const std::vector<FarTerrainConfig> kConfigs = {
    {0.8, 96.0, 600.0}, {0.8, 96.0, 2048.0}, {0.5, 40.0, 1500.0}, {0.8, 0.0, 700.0}};

double distanceTo(const Eye& e, double x, double z) { return std::hypot(x - e.x, z - e.z); }

}  // namespace

TEST_CASE("far terrain: level sizes, top level and morph bands") {
  const FarTerrainConfig c;  // 0.8 m cells, far 2048 m
  CHECK(farCellMetres(c, 0) == 0.8);
  CHECK(farCellMetres(c, 3) == doctest::Approx(6.4));
  CHECK(farTileMetres(c, 0) == doctest::Approx(25.6));
  CHECK(farTopLevel(c) == 5);  // 3 * 819.2 >= 2048 > 3 * 409.6
  CHECK(farTopLevel({0.8, 96.0, 8192.0}) == 7);
  CHECK(farTopLevel({0.8, 96.0, 10.0}) == 0);
  for (int level = 0; level < kFarMaxLevels; ++level) {
    const auto r = farMorphRange(c, level);
    CHECK(r[0] < r[1]);
    CHECK(r[0] > kFarSplit * farTileMetres(c, level) + std::sqrt(2.0) * farTileMetres(c, level));
  }
}

TEST_CASE("far terrain: leaves do not overlap and cover the disc once") {
  for (const FarTerrainConfig& c : kConfigs) {
    for (const Eye& e : kEyes) {
      CAPTURE(c.farMetres);
      CAPTURE(e.x);
      CAPTURE(e.z);
      const std::vector<FarTileKey> leaves = selectFarTiles(c, e.x, e.z);
      REQUIRE(!leaves.empty());
      CHECK(std::is_sorted(leaves.begin(), leaves.end()));
      CHECK(std::adjacent_find(leaves.begin(), leaves.end()) == leaves.end());
      std::vector<Square> squares;
      for (const FarTileKey& k : leaves) {
        CHECK(k.level >= 0);
        CHECK(k.level <= farTopLevel(c));
        squares.push_back(squareOf(k));
      }
      int overlaps = 0;
      for (std::size_t a = 0; a < squares.size(); ++a)
        for (std::size_t b = a + 1; b < squares.size(); ++b) {
          const Square& p = squares[a];
          const Square& q = squares[b];
          if (p.x0 < q.x1 && q.x0 < p.x1 && p.z0 < q.z1 && q.z0 < p.z1) ++overlaps;
        }
      CHECK(overlaps == 0);
      // A grid of points (not aligned with the tiles) over the square around the eye.
      const double tile0 = farTileMetres(c, 0);
      const double inner = c.nearMetres + tile0;
      const double step = c.farMetres / 40.0;
      int inDisc = 0, bad = 0;
      for (double pz = e.z - c.farMetres + 0.37 * step; pz < e.z + c.farMetres; pz += step)
        for (double px = e.x - c.farMetres + 0.61 * step; px < e.x + c.farMetres; px += step) {
          const double d = distanceTo(e, px, pz);
          if (d < inner || d > c.farMetres) continue;
          ++inDisc;
          int holders = 0;
          for (const FarTileKey& k : leaves) {
            const double s = farTileMetres(c, k.level);
            if (px >= k.x * s && px < (k.x + 1) * s && pz >= k.z * s && pz < (k.z + 1) * s) ++holders;
          }
          if (holders != 1) ++bad;
        }
      CHECK(inDisc > 1000);
      CHECK(bad == 0);
      // The near hole and the far rim: no leaf lies wholly within nearMetres or beyond farMetres.
      for (const FarTileKey& k : leaves) {
        const double s = farTileMetres(c, k.level);
        const double x0 = k.x * s, z0 = k.z * s;
        const double dx = std::max({x0 - e.x, 0.0, e.x - (x0 + s)}), dz = std::max({z0 - e.z, 0.0, e.z - (z0 + s)});
        CHECK(std::hypot(dx, dz) <= c.farMetres);
        const double fx = std::max(std::abs(e.x - x0), std::abs(e.x - x0 - s));
        const double fz = std::max(std::abs(e.z - z0), std::abs(e.z - z0 - s));
        CHECK(std::hypot(fx, fz) > c.nearMetres);
      }
    }
  }
}

TEST_CASE("far terrain: neighbouring leaves differ by at most one level; morph bands close seams") {
  for (const FarTerrainConfig& c : kConfigs) {
    int sameLevel = 0, coarseFine = 0;
    for (const Eye& e : kEyes) {
      CAPTURE(c.farMetres);
      CAPTURE(e.x);
      CAPTURE(e.z);
      const std::vector<FarTileKey> leaves = selectFarTiles(c, e.x, e.z);
      const double tile0 = farTileMetres(c, 0);
      for (std::size_t a = 0; a < leaves.size(); ++a)
        for (std::size_t b = 0; b < leaves.size(); ++b) {
          if (a == b) continue;
          std::array<std::int64_t, 4> seg{};
          if (!sharedEdge(squareOf(leaves[a]), squareOf(leaves[b]), seg)) continue;
          const FarTileKey& coarse = leaves[a];
          const FarTileKey& fine = leaves[b];
          CHECK(std::abs(coarse.level - fine.level) <= 1);
          if (coarse.level == fine.level) ++sameLevel;
          if (coarse.level != fine.level + 1) continue;
          ++coarseFine;
          // The finer leaf is fully morphed along the edge (on its parent's surface,
          // which there is the coarser leaf's edge), and the coarser one not at all.
          const double fineEnd = farMorphRange(c, fine.level)[1];
          const double coarseStart = farMorphRange(c, coarse.level)[0];
          double nearest = 1e300, farthest = 0;
          for (int t = 0; t <= 64; ++t) {
            const double u = t / 64.0;
            const double x = (seg[0] + u * static_cast<double>(seg[2] - seg[0])) * tile0;
            const double z = (seg[1] + u * static_cast<double>(seg[3] - seg[1])) * tile0;
            nearest = std::min(nearest, distanceTo(e, x, z));
            farthest = std::max(farthest, distanceTo(e, x, z));
          }
          CHECK(nearest >= fineEnd * (1.0 - 1e-12));
          CHECK(farthest < coarseStart);
        }
    }
    CHECK(sameLevel > 0);
    CHECK(coarseFine > 0);
  }
}

TEST_CASE("far terrain: the index list winds up and out, and stays in range") {
  const std::span<const std::uint16_t> idx = farTileIndices();
  REQUIRE(idx.size() == static_cast<std::size_t>((kFarTileCells * kFarTileCells * 2 + 4 * kFarTileCells * 2) * 3));
  const FarTerrainConfig c;
  const FarTileMesh tile = buildFarTile(gladeSampler(), c, {0, 0, 0});
  REQUIRE(tile.vertices.size() == static_cast<std::size_t>(kFarTileVertices));
  // Positions from the vertices' own (i, j, skirt): flat grid at y 0, skirts at y -1.
  auto pos = [&](std::uint16_t v) {
    const FarVertex& fv = tile.vertices[v];
    return std::array<double, 3>{double(fv.i), fv.skirt ? -1.0 : 0.0, double(fv.j)};
  };
  int grid = 0, skirt = 0, bad = 0;
  std::set<std::uint16_t> used;
  for (std::size_t t = 0; t < idx.size(); t += 3) {
    for (int k = 0; k < 3; ++k) {
      REQUIRE(idx[t + k] < kFarTileVertices);
      used.insert(idx[t + k]);
    }
    const auto a = pos(idx[t]), b = pos(idx[t + 1]), cc = pos(idx[t + 2]);
    const std::array<double, 3> u{b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const std::array<double, 3> v{cc[0] - a[0], cc[1] - a[1], cc[2] - a[2]};
    const std::array<double, 3> n{u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    const int skirts = tile.vertices[idx[t]].skirt + tile.vertices[idx[t + 1]].skirt + tile.vertices[idx[t + 2]].skirt;
    if (skirts == 0) {
      ++grid;
      if (!(n[1] > 0)) ++bad;
    } else {
      ++skirt;
      // Outward: horizontal normal pointing away from the tile's centre.
      const double cx = (a[0] + b[0] + cc[0]) / 3 - kFarTileCells / 2.0;
      const double cz = (a[2] + b[2] + cc[2]) / 3 - kFarTileCells / 2.0;
      if (n[1] != 0 || !(n[0] * cx + n[2] * cz > 0) || n[0] * n[2] != 0) ++bad;
    }
  }
  CHECK(grid == kFarTileCells * kFarTileCells * 2);
  CHECK(skirt == 4 * kFarTileCells * 2);
  CHECK(bad == 0);
  CHECK(used.size() == static_cast<std::size_t>(kFarTileVertices));
}

TEST_CASE("far terrain: tiles sample the generator's terrain") {
  const sim::TerrainSampler& sampler = gladeSampler();
  const FarTerrainConfig c;
  // Negative grid lines such as -106 are where n * 0.8 * 20 rounds below 16n.
  for (const FarTileKey key : {FarTileKey{0, 0, 0}, FarTileKey{0, -1, 2}, FarTileKey{0, -4, -4}, FarTileKey{1, -2, -3},
                               FarTileKey{2, -1, -1}, FarTileKey{3, 0, 0}}) {
    CAPTURE(key.level);
    CAPTURE(key.x);
    CAPTURE(key.z);
    const FarTileMesh tile = buildFarTile(sampler, c, key);
    REQUIRE(tile.vertices.size() == static_cast<std::size_t>(kFarTileVertices));
    CHECK(tile.key == key);
    // 0.8 m cells are 16 voxels: grid line n is voxel column n * 16 * 2^level exactly.
    const std::int32_t cellVoxels = 16 << key.level;
    auto sample = [&](int i, int j) {
      return sampler.at((key.x * kFarTileCells + i) * cellVoxels, (key.z * kFarTileCells + j) * cellVoxels);
    };
    auto heightOf = [](const sim::TerrainSample& s) {
      return static_cast<float>(std::max(s.column.ground, s.column.water)) / sim::kVoxelsPerMetre;
    };
    int wrongHeight = 0, wrongMaterial = 0, wrongNormal = 0, wrongParent = 0;
    float lo = 1e30f, hi = -1e30f;
    auto v = [&](int i, int j) -> const FarVertex& {
      return tile.vertices[static_cast<std::size_t>(j * kFarTileSide + i)];
    };
    const double cell = farCellMetres(c, key.level);
    for (int j = 0; j < kFarTileSide; ++j)
      for (int i = 0; i < kFarTileSide; ++i) {
        const FarVertex& fv = v(i, j);
        const sim::TerrainSample s = sample(i, j);
        if (fv.i != i || fv.j != j || fv.skirt != 0 || fv.height != heightOf(s)) ++wrongHeight;
        const sim::MaterialId m = s.column.water > s.column.ground ? s.waterMaterial : s.surface;
        if (fv.material != m) ++wrongMaterial;
        lo = std::min(lo, fv.height);
        hi = std::max(hi, fv.height);
        // Normal from the sampler's central differences.
        const double gx = -(heightOf(sample(i + 1, j)) - heightOf(sample(i - 1, j))) / (2 * cell);
        const double gz = -(heightOf(sample(i, j + 1)) - heightOf(sample(i, j - 1))) / (2 * cell);
        const double len = std::sqrt(gx * gx + 1 + gz * gz);
        if (std::abs(fv.nx - gx / len * 127) > 0.51 || std::abs(fv.nz - gz / len * 127) > 0.51) ++wrongNormal;
        // The parent's surface: its own vertices, edge midpoints, and its diagonal.
        float parent = fv.height;
        if (i % 2 == 1 && j % 2 == 0) parent = 0.5f * (v(i - 1, j).height + v(i + 1, j).height);
        if (i % 2 == 0 && j % 2 == 1) parent = 0.5f * (v(i, j - 1).height + v(i, j + 1).height);
        if (i % 2 == 1 && j % 2 == 1) parent = 0.5f * (v(i - 1, j - 1).height + v(i + 1, j + 1).height);
        if (fv.parentHeight != parent) ++wrongParent;
      }
    CHECK(wrongHeight == 0);
    CHECK(wrongMaterial == 0);
    CHECK(wrongNormal == 0);
    CHECK(wrongParent == 0);
    CHECK(hi - lo > 0.5f);  // the glade is not flat here: the checks above mean something
    // Skirts: the edge vertices lowered by kFarSkirtCells cells.
    const auto depth = static_cast<float>(kFarSkirtCells * cell);
    int wrongSkirt = 0;
    for (int s = 0; s < 4; ++s)
      for (int k = 0; k < kFarTileSide; ++k) {
        const int i = s == 1 ? kFarTileCells : s == 3 ? 0 : k;
        const int j = s == 0 ? 0 : s == 2 ? kFarTileCells : k;
        const FarVertex& e = v(i, j);
        const FarVertex& sv = tile.vertices[static_cast<std::size_t>(kFarGridVertices + s * kFarTileSide + k)];
        if (sv.skirt != 1 || sv.i != i || sv.j != j || sv.height != e.height - depth ||
            sv.parentHeight != e.parentHeight - depth || sv.material != e.material || sv.nx != e.nx || sv.nz != e.nz)
          ++wrongSkirt;
        lo = std::min(lo, sv.height);
      }
    CHECK(wrongSkirt == 0);
    CHECK(tile.minY == lo);
    CHECK(tile.maxY == hi);
  }
}

TEST_CASE("far terrain: neighbouring tiles meet") {
  const sim::TerrainSampler& sampler = gladeSampler();
  const FarTerrainConfig c;
  auto vertex = [](const FarTileMesh& t, int i, int j) -> const FarVertex& {
    return t.vertices[static_cast<std::size_t>(j * kFarTileSide + i)];
  };

  SUBCASE("same level: the shared edge has the same heights") {
    for (int level : {0, 2}) {
      const FarTileMesh a = buildFarTile(sampler, c, {level, -1, 0});
      const FarTileMesh east = buildFarTile(sampler, c, {level, 0, 0});
      const FarTileMesh south = buildFarTile(sampler, c, {level, -1, 1});
      for (int k = 0; k < kFarTileSide; ++k) {
        CHECK(vertex(a, kFarTileCells, k).height == vertex(east, 0, k).height);
        CHECK(vertex(a, kFarTileCells, k).parentHeight == vertex(east, 0, k).parentHeight);
        CHECK(vertex(a, k, kFarTileCells).height == vertex(south, k, 0).height);
        CHECK(vertex(a, k, kFarTileCells).parentHeight == vertex(south, k, 0).parentHeight);
      }
    }
  }

  SUBCASE("coarser neighbour: the fully morphed edge lies on its edge") {
    // Fine tiles in a corner of their parent, and the parent's level neighbours they touch.
    struct Pair {
      FarTileKey fine, coarse;
    };
    const std::vector<Pair> pairs = {
        {{0, 1, 1}, {1, 1, 0}},    // east
        {{0, 1, 1}, {1, 0, 1}},    // south
        {{0, -2, -2}, {1, -2, -1}},  // west
        {{0, -2, -2}, {1, -1, -2}},  // north
        {{2, 1, 0}, {3, 1, 0}},    // east, a coarser level
    };
    for (const Pair& p : pairs) {
      CAPTURE(p.coarse.x);
      CAPTURE(p.coarse.z);
      const FarTileMesh fine = buildFarTile(sampler, c, p.fine);
      const FarTileMesh coarse = buildFarTile(sampler, c, p.coarse);
      // In fine-cell units: the fine tile's vertices and the coarse tile's square.
      const std::int64_t cx0 = std::int64_t{p.coarse.x} * 2 * kFarTileCells;
      const std::int64_t cz0 = std::int64_t{p.coarse.z} * 2 * kFarTileCells;
      const std::int64_t span = 2 * kFarTileCells;
      int matched = 0, differ = 0;
      for (int j = 0; j < kFarTileSide; ++j)
        for (int i = 0; i < kFarTileSide; ++i) {
          const std::int64_t ci = std::int64_t{p.fine.x} * kFarTileCells + i - cx0;
          const std::int64_t cj = std::int64_t{p.fine.z} * kFarTileCells + j - cz0;
          const bool onEdge = ((ci == 0 || ci == span) && cj >= 0 && cj <= span) ||
                              ((cj == 0 || cj == span) && ci >= 0 && ci <= span);
          if (!onEdge) continue;
          ++matched;
          // The coarse tile's surface along its edge: its vertex, or the mean of the two.
          float surface = 0;
          if (ci % 2 == 0 && cj % 2 == 0) {
            surface = vertex(coarse, int(ci / 2), int(cj / 2)).height;
          } else if (ci % 2 != 0) {
            surface = 0.5f * (vertex(coarse, int(ci / 2), int(cj / 2)).height +
                              vertex(coarse, int(ci / 2) + 1, int(cj / 2)).height);
          } else {
            surface = 0.5f * (vertex(coarse, int(ci / 2), int(cj / 2)).height +
                              vertex(coarse, int(ci / 2), int(cj / 2) + 1).height);
          }
          if (vertex(fine, i, j).parentHeight != surface) ++differ;
        }
      CHECK(matched == kFarTileSide);
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("far terrain: the cache builds the selection and releases what it leaves") {
  const FarTerrainConfig c{0.8, 96.0, 1024.0};
  FarTerrainCache cache(gladeSamplerPtr(), c, 2);
  CHECK(cache.config().farMetres == 1024.0);

  const FarTerrainUpdate first = cache.finish(10.0, -20.0);
  std::vector<FarTileKey> built;
  for (const FarTileMesh& m : first.built) {
    CHECK(m.vertices.size() == static_cast<std::size_t>(kFarTileVertices));
    built.push_back(m.key);
  }
  std::sort(built.begin(), built.end());
  const std::vector<FarTileKey> wantFirst = selectFarTiles(c, 10.0, -20.0);
  CHECK(built == wantFirst);  // each exactly once
  CHECK(cache.drawn() == wantFirst);
  CHECK(first.released.empty());
  CHECK(cache.idle());
  CHECK(cache.update(10.0, -20.0).built.empty());

  // 1 km east: what both selections share stays; the rest is built or released.
  const FarTerrainUpdate second = cache.finish(1010.0, -20.0);
  const std::vector<FarTileKey> wantSecond = selectFarTiles(c, 1010.0, -20.0);
  CHECK(cache.drawn() == wantSecond);
  std::vector<FarTileKey> rebuilt, released = second.released, kept, gone, fresh;
  for (const FarTileMesh& m : second.built) rebuilt.push_back(m.key);
  std::sort(rebuilt.begin(), rebuilt.end());
  std::sort(released.begin(), released.end());
  std::set_intersection(wantFirst.begin(), wantFirst.end(), wantSecond.begin(), wantSecond.end(),
                        std::back_inserter(kept));
  std::set_difference(wantFirst.begin(), wantFirst.end(), wantSecond.begin(), wantSecond.end(),
                      std::back_inserter(gone));
  std::set_difference(wantSecond.begin(), wantSecond.end(), wantFirst.begin(), wantFirst.end(),
                      std::back_inserter(fresh));
  REQUIRE(!kept.empty());
  REQUIRE(!gone.empty());
  CHECK(rebuilt == fresh);
  CHECK(released == gone);  // every released key was built before, and released once
  CHECK(cache.idle());
}

TEST_CASE("far terrain: the cache hands each tile out once while the eye keeps moving") {
  const FarTerrainConfig c{0.8, 96.0, 600.0};
  FarTerrainCache cache(gladeSamplerPtr(), c, 2);
  std::set<FarTileKey> out;  // handed out and not released
  int twice = 0, unknownRelease = 0, unwanted = 0, drawnNotOut = 0;
  auto take = [&](const FarTerrainUpdate& u, double x, double z) {
    const std::vector<FarTileKey> want = selectFarTiles(c, x, z);
    for (const FarTileMesh& m : u.built) {
      if (!out.insert(m.key).second) ++twice;
      if (!std::binary_search(want.begin(), want.end(), m.key)) ++unwanted;
    }
    for (const FarTileKey& k : u.released)
      if (out.erase(k) != 1) ++unknownRelease;
  };
  // The eye jumps about without waiting for the builds: queued jobs go stale.
  double x = 0, z = 0;
  for (int frame = 0; frame < 60; ++frame) {
    x = 300.0 * std::sin(frame * 0.7) + frame * 20.0;
    z = -250.0 * std::cos(frame * 0.4);
    take(cache.update(x, z), x, z);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    // The drawn set is always a whole selection whose tiles are all handed out.
    for (const FarTileKey& k : cache.drawn())
      if (!out.contains(k)) ++drawnNotOut;
  }
  take(cache.finish(x, z), x, z);
  CHECK(twice == 0);
  CHECK(unknownRelease == 0);
  CHECK(unwanted == 0);
  CHECK(drawnNotOut == 0);
  const std::vector<FarTileKey> want = selectFarTiles(c, x, z);
  CHECK(cache.drawn() == want);
  CHECK(std::vector<FarTileKey>(out.begin(), out.end()) == want);  // nothing left over
}

TEST_CASE("far terrain: the ground under forest biomes carries its trees' leaves and cover") {
  const sim::TerrainSampler& sampler = gladeSampler();
  const sim::Scene& scene = sampler.scene();
  const std::vector<FarCanopy> canopies = farCanopies(scene);
  REQUIRE(canopies.size() == scene.biomes.size() + 1);
  auto biomeIndex = [&](const char* name) {
    for (std::size_t i = 0; i < scene.biomes.size(); ++i)
      if (scene.biomes[i].name == name) return static_cast<int>(i);
    FAIL("no biome " << name);
    return -1;
  };
  const auto leaves = scene.materials->find("leaves");
  REQUIRE(leaves.has_value());
  // Glade's oaks grow in "forest" (7.5 m spacing, density 0.7, crowns about 3 m
  // across the clusters): about 40 % of the ground; the meadow's few trees (13 m,
  // 0.35) about a tenth.
  const FarCanopy forest = canopies[static_cast<std::size_t>(biomeIndex("forest") + 1)];
  const FarCanopy meadow = canopies[static_cast<std::size_t>(biomeIndex("meadow") + 1)];
  CHECK(forest.leaves == *leaves);
  CHECK(forest.cover > 60);
  CHECK(forest.cover < 200);
  CHECK(meadow.cover > 0);
  CHECK(meadow.cover < forest.cover / 2);

  // Every vertex of a tile carries its column's canopy (none on water).
  const FarTerrainConfig c;
  const FarTileMesh tile = buildFarTile(sampler, c, {0, -1, -1});
  int forestCover = 0, otherCover = 0, wrong = 0;
  for (int j = 0; j < kFarTileSide; ++j)
    for (int i = 0; i < kFarTileSide; ++i) {
      const FarVertex& v = tile.vertices[static_cast<std::size_t>(j * kFarTileSide + i)];
      const sim::TerrainSample s = sampler.at((-kFarTileCells + i) * 16, (-kFarTileCells + j) * 16);
      const bool wet = s.column.water > s.column.ground;
      const FarCanopy want = wet ? FarCanopy{} : canopies[static_cast<std::size_t>(s.biome + 1)];
      if (v.canopy != want.leaves || v.canopyCover != want.cover) ++wrong;
      (v.canopyCover == forest.cover ? forestCover : otherCover) += 1;
    }
  CHECK(wrong == 0);
  CHECK(forestCover > 0);  // the tile holds forest and other ground, so the check means something
  CHECK(otherCover > 0);
}

// ---- surface changes (FarSurface) -------------------------------------------------

namespace {

const FarVertex& gridVertex(const FarTileMesh& t, int i, int j) {
  return t.vertices[static_cast<std::size_t>(j * kFarTileSide + i)];
}

/// Whether two tiles hold the same vertices, bit for bit (FarVertex has no padding).
bool sameVertices(const FarTileMesh& a, const FarTileMesh& b) {
  return a.vertices.size() == b.vertices.size() &&
         std::memcmp(a.vertices.data(), b.vertices.data(), a.vertices.size() * sizeof(FarVertex)) == 0 &&
         a.minY == b.minY && a.maxY == b.maxY;
}

/// The square of patches [x0, x0 + n) x [z0, z0 + n), each with the same change.
std::vector<sim::SurfaceChange> patchSquare(int x0, int z0, int n, int rise, sim::MaterialId material = sim::kAir) {
  std::vector<sim::SurfaceChange> out;
  for (int z = z0; z < z0 + n; ++z)
    for (int x = x0; x < x0 + n; ++x) out.push_back({x, z, rise, material});
  return out;
}

constexpr int kMetreDig = -sim::kSurfacePatchColumns * sim::kVoxelsPerMetre;  // a patch's rise for 1 m down

}  // namespace

TEST_CASE("far terrain: a surface change moves the vertices whose footprint holds it by its mean") {
  const sim::TerrainSampler& sampler = gladeSampler();
  const FarTerrainConfig c;
  const auto stone = sampler.scene().materials->find("stone");
  REQUIRE(stone.has_value());
  // Patch (px, pz) is level-0 grid point (px, pz): vertex (px, pz) of tile (0, 0, 0),
  // column 16 (px, pz). On level 2 it lies in the footprint of point (gx, gz), which
  // samples column 64 (gx, gz). The first patch where both are dry, so the dig shows.
  auto dry = [&](int x, int z) {
    const sim::TerrainSample s = sampler.at(x, z);
    return s.column.water <= s.column.ground && s.surface != *stone;
  };
  int px = -1, pz = 10;  // even: vertex (px, pz) is one of the parent's
  for (int x = 2; x < 30 && px < 0; x += 4)
    if (dry(16 * x, 16 * pz) && dry(64 * ((x + 2) >> 2), 64 * ((pz + 2) >> 2))) px = x;
  REQUIRE(px >= 0);
  const int gx = (px + 2) >> 2, gz = (pz + 2) >> 2;
  const FarTileKey key0{0, 0, 0}, key2{2, 0, 0};
  const FarTileMesh plain0 = buildFarTile(sampler, c, key0);
  const FarTileMesh plain2 = buildFarTile(sampler, c, key2);

  FarSurface surface;
  const sim::SurfaceChange dig{px, pz, kMetreDig, *stone};
  surface.apply({&dig, 1});
  CHECK(surface.patches() == 1);
  CHECK(surface.version() == 1);
  auto lock = surface.readLock();
  CHECK(surface.riseMetres(0, px, pz) == -1.0f);
  CHECK(surface.riseMetres(1, (px + 1) >> 1, (pz + 1) >> 1) == -0.25f);
  CHECK(surface.riseMetres(2, gx, gz) == -0.0625f);
  CHECK(surface.riseMetres(0, px + 1, pz) == 0.0f);
  CHECK(surface.material(0, px, pz) == *stone);
  CHECK(surface.material(1, (px + 1) >> 1, (pz + 1) >> 1) == sim::kAir);  // 1 of 4 patches
  CHECK(surface.anyIn(0, -1, -1, 33, 33));
  CHECK(surface.anyIn(2, -1, -1, 33, 33));
  CHECK(!surface.anyIn(0, 100, -1, 134, 33));  // (true may also mean a change close by)
  CHECK(!surface.anyIn(2, -100, -100, -66, -66));
  lock.unlock();

  const FarTileMesh dug0 = buildFarTile(sampler, c, key0, &surface);
  const FarTileMesh dug2 = buildFarTile(sampler, c, key2, &surface);
  CHECK(dug0.surfaceVersion == 1);
  // Level 0: the patch's vertex sinks by exactly 1 m and shows the new top; its
  // parent surface (level 1's point over 4 patches) by a quarter of that.
  int moved = 0, recoloured = 0;
  for (int j = 0; j < kFarTileSide; ++j)
    for (int i = 0; i < kFarTileSide; ++i) {
      const FarVertex& a = gridVertex(plain0, i, j);
      const FarVertex& b = gridVertex(dug0, i, j);
      if (i == px && j == pz) {
        CHECK(b.height == a.height - 1.0f);
        CHECK(b.parentHeight == a.parentHeight - 0.25f);
        CHECK(b.material == *stone);
        CHECK(b.canopyCover == 0);
        continue;
      }
      if (b.height != a.height) ++moved;
      if (b.material != a.material) ++recoloured;
    }
  CHECK(moved == 0);
  CHECK(recoloured == 0);
  // An odd neighbour's parent surface runs along the parent's edge through it.
  const int odd = px % 2 == 0 ? px + 1 : px;
  CHECK(gridVertex(dug0, odd, pz).parentHeight < gridVertex(plain0, odd, pz).parentHeight);
  // Level 2: 1 of the 16 patches of point (gx, gz) sank 1 m; its top shows only where
  // half the footprint changed.
  moved = 0;
  for (int j = 0; j < kFarTileSide; ++j)
    for (int i = 0; i < kFarTileSide; ++i) {
      const FarVertex& a = gridVertex(plain2, i, j);
      const FarVertex& b = gridVertex(dug2, i, j);
      if (i == gx && j == gz) {
        CHECK(b.height == a.height - 0.0625f);
        CHECK(b.material == a.material);
        continue;
      }
      if (b.height != a.height || b.material != a.material) ++moved;
    }
  CHECK(moved == 0);

  // The change replaced by none: the generator's tiles again, bit for bit.
  const sim::SurfaceChange undo{px, pz, 0, sim::kAir};
  surface.apply({&undo, 1});
  CHECK(surface.patches() == 0);
  CHECK(surface.version() == 2);
  CHECK(sameVertices(buildFarTile(sampler, c, key0, &surface), plain0));
  CHECK(sameVertices(buildFarTile(sampler, c, key2, &surface), plain2));
  // A replacement subtracts what the patch held: -1 m then +0.5 m is +0.5 m.
  const sim::SurfaceChange again[] = {{px, pz, kMetreDig, sim::kAir}, {px, pz, -kMetreDig / 2, sim::kAir}};
  surface.apply(again);
  CHECK(surface.patches() == 1);
  CHECK(gridVertex(buildFarTile(sampler, c, key0, &surface), px, pz).height ==
        gridVertex(plain0, px, pz).height + 0.5f);
}

TEST_CASE("far terrain: levels meet where the ground has changed") {
  const sim::TerrainSampler& sampler = gladeSampler();
  const FarTerrainConfig c;
  FarSurface surface;
  // A crater 32 m across, 3 m deep on average, over tile edges on several levels.
  surface.apply(patchSquare(20, -8, 40, 3 * kMetreDig));
  struct Pair {
    FarTileKey fine, coarse;
  };
  const std::vector<Pair> pairs = {
      {{0, 1, 0}, {1, 0, 0}}, {{0, 0, -1}, {1, 0, -1}}, {{1, 0, 0}, {2, 0, 0}}, {{2, 0, 0}, {3, 0, 0}},
      {{1, 0, -1}, {2, 0, -1}},
  };
  for (const Pair& p : pairs) {
    CAPTURE(p.fine.level);
    CAPTURE(p.fine.x);
    CAPTURE(p.fine.z);
    const FarTileMesh fine = buildFarTile(sampler, c, p.fine, &surface);
    const FarTileMesh coarse = buildFarTile(sampler, c, p.coarse, &surface);
    const FarTileMesh plainFine = buildFarTile(sampler, c, p.fine);
    // The coarse tile's surface at a fine grid point (in fine cells from its corner):
    // its vertex, an edge's midpoint, or its diagonal's.
    auto coarseSurface = [&](std::int64_t ci, std::int64_t cj) {
      const int i = static_cast<int>(ci / 2), j = static_cast<int>(cj / 2);
      const float here = gridVertex(coarse, i, j).height;
      if (ci % 2 == 0 && cj % 2 == 0) return here;
      if (cj % 2 == 0) return 0.5f * (here + gridVertex(coarse, i + 1, j).height);
      if (ci % 2 == 0) return 0.5f * (here + gridVertex(coarse, i, j + 1).height);
      return 0.5f * (here + gridVertex(coarse, i + 1, j + 1).height);
    };
    // The fine tile's corner in fine cells from the coarse tile's.
    const std::int64_t dx = (std::int64_t{p.fine.x} - 2 * std::int64_t{p.coarse.x}) * kFarTileCells;
    const std::int64_t dz = (std::int64_t{p.fine.z} - 2 * std::int64_t{p.coarse.z}) * kFarTileCells;
    int differ = 0, dug = 0, parentMoved = 0;
    for (int j = 0; j < kFarTileSide; ++j)
      for (int i = 0; i < kFarTileSide; ++i) {
        const std::int64_t ci = dx + i, cj = dz + j;
        REQUIRE(ci >= 0);
        REQUIRE(cj >= 0);
        const FarVertex& v = gridVertex(fine, i, j);
        if (v.parentHeight != coarseSurface(ci, cj)) ++differ;
        if (v.height < gridVertex(plainFine, i, j).height - 0.1f) ++dug;
        if (v.parentHeight != gridVertex(plainFine, i, j).parentHeight) ++parentMoved;
      }
    CHECK(differ == 0);
    CHECK(dug > 20);  // the crater is in the tile: the check above means something
    CHECK(parentMoved > 20);
  }
  // Same level: a shared edge through the crater.
  const FarTileMesh north = buildFarTile(sampler, c, {0, 1, -1}, &surface);
  const FarTileMesh south = buildFarTile(sampler, c, {0, 1, 0}, &surface);
  int differ = 0;
  for (int k = 0; k < kFarTileSide; ++k) {
    const FarVertex& a = gridVertex(north, k, kFarTileCells);
    const FarVertex& b = gridVertex(south, k, 0);
    if (a.height != b.height || a.parentHeight != b.parentHeight) ++differ;
  }
  CHECK(differ == 0);
}

TEST_CASE("far terrain: a hostile server's surface changes are bounded") {
  SUBCASE("patches beyond kFarSurfaceMaxPatches are ignored and counted") {
    FarSurface surface;
    std::vector<sim::SurfaceChange> changes = patchSquare(0, 0, 1024, 7);  // exactly the bound, in one cluster
    REQUIRE(changes.size() == kFarSurfaceMaxPatches);
    for (int k = 0; k < 1000; ++k) changes.push_back({-5000 - k, 300, 7, sim::kAir});
    surface.apply(changes);
    CHECK(surface.patches() == kFarSurfaceMaxPatches);
    CHECK(surface.ignored() == 1000);
    // Patches held still change; new ones do not come in.
    const sim::SurfaceChange more[] = {{5, 5, -2560, sim::kAir}, {-7, -7, 3, sim::kAir}};
    surface.apply(more);
    CHECK(surface.patches() == kFarSurfaceMaxPatches);
    CHECK(surface.ignored() == 1001);
    auto lock = surface.readLock();
    CHECK(surface.riseMetres(0, 5, 5) == -0.5f);
    CHECK(surface.riseMetres(0, -7, -7) == 0.0f);
    CHECK(surface.riseMetres(0, -5000, 300) == 0.0f);
    CHECK(surface.riseMetres(0, 0, 0) == static_cast<float>(7.0 / 256 / 20));
  }
  SUBCASE("scattered patches are bounded by the grid points they need") {
    FarSurface surface;
    // 2^16 patches apart: a point of their own on every level.
    std::vector<sim::SurfaceChange> changes;
    for (int z = -200; z < 200; ++z)
      for (int x = -200; x < 200; ++x) changes.push_back({x * 65536 + 3, z * 65536 - 5, -100, sim::kAir});
    surface.apply(changes);
    CHECK(surface.patches() + surface.ignored() == changes.size());
    CHECK(surface.patches() <= kFarSurfaceMaxPoints / kFarSurfaceLevels);
    CHECK(surface.patches() > kFarSurfaceMaxPoints / kFarSurfaceLevels - 10);
  }
  SUBCASE("huge rises are clamped; the heights stay finite") {
    const sim::TerrainSampler& sampler = gladeSampler();
    const FarTerrainConfig c;
    FarSurface surface;
    constexpr std::int32_t up = std::numeric_limits<std::int32_t>::max();
    constexpr std::int32_t down = std::numeric_limits<std::int32_t>::min();
    std::vector<sim::SurfaceChange> changes = patchSquare(-40, -40, 64, up);
    const std::vector<sim::SurfaceChange> sunk = patchSquare(24, -40, 64, down, 200);  // any byte as material
    changes.insert(changes.end(), sunk.begin(), sunk.end());
    surface.apply(changes);
    {
      auto lock = surface.readLock();
      const float limit = static_cast<float>(kFarSurfaceMaxRise / 256.0 / sim::kVoxelsPerMetre);
      CHECK(surface.riseMetres(0, 0, 0) == limit);
      CHECK(surface.riseMetres(0, 30, 0) == -limit);
      CHECK(surface.riseMetres(3, 0, 0) == limit);  // 8 x 8 patches, all up
    }
    int bad = 0, high = 0;
    for (int level = 0; level < 6; ++level)
      for (const std::int32_t x : {-1, 0, 1}) {
        const FarTileMesh t = buildFarTile(sampler, c, {level, x, -1}, &surface);
        for (const FarVertex& v : t.vertices) {
          if (!std::isfinite(v.height) || !std::isfinite(v.parentHeight)) ++bad;
          if (v.height > 1000.0f) ++high;
        }
        if (!std::isfinite(t.minY) || !std::isfinite(t.maxY)) ++bad;
      }
    CHECK(bad == 0);
    CHECK(high > 0);
  }
}

/// The tiles a renderer would hold after an update: built ones replace, released go.
static void keepLatest(std::map<FarTileKey, FarTileMesh>& latest, FarTerrainUpdate u) {
  for (FarTileMesh& m : u.built) latest[m.key] = std::move(m);
  for (const FarTileKey& k : u.released) latest.erase(k);
}

TEST_CASE("far terrain: the cache rebuilds the tiles surface changes touch") {
  const sim::TerrainSampler& sampler = gladeSampler();
  const FarTerrainConfig c{0.8, 96.0, 600.0};
  auto surface = std::make_shared<FarSurface>();
  FarTerrainCache cache(gladeSamplerPtr(), c, 2, surface);
  std::map<FarTileKey, FarTileMesh> latest;
  keepLatest(latest, cache.finish(0.0, 0.0));
  const std::vector<FarTileKey> drawn = cache.drawn();
  REQUIRE(!drawn.empty());
  // A level-0 tile drawn east of the eye, and a crater under its middle.
  const auto it = std::find_if(drawn.begin(), drawn.end(), [](const FarTileKey& k) { return k.level == 0 && k.x > 0; });
  REQUIRE(it != drawn.end());
  const FarTileKey key = *it;
  const FarTileMesh before = latest.at(key);
  cache.applySurfaceChanges(
      patchSquare(key.x * kFarTileCells + 4, key.z * kFarTileCells + 4, 24, 3 * kMetreDig));
  CHECK(!cache.idle());

  const FarTerrainUpdate again = cache.finish(0.0, 0.0);
  CHECK(again.released.empty());
  std::set<FarTileKey> rebuilt;
  for (const FarTileMesh& m : again.built) rebuilt.insert(m.key);
  keepLatest(latest, again);
  CHECK(rebuilt.contains(key));
  CHECK(rebuilt.size() < drawn.size() / 4);  // only those near the crater
  for (const FarTileKey& k : rebuilt) CHECK(std::binary_search(drawn.begin(), drawn.end(), k));
  CHECK(cache.drawn() == drawn);
  CHECK(cache.idle());
  const FarTileMesh& after = latest.at(key);
  int lower = 0, higher = 0;
  for (int j = 0; j < kFarTileSide; ++j)
    for (int i = 0; i < kFarTileSide; ++i) {
      if (gridVertex(after, i, j).height < gridVertex(before, i, j).height - 1.0f) ++lower;
      if (gridVertex(after, i, j).height > gridVertex(before, i, j).height) ++higher;
    }
  CHECK(lower > 300);
  CHECK(higher == 0);
  CHECK(after.surfaceVersion == surface->version());
  CHECK(sameVertices(after, buildFarTile(sampler, c, key, surface.get())));
}

TEST_CASE("far terrain: changes applied while tiles build never leave a stale tile drawn") {
  const sim::TerrainSampler& sampler = gladeSampler();
  const FarTerrainConfig c{0.8, 96.0, 600.0};
  auto surface = std::make_shared<FarSurface>();
  FarTerrainCache cache(gladeSamplerPtr(), c, 2, surface);
  std::map<FarTileKey, FarTileMesh> latest;
  // Each round changes a patch in every level-0 tile's square out to 600 m, so every
  // tile queued or being built is touched (a tile takes about half a millisecond).
  keepLatest(latest, cache.update(0.0, 0.0));
  for (int round = 0; round < 12; ++round) {
    std::vector<sim::SurfaceChange> changes;
    for (int b = -24; b < 24; ++b)
      for (int a = -24; a < 24; ++a)
        changes.push_back({a * kFarTileCells + 3 + 2 * round, b * kFarTileCells + 5, -(round + 1) * 2560, sim::kAir});
    cache.applySurfaceChanges(changes);
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    keepLatest(latest, cache.update(0.0, 0.0));
  }
  keepLatest(latest, cache.finish(0.0, 0.0));
  REQUIRE(cache.drawn() == selectFarTiles(c, 0.0, 0.0));
  int stale = 0, changed = 0;
  for (const FarTileKey& k : cache.drawn()) {
    const FarTileMesh& m = latest.at(k);
    if (!sameVertices(m, buildFarTile(sampler, c, k, surface.get()))) ++stale;
    if (!sameVertices(m, buildFarTile(sampler, c, k))) ++changed;
  }
  CHECK(stale == 0);
  CHECK(changed > static_cast<int>(cache.drawn().size()) / 2);
}
