#include "sim/world/voxel_overlay.h"

#include <algorithm>

namespace loam::sim {

namespace {

std::uint16_t indexOf(VoxelCoord v) {
  constexpr std::int32_t kMask = kBrickSize - 1;
  return static_cast<std::uint16_t>(voxelIndexInBrick(v.x & kMask, v.y & kMask, v.z & kMask));
}

const auto byIndex = [](const VoxelOverlay::Voxel& a, std::uint16_t i) { return a.index < i; };

}  // namespace

void VoxelOverlay::set(VoxelCoord v, MaterialId material) {
  std::vector<Voxel>& list = bricks_[brickOf(v)];
  const std::uint16_t i = indexOf(v);
  auto it = std::lower_bound(list.begin(), list.end(), i, byIndex);
  if (it != list.end() && it->index == i)
    it->material = material;
  else
    list.insert(it, Voxel{i, material});
}

std::optional<MaterialId> VoxelOverlay::find(VoxelCoord v) const {
  auto b = bricks_.find(brickOf(v));
  if (b == bricks_.end()) return std::nullopt;
  const std::uint16_t i = indexOf(v);
  auto it = std::lower_bound(b->second.begin(), b->second.end(), i, byIndex);
  if (it == b->second.end() || it->index != i) return std::nullopt;
  return it->material;
}

MaterialId VoxelOverlay::get(const BrickStore& world, VoxelCoord v) const {
  if (const std::optional<MaterialId> m = find(v)) return *m;
  return world.get(v);
}

const std::vector<VoxelOverlay::Voxel>& VoxelOverlay::voxelsOf(BrickCoord b) const {
  static const std::vector<Voxel> kNone;
  auto it = bricks_.find(b);
  return it == bricks_.end() ? kNone : it->second;
}

bool VoxelOverlay::touchesPadded(BrickCoord b) const {
  if (bricks_.empty()) return false;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        if (bricks_.count({b.x + dx, b.y + dy, b.z + dz})) return true;
  return false;
}

std::vector<BrickCoord> VoxelOverlay::bricks() const {
  std::vector<BrickCoord> out;
  out.reserve(bricks_.size());
  for (const auto& [b, list] : bricks_) out.push_back(b);
  return out;
}

}  // namespace loam::sim
