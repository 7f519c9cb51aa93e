// Fracture: stone, rock and gravel breaking, and glass shattering (models.h).
//
// A resonator bank is right for a knock and wrong for a break: a fracture is mostly
// broadband noise. So the model is
//  - cracks: very short white-noise impulses (sub-millisecond to 1.5 ms), the first
//    loudest, a few more at keyed times as the fracture runs;
//  - debris: gritty grains trickling after (PhISEM-style: random onsets at a rate that
//    decays exponentially feed a decaying energy gating broadband noise);
//  - a low thud underneath: one resonator at 60-120 Hz, lower for bigger breaks;
//  - ringing turned right down: a few modes of the material, barely excited; glass
//    keeps more of it, and its shards ring (short high resonators hit over time).
// Size (voxels) stretches the duration and raises the debris count. All randomness
// is drawn from KeyedRng(key). docs/AUDIO.md lists the parameters.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>

#include "audio/dsp.h"
#include "audio/models.h"

namespace loam::audio {
namespace {

constexpr float kFs = static_cast<float>(kSampleRate);
constexpr float kEndLevel = 3.2e-5f;  ///< -90 dBFS
constexpr int kMaxCracks = 8;
constexpr int kMaxShards = 16;
constexpr int kShardVoices = 6;

/// Sets a resonator so an impulse of area 1 rings at about `gain` (Resonator scales
/// its input by (1 - r); undo that and the 1/sin(w) resonance).
void setMode(Resonator& r, float hz, float t60, float gain) {
  float rr = std::exp(-6.907755f / (t60 * kFs));
  float w = 2.0f * kPi * hz / kFs;
  r.set(hz, t60, gain * std::sin(w) / (1.0f - rr));
}

struct RingDef {
  float baseHz;  ///< fundamental for a 20 cm piece
  std::array<float, 4> ratio, t60, gain;
  float level;   ///< how much of the ringing is left (stone: right down)
};
// Stone: its knock table's first modes, nearly silent. Glass keeps a little ring.
constexpr RingDef kStoneRing{900, {1, 1.59f, 2.27f, 3.03f}, {0.06f, 0.05f, 0.04f, 0.03f}, {1, 0.7f, 0.55f, 0.4f}, 0.03f};
constexpr RingDef kGlassRing{2200, {1, 2.32f, 4.25f, 6.63f}, {0.35f, 0.25f, 0.2f, 0.15f}, {1, 0.6f, 0.45f, 0.3f}, 0.12f};

class FractureVoice final : public Voice {
 public:
  explicit FractureVoice(const FractureSpec& s) : rng_(combineKey(s.key, 0xf4ac)) {
    glass_ = s.material == sim::SoundClass::Glass;
    silent_ = s.material == sim::SoundClass::None || s.material == sim::SoundClass::Count;
    float v = static_cast<float>(std::clamp<std::uint32_t>(s.voxels, 1, 1000000));
    float lv = std::log2(1.0f + v);
    float dur = (0.05f + 0.06f * lv) * rng_.range(0.85f, 1.15f);  // s: how long the fracture runs

    // Cracks: the first at once and loudest, the rest spread over the first half.
    crackCount_ = std::min(kMaxCracks, 2 + static_cast<int>(lv * 0.5f));
    float t = 0;
    for (int i = 0; i < crackCount_; ++i) {
      crackAt_[static_cast<std::size_t>(i)] = static_cast<long>(t * kFs);
      crackAmp_[static_cast<std::size_t>(i)] = i == 0 ? 0.6f : rng_.range(0.15f, 0.4f);
      t += rng_.range(0.2f, 1.0f) * dur / static_cast<float>(crackCount_);
    }
    crackLen_ = std::max(8, static_cast<int>(rng_.range(0.0004f, 0.0015f) * kFs));
    long lastExcite = crackAt_[static_cast<std::size_t>(crackCount_ - 1)] + crackLen_;

    // Debris: starts just after the first crack; rate decays over half the duration.
    debrisStart_ = static_cast<long>(rng_.range(0.005f, 0.02f) * kFs);
    debrisRate_ = std::min(2500.0f, 150.0f + 40.0f * std::sqrt(v)) / kFs;  // per sample
    debrisDecay_ = std::exp(-1.0f / (0.5f * dur * kFs));
    grainDecay_ = std::exp(-6.907755f / ((glass_ ? 0.001f : 0.0015f) * kFs));
    debrisHp_.setCutoff(glass_ ? 1500.0f : 300.0f);
    debrisLp_.setCutoff(glass_ ? 14000.0f : 9000.0f);
    lastExcite = std::max(lastExcite, debrisStart_ + static_cast<long>(3.0f * dur * kFs));

    // Thud: lower and longer for bigger breaks.
    float thudHz = std::clamp(125.0f - 8.0f * lv, 60.0f, 120.0f) * rng_.range(0.92f, 1.08f);
    float thudT60 = std::clamp(0.06f + 0.015f * lv, 0.06f, 0.2f);
    setMode(thud_, thudHz, thudT60, glass_ ? 0.04f : 0.12f);
    thudPulse_ = static_cast<int>(0.004f * kFs);
    float tail = thudT60;

    // Ring: the material's first modes at the size of the pieces (a few voxels
    // across), turned right down.
    const RingDef& ring = glass_ ? kGlassRing : kStoneRing;
    float size = std::clamp(0.03f * std::cbrt(v), 0.05f, 1.0f);
    float f0 = ring.baseHz * 0.2f / size * rng_.range(0.95f, 1.05f);
    for (std::size_t i = 0; i < ring_.size(); ++i) {
      float hz = std::min(0.45f * kFs, f0 * ring.ratio[i] * rng_.range(0.98f, 1.02f));
      float t60 = ring.t60[i] * rng_.range(0.9f, 1.1f);
      setMode(ring_[i], hz, t60, ring.gain[i] * ring.level);
      tail = std::max(tail, t60);
    }

    // Shards (glass): short high rings, denser early.
    if (glass_) {
      shardCount_ = std::min(kMaxShards, 4 + static_cast<int>(lv));
      for (int i = 0; i < shardCount_; ++i) {
        float u = static_cast<float>(i + 1) / static_cast<float>(shardCount_);
        shardAt_[static_cast<std::size_t>(i)] =
            static_cast<long>((0.01f + dur * u * u * rng_.range(0.7f, 1.0f)) * kFs);
        shardHz_[static_cast<std::size_t>(i)] = rng_.range(3000.0f, 9000.0f);
        shardT60_[static_cast<std::size_t>(i)] = rng_.range(0.04f, 0.15f);
        shardAmp_[static_cast<std::size_t>(i)] = rng_.range(0.04f, 0.15f);
        lastExcite = std::max(lastExcite, shardAt_[static_cast<std::size_t>(i)] + 1);
      }
      tail = std::max(tail, 0.15f);
    }
    lastExcite_ = lastExcite;
    hardEnd_ = lastExcite_ + static_cast<long>(tail * 1.5f * kFs) + kBlockFrames;
    tailT60_ = tail;
    level_ = silent_ ? 0.0f : 0.15f;
  }

