// Offline renderer (audio/offline_render.h): WAV round trip, render determinism (the
// same samples and the same file bytes) and a golden hash, and the scene's physics
// measured on rendered audio through the real path (server step -> streams -> mirror
// -> AudioScene -> AudioEngine):
//  - fire loudness rises with the number of burning cells;
//  - stronger wind is louder;
//  - rain on water and rain on stone differ in spectral centroid.
#include "audio/offline_render.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "audio/spectrum.h"
#include "sim/step/commands.h"
#include "tests/audio/audio_world.h"

using namespace loam;

namespace {

audio::Listener at(audio::Vec3f p) {
  audio::Listener l;
  l.position = p;
  return l;
}

/// Renders the audio test world for `seconds` with `first` issued in the first step.
audio::Render render(audio::Vec3f where, double seconds, std::vector<sim::CommandBody> first) {
  audio::OfflineRenderConfig cfg;
  cfg.listener = at(where);
  cfg.seconds = seconds;
  cfg.commands = [first](const sim::SimState& s, std::vector<sim::Command>& out) {
    if (s.tick != 0) return;
    std::uint32_t seq = 1;
    for (const sim::CommandBody& b : first) out.push_back(loam::test::serverCommand(seq++, b));
  };
  return audio::renderOffline(loam::test::audioWorldState(), cfg);
}

/// Mono samples from `from` seconds on (skips fade-ins and the first control updates).
std::vector<float> tail(const audio::Render& r, double from) {
  std::vector<float> mono = audio::toMono(r.samples, 2);
  auto skip = static_cast<std::size_t>(from * audio::kSampleRate);
  if (skip >= mono.size()) return {};
  return {mono.begin() + static_cast<std::ptrdiff_t>(skip), mono.end()};
}

}  // namespace

TEST_CASE("writeWav and readWav round-trip float samples exactly") {
  std::vector<float> samples;
  for (int i = 0; i < 1000; ++i) samples.push_back(static_cast<float>(i % 97) / 97.0f - 0.5f);
  const std::string path = (std::filesystem::temp_directory_path() / "loam_offline_render_test.wav").string();
  REQUIRE(audio::writeWav(path, samples, 2).has_value());
  int channels = 0, rate = 0;
  auto back = audio::readWav(path, channels, rate);
  REQUIRE(back.has_value());
  CHECK(channels == 2);
  CHECK(rate == audio::kSampleRate);
  CHECK(*back == samples);
  std::filesystem::remove(path);
  int c = 0, r = 0;
  CHECK_FALSE(audio::readWav(path, c, r).has_value());
}

TEST_CASE("two renders of the same inputs write the same bytes") {
  // The second file is written in a later second than the first, so a timestamp in
  // the file (libsndfile's PEAK chunk has one) would show.
  auto write = [](const std::string& name) {
    audio::Render r = render(loam::test::kNearWood, 0.1, {});
    const std::string path = (std::filesystem::temp_directory_path() / name).string();
    REQUIRE(audio::writeWav(path, r.samples, 2).has_value());
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(path);
    return bytes;
  };
  const std::string first = write("loam_offline_render_test_a.wav");
  const std::time_t written = std::time(nullptr);
  while (std::time(nullptr) == written) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string second = write("loam_offline_render_test_b.wav");
  CHECK(first.size() > 44);
  CHECK(first == second);
}

TEST_CASE("hashSamples follows every bit of the samples") {
  std::vector<float> a(512, 0.25f), b = a;
  CHECK(audio::hashSamples(a) == audio::hashSamples(b));
  b[300] = std::nextafter(b[300], 1.0f);
  CHECK(audio::hashSamples(a) != audio::hashSamples(b));
}

TEST_CASE("the same inputs render the same samples; the world follows the audio clock") {
  const std::vector<sim::CommandBody> first{sim::SetWeatherCommand{400, 16384, 500}};
  audio::Render a = render(loam::test::kNearWood, 1.5, first);
  audio::Render b = render(loam::test::kNearWood, 1.5, first);
  REQUIRE(a.samples.size() == static_cast<std::size_t>(1.5 * audio::kSampleRate) * 2);
  CHECK(audio::rms(a.samples) > 0.0);
  CHECK(audio::hashSamples(a.samples) == audio::hashSamples(b.samples));
  // The last control update is in block 280 (every 4th of 282): floor(280 * 256 / 800) steps.
  CHECK(a.steps == 89);
}

