#include "sim/world/voxel_collision.h"

namespace loam::sim {

namespace {

constexpr std::int32_t kV = kUnitsPerVoxel;
constexpr std::int32_t floorVoxel(std::int32_t u) { return u >> kUnitShift; }
constexpr std::int32_t ceilVoxel(std::int32_t u) { return (u + kV - 1) >> kUnitShift; }

// True when a voxel of [x0,x1) x [y0,y1) x [z0,z1) (already clipped to the world)
// has flags[material] set. Bottom-up, each brick once: uniform bricks are one load,
// mixed bricks only their sub-box, longest axis innermost (as in motion.cpp).
bool anyInClipped(const BrickStore& world, const std::array<std::uint8_t, 256>& flags, std::int32_t x0, std::int32_t y0,
                  std::int32_t z0, std::int32_t x1, std::int32_t y1, std::int32_t z1) noexcept {
  const std::int32_t bx0 = x0 >> kBrickShift, bx1 = (x1 - 1) >> kBrickShift;
  const std::int32_t by0 = y0 >> kBrickShift, by1 = (y1 - 1) >> kBrickShift;
  const std::int32_t bz0 = z0 >> kBrickShift, bz1 = (z1 - 1) >> kBrickShift;
  for (std::int32_t by = by0; by <= by1; ++by) {
    for (std::int32_t bz = bz0; bz <= bz1; ++bz) {
      for (std::int32_t bx = bx0; bx <= bx1; ++bx) {
        const BrickView v = world.brick(BrickCoord{bx, by, bz});
        if (v.isUniform()) {
          if (flags[v.uniformMaterial()]) return true;
          continue;
        }
        const std::int32_t ox = bx * kBrickSize, oy = by * kBrickSize, oz = bz * kBrickSize;
        const int lo[3] = {(x0 > ox ? x0 : ox) - ox, (y0 > oy ? y0 : oy) - oy, (z0 > oz ? z0 : oz) - oz};
        const int hi[3] = {(x1 < ox + kBrickSize ? x1 : ox + kBrickSize) - ox,
                           (y1 < oy + kBrickSize ? y1 : oy + kBrickSize) - oy,
                           (z1 < oz + kBrickSize ? z1 : oz + kBrickSize) - oz};
        static constexpr int kStride[3] = {1, kBrickSize, kBrickSize * kBrickSize};
        int inner = 0;
        for (int a = 1; a < 3; ++a) {
          if (hi[a] - lo[a] > hi[inner] - lo[inner]) inner = a;
        }
        const int o1 = inner == 0 ? 1 : 0, o2 = inner == 2 ? 1 : 2;
        const int innerStride = kStride[inner];
        const int innerCount = hi[inner] - lo[inner];
        for (int u = lo[o2]; u < hi[o2]; ++u) {
          for (int w = lo[o1]; w < hi[o1]; ++w) {
            int i = u * kStride[o2] + w * kStride[o1] + lo[inner] * innerStride;
            for (int n = 0; n < innerCount; ++n, i += innerStride) {
              if (flags[v.at(i)]) return true;
            }
          }
        }
      }
    }
  }
  return false;
}

}  // namespace

VoxelBox voxelsOfBox(const UnitBox& b) noexcept {
  return {{floorVoxel(b.lo.x), floorVoxel(b.lo.y), floorVoxel(b.lo.z)},
          {ceilVoxel(b.hi.x), ceilVoxel(b.hi.y), ceilVoxel(b.hi.z)}};
}

bool regionCollides(const BrickStore& world, const MaterialLut& lut, const VoxelBox& r) noexcept {
  std::int32_t x0 = r.min.x, y0 = r.min.y, z0 = r.min.z, x1 = r.max.x, y1 = r.max.y, z1 = r.max.z;
  if (x0 >= x1 || y0 >= y1 || z0 >= z1) return false;
  const WorldBounds& b = world.bounds();
  if (x0 < b.minBrick.x * kBrickSize || z0 < b.minBrick.z * kBrickSize || y0 < b.minBrick.y * kBrickSize ||
      x1 > b.maxBrick.x * kBrickSize || z1 > b.maxBrick.z * kBrickSize) {
    return true;
  }
  const std::int32_t topY = b.maxBrick.y * kBrickSize;
  if (y1 > topY) y1 = topY;
  if (y0 >= y1) return false;
  return anyInClipped(world, lut.collides, x0, y0, z0, x1, y1, z1);
}

bool regionHasAny(const BrickStore& world, const std::array<std::uint8_t, 256>& flags, const VoxelBox& r) noexcept {
  const WorldBounds& b = world.bounds();
  auto clip = [](std::int32_t v, std::int32_t lo, std::int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); };
  const std::int32_t x0 = clip(r.min.x, b.minBrick.x * kBrickSize, b.maxBrick.x * kBrickSize);
  const std::int32_t x1 = clip(r.max.x, b.minBrick.x * kBrickSize, b.maxBrick.x * kBrickSize);
  const std::int32_t y0 = clip(r.min.y, b.minBrick.y * kBrickSize, b.maxBrick.y * kBrickSize);
  const std::int32_t y1 = clip(r.max.y, b.minBrick.y * kBrickSize, b.maxBrick.y * kBrickSize);
  const std::int32_t z0 = clip(r.min.z, b.minBrick.z * kBrickSize, b.maxBrick.z * kBrickSize);
  const std::int32_t z1 = clip(r.max.z, b.minBrick.z * kBrickSize, b.maxBrick.z * kBrickSize);
  if (x0 >= x1 || y0 >= y1 || z0 >= z1) return false;
  return anyInClipped(world, flags, x0, y0, z0, x1, y1, z1);
}