  bool render(float* out, int frames, const SynthParams&) override {
    if (silent_) {
      std::fill(out, out + frames, 0.0f);
      return false;
    }
    float peak = 0, sum = 0;
    for (int i = 0; i < frames; ++i) {
      long t = t_ + i;
      // Crack: a short burst of white noise with a fast linear decay.
      if (nextCrack_ < crackCount_ && t == crackAt_[static_cast<std::size_t>(nextCrack_)]) {
        crackLeft_ = crackLen_;
        crackAmpNow_ = crackAmp_[static_cast<std::size_t>(nextCrack_)];
        ++nextCrack_;
      }
      float crack = 0;
      if (crackLeft_ > 0) {
        crack = crackAmpNow_ * rng_.bipolar() * static_cast<float>(crackLeft_) / static_cast<float>(crackLen_);
        --crackLeft_;
      }
      // Debris grains.
      if (t >= debrisStart_) {
        if (rng_.uniform() < debrisRate_) grain_ += rng_.range(0.03f, 0.2f);
        debrisRate_ *= debrisDecay_;
      }
      grain_ *= grainDecay_;
      if (grain_ < 1e-9f) grain_ = 0.0f;  // no denormals into the filters
      float debris = debrisLp_.lowpass(debrisHp_.highpass(rng_.bipolar() * grain_));
      // Thud: a 4 ms half-sine push at the first crack.
      float push = 0;
      if (t < thudPulse_) push = kPi / (2.0f * static_cast<float>(thudPulse_)) *
                                 std::sin(kPi * (static_cast<float>(t) + 0.5f) / static_cast<float>(thudPulse_));
      float y = crack + debris + thud_.process(push);
      float ringIn = crack;
      for (Resonator& r : ring_) y += r.process(ringIn);
      if (glass_) y += shards(t);
      out[i] = y;
      peak = std::max(peak, std::fabs(y));
      sum += y * y;
    }
    t_ += frames;
    level_ = std::sqrt(sum / static_cast<float>(std::max(1, frames)));
    return !(t_ >= lastExcite_ && peak < kEndLevel) && t_ < hardEnd_;
  }

