// MeshCache: pending bits per chunk (main thread), a fixed pool of PaddedBrick slots
// handed to workers (with room for a coarse brick's fine voxels, coarsened by the
// worker), per-brick meshes kept per chunk and concatenated on change.
//
// Ordering: every gathered brick gets a sequence number stored in its record; a
// result is applied only if its number is still the record's, so a brick re-dirtied
// (or found hidden) while in flight never gets an older mesh back.
//
// Streamed worlds: a chunk is read only when its column and the 8 around it are
// present (every brick read for it, padding and hidden tests included, lies in
// them). A chunk met in the nearest-first walk without them is parked (waiting) with
// its pending bits and left out of the walk; its column goes into waitingColumns with
// one absent column it needs, and each update looks that one column up. When it is
// present the other 8 are checked, and once all are the column's chunks rejoin the
// walk. This does not rely on change subscribers: a column that arrives all air
// reports no changed brick, yet its neighbours' border faces depend on it.
//
// Levels of detail: the level is kept per chunk column in range (plan distance is
// the same for the whole column), also for columns whose chunks hold no state here:
// a chunk with no faces at one level can have some at another, so a level change
// must queue it although nothing of it is kept. A chunk re-meshed for a level change
// (holdOld) is assembled only once all its bricks are back, so the renderer keeps
// its old mesh meanwhile instead of a mix of levels.
#include "mesh/mesh_cache.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "mesh/internal/coarse_gather.h"
#include "mesh/internal/padded_gather.h"

namespace loam::mesh {

namespace {

constexpr double kBrickMetres = static_cast<double>(sim::kBrickSize) / sim::kVoxelsPerMetre;  // 0.4
constexpr int kChunkBrickCount = sim::kChunkBricks * sim::kChunkBricks * sim::kChunkBricks;
constexpr int kMaxInFlight = 1024;   // Slots (5 KB each)
constexpr int kGridThreshold = 48;   // pending bricks in a chunk above which hidden tests use a class grid
constexpr int kMaxChangedAge = 8;    // updates a busy changed chunk may wait before it is assembled anyway
constexpr double kChunkMetres = sim::kChunkBricks * kBrickMetres;  // 6.4
constexpr double kLevelHysteresisMetres = kChunkMetres / 4;   // how far past a threshold a column changes level

int brickFloor(double metres) {
  double b = metres / kBrickMetres;
  int i = static_cast<int>(b);
  if (static_cast<double>(i) > b) --i;
  return i;
}

struct Job {
  int slot = 0;
  std::uint64_t seq = 0;
  sim::BrickCoord brick;
  const sim::BrickStore* world = nullptr;  // set: the worker gathers (finish(): the world is frozen)
  const sim::VoxelOverlay* overlay = nullptr;  // with world: the worker patches the copy with it
  std::uint64_t epoch = 0;                 // which finish() call: the worker's DecodeCache is valid within one
  int level = 0;                           // > 0: coarse; without world, the slot's wide copy is coarsened
  bool atFloor = false;                    // coarse, without world: the brick is on the world's floor
  std::uint8_t open = 0;                   // sides to openFaces: seams with a column at another level
};

/// What a job works on: the padded brick it meshes and, for a coarse brick copied
/// out by the main thread, the fine voxels the worker coarsens into it.
struct Slot {
  PaddedBrick padded;
  internal::WideBrick wide;
};

/// Writes the overlay's voxels in brick b and its border over the copy.
void patchPadded(const sim::VoxelOverlay& overlay, PaddedBrick& p) {
  internal::forOverlayAround(overlay, p.brick, 1, [&](int x, int y, int z, sim::MaterialId m) {
    p.voxels[static_cast<std::size_t>(internal::paddedIndex(x + 1, y + 1, z + 1))] = m;
  });
}

struct Result {
  int slot = 0;
  std::uint64_t seq = 0;
  sim::BrickCoord brick;
  std::vector<PackedVertex> opaque;
  std::vector<PackedVertex> water;
};

struct BrickRecord {
  std::uint64_t seq = 0;     // latest job issued for the brick
  bool awaiting = false;     // that job's result has not been applied yet
  std::vector<PackedVertex> opaque;
  std::vector<PackedVertex> water;
};

struct ChunkState {
  sim::ChunkCoord coord;
  bool listed = false;                         // in Impl::changedList
  std::uint64_t pending[kChunkBrickCount / 64] = {};
  int pendingCount = 0;
  int awaitingCount = 0;                       // records with awaiting set
  std::map<std::uint16_t, BrickRecord> bricks; // bricks with quads or in flight, by brickIndexInChunk
  std::size_t quads = 0;
  bool changed = false;
  int changedAge = 0;
  bool reported = false;                       // last assembled mesh was non-empty
  bool waiting = false;                        // parked: a column it reads is absent (streamed worlds)
  bool holdOld = false;                        // re-meshed for a level change: assemble only when settled
};

enum : std::uint8_t { kClsEmpty = 0, kClsOpaque = 1, kClsLiquid = 2, kClsMixed = 3 };

/// A direct-mapped cache of one value per brick and level, valid within one epoch (a
/// finish() or update() call: the world does not change within it; epoch 0 is
/// empty). Slots are the low XBits, YBits and ZBits of the brick coordinates.
template <class Value, int XBits, int YBits, int ZBits>
struct BrickCache {
  struct Entry {
    sim::BrickCoord coord;
    std::uint64_t epoch = 0;
    int level = 0;
    Value value;
  };
  std::vector<Entry> entries = std::vector<Entry>(std::size_t{1} << (XBits + YBits + ZBits));

