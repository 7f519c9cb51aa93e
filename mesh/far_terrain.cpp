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
// until it is released. A result whose key is no longer wanted is dropped; if it is
// wanted again later it is queued again.
#include "mesh/far_terrain.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
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

}  // namespace

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

FarTileMesh buildFarTile(const sim::TerrainSampler& sampler, const FarTerrainConfig& c, FarTileKey key) {
  const std::vector<FarCanopy> canopies = farCanopies(sampler.scene());
  FarTileMesh mesh;
  mesh.key = key;
  const double cell = farCellMetres(c, key.level);
  const double cellVoxels = cell * sim::kVoxelsPerMetre;
  const std::int64_t baseX = std::int64_t{key.x} * kFarTileCells, baseZ = std::int64_t{key.z} * kFarTileCells;

  // Samples for grid points -1..33 in i and j.
  std::array<float, kSamplesSide * kSamplesSide> heights{};
  std::array<sim::MaterialId, kSamplesSide * kSamplesSide> materials{};
  std::array<FarCanopy, kSamplesSide * kSamplesSide> trees{};
  auto at = [](int i, int j) { return static_cast<std::size_t>((j + 1) * kSamplesSide + (i + 1)); };
  for (int j = -1; j <= kFarTileSide; ++j) {
    const std::int32_t vz = voxelColumn(baseZ + j, cellVoxels);
    for (int i = -1; i <= kFarTileSide; ++i) {
      const sim::TerrainSample s = sampler.at(voxelColumn(baseX + i, cellVoxels), vz);
      const bool wet = s.column.water > s.column.ground;
      heights[at(i, j)] = static_cast<float>(std::max(s.column.ground, s.column.water)) / sim::kVoxelsPerMetre;
      materials[at(i, j)] = wet ? s.waterMaterial : s.surface;
      const auto biome = static_cast<std::size_t>(s.biome + 1);
      if (!wet && biome < canopies.size()) trees[at(i, j)] = canopies[biome];
    }
  }
  auto h = [&](int i, int j) { return heights[at(i, j)]; };

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
        v.parentHeight = v.height;
      } else if (oddI && !oddJ) {
        v.parentHeight = 0.5f * (h(i - 1, j) + h(i + 1, j));
      } else if (!oddI && oddJ) {
        v.parentHeight = 0.5f * (h(i, j - 1) + h(i, j + 1));
      } else {
        v.parentHeight = 0.5f * (h(i - 1, j - 1) + h(i + 1, j + 1));
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
  bool settled = false;                   // drawn == wanted

  Impl(std::shared_ptr<const sim::TerrainSampler> s, FarTerrainConfig cfg, int threads)
      : sampler(std::move(s)), config(cfg) {
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
      FarTileMesh mesh = buildFarTile(*sampler, config, key);
      {
        std::lock_guard<std::mutex> lock(resultMutex);
        results.push_back(std::move(mesh));
      }
      resultCv.notify_one();
    }
  }

  bool isWanted(const FarTileKey& k) const { return std::binary_search(wanted.begin(), wanted.end(), k); }

  /// New selection: drops queued jobs no longer wanted and queues the missing ones.
  void select(double eyeX, double eyeZ) {
    wanted = selectFarTiles(config, eyeX, eyeZ);
    selX = eyeX;
    selZ = eyeZ;
    hasSelection = true;
    settled = wanted == drawn;
    std::vector<std::pair<double, FarTileKey>> missing;
    std::lock_guard<std::mutex> lock(jobMutex);
    // Keys still in the queue were not started: take them back, requeue those wanted.
    for (const FarTileKey& k : jobs) pending.erase(k);
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
    for (FarTileMesh& m : done) {
      pending.erase(m.key);
      if (!isWanted(m.key)) continue;  // the eye moved on; rebuilt if wanted again
      handedOut.insert(m.key);
      out.built.push_back(std::move(m));
    }
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

  /// Blocks until a result is ready (or a short while has passed).
  void waitForResults() {
    std::unique_lock<std::mutex> lock(resultMutex);
    resultCv.wait_for(lock, std::chrono::milliseconds(20), [&] { return !results.empty(); });
  }
};

FarTerrainCache::FarTerrainCache(std::shared_ptr<const sim::TerrainSampler> sampler, FarTerrainConfig config,
                                 int workerThreads)
    : impl_(std::make_unique<Impl>(std::move(sampler), config, workerThreads)) {}

FarTerrainCache::~FarTerrainCache() = default;

FarTerrainUpdate FarTerrainCache::update(double eyeX, double eyeZ) { return impl_->update(eyeX, eyeZ); }

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
