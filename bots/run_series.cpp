#include "bots/run_series.h"

#include <algorithm>
#include <limits>

namespace loam::bots {

RunSeries::RunSeries(std::size_t bots) : previous_(bots) { samples_.reserve(3600); }

void RunSeries::sample(double t, const std::vector<BotTotals>& bots) {
  const std::size_t n = std::min(bots.size(), previous_.size());
  if (!havePrevious_ || t <= previousT_) {
    std::copy_n(bots.begin(), n, previous_.begin());
    previousT_ = t;
    havePrevious_ = true;
    return;
  }
  const double dt = t - previousT_;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  RunSample s;
  s.t = t;
  double inSum = 0, outSum = 0, rttSum = 0;
  s.inMin = s.outMin = inf;
  s.inMax = s.outMax = s.rttMax = -inf;
  for (std::size_t i = 0; i < n; ++i) {
    const BotTotals& now = bots[i];
    const BotTotals& was = previous_[i];
    s.corrections += now.corrections;
    s.desyncs += now.desyncs;
    if (now.playing) {
      // Counters never go down; a reset bot (reconnect) counts from zero.
      const double in = static_cast<double>(now.bytesIn >= was.bytesIn ? now.bytesIn - was.bytesIn : now.bytesIn) / dt;
      const double out =
          static_cast<double>(now.bytesOut >= was.bytesOut ? now.bytesOut - was.bytesOut : now.bytesOut) / dt;
      ++s.playing;
      inSum += in;
      outSum += out;
      rttSum += now.rttMs;
      s.inMin = std::min(s.inMin, in);
      s.inMax = std::max(s.inMax, in);
      s.outMin = std::min(s.outMin, out);
      s.outMax = std::max(s.outMax, out);
      s.rttMax = std::max(s.rttMax, now.rttMs);
    }
    previous_[i] = now;
  }
  if (s.playing > 0) {
    s.inMean = inSum / s.playing;
    s.outMean = outSum / s.playing;
    s.rttMean = rttSum / s.playing;
  } else {
    s.inMean = s.inMin = s.inMax = s.outMean = s.outMin = s.outMax = s.rttMean = s.rttMax = nan;
  }
  previousT_ = t;
  samples_.push_back(s);
}

}  // namespace loam::bots
