// AudioScene's continuous emitters (see audio_scene.h): the column map around the
// listener and, classified from it, wind slots, rain patches and streams; fires
// regrouped every update; the day and night beds. Each kind is an EmitterSet, so ids
// seen this update are started or updated and the rest stopped. The update's order
// and the events are in audio_scene.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "audio/dsp.h"
#include "audio/internal/audio_scene_impl.h"
#include "audio/models.h"
#include "sim/systems/fire.h"
#include "sim/systems/water.h"
#include "sim/systems/weather.h"
#include "sim/world/material.h"

namespace loam::audio {
using namespace internal;
namespace {

constexpr float kRainRadius = 9.0f;      ///< metres: patches; farther rain is the bed
constexpr float kDropsPerM2 = 200.0f;    ///< drops per second per square metre in a downpour
constexpr std::int32_t kWaterGrid = 80;  ///< voxels (4 m): streams are grouped on this grid
constexpr int kMaxFires = 32;            ///< nearest fire groups heard
constexpr float kFlameHeight = 0.4f;     ///< metres over the top burning cell's centre
constexpr int kMaxStreams = 6;
constexpr float kBedGain = 0.2f;  ///< beds are a quiet background under everything near

sim::VoxelCoord voxelAt(Vec3f p) {
  auto f = [](float m) { return static_cast<std::int32_t>(std::floor(m * static_cast<float>(sim::kVoxelsPerMetre))); };
  return {f(p.x), f(p.y), f(p.z)};
}

/// The top of column (x, z). Skips air bricks whole.
ColumnTop topOf(const sim::BrickStore& world, std::int32_t x, std::int32_t z) {
  const sim::WorldBounds& b = world.bounds();
  std::int32_t y = b.maxBrick.y * sim::kBrickSize - 1;
  const std::int32_t yMin = b.minBrick.y * sim::kBrickSize;
  while (y >= yMin) {
    sim::BrickCoord bc{x >> sim::kBrickShift, y >> sim::kBrickShift, z >> sim::kBrickShift};
    sim::BrickView v = world.brick(bc);
    const std::int32_t floorY = bc.y << sim::kBrickShift;
    if (v.isUniform()) {
      if (v.uniformMaterial() != sim::kAir) return {y, v.uniformMaterial()};
      y = floorY - 1;
      continue;
    }
    for (; y >= floorY; --y) {
      sim::MaterialId m = world.get(x, y, z);
      if (m != sim::kAir) return {y, m};
    }
  }
  return {};
}

/// Voxels of air straight below (x, y, z) down to the first non-air voxel (at most max).
std::int32_t airBelow(const sim::BrickStore& world, std::int32_t x, std::int32_t y, std::int32_t z, std::int32_t max) {
  std::int32_t n = 0;
  while (n < max && world.get(x, y - 1 - n, z) == sim::kAir) ++n;
  return n;
}

/// What rain sounds like on a sound class (false: nothing to hit, e.g. air).
bool rainSurfaceOf(sim::SoundClass c, RainSurface& out) {
  switch (c) {
    case sim::SoundClass::Water:
      out = RainSurface::Water;
      return true;
    case sim::SoundClass::Stone:
    case sim::SoundClass::Gravel:
    case sim::SoundClass::Glass:
    case sim::SoundClass::Metal:
      out = RainSurface::Stone;
      return true;
    case sim::SoundClass::Wood:
      out = RainSurface::Wood;
      return true;
    case sim::SoundClass::Foliage:
      out = RainSurface::Leaves;
      return true;
    case sim::SoundClass::Soil:
    case sim::SoundClass::Grass:
    case sim::SoundClass::Sand:
      out = RainSurface::Soil;
      return true;
    case sim::SoundClass::None:
    case sim::SoundClass::Count:
      return false;
  }
  return false;
}

/// 0 before lo, 1 after hi, smooth between.
float ramp(float x, float lo, float hi) {
  float t = clamp01((x - lo) / (hi - lo));
  return t * t * (3.0f - 2.0f * t);
}

}  // namespace

void AudioScene::Impl::refreshRows(const sim::SimState& world, int from, int to) {
  for (int k = from; k < to && k < kMapSide; ++k) {
    for (int i = 0; i < kMapSide; ++i) {
      std::int32_t x = (mapX - kMapRadius + i) * sim::kVoxelsPerMetre + sim::kVoxelsPerMetre / 2;
      std::int32_t z = (mapZ - kMapRadius + k) * sim::kVoxelsPerMetre + sim::kVoxelsPerMetre / 2;
      map[static_cast<std::size_t>(k * kMapSide + i)] = topOf(world.world, x, z);
    }
  }
}

// Wind slots: slot 0 over the listener, the others on two rings (7 and 14 m) at
// angles turned by a per-world key, each classified from the 3x3 columns under it.
void AudioScene::Impl::classifyWind(const sim::SimState& world, const Listener& listener) {
  const int n = std::max(0, config.windEmitters);
  windSlots.resize(static_cast<std::size_t>(n));
  const float turn = static_cast<float>(mixKey(world.seed ^ 0x77696e64ull) % 360u) * kPi / 180.0f;
  for (int s = 0; s < n; ++s) {
    WindSlot& slot = windSlots[static_cast<std::size_t>(s)];
    float dx = 0, dz = 0;
    if (s > 0) {
      float a = turn + 2.0f * kPi * static_cast<float>(s - 1) / static_cast<float>(std::max(1, n - 1));
      float r = (s % 2) ? 7.0f : 14.0f;
      dx = r * std::sin(a);
      dz = -r * std::cos(a);
    }
    std::int32_t cx = static_cast<std::int32_t>(std::floor(listener.position.x + dx));
    std::int32_t cz = static_cast<std::int32_t>(std::floor(listener.position.z + dz));
    int leaves = 0, grass = 0, valid = 0;
    float leafY = 0, grassY = 0, sumY = 0, minY = 1e9f, maxY = -1e9f;
    for (int k = -1; k <= 1; ++k) {
      for (int i = -1; i <= 1; ++i) {
        const ColumnTop* c = column(cx + i, cz + k);
        if (!c || c->y == kNoTop) continue;
        float y = (static_cast<float>(c->y) + 1.0f) * kMetresPerVoxel;
        ++valid;
        sumY += y;
        minY = std::min(minY, y);
        maxY = std::max(maxY, y);
        const sim::Material& m = material(world, c->m);
        if (m.foliage) {
          ++leaves;
          leafY += y;
        } else if (m.sound == sim::SoundClass::Grass) {
          ++grass;
          grassY += y;
        }
      }
    }
    Vec3f at{static_cast<float>(cx) + 0.5f, 0.0f, static_cast<float>(cz) + 0.5f};
    if (valid == 0) {
      slot.valid = false;
      continue;
    }
    // Hysteresis: a slot keeps its cover while a little of it is still there.
    int leafNeed = slot.valid && slot.cover == WindCover::Leaves ? 2 : 3;
    int grassNeed = slot.valid && slot.cover == WindCover::Grass ? 2 : 3;
    float edgeNeed = slot.valid && slot.cover == WindCover::Edge ? 1.2f : 1.5f;
    slot.valid = true;
    float surface = 0;  // metres: the top of what the wind blows over
    if (leaves >= leafNeed) {
      slot.cover = WindCover::Leaves;
      surface = leafY / static_cast<float>(leaves);
      at.y = surface - 0.5f;  // inside the canopy's top
      slot.amount = static_cast<float>(leaves) / 9.0f;
    } else if (grass >= grassNeed) {
      slot.cover = WindCover::Grass;
      surface = grassY / static_cast<float>(grass);
      at.y = surface + 0.2f;
      slot.amount = static_cast<float>(grass) / 9.0f;
    } else if (maxY - minY >= edgeNeed) {
      slot.cover = WindCover::Edge;
      surface = maxY;
      at.y = maxY;
      slot.amount = clamp01((maxY - minY) / 4.0f);
    } else {
      slot.cover = WindCover::Open;
      surface = sumY / static_cast<float>(valid);
      at.y = surface + 2.0f;
      slot.amount = 0.0f;
    }
    slot.position = at;
    // Half a voxel up: the first air voxel over the surface (windAt shelters by what
    // is above that point, so a canopy is sampled at its top, where the wind hits).
    slot.probe = {at.x, surface + 0.5f * kMetresPerVoxel, at.z};
  }
}

// Rain patches: columns within kRainRadius, grouped by sector around the listener and
// by what the drops hit; the largest groups become patches.
void AudioScene::Impl::classifyRain(const sim::SimState& world, const Listener& listener) {
  rainPatches.clear();
  const int sectors = std::max(1, config.rainPatches);
  struct Acc {
    int count = 0;
    float exposed = 0, x = 0, y = 0, z = 0;
  };
  constexpr int kSurfaces = 5;
  std::vector<Acc> acc(static_cast<std::size_t>(sectors * kSurfaces));
  const float r2 = kRainRadius * kRainRadius;
  for (int k = 0; k < kMapSide; ++k) {
    for (int i = 0; i < kMapSide; ++i) {
      const ColumnTop& c = map[static_cast<std::size_t>(k * kMapSide + i)];
      if (c.y == kNoTop) continue;
      float cx = static_cast<float>(mapX - kMapRadius + i) + 0.5f;
      float cz = static_cast<float>(mapZ - kMapRadius + k) + 0.5f;
      float dx = cx - listener.position.x, dz = cz - listener.position.z;
      if (dx * dx + dz * dz > r2) continue;
      RainSurface surface;
      if (!rainSurfaceOf(material(world, c.m).sound, surface)) continue;
      float a = std::atan2(dx, -dz);  // yaw convention: 0 north, clockwise
      if (a < 0) a += 2.0f * kPi;
      int sector = std::min(sectors - 1, static_cast<int>(a / (2.0f * kPi) * static_cast<float>(sectors)));
      std::int32_t vx = (mapX - kMapRadius + i) * sim::kVoxelsPerMetre + sim::kVoxelsPerMetre / 2;
      std::int32_t vz = (mapZ - kMapRadius + k) * sim::kVoxelsPerMetre + sim::kVoxelsPerMetre / 2;
      float exposure =
          static_cast<float>(sim::exposureAt(world.world, {vx, c.y, vz})) / static_cast<float>(sim::kExposureOpen);
      Acc& s = acc[static_cast<std::size_t>(sector * kSurfaces + static_cast<int>(surface))];
      ++s.count;
      s.exposed += exposure;
      s.x += cx;
      s.y += (static_cast<float>(c.y) + 1.0f) * kMetresPerVoxel;
      s.z += cz;
    }
  }
  std::vector<int> order;
  for (int j = 0; j < static_cast<int>(acc.size()); ++j) {
    if (acc[static_cast<std::size_t>(j)].count > 0) order.push_back(j);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return acc[static_cast<std::size_t>(a)].count > acc[static_cast<std::size_t>(b)].count;
  });
  if (static_cast<int>(order.size()) > config.rainPatches) order.resize(static_cast<std::size_t>(config.rainPatches));
  for (int j : order) {
    const Acc& s = acc[static_cast<std::size_t>(j)];
    float n = static_cast<float>(s.count);
    RainPatch p;
    p.id = emitterId(EmitterKind::Rain, static_cast<std::uint64_t>(j));
    p.surface = static_cast<RainSurface>(j % kSurfaces);
    p.position = {s.x / n, s.y / n, s.z / n};
    p.exposedM2 = s.exposed;  // each column stands for one square metre
    rainPatches.push_back(p);
  }
}

