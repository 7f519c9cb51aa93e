// Surface changes: how far the ground has risen or sunk since generation, per square
// patch of voxel columns. What the far view needs to know of edits it holds no voxels
// for: the server sums them (net/host/far_sync.h), clients lay them over the
// generator's heights (mesh/far_terrain.h).
//
// Patch (x, z) is centred on voxel column (16x, 16z), where the far view's finest
// level samples the generator, and covers the columns [16x - 8, 16x + 8) in x and z.
// A column's top is its highest voxel that collides (lut.collides: not air, liquid or
// foliage), as groundHeight reads it; generated trees stand in both tops, so only
// what players and fire changed counts. A column that sank counts only what its
// ground lost (its tops without tree parts: trunks and what fire leaves of them), so
// a felled or burnt-out tree, which the far view never drew, changes nothing.
#pragma once

#include <array>
#include <cstdint>

#include "sim/world/material.h"
#include "sim/world/voxel.h"

namespace loam::sim {

class BrickStore;
struct MaterialLut;

/// A flag per material id.
using MaterialMask = std::array<std::uint8_t, 256>;

inline constexpr std::int32_t kSurfacePatchVoxels = 16;  ///< a patch's side (0.8 m)
inline constexpr std::int32_t kSurfacePatchColumns = kSurfacePatchVoxels * kSurfacePatchVoxels;

/// The change of one patch.
struct SurfaceChange {
  std::int32_t x = 0, z = 0;   ///< the patch: centred on voxel column (16x, 16z)
  std::int32_t rise = 0;       ///< sum over its 256 columns of (top now - top when generated), voxels
  MaterialId material = kAir;  ///< the most common top of the changed columns when they are at
                               ///< least half the patch; kAir otherwise (the generator's surface shows)
  friend bool operator==(const SurfaceChange&, const SurfaceChange&) = default;
};

/// A patch (or any point of a patch-aligned grid) as one 64-bit key, x in the high half:
/// what maps and sets of patches are keyed by.
constexpr std::uint64_t surfacePatchKey(std::int32_t x, std::int32_t z) noexcept {
  return (std::uint64_t{static_cast<std::uint32_t>(x)} << 32) | static_cast<std::uint32_t>(z);
}
/// The (x, z) of a surfacePatchKey.
constexpr std::array<std::int32_t, 2> surfacePatchOfKey(std::uint64_t key) noexcept {
  return {static_cast<std::int32_t>(static_cast<std::uint32_t>(key >> 32)),
          static_cast<std::int32_t>(static_cast<std::uint32_t>(key))};
}

/// What generated trees are made of, by name in materials: wood, and what fire leaves
/// of it (charcoal, ash), as the fire system names them.
MaterialMask treePartsOf(const MaterialTable& materials);

/// The patch index holding voxel coordinate v (x or z): floor((v + 8) / 16).
constexpr std::int32_t surfacePatchOf(std::int32_t v) noexcept {
  return static_cast<std::int32_t>((std::int64_t{v} + kSurfacePatchVoxels / 2) >> 4);
}

/// Patch (x, z) of world, from its bricks and their generated content (BrickStore::
/// generatedBrick; a store never marked generated has no changes). Reads only the
/// chunk columns that may hold changes (resident and modified, or stored); a stored
/// one that is not resident is loaded, which changes residency, never what is read.
/// About 2,600 brick lookups, tens of microseconds. treeParts: what trees are made of. Thread: the world's reader.
SurfaceChange surfaceChange(const BrickStore& world, const MaterialLut& lut, const MaterialMask& treeParts,
                            std::int32_t x, std::int32_t z);

}  // namespace loam::sim
