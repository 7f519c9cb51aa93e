// World hashes. Two families, both XXH3-64 over canonical serialisations, so equal
// worlds hash equal whatever their internal encoding (palette order, collapsed or
// expanded chunks, edit history) and whichever chunks happen to be resident:
//
// - The world hash (hashWorld, worldHash, cellHashes) covers what changed since
//   generation: the chunks whose content differs from what the generator made (for a
//   store never marked generated, the chunks that are not all air). The generated
//   world is a function of the scene and the seed, so this is what the simulation,
//   traces and the step stream's desync check need, and it costs what changed, not
//   the world's area.
// - The content hash (hashContent) covers every chunk inside the bounds: a check
//   that a client generated the same world as the server, and the generator's goldens.
//
// Serialisations, all integers little-endian:
//   chunk content: when all its voxels are one material m:  'U' m
//     otherwise, for each brick in brickIndexInChunk order, its canonical packed form
//     (BrickView::packCanonical: 0x00 m for a uniform brick; else the ascending
//     palette and minimal-width indices, or the 512 materials past 16 of them), a
//     bijection of the brick's 512 materials that does not depend on history
//   chunkHash(c)  = XXH3-64 of its content (a chunk that is not resident is air)
//   world hash (version 2):
//     term(c)     = XXH3-64 of "LOAMWC2\0", c (x, y, z as int32), chunkHash(c)
//     world hash  = XXH3-64 of "LOAMWH2\0", then the sum (mod 2^64) of term(c) over the
//                   changed chunks and their count, as uint64
//     cell hash   = XXH3-64 of the cell (x, z as int32), then the same sum and count
//                   over the changed chunks in the cell; only cells holding a changed
//                   chunk are listed
//     (sums, so that a step updates the hash in proportion to what it touched)
//   content hash (version 1):
//     world       = XXH3-64 of "LOAMWH1\0", the bounds (min x, y, z, max x, y, z as
//                   int32) and every chunkHash in the bounds as uint64, canonical order
//     cell        = XXH3-64 of the cell (x, z as int32) and the chunkHash of every
//                   chunk of the bounds in the cell, canonical chunk order
//   columns hash (version 1), the content of some chunk columns (a streamed world's
//   join check, where nobody holds the whole world):
//     world       = XXH3-64 of "LOAMCC1\0", then per chunk of the columns in canonical
//                   order: x, y, z as int32 and chunkHash as uint64
//     cell        = XXH3-64 of the cell (x, z as int32) and the chunkHash of every
//                   chunk of the columns in the cell, canonical order; only cells
//                   holding one of the columns are listed
// Changing any of this changes golden hashes: bump the version and say why.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/world/column_source.h"
#include "sim/world/voxel.h"

namespace loam::sim {

class BrickStore;

/// The hash of one interest cell.
struct CellHash {
  CellCoord cell;          ///< the cell (32 x 32 bricks in plan)
  std::uint64_t hash = 0;  ///< XXH3-64 as described above
  friend bool operator==(const CellHash&, const CellHash&) = default;
};

/// A chunk column as generated and its columns hash (hashColumns of it alone): what a
/// client reports so the server can check the client's generator against its own.
struct GeneratedColumnHash {
  ChunkColumn column;
  std::uint64_t hash = 0;
};

/// A world hash and its cell hashes, computed in one pass.
struct WorldHashes {
  std::uint64_t world = 0;      ///< the world (or content) hash
  std::vector<CellHash> cells;  ///< sorted by cell (x, then z)
};

/// The world hash of what changed since generation, and its cells. Allocates the cell
/// list (and a 64 KB scratch buffer once per thread). Thread: any, while nobody
/// writes the store. O(resident chunks + modified bricks + voxels of changed chunks).
WorldHashes hashWorld(const BrickStore& store);

/// The terms of the store's resident changed chunks, sorted by chunk: what the world
/// database keeps beside their bricks. O(resident chunks + voxels of changed chunks).
std::vector<ChunkTerm> changedChunkTerms(const BrickStore& store);

/// The world hash (hashWorld(store).world).
std::uint64_t worldHash(const BrickStore& store);

/// The cell hashes of the world hash, sorted by cell (hashWorld(store).cells).
std::vector<CellHash> cellHashes(const BrickStore& store);

/// The content hash of every chunk in the bounds, and its cells (every cell of the
/// bounds). O(chunks in the bounds + voxels in mixed bricks): for tools, tests and
/// the join's generation check, not per step.
WorldHashes hashContent(const BrickStore& store);

/// The columns hash of columns (inside the bounds, each present in a streamed store:
/// an absent column is not generated here and would hash as air; asserted) and its
/// cells. Duplicates count once. O(chunks of the columns + their mixed voxels).
WorldHashes hashColumns(const BrickStore& store, std::span<const ChunkColumn> columns);

/// The hash of slot i's content.
std::uint64_t chunkHash(const BrickStore& store, int chunkIndex);

/// The content hash of the resident chunks alone, for a region generated by
/// generateRegion (what is not resident is absent, not air): XXH3 of (x, y, z,
/// chunkHash) per resident chunk in canonical order. O(resident chunks + their
/// mixed voxels). What `loam-tool gen --around ... --hash` prints.
std::uint64_t residentContentHash(const BrickStore& store);

/// The cells whose hashes differ between two stores, sorted; a cell present in only
/// one of them counts as differing. Allocates.
std::vector<CellCoord> differingCells(const BrickStore& a, const BrickStore& b);

/// As differingCells, from two cell hash lists (each sorted as cellHashes returns).
std::vector<CellCoord> differingCells(const std::vector<CellHash>& a, const std::vector<CellHash>& b);

}  // namespace loam::sim
