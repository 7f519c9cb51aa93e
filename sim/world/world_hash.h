// World hashes: XXH3-64 over a canonical serialisation of the store's content, so
// that equal worlds hash equal whatever their internal encoding (palette order,
// collapsed or expanded chunks, edit history), plus per-cell hashes (12.8 m cells,
// 32x32 bricks in plan, full height) to localise a difference.
//
// Canonical serialisation (version 1), all integers little-endian:
//   chunk c, when all its voxels are one material m:  'U' m
//   otherwise, for each brick in brickIndexInChunk order, its canonical packed form
//     (BrickView::packCanonical: 0x00 m for a uniform brick; else the ascending
//     palette and minimal-width indices, or the 512 materials past 16 of them), a
//     bijection of the brick's 512 materials that does not depend on history
//   chunkHash(c)  = XXH3-64 of that serialisation
//   world hash    = XXH3-64 of "LOAMWH1\0", the bounds (min x, y, z, max x, y, z as
//                   int32) and every chunkHash as uint64 in canonical chunk order
//   cell hash     = XXH3-64 of the cell (x, z as int32) and the chunkHash of every
//                   chunk in the cell, canonical chunk order
// Changing any of this changes every golden hash: bump the version and say why.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/world/voxel.h"

namespace loam::sim {

class BrickStore;

/// The hash of one interest cell.
struct CellHash {
  CellCoord cell;          ///< the cell (32 x 32 bricks in plan)
  std::uint64_t hash = 0;  ///< XXH3-64 as described above
  friend bool operator==(const CellHash&, const CellHash&) = default;
};

/// The world hash and the cell hashes, computed in one pass.
struct WorldHashes {
  std::uint64_t world = 0;      ///< the world hash
  std::vector<CellHash> cells;  ///< sorted by cell (x, then z)
};

/// Hashes the world and its cells in one pass. Allocates the cell list (and a 64 KB
/// scratch buffer once per thread). Thread: any, while nobody writes the store. O(voxels in mixed
/// bricks + bricks in expanded chunks + chunks).
WorldHashes hashWorld(const BrickStore& store);

/// The world hash (hashWorld(store).world).
std::uint64_t worldHash(const BrickStore& store);

/// The cell hashes, sorted by cell (hashWorld(store).cells).
std::vector<CellHash> cellHashes(const BrickStore& store);

/// The hash of chunk index i's canonical serialisation.
std::uint64_t chunkHash(const BrickStore& store, int chunkIndex);

/// The cells whose hashes differ between two stores, sorted; a cell present in only
/// one of them counts as differing. Allocates.
std::vector<CellCoord> differingCells(const BrickStore& a, const BrickStore& b);

/// As differingCells, from two cell hash lists (each sorted as cellHashes returns).
std::vector<CellCoord> differingCells(const std::vector<CellHash>& a, const std::vector<CellHash>& b);

}  // namespace loam::sim
