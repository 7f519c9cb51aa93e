// The whole-map plan of a scene with [landscape] (sim/gen/scene.h): what rivers, lakes,
// the sea and the fields that biome rules read need a view of the whole map for.
//
// It is computed once per (scene, seed, generator version) on a coarse grid of plan
// nodes (landscape.cell metres apart, covering the world with a margin), in this order:
//  1. heights: landscape.base_height plus its noise layers at each node, falling to
//     the sea floor over coast_margin metres from the world's edge;
//  2. erosion: erosion_steps of implicit stream-power incision (Braun and Willett
//     2013): each node sinks toward its receiver by an amount growing with the square
//     root of the area draining through it, so valleys are carved where water runs;
//  3. drainage: a priority flood from the world's edge (Barnes et al. 2014) gives each
//     node its filled height and receiver: nodes below sea level that the flood reaches
//     through other such nodes are sea; nodes whose filled height stands above their
//     own are lakes, level with their outlet; areas accumulate down the receivers;
//  4. rivers: every node draining at least rivers.min_catchment km2 runs to its
//     receiver, a segment from point to point (points bent by keyed meanders), with
//     width, depth and water level from its area. Levels never rise downstream, and a
//     river ends at the level of the lake or sea it reaches;
//  5. fields: distances to the sea and to water (chamfer distances on the grid) and
//     moisture;
//  6. settlements: the best sites by rule (flat, near a river or lake, within a height
//     range), at least a spacing apart;
//  7. roads: a spanning tree of the settlements, each road the cheapest path on the
//     grid (A*, cost growing with grade, no lakes or sea), its surface profile held
//     to the maximum grade, smoothed along a Catmull-Rom curve.
// Every step is single-threaded over the grid in a fixed order, with ties broken by
// node index, using only + - * / and sqrt: the plan's bits are the same everywhere.
// After that every query is a pure function of position: a chunk's content stays a
// function of (scene, seed, plan, coordinates).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/gen/cell_buckets.h"
#include "sim/gen/scene.h"

namespace loam::sim {

/// One point of the river network: rivers are segments between points.
struct RiverPoint {
  Vec2 at;                 ///< metres (a plan node moved by its meander)
  double level = 0.0;      ///< water surface, metres
  double halfWidth = 1.0;  ///< metres
  double depth = 0.5;      ///< metres below the level at the centre line
  double area = 0.0;       ///< km2 draining through the point
};

/// A river from point `up` to point `down` (indices into LandscapePlan::riverPoints).
struct RiverSegment {
  std::uint32_t up = 0, down = 0;
};

/// A settlement the plan placed (landscape.settlements): its buildings are laid out
/// by the generator (sim/gen/internal/settlement_layout.h), keyed by its id.
struct Settlement {
  std::uint32_t id = 0;   ///< the plan node it stands on: stable, keys its randomness
  Vec2 centre;            ///< metres
  MaterialId wall = kAir, roof = kAir;
  int buildings = 0;      ///< how many it tries to place
};

/// One point of a road: roads are segments between points.
struct RoadPoint {
  Vec2 at;             ///< metres
  double level = 0.0;  ///< the road's surface, metres (grade at most landscape.roads.max_grade)
};

/// A road from point a to point b (indices into LandscapePlan::roadPoints).
struct RoadSegment {
  std::uint32_t a = 0, b = 0;
};

/// The nearest road to a position (LandscapePlan::nearestRoad).
struct RoadHit {
  bool found = false;     ///< a road's centre line is within its half width plus kRoadReach
  double distance = 0.0;  ///< metres from the centre line
  double level = 0.0;     ///< the surface at the nearest point, metres
};

/// Metres beyond a road's edge over which the ground blends back to the terrain.
inline constexpr double kRoadReach = 6.0;

/// Metres beyond a settlement's radius within which its distance is known (biome rules
/// read settlement_distance; farther is "far").
inline constexpr double kSettlementReach = 500.0;

/// The nearest river to a position (LandscapePlan::nearestRiver).
struct RiverHit {
  bool found = false;        ///< a river's channel plus kRiverReach is within reach
  double distance = 0.0;     ///< metres from the centre line
  double level = 0.0;        ///< water surface at the nearest point, metres
  double halfWidth = 0.0;    ///< metres
  double depth = 0.0;        ///< metres
};

/// Metres beyond a river's edge over which the ground is cut down toward it (its
/// valley) and within which LandscapePlan::nearestRiver finds it.
inline constexpr double kRiverReach = 48.0;

/// A scene's plan. Immutable after build; any thread may query it.
class LandscapePlan {
 public:
  /// Builds the plan of scene (which must have a landscape) with seed. Allocates
  /// (about 60 bytes a node); 16 x 16 km at 32 m cells takes about a second.
  static std::unique_ptr<const LandscapePlan> build(const Scene& scene, std::uint64_t seed);

