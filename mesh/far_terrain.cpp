// Far terrain: quadtree selection, the shared index list, tile building from the
// terrain sampler, and FarTerrainCache's worker threads.
//
// Morph ranges (farMorphRange), with S the size of a level-L tile and k = kFarSplit:
//  - A leaf at level L + 1 (size 2S) is a leaf because it did not split: its plan
//    distance from the eye is >= k * 2S. An edge it shares with a finer leaf (level
//    L) lies on its square, so every point of that edge is >= 2kS away. The finer
//    tile is therefore fully morphed (on its parent's surface, which along that edge
//    is the coarser tile's edge) wherever it meets a coarser neighbour: end = 2kS.
//  - A leaf at level L - 1 exists because its parent (level L, size S) split: the
//    parent's distance is < kS, and the finer leaf, its edges included, lies within
//    the parent's square, whose points are all within kS + sqrt(2) S of the eye. So
//    where a level-L leaf meets a finer one it is nearer than kS + sqrt(2) S and must
//    not be morphed there yet: start = kS + 1.5S (> kS + sqrt(2) S). start < end needs
//    k > 1.5.
// Both bounds are tested (far_terrain_test). The selection lags the eye by up to a
// level-0 cell (and the drawn set until its tiles are built), so seams may open by a
// little while the eye moves; the skirts hide that.
//
// Cache ordering: a key is queued at most once (pending), and handed out at most once
// until it is released, or again when surface changes rebuild it. A result whose key
// is neither wanted nor drawn is dropped; if it is wanted again later it is queued again.
//
// Rebuilds for surface changes: applySurfaceChanges queues the touched tiles that are
// handed out, and stamps those pending (queued or being built) with the surface version
// after the change (neededVersion). A result older than its stamp was started before the
// change: it is still newer than the copy drawn, so it is handed out, and the tile is
// queued again. As a key has at most one build at a time, each result handed out for it
// is newer than the last, and the last one saw every change.
#include "mesh/far_terrain.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_set>
#include <utility>

#include "sim/core/assert.h"
#include "sim/gen/scene.h"
#include "sim/world/voxel.h"

namespace loam::mesh {

namespace {

constexpr int kSamplesSide = kFarTileSide + 2;  // grid plus one sample around it (normals): 35

/// Plan distance from (ex, ez) to the nearest point of the square [x0, x0+s) x [z0, z0+s) (0 inside).
double nearestDistance(double ex, double ez, double x0, double z0, double s) {
  const double dx = std::max({x0 - ex, 0.0, ex - (x0 + s)});
  const double dz = std::max({z0 - ez, 0.0, ez - (z0 + s)});
  return std::sqrt(dx * dx + dz * dz);
}

/// Plan distance from (ex, ez) to the farthest corner of the square.
double farthestDistance(double ex, double ez, double x0, double z0, double s) {
  const double dx = std::max(std::abs(ex - x0), std::abs(ex - (x0 + s)));
  const double dz = std::max(std::abs(ez - z0), std::abs(ez - (z0 + s)));
  return std::sqrt(dx * dx + dz * dz);
}

double tileDistance(const FarTerrainConfig& c, const FarTileKey& k, double ex, double ez) {
  const double s = farTileMetres(c, k.level);
  return nearestDistance(ex, ez, k.x * s, k.z * s, s);
}

struct Selector {
  const FarTerrainConfig& c;
  double ex, ez;
  std::vector<FarTileKey>& out;

  void visit(int level, std::int32_t x, std::int32_t z) {
    const double s = farTileMetres(c, level);
    const double x0 = x * s, z0 = z * s;
    const double near = nearestDistance(ex, ez, x0, z0, s);
    // Every leaf under a tile wholly beyond farMetres or within nearMetres would be
    // skipped, so the whole subtree is.
    if (near > c.farMetres) return;
    if (x0 >= c.maxX || x0 + s <= c.minX || z0 >= c.maxZ || z0 + s <= c.minZ) return;
    if (farthestDistance(ex, ez, x0, z0, s) <= c.nearMetres) return;
    if (level > 0 && near < kFarSplit * s) {
      for (int dz = 0; dz < 2; ++dz)
        for (int dx = 0; dx < 2; ++dx) visit(level - 1, 2 * x + dx, 2 * z + dz);
      return;
    }
    out.push_back({level, x, z});
  }
};

/// The index list, built once.
struct IndexList {
  std::array<std::uint16_t, (kFarTileCells * kFarTileCells * 2 + 4 * kFarTileCells * 2) * 3> indices{};

