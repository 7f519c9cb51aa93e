// Fire (see sim/systems/fire.h for the model). Integer maths and keyed draws only.
#include "sim/systems/fire.h"

#include <algorithm>
#include <bit>

#include "sim/core/assert.h"
#include "sim/world/brick_store.h"
#include "sim/core/internal/format.h"
#include "sim/core/keyed_random.h"
#include "sim/world/material.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/core/state_hasher.h"
#include "sim/gen/scene.h"
#include "sim/systems/water.h"
#include "sim/systems/weather.h"

namespace loam::sim {

namespace {

// ---- tunables ------------------------------------------------------------------------
constexpr std::uint32_t kMinDuration = 30;      // ticks a cell burns at least
constexpr std::uint32_t kMinPeriod = 6;         // ticks between visits, fast fuels (grass, leaves)
constexpr std::uint32_t kMaxPeriod = 60;        // ticks between visits, slow fuels (wood, charcoal)
constexpr std::uint32_t kSpreadPerTick = 500000;  // per million per tick of period: spread hazard before the factors
constexpr std::uint32_t kHazardTicksCap = 6;    // slow fuels: an attempt weighs like 6 ticks of a fast one
constexpr std::uint32_t kThinPositions = 64;    // positions edited one by one when the result is uniform
constexpr std::int64_t kWindRef = 150;          // cm/s of wind along a direction that doubles its weight
constexpr std::uint32_t kRainMin = 50;          // per mille of rain (or half the wetness) at the cell below which it cannot put fire out
constexpr std::uint32_t kMinWetShare = 192;     // of 256: wetness reaching sheltered fuel
constexpr std::uint32_t kMillion = 1000000;
constexpr std::uint32_t kDirectionDraws = 3;    // neighbour draws per attempt (first non-air brick wins)
constexpr std::uint32_t kExposureRefresh = 120; // ticks a cell keeps its measured exposure
constexpr std::uint32_t kLeafPass = 250;        // of 256: rain and wind through one leaf voxel

// Random draw indices (per purpose, per cell, per tick; a cell attempts at most once a tick).
constexpr std::uint32_t kDrawRain = 1;
constexpr std::uint32_t kDrawWaterSample = 2;
constexpr std::uint32_t kDrawDirection = 0;   // .. kDirectionDraws - 1
constexpr std::uint32_t kDrawColumn = 8;       // and 9
constexpr std::uint32_t kDrawIgnite = 0;

std::uint64_t keyOf(VoxelCoord v) { return packCoordId(v.x, v.y, v.z); }

// ---- the 26 neighbour directions and their weights -----------------------------------

struct Dir {
  std::int8_t dx, dy, dz;
  std::int32_t len;   // Q10 length: 1024, 1448 (sqrt 2), 1774 (sqrt 3)
  std::int32_t base;  // weight before wind and buoyancy
};

constexpr std::array<Dir, 26> makeDirs() {
  std::array<Dir, 26> d{};
  int n = 0;
  for (int z = -1; z <= 1; ++z) {
    for (int y = -1; y <= 1; ++y) {
      for (int x = -1; x <= 1; ++x) {
        const int axes = (x != 0) + (y != 0) + (z != 0);
        if (axes == 0) continue;
        const std::int32_t len = axes == 1 ? 1024 : axes == 2 ? 1448 : 1774;
        const std::int32_t base = axes == 1 ? 1000 : axes == 2 ? 600 : 350;
        d[static_cast<std::size_t>(n++)] = Dir{static_cast<std::int8_t>(x), static_cast<std::int8_t>(y),
                                               static_cast<std::int8_t>(z), len, base};
      }
    }
  }
  return d;
}
constexpr std::array<Dir, 26> kDirs = makeDirs();

// Cumulative direction weights for one exposure level.
struct DirTable {
  std::array<std::uint32_t, 26> cumulative{};
  std::uint32_t total = 0;
};

constexpr int kExposureLevels = 4;

// Weights: heat rises (up x3, down x0.4); wind along a direction adds kWindRef-scaled
// weight, against it removes it (floor: 8 % of the still-air weight).
DirTable makeDirTable(Wind w) {
  DirTable t;
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < kDirs.size(); ++i) {
    const Dir& d = kDirs[i];
    std::int64_t weight = d.base;
    weight = weight * (d.dy > 0 ? 768 : d.dy < 0 ? 102 : 256) / 256;
    const std::int64_t along = (std::int64_t{d.dx} * w.x + std::int64_t{d.dz} * w.z) * 1024 / d.len;  // cm/s
    const std::int64_t factor = std::clamp<std::int64_t>(256 + along * 256 / kWindRef, 20, 256 * 8);
    weight = weight * factor / 256;
    sum += static_cast<std::uint32_t>(std::max<std::int64_t>(1, weight));
    t.cumulative[i] = sum;
  }
  t.total = sum;
  return t;
}

struct DirTables {
  std::array<DirTable, kExposureLevels> level;
};

DirTables makeDirTables(const WeatherState& weather) {
  DirTables t;
  const Wind open = openWind(weather);
  for (int l = 0; l < kExposureLevels; ++l) {
    const std::uint32_t e = static_cast<std::uint32_t>(2 * l + 1) * kExposureOpen / (2 * kExposureLevels);
    t.level[static_cast<std::size_t>(l)] = makeDirTable(Wind{shelteredSpeed(open.x, e), shelteredSpeed(open.z, e)});
  }
  return t;
}

// ---- cells ---------------------------------------------------------------------------

// The keyed hash a cell's permutation and first attempt come from.
std::uint64_t burnHash(std::uint64_t seed, VoxelCoord corner) {
  return keyedHash(RandomKey{seed, RandomPurpose::FireBurn, 0, keyOf(corner), 0});
}

// A brick's keyed order: a bijection of 0..511 (affine, xorshift, affine; all
// invertible mod 512), its parameters from burnHash.
struct Permutation {
  std::uint32_t a = 1, b = 0, c = 1;
  explicit Permutation(std::uint64_t h)
      : a(static_cast<std::uint32_t>((h & 511u) | 1u)),
        b(static_cast<std::uint32_t>((h >> 9) & 511u)),
        c(static_cast<std::uint32_t>(((h >> 18) & 511u) | 1u)) {}
  explicit Permutation(const FireWork& w) : a(w.permA), b(w.permB), c(w.permC) {}
  int operator()(std::uint32_t pos) const {
    std::uint32_t x = (pos * a + b) & 511u;
    x ^= x >> 4;
    x = (x * c) & 511u;
    return static_cast<int>(x);
  }
};

VoxelCoord voxelAt(VoxelCoord corner, int index) {
  return {corner.x + (index & 7), corner.y + ((index >> 3) & 7), corner.z + (index >> 6)};
}

// The next visit: the next sweep, the next attempt, the dying phase or the end,
// whichever comes first.
void scheduleNext(FireWork& w) {
  std::uint32_t due = std::min({w.start + w.duration, w.nextAttempt, w.nextSweep});
  if (!(w.flags & kFireDying)) due = std::min(due, w.start + w.duration * 3u / 4u);
  w.nextDue = due;
}

// ---- the sweep's schedule (the server's walk and followers share it) -----------------

std::uint32_t periodFor(std::uint32_t duration) { return std::clamp(duration / 24, kMinPeriod, kMaxPeriod); }
std::uint32_t dyingAt(const FireWork& w) { return w.start + w.duration * 3u / 4u; }

// The positions whose turn has come at `tick`.
std::uint32_t sweepTarget(const FireWork& w, std::uint32_t tick) {
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(w.sweepLength, std::uint64_t{tick - w.start} * w.sweepLength / w.duration));
}

