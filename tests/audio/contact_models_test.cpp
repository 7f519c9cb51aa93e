// Contact models (impact, footstep, dig, fracture): physics checked by measurement
// on rendered samples, per-instance variation, repeatability, ends.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <ctime>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "audio/dsp.h"
#include "audio/models.h"
#include "audio/spectrum.h"

namespace loam::audio {
namespace {

using sim::SoundClass;

struct Rendered {
  std::vector<float> samples;
  bool ended = false;
};

/// Renders a one-shot until it ends (or maxSeconds).
Rendered renderVoice(Voice& v, double maxSeconds = 6.0) {
  Rendered r;
  SynthParams p;
  float block[kBlockFrames];
  auto maxBlocks = static_cast<int>(maxSeconds * kSampleRate / kBlockFrames);
  for (int b = 0; b < maxBlocks; ++b) {
    bool more = v.render(block, kBlockFrames, p);
    r.samples.insert(r.samples.end(), block, block + kBlockFrames);
    if (!more) {
      r.ended = true;
      break;
    }
  }
  return r;
}
Rendered renderVoice(std::unique_ptr<Voice> v, double maxSeconds = 6.0) { return renderVoice(*v, maxSeconds); }

double peak(const std::vector<float>& x) {
  float m = 0;
  for (float s : x) m = std::max(m, std::fabs(s));
  return m;
}

bool bitEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](float x, float y) {
           return std::bit_cast<std::uint32_t>(x) == std::bit_cast<std::uint32_t>(y);
         });
}

TEST_CASE("a larger block rings lower (spectral centroid), same class") {
  for (SoundClass c : {SoundClass::Stone, SoundClass::Wood, SoundClass::Metal, SoundClass::Glass, SoundClass::Soil}) {
    CAPTURE(static_cast<int>(c));
    auto big = renderVoice(makeImpact({c, 0.4f, 2.0f, 5.0f, 11}));
    auto small = renderVoice(makeImpact({c, 0.05f, 2.0f, 5.0f, 11}));
    double cb = spectralCentroid(big.samples, kSampleRate), cs = spectralCentroid(small.samples, kSampleRate);
    MESSAGE("class ", static_cast<int>(c), " centroid 40 cm ", cb, " Hz, 5 cm ", cs, " Hz");
    CHECK(cb < 0.7 * cs);
    // Bigger also rings longer.
    CHECK(big.samples.size() >= small.samples.size());
  }
}

TEST_CASE("a stone fracture is noisier (spectral flatness) than a stone knock") {
  auto knock = renderVoice(makeImpact({SoundClass::Stone, 0.2f, 2.0f, 6.0f, 5}));
  auto crack = renderVoice(makeFracture({SoundClass::Stone, 64, 5}));
  double fk = spectralFlatness(knock.samples, kSampleRate), ff = spectralFlatness(crack.samples, kSampleRate);
  MESSAGE("flatness knock ", fk, ", fracture ", ff);
  CHECK(ff > 2.0 * fk);
  CHECK(ff > 0.1);
  // Gravel breaks like stone.
  auto gravel = renderVoice(makeFracture({SoundClass::Gravel, 64, 5}));
  CHECK(spectralFlatness(gravel.samples, kSampleRate) > 2.0 * fk);
}

TEST_CASE("glass shatters brighter and rings more than stone breaks") {
  auto glass = renderVoice(makeFracture({SoundClass::Glass, 64, 8}));
  auto stone = renderVoice(makeFracture({SoundClass::Stone, 64, 8}));
  double g = bandShare(glass.samples, kSampleRate, 3000, 16000), s = bandShare(stone.samples, kSampleRate, 3000, 16000);
  MESSAGE("share above 3 kHz: glass ", g, ", stone ", s);
  CHECK(g > s);
  CHECK(spectralFlatness(glass.samples, kSampleRate) < spectralFlatness(stone.samples, kSampleRate));
}

TEST_CASE("a bigger fracture lasts longer") {
  auto small = renderVoice(makeFracture({SoundClass::Stone, 4, 3}));
  auto big = renderVoice(makeFracture({SoundClass::Stone, 512, 3}));
  REQUIRE(small.ended);
  REQUIRE(big.ended);
  CHECK(big.samples.size() > small.samples.size() * 3 / 2);
}

TEST_CASE("a faster impact is louder") {
  for (SoundClass c : {SoundClass::Stone, SoundClass::Wood, SoundClass::Grass}) {
    CAPTURE(static_cast<int>(c));
    auto slow = renderVoice(makeImpact({c, 0.2f, 1.0f, 5.0f, 2}));
    auto fast = renderVoice(makeImpact({c, 0.2f, 4.0f, 5.0f, 2}));
    CHECK(peak(fast.samples) > 2.0 * peak(slow.samples));
    CHECK(rms(fast.samples) > 2.0 * rms(slow.samples));
  }
}

