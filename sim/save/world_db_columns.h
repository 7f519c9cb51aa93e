// WorldDbColumns: the world database (world_db.h) as the stored columns of a streamed
// server's store (sim/world/column_source.h, StoredColumns). The server starts from the
// database's index (its state blobs, which columns hold rows, the terms of the changed
// chunks) instead of every row; a column's rows are read when the store adopts the
// column, whether it was never loaded or paged out. A column holding edits leaves
// memory once they are committed and nothing active is in it (columnsToPageOut), so
// the server's memory follows what players need, not what they changed over the
// world's life.
//
// Pins: a column whose edits are not in the database yet must stay resident, or a
// read would bring back the database's older rows. The server's commit cycle tells
// this object what it touched (touch), what it submitted and when that landed.
//
// Rows that cannot be read at load (damaged since start, or SQLite errors) leave the
// column as generated there; takeProblems hands the lines to the caller's log. The
// server checks every row's hash at start (WorldDb::loadIndex) and stops on damage
// unless told to continue without it.
//
// Thread: the store's (the step thread); the database reads use their own read-only
// connection, so they never wait for the commit writer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "sim/save/save.h"
#include "sim/save/world_db.h"
#include "sim/world/column_source.h"

namespace loam::sim {

struct SimState;

/// The world-hash term of a chunk when it is changed, else nothing: the step's
/// tracker's (WorldHashTracker::term; ServerHost::chunkTerm on a server).
using ChunkTermOf = std::function<std::optional<std::uint64_t>(ChunkCoord)>;

/// The bricks and chunk terms of a commit (tick and blobs left to the caller): each
/// brick of touched (sorted, unique) captured, or listed as removed when back to its
/// generated content; each touched chunk's term written, or removed when the chunk is
/// no longer changed. Cost: the touched bricks.
WorldDbCommit captureCommit(const BrickStore& store, std::span<const BrickCoord> touched, const ChunkTermOf& termOf);

/// Counters since creation.
struct StoredColumnStats {
  std::uint64_t columnsLoaded = 0;    ///< columns whose rows were read (at adoption)
  std::uint64_t bricksLoaded = 0;     ///< rows applied
  std::uint64_t columnsPagedOut = 0;  ///< modified columns that left memory (pageOut)
  std::uint64_t problems = 0;         ///< rows or columns that could not be read
};

class WorldDbColumns final : public StoredColumns {
 public:
  /// reader: a read-only connection (WorldDb::openReader); columns and terms: the
  /// database's index (WorldDb::loadIndex).
  WorldDbColumns(std::unique_ptr<WorldDb> reader, std::span<const ChunkColumn> columns, std::vector<ChunkTerm> terms);

  // StoredColumns
  void apply(ChunkColumn column, BrickStore& store) override;
  bool holds(ChunkColumn column) const override;
  bool pinned(ChunkColumn column) const override;
  std::span<const ChunkTerm> terms() const override { return terms_; }

  /// Applies the rows of every held column store already holds (a streamed state
  /// generates its start columns before the database is opened). Call once, before
  /// BrickStore::setStoredColumns hands the rest to adoption.
  void applyPresent(BrickStore& store);

  // The commit cycle.
  /// An edit touched brick b since the last submitted commit: pins its column.
  void touch(BrickCoord b);
  /// The touched columns are in the commit just submitted (pinned until it lands).
  void submitted();
  /// The submitted commits are in the database (ok), or the last one failed and the
  /// writer carries it into the next (their columns stay pinned).
  void landed(bool ok);
  /// True while a submitted commit has not landed.
  bool inFlight() const noexcept { return !inflight_.empty(); }

  /// Records that columns, whose edits are all in the database (none pinned), leave
  /// memory: the terms of their changed chunks (termOf, every chunk of bounds' vertical
  /// range) stay for the world hash. The caller then releases them
  /// (BrickStore::dropColumns). O(stored terms + their chunks).
  void pageOut(std::span<const ChunkColumn> columns, const WorldBounds& bounds, const ChunkTermOf& termOf);

  /// The lines about rows that could not be read since the last call.
  std::vector<std::string> takeProblems();
  StoredColumnStats stats() const noexcept { return stats_; }

 private:
  std::unique_ptr<WorldDb> reader_;
  std::unordered_set<std::uint64_t> held_;      ///< columns that may hold rows (pending_ joins at submit)
  std::unordered_set<std::uint64_t> pending_;   ///< touched since the last submit
  std::unordered_set<std::uint64_t> inflight_;  ///< in submitted commits that have not landed
  std::vector<ChunkTerm> terms_;                ///< sorted by chunk
  std::vector<SavedBrick> rows_;                ///< scratch
  std::vector<std::string> damaged_;            ///< scratch
  std::vector<std::string> problems_;
  StoredColumnStats stats_;
};

/// Modified columns of state's store to page out: present, not pinned, no water record
/// or burning brick in them, every voxel farther than keepVoxels (in plan) from every
/// player. Canonical order. O(present columns + water records + fire cells).
std::vector<ChunkColumn> columnsToPageOut(const SimState& state, const WorldDbColumns& stored,
                                          std::int32_t keepVoxels);

}  // namespace loam::sim
