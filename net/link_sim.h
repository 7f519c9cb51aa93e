// LinkSimulator: a bad network on demand, under the transport. It is a UDP relay on
// 127.0.0.1: client ENet hosts connect to the relay's local port, and the relay
// forwards each datagram to the server (and the replies back) after applying
// latency, jitter, loss, duplication and reordering, each direction independently.
// Each client source address gets its own upstream socket, so the server sees one
// address per client and one relay serves any number of clients. The relay runs on
// its own thread (poll with a timeout to the next due datagram), so delays are
// accurate whatever its owner is doing. ENet above it sees exactly what it would
// see on such a link. Randomness is keyed by the seed and a datagram counter.
//
// Used by loam-bots and loam-client (--link-latency-ms 150 --link-jitter-ms 20
// --link-loss 0.05 --link-dup 0.01 --link-reorder 0.02) and by the net tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sim/core/result.h"

namespace loam::net {

/// What the link does to each datagram, per direction.
struct LinkProfile {
  double latencyMs = 0;   ///< one-way base delay
  double jitterMs = 0;    ///< uniform extra delay in [-jitter, +jitter] (clamped at 0 total)
  double loss = 0;        ///< probability a datagram is dropped, 0..1
  double duplicate = 0;   ///< probability a datagram is delivered twice, 0..1
  double reorder = 0;     ///< probability a datagram is held an extra 1..2x latency (arrives after later ones)
  std::uint64_t seed = 1; ///< randomness key
  bool active() const noexcept { return latencyMs > 0 || jitterMs > 0 || loss > 0 || duplicate > 0 || reorder > 0; }
};

/// Counters of what the link did.
struct LinkStats {
  std::uint64_t forwarded = 0, dropped = 0, duplicated = 0, reordered = 0;
};

class LinkSimulator {
 public:
  /// Opens the relay: a socket on 127.0.0.1 (ephemeral port) for the client side and
  /// one toward serverHost:serverPort. Errors: socket or resolve failures.
  static sim::Result<std::unique_ptr<LinkSimulator>> open(const std::string& serverHost, std::uint16_t serverPort,
                                                          const LinkProfile& profile);
  /// Stops the thread and closes the sockets.
  ~LinkSimulator();
  LinkSimulator(const LinkSimulator&) = delete;
  LinkSimulator& operator=(const LinkSimulator&) = delete;

  /// The port the client should connect to (on 127.0.0.1).
  std::uint16_t localPort() const noexcept;

  /// Counters so far (a copy; thread-safe).
  LinkStats stats() const;

 private:
  struct Impl;
  explicit LinkSimulator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace loam::net
