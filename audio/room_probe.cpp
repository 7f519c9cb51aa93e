#include "audio/room_probe.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "audio/corner_search.h"
#include "audio/dsp.h"
#include "audio/internal/probe_trace.h"
#include "audio/worker_pool.h"
#include "sim/world/grid_walk.h"

namespace loam::audio {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kVoxelsPerMetre = static_cast<float>(sim::kVoxelsPerMetre);
/// Ray ranges per update (any split gives the same result: the estimate reduces in order).
constexpr int kRayTasks = 8;
constexpr int kMaxRays = 4096;
/// Share of a reflection into a canopy that comes back down: half of what foliage
/// does not absorb (foliage class mid-band absorption 0.6).
constexpr double kCanopyReturn = 0.5 * (1.0 - 0.6);

struct Axis3 {
  float o[3];
  float d[3];
};

/// A ray's walk through bricks or voxels (boundaries stepped, as the probe was
/// written: its rays are pinned by the render golden).
using RayGrid = sim::GridWalk<float, sim::GridTies::HighAxis, sim::GridBoundaries::Stepped>;

/// Entering material m over [t0, t1) (voxel units): true when the ray ends here.
inline bool visit(const AcousticTable& table, sim::MaterialId m, float t0, float t1, int axis,
                  const std::array<int, 3>& step, RayHit& h) {
  if (m == sim::kAir) return false;
  if (table.stops[m]) {
    h.material = m;
    h.distance = t0 / kVoxelsPerMetre;
    h.normalAxis = static_cast<std::int8_t>(axis);
    h.normalSign = static_cast<std::int8_t>(axis >= 0 ? -step[static_cast<std::size_t>(axis)] : 0);
    return true;
  }
  if (table.foliage[m]) {
    if (h.foliageDepth == 0) h.foliageStart = t0 / kVoxelsPerMetre;
    h.foliageDepth += table.scatterPerMetre[m] * (t1 - t0) / kVoxelsPerMetre;
  }
  return false;
}

RayHit traceOne(const sim::BrickStore& store, const AcousticTable& table, const Axis3& r, float tMax,
                const BrickOccupancy* occ) {
  RayHit h;
  // Clip to the world's bounds (outside is air): [tEnter, tExit).
  const sim::WorldBounds& wb = store.bounds();
  float tEnter = 0, tExit = tMax;
  int lo[3] = {wb.minBrick.x, wb.minBrick.y, wb.minBrick.z};
  int hi[3] = {wb.maxBrick.x - 1, wb.maxBrick.y - 1, wb.maxBrick.z - 1};
  for (int a = 0; a < 3; ++a) {
    float mn = static_cast<float>(lo[a] * sim::kBrickSize), mx = static_cast<float>((hi[a] + 1) * sim::kBrickSize);
    if (r.d[a] == 0) {
      if (r.o[a] < mn || r.o[a] >= mx) return h;
      continue;
    }
    float ta = (mn - r.o[a]) / r.d[a], tb = (mx - r.o[a]) / r.d[a];
    if (ta > tb) std::swap(ta, tb);
    tEnter = std::max(tEnter, ta);
    tExit = std::min(tExit, tb);
  }
  if (tEnter >= tExit) return h;

  RayGrid bd(r.o, r.d, tEnter, sim::kBrickSize, lo, hi);
  float t0 = tEnter;
  int entryAxis = tEnter > 0 ? -2 : -1;  // -2: entered the bounds from outside (axis unknown here)
  // Chunks stored as one material (collapsed) are checked once: all-air ones are
  // crossed brick by brick without reading the store.
  sim::ChunkCoord lastChunk{INT32_MIN, 0, 0};
  int chunk = -1;
  bool chunkAir = true;
  while (t0 < tExit) {
    float t1 = std::min(bd.exitT(), tExit);
    const sim::BrickCoord bc{bd.cube()[0], bd.cube()[1], bd.cube()[2]};
    const sim::ChunkCoord cc = sim::chunkOf(bc);
    if (!(cc == lastChunk)) {
      lastChunk = cc;
      chunk = store.chunkIndex(cc);
      chunkAir = chunk < 0 || (store.chunkIsCollapsed(chunk) && store.chunkUniform(chunk) == sim::kAir);
    }
    const int local = sim::brickIndexInChunk(bc);
    sim::BrickView v = chunkAir || (occ && !occ->mayHoldMatter(chunk, local)) ? sim::BrickView(sim::kAir)
                                                                               : store.brickInChunk(chunk, local);
    if (chunkAir) {
      // nothing to read in this chunk
    } else if (v.isUniform()) {
      int axis = entryAxis >= 0 ? entryAxis : -1;
      if (visit(table, v.uniformMaterial(), t0, t1, axis, bd.steps(), h)) {
        if (h.normalAxis < 0 && t0 > 0) {  // entered from outside the bounds: the largest-|d| axis
          int a = std::fabs(r.d[0]) > std::fabs(r.d[1]) ? (std::fabs(r.d[0]) > std::fabs(r.d[2]) ? 0 : 2)
                                                          : (std::fabs(r.d[1]) > std::fabs(r.d[2]) ? 1 : 2);
          h.normalAxis = static_cast<std::int8_t>(a);
          h.normalSign = static_cast<std::int8_t>(-bd.steps()[static_cast<std::size_t>(a)]);
        }
        return h;
      }
    } else if (sim::CoarseSample cs = store.coarse(bc); cs.solid == 0) {
      // No solid voxel: cross at brick resolution, scattering by the mean opacity.
      if (cs.opacity > 0) {
        if (h.foliageDepth == 0) h.foliageStart = t0 / kVoxelsPerMetre;
        h.foliageDepth += table.coarseDepthPerMetre[cs.opacity] * (t1 - t0) / kVoxelsPerMetre;
      }
    } else {
      // Mixed brick: walk its voxels from t0 to t1.
      const int vlo[3] = {bd.cube()[0] * sim::kBrickSize, bd.cube()[1] * sim::kBrickSize,
                          bd.cube()[2] * sim::kBrickSize};
      const int vhi[3] = {vlo[0] + 7, vlo[1] + 7, vlo[2] + 7};
      RayGrid vd(r.o, r.d, t0, 1, vlo, vhi);
      int voxelAxis = entryAxis >= 0 ? entryAxis : -1;  // the axis the current voxel was entered across
      float vt0 = t0;
      for (;;) {
        float vt1 = std::min(vd.exitT(), t1);
        const std::array<int, 3>& c = vd.cube();
        if (visit(table, v.get(c[0] - vlo[0], c[1] - vlo[1], c[2] - vlo[2]), vt0, vt1, voxelAxis, vd.steps(), h))
          return h;
        if (vd.exitT() >= t1) break;
        const sim::GridCrossing<float> crossing = vd.advance();
        vt0 = crossing.t;
        voxelAxis = crossing.axis;
        if (!vd.inside()) break;
      }
    }
    if (bd.exitT() >= tExit) break;
    const sim::GridCrossing<float> crossing = bd.advance();
    t0 = crossing.t;
    entryAxis = crossing.axis;
  }
  return h;
}

}  // namespace

