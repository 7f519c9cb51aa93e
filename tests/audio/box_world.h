// fillBox: fills a voxel box of a hand-built test world, whole bricks where the box
// covers them and voxel by voxel at its edges (tests of rays and propagation).
#pragma once
#include <algorithm>

#include "sim/world/brick_store.h"

namespace loam::test {

/// Fills voxels [mn, mx) with m.
inline void fillBox(sim::BrickStore& s, sim::VoxelCoord mn, sim::VoxelCoord mx, sim::MaterialId m) {
  for (int bz = mn.z >> 3; bz <= (mx.z - 1) >> 3; ++bz)
    for (int by = mn.y >> 3; by <= (mx.y - 1) >> 3; ++by)
      for (int bx = mn.x >> 3; bx <= (mx.x - 1) >> 3; ++bx) {
        int x0 = bx * 8, y0 = by * 8, z0 = bz * 8;
        if (x0 >= mn.x && y0 >= mn.y && z0 >= mn.z && x0 + 8 <= mx.x && y0 + 8 <= mx.y && z0 + 8 <= mx.z) {
          s.fillBrick({bx, by, bz}, m);
          continue;
        }
        for (int z = std::max(z0, mn.z); z < std::min(z0 + 8, mx.z); ++z)
          for (int y = std::max(y0, mn.y); y < std::min(y0 + 8, mx.y); ++y)
            for (int x = std::max(x0, mn.x); x < std::min(x0 + 8, mx.x); ++x) s.set(x, y, z, m);
      }
}

}  // namespace loam::test
