// The wall-clock pacing the in-process net tests share: one server tick per 1/60 s;
// when the loop falls more than 100 ms behind (a loaded machine), the missed ticks
// are skipped and the host is told (ServerHost::skippedTicks), as loam-server's loop
// does, instead of being run back to back.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

#include "net/server_host.h"
#include "sim/core/fixed_point.h"

namespace loam::test {

class HostPacing {
 public:
  using Clock = std::chrono::steady_clock;
  /// The length of one tick.
  static constexpr Clock::duration kTick =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / sim::kTicksPerSecond));

  /// Ticks of host from start on.
  HostPacing(net::ServerHost& host, Clock::time_point start) noexcept : host_(host), next_(start) {}

  /// After a tick: sleeps until the next one is due (skipping what is over 100 ms late).
  void wait() {
    next_ += kTick;
    const Clock::time_point now = Clock::now();
    if (next_ < now - std::chrono::milliseconds(100)) {
      host_.skippedTicks(static_cast<std::uint64_t>((now - next_) / kTick));
      next_ = now;
    }
    std::this_thread::sleep_until(next_);
  }

 private:
  net::ServerHost& host_;
  Clock::time_point next_;
};

}  // namespace loam::test
