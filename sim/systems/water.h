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

class BrickStore;
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
  MaterialId water = kAir;                              ///< the material written for water voxels
  std::size_t pourCapWetVoxels = kMaxPouredWetVoxels;   ///< players' pours stop at this many wet voxels (waterFull)
  bool frozen = false;                                  ///< see the active set above
  std::vector<std::uint64_t> watch;                     ///< while frozen: packCoordId of bricks near the flow, sorted
  std::vector<std::uint64_t> floorChanged;              ///< bricks where a voxel became or stopped being a floor
  internal::WaterRouteSearch search;                    ///< route search in progress
  WaterStats last;                                      ///< counters of the last tick
  internal::WaterScratch scratch;                       ///< reused per tick
};

/// Builds the initial water state: every liquid voxel of the generated world is a
/// full voxel (asleep), plus the scene's sources (awake) and pond outlets. Reads the
/// whole world once (about 0.2 s for glade). Allocates.
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
/// voxels (initWater sets it to the generated water plus kMaxPouredWetVoxels; the
/// generated world alone never fills it). The step refuses players' pours then
/// (RejectReason::WaterLimit); one pour may pass the cap by its own size. O(1).
inline bool waterFull(const WaterState& state) noexcept { return state.grid.size() >= state.pourCapWetVoxels; }

/// The water amount at voxel (0 if dry or outside). O(1): one hash probe. For other
/// systems (fire, motion via voxels). Valid on the server and on mirrors.
std::uint16_t waterAt(const WaterState& state, VoxelCoord voxel);

/// Mirror of a streamed world (sim::createMirrorState): its water starts empty (sized to
/// the world) and grows a column at a time. Reads nothing.
void initMirrorWater(WaterState& state, const WorldBounds& bounds);
/// Mirror of a streamed world: the generated water of column, which must be present in
/// world (every liquid voxel a full cell, as initWater reads it), added to the bricks
/// the state has no record of yet: a brick the mirror already holds (its water came in
/// a CellState, or the column was scanned before it was released) is left as it is.
/// Amounts only; no working data. Allocates for new bricks.
void addColumnWater(WaterState& state, const BrickStore& world, const MaterialLut& lut, ChunkColumn column);

/// Mirror side: applies one step's water changes in order. Allocates only when water
/// reaches a brick the mirror has no record for.
void applyWaterChanges(WaterState& state, std::span<const WaterChange> changes);

/// Restore side of the state codec (sim/save/state_codec.h): makes the amounts exactly
/// `voxels` (every other voxel dry; voxels sorted canonically, amounts 1..kWaterPerVoxel,
/// inside the world), refreshes every brick record's masks from `world` (which may
/// differ from the generated world after applySave), wakes every wet voxel and thaws
/// the system. Writes no voxels and no records. Allocates for new bricks.
void restoreWaterVoxels(WaterState& state, const BrickStore& world, std::span<const WaterChange> voxels);

/// The "water" blob of the state codec (sim/save/state_codec.h): u32 count of bricks
/// holding water (strictly increasing packCoordId, inside the world), per brick: 3 x
/// i32 coordinate, a 64-byte mask of wet voxels (bit i = voxel index i, not all zero),
/// then u16 amount (1..kWaterPerVoxel) per set bit in index order. Every wet voxel;
/// reads only `grid`. Allocates as out grows.
void encodeWater(const WaterState& water, std::vector<std::uint8_t>& out);
/// Replaces the amounts with the blob's (checking every length, order and range; on
/// error the state is untouched) through restoreWaterVoxels, which wakes every wet
/// voxel. A default-constructed state is first sized to the world.
Result<void> decodeWater(std::span<const std::uint8_t> bytes, WaterState& water, const BrickStore& world);
/// The water records inside one interest cell (catch-up after a client was away),
/// sorted by coordinate. Allocates.
std::vector<WaterChange> waterInCell(const WaterState& water, CellCoord cell);

/// Folds the replicated water state into hasher: every brick holding water, in
/// packCoordId order, as its coordinate and 512 amounts. No allocation.
void hashWater(const WaterState& state, StateHasher& hasher);

/// First difference between two water states ("water (x,y,z): expected A, actual
/// B", the first voxel in canonical order), or nullopt.
std::optional<std::string> diffWater(const WaterState& expected, const WaterState& actual);

/// Counters of the last tick and the current state (for tests, benches, metrics).
/// O(queued bricks), no allocation.
WaterStats waterStats(const WaterState& state) noexcept;

}  // namespace loam::sim
