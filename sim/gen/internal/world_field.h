// The generator's view of a scene as functions of position: terrain height, biome,
// ponds and streams, per voxel column. Internal to generation (sim/gen/generator.h is the
// public contract).
//
// Heights are sampled on a lattice every kGridStep voxels (40 cm) and interpolated
// bilinearly in between; a chunk computes its lattice once per chunk column, and a
// single column can be computed alone (columnAt) with bit-identical results, which is
// what scatter placement uses. Everything is a pure function of (scene, seed, x, z).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/gen/internal/settlement_layout.h"
#include "sim/gen/landscape_plan.h"
#include "sim/gen/scene.h"
#include "sim/world/voxel.h"

namespace loam::sim::internal {

inline constexpr int kGridStep = 8;          ///< voxels between height samples (one brick)
inline constexpr int kGridShift = 3;
inline constexpr double kVoxelsPerMetreD = static_cast<double>(kVoxelsPerMetre);
inline constexpr int kMaxBiomes = 16;  ///< biomes a scene may define

/// Everything generation needs to know about one voxel column.
struct Column {
  std::int32_t ground = 0;   ///< voxels with y < ground are solid terrain
  std::int32_t water = 0;    ///< voxels with ground <= y < water are water
  std::int32_t deepTop = 0;  ///< voxels below are the deep material (a multiple of 8: brick-aligned)
  MaterialId surface = kAir;  ///< material of the top surface layer
  MaterialId waterMaterial = kAir;
  std::int16_t biome = -1;   ///< index into Scene::biomes, -1 = none
  bool held = false;         ///< the water is a stream's or river's (held at its level)
  bool built = false;        ///< on or beside a building's pad: scatter keeps off
};

/// One lattice sample: smooth height and the mask noise of each noisy biome.
struct GridSample {
  double height = 0.0;
  double biomeNoise[kMaxBiomes];
};

/// A scene prepared for evaluation with one seed: noise keys, pond and stream levels.
/// Immutable after construction; any thread may use it.
class WorldField {
 public:
  WorldField(const Scene& scene, std::uint64_t seed);

  const Scene& scene() const noexcept { return scene_; }
  std::uint64_t seed() const noexcept { return seed_; }

  /// Smooth terrain height in metres at lattice point (gx, gz) = voxel (4 gx, 4 gz).
  double latticeHeight(std::int64_t gx, std::int64_t gz) const noexcept;
  /// A full lattice sample (height + biome noise).
  void latticeSample(std::int64_t gx, std::int64_t gz, GridSample& out) const noexcept;

  /// The column at voxel (x, z), from scratch (four lattice samples).
  Column columnAt(std::int32_t x, std::int32_t z) const noexcept;
  /// False when no stream's or river's channel reaches voxel column (x, z) (cheap:
  /// plan boxes and the river buckets); true means columnAt may say held.
  bool mayHoldStreamWater(std::int32_t x, std::int32_t z) const noexcept;
  /// Smooth height (metres) at voxel column (x, z): bilinear in the lattice.
  double smoothHeightAt(std::int32_t x, std::int32_t z) const noexcept;

  /// Columns of the square [x0, x0 + n) x [z0, z0 + n) (n a multiple of kGridStep,
  /// x0 and z0 too), row-major with x fastest. Scratch lattice in `lattice`.
  /// flatCells gets one flag per lattice cell (kGridStep x kGridStep columns, row-major):
  /// 1 when all its columns are equal, and then only the cell's first column (its
  /// minimum x and z) is written; read columns through ColumnWindow.
  void columns(std::int32_t x0, std::int32_t z0, int n, std::vector<GridSample>& lattice, std::vector<Column>& out,
               std::vector<std::uint8_t>& flatCells) const;

  /// The settlements' buildings (empty without landscape settlements).
  const std::vector<Building>& buildings() const noexcept { return buildings_; }

  /// Ground (voxel y) after terrain depth layering: voxels below ground - deepOffset()
  /// are the deep material, below ground - surfaceOffset() the subsurface.
  std::int32_t surfaceVoxels() const noexcept { return surfaceVoxels_; }
  std::int32_t deepVoxels() const noexcept { return deepVoxels_; }

 private:
  Column finishColumn(std::int32_t x, std::int32_t z, const GridSample& s00, const GridSample& s10,
                      const GridSample& s01, const GridSample& s11) const noexcept;
  /// What biome rules read at a column.
  struct BiomeFields {
    double height, slope, aspect, moisture, riverDistance, coastDistance, roadDistance, settlementDistance;
  };
  /// A biome's limits on its fields; those its scene left at their defaults hold
  /// everywhere, so an edge's dither cannot push a value past them.
  struct BiomeLimits {
    Range height, slope, moisture, riverDistance, coastDistance, roadDistance, settlementDistance;
  };
  int biomeOf(double xm, double zm, const BiomeFields& f, const double* noise) const noexcept;
  /// The landscape's rivers, lakes and sea at column c (plan position xm, zm): the
  /// river valley cut into height h (metres), channels, banks and standing water.
  void applyLandscape(Column& c, double xm, double zm, double& h, const LandscapePlan::Fields& far,
                      BiomeFields& fields, MaterialId& shore) const noexcept;

  /// True when any position-dependent rule (biome circle, pond, stream) may reach
  /// the plan rectangle of voxel columns [x0, x1) x [z0, z1).
  bool regionsTouch(std::int32_t x0, std::int32_t z0, std::int32_t x1, std::int32_t z1) const noexcept;

  struct PlanBox {
    double x0, z0, x1, z1;  // metres
  };
  struct PreparedStream {
    std::vector<double> levels;  // water surface at each point, metres (non-increasing)
    double minX, maxX, minZ, maxZ;  // plan bounds including width and shore
  };
  struct PreparedPond {
    double level;
    double reach;  // radius + shore
  };

  const Scene& scene_;
  std::uint64_t seed_;
  std::shared_ptr<const LandscapePlan> plan_;  // null without [landscape]
  std::uint64_t edgeKey_ = 0;                  // biome limit dithering
  bool anyEdge_ = false;
  bool usesSlope_ = false;                     // a biome reads slope or aspect
  std::vector<std::uint64_t> layerKeys_;
  std::vector<std::uint64_t> biomeKeys_;
  std::vector<int> noisyBiomes_;  // indices of biomes with a noise condition
  std::vector<BiomeLimits> biomeLimits_;  // per biome
  std::vector<PreparedPond> ponds_;
  std::vector<PreparedStream> streams_;
  std::vector<PlanBox> regions_;  // plan boxes of every circle, pond and stream
  /// Levels h (metres) at plan position (xm, zm) to the pads of the buildings near it;
  /// true when the position is on or beside one.
  bool applyPads(double xm, double zm, double& h) const noexcept;

  std::vector<Building> buildings_;
  CellBuckets pads_;  // buildings by plan cell
  std::int32_t surfaceVoxels_ = 0;
  std::int32_t deepVoxels_ = 0;
};

/// Metres to the nearest voxel boundary (round half up): the voxel index where a
/// surface at m metres starts.
inline std::int32_t voxelFromMetres(double m) noexcept {
  double v = m * kVoxelsPerMetreD + 0.5;
  auto i = static_cast<std::int64_t>(v);
  if (v < static_cast<double>(i)) --i;
  return static_cast<std::int32_t>(i);
}

}  // namespace loam::sim::internal
