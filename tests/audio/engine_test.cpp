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
#include <thread>
#include <vector>

#include "audio/models.h"
#include "audio/spectrum.h"

// ---- allocation counter (this test binary only) ----------------------------------
// These replace the global operators for the whole binary, so malloc/free pair up;
// GCC cannot see that once std::allocator inlines them and warns wrongly.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
namespace {
std::atomic<bool> gCountAllocs{false};
std::atomic<long> gAllocs{0};
}  // namespace

void* operator new(std::size_t n) {
  if (gCountAllocs.load(std::memory_order_relaxed)) gAllocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

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
  AudioEngine e;
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
    AudioEngine e;
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
  AudioEngine e;
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
    AudioEngine e;
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
    AudioEngine e;
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
  EngineConfig cfg;
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
  EngineConfig cfg;
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
  AudioEngine e;
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
  EngineConfig cfg;
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
  AudioEngine e;
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
  AudioEngine e;
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
  EngineConfig cfg;
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
  EngineConfig cfg;
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
  AudioEngine e;
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
  EngineConfig cfg;
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

/// A busy little scene driven from the control side, identical on every call.
std::vector<float> scriptedRender(bool countAllocs, long* allocs) {
  EngineConfig cfg;
  cfg.realVoices = 8;
  AudioEngine e(cfg);
  std::vector<float> out, block(2 * kBlockFrames);
  for (int b = 0; b < 400; ++b) {
    if (b % 4 == 0) {  // control update
      float t = static_cast<float>(b) * kBlockFrames / kSampleRate;
      e.setListener({{std::sin(t), 1.7f, 0}, 0.3f * t});
      auto k = static_cast<std::uint64_t>(b);
      e.start(emitterId(EmitterKind::Impact, k), makeImpact({sim::SoundClass::Stone, 0.1f + 0.01f * static_cast<float>(b % 30), 2.0f, 6.0f, k}),
              at(static_cast<float>(b % 7) - 3.0f, 0, -4));
      e.start(emitterId(EmitterKind::Footstep, k), makeFootstep({b % 8 == 0 ? sim::SoundClass::Gravel : sim::SoundClass::Grass, Gait::Walk, 1.4f, k}),
              at(0, 0, 0));
      if (b % 40 == 0) e.start(emitterId(EmitterKind::Fracture, k), makeFracture({sim::SoundClass::Stone, 64, k}), at(3, 0, -3));
      if (b % 40 == 8) e.start(emitterId(EmitterKind::Dig, k), makeDig({sim::SoundClass::Soil, 16, k}), at(-2, 0, -3));
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

TEST_CASE("renderBlock does not allocate") {
  gAllocs = 0;
  long allocs = -1;
  auto out = scriptedRender(true, &allocs);
  CHECK(rms(out) > 0.001);
  CHECK(allocs == 0);
}

TEST_CASE("the same inputs give identical samples") {
  auto a = scriptedRender(false, nullptr);
  auto b = scriptedRender(false, nullptr);
  REQUIRE(a.size() == b.size());
  CHECK(std::equal(a.begin(), a.end(), b.begin(), [](float x, float y) {
    return std::bit_cast<std::uint32_t>(x) == std::bit_cast<std::uint32_t>(y);
  }));
}

TEST_CASE("mix cost with 64 real voices (report only)") {
  AudioEngine e;
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
}

}  // namespace
}  // namespace loam::audio
