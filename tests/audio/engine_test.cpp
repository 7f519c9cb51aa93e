// AudioEngine: mixing, spatialisation, voice limits, fades, no allocation on the
// audio thread, repeatability. Measured on rendered samples.
#include "audio/engine.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "audio/hrtf.h"
#include "audio/models.h"
#include "audio/spectrum.h"

#include "tests/support/alloc_counter.h"

using loam::test::gAllocs;
using loam::test::gCountAllocs;

namespace loam::audio {
namespace {

/// What a test voice saw (outlives the voice, which the engine owns).
struct Probe {
  int renders = 0;
  int skips = 0;
  bool destroyed = false;
};

/// A continuous sine: easy to find in the output.
class SineVoice final : public Voice {
 public:
  SineVoice(float hz, float amp, Probe* probe) : hz_(hz), amp_(amp), probe_(probe) {}
  ~SineVoice() override {
    if (probe_) probe_->destroyed = true;
  }
  bool render(float* out, int frames, const SynthParams&) override {
    if (probe_) ++probe_->renders;
    for (int i = 0; i < frames; ++i) {
      out[i] = amp_ * std::sin(phase_);
      phase_ += 2.0f * kPi * hz_ / kSampleRate;
      if (phase_ > 2.0f * kPi) phase_ -= 2.0f * kPi;
    }
    return true;
  }
  bool skip(int frames, const SynthParams& /*params*/) override {
    if (probe_) ++probe_->skips;
    phase_ = std::fmod(phase_ + 2.0f * kPi * hz_ / kSampleRate * static_cast<float>(frames), 2.0f * kPi);
    return true;
  }
  float loudness() const override { return amp_ * 0.707f; }

 private:
  float hz_, amp_, phase_ = 0;
  Probe* probe_;
};

/// Continuous white noise: a flat spectrum to see filtering on.
class NoiseVoice final : public Voice {
 public:
  explicit NoiseVoice(std::uint64_t key) : rng_(key) {}
  bool render(float* out, int frames, const SynthParams&) override {
    for (int i = 0; i < frames; ++i) out[i] = 0.2f * rng_.bipolar();
    return true;
  }

