// Fire system interface (the contract for every system is in sim/systems.h).
//
// Model: fire cells are bricks (8x8x8 voxels, 40 cm; inside the fire system "cell"
// means one burning brick, named by its minimum voxel corner, FireCell::corner;
// elsewhere a cell is the 12.8 m interest cell); visible results are voxel edits
// through ctx.setVoxel / ctx.fillBrick.
// - Ignition (a command, or spread) decodes the brick once: a fuel bitmap (materials
//   with burn_ticks > 0 and flammability > 0), burn duration = fuel-weighted mean of
//   burn_ticks, peak intensity from the amount and flammability of the fuel.
// - Burning sweeps the brick's fuel voxels over the duration in a keyed permutation
//   (seed, brick): each one reached turns to its burnt form (wood and planks ->
//   charcoal, charcoal -> ash, leaves -> air, grass -> ash on solid non-flammable
//   ground, else air). A brick whose burnt result is one material (leaves and air ->
//   air, solid wood -> charcoal) is thinned voxel by voxel over an eighth of its
//   positions and finished with one BrickFill record, which keeps a crown fire's edit
//   log small. The cell burns out when the sweep ends or its fuel is gone; charcoal
//   can catch again later (the material table gives it fuel).
// - A cell is visited only every `period` ticks (6 for grass and leaves .. 60 for
//   wood and charcoal): the sweep catches up and the cell makes one attempt. A
//   neighbour brick (26) is chosen with weights favouring up (heat rises) and downwind
//   (weather's wind at the cell's exposure), two keyed columns of it are scanned for
//   fuel, and a keyed chance ignites it: a per-tick hazard times the period (capped
//   at 6 ticks for slow fuels) x fuel flammability x source intensity x dryness^2
//   (wetness) x (1 - rain). At most one attempt per cell per tick and
//   kMaxIgnitionsPerTick new cells per tick: big fires grow over seconds. Ignitions
//   are merged after the walk, in cell order.
// - Rain puts a cell out with a keyed chance at each attempt (cause Rain): the rain
//   reaching it (weather rain x the cell's exposure: the voxel column above its
//   centre, where each leaf voxel lets 98 % through and anything solid stops it,
//   measured every two seconds), or half its wetness (sheltered fuel still gets 3/4
//   of the ground's wetness), whichever is more. Water puts it out (cause Water) when
//   an edit earlier in the step (a pour, flowing water) wrote liquid into its brick,
//   or a keyed voxel of the brick holds liquid or waterAt() > 0.
// - Cost: proportional to burning cells (a walk over a compact sorted array; cells
//   with nothing due this tick cost one compare; neighbour checks use a hash set),
//   never to world size.
//
// Replication: followers burn their cells themselves (followFire). The sweep runs on
// a schedule that depends only on the cell's ignition (start, duration, keyed phase,
// period): its first visit at start + 1 + phase, then every period, the last at the
// end; attempts keep their own schedule. So a follower that knows each cell's
// ignition data (FireChange) makes the same edits at the same ticks, and the server
// sends no sweep edits: only the fire stream's records, written at ignition, when a
// brick's burnt result stops being one material (someone else changed it) and when
// the cell goes out. The sweep burns exactly the flammable voxels it reaches: at
// every position not yet visited the fuel bitmap equals "the voxel burns"
// (scanEdits keeps it so for every other edit, and only fire edits after it in a
// step), so a follower reading its own copy of the brick burns the same voxels. The
// dying phase (intensity to a third at 3/4 of the duration) and a uniform brick's
// final BrickFill follow from the ignition data too. FireState::cells is sorted by
// packCoordId of the brick corner; out records come with an Extinguished event
// giving the cause.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "sim/core/record_fields.h"
#include "sim/core/result.h"
#include "sim/systems/events.h"
#include "sim/systems/internal/fire_set.h"
#include "sim/world/voxel.h"

