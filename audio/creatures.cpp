// Animal calls and background beds, synthesised (no recordings; docs/AUDIO.md).
//  BirdSong  a phrase of 3-9 syllables built from 2-3 keyed motifs (up/down sweeps,
//            trills, vibrato whistles, quick chirps), sines with pitch contours in
//            ~2-7 kHz and a touch of second harmonic.
//  BirdChirp 1-3 short fast sweeps.
//  FoxBark   1-4 raspy yaps: a jittered pulse source (f0 ~400-900 Hz, rising then
//            falling) with noisy rasp through three formant band-passes.
//  DogBark   1-3 lower woofs (f0 ~150-350 Hz), sharper onset, lower formants.
//  Bed Day   soft air (pink, low-passed, breathing) and rare distant tiny chirps.
//  Bed Night low air and 3-5 crickets: 4-5 kHz tones pulsed in keyed rhythms.
// Everything about a call (pitch, rhythm, syllables) is drawn from its key at
// construction, so the same key repeats bit for bit. The key's high 32 bits name the
// animal (voice, formants, a bird's motifs), the low bits vary each call.
#include <algorithm>
#include <array>
#include "audio/env_common.h"
#include "audio/models.h"

namespace loam::audio {
namespace {
using namespace env;

int secondsToFrames(float s) { return static_cast<int>(s * kSampleRate); }

/// The animal part of a call key: its high 32 bits (the scene puts the animal id
/// there and the call's index below), so one bird keeps its voice and repertoire
/// while every call varies. Keys below 2^32 share one voice and still vary per call.
std::uint64_t individual(std::uint64_t key) { return key >> 32; }

// ---- birds ---------------------------------------------------------------------------

enum class Contour : std::uint8_t { Linear, EaseIn, EaseOut };

struct Syllable {
  int start = 0, length = 1;  ///< frames
  float f0 = 3000, f1 = 3000; ///< Hz at the start and end of each note
  Contour contour = Contour::Linear;
  float fmRate = 0, fmDepth = 0;  ///< vibrato Hz and relative depth
  int notes = 1;                  ///< > 1: a trill of repeated notes
  float amp = 1, harmonic = 0.1f;
};

float shape(Contour c, float u) {
  switch (c) {
    case Contour::Linear: return u;
    case Contour::EaseIn: return u * u;
    case Contour::EaseOut: return 1.0f - (1.0f - u) * (1.0f - u);
  }
  return u;
}

class Bird final : public Voice {
 public:
  Bird(bool song, std::uint64_t key) {
    KeyedRng who(combineKey(individual(key), 11));  // this bird's voice and repertoire
    KeyedRng r(combineKey(key, 1));                 // this call's variation
    if (song) buildSong(who, r);
    else buildChirps(who, r);
    end_ = syl_[count_ - 1].start + syl_[count_ - 1].length;
  }

  bool render(float* out, int frames, const SynthParams&) override {
    for (int i = 0; i < frames; ++i) out[i] = sample();
    return t_ < end_;
  }
  bool skip(int frames, const SynthParams& /*params*/) override {
    t_ += frames;
    while (cur_ < count_ && t_ >= syl_[cur_].start + syl_[cur_].length) ++cur_;
    return t_ < end_;
  }
  float loudness() const override { return t_ < end_ ? 0.12f : 0.0f; }

 private:
  float sample() {
    int t = t_++;
    while (cur_ < count_ && t >= syl_[cur_].start + syl_[cur_].length) ++cur_;
    if (cur_ >= count_ || t < syl_[cur_].start) return 0.0f;
    const Syllable& s = syl_[cur_];
    float pos = static_cast<float>(t - s.start) / static_cast<float>(s.length);  // 0..1
    float noteAt = pos * static_cast<float>(s.notes);
    float u = noteAt - std::floor(noteAt);  // position in the current note
    float f = s.f0 + (s.f1 - s.f0) * shape(s.contour, u);
    if (s.fmDepth > 0) {
      fmPhase_ = wrap01(fmPhase_ + s.fmRate * kDt);
      f *= 1.0f + s.fmDepth * sin01(fmPhase_);
    }
    phase_ = wrap01(phase_ + f * kDt);
    // sin^2 note envelope: smooth on and off, no clicks between notes.
    float e = sin01(0.5f * u);
    e *= e;
    float p2 = phase_ * 2.0f;
    p2 -= p2 >= 1.0f ? 1.0f : 0.0f;
    return s.amp * e * (sin01(phase_) + s.harmonic * sin01(p2));
  }

