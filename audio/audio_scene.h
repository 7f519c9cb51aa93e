// AudioScene: the control side of client audio. From the client's own world copy
// (a SimState mirror) and the event stream, it decides which emitters exist, where
// they are and what their model parameters are, and drives the AudioEngine:
//  - events: footsteps, landings, digs, fractures, splashes, ignitions,
//    extinguishes (hiss), animal calls -> one-shot voices at the event position;
//  - wind: a few emitters around the listener, by what the wind blows through
//    (grass patches, leaf clusters at canopy height, edges), speed from windAt();
//  - rain: surface patches around the listener by what the drops hit (water, stone,
//    wood/roof, leaves, soil/grass) with drop rates from intensity and exposed area,
//    plus the distant bed;
//  - fire: burning cells grouped into fires, each an emitter at its centre;
//  - water: the waterfall and stream from the water simulation near the listener;
//  - beds: day and night beds on a far ring (ambient).
// Then every emitter's state goes through ListenerAcoustics: the room around the
// listener (reverb, reflections) and each emitter's path to the ears (occlusion,
// openings, apparent direction, reverb send), before the batch reaches the engine.
// Only what a client has is read; nothing here touches the network or the step.
// Every choice is keyed by stable ids and the world tick, so offline renders repeat.
//
// Thread: the control thread (the client's main thread, or the offline renderer's).
#pragma once
#include <cstdint>
#include <span>
#include "audio/engine.h"
#include "audio/listener_acoustics.h"
#include "sim/systems/events.h"
#include "sim/systems/sim_state.h"

namespace loam::audio {

struct AudioSceneConfig {
  float hearingMetres = 48.0f;   ///< events and emitters farther away are not started
  int windEmitters = 6;          ///< patches of grass / leaves / edges around the listener
  int rainPatches = 8;           ///< rain surface patches around the listener
  sim::PlayerId self;            ///< the listener's own player (own footsteps get priority)
  AcousticsConfig acoustics;     ///< rays, propagation, reverb and reflections
};

struct AudioSceneStats {
  int fires = 0;            ///< fire emitters alive
  int burningCells = 0;     ///< burning cells heard
  int windEmitters = 0;
  int rainPatches = 0;
  int waterEmitters = 0;
  std::uint64_t oneShots = 0;  ///< event voices started
};

class AudioScene {
 public:
  AudioScene(AudioEngine& engine, AudioSceneConfig config = {});
  /// One control update (call 30-60 times a second, then engine.commit()).
  /// world: the client's copy after the steps whose events are in `events`.
  void update(const sim::SimState& world, std::span<const sim::Event> events, const Listener& listener);
  /// Bricks of world that changed since the last call (take them with a change
  /// subscriber of its BrickStore, subscribeChanges). Optional; the first call lets the acoustics keep a brick
  /// occupancy cache (faster rays), and from then on every change must come through here.
  void worldChanged(const sim::SimState& world, std::span<const sim::BrickCoord> bricks);
  AudioSceneStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;

 public:
  ~AudioScene();
  AudioScene(const AudioScene&) = delete;
  AudioScene& operator=(const AudioScene&) = delete;
};

}  // namespace loam::audio
