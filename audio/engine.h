// AudioEngine: emitters, voices and the mixer.
//
// The control thread starts, updates and stops emitters (a voice plus where it is and
// how loud), then commit()s; commit publishes the batch to the audio thread through a
// wait-free single-producer/single-consumer queue and frees what the audio thread
// retired. The audio thread's renderBlock() applies the published commands, picks
// the real voices (at most EngineConfig::realVoices, by audibility: gain, loudness,
// distance and priority; the rest are virtual and only skip()), renders them,
// spatialises them (distance attenuation, air absorption, constant-power stereo pan
// relative to the listener) and mixes. Voices entering or leaving the real set, and
// stopped emitters, fade over kFadeFrames: no clicks.
//
// The audio thread never allocates, locks, logs or waits: every container it uses is
// sized at construction; a full command queue makes commit() report and keep the
// rest for the next commit.
//
// Offline rendering runs both sides on one thread (control update, commit, blocks),
// which makes renders repeatable.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include "audio/dsp.h"
#include "audio/voice.h"

namespace loam::audio {

inline constexpr int kFadeFrames = 256;  ///< fade in/out length (one block)

/// A stable emitter key: what it is and which one (e.g. fire cell, animal id, event
/// index), so variation keyed by it is stable across runs.
using EmitterId = std::uint64_t;
enum class EmitterKind : std::uint8_t {
  Impact = 1, Footstep, Dig, Fracture, Wind, Rain, RainBed, Fire, Hiss, Water, Creature, Bed,
};
constexpr EmitterId emitterId(EmitterKind kind, std::uint64_t index) {
  return (static_cast<std::uint64_t>(kind) << 56) | (index & 0x00ff'ffff'ffff'ffffull);
}

struct Vec3f {
  float x = 0, y = 0, z = 0;
};

/// Where the ears are. yaw in radians, sim convention (0 north = -z, clockwise).
struct Listener {
  Vec3f position;
  float yaw = 0;
};

/// One early reflection of a source off a wall near the listener (audio/early_reflections.h).
struct ReflectionTap {
  float delay = 0;          ///< seconds after the direct sound
  float gain = 0;           ///< amplitude relative to the direct sound (negative: phase-inverted)
  float lowpassHz = 8000;   ///< the wall's high-frequency loss
  Vec3f direction;          ///< world direction from the listener to the reflection point
};
inline constexpr int kMaxReflectionTaps = 8;

/// Distance attenuation of point sources: kRefDistance / clamp(d, kRefDistance, kMaxDistance).
inline constexpr float kRefDistance = 1.0f;     ///< m: full level at and inside 1 m
inline constexpr float kMaxDistance = 1000.0f;  ///< m: attenuation stops falling

/// What the control thread says about an emitter.
struct EmitterState {
  Vec3f position;           ///< metres, world
  float gain = 1.0f;        ///< linear, before distance
  float priority = 1.0f;    ///< > 1 keeps it real longer (own footsteps, nearby impacts)
  float width = 0.0f;       ///< 0 point source .. 1 surrounds the listener (beds, rain)
  bool ambient = false;     ///< no distance attenuation (beds, the far sky ring)
  SynthParams params;
  // ---- acoustics (AudioScene fills these from audio/propagation.h; defaults: free field) ----
  std::array<float, 3> bands{1, 1, 1};  ///< amplitude per band (250 Hz / 1 kHz / 4 kHz) vs free field
  Vec3f direction;          ///< world direction the sound seems to come from; zero: from position
  float reverbSend = 0.0f;  ///< amplitude into the room's reverb (times the room's reverbGain)
  bool impulsive = false;   ///< footsteps, impacts, digs: also feed the early reflections
  /// Impulsive emitters: their reflections off the walls round the listener.
  std::array<ReflectionTap, kMaxReflectionTaps> taps{};
  int tapCount = 0;
};


/// The listener's room as the engine uses it (set by the control thread ~10-50 Hz;
/// changes glide, never click).
struct RoomAcoustics {
  float meanFreePath = 3.0f;                 ///< metres (FDN delay lengths)
  std::array<float, 3> rt60{0.3f, 0.3f, 0.3f};  ///< seconds, low/mid/high
  /// Amplitude of the reverberant field for a reverbSend of 1: sqrt(16 pi / A) with A
  /// the room's absorption area in m^2 (critical-distance relation), capped at 4.
  float reverbGain = 0.0f;
};

/// How point sources reach the two channels.
enum class Spatialisation : std::uint8_t {
  Binaural,  ///< HRTF (headphones); falls back to Speakers when the SOFA set can't be opened
  Speakers,  ///< constant-power stereo pan (loudspeakers)
};

struct EngineConfig {
  int realVoices = 64;      ///< voices rendered per block at most
  int maxEmitters = 1024;   ///< emitters alive at once (starts beyond are dropped, counted)
  int queueCapacity = 4096; ///< commands per commit
  Spatialisation spatial = Spatialisation::Binaural;
  /// Real point sources rendered through the HRTF at most (the loudest); the rest pan.
  int binauralVoices = 16;
  bool acoustics = true;    ///< reverb and early reflections on (off: dry: pan only, no room)
};

struct EngineStats {
  int emitters = 0;              ///< alive on the audio side
  int realVoices = 0;            ///< rendered in the last block
  int virtualVoices = 0;         ///< alive but skipped in the last block
  std::uint64_t blocks = 0;
  std::uint64_t started = 0;
  std::uint64_t finished = 0;    ///< one-shots that ended
  std::uint64_t dropped = 0;     ///< starts refused (emitter table full)
  std::uint64_t queueFull = 0;   ///< commits that could not publish everything at once
  int binauralVoices = 0;        ///< rendered through the HRTF in the last block
  bool binaural = false;         ///< the HRTF set is in use
};

class AudioEngine {
 public:
  explicit AudioEngine(EngineConfig config = {});
  ~AudioEngine();
  AudioEngine(const AudioEngine&) = delete;
  AudioEngine& operator=(const AudioEngine&) = delete;

  // ---- control thread ----
  /// Starts an emitter with its voice (ids must be unique among live emitters; a
  /// repeated id replaces the old emitter with a fade).
  void start(EmitterId id, std::unique_ptr<Voice> voice, const EmitterState& state);
  /// New state for a live emitter (ignored when unknown or ended).
  void update(EmitterId id, const EmitterState& state);
  /// Fades the emitter out and frees it.
  void stop(EmitterId id);
  void setListener(const Listener& listener);
  /// Overall output gain (linear).
  void setMasterGain(float gain);
  /// The listener's room: reverb times, mean free path, reverb level (early reflections
  /// come with each impulsive emitter's state).
  void setRoom(const RoomAcoustics& room);
  /// Publishes everything since the last commit; frees voices the audio side retired.
  void commit();
  /// True while the emitter is alive as far as the control side knows (one-shots
  /// that ended are reported back through commit()).
  bool alive(EmitterId id) const;

  // ---- audio thread ----
  /// Renders one block of kBlockFrames interleaved stereo frames into out
  /// (2 * kBlockFrames floats). Wait-free.
  void renderBlock(float* out);

  /// Counters (any thread; values are from the last block).
  EngineStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loam::audio