// The first sweep tick: start + 1 + a keyed phase within the period (the first
// attempt's too), at the end at the latest.
std::uint32_t firstSweep(const FireWork& w, std::uint64_t h) {
  return std::min(w.start + 1 + static_cast<std::uint32_t>((h >> 27) % w.period), w.start + w.duration);
}

// The sweep tick after `tick` on the grid of nextSweep: every period, the end last.
std::uint32_t sweepAfter(const FireWork& w, std::uint32_t tick) {
  std::uint32_t next = w.nextSweep;
  if (next <= tick) next += ((tick - next) / w.period + 1) * w.period;
  return std::min(next, w.start + w.duration);
}

// A cell's sweep state as of `tick` (after that tick's step), from its ignition data:
// what igniting it at `start` and sweeping at every due tick since gives.
FireWork sweepWork(const FireChange& ig, std::uint64_t seed, std::uint32_t tick) {
  FireWork w;
  w.start = ig.start;
  w.duration = static_cast<std::uint16_t>(std::clamp<std::uint32_t>(ig.endTick - ig.start, 1, 65535));
  w.period = static_cast<std::uint8_t>(periodFor(w.duration));
  w.peak = ig.peak;
  w.flags = ig.flags & kFireUniform;
  w.result = ig.result;
  w.sweepLength = static_cast<std::uint16_t>((w.flags & kFireUniform) ? kThinPositions : kBrickVoxels);
  const std::uint64_t h = burnHash(seed, ig.corner);
  const Permutation perm(h);
  w.permA = static_cast<std::uint16_t>(perm.a);
  w.permB = static_cast<std::uint16_t>(perm.b);
  w.permC = static_cast<std::uint16_t>(perm.c);
  w.nextSweep = firstSweep(w, h);
  if (tick >= w.nextSweep) {
    // The last sweep tick at or before `tick` did the positions due then.
    const std::uint32_t end = w.start + w.duration;
    const std::uint32_t last = tick >= end ? end : w.nextSweep + (tick - w.nextSweep) / w.period * w.period;
    w.swept = static_cast<std::uint16_t>(sweepTarget(w, last));
    w.nextSweep = sweepAfter(w, tick);
  }
  if (tick >= dyingAt(w)) w.flags |= kFireDying;
  return w;
}

// A burning cell's intensity: its peak, a third of it once dying.
std::uint8_t intensityOf(const FireWork& w) {
  return (w.flags & kFireDying) ? static_cast<std::uint8_t>(std::max(1, w.peak / 3)) : w.peak;
}

// From 3/4 of the duration on the cell burns at a third of its peak.
void startDying(FireCell& c, FireWork& w, std::uint32_t tick) {
  if ((w.flags & kFireDying) || tick < dyingAt(w)) return;
  w.flags |= kFireDying;
  c.intensity = intensityOf(w);
}

FireChange ignitionOf(const FireCell& c, const FireWork& w) {
  return FireChange{c.corner, w.start, c.endTick, w.peak, static_cast<std::uint8_t>(w.flags & kFireUniform), w.result};
}

