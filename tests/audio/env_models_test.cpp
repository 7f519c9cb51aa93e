// Environment synthesis models (wind, rain, fire, water, creatures, beds): the
// physics each should show, measured on rendered samples (audio/spectrum.h), plus
// determinism, finiteness and headroom.
#include <doctest/doctest.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>
#include "audio/dsp.h"
#include "audio/models.h"
#include "audio/spectrum.h"

using namespace loam::audio;

namespace {

SynthParams params(float a, float b = 0, float c = 0) {
  SynthParams p;
  p.v[0] = a;
  p.v[1] = b;
  p.v[2] = c;
  return p;
}

struct Render {
  std::vector<float> samples;
  int endedAt = -1;  ///< frame index of the block where render() returned false
};

/// Renders `seconds` in blocks of `block` frames (a one-shot that ends is padded
/// with zeros).
Render render(Voice& v, const SynthParams& p, float seconds, int block = kBlockFrames) {
  Render r;
  int total = static_cast<int>(seconds * kSampleRate);
  r.samples.assign(static_cast<std::size_t>(total), 0.0f);
  for (int i = 0; i < total; i += block) {
    int n = std::min(block, total - i);
    if (!v.render(r.samples.data() + i, n, p)) {
      r.endedAt = i;
      break;
    }
  }
  return r;
}

/// Drops the first `seconds` (parameter smoothing settling in).
std::vector<float> settled(const std::vector<float>& s, float seconds = 0.5f) {
  auto skip = static_cast<std::size_t>(seconds * kSampleRate);
  return {s.begin() + static_cast<std::ptrdiff_t>(std::min(skip, s.size())), s.end()};
}

double centroidOf(Voice& v, const SynthParams& p, float seconds = 3.0f) {
  return spectralCentroid(settled(render(v, p, seconds).samples), kSampleRate);
}
double rmsOf(Voice& v, const SynthParams& p, float seconds = 3.0f) {
  return rms(settled(render(v, p, seconds).samples));
}

float peakOf(const std::vector<float>& s) {
  float pk = 0;
  for (float x : s) pk = std::max(pk, std::fabs(x));
  return pk;
}
bool allFinite(const std::vector<float>& s) {
  return std::all_of(s.begin(), s.end(), [](float x) { return std::isfinite(x); });
}

}  // namespace

TEST_CASE("wind in leaves is brighter than wind in grass") {
  for (float speed : {3.0f, 8.0f, 14.0f}) {
    auto grass = makeWind(WindCover::Grass, 11);
    auto leaves = makeWind(WindCover::Leaves, 11);
    double cg = centroidOf(*grass, params(speed, 0.2f, 1.0f));
    double cl = centroidOf(*leaves, params(speed, 0.2f, 1.0f));
    INFO("speed " << speed << " grass " << cg << " Hz, leaves " << cl << " Hz");
    CHECK(cl > 1.8 * cg);
    CHECK(cg > 800.0);  // grass still rustles (kHz band), not a low roar
  }
}

TEST_CASE("stronger wind is louder, for every cover") {
  for (int c = 0; c < 4; ++c) {
    double prev = 0;
    for (float speed : {3.0f, 7.0f, 12.0f, 18.0f}) {
      auto wind = makeWind(static_cast<WindCover>(c), 21);
      double level = rmsOf(*wind, params(speed, 0.2f, 1.0f));
      INFO("cover " << c << " speed " << speed << " rms " << level << " (previous " << prev << ")");
      CHECK(level > 1.25 * prev);
      prev = level;
    }
  }
}

TEST_CASE("gusts swell the wind; open wind is a low roar; edges whistle higher in stronger wind") {
  auto calm = makeWind(WindCover::Grass, 5);
  auto gusty = makeWind(WindCover::Grass, 5);
  CHECK(rmsOf(*gusty, params(8.0f, 1.0f, 1.0f)) > 1.2 * rmsOf(*calm, params(8.0f, 0.0f, 1.0f)));

  auto open = makeWind(WindCover::Open, 5);
  CHECK(centroidOf(*open, params(8.0f, 0.2f)) < 600.0);

  // The whistle's band (~220 + 75 v Hz) moves up with speed.
  auto slow = makeWind(WindCover::Edge, 5);
  auto fast = makeWind(WindCover::Edge, 5);
  auto s = settled(render(*slow, params(8.0f, 0.0f, 1.0f), 3.0f).samples);
  auto f = settled(render(*fast, params(16.0f, 0.0f, 1.0f), 3.0f).samples);
  CHECK(bandShare(s, kSampleRate, 650, 950) > 3.0 * bandShare(f, kSampleRate, 650, 950));
  CHECK(bandShare(f, kSampleRate, 1200, 1700) > 3.0 * bandShare(s, kSampleRate, 1200, 1700));
}

