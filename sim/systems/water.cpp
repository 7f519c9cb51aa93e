// The water system. The model, its phases, sinks, the active set and the voxel
// policy are described at the top of sim/systems/water.h; the storage in
// sim/systems/internal/water_grid.h.
#include "sim/systems/water.h"

#include <algorithm>
#include <cmath>

#include "sim/world/brick_store.h"
#include "sim/core/internal/format.h"
#include "sim/core/keyed_random.h"
#include "sim/world/material.h"
#include "sim/systems/motion.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/core/state_hasher.h"

namespace loam::sim {

namespace {

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

VoxelCoord cellCoord(BrickCoord b, unsigned idx) {
  return {b.x * kBrickSize + static_cast<std::int32_t>(idx & 7u), b.y * kBrickSize + static_cast<std::int32_t>((idx >> 3) & 7u),
          b.z * kBrickSize + static_cast<std::int32_t>(idx >> 6)};
}

unsigned cellIndex(VoxelCoord v) {
  return static_cast<unsigned>(voxelIndexInBrick(v.x & (kBrickSize - 1), v.y & (kBrickSize - 1), v.z & (kBrickSize - 1)));
}

// The neighbour of cell idx in direction dir: true with its index when it is in the
// same brick, false with its index in the adjacent brick.
bool stepIndex(unsigned idx, int dir, unsigned& out) {
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

std::int32_t splashSpeed(std::int32_t fall) {
  // v = sqrt(2 g h) in mm/s with g = 9810 mm/s^2 and h = fall * 50 mm.
  return static_cast<std::int32_t>(isqrt64(std::uint64_t{981000} * static_cast<std::uint64_t>(fall < 0 ? 0 : fall)));
}

bool inOutlet(const std::vector<PondOutlet>& outlets, VoxelCoord v) {
  for (const PondOutlet& o : outlets) {
    if (v.y != o.y) continue;
    const std::int64_t dx = v.x - o.x, dz = v.z - o.z;
    if (dx * dx + dz * dz < o.radius2) return true;
  }
  return false;
}

// The open and outlet masks of a brick record, from the world.
void initMasks(WaterBrick& b, const BrickStore& world, const WaterState& s) {
  const BrickView view = world.brick(b.coord);
  b.open = {};
  if (view.isUniform()) {
    if (s.open[view.uniformMaterial()]) b.open.fill(~std::uint64_t{0});
  } else {
    MaterialId m[kBrickVoxels];
    view.decode(m);
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) {
      if (s.open[m[i]]) internal::setBit(b.open, i);
    }
  }
  b.sink = {};
  for (const PondOutlet& o : s.outlets) {
    const int ly = o.y - b.coord.y * kBrickSize;
    if (ly < 0 || ly >= kBrickSize) continue;
    for (int lz = 0; lz < kBrickSize; ++lz) {
      for (int lx = 0; lx < kBrickSize; ++lx) {
        const std::int64_t dx = b.coord.x * kBrickSize + lx - o.x, dz = b.coord.z * kBrickSize + lz - o.z;
        if (dx * dx + dz * dz < o.radius2) internal::setBit(b.sink, static_cast<unsigned>(voxelIndexInBrick(lx, ly, lz)));
      }
    }
  }
}

enum class Kind : std::uint8_t {
  Blocked,  // solid (or above the world)
  Void,     // outside the world's sides or bottom, or a pond outlet cell: water leaves
  Open,     // air or liquid: water may be there
};

// What is at one cell, as the flow loops see it.
struct Probe {
  Kind kind = Kind::Blocked;
  std::int32_t slot = kNoBrick;  // the brick's record, or kNoBrick (no record: dry)
  unsigned idx = 0;
  std::uint32_t amount = 0;
  BrickCoord brick;
};

// One tick (or one pour) of the water system over a state and a step context.
class WaterTick {
 public:
  WaterTick(WaterState& s, SimContext& ctx) noexcept : s_(s), g_(s.cells), ctx_(&ctx), world_(ctx.world()) {}
  /// Without a step (world creation): only routeAll() may be called.
  WaterTick(WaterState& s, const BrickStore& world) noexcept : s_(s), g_(s.cells), ctx_(nullptr), world_(world) {}

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
  void wakeWetNeighbours(std::uint32_t slot, unsigned idx);
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
  const VoxelCoord v = cellCoord(bc, idx);
  if (!s_.open[world_.get(v)]) return p;
  p.kind = sinkIsVoid && inOutlet(s_.outlets, v) ? Kind::Void : Kind::Open;
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

// The handle of an open cell, creating its brick's record when it has none.
std::uint32_t WaterTick::materialise(Probe& p) {
  if (p.slot < 0) {
    const std::int32_t found = g_.find(p.brick);
    if (found >= 0) {
      p.slot = found;
    } else {
      const std::uint32_t slot = g_.add(p.brick);
      initMasks(g_.brick(slot), world_, s_);
      p.slot = static_cast<std::int32_t>(slot);
    }
  }
  return handleOf(static_cast<std::uint32_t>(p.slot), p.idx);
}

// True when water moved into p would fall on (nothing solid or full under it).
bool WaterTick::isDrop(const Probe& p) const {
  const Probe b = neighbour(p, internal::kDown);
  return b.kind == Kind::Void || (b.kind == Kind::Open && b.amount < kFull);
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

// A change outside the phases (pour, displacement): recorded, synced and woken now.
void WaterTick::setNow(std::uint32_t h, std::uint32_t amount) {
  const std::uint32_t slot = slotOf(h);
  const unsigned idx = indexOf(h);
  const WaterBrick& b = g_.brick(slot);
  if (b.amount[idx] == amount) return;
  if ((b.amount[idx] >= kFull) != (amount >= kFull)) floorChanged(b.key);
  g_.setAmount(slot, idx, static_cast<std::uint16_t>(amount));
  const VoxelCoord v = cellCoord(b.coord, idx);
  ctx_->output().water.push_back(WaterChange{v, static_cast<std::uint16_t>(amount)});
  syncVoxel(v, amount);
  if (amount > 0) wake(slot, idx);
  wakeWetNeighbours(slot, idx);
  s_.frozen = false;
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

void WaterTick::wakeWetNeighbours(std::uint32_t slot, unsigned idx) {
  for (int d = 0; d < 6; ++d) {
    const Probe n = neighbourOf(slot, idx, d, false);
    if (n.kind == Kind::Open && n.slot >= 0 && n.amount > 0) wake(static_cast<std::uint32_t>(n.slot), n.idx);
  }
}

// Wakes the wet cells at and next to v (after an edit there).
void WaterTick::wakeAround(VoxelCoord v) {
  for (int d = -1; d < 6; ++d) {
    const VoxelCoord c = d < 0 ? v : VoxelCoord{v.x + kDirX[d], v.y + kDirY[d], v.z + kDirZ[d]};
    const Probe p = at(c, false);
    if (p.slot >= 0 && p.kind == Kind::Open && p.amount > 0) {
      wake(static_cast<std::uint32_t>(p.slot), p.idx);
      s_.frozen = false;
    }
  }
}

// Keeps the store's water voxels in step with the amounts (with hysteresis).
void WaterTick::syncVoxel(VoxelCoord v, std::uint32_t amount) {
  if (s_.water == kAir) return;
  if (amount >= kShowAt) {
    if (world_.get(v) == kAir) ctx_->setVoxel(v, s_.water);
  } else if (amount < kHideBelow) {
    const MaterialId m = world_.get(v);
    if (m != kAir && s_.open[m]) ctx_->setVoxel(v, kAir);
  }
}

// ---- edits -----------------------------------------------------------------------------

void WaterTick::scanEdits() {
  // Index loop over the records present now: displacement appends voxel edits.
  const std::size_t n = ctx_->output().edits.size();
  for (std::size_t i = 0; i < n; ++i) {
    const EditRecord e = ctx_->output().edits[i];
    switch (e.kind) {
      case EditRecord::Kind::Voxel: {
        const bool now = s_.open[e.after] != 0;
        if ((s_.open[e.before] != 0) == now) break;  // water writes, wood -> charcoal, ...
        openChanged(VoxelCoord{e.x, e.y, e.z}, now);
        break;
      }
      case EditRecord::Kind::BrickFill:
        brickFilled(BrickCoord{e.x, e.y, e.z}, e.after);
        break;
    }
  }
}

// While frozen, an edit in or next to a brick of the steady flow resumes it (the
// flow's dry cells, such as fall paths, would not be woken otherwise).
void WaterTick::thawIfWatched(BrickCoord b) {
  const std::uint64_t k = packCoordId(b.x, b.y, b.z);
  floorChanged(k);  // for the source routes
  if (!s_.frozen) return;
  if (std::binary_search(s_.watch.begin(), s_.watch.end(), k)) s_.frozen = false;
  for (const internal::WaterSourceRoute& r : s_.sources) {
    if (std::binary_search(r.watch.begin(), r.watch.end(), k)) s_.frozen = false;
  }
}

void WaterTick::openChanged(VoxelCoord v, bool open) {
  thawIfWatched(brickOf(v));
  const std::int32_t s = g_.find(brickOf(v));
  if (s >= 0) {
    const auto slot = static_cast<std::uint32_t>(s);
    const unsigned idx = cellIndex(v);
    WaterBrick& b = g_.brick(slot);
    if (open) {
      internal::setBit(b.open, idx);
    } else {
      internal::clearBit(b.open, idx);
      internal::clearBit(b.held, idx);
      if (b.amount[idx] > 0) displace(slot, idx);
    }
  }
  wakeAround(v);
}

void WaterTick::brickFilled(BrickCoord bc, MaterialId m) {
  thawIfWatched(bc);
  const std::int32_t s = g_.find(bc);
  if (s >= 0) {
    const auto slot = static_cast<std::uint32_t>(s);
    const bool open = s_.open[m] != 0;
    g_.brick(slot).open.fill(open ? ~std::uint64_t{0} : 0);
    if (!open) {
      g_.brick(slot).held = {};
      for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) {
        if (g_.brick(slot).amount[i] > 0) displace(slot, i);
      }
    }
  }
  // Wake every wet cell in the brick and its six neighbours.
  for (int d = -1; d < 6; ++d) {
    const BrickCoord nb = d < 0 ? bc : BrickCoord{bc.x + kDirX[d], bc.y + kDirY[d], bc.z + kDirZ[d]};
    const std::int32_t ns = g_.find(nb);
    if (ns < 0) continue;
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) {
      if (g_.brick(static_cast<std::uint32_t>(ns)).amount[i] > 0) {
        wake(static_cast<std::uint32_t>(ns), i);
        s_.frozen = false;
      }
    }
  }
}

// The cell became solid: its water rises up the column into the first cells with
// room (through solid too, at most kMaxDisplaceRise cells); what finds none is lost.
void WaterTick::displace(std::uint32_t slot, unsigned idx) {
  std::uint32_t rest = g_.brick(slot).amount[idx];
  setNow(handleOf(slot, idx), 0);
  Probe p;
  p.slot = static_cast<std::int32_t>(slot);
  p.idx = idx;
  p.brick = g_.brick(slot).coord;
  for (int k = 0; k < kMaxDisplaceRise && rest > 0; ++k) {
    p = neighbour(p, internal::kUp, false);
    if (p.slot == kOutside) break;
    if (p.kind != Kind::Open || p.amount >= kFull) continue;
    const std::uint32_t put = std::min(kFull - p.amount, rest);
    setNow(materialise(p), p.amount + put);
    rest -= put;
  }
}

// ---- the tick --------------------------------------------------------------------------

void WaterTick::run() {
  scanEdits();
  internal::WaterScratch& sc = s_.scratch;
  if (s_.frozen) {
    // A steady flow: this tick would repeat the last one exactly (see water.h). The
    // edits above touched no route (they would have thawed it).
    s_.floorChanged.clear();
    splashes();
    s_.last.processedCells = 0;
    s_.last.changedCells = 0;
    return;
  }
  begin();
  routeSources();
  gravity();
  lateral();
  soak();
  finish();
  s_.last.processedCells = sc.cells.size();
  s_.last.changedCells = changed_;
  if (changed_ == 0 && newcomers_ == 0 && !sc.cells.empty() && !s_.sources.empty()) freeze();
}

// The last tick changed nothing and woke nothing new: every following tick would
// repeat it. Remember the bricks around the flow (the processed cells and the fall
// paths, with a one-brick margin) so that an edit there resumes it.
void WaterTick::freeze() {
  internal::WaterScratch& sc = s_.scratch;
  s_.frozen = true;
  s_.watch.clear();
  auto around = [&](BrickCoord b) {
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) s_.watch.push_back(packCoordId(b.x + dx, b.y + dy, b.z + dz));
  };
  for (const std::uint32_t slot : sc.bricks) around(g_.brick(slot).coord);
  for (const WaterLanding& f : sc.falls) {
    const BrickCoord top = brickOf(f.cell);
    const std::int32_t bottom = (f.cell.y - f.fall) >> kBrickShift;
    for (std::int32_t y = top.y; y >= bottom; --y) around(BrickCoord{top.x, y, top.z});
  }
  std::sort(s_.watch.begin(), s_.watch.end());
  s_.watch.erase(std::unique(s_.watch.begin(), s_.watch.end()), s_.watch.end());
}

// Takes the active set: cells queued last tick become this tick's cells, in
// canonical order.
void WaterTick::begin() {
  internal::WaterScratch& sc = s_.scratch;
  sc.bricks.swap(s_.queue);
  s_.queue.clear();
  std::sort(sc.bricks.begin(), sc.bricks.end(),
            [&](std::uint32_t a, std::uint32_t b) { return g_.brick(a).key < g_.brick(b).key; });
  sc.cells.clear();
  for (const std::uint32_t slot : sc.bricks) {
    WaterBrick& b = g_.brick(slot);
    b.queued = false;
    b.current = b.next;
    b.next = {};
    for (int w = 0; w < internal::kCellMaskWords; ++w) {
      for (std::uint64_t bits = b.current[static_cast<std::size_t>(w)]; bits != 0; bits &= bits - 1) {
        sc.cells.push_back(handleOf(slot, static_cast<unsigned>(w * 64 + std::countr_zero(bits))));
      }
    }
  }
  newcomers_ = 0;
  changed_ = 0;
  sc.landings.clear();
}

// ---- source routes -----------------------------------------------------------------------

// A source's flow does not enter the cell simulation where it only passes: each tick
// it follows its route (fall, then always to the lowest neighbouring surface, across
// flats to the nearest way down) within the tick, and enters cells only where the
// route ends without a way down (a hole or a basin below its rim), which then fills
// until the route finds the way over the rim. A route that reaches the world's edge
// or a pond outlet costs nothing per tick. Routes read floors only (solid or full
// cells; thinner water is passed over), are cached, and are recomputed (at most
// every kRouteInterval ticks) after a floor changes in a brick they read.
struct WaterTick::Fall {
  bool leaves = false;  // reached the world's edge or an outlet
  Probe cell;           // the cell resting on a floor
  std::int32_t fall = 0;
  bool onWater = false;  // the floor is full water
};

std::int32_t yOf(const Probe& p) { return p.brick.y * kBrickSize + static_cast<std::int32_t>((p.idx >> 3) & 7u); }

// Inserts key + 1 into an open-addressing set; true when it was not there.
bool insertKey(std::vector<std::uint64_t>& t, std::uint64_t key) {
  const std::uint64_t k = key + 1;
  const std::size_t mask = t.size() - 1;
  for (std::size_t i = detail::mix64(k) & mask;; i = (i + 1) & mask) {
    if (t[i] == k) return false;
    if (t[i] == 0) {
      t[i] = k;
      return true;
    }
  }
}

// True when key is in a set built by insertKey.
bool containsKey(const std::vector<std::uint64_t>& t, std::uint64_t key) {
  const std::uint64_t k = key + 1;
  const std::size_t mask = t.size() - 1;
  for (std::size_t i = detail::mix64(k) & mask;; i = (i + 1) & mask) {
    if (t[i] == k) return true;
    if (t[i] == 0) return false;
  }
}

void WaterTick::noteRouteBrick(BrickCoord b) {
  internal::WaterRouteSearch& q = s_.search;
  const std::uint64_t k = packCoordId(b.x, b.y, b.z);
  if (!q.bricks.empty() && q.bricks.back() == k) return;
  if (q.bricks.size() * 2 < q.brickSeen.size() && !insertKey(q.brickSeen, k)) return;
  q.bricks.push_back(k);  // (past the set's capacity duplicates are kept; sorted out at the end)
}

WaterTick::Fall WaterTick::landRoute(Probe p) {
  Fall f;
  for (int k = 0; k < kMaxFall; ++k) {
    noteRouteBrick(p.brick);
    const Probe b = neighbour(p, internal::kDown);
    if (b.kind == Kind::Void) {
      f.leaves = true;
      return f;
    }
    noteRouteBrick(b.brick);
    if (b.kind == Kind::Blocked || b.amount >= kFull) {
      f.cell = p;
      f.onWater = b.kind == Kind::Open;
      return f;
    }
    p = b;
    ++f.fall;
  }
  f.cell = p;
  return f;
}

void WaterTick::startSearch(std::int32_t source) {
  internal::WaterRouteSearch& q = s_.search;
  q.source = source;
  q.flat = false;
  q.stale = false;
  q.used = 0;
  q.seenCount = 0;
  q.fall = 0;
  q.landsInWater = false;
  q.queue.clear();
  q.bricks.clear();
  std::fill(q.seen.begin(), q.seen.end(), 0);
  std::fill(q.brickSeen.begin(), q.brickSeen.end(), 0);
  const Probe p = at(s_.sources[static_cast<std::size_t>(source)].start, true);
  noteRouteBrick(p.brick);
  if (p.kind == Kind::Blocked) return endSearch(internal::WaterRouteEnd::Blocked);
  if (p.kind == Kind::Void) return endSearch(internal::WaterRouteEnd::Leaves);
  const Fall first = landRoute(p);
  if (first.leaves) return endSearch(internal::WaterRouteEnd::Leaves);
  q.landing = cellCoord(first.cell.brick, first.cell.idx);
  q.fall = first.fall;
  q.landsInWater = first.onWater;
  q.cur = q.landing;
}

// Advances the search by about `limit` neighbour evaluations: down to the lowest
// neighbouring surface while there is one; on a flat, breadth-first (fixed neighbour
// order) over the cells resting at that height for the nearest way down.
void WaterTick::advanceSearch(std::int32_t limit) {
  internal::WaterRouteSearch& q = s_.search;
  for (std::int32_t spent = 0; q.source >= 0 && spent < limit;) {
    if (q.used >= kRouteBudget) return endSearch(internal::WaterRouteEnd::Collects);
    if (!q.flat) {
      const Probe cur = at(q.cur, true);
      const std::int32_t y = q.cur.y;
      bool lower = false;
      Probe best;
      std::int32_t bestY = y;
      for (const int dir : kLateral) {
        const Probe n = neighbour(cur, dir);
        noteRouteBrick(n.brick);
        ++q.used;
        ++spent;
        if (n.kind == Kind::Blocked) continue;
        if (n.kind == Kind::Void) return endSearch(internal::WaterRouteEnd::Leaves);
        const Fall l = landRoute(n);
        if (l.leaves) return endSearch(internal::WaterRouteEnd::Leaves);
        if (yOf(l.cell) < bestY) {
          bestY = yOf(l.cell);
          best = l.cell;
          lower = true;
        }
      }
      if (lower) {
        q.cur = cellCoord(best.brick, best.idx);
        continue;
      }
      q.flat = true;
      q.flatY = y;
      q.queue.clear();
      q.head = 0;
      q.queue.push_back(q.cur);
      if (insertKey(q.seen, packCoordId(q.cur.x, q.cur.y, q.cur.z))) ++q.seenCount;
      continue;
    }
    if (q.head >= q.queue.size() || q.queue.size() >= static_cast<std::size_t>(kFlatLimit) ||
        q.seenCount * 2 >= q.seen.size()) {
      return endSearch(internal::WaterRouteEnd::Collects);  // no way down: the water collects here
    }
    const Probe c = at(q.queue[q.head++], true);
    for (const int dir : kLateral) {
      const Probe n = neighbour(c, dir);
      noteRouteBrick(n.brick);
      ++q.used;
      ++spent;
      if (n.kind == Kind::Blocked) continue;
      if (n.kind == Kind::Void) return endSearch(internal::WaterRouteEnd::Leaves);
      const Fall l = landRoute(n);
      if (l.leaves) return endSearch(internal::WaterRouteEnd::Leaves);
      if (yOf(l.cell) < q.flatY) {
        q.cur = cellCoord(l.cell.brick, l.cell.idx);
        q.flat = false;
        break;
      }
      const VoxelCoord nv = cellCoord(n.brick, n.idx);
      if (l.fall == 0 && insertKey(q.seen, packCoordId(nv.x, nv.y, nv.z))) {
        q.queue.push_back(nv);
        ++q.seenCount;
      }
    }
  }
}

// Installs the finished search as its source's route.
void WaterTick::endSearch(internal::WaterRouteEnd end) {
  internal::WaterRouteSearch& q = s_.search;
  internal::WaterSourceRoute& r = s_.sources[static_cast<std::size_t>(q.source)];
  r.end = end;
  r.collect = q.cur;
  r.landing = q.landing;
  r.fall = q.fall;
  r.landsInWater = q.landsInWater;
  r.searched = q.used;
  r.valid = !q.stale;
  std::sort(q.bricks.begin(), q.bricks.end());
  q.bricks.erase(std::unique(q.bricks.begin(), q.bricks.end()), q.bricks.end());
  r.watch.assign(q.bricks.begin(), q.bricks.end());
  q.source = -1;
}

void WaterTick::routeAll() {
  for (std::size_t i = 0; i < s_.sources.size(); ++i) {
    startSearch(static_cast<std::int32_t>(i));
    advanceSearch(kRouteBudget + 8);
    s_.sources[i].routedTick = 0;
  }
}

// Water the route brings to where it collects: into the cell and up its column.
void WaterTick::deposit(VoxelCoord cell, std::uint32_t amount) {
  Probe p = at(cell, true);
  for (int k = 0; k < kMaxDisplaceRise && amount > 0; ++k) {
    if (p.kind != Kind::Open) return;  // an outlet takes it; a solid roof: a stale route, lost
    if (p.amount < kFull) {
      const std::uint32_t put = std::min(kFull - p.amount, amount);
      change(materialise(p), static_cast<std::int32_t>(put));
      amount -= put;
    }
    p = neighbour(p, internal::kUp);
  }
}

void WaterTick::floorChanged(std::uint64_t brickKey) {
  std::vector<std::uint64_t>& v = s_.floorChanged;
  if (v.empty() || v.back() != brickKey) v.push_back(brickKey);
}

void WaterTick::routeSources() {
  internal::WaterRouteSearch& q = s_.search;
  for (const std::uint64_t k : s_.floorChanged) {
    for (internal::WaterSourceRoute& r : s_.sources) {
      if (r.valid && std::binary_search(r.watch.begin(), r.watch.end(), k)) r.valid = false;
    }
    if (q.source >= 0 && !q.stale && containsKey(q.brickSeen, k)) q.stale = true;
  }
  s_.floorChanged.clear();
  if (q.source < 0) {
    for (std::size_t i = 0; i < s_.sources.size(); ++i) {
      internal::WaterSourceRoute& r = s_.sources[i];
      if (r.valid || ctx_->tick() < r.routedTick + kRouteInterval) continue;
      r.routedTick = ctx_->tick();
      startSearch(static_cast<std::int32_t>(i));
      break;
    }
  }
  if (q.source >= 0) advanceSearch(kRouteStepBudget);
  // Each source's water follows its route (the last one found while a new one is sought).
  for (const internal::WaterSourceRoute& r : s_.sources) {
    if (r.end == internal::WaterRouteEnd::Blocked) continue;
    if (r.end == internal::WaterRouteEnd::Collects) deposit(r.collect, r.rate);
    if (r.fall >= kSplashMinFall) s_.scratch.landings.push_back(WaterLanding{r.landing, r.fall});
  }
}

void WaterTick::applyMoves() {
  for (const WaterMove& m : s_.scratch.moves) {
    if (m.amount == 0) continue;
    if (!internal::testBit(g_.brick(slotOf(m.src)).held, indexOf(m.src))) change(m.src, -static_cast<std::int32_t>(m.amount));
    if (m.dst != kVoidCell) change(m.dst, static_cast<std::int32_t>(m.amount));
  }
}

// Gravity, from the snapshot at the start of the phase. Each receiving cell has one
// source (the first wet cell above it), so no flow can overfill it.
void WaterTick::gravity() {
  internal::WaterScratch& sc = s_.scratch;
  sc.moves.clear();
  sc.falls.clear();
  for (const std::uint32_t h : sc.cells) {
    const std::uint32_t slot = slotOf(h);
    const unsigned idx = indexOf(h);
    const std::uint32_t a = g_.brick(slot).amount[idx];
    if (a == 0) continue;
    if (internal::testBit(g_.brick(slot).sink, idx)) {  // outlet cells hold nothing
      sc.moves.push_back({h, kVoidCell, a, 0});
      continue;
    }
    const bool held = internal::testBit(g_.brick(slot).held, idx);
    const Probe d = neighbourOf(slot, idx, internal::kDown);
    if (d.kind == Kind::Blocked || (d.kind == Kind::Open && d.amount >= kFull)) continue;
    if (d.kind == Kind::Void) {
      if (!held) sc.moves.push_back({h, kVoidCell, a, 0});
      continue;
    }
    if (d.amount > 0) {
      sc.moves.push_back({h, handleOf(static_cast<std::uint32_t>(d.slot), d.idx), std::min(a, kFull - d.amount), 0});
      continue;
    }
    // Over empty cells: fall to where it lands, this tick.
    Probe last = d;
    std::int32_t fall = 1;
    for (;;) {
      Probe n = neighbour(last, internal::kDown);
      if (n.kind == Kind::Open && n.amount == 0 && fall < kMaxFall) {
        last = n;
        ++fall;
        continue;
      }
      sc.falls.push_back(WaterLanding{cellCoord(g_.brick(slot).coord, idx), fall});
      if (n.kind == Kind::Void) {
        if (!held) sc.moves.push_back({h, kVoidCell, a, 0});
        break;
      }
      std::uint32_t into = 0;
      if (n.kind == Kind::Open && n.amount > 0 && n.amount < kFull) into = std::min(a, kFull - n.amount);
      if (into > 0) sc.moves.push_back({h, handleOf(static_cast<std::uint32_t>(n.slot), n.idx), into, 0});
      if (a > into) sc.moves.push_back({h, materialise(last), a - into, 0});
      if (n.kind == Kind::Open && n.amount > 0 && fall >= kSplashMinFall) {
        sc.landings.push_back(WaterLanding{cellCoord(last.brick, last.idx), fall});
      }
      break;
    }
  }
  applyMoves();
  splashes();
}

// Spreading, from the snapshot after gravity: a supported cell levels with its lower
// side neighbours; receivers offered more than their room or than the lowest level
// of their sources take a proportional share.
void WaterTick::lateral() {
  internal::WaterScratch& sc = s_.scratch;
  sc.moves.clear();
  struct Candidate {
    Probe p;
    std::uint32_t amount;
  };
  for (const std::uint32_t h : sc.cells) {
    const std::uint32_t slot = slotOf(h);
    const unsigned idx = indexOf(h);
    const std::uint32_t a = g_.brick(slot).amount[idx];
    if (a < 2) continue;
    const Probe below = neighbourOf(slot, idx, internal::kDown);
    if (!(below.kind == Kind::Blocked || (below.kind == Kind::Open && below.amount >= kFull))) continue;
    const bool held = internal::testBit(g_.brick(slot).held, idx);
    Candidate c[4];
    int k = 0;
    for (const int dir : kLateral) {
      const Probe n = neighbourOf(slot, idx, dir);
      if (n.kind == Kind::Blocked) continue;
      if (n.kind == Kind::Void) {
        if (!held) c[k++] = {n, 0};  // a stream does not drain into itself or a pond
        continue;
      }
      if (n.amount + 2 > a) continue;
      if (n.amount == 0 && a < kSpreadMin && !isDrop(n)) continue;
      c[k++] = {n, n.amount};
    }
    if (k == 0) continue;
    for (int i = 1; i < k; ++i) {  // insertion sort by amount; equal amounts keep direction order
      for (int j = i; j > 0 && c[j].amount < c[j - 1].amount; --j) std::swap(c[j], c[j - 1]);
    }
    // Water-filling: the common level of this cell and the receivers below it.
    std::uint32_t sum = a;
    for (int i = 0; i < k; ++i) sum += c[i].amount;
    int j = k;
    std::uint32_t level = 0;
    while (j > 0) {
      level = sum / static_cast<std::uint32_t>(j + 1);
      if (level > c[j - 1].amount) break;
      sum -= c[j - 1].amount;
      --j;
    }
    for (int i = 0; i < j; ++i) {
      const std::uint32_t d = level - c[i].amount;
      if (c[i].p.kind == Kind::Void) {
        sc.moves.push_back({h, kVoidCell, d, level});
        continue;
      }
      const std::uint32_t dh = materialise(c[i].p);
      WaterTickBrick& tb = scratchOf(slotOf(dh));
      const unsigned di = indexOf(dh);
      if (!internal::testBit(tb.pending, di)) {
        internal::setBit(tb.pending, di);
        tb.inflow[di] = 0;
        tb.minLevel[di] = static_cast<std::uint16_t>(kFull);
      }
      tb.inflow[di] = static_cast<std::uint16_t>(tb.inflow[di] + d);
      tb.minLevel[di] = static_cast<std::uint16_t>(std::min<std::uint32_t>(tb.minLevel[di], level));
      sc.moves.push_back({h, dh, d, level});
    }
  }
  // Grants (amounts are still the snapshot's), then apply.
  for (WaterMove& m : sc.moves) {
    if (m.dst == kVoidCell) continue;
    const std::uint32_t slot = slotOf(m.dst);
    const unsigned di = indexOf(m.dst);
    const WaterTickBrick& tb = sc.tick[static_cast<std::size_t>(g_.brick(slot).tick)];
    const std::uint32_t cap = tb.minLevel[di] - g_.brick(slot).amount[di];
    if (tb.inflow[di] > cap) m.amount = m.amount * cap / tb.inflow[di];
  }
  applyMoves();
}

void WaterTick::soak() {
  for (const std::uint32_t h : s_.scratch.cells) {
    const std::uint32_t slot = slotOf(h);
    const unsigned idx = indexOf(h);
    const std::uint32_t a = g_.brick(slot).amount[idx];
    if (a == 0 || a >= kSoakBelow) continue;
    if (neighbourOf(slot, idx, internal::kDown).kind != Kind::Blocked) continue;
    VoxelCoord v = cellCoord(g_.brick(slot).coord, idx);
    v.y -= 1;
    if (s_.porous[world_.get(v)]) change(h, -1);
  }
}

// Records each changed cell once (canonical order), syncs its voxel and builds the
// next active set: changed cells and their wet neighbours, cells that passed water
// on, and the sources.
void WaterTick::finish() {
  internal::WaterScratch& sc = s_.scratch;
  sc.tickOrder.clear();
  for (std::uint32_t i = 0; i < sc.tickUsed; ++i) sc.tickOrder.push_back(i);
  std::sort(sc.tickOrder.begin(), sc.tickOrder.end(), [&](std::uint32_t a, std::uint32_t b) {
    return g_.brick(sc.tick[a].slot).key < g_.brick(sc.tick[b].slot).key;
  });
  for (const std::uint32_t ti : sc.tickOrder) {
    const WaterTickBrick& tb = sc.tick[ti];
    const std::uint32_t slot = tb.slot;
    for (int w = 0; w < internal::kCellMaskWords; ++w) {
      for (std::uint64_t bits = tb.moved[static_cast<std::size_t>(w)]; bits != 0; bits &= bits - 1) {
        const auto idx = static_cast<unsigned>(w * 64 + std::countr_zero(bits));
        WaterBrick& b = g_.brick(slot);
        const std::uint32_t before = tb.start[idx], after = b.amount[idx];
        if (before != after) {
          g_.noteChange(b, before, after);
          if ((before >= kFull) != (after >= kFull)) floorChanged(b.key);
          const VoxelCoord v = cellCoord(b.coord, idx);
          ctx_->output().water.push_back(WaterChange{v, static_cast<std::uint16_t>(after)});
          syncVoxel(v, after);
          ++changed_;
          if (after > 0) wake(slot, idx);
          wakeWetNeighbours(slot, idx);
        } else if (after > 0) {
          wake(slot, idx);
        }
      }
    }
    g_.brick(slot).tick = -1;
  }
  sc.tickUsed = 0;
  for (const std::uint32_t slot : sc.bricks) g_.brick(slot).current = {};
}

// Splash events for the landings of the last simulated tick, at a bounded rate.
void WaterTick::splashes() {
  int emitted = 0;
  for (const WaterLanding& l : s_.scratch.landings) {
    if (emitted >= kMaxSplashesPerTick) break;
    if (ctx_->randomBelow(RandomPurpose::WaterSpread, packCoordId(l.cell.x, l.cell.y, l.cell.z), kSplashDraw,
                         kSplashOdds) != 0) {
      continue;
    }
    ctx_->emit(SplashEvent{Actor{}, l.cell, splashSpeed(l.fall)});
    ++emitted;
  }
}

bool WaterTick::pour(VoxelCoord cell, std::uint32_t amount) {
  Probe p = at(cell, false);
  if (p.kind != Kind::Open) return false;
  std::int32_t fall = 0;
  while (p.amount == 0) {
    const Probe n = neighbour(p, internal::kDown, false);
    if (n.kind == Kind::Void) return false;  // nothing below inside the world
    if (n.kind == Kind::Blocked || n.amount >= kFull) break;
    p = n;
    ++fall;
  }
  const VoxelCoord landing = cellCoord(p.brick, p.idx);
  std::uint32_t rest = amount;
  for (int k = 0; k < kMaxPourCells && rest > 0; ++k) {
    if (p.amount < kFull) {
      const std::uint32_t put = std::min(kFull - p.amount, rest);
      setNow(materialise(p), p.amount + put);
      rest -= put;
    }
    p = neighbour(p, internal::kUp, false);
    if (p.kind != Kind::Open) break;
  }
  if (rest == amount) return false;
  ctx_->emit(SplashEvent{Actor{}, landing, splashSpeed(fall)});
  return true;
}

// ---- init helpers ----------------------------------------------------------------------

std::int32_t toVoxel(double metres) { return static_cast<std::int32_t>(std::floor(metres * kVoxelsPerMetre)); }

// The y of the first voxel that is not open at or below y in column (x, z), at most
// 256 voxels down.
std::int32_t firstBlockedBelow(const BrickStore& world, const WaterState& s, std::int32_t x, std::int32_t y,
                               std::int32_t z) {
  for (std::int32_t k = 0; k < 256; ++k) {
    if (!s.open[world.get(x, y - k, z)]) return y - k;
  }
  return y - 256;
}

std::vector<VoxelCoord> sourceCells(const WaterSource& src, const BrickStore& world, const WaterState& s) {
  VoxelCoord c{toVoxel(src.position.x), toVoxel(src.position.y), toVoxel(src.position.z)};
  for (int k = 0; k < 64 && !s.open[world.get(c)]; ++k) ++c.y;  // out of the ground
  std::vector<VoxelCoord> cells;
  if (src.kind == WaterSourceKind::Spring) {
    cells.push_back(c);
    return cells;
  }
  // Waterfall: the outflow is the side where the ground is lowest 1 m away. The lip
  // is the first column that way, within 2 m, whose drop is at least 3/4 of the
  // largest drop there: the water leaves past the cliff's slope and falls free
  // instead of running down its face as a film (which would keep hundreds of cells
  // busy for nothing a client can see).
  constexpr std::int32_t kProbe = kVoxelsPerMetre, kMinDrop = 4, kMaxWalk = 2 * kVoxelsPerMetre;
  int out = -1;
  std::int32_t best = kMinDrop - 1;
  for (const int d : kLateral) {
    const std::int32_t drop = c.y - firstBlockedBelow(world, s, c.x + kDirX[d] * kProbe, c.y, c.z + kDirZ[d] * kProbe);
    if (drop > best) {
      best = drop;
      out = d;
    }
  }
  VoxelCoord lip = c;
  if (out >= 0) {
    std::int32_t drops[kMaxWalk + 1];
    std::int32_t most = 0;
    for (std::int32_t k = 0; k <= kMaxWalk; ++k) {
      drops[k] = c.y - firstBlockedBelow(world, s, c.x + kDirX[out] * k, c.y, c.z + kDirZ[out] * k);
      most = std::max(most, drops[k]);
    }
    for (std::int32_t k = 0; k <= kMaxWalk; ++k) {
      if (drops[k] >= kMinDrop && drops[k] * 4 >= most * 3) {
        lip = VoxelCoord{c.x + kDirX[out] * k, c.y, c.z + kDirZ[out] * k};
        break;
      }
    }
  }
  // The lip runs across the outflow (along x when there is none).
  const bool alongZ = out == internal::kWest || out == internal::kEast;
  const auto n = std::max<std::int32_t>(1, static_cast<std::int32_t>(std::lround(src.width * kVoxelsPerMetre)));
  for (std::int32_t o = -n / 2; o < n - n / 2; ++o) {
    const VoxelCoord q{lip.x + (alongZ ? 0 : o), lip.y, lip.z + (alongZ ? o : 0)};
    if (world.bounds().containsVoxel(q) && s.open[world.get(q)]) cells.push_back(q);
  }
  return cells;
}

}  // namespace

// ---- public API --------------------------------------------------------------------------

void initWater(WaterState& s, const SimSetup& setup) {
  s = WaterState{};
  const BrickStore& world = setup.world;
  const MaterialTable& mt = setup.materials;
  std::array<std::uint8_t, 256> liquid{};
  for (std::size_t m = 0; m < mt.size(); ++m) {
    const Material& mat = mt[static_cast<MaterialId>(m)];
    liquid[m] = mat.liquid ? 1 : 0;
    s.open[m] = (m == kAir || mat.liquid) ? 1 : 0;
    const bool soaks = mat.sound == SoundClass::Soil || mat.sound == SoundClass::Grass ||
                       mat.sound == SoundClass::Sand || mat.sound == SoundClass::Gravel;
    s.porous[m] = !mat.liquid && m != kAir && soaks ? 1 : 0;
  }
  s.open[kAir] = 1;
  if (auto w = mt.find("water")) s.water = *w;
  s.cells.reset(world.bounds());

  // Pond outlets: the layer above the generated water at each pond's centre.
  const WorldBounds& wb = world.bounds();
  for (const Pond& pond : setup.scene.ponds) {
    const std::int32_t x = toVoxel(pond.center.x), z = toVoxel(pond.center.z);
    for (std::int32_t y = wb.maxBrick.y * kBrickSize - 1; y >= wb.minBrick.y * kBrickSize; --y) {
      if (liquid[world.get(x, y, z)]) {
        const auto r = static_cast<std::int64_t>(std::llround(pond.radius * kVoxelsPerMetre));
        s.outlets.push_back(PondOutlet{x, z, r * r, y + 1});
        break;
      }
    }
  }

  // Generated water: every liquid voxel is a full cell.
  std::vector<BrickCoord> wet;
  MaterialId m[kBrickVoxels];
  for (int ci = 0; ci < world.chunkCount(); ++ci) {
    if (world.chunkIsCollapsed(ci) && !liquid[world.chunkUniform(ci).value_or(kAir)]) continue;
    const ChunkCoord cc = world.chunkCoord(ci);
    for (int local = 0; local < 16 * 16 * 16; ++local) {
      const BrickView v = world.brickInChunk(ci, local);
      bool any = false;
      if (v.isUniform()) {
        any = liquid[v.uniformMaterial()] != 0;
      } else {
        v.decode(m);
        for (int i = 0; i < kBrickVoxels && !any; ++i) any = liquid[m[i]] != 0;
      }
      if (any) {
        wet.push_back(BrickCoord{cc.x * kChunkBricks + (local & 15), cc.y * kChunkBricks + ((local >> 4) & 15),
                                 cc.z * kChunkBricks + (local >> 8)});
      }
    }
  }
  s.cells.reserve(wet.size() + wet.size() / 4 + 256);
  // Streams flow; the cells do not carry that flow (sources are routed), so a
  // stream's generated water is held at its level: full for good, feeding holes dug
  // beside or under it, and the open cells on its surface carry away whatever
  // reaches them (sinks, like a pond's outlet). Pond water is free.
  const bool streams = !setup.scene.streams.empty();
  auto inPond = [&](std::int32_t x, std::int32_t z) {
    for (const Pond& pond : setup.scene.ponds) {
      const std::int64_t dx = x - toVoxel(pond.center.x), dz = z - toVoxel(pond.center.z);
      const auto r = static_cast<std::int64_t>(std::llround(pond.radius * kVoxelsPerMetre));
      if (dx * dx + dz * dz < r * r) return true;
    }
    return false;
  };
  std::vector<VoxelCoord> surface;
  for (const BrickCoord& bc : wet) {
    const std::uint32_t slot = s.cells.add(bc);
    initMasks(s.cells.brick(slot), world, s);
    const BrickView v = world.brick(bc);
    v.decode(m);
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) {
      if (!liquid[m[i]]) continue;
      s.cells.setAmount(slot, i, static_cast<std::uint16_t>(kFull));
      const VoxelCoord c = cellCoord(bc, i);
      if (!streams || inPond(c.x, c.z)) continue;
      internal::setBit(s.cells.brick(slot).held, i);
      const VoxelCoord above{c.x, c.y + 1, c.z};
      if (world.bounds().containsVoxel(above) && world.get(above) == kAir) surface.push_back(above);
    }
  }
  for (const VoxelCoord& c : surface) {
    std::int32_t slot = s.cells.find(brickOf(c));
    if (slot < 0) {
      slot = static_cast<std::int32_t>(s.cells.add(brickOf(c)));
      initMasks(s.cells.brick(static_cast<std::uint32_t>(slot)), world, s);
    }
    internal::setBit(s.cells.brick(static_cast<std::uint32_t>(slot)).sink, cellIndex(c));
  }