bool boxCollides(const BrickStore& world, const MaterialLut& lut, const UnitBox& box) noexcept {
  return regionCollides(world, lut, voxelsOfBox(box));
}

std::int32_t sweepBox(const BrickStore& world, const MaterialLut& lut, UnitBox& box, int axis, std::int32_t delta,
                      bool& blocked) noexcept {
  blocked = false;
  if (delta == 0) return 0;
  // Per-axis access without pointer arithmetic across members.
  auto comp = [](Vec3i& v, int a) -> std::int32_t& { return a == 0 ? v.x : (a == 1 ? v.y : v.z); };
  std::int32_t lo[3] = {box.lo.x, box.lo.y, box.lo.z};
  std::int32_t hi[3] = {box.hi.x, box.hi.y, box.hi.z};
  const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
  const std::int32_t c1lo = floorVoxel(lo[a1]), c1hi = ceilVoxel(hi[a1]);
  const std::int32_t c2lo = floorVoxel(lo[a2]), c2hi = ceilVoxel(hi[a2]);
  auto layerCollides = [&](std::int32_t c) {
    std::int32_t l[3], h[3];
    l[axis] = c;
    h[axis] = c + 1;
    l[a1] = c1lo;
    h[a1] = c1hi;
    l[a2] = c2lo;
    h[a2] = c2hi;
    return regionCollides(world, lut, VoxelBox{{l[0], l[1], l[2]}, {h[0], h[1], h[2]}});
  };
  std::int32_t moved = delta;
  if (delta > 0) {
    const std::int32_t lead = hi[axis];
    const std::int32_t target = lead + delta;
    for (std::int32_t c = ceilVoxel(lead); c <= floorVoxel(target - 1); ++c) {
      if (layerCollides(c)) {
        moved = c * kV - lead;
        blocked = true;
        break;
      }
    }
  } else {
    const std::int32_t lead = lo[axis];
    const std::int32_t target = lead + delta;
    for (std::int32_t c = floorVoxel(lead) - 1; c >= floorVoxel(target); --c) {
      if (layerCollides(c)) {
        moved = (c + 1) * kV - lead;
        blocked = true;
        break;
      }
    }
  }
  comp(box.lo, axis) += moved;
  comp(box.hi, axis) += moved;
  return moved;
}

}  // namespace loam::sim
