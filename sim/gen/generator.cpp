// Chunk-column pipeline and thread pool of the world generator.
#include "sim/gen/generator.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "sim/gen/gen_random.h"
#include "sim/gen/internal/shapes.h"
#include "sim/gen/internal/world_field.h"
#include "sim/gen/noise.h"

namespace loam::sim {
namespace {

using internal::Column;
using internal::ColumnWindow;
using internal::Shape;
using internal::VoxelBounds;

constexpr int kChunkVoxels = kChunkBricks * kBrickSize;  // 128
constexpr int kChunkVoxelShift = kBrickShift + kChunkShift;
constexpr int kBricksPerLayer = kChunkBricks * kChunkBricks;
constexpr int kMixed = -1;  // classification: not one material (MaterialId values are 0..255)

/// Per brick column of a chunk column: the ranges that decide uniform bricks.
struct BrickColumnStats {
  std::int32_t minDeepTop, maxDeepTop;  // ground - deepVoxels
  std::int32_t minSurfTop, maxSurfTop;  // ground - surfaceVoxels
  std::int32_t minGround, maxGround;
  std::int32_t minWater, maxTop;        // water top; max(ground, water)
  int surface, water;                   // kMixed when the 64 columns differ
};

/// Everything one worker thread reuses between chunk columns.
struct Scratch {
  std::vector<internal::GridSample> lattice;
  std::vector<Column> cols;
  std::vector<std::uint8_t> flatCells;
  std::vector<Shape> shapes;
  std::vector<int> chunkShapes;
  std::vector<std::uint32_t> brickStart;  // 4097 prefix offsets
  std::vector<std::uint32_t> brickShapes;
  BrickColumnStats stats[kBricksPerLayer];
  MaterialId vox[kBrickVoxels];
};

class Generator {
 public:
  Generator(const Scene& scene, std::uint64_t seed) : scene_(scene), field_(scene, seed) {
    std::vector<Structure> buildings;
    if (!field_.buildings().empty()) {
      const MaterialId plinth = scene.materials->find("cobble").value_or(scene.terrain.deep.id);
      const MaterialId glass = scene.materials->find("glass").value_or(kAir);
      for (const internal::Building& b : field_.buildings()) internal::buildingStructures(b, plinth, glass, buildings);
    }
    internal::buildFixedShapes(scene, seed, buildings, fixed_);
    deep_ = scene.terrain.deep.id;
    sub_ = scene.terrain.subsurface.id;
    deepV_ = field_.deepVoxels();
    surfV_ = field_.surfaceVoxels();
  }

