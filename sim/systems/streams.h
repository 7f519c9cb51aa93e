// The simulation's three output streams, produced by every step (sim/step/step.h):
//  1. the edit log: every voxel change, whatever caused it, in the order applied;
//  2. events: what happened (sim/systems/events.h);
//  3. state changes: what changed this step in players, water, fire, animals and
//     weather, as set-to-value records.
// A mirror world (sim/step/mirror.h) that starts from the same generated world and
// applies only these records equals the authoritative world after every step.
//
// StepOutput's vectors keep their capacity between steps: a server reuses one
// StepOutput, so steady-state steps do not allocate. Everything in it is valid
// until the next step that writes into the same StepOutput.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/systems/animals.h"
#include "sim/systems/events.h"
#include "sim/systems/fire.h"
#include "sim/systems/player.h"
#include "sim/world/voxel.h"
#include "sim/systems/water.h"
#include "sim/systems/weather.h"

namespace loam::sim {

/// One record of the edit log.
struct EditRecord {
  enum class Kind : std::uint8_t {
    Voxel = 0,      ///< voxel `x,y,z` changed from `before` to `after`
    BrickFill = 1,  ///< every voxel of brick `x,y,z` became `after` (`before` is the
                    ///< brick's former uniform material, or kMixedBefore)
  };
  std::int32_t x = 0, y = 0, z = 0;  ///< voxel (Voxel) or brick (BrickFill) coordinate
  MaterialId before = kAir;
  MaterialId after = kAir;
  Kind kind = Kind::Voxel;
  friend bool operator==(const EditRecord&, const EditRecord&) = default;
};

/// EditRecord::before of a BrickFill whose brick held more than one material.
inline constexpr MaterialId kMixedBefore = 255;

/// The brick an edit changed (the join stream and the world database recapture it).
inline BrickCoord editBrick(const EditRecord& e) noexcept {
  return e.kind == EditRecord::Kind::Voxel ? brickOf(VoxelCoord{e.x, e.y, e.z}) : BrickCoord{e.x, e.y, e.z};
}

/// A run of StepOutput::edits that a follower makes itself: the edits of one visit
/// of a fire sweep, with the burnt-out fill (sim/systems/fire.h, followFire).
struct SweepRun {
  std::uint32_t firstEdit = 0;  ///< index of the run's first edit in StepOutput::edits
  std::uint32_t edits = 0;      ///< the run's length (at least one)
};

/// One record of the player state stream.
struct PlayerChange {
  enum class Kind : std::uint8_t {
    Joined = 0,   ///< new player; `player` is its full record
    Updated = 1,  ///< `player` is its full record after this step
    Left = 2,     ///< removed; only player.id is meaningful
  };
  Kind kind = Kind::Updated;
  Player player;
  friend bool operator==(const PlayerChange&, const PlayerChange&) = default;
};

/// Everything one step produced. See the file comment for lifetime.
struct StepOutput {
  std::uint64_t tick = 0;             ///< SimState::tick after the step (the first step outputs 1)
  std::vector<EditRecord> edits;      ///< stream 1, in application order
  std::vector<SweepRun> sweeps;       ///< runs of `edits` a follower makes itself (by firstEdit)
  std::vector<Event> events;          ///< stream 2, in emission order
  // Stream 3: state changes, each list in the order the change happened.
  std::vector<PlayerChange> players;
  std::vector<WaterChange> water;
  std::vector<FireChange> fire;
  std::vector<AnimalChange> animals;
  bool weatherChanged = false;        ///< weather holds new replicated values
  WeatherState weather;               ///< the replicated weather fields after the step when
                                      ///< weatherChanged (apply with applyWeatherChange)

  /// Empties every stream, keeping capacity. No allocation.
  void clear() noexcept {
    tick = 0;
    edits.clear();
    sweeps.clear();
    events.clear();
    players.clear();
    water.clear();
    fire.clear();
    animals.clear();
    weatherChanged = false;
  }
};

}  // namespace loam::sim