namespace loam::sim {

class BrickStore;
class SimContext;
class StateHasher;
struct EditRecord;
struct SimSetup;
struct SimState;

inline constexpr std::size_t kMaxIgnitionsPerTick = 256;  ///< new burning cells per tick, at most
inline constexpr std::size_t kMaxFireCells = 1u << 17;     ///< burning cells at most (no ignition beyond)

/// One burning brick: an entry of FireState::cells (intensity 1..255) and a record of
/// the fire state stream, where the brick at `corner` now burns at `intensity` until
/// `endTick`, or is out (intensity 0, endTick 0; the cause is in the matching
/// Extinguished event). Replicated.
struct FireCell {
  VoxelCoord corner;           ///< the brick's minimum voxel corner (each coordinate a multiple of 8)
  std::uint8_t intensity = 0;  ///< 1..255 in FireState::cells; 0 in a stream record = out
  std::uint32_t endTick = 0;   ///< tick at which it burns out unless something changes
  friend bool operator==(const FireCell&, const FireCell&) = default;
};

/// FireCell's fields, in the order the state codec writes and the hashes fold them
/// (sim/core/record_fields.h). The wire's FireRec (net/wire.cpp) holds the same,
/// relative to its interest cell.
inline constexpr std::tuple kFireCellFields{
    field("corner", &FireCell::corner),
    field("intensity", &FireCell::intensity),
    field("endTick", &FireCell::endTick),
};
static_assert(std::tuple_size_v<decltype(kFireCellFields)> == recordFieldCount<FireCell>(),
              "a FireCell field is missing from kFireCellFields");

/// One record of the fire stream (StepOutput::fire): a cell's ignition data, set to
/// value (it caught, or its burnt result stopped being one material), or the cell
/// went out (endTick 0) after this step's sweep. Its current intensity follows from
/// them (peak, a third of it from 3/4 of the duration on). Replicated: what a
/// follower needs to burn the cell itself.
struct FireChange {
  VoxelCoord corner;           ///< the brick's minimum voxel corner
  std::uint32_t start = 0;     ///< ignition tick
  std::uint32_t endTick = 0;   ///< tick it burns out at the latest; 0 = out
  std::uint8_t peak = 0;       ///< intensity while fully burning, 1..255
  std::uint8_t flags = 0;      ///< kFireUniform or 0
  MaterialId result = kAir;    ///< with kFireUniform: what the whole brick becomes
  friend bool operator==(const FireChange&, const FireChange&) = default;
};

/// FireChange's fields, in the order the trace hashes fold them.
inline constexpr std::tuple kFireChangeFields{
    field("corner", &FireChange::corner), field("start", &FireChange::start),
    field("endTick", &FireChange::endTick), field("peak", &FireChange::peak),
    field("flags", &FireChange::flags),   field("result", &FireChange::result),
};
static_assert(std::tuple_size_v<decltype(kFireChangeFields)> == recordFieldCount<FireChange>(),
              "a FireChange field is missing from kFireChangeFields");

/// Bits of FireWork::flags.
enum FireWorkFlag : std::uint8_t {
  kFireDoused = 1u << 0,   ///< liquid arrived in the brick this step
  kFireRemoved = 1u << 1,  ///< foreign edits removed all fuel
  kFireDying = 1u << 2,    ///< past 3/4 of the duration (intensity record sent)
  kFireUniform = 1u << 3,  ///< the burnt brick is all `result`: thin, then one BrickFill
};

/// Working data of one burning cell (parallel to FireState::cells). A follower keeps
/// the sweep's part (start .. permC, peak, flags, result); the rest is the server's.
struct FireWork {
  std::uint32_t start = 0;        ///< ignition tick
  std::uint32_t nextDue = 0;      ///< next tick with something to do (sweep, attempt, phase)
  std::uint32_t nextSweep = 0;    ///< next tick the sweep catches up (its own schedule)
  std::uint32_t nextAttempt = 0;  ///< next spread / rain / water check
  std::uint32_t exposureDue = 0;  ///< tick at which to measure `exposure` again
  std::uint16_t duration = 0;     ///< sweep length, ticks
  std::uint16_t swept = 0;        ///< permutation positions visited, 0..sweepLength
  std::uint16_t sweepLength = 512;  ///< positions the sweep edits one by one (fewer for a uniform result)
  std::uint16_t fuel = 0;         ///< flammable voxels left (foreign edits included)
  std::uint16_t permA = 1, permB = 0, permC = 1;  ///< keyed permutation of 0..511
  std::uint32_t mask = 0;         ///< index of the cell's fuel bitmap in FireState::masks
  std::uint16_t exposure = 0;     ///< exposureAt() of the cell, refreshed every second
  std::uint8_t peak = 0;          ///< intensity while fully burning
  std::uint8_t period = 8;        ///< ticks between attempts
  std::uint8_t flags = 0;         ///< FireWorkFlag bits
  MaterialId result = kAir;       ///< with a uniform result: what the whole brick becomes
};

/// Which of a burning brick's 512 voxels (voxelIndexInBrick) still hold fuel.
using FuelMask = std::array<std::uint64_t, kBrickVoxels / 64>;

/// A spread ignition found during the walk, merged after it (server scratch).
struct FirePending {
  std::uint64_t key = 0;   ///< packCoordId of the cell corner
  VoxelCoord voxel;        ///< the fuel voxel that caught (event position)
  std::uint32_t order = 0; ///< discovery order (ties: first wins)
};

/// Per-material fire properties derived from the material table at init.
struct FireTables {
  std::array<std::uint16_t, 256> flammability{};  ///< per mille; 0 = does not burn
  std::array<std::uint16_t, 256> burnTicks{};     ///< ticks per voxel (clamped to 65535)
  std::array<MaterialId, 256> burnt{};            ///< burnt form
  std::array<std::uint8_t, 256> groundCover{};    ///< 1: ash on solid non-flammable ground, else air (grass)
  std::array<std::uint8_t, 256> roof{};           ///< over a cell: 0 open (air), 1 foliage (lets rain and wind through in part), 2 roof
  MaterialId ash = kAir;
};

/// The fire system's state. `cells` is replicated (sorted by packCoordId of corner);
/// everything else is server-side working data or configuration (empty or unused on
/// mirrors), ignored by hash and diff.
/// A scene [[ignition]] point (sim/gen/scene.h) the step lights: at the step that
/// starts from `tick` (its delay in ticks), before any command, as an ignite by the
/// server at voxel column (x, z): the highest voxel there that collides or burns
/// (onGround; what a script's `server ignite x,z` aims at), else voxel (x, y, z).
struct ScheduledIgnition {
  std::uint64_t tick = 0;
  std::int32_t x = 0, y = 0, z = 0;
  bool onGround = true;
};

struct FireState {
  std::vector<FireCell> cells;        ///< burning cells, sorted by packCoordId(corner)
  std::vector<FireWork> work;         ///< parallel to cells (a follower's: the sweep's part)
  std::vector<FuelMask> masks;        ///< server: fuel bitmaps, FireWork::mask indexes them
  std::vector<std::uint32_t> freeMasks;  ///< server: unused entries of masks
  internal::FireKeySet burning;       ///< server: keys of `cells`, for O(1) neighbour checks
  std::vector<FirePending> pending;   ///< server scratch: this tick's spread ignitions
  std::vector<FireCell> scratchCells; ///< scratch: new cells before merging
  std::vector<FireWork> scratchWork;  ///< scratch: work of new cells before merging
  std::vector<std::uint64_t> outKeys; ///< server scratch: cells out this tick (leave `burning` after the merge)
  FireTables tables;                  ///< from the material table
  /// The scene's ignition points, in scene order; server only (a mirror's is empty:
  /// it follows the fire the server sends). Scene data, not saved: a restored state
  /// at tick T lights the points due at T or later.
  std::vector<ScheduledIgnition> schedule;
};

/// Builds the initial fire state (nothing burns at generation) and its material
/// tables. Allocates (reserves the working arrays).
void initFire(FireState& state, const SimSetup& setup);

/// The scene's ignition points into state.schedule (the server's state and traces;
/// never a mirror's). Allocates.
void scheduleIgnitions(FireState& state, const SimSetup& setup);

/// One tick of fire. See the model above. No allocation once the arrays have grown
/// to the fire's size.
void stepFire(FireState& state, SimContext& ctx);

/// Sets fire to the brick holding `voxel` for a validated ignite command by `by`.
/// Returns false (and changes nothing) when the voxel itself cannot burn, its brick
/// already burns, or kMaxFireCells cells burn. O(cells) (an insertion).
bool igniteFire(FireState& state, SimContext& ctx, VoxelCoord voxel, Actor by);

/// True if the brick holding `voxel` is burning. O(log cells).
bool isBurning(const FireState& state, VoxelCoord voxel);

/// The corner voxel of the fire cell holding `voxel` (its brick's minimum corner).
constexpr VoxelCoord fireCellOf(VoxelCoord voxel) {
  return {voxel.x & ~(kBrickSize - 1), voxel.y & ~(kBrickSize - 1), voxel.z & ~(kBrickSize - 1)};
}

/// Follower side (sim/step/mirror.h): one step of the fire of `mirror` at `tick`,
/// with that step's fire records, after the step's other edits: the records that set
/// ignition data first (a new cell is inserted, a known one loses its uniform
/// result), then every cell in key order runs its due sweep (each voxel at the
/// positions whose turn has come that burns takes its burnt form), its burnt-out
/// fill and its dying phase, as the server's walk did, then the out records remove
/// cells. The edits it makes are applied to mirror.world and appended to *made when
/// given. Ignitions beyond kMaxFireCells are dropped. Work: the due cells' swept
/// positions, records O(log cells) each (an insertion is O(cells)); no allocation
/// beyond growth.
void followFire(SimState& mirror, std::uint32_t tick, std::span<const FireChange> records,
                std::vector<EditRecord>* made);

/// Follower side: the sweeps (and dying phases) due at ticks up to `tick` that
/// the follower has not run yet, each at its own tick's target, in key order: a
/// step the follower did not receive touched none of its cells, so its sweeps burnt
/// nothing there, and running them late, before the next received step's edits,
/// gives what the server did. applyStep calls it with the tick before its step.
void catchUpFire(SimState& mirror, std::uint32_t tick, std::vector<EditRecord>* made);

/// Follower side: inserts (or replaces) burning cells from their ignition data as of
/// `tick` (after that tick's step; a catch-up's whole cell), with the sweep's
/// schedule replayed to that tick. Records with endTick 0, an endTick not after
/// `tick` or a start after it are skipped.
void insertFireCells(FireState& state, std::uint64_t seed, std::uint32_t tick, std::span<const FireChange> cells);

/// Restore side of the state codec (sim/save/state_codec.h): rebuilds the working data
/// (work, fuel masks, key set) of every cell in state.cells from `world` as of `tick`
/// (after that tick's step), as igniteFire built it and the walk advanced it: the
/// keyed permutation, attempt and exposure schedule are replayed, the positions
/// swept by the last visit are done and the fuel is what the others hold. When
/// state.work is parallel to cells, its entries with peak != 0 give each cell's
/// saved ignition (start, peak, kFireUniform flag, result and last exposure; the
/// codec's decoder puts them there); otherwise they are estimated from the fuel left and the saved
/// endTick and intensity. A cell without fuel left goes out at its next visit.
/// Allocates.
void rebuildFireWork(FireState& state, const BrickStore& world, std::uint64_t seed, std::uint32_t tick);

/// Folds the replicated fire state into hasher.
void hashFire(const FireState& state, StateHasher& hasher);

/// The "fire" blob of the state codec (sim/save/state_codec.h): u32 count, then per
/// burning cell (strictly increasing packCoordId of the corner): kFireCellFields
/// (corner a multiple of 8 inside the world, intensity > 0), then the server's
/// ignition data, so a restored server continues the sweep exactly: u32 start
/// (<= endTick), u8 peak, u8 flags (bit 0: the brick burns to one material; bit 7: no
/// ignition data, as written by a mirror), u8 that material, u16 exposure last
/// measured. Allocates as out grows.
void encodeFire(const FireState& fire, std::vector<std::uint8_t>& out);
/// Replaces the burning cells with the blob's (checking every length, order and
/// range; on error the state is untouched) and rebuilds working data consistent
/// with them (seed 0), so the state is safe to step: for mirrors and tests.
Result<void> decodeFire(std::span<const std::uint8_t> bytes, FireState& fire, const BrickStore& world);
/// decodeFire for a server restoring a save: the working data is rebuilt with the
/// world's seed as of `tick` (rebuildFireWork), so the fire continues in lockstep.
Result<void> restoreFire(std::span<const std::uint8_t> bytes, FireState& fire, const BrickStore& world,
                         std::uint64_t seed, std::uint32_t tick);

/// The ignition data of the burning cells inside one interest cell (catch-up after a
/// client was away), sorted by corner. Allocates.
std::vector<FireChange> fireInCell(const FireState& fire, CellCoord cell);

/// First difference between two fire states, or nullopt.
std::optional<std::string> diffFire(const FireState& expected, const FireState& actual);

}  // namespace loam::sim
