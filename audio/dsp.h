// Small DSP building blocks shared by every synthesis model. Header-only, no
// allocation, no locks: safe on the audio thread. Plain float maths is fine here:
// audio is not simulation state (DESIGN.md, determinism contract); renders are still
// repeatable because every random draw is keyed (KeyedRng) and nothing reads clocks.
#pragma once
#include <cmath>
#include <cstdint>
#include <numbers>

namespace loam::audio {

inline constexpr int kSampleRate = 48000;   ///< Hz, everywhere
inline constexpr int kBlockFrames = 256;    ///< frames per audio block (5.33 ms)
inline constexpr float kPi = std::numbers::pi_v<float>;

/// Mixes a 64-bit key (splitmix64 finaliser): stable ids -> seeds.
constexpr std::uint64_t mixKey(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
/// Combines keys (emitter id, event index, purpose) into one seed.
constexpr std::uint64_t combineKey(std::uint64_t a, std::uint64_t b) { return mixKey(a ^ mixKey(b)); }

/// A keyed pseudo-random stream (xorshift64*): the same key gives the same draws.
class KeyedRng {
 public:
  explicit KeyedRng(std::uint64_t key) : s_(mixKey(key) | 1u) {}
  std::uint64_t next() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 0x2545f4914f6cdd1dull;
  }
  /// Uniform in [0, 1).
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }
  /// Uniform in [-1, 1): white noise.
  float bipolar() { return uniform() * 2.0f - 1.0f; }
  /// Uniform in [lo, hi).
  float range(float lo, float hi) { return lo + (hi - lo) * uniform(); }

 private:
  std::uint64_t s_;
};

/// One-pole low-pass (and, via highpass(), its complement). Cheap smoothing and tilt.
class OnePole {
 public:
  void setCutoff(float hz) { a_ = 1.0f - std::exp(-2.0f * kPi * hz / kSampleRate); }
  float lowpass(float x) { return z_ += a_ * (x - z_); }
  float highpass(float x) { return x - lowpass(x); }
  void reset(float v = 0) { z_ = v; }
  float state() const { return z_; }

 private:
  float a_ = 1.0f, z_ = 0.0f;
};

/// Parameter smoother: moves toward a target with a time constant, per sample.
class Smoother {
 public:
  void setTime(float seconds) { a_ = seconds <= 0 ? 1.0f : 1.0f - std::exp(-1.0f / (seconds * kSampleRate)); }
  void setTarget(float t) { target_ = t; }
  void jump(float v) { value_ = target_ = v; }
  float next() { return value_ += a_ * (target_ - value_); }
  float value() const { return value_; }

 private:
  float a_ = 1.0f, value_ = 0.0f, target_ = 0.0f;
};

/// RBJ biquad (transposed direct form II).
class Biquad {
 public:
  void lowpass(float hz, float q) { design(hz, q, 0); }
  void highpass(float hz, float q) { design(hz, q, 1); }
  /// Constant 0 dB peak gain band-pass.
  void bandpass(float hz, float q) { design(hz, q, 2); }
  float process(float x) {
    float y = b0_ * x + z1_;
    z1_ = b1_ * x - a1_ * y + z2_;
    z2_ = b2_ * x - a2_ * y;
    return y;
  }
  void reset() { z1_ = z2_ = 0; }

 private:
  void design(float hz, float q, int kind) {
    float f = hz < 10.0f ? 10.0f : (hz > 0.45f * kSampleRate ? 0.45f * kSampleRate : hz);
    float w = 2.0f * kPi * f / kSampleRate, c = std::cos(w), s = std::sin(w), alpha = s / (2.0f * q);
    float a0 = 1.0f + alpha;
    if (kind == 0) { b0_ = (1 - c) / 2; b1_ = 1 - c; b2_ = (1 - c) / 2; }
    else if (kind == 1) { b0_ = (1 + c) / 2; b1_ = -(1 + c); b2_ = (1 + c) / 2; }
    else { b0_ = alpha; b1_ = 0; b2_ = -alpha; }
    a1_ = -2 * c;
    a2_ = 1 - alpha;
    b0_ /= a0; b1_ /= a0; b2_ /= a0; a1_ /= a0; a2_ /= a0;
  }
  float b0_ = 1, b1_ = 0, b2_ = 0, a1_ = 0, a2_ = 0, z1_ = 0, z2_ = 0;
};

/// A two-pole resonator: one mode of a modal bank. Rings at hz and decays by 60 dB
/// in t60 seconds after an excitation.
class Resonator {
 public:
  void set(float hz, float t60, float gain) {
    float r = std::exp(-6.907755f / (t60 * kSampleRate));  // ln(1000) = 6.9078
    float w = 2.0f * kPi * hz / kSampleRate;
    a1_ = 2.0f * r * std::cos(w);
    a2_ = -r * r;
    g_ = gain * (1.0f - r);  // roughly equal peak level across decays
  }
  float process(float x) {
    float y = g_ * x + a1_ * y1_ + a2_ * y2_;
    y2_ = y1_;
    y1_ = y;
    return y;
  }
  /// True when the mode has died below about -120 dB.
  bool silent() const { return std::fabs(y1_) < 1e-6f && std::fabs(y2_) < 1e-6f; }
  void reset() { y1_ = y2_ = 0; }

 private:
  float a1_ = 0, a2_ = 0, g_ = 0, y1_ = 0, y2_ = 0;
};

/// Decibels to linear amplitude.
inline float dbToGain(float db) { return std::pow(10.0f, db / 20.0f); }

}  // namespace loam::audio
