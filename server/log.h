// One-line log records on stderr, each written with a single write so lines from the
// step thread, the save writer and the ops threads never interleave.
//
// Text (the default): "<UTC time> <message>", or "<UTC time> <component>: <message>"
// for components other than "server".
// JSON (--log-format json, for log collectors): one object per line,
//   {"time":"...Z","level":"info","component":"server","msg":"...", <fields>}
// where <fields> are the message's key=value tokens (numbers stay numbers) and the
// level of a logLine is "error" / "warn" when the message starts with "error: " /
// "warning: ", else "info".
//
// Values that come from outside (player names, chat, addresses, reasons, admin
// command lines, file names) are printed through LogValue, so they cannot add fields,
// end the line or hide text: a value with a space, '=', a quote or a separator is
// quoted, and bytes that are not printable UTF-8 are written \xNN. Every line also has
// its control bytes escaped on the way out, so one event is always one line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "net/host_log.h"

namespace loam::server {

enum class LogFormat {
  Text,  ///< "<time> <message>" (default)
  Json,  ///< one JSON object per line
};

enum class LogLevel { Info, Warn, Error };

/// A value made safe to print with %s into a log line (see above; net/host_log.h):
///   logLine("player name=%s joined", LogValue(name).c_str());
using LogValue = net::LogValue;

/// Chooses the format of every later line. Call at start, before other threads log.
void setLogFormat(LogFormat format) noexcept;

/// printf-style, component "server"; the newline is added. Thread-safe; allocates
/// nothing (lines over 1 KB are cut). Never throws.
void logLine(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));

/// Like logLine with an explicit level and component ("http", "agones", ...).
void logAs(LogLevel level, const char* component, const char* format, ...) noexcept
    __attribute__((format(printf, 3, 4)));

/// The level logLine gives a message (by its "error: " / "warning: " prefix).
LogLevel levelOf(const char* message) noexcept;

/// Formats one record, newline included, into out (at most cap bytes; a record that
/// does not fit is cut and, in JSON, still closed). unixMs is the wall-clock time in
/// milliseconds since 1970. Returns the bytes written. Pure; allocates nothing.
/// Used by logLine and by the tests.
std::size_t formatLogRecord(char* out, std::size_t cap, LogFormat format, std::int64_t unixMs, LogLevel level,
                            const char* component, const char* message) noexcept;

}  // namespace loam::server