 private:
  KeyedRng rng_;
};

/// The dry engine: constant-power pan, no reverb or reflections.
EngineConfig dry() {
  EngineConfig c;
  c.spatial = Spatialisation::Speakers;
  c.acoustics = false;
  return c;
}

EmitterState at(float x, float y, float z, float gain = 1.0f) {
  EmitterState s;
  s.position = {x, y, z};
  s.gain = gain;
  return s;
}

std::vector<float> renderBlocks(AudioEngine& e, int blocks) {
  std::vector<float> out(static_cast<std::size_t>(blocks) * 2 * kBlockFrames);
  for (int b = 0; b < blocks; ++b) e.renderBlock(out.data() + static_cast<std::size_t>(b) * 2 * kBlockFrames);
  return out;
}

std::vector<float> channel(const std::vector<float>& stereo, int c) {
  std::vector<float> m(stereo.size() / 2);
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = stereo[2 * i + static_cast<std::size_t>(c)];
  return m;
}

float maxStep(const std::vector<float>& mono) {
  float m = 0;
  for (std::size_t i = 1; i < mono.size(); ++i) m = std::max(m, std::fabs(mono[i] - mono[i - 1]));
  return m;
}

TEST_CASE("a voice started on the control side is heard in the output") {
  AudioEngine e(dry());
  e.setListener({});
  e.commit();
  auto before = renderBlocks(e, 4);
  CHECK(rms(before) == 0.0);
  e.start(1, std::make_unique<SineVoice>(440.0f, 0.3f, nullptr), at(0, 0, -2));
  CHECK(e.alive(1));
  e.commit();
  auto after = renderBlocks(e, 20);
  CHECK(rms(after) > 0.05);
  CHECK(spectralCentroid(toMono(after, 2), kSampleRate) == doctest::Approx(440.0).epsilon(0.15));
  CHECK(e.stats().realVoices == 1);
  CHECK(e.stats().emitters == 1);
}

TEST_CASE("pan: a source east of a listener facing north is on the right") {
  auto render = [](Listener l, Vec3f p) {
    AudioEngine e(dry());
    e.setListener(l);
    e.start(1, std::make_unique<SineVoice>(300.0f, 0.3f, nullptr), at(p.x, p.y, p.z));
    e.commit();
    auto s = renderBlocks(e, 20);
    return std::pair{rms(channel(s, 0)), rms(channel(s, 1))};
  };
  auto [l1, r1] = render({{0, 0, 0}, 0.0f}, {5, 0, 0});  // east, facing north
  CHECK(r1 > 4 * l1);
  auto [l2, r2] = render({{0, 0, 0}, 0.0f}, {-5, 0, 0});  // west
  CHECK(l2 > 4 * r2);
  auto [l3, r3] = render({{0, 0, 0}, kPi / 2}, {0, 0, 5});  // south, facing east: right
  CHECK(r3 > 4 * l3);
  auto [l4, r4] = render({{0, 0, 0}, 0.0f}, {0, 0, -5});  // straight ahead: centre
  CHECK(l4 == doctest::Approx(r4).epsilon(0.01));
  // Constant power: the total is the same wherever the source is.
  CHECK(l1 * l1 + r1 * r1 == doctest::Approx(l4 * l4 + r4 * r4).epsilon(0.02));
}

TEST_CASE("width pulls a source to the centre") {
  AudioEngine e(dry());
  e.setListener({});
  EmitterState s = at(5, 0, 0);
  s.width = 1.0f;
  e.start(1, std::make_unique<SineVoice>(300.0f, 0.3f, nullptr), s);
  e.commit();
  auto out = renderBlocks(e, 10);
  CHECK(rms(channel(out, 0)) == doctest::Approx(rms(channel(out, 1))).epsilon(0.01));
}

TEST_CASE("distance: inverse distance beyond 1 m; ambient ignores it") {
  auto level = [](float d, bool ambient) {
    AudioEngine e(dry());
    e.setListener({});
    EmitterState s = at(0, 0, -d);
    s.ambient = ambient;
    e.start(1, std::make_unique<SineVoice>(200.0f, 0.3f, nullptr), s);
    e.commit();
    return rms(renderBlocks(e, 40));
  };
  double near = level(2, false), far = level(8, false);
  CHECK(near / far == doctest::Approx(4.0).epsilon(0.1));
  CHECK(level(0.5f, false) == doctest::Approx(level(1.0f, false)).epsilon(0.02));  // clamped inside 1 m
  CHECK(level(50, true) == doctest::Approx(level(1, true)).epsilon(0.02));
}

TEST_CASE("air absorption darkens far sources") {
  auto centroid = [](float d) {
    AudioEngine e(dry());
    e.setListener({});
    e.start(1, std::make_unique<NoiseVoice>(9), at(0, 0, -d));
    e.commit();
    return spectralCentroid(toMono(renderBlocks(e, 60), 2), kSampleRate);
  };
  double c1 = centroid(1), c20 = centroid(20), c80 = centroid(80);
  MESSAGE("white noise centroid at 1 m ", c1, " Hz, 20 m ", c20, " Hz, 80 m ", c80, " Hz");
  CHECK(c20 < c1);
  CHECK(c80 < 0.7 * c1);
}

TEST_CASE("voice limit: only the loudest are real, the rest virtual, without flapping") {
  EngineConfig cfg = dry();
  cfg.realVoices = 4;
  std::vector<Probe> probes(10);  // outlives the engine, which owns the voices
  AudioEngine e(cfg);
  e.setListener({});
  for (int i = 0; i < 10; ++i) {
    float gain = 0.1f * static_cast<float>(i + 1);  // emitter 9 loudest
    e.start(static_cast<EmitterId>(100 + i), std::make_unique<SineVoice>(200.0f + 50.0f * static_cast<float>(i), 0.3f, &probes[static_cast<std::size_t>(i)]),
            at(0, 0, -2, gain));
  }
  e.commit();
  renderBlocks(e, 10);
  EngineStats st = e.stats();
  CHECK(st.emitters == 10);
  CHECK(st.realVoices == 4);
  CHECK(st.virtualVoices == 6);
  for (int i = 0; i < 10; ++i) {
    CAPTURE(i);
    if (i >= 6) {
      CHECK(probes[static_cast<std::size_t>(i)].renders == 10);
      CHECK(probes[static_cast<std::size_t>(i)].skips == 0);
    } else {
      CHECK(probes[static_cast<std::size_t>(i)].renders == 0);
      CHECK(probes[static_cast<std::size_t>(i)].skips == 10);
    }
  }
  // Hysteresis: emitter 5 becomes a little louder than real emitter 6: no swap.
  e.update(105, at(0, 0, -2, 0.75f));
  e.commit();
  renderBlocks(e, 10);
  CHECK(probes[5].renders == 0);
  CHECK(probes[6].renders == 20);
  // Much louder: it takes the quietest real voice's place (after that one fades).
  e.update(105, at(0, 0, -2, 3.0f));
  e.commit();
  renderBlocks(e, 10);
  CHECK(probes[5].renders >= 8);
  CHECK(probes[6].renders <= 21);  // faded out over one block, then virtual
  CHECK(e.stats().realVoices == 4);
}

TEST_CASE("a new one-shot waiting for a place keeps its attack") {
  EngineConfig cfg = dry();
  cfg.realVoices = 1;
  Probe p;
  AudioEngine e(cfg);
  e.setListener({});
  e.start(1, std::make_unique<SineVoice>(300.0f, 0.05f, nullptr), at(0, 0, -1));
  e.commit();
  renderBlocks(e, 2);
  e.start(2, std::make_unique<SineVoice>(900.0f, 0.5f, &p), at(0, 0, -1));
  e.commit();
  renderBlocks(e, 1);  // the sine fades out; the newcomer waits
  CHECK(p.renders == 0);
  CHECK(p.skips == 0);
  renderBlocks(e, 1);
  CHECK(p.renders == 1);
  CHECK(e.stats().realVoices == 1);
}

TEST_CASE("stop fades out without a click and frees the voice") {
  Probe probe;
  AudioEngine e(dry());
  e.setListener({});
  e.start(7, std::make_unique<SineVoice>(1000.0f, 0.5f, &probe), at(0, 0, -1));
  e.commit();
  auto a = renderBlocks(e, 8);
  e.stop(7);
  CHECK_FALSE(e.alive(7));
  e.commit();
  auto b = renderBlocks(e, 8);
  std::vector<float> l = channel(a, 0), lb = channel(b, 0);
  l.insert(l.end(), lb.begin(), lb.end());
  // A 1 kHz sine at 0.35 moves at most ~0.046 per sample; a hard cut would jump ~0.35.
  CHECK(maxStep(l) < 0.06f);
  CHECK(rms(std::span<const float>(lb).subspan(2 * kBlockFrames)) == 0.0);
  e.commit();  // collects the retired voice
  CHECK(probe.destroyed);
  CHECK(e.stats().emitters == 0);
}

TEST_CASE("a voice going virtual and back fades, no click") {
  EngineConfig cfg = dry();
  cfg.realVoices = 1;
  AudioEngine e(cfg);
  e.setListener({});
  e.start(1, std::make_unique<SineVoice>(500.0f, 0.5f, nullptr), at(0, 0, -1, 1.0f));
  e.commit();
  auto a = renderBlocks(e, 4);
  e.start(2, std::make_unique<SineVoice>(500.0f, 0.5f, nullptr), at(0, 0, -1, 0.01f));
  e.update(1, at(0, 0, -1, 0.001f));  // now 1 is far quieter than 2: it goes virtual
  e.update(2, at(0, 0, -1, 1.0f));
  e.commit();
  auto b = renderBlocks(e, 4);
  std::vector<float> l = channel(a, 0), lb = channel(b, 0);
  l.insert(l.end(), lb.begin(), lb.end());
  CHECK(maxStep(l) < 0.06f);
  CHECK(e.stats().realVoices == 1);
}

TEST_CASE("one-shots end, are reported back, and alive() follows") {
  AudioEngine e(dry());
  e.setListener({});
  e.start(3, makeImpact({sim::SoundClass::Wood, 0.1f, 2.0f, 4.0f, 1}), at(0, 0, -1));
  e.commit();
  int blocks = 0;
  while (e.alive(3) && blocks < 2000) {
    e.renderBlock(std::vector<float>(2 * kBlockFrames).data());
    e.commit();
    ++blocks;
  }
  CHECK_FALSE(e.alive(3));
  CHECK(blocks < 400);  // about 2 s at most
  CHECK(e.stats().finished == 1);
  CHECK(e.stats().started == 1);
}

TEST_CASE("a replaced id keeps the new emitter alive") {
  Probe p2;
  AudioEngine e(dry());
  e.setListener({});
  e.start(4, std::make_unique<SineVoice>(300.0f, 0.3f, nullptr), at(0, 0, -1));
  e.commit();
  renderBlocks(e, 2);
  e.start(4, std::make_unique<SineVoice>(600.0f, 0.3f, &p2), at(0, 0, -1));
  e.commit();
  renderBlocks(e, 4);
  e.commit();
  CHECK(e.alive(4));
  CHECK(e.stats().emitters == 1);
  CHECK(p2.renders == 4);
}

TEST_CASE("full emitter table drops starts and counts them") {
  EngineConfig cfg = dry();
  cfg.maxEmitters = 3;
  AudioEngine e(cfg);
  for (int i = 0; i < 5; ++i) e.start(static_cast<EmitterId>(i + 1), std::make_unique<SineVoice>(300.0f, 0.1f, nullptr), at(0, 0, -1));
  e.commit();
  renderBlocks(e, 1);
  e.commit();
  CHECK(e.stats().dropped == 2);
  CHECK(e.stats().emitters == 3);
  CHECK_FALSE(e.alive(5));
  CHECK(e.alive(1));
}

TEST_CASE("a full command queue keeps the rest for the next commit") {
  EngineConfig cfg = dry();
  cfg.queueCapacity = 4;
  AudioEngine e(cfg);
  for (int i = 0; i < 10; ++i) e.start(static_cast<EmitterId>(i + 1), std::make_unique<SineVoice>(300.0f, 0.1f, nullptr), at(0, 0, -1));
  e.commit();
  renderBlocks(e, 1);
  CHECK(e.stats().emitters == 4);
  CHECK(e.stats().queueFull == 1);
  e.commit();
  renderBlocks(e, 1);
  e.commit();
  renderBlocks(e, 1);
  CHECK(e.stats().emitters == 10);
}

TEST_CASE("the master never overs") {
  AudioEngine e(dry());
  e.setListener({});
  for (int i = 0; i < 20; ++i) e.start(static_cast<EmitterId>(i + 1), std::make_unique<SineVoice>(100.0f, 1.0f, nullptr), at(0, 0, -1));
  e.setMasterGain(2.0f);
  e.commit();
  auto out = renderBlocks(e, 20);
  float peak = 0;
  for (float x : out) peak = std::max(peak, std::fabs(x));
  CHECK(peak < 1.0f);
  CHECK(peak > 0.9f);
}

TEST_CASE("control and audio threads run concurrently") {
  EngineConfig cfg;  // binaural and acoustics on: rooms cross too
  cfg.realVoices = 8;
  cfg.maxEmitters = 64;
  cfg.queueCapacity = 32;
  AudioEngine e(cfg);
  std::atomic<bool> done{false};
  std::atomic<long> blocks{0};
  std::thread audio([&] {
    float block[2 * kBlockFrames];
    while (!done.load()) {
      e.renderBlock(block);
      blocks.fetch_add(1);
    }
  });
  for (int i = 0; i < 3000; ++i) {
    auto k = static_cast<std::uint64_t>(i);
    e.start(emitterId(EmitterKind::Impact, k % 200), makeImpact({sim::SoundClass::Wood, 0.2f, 2.0f, 4.0f, k}), at(1, 0, -2));
    e.update(emitterId(EmitterKind::Impact, (k + 7) % 200), at(-1, 0, -2, 0.5f));
    if (i % 3 == 0) e.stop(emitterId(EmitterKind::Impact, (k + 100) % 200));
    e.setListener({{0, 0, static_cast<float>(i % 10)}, 0.01f * static_cast<float>(i)});
    if (i % 5 == 0) {
      RoomAcoustics room;
      room.meanFreePath = 1.0f + static_cast<float>(i % 17);
      room.rt60 = {0.5f, 0.4f, static_cast<float>(i % 7) * 0.1f};
      room.reverbGain = static_cast<float>(i % 3);
      e.setRoom(room);
    }
    e.commit();
    if (i % 64 == 0) std::this_thread::yield();
  }
  done = true;
  audio.join();
  e.commit();
  EngineStats st = e.stats();
  CHECK(blocks.load() > 0);
  CHECK(st.started + st.dropped <= 3000);
  CHECK(st.emitters <= 64);
}

/// A busy little scene driven from the control side, identical on every call. With
/// `acoustic`, the emitters also carry band gains, directions, reverb sends and the
/// impulsive flag, and a room with reflections is set (and changed) on the way.
std::vector<float> scriptedRender(EngineConfig cfg, bool acoustic, bool countAllocs, long* allocs) {
  cfg.realVoices = 8;
  AudioEngine e(cfg);
  std::vector<float> out, block(2 * kBlockFrames);
  auto dress = [&](EmitterState s, int b, bool impulsive) {
    if (!acoustic) return s;
    s.bands = {1.0f, 0.5f + 0.05f * static_cast<float>(b % 10), 0.3f};
    if (b % 3 == 0) s.direction = {1, 0, -1};
    s.reverbSend = 0.4f;
    s.impulsive = impulsive;
    if (impulsive) {  // each its own reflections, changing on the way
      s.tapCount = 3 + b % 5;
      for (int i = 0; i < s.tapCount; ++i)
        s.taps[static_cast<std::size_t>(i)] = {0.01f + 0.02f * static_cast<float>(i) + 0.001f * static_cast<float>(b % 7),
                                               -0.3f, 5000.0f, {1, 0, static_cast<float>(i) - 2}};
    }
    return s;
  };
  for (int b = 0; b < 400; ++b) {
    if (b % 4 == 0) {  // control update
      float t = static_cast<float>(b) * kBlockFrames / kSampleRate;
      e.setListener({{std::sin(t), 1.7f, 0}, 0.3f * t});
      auto k = static_cast<std::uint64_t>(b);
      e.start(emitterId(EmitterKind::Impact, k), makeImpact({sim::SoundClass::Stone, 0.1f + 0.01f * static_cast<float>(b % 30), 2.0f, 6.0f, k}),
              dress(at(static_cast<float>(b % 7) - 3.0f, 0, -4), b, true));
      e.start(emitterId(EmitterKind::Footstep, k), makeFootstep({b % 8 == 0 ? sim::SoundClass::Gravel : sim::SoundClass::Grass, Gait::Walk, 1.4f, k}),
              dress(at(0, 0, 0), b, true));
      if (b % 40 == 0) e.start(emitterId(EmitterKind::Fracture, k), makeFracture({sim::SoundClass::Stone, 64, k}), dress(at(3, 0, -3), b, false));
      if (b % 40 == 8) e.start(emitterId(EmitterKind::Dig, k), makeDig({sim::SoundClass::Soil, 16, k}), dress(at(-2, 0, -3), b, true));
      if (acoustic && b % 20 == 0) {
        RoomAcoustics room;
        room.meanFreePath = 2.0f + static_cast<float>(b % 60) * 0.1f;
        room.rt60 = {0.8f, 0.6f, 0.4f};
        room.reverbGain = 0.5f + 0.01f * static_cast<float>(b % 50);
        e.setRoom(room);
      }
      e.commit();
    }
    if (countAllocs && b >= 40) gCountAllocs = true;
    e.renderBlock(block.data());
    gCountAllocs = false;
    out.insert(out.end(), block.begin(), block.end());
  }
  if (allocs) *allocs = gAllocs.load();
  return out;
}

bool bitEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](float x, float y) {
           return std::bit_cast<std::uint32_t>(x) == std::bit_cast<std::uint32_t>(y);
         });
}

