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

/// The counters ServerStats reports (ServerCounters; bytesIn and bytesOut are ENet's
/// 32-bit host totals, folded in by the host), plus traffic by message type. Plain
/// data: one per host, single-threaded like the host.
struct HostStats : ServerCounters {
  std::array<TrafficCounters, kServerBodyCount> sent{};      ///< by ServerBody
  std::array<TrafficCounters, kClientBodyCount> received{};  ///< by ClientBody

  void countSent(wire::ServerBody type, std::size_t bytes) noexcept;
  /// Moves `bytes` counted as sent under `from` to `to`, as one message of `to` (a
  /// Stream's items are counted under their own types).
  void moveSent(wire::ServerBody from, wire::ServerBody to, std::size_t bytes) noexcept;
  void countReceived(wire::ClientBody type, std::size_t bytes) noexcept;
  /// One session reached Playing `seconds` after its ENet connect.
  void countJoinTime(double seconds) noexcept;

  /// The public view of these counters. players, peers and the host totals not yet
  /// folded in are the caller's to fill. Allocates (the by-name maps).
  ServerStats toServerStats() const;
};

}  // namespace loam::net::host