  /// The value of brick c at level, made by fill(Value&) on a miss.
  template <class Fill>
  const Value& get(sim::BrickCoord c, int level, std::uint64_t epoch, Fill&& fill) {
    constexpr int kMaskX = (1 << XBits) - 1, kMaskY = (1 << YBits) - 1, kMaskZ = (1 << ZBits) - 1;
    const int slot = (c.x & kMaskX) | ((c.y & kMaskY) << XBits) | ((c.z & kMaskZ) << (XBits + YBits));
    Entry& e = entries[static_cast<std::size_t>(slot)];
    if (e.epoch != epoch || e.coord != c || e.level != level) {
      fill(e.value);
      e.coord = c;
      e.epoch = epoch;
      e.level = level;
    }
    return e.value;
  }
};

/// Decoded mixed bricks. A mixed brick is read by the 27 gathers around it; decoding
/// it once and copying slabs is about three times cheaper than per-voxel palette
/// reads. 16 x 8 x 4 bricks, 266 KB.
using DecodeCache = BrickCache<std::array<sim::MaterialId, sim::kBrickVoxels>, 4, 3, 2>;

const sim::MaterialId* decodedBrick(DecodeCache& cache, const sim::BrickView& v, sim::BrickCoord c,
                                    std::uint64_t epoch) {
  return cache.get(c, 0, epoch, [&](auto& voxels) { v.decode(voxels.data()); }).data();
}

/// Coarse blocks of mixed bricks (internal::BrickBlocks): a coarse brick reads the
/// blocks of the 27 bricks around it, and coarsening a brick once instead of in each
/// of those reads was 8x fewer block tallies at level 2 (a third of the first view's
/// meshing time on highlands). 16 x 16 x 16 bricks, 300 KB: a miss costs the 27
/// bricks' worth of block tallies, so it holds a chunk and the bricks around it.
using BlockCache = BrickCache<internal::BrickBlocks, 4, 4, 4>;

/// True when overlay holds a voxel in one of the 27 bricks around b.
bool overlayNear(const sim::VoxelOverlay* overlay, sim::BrickCoord b) {
  if (overlay == nullptr || overlay->empty()) return false;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        if (!overlay->voxelsOf({b.x + dx, b.y + dy, b.z + dz}).empty()) return true;
  return false;
}

using internal::paddedIndex;

/// gatherPaddedBrick through a DecodeCache (same result, tested against it).
void gatherCached(const sim::BrickStore& world, sim::BrickCoord b, PaddedBrick& out, DecodeCache& cache,
                  std::uint64_t epoch) {
  using internal::PaddedSpan;
  auto copyMixed = [&](const sim::BrickView& v, sim::BrickCoord c, int dx, int, int, PaddedSpan x, PaddedSpan y,
                       PaddedSpan z) {
    const sim::MaterialId* src = decodedBrick(cache, v, c, epoch);
    for (int pz = z.lo; pz < z.hi; ++pz) {
      for (int py = y.lo; py < y.hi; ++py) {
        const sim::MaterialId* row = src + sim::voxelIndexInBrick(0, (py + 7) & 7, (pz + 7) & 7);
        sim::MaterialId* dst = &out.voxels[static_cast<std::size_t>(paddedIndex(0, py, pz))];
        if (dx == 0) {
          std::memcpy(dst + 1, row, 8);
        } else {
          dst[x.lo] = row[(x.lo + 7) & 7];
        }
      }
    }
  };
  internal::gatherPadded(world, b, out, copyMixed);
}

/// gatherCoarseBrick through a DecodeCache (same result), the overlay laid over the
/// fine voxels before they are coarsened.
void gatherCoarseCached(const sim::BrickStore& world, sim::BrickCoord b, int level, const MeshClassTable& classes,
                        const sim::VoxelOverlay* overlay, PaddedBrick& out, DecodeCache& cache, std::uint64_t epoch) {
  internal::WideBrick wide;
  internal::gatherWide(world, b, level, wide,
                       [&](const sim::BrickView& v, sim::BrickCoord c) { return decodedBrick(cache, v, c, epoch); });
  if (overlay) internal::patchWide(*overlay, wide);
  internal::coarsenWide(wide, classes, b.y == world.bounds().minBrick.y, out);
}

}  // namespace

struct MeshCache::Impl {
  MeshClassTable classes;
  // Coarse bricks are meshed without AO: AO varies inside a coarse face (it is read
  // from the fine-sized cells next to each face cell), which would split the face
  // into quads off the block grid and keep most of the quads level 1 is for.
  MeshClassTable coarseClasses;
  MeshCacheConfig config;

  // ---- shared with workers ----
  std::mutex jobMutex;
  std::condition_variable jobCv;
  std::deque<Job> jobs;
  bool stop = false;
  std::mutex resultMutex;
  std::condition_variable resultCv;
  std::vector<Result> results;
  std::vector<std::thread> workers;
  std::vector<Slot> slots;  // a slot is owned by one job from dispatch until its result is drained

  // ---- main thread ----
  std::vector<int> freeSlots;
  std::map<sim::ChunkCoord, ChunkState> chunks;
  std::map<sim::ChunkCoord, ChunkMesh> updates;
  std::vector<sim::ChunkCoord> changedList;     // chunks with changed set, to assemble
  std::vector<sim::ChunkCoord> order;           // chunks with pending bricks, nearest first
  std::size_t orderPos = 0;
  bool orderStale = true;                       // a chunk gained pending bricks or the centre moved
  std::size_t totalPending = 0;
  std::size_t waitingBricks = 0;                // pending bricks of parked chunks (part of totalPending)
  std::map<std::pair<int, int>, sim::ChunkColumn> waitingColumns;  // (x, z) of parked chunks -> an absent column
  std::map<std::pair<int, int>, int> columnLevels;  // (x, z) of chunk columns in range -> level (levels on only)
  std::size_t jobsOut = 0;
  std::uint64_t nextSeq = 1;
  bool hasCentre = false;
  const sim::BrickStore* frozenWorld = nullptr;  // during finish(): workers may read it
  const sim::VoxelOverlay* overlay = nullptr;    // setOverlay's
  std::uint64_t finishEpoch = 0;                 // counts finish() calls (DecodeCache validity)
  DecodeCache mainDecoded;                       // the main thread's, for coarse copies within one update()
  std::uint64_t updateEpoch = 0;                 // counts update() calls (mainDecoded validity)
  sim::WorldBounds bounds;
  int centreBx = 0, centreBz = 0;  // the disc is centred on this brick column's centre
  double centreY = 0;
  double radius = 96.0;
  MeshCacheStats stats;

