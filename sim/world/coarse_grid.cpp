#include "sim/world/coarse_grid.h"

#include "sim/world/brick_store.h"
#include "sim/world/material.h"

namespace loam::sim {

CoarseLut defaultCoarseLut() noexcept {
  CoarseLut lut;
  for (int m = 1; m < 256; ++m) {
    lut.solid[static_cast<std::size_t>(m)] = 1;
    lut.opacity[static_cast<std::size_t>(m)] = 255;
  }
  return lut;
}

CoarseLut makeCoarseLut(const MaterialTable& materials) noexcept {
  CoarseLut lut = defaultCoarseLut();
  for (std::size_t i = 0; i < materials.size(); ++i) {
    const Material& m = materials[static_cast<MaterialId>(i)];
    lut.solid[i] = m.solid ? 1 : 0;
    // Loaded values are in [0, 1]; plain float arithmetic is exact enough and the
    // same on every SSE2/IEEE target.
    lut.opacity[i] = static_cast<std::uint8_t>(m.acousticOpacity * 255.0f + 0.5f);
  }
  return lut;
}

CoarseSample coarseSample(const BrickStore& store, BrickCoord b) noexcept { return store.coarse(b); }

CoarseSample coarseSampleFromVoxels(const BrickStore& store, const CoarseLut& lut, BrickCoord b) noexcept {
  MaterialId v[kBrickVoxels];
  store.readBrick(b, v);
  std::uint32_t solid = 0, opacity = 0;
  for (int i = 0; i < kBrickVoxels; ++i) {
    solid += lut.solid[v[i]];
    opacity += lut.opacity[v[i]];
  }
  return coarseFromSums(solid, opacity);
}

std::vector<CoarseMismatch> verifyCoarse(const BrickStore& store) {
  std::vector<CoarseMismatch> out;
  const CoarseLut& lut = store.coarseLut();
  for (int i : store.canonicalChunks()) {
    ChunkCoord cc = store.chunkCoord(i);
    // A collapsed chunk has one sample for all its bricks: check its first brick.
    int bricks = store.chunkIsCollapsed(i) ? 1 : kChunkBricks * kChunkBricks * kChunkBricks;
    for (int local = 0; local < bricks; ++local) {
      BrickCoord b{cc.x * kChunkBricks + (local & 15), cc.y * kChunkBricks + ((local >> 4) & 15),
                   cc.z * kChunkBricks + (local >> 8)};
      CoarseSample inc = store.coarse(b);
      CoarseSample ref = coarseSampleFromVoxels(store, lut, b);
      if (!(inc == ref)) out.push_back({b, inc, ref});
    }
  }
  return out;
}

}  // namespace loam::sim
