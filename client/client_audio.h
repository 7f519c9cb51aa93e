// ClientAudio: loam-client's sound. An AudioScene turns the client's own world copy
// (the mirror) and the event stream into emitters of an AudioEngine, which PortAudio
// plays on the default device. The control update runs on the client's main thread
// at most 60 times a second (events between updates are kept for the next one); the
// engine's audio thread is PortAudio's. No device: open() says why and the client
// runs silent.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>
#include "audio/audio_output.h"
#include "audio/audio_scene.h"
#include "audio/engine.h"
#include "sim/systems/events.h"
#include "sim/core/result.h"
#include "sim/systems/sim_state.h"

namespace loam::client {

class ClientAudio {
 public:
  /// Opens the default output device and starts the engine (binaural through the
  /// HRTF, or stereo panning for loudspeakers). Errors: no device (the message
  /// PortAudio gives), which callers log once and then run without sound.
  static sim::Result<std::unique_ptr<ClientAudio>> open(sim::PlayerId self, bool speakers = false);
  ~ClientAudio();
  ClientAudio(const ClientAudio&) = delete;
  ClientAudio& operator=(const ClientAudio&) = delete;

  /// Queues events; at most every 1/60 s runs one control update from the mirror at
  /// the listener and commits it to the audio thread. Thread: main.
  void update(const sim::SimState& mirror, std::span<const sim::Event> events, const audio::Listener& listener,
              double nowMs);
  /// Bricks of the mirror changed since the last call (ClientConnection::takeWorldChanges);
  /// call before every update(). Thread: main.
  void worldChanged(const sim::SimState& mirror, std::span<const sim::BrickCoord> bricks);
  audio::AudioOutputStats outputStats() const;
  audio::EngineStats engineStats() const;

 private:
  ClientAudio() = default;
  std::unique_ptr<audio::AudioEngine> engine_;
  std::unique_ptr<audio::AudioScene> scene_;
  std::unique_ptr<audio::AudioOutput> output_;
  std::vector<sim::Event> pending_;
  double lastUpdateMs_ = -1e9;
};

}  // namespace loam::client
