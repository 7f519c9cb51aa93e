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

}  // namespace loam::sim