namespace internal {

// Crosses air chunks and uniform bricks whole, walks the voxel column only in mixed
// bricks with solids (canopies at brick resolution, as traceOne does).
SkyColumn skyAbove(const sim::BrickStore& store, const AcousticTable& table, int x, int y, int z,
                   const BrickOccupancy* occ) noexcept {
  SkyColumn c;
  const sim::WorldBounds& wb = store.bounds();
  const int top = wb.maxBrick.y * sim::kBrickSize;
  if (x < wb.minBrick.x * sim::kBrickSize || x >= wb.maxBrick.x * sim::kBrickSize ||
      z < wb.minBrick.z * sim::kBrickSize || z >= wb.maxBrick.z * sim::kBrickSize)
    return c;
  y = std::max(y, wb.minBrick.y * sim::kBrickSize);
  float depth = 0;  // optical depth (per metre * metres)
  constexpr float kVoxel = 1.0f / kVoxelsPerMetre;
  while (y < top) {
    const sim::BrickCoord bc{x >> 3, y >> 3, z >> 3};
    const sim::ChunkCoord cc = sim::chunkOf(bc);
    const int chunk = store.chunkIndex(cc);
    if (chunk < 0 || (store.chunkIsCollapsed(chunk) && store.chunkUniform(chunk) == sim::kAir)) {
      y = (cc.y + 1) * sim::kChunkBricks * sim::kBrickSize;
      continue;
    }
    const int local = sim::brickIndexInChunk(bc);
    const int brickTop = (bc.y + 1) * sim::kBrickSize;
    if (occ && !occ->mayHoldMatter(chunk, local)) {
      y = brickTop;
      continue;
    }
    const sim::BrickView v = store.brickInChunk(chunk, local);
    if (v.isUniform()) {
      const sim::MaterialId m = v.uniformMaterial();
      if (table.stops[m]) return {true, 0.0f};
      if (table.foliage[m]) depth += table.scatterPerMetre[m] * static_cast<float>(brickTop - y) * kVoxel;
    } else if (sim::CoarseSample cs = store.coarse(bc); cs.solid == 0) {
      depth += table.coarseDepthPerMetre[cs.opacity] * static_cast<float>(brickTop - y) * kVoxel;
    } else {
      for (int ly = y & 7; ly < 8; ++ly) {
        const sim::MaterialId m = v.get(x & 7, ly, z & 7);
        if (table.stops[m]) return {true, 0.0f};
        if (table.foliage[m]) depth += table.scatterPerMetre[m] * kVoxel;
      }
    }
    y = brickTop;
  }
  c.transmission = std::max(std::exp(-depth), 1e-4f);  // > 0: not roofed, however dense the leaves
  return c;
}

bool clearLine(const sim::BrickStore& store, const AcousticTable& table, Vec3f a, Vec3f b) noexcept {
  float d[3] = {b.x - a.x, b.y - a.y, b.z - a.z};
  const float len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  if (!(len > 0)) return true;
  for (float& v : d) v /= len;
  const Axis3 r{{a.x * kVoxelsPerMetre, a.y * kVoxelsPerMetre, a.z * kVoxelsPerMetre}, {d[0], d[1], d[2]}};
  return !traceOne(store, table, r, len * kVoxelsPerMetre, nullptr).hit();
}

}  // namespace internal