TEST_CASE("rain on water and rain on stone differ in centroid; surfaces have their own colour") {
  auto water = makeRain(RainSurface::Water, 3);
  auto stone = makeRain(RainSurface::Stone, 3);
  auto wood = makeRain(RainSurface::Wood, 3);
  auto soil = makeRain(RainSurface::Soil, 3);
  double cw = centroidOf(*water, params(300.0f));
  double cs = centroidOf(*stone, params(300.0f));
  double cwood = centroidOf(*wood, params(300.0f));
  double csoil = centroidOf(*soil, params(300.0f));
  INFO("water " << cw << " stone " << cs << " wood " << cwood << " soil " << csoil);
  CHECK(cs > 2.0 * cw);
  CHECK(cw > 1000.0);  // bubbles: the Minnaert band
  CHECK(cwood < 1200.0);
  CHECK(csoil < cwood);

  // More drops, more sound.
  auto light = makeRain(RainSurface::Leaves, 4);
  auto heavy = makeRain(RainSurface::Leaves, 4);
  CHECK(rmsOf(*heavy, params(1000.0f)) > 1.5 * rmsOf(*light, params(100.0f)));
  auto dry = makeRain(RainSurface::Stone, 4);
  CHECK(rmsOf(*dry, params(0.0f)) < 1e-6);

  auto bedLow = makeRainBed(1);
  auto bedHigh = makeRainBed(1);
  CHECK(rmsOf(*bedHigh, params(1.0f)) > 2.0 * rmsOf(*bedLow, params(0.2f)));
}

TEST_CASE("fire loudness rises with the number of burning cells") {
  double prev = 0;
  for (float cells : {1.0f, 10.0f, 50.0f}) {
    auto fire = makeFire(77);
    double level = rmsOf(*fire, params(cells, 0.7f), 4.0f);
    INFO("cells " << cells << " rms " << level << " (previous " << prev << ")");
    CHECK(level > 1.5 * prev);
    prev = level;
  }
  auto hot = makeFire(77);
  auto cool = makeFire(77);
  CHECK(rmsOf(*hot, params(20.0f, 1.0f)) > 1.3 * rmsOf(*cool, params(20.0f, 0.2f)));
}

TEST_CASE("an extinguish hiss ends within 3 s, also when virtual") {
  for (float strength : {0.2f, 1.0f, 2.0f}) {
    auto hiss = makeHiss(strength, 9);
    Render r = render(*hiss, params(0), 4.0f);
    INFO("strength " << strength);
    REQUIRE(r.endedAt >= 0);
    CHECK(r.endedAt < 3 * kSampleRate);
    CHECK(rms({r.samples.data(), static_cast<std::size_t>(kSampleRate / 4)}) > 0.01);
    CHECK(centroidOf(*makeHiss(strength, 9), params(0), 1.0f) > 3000.0);

    auto skipped = makeHiss(strength, 9);
    int frames = 0;
    while (skipped->skip(kBlockFrames, params(0)) && frames < 10 * kSampleRate) frames += kBlockFrames;
    CHECK(frames < 3 * kSampleRate);
  }
}

TEST_CASE("creature calls vary with the key and repeat bit-exactly for the same key") {
  for (int c = 0; c < 4; ++c) {
    auto call = static_cast<CreatureCall>(c);
    auto a = makeCreatureCall(call, 100);
    auto a2 = makeCreatureCall(call, 100);
    auto b = makeCreatureCall(call, 101);
    Render ra = render(*a, params(0), 6.0f);
    Render ra2 = render(*a2, params(0), 6.0f, 100);  // other block size: same samples
    Render rb = render(*b, params(0), 6.0f);
    INFO("call " << c);
    CHECK(ra.samples == ra2.samples);
    CHECK(ra.samples != rb.samples);
    CHECK(ra.endedAt >= 0);  // one-shots end
    CHECK(rms(ra.samples) > 0.002);
    // Another animal (the key's high 32 bits) making "the same" call sounds different.
    auto other = makeCreatureCall(call, (std::uint64_t{2} << 32) | 100);
    CHECK(render(*other, params(0), 6.0f).samples != ra.samples);
  }
  // Birds sing high, foxes in between, dogs low.
  auto bird = makeCreatureCall(CreatureCall::BirdSong, 7);
  auto fox = makeCreatureCall(CreatureCall::FoxBark, 7);
  auto dog = makeCreatureCall(CreatureCall::DogBark, 7);
  double cb = spectralCentroid(render(*bird, params(0), 5.0f).samples, kSampleRate);
  double cf = spectralCentroid(render(*fox, params(0), 5.0f).samples, kSampleRate);
  double cd = spectralCentroid(render(*dog, params(0), 5.0f).samples, kSampleRate);
  INFO("bird " << cb << " fox " << cf << " dog " << cd);
  CHECK(cb > 2500.0);
  CHECK(cb > cf);
  CHECK(cf > cd);
}

