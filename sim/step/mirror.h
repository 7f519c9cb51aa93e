// The mirror: a world that follows only the three streams. A client (and every full
// bot, which is a client) builds its world with createSimState from the same scene
// and seed and then follows the server with the functions below, and only with
// them: net/client_playing.cpp decodes each message into their records and hands
// them over. The mirror test (tests/sim/mirror_test.cpp) drives the same functions
// with each StepOutput and checks that this gives the authoritative state after
// every step.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/systems/sim_state.h"
#include "sim/systems/streams.h"

namespace loam::sim {

/// One step's records as a follower receives them: views, valid for the call. A
/// client gets water per interest cell instead (applyCellState) and leaves that
/// span, and animals, empty; it gets the fire records of the cells it follows.
struct StepRecords {
  std::uint64_t tick = 0;                 ///< SimState::tick after the step
  std::span<const EditRecord> edits;      ///< the edit log, in application order
  std::span<const PlayerChange> players;  ///< joins, updates and leaves, in order
  std::span<const WaterChange> water;
  std::span<const FireChange> fire;
  std::span<const AnimalChange> animals;
  const WeatherState* weather = nullptr;  ///< replicated weather after the step; null = unchanged
};

/// The edit log a follower receives for `out` (into `edits`, cleared first):
/// out.edits without out.sweeps' runs (the fire's edits, which a follower makes
/// itself: followFire). Allocates as `edits` grows.
void followerEdits(const StepOutput& out, std::vector<EditRecord>& edits);

/// The records of a whole StepOutput (views into `out`, and into `edits`, which
/// receives followerEdits(out)).
StepRecords recordsOf(const StepOutput& out, std::vector<EditRecord>& edits);

/// Applies one step to a mirror: the edits to the world (in order), the player and
/// water records, the fire (followFire, sim/systems/fire.h: the mirror makes the
/// fire's edits itself, after the others as the step does, and appends them to
/// *made when given), the animal and weather records, then the tick. Events change
/// nothing. No allocation beyond growth of the mirror's lists. Thread: the caller's.
void applyStep(SimState& mirror, const StepRecords& step, std::vector<EditRecord>* made = nullptr);

/// applyStep with every record of `out` (what a follower of whole steps runs).
void applyStepOutput(SimState& mirror, const StepOutput& out);

/// Applies an edit log to the mirror's world in order (the world part of
/// applyStep).
void applyEdits(SimState& mirror, std::span<const EditRecord> edits) noexcept;

/// Applies player records in order (the player part of applyStep): Joined and
/// Updated set the whole record (inserting it when absent), Left removes it (absent:
/// nothing). `players` stays sorted by id. A client also sets the poses its
/// snapshots carry through this, as Updated records.
void applyPlayerChanges(std::vector<Player>& players, std::span<const PlayerChange> changes);

/// Applies the water records of one interest cell as of `tick`. When `full`, they
/// are the cell's whole state, with its burning cells' ignition data in `fire`: the
/// cell's fire is replaced (insertFireCells, sim/systems/fire.h) and its water goes
/// back to the implicit water of the mirror's world first (resetWaterInCell; a
/// client catching up on a cell it did not follow); otherwise `fire` is ignored (a
/// step's fire records go to applyStep). Records must lie inside the cell and the
/// world (a client checks what came from the wire).
void applyCellState(SimState& mirror, std::uint64_t tick, CellCoord cell, bool full,
                    std::span<const WaterChange> water, std::span<const FireChange> fire);

/// Removes every fire cell inside an interest cell (the clearing of a full
/// applyCellState, and of a cell a client stops following). Mirror use only.
void clearFireInCell(FireState& fire, CellCoord cell);

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