// Builds a burning cell for the brick at corner from its content at `tick`. False
// when the brick holds no fuel.
bool buildCell(const FireTables& t, const BrickStore& world, std::uint64_t seed, VoxelCoord corner, std::uint32_t tick,
               FireCell& c, FireWork& w, FuelMask& mask) {
  const BrickView v = world.brick(brickOf(corner));
  std::uint64_t fuel = 0, burnSum = 0, flamSum = 0;
  mask = FuelMask{};
  bool uniform = true;  // every voxel ends as `result`
  MaterialId result = kAir;
  if (v.isUniform()) {
    const MaterialId m = v.uniformMaterial();
    if (t.flammability[m] != 0) {
      fuel = kBrickVoxels;
      burnSum = std::uint64_t{t.burnTicks[m]} * kBrickVoxels;
      flamSum = std::uint64_t{t.flammability[m]} * kBrickVoxels;
      mask.fill(~std::uint64_t{0});
      result = t.burnt[m];
      uniform = !t.groundCover[m];
    }
  } else {
    MaterialId voxels[kBrickVoxels];
    v.decode(voxels);
    bool first = true;
    for (int i = 0; i < kBrickVoxels; ++i) {
      const MaterialId m = voxels[i];
      const bool isFuel = t.flammability[m] != 0;
      const MaterialId after = isFuel ? t.burnt[m] : m;
      uniform = uniform && !(isFuel && t.groundCover[m]) && (first || after == result);
      result = after;
      first = false;
      if (!isFuel) continue;
      ++fuel;
      burnSum += t.burnTicks[m];
      flamSum += t.flammability[m];
      mask[static_cast<std::size_t>(i >> 6)] |= std::uint64_t{1} << (i & 63);
    }
  }
  if (fuel == 0) return false;
  const std::uint32_t duration = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(burnSum / fuel, kMinDuration, 65535));
  const std::uint64_t h = burnHash(seed, corner);
  const Permutation perm(h);
  w = FireWork{};
  w.start = tick;
  w.duration = static_cast<std::uint16_t>(duration);
  w.fuel = static_cast<std::uint16_t>(fuel);
  w.permA = static_cast<std::uint16_t>(perm.a);
  w.permB = static_cast<std::uint16_t>(perm.b);
  w.permC = static_cast<std::uint16_t>(perm.c);
  w.peak = static_cast<std::uint8_t>(std::min<std::uint64_t>(255, 24 + flamSum * 231 / (std::uint64_t{kBrickVoxels} * 1000)));
  w.period = static_cast<std::uint8_t>(periodFor(duration));
  if (uniform) {
    w.flags |= kFireUniform;
    w.result = result;
    w.sweepLength = kThinPositions;
  }
  w.nextAttempt = tick + 1 + static_cast<std::uint32_t>((h >> 27) % w.period);
  w.nextSweep = firstSweep(w, h);
  scheduleNext(w);
  c = FireCell{corner, w.peak, tick + duration};
  return true;
}

// Index of the cell with key in [first, last) of cells, or last.
std::size_t findIn(const std::vector<FireCell>& cells, std::size_t first, std::size_t last, std::uint64_t key) {
  auto b = cells.begin() + static_cast<std::ptrdiff_t>(first);
  auto e = cells.begin() + static_cast<std::ptrdiff_t>(last);
  auto it = std::lower_bound(b, e, key, [](const FireCell& c, std::uint64_t k) { return keyOf(c.corner) < k; });
  return it != e && keyOf(it->corner) == key ? static_cast<std::size_t>(it - cells.begin()) : last;
}

std::uint32_t takeMask(FireState& s, const FuelMask& m) {
  if (s.freeMasks.empty()) {
    s.masks.push_back(m);
    return static_cast<std::uint32_t>(s.masks.size() - 1);
  }
  const std::uint32_t i = s.freeMasks.back();
  s.freeMasks.pop_back();
  s.masks[i] = m;
  return i;
}

bool maskTest(const FuelMask& m, int i) { return (m[static_cast<std::size_t>(i >> 6)] >> (i & 63)) & 1u; }
void maskSet(FuelMask& m, int i, bool on) {
  const std::uint64_t bit = std::uint64_t{1} << (i & 63);
  std::uint64_t& word = m[static_cast<std::size_t>(i >> 6)];
  word = on ? (word | bit) : (word & ~bit);
}
int indexInBrick(VoxelCoord v) { return voxelIndexInBrick(v.x & 7, v.y & 7, v.z & 7); }

// Someone else changed the brick: burn every fuel voxel one by one from here on.
void dropUniform(FireWork& w) {
  w.flags &= static_cast<std::uint8_t>(~kFireUniform);
  w.sweepLength = kBrickVoxels;
}

void record(SimContext& ctx, const FireCell& c, const FireWork& w) { ctx.output().fire.push_back(ignitionOf(c, w)); }

// dropUniform on the server: followers hear of it (a record of the new ignition data).
void dropUniform(SimContext& ctx, const FireCell& c, FireWork& w) {
  if (!(w.flags & kFireUniform)) return;
  dropUniform(w);
  record(ctx, c, w);
}

void putOut(SimContext& ctx, const FireCell& c, ExtinguishCause cause) {
  ctx.output().fire.push_back(FireChange{c.corner});
  ctx.emit(ExtinguishedEvent{VoxelCoord{c.corner.x + 4, c.corner.y + 4, c.corner.z + 4}, cause});
}

MaterialId burntFormAt(const FireTables& t, const SimState& st, MaterialId m, VoxelCoord v) {
  if (!t.groundCover[m]) return t.burnt[m];
  const MaterialId below = st.world.get(v.x, v.y - 1, v.z);
  return (st.lut.collides[below] && t.flammability[below] == 0) ? t.ash : kAir;
}