  IndexList() {
    std::size_t n = 0;
    auto tri = [&](int a, int b, int c) {
      indices[n++] = static_cast<std::uint16_t>(a);
      indices[n++] = static_cast<std::uint16_t>(b);
      indices[n++] = static_cast<std::uint16_t>(c);
    };
    auto grid = [](int i, int j) { return j * kFarTileSide + i; };
    for (int j = 0; j < kFarTileCells; ++j)
      for (int i = 0; i < kFarTileCells; ++i) {
        // With x east and z south, (i, j) -> (i + 1, j + 1) -> (i + 1, j) turns
        // counter-clockwise seen from +y (the normal (b - a) x (c - a) has y > 0).
        tri(grid(i, j), grid(i + 1, j + 1), grid(i + 1, j));
        tri(grid(i, j), grid(i, j + 1), grid(i + 1, j + 1));
      }
    // Skirt s, vertex k hangs under edgeVertex(s, k); k runs along +x or +z.
    for (int s = 0; s < 4; ++s) {
      auto edge = [&](int k) {
        switch (s) {
          case 0: return grid(k, 0);
          case 1: return grid(kFarTileCells, k);
          case 2: return grid(k, kFarTileCells);
          default: return grid(0, k);
        }
      };
      auto skirt = [&](int k) { return kFarGridVertices + s * kFarTileSide + k; };
      // Walking k upward, the outside lies to the left on the north (j = 0) and
      // east (i = 32) edges and to the right on the others; wind to face outward.
      const bool flip = s >= 2;
      for (int k = 0; k < kFarTileCells; ++k) {
        if (!flip) {
          tri(edge(k), edge(k + 1), skirt(k));
          tri(edge(k + 1), skirt(k + 1), skirt(k));
        } else {
          tri(edge(k), skirt(k), edge(k + 1));
          tri(edge(k + 1), skirt(k), skirt(k + 1));
        }
      }
    }
    LOAM_ASSERT(n == indices.size());
  }
};

/// The voxel column holding grid line n (metres n * cell): floor(n * cell * kVoxelsPerMetre).
/// Multiplied as n * (cell in voxels), not metres first: n * 0.8 rounds below the true
/// value for many n (-106 among them), which then floors a voxel short. The millionth
/// of a voxel of slack does the same for cells that are not a whole number of voxels.
std::int32_t voxelColumn(std::int64_t n, double cellVoxels) {
  return static_cast<std::int32_t>(std::floor(static_cast<double>(n) * cellVoxels + 1e-6));
}

bool fitsInt32(std::int64_t v) {
  return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
}

/// A grid point as a map key (both coordinates must fit in 32 bits).
std::uint64_t packPoint(std::int64_t gx, std::int64_t gz) {
  return sim::surfacePatchKey(static_cast<std::int32_t>(gx), static_cast<std::int32_t>(gz));
}

/// The height drawn, metres, of a sample whose ground rose by rise metres. Water keeps
/// its level (a pit dug beside a lake stays dry: only a wet column's water counts).
/// With rise 0 this equals the generator's max(ground, water) bit for bit.
float risenHeight(const sim::TerrainSample& s, float rise) {
  const float ground = static_cast<float>(s.column.ground) / sim::kVoxelsPerMetre + rise;
  if (s.column.water <= s.column.ground) return ground;
  return std::max(ground, static_cast<float>(s.column.water) / sim::kVoxelsPerMetre);
}

}  // namespace

// ---- FarSurface -----------------------------------------------------------------

void FarSurface::apply(std::span<const sim::SurfaceChange> changes) {
  std::unique_lock lock(mutex_);
  std::unordered_map<std::uint64_t, Cell>& patchCells = cells_[0];
  for (const sim::SurfaceChange& c : changes) {
    Cell next;
    next.rise = std::clamp<std::int64_t>(c.rise, -kFarSurfaceMaxRise, kFarSurfaceMaxRise);
    next.material = c.material;
    next.changedTops = c.material != sim::kAir ? 1 : 0;
    next.patches = next.rise != 0 || next.changedTops != 0 ? 1 : 0;
    const std::uint64_t key = packPoint(c.x, c.z);
    const auto it = patchCells.find(key);
    Cell prev;
    if (it != patchCells.end()) {
      prev = it->second;
    } else {
      if (next.patches == 0) continue;
      // A new patch may need a point on every level.
      if (patchCells.size() >= kFarSurfaceMaxPatches || points_ + kFarSurfaceLevels > kFarSurfaceMaxPoints) {
        ignored_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
    }
    if (prev.rise == next.rise && prev.material == next.material) continue;
    if (next.patches == 0) {
      patchCells.erase(it);
      --points_;
    } else if (it == patchCells.end()) {
      patchCells.emplace(key, next);
      ++points_;
    } else {
      it->second = next;
    }
    for (int level = 1; level < kFarSurfaceLevels; ++level) {
      const std::uint64_t k = packPoint(farSurfacePoint(level, c.x), farSurfacePoint(level, c.z));
      auto [cell, inserted] = cells_[static_cast<std::size_t>(level)].try_emplace(k);
      if (inserted) ++points_;
      Cell& sum = cell->second;
      sum.rise += next.rise - prev.rise;
      sum.patches = sum.patches + next.patches - prev.patches;  // wraps back when a patch leaves
      sum.changedTops = sum.changedTops + next.changedTops - prev.changedTops;
      if (next.changedTops != 0) sum.material = next.material;
      if (sum.patches == 0) {
        cells_[static_cast<std::size_t>(level)].erase(cell);
        --points_;
      }
    }
  }
  patches_.store(patchCells.size(), std::memory_order_relaxed);
  version_.fetch_add(1, std::memory_order_release);
}

const FarSurface::Cell* FarSurface::find(int level, std::int64_t gx, std::int64_t gz) const {
  if (level < 0 || level >= kFarSurfaceLevels || !fitsInt32(gx) || !fitsInt32(gz)) return nullptr;
  const auto& cells = cells_[static_cast<std::size_t>(level)];
  const auto it = cells.find(packPoint(gx, gz));
  return it == cells.end() ? nullptr : &it->second;
}

float FarSurface::riseMetres(int level, std::int64_t gx, std::int64_t gz) const {
  const Cell* cell = find(level, gx, gz);
  if (cell == nullptr) return 0.0f;
  const double columns = std::ldexp(static_cast<double>(sim::kSurfacePatchColumns), 2 * level);
  return static_cast<float>(static_cast<double>(cell->rise) / columns / sim::kVoxelsPerMetre);
}

sim::MaterialId FarSurface::material(int level, std::int64_t gx, std::int64_t gz) const {
  const Cell* cell = find(level, gx, gz);
  if (cell == nullptr || cell->changedTops == 0) return sim::kAir;
  const std::uint64_t footprint = std::uint64_t{1} << (2 * level);
  return 2 * std::uint64_t{cell->changedTops} >= footprint ? cell->material : sim::kAir;
}

bool FarSurface::anyIn(int level, std::int64_t gx0, std::int64_t gz0, std::int64_t gx1, std::int64_t gz1) const {
  if (level < 0 || level >= kFarSurfaceLevels) return false;
  // A point is kept while its footprint holds a changed patch, so the patches under the
  // range have changes only if a coarser level's points over them exist: a few lookups
  // there instead of one per point here.
  const std::int64_t half = level == 0 ? 0 : std::int64_t{1} << (level - 1);
  constexpr std::int64_t lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max();
  const std::int64_t px0 = std::max(lo, gx0 * (std::int64_t{1} << level) - half);
  const std::int64_t px1 = std::min(hi, gx1 * (std::int64_t{1} << level) + half);
  const std::int64_t pz0 = std::max(lo, gz0 * (std::int64_t{1} << level) - half);
  const std::int64_t pz1 = std::min(hi, gz1 * (std::int64_t{1} << level) + half);
  if (px0 > px1 || pz0 > pz1) return false;
  const int coarse = std::min(level + 5, kFarSurfaceLevels - 1);
  const std::int64_t cx0 = farSurfacePoint(coarse, px0), cx1 = farSurfacePoint(coarse, px1);
  const std::int64_t cz0 = farSurfacePoint(coarse, pz0), cz1 = farSurfacePoint(coarse, pz1);
  const auto& cells = cells_[static_cast<std::size_t>(coarse)];
  if (static_cast<std::size_t>((cx1 - cx0 + 1) * (cz1 - cz0 + 1)) > cells.size()) {
    for (const auto& [key, cell] : cells) {
      const auto [x, z] = sim::surfacePatchOfKey(key);
      if (x >= cx0 && x <= cx1 && z >= cz0 && z <= cz1) return true;
    }
    return false;
  }
  for (std::int64_t z = cz0; z <= cz1; ++z)
    for (std::int64_t x = cx0; x <= cx1; ++x)
      if (cells.contains(packPoint(x, z))) return true;
  return false;
}

double farCellMetres(const FarTerrainConfig& c, int level) { return std::ldexp(c.cellMetres, level); }

double farTileMetres(const FarTerrainConfig& c, int level) { return kFarTileCells * farCellMetres(c, level); }

int farTopLevel(const FarTerrainConfig& c) {
  for (int level = 0; level < kFarMaxLevels; ++level)
    if (kFarSplit * farTileMetres(c, level) >= c.farMetres) return level;
  return kFarMaxLevels - 1;
}

std::array<double, 2> farMorphRange(const FarTerrainConfig& c, int level) {
  const double s = farTileMetres(c, level);
  // The end keeps a quarter tile of margin: the drawn selection lags the moving eye
  // (it changes only once its tiles are built), and a seam should stay closed meanwhile.
  return {kFarSplit * s + 1.5 * s, 2.0 * kFarSplit * s - 0.25 * s};
}

std::vector<FarTileKey> selectFarTiles(const FarTerrainConfig& c, double eyeX, double eyeZ) {
  std::vector<FarTileKey> out;
  const int top = farTopLevel(c);
  const double s = farTileMetres(c, top);
  const auto x0 = static_cast<std::int32_t>(std::floor((eyeX - c.farMetres) / s));
  const auto x1 = static_cast<std::int32_t>(std::floor((eyeX + c.farMetres) / s));
  const auto z0 = static_cast<std::int32_t>(std::floor((eyeZ - c.farMetres) / s));
  const auto z1 = static_cast<std::int32_t>(std::floor((eyeZ + c.farMetres) / s));
  Selector sel{c, eyeX, eyeZ, out};
  for (std::int32_t z = z0; z <= z1; ++z)
    for (std::int32_t x = x0; x <= x1; ++x) sel.visit(top, x, z);
  std::sort(out.begin(), out.end());
  return out;
}

std::span<const std::uint16_t> farTileIndices() {
  static const IndexList list;
  return list.indices;
}

std::vector<FarCanopy> farCanopies(const sim::Scene& scene) {
  std::vector<double> cover(scene.biomes.size() + 1, 0.0);
  std::vector<FarCanopy> out(scene.biomes.size() + 1);
  for (const sim::ScatterRule& r : scene.scatter) {
    if (r.kind != sim::ScatterKind::Tree || r.spacing <= 0) continue;
    // Crowns: clusters of mean radius spread up to `spread` around the trunk.
    const double crown = r.spread + 0.5 * (r.radius.min + r.radius.max);
    const double share = std::clamp(r.density, 0.0, 1.0) * 3.14159265358979 * crown * crown / (r.spacing * r.spacing);
    auto add = [&](std::size_t i) {
      cover[i] += share;
      if (out[i].leaves == 0) out[i].leaves = r.leafMaterial.id;
    };
    if (r.biomeIndices.empty()) {
      for (std::size_t i = 0; i < cover.size(); ++i) add(i);
    } else {
      for (int b : r.biomeIndices)
        if (b >= 0 && static_cast<std::size_t>(b) < scene.biomes.size()) add(static_cast<std::size_t>(b) + 1);
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i].cover = static_cast<std::uint8_t>(std::lround(std::min(cover[i], 1.0) * 255.0));
  return out;
}

FarTileMesh buildFarTile(const sim::TerrainSampler& sampler, const FarTerrainConfig& c, FarTileKey key,
                         const FarSurface* surface) {
  const std::vector<FarCanopy> canopies = farCanopies(sampler.scene());
  FarTileMesh mesh;
  mesh.key = key;
  const double cell = farCellMetres(c, key.level);
  const double cellVoxels = cell * sim::kVoxelsPerMetre;
  const std::int64_t baseX = std::int64_t{key.x} * kFarTileCells, baseZ = std::int64_t{key.z} * kFarTileCells;

  // Samples for grid points -1..33 in i and j.
  std::array<sim::TerrainSample, kSamplesSide * kSamplesSide> samples{};
  std::array<float, kSamplesSide * kSamplesSide> heights{};
  std::array<sim::MaterialId, kSamplesSide * kSamplesSide> materials{};
  std::array<FarCanopy, kSamplesSide * kSamplesSide> trees{};
  auto at = [](int i, int j) { return static_cast<std::size_t>((j + 1) * kSamplesSide + (i + 1)); };
  for (int j = -1; j <= kFarTileSide; ++j) {
    const std::int32_t vz = voxelColumn(baseZ + j, cellVoxels);
    for (int i = -1; i <= kFarTileSide; ++i) {
      const sim::TerrainSample s = sampler.at(voxelColumn(baseX + i, cellVoxels), vz);
      samples[at(i, j)] = s;
      const bool wet = s.column.water > s.column.ground;
      heights[at(i, j)] = static_cast<float>(std::max(s.column.ground, s.column.water)) / sim::kVoxelsPerMetre;
      materials[at(i, j)] = wet ? s.waterMaterial : s.surface;
      const auto biome = static_cast<std::size_t>(s.biome + 1);
      if (!wet && biome < canopies.size()) trees[at(i, j)] = canopies[biome];
    }
  }
  // The parent level's surface at the even-even points (its vertices); without changes
  // it is the tile's own.
  std::array<float, kSamplesSide * kSamplesSide> parentHeights = heights;

  if (surface != nullptr) {
    // After sampling, which is what takes long: apply() waits for this lock.
    const auto lock = surface->readLock();
    mesh.surfaceVersion = surface->version();
    const int parent = key.level + 1;
    const bool changed = surface->anyIn(key.level, baseX - 1, baseZ - 1, baseX + kFarTileSide, baseZ + kFarTileSide) ||
                         surface->anyIn(parent, baseX / 2, baseZ / 2, (baseX + kFarTileCells) / 2,
                                        (baseZ + kFarTileCells) / 2);
    for (int j = -1; changed && j <= kFarTileSide; ++j) {
      for (int i = -1; i <= kFarTileSide; ++i) {
        const sim::TerrainSample& s = samples[at(i, j)];
        const float rise = surface->riseMetres(key.level, baseX + i, baseZ + j);
        const float height = risenHeight(s, rise);
        // Still under water once risen (or sunk)?
        const bool wet = s.column.water > s.column.ground &&
                         static_cast<float>(s.column.water) / sim::kVoxelsPerMetre >
                             static_cast<float>(s.column.ground) / sim::kVoxelsPerMetre + rise;
        const sim::MaterialId top = surface->material(key.level, baseX + i, baseZ + j);
        heights[at(i, j)] = height;
        materials[at(i, j)] = wet ? s.waterMaterial : top != sim::kAir ? top : s.surface;
        // Trees stand on the generator's ground, not on what players laid there.
        const auto biome = static_cast<std::size_t>(s.biome + 1);
        trees[at(i, j)] = !wet && top == sim::kAir && biome < canopies.size() ? canopies[biome] : FarCanopy{};
        // baseX and baseZ are even, so (i, j) even is an even grid point: the parent's vertex.
        const bool parentVertex = i >= 0 && j >= 0 && i <= kFarTileCells && j <= kFarTileCells && i % 2 == 0 &&
                                  j % 2 == 0;
        parentHeights[at(i, j)] =
            parentVertex ? risenHeight(s, surface->riseMetres(parent, (baseX + i) / 2, (baseZ + j) / 2)) : height;
      }
    }
  }
  auto h = [&](int i, int j) { return heights[at(i, j)]; };
  auto ph = [&](int i, int j) { return parentHeights[at(i, j)]; };

  mesh.vertices.resize(kFarTileVertices);
  const float inv2Cell = static_cast<float>(0.5 / cell);
  for (int j = 0; j < kFarTileSide; ++j) {
    for (int i = 0; i < kFarTileSide; ++i) {
      FarVertex& v = mesh.vertices[static_cast<std::size_t>(j * kFarTileSide + i)];
      v.height = h(i, j);
      // The parent's triangulation: its vertices are the even ones, its diagonals
      // run from (i - 1, j - 1) to (i + 1, j + 1) through odd-odd vertices.
      const bool oddI = i & 1, oddJ = j & 1;
      if (!oddI && !oddJ) {
        v.parentHeight = ph(i, j);
      } else if (oddI && !oddJ) {
        v.parentHeight = 0.5f * (ph(i - 1, j) + ph(i + 1, j));
      } else if (!oddI && oddJ) {
        v.parentHeight = 0.5f * (ph(i, j - 1) + ph(i, j + 1));
      } else {
        v.parentHeight = 0.5f * (ph(i - 1, j - 1) + ph(i + 1, j + 1));
      }
      v.i = static_cast<std::uint8_t>(i);
      v.j = static_cast<std::uint8_t>(j);
      // Surface y = h(x, z): normal (-dh/dx, 1, -dh/dz), normalised.
      const float gx = -(h(i + 1, j) - h(i - 1, j)) * inv2Cell;
      const float gz = -(h(i, j + 1) - h(i, j - 1)) * inv2Cell;
      const float len = std::sqrt(gx * gx + 1.0f + gz * gz);
      v.nx = static_cast<std::int8_t>(std::lround(gx / len * 127.0f));
      v.nz = static_cast<std::int8_t>(std::lround(gz / len * 127.0f));
      v.material = materials[at(i, j)];
      v.canopy = trees[at(i, j)].leaves;
      v.canopyCover = trees[at(i, j)].cover;
    }
  }
  const auto depth = static_cast<float>(kFarSkirtCells * cell);
  for (int s = 0; s < 4; ++s) {
    for (int k = 0; k < kFarTileSide; ++k) {
      int i = k, j = k;
      switch (s) {  // the order farTileIndices() uses
        case 0: j = 0; break;
        case 1: i = kFarTileCells; break;
        case 2: j = kFarTileCells; break;
        default: i = 0; break;
      }
      FarVertex v = mesh.vertices[static_cast<std::size_t>(j * kFarTileSide + i)];
      v.height -= depth;
      v.parentHeight -= depth;
      v.skirt = 1;
      mesh.vertices[static_cast<std::size_t>(kFarGridVertices + s * kFarTileSide + k)] = v;
    }
  }
  mesh.minY = mesh.maxY = mesh.vertices[0].height;
  for (const FarVertex& v : mesh.vertices) {
    mesh.minY = std::min({mesh.minY, v.height, v.parentHeight});
    mesh.maxY = std::max({mesh.maxY, v.height, v.parentHeight});
  }
  return mesh;
}

// ---- FarTerrainCache ------------------------------------------------------------

struct FarTerrainCache::Impl {
  std::shared_ptr<const sim::TerrainSampler> sampler;
  FarTerrainConfig config;
  std::shared_ptr<FarSurface> surface;  // null: none

  // ---- shared with workers ----
  std::mutex jobMutex;
  std::condition_variable jobCv;
  std::deque<FarTileKey> jobs;  // nearest first
  bool stop = false;
  std::mutex resultMutex;
  std::condition_variable resultCv;
  std::vector<FarTileMesh> results;
  std::vector<std::thread> workers;

  // ---- main thread ----
  bool hasSelection = false;
  double selX = 0, selZ = 0;              // eye of the last selection
  std::vector<FarTileKey> wanted;         // sorted
  std::vector<FarTileKey> drawn;          // sorted
  std::set<FarTileKey> pending;           // queued or being built
  std::set<FarTileKey> handedOut;         // built and returned by update(), not yet released
  std::map<FarTileKey, std::uint64_t> neededVersion;  // pending keys: the surface version their result must have
  bool settled = false;                   // drawn == wanted

  Impl(std::shared_ptr<const sim::TerrainSampler> s, FarTerrainConfig cfg, int threads,
       std::shared_ptr<FarSurface> surf)
      : sampler(std::move(s)), config(cfg), surface(std::move(surf)) {
    LOAM_ASSERT(sampler != nullptr);
    for (int i = 0; i < std::max(1, threads); ++i) workers.emplace_back([this] { workerLoop(); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(jobMutex);
      stop = true;
    }
    jobCv.notify_all();
    for (std::thread& t : workers) t.join();
  }

  void workerLoop() {
    for (;;) {
      FarTileKey key;
      {
        std::unique_lock<std::mutex> lock(jobMutex);
        jobCv.wait(lock, [this] { return stop || !jobs.empty(); });
        if (stop) return;
        key = jobs.front();
        jobs.pop_front();
      }
      FarTileMesh mesh = buildFarTile(*sampler, config, key, surface.get());
      {
        std::lock_guard<std::mutex> lock(resultMutex);
        results.push_back(std::move(mesh));
      }
      resultCv.notify_one();
    }
  }

  bool isWanted(const FarTileKey& k) const { return std::binary_search(wanted.begin(), wanted.end(), k); }
  bool isDrawn(const FarTileKey& k) const { return std::binary_search(drawn.begin(), drawn.end(), k); }

  /// Queues keys (none pending), nearest the last selection's eye first.
  void queue(const std::vector<FarTileKey>& keys) {
    if (keys.empty()) return;
    std::vector<std::pair<double, FarTileKey>> order;
    for (const FarTileKey& k : keys) order.push_back({tileDistance(config, k, selX, selZ), k});
    std::sort(order.begin(), order.end());
    {
      std::lock_guard<std::mutex> lock(jobMutex);
      for (const auto& [d, k] : order) {
        jobs.push_back(k);
        pending.insert(k);
      }
    }
    jobCv.notify_all();
  }

  /// New selection: drops queued jobs no longer wanted and queues the missing ones.
  void select(double eyeX, double eyeZ) {
    wanted = selectFarTiles(config, eyeX, eyeZ);
    selX = eyeX;
    selZ = eyeZ;
    hasSelection = true;
    settled = wanted == drawn;
    std::vector<std::pair<double, FarTileKey>> missing;
    std::lock_guard<std::mutex> lock(jobMutex);
    // Keys still in the queue were not started: take them back, requeue those wanted,
    // and the rebuilds of tiles still drawn or wanted.
    for (const FarTileKey& k : jobs) {
      pending.erase(k);
      neededVersion.erase(k);  // a build started from now on reads the latest surface
      if (handedOut.contains(k) && (isWanted(k) || isDrawn(k)))
        missing.push_back({tileDistance(config, k, eyeX, eyeZ), k});
    }
    jobs.clear();
    for (const FarTileKey& k : wanted)
      if (!handedOut.contains(k) && !pending.contains(k)) missing.push_back({tileDistance(config, k, eyeX, eyeZ), k});
    std::sort(missing.begin(), missing.end());
    for (const auto& [d, k] : missing) {
      jobs.push_back(k);
      pending.insert(k);
    }
    if (!jobs.empty()) jobCv.notify_all();
  }

  FarTerrainUpdate update(double eyeX, double eyeZ) {
    FarTerrainUpdate out;
    // Selecting costs 15-25 us (500-800 leaves at 2-8 km); moving less than a
    // level-0 cell changes too little to be worth it.
    const bool reselect = !hasSelection || std::hypot(eyeX - selX, eyeZ - selZ) > config.cellMetres;
    if (reselect) select(eyeX, eyeZ);

    std::vector<FarTileMesh> done;
    {
      std::lock_guard<std::mutex> lock(resultMutex);
      done.swap(results);
    }
    bool changed = reselect || !done.empty();
    std::vector<FarTileKey> stale;
    for (FarTileMesh& m : done) {
      pending.erase(m.key);
      std::uint64_t needed = 0;
      if (auto it = neededVersion.find(m.key); it != neededVersion.end()) {
        needed = it->second;
        neededVersion.erase(it);
      }
      if (!isWanted(m.key) && !isDrawn(m.key)) continue;  // the eye moved on; rebuilt if wanted again
      // Started before a change that touches it: newer than the copy drawn all the
      // same, so hand it out, and build it again.
      if (m.surfaceVersion < needed) stale.push_back(m.key);
      handedOut.insert(m.key);
      out.built.push_back(std::move(m));
    }
    queue(stale);
    auto isBuilt = [&](const FarTileKey& k) { return handedOut.contains(k); };
    if (!settled && std::all_of(wanted.begin(), wanted.end(), isBuilt)) {
      drawn = wanted;
      settled = true;
      changed = true;
    }
    if (changed) {
      for (auto it = handedOut.begin(); it != handedOut.end();) {
        if (isWanted(*it) || std::binary_search(drawn.begin(), drawn.end(), *it)) {
          ++it;
        } else {
          out.released.push_back(*it);
          it = handedOut.erase(it);
        }
      }
    }
    return out;
  }

  bool idle() const { return hasSelection && settled && pending.empty(); }

  void applySurfaceChanges(std::span<const sim::SurfaceChange> changes) {
    if (!surface || changes.empty()) return;
    surface->apply(changes);
    const std::uint64_t version = surface->version();
    std::vector<FarTileKey> rebuild;
    for (const FarTileKey& k : touchedTiles(changes)) {
      if (pending.contains(k)) {
        neededVersion[k] = version;  // its build may have read the surface before the change
      } else if (isWanted(k) || isDrawn(k)) {
        rebuild.push_back(k);
      }
    }
    queue(rebuild);
  }

  /// The tiles handed out or pending whose vertices changes may move. A level-L tile k
  /// samples level-L points 32k - 1 .. 32k + 33 and its parentHeight reads level L + 1
  /// points 16k .. 16k + 16; each range is widened by 3 points to be safe.
  std::set<FarTileKey> touchedTiles(std::span<const sim::SurfaceChange> changes) const {
    std::set<FarTileKey> out;
    auto add = [&](int level, std::int64_t x0, std::int64_t x1, std::int64_t z0, std::int64_t z1) {
      for (std::int64_t z = z0; z <= z1; ++z)
        for (std::int64_t x = x0; x <= x1; ++x) {
          const FarTileKey k{level, static_cast<std::int32_t>(x), static_cast<std::int32_t>(z)};
          if (handedOut.contains(k) || pending.contains(k)) out.insert(k);
        }
    };
    const int top = farTopLevel(config);
    std::unordered_set<std::uint64_t> points;  // one level's changed points
    for (int level = 0; level <= top + 1; ++level) {
      points.clear();
      for (const sim::SurfaceChange& c : changes)
        points.insert(packPoint(farSurfacePoint(level, c.x), farSurfacePoint(level, c.z)));
      for (const std::uint64_t key : points) {
        const auto [gx, gz] = sim::surfacePatchOfKey(key);
        if (level <= top) add(level, (gx - 5) >> 5, (gx + 4) >> 5, (gz - 5) >> 5, (gz + 4) >> 5);
        if (level >= 1) add(level - 1, (gx - 4) >> 4, (gx + 3) >> 4, (gz - 4) >> 4, (gz + 3) >> 4);
      }
    }
    return out;
  }

  /// Blocks until a result is ready (or a short while has passed).
  void waitForResults() {
    std::unique_lock<std::mutex> lock(resultMutex);
    resultCv.wait_for(lock, std::chrono::milliseconds(20), [&] { return !results.empty(); });
  }
};

FarTerrainCache::FarTerrainCache(std::shared_ptr<const sim::TerrainSampler> sampler, FarTerrainConfig config,
                                 int workerThreads, std::shared_ptr<FarSurface> surface)
    : impl_(std::make_unique<Impl>(std::move(sampler), config, workerThreads, std::move(surface))) {}

FarTerrainCache::~FarTerrainCache() = default;

FarTerrainUpdate FarTerrainCache::update(double eyeX, double eyeZ) { return impl_->update(eyeX, eyeZ); }

void FarTerrainCache::applySurfaceChanges(std::span<const sim::SurfaceChange> changes) {
  impl_->applySurfaceChanges(changes);
}

const std::vector<FarTileKey>& FarTerrainCache::drawn() const { return impl_->drawn; }

bool FarTerrainCache::idle() const { return impl_->idle(); }

FarTerrainUpdate FarTerrainCache::finish(double eyeX, double eyeZ) {
  FarTerrainUpdate all;
  for (;;) {
    FarTerrainUpdate u = impl_->update(eyeX, eyeZ);
    for (FarTileMesh& m : u.built) all.built.push_back(std::move(m));
    all.released.insert(all.released.end(), u.released.begin(), u.released.end());
    if (impl_->idle()) break;
    impl_->waitForResults();
  }
  return all;
}

const FarTerrainConfig& FarTerrainCache::config() const { return impl_->config; }

}  // namespace loam::mesh
