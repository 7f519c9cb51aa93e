// TickPacer: fixed-rate ticks on the steady clock with bounded catch-up, shared by
// loam-server's loop, the client's in-process server and input ticks, and the
// network benches.
#pragma once

#include <chrono>
#include <cstdint>

namespace loam::net {

/// Fixed-rate tick scheduling with bounded catch-up. Pure (the caller passes the
/// time), so it is unit-testable.
class TickPacer {
 public:
  using Clock = std::chrono::steady_clock;
  /// Ticks of `period` starting at `start`; at most maxBurst ticks back to back.
  TickPacer(Clock::duration period, int maxBurst, Clock::time_point start) noexcept
      : period_(period), maxBurst_(maxBurst), next_(start) {}

  /// The period of `hz` ticks per second, to the nearest nanosecond (60: 16'666'667 ns).
  static constexpr Clock::duration periodOf(int hz) noexcept {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds((1'000'000'000 + hz / 2) / hz));
  }

  /// When the next tick is due.
  Clock::time_point nextDue() const noexcept { return next_; }
  /// True when a tick is due at `now` and the current burst has room.
  bool shouldTick(Clock::time_point now) const noexcept { return now >= next_ && burst_ < maxBurst_; }
  /// Records that the due tick ran.
  void ticked() noexcept {
    next_ += period_;
    ++burst_;
  }
  /// Ends a burst (call before waiting). If still behind at `now`, the backlog is
  /// dropped: returns the number of ticks skipped (0 when on time).
  std::int64_t endBurst(Clock::time_point now) noexcept {
    burst_ = 0;
    if (now < next_) return 0;
    std::int64_t behind = (now - next_) / period_ + 1;
    next_ += behind * period_;
    return behind;
  }

 private:
  Clock::duration period_;
  int maxBurst_;
  Clock::time_point next_;
  int burst_ = 0;
};

}  // namespace loam::net