// Marks cells that edits made earlier in this step (commands, water) doused or
// emptied, keeps their fuel masks exact, and drops the uniform-result shortcut of a
// brick someone else changed. Cost: a hash lookup per edit (a binary search per hit).
void scanEdits(FireState& s, SimContext& ctx) {
  const SimState& st = ctx.state();
  const FireTables& t = s.tables;
  const std::size_t n = s.cells.size();
  for (const EditRecord& e : ctx.output().edits) {
    const bool wet = st.lut.liquid[e.after] != 0;
    const bool fuelAfter = t.flammability[e.after] != 0;
    if (e.kind == EditRecord::Kind::Voxel) {
      const VoxelCoord v{e.x, e.y, e.z};
      const std::uint64_t key = keyOf(fireCellOf(v));
      if (!s.burning.contains(key)) continue;
      const std::size_t i = findIn(s.cells, 0, n, key);
      if (i == n) continue;
      FireWork& w = s.work[i];
      FuelMask& mask = s.masks[w.mask];
      const int bit = indexInBrick(v);
      if (wet) w.flags |= kFireDoused;
      if (!fuelAfter && e.after != w.result) dropUniform(ctx, s.cells[i], w);
      if (fuelAfter && !maskTest(mask, bit)) {
        maskSet(mask, bit, true);
        ++w.fuel;
        dropUniform(ctx, s.cells[i], w);
      } else if (!fuelAfter && maskTest(mask, bit)) {
        maskSet(mask, bit, false);
        if (--w.fuel == 0) w.flags |= kFireRemoved;
      }
    } else {
      const VoxelCoord corner{e.x * kBrickSize, e.y * kBrickSize, e.z * kBrickSize};
      if (!s.burning.contains(keyOf(corner))) continue;
      const std::size_t i = findIn(s.cells, 0, n, keyOf(corner));
      if (i == n) continue;
      FireWork& w = s.work[i];
      dropUniform(ctx, s.cells[i], w);
      if (wet) w.flags |= kFireDoused;
      if (fuelAfter) {
        s.masks[w.mask].fill(~std::uint64_t{0});
        w.fuel = kBrickVoxels;
      } else {
        w.flags |= kFireRemoved;
      }
    }
  }
}

// Share of open sky over a fire cell, 0..kExposureOpen: the voxel column above the
// brick's centre, up to kCoverBricks bricks. Material-aware (the store's coarse copy
// may not tell leaves from rock): a roof voxel stops rain and wind, each leaf voxel
// passes kLeafPass / 256, so a canopy shelters in part and a tunnel entirely. Cost:
// one brick lookup per brick above, eight reads in a mixed one; no allocation.
std::uint32_t cellExposure(const FireTables& t, const BrickStore& world, VoxelCoord corner) {
  const BrickCoord start = brickOf(corner);
  const std::int32_t top = world.bounds().maxBrick.y;
  std::uint32_t open = kExposureOpen;
  for (std::int32_t y = start.y + 1; y < top && y <= start.y + kCoverBricks; ++y) {
    const BrickView v = world.brick(BrickCoord{start.x, y, start.z});
    if (v.isUniform()) {
      const std::uint8_t r = t.roof[v.uniformMaterial()];
      if (r == 2) return 0;
      for (int i = 0; r == 1 && i < kBrickSize; ++i) open = open * kLeafPass / 256;
    } else {
      for (int ly = 0; ly < kBrickSize; ++ly) {
        const std::uint8_t r = t.roof[v.get(4, ly, 4)];
        if (r == 2) return 0;
        if (r == 1) open = open * kLeafPass / 256;
      }
    }
    if (open < 4) return 0;
  }
  return open;
}

enum class Outcome : std::uint8_t { Keep, BurntOut, Rain, Water, Removed };

struct Walk {
  FireState& s;
  SimContext& ctx;
  const SimState& st;
  const DirTables& dirs;
  std::uint32_t tick;
  std::size_t keep;  // cells [0, keep) are this tick's survivors so far
  std::uint32_t discovered = 0;  // spread ignitions found so far (discovery order)

  bool burning(std::uint64_t key) const { return s.burning.contains(key); }