namespace {

using internal::skyAbove;
using internal::SkyColumn;

inline int floorInt(float v) { return static_cast<int>(std::floor(v)); }

/// Fills h.sky (and h.leftRoofAt when the listener is roofed) for a traced ray.
/// tEnd: voxel units where the ray ended (its hit, or where it left the bounds or range).
void findSky(const sim::BrickStore& store, const AcousticTable& table, const Axis3& r, float tEnd, bool roofed,
             const BrickOccupancy* occ, RayHit& h) {
  if (h.hit()) {
    if (h.normalAxis < 0) return;  // started inside solid
    const float t = h.distance * kVoxelsPerMetre;
    float q[3] = {r.o[0] + r.d[0] * t, r.o[1] + r.d[1] * t, r.o[2] + r.d[2] * t};
    q[h.normalAxis] += 0.02f * static_cast<float>(h.normalSign);  // the air side of the face
    SkyColumn s = skyAbove(store, table, floorInt(q[0]), floorInt(q[1]), floorInt(q[2]), occ);
    h.sky = s.transmission;
    if (!roofed || s.roofed) return;
  } else if (!roofed) {
    return;
  }
  // Under a roof, ending under the sky: march out in 0.4 m steps to where the roof ends.
  constexpr float kStep = static_cast<float>(sim::kBrickSize);
  for (float t = kStep; t < tEnd; t += kStep) {
    SkyColumn s = skyAbove(store, table, floorInt(r.o[0] + r.d[0] * t), floorInt(r.o[1] + r.d[1] * t),
                           floorInt(r.o[2] + r.d[2] * t), occ);
    if (!s.roofed) {
      h.leftRoofAt = (t - 0.5f * kStep) / kVoxelsPerMetre;  // between the last roofed sample and this one
      return;
    }
  }
  h.leftRoofAt = tEnd / kVoxelsPerMetre;
}

}  // namespace

std::array<float, 3> soundClassAbsorption(sim::SoundClass c) noexcept {
  switch (c) {
    case sim::SoundClass::None: return {0.0f, 0.0f, 0.0f};
    case sim::SoundClass::Soil: return {0.3f, 0.5f, 0.6f};
    case sim::SoundClass::Grass: return {0.3f, 0.5f, 0.6f};
    case sim::SoundClass::Sand: return {0.15f, 0.35f, 0.45f};
    case sim::SoundClass::Gravel: return {0.25f, 0.4f, 0.5f};
    case sim::SoundClass::Stone: return {0.02f, 0.03f, 0.05f};
    case sim::SoundClass::Wood: return {0.15f, 0.1f, 0.1f};
    case sim::SoundClass::Foliage: return {0.4f, 0.6f, 0.7f};
    case sim::SoundClass::Glass: return {0.1f, 0.04f, 0.02f};
    case sim::SoundClass::Water: return {0.01f, 0.01f, 0.02f};
    case sim::SoundClass::Metal: return {0.01f, 0.02f, 0.03f};
    case sim::SoundClass::Count: break;
  }
  return {0.02f, 0.03f, 0.05f};
}

AcousticTable defaultAcousticTable() noexcept {
  AcousticTable t;
  for (int o = 0; o < 256; ++o)
    t.coarseDepthPerMetre[static_cast<std::size_t>(o)] = -std::log(1.0f - std::min(static_cast<float>(o) / 255.0f, 0.99f)) / 0.4f;
  for (int i = 1; i < 256; ++i) {
    t.stops[static_cast<std::size_t>(i)] = 1;
    t.absorption[static_cast<std::size_t>(i)] = soundClassAbsorption(sim::SoundClass::Stone);
  }
  return t;
}

AcousticTable makeAcousticTable(const sim::MaterialTable& materials) noexcept {
  AcousticTable t = defaultAcousticTable();
  for (std::size_t i = 0; i < materials.size(); ++i) {
    const sim::Material& m = materials[static_cast<sim::MaterialId>(i)];
    t.stops[i] = (m.solid || m.liquid) ? 1 : 0;
    t.foliage[i] = (!t.stops[i] && m.foliage) ? 1 : 0;
    float op = std::clamp(m.acousticOpacity, 0.0f, 0.99f);
    t.scatterPerMetre[i] = t.foliage[i] ? -std::log(1.0f - op) / 0.4f : 0.0f;
    t.absorption[i] = soundClassAbsorption(m.sound);
  }
  t.stops[sim::kAir] = 0;
  t.foliage[sim::kAir] = 0;
  return t;
}

void makeRayDirections(const ProbeConfig& config, std::uint64_t update, std::span<Vec3f> out) noexcept {
  // Keyed uniform random rotation (Shoemake's quaternion from three uniforms).
  KeyedRng rng(combineKey(config.key, update));
  double u1 = rng.uniform(), u2 = rng.uniform(), u3 = rng.uniform();
  double s1 = std::sqrt(1.0 - u1), s2 = std::sqrt(u1);
  double qx = s1 * std::sin(2 * std::numbers::pi * u2), qy = s1 * std::cos(2 * std::numbers::pi * u2);
  double qz = s2 * std::sin(2 * std::numbers::pi * u3), qw = s2 * std::cos(2 * std::numbers::pi * u3);
  double m[3][3] = {{1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)},
                    {2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)},
                    {2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)}};
  const int n = static_cast<int>(out.size());
  const double golden = std::numbers::pi * (3.0 - std::sqrt(5.0));
  for (int i = 0; i < n; ++i) {
    double y = 1.0 - (2.0 * i + 1.0) / n, rr = std::sqrt(std::max(0.0, 1.0 - y * y)), phi = golden * i;
    double v[3] = {rr * std::cos(phi), y, rr * std::sin(phi)};
    double w[3];
    for (int a = 0; a < 3; ++a) w[a] = m[a][0] * v[0] + m[a][1] * v[1] + m[a][2] * v[2];
    out[static_cast<std::size_t>(i)] = {static_cast<float>(w[0]), static_cast<float>(w[1]), static_cast<float>(w[2])};
  }
}