// Water: scene sources (waterfalls and springs; their falling water is routed, not
// stored in voxels) plus, from the column map, surface water that steps down to a
// lower neighbour (a stream) or hangs over air (falling water), grouped on 4 m cells.
void AudioScene::Impl::classifyWater(const sim::SimState& world, const Listener& listener) {
  waterGroups.clear();
  const sim::BrickStore& w = world.world;
  const auto& sources = world.water.sources;
  for (std::size_t s = 0; s < sources.size(); ++s) {
    const auto& src = sources[s];
    if (src.rate == 0) continue;
    Vec3f start = centreOf(src.start);
    float d = distance(start, listener.position);
    if (d > config.hearingMetres) continue;
    // Past the lip: any water there, then the air the fall crosses.
    std::int32_t y = src.start.y + 1;
    while (y > src.start.y - 40 && world.lut.liquid[w.get(src.start.x, y - 1, src.start.z)]) --y;
    std::int32_t fall = airBelow(w, src.start.x, y, src.start.z, 400);
    WaterGroup g;
    // 40 L/s (1365 units per tick) is a full waterfall.
    g.flow = clamp01(std::sqrt(static_cast<float>(src.rate) / 1365.0f));
    g.fall = static_cast<float>(fall) * kMetresPerVoxel;
    if (fall >= 10) {
      g.kind = WaterKind::Waterfall;
      g.position = {start.x, start.y - g.fall * 0.5f, start.z};
    } else {
      g.kind = WaterKind::Stream;
      g.position = start;
    }
    g.id = emitterId(EmitterKind::Water, (std::uint64_t{1} << 40) | (s << 2) | static_cast<std::uint64_t>(g.kind));
    g.dist = d;
    waterGroups.push_back(g);
  }

  struct Acc {
    std::uint64_t key = 0;
    bool falling = false;
    float flow = 0, fall = 0, x = 0, y = 0, z = 0;
    int count = 0;
  };
  std::vector<Acc> acc;
  const sim::MaterialId water = world.lut.water;
  for (int k = 0; k < kMapSide; ++k) {
    for (int i = 0; i < kMapSide; ++i) {
      const ColumnTop& c = map[static_cast<std::size_t>(k * kMapSide + i)];
      if (c.y == kNoTop || !world.lut.liquid[c.m]) continue;
      std::int32_t mx = mapX - kMapRadius + i, mz = mapZ - kMapRadius + k;
      std::int32_t vx = mx * sim::kVoxelsPerMetre + sim::kVoxelsPerMetre / 2;
      std::int32_t vz = mz * sim::kVoxelsPerMetre + sim::kVoxelsPerMetre / 2;
      // Falling: liquid over air within a few voxels of the surface.
      std::int32_t y = c.y;
      while (y > c.y - 40 && w.get(vx, y - 1, vz) == water) --y;
      std::int32_t air = airBelow(w, vx, y, vz, 400);
      bool falling = air >= 4;
      float drop = 0;
      if (!falling) {
        const int di[4] = {1, -1, 0, 0}, dk[4] = {0, 0, 1, -1};
        for (int n = 0; n < 4; ++n) {
          const ColumnTop* o = column(mx + di[n], mz + dk[n]);
          if (!o || o->y == kNoTop || !world.lut.liquid[o->m]) continue;
          drop = std::max(drop, static_cast<float>(c.y - o->y));
        }
        if (drop < 1.0f) continue;  // level water (a pond) is silent
      }
      std::int32_t gy = falling ? 1 : 0;  // falls and streams group separately
      std::uint64_t key = gridKey(floorDiv(vx, kWaterGrid), gy, floorDiv(vz, kWaterGrid));
      auto it = std::find_if(acc.begin(), acc.end(), [&](const Acc& a) { return a.key == key; });
      if (it == acc.end()) {
        acc.push_back(Acc{});
        it = acc.end() - 1;
        it->key = key;
        it->falling = falling;
      }
      ++it->count;
      it->flow += falling ? 0.25f : std::min(drop, 10.0f) / 8.0f;
      it->fall = std::max(it->fall, static_cast<float>(air) * kMetresPerVoxel);
      it->x += static_cast<float>(mx) + 0.5f;
      it->y += (static_cast<float>(c.y) + 1.0f) * kMetresPerVoxel -
               (falling ? static_cast<float>(air) * 0.5f * kMetresPerVoxel : 0.0f);
      it->z += static_cast<float>(mz) + 0.5f;
    }
  }
  std::vector<WaterGroup> groups;
  for (const Acc& a : acc) {
    float n = static_cast<float>(a.count);
    WaterGroup g;
    g.kind = a.falling ? WaterKind::Waterfall : WaterKind::Stream;
    g.position = {a.x / n, a.y / n, a.z / n};
    g.flow = clamp01(a.flow);
    g.fall = a.fall;
    g.id = emitterId(EmitterKind::Water, (std::uint64_t{2} << 48) | a.key);
    g.dist = distance(g.position, listener.position);
    if (g.dist <= config.hearingMetres) groups.push_back(g);
  }
  std::sort(groups.begin(), groups.end(),
            [](const WaterGroup& a, const WaterGroup& b) { return a.dist != b.dist ? a.dist < b.dist : a.id < b.id; });
  if (groups.size() > static_cast<std::size_t>(kMaxStreams)) groups.resize(kMaxStreams);
  waterGroups.insert(waterGroups.end(), groups.begin(), groups.end());
}

