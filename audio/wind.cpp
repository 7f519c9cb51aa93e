// Wind: what moving air sounds like where it meets something. Audible wind is
// turbulence at obstacles, so each cover class is its own model (docs/AUDIO.md):
//  Open   broad low roar: noise through a low-pass whose cutoff rises with speed,
//         plus a howl band in gales; slow turbulence swings level and cutoff.
//  Grass  soft low rustle: many tiny blade clicks (noise grains, ~5 ms) over a faint
//         floor, band ~1-3 kHz, density from speed.
//  Leaves brighter, busier rustle: denser, shorter grains in ~2-8 kHz with flutter.
//  Edge   whistle: a narrow resonance whose pitch follows speed (Strouhal), emerging
//         above ~4 m/s, over a quieter roar.
#include <algorithm>
#include "audio/env_common.h"
#include "audio/models.h"

namespace loam::audio {
namespace {
using namespace env;

// Layer gains, set by measurement: about 0.1 rms at 12 m/s, peaks well below 1.
constexpr float kGrass = 0.75f, kLeaves = 0.33f;

/// Level against effective speed (m/s): ~v^1.5 in a breeze (a 3 m/s breeze is soft
/// but there), saturating in gales; strictly increasing, so stronger wind is always
/// louder.
float windLevel(float e) {
  float x = e * (1.0f / 8.0f);
  x *= std::sqrt(x);
  return x / (1.0f + 0.4f * x);
}

class Wind final : public ContinuousVoice<Wind> {
 public:
  Wind(WindCover cover, std::uint64_t key)
      : cover_(cover),
        noise_(combineKey(key, 1)),
        noise2_(combineKey(key, 2)),
        turb_(combineKey(key, 3), 0.9f),
        turb2_(combineKey(key, 4), 0.35f),
        flutter_(combineKey(key, 5), 0.07f),
        grains_(combineKey(key, 6)) {
    KeyedRng r(combineKey(key, 7));
    tone_ = r.range(0.88f, 1.12f);  // each patch of grass or tree sounds a bit different
    speed_.setTime(0.35f);
    gust_.setTime(0.25f);
    amount_.setTime(0.5f);
    hp_.highpass(cover == WindCover::Leaves ? 1800.0f : 40.0f, 0.7f);
    lp_.lowpass(cover == WindCover::Grass ? 3200.0f : 300.0f, 0.7f);
    env_.setDecay(cover == WindCover::Leaves ? 0.0018f : 0.005f);
    low_.setCutoff(260.0f);
  }

  void setParams(const SynthParams& p) {
    targetSpeed_ = sane(p.v[0], 0.0f, 60.0f);
    targetGust_ = sane(p.v[1], 0.0f, 1.0f);
    targetAmount_ = sane(p.v[2], 0.0f, 1.0f);
  }
  float loudness() const override { return loud_; }

