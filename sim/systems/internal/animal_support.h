// What the animal system's step (sim/systems/animal_step.cpp) and its init
// (sim/systems/animals.cpp) share: the tuning constants, the keyed draw indices,
// integer geometry (headings, approach) and the voxel queries a body makes (wet,
// drop, ground, unstick). The model is described in sim/systems/animals.h. Only
// sim/systems/animal*.cpp include this header.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <optional>

#include "sim/systems/animals.h"
#include "sim/systems/motion.h"
#include "sim/systems/sim_state.h"
#include "sim/world/brick_store.h"
#include "sim/world/material_lut.h"
#include "sim/world/voxel_collision.h"

namespace loam::sim::internal::animal {

using internal::AnimalBrain;
using internal::AnimalDenInfo;

// ---- constants (units, units per tick, units per tick^2, ticks) ----------------------

// Gravity and the fall speed limit are player motion's (kGravity, kMaxFallSpeed in
// sim/systems/motion.h).
inline constexpr std::int32_t kWalkerGroundAccel = accelFromMps2(20.0);
inline constexpr std::int32_t kWalkerAirAccel = accelFromMps2(3.0);
inline constexpr std::int32_t kArriveDistance = unitsFromMetres(0.4);
inline constexpr std::int32_t kWaterProbeBelow = 6;  // voxels under the feet checked for water (30 cm)
inline constexpr std::int32_t kMaxDropVoxels = 20;   // a walker will not step off a drop deeper than 1 m
inline constexpr std::uint16_t kStuckLimit = 30;     // ticks without progress before a new heading
inline constexpr std::int32_t kEscapeLookahead = unitsFromMetres(0.6);
inline constexpr std::uint16_t kDetourTicks = 30;
inline constexpr std::int32_t kUnstickSearch = 40;  // voxels searched upward for a free spot
inline constexpr std::int32_t kSpawnRadius = unitsFromMetres(5.0);
inline constexpr std::int32_t kSpawnHeightTolerance = unitsFromMetres(4.0);
inline constexpr std::int32_t kDogFollowFar = unitsFromMetres(12.0);
inline constexpr std::int32_t kDogFollowNear = unitsFromMetres(4.0);
inline constexpr std::uint64_t kDogGiveUpTicks = 10 * kTicksPerSecond;

inline constexpr std::int32_t kBirdCruise = unitsPerTickFromMps(6.0);
inline constexpr std::int32_t kBirdMinSpeed = unitsPerTickFromMps(0.4);
inline constexpr std::int32_t kBirdAccel = accelFromMps2(10.0);
inline constexpr std::int32_t kBirdTakeoffSpeed = unitsPerTickFromMps(2.5);
inline constexpr std::int32_t kBirdFleeRadius = unitsFromMetres(5.0);
inline constexpr std::int32_t kBirdLandDistance = unitsFromMetres(0.1);
inline constexpr std::int32_t kBirdArcMax = unitsFromMetres(5.0);
inline constexpr std::int32_t kBirdClimb = unitsFromMetres(2.0);
inline constexpr std::int32_t kBirdSkyMargin = unitsFromMetres(1.0);
inline constexpr std::uint16_t kBirdClimbTicks = 30;
inline constexpr std::uint16_t kBirdTakeoffClimbTicks = 8;
inline constexpr std::uint16_t kBirdStuckLimit = 180;
inline constexpr std::uint64_t kBirdFlightLimit = 40 * kTicksPerSecond;
inline constexpr std::uint32_t kBirdPerchMin = 5 * kTicksPerSecond;
inline constexpr std::uint32_t kBirdPerchSpread = 25 * kTicksPerSecond;
inline constexpr std::uint32_t kBirdCallPerched = 10 * kTicksPerSecond;  // mean ticks between idle calls
inline constexpr std::uint32_t kBirdCallFlying = 25 * kTicksPerSecond;
inline constexpr int kFleePerchSamples = 6;

struct WalkerParams {
  std::int32_t halfWidth;
  std::int32_t height;
  std::int32_t walkSpeed;
  std::int32_t runSpeed;
  std::int32_t fleeRadius;  // a player nearer than this starts a flight
  std::int32_t fleeExit;    // the flight ends when the nearest player is farther
  std::uint32_t callTicks;  // mean ticks between idle calls
};

inline constexpr WalkerParams kFoxParams{.halfWidth = kFoxHalfWidth,
                                         .height = kFoxHeight,
                                         .walkSpeed = unitsPerTickFromMps(1.4),
                                         .runSpeed = unitsPerTickFromMps(5.5),
                                         .fleeRadius = unitsFromMetres(6.0),
                                         .fleeExit = unitsFromMetres(12.0),
                                         .callTicks = 40 * kTicksPerSecond};
inline constexpr WalkerParams kDogParams{.halfWidth = kDogHalfWidth,
                                         .height = kDogHeight,
                                         .walkSpeed = unitsPerTickFromMps(1.3),
                                         .runSpeed = unitsPerTickFromMps(5.0),
                                         .fleeRadius = unitsFromMetres(2.0),
                                         .fleeExit = unitsFromMetres(5.0),
                                         .callTicks = 30 * kTicksPerSecond};

// Draw indices under RandomPurpose::AnimalWander / AnimalSpawn (one per use, so two
// draws for the same animal in the same tick never coincide).
enum Draw : std::uint32_t {
  kDrawIdleTicks = 0,
  kDrawHeading = 1,
  kDrawDistance = 2,
  kDrawHomeHeading = 3,
  kDrawHomeDistance = 4,
  kDrawTurn = 5,
  kDrawTurnSide = 6,
  kDrawPerchTicks = 7,
  kDrawPerch = 16,        // + sample number
  kDrawSpawn = 64,        // + 2 * candidate (+1)
  kDrawSpawnPerch = 256,  // + sample number
};

// ---- integer geometry -----------------------------------------------------------------

// atan(2^-i) in 1/256 binary-angle units (2^24 per turn), for CORDIC.
inline constexpr std::int64_t kAtanQ8[16] = {2097152, 1238021, 654136, 332050, 166669, 83416, 41718, 20860,
                                      10430,   5215,    2608,   1304,   652,    326,   163,   81};

// The binary angle (0 north = -z, clockwise: 16384 east = +x) of the horizontal
// direction (east, south) = (dx, dz). Integer CORDIC, bit-exact. 0 for a zero vector.
inline std::uint16_t headingOf(std::int64_t dx, std::int64_t dz) noexcept {
  std::int64_t x = -dz, y = dx;  // x: north component, y: east component
  if (x == 0 && y == 0) return 0;
  std::int64_t angle = 0;
  if (x < 0) {
    x = -x;
    y = -y;
    angle = std::int64_t{32768} << 8;
  }
  // Scale up so the shifts below keep precision (inputs are at most ~2^33).
  const std::uint64_t mag = static_cast<std::uint64_t>(x) | static_cast<std::uint64_t>(y < 0 ? -y : y);
  const int shift = std::countl_zero(mag) - 24;  // leaves the magnitude below 2^40
  if (shift > 0) {
    x *= std::int64_t{1} << shift;
    y *= std::int64_t{1} << shift;
  }
  for (int i = 0; i < 16; ++i) {
    const std::int64_t nx = y > 0 ? x + (y >> i) : x - (y >> i);
    const std::int64_t ny = y > 0 ? y - (x >> i) : y + (x >> i);
    angle += y > 0 ? kAtanQ8[i] : -kAtanQ8[i];
    x = nx;
    y = ny;
  }
  return static_cast<std::uint16_t>(static_cast<std::uint64_t>((angle + 128) >> 8) & 0xFFFFu);
}

struct Vec2i {
  std::int32_t x = 0, z = 0;
};

// The horizontal vector of length `length` along binary angle yaw.
inline Vec2i along(std::uint16_t yaw, std::int32_t length) noexcept {
  return {static_cast<std::int32_t>(std::int64_t{sinQ14(yaw)} * length / 16384),
          static_cast<std::int32_t>(-std::int64_t{cosQ14(yaw)} * length / 16384)};
}

inline std::int64_t horizontalDistanceSquared(Vec3i a, Vec3i b) noexcept {
  const std::int64_t dx = std::int64_t{a.x} - b.x, dz = std::int64_t{a.z} - b.z;
  return dx * dx + dz * dz;
}

inline std::int32_t isqrtUnits(std::int64_t v) noexcept {
  return static_cast<std::int32_t>(isqrt64(static_cast<std::uint64_t>(v)));
}

// Moves (vx, vz) toward (tx, tz) by at most accel (Euclidean), exactly (motion.cpp's rule).
inline void approach2(std::int32_t& vx, std::int32_t& vz, std::int32_t tx, std::int32_t tz, std::int32_t accel) noexcept {
  const std::int64_t dx = std::int64_t{tx} - vx, dz = std::int64_t{tz} - vz;
  const std::int64_t d2 = dx * dx + dz * dz;
  if (d2 <= std::int64_t{accel} * accel) {
    vx = tx;
    vz = tz;
    return;
  }
  const std::int64_t d = isqrtUnits(d2);
  if (d == 0) return;
  vx += static_cast<std::int32_t>(dx * accel / d);
  vz += static_cast<std::int32_t>(dz * accel / d);
}

inline void approach3(Vec3i& v, Vec3i t, std::int32_t accel) noexcept {
  const std::int64_t dx = std::int64_t{t.x} - v.x, dy = std::int64_t{t.y} - v.y, dz = std::int64_t{t.z} - v.z;
  const std::int64_t d2 = dx * dx + dy * dy + dz * dz;
  if (d2 <= std::int64_t{accel} * accel) {
    v = t;
    return;
  }
  const std::int64_t d = isqrtUnits(d2);
  if (d == 0) return;
  v.x += static_cast<std::int32_t>(dx * accel / d);
  v.y += static_cast<std::int32_t>(dy * accel / d);
  v.z += static_cast<std::int32_t>(dz * accel / d);
}

// ---- voxel queries shared by init and step --------------------------------------------

struct Body {
  std::int32_t halfWidth;
  std::int32_t height;
};

inline Body bodyOf(AnimalSpecies s) noexcept {
  switch (s) {
    case AnimalSpecies::Bird:
      return {kBirdHalfWidth, kBirdHeight};
    case AnimalSpecies::Fox:
      return {kFoxHalfWidth, kFoxHeight};
    case AnimalSpecies::Dog:
      return {kDogHalfWidth, kDogHeight};
  }
  return {kFoxHalfWidth, kFoxHeight};
}

// Water in or just under a box's footprint: from kWaterProbeBelow voxels below the
// feet up to the middle of the body.
inline bool wetAt(const BrickStore& world, const MaterialLut& lut, const UnitBox& box) noexcept {
  VoxelBox r = voxelsOfBox(box);
  const std::int32_t feet = box.lo.y >> kUnitShift;
  r.min.y = feet - kWaterProbeBelow;
  r.max.y = feet + ((box.hi.y - box.lo.y) >> (kUnitShift + 1)) + 1;
  return regionHasAny(world, lut.liquid, r);
}

// Nothing to stand on within kMaxDropVoxels under the footprint.
inline bool dropAt(const BrickStore& world, const MaterialLut& lut, const UnitBox& box) noexcept {
  VoxelBox r = voxelsOfBox(box);
  const std::int32_t feet = box.lo.y >> kUnitShift;
  r.min.y = feet - kMaxDropVoxels;
  r.max.y = feet;
  return !regionCollides(world, lut, r);
}

// The feet height a box of this size lands at when dropped from the sky at (x, z),
// or nullopt when the column is blocked at the top of the world.
inline std::optional<std::int32_t> dropToGround(const BrickStore& world, const MaterialLut& lut, std::int32_t x,
                                         std::int32_t z, Body body) noexcept {
  const WorldBounds& wb = world.bounds();
  const std::int32_t top = wb.maxBrick.y * kBrickSize * kUnitsPerVoxel;
  const std::int32_t bottom = wb.minBrick.y * kBrickSize * kUnitsPerVoxel;
  UnitBox box = boxAtFeet(Vec3i{x, top, z}, body.halfWidth, body.height);
  if (boxCollides(world, lut, box)) return std::nullopt;  // outside the sides
  bool blocked = false;
  sweepBox(world, lut, box, 1, bottom - top, blocked);
  if (!blocked) return std::nullopt;
  return box.lo.y;
}

// Lifts a body whose box overlaps a solid voxel (a block placed on it) to the first
// free voxel-aligned height within kUnstickSearch voxels above. Returns true if moved.
inline bool unstick(const BrickStore& world, const MaterialLut& lut, Vec3i& feet, Body body) noexcept {
  if (!boxCollides(world, lut, boxAtFeet(feet, body.halfWidth, body.height))) return false;
  const std::int32_t base = feet.y >> kUnitShift;
  for (std::int32_t k = 1; k <= kUnstickSearch; ++k) {
    const Vec3i p{feet.x, (base + k) * kUnitsPerVoxel, feet.z};
    if (!boxCollides(world, lut, boxAtFeet(p, body.halfWidth, body.height))) {
      feet = p;
      return true;
    }
  }
  return false;
}

// ---- players ---------------------------------------------------------------------------

struct Threat {
  const Player* player = nullptr;
  std::int64_t distanceSquared = std::numeric_limits<std::int64_t>::max();
};

// The nearest player (3-D distance between feet; the lower id on ties).
inline Threat nearestPlayer(const SimState& s, Vec3i p) noexcept {
  Threat t;
  for (const Player& pl : s.players) {
    const std::int64_t d2 = distanceSquared(pl.motion.position, p);
    if (d2 < t.distanceSquared) {
      t.player = &pl;
      t.distanceSquared = d2;
    }
  }
  return t;
}

}  // namespace loam::sim::internal::animal