TEST_CASE("renderBlock does not allocate") {
  long allocs = -1;
  gAllocs = 0;
  auto out = scriptedRender(dry(), false, true, &allocs);
  CHECK(rms(out) > 0.001);
  CHECK(allocs == 0);
  // Acoustics and binaural on, a room with reflections set and changed, impulsive voices.
  gAllocs = 0;
  allocs = -1;
  EngineConfig full;
  REQUIRE(full.acoustics);
  REQUIRE(full.spatial == Spatialisation::Binaural);
  out = scriptedRender(full, true, true, &allocs);
  CHECK(rms(out) > 0.001);
  CHECK(allocs == 0);
}

TEST_CASE("the same inputs give identical samples") {
  CHECK(bitEqual(scriptedRender(dry(), false, false, nullptr), scriptedRender(dry(), false, false, nullptr)));
  CHECK(bitEqual(scriptedRender(EngineConfig{}, true, false, nullptr), scriptedRender(EngineConfig{}, true, false, nullptr)));
}

TEST_CASE("acoustics off: default acoustic fields leave the dry mix untouched") {
  // Acoustics on but nothing asked of it (bands flat, no sends, no room) adds nothing:
  // the same samples as the dry engine, bit for bit.
  EngineConfig on = dry();
  on.acoustics = true;
  CHECK(bitEqual(scriptedRender(dry(), false, false, nullptr), scriptedRender(on, false, false, nullptr)));
}

