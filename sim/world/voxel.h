// Units and coordinates of the voxel world. Shared vocabulary for the store, the
// generator and everything that reads the world.
//
// Axes: x east, y up, z south. A voxel is 5 cm; a brick is 8x8x8 voxels (40 cm), the
// unit of storage, hashing, meshing and collision queries; a chunk is 16x16x16 bricks
// (6.4 m), the unit of generation and memory ownership; an interest/hash cell is
// 32x32 bricks in plan (12.8 m) over the full height.
#pragma once

#include <compare>
#include <cstdint>

namespace loam::sim {

/// Index into the material table. 0 is always air.
using MaterialId = std::uint8_t;
inline constexpr MaterialId kAir = 0;

inline constexpr int kVoxelsPerMetre = 20;  ///< 5 cm voxels
inline constexpr int kBrickSize = 8;        ///< voxels per brick edge
inline constexpr int kBrickShift = 3;
inline constexpr int kBrickVoxels = kBrickSize * kBrickSize * kBrickSize;  ///< 512
inline constexpr int kChunkBricks = 16;     ///< bricks per chunk edge
inline constexpr int kChunkShift = 4;
inline constexpr int kCellBricks = 32;      ///< bricks per hash/interest cell edge (plan)
inline constexpr int kCellShift = 5;

/// A voxel position in voxel units.
struct VoxelCoord {
  std::int32_t x = 0, y = 0, z = 0;
  friend bool operator==(const VoxelCoord&, const VoxelCoord&) = default;
};

/// A brick position in brick units (voxel >> 3, rounding toward -inf).
struct BrickCoord {
  std::int32_t x = 0, y = 0, z = 0;
  friend bool operator==(const BrickCoord&, const BrickCoord&) = default;
  friend auto operator<=>(const BrickCoord&, const BrickCoord&) = default;
};

/// Index of a voxel inside its brick: x + 8 * (y + 8 * z). Canonical order everywhere
/// (hashes and saves serialise voxels in this order).
constexpr int voxelIndexInBrick(int lx, int ly, int lz) { return lx + kBrickSize * (ly + kBrickSize * lz); }
/// The voxel at index (voxelIndexInBrick) of brick b: the inverse of the above.
constexpr VoxelCoord voxelOfBrick(BrickCoord b, unsigned index) {
  return {b.x * kBrickSize + static_cast<std::int32_t>(index & 7u),
          b.y * kBrickSize + static_cast<std::int32_t>((index >> 3) & 7u),
          b.z * kBrickSize + static_cast<std::int32_t>(index >> 6)};
}

constexpr BrickCoord brickOf(VoxelCoord v) {
  return {v.x >> kBrickShift, v.y >> kBrickShift, v.z >> kBrickShift};
}

/// A chunk position in chunk units (brick >> 4, rounding toward -inf). Chunks are the
/// unit of generation and of memory ownership in the store.
struct ChunkCoord {
  std::int32_t x = 0, y = 0, z = 0;
  friend bool operator==(const ChunkCoord&, const ChunkCoord&) = default;
  friend auto operator<=>(const ChunkCoord&, const ChunkCoord&) = default;
};

constexpr ChunkCoord chunkOf(BrickCoord b) { return {b.x >> kChunkShift, b.y >> kChunkShift, b.z >> kChunkShift}; }

/// Index of a brick inside its chunk: x + 16 * (y + 16 * z), each in 0..15.
constexpr int brickIndexInChunk(BrickCoord b) {
  return (b.x & (kChunkBricks - 1)) + kChunkBricks * ((b.y & (kChunkBricks - 1)) + kChunkBricks * (b.z & (kChunkBricks - 1)));
}

/// A hash/interest cell in plan: 32x32 bricks (12.8 m), the full height.
struct CellCoord {
  std::int32_t x = 0, z = 0;
  friend bool operator==(const CellCoord&, const CellCoord&) = default;
  friend auto operator<=>(const CellCoord&, const CellCoord&) = default;
};

constexpr CellCoord cellOf(BrickCoord b) { return {b.x >> kCellShift, b.z >> kCellShift}; }

/// A cell as one integer (x in the high half): the key of per-cell tables.
constexpr std::uint64_t cellKey(CellCoord c) {
  return (std::uint64_t{static_cast<std::uint32_t>(c.x)} << 32) | static_cast<std::uint32_t>(c.z);
}
/// The cell of a cellKey.
constexpr CellCoord cellOfKey(std::uint64_t k) {
  return {static_cast<std::int32_t>(static_cast<std::uint32_t>(k >> 32)), static_cast<std::int32_t>(static_cast<std::uint32_t>(k))};
}

/// The world's extent in bricks: [min, max) on each axis. Always a whole number of
/// chunks, so every chunk is either wholly inside or wholly outside.
struct WorldBounds {
  BrickCoord minBrick;
  BrickCoord maxBrick;
  bool containsBrick(BrickCoord b) const {
    return b.x >= minBrick.x && b.y >= minBrick.y && b.z >= minBrick.z && b.x < maxBrick.x && b.y < maxBrick.y &&
           b.z < maxBrick.z;
  }
  bool containsVoxel(VoxelCoord v) const { return containsBrick(brickOf(v)); }
  /// True when the chunk column (x, z) (chunk coordinates, any values) is inside.
  bool containsColumn(std::int32_t x, std::int32_t z) const {
    return x >= (minBrick.x >> kChunkShift) && x < (maxBrick.x >> kChunkShift) && z >= (minBrick.z >> kChunkShift) &&
           z < (maxBrick.z >> kChunkShift);
  }
};

}  // namespace loam::sim
