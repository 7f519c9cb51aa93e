// Contact sounds by modal synthesis: impacts, footsteps and digs (models.h).
//
// A struck object rings at a few inharmonic modes, each a dsp.h Resonator. Every
// sound class has a mode table (ratios to the fundamental, decay times, gains) at a
// reference size of 20 cm; an object's size scales the fundamental as 1/size and the
// decays as sqrt(size), so a big block rings lower and longer with no extra data.
// The strike is a short force pulse roughened by noise: harder and faster contacts
// are shorter (brighter) and louder. Damped classes (soil, grass, sand, leaves,
// water) add a band of contact noise, and footsteps and digs add a granular layer
// (PhISEM-style: random grain onsets feed a decaying energy that gates noise through
// the surface's band-pass filters). All randomness is drawn from KeyedRng(key).
// docs/AUDIO.md lists the tables and parameters.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>

#include "audio/dsp.h"
#include "audio/models.h"

namespace loam::audio {
namespace {

using sim::SoundClass;

constexpr float kFs = static_cast<float>(kSampleRate);
constexpr float kRefSize = 0.2f;      ///< m: the size the tables' base frequencies are for
constexpr float kEndLevel = 3.2e-5f;  ///< -90 dBFS: below this after the last excitation, a voice ends
constexpr int kMaxModes = 8;

struct ModeDef {
  float ratio = 1, t60 = 0.1f, gain = 0;  ///< to the fundamental; seconds at kRefSize; linear
};

/// One sound class: its modes and its contact-noise band.
struct ClassDef {
  float baseHz = 0;          ///< fundamental at kRefSize
  int count = 0;
  std::array<ModeDef, kMaxModes> modes{};
  float noise = 0;           ///< contact-noise level relative to the modes
  float noiseHz = 1000, noiseQ = 0.7f, noiseT60 = 0.03f;
};

// Mode tables. Hard materials: inharmonic, from bar/plate-like ratios; soft ground:
// low, heavily damped, mostly contact noise.
constexpr ClassDef kNone{};
constexpr ClassDef kSoil{140, 4, {{{1, 0.035f, 1}, {1.83f, 0.03f, 0.6f}, {2.9f, 0.025f, 0.4f}, {4.2f, 0.02f, 0.25f}}},
                         0.6f, 700, 0.7f, 0.04f};
constexpr ClassDef kGrass{120, 4, {{{1, 0.03f, 1}, {1.9f, 0.025f, 0.5f}, {3.1f, 0.02f, 0.3f}, {4.6f, 0.015f, 0.2f}}},
                          0.7f, 2500, 0.6f, 0.05f};
constexpr ClassDef kSand{170, 4, {{{1, 0.02f, 1}, {2.1f, 0.018f, 0.5f}, {3.4f, 0.015f, 0.3f}, {5.2f, 0.012f, 0.2f}}},
                         0.8f, 1200, 0.6f, 0.05f};
constexpr ClassDef kGravel{450, 6, {{{1, 0.04f, 1}, {1.71f, 0.035f, 0.8f}, {2.63f, 0.03f, 0.6f}, {3.87f, 0.025f, 0.45f},
                                     {5.1f, 0.02f, 0.3f}, {6.7f, 0.015f, 0.2f}}},
                           0.5f, 1500, 1.0f, 0.06f};
constexpr ClassDef kStone{900, 6, {{{1, 0.10f, 1}, {1.59f, 0.08f, 0.7f}, {2.27f, 0.06f, 0.55f}, {3.03f, 0.05f, 0.4f},
                                    {3.81f, 0.04f, 0.3f}, {4.69f, 0.03f, 0.22f}}},
                          0.1f, 3000, 0.7f, 0.02f};
constexpr ClassDef kWood{420, 5, {{{1, 0.07f, 1}, {1.42f, 0.05f, 0.3f}, {2.76f, 0.045f, 0.45f}, {5.40f, 0.03f, 0.2f},
                                   {8.93f, 0.02f, 0.1f}}},
                         0.08f, 1000, 0.7f, 0.02f};
constexpr ClassDef kFoliage{300, 4, {{{1, 0.02f, 1}, {1.7f, 0.018f, 0.6f}, {2.9f, 0.015f, 0.4f}, {4.4f, 0.012f, 0.3f}}},
                            0.8f, 4500, 0.8f, 0.06f};
constexpr ClassDef kGlass{2200, 5, {{{1, 0.9f, 1}, {2.32f, 0.6f, 0.6f}, {4.25f, 0.45f, 0.45f}, {6.63f, 0.3f, 0.3f},
                                    {9.38f, 0.2f, 0.2f}}},
                          0.05f, 6000, 1.0f, 0.01f};
constexpr ClassDef kWater{350, 4, {{{1, 0.05f, 1}, {1.5f, 0.04f, 0.6f}, {2.3f, 0.03f, 0.4f}, {3.7f, 0.02f, 0.3f}}},
                          0.8f, 1800, 0.5f, 0.08f};
constexpr ClassDef kMetal{520, 8, {{{1, 1.6f, 1}, {1.47f, 1.3f, 0.8f}, {2.09f, 1.1f, 0.7f}, {2.56f, 0.95f, 0.55f},
                                    {3.39f, 0.8f, 0.45f}, {4.17f, 0.65f, 0.35f}, {5.24f, 0.5f, 0.25f}, {6.05f, 0.4f, 0.2f}}},
                          0.02f, 4000, 1.0f, 0.01f};

const ClassDef& classDef(SoundClass c) {
  switch (c) {
    case SoundClass::None: return kNone;
    case SoundClass::Soil: return kSoil;
    case SoundClass::Grass: return kGrass;
    case SoundClass::Sand: return kSand;
    case SoundClass::Gravel: return kGravel;
    case SoundClass::Stone: return kStone;
    case SoundClass::Wood: return kWood;
    case SoundClass::Foliage: return kFoliage;
    case SoundClass::Glass: return kGlass;
    case SoundClass::Water: return kWater;
    case SoundClass::Metal: return kMetal;
    case SoundClass::Count: return kNone;
  }
  return kNone;
}

/// How hard a class's surface is to a foot or a tool (0..10), for strike pulses.
float classHardness(SoundClass c) {
  switch (c) {
    case SoundClass::Stone: return 7;
    case SoundClass::Glass: return 8;
    case SoundClass::Metal: return 9;
    case SoundClass::Wood: return 4;
    case SoundClass::Gravel: return 3;
    case SoundClass::Soil: return 1.5f;
    case SoundClass::Sand: return 1;
    case SoundClass::Grass: return 1;
    case SoundClass::Foliage: return 0.5f;
    case SoundClass::Water: return 0.5f;
    case SoundClass::None:
    case SoundClass::Count: return 0;
  }
  return 0;
}

/// The modes of one class at one size; per-instance jitter from rng.
class ModalBank {
 public:
  /// level: each mode's peak per unit of excitation area (before its table gain).
  void setup(const ClassDef& def, float sizeMetres, float level, KeyedRng& rng) {
    float size = std::clamp(sizeMetres, 0.02f, 4.0f);
    float f0 = def.baseHz * kRefSize / size * rng.range(0.96f, 1.04f);
    float decayScale = std::clamp(std::sqrt(size / kRefSize), 0.3f, 4.0f);
    count_ = 0;
    maxT60_ = 0;
    for (int i = 0; i < def.count; ++i) {
      const ModeDef& m = def.modes[static_cast<std::size_t>(i)];
      // Draw all jitter first so the stream does not depend on which modes survive.
      float hz = f0 * m.ratio * rng.range(0.98f, 1.02f);
      float t60 = m.t60 * decayScale * rng.range(0.9f, 1.1f);
      float g = m.gain * level * rng.range(0.8f, 1.2f);
      if (hz < 20.0f || hz > 0.45f * kFs) continue;
      // Resonator scales its input by (1 - r); undo that and the 1/sin(w) resonance
      // so an impulse of area 1 rings at about g whatever the decay and frequency.
      float r = std::exp(-6.907755f / (t60 * kFs));
      float w = 2.0f * kPi * hz / kFs;
      modes_[static_cast<std::size_t>(count_++)].set(hz, t60, g * std::sin(w) / (1.0f - r));
      maxT60_ = std::max(maxT60_, t60);
    }
  }
  float process(float x) {
    float y = 0;
    for (int i = 0; i < count_; ++i) y += modes_[static_cast<std::size_t>(i)].process(x);
    return y;
  }
  void reset() {
    for (Resonator& m : modes_) m.reset();
  }
  float maxT60() const { return maxT60_; }
  int count() const { return count_; }

