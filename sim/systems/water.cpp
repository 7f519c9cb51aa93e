// The water system's public API: init, the mirror side, hashing, diffing and
// restore. The model, its phases, sinks, the active set and the voxel policy are
// described at the top of sim/systems/water.h; the storage in
// sim/systems/internal/water_grid.h; the tick in water_tick.cpp and
// water_routes.cpp (shared declarations in sim/systems/internal/water_tick.h).
#include "sim/systems/water.h"

#include <algorithm>
#include <cmath>

#include "sim/world/brick_store.h"
#include "sim/core/internal/format.h"
#include "sim/core/keyed_random.h"
#include "sim/world/material.h"
#include "sim/world/material_lut.h"
#include "sim/world/voxel_collision.h"
#include "sim/systems/internal/water_tick.h"
#include "sim/systems/motion.h"
#include "sim/gen/generator.h"
#include "sim/gen/landscape_plan.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/core/state_hasher.h"

namespace loam::sim {

using namespace internal::water;

namespace internal::water {

namespace {

bool inPond(const WaterState& s, std::int64_t x, std::int64_t z) {
  for (const PondDisc& d : s.pondDiscs) {
    const std::int64_t dx = x - d.x, dz = z - d.z;
    if (dx * dx + dz * dz < d.r2) return true;
  }
  return false;
}

// Streams and rivers flow; the cells do not carry that flow (sources are routed), so
// their generated water is held at its level: full for good, feeding holes dug
// beside or under it, and the open cells on its surface carry away whatever reaches
// them (sinks, like a pond's outlet). A liquid voxel below a channel's generated
// surface and outside every pond's disc is held; an air voxel just above a held one
// is a sink. Read from the world when the record is made, so no start-up scan
// (whose cost would follow the channels' length) is needed.
void initHeld(WaterBrick& b, const BrickStore& world, const WaterState& s, const MaterialId* m) {
  b.held = {};
  if (!s.channels) return;
  const std::int32_t x0 = b.coord.x * kBrickSize, y0 = b.coord.y * kBrickSize, z0 = b.coord.z * kBrickSize;
  const bool belowInWorld = world.bounds().containsVoxel(VoxelCoord{x0, y0 - 1, z0});
  for (int lz = 0; lz < kBrickSize; ++lz) {
    for (int lx = 0; lx < kBrickSize; ++lx) {
      const std::int32_t x = x0 + lx, z = z0 + lz;
      const bool liquidBelow = belowInWorld && s.liquid[world.get(x, y0 - 1, z)] != 0;
      bool liquid = liquidBelow;
      for (int ly = 0; ly < kBrickSize && !liquid; ++ly) liquid = s.liquid[m[voxelIndexInBrick(lx, ly, lz)]];
      if (!liquid || inPond(s, x, z)) continue;
      const std::int32_t top = s.channels->heldWaterTop(x, z);
      if (top == INT32_MIN || top < y0) continue;
      bool below = liquidBelow;  // the voxel under ly is held
      for (int ly = 0; ly < kBrickSize; ++ly) {
        const auto i = static_cast<unsigned>(voxelIndexInBrick(lx, ly, lz));
        const std::int32_t y = y0 + ly;
        if (y < top && s.liquid[m[i]]) {
          internal::setBit(b.held, i);
          below = true;
          continue;
        }
        if (below && y <= top && m[i] == kAir) internal::setBit(b.sink, i);
        below = false;
      }
    }
  }
}

}  // namespace

// The open, outlet, held and sink masks of a brick record, from the world.
void initMasks(WaterBrick& b, const BrickStore& world, const WaterState& s) {
  const BrickView view = world.brick(b.coord);
  MaterialId m[kBrickVoxels];
  view.decode(m);
  b.open = {};
  for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) {
    if (s.open[m[i]]) internal::setBit(b.open, i);
  }
  b.sink = {};
  initHeld(b, world, s, m);
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

// Sets the amounts of the record in slot to the brick's implicit water (a full cell
// wherever the world holds a liquid) and marks it unmodified. The pour cap follows
// the wet cells this adds or removes: water that was in the world already is not
// players' water.
void setImplicit(WaterState& s, const BrickStore& world, std::uint32_t slot) {
  WaterBrick& b = s.grid.brick(slot);
  const std::size_t wetBefore = b.wet;
  const BrickView view = world.brick(b.coord);
  if (view.isUniform()) {
    const auto a = static_cast<std::uint16_t>(s.liquid[view.uniformMaterial()] ? kFull : 0);
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) s.grid.setAmount(slot, i, a);
  } else {
    MaterialId m[kBrickVoxels];
    view.decode(m);
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i)
      s.grid.setAmount(slot, i, static_cast<std::uint16_t>(s.liquid[m[i]] ? kFull : 0));
  }
  WaterBrick& after = s.grid.brick(slot);
  after.modified = false;
  s.pourCapWetVoxels = s.pourCapWetVoxels + after.wet - wetBefore;
}