TEST_CASE("harder strikes are brighter") {
  auto soft = renderVoice(makeImpact({SoundClass::Wood, 0.2f, 2.0f, 0.5f, 4}));
  auto hard = renderVoice(makeImpact({SoundClass::Wood, 0.2f, 2.0f, 9.0f, 4}));
  CHECK(spectralCentroid(hard.samples, kSampleRate) > spectralCentroid(soft.samples, kSampleRate));
}

TEST_CASE("keys vary instances; the same key repeats bit-exactly") {
  auto check = [](auto make) {
    auto a = renderVoice(make(1)), b = renderVoice(make(2)), a2 = renderVoice(make(1));
    CHECK(bitEqual(a.samples, a2.samples));
    CHECK_FALSE(bitEqual(a.samples, b.samples));
    CHECK(rms(a.samples) > 1e-4);
  };
  check([](std::uint64_t k) { return makeImpact({SoundClass::Stone, 0.2f, 2.0f, 6.0f, k}); });
  check([](std::uint64_t k) { return makeFootstep({SoundClass::Gravel, Gait::Walk, 1.4f, k}); });
  check([](std::uint64_t k) { return makeDig({SoundClass::Soil, 8, k}); });
  check([](std::uint64_t k) { return makeFracture({SoundClass::Stone, 64, k}); });
  check([](std::uint64_t k) { return makeFracture({SoundClass::Glass, 64, k}); });
}

TEST_CASE("footsteps: gravel and grass differ in centroid; gaits differ") {
  auto centroid = [](SoundClass c, Gait g, float speed) {
    double sum = 0;
    for (std::uint64_t k = 0; k < 4; ++k) sum += spectralCentroid(renderVoice(makeFootstep({c, g, speed, k})).samples, kSampleRate);
    return sum / 4;
  };
  double gravel = centroid(SoundClass::Gravel, Gait::Walk, 1.4f), grass = centroid(SoundClass::Grass, Gait::Walk, 1.4f);
  MESSAGE("walk centroid gravel ", gravel, " Hz, grass ", grass, " Hz");
  CHECK(std::fabs(gravel - grass) > 0.2 * std::min(gravel, grass));
  for (SoundClass c : {SoundClass::Soil, SoundClass::Sand, SoundClass::Stone, SoundClass::Wood, SoundClass::Foliage, SoundClass::Water}) {
    MESSAGE("walk centroid class ", static_cast<int>(c), ": ", centroid(c, Gait::Walk, 1.4f), " Hz");
  }
  // A run step is shorter than a walk step; a hard landing is louder than a walk.
  auto walk = renderVoice(makeFootstep({SoundClass::Soil, Gait::Walk, 1.4f, 3}));
  auto run = renderVoice(makeFootstep({SoundClass::Soil, Gait::Run, 3.5f, 3}));
  auto land = renderVoice(makeFootstep({SoundClass::Soil, Gait::Land, 8.0f, 3}));
  CHECK(run.samples.size() < walk.samples.size());
  CHECK(peak(land.samples) > peak(walk.samples));
}

TEST_CASE("digs: more voxels, longer loosening") {
  auto small = renderVoice(makeDig({SoundClass::Soil, 2, 6}));
  auto big = renderVoice(makeDig({SoundClass::Soil, 200, 6}));
  CHECK(big.samples.size() > small.samples.size());
  CHECK(rms(small.samples) > 1e-3);
}

TEST_CASE("every contact voice ends in finite time, rendered or skipped") {
  std::vector<std::unique_ptr<Voice>> voices;
  for (int c = 0; c < static_cast<int>(SoundClass::Count); ++c) {
    auto sc = static_cast<SoundClass>(c);
    voices.push_back(makeImpact({sc, 0.4f, 3.0f, 5.0f, 1}));
    voices.push_back(makeFootstep({sc, Gait::Walk, 1.4f, 1}));
    voices.push_back(makeFootstep({sc, Gait::Land, 6.0f, 1}));
    voices.push_back(makeDig({sc, 64, 1}));
  }
  voices.push_back(makeFracture({SoundClass::Stone, 4096, 1}));
  voices.push_back(makeFracture({SoundClass::Glass, 4096, 1}));
  for (auto& v : voices) CHECK(renderVoice(*v, 8.0).ended);

  auto skipLength = [](std::unique_ptr<Voice> v) {
    int blocks = 0;
    while (v->skip(kBlockFrames, SynthParams{}) && blocks < 10000) ++blocks;
    return blocks;
  };
  CHECK(skipLength(makeImpact({SoundClass::Metal, 0.4f, 3.0f, 5.0f, 1})) < 1000);
  CHECK(skipLength(makeFracture({SoundClass::Glass, 4096, 1})) < 1000);
  CHECK(skipLength(makeFootstep({SoundClass::Gravel, Gait::Run, 3.0f, 1})) < 1000);
  CHECK(skipLength(makeDig({SoundClass::Sand, 64, 1})) < 1000);
}

