// The combining steps of the world hash (sim/world/world_hash.h): world hash and cell
// hash from chunk hashes. One copy, shared by hashWorld and WorldHashTracker so the
// incremental result cannot drift from the full one. Internal to sim.
#pragma once

#include <cstdint>
#include <span>

#include "sim/world/voxel.h"

namespace loam::sim {
class BrickStore;
}

namespace loam::sim::internal {

/// The world hash from every chunk's hash (canonical chunk order) and the bounds.
/// No allocation.
std::uint64_t combineWorldHash(const WorldBounds& bounds, std::span<const std::uint64_t> chunkHashes);

/// The hash of `cell` from the chunk hashes of the whole store (indexed by canonical
/// chunk index): its chunks are folded in canonical order. No allocation.
std::uint64_t combineCellHash(const BrickStore& store, CellCoord cell, std::span<const std::uint64_t> chunkHashes);

/// Hashes chunks indices[k] into out[indices[k]] (reuses one per-thread buffer,
/// allocated on first use).
void hashChunks(const BrickStore& store, std::span<const int> indices, std::span<std::uint64_t> out);

/// The range of cells the store's chunks cover, [min, max] inclusive on each axis.
void cellRange(const BrickStore& store, CellCoord& min, CellCoord& max) noexcept;

}  // namespace loam::sim::internal
