#include "net/interpolation.h"

#include <algorithm>
#include <cmath>

#include "sim/core/fixed_point.h"

namespace loam::net {

namespace {

constexpr double kMsPerTick = 1000.0 / sim::kTicksPerSecond;
constexpr double kMinDelayMs = 100;
constexpr double kMaxDelayMs = 400;
constexpr std::size_t kMaxSamples = 32;
// A mapping error this large is not jitter but a new clock (server restart, long
// stall): start the mapping again instead of smoothing toward it for seconds.
constexpr double kResyncMs = 1000;

double tickMs(std::uint64_t tick) { return static_cast<double>(tick) * kMsPerTick; }

Pose poseOf(const PoseSample& s) {
  return Pose{static_cast<double>(s.position.x), static_cast<double>(s.position.y),
              static_cast<double>(s.position.z), static_cast<double>(s.yaw), static_cast<double>(s.pitch)};
}

double lerp(double a, double b, double t) { return a + (b - a) * t; }

}  // namespace

void InterpolationBuffer::push(std::uint32_t id, const PoseSample& sample, double arrivalMs) {
  auto it = std::lower_bound(tracks_.begin(), tracks_.end(), id,
                             [](const Track& t, std::uint32_t v) { return t.id < v; });
  if (it == tracks_.end() || it->id != id) it = tracks_.insert(it, Track{id, {}});
  Track& track = *it;
  if (!track.samples.empty() && sample.tick <= track.samples.back().tick) return;  // old or reordered
  if (track.samples.size() == kMaxSamples) track.samples.erase(track.samples.begin());
  track.samples.push_back(sample);

  // The clock mapping is shared by all entities; every entity of a snapshot carries
  // the same tick, so it is updated once per new tick. A huge error is a new clock
  // (server restart, long stall; ticks may even go back): map afresh.
  const double offset = arrivalMs - tickMs(sample.tick);
  const double deviation = offset - tickOffsetMs_;
  const bool resync = lastArrivalMs_ < 0 || std::abs(deviation) > kResyncMs;
  if (!resync && sample.tick <= lastTick_) return;
  // The snapshot interval: ticks between successive snapshots (not one entity's
  // samples, so a slowly updated entity does not stretch everyone's delay). A lost
  // snapshot doubles it once, which is right: the buffer should cover the gap.
  const double intervalMs = resync ? 0 : tickMs(sample.tick - lastTick_);
  if (resync) {
    tickOffsetMs_ = offset;
    jitterMs_ = 0;
  } else {
    // RFC 3550-style smoothing of both the mapping and its mean deviation.
    tickOffsetMs_ += deviation / 16;
    jitterMs_ += (std::abs(deviation) - jitterMs_) / 16;
  }
  lastArrivalMs_ = arrivalMs;
  lastTick_ = sample.tick;

  const double target =
      std::clamp(std::max(kMinDelayMs, 2 * intervalMs + 2 * jitterMs_), kMinDelayMs, kMaxDelayMs);
  // Grow quickly when the link gets worse, shrink slowly: a falling delay makes
  // remote players briefly move faster than real.
  delayMs_ += (target - delayMs_) * (target > delayMs_ ? 0.25 : 1.0 / 64);
}

void InterpolationBuffer::remove(std::uint32_t id) {
  auto it = std::lower_bound(tracks_.begin(), tracks_.end(), id,
                             [](const Track& t, std::uint32_t v) { return t.id < v; });
  if (it != tracks_.end() && it->id == id) tracks_.erase(it);
}

std::optional<Pose> InterpolationBuffer::sample(std::uint32_t id, double nowMs) const {
  auto it = std::lower_bound(tracks_.begin(), tracks_.end(), id,
                             [](const Track& t, std::uint32_t v) { return t.id < v; });
  if (it == tracks_.end() || it->id != id || it->samples.empty()) return std::nullopt;
  const std::vector<PoseSample>& s = it->samples;

  // Render time on the server's tick clock (ms).
  const double renderMs = nowMs - tickOffsetMs_ - delayMs_;
  if (renderMs <= tickMs(s.front().tick)) return poseOf(s.front());
  if (renderMs >= tickMs(s.back().tick)) return poseOf(s.back());  // hold, no extrapolation

  auto next = std::upper_bound(s.begin(), s.end(), renderMs,
                               [](double ms, const PoseSample& p) { return ms < tickMs(p.tick); });
  const PoseSample& b = *next;
  const PoseSample& a = *(next - 1);
  const double t = (renderMs - tickMs(a.tick)) / (tickMs(b.tick) - tickMs(a.tick));

  Pose p;
  p.x = lerp(a.position.x, b.position.x, t);
  p.y = lerp(a.position.y, b.position.y, t);
  p.z = lerp(a.position.z, b.position.z, t);
  // Shorter turn: the wrapped difference as a signed 16-bit angle.
  const auto turn = static_cast<std::int16_t>(static_cast<std::uint16_t>(b.yaw - a.yaw));
  p.yaw = static_cast<double>(a.yaw) + static_cast<double>(turn) * t;
  p.pitch = lerp(a.pitch, b.pitch, t);
  return p;
}

std::vector<std::uint32_t> InterpolationBuffer::ids() const {
  std::vector<std::uint32_t> out;
  out.reserve(tracks_.size());
  for (const Track& t : tracks_) out.push_back(t.id);  // tracks_ is kept sorted
  return out;
}

}  // namespace loam::net
