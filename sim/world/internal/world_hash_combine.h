// The pieces of the world hash (sim/world/world_hash.h) that hashWorld and
// WorldHashTracker share, so the incremental result cannot drift from the full one.
// Internal to sim.
#pragma once

#include <cstdint>

#include "sim/world/brick_store.h"
#include "sim/world/voxel.h"
#include "sim/world/world_hash.h"

namespace loam::sim::internal {

/// True when slot i's content differs from what generation made (before
/// markGenerated: when it is not all air). O(1) for a chunk without modified bricks.
bool chunkChanged(const BrickStore& store, int slot);

/// A changed chunk's term in the world and cell sums.
std::uint64_t chunkTerm(ChunkCoord c, std::uint64_t contentHash) noexcept;

/// The sum and count of the terms of a set of changed chunks.
struct TermSum {
  std::uint64_t sum = 0;
  std::uint64_t count = 0;
  void add(std::uint64_t term) noexcept { sum += term, ++count; }
  void remove(std::uint64_t term) noexcept { sum -= term, --count; }
};

/// The world hash of the changed chunks' terms.
std::uint64_t combineWorldHash(const TermSum& all) noexcept;

/// The hash of a cell from the terms of its changed chunks.
std::uint64_t combineCellHash(CellCoord cell, const TermSum& inCell) noexcept;

/// Calls fn(const ChunkTerm&) for each stored chunk (BrickStore::setStoredColumns)
/// whose column is not present: the changed chunks the store does not hold.
template <class F>
void forEachStoredTerm(const BrickStore& store, F&& fn) {
  const StoredColumns* stored = store.storedColumns();
  if (stored == nullptr) return;
  for (const ChunkTerm& t : stored->terms())
    if (!store.columnPresent(ChunkColumn{t.chunk.x, t.chunk.z})) fn(t);
}

/// The cell holding chunk c.
inline CellCoord cellOfChunk(ChunkCoord c) noexcept {
  return cellOf(BrickCoord{c.x * kChunkBricks, 0, c.z * kChunkBricks});
}

}  // namespace loam::sim::internal
