// The mirror: a world that follows only the three streams. A client (and every full
// bot) builds its world with createSimState from the same scene and seed and then
// applies each StepOutput the server sends; the mirror test checks that this gives
// the authoritative state after every step (tests/sim/mirror_test.cpp).
#pragma once

#include <optional>
#include <span>
#include <string>

#include "sim/systems/sim_state.h"
#include "sim/systems/streams.h"

namespace loam::sim {

/// Applies one step's streams to a mirror: the edit log to the world (in order),
/// state records to players, water, fire, animals and weather, and out.tick. Events
/// change nothing. Records for voxels outside the world are ignored. No allocation
/// beyond growth of the mirror's lists. Thread: the caller's.
void applyStepOutput(SimState& mirror, const StepOutput& out);

/// Applies an edit log to a world in order (the world part of applyStepOutput).
void applyEdits(BrickStore& world, std::span<const EditRecord> edits) noexcept;

/// The first difference between an authoritative state and a mirror, described as
/// "brick (x,y,z) voxel (x,y,z): expected M, actual N" or "player 3 position.x:
/// expected A, actual B"; nullopt when equal. Compares the tick, the players, the
/// weather, water, fire and animal states field by field, and the bricks listed in
/// `bricks` voxel by voxel (pass the bricks either world marked dirty this step;
/// comparing every brick is the job of a world hash). Allocates only on mismatch.
std::optional<std::string> firstDifference(const SimState& expected, const SimState& actual,
                                           std::span<const BrickCoord> bricks);

/// Compares two bricks voxel by voxel; the first difference or nullopt.
std::optional<std::string> diffBrick(const BrickStore& expected, const BrickStore& actual, BrickCoord b);

}  // namespace loam::sim