  /// Writes the chunks of column (cx, cz) into out. Threads may fill different
  /// columns of one store at once when those chunks are resident (generateRegion), or
  /// each its own store (ChunkGenerator).
  void chunkColumn(std::int32_t cx, std::int32_t cz, Scratch& s, BrickStore& out) const {
    const WorldBounds& wb = scene_.worldBounds;
    std::int32_t x0 = cx * kChunkVoxels, z0 = cz * kChunkVoxels;
    std::int32_t yLo = wb.minBrick.y * kBrickSize, yHi = wb.maxBrick.y * kBrickSize;
    field_.columns(x0, z0, kChunkVoxels, s.lattice, s.cols, s.flatCells);
    ColumnWindow win{s.cols.data(), s.flatCells.data(), x0, z0, kChunkVoxels};

    VoxelBounds region{x0, yLo, z0, x0 + kChunkVoxels, yHi, z0 + kChunkVoxels};
    s.shapes.clear();
    internal::collectScatterShapes(field_, region, s.shapes);
    for (const Shape& t : fixed_.tunnels) {
      if (t.box.overlaps(region)) s.shapes.push_back(t);
    }
    for (const Shape& t : fixed_.structures) {
      if (t.box.overlaps(region)) s.shapes.push_back(t);
    }

    computeStats(s, win);
    BrickColumnStats all = s.stats[0];
    for (int i = 1; i < kBricksPerLayer; ++i) {
      const BrickColumnStats& b = s.stats[i];
      all.minDeepTop = std::min(all.minDeepTop, b.minDeepTop);
      all.maxTop = std::max(all.maxTop, b.maxTop);
    }

    for (std::int32_t cy = wb.minBrick.y >> kChunkShift; cy < (wb.maxBrick.y >> kChunkShift); ++cy) {
      std::int32_t y0 = cy * kChunkVoxels;
      VoxelBounds cbox{x0, y0, z0, x0 + kChunkVoxels, y0 + kChunkVoxels, z0 + kChunkVoxels};
      s.chunkShapes.clear();
      for (size_t i = 0; i < s.shapes.size(); ++i) {
        if (s.shapes[i].box.overlaps(cbox)) s.chunkShapes.push_back(static_cast<int>(i));
      }
      ChunkCoord cc{cx, cy, cz};
      if (s.chunkShapes.empty()) {
        if (y0 >= all.maxTop) continue;  // all air: the store starts as air
        if (y0 + kChunkVoxels <= all.minDeepTop) {
          out.fillChunk(cc, deep_);
          continue;
        }
        // Terrain alone may still make the chunk one material (e.g. a thick layer).
        std::optional<MaterialId> one = uniformChunk(s, y0);
        if (one) {
          if (*one != kAir) out.fillChunk(cc, *one);
          continue;
        }
      }
      mapShapesToBricks(s, cbox);
      for (int lz = 0; lz < kChunkBricks; ++lz) {
        for (int ly = 0; ly < kChunkBricks; ++ly) {
          for (int lx = 0; lx < kChunkBricks; ++lx) {
            brick(s, win, cc, lx, ly, lz, out);
          }
        }
      }
      out.compactChunk(cc);
    }
  }

 private:
  void computeStats(Scratch& s, const ColumnWindow& win) const {
    for (int bz = 0; bz < kChunkBricks; ++bz) {
      for (int bx = 0; bx < kChunkBricks; ++bx) {
        BrickColumnStats st{INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN,
                            kAir, kAir};
        bool first = true;
        std::int32_t cx = win.x0 + bx * kBrickSize, cz = win.z0 + bz * kBrickSize;
        int n = win.cellFlat(cx, cz) ? 1 : kBrickSize;  // a flat cell: one column says it all
        for (int lz = 0; lz < n; ++lz) {
          for (int lx = 0; lx < n; ++lx) {
            const Column& c = win.at(cx + lx, cz + lz);
            st.minDeepTop = std::min(st.minDeepTop, c.deepTop);
            st.maxDeepTop = std::max(st.maxDeepTop, c.deepTop);
            st.minSurfTop = std::min(st.minSurfTop, c.ground - surfV_);
            st.maxSurfTop = std::max(st.maxSurfTop, c.ground - surfV_);
            st.minGround = std::min(st.minGround, c.ground);
            st.maxGround = std::max(st.maxGround, c.ground);
            st.minWater = std::min(st.minWater, c.water);
            st.maxTop = std::max(st.maxTop, std::max(c.ground, c.water));
            if (first) {
              st.surface = c.surface;
              st.water = c.waterMaterial;
              first = false;
            } else {
              if (st.surface != c.surface) st.surface = kMixed;
              if (st.water != c.waterMaterial) st.water = kMixed;
            }
          }
        }
        s.stats[bz * kChunkBricks + bx] = st;
      }
    }
  }