  // One spread / rain / water check. May put the cell out.
  Outcome attempt(const FireCell& c, FireWork& w) {
    const std::uint64_t key = keyOf(c.corner);
    const BrickStore& world = st.world;
    if (tick >= w.exposureDue) {
      w.exposure = static_cast<std::uint16_t>(cellExposure(s.tables, world, c.corner));
      w.exposureDue = tick + kExposureRefresh;
    }
    const std::uint32_t exposure = w.exposure;
    // Rain reaching the cell, and how wet the cell is (sheltered fuel still gets 3/4 of
    // the ground's wetness: drip, run-off, damp air). Either puts it out in time.
    const std::uint32_t rain = std::uint32_t{st.weather.rain} * exposure / kExposureOpen;
    const std::uint32_t wet = std::uint32_t{st.weather.wetness} * std::max(exposure, kMinWetShare) / kExposureOpen;
    const std::uint32_t douse = std::max(rain, wet / 2);
    if (douse >= kRainMin &&
        ctx.randomBelow(RandomPurpose::FireBurn, key, kDrawRain, kMillion) < douse * w.period * 100u / 3u) {
      return Outcome::Rain;
    }
    // Water already in the brick (new water is caught by scanEdits): one keyed voxel.
    {
      const VoxelCoord v = voxelAt(c.corner, static_cast<int>(ctx.randomBelow(RandomPurpose::FireBurn, key, kDrawWaterSample, 512)));
      const MaterialId m = world.get(v);
      if (st.lut.liquid[m] || (m == kAir && waterAt(st.water, st.world, v) > 0)) return Outcome::Water;
    }
    if (s.pending.size() >= kMaxIgnitionsPerTick || s.cells.size() + s.pending.size() >= kMaxFireCells) {
      w.nextAttempt = tick + 1;  // the burst bound: try again next tick
      return Outcome::Keep;
    }
    w.nextAttempt = tick + w.period;

    // Direction: up to kDirectionDraws weighted draws, taking the first neighbour that is
    // not empty air (so a ground fire does not waste most attempts on the sky above).
    const DirTable& table = dirs.level[std::min<std::size_t>(kExposureLevels - 1, exposure * kExposureLevels / (kExposureOpen + 1))];
    VoxelCoord corner{};
    BrickView view;
    bool found = false;
    for (std::uint32_t draw = 0; draw < kDirectionDraws && !found; ++draw) {
      const std::uint32_t r = ctx.randomBelow(RandomPurpose::FireSpread, key, kDrawDirection + draw, table.total);
      std::size_t d = 0;
      while (table.cumulative[d] <= r) ++d;
      corner = VoxelCoord{c.corner.x + kDirs[d].dx * kBrickSize, c.corner.y + kDirs[d].dy * kBrickSize,
                          c.corner.z + kDirs[d].dz * kBrickSize};
      const BrickCoord nb = brickOf(corner);
      if (!world.bounds().containsBrick(nb)) continue;
      view = world.brick(nb);
      found = !view.isAir();
    }
    if (!found) return Outcome::Keep;
    const std::uint64_t nbKey = keyOf(corner);
    if (burning(nbKey)) return Outcome::Keep;

    // Find fuel: a uniform brick is fuel or not; otherwise scan two keyed columns top down.
    const FireTables& t = s.tables;
    std::uint32_t flam = 0;
    VoxelCoord caught{};
    if (view.isUniform()) {
      const std::uint32_t i = ctx.randomBelow(RandomPurpose::FireSpread, key, kDrawColumn, 512);
      flam = t.flammability[view.uniformMaterial()];
      caught = voxelAt(corner, static_cast<int>(i));
    } else {
      for (std::uint32_t col = 0; col < 2 && flam == 0; ++col) {
        const std::uint32_t xz = ctx.randomBelow(RandomPurpose::FireSpread, key, kDrawColumn + col, 64);
        const int lx = static_cast<int>(xz & 7u), lz = static_cast<int>(xz >> 3);
        for (int ly = 7; ly >= 0; --ly) {
          const MaterialId m = view.get(lx, ly, lz);
          if (st.lut.liquid[m]) return Outcome::Keep;  // wet: water stops it
          if (t.flammability[m] != 0) {
            flam = t.flammability[m];
            caught = VoxelCoord{corner.x + lx, corner.y + ly, corner.z + lz};
            break;
          }
        }
      }
    }
    if (flam == 0) return Outcome::Keep;

    // Chance: fuel flammability x source heat x dryness x (no rain).
    std::uint64_t chance = std::uint64_t{kSpreadPerTick} * std::min<std::uint32_t>(w.period, kHazardTicksCap) * flam / 1000;
    chance = chance * (128u + w.peak) / 384u;
    // Fine fuel's moisture matters steeply: the dryness enters squared.
    const std::uint64_t dry = 1000u - std::min(wet, 1000u);
    chance = chance * dry / 1000u * dry / 1000u;
    chance = std::min<std::uint64_t>(kMillion, chance * (1000u - std::min(rain, 1000u)) / 1000u);
    if (ctx.randomBelow(RandomPurpose::FireIgnite, key, kDrawIgnite, kMillion) < chance) {
      s.pending.push_back(FirePending{nbKey, caught, discovered++});
    }
    return Outcome::Keep;
  }

  // Everything due for one cell this tick: the sweep when due (followFire does the
  // same on a follower), then what may put it out, the dying phase and the attempt.
  Outcome advance(FireCell& c, FireWork& w) {
    const FireTables& t = s.tables;
    if (tick >= w.nextSweep) {
      const std::uint32_t target = sweepTarget(w, tick);
      FuelMask& mask = s.masks[w.mask];
      const Permutation perm(w);
      const std::size_t firstEdit = ctx.output().edits.size();
      while (w.swept < target) {
        const int i = perm(w.swept);
        ++w.swept;
        if (!maskTest(mask, i)) continue;  // only fuel is read: the rest of the brick is never touched
        maskSet(mask, i, false);
        const VoxelCoord v = voxelAt(c.corner, i);
        const MaterialId m = st.world.get(v);
        if (t.flammability[m] != 0) ctx.setVoxel(v, burntFormAt(t, st, m, v));
        if (w.fuel > 0) --w.fuel;
      }
      // With a uniform result the rest of the brick goes in one record.
      if (w.swept >= w.sweepLength && (w.flags & kFireUniform)) ctx.fillBrick(brickOf(c.corner), w.result);
      if (const std::size_t n = ctx.output().edits.size() - firstEdit; n > 0) {
        ctx.output().sweeps.push_back(SweepRun{static_cast<std::uint32_t>(firstEdit), static_cast<std::uint32_t>(n)});
      }
      w.nextSweep = sweepAfter(w, tick);
    }
    if (w.swept >= w.sweepLength) return Outcome::BurntOut;
    if (w.flags & kFireDoused) return Outcome::Water;
    if (w.flags & kFireRemoved) return Outcome::Removed;
    if (w.fuel == 0) return Outcome::BurntOut;
    startDying(c, w, tick);
    if (tick >= w.nextAttempt) {
      const Outcome o = attempt(c, w);
      if (o != Outcome::Keep) return o;
    }
    scheduleNext(w);
    return Outcome::Keep;
  }
};

