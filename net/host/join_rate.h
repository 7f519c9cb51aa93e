// JoinRate: how often one IP address may connect. A join that is cheap for an
// attacker (connect, Hello, take the snapshot, leave) costs the server a session, a
// join state and a snapshot stream; 30 such loops from one address tripled the mean
// tick (docs/PERF.md, Hostile soak). Each address gets a token bucket in ticks: it
// may fill its peer slots at once (burst), then connect once per `ticksPerJoin`.
// Internal to ServerHost (net/host/inbound.cpp); one thread, the host's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace loam::net::host {

class JoinRate {
 public:
  /// Addresses tracked at most; when full, the one whose bucket refilled first goes
  /// (a refilled bucket is the same as no entry, so honest addresses lose nothing).
  static constexpr std::size_t kMaxAddresses = 4096;

  /// `burst` connects at once, then one per `ticksPerJoin` ticks (both at least 1).
  JoinRate(std::uint32_t burst, std::uint64_t ticksPerJoin) noexcept;

  /// Takes a token for a connect from `address` (IPv4, ENet byte order) at `tick`;
  /// false when its bucket is empty (the connect is refused). Allocates only for an
  /// address not yet tracked.
  bool admit(std::uint32_t address, std::uint64_t tick);
  /// Ticks until `address` may connect again (0 when it may now).
  std::uint64_t waitTicks(std::uint32_t address, std::uint64_t tick) const noexcept;
  std::size_t size() const noexcept { return full_.size(); }

 private:
  // Generic cell rate: an address's entry is the tick at which its bucket is full
  // again. A connect is allowed while that lies at most (burst - 1) intervals ahead,
  // and pushes it one interval on. One integer per address, no refill pass.
  std::unordered_map<std::uint32_t, std::uint64_t> full_;
  std::uint64_t window_;  ///< (burst - 1) * ticksPerJoin
  std::uint64_t ticksPerJoin_;
};

}  // namespace loam::net::host
