// Server metrics during a load test: scrapes the server's Prometheus /metrics (the
// ops endpoint, --http-port) once per second on its own thread and turns the
// loam_step_seconds histogram into per-interval p50/p99 (from bucket deltas) and
// loam_players into a series. Failed scrapes are counted, never fatal.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/result.h"

namespace loam::bots {

/// One scrape, parsed: the cumulative step histogram and the player gauge.
struct MetricsScrape {
  std::map<double, double> stepBuckets;  ///< le (seconds; +Inf as infinity) -> cumulative count
  double players = -1;                   ///< -1 when absent
};

/// Parses Prometheus text format for loam_step_seconds_bucket and loam_players.
/// Unknown lines are ignored. Cost: O(text).
MetricsScrape parseMetrics(const std::string& text);

/// Quantile q (0..1) in seconds of the observations between two scrapes (bucket
/// deltas, linear inside the bucket); NaN when nothing was observed in between.
double intervalQuantile(const std::map<double, double>& before, const std::map<double, double>& after, double q);

/// One point of the server series (t: seconds since the bots started).
struct ServerSample {
  double t = 0;
  double stepP50Ms = 0, stepP99Ms = 0;  ///< NaN when no tick ran in the interval
  double players = 0;                   ///< NaN when the scrape lacked it
};

/// The scraping thread. Thread: start/stop/samples from the owner's thread.
class ServerMetricsScraper {
 public:
  /// url: http://HOST:PORT/path. Errors: not that shape.
  static sim::Result<std::unique_ptr<ServerMetricsScraper>> create(const std::string& url);
  ~ServerMetricsScraper();
  ServerMetricsScraper(const ServerMetricsScraper&) = delete;
  ServerMetricsScraper& operator=(const ServerMetricsScraper&) = delete;

  /// Starts scraping every second; t counts from start.
  void start(std::chrono::steady_clock::time_point start);
  /// Stops and joins the thread (at most one scrape timeout, ~1 s).
  void stop();
  /// A copy of the samples so far (locks briefly).
  std::vector<ServerSample> samples() const;
  std::uint64_t failures() const noexcept { return failures_.load(); }

 private:
  ServerMetricsScraper() = default;
  void run(std::chrono::steady_clock::time_point start);

  std::string host_, path_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> failures_{0};
  mutable std::mutex mutex_;
  std::vector<ServerSample> samples_;
};

}  // namespace loam::bots
