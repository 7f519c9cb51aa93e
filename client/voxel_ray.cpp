#include "client/voxel_ray.h"

#include <cmath>

#include "sim/world/grid_walk.h"

namespace loam::client {

sim::VoxelCoord faceNormal(sim::Face face) noexcept {
  switch (face) {
    case sim::Face::NegX: return {-1, 0, 0};
    case sim::Face::PosX: return {1, 0, 0};
    case sim::Face::NegY: return {0, -1, 0};
    case sim::Face::PosY: return {0, 1, 0};
    case sim::Face::NegZ: return {0, 0, -1};
    case sim::Face::PosZ: return {0, 0, 1};
  }
  return {0, 1, 0};
}

std::array<double, 3> viewDirection(double yaw, double pitch) noexcept {
  const double c = std::cos(pitch);
  return {std::sin(yaw) * c, std::sin(pitch), -std::cos(yaw) * c};
}

namespace {

// Doubles, ties to the lower axis, boundaries stepped: the arithmetic this ray was
// written with, which its tests pin.
using VoxelWalk = sim::GridWalk<double, sim::GridTies::LowAxis, sim::GridBoundaries::SteppedFromBelow>;

// The face a ray crossing along `axis` in direction `step` enters through.
sim::Face entryFace(int axis, int step) noexcept {
  // Moving +x enters the voxel through its -x face, and so on.
  switch (axis) {
    case 0: return step > 0 ? sim::Face::NegX : sim::Face::PosX;
    case 1: return step > 0 ? sim::Face::NegY : sim::Face::PosY;
    default: return step > 0 ? sim::Face::NegZ : sim::Face::PosZ;
  }
}

}  // namespace

std::optional<RayHit> castVoxelRay(const sim::BrickStore& world, const sim::MaterialLut& lut,
                                   const std::array<double, 3>& origin, const std::array<double, 3>& direction,
                                   double maxMetres, const sim::VoxelOverlay* overlay) noexcept {
  const double len = std::sqrt(direction[0] * direction[0] + direction[1] * direction[1] + direction[2] * direction[2]);
  if (!(len > 0) || !(maxMetres > 0)) return std::nullopt;
  const double k = static_cast<double>(sim::kVoxelsPerMetre);
  double p[3], d[3];
  for (int a = 0; a < 3; ++a) {
    p[a] = origin[static_cast<std::size_t>(a)] * k;  // voxel units
    d[a] = direction[static_cast<std::size_t>(a)] / len;
  }
  VoxelWalk walk(p, d, 0.0, 1);
  auto coord = [](const std::array<int, 3>& c) { return sim::VoxelCoord{c[0], c[1], c[2]}; };
  auto solid = [&](const std::array<int, 3>& c) {
    return lut.diggable[overlay ? overlay->get(world, coord(c)) : world.get(c[0], c[1], c[2])] != 0;
  };

  const double maxT = maxMetres * k;
  if (solid(walk.cube())) {
    // Inside a voxel already: face it from the side the ray leaves against.
    int axis = 0;
    for (int a = 1; a < 3; ++a)
      if (std::abs(d[a]) > std::abs(d[axis])) axis = a;
    const int step = walk.steps()[static_cast<std::size_t>(axis)];
    RayHit hit;
    hit.voxel = coord(walk.cube());
    hit.face = entryFace(axis, step != 0 ? step : 1);
    const sim::VoxelCoord n = faceNormal(hit.face);
    hit.before = {hit.voxel.x + n.x, hit.voxel.y + n.y, hit.voxel.z + n.z};
    hit.distance = 0;
    return hit;
  }
  for (;;) {
    const sim::VoxelCoord previous = coord(walk.cube());
    const sim::GridCrossing<double> crossing = walk.advance();
    if (crossing.t > maxT) return std::nullopt;
    if (solid(walk.cube())) {
      RayHit hit;
      hit.voxel = coord(walk.cube());
      hit.face = entryFace(crossing.axis, crossing.step);
      hit.before = previous;
      hit.distance = crossing.t / k;
      return hit;
    }
  }
}

}  // namespace loam::client
