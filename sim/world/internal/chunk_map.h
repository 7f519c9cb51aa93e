// ChunkMap: chunk coordinates to the slot that holds the chunk, for BrickStore. Open
// addressing with linear probing over a power-of-two table kept at most half full, so a
// lookup is a multiply, a shift and usually one compare: the store's voxel reads go
// through it. Keys pack x, y, z (each within +-2^20 chunks) into 63 bits; the empty
// key is all ones, which no packed coordinate reaches. Internal to sim/world.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "sim/core/assert.h"
#include "sim/world/voxel.h"

namespace loam::sim::internal {

/// Chunk coordinates the map can hold: +-2^20 on each axis (+-6,700 km horizontally).
inline constexpr std::int32_t kMaxChunkCoord = (1 << 20) - 1;

/// The packed key of c (which must be within kMaxChunkCoord on each axis).
inline std::uint64_t chunkKey(ChunkCoord c) noexcept {
  constexpr std::uint32_t kBias = 1u << 20;
  return (std::uint64_t{static_cast<std::uint32_t>(c.x) + kBias} << 42) |
         (std::uint64_t{static_cast<std::uint32_t>(c.y) + kBias} << 21) |
         std::uint64_t{static_cast<std::uint32_t>(c.z) + kBias};
}

/// The coordinates packed in key (chunkKey's inverse).
inline ChunkCoord chunkOfKey(std::uint64_t key) noexcept {
  constexpr std::int64_t kBias = 1 << 20;
  constexpr std::uint64_t kMask = (std::uint64_t{1} << 21) - 1;
  return {static_cast<std::int32_t>(static_cast<std::int64_t>((key >> 42) & kMask) - kBias),
          static_cast<std::int32_t>(static_cast<std::int64_t>((key >> 21) & kMask) - kBias),
          static_cast<std::int32_t>(static_cast<std::int64_t>(key & kMask) - kBias)};
}

/// True when chunk c lies inside b (b is whole chunks, so its first brick decides).
inline bool chunkInBounds(const WorldBounds& b, ChunkCoord c) noexcept {
  return b.containsBrick(BrickCoord{c.x * kChunkBricks, c.y * kChunkBricks, c.z * kChunkBricks});
}

/// True when a is before b in canonical chunk order: z, then y, then x.
inline bool canonicalBefore(ChunkCoord a, ChunkCoord b) noexcept {
  if (a.z != b.z) return a.z < b.z;
  if (a.y != b.y) return a.y < b.y;
  return a.x < b.x;
}

class ChunkMap {
 public:
  /// The slot of key, or -1. Thread: any, while nobody inserts.
  int find(std::uint64_t key) const noexcept {
    if (keys_.empty()) return -1;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      const std::uint64_t k = keys_[i];
      if (k == key) return slots_[i];
      if (k == kEmpty) return -1;
    }
  }

  /// Maps key to slot (key must be absent). May reallocate. Single-threaded.
  void insert(std::uint64_t key, int slot) {
    if (2 * (count_ + 1) > keys_.size()) grow();
    place(key, slot);
    ++count_;
  }

  /// Forgets every key, keeping the table's capacity.
  void clear() noexcept {
    std::fill(keys_.begin(), keys_.end(), kEmpty);
    count_ = 0;
  }

  /// Keys held.
  std::size_t size() const noexcept { return count_; }
  /// Heap bytes held (capacities).
  std::size_t memoryBytes() const noexcept {
    return keys_.capacity() * sizeof(std::uint64_t) + slots_.capacity() * sizeof(std::int32_t);
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  std::size_t home(std::uint64_t key) const noexcept {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void place(std::uint64_t key, int slot) noexcept {
    std::size_t i = home(key);
    while (keys_[i] != kEmpty) {
      LOAM_ASSERT(keys_[i] != key);
      i = (i + 1) & mask_;
    }
    keys_[i] = key;
    slots_[i] = slot;
  }
  void grow() {
    std::vector<std::uint64_t> oldKeys = std::move(keys_);
    std::vector<std::int32_t> oldSlots = std::move(slots_);
    const std::size_t n = oldKeys.empty() ? 64 : 2 * oldKeys.size();
    keys_.assign(n, kEmpty);
    slots_.assign(n, -1);
    mask_ = n - 1;
    shift_ = 64u - static_cast<unsigned>(std::countr_zero(n));
    for (std::size_t i = 0; i < oldKeys.size(); ++i)
      if (oldKeys[i] != kEmpty) place(oldKeys[i], oldSlots[i]);
  }

  std::vector<std::uint64_t> keys_;
  std::vector<std::int32_t> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t count_ = 0;
};

}  // namespace loam::sim::internal
