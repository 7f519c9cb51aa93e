// format(): printf-style formatting into a std::string, for diagnostics only (diff
// messages, errors). Internal to sim. Allocates.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace loam::sim::internal {

#if defined(__MINGW32__)
// mingw's "printf" archetype is msvcrt's (no %zu); the build uses mingw's C99 printf.
__attribute__((format(gnu_printf, 1, 2)))
#elif defined(__GNUC__)
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
