// Server-side working data of the animal system (sim/systems/animals.h): per-animal
// decision state and per-den perch lists. Never replicated, hashed or compared; a
// mirror holds the values initAnimals gave it and never reads them. Internal to sim.
#pragma once

#include <cstdint>

#include "sim/core/fixed_point.h"

namespace loam::sim::internal {

/// One animal's decision state, parallel to AnimalState::animals (same index).
struct AnimalBrain {
  std::uint32_t den = 0;          ///< index into AnimalState::dens
  Vec3i goal;                     ///< walkers: wander goal (x, z used), units
  std::int32_t perch = -1;        ///< birds: target or current perch (AnimalState::perches index)
  std::uint64_t untilTick = 0;    ///< idle / perched until this tick
  std::uint64_t followAfter = 0;  ///< dogs: no following before this tick (gave up)
  std::uint64_t flightStart = 0;  ///< birds: tick the current flight began
  std::int32_t bestDistance = 0;  ///< birds: closest approach to the target this flight, units
  std::uint16_t stuckTicks = 0;   ///< ticks without progress
  std::uint16_t climbTicks = 0;   ///< birds: ticks left climbing over an obstacle; walkers: ticks
                                  ///< left avoiding the straight flee heading after it failed
  std::int8_t fleeSide = 0;       ///< walkers: side (-1, +1) tried first when the way ahead is blocked; 0 none
  bool onGround = false;          ///< walkers: standing at the end of the last tick
};

/// One den: where its animals live and, for birds, its perch list.
struct AnimalDenInfo {
  Vec3i home;                    ///< den position on the ground (feet), units
  std::int32_t range = 0;        ///< roaming radius, units
  std::uint32_t perchBegin = 0;  ///< [perchBegin, perchEnd) in AnimalState::perches
  std::uint32_t perchEnd = 0;
  std::uint8_t species = 0;  ///< AnimalSpecies
};

}  // namespace loam::sim::internal
