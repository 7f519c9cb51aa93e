// Fire: the three dominant components of flame sound (docs/AUDIO.md):
//  lapping   low turbulent noise (~90-400 Hz) in three independently breathing
//            channels; a bigger fire wakes more of them, so it is wider and steadier;
//  crackling sparse sharp clicks (keyed Poisson timing, heavy-tailed sizes, sometimes
//            in small bursts) ringing two short keyed resonances; rate grows with cells;
//  hissing   soft high noise with slow swells.
// Level follows sqrt(cells) with a soft knee, times intensity. makeHiss is the steam
// of a fire put out: band-passed high noise, fast attack, sputtering exponential decay.
#include <algorithm>
#include "audio/env_common.h"
#include "audio/models.h"

namespace loam::audio {
namespace {
using namespace env;

class Fire final : public ContinuousVoice<Fire> {
 public:
  explicit Fire(std::uint64_t key)
      : noise_{Noise(combineKey(key, 1)), Noise(combineKey(key, 2)), Noise(combineKey(key, 3))},
        hissNoise_(combineKey(key, 4)),
        lap_{Drift(combineKey(key, 5), 0.45f), Drift(combineKey(key, 6), 0.6f), Drift(combineKey(key, 7), 0.8f)},
        hissDrift_(combineKey(key, 8), 0.9f),
        crackles_(combineKey(key, 9)) {
    KeyedRng r(combineKey(key, 10));
    for (int k = 0; k < 3; ++k) {
      lapLp_[k].lowpass(r.range(260.0f, 420.0f), 0.7f);
      lapHp_[k].setCutoff(r.range(80.0f, 110.0f));
    }
    crackA_.bandpass(r.range(1600.0f, 2400.0f), 3.0f);
    crackB_.bandpass(r.range(3200.0f, 4600.0f), 4.0f);
    crackHp_.setCutoff(900.0f);
    click_.setDecay(0.00022f);
    hissHp_.highpass(r.range(3200.0f, 4000.0f), 0.7f);
    hissLp_.setCutoff(9000.0f);
    size_.setTime(0.4f);
    intensity_.setTime(0.4f);
  }

  void setParams(const SynthParams& p) {
    targetCells_ = sane(p.v[0], 0.0f, 1.0e6f);
    targetIntensity_ = sane(p.v[1], 0.0f, 1.0f);
  }
  float loudness() const override { return loud_; }

  void control() {
    // Smoothed in the size domain (~sqrt(cells), soft knee past ~100), so a fire that
    // dies fades out in about a second rather than trailing a long linear count.
    float rootTarget = std::sqrt(targetCells_);
    float size = size_.step(rootTarget / (1.0f + rootTarget * 0.1f));
    float in = intensity_.step(targetIntensity_);
    float rootN = size / std::max(1.0f - 0.1f * size, 1e-3f);
    float n = rootN * rootN;
    float heat = in > 0 ? 0.3f + 0.7f * in : 0.0f;
    float s = size * heat;
    for (int k = 0; k < 3; ++k) {
      float m = 0.5f + 0.5f * lap_[k].step();
      float wake = k == 0 ? 1.0f : smoothstep(2.0f * k, 6.0f * k + 4.0f, n);  // more tongues of flame
      lapGain_[k].to(0.38f * s * wake * (0.25f + 1.1f * m * m));
    }
    crackleRate_ = std::min(4.0f * std::pow(n, 0.8f) * heat, 600.0f);
    crackleGain_.to(0.64f * (0.4f + 0.6f * in) * smoothstep(0.0f, 0.3f, n));
    hissGain_.to(0.012f * s * (0.3f + in) * (1.0f + 0.6f * hissDrift_.step()));
    loud_ = 0.011f * s + 0.004f * std::sqrt(crackleRate_) * (0.4f + 0.6f * in);
  }

