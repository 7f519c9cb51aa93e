// Settlements' buildings (landscape.settlements): lots around each settlement the plan
// placed, a building on each lot that passes the rules, on a levelled pad, made of
// structure primitives from a small grammar (plinth, walls by storey, hollow inside,
// a door facing the settlement's centre, windows on every wall and storey, a gable
// roof along the longer side). Every draw is keyed by (seed, settlement id, lot), so
// a settlement's buildings depend on nothing but its own site and rules. Internal to
// generation.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/gen/landscape_plan.h"
#include "sim/gen/scene.h"

namespace loam::sim::internal {

class WorldField;

/// One building: a footprint in metres (x0 < x1, z0 < z1) standing on a pad.
struct Building {
  std::uint32_t settlement = 0;   ///< Settlement::id
  double x0 = 0, z0 = 0, x1 = 0, z1 = 0;
  double pad = 0;                 ///< metres: the floor's height, a whole voxel
  int storeys = 1;
  bool ridgeAlongX = true;
  int doorSide = 0;               ///< 0 north (-z), 1 south, 2 west (-x), 3 east
  MaterialId wall = kAir, roof = kAir;
};

/// Metres around a footprint levelled to its pad, then blended back to the terrain.
inline constexpr double kPadMargin = 1.5;
inline constexpr double kPadBlend = 5.0;

/// Every settlement's buildings, settlements in plan order, lots nearest the centre
/// first. field gives the terrain's height (without pads).
std::vector<Building> layoutBuildings(const WorldField& field, const LandscapePlan& plan, const SettlementRules& rules,
                                      std::uint64_t seed);

/// The structure primitives of b, in painting order, appended to out. glass and
/// plinth are the window and foundation materials.
void buildingStructures(const Building& b, MaterialId plinth, MaterialId glass, std::vector<Structure>& out);

}  // namespace loam::sim::internal
