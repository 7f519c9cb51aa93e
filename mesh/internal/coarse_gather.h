// The coarse gather's steps, shared by gatherCoarseBrick (brick_mesher.cpp) and the
// mesh cache's workers, which read mixed bricks through their DecodeCache
// (mesh_cache.cpp): copy the fine voxels around a brick (gatherWide), lay the
// predicted edits over them (patchWide), then coarsen into a PaddedBrick
// (coarsenWide). Internal to loam_mesh.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include "mesh/brick_mesher.h"
#include "sim/world/brick_store.h"
#include "sim/world/voxel_overlay.h"

namespace loam::mesh::internal {

/// Fine voxels of brick-local -k..7+k on each axis around one brick (k = 2^level),
/// index (x + k) + n * ((y + k) + n * (z + k)) with n = 8 + 2k.
struct WideBrick {
  static constexpr int kMaxEdge = sim::kBrickSize + 2 * (1 << kMaxMeshLevel);  // 16
  sim::BrickCoord brick;
  int k = 1;
  int n = sim::kBrickSize + 2;
  sim::MaterialId voxels[kMaxEdge * kMaxEdge * kMaxEdge];
  int index(int lx, int ly, int lz) const { return (lx + k) + n * ((ly + k) + n * (lz + k)); }
};

/// The cells along one axis that the source brick at offset d (-1, 0, +1) covers:
/// brick-local [lo, hi) of the centre brick, read from the source's local lo - d * 8.
struct WideSpan {
  int lo, hi;
};
constexpr WideSpan wideSpan(int d, int k) {
  return d < 0    ? WideSpan{-k, 0}
         : d == 0 ? WideSpan{0, sim::kBrickSize}
                  : WideSpan{sim::kBrickSize, sim::kBrickSize + k};
}

/// Fills out with the fine voxels around b for level (1 or 2) from the 27 bricks
/// around it (k < 8, so no others). decoded(view, coord) gives a mixed brick's 512
/// voxels (voxelIndexInBrick order), valid until its next call. Air outside the
/// bounds (the floor is handled after coarsening). No allocation.
template <class Decoded>
void gatherWide(const sim::BrickStore& world, sim::BrickCoord b, int level, WideBrick& out, Decoded&& decoded) {
  out.brick = b;
  out.k = 1 << level;
  out.n = sim::kBrickSize + 2 * out.k;
  const int k = out.k;
  for (int dz = -1; dz <= 1; ++dz) {
    const WideSpan z = wideSpan(dz, k);
    for (int dy = -1; dy <= 1; ++dy) {
      const WideSpan y = wideSpan(dy, k);
      for (int dx = -1; dx <= 1; ++dx) {
        const WideSpan x = wideSpan(dx, k);
        const sim::BrickCoord c{b.x + dx, b.y + dy, b.z + dz};
        const sim::BrickView v = world.brick(c);
        const int w = x.hi - x.lo;
        if (v.isUniform()) {
          const sim::MaterialId m = v.uniformMaterial();
          for (int lz = z.lo; lz < z.hi; ++lz)
            for (int ly = y.lo; ly < y.hi; ++ly)
              std::memset(&out.voxels[static_cast<std::size_t>(out.index(x.lo, ly, lz))], m,
                          static_cast<std::size_t>(w));
          continue;
        }
        const sim::MaterialId* src = decoded(v, c);
        const int sx = x.lo - dx * sim::kBrickSize;
        for (int lz = z.lo; lz < z.hi; ++lz)
          for (int ly = y.lo; ly < y.hi; ++ly)
            std::memcpy(&out.voxels[static_cast<std::size_t>(out.index(x.lo, ly, lz))],
                        src + sim::voxelIndexInBrick(sx, ly - dy * sim::kBrickSize, lz - dz * sim::kBrickSize),
                        static_cast<std::size_t>(w));
      }
    }
  }
}

/// Calls put(x, y, z, material), brick-local, for each of overlay's voxels within
/// border voxels of brick b (border < 8): what a copy of b's surroundings (padded or
/// wide) lays over the world's voxels.
template <class Put>
void forOverlayAround(const sim::VoxelOverlay& overlay, sim::BrickCoord b, int border, Put&& put) {
  const int lo = -border, hi = sim::kBrickSize + border;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const sim::BrickCoord n{b.x + dx, b.y + dy, b.z + dz};
        for (const sim::VoxelOverlay::Voxel& v : overlay.voxelsOf(n)) {
          const sim::VoxelCoord w = sim::voxelOfBrick(n, v.index);
          const int x = w.x - b.x * sim::kBrickSize, y = w.y - b.y * sim::kBrickSize, z = w.z - b.z * sim::kBrickSize;
          if (x < lo || x >= hi || y < lo || y >= hi || z < lo || z >= hi) continue;
          put(x, y, z, v.material);
        }
      }
}

