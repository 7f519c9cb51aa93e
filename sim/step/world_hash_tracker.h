// WorldHashTracker: the world hash and cell hashes of sim/world/world_hash.h kept up to
// date per step instead of recomputed from scratch. It keeps the term of every
// changed chunk and the sums per cell; after a step, the chunks that step's edit log
// touched are checked and rehashed, and their terms swapped in the sums, so a step
// costs what it touched whatever the world's size. The server sends the result with
// every step; every full client computes the same from the same edits and compares
// (net/client_connection.h).
//
// Equal by construction to hashWorld(store) after every update (tested).
//
// A chunk's hash is XXH3 over the canonical packed forms of its 4096 bricks, and
// packing is what costs (a fire touches a hundred chunks a step). So the tracker
// keeps the packed bytes of recently touched chunks (at most kCachedChunks, least
// recently used dropped): an update repacks only the bricks the edits touched,
// splices them in, and hashes the bytes again.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/systems/streams.h"
#include "sim/world/internal/world_hash_combine.h"
#include "sim/world/world_hash.h"

namespace loam::sim {

class WorldHashTracker {
 public:
  /// Hashes every changed chunk of store (as hashWorld; about as long).
  void reset(const BrickStore& store);

  /// Rehashes the chunks touched by edits (the edit log of the step just applied to
  /// store), then the world hash and the touched cells' hashes (a tracker never reset
  /// resets first). Cost: the touched chunks. Allocation: only growth of the internal
  /// tables.
  void update(const BrickStore& store, std::span<const EditRecord> edits);

  /// Forgets the changed chunks of columns, as if they held their generated content
  /// again: what a mirror that drops modified columns (BrickStore::dropColumns) calls
  /// with them. Cost: the columns' chunks.
  void forgetColumns(const BrickStore& store, std::span<const ChunkColumn> columns);

  /// The term of chunk c when it is changed (the world database stores it with the
  /// chunk's bricks), else nothing. O(1).
  std::optional<std::uint64_t> term(ChunkCoord c) const;

  /// The world hash after the last reset / update.
  std::uint64_t worldHash() const noexcept { return world_; }

  /// The cells the last update touched, with their hashes, sorted by cell.
  std::span<const CellHash> touchedCells() const noexcept { return touched_; }

  /// The hash of any cell (from the sums; a cell without changed chunks has the hash
  /// of an empty sum).
  std::uint64_t cellHash(const BrickStore& store, CellCoord cell) const;

  /// Chunks whose packed bricks are kept, at most (about 100 KB each in a forest).
  static constexpr std::size_t kCachedChunks = 256;

 private:
  /// The canonical packed bricks of one non-uniform chunk, in brick order.
  struct PackedChunk {
    std::vector<std::uint8_t> bytes;
    std::vector<std::uint32_t> offsets;  ///< 4097: brick k is bytes[offsets[k], offsets[k+1])
    std::uint64_t lastUse = 0;           ///< update counter when last touched
  };
  std::uint64_t hashTouchedChunk(const BrickStore& store, int chunk, std::span<const int> localBricks);
  void setTerm(ChunkCoord c, bool changed, std::uint64_t term);
  std::unordered_map<std::uint64_t, PackedChunk> packed_;  ///< by chunkKey
  std::uint64_t updates_ = 0;
  std::vector<std::pair<std::uint64_t, int>> touchedBricks_;  ///< (chunkKey, local brick) of this update
  std::vector<std::uint8_t> spliceBytes_;
  std::vector<std::uint32_t> spliceOffsets_;
  std::vector<int> localScratch_;

  std::unordered_map<std::uint64_t, std::uint64_t> terms_;  ///< chunkKey -> term, changed chunks only
  std::unordered_map<std::uint64_t, internal::TermSum> cells_;  ///< cellKey -> sum of its terms
  internal::TermSum all_;
  std::vector<CellHash> touched_;
  std::uint64_t world_ = 0;
  bool reset_ = false;
};

}  // namespace loam::sim
