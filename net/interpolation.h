// InterpolationBuffer: other players (and animals) drawn a little in the past, so
// positions that arrive at 5..30 Hz over a jittery link move smoothly. Samples are
// kept per entity by server tick; the render time is the newest server tick minus a
// delay that starts at about 100 ms and adapts to the measured arrival jitter
// (delay = max(100 ms, 2 x sample interval + 2 x jitter), clamped to 400 ms).
// Positions between samples are linear; past the newest sample they are held (no
// extrapolation beyond 100 ms).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/fixed_point.h"

namespace loam::net {

/// One sample of an entity's pose.
struct PoseSample {
  std::uint64_t tick = 0;  ///< server tick of the values
  sim::Vec3i position;     ///< units
  std::uint16_t yaw = 0;
  std::int16_t pitch = 0;
};

/// A pose to draw (rendering only: not state, so plain doubles are fine here).
struct Pose {
  double x = 0, y = 0, z = 0;  ///< units, interpolated
  double yaw = 0;          ///< binary angle units, unwrapped toward the shorter turn
  double pitch = 0;
};

class InterpolationBuffer {
 public:
  /// Adds a sample for entity id that arrived at arrivalMs (client steady clock).
  /// Samples older than the newest for that entity are ignored.
  void push(std::uint32_t id, const PoseSample& sample, double arrivalMs);
  /// Forgets an entity.
  void remove(std::uint32_t id);
  /// The pose of id at the current render time for nowMs, or nullopt if unknown.
  std::optional<Pose> sample(std::uint32_t id, double nowMs) const;
  /// The entities known, sorted.
  std::vector<std::uint32_t> ids() const;
  /// The current delay in ms (for the HUD and tests).
  double delayMs() const noexcept { return delayMs_; }

 private:
  struct Track {
    std::uint32_t id = 0;
    std::vector<PoseSample> samples;  ///< ascending tick, at most 32
  };
  std::vector<Track> tracks_;  ///< sorted by id
  double delayMs_ = 100;
  double jitterMs_ = 0;        ///< smoothed |arrival - expected| deviation
  double lastArrivalMs_ = -1;
  std::uint64_t lastTick_ = 0;
  double tickOffsetMs_ = 0;    ///< arrival time minus tick time, smoothed (clock mapping)
};

}  // namespace loam::net
