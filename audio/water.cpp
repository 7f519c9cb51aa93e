// Moving water (docs/AUDIO.md):
//  Waterfall dense broadband roar: a wide low band (after the classic bp(200 Hz,
//            Q 0.3)) that sinks with fall height, a splash hiss on top and a low
//            thunder that grows with height; louder with flow and height.
//  Stream    babbling: many small Minnaert bubbles (~400-1600 Hz, rising chirps,
//            keyed Poisson) over a gurgle band near 1 kHz that wanders.
//  Pour      splashy pouring: splash grains, bubbles and a wet hiss, all from flow
//            (splashes harder from higher up, v[1]); ends once flow has stayed 0
//            for 0.5 s (render returns false).
#include <algorithm>
#include "audio/env_common.h"
#include "audio/models.h"

namespace loam::audio {
namespace {
using namespace env;

class Water final : public Voice {
 public:
  Water(WaterKind kind, std::uint64_t key)
      : kind_(kind),
        noise_(combineKey(key, 1)),
        noise2_(combineKey(key, 2)),
        drift_(combineKey(key, 3), 0.7f),
        drift2_(combineKey(key, 4), 0.25f),
        events_(combineKey(key, 5)) {
    KeyedRng r(combineKey(key, 6));
    tone_ = r.range(0.92f, 1.08f);
    flow_.setTime(kind == WaterKind::Pour ? 0.05f : 0.4f);
    height_.setTime(0.5f);
    switch (kind) {
      case WaterKind::Waterfall:
        hp_.highpass(40.0f, 0.7f);
        splashLp_.setCutoff(3500.0f);
        splashHp_.setCutoff(500.0f);
        thunder_.lowpass(tone_ * 70.0f, 0.9f);
        break;
      case WaterKind::Stream:
        lowBody_.setCutoff(400.0f);
        break;
      case WaterKind::Pour:
        band_.bandpass(tone_ * 1600.0f, 0.7f);
        band2_.bandpass(tone_ * 2600.0f, 0.9f);
        splash_.setDecay(0.004f);
        break;
    }
  }

  bool render(float* out, int frames, const SynthParams& p) override {
    setParams(p);
    if (ended_) {
      std::fill(out, out + frames, 0.0f);
      return false;
    }
    renderTicked(*this, out, frames, untilTick_);
    if (kind_ == WaterKind::Pour) {
      dryFrames_ = targetFlow_ > 1e-3f ? 0 : dryFrames_ + frames;
      if (dryFrames_ >= kSampleRate / 2 + kBlockFrames) ended_ = true;  // fade ran in the last block
    }
    return !ended_;
  }
  bool skip(int frames, const SynthParams& p) override {
    setParams(p);
    if (ended_) return false;
    skipTicked(*this, frames, untilTick_);
    if (kind_ != WaterKind::Pour) return true;
    dryFrames_ = targetFlow_ > 1e-3f ? 0 : dryFrames_ + frames;
    ended_ = dryFrames_ >= kSampleRate / 2 + kBlockFrames;
    return !ended_;
  }
  void setParams(const SynthParams& p) {
    targetFlow_ = sane(p.v[0], 0.0f, 1.0f);
    targetHeight_ = sane(p.v[1], 0.0f, 200.0f);
  }
  float loudness() const override { return loud_; }