 private:
  std::array<Resonator, kMaxModes> modes_{};
  int count_ = 0;
  float maxT60_ = 0;
};

/// Contact time of a strike: harder and faster is shorter (so brighter).
float contactSeconds(float hardness, float speed) {
  float h = 1.0f + std::clamp(hardness, 0.0f, 10.0f);
  return 0.003f / (h * std::sqrt(h)) / (0.5f + 0.25f * std::clamp(speed, 0.0f, 20.0f));
}

/// A strike: a half-sine force pulse of area `amp`, roughened by noise and low-passed
/// by hardness and speed.
class Strike {
 public:
  void start(float amp, float hardness, float speed) {
    len_ = std::max(2, static_cast<int>(contactSeconds(hardness, speed) * kFs));
    n_ = 0;
    amp_ = amp * kPi / (2.0f * static_cast<float>(len_));  // half-sine area = 2N/pi
    lp_.setCutoff(std::min(20000.0f, 2000.0f + 1500.0f * hardness + 1000.0f * speed));
    lp_.reset();
  }
  bool active() const { return n_ < len_; }
  float next(KeyedRng& rng) {
    if (n_ >= len_) return 0.0f;
    float shape = std::sin(kPi * (static_cast<float>(n_) + 0.5f) / static_cast<float>(len_));
    ++n_;
    return lp_.lowpass(amp_ * shape * (1.0f + 0.6f * rng.bipolar()));
  }
  void skip(int frames) { n_ = std::min(len_, n_ + frames); }