  /// Counting sort of (brick, shape) pairs: brickShapes[brickStart[b] .. brickStart[b + 1])
  /// are the shapes overlapping brick b, in shape order.
  void mapShapesToBricks(Scratch& s, const VoxelBounds& cbox) const {
    s.brickStart.assign(internal::kChunkBrickCount + 1, 0);
    auto range = [&](const Shape& sh, int lo[3], int hi[3]) {
      lo[0] = (std::max(sh.box.x0, cbox.x0) - cbox.x0) >> kBrickShift;
      lo[1] = (std::max(sh.box.y0, cbox.y0) - cbox.y0) >> kBrickShift;
      lo[2] = (std::max(sh.box.z0, cbox.z0) - cbox.z0) >> kBrickShift;
      hi[0] = (std::min(sh.box.x1, cbox.x1) - 1 - cbox.x0) >> kBrickShift;
      hi[1] = (std::min(sh.box.y1, cbox.y1) - 1 - cbox.y0) >> kBrickShift;
      hi[2] = (std::min(sh.box.z1, cbox.z1) - 1 - cbox.z0) >> kBrickShift;
    };
    for (int si : s.chunkShapes) {
      int lo[3], hi[3];
      range(s.shapes[static_cast<size_t>(si)], lo, hi);
      for (int z = lo[2]; z <= hi[2]; ++z)
        for (int y = lo[1]; y <= hi[1]; ++y)
          for (int x = lo[0]; x <= hi[0]; ++x) ++s.brickStart[static_cast<size_t>(brickIndexInChunk(BrickCoord{x, y, z})) + 1];
    }
    for (int i = 0; i < internal::kChunkBrickCount; ++i) s.brickStart[static_cast<size_t>(i) + 1] += s.brickStart[static_cast<size_t>(i)];
    s.brickShapes.resize(s.brickStart[internal::kChunkBrickCount]);
    std::vector<std::uint32_t> fillPos(s.brickStart.begin(), s.brickStart.end() - 1);
    for (int si : s.chunkShapes) {
      int lo[3], hi[3];
      range(s.shapes[static_cast<size_t>(si)], lo, hi);
      for (int z = lo[2]; z <= hi[2]; ++z)
        for (int y = lo[1]; y <= hi[1]; ++y)
          for (int x = lo[0]; x <= hi[0]; ++x) {
            auto b = static_cast<size_t>(brickIndexInChunk(BrickCoord{x, y, z}));
            s.brickShapes[fillPos[b]++] = static_cast<std::uint32_t>(si);
          }
    }
  }

  /// The material of a shape-free chunk at voxel y0 when every brick is the same
  /// uniform material, else nullopt.
  std::optional<MaterialId> uniformChunk(const Scratch& s, std::int32_t y0) const {
    int one = kMixed;
    for (int i = 0; i < kBricksPerLayer; ++i) {
      for (int ly = 0; ly < kChunkBricks; ++ly) {
        bool air = false;
        int m = classify(s.stats[i], y0 + ly * kBrickSize, air);
        if (m == kMixed || (one != kMixed && one != m)) return std::nullopt;
        one = m;
      }
    }
    return static_cast<MaterialId>(one);
  }

  /// Uniform material of a terrain-only brick at voxel y oy, or kMixed.
  int classify(const BrickColumnStats& st, std::int32_t oy, bool& air) const {
    air = false;
    std::int32_t top = oy + kBrickSize;
    if (oy >= st.maxTop) {
      air = true;
      return kAir;
    }
    if (top <= st.minDeepTop) return deep_;
    if (oy >= st.maxDeepTop && top <= st.minSurfTop) return sub_;
    if (st.surface != kMixed && oy >= st.maxSurfTop && top <= st.minGround) return st.surface;
    if (st.water != kMixed && oy >= st.maxGround && top <= st.minWater) return st.water;
    return kMixed;
  }

  void terrainVoxels(const ColumnWindow& win, std::int32_t ox, std::int32_t oy, std::int32_t oz,
                     MaterialId* vox) const {
    auto clampRow = [oy](std::int32_t y) {
      std::int32_t r = y - oy;
      return r < 0 ? 0 : (r > kBrickSize ? kBrickSize : r);
    };
    for (int lz = 0; lz < kBrickSize; ++lz) {
      for (int lx = 0; lx < kBrickSize; ++lx) {
        const Column& c = win.at(ox + lx, oz + lz);
        // Layer boundaries as rows of this brick: deep | sub | surface | water | air.
        std::int32_t b0 = clampRow(c.deepTop), b1 = clampRow(c.ground - surfV_), b2 = clampRow(c.ground),
                     b3 = clampRow(c.water);
        MaterialId* col = vox + voxelIndexInBrick(lx, 0, lz);
        int ly = 0;
        for (; ly < b0; ++ly) col[ly * kBrickSize] = deep_;
        for (; ly < b1; ++ly) col[ly * kBrickSize] = sub_;
        for (; ly < b2; ++ly) col[ly * kBrickSize] = c.surface;
        for (; ly < b3; ++ly) col[ly * kBrickSize] = c.waterMaterial;
        for (; ly < kBrickSize; ++ly) col[ly * kBrickSize] = kAir;
      }
    }
  }

