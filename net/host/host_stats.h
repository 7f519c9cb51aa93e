// HostStats: every counter the server host keeps, in one struct. The parts count
// into it; ServerHost::stats() turns it into the public ServerStats. Internal to
// ServerHost (net/server_host.cpp and net/host/).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "loam_generated.h"  // flatc output of net/schema/loam.fbs (build tree)
#include "net/server_host.h"

namespace loam::net::host {

inline constexpr std::size_t kServerBodyCount = static_cast<std::size_t>(wire::ServerBody::MAX) + 1;
inline constexpr std::size_t kClientBodyCount = static_cast<std::size_t>(wire::ClientBody::MAX) + 1;

/// The counters ServerStats reports; fields mean what ServerStats' fields of the same
/// name say. Plain data: one per host, single-threaded like the host.
struct HostStats {
  std::uint64_t malformed = 0;
  std::uint64_t flooded = 0;
  std::uint64_t rejected = 0;
  std::uint64_t addressRefused = 0;
  std::uint64_t joinRateRefused = 0;
  std::uint64_t authFailures = 0;
  std::uint64_t joinTimeouts = 0;
  std::uint64_t joins = 0, leaves = 0;
  std::uint64_t inputsDropped = 0;
  std::uint64_t inputsOverRate = 0;
  std::uint64_t budgetDeferred = 0;
  std::uint64_t illegalTransitions = 0;
  std::array<std::uint64_t, kJoinBucketsSeconds.size() + 1> joinSecondsBuckets{};
  double joinSecondsSum = 0;
  std::uint64_t joinSecondsCount = 0;
  std::uint64_t bytesIn = 0, bytesOut = 0;  ///< ENet's 32-bit host totals, folded in by the host
  std::array<TrafficCounters, kServerBodyCount> sent{};      ///< by ServerBody
  std::array<TrafficCounters, kClientBodyCount> received{};  ///< by ClientBody

  void countSent(wire::ServerBody type, std::size_t bytes) noexcept;
  void countReceived(wire::ClientBody type, std::size_t bytes) noexcept;
  /// One session reached Playing `seconds` after its ENet connect.
  void countJoinTime(double seconds) noexcept;

  /// The public view of these counters. players, peers and the host totals not yet
  /// folded in are the caller's to fill. Allocates (the by-name maps).
  ServerStats toServerStats() const;
};

}  // namespace loam::net::host