  // Sources: routed from the first tick.
  for (const WaterSource& src : setup.scene.waterSources) {
    internal::WaterSourceRoute r;
    // litres per second -> units per tick: 2048 units per litre (0.125 l voxels).
    r.rate = static_cast<std::uint32_t>(std::max<long long>(0, std::llround(src.flowRate * 2048.0 / 60.0)));
    if (r.rate == 0 || s.water == kAir) continue;
    const std::vector<VoxelCoord> lip = sourceCells(src, world, s);
    if (lip.empty()) continue;
    r.start = lip[lip.size() / 2];
    s.sources.push_back(std::move(r));
  }

  internal::WaterScratch& sc = s.scratch;
  sc.cells.reserve(1 << 14);
  sc.bricks.reserve(1024);
  sc.moves.reserve(1 << 14);
  sc.tick.reserve(256);
  sc.tickOrder.reserve(256);
  sc.landings.reserve(256);
  sc.falls.reserve(1024);
  internal::WaterRouteSearch& q = s.search;
  q.queue.reserve(kFlatLimit);
  q.seen.assign(std::size_t{1} << 17, 0);
  q.bricks.reserve(4096);
  q.brickSeen.assign(8192, 0);
  s.floorChanged.reserve(1024);
  WaterTick(s, world).routeAll();
  s.queue.reserve(2048);
}

