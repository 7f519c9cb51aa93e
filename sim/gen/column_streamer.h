// ColumnStreamer: the generator behind a streamed world (BrickStore::setColumnSource).
// It generates columns ahead of need on worker threads, nearest the given centres
// first (players, in the server's and the trace runner's use), hands them over at a
// boundary the owner chooses (update, between steps), generates on the reading thread
// a column that a read reaches first (a fault: the step waits), and releases
// unmodified columns beyond a residency budget, farthest first.
//
// None of it changes what the world reads as (sim/world/column_source.h): with 1 or
// many threads, a tiny or a large budget, the same steps give the same bits (tests:
// column_streamer_test and the streamed trace goldens in determinism_test).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sim/core/result.h"
#include "sim/gen/generator.h"
#include "sim/world/brick_store.h"
#include "sim/world/column_source.h"
#include "sim/world/world_hash.h"

namespace loam::sim {

struct Scene;

/// How a ColumnStreamer works (none of it changes what is read).
struct StreamOptions {
  /// Generator threads including the store's own: 1 generates everything on the
  /// store's thread (faults, and up to prefetchPerUpdate columns in each update);
  /// n > 1 starts n - 1 workers.
  int threads = 2;
  /// Columns whose nearest voxel is within this of a centre are generated ahead.
  std::int32_t prefetchRadiusVoxels = 64 * kVoxelsPerMetre;
  /// Unmodified columns kept at most after an update (columns holding edits are kept
  /// besides, whatever their number); beyond it, unmodified columns farthest from
  /// every centre are released. A budget below what the prefetch radius covers
  /// thrashes (tests use that to prove residency changes nothing).
  std::size_t maxResidentColumns = 4096;
  /// With threads == 1: columns an update generates ahead on the caller.
  int prefetchPerUpdate = 4;
  /// Hash every column as generated (hashColumns of that column alone), for
  /// takeColumnHashes: a client reports them so the server can check its generator.
  bool hashColumns = false;
};


/// A centre of need, in voxel coordinates (a player's feet column).
struct StreamCentre {
  std::int32_t x = 0, z = 0;
};

/// Squared distance in voxels from centre to the nearest voxel of column c, in plan
/// (how far the prefetch radius and the residency budget measure).
std::int64_t distance2(ChunkColumn c, StreamCentre centre) noexcept;

/// Counters since creation.
struct StreamStats {
  std::uint64_t faults = 0;      ///< columns generated on the store's thread because a read reached them
  std::uint64_t prefetched = 0;  ///< columns generated ahead and adopted
  std::uint64_t wasted = 0;      ///< columns generated ahead that were present by the time they arrived
  std::uint64_t released = 0;    ///< columns released by update
  std::size_t peakResident = 0;  ///< most present columns after an update
};

class ColumnStreamer final : public ColumnSource {
 public:
  /// The streamer for scene with seed (ChunkGenerator::create's errors). Starts its
  /// workers. Copies the scene.
  static Result<std::unique_ptr<ColumnStreamer>> create(const Scene& scene, std::uint64_t seed,
                                                        const StreamOptions& options = {});
  /// Stops and joins the workers (work in progress is dropped).
  ~ColumnStreamer() override;
  ColumnStreamer(const ColumnStreamer&) = delete;
  ColumnStreamer& operator=(const ColumnStreamer&) = delete;

  /// ColumnSource: a column finished ahead if there is one, else generated now.
  void fault(ChunkColumn column, BrickStore& store) override;
  /// ColumnSource: the missing columns generated on `threads` threads at once (the
  /// caller waits), then adopted in the order given.
  void faultAll(std::span<const ChunkColumn> columns, BrickStore& store) override;
  /// ColumnSource: from the next update on, the columns are generated ahead after
  /// those update asks for (they stay asked for until present, whatever the centres
  /// do) and adopted by a later update. Nothing starts before that update, so a
  /// start (createStreamedSimState asks for the dens' ranges) is not slowed by it.
  /// With threads == 1, update generates them prefetchPerUpdate at a time.
  void prefetch(std::span<const ChunkColumn> columns) override;

  /// Between steps, on store's thread: adopts the columns workers finished, asks for
  /// the missing columns within the prefetch radius of centres (nearest first,
  /// replacing what was asked before) and releases beyond the budget. O(present
  /// columns + columns within the radius).
  void update(BrickStore& store, std::span<const StreamCentre> centres);

  /// Moves the hashes of the columns generated since the last call into out (appended,
  /// in the order they were generated; a column generated twice, released between,
  /// comes twice). Empty unless StreamOptions::hashColumns. Thread: the store's.
  void takeColumnHashes(std::vector<GeneratedColumnHash>& out);

  /// The generator (bounds, and generating outside a store).
  const ChunkGenerator& generator() const noexcept;
  /// Counters.
  StreamStats stats() const noexcept;

 private:
  ColumnStreamer();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loam::sim
