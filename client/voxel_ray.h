// The targeted voxel: a grid walk (sim/world/grid_walk.h) from the eye through the
// voxel grid, returning the first voxel a tool can act on and the face the ray entered
// it through. Client-side only (doubles are fine: it picks a target, the server
// validates every command).
#pragma once

#include <array>
#include <optional>

#include "sim/world/brick_store.h"
#include "sim/step/commands.h"
#include "sim/world/material_lut.h"
#include "sim/world/voxel_overlay.h"

namespace loam::client {

struct RayHit {
  sim::VoxelCoord voxel;    ///< the voxel hit
  sim::Face face = sim::Face::PosY;  ///< face entered through (outward normal toward the eye)
  sim::VoxelCoord before;   ///< the voxel in front of that face (where the ray came from)
  double distance = 0;      ///< metres from origin to the entry point
};

/// Outward normal of a face, in voxels.
sim::VoxelCoord faceNormal(sim::Face face) noexcept;

/// Walks from origin (metres) along direction (any length > 0) up to maxMetres and
/// returns the first voxel that lut marks diggable (solid or foliage, not liquid,
/// not air), or nullopt. A start inside such a voxel hits it with face toward
/// -direction's dominant axis. The world is seen through overlay when there is one
/// (the predicted edits: the player aims at what is shown). Cost: O(voxels crossed)
/// (100 per 5 m), no allocation.
std::optional<RayHit> castVoxelRay(const sim::BrickStore& world, const sim::MaterialLut& lut,
                                   const std::array<double, 3>& origin, const std::array<double, 3>& direction,
                                   double maxMetres, const sim::VoxelOverlay* overlay = nullptr) noexcept;

/// Unit view direction for yaw / pitch in radians (yaw 0 north (-z), clockwise seen
/// from above; pitch + up).
std::array<double, 3> viewDirection(double yaw, double pitch) noexcept;

}  // namespace loam::client