 private:
  int len_ = 0, n_ = 0;
  float amp_ = 0;
  OnePole lp_;
};

/// A decaying band of noise: the contact noise of soft surfaces.
class NoiseBand {
 public:
  void start(float level, float hz, float q, float t60) {
    env_ = level;
    decay_ = std::exp(-6.907755f / (std::max(0.002f, t60) * kFs));
    bp_.bandpass(hz, q);
    bp_.reset();
  }
  float next(KeyedRng& rng) {
    if (env_ < 1e-7f) return 0.0f;
    env_ *= decay_;
    return bp_.process(rng.bipolar() * env_);
  }
  void skip(int frames) {
    env_ *= std::pow(decay_, static_cast<float>(frames));
    if (env_ < 1e-7f) env_ = 0.0f;
  }

 private:
  float env_ = 0, decay_ = 0;
  Biquad bp_;
};

/// The granular surface layer of steps and digs.
struct SurfaceDef {
  float modal;          ///< level of the modal knock
  float grainRate;      ///< grains per second at full force
  float grainMs;        ///< grain decay time (to -60 dB)
  float grainLevel;     ///< level per grain
  float swish;          ///< continuous noise under the force envelope
  float f1, q1, f2, q2, mix2;  ///< the layer's two band-passes
  bool bubbles;         ///< retune band 2 per grain (water)
  float sizeMetres;     ///< patch of ground that rings under a foot
};

const SurfaceDef& surfaceDef(SoundClass c) {
  //                                   modal rate   ms  grain swish   f1   q1    f2   q2  mix2 bub  size
  static constexpr SurfaceDef kNoneS{0, 0, 1, 0, 0, 1000, 1, 1000, 1, 0, false, 0.3f};
  static constexpr SurfaceDef kSoilS{0.6f, 300, 3, 0.5f, 0.25f, 600, 0.8f, 220, 0.7f, 0.6f, false, 0.3f};
  static constexpr SurfaceDef kGrassS{0.3f, 350, 4, 0.35f, 0.6f, 2500, 0.8f, 4500, 1.0f, 0.5f, false, 0.3f};
  static constexpr SurfaceDef kSandS{0.15f, 2500, 1.5f, 0.25f, 0.45f, 1200, 0.7f, 400, 0.7f, 0.5f, false, 0.3f};
  static constexpr SurfaceDef kGravelS{0.3f, 1400, 2.5f, 0.9f, 0.05f, 500, 1.5f, 1500, 2.0f, 0.6f, false, 0.25f};
  static constexpr SurfaceDef kStoneS{0.6f, 80, 1, 0.2f, 0.04f, 3000, 0.7f, 6000, 0.7f, 0.3f, false, 0.35f};
  static constexpr SurfaceDef kWoodS{0.7f, 60, 1.5f, 0.2f, 0.04f, 1500, 0.7f, 3500, 0.7f, 0.3f, false, 0.4f};
  static constexpr SurfaceDef kFoliageS{0.2f, 900, 3, 0.45f, 0.3f, 4500, 1.0f, 8000, 1.0f, 0.6f, false, 0.3f};
  static constexpr SurfaceDef kGlassS{0.6f, 40, 1, 0.1f, 0.03f, 5000, 0.7f, 9000, 0.7f, 0.3f, false, 0.3f};
  static constexpr SurfaceDef kWaterS{0.1f, 400, 12, 0.5f, 0.6f, 2500, 0.6f, 1200, 10.0f, 0.9f, true, 0.3f};
  static constexpr SurfaceDef kMetalS{0.6f, 40, 1, 0.1f, 0.03f, 4000, 0.7f, 8000, 0.7f, 0.3f, false, 0.5f};
  switch (c) {
    case SoundClass::None: return kNoneS;
    case SoundClass::Soil: return kSoilS;
    case SoundClass::Grass: return kGrassS;
    case SoundClass::Sand: return kSandS;
    case SoundClass::Gravel: return kGravelS;
    case SoundClass::Stone: return kStoneS;
    case SoundClass::Wood: return kWoodS;
    case SoundClass::Foliage: return kFoliageS;
    case SoundClass::Glass: return kGlassS;
    case SoundClass::Water: return kWaterS;
    case SoundClass::Metal: return kMetalS;
    case SoundClass::Count: return kNoneS;
  }
  return kNoneS;
}

/// PhISEM-style particle layer: grain onsets (rate x drive) add energy that decays
/// per sample and gates noise through two band-passes; `swish` adds noise that
/// follows the drive directly (grass brushing, sand shuffling, water moving).
class GrainLayer {
 public:
  void setup(const SurfaceDef& s, float level) {
    def_ = &s;
    level_ = level;
    decay_ = std::exp(-6.907755f / (std::max(0.5f, s.grainMs) * 0.001f * kFs));
    bp1_.bandpass(s.f1, s.q1);
    bp2_.bandpass(s.f2, s.q2);
  }
  /// drive 0..1 (force, or loosening rate); returns one sample.
  float next(float drive, KeyedRng& rng) {
    const SurfaceDef& s = *def_;
    if (drive > 0.0f && rng.uniform() < s.grainRate * drive / kFs) {
      energy_ += s.grainLevel * rng.range(0.3f, 1.0f);
      if (s.bubbles) bp2_.bandpass(rng.range(700.0f, 2600.0f), s.q2);
    }
    energy_ *= decay_;
    if (energy_ < 1e-9f) energy_ = 0.0f;  // no denormals into the filters
    float n = rng.bipolar();
    float x = n * (energy_ + s.swish * drive);
    return level_ * (bp1_.process(x) + s.mix2 * bp2_.process(x));
  }
  void skip(int frames) {
    energy_ *= std::pow(decay_, static_cast<float>(frames));
    if (energy_ < 1e-9f) energy_ = 0.0f;
  }
  void reset() {
    energy_ = 0;
    bp1_.reset();
    bp2_.reset();
  }