  void brick(Scratch& s, const ColumnWindow& win, ChunkCoord cc, int lx, int ly, int lz, BrickStore& out) const {
    BrickCoord b{cc.x * kChunkBricks + lx, cc.y * kChunkBricks + ly, cc.z * kChunkBricks + lz};
    std::int32_t ox = b.x * kBrickSize, oy = b.y * kBrickSize, oz = b.z * kBrickSize;
    const BrickColumnStats& st = s.stats[lz * kChunkBricks + lx];
    bool air = false;
    int uni = classify(st, oy, air);
    auto bi = static_cast<size_t>(brickIndexInChunk(BrickCoord{lx, ly, lz}));
    std::uint32_t first = s.brickStart[bi], last = s.brickStart[bi + 1];
    if (first == last && uni != kMixed) {
      if (!air) out.fillBrick(b, static_cast<MaterialId>(uni));
      return;
    }
    if (uni != kMixed) {
      std::memset(s.vox, uni, sizeof s.vox);  // uni is a MaterialId here
    } else {
      terrainVoxels(win, ox, oy, oz, s.vox);
    }
    bool wrote = false;
    for (std::uint32_t i = first; i < last; ++i) {
      wrote = internal::paintShape(s.shapes[s.brickShapes[i]], ox, oy, oz, win, s.vox) || wrote;
    }
    if (!wrote && uni != kMixed) {  // shapes' boxes reached the brick, their voxels did not
      if (!air) out.fillBrick(b, static_cast<MaterialId>(uni));
      return;
    }
    // Shapes often leave a brick uniform (inside a rock or canopy core, carved air).
    std::uint64_t pattern = 0x0101010101010101ull * s.vox[0];
    bool uniform = wrote;
    for (int i = 0; i < kBrickVoxels && uniform; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, s.vox + i, sizeof w);
      uniform = w == pattern;
    }
    if (uniform) {
      if (s.vox[0] != kAir) out.fillBrick(b, s.vox[0]);
      return;
    }
    out.writeBrick(b, s.vox);
  }

  const Scene& scene_;
  internal::WorldField field_;
  internal::FixedShapes fixed_;
  MaterialId deep_ = kAir, sub_ = kAir;
  std::int32_t deepV_ = 0, surfV_ = 0;
};

}  // namespace

// ---- ChunkGenerator -----------------------------------------------------------------

struct ChunkGenerator::Impl {
  explicit Impl(const Scene& s, std::uint64_t seed) : scene(s), gen(scene, seed) {}
  Scene scene;  // a copy: the generator outlives the caller's scene
  Generator gen;
  // Column tables not in use, one per thread generating at once at most. Kept here
  // rather than thread_local: a thread_local with a destructor crashes mingw builds
  // under wine as worker threads exit (check-determinism's windows runs died near
  // the end of generation).
  std::mutex spareMutex;
  std::vector<std::unique_ptr<Scratch>> spare;
};

namespace {

Result<void> checkGeneratable(const Scene& scene, std::uint32_t generatorVersion) {
  if (generatorVersion != kGeneratorVersion) {
    return makeError("generator version " + std::to_string(generatorVersion) + " requested; this build implements " +
                     std::to_string(kGeneratorVersion));
  }
  if (!scene.materials) {
    return makeError(scene.sourcePath + ": scene has no material table (parsed without one)");
  }
  if (!BrickStore::validBounds(scene.worldBounds)) {
    return makeError(scene.sourcePath + ": world bounds are not whole chunks or are too large");
  }
  return {};
}

// Canonical order, each column once.
void sortColumns(std::vector<ChunkColumn>& columns) {
  std::sort(columns.begin(), columns.end(), [](ChunkColumn a, ChunkColumn b) { return canonicalBefore(a, b); });
  columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
}

}  // namespace

