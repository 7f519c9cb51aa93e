// Storage layout of one chunk of the brick store (16^3 bricks). Internal to the
// store: other parts use sim/world/brick_store.h. It is a header only so that the store's
// read fast path can be inlined.
//
// A chunk is either uniform (no ChunkData: every voxel is Chunk::uniform) or holds a
// slot per brick. A slot below 256 is a uniform brick of that material; otherwise it
// names a BrickEntry whose palette record lives in the chunk's own pool. Every chunk
// owns its memory, so different chunks can be written from different threads.
//
// Record layout in the pool (byte offsets from BrickEntry::offset), for bitsLog2 = k,
// bits = 1 << k per voxel and cap = 1 << bits palette entries:
//   [0, 64 << k)                 packed palette indices, voxel i at bit i << k
//   [64 << k, +cap)              palette: MaterialId per index (identity when k = 3)
//   [.., +2 * cap)               count of voxels per palette index (uint16, unaligned)
// padded to 8 bytes: 72, 144, 304 and 1280 bytes for 1, 2, 4 and 8 bits per voxel.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "sim/world/voxel.h"

namespace loam::sim::internal {

inline constexpr int kChunkBrickCount = kChunkBricks * kChunkBricks * kChunkBricks;  // 4096
inline constexpr std::uint32_t kMixedSlotBase = 256;
inline constexpr int kSizeClasses = 4;
inline constexpr std::uint32_t kNoOffset = 0xFFFFFFFFu;
inline constexpr int kDirtyWords = kChunkBrickCount / 64;

/// Palette capacity for a size class: 2, 4, 16, 256.
constexpr std::uint32_t paletteCap(unsigned bitsLog2) { return 1u << (1u << bitsLog2); }
/// Byte offset of the palette inside a record.
constexpr std::uint32_t paletteOffset(unsigned bitsLog2) { return 64u << bitsLog2; }
/// Byte offset of the counts inside a record.
constexpr std::uint32_t countsOffset(unsigned bitsLog2) { return paletteOffset(bitsLog2) + paletteCap(bitsLog2); }
/// Record size in bytes (multiple of 8).
constexpr std::uint32_t recordBytes(unsigned bitsLog2) {
  return (countsOffset(bitsLog2) + 2 * paletteCap(bitsLog2) + 7u) & ~7u;
}

/// Smallest size class holding `distinct` materials: 0, 1, 2 or 3.
constexpr unsigned minimalBitsLog2(unsigned distinct) noexcept {
  return distinct <= 2 ? 0u : distinct <= 4 ? 1u : distinct <= 16 ? 2u : 3u;
}

/// Bookkeeping of one mixed brick (16 bytes).
struct BrickEntry {
  std::uint32_t offset = 0;      ///< byte offset of the record in the pool
  std::uint32_t opacitySum = 0;  ///< sum of the coarse opacity byte over the 512 voxels
  std::uint16_t solidCount = 0;  ///< voxels whose material is solid (coarse lookup)
  std::uint16_t used = 0;        ///< distinct materials present (>= 2)
  std::uint8_t bitsLog2 = 0;     ///< size class: 1 << bitsLog2 bits per voxel
  std::uint8_t fill = 0;         ///< palette indices ever assigned (k < 3); holes have count 0
  std::uint16_t pad = 0;
};
static_assert(sizeof(BrickEntry) == 16);

/// The per-brick slots and palette records of a chunk that is not uniform.
struct ChunkData {
  std::uint16_t slots[kChunkBrickCount];  ///< < 256: uniform material; else 256 + entry
  std::vector<BrickEntry> entries;
  std::vector<std::uint16_t> freeEntries;
  std::vector<std::uint64_t> pool;  ///< 8-byte aligned record storage
  std::uint32_t poolUsed = 0;       ///< bytes of pool handed out (holes included)
  std::uint32_t freeHead[kSizeClasses] = {kNoOffset, kNoOffset, kNoOffset, kNoOffset};
  std::uint32_t mixedCount = 0;

  std::uint8_t* bytes() noexcept { return reinterpret_cast<std::uint8_t*>(pool.data()); }
  const std::uint8_t* bytes() const noexcept { return reinterpret_cast<const std::uint8_t*>(pool.data()); }
};

/// Dirty bits of a chunk: one 4096-bit set per consumer channel plus the
/// modified-since-generation set (last). Allocated on the first change.
template <int Channels>
struct DirtyBitsT {
  std::uint64_t bits[Channels + 1][kDirtyWords] = {};
  std::uint8_t any = 0;  ///< bit c set when set c may have a bit set
};

/// Reads palette index i of a packed record. k = bitsLog2.
inline unsigned readIndex(const std::uint8_t* rec, unsigned k, unsigned i) noexcept {
  unsigned bitPos = i << k;
  return (rec[bitPos >> 3] >> (bitPos & 7u)) & ((1u << (1u << k)) - 1u);
}

/// Reads count c of a record (unaligned uint16).
inline std::uint16_t readCount(const std::uint8_t* rec, unsigned k, unsigned c) noexcept {
  std::uint16_t v;
  std::memcpy(&v, rec + countsOffset(k) + 2 * c, 2);
  return v;
}

}  // namespace loam::sim::internal
