// Fixed-point positions for everything that moves (players, animals, events).
// One unit is 1/1024 of a voxel (about 0.049 mm); a voxel edge is exactly 1024 units,
// so voxel and brick boundaries are exact and collision is integer maths, bit-exact
// on every compiler and CPU without any floating point. An int32 spans +-104 km.
// Velocities are units per tick (60 ticks per second).
#pragma once

#include <cstdint>

#include "sim/world/voxel.h"

namespace loam::sim {

inline constexpr std::int32_t kUnitShift = 10;
inline constexpr std::int32_t kUnitsPerVoxel = 1 << kUnitShift;               ///< 1024
inline constexpr std::int32_t kUnitsPerMetre = kUnitsPerVoxel * kVoxelsPerMetre;  ///< 20480
inline constexpr std::int32_t kTicksPerSecond = 60;                            ///< fixed step rate

/// An integer 3-vector: positions in units, velocities in units per tick.
struct Vec3i {
  std::int32_t x = 0, y = 0, z = 0;
  friend bool operator==(const Vec3i&, const Vec3i&) = default;
};

/// The voxel holding unit coordinate u (floor division, exact for negatives).
constexpr std::int32_t voxelOfUnit(std::int32_t u) noexcept { return u >> kUnitShift; }

/// The voxel holding position p.
constexpr VoxelCoord voxelOf(Vec3i p) noexcept { return {voxelOfUnit(p.x), voxelOfUnit(p.y), voxelOfUnit(p.z)}; }

/// Squared plan distance (units^2) from p to the nearest point of cell c: what
/// "within reach of a cell" means for interest, on the server and the client alike.
constexpr std::int64_t cellDistanceSquared(Vec3i p, CellCoord c) noexcept {
  constexpr std::int64_t kCellUnits = std::int64_t{kCellBricks} * kBrickSize * kUnitsPerVoxel;
  const std::int64_t x0 = c.x * kCellUnits, z0 = c.z * kCellUnits;
  const std::int64_t dx = p.x < x0 ? x0 - p.x : (p.x >= x0 + kCellUnits ? p.x - (x0 + kCellUnits - 1) : 0);
  const std::int64_t dz = p.z < z0 ? z0 - p.z : (p.z >= z0 + kCellUnits ? p.z - (z0 + kCellUnits - 1) : 0);
  return dx * dx + dz * dz;
}

/// The centre of voxel v in units.
constexpr Vec3i voxelCentre(VoxelCoord v) noexcept {
  return {v.x * kUnitsPerVoxel + kUnitsPerVoxel / 2, v.y * kUnitsPerVoxel + kUnitsPerVoxel / 2,
          v.z * kUnitsPerVoxel + kUnitsPerVoxel / 2};
}

/// Units from metres, rounded half away from zero: for constants, and for scene values
/// (parsed doubles; one multiply and one conversion, basic IEEE operations only, so
/// identical on every build).
constexpr std::int32_t unitsFromMetres(double m) noexcept {
  double u = m * kUnitsPerMetre;
  return static_cast<std::int32_t>(u < 0 ? u - 0.5 : u + 0.5);
}

/// Units per tick from metres per second, for constants (constexpr only).
constexpr std::int32_t unitsPerTickFromMps(double mps) noexcept {
  return unitsFromMetres(mps / kTicksPerSecond);
}

/// Units per tick^2 from metres per second^2, for constants (constexpr only; rounds
/// to nearest for the positive accelerations it is used with).
constexpr std::int32_t accelFromMps2(double a) noexcept {
  double u = a * kUnitsPerMetre / (kTicksPerSecond * kTicksPerSecond);
  return static_cast<std::int32_t>(u + 0.5);
}

/// Squared distance between two positions in units^2 (int64, exact).
constexpr std::int64_t distanceSquared(Vec3i a, Vec3i b) noexcept {
  std::int64_t dx = std::int64_t{a.x} - b.x, dy = std::int64_t{a.y} - b.y, dz = std::int64_t{a.z} - b.z;
  return dx * dx + dy * dy + dz * dz;
}

/// Millimetres from units (truncating toward zero); for events and diagnostics.
constexpr std::int32_t millimetresFromUnits(std::int64_t u) noexcept {
  return static_cast<std::int32_t>(u * 1000 / kUnitsPerMetre);
}

}  // namespace loam::sim
