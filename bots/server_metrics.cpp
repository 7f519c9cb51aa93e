#include "bots/server_metrics.h"

#include <httplib.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace loam::bots {

namespace {

// The number after the metric (and its labels) on a sample line.
bool sampleValue(const std::string& line, std::size_t from, double& out) {
  const char* begin = line.c_str() + from;
  char* end = nullptr;
  out = std::strtod(begin, &end);
  return end != begin;
}

}  // namespace

MetricsScrape parseMetrics(const std::string& text) {
  MetricsScrape m;
  std::istringstream in(text);
  std::string line;
  const std::string bucket = "loam_step_seconds_bucket{";
  const std::string players = "loam_players";
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.compare(0, bucket.size(), bucket) == 0) {
      const std::size_t le = line.find("le=\"", bucket.size());
      const std::size_t close = line.find('}', bucket.size());
      if (le == std::string::npos || close == std::string::npos) continue;
      const std::size_t q = line.find('"', le + 4);
      if (q == std::string::npos) continue;
      const std::string bound = line.substr(le + 4, q - le - 4);
      const double b = bound == "+Inf" ? std::numeric_limits<double>::infinity() : std::strtod(bound.c_str(), nullptr);
      double v = 0;
      if (sampleValue(line, close + 1, v)) m.stepBuckets[b] = v;
    } else if (line.compare(0, players.size(), players) == 0 && line.size() > players.size() &&
               (line[players.size()] == ' ' || line[players.size()] == '{')) {
      std::size_t at = players.size();
      if (line[at] == '{') at = line.find('}', at) + 1;
      double v = 0;
      if (at != 0 && sampleValue(line, at, v)) m.players = v;
    }
  }
  return m;
}

double intervalQuantile(const std::map<double, double>& before, const std::map<double, double>& after, double q) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (after.empty()) return nan;
  auto deltaAt = [&](double le, double count) {
    const auto it = before.find(le);
    return count - (it == before.end() ? 0.0 : it->second);
  };
  const double total = deltaAt(after.rbegin()->first, after.rbegin()->second);
  if (!(total > 0)) return nan;
  const double want = q * total;
  double lowerBound = 0, lowerCount = 0;
  for (const auto& [le, count] : after) {
    const double c = deltaAt(le, count);
    if (c >= want) {
      if (std::isinf(le)) return lowerBound;  // beyond the last finite bucket: its bound
      const double inBucket = c - lowerCount;
      const double frac = inBucket > 0 ? (want - lowerCount) / inBucket : 1.0;
      return lowerBound + (le - lowerBound) * frac;
    }
    lowerBound = le;
    lowerCount = c;
  }
  return lowerBound;
}

sim::Result<std::unique_ptr<ServerMetricsScraper>> ServerMetricsScraper::create(const std::string& url) {
  const std::string scheme = "http://";
  if (url.compare(0, scheme.size(), scheme) != 0)
    return sim::makeError("--server-metrics must be http://HOST:PORT/metrics, got '" + url + "'");
  const std::size_t slash = url.find('/', scheme.size());
  const std::string hostPort = url.substr(scheme.size(), slash == std::string::npos ? std::string::npos
                                                                                    : slash - scheme.size());
  const std::size_t colon = hostPort.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= hostPort.size() ||
      hostPort.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    return sim::makeError("--server-metrics must be http://HOST:PORT/metrics, got '" + url + "'");
  const long port = std::strtol(hostPort.c_str() + colon + 1, nullptr, 10);
  if (port < 1 || port > 65535) return sim::makeError("--server-metrics: bad port in '" + url + "'");
  std::unique_ptr<ServerMetricsScraper> s(new ServerMetricsScraper());
  s->host_ = hostPort.substr(0, colon);
  s->port_ = static_cast<int>(port);
  s->path_ = slash == std::string::npos ? "/metrics" : url.substr(slash);
  return s;
}

ServerMetricsScraper::~ServerMetricsScraper() { stop(); }

void ServerMetricsScraper::start(std::chrono::steady_clock::time_point start) {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this, start] { run(start); });
}

void ServerMetricsScraper::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::vector<ServerSample> ServerMetricsScraper::samples() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return samples_;
}

void ServerMetricsScraper::run(std::chrono::steady_clock::time_point start) {
  using Clock = std::chrono::steady_clock;
  httplib::Client http(host_, port_);
  http.set_connection_timeout(0, 500000);
  http.set_read_timeout(1, 0);
  http.set_keep_alive(true);
  std::map<double, double> previous;
  bool havePrevious = false;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Clock::time_point next = Clock::now();
  while (!stop_) {
    auto res = http.Get(path_);
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    if (!res || res->status != 200) {
      ++failures_;
    } else {
      const MetricsScrape m = parseMetrics(res->body);
      ServerSample s;
      s.t = t;
      s.players = m.players >= 0 ? m.players : nan;
      // The first scrape has no interval before it: percentiles start with the second.
      s.stepP50Ms = havePrevious ? intervalQuantile(previous, m.stepBuckets, 0.50) * 1000.0 : nan;
      s.stepP99Ms = havePrevious ? intervalQuantile(previous, m.stepBuckets, 0.99) * 1000.0 : nan;
      previous = m.stepBuckets;
      havePrevious = true;
      std::lock_guard<std::mutex> lock(mutex_);
      samples_.push_back(s);
    }
    next += std::chrono::seconds(1);
    // Sleep in short slices so stop() does not wait a whole second.
    while (!stop_ && Clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace loam::bots