/// One unit impulse, then silence for a while (a one-shot).
class ImpulseVoice final : public Voice {
 public:
  bool render(float* out, int frames, const SynthParams&) override {
    for (int i = 0; i < frames; ++i) out[i] = t_++ == 0 ? 1.0f : 0.0f;
    return t_ < kSampleRate / 10;
  }
  bool skip(int frames, const SynthParams&) override {
    t_ += frames;
    return t_ < kSampleRate / 10;
  }
  float loudness() const override { return 0.3f; }

 private:
  int t_ = 0;
};

/// Energy of `mono` in windows of `win` samples, in dB.
std::vector<double> energyDb(const std::vector<float>& mono, int win) {
  std::vector<double> out;
  for (std::size_t i = 0; i + static_cast<std::size_t>(win) <= mono.size(); i += static_cast<std::size_t>(win)) {
    double e = 0;
    for (int k = 0; k < win; ++k) e += static_cast<double>(mono[i + static_cast<std::size_t>(k)]) * mono[i + static_cast<std::size_t>(k)];
    out.push_back(10.0 * std::log10(e + 1e-30));
  }
  return out;
}

TEST_CASE("bands: {1, 0, 0} leaves mostly the lows; {1, 1, 1} is transparent") {
  auto render = [](std::array<float, 3> bands) {
    AudioEngine e(dry());
    e.setListener({});
    EmitterState s = at(0, 0, -1);
    s.bands = bands;
    e.start(1, std::make_unique<NoiseVoice>(5), s);
    e.commit();
    return toMono(renderBlocks(e, 80), 2);
  };
  auto flat = render({1, 1, 1}), low = render({1, 0, 0});
  double hiFlat = rms(flat) * rms(flat) * bandShare(flat, kSampleRate, 4000, 20000);
  double hiLow = rms(low) * rms(low) * bandShare(low, kSampleRate, 4000, 20000);
  double loFlat = rms(flat) * rms(flat) * bandShare(flat, kSampleRate, 20, 200);
  double loLow = rms(low) * rms(low) * bandShare(low, kSampleRate, 20, 200);
  MESSAGE("high band (4-20 kHz) ", 10 * std::log10(hiLow / hiFlat), " dB; low band (20-200 Hz) ",
          10 * std::log10(loLow / loFlat), " dB");
  CHECK(hiLow < 0.01 * hiFlat);  // > 20 dB down
  CHECK(loLow > 0.7 * loFlat);   // lows kept
  CHECK(bandShare(low, kSampleRate, 20, 500) > 0.5);
}

