// Early reflections: the slap of nearby walls on impulsive sounds (footsteps,
// impacts, digs), so a shot of sound in an alley slaps back and in a field does not.
//
// findWallPoints() casts a fixed set of short horizontal rays (and a ring tilted
// 20 degrees down and up, so walls are found over a step or a kerb) from the listener
// through the voxel world. Each ray that hits a vertical face 1.5-40 m away is a wall
// point: a small Lambert reflector standing for the ray's share w of its ring's
// solid angle (closer walls are left to the reverb: they fuse with the direct sound).
//
// reflectionTaps() turns the points into one source's taps. A point P seen from the
// listener L at cos i, reflecting a source S: energy relative to the direct sound at
// 1 m E = w (1 - absorption_mid) cos_in / (pi |S - P|^2) (the patch's area w |P - L|^2
// / cos i cancels against the listener's distance and angle), delay = (|S - P| +
// |P - L| - |S - L|) / c after the direct sound, phase-inverted (sign -1), low-passed
// by the wall's high-band absorption; a wall the source is behind sends nothing. The
// tap's gain is relative to the direct sound as the engine plays it (so x the
// engine's distance attenuation undone). Points whose delays fall within 3 ms and
// whose directions within 45 degrees merge (energies add, delay and direction are the
// energy-weighted means); the strongest kMaxReflectionTaps remain, ordered by delay.
// For a source at the ears this is the mirror image of each wall (within 0.5 dB at
// 2-3 m); for one 6 m down an alley, the slap comes 3.5 ms after it, not 12 ms.
//
// EarlyReflector is the audio-thread side: one stereo accumulation ring (0.3 s).
// Each impulsive voice adds its block at each of its own taps' delays, one-pole
// low-passed (state kept by the voice) and panned by the tap's direction relative to
// the listener's yaw (constant power); process() plays out what is due. No
// allocation, no locks after construction.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "audio/dsp.h"
#include "audio/engine.h"
#include "audio/room_probe.h"
#include "sim/world/brick_store.h"

namespace loam::audio {

struct ReflectionConfig {
  int raysPerRing = 32;        ///< rays in each of the three rings (horizontal, -20, +20 degrees)
  float maxDistance = 40.0f;   ///< metres (delay up to ~0.23 s)
  float minDistance = 1.5f;    ///< metres: closer walls are left to the reverb
  std::uint64_t key = 0x65726566u;  ///< keys the rings' rotation per update
};

/// A wall point found by the listener's rays (see the model above).
struct WallPoint {
  Vec3f position;            ///< metres, on the face
  Vec3f fromListener;        ///< unit direction listener -> point
  float weight = 0;          ///< w (1 - absorption_mid) / pi
  float lowpassHz = 16000;   ///< the wall's high-band loss
  std::int8_t normalAxis = 0;  ///< 0 x, 2 z (vertical faces only)
  std::int8_t normalSign = 1;  ///< the face normal points along +/- that axis (towards the listener)
};
inline constexpr int kMaxWallPoints = 3 * 128;

/// Finds the wall points round listener (at most out.size(), kMaxWallPoints is
/// enough for any config); returns how many. The rings are rotated by a sequence keyed
/// by (config.key, update). Cost: 3 x raysPerRing ray traces (~0.1-0.3 ms for 96
/// rays). No allocation. Thread: any, while nobody writes the store.
int findWallPoints(const sim::BrickStore& store, const AcousticTable& table, Vec3f listener, std::uint64_t update,
                   const ReflectionConfig& config, std::span<WallPoint> out) noexcept;

/// One source's taps (at most out.size() <= kMaxReflectionTaps) from the wall points
/// of a listener at `listener`; returns how many. Pure; a few microseconds for 96
/// points; no allocation (stack scratch). Thread: any.
int reflectionTaps(std::span<const WallPoint> points, Vec3f listener, Vec3f source,
                   std::span<ReflectionTap> out) noexcept;

/// findWallPoints, then reflectionTaps for a source at the listener (the player's own
/// sounds; tools and tests).
int findReflections(const sim::BrickStore& store, const AcousticTable& table, Vec3f listener,
                    std::uint64_t update, const ReflectionConfig& config, std::span<ReflectionTap> out) noexcept;

class EarlyReflector {
 public:
  /// Allocates the ring (0.3 s, stereo) once.
  EarlyReflector();
  /// Adds one source's block: frames (<= kBlockFrames) samples of in (the source as
  /// the listener hears it directly) at each tap's delay, low-passed (lowpassState: one
  /// value per tap, kept by the caller between blocks) and panned for listenerYaw (sim
  /// convention, as Listener::yaw). Call before process() for the same block. No
  /// allocation, no locks.
  void add(const float* in, int frames, std::span<const ReflectionTap> taps, float listenerYaw,
           std::span<float> lowpassState) noexcept;
  /// Writes the reflections due in the next frames samples to outL/outR (overwritten;
  /// wet only) and moves on. No allocation, no locks.
  void process(float* outL, float* outR, int frames) noexcept;
  /// Clears the ring.
  void reset() noexcept;

 private:
  std::vector<float> left_, right_;
  int read_ = 0;
};

}  // namespace loam::audio