void stepWater(WaterState& state, SimContext& ctx) {
  WaterTick t(state, ctx);
  t.run();
}

bool pourWater(WaterState& state, SimContext& ctx, VoxelCoord cell, std::uint32_t amount) {
  if (amount == 0 || state.water == kAir) return false;
  if (!ctx.world().bounds().containsVoxel(cell)) return false;
  WaterTick t(state, ctx);
  return t.pour(cell, amount);
}

std::uint16_t waterAt(const WaterState& state, VoxelCoord cell) { return state.cells.amountAt(cell); }

void applyWaterChanges(WaterState& state, std::span<const WaterChange> changes) {
  for (const WaterChange& c : changes) {
    const BrickCoord bc = brickOf(c.cell);
    std::int32_t slot = state.cells.find(bc);
    if (slot < 0) {
      if (c.amount == 0) continue;
      slot = static_cast<std::int32_t>(state.cells.add(bc));
    }
    state.cells.setAmount(static_cast<std::uint32_t>(slot), cellIndex(c.cell), c.amount);
  }
}

void hashWater(const WaterState& state, StateHasher& h) {
  h.add(static_cast<std::uint64_t>(state.cells.size()));
  for (const std::uint32_t slot : state.cells.sorted()) {
    const WaterBrick& b = state.cells.brick(slot);
    if (b.wet == 0) continue;
    h.add(b.coord.x);
    h.add(b.coord.y);
    h.add(b.coord.z);
    for (int i = 0; i < kBrickVoxels; i += 4) {
      const auto* a = &b.amount[static_cast<std::size_t>(i)];
      h.add(static_cast<std::uint64_t>(a[0]) | static_cast<std::uint64_t>(a[1]) << 16 |
            static_cast<std::uint64_t>(a[2]) << 32 | static_cast<std::uint64_t>(a[3]) << 48);
    }
  }
}