TEST_CASE("a waterfall is louder than a stream at equal flow; a higher fall is louder and deeper") {
  for (float flow : {0.3f, 0.7f, 1.0f}) {
    auto fall = makeWater(WaterKind::Waterfall, 2);
    auto stream = makeWater(WaterKind::Stream, 2);
    double lf = rmsOf(*fall, params(flow, 6.0f));
    double ls = rmsOf(*stream, params(flow, 6.0f));
    INFO("flow " << flow << " waterfall " << lf << " stream " << ls);
    CHECK(lf > 1.5 * ls);
  }
  auto low = makeWater(WaterKind::Waterfall, 2);
  auto high = makeWater(WaterKind::Waterfall, 2);
  auto sl = settled(render(*low, params(0.8f, 2.0f), 3.0f).samples);
  auto sh = settled(render(*high, params(0.8f, 30.0f), 3.0f).samples);
  CHECK(rms(sh) > 1.2 * rms(sl));
  CHECK(spectralCentroid(sh, kSampleRate) < spectralCentroid(sl, kSampleRate));
}

TEST_CASE("poured water ends about half a second after the flow stops") {
  auto pour = makeWater(WaterKind::Pour, 8);
  std::vector<float> block(kBlockFrames);
  int frames = 0;
  bool alive = true;
  while (frames < kSampleRate && alive) {  // 1 s pouring
    alive = pour->render(block.data(), kBlockFrames, params(1.0f));
    frames += kBlockFrames;
  }
  REQUIRE(alive);
  int stoppedAt = frames;
  while (alive && frames < 5 * kSampleRate) {
    alive = pour->render(block.data(), kBlockFrames, params(0.0f));
    frames += kBlockFrames;
  }
  CHECK_FALSE(alive);
  CHECK(frames - stoppedAt >= kSampleRate * 4 / 10);
  CHECK(frames - stoppedAt <= kSampleRate);
}

TEST_CASE("the night bed has crickets around 4-5 kHz, the day bed does not") {
  auto day = makeBed(BedKind::Day, 4);
  auto night = makeBed(BedKind::Night, 4);
  auto d = settled(render(*day, params(1.0f), 6.0f).samples);
  auto n = settled(render(*night, params(1.0f), 6.0f).samples);
  double bd = bandShare(d, kSampleRate, 4000, 5000), bn = bandShare(n, kSampleRate, 4000, 5000);
  INFO("day " << bd << " night " << bn);
  CHECK(bn > 0.05);
  CHECK(bn > 5.0 * bd);
  CHECK(rms(d) > 0.005);  // the day bed is not silent
  auto quiet = makeBed(BedKind::Night, 4);
  CHECK(rmsOf(*quiet, params(0.3f)) < 0.5 * rms(n));
}

namespace {
struct Nominal {
  const char* name;
  std::unique_ptr<Voice> (*make)();
  SynthParams p;
  bool continuous;
};
}  // namespace

