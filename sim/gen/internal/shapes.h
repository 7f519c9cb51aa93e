// Shapes the generator paints over the terrain: scatter features (trees, bushes,
// rocks, grass patches), carved tunnels and caves, and structure primitives. Each
// shape has a voxel bounding box and paints only inside it, as a pure function of
// the voxel position, so a chunk gets the same voxels whichever chunk or thread
// paints it. Internal to generation.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sim/gen/internal/world_field.h"
#include "sim/gen/scene.h"

namespace loam::sim::internal {

/// A box of voxels [x0, x1) x [y0, y1) x [z0, z1).
struct VoxelBounds {
  std::int32_t x0 = 0, y0 = 0, z0 = 0, x1 = 0, y1 = 0, z1 = 0;
  bool overlaps(const VoxelBounds& o) const noexcept {
    return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1 && z0 < o.z1 && o.z0 < z1;
  }
  bool empty() const noexcept { return x0 >= x1 || y0 >= y1 || z0 >= z1; }
};

enum class ShapeKind : std::uint8_t { Tree, Bush, Rock, Grass, Box, Roof, Arch, Cylinder, Tunnel };

/// One leaf cluster, voxel units (centre compared with voxel centres i + 0.5).
struct LeafCluster {
  double x = 0, y = 0, z = 0;
  double r = 0;       ///< radius
  double r2 = 0;      ///< radius squared
  double inner2 = 0;  ///< squared radius of the always-full core
};

inline constexpr int kMaxClusters = 16;

/// A segment of a tunnel centre line, voxel units.
struct TunnelSegment {
  double ax, ay, az, bx, by, bz;
};

/// One shape to paint. Plain data; fields used depend on kind.
struct Shape {
  ShapeKind kind = ShapeKind::Box;
  VoxelBounds box;
  std::uint64_t key = 0;        ///< keyed dither / noise stream of this shape
  MaterialId material = kAir;   ///< trunk, rock, grass, box, roof, cylinder wall
  MaterialId material2 = kAir;  ///< leaves (tree), cylinder inside
  bool hasMaterial2 = false;
  int source = 0;               ///< rule, structure or tunnel index
  std::int32_t cellX = 0, cellZ = 0;  ///< scatter grid cell
  std::int32_t ground = 0;      ///< scatter: ground voxel y at the position
  // Trees, bushes, rocks, grass, cylinders: centre in voxel units.
  double cx = 0, cy = 0, cz = 0;
  double trunkR2 = 0;           ///< tree trunk radius squared
  std::int32_t trunkY0 = 0, trunkY1 = 0;  ///< tree trunk voxel rows [y0, y1)
  double fill = 1.0;            ///< leaf fill of the cluster shells / grass column fill
  int clusterCount = 0;
  LeafCluster clusters[kMaxClusters];
  double rx = 0, ry = 0;        ///< rock radii; grass patch radius (rx); cylinder radius (rx), inner (ry)
  double leanX = 0, leanZ = 0;  ///< tree: the trunk's centre moves this far per voxel of height
  // Rock, oriented (a tilt or stretch): its heading and lean as cosines and sines,
  // and its long axis over rx.
  bool oriented = false;
  double cosHeading = 1, sinHeading = 0, cosTilt = 1, sinTilt = 0, stretch = 1;
  double bladeMin = 0, bladeMax = 0;  ///< grass blade heights, voxels
  // Roofs: ridge direction and heights (voxels).
  bool ridgeAlongX = true;
  double eaveY = 0, ridgeY = 0, thickness = 0;
  // Tunnels.
  const std::vector<TunnelSegment>* segments = nullptr;
  double radius = 0;            ///< voxels
  double floorDrop = 0;         ///< tunnel: floor sits this far below the centre line (voxels); 0 = cave
  double roughness = 0;
};

/// Read access to the columns of the chunk column being generated (see
/// WorldField::columns: a flat lattice cell stores only its first column).
struct ColumnWindow {
  static_assert(kGridStep == kBrickSize, "lattice cells are brick columns");
  const Column* data = nullptr;
  const std::uint8_t* flat = nullptr;  ///< per lattice cell
  std::int32_t x0 = 0, z0 = 0;
  int n = 0;
  const Column& at(std::int32_t x, std::int32_t z) const noexcept {
    int dx = x - x0, dz = z - z0;
    int cell = (dz >> kGridShift) * (n >> kGridShift) + (dx >> kGridShift);
    if (flat[cell]) {
      dx &= ~(kGridStep - 1);
      dz &= ~(kGridStep - 1);
    }
    return data[static_cast<size_t>(dz) * static_cast<size_t>(n) + static_cast<size_t>(dx)];
  }
  /// True when every column of the brick column holding (x, z) is equal.
  bool cellFlat(std::int32_t x, std::int32_t z) const noexcept {
    return flat[((z - z0) >> kGridShift) * (n >> kGridShift) + ((x - x0) >> kGridShift)] != 0;
  }
};

/// Horizontal reach of a rule's features from their position, voxels (for culling).
double scatterReach(const ScatterRule& rule) noexcept;

/// The feature of rule `ruleIndex` in grid cell (i, k), if the cell holds one that
/// passes the rule's constraints. Pure function of (scene, seed, rule, i, k).
std::optional<Shape> buildScatterShape(const WorldField& field, int ruleIndex, std::int32_t i, std::int32_t k);

/// Appends, in canonical order (rule, then cell z, then cell x), every scatter shape
/// whose box overlaps `region` (voxels; y ignored when the region's y range is empty).
void collectScatterShapes(const WorldField& field, const VoxelBounds& region, std::vector<Shape>& out);

/// Structure and tunnel shapes of a scene. Tunnels reference `segments`, which must
/// outlive the shapes. Order: tunnels (file order), then structures (file order).
struct FixedShapes {
  std::vector<std::vector<TunnelSegment>> segments;
  std::vector<Shape> tunnels;
  std::vector<Shape> structures;
};
/// The tunnels and structures of scene, then the generated structures (in order).
void buildFixedShapes(const Scene& scene, std::uint64_t seed, std::span<const Structure> generated, FixedShapes& out);

/// Paints a tree, bush, rock or grass shape into the brick at voxel origin
/// (ox, oy, oz): vox holds its 512 voxels (voxelIndexInBrick order). cols must cover
/// the brick's columns. Leaves and grass fill only air; trunks and rocks overwrite.
/// Returns false when it certainly wrote nothing.
bool paintScatterShape(const Shape& s, std::int32_t ox, std::int32_t oy, std::int32_t oz, const ColumnWindow& cols,
                       MaterialId* vox) noexcept;
/// Paints a structure or tunnel shape (overwrites whatever is there). Returns false
/// when it certainly wrote nothing.
bool paintFixedShape(const Shape& s, std::int32_t ox, std::int32_t oy, std::int32_t oz, MaterialId* vox) noexcept;

/// Paints any shape (dispatch on kind); false when it certainly wrote nothing.
inline bool paintShape(const Shape& s, std::int32_t ox, std::int32_t oy, std::int32_t oz, const ColumnWindow& cols,
                       MaterialId* vox) noexcept {
  switch (s.kind) {
    case ShapeKind::Tree:
    case ShapeKind::Bush:
    case ShapeKind::Rock:
    case ShapeKind::Grass:
      return paintScatterShape(s, ox, oy, oz, cols, vox);
    case ShapeKind::Box:
    case ShapeKind::Roof:
    case ShapeKind::Arch:
    case ShapeKind::Cylinder:
    case ShapeKind::Tunnel:
      return paintFixedShape(s, ox, oy, oz, vox);
  }
  return false;
}

/// Per-voxel dither in [0, 1) for shape key and voxel (x, y, z).
inline double voxelDither(std::uint64_t key, std::int32_t x, std::int32_t y, std::int32_t z) noexcept {
  std::uint64_t h = key ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(x)) * 0x9e3779b97f4a7c15ull) ^
                    (static_cast<std::uint64_t>(static_cast<std::uint32_t>(y)) * 0xd1b54a32d192ed03ull) ^
                    (static_cast<std::uint64_t>(static_cast<std::uint32_t>(z)) * 0xc2b2ae3d27d4eb4full);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace loam::sim::internal