std::optional<std::string> diffWater(const WaterState& e, const WaterState& a) {
  // Merge-walk both brick lists in canonical order; a missing brick is dry.
  static constexpr std::array<std::uint16_t, kBrickVoxels> kDry{};
  const auto es = e.cells.sorted();
  const auto as = a.cells.sorted();
  std::size_t i = 0, j = 0;
  while (i < es.size() || j < as.size()) {
    const WaterBrick* eb = i < es.size() ? &e.cells.brick(es[i]) : nullptr;
    const WaterBrick* ab = j < as.size() ? &a.cells.brick(as[j]) : nullptr;
    if (eb && ab && eb->key != ab->key) {
      if (eb->key < ab->key) {
        ab = nullptr;
      } else {
        eb = nullptr;
      }
    }
    const auto& ea = eb ? eb->amount : kDry;
    const auto& aa = ab ? ab->amount : kDry;
    const BrickCoord bc = eb ? eb->coord : ab->coord;
    if (eb) ++i;
    if (ab) ++j;
    if (ea == aa) continue;
    for (unsigned k = 0; k < static_cast<unsigned>(kBrickVoxels); ++k) {
      if (ea[k] != aa[k]) {
        const VoxelCoord v = cellCoord(bc, k);
        return internal::format("water (%d,%d,%d): expected %u, actual %u", v.x, v.y, v.z, unsigned{ea[k]},
                                unsigned{aa[k]});
      }
    }
  }
  if (e.cells.size() != a.cells.size()) {
    return internal::format("water wet cells: expected %zu, actual %zu", e.cells.size(), a.cells.size());
  }
  return std::nullopt;
}

