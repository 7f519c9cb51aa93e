// The water system's tick, shared by its parts: constants, cell handles, the Probe
// of one cell as the flow loops see it, and WaterTick (one tick or one pour over a
// WaterState and a step context) with its hot lookups inline. The model is described
// in sim/systems/water.h. Only sim/systems/water*.cpp include this header:
//   water.cpp         init, the mirror side, hashing, diffing, restore (the public API)
//   water_tick.cpp    one tick: edits, the active set, gravity, spreading, sinks,
//                     splashes, pours
//   water_routes.cpp  source routes (where a source's flow goes within the tick)
// Inside the water code (here and in water_grid.h) a "cell" is the water state of one
// voxel: its amount and mask bits, addressed by a handle (brick slot, voxel index).
// The public names in water.h say voxel.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/systems/sim_context.h"
#include "sim/systems/water.h"
#include "sim/world/brick_store.h"

namespace loam::sim::internal::water {

using internal::CellMask;
using internal::kDirX;
using internal::kDirY;
using internal::kDirZ;
using internal::kNoBrick;
using internal::kOutside;
using internal::kVoidCell;
using internal::PondOutlet;
using internal::WaterBrick;
using internal::WaterGrid;
using internal::WaterLanding;
using internal::WaterMove;
using internal::WaterTickBrick;

constexpr std::uint32_t kFull = kWaterPerVoxel;
constexpr std::uint32_t kShowAt = kWaterPerVoxel / 2;     // voxel becomes water at or above
constexpr std::uint32_t kHideBelow = kWaterPerVoxel / 8;  // voxel becomes air below
constexpr std::uint32_t kSpreadMin = kWaterPerVoxel / 8;  // thinner films do not creep onto dry flat ground
constexpr std::uint32_t kSoakBelow = kSpreadMin;          // films that cannot spread soak into porous ground
constexpr int kMaxFall = 1024;                            // voxels a cell may fall in one tick
constexpr int kMaxDisplaceRise = 64;                      // cells displaced water may rise
constexpr int kMaxPourCells = 512;                        // cells a pour may fill upward
constexpr int kSplashMinFall = 8;                         // voxels (40 cm)
constexpr std::uint32_t kSplashOdds = 16;                 // 1 in 16 per landing cell and tick
constexpr int kMaxSplashesPerTick = 2;
constexpr std::uint32_t kSplashDraw = 1;                  // keyed draw index for splashes
constexpr std::int32_t kRouteBudget = 1 << 18;             // neighbour evaluations per route search
constexpr std::int32_t kFlatLimit = 1 << 14;               // cells one flat search may queue
constexpr std::int32_t kRouteStepBudget = 2048;            // evaluations per tick while re-routing
constexpr std::uint64_t kRouteInterval = 8;                // ticks between searches for one source
constexpr int kLateral[4] = {internal::kWest, internal::kEast, internal::kNorth, internal::kSouth};

// A cell handle: slot << 9 | voxel index in the brick.
constexpr std::uint32_t handleOf(std::uint32_t slot, unsigned idx) { return slot << 9 | idx; }
constexpr std::uint32_t slotOf(std::uint32_t h) { return h >> 9; }
constexpr unsigned indexOf(std::uint32_t h) { return h & 511u; }

inline unsigned cellIndex(VoxelCoord v) {
  return static_cast<unsigned>(voxelIndexInBrick(v.x & (kBrickSize - 1), v.y & (kBrickSize - 1), v.z & (kBrickSize - 1)));
}

// The neighbour of cell idx in direction dir: true with its index when it is in the
// same brick, false with its index in the adjacent brick.
inline bool stepIndex(unsigned idx, int dir, unsigned& out) {
  // Per direction: the bits of idx holding the axis, the step, and the wrap to the
  // far side of the adjacent brick.
  static constexpr unsigned kMask[6] = {7u, 7u, 56u, 56u, 448u, 448u};
  static constexpr unsigned kStep[6] = {1u, 1u, 8u, 8u, 64u, 64u};
  const unsigned axis = idx & kMask[dir];
  if ((dir & 1) == 0) {  // towards lower coordinates
    const bool inside = axis != 0;
    out = inside ? idx - kStep[dir] : idx + kMask[dir];
    return inside;
  }
  const bool inside = axis != kMask[dir];
  out = inside ? idx + kStep[dir] : idx - kMask[dir];
  return inside;
}

inline bool inOutlet(const std::vector<PondOutlet>& outlets, VoxelCoord v) {
  for (const PondOutlet& o : outlets) {
    if (v.y != o.y) continue;
    const std::int64_t dx = v.x - o.x, dz = v.z - o.z;
    if (dx * dx + dz * dz < o.radius2) return true;
  }
  return false;
}

// The open and outlet masks of a brick record, from the world (defined in water.cpp).
void initMasks(WaterBrick& b, const BrickStore& world, const WaterState& s);
// The record in slot back to its implicit water, not modified (water.cpp).
void setImplicit(WaterState& s, const BrickStore& world, std::uint32_t slot);
// The record of brick bc, materialised from the world (its masks and implicit water)
// when it has none (water.cpp).
std::uint32_t materialiseBrick(WaterState& s, const BrickStore& world, BrickCoord bc);
// The record of brick bc when it has one or holds a liquid (materialised then), else
// kNoBrick (water.cpp).
std::int32_t wetRecord(WaterState& s, const BrickStore& world, BrickCoord bc);

enum class Kind : std::uint8_t {
  Blocked,  // solid (or above the world)
  Void,     // outside the world's sides or bottom, or a pond outlet cell: water leaves
  Open,     // air or liquid: water may be there
};

// What is at one cell, as the flow loops see it.
struct Probe {
  Kind kind = Kind::Blocked;
  std::int32_t slot = kNoBrick;  // the brick's record, or kNoBrick (no record: implicit water)
  unsigned idx = 0;
  std::uint32_t amount = 0;
  BrickCoord brick;
};

// One tick (or one pour) of the water system over a state and a step context.
class WaterTick {
 public:
  WaterTick(WaterState& s, SimContext& ctx) noexcept : s_(s), g_(s.grid), ctx_(&ctx), world_(ctx.world()) {}
  /// Without a step (world creation): only routeAll() may be called.
  WaterTick(WaterState& s, const BrickStore& world) noexcept : s_(s), g_(s.grid), ctx_(nullptr), world_(world) {}

