// ListenerAcoustics (see listener_acoustics.h).
#include "audio/listener_acoustics.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "audio/reverb.h"

namespace loam::audio {
namespace {

constexpr int kStatesPerTask = 8;        ///< emitters per propagation task
constexpr int kSkyPoints = 6;            ///< the far ring of sky points the beds come from
constexpr float kSkyRadius = 24.0f;      ///< metres out from the listener
constexpr float kSkyHeight = 16.0f;      ///< metres above the listener
constexpr float kMaxReverbGain = 4.0f;   ///< +12 dB: a small stone room at most

constexpr float kOpeningWidth = 0.1f;    ///< how wide a sound heard through an opening seems

float length(Vec3f v) { return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z); }

/// Mid-band energy of a path result's straight part.
float directEnergy(const PathResult& r) { return std::pow(10.0f, -r.directLossDb[1] / 10.0f); }

/// A sound that arrives through an opening is as wide as the opening, not as itself:
/// blend the emitter's width towards kOpeningWidth by the share that came round.
float widthThrough(float width, float directShare) {
  directShare = std::clamp(directShare, 0.0f, 1.0f);
  return directShare * width + (1.0f - directShare) * std::min(width, kOpeningWidth);
}

}  // namespace

ListenerAcoustics::ListenerAcoustics(const sim::MaterialTable& materials, AcousticsConfig config)
    : config_(config),
      acoustic_(makeAcousticTable(materials)),
      transmission_(makeTransmissionTable(materials)),
      probe_(config.probe),
      wallPoints_(kMaxWallPoints),
      smoother_(config.smoothing),
      pool_(config.enabled ? std::max(0, config.workerThreads) : 0) {}

ListenerAcoustics::~ListenerAcoustics() = default;

bool ListenerAcoustics::updateRoom(const sim::BrickStore& world, Vec3f listener, std::uint64_t updateIndex) {
  if (!config_.enabled) return false;
  if (haveRoom_ && updateIndex % static_cast<std::uint64_t>(std::max(1, config_.roomEvery)) != 0) {
    paths_ = listenerPaths(listener, smoother_.value());
    return false;
  }
  std::uint64_t roomUpdate = updateIndex / static_cast<std::uint64_t>(std::max(1, config_.roomEvery));
  if (trackChanges_ && !occupancy_) occupancy_ = std::make_unique<BrickOccupancy>(world);
  // A streamed world renumbers its chunk slots as it releases columns behind the
  // player; the bits follow by chunk coordinate (O(chunks)).
  if (occupancy_) occupancy_->followSlots(world);
  const RoomEstimate& e = smoother_.add(probe_.update(world, acoustic_, listener, roomUpdate, pool_, occupancy_.get()));

  room_.meanFreePath = std::max(0.5f, e.meanFreePath);
  room_.rt60 = e.rt60;
  // The reverberant level: energy density 16 pi / A relative to the direct sound at
  // 1 m, with A the Sabine absorption area 0.161 V / T (m^2); the FDN's own impulse
  // energy (which grows with T / mfp) is divided out.
  float t = std::max(0.05f, e.rt60[1]);
  float area = std::max(0.5f, 0.161f * std::max(1.0f, e.volume) / t);
  room_.reverbGain =
      std::min(kMaxReverbGain, std::sqrt(16.0f * kPi / area / fdnImpulseEnergy(room_.meanFreePath, t)));
  wallPointCount_ = findWallPoints(world, acoustic_, listener, roomUpdate, config_.reflections, wallPoints_);
  roomRadius_ = std::clamp(1.5f * e.meanHitDistance, 2.0f, config_.probe.roomRadius);
  paths_ = listenerPaths(listener, e);
  haveRoom_ = true;
  return true;
}

void ListenerAcoustics::propagateOne(const sim::BrickStore& world, EmitterState& s) const {
  s.tapCount = s.impulsive ? reflectionTaps(std::span<const WallPoint>(wallPoints_.data(),
                                                                          static_cast<std::size_t>(wallPointCount_)),
                                             paths_.position, s.position, s.taps)
                           : 0;
  if (!s.ambient) {
    PathResult r = audio::propagate(world, transmission_, paths_, s.position);
    s.bands = r.gain;
    s.direction = r.direction;
    s.width = widthThrough(s.width, directEnergy(r) / std::max(1e-30f, r.gain[1] * r.gain[1]));
    Vec3f d{s.position.x - paths_.position.x, s.position.y - paths_.position.y, s.position.z - paths_.position.z};
    s.reverbSend = r.reverbSend * std::min(1.0f, roomRadius_ / std::max(0.1f, length(d)));
    return;
  }
  // The sky ring: mean energy per band over its points, direction weighted by energy.
  std::array<float, 3> energy{};
  float direct = 0;
  Vec3f dir{};
  for (int k = 0; k < kSkyPoints; ++k) {
    float a = 2.0f * kPi * static_cast<float>(k) / kSkyPoints;
    Vec3f p{paths_.position.x + kSkyRadius * std::cos(a), paths_.position.y + kSkyHeight,
            paths_.position.z + kSkyRadius * std::sin(a)};
    PathResult r = audio::propagate(world, transmission_, paths_, p);
    for (int b = 0; b < 3; ++b) energy[static_cast<std::size_t>(b)] += r.gain[static_cast<std::size_t>(b)] *
                                                                       r.gain[static_cast<std::size_t>(b)] / kSkyPoints;
    float w = r.gain[1] * r.gain[1];
    direct += std::min(w, directEnergy(r)) / kSkyPoints;
    dir.x += w * r.direction.x;
    dir.y += w * r.direction.y;
    dir.z += w * r.direction.z;
  }
  for (int b = 0; b < 3; ++b) s.bands[static_cast<std::size_t>(b)] = std::sqrt(energy[static_cast<std::size_t>(b)]);
  // Mostly-open sky surrounds the listener (no direction); a mouth gives it one.
  float len = length(dir);
  s.direction = len > 1e-6f ? Vec3f{dir.x / len, dir.y / len, dir.z / len} : Vec3f{};
  s.reverbSend = std::sqrt(energy[1]);
  s.width = widthThrough(s.width, direct / std::max(1e-30f, energy[1]));
}

void ListenerAcoustics::worldChanged(const sim::BrickStore& world, std::span<const sim::BrickCoord> bricks) {
  trackChanges_ = true;
  if (!occupancy_) return;
  occupancy_->followSlots(world);
  for (const sim::BrickCoord& b : bricks) occupancy_->refresh(world, b);
}

void ListenerAcoustics::propagate(const sim::BrickStore& world, std::span<EmitterState* const> states) {
  if (!config_.enabled || states.empty()) return;
  // One reference captured, so the std::function holds the task without allocating.
  struct Job {
    const ListenerAcoustics& self;
    const sim::BrickStore& world;
    std::span<EmitterState* const> states;
  } job{*this, world, states};
  const int n = static_cast<int>(states.size());
  pool_.run((n + kStatesPerTask - 1) / kStatesPerTask, [&job](int t) {
    const int end = std::min(static_cast<int>(job.states.size()), (t + 1) * kStatesPerTask);
    for (int i = t * kStatesPerTask; i < end; ++i) job.self.propagateOne(job.world, *job.states[static_cast<std::size_t>(i)]);
  });
}

}  // namespace loam::audio
