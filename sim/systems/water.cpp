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
#include "sim/systems/internal/water_tick.h"
#include "sim/systems/motion.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/core/state_hasher.h"

namespace loam::sim {

using namespace internal::water;

namespace internal::water {

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

}  // namespace internal::water

namespace {

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
  s.grid.reset(world.bounds());

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
  for (int ci : world.canonicalChunks()) {
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
  s.grid.reserve(wet.size() + wet.size() / 4 + 256);
  // Streams flow; the cells do not carry that flow (sources are routed), so a
  // stream's generated water is held at its level: full for good, feeding holes dug
  // beside or under it, and the open cells on its surface carry away whatever
  // reaches them (sinks, like a pond's outlet). Pond water is free.
  const bool streams = !setup.scene.streams.empty();
  // Each pond's centre and squared radius in voxels, worked out once (this runs for
  // every generated wet voxel: 71 million on highlands).
  struct PondDisc {
    std::int64_t x, z, r2;
  };
  std::vector<PondDisc> discs;
  for (const Pond& pond : setup.scene.ponds) {
    const auto r = static_cast<std::int64_t>(std::llround(pond.radius * kVoxelsPerMetre));
    discs.push_back({toVoxel(pond.center.x), toVoxel(pond.center.z), r * r});
  }
  auto inPond = [&](std::int32_t x, std::int32_t z) {
    for (const PondDisc& d : discs) {
      const std::int64_t dx = x - d.x, dz = z - d.z;
      if (dx * dx + dz * dz < d.r2) return true;
    }
    return false;
  };
  std::vector<VoxelCoord> surface;
  const std::uint32_t firstWet = s.grid.addAll(wet);
  for (std::size_t k = 0; k < wet.size(); ++k) {
    const BrickCoord& bc = wet[k];
    const std::uint32_t slot = firstWet + static_cast<std::uint32_t>(k);
    initMasks(s.grid.brick(slot), world, s);
    const BrickView v = world.brick(bc);
    v.decode(m);
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) {
      if (!liquid[m[i]]) continue;
      s.grid.setAmount(slot, i, static_cast<std::uint16_t>(kFull));
      const VoxelCoord c = voxelOfBrick(bc, i);
      if (!streams || inPond(c.x, c.z)) continue;
      internal::setBit(s.grid.brick(slot).held, i);
      const VoxelCoord above{c.x, c.y + 1, c.z};
      if (world.bounds().containsVoxel(above) && world.get(above) == kAir) surface.push_back(above);
    }
  }
  for (const VoxelCoord& c : surface) {
    std::int32_t slot = s.grid.find(brickOf(c));
    if (slot < 0) {
      slot = static_cast<std::int32_t>(s.grid.add(brickOf(c)));
      initMasks(s.grid.brick(static_cast<std::uint32_t>(slot)), world, s);
    }
    internal::setBit(s.grid.brick(static_cast<std::uint32_t>(slot)).sink, cellIndex(c));
  }
  s.pourCapWetVoxels = s.grid.size() + kMaxPouredWetVoxels;

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

void initMirrorWater(WaterState& state, const WorldBounds& bounds) {
  state = WaterState{};
  state.grid.reset(bounds);
}

void addColumnWater(WaterState& state, const BrickStore& world, const MaterialLut& lut, ChunkColumn column) {
  LOAM_ASSERT(world.columnPresent(column));
  const WorldBounds& wb = world.bounds();
  MaterialId m[kBrickVoxels];
  for (std::int32_t cy = wb.minBrick.y >> kChunkShift; cy < wb.maxBrick.y >> kChunkShift; ++cy) {
    const int ci = world.chunkIndex(ChunkCoord{column.x, cy, column.z});
    if (ci < 0) continue;  // all air
    if (world.chunkIsCollapsed(ci) && !lut.liquid[world.chunkUniform(ci).value_or(kAir)]) continue;
    for (int local = 0; local < kChunkBricks * kChunkBricks * kChunkBricks; ++local) {
      const BrickView v = world.brickInChunk(ci, local);
      if (v.isUniform() && !lut.liquid[v.uniformMaterial()]) continue;
      const BrickCoord bc{column.x * kChunkBricks + (local & 15), cy * kChunkBricks + ((local >> 4) & 15),
                          column.z * kChunkBricks + (local >> 8)};
      v.decode(m);
      bool any = false;
      for (int i = 0; i < kBrickVoxels && !any; ++i) any = lut.liquid[m[i]] != 0;
      if (!any || state.grid.find(bc) >= 0) continue;
      const std::uint32_t slot = state.grid.add(bc);
      for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i)
        if (lut.liquid[m[i]]) state.grid.setAmount(slot, i, static_cast<std::uint16_t>(kFull));
    }
  }
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

std::uint16_t waterAt(const WaterState& state, VoxelCoord voxel) { return state.grid.amountAt(voxel); }

void applyWaterChanges(WaterState& state, std::span<const WaterChange> changes) {
  for (const WaterChange& c : changes) {
    const BrickCoord bc = brickOf(c.voxel);
    std::int32_t slot = state.grid.find(bc);
    if (slot < 0) {
      if (c.amount == 0) continue;
      slot = static_cast<std::int32_t>(state.grid.add(bc));
    }
    state.grid.setAmount(static_cast<std::uint32_t>(slot), cellIndex(c.voxel), c.amount);
  }
}

void hashWater(const WaterState& state, StateHasher& h) {
  h.add(static_cast<std::uint64_t>(state.grid.size()));
  for (const std::uint32_t slot : state.grid.sorted()) {
    const WaterBrick& b = state.grid.brick(slot);
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
  const auto es = e.grid.sorted();
  const auto as = a.grid.sorted();
  std::size_t i = 0, j = 0;
  while (i < es.size() || j < as.size()) {
    const WaterBrick* eb = i < es.size() ? &e.grid.brick(es[i]) : nullptr;
    const WaterBrick* ab = j < as.size() ? &a.grid.brick(as[j]) : nullptr;
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
        const VoxelCoord v = voxelOfBrick(bc, k);
        return internal::format("water (%d,%d,%d): expected %u, actual %u", v.x, v.y, v.z, unsigned{ea[k]},
                                unsigned{aa[k]});
      }
    }
  }
  if (e.grid.size() != a.grid.size()) {
    return internal::format("water wet voxels: expected %zu, actual %zu", e.grid.size(), a.grid.size());
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
  // Dry every record and refresh its masks from the world as it is now.
  for (std::uint32_t slot = 0; slot < g.brickCount(); ++slot) {
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) g.setAmount(slot, i, 0);
    WaterBrick& b = g.brick(slot);
    initMasks(b, world, state);
    for (int w = 0; w < internal::kCellMaskWords; ++w) b.held[static_cast<std::size_t>(w)] &= b.open[static_cast<std::size_t>(w)];
  }
  for (const WaterChange& c : voxels) {
    const BrickCoord bc = brickOf(c.voxel);
    std::int32_t s = g.find(bc);
    if (s < 0) {
      s = static_cast<std::int32_t>(g.add(bc));
      initMasks(g.brick(static_cast<std::uint32_t>(s)), world, state);
    }
    const auto slot = static_cast<std::uint32_t>(s);
    const unsigned idx = cellIndex(c.voxel);
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
