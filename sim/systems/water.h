// Water system interface. The step calls these functions in the order documented in
// sim/step/step.h; the mirror (sim/step/mirror.h) calls applyWaterChanges; the trace hash calls
// hashWater; the mirror test calls diffWater. The implementation (sim/systems/water*.cpp,
// sim/systems/internal/water_*.h) may change freely behind this interface, including
// WaterState's fields.
//
// The water system: integer amounts per voxel (kWaterPerVoxel units = one full
// voxel), stored per brick (sim/systems/internal/water_grid.h). Each tick, in this order:
//  1. Edits: the edit log written so far this step (commands, weather) is scanned;
//     a voxel that became solid while holding water is emptied and its water pushed
//     up its column into the first voxels with room (lost past 64 voxels); a voxel
//     that opened or closed wakes its wet neighbours.
//  2. Sources: a scene source's flow (litres per second rounded to whole units per
//     tick) follows a cached route within the tick: it falls, moves to the lowest
//     neighbouring surface, crosses flats breadth-first to the nearest way down,
//     and leaves where the route reaches a sink; only where the route ends without
//     a way down (a hole, a basin below its rim) is it deposited into the voxels,
//     which fill until the route (recomputed after a floor it read changes, in
//     slices of 2048 voxel checks per tick) finds the way over the rim. A waterfall
//     starts from the middle of its lip, just past the cliff's slope on the side
//     where the ground drops; a spring from its voxel.
//  3. Gravity (from a snapshot): a voxel with room below moves down as much as fits;
//     over empty voxels it falls straight to where it lands in the same tick.
//  4. Spreading (from the snapshot after gravity): a voxel resting on something
//     solid or full levels with its lower side neighbours (water-filling to a common
//     level); a receiver offered more than its room, or more than would lift it
//     above any of its sources, takes a proportional share. Every flow moves water
//     from higher to lower without overshoot, so totals are exact and water settles
//     (levelled to within a couple of units per voxel) instead of oscillating. A
//     film thinner than kWaterPerVoxel / 8 does not creep onto dry flat ground, only
//     over edges.
//  5. Sinks: water leaves past the world's sides or bottom, at a pond's outlet (the
//     layer just above its generated surface, inside its radius: the pond overflows
//     instead of flooding the world) and on a stream's surface (below). A film under
//     kWaterPerVoxel / 8 on soil, grass, sand or gravel soaks away one unit per tick.
// Both flow phases compute every flow from the same snapshot and then apply them, so
// the result does not depend on processing order; voxels are processed, and records
// written, in canonical order (brick packCoordId, then voxel index). No floats
// after init, no randomness in the flow (splash events use keyed draws).
//
// Generated water: ponds are free water (a hole dug under a pond drains it). A
// stream's generated water is held at its level (streams flow, but the voxels do not
// carry that flow: its generated staircase of levels would otherwise drain away at
// the first disturbance): held voxels stay full, feed holes dug beside or under them,
// and the open voxels on the stream's surface are sinks (water reaching the stream
// is carried away). All generated water starts asleep.
//
// Active set: only voxels whose amount changed, their wet neighbours and voxels woken
// by edits or pours are processed next tick; everything else sleeps. When a tick
// changes no amount and wakes nothing new while sources deposit (a steady flow), the
// next tick would repeat it exactly, so the system freezes until a pour, an edit
// waking a wet voxel, or an edit in a brick of the frozen flow or of a route.
//
// Voxels: the store holds the water material where a voxel holds at least half a
// voxel (set when the amount reaches kWaterPerVoxel / 2, cleared when it falls
// below kWaterPerVoxel / 8: hysteresis keeps thin flows from flickering in the edit
// log), written through ctx.setVoxel, so clients, motion (swimming) and audio see
// water in the world. Water only enters voxels that are air or liquid.
//
// Splash: falling water that lands in water after at least 8 voxels (40 cm), and a
// source's first fall of at least 8 voxels, may splash (a keyed 1-in-16 draw per
// landing and tick, at most 2 events per tick); every successful pour splashes where
// it lands.
//
// Known gaps: edits made after water in a step (fire burning a wall away) are seen
// only when something else wakes the voxels next to them. The active set and routes
// are server working data: a server restarted from a save must rebuild them (wake
// every voxel that is not at rest) to continue identically.
//
// The contract every system keeps is in sim/systems.h.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/core/result.h"
#include "sim/systems/internal/water_grid.h"
#include "sim/world/column_source.h"
#include "sim/world/voxel.h"