Result<ChunkGenerator> ChunkGenerator::create(const Scene& scene, std::uint64_t seed, std::uint32_t generatorVersion) {
  if (auto ok = checkGeneratable(scene, generatorVersion); !ok) return ok.error();
  ChunkGenerator g;
  g.impl_ = std::make_unique<Impl>(scene, seed);
  return g;
}

ChunkGenerator::ChunkGenerator() = default;
ChunkGenerator::ChunkGenerator(ChunkGenerator&&) noexcept = default;
ChunkGenerator& ChunkGenerator::operator=(ChunkGenerator&&) noexcept = default;
ChunkGenerator::~ChunkGenerator() = default;

const WorldBounds& ChunkGenerator::bounds() const noexcept { return impl_->scene.worldBounds; }

bool ChunkGenerator::contains(ChunkColumn column) const noexcept {
  return impl_->scene.worldBounds.containsColumn(column.x, column.z);
}

void ChunkGenerator::generateColumn(ChunkColumn column, BrickStore& out) const {
  LOAM_ASSERT(contains(column));
  std::unique_ptr<Scratch> scratch;
  {
    std::lock_guard lock(impl_->spareMutex);
    if (!impl_->spare.empty()) {
      scratch = std::move(impl_->spare.back());
      impl_->spare.pop_back();
    }
  }
  if (!scratch) scratch = std::make_unique<Scratch>();
  impl_->gen.chunkColumn(column.x, column.z, *scratch, out);
  std::lock_guard lock(impl_->spareMutex);
  impl_->spare.push_back(std::move(scratch));
}

std::vector<ChunkColumn> columnsAround(const WorldBounds& bounds, std::int32_t voxelX, std::int32_t voxelZ,
                                       std::int32_t radiusVoxels) {
  std::vector<ChunkColumn> out;
  if (radiusVoxels < 0) return out;
  const std::int64_t cx0 = std::max<std::int64_t>(bounds.minBrick.x >> kChunkShift,
                                                  (std::int64_t{voxelX} - radiusVoxels) >> kChunkVoxelShift);
  const std::int64_t cx1 = std::min<std::int64_t>((bounds.maxBrick.x >> kChunkShift) - 1,
                                                  (std::int64_t{voxelX} + radiusVoxels) >> kChunkVoxelShift);
  const std::int64_t cz0 = std::max<std::int64_t>(bounds.minBrick.z >> kChunkShift,
                                                  (std::int64_t{voxelZ} - radiusVoxels) >> kChunkVoxelShift);
  const std::int64_t cz1 = std::min<std::int64_t>((bounds.maxBrick.z >> kChunkShift) - 1,
                                                  (std::int64_t{voxelZ} + radiusVoxels) >> kChunkVoxelShift);
  // Distance from the point to the nearest voxel of a column's square (0 inside).
  auto distance2 = [&](std::int64_t cx, std::int64_t cz) {
    auto axis = [](std::int64_t p, std::int64_t c) {
      const std::int64_t lo = c * kChunkVoxels, hi = lo + kChunkVoxels - 1;
      return p < lo ? lo - p : (p > hi ? p - hi : 0);
    };
    const std::int64_t dx = axis(voxelX, cx), dz = axis(voxelZ, cz);
    return dx * dx + dz * dz;
  };
  std::vector<std::pair<std::int64_t, ChunkColumn>> keyed;
  const std::int64_t r2 = std::int64_t{radiusVoxels} * radiusVoxels;
  for (std::int64_t cz = cz0; cz <= cz1; ++cz) {
    for (std::int64_t cx = cx0; cx <= cx1; ++cx) {
      const std::int64_t d2 = distance2(cx, cz);
      if (d2 <= r2) keyed.push_back({d2, ChunkColumn{static_cast<std::int32_t>(cx), static_cast<std::int32_t>(cz)}});
    }
  }
  // Nearest first; ties in canonical order (z, then x), so the list is a function of
  // its arguments alone.
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return a.second.z != b.second.z ? a.second.z < b.second.z : a.second.x < b.second.x;
  });
  out.reserve(keyed.size());
  for (const auto& k : keyed) out.push_back(k.second);
  return out;
}