  Impl(const sim::MaterialTable& materials, MeshCacheConfig cfg)
      : classes(meshClasses(materials)), coarseClasses(classes), config(cfg) {
    coarseClasses.flatAo.fill(1);
    radius = cfg.radiusMetres;
    slots.resize(kMaxInFlight);
    freeSlots.reserve(kMaxInFlight);
    for (int i = kMaxInFlight - 1; i >= 0; --i) freeSlots.push_back(i);
    int n = std::max(1, cfg.workerThreads);
    for (int i = 0; i < n; ++i) workers.emplace_back([this] { workerLoop(); });
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
    std::vector<PackedVertex> opaque, water;
    DecodeCache decoded;
    BlockCache blocks;
    std::vector<Result> done;  // handed over in batches: one lock and one wake-up per batch
    auto handOver = [&] {
      if (done.empty()) return;
      {
        std::lock_guard<std::mutex> lock(resultMutex);
        for (Result& r : done) results.push_back(std::move(r));
      }
      done.clear();
      resultCv.notify_one();
    };
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(jobMutex);
        if (jobs.empty() && !done.empty()) {
          lock.unlock();
          handOver();
          lock.lock();
        }
        jobCv.wait(lock, [this] { return stop || !jobs.empty(); });
        if (stop) return;
        job = jobs.front();
        jobs.pop_front();
      }
      Slot& slot = slots[static_cast<std::size_t>(job.slot)];
      PaddedBrick& in = slot.padded;
      if (job.world && job.level > 0 && !overlayNear(job.overlay, job.brick)) {
        internal::gatherBlocks(*job.world, job.brick, job.level, classes, in,
                               [&](const sim::BrickView& v, sim::BrickCoord c) -> const internal::BrickBlocks& {
                                 return blocks.get(c, job.level, job.epoch, [&](internal::BrickBlocks& out) {
                                   internal::blocksOfBrick(decodedBrick(decoded, v, c, job.epoch), job.level,
                                                           classes, out);
                                 });
                               });
      } else if (job.world && job.level > 0) {
        gatherCoarseCached(*job.world, job.brick, job.level, classes, job.overlay, in, decoded, job.epoch);
      } else if (job.world) {
        gatherCached(*job.world, job.brick, in, decoded, job.epoch);
        if (job.overlay) patchPadded(*job.overlay, in);
      } else if (job.level > 0) {
        internal::coarsenWide(slot.wide, classes, job.atFloor, in);
      }
      if (job.open) openFaces(in, job.open, classes);
      opaque.clear();
      water.clear();
      meshBrick(in, job.level > 0 ? coarseClasses : classes, opaque, water);
      Result r;
      r.slot = job.slot;
      r.seq = job.seq;
      r.brick = job.brick;
      r.opaque.assign(opaque.begin(), opaque.end());
      r.water.assign(water.begin(), water.end());
      done.push_back(std::move(r));
      if (done.size() >= 32) handOver();
    }
  }

  // ---- range ------------------------------------------------------------------

  bool inRange(int bx, int bz) const {
    double dx = (bx - centreBx) * kBrickMetres;
    double dz = (bz - centreBz) * kBrickMetres;
    return dx * dx + dz * dz <= radius * radius;
  }
  bool inRangeOf(int bx, int bz, int cbx, int cbz) const {
    double dx = (bx - cbx) * kBrickMetres;
    double dz = (bz - cbz) * kBrickMetres;
    return dx * dx + dz * dz <= radius * radius;
  }

  static int localIndex(sim::BrickCoord b) { return sim::brickIndexInChunk(b); }

  ChunkState& stateOf(sim::ChunkCoord c) {
    auto [it, fresh] = chunks.try_emplace(c);
    if (fresh) it->second.coord = c;
    return it->second;
  }

  /// Sets pending bits in word w of cs.
  void addPending(ChunkState& cs, int w, std::uint64_t bits) {
    std::uint64_t fresh = bits & ~cs.pending[w];
    if (!fresh) return;
    if (cs.pendingCount == 0 && !cs.waiting) orderStale = true;
    cs.pending[w] |= fresh;
    int n = std::popcount(fresh);
    cs.pendingCount += n;
    totalPending += static_cast<std::size_t>(n);
    if (cs.waiting) waitingBricks += static_cast<std::size_t>(n);
  }

  void markChanged(ChunkState& cs) {
    cs.changed = true;
    if (!cs.listed) {
      cs.listed = true;
      changedList.push_back(cs.coord);
    }
  }

  void queueBrick(sim::BrickCoord b) {
    if (!bounds.containsBrick(b) || !inRange(b.x, b.z)) return;
    int l = localIndex(b);
    addPending(stateOf(sim::chunkOf(b)), l >> 6, std::uint64_t{1} << (l & 63));
  }

  /// Queues every brick of every in-range column for which inOld(column) is false,
  /// a chunk column at a time (reset queues millions of bricks).
  template <class F>
  void queueDisc(F&& inOld) {
    const int rb = static_cast<int>(std::min(radius / kBrickMetres, 1e8)) + 1;  // huge radii: clamp before int
    int z0 = std::max(bounds.minBrick.z, centreBz - rb), z1 = std::min(bounds.maxBrick.z - 1, centreBz + rb);
    int x0 = std::max(bounds.minBrick.x, centreBx - rb), x1 = std::min(bounds.maxBrick.x - 1, centreBx + rb);
    if (z0 > z1 || x0 > x1) return;
    for (int cz = z0 >> sim::kChunkShift; cz <= z1 >> sim::kChunkShift; ++cz) {
      for (int cx = x0 >> sim::kChunkShift; cx <= x1 >> sim::kChunkShift; ++cx) {
        std::uint16_t rows[16] = {};  // per local z: bit per local x of columns to queue
        bool any = false;
        for (int lz = 0; lz < 16; ++lz) {
          for (int lx = 0; lx < 16; ++lx) {
            int bx = cx * 16 + lx, bz = cz * 16 + lz;
            if (bx < x0 || bx > x1 || bz < z0 || bz > z1) continue;
            if (inRange(bx, bz) && !inOld(bx, bz)) {
              rows[lz] = static_cast<std::uint16_t>(rows[lz] | (1u << lx));
              any = true;
            }
          }
        }
        if (any) queueColumnRows(cx, cz, rows, false);
      }
    }
  }

  /// Queues the brick columns rows[local z] (bit per local x) of chunk column (cx, cz)
  /// in every chunk of it, or in the one at chunk height `only` when given; holdOld marks
  /// its chunks as re-meshed for a level change.
  void queueColumnRows(int cx, int cz, const std::uint16_t (&rows)[16], bool holdOld,
                       std::optional<int> only = std::nullopt) {
    for (int cy = bounds.minBrick.y >> sim::kChunkShift; cy < bounds.maxBrick.y >> sim::kChunkShift; ++cy) {
      if (only && cy != *only) continue;
      ChunkState& cs = stateOf({cx, cy, cz});
      if (holdOld) cs.holdOld = true;
      // Local index x + 16 * (y + 16 * z): word z * 4 + y / 4, shift (y % 4) * 16.
      for (int lz = 0; lz < 16; ++lz) {
        if (!rows[lz]) continue;
        std::uint64_t r = rows[lz];
        std::uint64_t word = r | (r << 16) | (r << 32) | (r << 48);
        for (int q = 0; q < 4; ++q) addPending(cs, lz * 4 + q, word);
      }
    }
  }

  // ---- levels of detail ------------------------------------------------------------

  bool levelsOn() const { return config.coarseMetres[0] > 0 || config.coarseMetres[1] > 0; }

  /// The level of a chunk column whose centre is d metres (in plan) from the viewer,
  /// hysteresis aside.
  int levelAt(double d) const {
    int level = 0;
    for (int i = 0; i < kMaxMeshLevel; ++i)
      if (config.coarseMetres[i] > 0 && d >= config.coarseMetres[i]) level = i + 1;
    return level;
  }

  /// Plan distance (metres) from the viewer's brick column to chunk column (cx, cz)'s centre.
  double columnDistance(int cx, int cz) const {
    const double dx = (cx + 0.5) * kChunkMetres - (centreBx + 0.5) * kBrickMetres;
    const double dz = (cz + 0.5) * kChunkMetres - (centreBz + 0.5) * kBrickMetres;
    return std::sqrt(dx * dx + dz * dz);
  }

  int levelOf(sim::ChunkCoord c) const {
    auto it = columnLevels.find({c.x, c.z});
    return it == columnLevels.end() ? 0 : it->second;
  }

  /// The sides of brick b to open (openFaces): on its chunk column's edge, facing a
  /// column in range at another level, across from a brick whose voxels can differ
  /// between levels (mixed, or reached by the overlay). A uniform brick is its own
  /// coarse blocks at every level, so it shows the same to both sides of a seam.
  std::uint8_t openSidesOf(const sim::BrickStore& world, sim::BrickCoord b, int level) const {
    const int lx = b.x & (sim::kChunkBricks - 1), lz = b.z & (sim::kChunkBricks - 1);
    struct Edge {
      bool on;
      int dx, dz;
      std::uint8_t bit;
    };
    const Edge edges[4] = {{lx == 0, -1, 0, kOpenNegX}, {lx == sim::kChunkBricks - 1, 1, 0, kOpenPosX},
                           {lz == 0, 0, -1, kOpenNegZ}, {lz == sim::kChunkBricks - 1, 0, 1, kOpenPosZ}};
    const sim::ChunkCoord c = sim::chunkOf(b);
    std::uint8_t open = 0;
    for (const Edge& e : edges) {
      if (!e.on) continue;
      auto it = columnLevels.find({c.x + e.dx, c.z + e.dz});
      if (it == columnLevels.end() || it->second == level) continue;
      const sim::BrickCoord n{b.x + e.dx, b.y, b.z + e.dz};
      if (!world.brick(n).isUniform() || (overlay && !overlay->voxelsOf(n).empty())) open |= e.bit;
    }
    return open;
  }

  /// Queues the edges facing chunk column (cx, cz) of those of its 4 neighbours in range
  /// whose level passes wanted(level): their open sides (openSidesOf) follow its level.
  /// In every chunk of those columns, or only at chunk height cy when given.
  template <class Wanted>
  void queueFacingEdges(int cx, int cz, Wanted&& wanted, std::optional<int> cy = std::nullopt) {
    struct Facing {
      int dx, dz;
      std::uint16_t rows[16];
    };
    Facing facing[4] = {{-1, 0, {}}, {1, 0, {}}, {0, -1, {}}, {0, 1, {}}};
    for (int i = 0; i < 16; ++i) {
      facing[0].rows[i] = 1u << 15;  // column (cx - 1, cz): its local x 15
      facing[1].rows[i] = 1u;        // column (cx + 1, cz): its local x 0
    }
    facing[2].rows[15] = 0xffff;     // column (cx, cz - 1): its local z 15
    facing[3].rows[0] = 0xffff;      // column (cx, cz + 1): its local z 0
    for (const Facing& f : facing) {
      auto it = columnLevels.find({cx + f.dx, cz + f.dz});
      if (it != columnLevels.end() && wanted(it->second))
        queueColumnRowsInRange(cx + f.dx, cz + f.dz, f.rows, false, cy);
    }
  }

  /// queueColumnRows for the bricks of rows that lie in the bounds and in range.
  void queueColumnRowsInRange(int cx, int cz, const std::uint16_t (&rows)[16], bool holdOld = false,
                              std::optional<int> cy = std::nullopt) {
    std::uint16_t kept[16] = {};
    bool any = false;
    for (int lz = 0; lz < 16; ++lz)
      for (int lx = 0; lx < 16; ++lx) {
        const int bx = cx * 16 + lx, bz = cz * 16 + lz;
        if (!(rows[lz] & (1u << lx)) || bx < bounds.minBrick.x || bx >= bounds.maxBrick.x ||
            bz < bounds.minBrick.z || bz >= bounds.maxBrick.z || !inRange(bx, bz))
          continue;
        kept[lz] = static_cast<std::uint16_t>(kept[lz] | (1u << lx));
        any = true;
      }
    if (any) queueColumnRows(cx, cz, kept, holdOld, cy);
  }

  /// Sets the level of every chunk column in range: from its distance alone when it
  /// is new (fresh: all), else changed only once the distance is kLevelHysteresisMetres
  /// past a threshold. Columns whose level changes get all their bricks queued (their
  /// newly reached bricks are queueDisc's). O(chunk columns in range).
  void relevel(bool fresh) {
    if (!levelsOn()) return;
    if (fresh) columnLevels.clear();
    for (auto it = columnLevels.begin(); it != columnLevels.end();) {
      it = chunkColumnInRange(it->first.first, it->first.second) ? std::next(it) : columnLevels.erase(it);
    }
    const int rb = static_cast<int>(std::min(radius / kBrickMetres, 1e8)) + 1;
    const int z0 = std::max(bounds.minBrick.z, centreBz - rb), z1 = std::min(bounds.maxBrick.z - 1, centreBz + rb);
    const int x0 = std::max(bounds.minBrick.x, centreBx - rb), x1 = std::min(bounds.maxBrick.x - 1, centreBx + rb);
    if (z0 > z1 || x0 > x1) return;
    for (int cz = z0 >> sim::kChunkShift; cz <= z1 >> sim::kChunkShift; ++cz) {
      for (int cx = x0 >> sim::kChunkShift; cx <= x1 >> sim::kChunkShift; ++cx) {
        if (!chunkColumnInRange(cx, cz)) continue;
        const double d = columnDistance(cx, cz);
        auto [it, added] = columnLevels.try_emplace({cx, cz}, levelAt(d));
        const int level = it->second;
        if (added) {
          // A seam opens with each neighbour at another level (fresh: everything is queued).
          if (!fresh) queueFacingEdges(cx, cz, [&](int n) { return n != level; });
          continue;
        }
        const int next =
            std::clamp(it->second, levelAt(d - kLevelHysteresisMetres), levelAt(d + kLevelHysteresisMetres));
        if (next == level) continue;
        it->second = next;
        std::uint16_t all[16];
        std::fill(std::begin(all), std::end(all), std::uint16_t{0xffff});
        queueColumnRowsInRange(cx, cz, all, true);
        // Seams that open re-mesh now (an open side is harmless beside the old mesh);
        // those that close wait until the column's new mesh shows (endHold), or a
        // neighbour would meet the old level closed: a crack for a few frames.
        queueFacingEdges(cx, cz, [&](int n) { return n != next && n == level; });
      }
    }
  }

  void dropRecord(ChunkState& cs, std::map<std::uint16_t, BrickRecord>::iterator it) {
    BrickRecord& r = it->second;
    if (r.awaiting) --cs.awaitingCount;
    std::size_t q = (r.opaque.size() + r.water.size()) / 4;
    if (q) {
      cs.quads -= q;
      markChanged(cs);
    }
    cs.bricks.erase(it);
  }

  void clearPending(ChunkState& cs, int l) {
    std::uint64_t bit = std::uint64_t{1} << (l & 63);
    if (cs.pending[l >> 6] & bit) {
      cs.pending[l >> 6] &= ~bit;
      --cs.pendingCount;
      --totalPending;
      if (cs.waiting) --waitingBricks;
    }
  }

  /// True when some brick column of chunk column (cx, cz) is in range.
  bool chunkColumnInRange(int cx, int cz) const {
    const int bx0 = cx * sim::kChunkBricks, bz0 = cz * sim::kChunkBricks;
    return inRange(std::clamp(centreBx, bx0, bx0 + 15), std::clamp(centreBz, bz0, bz0 + 15));
  }

  /// After the disc moved: drops bricks (and whole chunks) now outside it.
  void dropOutOfRange() {
    for (auto it = waitingColumns.begin(); it != waitingColumns.end();) {
      it = chunkColumnInRange(it->first.first, it->first.second) ? std::next(it) : waitingColumns.erase(it);
    }
    for (auto it = chunks.begin(); it != chunks.end();) {
      const sim::ChunkCoord c = it->first;
      ChunkState& cs = it->second;
      int bx0 = c.x * sim::kChunkBricks, bz0 = c.z * sim::kChunkBricks;
      // Nearest and farthest brick columns of the chunk from the centre column.
      auto clampTo = [](int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; };
      int nx = clampTo(centreBx, bx0, bx0 + 15), nz = clampTo(centreBz, bz0, bz0 + 15);
      int fx = (centreBx - bx0 > bx0 + 15 - centreBx) ? bx0 : bx0 + 15;
      int fz = (centreBz - bz0 > bz0 + 15 - centreBz) ? bz0 : bz0 + 15;
      if (inRange(fx, fz)) {
        ++it;
        continue;
      }
      if (!inRange(nx, nz)) {
        if (cs.reported) updates[c] = ChunkMesh{c, {}, {}};
        totalPending -= static_cast<std::size_t>(cs.pendingCount);
        if (cs.waiting) waitingBricks -= static_cast<std::size_t>(cs.pendingCount);
        it = chunks.erase(it);
        continue;
      }
      for (int l = 0; l < kChunkBrickCount; ++l) {
        if (!inRange(bx0 + (l & 15), bz0 + (l >> 8))) clearPending(cs, l);
      }
      for (auto bi = cs.bricks.begin(); bi != cs.bricks.end();) {
        int l = bi->first;
        auto next = std::next(bi);
        if (!inRange(bx0 + (l & 15), bz0 + (l >> 8))) dropRecord(cs, bi);
        bi = next;
      }
      ++it;
    }
  }

  void setCentre(const std::array<double, 3>& c) {
    centreBx = brickFloor(c[0]);
    centreBz = brickFloor(c[2]);
    centreY = c[1];
  }

  void resetTo(const sim::BrickStore& world, const std::array<double, 3>& centre) {
    for (auto& [coord, cs] : chunks) {
      if (cs.reported) updates[coord] = ChunkMesh{coord, {}, {}};
    }
    chunks.clear();
    changedList.clear();
    orderStale = true;
    totalPending = 0;
    waitingBricks = 0;
    waitingColumns.clear();
    bounds = world.bounds();
    setCentre(centre);
    hasCentre = true;
    relevel(true);
    queueDisc([](int, int) { return false; });
  }

  // ---- results ------------------------------------------------------------------

  void drainResults() {
    std::vector<Result> got;
    {
      std::lock_guard<std::mutex> lock(resultMutex);
      got.swap(results);
    }
    for (Result& r : got) {
      freeSlots.push_back(r.slot);
      --jobsOut;
      ++stats.meshedBricks;
      auto ci = chunks.find(sim::chunkOf(r.brick));
      if (ci == chunks.end()) continue;
      ChunkState& cs = ci->second;
      auto bi = cs.bricks.find(static_cast<std::uint16_t>(localIndex(r.brick)));
      if (bi == cs.bricks.end() || bi->second.seq != r.seq) continue;  // superseded or dropped
      BrickRecord& rec = bi->second;
      rec.awaiting = false;
      --cs.awaitingCount;
      if (rec.opaque != r.opaque || rec.water != r.water) {
        cs.quads -= (rec.opaque.size() + rec.water.size()) / 4;
        cs.quads += (r.opaque.size() + r.water.size()) / 4;
        rec.opaque = std::move(r.opaque);
        rec.water = std::move(r.water);
        markChanged(cs);
      }
      if (rec.opaque.empty() && rec.water.empty()) cs.bricks.erase(bi);
      releaseHold(cs);
    }
  }

  /// A level change whose re-mesh changed nothing holds nothing back any more.
  void releaseHold(ChunkState& cs) {
    if (cs.holdOld && !cs.changed && cs.pendingCount == 0 && cs.awaitingCount == 0) endHold(cs);
  }

  /// A chunk re-meshed for a level change shows its new level: the seams it closes with
  /// its neighbours (now at its level) re-mesh, at its height.
  void endHold(ChunkState& cs) {
    cs.holdOld = false;
    const int level = levelOf(cs.coord);
    queueFacingEdges(cs.coord.x, cs.coord.z, [&](int n) { return n == level; }, cs.coord.y);
  }

  // ---- gather -------------------------------------------------------------------

  /// True when chunk c holds nothing that draws (absent, or one Empty-class material).
  bool chunkIsEmpty(const sim::BrickStore& world, sim::ChunkCoord c) const {
    const int ci = world.chunkIndex(c);
    if (ci < 0) return true;
    return world.chunkIsCollapsed(ci) && classes[world.brickInChunk(ci, 0).uniformMaterial()] == MeshClass::Empty;
  }

  /// True when chunk c is one material that draws (collapsed, not Empty-class).
  bool chunkIsSolid(const sim::BrickStore& world, sim::ChunkCoord c) const {
    const int ci = world.chunkIndex(c);
    return ci >= 0 && world.chunkIsCollapsed(ci) &&
           classes[world.brickInChunk(ci, 0).uniformMaterial()] != MeshClass::Empty;
  }

  /// True when chunk c is one material, and so are its 6 neighbours, each hiding its
  /// faces (the rule of hiddenInGrid; below the floor repeats c).
  bool chunkIsBuried(const sim::BrickStore& world, sim::ChunkCoord c) const {
    if (!chunkIsSolid(world, c)) return false;
    const MeshClass self = classes[world.brickInChunk(world.chunkIndex(c), 0).uniformMaterial()];
    const sim::ChunkCoord n[6] = {{c.x - 1, c.y, c.z}, {c.x + 1, c.y, c.z}, {c.x, c.y - 1, c.z},
                                  {c.x, c.y + 1, c.z}, {c.x, c.y, c.z - 1}, {c.x, c.y, c.z + 1}};
    for (const sim::ChunkCoord& o : n) {
      if (o.y * sim::kChunkBricks < bounds.minBrick.y) continue;
      if (!bounds.containsBrick({o.x * sim::kChunkBricks, o.y * sim::kChunkBricks, o.z * sim::kChunkBricks}))
        return false;  // air outside
      if (!chunkIsSolid(world, o)) return false;
      const MeshClass other = classes[world.brickInChunk(world.chunkIndex(o), 0).uniformMaterial()];
      if (other != MeshClass::Opaque && !(self == MeshClass::Liquid && other == MeshClass::Liquid)) return false;
    }
    return true;
  }

  /// Drops the pending bits of the chunk's inner bricks (local 1..14 on every axis).
  void clearInterior(ChunkState& cs) {
    // Local index x + 16 * (y + 16 * z): word z * 4 + y / 4, bits (y % 4) * 16 + x.
    for (int lz = 1; lz <= 14; ++lz)
      for (int q = 0; q < 4; ++q) {
        std::uint64_t inner = 0;
        for (int r = 0; r < 4; ++r) {
          const int ly = q * 4 + r;
          if (ly >= 1 && ly <= 14) inner |= std::uint64_t{0x7ffe} << (r * 16);
        }
        std::uint64_t& word = cs.pending[lz * 4 + q];
        const int n = std::popcount(word & inner);
        word &= ~inner;
        cs.pendingCount -= n;
        totalPending -= static_cast<std::size_t>(n);
        stats.skippedBricks += static_cast<std::size_t>(n);
      }
  }

  /// Brick classes of chunk c and a one-brick border, for O(1) hidden tests.
  void buildGrid(const sim::BrickStore& world, sim::ChunkCoord c, std::uint8_t (&g)[18][18][18]) const {
    auto cls = [this](const sim::BrickView& v) -> std::uint8_t {
      if (!v.isUniform()) return kClsMixed;
      switch (classes[v.uniformMaterial()]) {
        case MeshClass::Empty: return kClsEmpty;
        case MeshClass::Opaque: return kClsOpaque;
        case MeshClass::Liquid: return kClsLiquid;
      }
      return kClsMixed;
    };
    const int ci = world.chunkIndex(c);
    const int by0 = c.y * sim::kChunkBricks;
    if (ci >= 0 && world.chunkIsCollapsed(ci)) {
      std::uint8_t k = cls(world.brickInChunk(ci, 0));
      for (int z = 1; z <= 16; ++z)
        for (int y = 1; y <= 16; ++y)
          for (int x = 1; x <= 16; ++x) g[z][y][x] = k;
    } else {
      for (int l = 0; l < kChunkBrickCount; ++l) {
        sim::BrickView v = ci >= 0 ? world.brickInChunk(ci, l) : sim::BrickView();
        g[(l >> 8) + 1][((l >> 4) & 15) + 1][(l & 15) + 1] = cls(v);
      }
    }
    // Border faces only: edges and corners never decide whether a face exists. Each
    // face reads one neighbour chunk, looked up once (absent or outside: air).
    const auto neighbour = [&](int dx, int dy, int dz) {
      const sim::ChunkCoord n{c.x + dx, c.y + dy, c.z + dz};
      const bool inside = bounds.containsBrick({n.x * sim::kChunkBricks, n.y * sim::kChunkBricks,
                                                n.z * sim::kChunkBricks});
      return inside ? world.chunkIndex(n) : -1;
    };
    const auto face = [&](int ni, int lx, int ly, int lz) {
      if (ni < 0) return static_cast<std::uint8_t>(kClsEmpty);
      return cls(world.brickInChunk(ni, lx + sim::kChunkBricks * (ly + sim::kChunkBricks * lz)));
    };
    const int west = neighbour(-1, 0, 0), east = neighbour(1, 0, 0), down = neighbour(0, -1, 0),
              up = neighbour(0, 1, 0), north = neighbour(0, 0, -1), south = neighbour(0, 0, 1);
    for (int a = 1; a <= 16; ++a) {
      for (int b = 1; b <= 16; ++b) {
        g[a][b][0] = face(west, 15, b - 1, a - 1);
        g[a][b][17] = face(east, 0, b - 1, a - 1);
        g[a][0][b] = face(down, b - 1, 15, a - 1);
        g[a][17][b] = face(up, b - 1, 0, a - 1);
        g[0][a][b] = face(north, b - 1, a - 1, 15);
        g[17][a][b] = face(south, b - 1, a - 1, 0);
      }
    }
    if (by0 == bounds.minBrick.y) {  // below the floor repeats the bottom layer (gatherPaddedBrick)
      for (int a = 1; a <= 16; ++a)
        for (int b = 1; b <= 16; ++b) g[a][0][b] = g[a][1][b];
    }
  }

  static bool hiddenInGrid(const std::uint8_t (&g)[18][18][18], int x, int y, int z) {
    const std::uint8_t self = g[z][y][x];
    if (self == kClsEmpty) return true;
    if (self == kClsMixed) return false;
    const std::uint8_t n[6] = {g[z][y][x - 1], g[z][y][x + 1], g[z][y - 1][x],
                               g[z][y + 1][x], g[z - 1][y][x], g[z + 1][y][x]};
    for (std::uint8_t k : n) {
      if (k == kClsEmpty || k == kClsMixed) return false;
      if (self == kClsOpaque && k == kClsLiquid) return false;
    }
    return true;
  }

  /// A hidden brick: its mesh (if any) goes, and any job in flight for it is void.
  void applyHidden(ChunkState& cs, int l) {
    ++stats.skippedBricks;
    auto bi = cs.bricks.find(static_cast<std::uint16_t>(l));
    if (bi != cs.bricks.end()) dropRecord(cs, bi);
  }

  /// Copies brick b out into a free slot and queues the job. Returns false when no
  /// slot is free.
  bool dispatch(const sim::BrickStore& world, ChunkState& cs, sim::BrickCoord b, int l, int level,
                std::uint8_t open, std::vector<Job>& batch) {
    if (freeSlots.empty()) return false;
    int slot = freeSlots.back();
    freeSlots.pop_back();
    Slot& copy = slots[static_cast<std::size_t>(slot)];
    if (!frozenWorld && level > 0) {
      // Only the copy here (a coarse brick's neighbours are decoded once per update);
      // the worker coarsens it.
      internal::gatherWide(world, b, level, copy.wide, [&](const sim::BrickView& v, sim::BrickCoord c) {
        return decodedBrick(mainDecoded, v, c, updateEpoch);
      });
      if (overlay) internal::patchWide(*overlay, copy.wide);
    } else if (!frozenWorld) {
      gatherPaddedBrick(world, b, copy.padded);
      if (overlay) patchPadded(*overlay, copy.padded);
    }
    BrickRecord& rec = cs.bricks[static_cast<std::uint16_t>(l)];
    if (!rec.awaiting) ++cs.awaitingCount;
    rec.awaiting = true;
    rec.seq = nextSeq++;
    batch.push_back(Job{slot, rec.seq, b, frozenWorld, frozenWorld ? overlay : nullptr, finishEpoch, level,
                        b.y == bounds.minBrick.y, open});
    ++jobsOut;
    return true;
  }

  void flush(std::vector<Job>& batch) {
    if (batch.empty()) return;
    {
      std::lock_guard<std::mutex> lock(jobMutex);
      for (const Job& j : batch) jobs.push_back(j);
    }
    if (batch.size() == 1) {
      jobCv.notify_one();
    } else {
      jobCv.notify_all();
    }
    batch.clear();
  }

  /// Rebuilds the nearest-first order of chunks with pending bricks (3D distance from
  /// the viewer to the chunk centre; ties by coordinate, so it is deterministic).
  void rebuildOrder() {
    struct Entry {
      double d2;
      sim::ChunkCoord c;
    };
    std::vector<Entry> e;
    const double cx = (centreBx + 0.5) * kBrickMetres, cz = (centreBz + 0.5) * kBrickMetres;
    const double chunkM = sim::kChunkBricks * kBrickMetres;
    for (const auto& [coord, cs] : chunks) {
      if (cs.pendingCount == 0 || cs.waiting) continue;
      double dx = (coord.x + 0.5) * chunkM - cx, dy = (coord.y + 0.5) * chunkM - centreY,
             dz = (coord.z + 0.5) * chunkM - cz;
      e.push_back({dx * dx + dy * dy + dz * dz, coord});
    }
    std::sort(e.begin(), e.end(),
              [](const Entry& a, const Entry& b) { return a.d2 < b.d2 || (a.d2 == b.d2 && a.c < b.c); });
    order.clear();
    for (const Entry& x : e) order.push_back(x.c);
    orderPos = 0;
    orderStale = false;
  }

  // ---- streamed worlds: columns ----------------------------------------------------

  /// A column that chunk column (cx, cz) or one of its 8 neighbours needs and world
  /// lacks (columns outside the bounds read as air without faulting: never needed).
  std::optional<sim::ChunkColumn> absentNear(const sim::BrickStore& world, int cx, int cz) const {
    const int x0 = bounds.minBrick.x >> sim::kChunkShift, x1 = bounds.maxBrick.x >> sim::kChunkShift;
    const int z0 = bounds.minBrick.z >> sim::kChunkShift, z1 = bounds.maxBrick.z >> sim::kChunkShift;
    for (int z = std::max(cz - 1, z0); z <= std::min(cz + 1, z1 - 1); ++z)
      for (int x = std::max(cx - 1, x0); x <= std::min(cx + 1, x1 - 1); ++x)
        if (!world.columnPresent({x, z})) return sim::ChunkColumn{x, z};
    return std::nullopt;
  }

  /// Parks cs (its pending bricks wait) until absent, and whatever else its column
  /// needs, is present.
  void park(ChunkState& cs, sim::ChunkColumn absent) {
    cs.waiting = true;
    waitingBricks += static_cast<std::size_t>(cs.pendingCount);
    waitingColumns.insert_or_assign(std::pair<int, int>{cs.coord.x, cs.coord.z}, absent);
  }

  /// Returns the chunks of columns whose neighbourhood is now present to the walk.
  /// O(1) per waiting column unless its awaited column arrived.
  void retryWaiting(const sim::BrickStore& world) {
    for (auto it = waitingColumns.begin(); it != waitingColumns.end();) {
      if (!world.columnPresent(it->second)) {
        ++it;
        continue;
      }
      const auto [cx, cz] = it->first;
      if (std::optional<sim::ChunkColumn> other = absentNear(world, cx, cz)) {
        it->second = *other;
        ++it;
        continue;
      }
      for (int cy = bounds.minBrick.y >> sim::kChunkShift; cy < bounds.maxBrick.y >> sim::kChunkShift; ++cy) {
        auto ci = chunks.find({cx, cy, cz});
        if (ci == chunks.end() || !ci->second.waiting) continue;
        ChunkState& cs = ci->second;
        cs.waiting = false;
        waitingBricks -= static_cast<std::size_t>(cs.pendingCount);
        if (cs.pendingCount) orderStale = true;
      }
      it = waitingColumns.erase(it);
    }
  }

  void gather(const sim::BrickStore& world, double budgetMs, std::chrono::steady_clock::time_point start) {
    const bool streamed = world.columnSource() != nullptr;
    if (streamed) retryWaiting(world);
    if (totalPending == waitingBricks) return;
    if (orderStale) rebuildOrder();
    std::vector<Job> batch;
    batch.reserve(32);
    static thread_local std::uint8_t grid[18][18][18];
    const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double, std::milli>(budgetMs));
    bool out = false;
    bool dispatched = false;  // at least one brick per update, however small the budget
    const bool anyOverlay = overlay && !overlay->empty();  // whole-chunk skips read the world alone
    for (; orderPos < order.size() && !out; ++orderPos) {
      auto it = chunks.find(order[orderPos]);
      if (it == chunks.end() || it->second.pendingCount == 0 || it->second.waiting) continue;
      ChunkState& cs = it->second;
      const sim::ChunkCoord c = cs.coord;
      if (streamed) {
        if (std::optional<sim::ChunkColumn> absent = absentNear(world, c.x, c.z)) {
          park(cs, *absent);  // not work done: costs no budget and no dispatch
          continue;
        }
      }
      // A chunk of air with nothing drawn (most of a tall world's chunks, every one of
      // them queued whole), or one of solid stone among others: no brick of it can
      // have a face, so no brick is looked at.
      if (cs.bricks.empty() && !anyOverlay && (chunkIsEmpty(world, c) || chunkIsBuried(world, c))) {
        stats.skippedBricks += static_cast<std::size_t>(cs.pendingCount);
        totalPending -= static_cast<std::size_t>(cs.pendingCount);
        cs.pendingCount = 0;
        std::fill(std::begin(cs.pending), std::end(cs.pending), 0);
        releaseHold(cs);
        if (!cs.changed && !cs.reported) chunks.erase(it);
        continue;
      }
      // A chunk of one drawing material (stone under a tall world's ground, a lake's
      // water): its inner 14^3 bricks face only that material, so only its shell is
      // looked at.
      if (cs.bricks.empty() && !anyOverlay && chunkIsSolid(world, c)) clearInterior(cs);
      const bool useGrid = cs.pendingCount >= kGridThreshold;
      const int level = levelOf(c);
      if (useGrid) buildGrid(world, c, grid);
      const int bx0 = c.x * sim::kChunkBricks, by0 = c.y * sim::kChunkBricks, bz0 = c.z * sim::kChunkBricks;
      for (int w = 0; w < kChunkBrickCount / 64 && !out; ++w) {
        while (cs.pending[w]) {
          const int l = w * 64 + std::countr_zero(cs.pending[w]);
          const int lx = l & 15, ly = (l >> 4) & 15, lz = l >> 8;
          const sim::BrickCoord b{bx0 + lx, by0 + ly, bz0 + lz};
          // The hidden tests read the world alone, with no seam: a brick the overlay reaches
          // is meshed, and so is a uniform solid one with an open side (it has faces there).
          const std::uint8_t open = levelsOn() ? openSidesOf(world, b, level) : 0;
          const bool testable = !(overlay && overlay->touchesPadded(b)) &&
                                !(open && classes[world.brick(b).uniformMaterial()] == MeshClass::Opaque);
          bool hidden = testable &&
                        (useGrid ? hiddenInGrid(grid, lx + 1, ly + 1, lz + 1) : brickIsHidden(world, b, classes));
          // A uniform brick next to mixed ones (soil under the grass line, the core of a
          // canopy) usually still has no face: a 64-voxel look saves a gather and a mesh
          // (coarse: a look at the neighbours' coarse layers, which can differ from fine ones).
          if (!hidden && testable && (!useGrid || grid[lz + 1][ly + 1][lx + 1] != kClsMixed)) {
            hidden = uniformBrickHasNoFaces(world, b, classes, level);
          }
          if (hidden) {
            applyHidden(cs, l);
          } else {
            if ((dispatched && std::chrono::steady_clock::now() >= deadline) ||
                !dispatch(world, cs, b, l, level, open, batch)) {
              out = true;
              break;
            }
            dispatched = true;
            if (batch.size() >= 32) flush(batch);
          }
          clearPending(cs, l);
        }
      }
      if (out) break;  // keep orderPos on this chunk
      releaseHold(cs);
      if (!cs.changed && !cs.reported && cs.bricks.empty()) chunks.erase(it);  // nothing to show, nothing owed
    }
    flush(batch);
  }

  // ---- assembly -----------------------------------------------------------------

  void assemble() {
    std::size_t keep = 0;
    for (std::size_t i = 0; i < changedList.size(); ++i) {
      auto it = chunks.find(changedList[i]);
      if (it == chunks.end()) continue;
      ChunkState& cs = it->second;
      if (!cs.changed) {
        cs.listed = false;
        continue;
      }
      ++cs.changedAge;
      const bool settled = cs.pendingCount == 0 && cs.awaitingCount == 0;
      // A level change waits for all its bricks: the old mesh shows meanwhile, not a mix.
      if (!settled && (cs.holdOld || cs.changedAge < kMaxChangedAge)) {
        changedList[keep++] = changedList[i];
        continue;
      }
      ChunkMesh m{it->first, {}, {}};
      std::size_t no = 0, nw = 0;
      for (const auto& [l, r] : cs.bricks) {
        no += r.opaque.size();
        nw += r.water.size();
      }
      m.opaque.reserve(no);
      m.water.reserve(nw);
      for (const auto& [l, r] : cs.bricks) {
        m.opaque.insert(m.opaque.end(), r.opaque.begin(), r.opaque.end());
        m.water.insert(m.water.end(), r.water.begin(), r.water.end());
      }
      const bool nonEmpty = no + nw > 0;
      if (nonEmpty || cs.reported) updates[it->first] = std::move(m);
      cs.reported = nonEmpty;
      cs.changed = false;
      if (settled && cs.holdOld) endHold(cs);
      cs.changedAge = 0;
      cs.listed = false;
      if (!cs.reported && cs.bricks.empty() && cs.pendingCount == 0) chunks.erase(it);
    }
    changedList.resize(keep);
  }

  void update(const sim::BrickStore& world, const std::array<double, 3>& centre, double budgetMs) {
    const auto start = std::chrono::steady_clock::now();
    ++updateEpoch;  // the world may have changed since the last update: mainDecoded starts afresh
    if (!hasCentre) {
      resetTo(world, centre);
    } else {
      const int oldBx = centreBx, oldBz = centreBz;
      setCentre(centre);
      if (oldBx != centreBx || oldBz != centreBz) {
        orderStale = true;
        dropOutOfRange();
        relevel(false);
        queueDisc([&](int bx, int bz) { return inRangeOf(bx, bz, oldBx, oldBz); });
      }
    }
    drainResults();
    gather(world, budgetMs, start);
    drainResults();
    assemble();
    stats.lastGatherMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

  /// Blocks until a batch of results is ready (or all of them), so that finish()
  /// does not run a whole update per finished brick.
  void waitForResults() {
    const std::size_t want = std::min<std::size_t>(jobsOut, kMaxInFlight / 4);
    std::unique_lock<std::mutex> lock(resultMutex);
    resultCv.wait_for(lock, std::chrono::milliseconds(20), [&] { return results.size() >= want; });
  }
};