ExtinguishCause causeOf(Outcome o) {
  switch (o) {
    case Outcome::Rain:
      return ExtinguishCause::Rain;
    case Outcome::Water:
      return ExtinguishCause::Water;
    case Outcome::Removed:
      return ExtinguishCause::Removed;
    case Outcome::BurntOut:
    case Outcome::Keep:
      break;
  }
  return ExtinguishCause::BurntOut;
}

// Turns this tick's spread ignitions into cells (first found wins per cell, cells
// already burning are skipped) and merges them into the sorted arrays; events and
// records in cell order.
void mergePending(FireState& s, SimContext& ctx, std::uint32_t tick) {
  if (s.pending.empty()) return;
  std::sort(s.pending.begin(), s.pending.end(), [](const FirePending& a, const FirePending& b) {
    return a.key != b.key ? a.key < b.key : a.order < b.order;
  });
  const std::size_t n = s.cells.size();
  s.scratchCells.clear();
  s.scratchWork.clear();
  std::uint64_t last = ~std::uint64_t{0};
  for (const FirePending& p : s.pending) {
    if (p.key == last) continue;
    last = p.key;
    if (n + s.scratchCells.size() >= kMaxFireCells) break;
    if (s.burning.contains(p.key)) continue;
    FireCell c;
    FireWork w;
    FuelMask mask;
    if (!buildCell(s.tables, ctx.world(), ctx.seed(), fireCellOf(p.voxel), tick, c, w, mask)) continue;
    w.mask = takeMask(s, mask);
    s.burning.insert(p.key);
    s.scratchCells.push_back(c);
    s.scratchWork.push_back(w);
    record(ctx, c, w);
    ctx.emit(IgnitedEvent{p.voxel, ctx.world().get(p.voxel), Actor{}});
  }
  s.pending.clear();
  const std::size_t k = s.scratchCells.size();
  if (k == 0) return;
  s.cells.resize(n + k);
  s.work.resize(n + k);
  std::size_t i = n, j = k, out = n + k;
  while (j > 0) {
    if (i > 0 && keyOf(s.cells[i - 1].corner) > keyOf(s.scratchCells[j - 1].corner)) {
      --i;
      --out;
      s.cells[out] = s.cells[i];
      s.work[out] = s.work[i];
    } else {
      --j;
      --out;
      s.cells[out] = s.scratchCells[j];
      s.work[out] = s.scratchWork[j];
    }
  }
}

// ---- followers -----------------------------------------------------------------------

std::vector<FireCell>::iterator lowerBound(std::vector<FireCell>& cells, std::uint64_t key) {
  return std::lower_bound(cells.begin(), cells.end(), key,
                          [](const FireCell& c, std::uint64_t k) { return keyOf(c.corner) < k; });
}

// Sets a cell's ignition data as of `tick`: inserts a new cell (none beyond
// kMaxFireCells); a known one is replaced (`replace`, a catch-up) or only loses its
// uniform result (a record of the step: the server's scanEdits).
void setFollowed(FireState& s, std::uint64_t seed, std::uint32_t tick, const FireChange& ig, bool replace) {
  const auto it = lowerBound(s.cells, keyOf(ig.corner));
  const auto at = it - s.cells.begin();
  const bool present = it != s.cells.end() && it->corner == ig.corner;
  if (present && !replace) {
    if (!(ig.flags & kFireUniform)) dropUniform(s.work[static_cast<std::size_t>(at)]);
    return;
  }
  const FireWork w = sweepWork(ig, seed, tick);
  const FireCell c{ig.corner, intensityOf(w), ig.endTick};
  if (present) {
    *it = c;
    s.work[static_cast<std::size_t>(at)] = w;
  } else if (s.cells.size() < kMaxFireCells) {
    s.cells.insert(it, c);
    s.work.insert(s.work.begin() + at, w);
  }
}

// A follower's due sweep of one cell, its burnt-out fill and dying phase (the
// server's advance does the same).
void followCell(SimState& m, std::uint32_t tick, FireCell& c, FireWork& w, std::vector<EditRecord>* made) {
  const FireTables& t = m.fire.tables;
  // Every sweep tick due since the last call, in order, each to its own target: a
  // step the follower did not receive touched none of its cells, so this is what
  // the server did at those ticks.
  while (tick >= w.nextSweep && w.swept < w.sweepLength) {
    const std::uint32_t at = w.nextSweep;
    const std::uint32_t target = sweepTarget(w, at);
    const Permutation perm(w);
    for (; w.swept < target; ++w.swept) {
      const VoxelCoord v = voxelAt(c.corner, perm(w.swept));
      const MaterialId before = m.world.get(v);
      if (t.flammability[before] == 0) continue;
      const MaterialId after = burntFormAt(t, m, before, v);
      m.world.set(v, after);
      if (made) made->push_back(EditRecord{v.x, v.y, v.z, before, after, EditRecord::Kind::Voxel});
    }
    const BrickCoord b = brickOf(c.corner);
    const BrickView view = m.world.brick(b);
    if (w.swept >= w.sweepLength && (w.flags & kFireUniform) &&
        !(view.isUniform() && view.uniformMaterial() == w.result)) {
      const MaterialId before = view.isUniform() ? view.uniformMaterial() : kMixedBefore;
      m.world.fillBrick(b, w.result);
      if (made) made->push_back(EditRecord{b.x, b.y, b.z, before, w.result, EditRecord::Kind::BrickFill});
    }
    w.nextSweep = sweepAfter(w, at);
  }
  startDying(c, w, tick);
}

}  // namespace

