// Source routes of the water system (model in sim/systems/water.h): where a
// source's flow goes within the tick, searched in slices and cached until a floor
// it read changes. Shared declarations in sim/systems/internal/water_tick.h.
#include <algorithm>

#include "sim/systems/internal/water_tick.h"

namespace loam::sim::internal::water {

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
  q.landing = voxelOfBrick(first.cell.brick, first.cell.idx);
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
        q.cur = voxelOfBrick(best.brick, best.idx);
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
        q.cur = voxelOfBrick(l.cell.brick, l.cell.idx);
        q.flat = false;
        break;
      }
      const VoxelCoord nv = voxelOfBrick(n.brick, n.idx);
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

}  // namespace loam::sim::internal::water
