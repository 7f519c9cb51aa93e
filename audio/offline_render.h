// Offline renderer: what a client standing at `listener` hears, computed without a
// device and faster than real time. It runs the step on a server-side state, applies
// each StepOutput to a mirror exactly as a client does, and feeds the mirror and the
// events to an AudioScene and AudioEngine on one thread (a control update every
// controlEveryBlocks blocks). The same inputs give the same samples on every run.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include "audio/audio_scene.h"
#include "audio/engine.h"
#include "sim/step/commands.h"
#include "sim/core/result.h"
#include "sim/systems/sim_state.h"

namespace loam::audio {

struct OfflineRenderConfig {
  std::optional<Listener> listener;  ///< nullopt: the scene's first spawn, eye height
  double seconds = 10.0;
  int controlEveryBlocks = 4;        ///< 46.9 control updates per second
  EngineConfig engine;
  AudioSceneConfig scene;
  /// Commands for the step that will produce tick state.tick + 1 (a script). Empty: idle.
  std::function<void(const sim::SimState& state, std::vector<sim::Command>& out)> commands;
};

/// Interleaved stereo samples at kSampleRate.
struct Render {
  std::vector<float> samples;
  std::uint64_t steps = 0;
  AudioSceneStats scene;
  EngineStats engine;
};

/// Renders from an already built state (moved in; tests build small worlds).
Render renderOffline(sim::SimState state, const OfflineRenderConfig& config);

/// `loam-tool render-audio` in one call: loads the scene (and script), builds the
/// world, renders. progress gets 0..1. Errors: bad scene / script files.
sim::Result<Render> renderOfflineFromFiles(const std::string& scenePath, std::uint64_t seed,
                                           const std::string& scriptPath, OfflineRenderConfig config,
                                           const std::function<void(double)>& progress = {});

/// 64-bit hash of the samples' bit patterns (xxHash3), for goldens.
std::uint64_t hashSamples(std::span<const float> samples);

/// Writes interleaved samples as a 32-bit float WAV with libsndfile. The same samples
/// always give the same bytes (no PEAK chunk, which would carry the time of writing).
sim::Result<void> writeWav(const std::string& path, std::span<const float> samples, int channels = 2);
/// Reads a WAV (any format libsndfile reads) as float, interleaved; channels out.
sim::Result<std::vector<float>> readWav(const std::string& path, int& channels, int& sampleRate);

}  // namespace loam::audio
