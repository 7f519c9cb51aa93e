#include "sim/world/collision_cache.h"

#include "sim/core/keyed_random.h"

namespace loam::sim {

CollisionMask buildCollisionMask(const BrickView& view, const MaterialLut& lut) noexcept {
  CollisionMask m;
  if (view.isUniform()) {
    const std::uint64_t all = lut.collides[view.uniformMaterial()] ? ~std::uint64_t{0} : 0;
    for (auto& s : m.slice) s = all;
    return m;
  }
  alignas(16) MaterialId voxels[kBrickVoxels];
  view.decode(voxels);
  for (int z = 0; z < kBrickSize; ++z) {
    std::uint64_t word = 0;
    for (int y = 0; y < kBrickSize; ++y) {
      const MaterialId* row = voxels + voxelIndexInBrick(0, y, z);
      unsigned bits = 0;
      for (int x = 0; x < kBrickSize; ++x) bits |= static_cast<unsigned>(lut.collides[row[x]] != 0) << x;
      word |= static_cast<std::uint64_t>(bits) << (8 * y);
    }
    m.slice[z] = word;
  }
  return m;
}

const CollisionMask& CollisionCache::mask(const BrickStore& world, const MaterialLut& lut, BrickCoord b,
                                          const BrickView& view) {
  if (world_ != &world || lut_ != &lut) {
    clear();
    world_ = &world;
    lut_ = &lut;
  }
  if (table_.empty()) table_.resize(kEntries);
  const std::size_t i = static_cast<std::size_t>(detail::mix64(packCoordId(b.x, b.y, b.z))) & (kEntries - 1);
  Entry& e = table_[i];
  if (e.used && e.key == b) {
    ++hits_;
    return e.mask;
  }
  ++misses_;
  e.key = b;
  e.used = true;
  e.mask = buildCollisionMask(view, lut);
  return e.mask;
}

void CollisionCache::clear() noexcept {
  for (Entry& e : table_) e.used = false;
  world_ = nullptr;
  lut_ = nullptr;
}

}  // namespace loam::sim