WaterStats waterStats(const WaterState& state) noexcept {
  WaterStats st = state.last;
  st.wetCells = state.cells.size();
  st.bricks = state.cells.brickCount();
  st.frozen = state.frozen;
  st.activeCells = 0;
  for (const std::uint32_t slot : state.queue) {
    for (const std::uint64_t w : state.cells.brick(slot).next) st.activeCells += static_cast<std::size_t>(std::popcount(w));
  }
  return st;
}

void restoreWaterCells(WaterState& state, const BrickStore& world, std::span<const WaterChange> cells) {
  WaterGrid& g = state.cells;
  // Dry every record and refresh its masks from the world as it is now.
  for (std::uint32_t slot = 0; slot < g.brickCount(); ++slot) {
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) g.setAmount(slot, i, 0);
    WaterBrick& b = g.brick(slot);
    initMasks(b, world, state);
    for (int w = 0; w < internal::kCellMaskWords; ++w) b.held[static_cast<std::size_t>(w)] &= b.open[static_cast<std::size_t>(w)];
  }
  for (const WaterChange& c : cells) {
    const BrickCoord bc = brickOf(c.cell);
    std::int32_t s = g.find(bc);
    if (s < 0) {
      s = static_cast<std::int32_t>(g.add(bc));
      initMasks(g.brick(static_cast<std::uint32_t>(s)), world, state);
    }
    const auto slot = static_cast<std::uint32_t>(s);
    const unsigned idx = cellIndex(c.cell);
    g.setAmount(slot, idx, c.amount);
    WaterBrick& b = g.brick(slot);
    internal::setBit(b.next, idx);
    if (!b.queued) {
      b.queued = true;
      state.queue.push_back(slot);
    }
  }
  state.frozen = false;
  state.watch.clear();
  for (internal::WaterSourceRoute& r : state.sources) r.valid = false;
}

}  // namespace loam::sim
