// format(): printf-style formatting into a std::string, for diagnostics only (diff
// messages, errors). Internal to sim. Allocates.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace loam::sim::internal {

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
inline std::string format(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n < 0) return std::string();
  return std::string(buf, static_cast<std::size_t>(n) < sizeof(buf) ? static_cast<std::size_t>(n) : sizeof(buf) - 1);
}

}  // namespace loam::sim::internal
