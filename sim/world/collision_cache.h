// CollisionCache: per-brick collision bitmasks (one bit per voxel: does it block a
// box?) kept across motion steps, so walking over the same terrain does not re-read
// palette bricks voxel by voxel every tick.
//
// Only bricks the store reports as unmodified since generation
// (BrickStore::isModified false) are cached: their content is the generated
// content, which never changes, so an entry can never go stale while edited bricks
// are always read from the store. Results of motionStep are bit-identical with and
// without a cache (tests/sim/motion_test.cpp checks it); the cache only saves time.
//
// One cache serves one world and one material lookup; it clears itself when given
// another (by address). Call clear() if the world object is reused for another
// world or markGenerated() is called again on it. Not thread-safe: one cache per
// thread that runs motion. Allocates its table (about 320 KB) on first use.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/world/brick_store.h"
#include "sim/world/material_lut.h"

namespace loam::sim {

/// A brick's collision mask: word z holds the 64 voxels of slice z, bit x + 8 * y.
struct CollisionMask {
  std::uint64_t slice[kBrickSize] = {};
};

/// Builds the collision mask of a brick view with lut. Uniform bricks give all or
/// nothing. No allocation; about 0.5 us for a palette brick.
CollisionMask buildCollisionMask(const BrickView& view, const MaterialLut& lut) noexcept;

/// See the file comment.
class CollisionCache {
 public:
  CollisionCache() = default;

  /// The mask of brick b, a palette brick of world that is not modified since
  /// generation (the caller checks both), built and stored on a miss.
  const CollisionMask& mask(const BrickStore& world, const MaterialLut& lut, BrickCoord b, const BrickView& view);

  /// Drops every entry. Keeps the table's memory.
  void clear() noexcept;

  /// Lookups that found their brick / had to build it (for benchmarks).
  std::uint64_t hits() const noexcept { return hits_; }
  std::uint64_t misses() const noexcept { return misses_; }

 private:
  struct Entry {
    BrickCoord key;
    bool used = false;
    CollisionMask mask;
  };
  static constexpr std::size_t kEntries = 4096;  // direct-mapped, power of two

  std::vector<Entry> table_;
  const BrickStore* world_ = nullptr;
  const MaterialLut* lut_ = nullptr;
  std::uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace loam::sim