  void run();
  bool pour(VoxelCoord cell, std::uint32_t amount);
  /// Routes every source now (world creation; no context needed).
  void routeAll();

 private:
  Probe classify(std::int32_t slot, BrickCoord bc, unsigned idx, bool up, bool sinkIsVoid) const;
  Probe neighbour(const Probe& p, int dir, bool sinkIsVoid = true) const;
  Probe neighbourOf(std::uint32_t slot, unsigned idx, int dir, bool sinkIsVoid = true) const;
  Probe at(VoxelCoord v, bool sinkIsVoid) const;
  std::uint32_t materialise(Probe& p);
  bool isDrop(const Probe& p) const;

  WaterTickBrick& scratchOf(std::uint32_t slot);
  void change(std::uint32_t h, std::int32_t delta);
  void setNow(std::uint32_t h, std::uint32_t amount);
  void wake(std::uint32_t slot, unsigned idx);
  bool wakeProbe(Probe p);
  void wakeWetNeighbours(std::uint32_t slot, unsigned idx);
  void record(std::uint32_t slot, unsigned idx, std::uint32_t amount);
  void wakeAround(VoxelCoord v);
  void syncVoxel(VoxelCoord v, std::uint32_t amount);

  void scanEdits();
  void openChanged(VoxelCoord v, bool open);
  void brickFilled(BrickCoord b, MaterialId m);
  void displace(std::uint32_t slot, unsigned idx);
  void begin();
  void routeSources();
  struct Fall;
  Fall landRoute(Probe p);
  void noteRouteBrick(BrickCoord b);
  void startSearch(std::int32_t source);
  void advanceSearch(std::int32_t limit);
  void endSearch(internal::WaterRouteEnd end);
  void deposit(VoxelCoord cell, std::uint32_t amount);
  void floorChanged(std::uint64_t brickKey);
  void gravity();
  void lateral();
  void soak();
  void finish();
  void splashes();
  void applyMoves();
  void freeze();
  void thawIfWatched(BrickCoord b);