  /// The plan's height at plan position (x, z), metres: Catmull-Rom between nodes
  /// (passes through every node's height; C1).
  double height(double x, double z) const noexcept;
  /// The river nearest to (x, z) (by distance to its edge) within its half width plus
  /// kRiverReach; found is false when none is.
  RiverHit nearestRiver(double x, double z) const noexcept;
  /// True when a lake or sea node is a corner of the plan cell holding (x, z): level
  /// is then the highest such corner's water level and sea tells whether it is sea.
  /// depth (0..1) is the bilinear share of the cell's corners under that water: 1 in
  /// the middle of a lake, falling toward its shores.
  bool standingWater(double x, double z, double& level, bool& sea, double& depth) const noexcept;
  /// The fields biome rules read, bilinear between nodes.
  struct Fields {
    double moisture = 0.0;       ///< 0..1: the larger of nearness to water (1 at water, 0 at
                                 ///< landscape.moisture_range) and wetness (log2 of the cells
                                 ///< draining through, / 12)
    double coastDistance = 0.0;  ///< metres to the nearest sea node (1e6 when none)
    double riverDistance = 0.0;  ///< metres to the nearest river node: coarse, for positions
                                 ///< beyond nearestRiver's reach
  };
  Fields fields(double x, double z) const noexcept;

  const std::vector<RiverPoint>& riverPoints() const noexcept { return points_; }
  const std::vector<RiverSegment>& riverSegments() const noexcept { return segments_; }
  /// The road nearest to (x, z) within its half width plus kRoadReach.
  RoadHit nearestRoad(double x, double z) const noexcept;
  const std::vector<RoadPoint>& roadPoints() const noexcept { return roadPoints_; }
  const std::vector<RoadSegment>& roadSegments() const noexcept { return roadSegments_; }
  double roadHalfWidth() const noexcept { return roadHalfWidth_; }
  /// Metres from (x, z) to the nearest settlement's centre within its radius plus
  /// kSettlementReach, else `far`.
  double settlementDistance(double x, double z, double far) const noexcept;
  /// The settlements: the scene's sites, then the rules' best first.
  const std::vector<Settlement>& settlements() const noexcept { return settlements_; }
  /// Nodes on each axis and the position of node (0, 0), metres.
  int nodesX() const noexcept { return nx_; }
  int nodesZ() const noexcept { return nz_; }
  double cell() const noexcept { return cell_; }
  Vec2 origin() const noexcept { return origin_; }
  /// Node (i, j): its height after erosion, whether it is sea, its lake level (or a
  /// value below -1e30 when it is not a lake). Indices are clamped to the grid.
  double nodeHeight(int i, int j) const noexcept { return h_[index(i, j)]; }
  bool nodeSea(int i, int j) const noexcept { return (flags_[index(i, j)] & kSea) != 0; }
  double nodeLake(int i, int j) const noexcept { return lake_[index(i, j)]; }
  /// Lakes (connected groups of lake nodes) in the plan.
  int lakeCount() const noexcept { return lakes_; }

 private:
  LandscapePlan() = default;
  static constexpr std::uint8_t kSea = 1, kRiver = 2;
  std::size_t index(int i, int j) const noexcept;

  int nx_ = 0, nz_ = 0;
  double cell_ = 32.0;
  Vec2 origin_;
  double seaLevel_ = 0.0;
  std::vector<double> h_;           // eroded height per node
  std::vector<double> lake_;        // lake level per node, or -1e300
  std::vector<std::uint8_t> flags_;
  std::vector<float> coastDist_;    // metres to the nearest sea node
  std::vector<float> riverDist_;    // metres to the nearest river node
  std::vector<float> moisture_;     // 0..1
  std::vector<RiverPoint> points_;
  std::vector<RiverSegment> segments_;
  std::vector<Settlement> settlements_;
  std::vector<RoadPoint> roadPoints_;
  std::vector<RoadSegment> roadSegments_;
  CellBuckets roadBuckets_;
  CellBuckets settlementBuckets_;
  double roadHalfWidth_ = 2.0;
  CellBuckets riverBuckets_;
  int lakes_ = 0;
};

/// The plan of scene with seed, or null when the scene has no landscape. Built once
/// and kept (the last few plans are cached by scene hash and seed), so generators,
/// samplers and the water system of one process share it.
std::shared_ptr<const LandscapePlan> landscapePlan(const Scene& scene, std::uint64_t seed);

}  // namespace loam::sim