  void control() {
    float f = flow_.step(targetFlow_);
    float h = height_.step(targetHeight_);
    float d = drift_.step(), d2 = drift2_.step();
    float level = std::sqrt(f);
    switch (kind_) {
      case WaterKind::Waterfall: {
        if (--retune_ <= 0) {
          retune_ = 16;
          if (std::fabs(h - lastH_) > 0.05f) {  // deeper as the fall gets higher
            float centre = 120.0f + 300.0f / (1.0f + h / 6.0f);
            band_.bandpass(tone_ * centre, 0.35f);
            bodyNorm_ = std::sqrt(300.0f / centre);  // a constant-Q band passes power ~ centre
            lastH_ = h;
          }
        }
        float tall = h / (h + 4.0f);
        float lev = 0.6f * level * (0.4f + 0.6f * tall) * (1.0f + 0.08f * d);
        gA_.to(2.5f * bodyNorm_ * lev);
        gB_.to(0.16f * lev);
        gC_.to(2.2f * lev * smoothstep(0.5f, 15.0f, h) * (0.7f + 0.3f * d2));
        loud_ = 0.22f * lev;
        break;
      }
      case WaterKind::Stream: {
        if (--retune_ <= 0) {
          retune_ = 8;
          band_.bandpass(tone_ * 1000.0f * (1.0f + 0.06f * d2), 3.0f);
        }
        rate_ = f * (60.0f + 240.0f * f);
        gA_.to(0.22f * level * (0.6f + 0.4f * d));  // gurgle
        gB_.to(0.24f * level);                      // bubbles
        gC_.to(0.06f * level);                      // body
        loud_ = 0.055f * f;
        break;
      }
      case WaterKind::Pour: {
        float fade = 1.0f - clamp01((dryFrames_ - kSampleRate * 0.4f) / (kSampleRate * 0.1f));
        rate_ = f * 180.0f;
        float drop = 0.7f + 0.3f * h / (h + 1.0f);  // water falling further splashes harder
        gA_.to(0.5f * fade * drop * (0.8f + 0.2f * d));
        gB_.to(0.09f * level * fade);
        gC_.to(0.5f * fade);
        loud_ = 0.08f * level;
        break;
      }
    }
  }

  void samples(float* out, int n) {
    switch (kind_) {
      case WaterKind::Waterfall:
        for (int i = 0; i < n; ++i) {
          float x = noise_.next(), x2 = noise2_.next();
          float body = hp_.process(band_.process(x));
          float splash = splashHp_.highpass(splashLp_.lowpass(x2));
          out[i] = gA_.next() * body + gB_.next() * splash + gC_.next() * thunder_.process(x);
        }
        break;
      case WaterKind::Stream:
        for (int i = 0; i < n; ++i) {
          if (events_.tick(rate_)) {
            KeyedRng& q = events_.rng();
            float r = q.range(2.0f, 8.0f);  // bubble radius, mm
            float u = q.uniform();
            bubbles_.spawn(tone_ * 3260.0f / r, 0.1f + 0.25f * u * u, q.range(0.5f, 1.5f));
          }
          float x = noise_.next();
          out[i] = gA_.next() * band_.process(x) + gB_.next() * bubbles_.next() + gC_.next() * lowBody_.lowpass(x);
        }
        break;
      case WaterKind::Pour:
        for (int i = 0; i < n; ++i) {
          if (events_.tick(rate_)) {
            KeyedRng& q = events_.rng();
            float u = q.uniform();
            splash_.hit(0.2f + 0.8f * u * u);
            if (q.uniform() < 0.45f) bubbles_.spawn(tone_ * q.range(600.0f, 2500.0f), 0.12f + 0.2f * u, q.range(0.4f, 1.2f));
          }
          float x = noise_.next();
          float splash = band_.process(x * splash_.next());
          out[i] = gA_.next() * splash + gB_.next() * band2_.process(noise2_.next()) + gC_.next() * bubbles_.next();
        }
        break;
    }
  }

 private:
  WaterKind kind_;
  Noise noise_, noise2_;
  Drift drift_, drift2_;
  PoissonClock events_;
  GrainEnvelope splash_;
  BubblePool<16> bubbles_;
  Biquad band_, band2_, hp_, thunder_;
  OnePole splashLp_, splashHp_, lowBody_;
  CtlSmoother flow_, height_;
  Ramp gA_, gB_, gC_;
  float targetFlow_ = 0, targetHeight_ = 0, tone_ = 1, bodyNorm_ = 1, rate_ = 0, lastH_ = -1, loud_ = 0.1f;
  int untilTick_ = 0, retune_ = 0, dryFrames_ = 0;
  bool ended_ = false;
};

}  // namespace

std::unique_ptr<Voice> makeWater(WaterKind kind, std::uint64_t key) { return std::make_unique<Water>(kind, key); }

}  // namespace loam::audio