  WaterState& s_;
  WaterGrid& g_;
  SimContext* ctx_;
  const BrickStore& world_;
  std::size_t newcomers_ = 0;
  std::size_t changed_ = 0;
};

// ---- lookups -------------------------------------------------------------------------

inline Probe WaterTick::classify(std::int32_t slot, BrickCoord bc, unsigned idx, bool up, bool sinkIsVoid) const {
  Probe p;
  p.slot = slot;
  p.brick = bc;
  p.idx = idx;
  if (slot >= 0) {
    const WaterBrick& b = g_.brick(static_cast<std::uint32_t>(slot));
    if (!internal::testBit(b.open, idx)) return p;
    if (sinkIsVoid && internal::testBit(b.sink, idx)) {
      p.kind = Kind::Void;
      return p;
    }
    p.kind = Kind::Open;
    p.amount = b.amount[idx];
    return p;
  }
  if (slot == kOutside) {
    p.kind = up ? Kind::Blocked : Kind::Void;
    return p;
  }
  // No record: the brick's implicit water (water_grid.h).
  const VoxelCoord v = voxelOfBrick(bc, idx);
  const MaterialId m = world_.get(v);
  if (!s_.open[m]) return p;
  p.kind = sinkIsVoid && inOutlet(s_.outlets, v) ? Kind::Void : Kind::Open;
  if (p.kind == Kind::Open && s_.liquid[m]) p.amount = kFull;
  return p;
}

inline Probe WaterTick::neighbour(const Probe& p, int dir, bool sinkIsVoid) const {
  unsigned nidx = 0;
  if (stepIndex(p.idx, dir, nidx)) return classify(p.slot, p.brick, nidx, dir == internal::kUp, sinkIsVoid);
  const BrickCoord nb{p.brick.x + kDirX[dir], p.brick.y + kDirY[dir], p.brick.z + kDirZ[dir]};
  std::int32_t ns = kOutside;
  if (p.slot >= 0) {
    ns = g_.brick(static_cast<std::uint32_t>(p.slot)).adj[static_cast<std::size_t>(dir)];
  } else if (g_.bounds().containsBrick(nb)) {
    ns = g_.find(nb);  // -1 == kNoBrick
  }
  return classify(ns, nb, nidx, dir == internal::kUp, sinkIsVoid);
}

inline Probe WaterTick::neighbourOf(std::uint32_t slot, unsigned idx, int dir, bool sinkIsVoid) const {
  const WaterBrick& b = g_.brick(slot);
  Probe p;
  p.slot = static_cast<std::int32_t>(slot);
  p.brick = b.coord;
  unsigned nidx = 0;
  if (stepIndex(idx, dir, nidx)) {  // the common case: same brick, no lookup
    p.idx = nidx;
    if (!internal::testBit(b.open, nidx)) return p;
    if (sinkIsVoid && internal::testBit(b.sink, nidx)) {
      p.kind = Kind::Void;
      return p;
    }
    p.kind = Kind::Open;
    p.amount = b.amount[nidx];
    return p;
  }
  p.idx = idx;
  return neighbour(p, dir, sinkIsVoid);
}

inline Probe WaterTick::at(VoxelCoord v, bool sinkIsVoid) const {
  const BrickCoord bc = brickOf(v);
  if (!g_.bounds().containsBrick(bc)) {
    Probe p;
    p.slot = kOutside;
    p.brick = bc;
    p.idx = cellIndex(v);
    p.kind = bc.y >= g_.bounds().maxBrick.y ? Kind::Blocked : Kind::Void;
    return p;
  }
  const std::int32_t s = g_.find(bc);
  return classify(s >= 0 ? s : kNoBrick, bc, cellIndex(v), false, sinkIsVoid);
}

// ---- changes ---------------------------------------------------------------------------

inline WaterTickBrick& WaterTick::scratchOf(std::uint32_t slot) {
  WaterBrick& b = g_.brick(slot);
  internal::WaterScratch& sc = s_.scratch;
  if (b.tick < 0) {
    if (sc.tickUsed == sc.tick.size()) sc.tick.emplace_back();
    WaterTickBrick& tb = sc.tick[sc.tickUsed];
    tb.slot = slot;
    tb.moved = {};
    tb.pending = {};
    b.tick = static_cast<std::int32_t>(sc.tickUsed++);
  }
  return sc.tick[static_cast<std::size_t>(b.tick)];
}

// A change inside the tick's phases: recorded (once per cell) in finish().
inline void WaterTick::change(std::uint32_t h, std::int32_t delta) {
  const std::uint32_t slot = slotOf(h);
  const unsigned idx = indexOf(h);
  WaterTickBrick& tb = scratchOf(slot);
  WaterBrick& b = g_.brick(slot);
  if (!internal::testBit(tb.moved, idx)) {
    internal::setBit(tb.moved, idx);
    tb.start[idx] = b.amount[idx];
  }
  b.amount[idx] = static_cast<std::uint16_t>(static_cast<std::int32_t>(b.amount[idx]) + delta);
}

inline void WaterTick::wake(std::uint32_t slot, unsigned idx) {
  WaterBrick& b = g_.brick(slot);
  if (internal::testBit(b.next, idx)) return;
  internal::setBit(b.next, idx);
  if (!internal::testBit(b.current, idx)) ++newcomers_;
  if (!b.queued) {
    b.queued = true;
    s_.queue.push_back(slot);
  }
}

}  // namespace loam::sim::internal::water
