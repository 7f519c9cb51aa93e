// Edit footprints: which voxels a dig removes and a place fills, given how the world
// reads. The step applies them to the state (sim/step/step.cpp); a client predicts
// its own edits with the same functions over its mirror and the edits it has
// predicted (net/predicted_edits.h), so a prediction that the server confirms is the
// server's result voxel for voxel.
#pragma once

#include <cstdint>
#include <span>

#include "sim/step/commands.h"
#include "sim/systems/events.h"
#include "sim/world/brick_store.h"
#include "sim/world/material_lut.h"

namespace loam::sim {

/// A box of voxels, [lo, hi) on each axis (x, y, z).
struct VoxelRange {
  std::int32_t lo[3];
  std::int32_t hi[3];  // exclusive
};

/// The cube a place fills: `size` voxels deep on the outer side of the target's
/// face, centred on the target in the face plane.
constexpr VoxelRange placeRange(const PlaceCommand& pc) noexcept {
  const std::int32_t size = static_cast<std::int32_t>(pc.size);
  const std::int32_t t[3] = {pc.target.x, pc.target.y, pc.target.z};
  const int axis = static_cast<int>(pc.face) / 2;
  const bool positive = (static_cast<int>(pc.face) & 1) != 0;
  VoxelRange r{};
  for (int a = 0; a < 3; ++a) {
    r.lo[a] = a == axis ? (positive ? t[a] + 1 : t[a] - size) : t[a] - size / 2;
    r.hi[a] = r.lo[a] + size;
  }
  return r;
}

/// Calls fn(voxel, material) for every voxel a dig removes, in z, y, x order: each
/// diggable voxel (get(voxel) says what it holds) inside the bounds whose centre lies
/// within the tool's radius of the target's centre.
template <class Get, class Fn>
void forEachDugVoxel(const DigCommand& d, const WorldBounds& bounds, const MaterialLut& lut, Get&& get, Fn&& fn) {
  const std::int32_t r = static_cast<std::int32_t>(d.radius);
  for (std::int32_t dz = -r; dz <= r; ++dz) {
    for (std::int32_t dy = -r; dy <= r; ++dy) {
      for (std::int32_t dx = -r; dx <= r; ++dx) {
        if (dx * dx + dy * dy + dz * dz > r * r) continue;
        const VoxelCoord v{d.target.x + dx, d.target.y + dy, d.target.z + dz};
        if (!bounds.containsVoxel(v)) continue;
        const MaterialId m = get(v);
        if (lut.diggable[m]) fn(v, m);
      }
    }
  }
}

/// Calls emit(event) for what a dig that removed `counts[m]` voxels of each material
/// m emits: one DigEvent (the material removed most, the first of equals) and a
/// FractureEvent per material removed, in material order. Nothing when it removed
/// nothing (the step refuses such a dig).
template <class Emit>
void emitDigEvents(Actor who, const DigCommand& d, std::span<const std::uint32_t> counts, Emit&& emit) {
  std::uint32_t total = 0;
  std::size_t most = 0;
  for (std::size_t m = 1; m < counts.size(); ++m) {
    total += counts[m];
    if (counts[m] > counts[most]) most = m;
  }
  if (total == 0) return;
  emit(Event{DigEvent{who, d.target, static_cast<std::uint8_t>(d.radius), static_cast<MaterialId>(most), total}});
  for (std::size_t m = 1; m < counts.size(); ++m)
    if (counts[m] > 0) emit(Event{FractureEvent{d.target, static_cast<MaterialId>(m), counts[m]}});
}

/// A place fills a voxel that holds air or a liquid.
inline bool placeFills(const MaterialLut& lut, MaterialId m) noexcept { return m == kAir || lut.liquid[m]; }

/// Calls fn(voxel) for every voxel of placeRange(pc) that a place fills (placeFills),
/// in z, y, x order. The caller has checked that the range lies inside the world.
template <class Get, class Fn>
void forEachPlacedVoxel(const PlaceCommand& pc, const MaterialLut& lut, Get&& get, Fn&& fn) {
  const VoxelRange r = placeRange(pc);
  for (std::int32_t z = r.lo[2]; z < r.hi[2]; ++z)
    for (std::int32_t y = r.lo[1]; y < r.hi[1]; ++y)
      for (std::int32_t x = r.lo[0]; x < r.hi[0]; ++x)
        if (placeFills(lut, get(VoxelCoord{x, y, z}))) fn(VoxelCoord{x, y, z});
}

}  // namespace loam::sim
