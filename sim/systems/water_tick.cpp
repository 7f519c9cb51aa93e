// The water system's tick (model in sim/systems/water.h): edits, the active set,
// gravity, spreading, sinks, splashes and pours. Source routes are in
// water_routes.cpp; shared declarations in sim/systems/internal/water_tick.h.
#include <algorithm>
#include <bit>

#include "sim/core/keyed_random.h"
#include "sim/systems/internal/water_tick.h"
#include "sim/systems/motion.h"

namespace loam::sim::internal::water {

namespace {

std::int32_t splashSpeed(std::int32_t fall) {
  // v = sqrt(2 g h) in mm/s with g = 9810 mm/s^2 and h = fall * 50 mm.
  return static_cast<std::int32_t>(isqrt64(std::uint64_t{981000} * static_cast<std::uint64_t>(fall < 0 ? 0 : fall)));
}

}  // namespace

// The handle of an open cell, materialising its brick's record (its implicit water)
// when it has none.
std::uint32_t WaterTick::materialise(Probe& p) {
  if (p.slot < 0) p.slot = static_cast<std::int32_t>(materialiseBrick(s_, world_, p.brick));
  return handleOf(static_cast<std::uint32_t>(p.slot), p.idx);
}

// True when water moved into p would fall on (nothing solid or full under it).
bool WaterTick::isDrop(const Probe& p) const {
  const Probe b = neighbour(p, internal::kDown);
  return b.kind == Kind::Void || (b.kind == Kind::Open && b.amount < kFull);
}

// ---- changes ---------------------------------------------------------------------------

// A change outside the phases (pour, displacement): recorded, synced and woken now.
void WaterTick::setNow(std::uint32_t h, std::uint32_t amount) {
  const std::uint32_t slot = slotOf(h);
  const unsigned idx = indexOf(h);
  const WaterBrick& b = g_.brick(slot);
  if (b.amount[idx] == amount) return;
  if ((b.amount[idx] >= kFull) != (amount >= kFull)) floorChanged(b.key);
  g_.setAmount(slot, idx, static_cast<std::uint16_t>(amount));
  record(slot, idx, amount);
  syncVoxel(voxelOfBrick(g_.brick(slot).coord, idx), amount);
  if (amount > 0) wake(slot, idx);
  wakeWetNeighbours(slot, idx);
  s_.frozen = false;
}

// The step's record of a cell's new amount (the water stream); its brick is modified
// from now on.
void WaterTick::record(std::uint32_t slot, unsigned idx, std::uint32_t amount) {
  WaterBrick& b = g_.brick(slot);
  b.modified = true;
  ctx_->output().water.push_back(WaterChange{voxelOfBrick(b.coord, idx), static_cast<std::uint16_t>(amount)});
}

// Wakes the cell of p when it holds water (implicit water too: its brick is
// materialised). True when it did.
bool WaterTick::wakeProbe(Probe p) {
  if (p.kind != Kind::Open || p.amount == 0) return false;
  wake(slotOf(materialise(p)), p.idx);
  return true;
}

void WaterTick::wakeWetNeighbours(std::uint32_t slot, unsigned idx) {
  for (int d = 0; d < 6; ++d) (void)wakeProbe(neighbourOf(slot, idx, d, false));
}

// Wakes the wet cells at and next to v (after an edit there).
void WaterTick::wakeAround(VoxelCoord v) {
  for (int d = -1; d < 6; ++d) {
    const VoxelCoord c = d < 0 ? v : VoxelCoord{v.x + kDirX[d], v.y + kDirY[d], v.z + kDirZ[d]};
    if (wakeProbe(at(c, false))) s_.frozen = false;
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
  // Wake every wet cell in the brick and its six neighbours (implicit water too).
  for (int d = -1; d < 6; ++d) {
    const BrickCoord nb = d < 0 ? bc : BrickCoord{bc.x + kDirX[d], bc.y + kDirY[d], bc.z + kDirZ[d]};
    const std::int32_t ns = wetRecord(s_, world_, nb);
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
    s_.last.processedVoxels = 0;
    s_.last.changedVoxels = 0;
    return;
  }
  begin();
  routeSources();
  gravity();
  lateral();
  soak();
  finish();
  s_.last.processedVoxels = sc.cells.size();
  s_.last.changedVoxels = changed_;
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

void WaterTick::applyMoves() {
  for (const WaterMove& m : s_.scratch.moves) {
    if (m.amount == 0) continue;
    if (!internal::testBit(g_.brick(slotOf(m.src)).held, indexOf(m.src))) {
      change(m.src, -static_cast<std::int32_t>(m.amount));
    } else {
      // A held cell stays full, so no change wakes it: it keeps giving while it can
      // (water it drops down a shaft lands out of its neighbours' reach).
      wake(slotOf(m.src), indexOf(m.src));
    }
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
      sc.falls.push_back(WaterLanding{voxelOfBrick(g_.brick(slot).coord, idx), fall});
      if (n.kind == Kind::Void) {
        if (!held) sc.moves.push_back({h, kVoidCell, a, 0});
        break;
      }
      std::uint32_t into = 0;
      if (n.kind == Kind::Open && n.amount > 0 && n.amount < kFull) into = std::min(a, kFull - n.amount);
      if (into > 0) sc.moves.push_back({h, handleOf(static_cast<std::uint32_t>(n.slot), n.idx), into, 0});
      if (a > into) sc.moves.push_back({h, materialise(last), a - into, 0});
      if (n.kind == Kind::Open && n.amount > 0 && fall >= kSplashMinFall) {
        sc.landings.push_back(WaterLanding{voxelOfBrick(last.brick, last.idx), fall});
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
    VoxelCoord v = voxelOfBrick(g_.brick(slot).coord, idx);
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
          record(slot, idx, after);
          syncVoxel(voxelOfBrick(b.coord, idx), after);
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
  const VoxelCoord landing = voxelOfBrick(p.brick, p.idx);
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

}  // namespace loam::sim::internal::water