TEST_CASE("fire loudness rises with the number of burning cells") {
  auto lit = [](std::size_t n) {
    std::vector<sim::CommandBody> cmds{sim::SetWeatherCommand{0, 16384, 50}};
    auto bricks = loam::test::woodpileBricks();
    for (std::size_t i = 0; i < n; ++i) {
      cmds.push_back(sim::IgniteCommand{{bricks[i].x * 8 + 4, bricks[i].y * 8 + 4, bricks[i].z * 8 + 4}});
    }
    return render(loam::test::kNearWood, 3.0, cmds);
  };
  // The fire's own energy: the same render without fire (beds, wind) subtracted;
  // everything else in these renders is keyed identically, so it cancels.
  audio::Render none = lit(0), one = lit(1), many = lit(40);
  CHECK(none.scene.burningCells == 0);
  CHECK(one.scene.burningCells >= 1);
  CHECK(many.scene.burningCells >= 40);
  auto energy = [](const audio::Render& r) {
    double v = audio::rms(tail(r, 1.0));
    return v * v;
  };
  double eNone = energy(none), eOne = energy(one) - eNone, eMany = energy(many) - eNone;
  INFO("fire energy: one cell " << eOne << ", forty cells " << eMany << " (background " << eNone << ")");
  CHECK(eOne > 0.0);
  CHECK(eMany > 4.0 * eOne);  // at least +6 dB
}

TEST_CASE("stronger wind is louder") {
  audio::Render calm = render(loam::test::kOverStone, 3.0, {sim::SetWeatherCommand{0, 16384, 100}});
  audio::Render gale = render(loam::test::kOverStone, 3.0, {sim::SetWeatherCommand{0, 16384, 1200}});
  double rmsCalm = audio::rms(tail(calm, 1.0)), rmsGale = audio::rms(tail(gale, 1.0));
  INFO("rms 1 m/s " << rmsCalm << ", 12 m/s " << rmsGale);
  CHECK(rmsGale > rmsCalm * 2.0);  // at least +6 dB
}

TEST_CASE("rain on water and rain on stone differ in spectral centroid") {
  const std::vector<sim::CommandBody> downpour{sim::SetWeatherCommand{1000, 16384, 0}};
  audio::Render water = render(loam::test::kOverWater, 3.0, downpour);
  audio::Render stone = render(loam::test::kOverStone, 3.0, downpour);
  CHECK(water.scene.rainPatches >= 1);
  CHECK(stone.scene.rainPatches >= 1);
  double cWater = audio::spectralCentroid(tail(water, 1.0), audio::kSampleRate);
  double cStone = audio::spectralCentroid(tail(stone, 1.0), audio::kSampleRate);
  INFO("centroid on water " << cWater << " Hz, on stone " << cStone << " Hz");
  CHECK(std::fabs(cWater - cStone) > 0.1 * std::max(cWater, cStone));
}

// Golden render: 1.5 s of the idle glade heard from its first spawn. Any change to
// the scene logic, a synthesis model, the engine's mixing or the simulation changes
// it; regenerate (and say why in the commit) with
//   loam-tool render-audio --scene scenes/glade.toml --seconds 1.5 --out /tmp/g.wav --hash
// (the last stdout line is the hash; the tool uses this test's defaults).
TEST_CASE("golden: 1.5 s of the idle glade from the spawn") {
  constexpr std::uint64_t kGolden = 0xb63defd1c1cdf9dbull;
  audio::OfflineRenderConfig cfg;
  cfg.seconds = 1.5;
  auto r = audio::renderOfflineFromFiles(LOAM_SOURCE_DIR "/scenes/glade.toml", 1, "", cfg);
  REQUIRE(r.has_value());
  CHECK(r->scene.waterEmitters >= 1);  // the waterfall 14 m north
  const std::uint64_t hash = audio::hashSamples(r->samples);
  char text[32];
  std::snprintf(text, sizeof text, "%016" PRIx64, hash);
  INFO("render hash " << text);
  CHECK(hash == kGolden);
}

TEST_CASE("wind in leaves is brighter than wind in grass") {
  const std::vector<sim::CommandBody> breeze{sim::SetWeatherCommand{0, 16384, 800}};
  audio::Render leaves = render(loam::test::kUnderLeaves, 3.0, breeze);
  audio::Render grass = render(loam::test::kOverGrass, 3.0, breeze);
  double cLeaves = audio::spectralCentroid(tail(leaves, 1.0), audio::kSampleRate);
  double cGrass = audio::spectralCentroid(tail(grass, 1.0), audio::kSampleRate);
  INFO("centroid under the canopy " << cLeaves << " Hz, over the meadow " << cGrass << " Hz");
  CHECK(cLeaves > cGrass * 1.2);
}