 private:
  const SurfaceDef* def_ = nullptr;
  float level_ = 0, decay_ = 0, energy_ = 0;
  Biquad bp1_, bp2_;
};

/// Shared one-shot plumbing: timeline, end detection and the loudness estimate.
class ContactVoice : public Voice {
 public:
  float loudness() const override { return level_; }

 protected:
  /// After a rendered block: updates loudness; true while the voice goes on.
  bool endBlock(const float* out, int frames) {
    float peak = 0, sum = 0;
    for (int i = 0; i < frames; ++i) {
      peak = std::max(peak, std::fabs(out[i]));
      sum += out[i] * out[i];
    }
    t_ += frames;
    if (frames > 0) level_ = std::sqrt(sum / static_cast<float>(frames));
    // Ended: nothing more is scheduled and the output is below -90 dBFS.
    return !(t_ >= lastExcite_ && peak < kEndLevel) && t_ < hardEnd_;
  }
  /// After a skipped block: loudness decays with the longest mode.
  bool endSkip(int frames) {
    t_ += frames;
    level_ *= std::exp(-6.907755f * static_cast<float>(frames) / (std::max(0.01f, tailT60_) * kFs));
    return t_ < hardEnd_;
  }
  long tailSamples() const { return static_cast<long>(tailT60_ * 1.5f * kFs) + kBlockFrames; }