TEST_CASE("direction overrides position for the pan") {
  auto render = [](Vec3f direction) {
    AudioEngine e(dry());
    e.setListener({{0, 0, 0}, 0.0f});
    EmitterState s = at(5, 0, 0);  // east: right for a listener facing north
    s.direction = direction;
    e.start(1, std::make_unique<SineVoice>(300.0f, 0.3f, nullptr), s);
    e.commit();
    auto out = renderBlocks(e, 20);
    return std::pair{rms(channel(out, 0)), rms(channel(out, 1))};
  };
  auto [l0, r0] = render({});           // no direction: from the position, right
  CHECK(r0 > 4 * l0);
  auto [l1, r1] = render({-1, 0, 0});   // heard from the west: left
  CHECK(l1 > 4 * r1);
  // Distance still from the true position (5 m): same total level.
  CHECK(l1 * l1 + r1 * r1 == doctest::Approx(l0 * l0 + r0 * r0).epsilon(0.02));
}

/// Renders an impulse (gain 1, 1 m ahead, reverbSend 1) in a room with rt60 `rt`,
/// reverbGain 1; returns the mono sum.
std::vector<float> impulseInRoom(EngineConfig cfg, float rt, int blocks) {
  AudioEngine e(cfg);
  e.setListener({});
  RoomAcoustics room;
  room.meanFreePath = 4.0f;
  room.rt60 = {rt, rt, rt};
  room.reverbGain = 1.0f;
  e.setRoom(room);
  EmitterState s = at(0, 0, -1);
  s.reverbSend = 1.0f;
  e.start(1, std::make_unique<ImpulseVoice>(), s);
  e.commit();
  return toMono(renderBlocks(e, blocks), 2);
}