TEST_CASE("a voice resumed after skipping keeps its timeline") {
  // Skipping the first 50 ms of a step, then rendering, still hears the toe push-off
  // and ends no later than rendering throughout.
  auto whole = renderVoice(makeFootstep({SoundClass::Gravel, Gait::Walk, 1.4f, 9}));
  auto v = makeFootstep({SoundClass::Gravel, Gait::Walk, 1.4f, 9});
  int skipped = 0;
  for (; skipped < 10; ++skipped) v->skip(kBlockFrames, SynthParams{});
  auto rest = renderVoice(*v);
  CHECK(rest.ended);
  CHECK(rest.samples.size() + static_cast<std::size_t>(skipped * kBlockFrames) <= whole.samples.size() + kBlockFrames);
  CHECK(rms(rest.samples) > 1e-4);
}

TEST_CASE("levels of typical contact sounds (report only)") {
  auto report = [](std::string name, std::unique_ptr<Voice> v) {
    auto r = renderVoice(std::move(v));
    MESSAGE(name, ": peak ", peak(r.samples), ", rms ", rms(r.samples), ", ", static_cast<double>(r.samples.size()) / kSampleRate, " s");
    CHECK(peak(r.samples) < 1.0);
  };
  report("impact stone 20 cm 2 m/s", makeImpact({SoundClass::Stone, 0.2f, 2.0f, 6.0f, 1}));
  report("impact stone 40 cm 5 m/s", makeImpact({SoundClass::Stone, 0.4f, 5.0f, 6.0f, 1}));
  report("impact metal 20 cm 2 m/s", makeImpact({SoundClass::Metal, 0.2f, 2.0f, 8.0f, 1}));
  report("impact glass 10 cm 2 m/s", makeImpact({SoundClass::Glass, 0.1f, 2.0f, 7.0f, 1}));
  report("impact wood 20 cm 2 m/s", makeImpact({SoundClass::Wood, 0.2f, 2.0f, 4.0f, 1}));
  report("impact soil 20 cm 2 m/s", makeImpact({SoundClass::Soil, 0.2f, 2.0f, 1.5f, 1}));
  report("walk grass", makeFootstep({SoundClass::Grass, Gait::Walk, 1.4f, 1}));
  report("walk gravel", makeFootstep({SoundClass::Gravel, Gait::Walk, 1.4f, 1}));
  report("walk stone", makeFootstep({SoundClass::Stone, Gait::Walk, 1.4f, 1}));
  report("run wood", makeFootstep({SoundClass::Wood, Gait::Run, 3.5f, 1}));
  report("land sand 6 m/s", makeFootstep({SoundClass::Sand, Gait::Land, 6.0f, 1}));
  report("walk water", makeFootstep({SoundClass::Water, Gait::Walk, 1.4f, 1}));
  report("dig soil 8", makeDig({SoundClass::Soil, 8, 1}));
  report("dig gravel 64", makeDig({SoundClass::Gravel, 64, 1}));
  report("fracture stone 64", makeFracture({SoundClass::Stone, 64, 1}));
  report("fracture stone 4096", makeFracture({SoundClass::Stone, 4096, 1}));
  report("fracture glass 64", makeFracture({SoundClass::Glass, 64, 1}));
}

TEST_CASE("cost per voice (report only)") {
  auto time = [](std::string name, auto make) {
    float block[kBlockFrames];
    SynthParams p;
    long samples = 0;
    // Process CPU time, not wall time: the machine may be shared.
    std::clock_t t0 = std::clock();
    for (std::uint64_t k = 0; samples < 10 * kSampleRate; ++k) {
      auto v = make(k);
      while (v->render(block, kBlockFrames, p)) samples += kBlockFrames;
      samples += kBlockFrames;
    }
    double ns = static_cast<double>(std::clock() - t0) * 1e9 / CLOCKS_PER_SEC / static_cast<double>(samples);
    MESSAGE(name, ": ", ns, " ns per sample (", ns * kSampleRate / 1e7, " % of a core per voice at 48 kHz)");
    CHECK(ns > 0);
  };
  time("impact stone", [](std::uint64_t k) { return makeImpact({SoundClass::Stone, 0.2f, 2.0f, 6.0f, k}); });
  time("impact metal", [](std::uint64_t k) { return makeImpact({SoundClass::Metal, 0.2f, 2.0f, 6.0f, k}); });
  time("footstep gravel walk", [](std::uint64_t k) { return makeFootstep({SoundClass::Gravel, Gait::Walk, 1.4f, k}); });
  time("dig soil", [](std::uint64_t k) { return makeDig({SoundClass::Soil, 32, k}); });
  time("fracture stone", [](std::uint64_t k) { return makeFracture({SoundClass::Stone, 64, k}); });
  time("fracture glass", [](std::uint64_t k) { return makeFracture({SoundClass::Glass, 64, k}); });
}

}  // namespace
}  // namespace loam::audio