  void samples(float* out, int n) {
    for (int i = 0; i < n; ++i) {
      float lap = 0;
      for (int k = 0; k < 3; ++k) lap += lapGain_[k].next() * lapHp_[k].highpass(lapLp_[k].process(noise_[k].next()));
      // Crackles: Poisson onsets, a quarter of them start a short burst of pops.
      bool pop = crackles_.tick(crackleRate_);
      if (burst_ > 0 && --burstWait_ <= 0) {
        pop = true;
        --burst_;
        burstWait_ = 1 + static_cast<int>(crackles_.rng().range(0.003f, 0.025f) * kSampleRate);
      }
      if (pop) {
        KeyedRng& q = crackles_.rng();
        float u = q.uniform();
        click_.hit(0.1f + 0.9f * u * u * u);
        if (burst_ == 0 && q.uniform() < 0.25f) {
          burst_ = 1 + static_cast<int>(q.next() & 3);
          burstWait_ = 1 + static_cast<int>(q.range(0.003f, 0.02f) * kSampleRate);
        }
      }
      float c = hissNoise_.next();
      float x = c * click_.next();
      float crackle = crackHp_.highpass(x) + 1.5f * crackA_.process(x) + 1.2f * crackB_.process(x);
      float hiss = hissLp_.lowpass(hissHp_.process(c));
      out[i] = lap + crackleGain_.next() * crackle + hissGain_.next() * hiss;
    }
  }

 private:
  Noise noise_[3], hissNoise_;
  Drift lap_[3], hissDrift_;
  PoissonClock crackles_;
  GrainEnvelope click_;
  Biquad lapLp_[3], crackA_, crackB_, hissHp_;
  OnePole lapHp_[3], crackHp_, hissLp_;
  Ramp lapGain_[3], crackleGain_, hissGain_;
  CtlSmoother size_, intensity_;
  float targetCells_ = 0, targetIntensity_ = 0, crackleRate_ = 0, loud_ = 0.1f;
  int burst_ = 0, burstWait_ = 0;
};

/// Steam hiss: strength 0..1 (more: longer, louder). Ends at -80 dB (<= ~2 s).
class Hiss final : public Voice {
 public:
  Hiss(float strength, std::uint64_t key) : noise_(combineKey(key, 1)), sputter_(combineKey(key, 2), 0.02f) {
    KeyedRng r(combineKey(key, 3));
    float s = sane(strength, 0.05f, 2.0f);
    float t60 = std::min(0.5f + 0.7f * s, 1.4f) * r.range(0.85f, 1.1f);
    decay_ = std::exp(-6.907755f / (t60 * kSampleRate));
    attackStep_ = 1.0f / (0.015f * kSampleRate);
    level_ = 0.5f * std::sqrt(std::min(s, 1.0f));
    bp_.bandpass(r.range(3800.0f, 5200.0f), 0.8f);
    hp_.highpass(1800.0f, 0.7f);
    maxFrames_ = static_cast<int>(2.5f * kSampleRate);
  }

  bool render(float* out, int frames, const SynthParams&) override {
    renderTicked(*this, out, frames, untilTick_);
    return alive();
  }
  void control() {
    // Sputter: fast random amplitude flicker, fading as the steam settles.
    gain_.to(alive() ? level_ * (1.0f + sputter_.step() * env_) : 0.0f);
  }
  void samples(float* out, int n) {
    for (int j = 0; j < n; ++j) {
      attack_ = std::min(1.0f, attack_ + attackStep_);
      env_ *= decay_;
      out[j] = alive() ? gain_.next() * attack_ * env_ * hp_.process(bp_.process(noise_.next())) : 0.0f;
      ++t_;
    }
  }
  bool skip(int frames, const SynthParams& /*params*/) override {
    env_ *= std::pow(decay_, static_cast<float>(frames));
    attack_ = std::min(1.0f, attack_ + attackStep_ * frames);
    t_ += frames;
    return alive();
  }
  float loudness() const override { return 0.1f * level_ * env_ * 3.0f; }

 private:
  bool alive() const { return env_ > 1e-4f && t_ < maxFrames_; }
  Noise noise_;
  Drift sputter_;
  Biquad bp_, hp_;
  Ramp gain_;
  float decay_ = 0, env_ = 1.0f, attack_ = 0, attackStep_ = 0, level_ = 0;
  int t_ = 0, maxFrames_ = 0, untilTick_ = 0;
};

}  // namespace

std::unique_ptr<Voice> makeFire(std::uint64_t key) { return std::make_unique<Fire>(key); }
std::unique_ptr<Voice> makeHiss(float strength, std::uint64_t key) {
  return std::make_unique<Hiss>(strength, key);
}

}  // namespace loam::audio
