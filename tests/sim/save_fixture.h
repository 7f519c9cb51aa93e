// The small generated world the save and world-database tests save and load: 512 x 256
// x 512 voxels, stone at the bottom, a layer of low hills, marked generated.
#pragma once

#include "sim/save/save.h"
#include "sim/world/brick_store.h"

namespace loam::test {

inline const sim::WorldBounds kSaveBounds{{-32, 0, -32}, {32, 32, 32}};
inline const sim::SaveIdentity kSaveId{0x1234abcdULL, 7, 3};

/// The world: ground, a layer of hills, marked generated.
inline sim::BrickStore generateSaveWorld() {
  sim::BrickStore s(kSaveBounds);
  for (int cz = -2; cz < 2; ++cz)
    for (int cx = -2; cx < 2; ++cx) s.fillChunk({cx, 0, cz}, 5);
  sim::MaterialId buf[512];
  for (int bz = -32; bz < 32; ++bz)
    for (int bx = -32; bx < 32; ++bx) {
      for (int i = 0; i < 512; ++i) {
        int x = bx * 8 + (i & 7), y = 128 + ((i >> 3) & 7), z = bz * 8 + (i >> 6);
        int h = 128 + ((x * 3 + z * 5) & 7);
        buf[i] = y < h ? 2 : y == h ? 1 : sim::kAir;
      }
      s.writeBrick({bx, 16, bz}, buf);
    }
  s.markGenerated();
  return s;
}

}  // namespace loam::test