void AudioScene::Impl::updateWind(const sim::SimState& world) {
  const sim::WeatherState& weather = world.weather;
  float gust = weather.windStrength > 0
                   ? clamp01(static_cast<float>(weather.gust) / static_cast<float>(weather.windStrength))
                   : 0.0f;
  for (std::size_t s = 0; s < windSlots.size(); ++s) {
    const WindSlot& slot = windSlots[s];
    if (!slot.valid) continue;
    sim::Wind wv = sim::windAt(weather, world.world, voxelAt(slot.probe));
    float speed = std::sqrt(static_cast<float>(wv.x) * static_cast<float>(wv.x) +
                            static_cast<float>(wv.z) * static_cast<float>(wv.z)) /
                  100.0f;
    if (speed < 0.3f) continue;  // calm: no emitter (a fresh one starts when the wind does)
    EmitterState st;
    st.position = slot.position;
    st.gain = slot.cover == WindCover::Open ? 0.8f : 1.0f;
    st.priority = 0.8f;
    st.width = s == 0 ? 0.8f : 0.4f;
    st.params.v[0] = speed;
    st.params.v[1] = gust;
    st.params.v[2] = slot.amount;
    EmitterId id = emitterId(EmitterKind::Wind, s * 4 + static_cast<std::uint64_t>(slot.cover));
    std::uint64_t key = combineKey(world.seed, id);
    wind.keep(
        engine, id, [&] { return makeWind(slot.cover, key); }, st);
  }
  wind.finish(engine);
  stats.windEmitters = wind.size();
}

