// ColumnSource: where a streamed BrickStore gets the chunk columns nobody has read
// yet. A world that is too big to generate whole is generated a column at a time, the
// first time anything reads or writes the column (BrickStore::setColumnSource); the
// source is the generator (sim/gen/column_streamer.h). A column's generated content is
// a function of the scene, the seed and its coordinates alone, so when it is
// generated, and whether it was released and generated again, never shows in what is
// read: residency is a cache, not state.
#pragma once

#include <cstdint>
#include <span>

#include "sim/world/voxel.h"

namespace loam::sim {

class BrickStore;

/// A column of chunks: chunk (x, y, z) for every y of the world's vertical range.
struct ChunkColumn {
  std::int32_t x = 0, z = 0;  ///< chunk coordinates
  friend bool operator==(const ChunkColumn&, const ChunkColumn&) = default;
};

/// The interest cell holding column c.
constexpr CellCoord cellOfColumn(ChunkColumn c) noexcept {
  return {c.x >> (kCellShift - kChunkShift), c.z >> (kCellShift - kChunkShift)};
}

/// True when a is before b in canonical column order (z, then x).
constexpr bool canonicalBefore(ChunkColumn a, ChunkColumn b) noexcept {
  return a.z != b.z ? a.z < b.z : a.x < b.x;
}

/// Supplies generated columns to a streamed store.
class ColumnSource {
 public:
  virtual ~ColumnSource() = default;
  /// Makes the generated content of column resident in store, which is missing it
  /// (BrickStore::columnPresent is false): generates it, or takes it from work done
  /// ahead, and ends with store.adoptColumn(column, ...). Called on the thread that
  /// reads or writes store (which waits for it).
  virtual void fault(ChunkColumn column, BrickStore& store) = 0;
  /// Makes every column of columns that store is missing resident, as fault would
  /// one by one; a source with threads generates them at once.
  virtual void faultAll(std::span<const ChunkColumn> columns, BrickStore& store);
  /// A hint: columns likely to be read soon, which a source with threads may generate
  /// ahead and hand over at its next update (ColumnStreamer::update). Changes nothing
  /// that is read; the default ignores it. Called on the store's thread.
  virtual void prefetch(std::span<const ChunkColumn> columns) { (void)columns; }
};

/// A changed chunk's term in the world hash (term(c) in sim/world/world_hash.h), kept
/// outside the store: the world database keeps one per changed chunk, so a server that
/// has not loaded a column still hashes the world whole.
struct ChunkTerm {
  ChunkCoord chunk;
  std::uint64_t term = 0;
  friend bool operator==(const ChunkTerm&, const ChunkTerm&) = default;
};

/// Changed columns kept outside a streamed store (the server's world database): a
/// column whose edits are stored there need not stay resident, and a world loads only
/// the columns something reads. The store applies a column's stored bricks as it
/// adopts the column (BrickStore::adoptColumn), so what is read is the same whether the
/// column stayed resident, was paged out or was never loaded since the server started.
/// Called on the store's thread.
class StoredColumns {
 public:
  virtual ~StoredColumns() = default;
  /// Writes column's stored bricks into store, which has just adopted the column's
  /// generated content (their changes are the store's edits again: modified bricks).
  virtual void apply(ChunkColumn column, BrickStore& store) = 0;
  /// False when column certainly holds no stored bricks (a superset is fine: apply
  /// then finds nothing). A cell's catch-up loads the columns that may.
  virtual bool holds(ChunkColumn column) const = 0;
  /// True while column holds changes not stored yet, so it must stay resident: the
  /// store releases no pinned column, modified or not.
  virtual bool pinned(ChunkColumn column) const = 0;
  /// The terms of the changed chunks of stored columns, sorted by chunk; a store adds
  /// those of its columns that are not present to its world hash (hashWorld).
  virtual std::span<const ChunkTerm> terms() const = 0;
};

}  // namespace loam::sim
