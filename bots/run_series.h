// Per-second time series of a bot run: each bot's bytes/s in and out (from its byte
// totals' deltas), RTT, prediction corrections and desyncs, kept as aggregates
// across bots (mean/min/max) for the HTML report. Per-bot work is a few arithmetic
// operations; the only allocation is one RunSample appended per call.
//
// Thread: the owner's.
#pragma once

#include <cstdint>
#include <vector>

namespace loam::bots {

/// One bot's running totals at the moment of sampling.
struct BotTotals {
  std::uint64_t bytesIn = 0, bytesOut = 0;
  double rttMs = 0;
  std::uint64_t corrections = 0, desyncs = 0;
  bool playing = false;
};

/// The aggregate of one interval. Rates and RTT are over playing bots (NaN when none).
struct RunSample {
  double t = 0;  ///< seconds since the run started
  std::uint32_t playing = 0;
  double inMean = 0, inMin = 0, inMax = 0;     ///< bytes/s per bot
  double outMean = 0, outMin = 0, outMax = 0;  ///< bytes/s per bot
  double rttMean = 0, rttMax = 0;              ///< ms
  std::uint64_t corrections = 0, desyncs = 0;  ///< cumulative, all bots
};

class RunSeries {
 public:
  /// bots: how many bots every sample() call describes (in the same order).
  explicit RunSeries(std::size_t bots);

  /// Adds one sample at t seconds from the bots' totals. A bot's rate is its
  /// totals' delta since the previous call over the elapsed time; the first call
  /// only records the baseline (no sample).
  void sample(double t, const std::vector<BotTotals>& bots);

  const std::vector<RunSample>& samples() const noexcept { return samples_; }

 private:
  std::vector<BotTotals> previous_;
  double previousT_ = 0;
  bool havePrevious_ = false;
  std::vector<RunSample> samples_;
};

}  // namespace loam::bots