/// Writes the overlay's voxels that fall inside out's region over it.
void patchWide(const sim::VoxelOverlay& overlay, WideBrick& out);

/// A brick's own coarse blocks at a level (k = 2^level, which divides 8): the
/// coarseBlockMaterial of each of its (8/k)^3 world-aligned blocks, index
/// bx + m * (by + m * bz) with m = 8/k. Blocks never straddle bricks, so a brick's
/// blocks are a function of its voxels alone: the mesh cache's workers keep them per
/// brick instead of coarsening the 27 bricks around each brick again.
struct BrickBlocks {
  static constexpr int kMax = 64;  // level 1
  sim::MaterialId material[kMax];
};

/// The blocks of a brick from its 512 voxels (voxelIndexInBrick order).
void blocksOfBrick(const sim::MaterialId* voxels, int level, const MeshClassTable& classes, BrickBlocks& out);

/// The coarse padded brick b at level (1 or 2), as gatherCoarseBrick makes it without
/// an overlay, from the blocks of the 27 bricks around it: blocksOf(view, coord) gives
/// a mixed brick's blocks (valid until its next call); a uniform brick's are computed
/// here. No allocation.
template <class BlocksOf>
void gatherBlocks(const sim::BrickStore& world, sim::BrickCoord b, int level, const MeshClassTable& classes,
                  PaddedBrick& out, BlocksOf&& blocksOf);

/// Coarsens in into out (padded voxel -> coarseBlockMaterial of its block); at the
/// world's floor (atFloor) the bottom padded layer repeats the one above it.
void coarsenWide(const WideBrick& in, const MeshClassTable& classes, bool atFloor, PaddedBrick& out);

/// The coarse blocks around a brick, -1..8/k on each axis in blocks (index
/// (bx + 1) + e * ((by + 1) + e * (bz + 1)), e = 8/k + 2), written out to a PaddedBrick
/// (each padded voxel takes its block's material); the floor as coarsenWide.
void expandBlocks(const sim::MaterialId* blocks, int k, bool atFloor, PaddedBrick& out);

template <class BlocksOf>
void gatherBlocks(const sim::BrickStore& world, sim::BrickCoord b, int level, const MeshClassTable& classes,
                  PaddedBrick& out, BlocksOf&& blocksOf) {
  const int k = 1 << level, m = sim::kBrickSize / k, e = m + 2;
  sim::MaterialId around[6 * 6 * 6];  // e^3 blocks, e at most 6
  // The centre's block indices [lo, hi) that the brick at offset d holds.
  auto span = [m](int d) { return d < 0 ? WideSpan{-1, 0} : d == 0 ? WideSpan{0, m} : WideSpan{m, m + 1}; };
  for (int dz = -1; dz <= 1; ++dz) {
    const WideSpan z = span(dz);
    for (int dy = -1; dy <= 1; ++dy) {
      const WideSpan y = span(dy);
      for (int dx = -1; dx <= 1; ++dx) {
        const WideSpan x = span(dx);
        const sim::BrickCoord c{b.x + dx, b.y + dy, b.z + dz};
        const sim::BrickView v = world.brick(c);
        const sim::MaterialId* own = nullptr;
        sim::MaterialId uniform = sim::kAir;
        if (v.isUniform()) {
          uniform = classes[v.uniformMaterial()] == MeshClass::Empty ? sim::kAir : v.uniformMaterial();
        } else {
          own = blocksOf(v, c).material;
        }
        for (int bz = z.lo; bz < z.hi; ++bz)
          for (int by = y.lo; by < y.hi; ++by)
            for (int bx = x.lo; bx < x.hi; ++bx) {
              const int sx = bx - dx * m, sy = by - dy * m, sz = bz - dz * m;
              around[(bx + 1) + e * ((by + 1) + e * (bz + 1))] = own ? own[sx + m * (sy + m * sz)] : uniform;
            }
      }
    }
  }
  out.brick = b;
  expandBlocks(around, k, b.y == world.bounds().minBrick.y, out);
}

}  // namespace loam::mesh::internal
