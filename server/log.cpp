#include "server/log.h"

#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace loam::server {

void logLine(const char* format, ...) noexcept {
  char buf[1024];
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  int n = static_cast<int>(std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm));
  n += std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), ".%03dZ ", static_cast<int>(ms));
  va_list args;
  va_start(args, format);
  int m = std::vsnprintf(buf + n, sizeof buf - static_cast<std::size_t>(n) - 1, format, args);
  va_end(args);
  if (m < 0) m = 0;
  std::size_t len = static_cast<std::size_t>(n) + static_cast<std::size_t>(m);
  if (len > sizeof buf - 2) len = sizeof buf - 2;  // cut long lines, keep the newline
  buf[len++] = '\n';
  // One write(2) per line: atomic with respect to other writers of stderr.
  ssize_t ignored = ::write(STDERR_FILENO, buf, len);
  (void)ignored;
}

}  // namespace loam::server