namespace loam::sim {
class TerrainSampler;
}

namespace loam::sim {

class BrickStore;
class MaterialTable;
class SimContext;
class StateHasher;
struct MaterialLut;
struct SimSetup;

inline constexpr std::uint32_t kWaterPerVoxel = 256;     ///< water units in one full voxel
inline constexpr std::uint32_t kMaxPourAmount = 64 * kWaterPerVoxel;  ///< largest single pour
/// Wet voxels players may add to the world beyond its generated water (about 125 m^3
/// of 5 cm voxels): the global cap on poured water, which bounds the water system's
/// memory and per-tick work however many players pour.
inline constexpr std::size_t kMaxPouredWetVoxels = std::size_t{1} << 20;

/// One record of the water state stream: `voxel` now holds `amount` (0 = dry).
struct WaterChange {
  VoxelCoord voxel;
  std::uint16_t amount = 0;  ///< water units, 0..kWaterPerVoxel
  friend bool operator==(const WaterChange&, const WaterChange&) = default;
};

/// Counters for tests, benchmarks and metrics.
struct WaterStats {
  std::size_t wetVoxels = 0;       ///< voxels holding water
  std::size_t bricks = 0;          ///< bricks with a water record
  std::size_t processedVoxels = 0; ///< voxels the last tick processed (0 when frozen or settled)
  std::size_t activeVoxels = 0;    ///< voxels queued for the next tick (kept while frozen)
  std::size_t changedVoxels = 0;   ///< voxels whose amount the last tick changed
  bool frozen = false;             ///< steady flow: ticks are skipped until something wakes it
};

/// The water system's state. `grid` (the amounts) is replicated; everything else
/// is server-side working data, ignored by hash and diff. Copyable.
struct WaterState {
  internal::WaterGrid grid;                             ///< replicated amounts, by brick
  std::vector<internal::WaterSourceRoute> sources;      ///< scene sources (working data from here on)
  std::vector<internal::PondOutlet> outlets;            ///< pond overflow layers
  std::vector<std::uint32_t> queue;                     ///< slots with voxels in the active set
  std::array<std::uint8_t, 256> open{};                 ///< per material: water may be there (air, liquid)
  std::array<std::uint8_t, 256> porous{};               ///< per material: thin films soak into it
  std::array<std::uint8_t, 256> liquid{};               ///< per material: a liquid (implicit water)
  MaterialId water = kAir;                              ///< the material written for water voxels
  std::size_t pourCapWetVoxels = kMaxPouredWetVoxels;   ///< players' pours stop at this many wet voxels (waterFull)
  bool frozen = false;                                  ///< see the active set above
  std::vector<std::uint64_t> watch;                     ///< while frozen: packCoordId of bricks near the flow, sorted
  std::vector<std::uint64_t> floorChanged;              ///< bricks where a voxel became or stopped being a floor
  internal::WaterRouteSearch search;                    ///< route search in progress
  /// The generator's view of streams' and rivers' channels: which generated water is
  /// held (read when a brick gets its record); null when the scene has neither.
  std::shared_ptr<const TerrainSampler> channels;
  std::vector<internal::PondDisc> pondDiscs;            ///< ponds: their water is free, even in a channel
  WaterStats last;                                      ///< counters of the last tick
  internal::WaterScratch scratch;                       ///< reused per tick
};

/// Builds the initial water state: the generated world's liquid voxels are full and
/// asleep, implicitly (no records; a brick's record, made when water there is first
/// disturbed, marks the streams' and rivers' water in it held), plus the scene's
/// sources (awake) and pond outlets. Allocates.
void initWater(WaterState& state, const SimSetup& setup);

/// One tick of water (the contract is in sim/systems.h).
void stepWater(WaterState& state, SimContext& ctx);

/// Adds `amount` units at `voxel` for a validated pour command (the step has checked
/// reach, bounds and amount). The water drops to where it lands and fills voxels
/// upward from there (a pour of n voxels into a narrow hole stands n voxels high and
/// then spreads); what finds no room within 512 voxels is not poured. Records,
/// voxel edits and a splash event are written at once. Returns false when nothing
/// could be poured there (solid target, or nothing below it inside the world); then
/// nothing changed.
bool pourWater(WaterState& state, SimContext& ctx, VoxelCoord voxel, std::uint32_t amount);

/// Whether the world holds as much water as players may pour: pourCapWetVoxels wet
/// voxels in records (initWater sets it to the records' water plus
/// kMaxPouredWetVoxels and materialising a brick raises it by the brick's implicit
/// water, so the generated world alone never fills it). The step refuses players' pours then
/// (RejectReason::WaterLimit); one pour may pass the cap by its own size. O(1).
inline bool waterFull(const WaterState& state) noexcept { return state.grid.size() >= state.pourCapWetVoxels; }

/// The water amount at voxel (0 if dry or outside): its record's, or its implicit
/// water (full where world holds a liquid). O(1): one hash probe and at most one read
/// of world. For other systems (fire, motion via voxels). Valid on the server and on
/// mirrors.
std::uint16_t waterAt(const WaterState& state, const BrickStore& world, VoxelCoord voxel);

/// Before the step writes to brick b of world (SimContext::setVoxel and fillBrick): a
/// brick without a record that holds a liquid gets its record now, with its implicit
/// water, so the water that the write displaces is there to be displaced. O(1) for a
/// brick with a record; else a read of the brick's palette. Allocates for a new record.
void materialiseWaterForWrite(WaterState& state, const BrickStore& world, BrickCoord b);

/// Mirror (sim::createMirrorState): no records (all water implicit) and the material
/// tables. Reads nothing.
void initMirrorWater(WaterState& state, const BrickStore& world, const MaterialTable& materials);

/// Mirror side: applies one step's water changes in order, materialising a brick from
/// world (which must hold this step's edits) when it has no record, and marks their
/// bricks modified. Allocates only when water reaches a brick without a record.
void applyWaterChanges(WaterState& state, const BrickStore& world, std::span<const WaterChange> changes);

/// Mirror side, before a full CellState: every modified brick of cell back to its
/// implicit water from world (the CellState then brings the server's modified bricks).
void resetWaterInCell(WaterState& state, const BrickStore& world, CellCoord cell);

/// Restore side of the state codec (sim/save/state_codec.h): the bricks of `voxels`
/// become modified records holding exactly those voxels (the rest of such a brick dry;
/// voxels sorted canonically, amounts 1..kWaterPerVoxel, inside the world); every other
/// record goes back to its implicit water from `world` (which may differ from the
/// generated world after applySave), with its masks refreshed. Wakes every wet voxel
/// of the modified bricks and of the records around them, and thaws the system.
/// Writes no voxels. Allocates for new bricks.
void restoreWaterVoxels(WaterState& state, const BrickStore& world, std::span<const WaterChange> voxels);

/// The "water" blob of the state codec (sim/save/state_codec.h): u32 count of modified
/// bricks holding water (strictly increasing packCoordId, inside the world), per brick:
/// 3 x i32 coordinate, a 64-byte mask of wet voxels (bit i = voxel index i, not all
/// zero), then u16 amount (1..kWaterPerVoxel) per set bit in index order. Every other
/// brick holds its implicit water (an old save listing unmodified bricks restores the
/// same amounts). Reads only `grid`. Allocates as out grows.
void encodeWater(const WaterState& water, std::vector<std::uint8_t>& out);
/// Replaces the amounts with the blob's (checking every length, order and range; on
/// error the state is untouched) through restoreWaterVoxels, which wakes every wet
/// voxel. A default-constructed state is first sized to the world.
Result<void> decodeWater(std::span<const std::uint8_t> bytes, WaterState& water, const BrickStore& world);
/// The wet voxels of the modified bricks inside one interest cell (catch-up after a
/// client was away: with resetWaterInCell and applyWaterChanges it makes a mirror's
/// cell equal), sorted by coordinate. Allocates.
std::vector<WaterChange> waterInCell(const WaterState& water, CellCoord cell);

/// Folds the replicated water state into hasher: every modified brick holding water,
/// in packCoordId order, as its coordinate and 512 amounts, then their count. No
/// allocation.
void hashWater(const WaterState& state, StateHasher& hasher);

/// First difference between two water states in their modified bricks ("water
/// (x,y,z): expected A, actual B", the first voxel in canonical order), or nullopt.
std::optional<std::string> diffWater(const WaterState& expected, const WaterState& actual);

/// Counters of the last tick and the current state (for tests, benches, metrics).
/// O(queued bricks), no allocation.
WaterStats waterStats(const WaterState& state) noexcept;

}  // namespace loam::sim
