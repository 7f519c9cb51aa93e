// Private building blocks for the environment models (wind, rain, fire, water,
// creatures). Header-only; nothing here allocates, locks or reads a clock, so every
// piece is safe on the audio thread and repeatable from its key.
//
// Models run two rates: a control tick every kControlFrames samples (filter
// redesigns, slow random modulation, parameter smoothing) and the per-sample loop,
// where gains move by linear ramps across a control tick so nothing zips or clicks.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include "audio/dsp.h"
#include "audio/voice.h"

namespace loam::audio::env {

inline constexpr int kControlFrames = 32;  ///< samples per control tick (0.67 ms)
inline constexpr float kControlRate = static_cast<float>(kSampleRate) / kControlFrames;
inline constexpr float kDt = 1.0f / kSampleRate;

inline float clamp01(float x) { return x < 0 ? 0 : (x > 1 ? 1 : x); }
inline float smoothstep(float lo, float hi, float x) {
  float t = clamp01((x - lo) / (hi - lo));
  return t * t * (3 - 2 * t);
}
/// Finite, else 0: parameters come from another thread's world reading.
inline float sane(float x, float lo, float hi) {
  if (!(x == x)) return lo;  // NaN
  return x < lo ? lo : (x > hi ? hi : x);
}

/// Cheap white noise in [-1, 1): a 32-bit LCG seeded from a key. Cheaper than
/// KeyedRng per sample; its low-bit weakness does not matter after the >> 9.
class Noise {
 public:
  explicit Noise(std::uint64_t key) : s_(static_cast<std::uint32_t>(mixKey(key) >> 17) | 1u) {}
  float next() {
    s_ = s_ * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<std::int32_t>(s_)) * (1.0f / 2147483648.0f);
  }

 private:
  std::uint32_t s_;
};

/// Pinkish noise (Kellet's economy filter: three poles, within ~0.5 dB of -3 dB/oct
/// above ~100 Hz). Output rms about 0.6 of white's.
class Pink {
 public:
  explicit Pink(std::uint64_t key) : n_(key) {}
  float next() {
    float w = n_.next();
    b0_ = 0.99765f * b0_ + w * 0.0990460f;
    b1_ = 0.96300f * b1_ + w * 0.2965164f;
    b2_ = 0.57000f * b2_ + w * 1.0526913f;
    return (b0_ + b1_ + b2_ + w * 0.1848f) * 0.25f;
  }

 private:
  Noise n_;
  float b0_ = 0, b1_ = 0, b2_ = 0;
};

/// sin(2 pi phase) for phase in [0, 1): parabola with one correction step (error
/// below 0.1 %), a few flops instead of a libm call per sample.
inline float sin01(float phase) {
  float x = phase * 2.0f - 1.0f;  // sin(2 pi p) = -sin(pi x)
  float y = 4.0f * x * (1.0f - std::fabs(x));
  y = 0.225f * (y * std::fabs(y) - y) + y;
  return -y;
}

/// Wraps a phase accumulator into [0, 1).
inline float wrap01(float p) { return p - std::floor(p); }

/// A virtual continuous voice: runs the control ticks of frames samples without the
/// samples, so smoothed levels (and loudness()) follow params as if it had played.
/// untilTick counts down to the model's next control() (as in its render loop).
template <class Model>
void skipTicked(Model& m, int frames, int& untilTick) {
  while (frames > 0) {
    if (untilTick <= 0) {
      m.control();
      untilTick = kControlFrames;
    }
    int n = untilTick < frames ? untilTick : frames;
    untilTick -= n;
    frames -= n;
  }
}

/// Smooths a parameter at the control rate (time constant in seconds).
class CtlSmoother {
 public:
  void setTime(float seconds) { a_ = 1.0f - std::exp(-1.0f / (seconds * kControlRate)); }
  void jump(float v) { value_ = v; }
  float step(float target) { return value_ += a_ * (target - value_); }
  float value() const { return value_; }

 private:
  float a_ = 1.0f, value_ = 0.0f;
};

/// Linear per-sample ramp across one control tick: no zipper noise on gains.
class Ramp {
 public:
  void to(float target) { step_ = (target - value_) * (1.0f / kControlFrames); }
  float next() { return value_ += step_; }
  float value() const { return value_; }
  void jump(float v) { value_ = v; step_ = 0; }

 private:
  float value_ = 0.0f, step_ = 0.0f;
};

/// Slow random modulation in about [-1, 1]: a new random target every `period`
/// seconds (jittered), approached smoothly. Stepped at the control rate.
class Drift {
 public:
  Drift(std::uint64_t key, float periodSeconds) : rng_(key) { setPeriod(periodSeconds); }
  void setPeriod(float seconds) {
    period_ = std::max(seconds, 0.005f);
    a_ = 1.0f - std::exp(-1.0f / (0.5f * period_ * kControlRate));
  }
  float step() {
    if (--countdown_ <= 0) {
      target_ = rng_.bipolar();
      countdown_ = 1 + static_cast<int>(period_ * kControlRate * rng_.range(0.6f, 1.4f));
    }
    return value_ += a_ * (target_ - value_);
  }
  float value() const { return value_; }

 private:
  KeyedRng rng_;
  float period_ = 1.0f, a_ = 0.01f, value_ = 0.0f, target_ = 0.0f;
  int countdown_ = 0;
};

/// Poisson events at a (changing) rate: an exponential budget drawn per event is
/// spent by rate/sampleRate each sample, so rate changes need no rescheduling.
class PoissonClock {
 public:
  explicit PoissonClock(std::uint64_t key) : rng_(key) { left_ = draw(); }
  /// One sample at eventsPerSecond; true when an event falls in it.
  bool tick(float eventsPerSecond) {
    left_ -= eventsPerSecond * kDt;
    if (left_ > 0) return false;
    left_ += draw();
    return true;
  }
  KeyedRng& rng() { return rng_; }

