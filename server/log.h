// One-line log records on stderr, each prefixed with a UTC timestamp, written with a
// single write so lines from the step thread and the save writer never interleave.
#pragma once

namespace loam::server {

/// printf-style; the newline is added. Thread-safe; allocates nothing for lines
/// under 1 KB (longer ones are cut). Never throws.
void logLine(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));

}  // namespace loam::server