  long t_ = 0;           ///< samples since the start
  long lastExcite_ = 0;  ///< sample of the last scheduled excitation's end
  long hardEnd_ = 0;     ///< the voice ends here at the latest
  float tailT60_ = 0.1f; ///< longest decay after the last excitation (s)
  float level_ = 0;      ///< RMS estimate
};

// ---- impact ---------------------------------------------------------------------

class ImpactVoice final : public ContactVoice {
 public:
  explicit ImpactVoice(const ImpactSpec& s) : rng_(combineKey(s.key, 0x1a9c7)) {
    const ClassDef& def = classDef(s.surface);
    float speed = std::clamp(s.speed, 0.0f, 20.0f);
    // Louder with speed: about linear in velocity at walking speeds, saturating
    // for hard throws so a big fast block does not run far over full scale.
    float amp = 0.4f * (1.0f - std::exp(-speed / 4.0f));
    bank_.setup(def, s.sizeMetres, 1.0f, rng_);
    strike_.start(amp, s.hardness, speed);
    float sizeScale = std::sqrt(kRefSize / std::clamp(s.sizeMetres, 0.02f, 4.0f));
    noise_.start(def.noise * amp * 0.5f, std::min(16000.0f, def.noiseHz * sizeScale), def.noiseQ, def.noiseT60);
    silent_ = def.count == 0 || speed <= 0.0f;
    tailT60_ = std::max(bank_.maxT60(), def.noiseT60);
    lastExcite_ = static_cast<long>(contactSeconds(s.hardness, speed) * kFs) + 1;
    hardEnd_ = lastExcite_ + tailSamples();
    level_ = silent_ ? 0.0f : amp * 0.5f;
  }

  bool render(float* out, int frames, const SynthParams&) override {
    if (silent_) {
      std::fill(out, out + frames, 0.0f);
      return false;
    }
    for (int i = 0; i < frames; ++i) out[i] = bank_.process(strike_.next(rng_)) + noise_.next(rng_);
    return endBlock(out, frames);
  }
  bool skip(int frames, const SynthParams& /*params*/) override {
    strike_.skip(frames);
    noise_.skip(frames);
    bank_.reset();  // a virtual voice resumes from its next excitation (none here)
    return !silent_ && endSkip(frames);
  }

