// JoinStreams: the join state of full clients, built off the step thread and sent as
// a stream of JoinChunks with flow control (docs/PROTOCOL.md, Joining).
//
// The state a client joins from is a sim save (sim/save/save.h) at the tick of the
// step that admitted it, without bricks, water or fire: the world's changes reach
// the client per interest cell as it comes near (CellSync), so a join costs the
// same on a world changed everywhere as on a new one. What is left (players and
// weather, sim::mirrorBlobs) grows with the players, so it is still encoded off the
// step thread:
//   - at a join the host thread copies only what the state blobs are made of
//     (sim::copyState without water and fire) and queues a request;
//     the worker encodes the blobs and the save (zstd), once per tick for every
//     session admitted by that step;
//   - the host thread picks the encoded state up and sends it in JoinChunks of
//     kJoinChunkBytes, at most kJoinWindowBytes unacknowledged per peer; the client
//     acknowledges with JoinProgress.received_bytes. The stream is charged to neither
//     the peer's snapshot budget nor the reliable-backlog cap (inFlight()).
// Internal to ServerHost (net/server_host.cpp and net/host/). Every function is for
// the host thread; the worker is private.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "net/host/host_core.h"
#include "sim/save/save.h"
#include "sim/save/state_codec.h"
#include "sim/systems/streams.h"

namespace loam::net::host {

/// Payload bytes of one JoinChunk (ENet fragments it; one tick sends a window's worth).
inline constexpr std::uint32_t kJoinChunkBytes = 32 * 1024;
/// Join-stream bytes a peer may have unacknowledged.
inline constexpr std::uint32_t kJoinWindowBytes = 512 * 1024;
/// Join states requested and not yet encoded, at most: welcomed full clients wait in
/// Welcomed beyond this (the ones waiting then join together, in
/// one encoding), so a flood of full joins cannot pile work and memory on the worker.
inline constexpr std::size_t kMaxJoinEncodings = 2;

/// One encoded join state: the save file bytes of the state at `tick`, shared by the
/// sessions that step admitted.
struct JoinState {
  std::uint64_t tick = 0;
  std::vector<std::uint8_t> bytes;  ///< sim save file bytes (header + zstd payload)
  std::string error;                ///< not empty: the encoding failed (bytes empty)
};

class JoinStreams {
 public:
  explicit JoinStreams(HostCore& core) noexcept : core_(core) {}
  ~JoinStreams();
  JoinStreams(const JoinStreams&) = delete;
  JoinStreams& operator=(const JoinStreams&) = delete;

  /// Starts the worker. Call once.
  void start();

  /// Whether another batch of full clients may enter Joining now (kMaxJoinEncodings).
  bool canAdmit() const noexcept { return encodings_ < kMaxJoinEncodings; }

  /// After the step that admitted s (a full client) at core.state.tick: s streams the
  /// state at that tick once the worker has encoded it. The first call of a tick
  /// captures the blobs and queues the encoding. s.phase is the caller's to change.
  void begin(Session& s);

  /// Every tick, after the step: picks up encoded states and sends each streaming
  /// peer chunks up to its window. A failed encoding rejects its sessions.
  void send();

  /// JoinProgress.received_bytes from s. False (malformed) when it acknowledges
  /// bytes never sent; finishes the stream when everything is acknowledged.
  static bool acknowledge(HostCore& core, Session& s, std::uint32_t receivedBytes);

  /// Join-stream bytes sent to s and not yet acknowledged (the reliable-backlog cap
  /// leaves them out: a large world must stay joinable).
  static std::uint64_t inFlight(const Session& s) noexcept;

  /// Forgets s's stream (reject, free). Releases its share of the state.
  static void clear(Session& s) noexcept;

 private:
  /// What the host thread hands the worker, in step order.
  struct Job {
    sim::SaveHeader join;    ///< encode the state at join.tick
    sim::StateCopy state;    ///< what the state blobs are made of
  };

  void work();

  HostCore& core_;
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;                                  ///< guarded by mutex_
  std::vector<std::shared_ptr<const JoinState>> done_;    ///< guarded by mutex_
  bool stop_ = false;                                     ///< guarded by mutex_
  std::uint64_t lastJoinTick_ = UINT64_MAX;  ///< host thread: tick of the newest request
  std::size_t encodings_ = 0;                 ///< host thread: requested and not picked up
  sim::WorldBounds bounds_{};
};

}  // namespace loam::net::host