 private:
  float draw() { return -std::log(1.0f - rng_.uniform()); }
  KeyedRng rng_;
  float left_ = 1.0f;
};

/// Keeps filter states out of subnormal floats (which cost ~100x per operation on
/// x86 and can stick at the smallest value in a decaying one-pole): a +-1e-9
/// (-180 dB) Nyquist-rate dither to add where a filter's input can fall silent.
class DenormalGuard {
 public:
  float next() { return v_ = -v_; }

 private:
  float v_ = 1e-9f;
};

/// A decaying envelope that impulses add into: noise times this is a train of grains
/// (clicks, patter, rustle) sharing one filter, cheap at any density. It floors at
/// 1e-9 (-180 dB) so the filters after it never decay into subnormals.
class GrainEnvelope {
 public:
  void setDecay(float timeConstantSeconds) { k_ = std::exp(-1.0f / (timeConstantSeconds * kSampleRate)); }
  void hit(float amp) { v_ += amp; }
  float next() { return v_ = std::max(v_ * k_, 1e-9f); }
  float value() const { return v_; }

 private:
  float k_ = 0.99f, v_ = 0.0f;
};

/// A pool of gas bubbles (Minnaert resonances, after van den Doel): each a sine whose
/// pitch rises as the bubble rises to the surface, f(t) = f0 (1 + rise (1 - e^-dt)),
/// while it decays at rate d. Fixed size; a new bubble with the pool full replaces
/// the quietest. Arrays and a branch-free update let the compiler vectorise the
/// per-bubble work; the sum runs in a fixed order, so results stay repeatable.
template <int N>
class BubblePool {
  static_assert(N % 4 == 0, "summed in four fixed lanes");

 public:
  /// f0 Hz, amp linear, rise: total relative pitch rise (0.2..1.5).
  void spawn(float f0, float amp, float rise) {
    float d = 0.043f * f0 + 0.0014f * f0 * std::sqrt(f0);  // damping, 1/s
    int slot = 0;
    for (int k = 1; k < N; ++k) {
      if (amp_[k] < amp_[slot]) slot = k;
    }
    phase_[slot] = 0;
    inc_[slot] = f0 * kDt;
    dinc_[slot] = f0 * rise * d * kDt * kDt;
    amp_[slot] = amp;
    decay_[slot] = std::exp(-d * kDt);
    // Frames until this bubble is ~-65 dB down: after that the pool idles for free.
    int life = 2 + static_cast<int>(std::log(std::max(amp, kCut) / kCut) / d * kSampleRate);
    liveFor_ = std::max(liveFor_, life);
  }
  float next() {
    if (liveFor_ <= 0) return 0.0f;
    --liveFor_;
    float y[N];
    for (int k = 0; k < N; ++k) {
      float p = phase_[k];
      float x = p * 2.0f - 1.0f;  // sin01, inlined for the vectoriser
      float s = 4.0f * x * (1.0f - std::fabs(x));
      s = 0.225f * (s * std::fabs(s) - s) + s;
      y[k] = -amp_[k] * s;
      p += inc_[k];
      phase_[k] = p - static_cast<float>(static_cast<int>(p));  // p >= 0: wraps to [0, 1)
      // + - 1e-30 flushes anything below ~6e-38 to exactly 0: no subnormals, no branch.
      amp_[k] = (amp_[k] * decay_[k] + 1e-30f) - 1e-30f;
      inc_[k] += dinc_[k];
      dinc_[k] *= decay_[k];  // the rise settles as the bubble dies: pitch stays bounded
    }
    float lane[4] = {0, 0, 0, 0};
    for (int k = 0; k < N; k += 4) {
      lane[0] += y[k];
      lane[1] += y[k + 1];
      lane[2] += y[k + 2];
      lane[3] += y[k + 3];
    }
    return (lane[0] + lane[1]) + (lane[2] + lane[3]);
  }
  bool quiet() const { return liveFor_ <= 0; }

 private:
  static constexpr float kCut = 2e-4f;
  float phase_[N]{}, inc_[N]{}, dinc_[N]{}, amp_[N]{}, decay_[N]{};
  int liveFor_ = 0;
};

/// Continuous models share this: control ticks carried across blocks so the result
/// does not depend on how frames are split into render() calls.
template <class Model>
void renderTicked(Model& m, float* out, int frames, int& untilTick) {
  int i = 0;
  while (i < frames) {
    if (untilTick <= 0) {
      m.control();
      untilTick = kControlFrames;
    }
    int n = std::min(untilTick, frames - i);
    m.samples(out + i, n);
    untilTick -= n;
    i += n;
  }
}

/// A continuous model as a Voice: every render() or skip() first takes the
/// parameters (Model::setParams), then runs the control ticks carried across blocks
/// (renderTicked with samples, skipTicked without), so a voice that was virtual
/// sounds as if it had played all along. Model provides setParams(const
/// SynthParams&), control() and samples(float*, int).
template <class Model>
class ContinuousVoice : public Voice {
 public:
  bool render(float* out, int frames, const SynthParams& p) override {
    self().setParams(p);
    renderTicked(self(), out, frames, untilTick_);
    return true;
  }
  bool skip(int frames, const SynthParams& p) override {
    self().setParams(p);
    skipTicked(self(), frames, untilTick_);
    return true;
  }

 private:
  Model& self() { return static_cast<Model&>(*this); }
  int untilTick_ = 0;  ///< samples to the next control tick
};

}  // namespace loam::audio::env
