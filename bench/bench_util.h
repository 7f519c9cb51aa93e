// Small shared pieces of the benchmark programs: nearest-rank percentiles and the
// calling thread's CPU time (which, unlike wall time, leaves out preemption, the
// dominant tail on a loaded 2-core machine).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include <time.h>

namespace loam::bench {

/// Nearest-rank percentile (p in 0..1) of v; 0 when empty.
inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
}

/// CPU time of the calling thread, microseconds.
inline double threadCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

}  // namespace loam::bench