void AudioScene::Impl::updateRain(const sim::SimState& world, const Listener& listener) {
  float intensity = static_cast<float>(world.weather.rain) / 1000.0f;
  if (intensity > 0.0f) {
    for (const RainPatch& p : rainPatches) {
      EmitterState st;
      st.position = p.position;
      st.priority = 0.9f;
      st.width = 0.3f;
      st.params.v[0] = intensity * kDropsPerM2 * p.exposedM2;
      std::uint64_t key = combineKey(world.seed, p.id);
      RainSurface surface = p.surface;
      rain.keep(
          engine, p.id, [&] { return makeRain(surface, key); }, st);
    }
    EmitterState bed;
    bed.position = {listener.position.x, listener.position.y + 20.0f, listener.position.z};
    bed.ambient = true;
    bed.width = 1.0f;
    bed.priority = 1.0f;
    bed.params.v[0] = intensity;
    EmitterId id = emitterId(EmitterKind::RainBed, 0);
    std::uint64_t key = combineKey(world.seed, id);
    rainBed.keep(
        engine, id, [&] { return makeRainBed(key); }, bed);
  }
  rain.finish(engine);
  rainBed.finish(engine);
  stats.rainPatches = rain.size();
}

// Fires: burning cells within hearing grouped on a 4 m grid; one emitter per group
// at its centroid, nearest kMaxFires groups.
void AudioScene::Impl::updateFire(const sim::SimState& world, const Listener& listener) {
  struct Acc {
    std::uint64_t key = 0;
    int cells = 0;
    float intensity = 0, x = 0, y = 0, z = 0;
    float lo[3] = {1e9f, 1e9f, 1e9f}, hi[3] = {-1e9f, -1e9f, -1e9f};
    float dist = 0;
  };
  std::vector<Acc> acc;
  int heardCells = 0;
  for (const sim::FireCell& cell : world.fire.cells) {
    sim::VoxelCoord c{cell.corner.x + sim::kBrickSize / 2, cell.corner.y + sim::kBrickSize / 2,
                      cell.corner.z + sim::kBrickSize / 2};
    Vec3f at{static_cast<float>(c.x) * kMetresPerVoxel, static_cast<float>(c.y) * kMetresPerVoxel,
             static_cast<float>(c.z) * kMetresPerVoxel};
    if (distance(at, listener.position) > config.hearingMetres) continue;
    ++heardCells;
    std::uint64_t key =
        gridKey(floorDiv(cell.corner.x, kFireGrid), floorDiv(cell.corner.y, kFireGrid), floorDiv(cell.corner.z, kFireGrid));
    auto it = std::find_if(acc.begin(), acc.end(), [&](const Acc& a) { return a.key == key; });
    if (it == acc.end()) {
      acc.push_back(Acc{});
      it = acc.end() - 1;
      it->key = key;
    }
    ++it->cells;
    it->intensity += static_cast<float>(cell.intensity) / 255.0f;
    it->x += at.x;
    it->y += at.y;
    it->z += at.z;
    const float p[3] = {at.x, at.y, at.z};
    for (int a = 0; a < 3; ++a) {
      it->lo[a] = std::min(it->lo[a], p[a]);
      it->hi[a] = std::max(it->hi[a], p[a]);
    }
  }
  for (Acc& a : acc) {
    float n = static_cast<float>(a.cells);
    a.x /= n;
    a.y /= n;
    a.z /= n;
    a.dist = distance({a.x, a.y, a.z}, listener.position);
  }
  std::sort(acc.begin(), acc.end(),
            [](const Acc& a, const Acc& b) { return a.dist != b.dist ? a.dist < b.dist : a.key < b.key; });
  if (acc.size() > static_cast<std::size_t>(kMaxFires)) acc.resize(kMaxFires);
  fireKeys.clear();
  for (const Acc& a : acc) {
    float n = static_cast<float>(a.cells);
    float extent = std::max({a.hi[0] - a.lo[0], a.hi[1] - a.lo[1], a.hi[2] - a.lo[2]}) + 0.4f;
    EmitterState st;
    // Flames rise: the sound comes from over the burning cells, not from inside the
    // fuel (which would wall it in).
    st.position = {a.x, a.hi[1] + kFlameHeight, a.z};
    st.priority = 1.5f;
    st.width = clamp01(extent / (2.0f * std::max(a.dist, 0.5f)));
    st.params.v[0] = n;
    st.params.v[1] = a.intensity / n;
    EmitterId id = emitterId(EmitterKind::Fire, a.key);
    std::uint64_t key = combineKey(world.seed, id);
    fire.keep(
        engine, id, [&] { return makeFire(key); }, st);
    fireKeys.push_back(a.key);
  }
  std::sort(fireKeys.begin(), fireKeys.end());
  fire.finish(engine);
  stats.fires = fire.size();
  stats.burningCells = heardCells;
}