  void add(const Syllable& s) {
    if (count_ < static_cast<int>(syl_.size())) syl_[count_++] = s;
  }

  Syllable motif(KeyedRng& r, float base) {
    Syllable s;
    s.amp = r.range(0.12f, 0.22f);
    s.harmonic = r.range(0.03f, 0.15f);
    int type = static_cast<int>(r.next() % 5);
    switch (type) {
      case 0:  // upsweep
        s.f0 = base * r.range(0.6f, 0.85f);
        s.f1 = base * r.range(1.15f, 1.5f);
        s.length = secondsToFrames(r.range(0.06f, 0.16f));
        s.contour = Contour::EaseOut;
        break;
      case 1:  // downsweep
        s.f0 = base * r.range(1.2f, 1.6f);
        s.f1 = base * r.range(0.6f, 0.85f);
        s.length = secondsToFrames(r.range(0.05f, 0.14f));
        s.contour = Contour::EaseIn;
        break;
      case 2: {  // trill: fast repeated notes
        s.notes = 4 + static_cast<int>(r.next() % 9);
        float note = r.range(0.018f, 0.04f);
        s.length = secondsToFrames(note * static_cast<float>(s.notes));
        s.f0 = base * r.range(0.9f, 1.3f);
        s.f1 = s.f0 * r.range(0.7f, 0.95f);
        break;
      }
      case 3:  // whistle with vibrato
        s.f0 = base * r.range(0.8f, 1.1f);
        s.f1 = s.f0 * r.range(0.9f, 1.1f);
        s.length = secondsToFrames(r.range(0.12f, 0.3f));
        s.fmRate = r.range(25.0f, 70.0f);
        s.fmDepth = r.range(0.02f, 0.08f);
        break;
      default:  // quick chirp
        s.f0 = base * r.range(1.3f, 1.7f);
        s.f1 = base * r.range(0.8f, 1.0f);
        s.length = secondsToFrames(r.range(0.025f, 0.05f));
        s.contour = Contour::EaseOut;
        break;
    }
    s.f0 = std::clamp(s.f0, 1800.0f, 7500.0f);
    s.f1 = std::clamp(s.f1, 1800.0f, 7500.0f);
    return s;
  }

  void buildSong(KeyedRng& who, KeyedRng& r) {
    float base = who.range(2600.0f, 4800.0f);  // the bird's voice
    int motifs = 2 + static_cast<int>(who.next() % 2);
    std::array<Syllable, 3> m{};
    for (int k = 0; k < motifs; ++k) m[k] = motif(who, base);
    base *= r.range(0.97f, 1.03f);
    int syllables = 3 + static_cast<int>(r.next() % 7);
    int t = secondsToFrames(r.range(0.0f, 0.05f));
    for (int k = 0; k < syllables; ++k) {
      Syllable s = m[r.next() % static_cast<unsigned>(motifs)];
      float bend = r.range(0.95f, 1.05f);  // each repeat a little different
      s.f0 *= bend;
      s.f1 *= bend;
      s.start = t;
      add(s);
      t += s.length + secondsToFrames(r.range(0.02f, 0.09f));
    }
  }

