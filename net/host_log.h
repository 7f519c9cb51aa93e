// Log lines from the server side of net/ (ServerHost and its parts in net/host/):
// one event, one line, handed to the sink the program installs (loam-server sends
// them through server/log.h, so they share its format, escaping and atomic writes);
// without a sink they go to stderr as "loam-server: <line>". Header-only: the sink is
// one process-wide pointer.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace loam::net {

/// Receives one formatted line (no newline). Must be thread-safe; never throws.
using HostLogSink = void (*)(const char* line) noexcept;

namespace detail {
inline std::atomic<HostLogSink> gHostLogSink{nullptr};
}  // namespace detail

/// Installs the sink for every later hostLog (nullptr: back to stderr). Thread: any.
inline void setHostLogSink(HostLogSink sink) noexcept { detail::gHostLogSink.store(sink); }

/// printf-style; lines over 1 KB are cut. Start with "error: " / "warning: " for the
/// level (server/log.h). Allocates nothing; thread-safe.
inline void hostLog(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));
inline void hostLog(const char* format, ...) noexcept {
  char line[1024];
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n < 0) return;
  if (HostLogSink sink = detail::gHostLogSink.load()) {
    sink(line);
    return;
  }
  char out[1100];
  int m = std::snprintf(out, sizeof out, "loam-server: %s\n", line);
  if (m > 0) {
    ssize_t ignored = ::write(STDERR_FILENO, out, static_cast<std::size_t>(std::min(m, static_cast<int>(sizeof out) - 1)));
    (void)ignored;
  }
}

}  // namespace loam::net
