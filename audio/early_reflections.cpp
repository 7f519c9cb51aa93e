// Early reflections: rays from the listener find the walls around it (wall points),
// each impulsive source gets its own taps off them, and a stereo ring plays every
// source's taps back panned (see early_reflections.h for the model).
#include "audio/early_reflections.h"

#include <algorithm>
#include <cmath>

namespace loam::audio {

namespace {

constexpr int kRings = 3;
constexpr int kMaxRaysPerRing = 128;  // config.raysPerRing is clamped to it: stack scratch
constexpr int kMaxPoints = kRings * kMaxRaysPerRing;
constexpr float kSpeedOfSound = 343.0f;
constexpr float kMergeWindow = 0.003f;  // seconds
// Points from the same wall arrive from nearby directions; points within 3 ms but
// from clearly different sides (an alley's two walls) stay separate taps, since they
// pan differently.
constexpr float kMergeCos = 0.7071f;  // 45 degrees
constexpr float kRingElevationDeg[kRings] = {0.0f, -20.0f, 20.0f};
// Each ring stands for a band of elevations (-10..10, -30..-10, 10..30 degrees): the
// three together cover the 2 pi sr around the horizon where walls are.
constexpr float kRingBandDeg[kRings][2] = {{-10.0f, 10.0f}, {-30.0f, -10.0f}, {10.0f, 30.0f}};
constexpr int kLineFrames = 16384;  // ring: >= 0.3 s + a block at 48 kHz; a power of two for masking
static_assert(kLineFrames >= kSampleRate * 3 / 10 + kBlockFrames);

constexpr float kDegToRad = kPi / 180.0f;

/// One reflection point (or a merged group of them).
struct Point {
  float delay = 0;      // seconds
  float energy = 0;     // gain^2
  float lowpassHz = 0;
  Vec3f dir;            // unit, or energy-weighted sum while merging
};

}  // namespace

int findWallPoints(const sim::BrickStore& store, const AcousticTable& table, Vec3f listener, std::uint64_t update,
                   const ReflectionConfig& config, std::span<WallPoint> out) noexcept {
  const int n = std::clamp(config.raysPerRing, 1, kMaxRaysPerRing);
  const int total = kRings * n;

  // Directions: the rings turned by a keyed angle per update (so successive updates
  // see between the previous rays); each tilted ring is offset by a further third of
  // a ray spacing so the three interleave in azimuth.
  std::array<Vec3f, kMaxPoints> dirs;
  const float spacing = 2.0f * kPi / static_cast<float>(n);
  KeyedRng rng(combineKey(config.key, update));
  const float turn = rng.uniform() * spacing;
  for (int r = 0; r < kRings; ++r) {
    const float el = kRingElevationDeg[r] * kDegToRad;
    const float ce = std::cos(el), se = std::sin(el);
    for (int i = 0; i < n; ++i) {
      const float az = turn + spacing * (static_cast<float>(i) + static_cast<float>(r) / kRings);
      dirs[static_cast<std::size_t>(r * n + i)] = {ce * std::cos(az), se, ce * std::sin(az)};
    }
  }
  std::array<RayHit, kMaxPoints> hits;
  traceRays(store, table, listener, std::span<const Vec3f>(dirs.data(), static_cast<std::size_t>(total)), 0, total,
            config.maxDistance, std::span<RayHit>(hits.data(), static_cast<std::size_t>(total)));

  // Each ray stands for the solid angle w of its ring's band divided among the ring's rays.
  float ringW[kRings];
  for (int r = 0; r < kRings; ++r)
    ringW[r] = 2.0f * kPi * (std::sin(kRingBandDeg[r][1] * kDegToRad) - std::sin(kRingBandDeg[r][0] * kDegToRad)) /
               static_cast<float>(n);

  int count = 0;
  for (int k = 0; k < total && count < static_cast<int>(out.size()); ++k) {
    const RayHit& h = hits[static_cast<std::size_t>(k)];
    // Floors and ceilings are the reverb's business: only vertical walls slap.
    if (!h.hit() || (h.normalAxis != 0 && h.normalAxis != 2)) continue;
    if (h.distance < config.minDistance || h.distance > config.maxDistance) continue;
    const Vec3f d = dirs[static_cast<std::size_t>(k)];
    const std::array<float, 3>& a = table.absorption[h.material];
    WallPoint& p = out[static_cast<std::size_t>(count++)];
    p.position = {listener.x + d.x * h.distance, listener.y + d.y * h.distance, listener.z + d.z * h.distance};
    p.fromListener = d;
    p.weight = ringW[k / n] * std::max(0.0f, 1.0f - a[1]) / kPi;
    const float keep = 1.0f - std::clamp(a[2], 0.0f, 1.0f);
    p.lowpassHz = std::clamp(16000.0f * keep * keep, 2000.0f, 16000.0f);
    p.normalAxis = h.normalAxis;
    p.normalSign = h.normalSign;
  }
  return count;
}

int reflectionTaps(std::span<const WallPoint> points, Vec3f listener, Vec3f source,
                   std::span<ReflectionTap> out) noexcept {
  const int maxOut = static_cast<int>(std::min<std::size_t>(out.size(), kMaxReflectionTaps));
  if (maxOut <= 0) return 0;
  const auto dist = [](Vec3f a, Vec3f b) {
    const float x = b.x - a.x, y = b.y - a.y, z = b.z - a.z;
    return std::sqrt(x * x + y * y + z * z);
  };
  const float direct = dist(source, listener);
  // The engine plays the direct sound at kRefDistance / distance: taps are relative to that.
  const float undo = std::clamp(direct, kRefDistance, kMaxDistance) / kRefDistance;

  std::array<Point, kMaxPoints> pts;
  int count = 0;
  for (const WallPoint& w : points) {
    if (count == kMaxPoints) break;
    const float toSource = dist(w.position, source), toListener = dist(w.position, listener);
    const float along = w.normalAxis == 0 ? source.x - w.position.x : source.z - w.position.z;
    const float cosIn = toSource > 1e-6f ? along * static_cast<float>(w.normalSign) / toSource : 1.0f;
    if (cosIn <= 0.0f) continue;  // the source is behind this wall
    const float r = std::max(toSource, 0.5f);
    Point& p = pts[static_cast<std::size_t>(count++)];
    p.delay = std::max(0.0f, toSource + toListener - direct) / kSpeedOfSound;
    p.energy = w.weight * cosIn / (r * r) * undo * undo;
    p.lowpassHz = w.lowpassHz;
    p.dir = w.fromListener;
  }
  if (count == 0) return 0;

  // Strongest first (ties by index, so the order is fully determined).
  std::array<std::int16_t, kMaxPoints> order;
  for (int i = 0; i < count; ++i) order[static_cast<std::size_t>(i)] = static_cast<std::int16_t>(i);
  std::sort(order.begin(), order.begin() + count, [&](std::int16_t x, std::int16_t y) {
    float ex = pts[static_cast<std::size_t>(x)].energy, ey = pts[static_cast<std::size_t>(y)].energy;
    return ex != ey ? ex > ey : x < y;
  });

  // Greedy merge: the strongest unmerged point gathers every unmerged point within
  // 3 ms of it and 45 degrees of its direction.
  std::array<bool, kMaxPoints> used{};
  std::array<Point, kMaxPoints> groups;
  int groupCount = 0;
  for (int oi = 0; oi < count; ++oi) {
    const int s = order[static_cast<std::size_t>(oi)];
    if (used[static_cast<std::size_t>(s)]) continue;
    const Point seed = pts[static_cast<std::size_t>(s)];
    float e = 0, delay = 0, lp = 0;
    Vec3f dir;
    for (int oj = oi; oj < count; ++oj) {
      const int j = order[static_cast<std::size_t>(oj)];
      const Point& q = pts[static_cast<std::size_t>(j)];
      if (used[static_cast<std::size_t>(j)] || std::fabs(q.delay - seed.delay) > kMergeWindow) continue;
      if (q.dir.x * seed.dir.x + q.dir.y * seed.dir.y + q.dir.z * seed.dir.z < kMergeCos) continue;
      used[static_cast<std::size_t>(j)] = true;
      e += q.energy;
      delay += q.energy * q.delay;
      lp += q.energy * q.lowpassHz;
      dir.x += q.energy * q.dir.x;
      dir.y += q.energy * q.dir.y;
      dir.z += q.energy * q.dir.z;
    }
    Point& g = groups[static_cast<std::size_t>(groupCount++)];
    g.energy = e;
    if (e > 0) {
      g.delay = delay / e;
      g.lowpassHz = lp / e;
    } else {  // walls so absorbing that nothing comes back
      g.delay = seed.delay;
      g.lowpassHz = seed.lowpassHz;
    }
    const float len = std::sqrt(dir.x * dir.x + dir.y * dir.y + dir.z * dir.z);
    g.dir = len > 1e-12f ? Vec3f{dir.x / len, dir.y / len, dir.z / len} : seed.dir;
  }

  // Keep the strongest maxOut groups (stable: earlier groups win ties), then order by delay.
  std::array<int, kMaxReflectionTaps> keep{};
  int kept = 0;
  std::array<bool, kMaxPoints> taken{};
  for (; kept < maxOut && kept < groupCount; ++kept) {
    int best = -1;
    for (int g = 0; g < groupCount; ++g)
      if (!taken[static_cast<std::size_t>(g)] &&
          (best < 0 || groups[static_cast<std::size_t>(g)].energy > groups[static_cast<std::size_t>(best)].energy))
        best = g;
    taken[static_cast<std::size_t>(best)] = true;
    keep[static_cast<std::size_t>(kept)] = best;
  }
  std::sort(keep.begin(), keep.begin() + kept, [&](int x, int y) {
    float dx = groups[static_cast<std::size_t>(x)].delay, dy = groups[static_cast<std::size_t>(y)].delay;
    return dx != dy ? dx < dy : x < y;
  });
  for (int i = 0; i < kept; ++i) {
    const Point& g = groups[static_cast<std::size_t>(keep[static_cast<std::size_t>(i)])];
    ReflectionTap& t = out[static_cast<std::size_t>(i)];
    t.delay = g.delay;
    t.gain = -std::sqrt(g.energy);  // phase-inverted, as the header's model has it
    t.lowpassHz = g.lowpassHz;
    t.direction = g.dir;
  }
  return kept;
}

int findReflections(const sim::BrickStore& store, const AcousticTable& table, Vec3f listener, std::uint64_t update,
                    const ReflectionConfig& config, std::span<ReflectionTap> out) noexcept {
  std::array<WallPoint, kMaxWallPoints> points;
  const int n = findWallPoints(store, table, listener, update, config, points);
  return reflectionTaps(std::span<const WallPoint>(points.data(), static_cast<std::size_t>(n)), listener, listener, out);
}

EarlyReflector::EarlyReflector()
    : left_(static_cast<std::size_t>(kLineFrames), 0.0f), right_(static_cast<std::size_t>(kLineFrames), 0.0f) {}

void EarlyReflector::add(const float* in, int frames, std::span<const ReflectionTap> taps, float listenerYaw,
                         std::span<float> lowpassState) noexcept {
  frames = std::clamp(frames, 0, kBlockFrames);
  const int n = static_cast<int>(std::min({taps.size(), lowpassState.size(), std::size_t{kMaxReflectionTaps}}));
  constexpr int mask = kLineFrames - 1;
  const float cy = std::cos(listenerYaw), sy = std::sin(listenerYaw);
  for (int k = 0; k < n; ++k) {
    const ReflectionTap& t = taps[static_cast<std::size_t>(k)];
    if (!std::isfinite(t.gain) || !std::isfinite(t.delay) || t.gain == 0.0f) continue;
    // Whole samples: a tap does not move within a block.
    const int d = static_cast<int>(std::lround(std::clamp(t.delay, 0.0f, 0.3f) * static_cast<float>(kSampleRate)));
    // Constant-power pan as the engine's spatialise(): right = (cos yaw, 0, sin yaw).
    float pan = 0;
    const float horiz = std::sqrt(t.direction.x * t.direction.x + t.direction.z * t.direction.z);
    if (horiz > 1e-4f) pan = std::clamp((t.direction.x * cy + t.direction.z * sy) / horiz, -1.0f, 1.0f);
    const float theta = (pan + 1.0f) * (kPi / 4.0f);
    const float gl = t.gain * std::cos(theta), gr = t.gain * std::sin(theta);
    OnePole lp;
    lp.setCutoff(std::clamp(std::isfinite(t.lowpassHz) ? t.lowpassHz : 20000.0f, 20.0f, 20000.0f));
    lp.reset(lowpassState[static_cast<std::size_t>(k)]);
    for (int i = 0; i < frames; ++i) {
      const float x = lp.lowpass(in[i]);
      const std::size_t at = static_cast<std::size_t>((read_ + d + i) & mask);
      left_[at] += x * gl;
      right_[at] += x * gr;
    }
    lowpassState[static_cast<std::size_t>(k)] = lp.state();
  }
}

void EarlyReflector::process(float* outL, float* outR, int frames) noexcept {
  frames = std::clamp(frames, 0, kBlockFrames);
  constexpr int mask = kLineFrames - 1;
  for (int i = 0; i < frames; ++i) {
    const std::size_t at = static_cast<std::size_t>((read_ + i) & mask);
    outL[i] = left_[at];
    outR[i] = right_[at];
    left_[at] = right_[at] = 0.0f;
  }
  read_ = (read_ + frames) & mask;
}

void EarlyReflector::reset() noexcept {
  std::fill(left_.begin(), left_.end(), 0.0f);
  std::fill(right_.begin(), right_.end(), 0.0f);
  read_ = 0;
}

}  // namespace loam::audio
