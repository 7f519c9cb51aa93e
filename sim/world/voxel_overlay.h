// VoxelOverlay: voxels shown instead of a world's, a client's view on top of its
// mirror (its predicted edits: net/predicted_edits.h). The mirror itself never holds
// them, so its hashes stay the server's; the mesher (mesh/mesh_cache.h) and the
// client's aim (client/voxel_ray.h) read the world through the overlay. Kept per
// brick, so a reader patches a brick with one lookup.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "sim/world/brick_store.h"

namespace loam::sim {

class VoxelOverlay {
 public:
  /// One overlaid voxel of a brick: its index (voxelIndexInBrick) and what it shows.
  struct Voxel {
    std::uint16_t index = 0;
    MaterialId material = kAir;
  };

  /// Shows `material` at v (replacing what the overlay showed there).
  void set(VoxelCoord v, MaterialId material);
  void clear() noexcept { bricks_.clear(); }
  bool empty() const noexcept { return bricks_.empty(); }
  /// What the overlay shows at v, nullopt where the world shows through.
  std::optional<MaterialId> find(VoxelCoord v) const;
  /// What a reader sees at v: the overlay's voxel, else the world's.
  MaterialId get(const BrickStore& world, VoxelCoord v) const;
  /// Brick b's overlaid voxels, by index (empty when none).
  const std::vector<Voxel>& voxelsOf(BrickCoord b) const;
  /// True when brick b or one of its 26 neighbours holds an overlaid voxel (a mesh
  /// of b reads a one-voxel border around it).
  bool touchesPadded(BrickCoord b) const;
  /// The bricks holding overlaid voxels, in order.
  std::vector<BrickCoord> bricks() const;

 private:
  std::map<BrickCoord, std::vector<Voxel>> bricks_;  // each sorted by index
};

}  // namespace loam::sim