TEST_CASE("every model: finite, below full scale, sensible loudness, block-size independent") {
  const Nominal models[] = {
      {"wind open", [] { return makeWind(WindCover::Open, 1); }, params(12.0f, 0.5f, 1.0f), true},
      {"wind grass", [] { return makeWind(WindCover::Grass, 1); }, params(12.0f, 0.5f, 1.0f), true},
      {"wind leaves", [] { return makeWind(WindCover::Leaves, 1); }, params(12.0f, 0.5f, 1.0f), true},
      {"wind edge", [] { return makeWind(WindCover::Edge, 1); }, params(12.0f, 0.5f, 1.0f), true},
      {"rain water", [] { return makeRain(RainSurface::Water, 1); }, params(400.0f), true},
      {"rain stone", [] { return makeRain(RainSurface::Stone, 1); }, params(400.0f), true},
      {"rain wood", [] { return makeRain(RainSurface::Wood, 1); }, params(400.0f), true},
      {"rain leaves", [] { return makeRain(RainSurface::Leaves, 1); }, params(400.0f), true},
      {"rain soil", [] { return makeRain(RainSurface::Soil, 1); }, params(400.0f), true},
      {"rain bed", [] { return makeRainBed(1); }, params(1.0f), true},
      {"fire", [] { return makeFire(1); }, params(50.0f, 0.8f), true},
      {"hiss", [] { return makeHiss(1.0f, 1); }, params(0), false},
      {"waterfall", [] { return makeWater(WaterKind::Waterfall, 1); }, params(1.0f, 10.0f), true},
      {"stream", [] { return makeWater(WaterKind::Stream, 1); }, params(1.0f), true},
      {"pour", [] { return makeWater(WaterKind::Pour, 1); }, params(1.0f), true},
      {"bird song", [] { return makeCreatureCall(CreatureCall::BirdSong, 1); }, params(0), false},
      {"bird chirp", [] { return makeCreatureCall(CreatureCall::BirdChirp, 1); }, params(0), false},
      {"fox", [] { return makeCreatureCall(CreatureCall::FoxBark, 1); }, params(0), false},
      {"dog", [] { return makeCreatureCall(CreatureCall::DogBark, 1); }, params(0), false},
      {"day bed", [] { return makeBed(BedKind::Day, 1); }, params(1.0f), true},
      {"night bed", [] { return makeBed(BedKind::Night, 1); }, params(1.0f), true},
  };
  for (const Nominal& m : models) {
    INFO(std::string(m.name));
    auto v = m.make();
    auto w = m.make();
    Render a = render(*v, m.p, 4.0f);
    Render b = render(*w, m.p, 4.0f, 97);  // control ticks carry across blocks
    CHECK(allFinite(a.samples));
    CHECK(peakOf(a.samples) < 1.0f);
    CHECK(peakOf(a.samples) > 0.01f);
    CHECK(a.samples == b.samples);
    if (m.continuous) {
      double level = rms(settled(a.samples));
      CHECK(v->loudness() > level / 2.5);
      CHECK(v->loudness() < level * 2.5);
    }
  }
  // Hostile parameters never make NaNs.
  auto wind = makeWind(WindCover::Edge, 2);
  auto fire = makeFire(2);
  SynthParams bad = params(std::nanf(""), -5.0f, 1e9f);
  std::vector<float> out(kBlockFrames);
  for (int i = 0; i < 50; ++i) {
    wind->render(out.data(), kBlockFrames, bad);
    fire->render(out.data(), kBlockFrames, bad);
  }
  CHECK(allFinite(out));
}

TEST_CASE("silence decays to quiet normal floats, never to subnormals") {
  // Subnormal filter states cost ~100x per operation on x86: a voice left idle (no
  // drops, no crackles, gaps between barks) must not fall into them.
  std::vector<std::unique_ptr<Voice>> voices;
  for (int s = 0; s < 5; ++s) voices.push_back(makeRain(static_cast<RainSurface>(s), 6));
  voices.push_back(makeFire(6));
  voices.push_back(makeBed(BedKind::Day, 6));
  for (std::size_t i = 0; i < voices.size(); ++i) {
    INFO("voice " << i);
    Voice* v = voices[i].get();
    render(*v, params(300.0f, 0.5f), 1.0f);
    auto quiet = render(*v, params(0.0f, 0.0f), 6.0f).samples;
    CHECK(std::none_of(quiet.begin(), quiet.end(), [](float x) { return std::fpclassify(x) == FP_SUBNORMAL; }));
    CHECK(rms(settled(quiet, 3.0f)) < 1e-4);
  }
}

TEST_CASE("parameter changes are smooth: no step in level when the wind jumps") {
  // A wind speed jump 2 -> 15 m/s must ramp in over the smoothing time: the level of
  // the first 5 ms after the jump stays near the level before it.
  auto wind = makeWind(WindCover::Open, 3);
  auto before = render(*wind, params(2.0f, 0.0f, 1.0f), 2.0f).samples;
  auto after = render(*wind, params(15.0f, 0.0f, 1.0f), 1.0f).samples;
  double last = rms({before.data() + before.size() - 480, 480});
  double first = rms({after.data(), 240});
  double later = rms({after.data() + after.size() - 4800, 4800});
  CHECK(first < 3.0 * last);
  CHECK(later > 10.0 * last);
}

