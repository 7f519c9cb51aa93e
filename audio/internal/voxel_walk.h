// Segment walker over a const BrickStore: which materials the straight segment a -> b
// crosses, and for how long. Three nested grid walks (sim/world/grid_walk.h: chunks,
// bricks, voxels): chunks stored as one material (air above ground, rock below) are
// crossed whole, uniform bricks are crossed whole, and only mixed bricks are walked
// voxel by voxel.
// The visitor gets consecutive runs of one material, (MaterialId, metres), in order
// from a to b; the run lengths add up to |b - a| (air outside the world's bounds is
// reported as air). Header-only, no allocation, no state: any thread may walk while
// nobody writes the store.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

#include "audio/engine.h"  // Vec3f
#include "sim/world/brick_store.h"
#include "sim/world/grid_walk.h"

namespace loam::audio::internal {

/// One grid level of the walk (chunks, bricks or voxels). Boundaries are computed
/// from the cell each step, never accumulated, so the chunk, brick and voxel levels
/// agree exactly on the t of a shared boundary.
using WalkGrid = sim::GridWalk<float, sim::GridTies::HighAxis, sim::GridBoundaries::FromCell>;

/// Merges pieces into runs of one material before handing them to the visitor.
template <class Visit>
struct RunJoiner {
  Visit& visit;
  sim::MaterialId material = sim::kAir;
  float length = 0;  // voxel units
  bool stopped = false;

