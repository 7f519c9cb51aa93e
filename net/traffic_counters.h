// TrafficCounters: messages and bytes of one message type, as both ends count them
// (ServerStats, ClientStats, the swarm's per-type tables).
#pragma once

#include <cstdint>

namespace loam::net {

/// Byte and message counters by message type.
struct TrafficCounters {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;  ///< payload bytes (ENet and UDP headers not included)
};

}  // namespace loam::net
