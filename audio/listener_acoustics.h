// ListenerAcoustics: the acoustic half of AudioScene's control update.
//
//  - The room: every few updates a RoomProbe casts its rays from the listener through
//    the client's world copy (split over worker threads; any split gives the same
//    result) and, under a roof with no straight way out, searches round corners; a
//    RoomSmoother steadies the estimate, short horizontal rays find the walls for the
//    early reflections, and the result becomes the engine's RoomAcoustics (reverb
//    times, mean free path, reverb level from the absorption area).
//  - Every emitter: propagate() (audio/propagation.h) from its position to the ears,
//    straight through the world and through the room's openings, filling its
//    EmitterState's bands, apparent direction and reverb send, and for impulsive
//    emitters their own early-reflection taps off those walls. Ambient emitters (the
//    day/night and rain beds) are a far ring of sky points: the average energy of the
//    ring reaches the listener, so a sealed pit silences the sky and a tunnel hears it
//    through its mouth.
//
// Thread: the control thread, while nobody writes the world (the workers run inside
// the calls and are done when they return).
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "audio/early_reflections.h"
#include "audio/engine.h"
#include "audio/propagation.h"
#include "audio/room_probe.h"
#include "audio/worker_pool.h"
#include "sim/world/brick_store.h"
#include "sim/world/material.h"

namespace loam::audio {

struct AcousticsConfig {
  bool enabled = true;        ///< false: free field everywhere, no room (the dry engine)
  int workerThreads = 1;      ///< threads beside the caller for rays and propagation
  int roomEvery = 2;          ///< control updates per room update (~23 Hz at 47 updates/s)
  float smoothing = 0.3f;     ///< RoomSmoother weight of each new estimate
  ProbeConfig probe;
  ReflectionConfig reflections;
};

class ListenerAcoustics {
 public:
  /// Builds the material tables; starts the workers. Allocates.
  ListenerAcoustics(const sim::MaterialTable& materials, AcousticsConfig config);
  ~ListenerAcoustics();

  /// The room around listener (only every config.roomEvery-th call does the work).
  /// Returns true when room() changed (send it with AudioEngine::setRoom()).
  bool updateRoom(const sim::BrickStore& world, Vec3f listener, std::uint64_t updateIndex);
  const RoomAcoustics& room() const noexcept { return room_; }
  const RoomEstimate& estimate() const noexcept { return smoother_.value(); }

  /// Fills bands, direction and reverbSend of every state from its position (ambient
  /// states from the sky ring). Split over the workers; identical for any split.
  void propagate(const sim::BrickStore& world, std::span<EmitterState* const> states);

  /// Bricks of the world that changed since the last call (BrickStore::takeChanged). The
  /// first call turns on a BrickOccupancy cache for the rays (built at the next room
  /// update; ~13% faster rays, identical results), which from then on relies on every
  /// change being reported here before the next updateRoom() (a streamed world's slot
  /// renumberings need no report: the cache follows them by itself, O(chunks)).
  /// Thread: the control thread.
  void worldChanged(const sim::BrickStore& world, std::span<const sim::BrickCoord> bricks);

 private:
  void propagateOne(const sim::BrickStore& world, EmitterState& state) const;
  AcousticsConfig config_;
  AcousticTable acoustic_;
  TransmissionTable transmission_;
  RoomProbe probe_;
  std::vector<WallPoint> wallPoints_;            ///< the walls round the listener (early reflections)
  int wallPointCount_ = 0;
  bool trackChanges_ = false;                    ///< worldChanged() was called: keep occupancy_
  std::unique_ptr<BrickOccupancy> occupancy_;    ///< built at the first room update after that
  RoomSmoother smoother_;
  RoomAcoustics room_;
  ListenerPaths paths_;
  float roomRadius_ = 2.0f;   ///< metres: sources farther away send less to the reverb
  bool haveRoom_ = false;
  WorkerPool pool_;
};

}  // namespace loam::audio