  void buildChirps(KeyedRng& who, KeyedRng& r) {
    int chirps = 1 + static_cast<int>(r.next() % 3);
    float base = who.range(3500.0f, 5500.0f) * r.range(0.96f, 1.04f);
    int t = 0;
    for (int k = 0; k < chirps; ++k) {
      Syllable s;
      bool down = r.uniform() < 0.7f;
      s.f0 = base * (down ? r.range(1.2f, 1.45f) : r.range(0.7f, 0.85f));
      s.f1 = base * (down ? r.range(0.65f, 0.8f) : r.range(1.1f, 1.3f));
      s.contour = down ? Contour::EaseIn : Contour::EaseOut;
      s.length = secondsToFrames(r.range(0.025f, 0.07f));
      s.amp = r.range(0.12f, 0.2f);
      s.harmonic = r.range(0.03f, 0.1f);
      s.start = t;
      add(s);
      t += s.length + secondsToFrames(r.range(0.04f, 0.12f));
    }
  }

  std::array<Syllable, 12> syl_{};
  int count_ = 0, cur_ = 0, t_ = 0, end_ = 0;
  float phase_ = 0, fmPhase_ = 0;
};

// ---- barks -------------------------------------------------------------------------

struct BarkSpec {
  int start = 0, length = 1;
  float fStart = 500, fPeak = 700, fEnd = 450, amp = 1;
};

class Bark final : public Voice {
 public:
  Bark(bool fox, std::uint64_t key) : fox_(fox), noise_(combineKey(key, 2)), jitterRng_(combineKey(key, 3)) {
    KeyedRng who(combineKey(individual(key), 12));  // this animal's voice
    KeyedRng r(combineKey(key, 1));                 // this call's rhythm and contour
    float voice = fox ? who.range(450.0f, 800.0f) : who.range(160.0f, 320.0f);
    float size = who.range(0.9f, 1.12f);  // vocal tract: formants scale with the animal
    if (fox) {
      formant_[0].bandpass(1100.0f / size, 3.0f);
      formant_[1].bandpass(2300.0f / size, 4.0f);
      formant_[2].bandpass(3600.0f / size, 5.0f);
      fGain_ = {1.0f, 0.7f, 0.35f};
      rasp_ = who.range(0.5f, 0.8f);
      jitter_ = 0.04f;
      attack_ = 0.012f;
    } else {
      formant_[0].bandpass(520.0f / size, 2.5f);
      formant_[1].bandpass(1250.0f / size, 3.5f);
      formant_[2].bandpass(2600.0f / size, 4.5f);
      fGain_ = {1.0f, 0.6f, 0.25f};
      rasp_ = who.range(0.2f, 0.4f);
      jitter_ = 0.02f;
      attack_ = 0.005f;
    }
    raspLp_.setCutoff(fox ? 300.0f : 150.0f);
    sourceLp_.setCutoff(fox ? 5000.0f : 2500.0f);
    int barks = fox ? 1 + static_cast<int>(r.next() % 4) : 1 + static_cast<int>(r.next() % 3);
    int t = 0;
    for (int k = 0; k < barks; ++k) {
      BarkSpec b;
      float f = voice * r.range(0.92f, 1.08f);
      b.fStart = f * r.range(0.75f, 0.9f);
      b.fPeak = f * r.range(1.05f, 1.2f);
      b.fEnd = f * r.range(0.6f, 0.8f);
      b.length = secondsToFrames(fox ? r.range(0.12f, 0.22f) : r.range(0.1f, 0.18f));
      b.amp = r.range(0.8f, 1.0f) * (k == 0 ? 1.0f : r.range(0.75f, 1.0f));
      b.start = t;
      bark_[count_++] = b;
      t += b.length + secondsToFrames(fox ? r.range(0.2f, 0.5f) : r.range(0.25f, 0.45f));
    }
    end_ = bark_[count_ - 1].start + bark_[count_ - 1].length + secondsToFrames(0.05f);  // formant tails
  }

  bool render(float* out, int frames, const SynthParams&) override {
    for (int i = 0; i < frames; ++i) out[i] = sample();
    return t_ < end_;
  }
  bool skip(int frames, const SynthParams& /*params*/) override {
    t_ += frames;
    return t_ < end_;
  }
  float loudness() const override { return t_ < end_ ? 0.15f : 0.0f; }

