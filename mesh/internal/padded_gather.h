// The walk shared by gatherPaddedBrick (brick_mesher.cpp) and the mesh cache's
// gather through its DecodeCache (mesh_cache.cpp): they differ only in how a mixed
// brick is read, so that is the one thing passed in. Internal to loam_mesh.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include "mesh/brick_mesher.h"
#include "sim/world/brick_store.h"

namespace loam::mesh::internal {

/// Index into PaddedBrick::voxels of padded coordinates (0..9 each).
constexpr int paddedIndex(int px, int py, int pz) { return px + kPadded * (py + kPadded * pz); }

/// The padded cells [lo, hi) along one axis that the source brick at offset d (-1, 0,
/// +1) covers: -1 gives padded 0 (its local 7), 0 gives 1..8, +1 gives 9 (local 0).
struct PaddedSpan {
  int lo, hi;
};
constexpr PaddedSpan paddedSpan(int d) { return d < 0 ? PaddedSpan{0, 1} : d == 0 ? PaddedSpan{1, 9} : PaddedSpan{9, 10}; }

/// Fills out from the 27 bricks around b. Uniform bricks are written here; each
/// mixed one goes to copyMixed(view, coord, dx, dy, dz, x, y, z), which must fill
/// the padded cells x.lo..x.hi, y.lo..y.hi, z.lo..z.hi from it. Below the world's
/// floor the bottom layer repeats (the underside is never seen, and air there would
/// give every bottom brick a face). No allocation.
template <class CopyMixed>
void gatherPadded(const sim::BrickStore& world, sim::BrickCoord b, PaddedBrick& out, CopyMixed&& copyMixed) {
  out.brick = b;
  for (int dz = -1; dz <= 1; ++dz) {
    const PaddedSpan z = paddedSpan(dz);
    for (int dy = -1; dy <= 1; ++dy) {
      const PaddedSpan y = paddedSpan(dy);
      for (int dx = -1; dx <= 1; ++dx) {
        const PaddedSpan x = paddedSpan(dx);
        const sim::BrickCoord c{b.x + dx, b.y + dy, b.z + dz};
        sim::BrickView v = world.brick(c);
        if (!v.isUniform()) {
          copyMixed(v, c, dx, dy, dz, x, y, z);
          continue;
        }
        const sim::MaterialId m = v.uniformMaterial();
        const std::uint64_t pattern = 0x0101010101010101ull * m;  // 8-byte stores, no memset calls
        for (int pz = z.lo; pz < z.hi; ++pz) {
          for (int py = y.lo; py < y.hi; ++py) {
            sim::MaterialId* dst = &out.voxels[static_cast<std::size_t>(paddedIndex(x.lo, py, pz))];
            if (x.hi - x.lo == 8) {
              std::memcpy(dst, &pattern, 8);
            } else {
              *dst = m;
            }
          }
        }
      }
    }
  }
  if (b.y == world.bounds().minBrick.y) {
    for (int pz = 0; pz < kPadded; ++pz)
      for (int px = 0; px < kPadded; ++px)
        out.voxels[static_cast<std::size_t>(paddedIndex(px, 0, pz))] =
            out.voxels[static_cast<std::size_t>(paddedIndex(px, 1, pz))];
  }
}

}  // namespace loam::mesh::internal