BrickOccupancy::BrickOccupancy(const sim::BrickStore& store) : epoch_(store.slotEpoch()) {
  maskOf_.assign(static_cast<std::size_t>(store.chunkCount()), -1);
  for (int i = 0; i < store.chunkCount(); ++i)
    if (!store.chunkIsCollapsed(i)) buildChunk(store, i);
}

void BrickOccupancy::buildChunk(const sim::BrickStore& store, int i) {
  std::int32_t& m = maskOf_[static_cast<std::size_t>(i)];
  if (m < 0) {
    m = static_cast<std::int32_t>(masks_.size());
    masks_.resize(masks_.size() + 64, 0);
    maskCoord_.push_back(store.chunkCoord(i));
  }
  std::uint64_t* w = masks_.data() + m;
  for (int local = 0; local < 4096; ++local) {
    bool matter = !store.brickInChunk(i, local).isAir();
    std::uint64_t bit = std::uint64_t{1} << (local & 63);
    w[local >> 6] = matter ? (w[local >> 6] | bit) : (w[local >> 6] & ~bit);
  }
}

void BrickOccupancy::followSlots(const sim::BrickStore& store) {
  if (epoch_ == store.slotEpoch()) return;
  epoch_ = store.slotEpoch();
  // Within one epoch a chunk keeps its slot, so each coordinate owns at most one
  // block; walk the blocks in order, moving the kept ones down over the dropped.
  maskOf_.assign(static_cast<std::size_t>(store.chunkCount()), -1);
  std::size_t kept = 0;
  for (std::size_t k = 0; k < maskCoord_.size(); ++k) {
    const int i = store.chunkIndex(maskCoord_[k]);
    if (i < 0) continue;  // the chunk left: its bits go with it
    if (kept != k) {
      std::copy_n(masks_.begin() + static_cast<std::ptrdiff_t>(k * 64), 64,
                  masks_.begin() + static_cast<std::ptrdiff_t>(kept * 64));
      maskCoord_[kept] = maskCoord_[k];
    }
    maskOf_[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(kept * 64);
    ++kept;
  }
  masks_.resize(kept * 64);
  maskCoord_.resize(kept);
}

void BrickOccupancy::refresh(const sim::BrickStore& store, sim::BrickCoord b) {
  followSlots(store);
  int i = store.chunkIndex(sim::chunkOf(b));
  if (i < 0) return;
  // A chunk made resident after construction (an edit in air) gets a new slot.
  if (static_cast<std::size_t>(i) >= maskOf_.size()) maskOf_.resize(static_cast<std::size_t>(i) + 1, -1);
  std::int32_t m = maskOf_[static_cast<std::size_t>(i)];
  if (m < 0) {
    if (!store.chunkIsCollapsed(i)) buildChunk(store, i);
    return;
  }
  // Bits of a chunk that collapsed again stay valid: collapsed chunks are read whole.
  int local = sim::brickIndexInChunk(b);
  std::uint64_t bit = std::uint64_t{1} << (local & 63);
  std::uint64_t& word = masks_[static_cast<std::size_t>(m) + static_cast<std::size_t>(local >> 6)];
  word = store.brickInChunk(i, local).isAir() ? (word & ~bit) : (word | bit);
}

void traceRays(const sim::BrickStore& store, const AcousticTable& table, Vec3f origin, std::span<const Vec3f> dirs,
               int begin, int end, float maxDistance, std::span<RayHit> out, const BrickOccupancy* occupancy) noexcept {
  float tMax = maxDistance * kVoxelsPerMetre;
  const float o[3] = {origin.x * kVoxelsPerMetre, origin.y * kVoxelsPerMetre, origin.z * kVoxelsPerMetre};
  // The listener's own column: under a roof, rays that end under the sky left through a mouth.
  const bool roofed = skyAbove(store, table, floorInt(o[0]), floorInt(o[1]), floorInt(o[2]), occupancy).roofed;
  for (int i = begin; i < end; ++i) {
    const Vec3f& d = dirs[static_cast<std::size_t>(i)];
    Axis3 r{{o[0], o[1], o[2]}, {d.x, d.y, d.z}};
    RayHit h = traceOne(store, table, r, tMax, occupancy);
    findSky(store, table, r, h.hit() ? h.distance * kVoxelsPerMetre : tMax, roofed, occupancy, h);
    out[static_cast<std::size_t>(i)] = h;
  }
}

namespace {

float dot(const Vec3f& a, const Vec3f& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
Vec3f normalised(double x, double y, double z) {
  double l = std::sqrt(x * x + y * y + z * z);
  if (l <= 0) return {0, 1, 0};
  return {static_cast<float>(x / l), static_cast<float>(y / l), static_cast<float>(z / l)};
}
/// Cube-map bin (6 faces x 4 x 4) of a direction.
int cubeBin(const Vec3f& d) {
  float ax = std::fabs(d.x), ay = std::fabs(d.y), az = std::fabs(d.z);
  int face;
  float u, v, m;
  if (ax >= ay && ax >= az) { face = d.x > 0 ? 0 : 1; m = ax; u = d.y; v = d.z; }
  else if (ay >= az) { face = d.y > 0 ? 2 : 3; m = ay; u = d.x; v = d.z; }
  else { face = d.z > 0 ? 4 : 5; m = az; u = d.x; v = d.y; }
  int iu = std::clamp(static_cast<int>((u / m + 1.0f) * 2.0f), 0, 3);
  int iv = std::clamp(static_cast<int>((v / m + 1.0f) * 2.0f), 0, 3);
  return face * 16 + iv * 4 + iu;
}

/// Eyring reverb time (s) with air absorption in band b, clamped to [0.05, 20].
float eyring(double vol, double area, double a, int b) {
  a = std::clamp(a, 0.0, 0.999);
  double denom = -area * std::log(1.0 - a) + 4.0 * kAirAbsorptionPerMetre[static_cast<std::size_t>(b)] * vol;
  double t = denom > 0 ? 0.161 * vol / denom : 0.05;
  return static_cast<float>(std::clamp(t, 0.05, 20.0));
}

}  // namespace

RoomEstimate estimateRoom(std::span<const Vec3f> dirs, std::span<const RayHit> hits, const AcousticTable& table,
                          const ProbeConfig& config) noexcept {
  const float roomRadius = std::min(config.roomRadius, config.maxDistance);
  RoomEstimate e;
  const int n = std::min(static_cast<int>(std::min(dirs.size(), hits.size())), kMaxRays);
  if (n == 0) return e;
  const double w = 4.0 * std::numbers::pi / n;

  // Pass 1: shares and the opening distance r_o (rms distance of the hit parts).
  double up = 0, upHit = 0, sky = 0, skyEsc = 0, hitW = 0, hitDist = 0, r2 = 0, r2W = 0;
  for (int i = 0; i < n; ++i) {
    const RayHit& h = hits[static_cast<std::size_t>(i)];
    const Vec3f& d = dirs[static_cast<std::size_t>(i)];
    double s = h.foliageDepth > 0 ? 1.0 - std::exp(-static_cast<double>(h.foliageDepth)) : 0.0;
    double hitPart = h.hit() ? 1.0 : s;
    if (d.y >= 0) { up += 1; upHit += hitPart; }
    if (d.y >= 0.5f) { sky += 1; skyEsc += 1.0 - hitPart; }
    hitW += hitPart;
    if (h.hit() && h.distance <= roomRadius) {
      double r = h.distance;
      hitDist += r * (1.0 - s);
      r2 += r * r * (1.0 - s);
      r2W += 1.0 - s;
    }
    if (s > 0) {
      double r = h.foliageStart + 0.5;
      hitDist += r * s;
      r2 += r * r * s;
      r2W += s;
    }
  }
  e.enclosure = up > 0 ? static_cast<float>(upHit / up) : 0.0f;
  e.openness = sky > 0 ? static_cast<float>(skyEsc / sky) : 0.0f;
  e.hitShare = static_cast<float>(hitW / n);
  e.meanHitDistance = r2W > 0 ? static_cast<float>(hitDist / r2W) : 0.0f;
  const double ro = r2W > 0 ? std::sqrt(r2 / r2W) : static_cast<double>(roomRadius);

  // Upward escaping share, for what foliage scatters upwards.
  double escUp = 0, nUp = 0;
  for (int i = 0; i < n; ++i) {
    const RayHit& h = hits[static_cast<std::size_t>(i)];
    if (dirs[static_cast<std::size_t>(i)].y <= 0) continue;
    double s = h.foliageDepth > 0 ? 1.0 - std::exp(-static_cast<double>(h.foliageDepth)) : 0.0;
    escUp += h.hit() ? 0.0 : 1.0 - s;
    nUp += 1;
  }
  escUp = nUp > 0 ? escUp / nUp : 0.0;

  // Pass 2: volume, area and absorbing area per band, and the sky loss P: the share of
  // what each hit reflects that leaves for the sky, averaged over the hits by solid
  // angle (not by area: grazing hits' large areas would make it noisy).
  // Absorbing area: patches (foliage, mouths, escapes) by their area; walls by their
  // area times their mean absorption, which is weighted with grazing views clamped
  // harder (a few grazing hits would otherwise swing it from one update to the next).
  double vol = 0, area = 0, absorb[3] = {0, 0, 0}, wallArea = 0, wallAbs[3] = {0, 0, 0}, wallW = 0;
  double skySum = 0, skyW = 0;
  for (int i = 0; i < n; ++i) {
    const RayHit& h = hits[static_cast<std::size_t>(i)];
    const Vec3f& d = dirs[static_cast<std::size_t>(i)];
    // A ray that left the roof through a mouth (within the room radius) counts whole as
    // the mouth: leaves and ground outside are not part of this room.
    const bool mouth = h.leftRoofAt > 0 && h.leftRoofAt <= roomRadius;
    double s = h.foliageDepth > 0 && !(mouth && h.foliageStart >= h.leftRoofAt)
                   ? 1.0 - std::exp(-static_cast<double>(h.foliageDepth))
                   : 0.0;
    if (s > 0) {
      double r = h.foliageStart + 0.5, dA = w * s * r * r;
      vol += w * s * r * r * r / 3.0;
      area += dA;
      // Foliage absorbs like its class and passes most of the rest: count leaves as foliage class.
      auto fa = soundClassAbsorption(sim::SoundClass::Foliage);
      for (int b = 0; b < 3; ++b) absorb[b] += dA * fa[static_cast<std::size_t>(b)];
      skySum += s * 0.75 * escUp;  // half scattered upwards, half of the rest back up by the ground
      skyW += s;
    }
    double rest = 1.0 - s;
    if (mouth) {
      // Left the enclosure through a mouth: the mouth is the absorbing surface, not
      // whatever lies outside (grazing ground past a cave mouth would swamp the room).
      // The patch faces the listener: a jagged roof edge gives no steady normal.
      double r = std::max(0.5, static_cast<double>(h.leftRoofAt));
      vol += w * rest * r * r * r / 3.0;
      area += w * rest * r * r;
      for (double& ab : absorb) ab += w * rest * r * r;
    } else if (h.hit() && h.distance <= roomRadius) {
      double r = h.distance;
      float c = 1.0f;
      if (h.normalAxis == 0) c = std::fabs(d.x);
      else if (h.normalAxis == 1) c = std::fabs(d.y);
      else if (h.normalAxis == 2) c = std::fabs(d.z);
      double dA = w * rest * r * r / std::max(static_cast<double>(c), 0.05);
      vol += w * rest * r * r * r / 3.0;
      area += dA;
      // Sky loss of this hit (second bounce): a floor under open sky reflects into the
      // sky; a wall half into it and half down to ground that sends half of that up; a
      // ceiling none.
      // Leaves above (0 < sky < 1) are no ceiling: of what they stop they absorb more
      // than half and scatter half of the rest up, so only ~kCanopyReturn comes back.
      double facing = h.normalAxis == 1 ? (h.normalSign > 0 ? 1.0 : 0.0) : 0.75;
      double lost = h.sky > 0 ? 1.0 - kCanopyReturn * (1.0 - static_cast<double>(h.sky)) : 0.0;
      skySum += rest * facing * lost;
      skyW += rest;
      const auto& a = table.absorption[h.material];
      const double aw = rest * r * r / std::max(static_cast<double>(c), 0.25);
      for (int b = 0; b < 3; ++b) wallAbs[b] += aw * a[static_cast<std::size_t>(b)];
      wallW += aw;
      wallArea += dA;
    } else {
      double dA = w * rest * ro * ro;
      vol += w * rest * ro * ro * ro / 3.0;
      area += dA;
      for (double& ab : absorb) ab += dA;
    }
  }
  e.volume = static_cast<float>(vol);
  e.surface = static_cast<float>(area);
  e.meanFreePath = area > 0 ? static_cast<float>(4.0 * vol / area) : roomRadius;
  for (int b = 0; b < 3; ++b) {
    const double sky = skyW > 0 ? skySum / skyW : 0.0;
    double a = area > 0 ? (absorb[b] + (wallW > 0 ? wallArea * wallAbs[b] / wallW : 0.0)) / area : 1.0;
    a = std::clamp(a + (1.0 - a) * sky, 0.0, 0.999);
    e.absorption[static_cast<std::size_t>(b)] = static_cast<float>(a);
    e.rt60[static_cast<std::size_t>(b)] = eyring(vol, area, a, b);
  }

  // Openings: cluster the escaping rays (weight = their unscattered share).
  std::array<std::int8_t, kMaxRays> group;
  std::array<float, kMaxRays> weight;
  int escapes = 0;
  for (int i = 0; i < n; ++i) {
    const RayHit& h = hits[static_cast<std::size_t>(i)];
    double s = h.foliageDepth > 0 ? 1.0 - std::exp(-static_cast<double>(h.foliageDepth)) : 0.0;
    // Rays that hit outside after leaving the roof went out through the mouth too.
    const bool out = !h.hit() || h.leftRoofAt > 0;
    weight[static_cast<std::size_t>(i)] = out ? static_cast<float>(1.0 - s) : 0.0f;
    group[static_cast<std::size_t>(i)] = weight[static_cast<std::size_t>(i)] > 0.05f ? -1 : -2;  // -1 free, -2 not escaping
    if (group[static_cast<std::size_t>(i)] == -1) ++escapes;
  }
  const float kGather = std::cos(50.0f * kPi / 180.0f);
  int count = 0;
  while (escapes > 0 && count < 4) {
    std::array<float, 96> bin{};
    for (int i = 0; i < n; ++i)
      if (group[static_cast<std::size_t>(i)] == -1) bin[static_cast<std::size_t>(cubeBin(dirs[static_cast<std::size_t>(i)]))] += weight[static_cast<std::size_t>(i)];
    int best = 0;
    for (int b = 1; b < 96; ++b)
      if (bin[static_cast<std::size_t>(b)] > bin[static_cast<std::size_t>(best)]) best = b;
    double sx = 0, sy = 0, sz = 0;
    for (int i = 0; i < n; ++i) {
      const Vec3f& d = dirs[static_cast<std::size_t>(i)];
      if (group[static_cast<std::size_t>(i)] == -1 && cubeBin(d) == best) {
        float wt = weight[static_cast<std::size_t>(i)];
        sx += d.x * wt; sy += d.y * wt; sz += d.z * wt;
      }
    }
    Vec3f seed = normalised(sx, sy, sz);
    // Gather round the seed, then centre on the members' mean.
    sx = sy = sz = 0;
    double share = 0;
    for (int i = 0; i < n; ++i) {
      const Vec3f& d = dirs[static_cast<std::size_t>(i)];
      if (group[static_cast<std::size_t>(i)] != -1 || dot(d, seed) < kGather) continue;
      float wt = weight[static_cast<std::size_t>(i)];
      group[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(count);
      --escapes;
      sx += d.x * wt; sy += d.y * wt; sz += d.z * wt;
      share += wt;
    }
    if (share <= 0) break;
    e.openings[static_cast<std::size_t>(count)] = {normalised(sx, sy, sz), static_cast<float>(share / n)};
    ++count;
  }
  // Leftovers join the nearest opening, so the shares add up to the escaping share.
  for (int i = 0; i < n && count > 0; ++i) {
    if (group[static_cast<std::size_t>(i)] != -1) continue;
    const Vec3f& d = dirs[static_cast<std::size_t>(i)];
    int bestG = 0;
    float bestDot = -2;
    for (int g = 0; g < count; ++g) {
      float dd = dot(d, e.openings[static_cast<std::size_t>(g)].direction);
      if (dd > bestDot) { bestDot = dd; bestG = g; }
    }
    e.openings[static_cast<std::size_t>(bestG)].share += weight[static_cast<std::size_t>(i)] / static_cast<float>(n);
    group[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(bestG);
  }
  // Distances to the mouths: where the group's rays left the roof (mean over them);
  // without a roof, a sky opening gets its canopy's height (else a few metres), a
  // sideways one the nearest wall above the horizon round its centre (the edge of the
  // gap it looks through; ground below the horizon is no edge), else a few metres.
  for (int g = 0; g < count; ++g) {
    Opening& o = e.openings[static_cast<std::size_t>(g)];
    double left = 0, leftW = 0, canopy = 0, canopyW = 0, cone = 0, wall = kInf;
    for (int i = 0; i < n; ++i) {
      const RayHit& h = hits[static_cast<std::size_t>(i)];
      const Vec3f& d = dirs[static_cast<std::size_t>(i)];
      if (group[static_cast<std::size_t>(i)] == g && h.leftRoofAt > 0) {
        left += static_cast<double>(weight[static_cast<std::size_t>(i)]) * h.leftRoofAt;
        leftW += weight[static_cast<std::size_t>(i)];
      }
      if (dot(d, o.direction) < kGather) continue;
      cone += 1;
      if (h.foliageDepth > 0) {
        double s = 1.0 - std::exp(-static_cast<double>(h.foliageDepth));
        canopy += s * h.foliageStart;
        canopyW += s;
      }
      if (h.hit() && d.y > 0 && h.distance <= roomRadius) wall = std::min(wall, static_cast<double>(h.distance));
    }
    double dist = 3.0;
    if (leftW > 0) dist = left / leftW;
    else if (o.direction.y > 0.5f) dist = canopyW > 0.25 * cone ? canopy / canopyW : 3.0;  // a canopy overhead, not trees round the edge
    else if (wall < kInf) dist = wall;
    o.distance = static_cast<float>(std::clamp(dist, 0.5, static_cast<double>(config.maxDistance)));
  }
  // Largest first (at most 4: an insertion sort; std::sort trips GCC 12's bounds check here).
  for (int i = 1; i < count; ++i)
    for (int j = i; j > 0 && e.openings[static_cast<std::size_t>(j)].share >
                                 e.openings[static_cast<std::size_t>(j - 1)].share;
         --j)
      std::swap(e.openings[static_cast<std::size_t>(j)], e.openings[static_cast<std::size_t>(j - 1)]);
  e.openingCount = count;
  return e;
}

RoomProbe::RoomProbe(ProbeConfig config) : config_(config) {
  config_.rays = std::clamp(config_.rays, 1, kMaxRays);
  dirs_.resize(static_cast<std::size_t>(config_.rays));
  hits_.resize(static_cast<std::size_t>(config_.rays));
  if (config_.cornerSearch) corners_ = std::make_unique<CornerSearch>();
}

RoomProbe::~RoomProbe() = default;

const RoomEstimate& RoomProbe::update(const sim::BrickStore& store, const AcousticTable& table, Vec3f origin,
                                      std::uint64_t updateIndex, WorkerPool& pool, const BrickOccupancy* occupancy) {
  makeRayDirections(config_, updateIndex, dirs_);
  // One reference captured, so the std::function holds the task without allocating.
  struct Job {
    const sim::BrickStore& store;
    const AcousticTable& table;
    Vec3f origin;
    RoomProbe& probe;
    const BrickOccupancy* occupancy;
  } job{store, table, origin, *this, occupancy};
  pool.run(kRayTasks, [&job](int t) {
    const int n = job.probe.config_.rays;
    traceRays(job.store, job.table, job.origin, job.probe.dirs_, n * t / kRayTasks, n * (t + 1) / kRayTasks,
              job.probe.config_.maxDistance, job.probe.hits_, job.occupancy);
  });
  estimate_ = estimateRoom(dirs_, hits_, table, config_);
  if (estimate_.openingCount == 0 && corners_) cornerOpenings(store, table, origin, updateIndex);
  return estimate_;
}

void RoomProbe::cornerOpenings(const sim::BrickStore& store, const AcousticTable& table, Vec3f origin,
                               std::uint64_t updateIndex) {
  // The search (up to ~2 ms in a large sealed cave) runs again when the listener
  // enters another brick or after kCornerEvery updates (the world may have changed);
  // in between, its paths are moved with the ears.
  const sim::BrickCoord brick = sim::brickOf(sim::VoxelCoord{static_cast<int>(std::floor(origin.x * kVoxelsPerMetre)),
                                                             static_cast<int>(std::floor(origin.y * kVoxelsPerMetre)),
                                                             static_cast<int>(std::floor(origin.z * kVoxelsPerMetre))});
  if (!cornerValid_ || !(brick == cornerBrick_) || updateIndex < cornerUpdate_ ||
      updateIndex - cornerUpdate_ >= kCornerEvery) {
    cornerCount_ = corners_->find(store, table, origin, cornerFound_);
    cornerValid_ = true;
    cornerBrick_ = brick;
    cornerUpdate_ = updateIndex;
    cornerOrigin_ = origin;
  }
  const Vec3f shift{cornerOrigin_.x - origin.x, cornerOrigin_.y - origin.y, cornerOrigin_.z - origin.z};
  for (int i = 0; i < cornerCount_; ++i) {
    Opening o = cornerFound_[static_cast<std::size_t>(i)];
    const Vec3f w = o.waypoint(0);
    const Vec3f w0{w.x + shift.x, w.y + shift.y, w.z + shift.z};
    const float d = std::sqrt(w0.x * w0.x + w0.y * w0.y + w0.z * w0.z);
    if (d > 0) o.direction = {w0.x / d, w0.y / d, w0.z / d};
    for (int k = 0; k < o.beyondCount; ++k) {
      Vec3f& b = o.beyond[static_cast<std::size_t>(k)];
      b = {b.x + shift.x, b.y + shift.y, b.z + shift.z};
      o.beyondAlong[static_cast<std::size_t>(k)] += d - o.distance;
    }
    o.distance = d;
    estimate_.openings[static_cast<std::size_t>(i)] = o;
  }
  estimate_.openingCount = cornerCount_;
}

const RoomEstimate& RoomProbe::update(const sim::BrickStore& store, const AcousticTable& table, Vec3f origin,
                                      std::uint64_t updateIndex, int threads, const BrickOccupancy* occupancy) {
  WorkerPool pool(std::clamp(threads, 1, kRayTasks) - 1);
  return update(store, table, origin, updateIndex, pool, occupancy);
}

const RoomEstimate& RoomSmoother::add(const RoomEstimate& e) noexcept {
  if (!primed_) {
    value_ = e;
    primed_ = true;
    return value_;
  }
  const float a = alpha_;
  auto mix = [a](float& v, float x) { v += a * (x - v); };
  mix(value_.enclosure, e.enclosure);
  mix(value_.hitShare, e.hitShare);
  mix(value_.openness, e.openness);
  mix(value_.meanHitDistance, e.meanHitDistance);
  mix(value_.volume, e.volume);
  mix(value_.surface, e.surface);
  value_.meanFreePath = value_.surface > 0 ? 4.0f * value_.volume / value_.surface : e.meanFreePath;
  // Reverb times from the averaged volume, surface and absorption (a ratio of means):
  // a few long rays swing one update's volume and surface together, and averaging the
  // times themselves would keep that swing.
  for (int b = 0; b < 3; ++b) {
    std::size_t i = static_cast<std::size_t>(b);
    mix(value_.absorption[i], e.absorption[i]);
    value_.rt60[i] = value_.surface > 0 ? eyring(value_.volume, value_.surface, value_.absorption[i], b) : e.rt60[i];
  }
  // Openings: the latest set, each glided from the previous opening within 30 degrees
  // (direction, share and distance), so paths through them do not jump between updates.
  const float kMatch = std::cos(30.0f * kPi / 180.0f);
  std::array<Opening, 4> next = e.openings;
  std::array<bool, 4> used{};
  for (int k = 0; k < e.openingCount; ++k) {
    Opening& o = next[static_cast<std::size_t>(k)];
    int best = -1;
    float bestDot = kMatch;
    for (int j = 0; j < value_.openingCount; ++j) {
      float d = dot(o.direction, value_.openings[static_cast<std::size_t>(j)].direction);
      if (!used[static_cast<std::size_t>(j)] && d >= bestDot) {
        bestDot = d;
        best = j;
      }
    }
    if (best < 0) continue;
    used[static_cast<std::size_t>(best)] = true;
    const Opening& p = value_.openings[static_cast<std::size_t>(best)];
    if (o.aroundCorners() || p.aroundCorners()) continue;  // a path round corners is taken as found
    o.direction = normalised(p.direction.x + a * (o.direction.x - p.direction.x),
                             p.direction.y + a * (o.direction.y - p.direction.y),
                             p.direction.z + a * (o.direction.z - p.direction.z));
    o.share = p.share + a * (o.share - p.share);
    o.distance = p.distance + a * (o.distance - p.distance);
  }
  value_.openings = next;
  value_.openingCount = e.openingCount;
  return value_;
}

}  // namespace loam::audio
