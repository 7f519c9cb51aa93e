// `loam-tool audio-sample`: one synthesis model on its own, dry (no engine, no
// distance), written as a mono float WAV. For sound design, the spectrograms in
// docs/AUDIO.md and listening to a model without building a world.
#include <CLI/CLI.hpp>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "audio/dsp.h"
#include "audio/models.h"
#include "audio/offline_render.h"
#include "tool/commands.h"

namespace loam::tool {
namespace {

using sim::SoundClass;

/// One named model with its default continuous parameters (SynthParams v[0..]).
struct ModelEntry {
  std::function<std::unique_ptr<audio::Voice>(std::uint64_t key)> make;
  std::vector<float> params;
};

std::map<std::string, ModelEntry> models() {
  using namespace audio;
  std::map<std::string, ModelEntry> m;
  auto impact = [](SoundClass c, float size) {
    return [c, size](std::uint64_t key) { return makeImpact({c, size, 3.0f, 5.0f, key}); };
  };
  m["impact-stone-5cm"] = {impact(SoundClass::Stone, 0.05f), {}};
  m["impact-stone-40cm"] = {impact(SoundClass::Stone, 0.4f), {}};
  m["impact-wood"] = {impact(SoundClass::Wood, 0.2f), {}};
  m["impact-metal"] = {impact(SoundClass::Metal, 0.2f), {}};
  m["impact-glass"] = {impact(SoundClass::Glass, 0.1f), {}};
  m["impact-soil"] = {impact(SoundClass::Soil, 0.2f), {}};
  auto step = [](SoundClass c, Gait g) {
    return [c, g](std::uint64_t key) { return makeFootstep({c, g, g == Gait::Run ? 4.0f : 1.4f, key}); };
  };
  m["footstep-grass"] = {step(SoundClass::Grass, Gait::Walk), {}};
  m["footstep-gravel"] = {step(SoundClass::Gravel, Gait::Walk), {}};
  m["footstep-wood-run"] = {step(SoundClass::Wood, Gait::Run), {}};
  m["footstep-stone-land"] = {step(SoundClass::Stone, Gait::Land), {}};
  m["dig-soil"] = {[](std::uint64_t key) { return makeDig({SoundClass::Soil, 32, key}); }, {}};
  m["fracture-stone"] = {[](std::uint64_t key) { return makeFracture({SoundClass::Stone, 256, key}); }, {}};
  m["fracture-glass"] = {[](std::uint64_t key) { return makeFracture({SoundClass::Glass, 64, key}); }, {}};
  m["wind-open"] = {[](std::uint64_t key) { return makeWind(WindCover::Open, key); }, {8.0f, 0.3f, 1.0f}};
  m["wind-grass"] = {[](std::uint64_t key) { return makeWind(WindCover::Grass, key); }, {8.0f, 0.3f, 1.0f}};
  m["wind-leaves"] = {[](std::uint64_t key) { return makeWind(WindCover::Leaves, key); }, {8.0f, 0.3f, 1.0f}};
  m["wind-edge"] = {[](std::uint64_t key) { return makeWind(WindCover::Edge, key); }, {10.0f, 0.3f, 1.0f}};
  m["rain-water"] = {[](std::uint64_t key) { return makeRain(RainSurface::Water, key); }, {600.0f}};
  m["rain-stone"] = {[](std::uint64_t key) { return makeRain(RainSurface::Stone, key); }, {600.0f}};
  m["rain-wood"] = {[](std::uint64_t key) { return makeRain(RainSurface::Wood, key); }, {600.0f}};
  m["rain-leaves"] = {[](std::uint64_t key) { return makeRain(RainSurface::Leaves, key); }, {600.0f}};
  m["rain-soil"] = {[](std::uint64_t key) { return makeRain(RainSurface::Soil, key); }, {600.0f}};
  m["rain-bed"] = {[](std::uint64_t key) { return makeRainBed(key); }, {0.7f}};
  m["fire"] = {[](std::uint64_t key) { return makeFire(key); }, {20.0f, 0.8f}};
  m["hiss"] = {[](std::uint64_t key) { return makeHiss(1.0f, key); }, {}};
  m["waterfall"] = {[](std::uint64_t key) { return makeWater(WaterKind::Waterfall, key); }, {1.0f, 4.0f}};
  m["stream"] = {[](std::uint64_t key) { return makeWater(WaterKind::Stream, key); }, {1.0f, 0.0f}};
  m["bird-song"] = {[](std::uint64_t key) { return makeCreatureCall(CreatureCall::BirdSong, key); }, {}};
  m["fox"] = {[](std::uint64_t key) { return makeCreatureCall(CreatureCall::FoxBark, key); }, {}};
  m["dog"] = {[](std::uint64_t key) { return makeCreatureCall(CreatureCall::DogBark, key); }, {}};
  m["bed-day"] = {[](std::uint64_t key) { return makeBed(BedKind::Day, key); }, {1.0f}};
  m["bed-night"] = {[](std::uint64_t key) { return makeBed(BedKind::Night, key); }, {1.0f}};
  return m;
}

}  // namespace

void addAudioSampleCommand(CLI::App& app, int& exitCode) {
  struct Options {
    std::string model;
    double seconds = 3.0;
    std::uint64_t key = 1;
    std::string out;
    bool list = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("audio-sample", "Render one synthesis model, dry, to a mono float WAV");
  cmd->add_option("--model", opt->model, "Model name (--list shows them)");
  cmd->add_option("--seconds", opt->seconds, "Seconds of audio")->check(CLI::Range(0.01, 600.0));
  cmd->add_option("--key", opt->key, "Variation key (same key, same samples)");
  cmd->add_option("--out", opt->out, "Output WAV");
  cmd->add_flag("--list", opt->list, "List the models and their default parameters");
  cmd->callback([opt, &exitCode] {
    const auto all = models();
    if (opt->list) {
      for (const auto& [name, e] : all) {
        std::printf("%s", name.c_str());
        for (float v : e.params) std::printf(" %g", static_cast<double>(v));
        std::printf("\n");
      }
      exitCode = 0;
      return;
    }
    auto it = all.find(opt->model);
    if (it == all.end() || opt->out.empty()) {
      std::fprintf(stderr, "loam-tool audio-sample: %s (try --list)\n",
                   opt->out.empty() ? "--out is required" : ("unknown model '" + opt->model + "'").c_str());
      exitCode = 2;
      return;
    }
    audio::SynthParams params;
    for (std::size_t i = 0; i < it->second.params.size() && i < params.v.size(); ++i) params.v[i] = it->second.params[i];
    std::unique_ptr<audio::Voice> voice = it->second.make(opt->key);
    const auto frames = static_cast<std::size_t>(opt->seconds * audio::kSampleRate);
    std::vector<float> mono(frames, 0.0f);
    bool alive = true;
    for (std::size_t at = 0; at < frames && alive; at += audio::kBlockFrames) {
      const int n = static_cast<int>(std::min<std::size_t>(audio::kBlockFrames, frames - at));
      alive = voice->render(mono.data() + at, n, params);
    }
    auto written = audio::writeWav(opt->out, mono, 1);
    if (!written) {
      std::fprintf(stderr, "loam-tool audio-sample: %s\n", written.error().message.c_str());
      exitCode = 1;
      return;
    }
    std::fprintf(stderr, "audio-sample: %s, %.2f s, key %" PRIu64 " -> %s\n", opt->model.c_str(), opt->seconds,
                 opt->key, opt->out.c_str());
    exitCode = 0;
  });
}

}  // namespace loam::tool