 private:
  float sample() {
    int t = t_++;
    if (t >= end_) return 0.0f;  // the formants have rung out: exact silence
    while (cur_ < count_ && t >= bark_[cur_].start + bark_[cur_].length) ++cur_;
    float src = guard_.next();  // between barks: keeps the formants out of subnormals
    if (cur_ < count_ && t >= bark_[cur_].start) {
      const BarkSpec& b = bark_[cur_];
      float u = static_cast<float>(t - b.start) / static_cast<float>(b.length);
      float f = u < 0.2f ? b.fStart + (b.fPeak - b.fStart) * (u * 5.0f)
                         : b.fPeak + (b.fEnd - b.fPeak) * ((u - 0.2f) * 1.25f);
      phase_ += f * kDt * (1.0f + period_);
      if (phase_ >= 1.0f) {  // a new glottal period: new jitter
        phase_ -= 1.0f;
        period_ = jitter_ * jitterRng_.bipolar();
      }
      float att = std::min(1.0f, static_cast<float>(t - b.start) / (attack_ * kSampleRate));
      float rel = 1.0f - u;
      float env = b.amp * att * (fox_ ? rel : rel * rel);
      float n = noise_.next();
      float rasp = 1.0f + rasp_ * 3.0f * raspLp_.lowpass(n);
      src = env * (sourceLp_.lowpass((2.0f * phase_ - 1.0f) * rasp) + 0.15f * rasp_ * n);
    }
    float y = fGain_[0] * formant_[0].process(src) + fGain_[1] * formant_[1].process(src) +
              fGain_[2] * formant_[2].process(src);
    return 0.6f * y;
  }

  bool fox_;
  Noise noise_;
  DenormalGuard guard_;
  KeyedRng jitterRng_;
  std::array<BarkSpec, 4> bark_{};
  std::array<Biquad, 3> formant_{};
  std::array<float, 3> fGain_{};
  OnePole raspLp_, sourceLp_;
  float rasp_ = 0, jitter_ = 0, attack_ = 0.01f, phase_ = 0, period_ = 0;
  int count_ = 0, cur_ = 0, t_ = 0, end_ = 0;
};

// ---- beds --------------------------------------------------------------------------

class Bed final : public ContinuousVoice<Bed> {
 public:
  Bed(BedKind kind, std::uint64_t key)
      : kind_(kind), pink_(combineKey(key, 1)), air_(combineKey(key, 2), 2.0f), events_(combineKey(key, 3)) {
    KeyedRng r(combineKey(key, 4));
    level_.setTime(0.5f);
    if (kind == BedKind::Day) {
      airLp_.setCutoff(700.0f);
      airHp_.setCutoff(80.0f);
      chirpLp_.setCutoff(5000.0f);  // far away: the top is gone
    } else {
      airLp_.setCutoff(300.0f);
      airHp_.setCutoff(50.0f);
      crickets_ = 3 + static_cast<int>(r.next() % 3);
      for (int k = 0; k < crickets_; ++k) {
        Cricket& c = cricket_[k];
        c.inc = r.range(4000.0f, 5000.0f) * kDt;
        c.pulses = 2 + static_cast<int>(r.next() % 4);
        c.pulsePeriod = r.range(0.025f, 0.045f) * kControlRate;
        c.chirpPeriod = r.range(0.45f, 1.1f) * kControlRate;
        c.clock = r.range(0.0f, c.chirpPeriod);
        c.next = c.chirpPeriod;
        c.amp = r.range(0.25f, 1.0f);
      }
    }
  }

  void setParams(const SynthParams& p) { target_ = sane(p.v[0], 0.0f, 1.0f); }
  float loudness() const override { return loud_; }

