// Log lines from the server side of net/ (ServerHost and its parts in net/host/):
// one event, one line, handed to the sink the program installs (loam-server sends
// them through server/log.h, so they share its format, escaping and atomic writes);
// without a sink they go to stderr as "loam-server: <line>". Header-only: the sink is
// one process-wide pointer. LogValue, the escaping of values from outside, lives here
// because both the host and server/log.h (which names it loam::server::LogValue) use it.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace loam::net {

/// A value made safe to print with %s into a log line: a value with a space, '=', a
/// quote or a separator (what would end or split a key=value token) is quoted, '"'
/// and '\' inside are escaped, and bytes that are not printable UTF-8 (controls,
/// invalid or overlong sequences, C1, bidi controls, zero-width and other invisible
/// characters) are written \xNN. Values longer than kMaxBytes are cut and end in
/// "...". Allocates nothing; never throws.
///   hostLog("player name=%s joined", LogValue(name).c_str());
class LogValue {
 public:
  static constexpr std::size_t kMaxBytes = 256;  ///< of the raw value
  explicit LogValue(std::string_view raw) noexcept;
  /// The escaped text, NUL-terminated; valid while the LogValue lives.
  const char* c_str() const noexcept { return text_; }

 private:
  char text_[kMaxBytes * 4 + 8];  ///< every byte as \xNN, two quotes, "..." and NUL
};

namespace detail {
/// Length of the UTF-8 sequence of a printable code point at s[0..len), or 0 when
/// the bytes are not one: invalid or overlong UTF-8, surrogates, C1 controls, and the
/// characters that hide or reorder text (zero-width, bidi controls, line separators).
inline std::size_t printableUtf8(const unsigned char* s, std::size_t len) noexcept {
  std::size_t n = s[0] < 0xC2 ? 0 : s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3 : s[0] < 0xF5 ? 4 : 0;
  if (n == 0 || n > len) return 0;
  std::uint32_t cp = s[0] & (0xFFu >> (n + 1));
  for (std::size_t i = 1; i < n; ++i) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3Fu);
  }
  constexpr std::uint32_t kMinOf[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinOf[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (cp < 0xA0) return 0;  // C1 controls
  if (cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
      (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF || cp == 0x00AD) {
    return 0;
  }
  return n;
}

}  // namespace detail

inline LogValue::LogValue(std::string_view raw) noexcept {
  const bool cut = raw.size() > kMaxBytes;
  if (cut) raw = raw.substr(0, kMaxBytes);
  bool quote = raw.empty();
  for (char c : raw) {
    auto u = static_cast<unsigned char>(c);
    // What ends or splits a key=value token (see putFields), and what needs escaping.
    if (u <= ' ' || u >= 0x7f || std::strchr("=\"'\\,;()", c) != nullptr) quote = true;
  }
  std::size_t n = 0;
  if (quote) text_[n++] = '"';
  const auto* s = reinterpret_cast<const unsigned char*>(raw.data());
  for (std::size_t i = 0; i < raw.size();) {
    const unsigned char c = s[i];
    if (c >= 0x80) {
      if (std::size_t k = detail::printableUtf8(s + i, raw.size() - i); k > 0) {
        std::memcpy(text_ + n, s + i, k);
        n += k;
        i += k;
        continue;
      }
    }
    if (c == '"' || c == '\\') {
      text_[n++] = '\\';
      text_[n++] = static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      text_[n++] = '\\';
      text_[n++] = 'x';
      text_[n++] = kHex[c >> 4];
      text_[n++] = kHex[c & 15];
    } else {
      text_[n++] = static_cast<char>(c);
    }
    ++i;
  }
  if (cut) {
    std::memcpy(text_ + n, "...", 3);
    n += 3;
  }
  if (quote) text_[n++] = '"';
  text_[n] = '\0';
}

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
