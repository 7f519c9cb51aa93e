#include "sim/world/voxel_collision.h"

namespace loam::sim {

namespace {

constexpr std::int32_t kV = kUnitsPerVoxel;
constexpr std::int32_t floorVoxel(std::int32_t u) { return u >> kUnitShift; }
constexpr std::int32_t ceilVoxel(std::int32_t u) { return (u + kV - 1) >> kUnitShift; }

// Bricks straight from the store, no masks (for flag tables other than collision).
struct StoreBricks {
  const BrickStore& world;
  BrickView brick(std::int32_t bx, std::int32_t by, std::int32_t bz) const noexcept {
    return world.brick(BrickCoord{bx, by, bz});
  }
  const CollisionMask* mask(std::int32_t, std::int32_t, std::int32_t) const noexcept { return nullptr; }
};

// True when a voxel of [x0,x1) x [y0,y1) x [z0,z1) (already clipped to the world)
// has flags[material] set. Bricks come from `bricks` (a CollisionReader, or
// StoreBricks); a mask it offers must be the mask of `flags`. Reads each brick once:
// uniform bricks are one table load, mixed bricks their palette, then (when it holds
// a flagged material) only their sub-box.
template <class Bricks>
bool anyInClipped(Bricks& bricks, const std::array<std::uint8_t, 256>& flags, std::int32_t x0, std::int32_t y0,
                  std::int32_t z0, std::int32_t x1, std::int32_t y1, std::int32_t z1) noexcept {
  const std::int32_t bx0 = x0 >> kBrickShift, bx1 = (x1 - 1) >> kBrickShift;
  const std::int32_t by0 = y0 >> kBrickShift, by1 = (y1 - 1) >> kBrickShift;
  const std::int32_t bz0 = z0 >> kBrickShift, bz1 = (z1 - 1) >> kBrickShift;
  // Bottom-up: the ground is where hits are likely, so most blocked queries stop early.
  for (std::int32_t by = by0; by <= by1; ++by) {
    for (std::int32_t bz = bz0; bz <= bz1; ++bz) {
      for (std::int32_t bx = bx0; bx <= bx1; ++bx) {
        const BrickView v = bricks.brick(bx, by, bz);
        if (!v.mayHoldAny(flags)) continue;  // the palette has none of the materials
        if (v.isUniform()) return true;      // exact for a uniform brick
        const std::int32_t ox = bx * kBrickSize, oy = by * kBrickSize, oz = bz * kBrickSize;
        const int lo[3] = {(x0 > ox ? x0 : ox) - ox, (y0 > oy ? y0 : oy) - oy, (z0 > oz ? z0 : oz) - oz};
        const int hi[3] = {(x1 < ox + kBrickSize ? x1 : ox + kBrickSize) - ox,
                           (y1 < oy + kBrickSize ? y1 : oy + kBrickSize) - oy,
                           (z1 < oz + kBrickSize ? z1 : oz + kBrickSize) - oz};
        if (const CollisionMask* m = bricks.mask(bx, by, bz)) {
          // Rows x in [lo.x, hi.x) for every y in [lo.y, hi.y), then the z slices.
          const std::uint64_t xbits = ((1u << (hi[0] - lo[0])) - 1u) << lo[0];
          std::uint64_t rows = 0;
          for (int y = lo[1]; y < hi[1]; ++y) rows |= xbits << (8 * y);
          std::uint64_t any = 0;
          for (int z = lo[2]; z < hi[2]; ++z) any |= m->slice[z] & rows;
          if (any) return true;
          continue;
        }
        // Sweeps test one-voxel-thick layers: put the longest axis innermost so the
        // inner loop runs (and predicts) well, whichever axis the layer is across.
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

bool regionCollides(CollisionReader& reader, const VoxelBox& r) noexcept {
  std::int32_t x0 = r.min.x, y0 = r.min.y, z0 = r.min.z, x1 = r.max.x, y1 = r.max.y, z1 = r.max.z;
  if (x0 >= x1 || y0 >= y1 || z0 >= z1) return false;
  const WorldBounds& b = reader.world().bounds();
  if (x0 < b.minBrick.x * kBrickSize || z0 < b.minBrick.z * kBrickSize || y0 < b.minBrick.y * kBrickSize ||
      x1 > b.maxBrick.x * kBrickSize || z1 > b.maxBrick.z * kBrickSize) {
    return true;
  }
  const std::int32_t topY = b.maxBrick.y * kBrickSize;
  if (y1 > topY) y1 = topY;
  if (y0 >= y1) return false;
  return anyInClipped(reader, reader.lut().collides, x0, y0, z0, x1, y1, z1);
}

bool regionCollides(const BrickStore& world, const MaterialLut& lut, const VoxelBox& r) noexcept {
  CollisionReader reader(world, lut);
  return regionCollides(reader, r);
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
  StoreBricks bricks{world};
  return anyInClipped(bricks, flags, x0, y0, z0, x1, y1, z1);
}

bool boxCollides(const BrickStore& world, const MaterialLut& lut, const UnitBox& box) noexcept {
  return regionCollides(world, lut, voxelsOfBox(box));
}

std::int32_t sweepBox(CollisionReader& reader, UnitBox& box, int axis, std::int32_t delta, bool& blocked) noexcept {
  blocked = false;
  if (delta == 0) return 0;
  // Per-axis access without pointer arithmetic across members.
  auto comp = [](Vec3i& v, int a) -> std::int32_t& { return a == 0 ? v.x : (a == 1 ? v.y : v.z); };
  const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
  const std::int32_t c1lo = floorVoxel(comp(box.lo, a1)), c1hi = ceilVoxel(comp(box.hi, a1));
  const std::int32_t c2lo = floorVoxel(comp(box.lo, a2)), c2hi = ceilVoxel(comp(box.hi, a2));
  auto slabCollides = [&](std::int32_t a, std::int32_t b) {  // layers [a, b] across the axis
    std::int32_t lo[3], hi[3];
    lo[axis] = a;
    hi[axis] = b + 1;
    lo[a1] = c1lo;
    hi[a1] = c1hi;
    lo[a2] = c2lo;
    hi[a2] = c2hi;
    return regionCollides(reader, VoxelBox{{lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}});
  };
  // The layers the leading face enters, nearest first: [first, last] moving up the
  // axis, [last, first] moving down. Test them as one slab first (the common, free
  // case reads each brick once), then layer by layer to find the first blocker.
  std::int32_t moved = delta;
  const std::int32_t lead = delta > 0 ? comp(box.hi, axis) : comp(box.lo, axis);
  const std::int32_t target = lead + delta;
  const std::int32_t first = delta > 0 ? ceilVoxel(lead) : floorVoxel(lead) - 1;
  const std::int32_t last = delta > 0 ? floorVoxel(target - 1) : floorVoxel(target);
  const std::int32_t layers = delta > 0 ? last - first + 1 : first - last + 1;
  if (layers > 0) {  // (otherwise the face stays inside its voxel layer: nothing new to test)
    const bool anyHit = layers == 1 ? slabCollides(first, first)
                                    : (delta > 0 ? slabCollides(first, last) : slabCollides(last, first));
    if (anyHit) {
      const int step = delta > 0 ? 1 : -1;
      for (std::int32_t c = first, n = 0; n < layers; c += step, ++n) {
        if (layers == 1 || slabCollides(c, c)) {
          moved = delta > 0 ? c * kV - lead : (c + 1) * kV - lead;
          blocked = true;
          break;
        }
      }
    }
  }
  comp(box.lo, axis) += moved;
  comp(box.hi, axis) += moved;
  return moved;
}

std::int32_t sweepBox(const BrickStore& world, const MaterialLut& lut, UnitBox& box, int axis, std::int32_t delta,
                      bool& blocked) noexcept {
  CollisionReader reader(world, lut);
  return sweepBox(reader, box, axis, delta, blocked);
}

}  // namespace loam::sim
