// Rain: drops landing on one surface patch, each a tiny event scheduled as a
// Poisson process (keyed), with the surface's timbre (docs/AUDIO.md):
//  Water  impact click plus, for most drops, a Minnaert bubble: a sine at 3.26/r Hz
//         (r the keyed bubble radius, ~1-4 kHz) rising in pitch, decaying in ms.
//  Stone  sharp high tick: a sub-ms noise burst band-passed near 5 kHz, ringing two
//         short high modes (~6 and ~8 kHz).
//  Wood   woody tap: a click exciting one of four keyed plank modes (400-900 Hz).
//  Leaves soft patter: noise grains band-passed around 2-5 kHz.
//  Soil   dull pat: low-passed noise grains and a faint thump.
// Dense rain sums to a hiss; level grows like sqrt(rate) and saturates gently so a
// downpour stays below clipping. The rain bed is the diffuse, distant rest.
#include <algorithm>
#include "audio/env_common.h"
#include "audio/models.h"

namespace loam::audio {
namespace {
using namespace env;

class Rain final : public ContinuousVoice<Rain> {
 public:
  Rain(RainSurface surface, std::uint64_t key)
      : surface_(surface), noise_(combineKey(key, 1)), drops_(combineKey(key, 2)) {
    KeyedRng r(combineKey(key, 3));
    rate_.setTime(0.3f);
    switch (surface) {
      case RainSurface::Water:
        click_.setDecay(0.0006f);
        filterA_.bandpass(r.range(2200.0f, 2800.0f), 0.6f);
        break;
      case RainSurface::Stone:
        click_.setDecay(0.00025f);
        filterA_.bandpass(r.range(4200.0f, 5200.0f), 0.9f);
        modes_[0].set(r.range(5200.0f, 6400.0f), 0.012f, 1.0f);
        modes_[1].set(r.range(7600.0f, 9200.0f), 0.008f, 1.0f);
        break;
      case RainSurface::Wood:
        click_.setDecay(0.0003f);
        filterA_.lowpass(2500.0f, 0.7f);
        for (int k = 0; k < 4; ++k) {  // four planks / shingles under the patch
          modes_[k].set(r.range(400.0f, 900.0f), r.range(0.03f, 0.07f), 1.0f);
          modeEnv_[k].setDecay(0.0004f);
        }
        break;
      case RainSurface::Leaves:
        click_.setDecay(0.0025f);
        filterA_.bandpass(r.range(2300.0f, 2900.0f), 1.1f);
        filterB_.bandpass(r.range(4000.0f, 4800.0f), 1.1f);
        clickB_.setDecay(0.0018f);
        break;
      case RainSurface::Soil:
        click_.setDecay(0.003f);
        filterA_.lowpass(r.range(700.0f, 900.0f), 0.7f);
        modes_[0].set(r.range(110.0f, 160.0f), 0.04f, 1.0f);
        modeEnv_[0].setDecay(0.002f);
        break;
    }
  }

  void setParams(const SynthParams& p) { target_ = sane(p.v[0], 0.0f, 20000.0f); }
  float loudness() const override { return loud_; }

  void control() {
    float r = rate_.step(target_);
    perSecond_ = r;
    // Incoherent sum: rms ~ sqrt(rate); the soft knee keeps a downpour in range.
    float g = 1.0f / std::sqrt(1.0f + r * (1.0f / 600.0f));
    gain_.to(g);
    loud_ = kLoud[static_cast<int>(surface_)] * std::sqrt(r) * g;
  }