std::vector<ChunkColumn> spawnColumns(const Scene& scene) {
  const WorldBounds& wb = scene.worldBounds;
  std::vector<ChunkColumn> out;
  const auto around = [&](std::int32_t vx, std::int32_t vz) {
    for (ChunkColumn c : columnsAround(wb, vx, vz, 2 * kVoxelsPerMetre)) out.push_back(c);
  };
  for (const SpawnPoint& sp : scene.spawns)
    around(static_cast<std::int32_t>(std::floor(sp.position.x * kVoxelsPerMetre)),
           static_cast<std::int32_t>(std::floor(sp.position.z * kVoxelsPerMetre)));
  // No spawn listed: players appear at the centre (createSimStateFromWorld).
  if (scene.spawns.empty())
    around((wb.minBrick.x + wb.maxBrick.x) / 2 * kBrickSize, (wb.minBrick.z + wb.maxBrick.z) / 2 * kBrickSize);
  sortColumns(out);
  return out;
}

// ---- whole worlds and regions --------------------------------------------------------

Result<BrickStore> generateRegion(const Scene& scene, std::uint64_t seed, std::span<const ChunkColumn> columns,
                                  std::uint32_t generatorVersion, const GenerateOptions& options) {
  if (auto ok = checkGeneratable(scene, generatorVersion); !ok) return ok.error();
  const WorldBounds& wb = scene.worldBounds;
  const std::int32_t cy0 = wb.minBrick.y >> kChunkShift, cy1 = wb.maxBrick.y >> kChunkShift;
  // The region is generated at once, so it must fit in memory first.
  if (static_cast<std::int64_t>(columns.size()) * (cy1 - cy0) > kMaxGeneratedChunks) {
    return makeError(scene.sourcePath + ": the region holds more than " + std::to_string(kMaxGeneratedChunks) +
                     " chunks, too many to generate at once");
  }
  auto made = ChunkGenerator::create(scene, seed, generatorVersion);
  if (!made) return made.error();
  const ChunkGenerator& gen = *made;
  std::vector<ChunkColumn> work;
  work.reserve(columns.size());
  for (ChunkColumn c : columns) {
    if (!gen.contains(c)) {
      return makeError(scene.sourcePath + ": chunk column " + std::to_string(c.x) + "," + std::to_string(c.z) +
                       " is outside the world bounds");
    }
    work.push_back(c);
  }
  // Each column once, in canonical order: duplicates would be two writers of a chunk.
  std::sort(work.begin(), work.end(), [](ChunkColumn a, ChunkColumn b) { return a.z != b.z ? a.z < b.z : a.x < b.x; });
  work.erase(std::unique(work.begin(), work.end()), work.end());

  BrickStore store(scene.worldBounds);
  // Workers write different chunks concurrently, which the store allows only for
  // resident chunks: make every chunk resident first (markGenerated releases air).
  for (ChunkColumn c : work)
    for (std::int32_t cy = cy0; cy < cy1; ++cy) store.addChunk(ChunkCoord{c.x, cy, c.z});

  if (options.orderSeed != 0) {
    // A keyed shuffle: sort by a hash of the position (tests prove order independence).
    std::vector<std::pair<std::uint64_t, ChunkColumn>> keyed;
    for (ChunkColumn c : work) keyed.push_back({genHash(options.orderSeed, GenPurpose::ChunkOrder, c.x, c.z), c});
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < work.size(); ++i) work[i] = keyed[i].second;
  }

  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  if (threads < 1) threads = 1;
  if (static_cast<size_t>(threads) > work.size()) threads = static_cast<int>(std::max<size_t>(work.size(), 1));

  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  auto worker = [&](bool caller) {
    for (;;) {
      size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= work.size()) break;
      gen.generateColumn(work[i], store);
      size_t d = done.fetch_add(1, std::memory_order_acq_rel) + 1;
      if (caller && options.progress) options.progress(static_cast<double>(d) / static_cast<double>(work.size()));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, false);
  worker(true);
  for (std::thread& t : pool) t.join();
  if (options.progress) options.progress(1.0);
  store.markGenerated();
  return store;
}

