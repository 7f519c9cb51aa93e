// Player motion: one function, used by the server's step and by client prediction,
// so a predicted player is bit-identical to the server's.
//
// Model: an axis-aligned box 0.6 m wide and 1.8 m tall (1.5 m crouched) moving
// through the voxels that collide (MaterialLut::collides). Gravity, jumping,
// stepping up ledges of up to 25 cm, walk / run / crouch speeds, and swimming in
// liquid (buoyancy, slower, jump swims up, crouch dives). All integer arithmetic in
// fixed-point units (sim/core/fixed_point.h): bit-exact on every compiler and CPU.
// Collision is sim/world/voxel_collision.h's, through a CollisionReader holding the
// bricks around the player for the step (and the collision masks of `cache`).
#pragma once

#include <cstdint>
#include <optional>

#include "sim/world/brick_store.h"
#include "sim/world/collision_cache.h"
#include "sim/core/fixed_point.h"
#include "sim/world/material_lut.h"
#include "sim/systems/player.h"

namespace loam::sim {

class MaterialTable;

// Box and movement constants (units; speeds in units per tick).
inline constexpr std::int32_t kPlayerHalfWidth = unitsFromMetres(0.3);        ///< box is 0.6 m square
inline constexpr std::int32_t kPlayerHeight = unitsFromMetres(1.8);           ///< standing box height
inline constexpr std::int32_t kPlayerCrouchHeight = unitsFromMetres(1.5);     ///< crouched box height
inline constexpr std::int32_t kPlayerEyeHeight = unitsFromMetres(1.62);       ///< eye above the feet (reach)
inline constexpr std::int32_t kPlayerCrouchEyeHeight = unitsFromMetres(1.32); ///< crouched eye
inline constexpr std::int32_t kStepUpHeight = unitsFromMetres(0.25);          ///< highest ledge walked up
inline constexpr std::int32_t kWalkSpeed = unitsPerTickFromMps(4.0);          ///< 4.0 m/s
inline constexpr std::int32_t kRunSpeed = unitsPerTickFromMps(6.5);           ///< 6.5 m/s
inline constexpr std::int32_t kCrouchSpeed = unitsPerTickFromMps(1.8);        ///< 1.8 m/s
inline constexpr std::int32_t kSwimSpeed = unitsPerTickFromMps(2.2);          ///< 2.2 m/s
inline constexpr std::int32_t kGravity = accelFromMps2(9.81);                 ///< units per tick^2, players and animals
inline constexpr std::int32_t kMaxFallSpeed = unitsPerTickFromMps(50.0);      ///< 50 m/s, players and animals

/// Advances a player by one tick of input. Pure: the result depends only on state,
/// input, world and lut (bit-exact everywhere); `cache` (optional, see
/// sim/world/collision_cache.h) only makes it faster. Sets the result's motionEvents /
/// surface / impactSpeed for this tick (footstep, landed, splash). Does not check
/// input.sequence (the caller does) but copies it to lastInput.
/// Cost: well under 1 us walking on terrain with a warm cache, about 1.5 us without;
/// no allocation (except the cache's table on its first use); thread: any that owns
/// `cache` (the world is only read).
PlayerState motionStep(const PlayerState& state, const PlayerInput& input, const BrickStore& world,
                       const MaterialLut& lut, CollisionCache* cache = nullptr) noexcept;

/// The same with the material table (builds its lookup each call: use the
/// MaterialLut overload in loops).
PlayerState motionStep(const PlayerState& state, const PlayerInput& input, const BrickStore& world,
                       const MaterialTable& materials) noexcept;

/// The player's eye position (units) for reach checks and cameras.
Vec3i eyePosition(const PlayerState& state) noexcept;

/// True when a player box at `feet` with `height` overlaps a colliding voxel.
bool boxCollides(const BrickStore& world, const MaterialLut& lut, Vec3i feet, std::int32_t height) noexcept;

/// The feet height (units) of a player standing on the highest colliding voxel of the
/// column at voxel (vx, vz): that voxel's top face. nullopt when the column lies
/// outside the world or holds no colliding voxel. Reads the column top down (a
/// streamed world generates it; nothing else allocates). Pure. Thread: the world's reader.
std::optional<std::int32_t> groundHeight(const BrickStore& world, const MaterialLut& lut, std::int32_t vx,
                                         std::int32_t vz) noexcept;

/// The highest voxel y at or below fromY (voxels) in the column at voxel (vx, vz) that
/// collides, or with flammableToo also one that burns (foliage: what an ignite aims
/// at); the world's floor minus one when there is none. Reads the column top down (a
/// streamed world generates it). Pure. Thread: the world's reader.
std::int32_t topVoxelY(const BrickStore& world, const MaterialLut& lut, std::int32_t vx, std::int32_t vz,
                       std::int32_t fromY, bool flammableToo) noexcept;

/// True when a standing player's box (kPlayerHalfWidth, kPlayerHeight) with its feet
/// at `feet` (units) lies inside bounds. Pure.
bool playerBoxInside(const WorldBounds& bounds, Vec3i feet) noexcept;

/// Q14 sine and cosine of a binary angle (65536 per turn): exact integer table,
/// identical everywhere. |result| <= 16384.
std::int32_t sinQ14(std::uint16_t angle) noexcept;
std::int32_t cosQ14(std::uint16_t angle) noexcept;

/// Integer square root: floor(sqrt(v)). Exact.
std::uint32_t isqrt64(std::uint64_t v) noexcept;

}  // namespace loam::sim
