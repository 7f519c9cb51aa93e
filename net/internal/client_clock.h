// The clock ClientConnection's files (net/client_*.cpp, net/internal/) time the join,
// generation, the join state and teleports with. Nothing outside them includes this.
#pragma once

#include <chrono>

namespace loam::net::internal {

using Clock = std::chrono::steady_clock;

/// Milliseconds from t to now.
inline double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

}  // namespace loam::net::internal
