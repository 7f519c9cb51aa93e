// Offline renderer (see offline_render.h): server step -> StepOutput -> mirror ->
// AudioScene -> AudioEngine, all on one thread, so a render depends only on its inputs.
#include "audio/offline_render.h"

#include <sndfile.h>
#include <xxhash.h>  // header-only here (XXH_INLINE_ALL from loam_xxhash)

#include <cmath>
#include <memory>
#include <utility>

#include "sim/step/mirror.h"
#include "sim/systems/motion.h"
#include "sim/gen/scene.h"
#include "sim/trace/script.h"
#include "sim/step/step.h"
#include "sim/systems/streams.h"

namespace loam::audio {
namespace {

/// Where a client standing at the first spawn hears from: eye height, facing its yaw.
Listener spawnListener(const sim::SimState& state) {
  Listener l;
  if (state.spawns.empty()) return l;
  const sim::Spawn& s = state.spawns.front();
  const float perMetre = static_cast<float>(sim::kUnitsPerMetre);
  l.position = {static_cast<float>(s.position.x) / perMetre,
                static_cast<float>(s.position.y + sim::kPlayerEyeHeight) / perMetre,
                static_cast<float>(s.position.z) / perMetre};
  l.yaw = static_cast<float>(s.yaw) * (2.0f * kPi / 65536.0f);
  return l;
}

Render renderWithProgress(sim::SimState state, const OfflineRenderConfig& config,
                          const std::function<void(double)>& progress) {
  Render out;
  const Listener listener = config.listener ? *config.listener : spawnListener(state);
  sim::SimState mirror = state;  // a client's copy, built from the same start
  const sim::ChangeSubscriber worldChanges = mirror.world.subscribeChanges();  // for the acoustics
  AudioEngine engine(config.engine);
  AudioScene scene(engine, config.scene);

  const double seconds = config.seconds > 0 ? config.seconds : 0.0;
  const auto frames = static_cast<std::uint64_t>(std::llround(seconds * kSampleRate));
  const std::uint64_t blocks = (frames + kBlockFrames - 1) / kBlockFrames;
  const int every = config.controlEveryBlocks > 0 ? config.controlEveryBlocks : 1;
  out.samples.resize(static_cast<std::size_t>(blocks * kBlockFrames * 2));

  const std::uint64_t startTick = state.tick;
  std::vector<sim::Command> commands;
  std::vector<sim::Event> events;
  sim::StepOutput step;
  std::uint64_t lastProgress = 0;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    if (b % static_cast<std::uint64_t>(every) == 0) {
      // The world follows the audio clock: floor(time * 60) steps by this block.
      const std::uint64_t target = b * kBlockFrames * sim::kTicksPerSecond / kSampleRate;
      while (state.tick - startTick < target) {
        commands.clear();
        if (config.commands) config.commands(state, commands);
        sim::step(state, commands, step);
        sim::applyStepOutput(mirror, step);
        events.insert(events.end(), step.events.begin(), step.events.end());
        ++out.steps;
      }
      scene.worldChanged(mirror, mirror.world.takeChanged(worldChanges));
      scene.update(mirror, events, listener);
      events.clear();
      engine.commit();
    }
    engine.renderBlock(out.samples.data() + b * kBlockFrames * 2);
    if (progress && (b - lastProgress >= 64 || b + 1 == blocks)) {
      lastProgress = b;
      progress(static_cast<double>(b + 1) / static_cast<double>(blocks));
    }
  }
  out.samples.resize(static_cast<std::size_t>(frames * 2));
  out.scene = scene.stats();
  out.engine = engine.stats();
  return out;
}

}  // namespace

Render renderOffline(sim::SimState state, const OfflineRenderConfig& config) {
  return renderWithProgress(std::move(state), config, {});
}

sim::Result<Render> renderOfflineFromFiles(const std::string& scenePath, std::uint64_t seed,
                                           const std::string& scriptPath, OfflineRenderConfig config,
                                           const std::function<void(double)>& progress) {
  auto scene = sim::loadScene(scenePath);
  if (!scene) return scene.error();
  std::shared_ptr<sim::ScriptRunner> runner;
  if (!scriptPath.empty()) {
    auto script = sim::loadScript(scriptPath);
    if (!script) return script.error();
    runner = std::make_shared<sim::ScriptRunner>(std::move(*script));
  }
  auto state = sim::createSimState(*scene, seed);
  if (!state) return state.error();
  if (runner) {
    // The script first, then any commands the caller adds.
    auto extra = std::move(config.commands);
    config.commands = [runner, extra](const sim::SimState& s, std::vector<sim::Command>& out) {
      runner->commandsFor(s, out);
      if (extra) extra(s, out);
    };
  }
  return renderWithProgress(std::move(*state), config, progress);
}

std::uint64_t hashSamples(std::span<const float> samples) { return XXH3_64bits(samples.data(), samples.size_bytes()); }

sim::Result<void> writeWav(const std::string& path, std::span<const float> samples, int channels) {
  if (channels < 1) return sim::makeError(path + ": bad channel count");
  SF_INFO info{};
  info.samplerate = kSampleRate;
  info.channels = channels;
  info.format = SF_FORMAT_WAV | SF_FORMAT_FLOAT;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (!f) return sim::makeError(path + ": " + sf_strerror(nullptr));
  // No PEAK chunk: it carries the time of writing, so the same samples would give
  // different bytes on every write.
  sf_command(f, SFC_SET_ADD_PEAK_CHUNK, nullptr, SF_FALSE);
  const auto frames = static_cast<sf_count_t>(samples.size() / static_cast<std::size_t>(channels));
  sf_count_t written = sf_writef_float(f, samples.data(), frames);
  std::string err = written == frames ? std::string() : std::string(sf_strerror(f));
  if (sf_close(f) != 0 && err.empty()) err = "close failed";
  if (!err.empty()) return sim::makeError(path + ": " + err);
  return sim::ok();
}

sim::Result<std::vector<float>> readWav(const std::string& path, int& channels, int& sampleRate) {
  SF_INFO info{};
  SNDFILE* f = sf_open(path.c_str(), SFM_READ, &info);
  if (!f) return sim::makeError(path + ": " + sf_strerror(nullptr));
  channels = info.channels;
  sampleRate = info.samplerate;
  std::vector<float> samples(static_cast<std::size_t>(info.frames) * static_cast<std::size_t>(info.channels));
  sf_count_t got = sf_readf_float(f, samples.data(), info.frames);
  sf_close(f);
  if (got != info.frames) return sim::makeError(path + ": short read");
  return samples;
}

}  // namespace loam::audio