MeshCache::MeshCache(const sim::MaterialTable& materials, MeshCacheConfig config)
    : impl_(std::make_unique<Impl>(materials, config)) {}

MeshCache::~MeshCache() = default;

void MeshCache::reset(const sim::BrickStore& world, const std::array<double, 3>& centreMetres) {
  impl_->resetTo(world, centreMetres);
}

void MeshCache::setOverlay(const sim::VoxelOverlay* overlay) { impl_->overlay = overlay; }

void MeshCache::markDirty(std::span<const sim::BrickCoord> bricks) {
  Impl& m = *impl_;
  if (!m.hasCentre) return;  // the first update() queues everything anyway
  for (const sim::BrickCoord& b : bricks) {
    // All 26 neighbours: faces at the shared border and AO across edges and corners.
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) m.queueBrick({b.x + dx, b.y + dy, b.z + dz});
  }
}

void MeshCache::update(const sim::BrickStore& world, const std::array<double, 3>& centreMetres, double budgetMs) {
  impl_->update(world, centreMetres, budgetMs);
}

std::vector<ChunkMesh> MeshCache::takeChunkUpdates() {
  std::vector<ChunkMesh> out;
  out.reserve(impl_->updates.size());
  for (auto& [c, m] : impl_->updates) out.push_back(std::move(m));
  impl_->updates.clear();
  return out;
}

