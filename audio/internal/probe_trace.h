// The room probe's tracing primitives, shared with CornerSearch (defined in
// audio/room_probe.cpp). Pure over a const BrickStore; no allocation; any thread while
// nobody writes the store.
#pragma once

#include "audio/engine.h"  // Vec3f
#include "audio/room_probe.h"
#include "sim/world/brick_store.h"

namespace loam::audio::internal {

struct SkyColumn {
  bool roofed = false;     ///< something that stops sound lies above
  float transmission = 1;  ///< through foliage and canopies above (0 when roofed)
};

/// Looks straight up from voxel (x, y, z) (inclusive) to the top of the world.
SkyColumn skyAbove(const sim::BrickStore& store, const AcousticTable& table, int x, int y, int z,
                   const BrickOccupancy* occ = nullptr) noexcept;

/// True when the straight segment a -> b (metres) meets no voxel that stops sound
/// (the ray probe's own trace, so a line it calls clear a ray would pass).
bool clearLine(const sim::BrickStore& store, const AcousticTable& table, Vec3f a, Vec3f b) noexcept;

}  // namespace loam::audio::internal
