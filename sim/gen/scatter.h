// Scatter features (trees, bushes, rocks, grass patches) as data: what the generator
// placed, with stable ids. The simulation and audio use this to name features
// ("tree 2:(104,-7) burned"), to find leaf clusters and grass patches as sound
// emitters, and tests use it to check locality.
//
// A feature's id is (rule index, grid cell x, grid cell z); its existence, position
// and shape are keyed hashes of (seed, rule, cell), so they never depend on other
// features, on chunk order or on threads.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/world/brick_store.h"
#include "sim/gen/scene.h"

namespace loam::sim {

/// A stable scatter feature id.
struct FeatureId {
  int rule = 0;            ///< index into Scene::scatter
  std::int32_t cellX = 0;  ///< grid cell (floor(x / spacing))
  std::int32_t cellZ = 0;
  friend bool operator==(const FeatureId&, const FeatureId&) = default;
  friend auto operator<=>(const FeatureId&, const FeatureId&) = default;
};

/// One leaf cluster of a tree or bush (for wind and rain emitters).
struct LeafClusterInfo {
  Vec3 centre;          ///< metres
  double radius = 0.0;  ///< metres
};

/// One placed feature.
struct FeatureInfo {
  FeatureId id;
  ScatterKind kind = ScatterKind::Tree;
  Vec3 position;   ///< metres; y = the ground it stands on
  VoxelBox bounds;  ///< the voxels it may change, [min, max)
  std::vector<LeafClusterInfo> leafClusters;  ///< trees and bushes
};

/// Every feature the generator places inside the scene's world bounds, ordered by
/// (rule, cellZ, cellX). Pure function of (scene, seed). Allocates; thread-safe.
/// Cost: one column evaluation per candidate grid cell (flat: ~0.1 s).
std::vector<FeatureInfo> enumerateFeatures(const Scene& scene, std::uint64_t seed);

}  // namespace loam::sim