  void control() {
    float lev = level_.step(target_);
    airGain_.to(lev * (kind_ == BedKind::Day ? 0.35f : 0.2f) * (1.0f + 0.25f * air_.step()));
    if (kind_ == BedKind::Day) {
      chirpGain_.to(lev);
      loud_ = 0.066f * lev;
      return;
    }
    for (int k = 0; k < crickets_; ++k) {
      Cricket& c = cricket_[k];
      c.clock += 1.0f;
      if (c.clock >= c.next) {  // a new chirp: the rhythm drifts a little
        c.clock -= c.next;
        c.next = c.chirpPeriod * events_.rng().range(0.92f, 1.08f);
      }
      float e = 0;
      float pulse = c.clock / c.pulsePeriod;  // pulses at the start of each chirp
      if (pulse < static_cast<float>(c.pulses)) {
        float u = pulse - std::floor(pulse);
        e = u < 0.6f ? sin01(u * (0.5f / 0.6f)) : 0.0f;  // on 60 % of each pulse
        e *= e;
      }
      c.gain.to(0.1f * lev * c.amp * e);
    }
    loud_ = 0.04f * lev;
  }

  void samples(float* out, int n) {
    if (kind_ == BedKind::Day) {
      for (int i = 0; i < n; ++i) {
        if (events_.tick(0.5f)) startChirp();
        float air = airHp_.highpass(airLp_.lowpass(pink_.next()));
        float chirp = guard_.next();
        if (chirpLeft_ > 0) {
          --chirpLeft_;
          float u = 1.0f - static_cast<float>(chirpLeft_) / static_cast<float>(chirpLength_);
          chirpPhase_ = wrap01(chirpPhase_ + (chirpF0_ + chirpDf_ * u) * kDt);
          float e = sin01(0.5f * u);
          chirp = chirpAmp_ * e * e * sin01(chirpPhase_);
        }
        out[i] = airGain_.next() * air + chirpGain_.next() * chirpLp_.lowpass(chirp);
      }
      return;
    }
    for (int i = 0; i < n; ++i) {
      float y = airGain_.next() * airHp_.highpass(airLp_.lowpass(pink_.next()));
      for (int k = 0; k < crickets_; ++k) {
        Cricket& c = cricket_[k];
        c.phase += c.inc;
        c.phase -= c.phase >= 1.0f ? 1.0f : 0.0f;
        y += c.gain.next() * sin01(c.phase);
      }
      out[i] = y;
    }
  }

 private:
  void startChirp() {
    KeyedRng& q = events_.rng();
    chirpLength_ = secondsToFrames(q.range(0.03f, 0.09f));
    chirpLeft_ = chirpLength_;
    chirpF0_ = q.range(3000.0f, 6000.0f);
    chirpDf_ = chirpF0_ * q.range(-0.4f, 0.3f);
    chirpAmp_ = q.range(0.01f, 0.03f);
  }

  struct Cricket {
    float phase = 0, inc = 0, clock = 0, next = 1, chirpPeriod = 1, pulsePeriod = 1, amp = 0;
    int pulses = 3;
    Ramp gain;
  };

  BedKind kind_;
  Pink pink_;
  DenormalGuard guard_;
  Drift air_;
  PoissonClock events_;
  OnePole airLp_, airHp_, chirpLp_;
  CtlSmoother level_;
  Ramp airGain_, chirpGain_;
  std::array<Cricket, 5> cricket_{};
  int crickets_ = 0, chirpLeft_ = 0, chirpLength_ = 1;
  float target_ = 0, loud_ = 0.03f, chirpPhase_ = 0, chirpF0_ = 4000, chirpDf_ = 0, chirpAmp_ = 0;
};

}  // namespace

std::unique_ptr<Voice> makeCreatureCall(CreatureCall call, std::uint64_t key) {
  switch (call) {
    case CreatureCall::BirdSong: return std::make_unique<Bird>(true, key);
    case CreatureCall::BirdChirp: return std::make_unique<Bird>(false, key);
    case CreatureCall::FoxBark: return std::make_unique<Bark>(true, key);
    case CreatureCall::DogBark: return std::make_unique<Bark>(false, key);
  }
  return std::make_unique<Bird>(false, key);
}

std::unique_ptr<Voice> makeBed(BedKind kind, std::uint64_t key) { return std::make_unique<Bed>(kind, key); }

}  // namespace loam::audio
