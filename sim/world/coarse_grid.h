// The coarse copy of the world: per brick, the solid fraction and the acoustic
// opacity (0..255 each), for audio rays and AI. The store keeps the exact per-brick
// sums in step with every set/writeBrick/fillBrick (sim/world/brick_store.h), so reading
// a sample is a brick lookup; nothing is ever recomputed globally except on request
// (rebuild, used after changing the material lookup and by tests).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/world/voxel.h"

namespace loam::sim {

class BrickStore;
class MaterialTable;

/// Per-material coarse properties, indexed by MaterialId: solid (0 or 1) and acoustic
/// opacity (0..255, from the table's 0..1 value). 512 bytes, plain data.
struct CoarseLut {
  std::array<std::uint8_t, 256> solid{};    ///< 1 when the material is solid, else 0
  std::array<std::uint8_t, 256> opacity{};  ///< acoustic opacity, 0..255
};

/// The lookup a store uses until told otherwise: air is empty (0, 0); every other id
/// is solid and fully opaque (1, 255). No allocation.
CoarseLut defaultCoarseLut() noexcept;

/// The lookup for a material table: solid flag and round(acousticOpacity * 255) per
/// material; ids past the table's size get the default solid/opaque values. No
/// allocation.
CoarseLut makeCoarseLut(const MaterialTable& materials) noexcept;

/// One brick of the coarse copy.
struct CoarseSample {
  std::uint8_t solid = 0;    ///< fraction of solid voxels, 0..255 (255 = all solid)
  std::uint8_t opacity = 0;  ///< mean acoustic opacity of the voxels, 0..255
  friend bool operator==(const CoarseSample&, const CoarseSample&) = default;
};

/// Converts exact per-brick sums (solid voxel count 0..512, sum of opacity bytes over
/// 512 voxels) to a sample, rounding half up. Pure integer arithmetic.
constexpr CoarseSample coarseFromSums(std::uint32_t solidCount, std::uint32_t opacitySum) noexcept {
  return {static_cast<std::uint8_t>((solidCount * 255u + 256u) / 512u),
          static_cast<std::uint8_t>((opacitySum + 256u) / 512u)};
}

/// The incrementally maintained sample of brick b (air's sample outside the bounds).
/// O(1): one brick lookup. Thread: any, while no thread writes b's chunk.
CoarseSample coarseSample(const BrickStore& store, BrickCoord b) noexcept;

/// The sample of brick b recomputed from its 512 voxels with lut (the reference the
/// incremental copy must equal). O(512). No allocation.
CoarseSample coarseSampleFromVoxels(const BrickStore& store, const CoarseLut& lut, BrickCoord b) noexcept;

/// A brick whose incremental sample differs from the recomputed one.
struct CoarseMismatch {
  BrickCoord brick;          ///< where
  CoarseSample incremental;  ///< what the store holds
  CoarseSample rebuilt;      ///< what the voxels say
};

/// Full rebuild check: recomputes every brick's sample from its voxels with the
/// store's own lookup and lists the bricks where the incremental copy differs (empty
/// when in step). Uniform chunks are checked once per chunk. Allocates the result.
std::vector<CoarseMismatch> verifyCoarse(const BrickStore& store);

}  // namespace loam::sim
