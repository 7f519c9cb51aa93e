// SimState: the authoritative simulation state, everything step() reads and writes.
// A server holds one; every mirror (client, bot, the mirror test) holds another
// built by the same createSimState and advanced by applyStepOutput (sim/step/mirror.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/gen/column_streamer.h"
#include "sim/systems/animals.h"
#include "sim/world/brick_store.h"
#include "sim/world/collision_cache.h"
#include "sim/systems/fire.h"
#include "sim/core/fixed_point.h"
#include "sim/world/material_lut.h"
#include "sim/systems/player.h"
#include "sim/core/result.h"
#include "sim/systems/water.h"
#include "sim/systems/weather.h"

namespace loam::sim {

class MaterialTable;
struct Scene;

/// Where a joining player appears.
struct Spawn {
  Vec3i position;          ///< units, feet
  std::uint16_t yaw = 0;   ///< binary angle
  friend bool operator==(const Spawn&, const Spawn&) = default;
};

/// Tunables of command validation. Defaults are the game's rules; tests may change them.
struct SimRules {
  std::uint32_t maxPlayers = 128;                          ///< joins beyond this are rejected
  std::int32_t reach = unitsFromMetres(5.0);               ///< max eye-to-target distance, units
  std::int32_t editTokensPerTick = 1;                      ///< refill per tick (60 per second)
  std::int32_t editTokenCost = 6;                          ///< per dig/place/pour/ignite: 10 per second
  std::int32_t editTokenBurst = 30;                        ///< bucket size (5 quick edits)
  std::int32_t chatTokensPerTick = 1;
  std::int32_t chatTokenCost = 60;                         ///< one line per second sustained
  std::int32_t chatTokenBurst = 300;                       ///< 5 lines burst
  std::int32_t pourUnitsPerTick = 256;                     ///< a player's water: one voxel per tick (7.5 L/s)
  std::int32_t pourUnitsBurst = 4 * 64 * 256;              ///< four of the largest pours (32 L) at once
  std::uint32_t maxInputsPerTick = 4;                      ///< inputs per player per tick (catch-up)
};

/// Server-side working memory reused by every step (not state; never hashed,
/// never compared). Sized up front so steady-state steps do not allocate.
struct StepScratch {
  std::vector<std::uint32_t> order;       ///< command order for this step
  std::vector<VoxelCoord> voxels;         ///< the voxels a dig removes
  std::vector<std::uint32_t> counts;      ///< per-material counters (256)
  std::vector<Player> players;            ///< players at the start of the step (change detection)
  CollisionCache collision;               ///< motion's brick masks for `world` (speed only)
};

/// The whole simulation state. Movable; copying deep-copies the world.
struct SimState {
  std::uint64_t seed = 0;                         ///< world seed
  std::uint64_t sceneHash = 0;                    ///< sceneJoinHash of the scene
  std::uint64_t tick = 0;                         ///< steps taken (0 = freshly generated)
  std::shared_ptr<const MaterialTable> materials; ///< the scene's table (immutable, shared)
  MaterialLut lut;                                ///< per-material flags derived from `materials`
  BrickStore world;                               ///< the voxels
  std::vector<Spawn> spawns;                      ///< from the scene (at least one)
  SimRules rules;                                 ///< validation tunables
  std::vector<Player> players;                    ///< sorted by id
  WeatherState weather;                           ///< weather and time of day
  WaterState water;
  FireState fire;
  AnimalState animals;
  StepScratch scratch;                            ///< working memory, not state

  /// The player with id, or nullptr. O(log players).
  const Player* findPlayer(PlayerId id) const noexcept;
  /// The player with id, or nullptr. O(log players).
  Player* findPlayer(PlayerId id) noexcept;
};

/// Generates the world for scene and seed (sim/gen/generator.h), then initialises every
/// system from the scene (spawns, water sources, animal dens, weather, day length).
/// The same inputs give a bit-identical state on every machine, so a mirror is
/// built by calling this too. Errors: generation failures. Allocates; may use
/// threads inside generation (results do not depend on them).
Result<SimState> createSimState(const Scene& scene, std::uint64_t seed);

/// As createSimState, but the world is streamed (BrickStore::setColumnSource): it
/// starts with only the columns under the spawns and around the dens and grows as
/// the systems and the step read it. The state
/// is the one createSimState gives, bit for bit, wherever it is read; source must
/// outlive the state. Errors: as createSimState.
Result<SimState> createStreamedSimState(const Scene& scene, std::uint64_t seed, ColumnSource& source);

/// A client's mirror of a streamed world (sim/step/mirror.h): as createStreamedSimState,
/// but it starts from the spawn columns only, holds no animals (a mirror follows them
/// in snapshots; their dens' ranges are most of a streamed server's start columns) and
/// its water is implicit (sim/systems/water.h): the server sends the interest cells
/// whose water changed.
/// Its world reads as createStreamedSimState's does. source must outlive the state.
/// Errors: as createSimState.
Result<SimState> createMirrorState(const Scene& scene, std::uint64_t seed, ColumnSource& source);

/// The voxel column under each player's feet, in id order: the centres a streamed
/// world's ColumnStreamer::update generates ahead around. Reuses out's capacity.
void playerStreamCentres(const SimState& state, std::vector<StreamCentre>& out);

/// As createSimState, but around an already generated world (tests, benches, loading
/// a save). The world must be over scene.worldBounds with markGenerated() called.
SimState createSimStateFromWorld(const Scene& scene, std::uint64_t seed, BrickStore world);

}  // namespace loam::sim