  void samples(float* out, int n) {
    switch (surface_) {
      case RainSurface::Water:
        for (int i = 0; i < n; ++i) {
          if (drops_.tick(perSecond_)) {
            KeyedRng& q = drops_.rng();
            float a = drop(q);
            click_.hit(0.22f * a);
            if (q.uniform() < 0.7f) {  // not every drop entrains a bubble
              float r = q.range(0.8f, 3.2f);  // radius, mm (Minnaert: 3.26 kHz mm)
              bubbles_.spawn(3260.0f / r, 0.3f * a, q.range(0.3f, 0.9f));
            }
          }
          float y = filterA_.process(noise_.next() * click_.next()) + bubbles_.next();
          out[i] = gain_.next() * y;
        }
        break;
      case RainSurface::Stone:
        for (int i = 0; i < n; ++i) {
          if (drops_.tick(perSecond_)) click_.hit(drop(drops_.rng()));
          float x = filterA_.process(noise_.next() * click_.next());
          out[i] = gain_.next() * (x + 4.0f * modes_[0].process(x) + 3.0f * modes_[1].process(x));
        }
        break;
      case RainSurface::Wood:
        for (int i = 0; i < n; ++i) {
          if (drops_.tick(perSecond_)) {
            KeyedRng& q = drops_.rng();
            float a = drop(q);
            click_.hit(0.4f * a);
            modeEnv_[q.next() & 3].hit(a);
          }
          float x = noise_.next();
          float y = filterA_.process(x * click_.next());
          for (int k = 0; k < 4; ++k) y += 3.0f * modes_[k].process(x * modeEnv_[k].next());
          out[i] = gain_.next() * y;
        }
        break;
      case RainSurface::Leaves:
        for (int i = 0; i < n; ++i) {
          if (drops_.tick(perSecond_)) {
            KeyedRng& q = drops_.rng();
            float a = drop(q);
            if (q.next() & 1) click_.hit(0.5f * a);
            else clickB_.hit(0.5f * a);
          }
          float x = noise_.next();
          out[i] = gain_.next() * (filterA_.process(x * click_.next()) + filterB_.process(x * clickB_.next()));
        }
        break;
      case RainSurface::Soil:
        for (int i = 0; i < n; ++i) {
          if (drops_.tick(perSecond_)) {
            float a = drop(drops_.rng());
            click_.hit(0.35f * a);
            modeEnv_[0].hit(0.35f * a);
          }
          float x = noise_.next();
          float y = filterA_.process(x * click_.next()) + 0.3f * modes_[0].process(x * modeEnv_[0].next());
          out[i] = gain_.next() * y;
        }
        break;
    }
  }

 private:
  // Drop size spread: many small drops, a few big ones.
  static float drop(KeyedRng& q) {
    float u = q.uniform();
    return 0.25f + 0.75f * u * u;
  }
  // Measured rms per sqrt(drop/s) at gain 1, per surface (for loudness()).
  static constexpr float kLoud[5] = {0.0052f, 0.0048f, 0.0046f, 0.0028f, 0.0027f};

  RainSurface surface_;
  Noise noise_;
  PoissonClock drops_;
  GrainEnvelope click_, clickB_, modeEnv_[4];
  Biquad filterA_, filterB_;
  Resonator modes_[4];
  BubblePool<12> bubbles_;
  CtlSmoother rate_;
  Ramp gain_;
  float target_ = 0, perSecond_ = 0, loud_ = 0.05f;
};

/// Distant rain: pinkish noise, soft-topped, brighter and louder with intensity,
/// slowly breathing so it never sounds like a static hiss.
class RainBed final : public ContinuousVoice<RainBed> {
 public:
  explicit RainBed(std::uint64_t key) : pink_(combineKey(key, 1)), drift_(combineKey(key, 2), 1.5f) {
    intensity_.setTime(0.6f);
    hp_.highpass(150.0f, 0.7f);
  }
  void setParams(const SynthParams& p) { target_ = sane(p.v[0], 0.0f, 1.0f); }
  float loudness() const override { return loud_; }

  void control() {
    float k = intensity_.step(target_);
    if (--retune_ <= 0) {  // redesign only when the intensity really moved
      retune_ = 16;
      if (std::fabs(k - lastK_) > 0.002f) {
        lp_.lowpass(2200.0f + 4000.0f * k, 0.6f);
        lastK_ = k;
      }
    }
    float lev = 0.5f * std::pow(k, 0.8f) * (1.0f + 0.12f * drift_.step());
    gain_.to(lev);
    loud_ = 0.2f * lev;
  }
  void samples(float* out, int n) {
    for (int i = 0; i < n; ++i) out[i] = gain_.next() * lp_.process(hp_.process(pink_.next()));
  }

 private:
  Pink pink_;
  Drift drift_;
  CtlSmoother intensity_;
  Biquad hp_, lp_;
  Ramp gain_;
  float target_ = 0, lastK_ = -1, loud_ = 0.05f;
  int retune_ = 0;
};

}  // namespace

std::unique_ptr<Voice> makeRain(RainSurface surface, std::uint64_t key) {
  return std::make_unique<Rain>(surface, key);
}
std::unique_ptr<Voice> makeRainBed(std::uint64_t key) { return std::make_unique<RainBed>(key); }

}  // namespace loam::audio
