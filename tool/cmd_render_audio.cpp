// `loam-tool render-audio`: what a client standing at a point hears, rendered offline
// through the client's own path (world copy + streams -> AudioScene -> AudioEngine)
// and written as a float WAV. The same inputs always give the same file, byte for byte.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "audio/offline_render.h"
#include "sim/gen/scene.h"
#include "tool/commands.h"
#include "tool/tool_util.h"

namespace loam::tool {
namespace {

/// Parses "x,y,z,yaw" (metres, degrees) into a listener; false on bad text.
bool parseListener(const std::string& text, audio::Listener& out) {
  std::vector<double> v;
  if (!parseNumberList(text, v) || v.size() != 4) return false;
  out.position = {static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2])};
  out.yaw = static_cast<float>(v[3] * 3.14159265358979323846 / 180.0);
  return true;
}

}  // namespace

void addRenderAudioCommand(CLI::App& app, int& exitCode) {
  struct Options {
    std::string scene;
    std::uint64_t seed = 0;
    std::string script;
    std::string listener;
    double seconds = 10.0;
    std::string out;
    bool hash = false;
    bool speakers = false;
    bool dry = false;
    bool quiet = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("render-audio", "Render what a listener hears to a float WAV (offline, deterministic)");
  cmd->add_option("--scene", opt->scene, "Scene file (e.g. scenes/glade.toml)")->required();
  cmd->add_option("--seed", opt->seed, "World seed (default: the scene's)");
  cmd->add_option("--script", opt->script, "Script of timed commands (sim/trace/script.h); none = idle world");
  cmd->add_option("--listener", opt->listener,
                  "x,y,z,yaw: ears in metres, yaw in degrees (default: first spawn, eye height)");
  cmd->add_option("--seconds", opt->seconds, "Seconds of audio")->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--out", opt->out, "Output WAV (32-bit float, 48 kHz stereo)")->required();
  cmd->add_flag("--speakers", opt->speakers, "Stereo panning for loudspeakers instead of binaural (HRTF)");
  cmd->add_flag("--dry", opt->dry, "No acoustics: free field everywhere, no reverb or reflections");
  cmd->add_flag("--hash", opt->hash, "Print the render hash (xxHash3 of the samples) as the last stdout line");
  cmd->add_flag("--quiet", opt->quiet, "No progress or summary on stderr");
  cmd->callback([opt, cmd, &exitCode] {
    audio::OfflineRenderConfig config;
    config.seconds = opt->seconds;
    if (opt->speakers) config.engine.spatial = audio::Spatialisation::Speakers;
    if (opt->dry) {
      config.engine.acoustics = false;
      config.scene.acoustics.enabled = false;
    }
    if (!opt->listener.empty()) {
      audio::Listener l;
      if (!parseListener(opt->listener, l)) {
        std::fprintf(stderr, "loam-tool render-audio: --listener wants x,y,z,yaw (metres, degrees), got '%s'\n",
                     opt->listener.c_str());
        exitCode = 2;
        return;
      }
      config.listener = l;
    }
    std::uint64_t seed = opt->seed;
    if (cmd->count("--seed") == 0) {
      auto scene = sim::loadScene(opt->scene);
      if (!scene) {
        std::fprintf(stderr, "loam-tool render-audio: %s\n", scene.error().message.c_str());
        exitCode = 2;
        return;
      }
      seed = scene->defaultSeed;
    }
    ProgressPrinter progress("render-audio", opt->quiet);
    const auto t0 = std::chrono::steady_clock::now();
    auto render =
        audio::renderOfflineFromFiles(opt->scene, seed, opt->script, config, [&](double f) { progress.update(f); });
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!render) {
      std::fprintf(stderr, "loam-tool render-audio: %s\n", render.error().message.c_str());
      exitCode = render.error().message.find("generat") != std::string::npos ? 1 : 2;
      return;
    }
    auto written = audio::writeWav(opt->out, render->samples, 2);
    if (!written) {
      std::fprintf(stderr, "loam-tool render-audio: %s\n", written.error().message.c_str());
      exitCode = 1;
      return;
    }
    if (!opt->quiet) {
      const auto& s = render->scene;
      const auto& e = render->engine;
      std::fprintf(
          stderr,
          "render-audio: %.2f s of audio, %" PRIu64
          " steps, %.2f s wall (world build included)\n"
          "scene: one-shots %" PRIu64
          ", fires %d (%d cells), wind %d, rain patches %d, water %d\n"
          "engine: started %" PRIu64 ", finished %" PRIu64 ", dropped %" PRIu64 ", emitters %d, real %d, virtual %d\n",
          opt->seconds, render->steps, wall, s.oneShots, s.fires, s.burningCells, s.windEmitters, s.rainPatches,
          s.waterEmitters, e.started, e.finished, e.dropped, e.emitters, e.realVoices, e.virtualVoices);
    }
    if (opt->hash) std::printf("%016" PRIx64 "\n", audio::hashSamples(render->samples));
    exitCode = 0;
  });
}

}  // namespace loam::tool