 private:
  KeyedRng rng_;
  ModalBank bank_;
  Strike strike_;
  NoiseBand noise_;
  bool silent_ = false;
};

// ---- footstep -------------------------------------------------------------------

/// One pressure hump of a step: a raised-cosine-like bump (16 x^2 (1-x)^2, cheaper
/// than a cosine per sample, same shape to within a few percent).
struct Hump {
  float start = 0, dur = 0.01f, amp = 0;  ///< seconds, seconds, force 0..1
  bool strike = false;                    ///< contact transient at its start (heel)
};

struct GaitShape {
  std::array<Hump, 3> humps;
  float nominalSpeed;  ///< m/s the times are for
  float level;         ///< loudness at nominal speed
};

const GaitShape& gaitShape(Gait g) {
  // Heel strike, roll, toe push-off; a landing is a hard double heel and a settle.
  static constexpr GaitShape kWalk{{{{0.0f, 0.035f, 1.0f, true}, {0.03f, 0.16f, 0.35f, false}, {0.17f, 0.06f, 0.55f, false}}},
                                   1.4f, 0.25f};
  static constexpr GaitShape kRun{{{{0.0f, 0.02f, 1.0f, true}, {0.015f, 0.07f, 0.3f, false}, {0.08f, 0.035f, 0.7f, false}}},
                                  3.5f, 0.4f};
  static constexpr GaitShape kLand{{{{0.0f, 0.015f, 1.0f, true}, {0.02f, 0.05f, 0.6f, true}, {0.06f, 0.15f, 0.3f, false}}},
                                   4.0f, 0.5f};
  switch (g) {
    case Gait::Walk: return kWalk;
    case Gait::Run: return kRun;
    case Gait::Land: return kLand;
  }
  return kWalk;
}

class FootstepVoice final : public ContactVoice {
 public:
  explicit FootstepVoice(const FootstepSpec& s) : rng_(combineKey(s.key, 0xf007)) {
    const GaitShape& g = gaitShape(s.gait);
    const SurfaceDef& sd = surfaceDef(s.surface);
    float speed = std::clamp(s.speed, 0.1f, 20.0f);
    float timeScale = 1.0f, level = g.level;
    if (s.gait == Gait::Land) {
      level = std::min(1.2f, 0.12f * speed);  // landing: louder with impact speed
    } else {
      timeScale = std::clamp(g.nominalSpeed / speed, 0.6f, 1.6f);  // faster gait, compressed envelope
      level *= std::sqrt(speed / g.nominalSpeed);
    }
    level *= rng_.range(0.85f, 1.15f);
    for (std::size_t i = 0; i < humps_.size(); ++i) {
      Hump h = g.humps[i];
      h.start = (h.start * timeScale + rng_.range(0.0f, 0.006f)) * kFs;  // kept in samples from here
      h.dur = h.dur * timeScale * rng_.range(0.9f, 1.1f) * kFs;
      h.amp *= rng_.range(0.85f, 1.15f);
      humps_[i] = h;
      if (h.strike) strikeAt_[i] = static_cast<long>(h.start);
      lastExcite_ = std::max(lastExcite_, static_cast<long>(h.start + h.dur) + 1);
    }
    hardness_ = classHardness(s.surface);
    strikeSpeed_ = s.gait == Gait::Run ? 3.0f : (s.gait == Gait::Land ? speed : 1.5f);
    bank_.setup(classDef(s.surface), sd.sizeMetres * rng_.range(0.85f, 1.15f), 1.0f, rng_);
    grains_.setup(sd, level);
    modalLevel_ = sd.modal * level;
    silent_ = s.surface == SoundClass::None || s.surface == SoundClass::Count;
    tailT60_ = std::max({bank_.maxT60(), sd.grainMs * 0.001f, 0.02f});
    hardEnd_ = lastExcite_ + tailSamples();
    level_ = silent_ ? 0.0f : level * 0.3f;
  }

