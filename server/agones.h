// The Agones SDK client: when loam-server runs in an Agones GameServer pod
// (AGONES_SDK_HTTP_PORT is set), it tells the SDK sidecar at http://localhost:PORT
// about its lifecycle over the documented REST API (POST, body "{}", JSON):
//
//   POST /health    every 2 s while the server makes progress: during start-up while
//                   the world is generated (so a long generation is not taken for a
//                   hang, as Agones' health check starts with the container), then
//                   while the step keeps up (no overrun episode in progress);
//   POST /ready     once the world is built and players are accepted (retried every
//                   2 s until the sidecar answers 200: it may start after us);
//   POST /shutdown  once, after the final save.
//
// Everything runs on the client's own thread, never the step thread. A failing
// sidecar (no connection, a status other than 200) is logged once per change of
// state, never fatal.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "server/metrics.h"

namespace loam::server {

/// How often /health is sent (and /ready retried).
inline constexpr std::chrono::milliseconds kAgonesHealthPeriod{2000};

class AgonesClient {
 public:
  /// Starts the client thread for the sidecar at localhost:port. It reads the phase,
  /// heartbeat and keeping-up flag from board, which must outlive the client.
  AgonesClient(std::uint16_t port, const OpsBoard& board);
  /// Stops the thread without sending /shutdown if shutdown() was not called.
  ~AgonesClient();
  AgonesClient(const AgonesClient&) = delete;
  AgonesClient& operator=(const AgonesClient&) = delete;

  /// Wakes the thread to send /ready now (call after the board's phase became Ready).
  void notifyReady();
  /// Sends POST /shutdown and stops the thread. Blocks until the sidecar answered or
  /// the request timed out (about 3 s at most). Call once, after the final save.
  void shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loam::server