  /// Adds a piece of len voxels; false once the visitor asked to stop.
  bool add(sim::MaterialId m, float len) {
    if (!(len > 0)) return !stopped;  // zero-length slivers must not split a run
    if (m == material || length == 0) {
      material = m;
      length += len;
      return true;
    }
    flush();
    material = m;
    length = len;
    return !stopped;
  }
  void flush() {
    if (stopped || length <= 0) return;
    const float metres = length / static_cast<float>(sim::kVoxelsPerMetre);
    if constexpr (std::is_same_v<std::invoke_result_t<Visit&, sim::MaterialId, float>, bool>) {
      stopped = !visit(material, metres);
    } else {
      visit(material, metres);
    }
    length = 0;
  }
};

/// Walks a -> b (metres) and calls visit(MaterialId, float metres) once per run of
/// one material, in order. A visitor returning bool stops the walk by returning
/// false. Cost: O(chunks + bricks of expanded chunks + voxels of mixed bricks)
/// crossed; about 0.1 us per voxel of mixed bricks. No allocation. Thread: any, while
/// nobody writes the store.
template <class Visit>
void walkSegment(const sim::BrickStore& store, Vec3f a, Vec3f b, Visit&& visit) noexcept {
  constexpr float kVpm = static_cast<float>(sim::kVoxelsPerMetre);
  const float o[3] = {a.x * kVpm, a.y * kVpm, a.z * kVpm};
  float d[3] = {(b.x - a.x) * kVpm, (b.y - a.y) * kVpm, (b.z - a.z) * kVpm};
  const float len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  if (!(len > 0) || !std::isfinite(len)) return;  // nothing to walk (or nonsense in)
  float invD[3];
  for (int i = 0; i < 3; ++i) {
    d[i] /= len;
    invD[i] = d[i] != 0 ? 1.0f / d[i] : 0.0f;
  }
  RunJoiner<std::remove_reference_t<Visit>> runs{visit};

  // Clip to the bounds: [tEnter, tExit) inside, air on either side.
  const sim::WorldBounds& wb = store.bounds();
  const int bLo[3] = {wb.minBrick.x, wb.minBrick.y, wb.minBrick.z};
  const int bHi[3] = {wb.maxBrick.x, wb.maxBrick.y, wb.maxBrick.z};  // exclusive
  float tEnter = 0, tExit = len;
  for (int i = 0; i < 3 && tEnter < tExit; ++i) {
    const float mn = static_cast<float>(bLo[i] * sim::kBrickSize), mx = static_cast<float>(bHi[i] * sim::kBrickSize);
    if (d[i] == 0) {
      if (o[i] < mn || o[i] >= mx) tExit = tEnter;
      continue;
    }
    float ta = (mn - o[i]) * invD[i], tb = (mx - o[i]) * invD[i];
    if (ta > tb) std::swap(ta, tb);
    tEnter = std::max(tEnter, ta);
    tExit = std::min(tExit, tb);
  }
  if (!(tEnter < tExit)) {
    runs.add(sim::kAir, len);
    runs.flush();
    return;
  }
  if (!runs.add(sim::kAir, tEnter)) return;

  constexpr int kChunkVoxels = sim::kBrickSize * sim::kChunkBricks;
  const int cLo[3] = {bLo[0] >> sim::kChunkShift, bLo[1] >> sim::kChunkShift, bLo[2] >> sim::kChunkShift};
  const int cHi[3] = {(bHi[0] >> sim::kChunkShift) - 1, (bHi[1] >> sim::kChunkShift) - 1,
                      (bHi[2] >> sim::kChunkShift) - 1};
  WalkGrid cd(o, d, tEnter, kChunkVoxels, cLo, cHi);
  float t0 = tEnter;
  for (;;) {
    const float t1 = std::min(cd.exitT(), tExit);
    const int ci = store.chunkIndex(sim::ChunkCoord{cd.cube()[0], cd.cube()[1], cd.cube()[2]});
    if (ci < 0 || store.chunkIsCollapsed(ci)) {
      // One material for the whole chunk (O(1) for a collapsed chunk).
      if (!runs.add(ci < 0 ? sim::kAir : store.chunkUniform(ci).value_or(sim::kAir), t1 - t0)) return;
    } else {
      const int kLo[3] = {cd.cube()[0] * sim::kChunkBricks, cd.cube()[1] * sim::kChunkBricks,
                          cd.cube()[2] * sim::kChunkBricks};
      const int kHi[3] = {kLo[0] + sim::kChunkBricks - 1, kLo[1] + sim::kChunkBricks - 1,
                          kLo[2] + sim::kChunkBricks - 1};
      WalkGrid bd(o, d, t0, sim::kBrickSize, kLo, kHi);
      float bt0 = t0;
      for (;;) {
        const float bt1 = std::min(bd.exitT(), t1);
        const sim::BrickView v =
            store.brickInChunk(ci, sim::brickIndexInChunk(sim::BrickCoord{bd.cube()[0], bd.cube()[1], bd.cube()[2]}));
        if (v.isUniform()) {
          if (!runs.add(v.uniformMaterial(), bt1 - bt0)) return;
        } else {
          const int vLo[3] = {bd.cube()[0] * sim::kBrickSize, bd.cube()[1] * sim::kBrickSize,
                              bd.cube()[2] * sim::kBrickSize};
          const int vHi[3] = {vLo[0] + sim::kBrickSize - 1, vLo[1] + sim::kBrickSize - 1, vLo[2] + sim::kBrickSize - 1};
          WalkGrid vd(o, d, bt0, 1, vLo, vHi);
          float vt0 = bt0;
          for (;;) {
            const float vt1 = std::min(vd.exitT(), bt1);
            const std::array<int, 3>& c = vd.cube();
            if (!runs.add(v.get(c[0] - vLo[0], c[1] - vLo[1], c[2] - vLo[2]), vt1 - vt0)) return;
            if (vt1 >= bt1) break;
            vd.advance();
            if (!vd.inside()) break;
            vt0 = vt1;
          }
        }
        if (bt1 >= t1) break;
        bd.advance();
        if (!bd.inside()) break;
        bt0 = bt1;
      }
    }
    if (t1 >= tExit) break;
    cd.advance();
    if (!cd.inside()) break;
    t0 = t1;
  }
  if (!runs.add(sim::kAir, len - tExit)) return;
  runs.flush();
}

}  // namespace loam::audio::internal