void scheduleIgnitions(FireState& state, const SimSetup& setup) {
  state.schedule.clear();
  for (const IgnitionPoint& p : setup.scene.ignitions) {
    ScheduledIgnition s;
    // Scene values are checked at load (delay 0..1e6 s, positions within 1e5 m: no
    // overflow); a point outside the world is refused by the ignite, as a command's is.
    s.tick = static_cast<std::uint64_t>(p.delay * kTicksPerSecond + 0.5);
    s.x = unitsFromMetres(p.position.x) >> kUnitShift;
    s.y = unitsFromMetres(p.position.y) >> kUnitShift;
    s.z = unitsFromMetres(p.position.z) >> kUnitShift;
    s.onGround = p.onGround;
    state.schedule.push_back(s);
  }
}

void initFire(FireState& state, const SimSetup& setup) {
  state = FireState{};
  state.cells.reserve(16384);
  state.work.reserve(16384);
  state.pending.reserve(kMaxIgnitionsPerTick * 2);
  state.scratchCells.reserve(kMaxIgnitionsPerTick);
  state.scratchWork.reserve(kMaxIgnitionsPerTick);
  state.outKeys.reserve(kMaxIgnitionsPerTick);
  state.masks.reserve(16384);
  state.burning.reserve(4096);
  state.freeMasks.reserve(16384);
  FireTables& t = state.tables;
  const MaterialTable& mats = setup.materials;
  t.ash = mats.find("ash").value_or(kAir);
  const MaterialId charcoal = mats.find("charcoal").value_or(t.ash);
  for (std::size_t i = 0; i < mats.size() && i < 256; ++i) {
    const Material& m = mats[static_cast<MaterialId>(i)];
    t.roof[i] = m.foliage ? 1 : (m.solid || m.liquid) ? 2 : 0;
    // Float -> integer once, at init: the table's values are parsed identically everywhere.
    const auto flam = static_cast<std::uint32_t>(m.flammability * 1000.0f + 0.5f);
    if (m.burnTicks == 0 || flam == 0 || m.liquid) continue;
    t.flammability[i] = static_cast<std::uint16_t>(std::min<std::uint32_t>(1000, flam));
    t.burnTicks[i] = static_cast<std::uint16_t>(std::min<std::uint32_t>(65535, m.burnTicks));
    if (static_cast<MaterialId>(i) == charcoal) {
      t.burnt[i] = t.ash;
    } else if (m.sound == SoundClass::Wood) {
      t.burnt[i] = charcoal;
    } else if (m.foliage) {
      t.burnt[i] = kAir;
    } else if (m.sound == SoundClass::Grass) {
      t.burnt[i] = kAir;
      t.groundCover[i] = 1;
    } else {
      t.burnt[i] = t.ash;
    }
  }
}

void stepFire(FireState& s, SimContext& ctx) {
  if (s.cells.empty()) return;
  LOAM_ASSERT(s.work.size() == s.cells.size());
  const std::uint32_t tick = static_cast<std::uint32_t>(ctx.tick());
  scanEdits(s, ctx);
  const DirTables dirs = makeDirTables(ctx.state().weather);
  s.pending.clear();
  Walk walk{s, ctx, ctx.state(), dirs, tick, 0};
  const std::size_t n = s.cells.size();
  for (std::size_t i = 0; i < n; ++i) {
    FireCell& c = s.cells[i];
    FireWork& w = s.work[i];
    if (w.nextDue <= tick || (w.flags & (kFireDoused | kFireRemoved))) {
      const Outcome o = walk.advance(c, w);
      if (o != Outcome::Keep) {
        putOut(ctx, c, causeOf(o));
        s.freeMasks.push_back(w.mask);
        s.outKeys.push_back(keyOf(c.corner));  // not alight again this tick: one record order for followers
        continue;
      }
    }
    if (walk.keep != i) {
      s.cells[walk.keep] = c;
      s.work[walk.keep] = w;
    }
    ++walk.keep;
  }
  s.cells.resize(walk.keep);
  s.work.resize(walk.keep);
  mergePending(s, ctx, tick);
  for (const std::uint64_t key : s.outKeys) s.burning.erase(key);
  s.outKeys.clear();
}

void followFire(SimState& mirror, std::uint32_t tick, std::span<const FireChange> records,
                std::vector<EditRecord>* made) {
  FireState& s = mirror.fire;
  LOAM_ASSERT(s.work.size() == s.cells.size());
  for (const FireChange& r : records) {
    if (r.endTick != 0) setFollowed(s, mirror.seed, tick, r, false);
  }
  catchUpFire(mirror, tick, made);
  for (const FireChange& r : records) {
    if (r.endTick != 0) continue;
    const auto it = lowerBound(s.cells, keyOf(r.corner));
    if (it == s.cells.end() || !(it->corner == r.corner)) continue;
    s.work.erase(s.work.begin() + (it - s.cells.begin()));
    s.cells.erase(it);
  }
}