bool MeshCache::idle() const { return impl_->totalPending == impl_->waitingBricks && impl_->jobsOut == 0; }

void MeshCache::finish(const sim::BrickStore& world, const std::array<double, 3>& centreMetres) {
  // The world cannot change while we block, so the workers copy bricks out themselves
  // and the main thread only sorts, skips hidden bricks and assembles. Not a streamed
  // world: it is single-threaded, so this thread copies out as update() does. Ends
  // when only bricks waiting for absent columns are left (none can arrive meanwhile).
  impl_->frozenWorld = world.columnSource() ? nullptr : &world;
  ++impl_->finishEpoch;
  for (;;) {
    impl_->update(world, centreMetres, 1e9);
    if (idle()) break;
    impl_->waitForResults();
  }
  impl_->frozenWorld = nullptr;  // idle: no job holds the pointer any more
}

int MeshCache::columnLevel(sim::ChunkColumn c) const { return impl_->levelOf({c.x, 0, c.z}); }

MeshCacheStats MeshCache::stats() const {
  MeshCacheStats s = impl_->stats;
  s.queuedBricks = impl_->totalPending - impl_->waitingBricks;
  s.waitingForColumns = impl_->waitingBricks;
  s.inFlightBricks = impl_->jobsOut;
  s.chunks = 0;
  s.quads = 0;
  s.coarseChunks = 0;
  for (const auto& [c, cs] : impl_->chunks) {
    if (cs.quads) ++s.chunks;
    if (cs.quads && impl_->levelOf(c) > 0) ++s.coarseChunks;
    s.quads += cs.quads;
  }
  return s;
}

}  // namespace loam::mesh
