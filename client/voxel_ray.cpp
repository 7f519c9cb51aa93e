#include "client/voxel_ray.h"

#include <cmath>
#include <limits>

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
                                   double maxMetres) noexcept {
  const double len = std::sqrt(direction[0] * direction[0] + direction[1] * direction[1] + direction[2] * direction[2]);
  if (!(len > 0) || !(maxMetres > 0)) return std::nullopt;
  const double k = static_cast<double>(sim::kVoxelsPerMetre);
  double p[3], d[3];
  int v[3], step[3];
  double tMax[3], tDelta[3];
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (int a = 0; a < 3; ++a) {
    p[a] = origin[static_cast<std::size_t>(a)] * k;  // voxel units
    d[a] = direction[static_cast<std::size_t>(a)] / len;
    v[a] = static_cast<int>(std::floor(p[a]));
    if (d[a] > 0) {
      step[a] = 1;
      tMax[a] = (v[a] + 1 - p[a]) / d[a];
      tDelta[a] = 1 / d[a];
    } else if (d[a] < 0) {
      step[a] = -1;
      tMax[a] = (p[a] - v[a]) / -d[a];
      tDelta[a] = -1 / d[a];
    } else {
      step[a] = 0;
      tMax[a] = kInf;
      tDelta[a] = kInf;
    }
  }
  auto solid = [&](const int* c) { return lut.diggable[world.get(c[0], c[1], c[2])] != 0; };
  auto coord = [](const int* c) { return sim::VoxelCoord{c[0], c[1], c[2]}; };

  const double maxT = maxMetres * k;
  if (solid(v)) {
    // Inside a voxel already: face it from the side the ray leaves against.
    int axis = 0;
    for (int a = 1; a < 3; ++a)
      if (std::abs(d[a]) > std::abs(d[axis])) axis = a;
    RayHit hit;
    hit.voxel = coord(v);
    hit.face = entryFace(axis, step[axis] != 0 ? step[axis] : 1);
    const sim::VoxelCoord n = faceNormal(hit.face);
    hit.before = {v[0] + n.x, v[1] + n.y, v[2] + n.z};
    hit.distance = 0;
    return hit;
  }
  for (;;) {
    int axis = 0;
    if (tMax[1] < tMax[axis]) axis = 1;
    if (tMax[2] < tMax[axis]) axis = 2;
    const double t = tMax[axis];
    if (t > maxT) return std::nullopt;
    const sim::VoxelCoord previous = coord(v);
    v[axis] += step[axis];
    tMax[axis] += tDelta[axis];
    if (solid(v)) {
      RayHit hit;
      hit.voxel = coord(v);
      hit.face = entryFace(axis, step[axis]);
      hit.before = previous;
      hit.distance = t / k;
      return hit;
    }
  }
}

}  // namespace loam::client
