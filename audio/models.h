// Synthesis models: factories for every kind of voice. Nothing here plays a
// recording; every sound is computed. Each instance varies by its `key` (a stable id
// such as an event index or a fire cell), so repeats are not obvious but the same key
// gives the same samples. Models and their parameters are documented in docs/AUDIO.md.
//
// SynthParams slots (v[0..5]) per continuous model are listed with its factory.
#pragma once
#include <cstdint>
#include <memory>
#include "audio/voice.h"
#include "sim/world/material.h"

namespace loam::audio {

// ---- contact sounds (audio/modal.cpp, audio/fracture.cpp) ---------------------------

/// Something struck a surface: a block landing, a dig, a thrown stone.
struct ImpactSpec {
  sim::SoundClass surface = sim::SoundClass::Stone;  ///< mode table
  float sizeMetres = 0.4f;   ///< object size: larger rings lower and longer
  float speed = 2.0f;        ///< m/s: louder and brighter excitation
  float hardness = 5.0f;     ///< material hardness 0..10: shorter, brighter excitation
  std::uint64_t key = 0;
};
/// One-shot. Modal bank of the surface's sound class, excited by a shaped noise burst.
std::unique_ptr<Voice> makeImpact(const ImpactSpec& spec);

enum class Gait : std::uint8_t { Walk, Run, Land };
struct FootstepSpec {
  sim::SoundClass surface = sim::SoundClass::Grass;
  Gait gait = Gait::Walk;
  float speed = 1.4f;        ///< m/s (landing: impact speed)
  std::uint64_t key = 0;
};
/// One-shot. Heel-roll-toe force envelope per gait driving the surface's modal bank
/// plus the surface's granular layer (grass swish, gravel crunch, splash).
std::unique_ptr<Voice> makeFootstep(const FootstepSpec& spec);

struct DigSpec {
  sim::SoundClass material = sim::SoundClass::Soil;
  std::uint32_t voxels = 8;  ///< how much came away
  std::uint64_t key = 0;
};
/// One-shot. A tool strike (impact) plus material coming loose (granular scrape).
std::unique_ptr<Voice> makeDig(const DigSpec& spec);

struct FractureSpec {
  sim::SoundClass material = sim::SoundClass::Stone;  ///< Stone/Gravel (rock) or Glass
  std::uint32_t voxels = 64;  ///< size of what broke
  std::uint64_t key = 0;
};
/// One-shot. A sharp broadband crack, a few more as the fracture runs, gritty debris
/// trickling after, a low thud; ringing turned right down (glass keeps a little and
/// its shards ring).
std::unique_ptr<Voice> makeFracture(const FractureSpec& spec);

// ---- environment (audio/wind.cpp, rain.cpp, fire.cpp, water.cpp) -------------------

enum class WindCover : std::uint8_t { Open, Grass, Leaves, Edge };
/// Continuous. v[0] wind speed at the emitter (m/s), v[1] gust 0..1 (the sim's gust
/// relative to the mean), v[2] amount of cover (0..1: how much grass / foliage).
/// Grass rustles low and soft, leaves brighter and busier, edges whistle, open air is
/// a broad low roar.
std::unique_ptr<Voice> makeWind(WindCover cover, std::uint64_t key);

enum class RainSurface : std::uint8_t { Water, Stone, Wood, Leaves, Soil };
/// Continuous. v[0] drops per second landing on this patch. Each drop is a tiny
/// event whose timbre depends on the surface (a bubble chirp on water, a tick on
/// stone, a tap on wood or roofs, a patter on leaves, a dull pat on soil or grass).
std::unique_ptr<Voice> makeRain(RainSurface surface, std::uint64_t key);
/// Continuous. v[0] intensity 0..1: the distant, diffuse rain bed.
std::unique_ptr<Voice> makeRainBed(std::uint64_t key);

/// Continuous. v[0] burning cells in this fire (count), v[1] mean intensity 0..1.
/// Lapping (low, turbulent), crackling (sparse sharp clicks) and hissing; a growing
/// fire is louder and denser.
std::unique_ptr<Voice> makeFire(std::uint64_t key);
/// One-shot. Steam hiss of a fire put out (rain or water).
std::unique_ptr<Voice> makeHiss(float strength, std::uint64_t key);

enum class WaterKind : std::uint8_t { Waterfall, Stream, Pour };
/// Continuous (Pour: one-shot-ish, ends when v[0] stays 0). v[0] flow 0..1 (wet
/// cells moving / falling near the emitter), v[1] fall height in metres (waterfall).
std::unique_ptr<Voice> makeWater(WaterKind kind, std::uint64_t key);

// ---- creatures and beds (audio/creatures.cpp) ---------------------------------------

enum class CreatureCall : std::uint8_t { BirdSong, BirdChirp, FoxBark, DogBark };
/// One-shot. Procedural call; the key varies pitch, rhythm and syllables per animal.
std::unique_ptr<Voice> makeCreatureCall(CreatureCall call, std::uint64_t key);

enum class BedKind : std::uint8_t { Day, Night };
/// Continuous. v[0] level 0..1. Day: distant birds and air; night: insects, crickets.
std::unique_ptr<Voice> makeBed(BedKind kind, std::uint64_t key);

}  // namespace loam::audio
