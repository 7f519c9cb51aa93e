// Surface changes (sim/world/surface_change.h).
#include "sim/world/surface_change.h"

#include <array>
#include <climits>

#include "sim/world/brick_store.h"
#include "sim/world/column_source.h"
#include "sim/world/material_lut.h"

namespace loam::sim {
namespace {

/// True when the chunk column may hold bricks that differ from their generated content.
bool mayHoldChanges(const BrickStore& world, ChunkColumn column) {
  if (world.columnPresent(column)) return world.columnModified(column);
  const StoredColumns* stored = world.storedColumns();
  return stored != nullptr && stored->holds(column);
}

/// The tops of the 64 columns of brick column (bx, bz) (voxel y, INT32_MIN while
/// not found): now and when generated, each with and without tree parts.
struct BrickColumnTops {
  enum Kind { kNow = 0, kGenerated = 1, kNowGround = 2, kGeneratedGround = 3 };
  std::array<std::array<std::int32_t, kBrickSize * kBrickSize>, 4> top{};
  std::array<std::array<MaterialId, kBrickSize * kBrickSize>, 4> material{};
};

void readTops(const BrickStore& world, const MaterialLut& lut, const MaterialMask& treeParts, std::int32_t bx,
              std::int32_t bz, BrickColumnTops& tops) {
  for (auto& t : tops.top) t.fill(INT32_MIN);
  for (auto& m : tops.material) m.fill(kAir);
  const WorldBounds& b = world.bounds();
  int missing = 4 * kBrickSize * kBrickSize;
  std::array<MaterialId, kBrickVoxels> now{}, generated{};
  // Finds the tops of kind k not found yet in one brick's voxels.
  auto scan = [&](const MaterialId* voxels, std::int32_t by, int k) {
    const bool ground = k >= BrickColumnTops::kNowGround;
    for (int c = 0; c < kBrickSize * kBrickSize; ++c) {
      std::int32_t& t = tops.top[static_cast<std::size_t>(k)][static_cast<std::size_t>(c)];
      if (t != INT32_MIN) continue;
      for (int ly = kBrickSize - 1; ly >= 0; --ly) {
        const MaterialId m = voxels[voxelIndexInBrick(c % kBrickSize, ly, c / kBrickSize)];
        if (!lut.collides[m] || (ground && treeParts[m])) continue;
        t = by * kBrickSize + ly;
        tops.material[static_cast<std::size_t>(k)][static_cast<std::size_t>(c)] = m;
        --missing;
        break;
      }
    }
  };
  for (std::int32_t by = b.maxBrick.y - 1; by >= b.minBrick.y && missing > 0; --by) {
    const BrickCoord brick{bx, by, bz};
    const bool modified = world.isModified(brick);
    if (!modified) {
      const BrickView view = world.brick(brick);
      if (view.isUniform() && !lut.collides[view.uniformMaterial()]) continue;  // nothing to find here
    }
    world.readBrick(brick, now.data());
    const MaterialId* gen = now.data();
    if (modified) {
      world.generatedBrick(brick, generated.data());
      gen = generated.data();
    }
    scan(now.data(), by, BrickColumnTops::kNow);
    scan(gen, by, BrickColumnTops::kGenerated);
    scan(now.data(), by, BrickColumnTops::kNowGround);
    scan(gen, by, BrickColumnTops::kGeneratedGround);
  }
}

}  // namespace

MaterialMask treePartsOf(const MaterialTable& materials) {
  MaterialMask mask{};
  for (const char* name : {"wood", "charcoal", "ash"})
    if (const std::optional<MaterialId> id = materials.find(name)) mask[*id] = 1;
  return mask;
}

SurfaceChange surfaceChange(const BrickStore& world, const MaterialLut& lut, const MaterialMask& treeParts,
                            std::int32_t x, std::int32_t z) {
  SurfaceChange out{x, z, 0, kAir};
  if (!world.markedGenerated()) return out;
  // The patch's 16 x 16 columns are 2 x 2 brick columns, aligned: [16x - 8, 16x + 8).
  std::array<std::uint16_t, 256> votes{};
  int changed = 0;
  BrickColumnTops tops;
  const std::int32_t floor = world.bounds().minBrick.y * kBrickSize - 1;  // a column with no top
  auto top = [&](int k, std::size_t c) {
    const std::int32_t t = tops.top[static_cast<std::size_t>(k)][c];
    return t == INT32_MIN ? floor : t;
  };
  for (std::int32_t dz = 0; dz < 2; ++dz) {
    for (std::int32_t dx = 0; dx < 2; ++dx) {
      const std::int32_t bx = 2 * x - 1 + dx, bz = 2 * z - 1 + dz;
      if (!world.bounds().containsBrick(BrickCoord{bx, world.bounds().minBrick.y, bz})) continue;
      if (!mayHoldChanges(world, ChunkColumn{bx >> kChunkShift, bz >> kChunkShift})) continue;
      readTops(world, lut, treeParts, bx, bz, tops);
      for (std::size_t c = 0; c < kBrickSize * kBrickSize; ++c) {
        // A column that grew counts whole; one that sank counts only what the ground
        // lost: a felled or burnt-out tree was never part of the far terrain.
        std::int32_t rise = top(BrickColumnTops::kNow, c) - top(BrickColumnTops::kGenerated, c);
        int k = BrickColumnTops::kNow;
        if (rise < 0) {
          rise = top(BrickColumnTops::kNowGround, c) - top(BrickColumnTops::kGeneratedGround, c);
          k = BrickColumnTops::kNowGround;
        }
        if (rise == 0) continue;
        out.rise += rise;
        ++changed;
        ++votes[tops.material[static_cast<std::size_t>(k)][c]];
      }
    }
  }
  if (2 * changed >= kSurfacePatchColumns) {
    std::size_t best = 0;
    for (std::size_t m = 1; m < votes.size(); ++m)
      if (votes[m] > votes[best]) best = m;
    out.material = static_cast<MaterialId>(best);
  }
  return out;
}

}  // namespace loam::sim