TEST_CASE("skip follows params: a continuous model skipped while its params rise gets loud") {
  // A virtual voice hears its params too (Voice::skip), so loudness() tracks them and
  // the engine can make it real again without a priority boost.
  struct Case {
    const char* name;
    std::unique_ptr<Voice> (*make)();
    SynthParams silent, loud;
  };
  const Case cases[] = {
      {"wind grass", [] { return makeWind(WindCover::Grass, 3); }, params(0, 0, 1), params(12.0f, 0.5f, 1.0f)},
      {"wind leaves", [] { return makeWind(WindCover::Leaves, 3); }, params(0, 0, 1), params(12.0f, 0.5f, 1.0f)},
      {"rain stone", [] { return makeRain(RainSurface::Stone, 3); }, params(0), params(400.0f)},
      {"rain bed", [] { return makeRainBed(3); }, params(0), params(1.0f)},
      {"fire", [] { return makeFire(3); }, params(0, 0), params(50.0f, 0.8f)},
      {"waterfall", [] { return makeWater(WaterKind::Waterfall, 3); }, params(0, 10), params(1.0f, 10.0f)},
      {"stream", [] { return makeWater(WaterKind::Stream, 3); }, params(0), params(1.0f)},
      {"pour", [] { return makeWater(WaterKind::Pour, 3); }, params(0.02f), params(1.0f)},
      {"day bed", [] { return makeBed(BedKind::Day, 3); }, params(0), params(1.0f)},
      {"night bed", [] { return makeBed(BedKind::Night, 3); }, params(0), params(1.0f)},
  };
  std::vector<float> block(kBlockFrames);
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    auto played = c.make(), skipped = c.make();
    // Both start quiet (a rendered second at the silent params)...
    for (int b = 0; b < kSampleRate / kBlockFrames; ++b) {
      played->render(block.data(), kBlockFrames, c.silent);
      skipped->render(block.data(), kBlockFrames, c.silent);
    }
    float quiet = skipped->loudness();
    // ...then the params rise: one plays, the other is virtual for 2 s.
    for (int b = 0; b < 2 * kSampleRate / kBlockFrames; ++b) {
      played->render(block.data(), kBlockFrames, c.loud);
      CHECK(skipped->skip(kBlockFrames, c.loud));
    }
    float heard = played->loudness(), followed = skipped->loudness();
    CHECK(followed > 4 * quiet);
    CHECK(followed > heard / 1.5f);
    CHECK(followed < heard * 1.5f);
  }
}

TEST_CASE("cost of skipping a continuous model vs rendering it (report only)") {
  struct Case {
    const char* name;
    std::unique_ptr<Voice> (*make)();
    SynthParams p;
  };
  const Case cases[] = {
      {"wind grass", [] { return makeWind(WindCover::Grass, 3); }, params(12.0f, 0.5f, 1.0f)},
      {"rain stone", [] { return makeRain(RainSurface::Stone, 3); }, params(400.0f)},
      {"fire", [] { return makeFire(3); }, params(50.0f, 0.8f)},
      {"waterfall", [] { return makeWater(WaterKind::Waterfall, 3); }, params(1.0f, 10.0f)},
      {"night bed", [] { return makeBed(BedKind::Night, 3); }, params(1.0f)},
  };
  std::vector<float> block(kBlockFrames);
  for (const Case& c : cases) {
    auto v = c.make();
    const int blocks = 2000;
    std::clock_t t0 = std::clock();
    for (int b = 0; b < blocks; ++b) v->skip(kBlockFrames, c.p);
    std::clock_t t1 = std::clock();
    for (int b = 0; b < blocks; ++b) v->render(block.data(), kBlockFrames, c.p);
    std::clock_t t2 = std::clock();
    double skipUs = static_cast<double>(t1 - t0) * 1e6 / CLOCKS_PER_SEC / blocks;
    double renderUs = static_cast<double>(t2 - t1) * 1e6 / CLOCKS_PER_SEC / blocks;
    MESSAGE(std::string(c.name), ": skip ", skipUs, " us per block, render ", renderUs, " us per block");
    CHECK(skipUs < renderUs);
  }
}
