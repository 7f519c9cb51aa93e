#include "audio/propagation.h"

#include <algorithm>
#include <cmath>

#include "audio/internal/voxel_walk.h"

namespace loam::audio {

namespace {

constexpr float kSpeedOfSound = 343.0f;
/// The segment's first and last 1.5 voxels are not walked: an emitter sits on or in
/// a surface voxel (rain on stone, a leaf in its canopy, a burning voxel) and must not
/// be walled in by it; the same holds for the listener's and an opening's end.
constexpr float kEndTrim = 1.5f / static_cast<float>(sim::kVoxelsPerMetre);
/// The mass law alone already describes a thin panel: a wall's own dB per metre counts
/// only past its first voxel, so one 5 cm stone block costs the mass law's 43/55/67 dB
/// while a metre of rock adds its 50/65/80 dB per metre on top.
constexpr float kPanel = 1.0f / static_cast<float>(sim::kVoxelsPerMetre);
/// Past this (every band) nothing is heard any more: the walk stops early.
constexpr float kSaturatedDb = 300.0f;
/// 20 log10(f) - 47 per band (f = kBandHz), the mass law's constant part; literals, so
/// no static initialisation order to worry about.
constexpr std::array<float, 3> kMassLawOffset{47.9588f - 47.0f, 60.0f - 47.0f, 72.0412f - 47.0f};
/// Further from the origin than this (metres) a point is nonsense: nothing is walked.
constexpr float kFarAway = 1.0e6f;

float length(const Vec3f& v) { return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z); }
Vec3f sub(const Vec3f& a, const Vec3f& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
float dbToEnergy(float db) { return std::exp(-db * (std::log(10.0f) / 10.0f)); }

/// An end point inside a wall voxel that has an open face towards the other end (u)
/// is moved just outside that face: rain on stone or a fire in a wooden wall sits in
/// its voxel, but sounds from its open side, even along a grazing path. An end point
/// buried deeper (no open face that way) stays where it is and is walled in.
Vec3f surfaceSide(const sim::BrickStore& store, const TransmissionTable& table, Vec3f p, Vec3f u) {
  constexpr float kVpm = static_cast<float>(sim::kVoxelsPerMetre);
  const float pc[3] = {p.x, p.y, p.z}, uc[3] = {u.x, u.y, u.z};
  const int v[3] = {static_cast<int>(std::floor(p.x * kVpm)), static_cast<int>(std::floor(p.y * kVpm)),
                    static_cast<int>(std::floor(p.z * kVpm))};
  if (!table.wall[store.get(v[0], v[1], v[2])]) return p;
  int bestAxis = -1, bestSide = 0;
  float bestScore = 0;
  for (int a = 0; a < 3; ++a)
    for (int side = -1; side <= 1; side += 2) {
      const float score = static_cast<float>(side) * uc[a];
      if (score <= bestScore) continue;
      int n[3] = {v[0], v[1], v[2]};
      n[a] += side;
      if (table.wall[store.get(n[0], n[1], n[2])]) continue;
      bestScore = score;
      bestAxis = a;
      bestSide = side;
    }
  if (bestAxis < 0) return p;
  float q[3] = {pc[0], pc[1], pc[2]};
  const int face = bestSide > 0 ? v[bestAxis] + 1 : v[bestAxis];
  q[bestAxis] = static_cast<float>(face) / kVpm + 0.0005f * static_cast<float>(bestSide);  // half a mm out
  return {q[0], q[1], q[2]};
}

/// Sums the losses of the runs of one walk.
struct LossAccumulator {
  const TransmissionTable& table;
  std::array<float, 3> loss{};
  float mass = 0;     // kg/m^2 of the current wall
  float wallLen = 0;  // metres of the current wall
  std::array<float, 3> wallPerMetre{};  // sum of dB/m x length over the current wall

  void closeWall() {
    if (wallLen <= 0) return;
    const float massDb = 20.0f * std::log10(std::max(mass, 1e-6f));
    const float panelShare = std::max(0.0f, wallLen - kPanel) / wallLen;
    for (std::size_t b = 0; b < 3; ++b)
      loss[b] += std::max(0.0f, massDb + kMassLawOffset[b]) + wallPerMetre[b] * panelShare;
    mass = wallLen = 0;
    wallPerMetre = {};
  }
  bool operator()(sim::MaterialId m, float metres) {
    const auto& perMetre = table.lossDbPerMetre[m];
    if (table.wall[m]) {
      mass += table.density[m] * metres;
      wallLen += metres;
      for (std::size_t b = 0; b < 3; ++b) wallPerMetre[b] += perMetre[b] * metres;
      return true;
    }
    closeWall();
    for (std::size_t b = 0; b < 3; ++b) loss[b] += perMetre[b] * metres;
    return std::min(loss[0], std::min(loss[1], loss[2])) < kSaturatedDb;
  }
};

}  // namespace

TransmissionTable makeTransmissionTable(const sim::MaterialTable& materials) noexcept {
  TransmissionTable t;
  for (std::size_t i = 0; i < 256; ++i) {
    t.wall[i] = 1;
    t.density[i] = 2600.0f;
    t.lossDbPerMetre[i] = {45.0f, 60.0f, 75.0f};
  }
  for (std::size_t i = 0; i < std::min<std::size_t>(materials.size(), 256); ++i) {
    const sim::Material& m = materials[static_cast<sim::MaterialId>(i)];
    t.wall[i] = (m.solid || m.liquid) ? 1 : 0;
    t.density[i] = m.density;
    t.lossDbPerMetre[i] = m.transmissionLossDbPerM;
  }
  t.wall[sim::kAir] = 0;
  t.density[sim::kAir] = 0;
  t.lossDbPerMetre[sim::kAir] = {};
  return t;
}

std::array<float, 3> straightLossDb(const sim::BrickStore& store, const TransmissionTable& table, Vec3f a,
                                    Vec3f b) noexcept {
  Vec3f d = sub(b, a);
  float len = length(d);
  if (!(len > 2.0f * kEndTrim)) return {0, 0, 0};
  for (float c : {a.x, a.y, a.z, b.x, b.y, b.z})
    if (!(std::fabs(c) < kFarAway)) return {0, 0, 0};
  const Vec3f u{d.x / len, d.y / len, d.z / len};
  a = surfaceSide(store, table, a, u);
  b = surfaceSide(store, table, b, {-u.x, -u.y, -u.z});
  d = sub(b, a);
  len = length(d);
  if (!(len > 2.0f * kEndTrim)) return {0, 0, 0};
  const float s = kEndTrim / len;
  const Vec3f a2{a.x + d.x * s, a.y + d.y * s, a.z + d.z * s};
  const Vec3f b2{b.x - d.x * s, b.y - d.y * s, b.z - d.z * s};
  LossAccumulator acc{table};
  internal::walkSegment(store, a2, b2, acc);
  acc.closeWall();
  return acc.loss;
}

ListenerPaths listenerPaths(Vec3f listener, const RoomEstimate& room) noexcept {
  ListenerPaths p;
  p.position = listener;
  p.openingCount = std::clamp(room.openingCount, 0, static_cast<int>(p.openings.size()));
  for (int i = 0; i < p.openingCount; ++i) {
    Opening o = room.openings[static_cast<std::size_t>(i)];
    o.distance = std::max(o.distance, 0.5f);  // until the probe measures it: just outside the head
    p.openings[static_cast<std::size_t>(i)] = o;
  }
  return p;
}

PathResult propagate(const sim::BrickStore& store, const TransmissionTable& table, const ListenerPaths& listener,
                     Vec3f emitter) noexcept {
  PathResult r;
  const Vec3f l = listener.position;
  const Vec3f el = sub(emitter, l);
  const float dist = length(el);
  // Straight-on direction; an emitter at the ears has none: say north.
  const Vec3f straightDir = dist > 1e-6f ? Vec3f{el.x / dist, el.y / dist, el.z / dist} : Vec3f{0, 0, -1};

  r.directLossDb = straightLossDb(store, table, emitter, l);
  std::array<float, 3> direct{};
  for (std::size_t b = 0; b < 3; ++b) direct[b] = dbToEnergy(r.directLossDb[b]);

  // Opening paths: emitter -> a waypoint (walked) -> along the path -> listener (free),
  // diffracted by the detour and spread; each opening's best waypoint carries it.
  std::array<float, 3> openSum{};
  std::array<float, 4> openMid{};
  std::array<Vec3f, 4> openDir{};
  const int count = std::clamp(listener.openingCount, 0, 4);
  for (int i = 0; i < count; ++i) {
    Opening op = listener.openings[static_cast<std::size_t>(i)];
    const float dl = length(op.direction);
    if (!(dl > 0)) continue;
    op.distance = std::max(op.distance, 0.5f);  // at least just outside the head
    op.beyondCount = std::clamp(op.beyondCount, 0, Opening::kMaxWaypoints - 1);
    std::array<float, 3> best{};
    for (int k = 0; k < op.waypointCount(); ++k) {
      const Vec3f w = op.waypoint(k);
      const Vec3f o{l.x + w.x, l.y + w.y, l.z + w.z};
      const float path = length(sub(emitter, o)) + op.along(k);
      const float detour = std::max(0.0f, path - dist);
      const float spread = path > 0 ? (dist * dist) / (path * path) : 1.0f;
      const std::array<float, 3> loss = straightLossDb(store, table, emitter, o);
      std::array<float, 3> e{};
      for (std::size_t b = 0; b < 3; ++b) {
        const float fresnel = 2.0f * detour * kBandHz[b] / kSpeedOfSound;
        e[b] = dbToEnergy(loss[b]) * spread / (1.0f + 20.0f * fresnel);
      }
      if (e[1] > best[1]) best = e;
    }
    for (std::size_t b = 0; b < 3; ++b) openSum[b] += best[b];
    openMid[static_cast<std::size_t>(i)] = best[1];
    openDir[static_cast<std::size_t>(i)] = {op.direction.x / dl, op.direction.y / dl, op.direction.z / dl};
    if (best[1] > 1e-6f) ++r.openingPaths;
  }

  // Openings only fill what the straight path lacks.
  std::array<float, 3> energy{};
  for (std::size_t b = 0; b < 3; ++b) {
    energy[b] = direct[b] + (1.0f - direct[b]) * std::min(1.0f, openSum[b]);
    r.gain[b] = std::sqrt(energy[b]);
  }
  r.reverbSend = r.gain[1];

  // Direction: mean of arrival directions weighted by what each path adds (mid band).
  float wx = straightDir.x * direct[1], wy = straightDir.y * direct[1], wz = straightDir.z * direct[1];
  if (openSum[1] > 0) {
    const float fill = (1.0f - direct[1]) * std::min(1.0f, openSum[1]) / openSum[1];
    for (int i = 0; i < count; ++i) {
      const float w = openMid[static_cast<std::size_t>(i)] * fill;
      const Vec3f& u = openDir[static_cast<std::size_t>(i)];
      wx += u.x * w;
      wy += u.y * w;
      wz += u.z * w;
    }
  }
  const float wl = std::sqrt(wx * wx + wy * wy + wz * wz);
  r.direction = wl > 0 ? Vec3f{wx / wl, wy / wl, wz / wl} : straightDir;
  return r;
}

}  // namespace loam::audio