std::uint32_t materialiseBrick(WaterState& s, const BrickStore& world, BrickCoord bc) {
  const std::int32_t found = s.grid.find(bc);
  if (found >= 0) return static_cast<std::uint32_t>(found);
  const std::uint32_t slot = s.grid.add(bc);
  initMasks(s.grid.brick(slot), world, s);
  setImplicit(s, world, slot);
  return slot;
}

std::int32_t wetRecord(WaterState& s, const BrickStore& world, BrickCoord bc) {
  const std::int32_t found = s.grid.find(bc);
  if (found >= 0 || !world.bounds().containsBrick(bc)) return found;
  const VoxelBox box{{bc.x * kBrickSize, bc.y * kBrickSize, bc.z * kBrickSize},
                     {(bc.x + 1) * kBrickSize, (bc.y + 1) * kBrickSize, (bc.z + 1) * kBrickSize}};
  if (!regionHasAny(world, s.liquid, box)) return kNoBrick;
  return static_cast<std::int32_t>(materialiseBrick(s, world, bc));
}

}  // namespace internal::water

namespace {

// Per material: water may be there (air or a liquid), and it is a liquid.
void setMaterialTables(WaterState& s, const MaterialTable& mt) {
  for (std::size_t m = 0; m < mt.size(); ++m) {
    const Material& mat = mt[static_cast<MaterialId>(m)];
    s.liquid[m] = mat.liquid ? 1 : 0;
    s.open[m] = (m == kAir || mat.liquid) ? 1 : 0;
    const bool soaks = mat.sound == SoundClass::Soil || mat.sound == SoundClass::Grass ||
                       mat.sound == SoundClass::Sand || mat.sound == SoundClass::Gravel;
    s.porous[m] = !mat.liquid && m != kAir && soaks ? 1 : 0;
  }
  s.open[kAir] = 1;
  if (auto w = mt.find("water")) s.water = *w;
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
  setMaterialTables(s, setup.materials);
  s.grid.reset(world.bounds());
  const auto& liquid = s.liquid;

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

  // Generated water is implicit (water_grid.h): it needs no record until something
  // disturbs it; the record then knows which of it is held (initHeld).
  s.grid.reserve(1024);
  for (const Pond& pond : setup.scene.ponds) {
    const auto r = static_cast<std::int64_t>(std::llround(pond.radius * kVoxelsPerMetre));
    s.pondDiscs.push_back({toVoxel(pond.center.x), toVoxel(pond.center.z), r * r});
  }
  const std::shared_ptr<const LandscapePlan> plan = landscapePlan(setup.scene, setup.seed);
  if (!setup.scene.streams.empty() || (plan && !plan->riverSegments().empty()))
    s.channels = std::make_shared<const TerrainSampler>(setup.scene, setup.seed);
  s.pourCapWetVoxels = s.grid.size() + kMaxPouredWetVoxels;  // materialising raises it

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

void initMirrorWater(WaterState& state, const BrickStore& world, const MaterialTable& materials) {
  state = WaterState{};
  setMaterialTables(state, materials);
  state.grid.reset(world.bounds());
}

void materialiseWaterForWrite(WaterState& state, const BrickStore& world, BrickCoord b) {
  (void)wetRecord(state, world, b);
}

void stepWater(WaterState& state, SimContext& ctx) {
  WaterTick t(state, ctx);
  t.run();
}

bool pourWater(WaterState& state, SimContext& ctx, VoxelCoord voxel, std::uint32_t amount) {
  if (amount == 0 || state.water == kAir) return false;
  if (!ctx.world().bounds().containsVoxel(voxel)) return false;
  WaterTick t(state, ctx);
  return t.pour(voxel, amount);
}

std::uint16_t waterAt(const WaterState& state, const BrickStore& world, VoxelCoord voxel) {
  if (!world.bounds().containsVoxel(voxel)) return 0;
  const std::int32_t slot = state.grid.find(brickOf(voxel));
  if (slot >= 0) return state.grid.brick(static_cast<std::uint32_t>(slot)).amount[cellIndex(voxel)];
  return static_cast<std::uint16_t>(state.liquid[world.get(voxel)] ? kFull : 0);
}

void applyWaterChanges(WaterState& state, const BrickStore& world, std::span<const WaterChange> changes) {
  for (const WaterChange& c : changes) {
    const std::uint32_t slot = materialiseBrick(state, world, brickOf(c.voxel));
    state.grid.setAmount(slot, cellIndex(c.voxel), c.amount);
    state.grid.brick(slot).modified = true;
  }
}

void resetWaterInCell(WaterState& state, const BrickStore& world, CellCoord cell) {
  WaterGrid& g = state.grid;
  for (std::uint32_t slot = 0; slot < g.brickCount(); ++slot) {
    if (g.brick(slot).modified && cellOf(g.brick(slot).coord) == cell) setImplicit(state, world, slot);
  }
}

void hashWater(const WaterState& state, StateHasher& h) {
  std::uint64_t hashed = 0;
  for (const std::uint32_t slot : state.grid.sorted()) {
    const WaterBrick& b = state.grid.brick(slot);
    if (!b.modified || b.wet == 0) continue;
    ++hashed;
    h.add(b.coord.x);
    h.add(b.coord.y);
    h.add(b.coord.z);
    for (int i = 0; i < kBrickVoxels; i += 4) {
      const auto* a = &b.amount[static_cast<std::size_t>(i)];
      h.add(static_cast<std::uint64_t>(a[0]) | static_cast<std::uint64_t>(a[1]) << 16 |
            static_cast<std::uint64_t>(a[2]) << 32 | static_cast<std::uint64_t>(a[3]) << 48);
    }
  }
  h.add(hashed);
}

std::optional<std::string> diffWater(const WaterState& e, const WaterState& a) {
  // Merge-walk both states' modified bricks in canonical order. A brick modified on
  // one side only is compared with the other side's record when it has one (holding
  // its implicit water), else with dry cells: a correct mirror modifies exactly the
  // bricks the server does (their WaterChanges), so either way a difference is real.
  static constexpr std::array<std::uint16_t, kBrickVoxels> kDry{};
  auto next = [](const WaterState& w, std::size_t& i) -> const WaterBrick* {
    const auto sorted = w.grid.sorted();
    while (i < sorted.size() && !w.grid.brick(sorted[i]).modified) ++i;
    return i < sorted.size() ? &w.grid.brick(sorted[i]) : nullptr;
  };
  auto amounts = [&](const WaterState& w, BrickCoord bc) -> const std::array<std::uint16_t, kBrickVoxels>& {
    const std::int32_t slot = w.grid.find(bc);
    return slot >= 0 ? w.grid.brick(static_cast<std::uint32_t>(slot)).amount : kDry;
  };
  std::size_t i = 0, j = 0;
  for (;;) {
    const WaterBrick* eb = next(e, i);
    const WaterBrick* ab = next(a, j);
    if (!eb && !ab) break;
    if (eb && ab && eb->key != ab->key) {
      if (eb->key < ab->key) {
        ab = nullptr;
      } else {
        eb = nullptr;
      }
    }
    const BrickCoord bc = eb ? eb->coord : ab->coord;
    const auto& ea = eb ? eb->amount : amounts(e, bc);
    const auto& aa = ab ? ab->amount : amounts(a, bc);
    if (eb) ++i;
    if (ab) ++j;
    if (ea == aa) continue;
    for (unsigned k = 0; k < static_cast<unsigned>(kBrickVoxels); ++k) {
      if (ea[k] != aa[k]) {
        const VoxelCoord v = voxelOfBrick(bc, k);
        return internal::format("water (%d,%d,%d): expected %u, actual %u", v.x, v.y, v.z, unsigned{ea[k]},
                                unsigned{aa[k]});
      }
    }
  }
  return std::nullopt;
}

WaterStats waterStats(const WaterState& state) noexcept {
  WaterStats st = state.last;
  st.wetVoxels = state.grid.size();
  st.bricks = state.grid.brickCount();
  st.frozen = state.frozen;
  st.activeVoxels = 0;
  for (const std::uint32_t slot : state.queue) {
    for (const std::uint64_t w : state.grid.brick(slot).next) st.activeVoxels += static_cast<std::size_t>(std::popcount(w));
  }
  return st;
}

void restoreWaterVoxels(WaterState& state, const BrickStore& world, std::span<const WaterChange> voxels) {
  WaterGrid& g = state.grid;
  // Every record back to its implicit water, with its masks from the world as it is now.
  for (std::uint32_t slot = 0; slot < g.brickCount(); ++slot) {
    setImplicit(state, world, slot);
    WaterBrick& b = g.brick(slot);
    initMasks(b, world, state);
    for (int w = 0; w < internal::kCellMaskWords; ++w) b.held[static_cast<std::size_t>(w)] &= b.open[static_cast<std::size_t>(w)];
  }
  // The saved bricks: dry but for the saved voxels, and modified.
  for (const WaterChange& c : voxels) {
    const std::uint32_t slot = materialiseBrick(state, world, brickOf(c.voxel));
    if (!g.brick(slot).modified) {
      for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) g.setAmount(slot, i, 0);
      g.brick(slot).modified = true;
    }
    g.setAmount(slot, cellIndex(c.voxel), c.amount);
  }
  // Wake every wet cell of the modified bricks and of the records around them (a
  // pond cell next to a cell that changed may have been woken by the change): the
  // active set is working data, and waking a cell at rest changes nothing.
  // The modified slots first: wetRecord may add records, which moves sorted().
  std::vector<std::uint32_t> modified;
  for (const std::uint32_t slot : g.sorted())
    if (g.brick(slot).modified) modified.push_back(slot);
  std::vector<std::uint32_t> wakeBricks;
  for (const std::uint32_t slot : modified) {
    wakeBricks.push_back(slot);
    const BrickCoord bc = g.brick(slot).coord;
    for (int d = 0; d < 6; ++d) {
      const std::int32_t n = wetRecord(state, world, BrickCoord{bc.x + kDirX[d], bc.y + kDirY[d], bc.z + kDirZ[d]});
      if (n >= 0) wakeBricks.push_back(static_cast<std::uint32_t>(n));
    }
  }
  for (const std::uint32_t slot : wakeBricks) {
    WaterBrick& b = g.brick(slot);
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i)
      if (b.amount[i] > 0) internal::setBit(b.next, i);
    if (b.wet > 0 && !b.queued) {
      b.queued = true;
      state.queue.push_back(slot);
    }
  }
  state.frozen = false;
  state.watch.clear();
  for (internal::WaterSourceRoute& r : state.sources) r.valid = false;
}

}  // namespace loam::sim
