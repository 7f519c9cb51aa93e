// Early reflections: the slap of nearby walls on impulsive sounds (footsteps,
// impacts, digs), so a shot of sound in an alley slaps back and in a field does not.
//
// findReflections() casts a fixed set of short horizontal rays (and a ring tilted
// 20 degrees down and up, so walls are found over a step or a kerb) from the listener
// through the voxel world. Each ray that hits a face turned towards the listener is a
// reflection point: delay = 2 d / c (the source is taken at the listener: impulsive
// sounds that matter most are the player's own), amplitude = 1 / (2 d) (spreading
// beyond 1 m, capped at 1) x sqrt(1 - absorption_mid) x the ray's share of the ring,
// phase-inverted (sign -1), low-passed by the wall's high-band absorption. Reflections
// closer than 1.5 m are left to the reverb (they fuse with the direct sound); points
// whose delays fall within 3 ms of each other merge (energies add, direction is the
// energy-weighted mean). The strongest kMaxReflectionTaps remain, ordered by delay.
//
// EarlyReflector is the audio-thread side: one mono delay line (0.3 s) fed by the
// impulsive voices' dry signal, read at each tap's delay, one-pole low-passed per tap
// and panned by the tap's direction relative to the listener's yaw (constant power).
// New tap sets crossfade over one block; no allocation, no locks after construction.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "audio/dsp.h"
#include "audio/engine.h"
#include "audio/room_probe.h"
#include "sim/brick_store.h"

namespace loam::audio {

struct ReflectionConfig {
  int raysPerRing = 32;        ///< rays in each of the three rings (horizontal, -20, +20 degrees)
  float maxDistance = 40.0f;   ///< metres (delay up to ~0.23 s)
  float minDistance = 1.5f;    ///< metres: closer walls are left to the reverb
  std::uint64_t key = 0x65726566u;  ///< keys the rings' rotation per update
};

/// Finds up to out.size() (<= kMaxReflectionTaps) taps around listener; returns how many.
/// The rings are rotated by a sequence keyed by (config.key, update). Cost: 3 x
/// raysPerRing ray traces (~0.1-0.3 ms for 96 rays). No allocation (stack scratch).
/// Thread: any, while nobody writes the store.
int findReflections(const sim::BrickStore& store, const AcousticTable& table, Vec3f listener,
                    std::uint64_t update, const ReflectionConfig& config, std::span<ReflectionTap> out) noexcept;

class EarlyReflector {
 public:
  /// Allocates the delay line (0.3 s) once.
  EarlyReflector();
  /// New taps (count <= kMaxReflectionTaps) heard by a listener with yaw (sim
  /// convention, as Listener::yaw); used from the next process() with a one-block
  /// crossfade from the old set. No allocation.
  void setTaps(std::span<const ReflectionTap> taps, float listenerYaw) noexcept;
  /// Feeds frames (<= kBlockFrames) mono samples of in and writes the reflections to
  /// outL/outR (overwritten; wet only). No allocation, no locks.
  void process(const float* in, float* outL, float* outR, int frames) noexcept;
  /// Clears the delay line.
  void reset() noexcept;

 private:
  struct Tap {
    float delaySamples = 0;
    float gainL = 0, gainR = 0;
    OnePole lowpass;
  };
  std::vector<float> line_;
  int write_ = 0;
  std::array<Tap, kMaxReflectionTaps> cur_{}, next_{};
  int curCount_ = 0, nextCount_ = 0;
  bool pending_ = false;
};

}  // namespace loam::audio
