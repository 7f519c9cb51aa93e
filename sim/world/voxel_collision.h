// Voxel collision for boxes of any size: the same rules player motion uses
// (sim/systems/motion.cpp), exposed for other movers (animals). A box collides with every
// voxel whose material has MaterialLut::collides set; outside the world's sides and
// below its floor counts as solid, above its top is open sky. Moves are swept one
// axis at a time, voxel layer by voxel layer, and stop at the first colliding layer,
// so a mover that starts clear can never end inside a solid voxel.
//
// Reads whole bricks through BrickStore::brick(): a uniform brick is one table load,
// a mixed brick is read only in the sub-box a query needs; never BrickStore::get()
// per voxel. Integer maths only (bit-exact everywhere). No allocation; any thread
// (the world is only read).
//
// motion.cpp keeps its own copy of these loops (with a brick window and the
// collision-mask cache for the player's hot path); the rules are identical, and
// tests/sim/animals_test.cpp checks the two agree for player-sized boxes.
#pragma once

#include <array>
#include <cstdint>

#include "sim/world/brick_store.h"
#include "sim/core/fixed_point.h"
#include "sim/world/material_lut.h"

namespace loam::sim {

/// An axis-aligned box in units (sim/core/fixed_point.h): [lo, hi) on each axis.
struct UnitBox {
  Vec3i lo;  ///< minimum corner, inclusive
  Vec3i hi;  ///< maximum corner, exclusive
  friend bool operator==(const UnitBox&, const UnitBox&) = default;
};

/// The box of a mover standing at `feet` (x, z centre; y bottom) with the given
/// half width (x and z) and height, in units.
constexpr UnitBox boxAtFeet(Vec3i feet, std::int32_t halfWidth, std::int32_t height) noexcept {
  return {{feet.x - halfWidth, feet.y, feet.z - halfWidth}, {feet.x + halfWidth, feet.y + height, feet.z + halfWidth}};
}

/// The voxels a box overlaps (floor of lo, ceiling of hi).
VoxelBox voxelsOfBox(const UnitBox& box) noexcept;

/// True when any voxel of `region` collides (outside the world's sides and below its
/// floor count as solid; above its top is open). O(bricks touched).
bool regionCollides(const BrickStore& world, const MaterialLut& lut, const VoxelBox& region) noexcept;

/// True when any voxel of `region` inside the world has flags[material] != 0
/// (voxels outside the world are air and never match). Use it for liquid or foliage
/// tests with MaterialLut::liquid and similar tables.
bool regionHasAny(const BrickStore& world, const std::array<std::uint8_t, 256>& flags, const VoxelBox& region) noexcept;

/// True when the box overlaps a colliding voxel.
bool boxCollides(const BrickStore& world, const MaterialLut& lut, const UnitBox& box) noexcept;

/// Moves box along axis (0 x, 1 y, 2 z) by delta units, stopping flush against the
/// first colliding voxel layer. Returns the distance moved and sets blocked when it
/// stopped short. Exactly motion.cpp's sweep. O(layers crossed x bricks per layer).
std::int32_t sweepBox(const BrickStore& world, const MaterialLut& lut, UnitBox& box, int axis, std::int32_t delta,
                      bool& blocked) noexcept;

}  // namespace loam::sim