TEST_CASE("reverb: an impulse leaves a tail decaying at the room's rt60; none with acoustics off") {
  EngineConfig cfg = dry();
  cfg.acoustics = true;
  const int blocks = 2 * kSampleRate / kBlockFrames;  // 2 s
  auto wet = impulseInRoom(cfg, 1.0f, blocks);
  // Schroeder backward integration of the tail (from 20 ms: after the direct sound),
  // fitted between -5 and -25 dB (T20), extrapolated to 60 dB.
  const std::size_t start = kSampleRate / 50;
  std::vector<double> edc(wet.size() - start, 0.0);
  double acc = 0;
  for (std::size_t i = wet.size(); i-- > start;) {
    acc += static_cast<double>(wet[i]) * wet[i];
    edc[i - start] = acc;
  }
  REQUIRE(acc > 0);
  double t5 = -1, t25 = -1;
  for (std::size_t i = 0; i < edc.size(); ++i) {
    double db = 10 * std::log10(edc[i] / edc[0]);
    if (t5 < 0 && db <= -5) t5 = static_cast<double>(i) / kSampleRate;
    if (t25 < 0 && db <= -25) t25 = static_cast<double>(i) / kSampleRate;
  }
  REQUIRE(t5 > 0);
  REQUIRE(t25 > t5);
  double rt60 = 3.0 * (t25 - t5);
  MESSAGE("measured rt60 ", rt60, " s for a room of 1 s; tail rms ", rms(std::span<const float>(wet).subspan(start)));
  CHECK(rt60 == doctest::Approx(1.0).epsilon(0.25));
  // Still ringing half a second on, 300 ms later quieter.
  auto env = energyDb(wet, kSampleRate / 10);
  CHECK(env[5] > env[15] + 10);

  // Acoustics off: the room is ignored, nothing after the impulse.
  auto dryOut = impulseInRoom(dry(), 1.0f, blocks);
  CHECK(rms(std::span<const float>(dryOut).subspan(start)) == 0.0);
  CHECK(rms(std::span<const float>(dryOut).first(start)) > 0.0);
}

TEST_CASE("early reflections: an impulsive voice is heard again after the tap's delay") {
  EngineConfig cfg = dry();
  cfg.acoustics = true;
  auto render = [&](bool impulsive) {
    AudioEngine e(cfg);
    e.setListener({});
    RoomAcoustics room;  // reverbGain 0: only the reflection
    e.setRoom(room);
    EmitterState s = at(0, 0, -1);
    s.impulsive = impulsive;
    s.tapCount = 1;
    s.taps[0] = {0.05f, -0.5f, 8000.0f, {1, 0, 0}};
    e.start(1, std::make_unique<ImpulseVoice>(), s);
    e.commit();
    return toMono(renderBlocks(e, 40), 2);
  };
  auto with = render(true), without = render(false);
  // 50 ms after the direct sound: the slap (window 40..60 ms).
  auto window = [](const std::vector<float>& m) {
    return rms(std::span<const float>(m).subspan(kSampleRate * 40 / 1000, kSampleRate * 20 / 1000));
  };
  MESSAGE("reflection window rms: impulsive ", window(with), ", not ", window(without));
  CHECK(window(with) > 1e-3);
  CHECK(window(without) == 0.0);
}

TEST_CASE("hrtf table: nearest() gives the set's filters of the grid direction; front and back differ") {
  std::string error;
  const HrtfTable* table = defaultHrtfTable(&error);
  REQUIRE_MESSAGE(table != nullptr, error);
  auto set = HrtfSet::open();
  REQUIRE(set != nullptr);
  REQUIRE(table->taps() == set->taps());
  CHECK(table->size() == 72 * 14);
  CHECK(defaultHrtfTable() == table);  // one per process
  auto grid = [](float azDeg, float elDeg) {
    float az = azDeg * kPi / 180, el = elDeg * kPi / 180;
    return HeadDirection{std::cos(el) * std::cos(az), std::cos(el) * std::sin(az), std::sin(el)};
  };
  std::vector<float> l(static_cast<std::size_t>(set->taps())), r(l.size());
  struct Case {
    float az, el, gridAz, gridEl;
  };
  for (Case c : {Case{33, 12, 35, 10}, Case{-91, -3, 270, 0}, Case{178, 44, 180, 40}, Case{0, 0, 0, 0}, Case{10, 88, 10, 90}}) {
    int i = table->nearest(grid(c.az, c.el));
    set->filters(grid(c.gridAz, c.gridEl), l.data(), r.data());
    float maxDiff = 0;
    for (std::size_t k = 0; k < l.size(); ++k)
      maxDiff = std::max({maxDiff, std::fabs(table->left(i)[k] - l[k]), std::fabs(table->right(i)[k] - r[k])});
    CHECK_MESSAGE(maxDiff < 1e-5f, "direction az ", c.az, " el ", c.el);
  }
  CHECK(table->nearest({0, 0, 0}) == table->nearest({1, 0, 0}));  // zero: ahead
  int front = table->nearest({1, 0, 0}), back = table->nearest({-1, 0, 0});
  CHECK(front != back);
  double diff = 0, energy = 0;
  for (int k = 0; k < table->taps(); ++k) {
    diff += std::pow(table->left(front)[k] - table->left(back)[k], 2.0f);
    energy += std::pow(table->left(front)[k], 2.0f);
  }
  CHECK(diff > 0.05 * energy);
}