void AudioScene::Impl::updateWater() {
  for (const WaterGroup& g : waterGroups) {
    EmitterState st;
    st.position = g.position;
    st.priority = g.kind == WaterKind::Waterfall ? 1.5f : 1.0f;
    st.width = g.kind == WaterKind::Waterfall ? 0.3f : 0.2f;
    st.params.v[0] = g.flow;
    st.params.v[1] = g.fall;
    WaterKind kind = g.kind;
    std::uint64_t key = mixKey(g.id);
    water.keep(
        engine, g.id, [&] { return makeWater(kind, key); }, st);
  }
  water.finish(engine);
  stats.waterEmitters = water.size();
}

// Day and night beds crossfade over an hour either side of 06:00 and 18:00 (so the
// louder one always agrees with sim::isDaytime); rain quietens the day's birds.
void AudioScene::Impl::updateBeds(const sim::SimState& world, const Listener& listener) {
  const sim::WeatherState& weather = world.weather;
  float day = static_cast<float>(weather.dayLength ? weather.dayLength : 1);
  float hour = static_cast<float>(sim::timeOfDayAt(weather, world.tick)) / day * 24.0f;
  float dayLevel = ramp(hour, 5.0f, 7.0f) * (1.0f - ramp(hour, 17.0f, 19.0f));
  float rainHush = 1.0f - 0.6f * static_cast<float>(weather.rain) / 1000.0f;
  const float levels[2] = {dayLevel * rainHush, (1.0f - dayLevel) * rainHush};
  for (int k = 0; k < 2; ++k) {
    if (levels[k] < 0.001f) continue;
    EmitterState st;
    st.position = {listener.position.x, listener.position.y + 30.0f, listener.position.z};
    st.ambient = true;
    st.width = 1.0f;
    st.priority = 0.7f;
    st.gain = kBedGain;
    st.params.v[0] = levels[k];
    EmitterId id = emitterId(EmitterKind::Bed, static_cast<std::uint64_t>(k));
    BedKind kind = k == 0 ? BedKind::Day : BedKind::Night;
    std::uint64_t key = combineKey(world.seed, id);
    beds.keep(
        engine, id, [&] { return makeBed(kind, key); }, st);
  }
  beds.finish(engine);
}

}  // namespace loam::audio