void catchUpFire(SimState& mirror, std::uint32_t tick, std::vector<EditRecord>* made) {
  FireState& s = mirror.fire;
  for (std::size_t i = 0; i < s.cells.size(); ++i) followCell(mirror, tick, s.cells[i], s.work[i], made);
}

void insertFireCells(FireState& state, std::uint64_t seed, std::uint32_t tick, std::span<const FireChange> cells) {
  for (const FireChange& c : cells) {
    if (c.endTick == 0 || c.endTick <= tick || c.start > tick || c.peak == 0) continue;
    setFollowed(state, seed, tick, c, true);
  }
}

bool igniteFire(FireState& state, SimContext& ctx, VoxelCoord voxel, Actor by) {
  const MaterialId m = ctx.world().get(voxel);
  if (state.tables.flammability[m] == 0 || isBurning(state, voxel)) return false;
  if (state.cells.size() >= kMaxFireCells) return false;
  LOAM_ASSERT(state.work.size() == state.cells.size());
  FireCell c;
  FireWork w;
  FuelMask mask;
  const auto tick = static_cast<std::uint32_t>(ctx.tick());
  if (!buildCell(state.tables, ctx.world(), ctx.seed(), fireCellOf(voxel), tick, c, w, mask)) return false;
  w.mask = takeMask(state, mask);
  state.burning.insert(keyOf(c.corner));
  auto it = std::lower_bound(state.cells.begin(), state.cells.end(), keyOf(c.corner),
                             [](const FireCell& x, std::uint64_t k) { return keyOf(x.corner) < k; });
  const auto at = it - state.cells.begin();
  state.cells.insert(it, c);
  state.work.insert(state.work.begin() + at, w);
  record(ctx, c, w);
  ctx.emit(IgnitedEvent{voxel, m, by});
  return true;
}

bool isBurning(const FireState& state, VoxelCoord voxel) {
  return findIn(state.cells, 0, state.cells.size(), keyOf(fireCellOf(voxel))) != state.cells.size();
}

void rebuildFireWork(FireState& state, const BrickStore& world, std::uint64_t seed, std::uint32_t tick) {
  // Saved ignitions (start, peak, uniform result) when the decoder left them in work.
  std::vector<FireWork> hints;
  if (state.work.size() == state.cells.size()) hints.swap(state.work);
  state.work.clear();
  state.masks.clear();
  state.freeMasks.clear();
  state.burning.clear();
  state.pending.clear();
  for (std::size_t k = 0; k < state.cells.size(); ++k) {
    const FireCell& saved = state.cells[k];
    const FireWork* hint = k < hints.size() && hints[k].peak != 0 && hints[k].start <= tick && hints[k].start < saved.endTick
                               ? &hints[k]
                               : nullptr;
    FireCell c;
    FireWork w;
    FuelMask mask{};
    if (buildCell(state.tables, world, seed, saved.corner, hint ? hint->start : tick, c, w, mask)) {
      // The ignition: the saved one, else estimated from the fuel left (the same
      // duration while the brick holds one kind of fuel), ending at the saved endTick.
      FireChange ig{saved.corner, 0, saved.endTick, 0, 0, kAir};
      if (hint) {
        ig.start = hint->start;
        ig.peak = hint->peak;
        ig.flags = hint->flags & kFireUniform;
        ig.result = hint->result;
      } else {
        const std::uint32_t d = w.duration;
        ig.start = saved.endTick > d ? std::min(saved.endTick - d, tick) : 0;
        ig.flags = w.flags & kFireUniform;
        ig.result = w.result;
        const std::uint32_t duration = std::clamp<std::uint32_t>(saved.endTick - ig.start, 1, 65535);
        const bool dying = tick >= ig.start + duration * 3u / 4u;
        ig.peak = dying ? static_cast<std::uint8_t>(std::min(255, saved.intensity * 3 + 1)) : saved.intensity;
      }
      // The sweep as the walk left it (followers rebuild the same), then the attempt
      // and exposure schedule replayed.
      w = sweepWork(ig, seed, tick);
      const std::uint64_t h = burnHash(seed, saved.corner);
      std::uint32_t next = w.start + 1 + static_cast<std::uint32_t>((h >> 27) % w.period);
      std::uint32_t exposureDue = 0;
      for (; next <= tick; next += w.period) {
        if (next >= exposureDue) exposureDue = next + kExposureRefresh;
      }
      w.nextAttempt = next;
      w.exposureDue = exposureDue;
      // Fuel: what the positions not yet visited hold.
      const Permutation perm(w);
      for (std::uint32_t p = 0; p < w.swept; ++p) maskSet(mask, perm(p), false);
      std::uint32_t fuel = 0;
      for (std::uint64_t word : mask) fuel += static_cast<std::uint32_t>(std::popcount(word));
      w.fuel = static_cast<std::uint16_t>(fuel);
      if (fuel == 0) w.flags |= kFireRemoved;
      // The exposure measured last (the world may have changed since).
      w.exposure = hint ? hint->exposure : static_cast<std::uint16_t>(cellExposure(state.tables, world, saved.corner));
    } else {
      // No fuel left: out at the first visit.
      w = FireWork{};
      w.start = tick;
      w.duration = 1;
      w.flags |= kFireRemoved;
      w.nextAttempt = tick + 1;
      w.nextSweep = UINT32_MAX;
    }
    scheduleNext(w);
    w.mask = takeMask(state, mask);
    state.burning.insert(keyOf(saved.corner));
    state.work.push_back(w);
  }
}

}  // namespace loam::sim