  bool skip(int frames, const SynthParams& /*params*/) override {
    long end = t_ + frames;
    while (nextCrack_ < crackCount_ && crackAt_[static_cast<std::size_t>(nextCrack_)] < end) ++nextCrack_;
    while (nextShard_ < shardCount_ && shardAt_[static_cast<std::size_t>(nextShard_)] < end) ++nextShard_;
    long debrisSamples = std::max(0L, end - std::max(t_, debrisStart_));
    debrisRate_ *= std::pow(debrisDecay_, static_cast<float>(debrisSamples));
    grain_ *= std::pow(grainDecay_, static_cast<float>(frames));
    if (grain_ < 1e-9f) grain_ = 0.0f;
    crackLeft_ = 0;
    thud_.reset();
    for (Resonator& r : ring_) r.reset();
    for (Resonator& r : shardVoices_) r.reset();
    t_ = end;
    level_ *= std::exp(-6.907755f * static_cast<float>(frames) / (tailT60_ * kFs));
    return !silent_ && t_ < hardEnd_;
  }

  float loudness() const override { return level_; }

 private:
  /// Glass shards: each a high resonator hit by one impulse at its time.
  float shards(long t) {
    while (nextShard_ < shardCount_ && t == shardAt_[static_cast<std::size_t>(nextShard_)]) {
      auto k = static_cast<std::size_t>(nextShard_);
      Resonator& r = shardVoices_[static_cast<std::size_t>(nextShard_ % kShardVoices)];
      r.reset();
      setMode(r, shardHz_[k], shardT60_[k], 1.0f);
      shardHit_ += shardAmp_[k];
      ++nextShard_;
    }
    float hit = shardHit_;
    shardHit_ = 0;
    // Only the voice just retuned gets the hit; the others ring on.
    int hitVoice = nextShard_ > 0 ? (nextShard_ - 1) % kShardVoices : -1;
    int voices = std::min(nextShard_, kShardVoices);
    float y = 0;
    for (int i = 0; i < voices; ++i) y += shardVoices_[static_cast<std::size_t>(i)].process(i == hitVoice ? hit : 0.0f);
    return y;
  }

  KeyedRng rng_;
  bool glass_ = false, silent_ = false;
  long t_ = 0, lastExcite_ = 0, hardEnd_ = 0;
  float tailT60_ = 0.1f, level_ = 0;

  std::array<long, kMaxCracks> crackAt_{};
  std::array<float, kMaxCracks> crackAmp_{};
  int crackCount_ = 0, nextCrack_ = 0, crackLen_ = 1, crackLeft_ = 0;
  float crackAmpNow_ = 0;

  long debrisStart_ = 0;
  float debrisRate_ = 0, debrisDecay_ = 1, grainDecay_ = 0, grain_ = 0;
  OnePole debrisHp_, debrisLp_;

  Resonator thud_;
  int thudPulse_ = 1;
  std::array<Resonator, 4> ring_{};

  std::array<long, kMaxShards> shardAt_{};
  std::array<float, kMaxShards> shardHz_{}, shardT60_{}, shardAmp_{};
  int shardCount_ = 0, nextShard_ = 0;
  float shardHit_ = 0;
  std::array<Resonator, kShardVoices> shardVoices_{};
};

}  // namespace

std::unique_ptr<Voice> makeFracture(const FractureSpec& spec) { return std::make_unique<FractureVoice>(spec); }

}  // namespace loam::audio