bool generatableWhole(const Scene& scene) noexcept {
  const WorldBounds& wb = scene.worldBounds;
  const std::int64_t chunks = std::int64_t{(wb.maxBrick.x >> kChunkShift) - (wb.minBrick.x >> kChunkShift)} *
                              ((wb.maxBrick.y >> kChunkShift) - (wb.minBrick.y >> kChunkShift)) *
                              ((wb.maxBrick.z >> kChunkShift) - (wb.minBrick.z >> kChunkShift));
  return chunks <= kMaxGeneratedChunks;
}

Result<BrickStore> generateWorld(const Scene& scene, std::uint64_t seed, std::uint32_t generatorVersion,
                                 const GenerateOptions& options) {
  if (auto ok = checkGeneratable(scene, generatorVersion); !ok) return ok.error();
  const WorldBounds& wb = scene.worldBounds;
  const std::int32_t cx0 = wb.minBrick.x >> kChunkShift, cx1 = wb.maxBrick.x >> kChunkShift;
  const std::int32_t cz0 = wb.minBrick.z >> kChunkShift, cz1 = wb.maxBrick.z >> kChunkShift;
  // Checked before listing the columns, so a huge world costs nothing to refuse.
  if (!generatableWhole(scene)) {
    return makeError(scene.sourcePath + ": world bounds hold more than " + std::to_string(kMaxGeneratedChunks) +
                     " chunks, too many to generate whole");
  }
  std::vector<ChunkColumn> all;
  for (std::int32_t cz = cz0; cz < cz1; ++cz)
    for (std::int32_t cx = cx0; cx < cx1; ++cx) all.push_back({cx, cz});
  return generateRegion(scene, seed, all, generatorVersion, options);
}

TerrainColumn terrainColumnAt(const Scene& scene, std::uint64_t seed, std::int32_t x, std::int32_t z) {
  return TerrainSampler(scene, seed).at(x, z).column;
}

struct TerrainSampler::Impl {
  Impl(const Scene& s, std::uint64_t seed) : scene(s), field(scene, seed) {}
  Scene scene;  // the field refers to it
  internal::WorldField field;
};

TerrainSampler::TerrainSampler(const Scene& scene, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(scene, seed)) {}
TerrainSampler::TerrainSampler(TerrainSampler&&) noexcept = default;
TerrainSampler& TerrainSampler::operator=(TerrainSampler&&) noexcept = default;
TerrainSampler::~TerrainSampler() = default;

const Scene& TerrainSampler::scene() const noexcept { return impl_->scene; }

TerrainSample TerrainSampler::at(std::int32_t x, std::int32_t z) const noexcept {
  const Column c = impl_->field.columnAt(x, z);
  return {{c.ground, c.water, c.held}, c.surface, c.waterMaterial, c.biome};
}

std::int32_t TerrainSampler::heldWaterTop(std::int32_t x, std::int32_t z) const noexcept {
  if (!impl_->field.mayHoldStreamWater(x, z)) return INT32_MIN;
  const Column c = impl_->field.columnAt(x, z);
  return c.held && c.water > c.ground ? c.water : INT32_MIN;
}

VoxelCoord placementVoxel(const Scene& scene, std::uint64_t seed, const Vec3& position, bool onGround) {
  auto vx = static_cast<std::int32_t>(floorToInt(position.x * internal::kVoxelsPerMetreD));
  auto vz = static_cast<std::int32_t>(floorToInt(position.z * internal::kVoxelsPerMetreD));
  if (onGround) {
    TerrainColumn c = terrainColumnAt(scene, seed, vx, vz);
    return {vx, std::max(c.ground, c.water), vz};
  }
  return {vx, static_cast<std::int32_t>(floorToInt(position.y * internal::kVoxelsPerMetreD)), vz};
}

}  // namespace loam::sim