TEST_CASE("binaural: a source on the right is louder on the right; front and back differ in spectrum") {
  auto render = [](Vec3f p, int blocks = 60) {
    AudioEngine e;  // binaural by default
    e.setListener({{0, 0, 0}, 0.0f});
    e.start(1, std::make_unique<NoiseVoice>(11), at(p.x, p.y, p.z));
    e.commit();
    auto out = renderBlocks(e, blocks);
    CHECK(e.stats().binaural);
    CHECK(e.stats().binauralVoices == 1);
    return out;
  };
  REQUIRE(defaultHrtfTable() != nullptr);
  auto right = render({5, 0, 0});  // east, listener facing north: +90 degrees right
  double l = rms(channel(right, 0)), r = rms(channel(right, 1));
  MESSAGE("source at +90 deg: right - left = ", 20 * std::log10(r / l), " dB");
  CHECK(20 * std::log10(r / l) > 6.0);
  auto front = toMono(render({0, 0, -5}), 2), back = toMono(render({0, 0, 5}), 2);
  // Compare band shares over a few octaves above 2 kHz (pinna cues).
  double maxDb = 0;
  for (double lo : {1000.0, 2000.0, 4000.0, 8000.0}) {
    double f = bandShare(front, kSampleRate, lo, 2 * lo), b = bandShare(back, kSampleRate, lo, 2 * lo);
    maxDb = std::max(maxDb, std::fabs(10 * std::log10(f / b)));
  }
  MESSAGE("front vs back: largest octave-band difference ", maxDb, " dB");
  CHECK(maxDb > 1.0);
}

TEST_CASE("speakers mode pans and reports no binaural; so do wide and ambient sources") {
  EngineConfig cfg;
  cfg.spatial = Spatialisation::Speakers;
  AudioEngine e(cfg);
  e.setListener({});
  e.start(1, std::make_unique<SineVoice>(300.0f, 0.3f, nullptr), at(5, 0, 0));
  e.commit();
  auto out = renderBlocks(e, 20);
  CHECK(rms(channel(out, 1)) > 4 * rms(channel(out, 0)));
  CHECK_FALSE(e.stats().binaural);
  CHECK(e.stats().binauralVoices == 0);

  AudioEngine b;  // binaural, but these sources are not points
  b.setListener({});
  EmitterState wide = at(5, 0, 0);
  wide.width = 0.8f;
  EmitterState amb = at(-5, 0, 0);
  amb.ambient = true;
  b.start(1, std::make_unique<SineVoice>(300.0f, 0.3f, nullptr), wide);
  b.start(2, std::make_unique<SineVoice>(500.0f, 0.3f, nullptr), amb);
  b.commit();
  renderBlocks(b, 4);
  CHECK(b.stats().binaural);
  CHECK(b.stats().realVoices == 2);
  CHECK(b.stats().binauralVoices == 0);
}

TEST_CASE("only the loudest point sources get the HRTF; moving between HRTF and pan does not click") {
  EngineConfig cfg;
  cfg.binauralVoices = 2;
  AudioEngine e(cfg);
  e.setListener({});
  // Three quiet-ish sines; the third gets louder and takes a place.
  e.start(1, std::make_unique<SineVoice>(200.0f, 0.2f, nullptr), at(2, 0, -2));
  e.start(2, std::make_unique<SineVoice>(250.0f, 0.2f, nullptr), at(-2, 0, -2));
  e.start(3, std::make_unique<SineVoice>(300.0f, 0.2f, nullptr), at(0, 0, -2, 0.3f));
  e.commit();
  auto a = renderBlocks(e, 10);
  CHECK(e.stats().realVoices == 3);
  CHECK(e.stats().binauralVoices == 2);
  e.update(3, at(0, 0, -2, 1.0f));
  e.update(1, at(2, 0, -2, 0.1f));
  e.commit();
  auto b = renderBlocks(e, 10);
  CHECK(e.stats().binauralVoices == 2);
  std::vector<float> all(a);
  all.insert(all.end(), b.begin(), b.end());
  // Sines below 300 Hz at these levels step by < 0.02 per sample; a click would jump.
  float step = std::max(maxStep(channel(all, 0)), maxStep(channel(all, 1)));
  MESSAGE("largest sample step across the swap: ", step);
  CHECK(step < 0.03f);
}