  bool render(float* out, int frames, const SynthParams&) override {
    if (silent_) {
      std::fill(out, out + frames, 0.0f);
      return false;
    }
    for (int i = 0; i < frames; ++i) {
      float t = static_cast<float>(t_ + i);
      float force = 0;
      for (std::size_t k = 0; k < humps_.size(); ++k) {
        const Hump& h = humps_[k];
        float x = (t - h.start) / h.dur;
        if (x >= 0.0f && x < 1.0f) force += h.amp * 16.0f * x * x * (1.0f - x) * (1.0f - x);
        if (strikeAt_[k] == t_ + i) strike_.start(modalLevel_ * h.amp, hardness_, strikeSpeed_);
      }
      // The modal bank hears the strike transients and, faintly, the scuffing force.
      float exc = strike_.next(rng_) + 0.002f * modalLevel_ * force * rng_.bipolar();
      out[i] = bank_.process(exc) + grains_.next(std::min(1.0f, force), rng_);
    }
    return endBlock(out, frames);
  }
  bool skip(int frames, const SynthParams& /*params*/) override {
    // Strikes inside the skipped span are lost; later humps still happen on time.
    strike_.skip(frames);
    grains_.skip(frames);
    bank_.reset();
    return !silent_ && endSkip(frames);
  }

 private:
  KeyedRng rng_;
  std::array<Hump, 3> humps_{};
  std::array<long, 3> strikeAt_{-1, -1, -1};  ///< sample of each hump's strike, -1 none
  float hardness_ = 0, strikeSpeed_ = 1, modalLevel_ = 0;
  ModalBank bank_;
  Strike strike_;
  GrainLayer grains_;
  bool silent_ = false;
};

// ---- dig ------------------------------------------------------------------------

class DigVoice final : public ContactVoice {
 public:
  explicit DigVoice(const DigSpec& s) : rng_(combineKey(s.key, 0xd16)) {
    const SurfaceDef& sd = surfaceDef(s.material);
    float v = static_cast<float>(std::clamp<std::uint32_t>(s.voxels, 1, 100000));
    // A spade-like strike on the material, then material coming loose: grains whose
    // rate decays over a time that grows with how much came away.
    tau_ = std::min(0.8f, 0.08f + 0.05f * std::sqrt(v)) * kFs * rng_.range(0.9f, 1.1f);
    rate_ = std::min(1.0f, 0.5f + 0.05f * std::sqrt(v));
    bank_.setup(classDef(s.material), 0.25f * rng_.range(0.8f, 1.2f), 1.0f, rng_);
    strike_.start(0.35f * rng_.range(0.85f, 1.15f), 7.0f, 3.0f);
    grains_.setup(sd, 0.45f);
    silent_ = s.material == SoundClass::None || s.material == SoundClass::Count;
    lastExcite_ = static_cast<long>(tau_ * 5.0f);
    tailT60_ = std::max({bank_.maxT60(), sd.grainMs * 0.001f, 0.02f});
    hardEnd_ = lastExcite_ + tailSamples();
    decayPerSample_ = std::exp(-1.0f / tau_);
    drive_ = rate_;
    level_ = silent_ ? 0.0f : 0.15f;
  }

  bool render(float* out, int frames, const SynthParams&) override {
    if (silent_) {
      std::fill(out, out + frames, 0.0f);
      return false;
    }
    for (int i = 0; i < frames; ++i) {
      drive_ *= decayPerSample_;
      if (drive_ < 1e-9f) drive_ = 0.0f;
      out[i] = bank_.process(strike_.next(rng_)) + grains_.next(drive_, rng_);
    }
    return endBlock(out, frames);
  }
  bool skip(int frames, const SynthParams& /*params*/) override {
    strike_.skip(frames);
    grains_.skip(frames);
    bank_.reset();
    drive_ *= std::pow(decayPerSample_, static_cast<float>(frames));
    return !silent_ && endSkip(frames);
  }

 private:
  KeyedRng rng_;
  ModalBank bank_;
  Strike strike_;
  GrainLayer grains_;
  float tau_ = 1, rate_ = 0, drive_ = 0, decayPerSample_ = 1;
  bool silent_ = false;
};

}  // namespace

std::unique_ptr<Voice> makeImpact(const ImpactSpec& spec) { return std::make_unique<ImpactVoice>(spec); }
std::unique_ptr<Voice> makeFootstep(const FootstepSpec& spec) { return std::make_unique<FootstepVoice>(spec); }
std::unique_ptr<Voice> makeDig(const DigSpec& spec) { return std::make_unique<DigVoice>(spec); }

}  // namespace loam::audio