  void control() {
    float s = speed_.step(targetSpeed_);
    float g = gust_.step(targetGust_);
    float c = amount_.step(targetAmount_);
    if (--retune_ <= 0) {  // turbulence quickens with speed; exp() only now and then
      turb_.setPeriod(std::clamp(1.3f - 0.06f * s, 0.25f, 1.3f));
      retune_ = 48;
    }
    float t = turb_.step(), t2 = turb2_.step();
    float e = s * (1.0f + 0.6f * g) * (1.0f + 0.18f * t);  // effective speed
    float lev = windLevel(e);
    float sc = std::sqrt(c);
    float gainA = 0, gainB = 0, gainC = 0;
    switch (cover_) {
      case WindCover::Open: {
        lp_.lowpass(tone_ * std::min(110.0f + 20.0f * e, 650.0f), 0.8f);
        bp_.bandpass(tone_ * std::min(260.0f + 32.0f * e, 1100.0f), 2.5f);
        gainA = 1.6f * lev;
        gainB = 0.9f * lev * smoothstep(7.0f, 16.0f, e);
        loud_ = 0.105f * lev;
        break;
      }
      case WindCover::Grass: {
        bp_.bandpass(tone_ * (1500.0f + 35.0f * e), 0.8f);
        rate_ = c * (30.0f + 90.0f * e) * (1.0f + g);
        floor_ = 0.012f;
        float dense = 1.0f / (1.0f + rate_ * 0.005f * 0.45f);  // mean envelope: rate * decay * mean hit
        gainA = kGrass * lev * sc * dense;
        gainB = 0.15f * kGrass * lev * sc * dense;  // the low body of the blades
        loud_ = 0.08f * lev * sc;
        break;
      }
      case WindCover::Leaves: {
        bp_.bandpass(tone_ * (3800.0f + 60.0f * e), 0.7f);
        rate_ = c * (120.0f + 380.0f * e) * (1.0f + g);
        floor_ = 0.01f;
        float dense = 1.0f / (1.0f + rate_ * 0.0018f * 0.47f);
        float f = flutter_.step();
        gainA = kLeaves * lev * sc * dense * (1.0f + 0.55f * f * smoothstep(1.0f, 6.0f, e));
        loud_ = 0.075f * lev * sc;
        break;
      }
      case WindCover::Edge: {
        lp_.lowpass(tone_ * std::min(110.0f + 20.0f * e, 650.0f), 0.8f);
        float f = tone_ * (220.0f + 75.0f * e) * (1.0f + 0.04f * t2);
        bp_.bandpass(f, 45.0f);
        bp2_.bandpass(2.02f * f, 60.0f);
        float swell = 0.5f + 0.5f * t2;  // whistles come and go with the eddies
        gainA = 0.8f * lev;
        gainB = 4.0f * sc * lev * smoothstep(4.0f, 10.0f, e) * (0.3f + 0.7f * swell * swell);
        gainC = 0.35f * gainB;
        loud_ = 0.05f * lev + 0.05f * sc * lev * smoothstep(4.0f, 10.0f, e);
        break;
      }
    }
    gA_.to(gainA);
    gB_.to(gainB);
    gC_.to(gainC);
  }

  void samples(float* out, int n) {
    switch (cover_) {
      case WindCover::Open:
        for (int i = 0; i < n; ++i) {
          float x = noise_.next();
          out[i] = gA_.next() * hp_.process(lp_.process(x)) + gB_.next() * bp_.process(x);
        }
        break;
      case WindCover::Grass:
        for (int i = 0; i < n; ++i) {
          if (grains_.tick(rate_)) {
            float u = grains_.rng().uniform();
            env_.hit(0.15f + 0.85f * u * u);
          }
          float x = noise_.next();
          float rustle = lp_.process(bp_.process(x * (env_.next() + floor_)));
          out[i] = gA_.next() * rustle + gB_.next() * low_.lowpass(noise2_.next()) * (env_.value() + floor_);
        }
        break;
      case WindCover::Leaves:
        for (int i = 0; i < n; ++i) {
          if (grains_.tick(rate_)) {
            float u = grains_.rng().uniform();
            env_.hit(0.2f + 0.8f * u * u);
          }
          float x = noise_.next();
          out[i] = gA_.next() * hp_.process(bp_.process(x * (env_.next() + floor_)));
        }
        break;
      case WindCover::Edge:
        for (int i = 0; i < n; ++i) {
          float x = noise_.next(), x2 = noise2_.next();
          out[i] = gA_.next() * hp_.process(lp_.process(x)) + gB_.next() * bp_.process(x2) +
                   gC_.next() * bp2_.process(x2);
        }
        break;
    }
  }

 private:
  WindCover cover_;
  Noise noise_, noise2_;
  Drift turb_, turb2_, flutter_;
  PoissonClock grains_;
  GrainEnvelope env_;
  CtlSmoother speed_, gust_, amount_;
  Biquad lp_, hp_, bp_, bp2_;
  OnePole low_;
  Ramp gA_, gB_, gC_;
  float targetSpeed_ = 0, targetGust_ = 0, targetAmount_ = 0;
  float tone_ = 1, rate_ = 0, floor_ = 0, loud_ = 0.05f;
  int retune_ = 0;
};

}  // namespace

std::unique_ptr<Voice> makeWind(WindCover cover, std::uint64_t key) {
  return std::make_unique<Wind>(cover, key);
}

}  // namespace loam::audio