TEST_CASE("a continuous voice made virtual at level 0 becomes real when its params rise") {
  EngineConfig cfg = dry();
  AudioEngine e(cfg);
  e.setListener({});
  SynthParams quiet;  // speed 0: silent wind
  quiet.v = {0, 0, 1, 0, 0, 0};
  EmitterState s = at(0, 0, -3);
  s.params = quiet;
  e.start(1, makeWind(WindCover::Grass, 7), s);
  e.commit();
  renderBlocks(e, 20);
  CHECK(e.stats().realVoices == 0);
  CHECK(e.stats().virtualVoices == 1);
  s.params.v = {14, 0.3f, 1, 0, 0, 0};  // a strong wind, same gain and priority
  e.update(1, s);
  e.commit();
  auto out = renderBlocks(e, 200);  // ~1 s: the smoothers follow while virtual
  CHECK(e.stats().realVoices == 1);
  CHECK(rms(std::span<const float>(out).last(out.size() / 4)) > 1e-3);
}

/// A cost measurement over `blocks` blocks of `voices` noise voices spread round the
/// listener (every third impulsive, all sending to the reverb): microseconds per block.
double blockCost(EngineConfig cfg, int voices, int* binaural, int turnEvery = 8) {
  cfg.realVoices = voices;
  AudioEngine e(cfg);
  e.setListener({});
  RoomAcoustics room;
  room.meanFreePath = 5.0f;
  room.rt60 = {1.2f, 1.0f, 0.7f};
  room.reverbGain = 0.8f;
  e.setRoom(room);
  for (int k = 0; k < voices; ++k) {
    float a = 2.0f * kPi * static_cast<float>(k) / static_cast<float>(voices);
    EmitterState s = at(4 * std::cos(a), 0, 4 * std::sin(a));
    s.bands = {1.0f, 0.7f, 0.4f};
    s.reverbSend = 0.5f;
    s.impulsive = k % 3 == 0;
    s.tapCount = s.impulsive ? kMaxReflectionTaps : 0;
    for (int i = 0; i < s.tapCount; ++i)
      s.taps[static_cast<std::size_t>(i)] = {0.01f * static_cast<float>(i + 1), -0.3f, 6000.0f,
                                             {std::cos(static_cast<float>(i)), 0, std::sin(static_cast<float>(i))}};
    e.start(static_cast<EmitterId>(k + 1), std::make_unique<NoiseVoice>(static_cast<std::uint64_t>(k)), s);
  }
  e.commit();
  float block[2 * kBlockFrames];
  for (int b = 0; b < 8; ++b) e.renderBlock(block);
  std::clock_t cpu = 0;
  const int blocks = 300;
  for (int b = 0; b < blocks; ++b) {
    if (b % turnEvery == 0) {  // the listener turns: the HRTF filters change and crossfade
      e.setListener({{0, 0, 0}, 0.1f * static_cast<float>(b)});
      e.commit();
    }
    std::clock_t t0 = std::clock();
    e.renderBlock(block);
    cpu += std::clock() - t0;
  }
  if (binaural) *binaural = e.stats().binauralVoices;
  return static_cast<double>(cpu) * 1e6 / CLOCKS_PER_SEC / blocks;
}

TEST_CASE("mix cost with 64 real voices (report only)") {
  AudioEngine e(dry());
  e.setListener({});
  float block[2 * kBlockFrames];
  std::uint64_t next = 0;
  auto refill = [&] {
    while (e.stats().emitters < 64 || next < 64) {
      auto k = next++;
      e.start(k, makeFootstep({k % 2 ? sim::SoundClass::Gravel : sim::SoundClass::Stone, Gait::Walk, 1.4f, k}),
              at(static_cast<float>(k % 9) - 4.0f, 0, -3));
      if (next % 64 == 0) break;
    }
    e.commit();
  };
  refill();
  e.renderBlock(block);
  std::clock_t cpu = 0;
  int blocks = 0, realSum = 0;
  for (; blocks < 400; ++blocks) {
    if (blocks % 4 == 0) refill();
    std::clock_t t0 = std::clock();
    e.renderBlock(block);
    cpu += std::clock() - t0;
    realSum += e.stats().realVoices;
  }
  double usPerBlock = static_cast<double>(cpu) * 1e6 / CLOCKS_PER_SEC / blocks;
  MESSAGE("engine: ", usPerBlock, " us per block with ", static_cast<double>(realSum) / blocks, " real voices on average (",
          100.0 * usPerBlock / (1e6 * kBlockFrames / kSampleRate), " % of a core)");
  CHECK(realSum > 0);

  // The acoustic mix: 64 noise voices (band filter, sends), reverb and reflections,
  // with 0 / 16 / 64 of them through the HRTF.
  for (int bin : {0, 8, 16, 64}) {
    EngineConfig cfg;
    cfg.binauralVoices = bin;
    int used = 0;
    double us = blockCost(cfg, 64, &used);
    MESSAGE("acoustic mix, 64 real voices, ", used, " binaural: ", us, " us per 256-frame block (",
            100.0 * us / (1e6 * kBlockFrames / kSampleRate), " % of a core)");
    CHECK(used == std::min(bin, 64));
  }
  {
    EngineConfig cfg;
    int used = 0;
    double us = blockCost(cfg, 64, &used, 1);
    MESSAGE("acoustic mix, 64 real voices, ", used, " binaural, turning every block (every HRTF crossfading): ", us,
            " us per block");
  }
  EngineConfig dryCfg = dry();
  MESSAGE("dry mix, 64 noise voices: ", blockCost(dryCfg, 64, nullptr), " us per block");
}

}  // namespace
}  // namespace loam::audio
