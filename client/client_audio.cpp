#include "client/client_audio.h"

namespace loam::client {

namespace {
constexpr double kControlPeriodMs = 1000.0 / 60.0;
}

sim::Result<std::unique_ptr<ClientAudio>> ClientAudio::open(sim::PlayerId self, bool speakers) {
  std::unique_ptr<ClientAudio> a(new ClientAudio());
  audio::EngineConfig engine;
  engine.spatial = speakers ? audio::Spatialisation::Speakers : audio::Spatialisation::Binaural;
  a->engine_ = std::make_unique<audio::AudioEngine>(engine);
  audio::AudioSceneConfig config;
  config.self = self;
  a->scene_ = std::make_unique<audio::AudioScene>(*a->engine_, config);
  auto out = audio::AudioOutput::open(*a->engine_);
  if (!out) return out.error();
  a->output_ = std::move(*out);
  return a;
}

ClientAudio::~ClientAudio() {
  output_.reset();  // stop the audio thread before the engine and scene go
  scene_.reset();
  engine_.reset();
}

void ClientAudio::update(const sim::SimState& mirror, std::span<const sim::Event> events,
                         const audio::Listener& listener, double nowMs) {
  pending_.insert(pending_.end(), events.begin(), events.end());
  if (nowMs - lastUpdateMs_ < kControlPeriodMs) return;
  lastUpdateMs_ = nowMs;
  scene_->update(mirror, pending_, listener);
  engine_->commit();
  pending_.clear();
}

void ClientAudio::worldChanged(const sim::SimState& mirror, std::span<const sim::BrickCoord> bricks) {
  scene_->worldChanged(mirror, bricks);
}

audio::AudioOutputStats ClientAudio::outputStats() const { return output_->stats(); }
audio::EngineStats ClientAudio::engineStats() const { return engine_->stats(); }

}  // namespace loam::client
