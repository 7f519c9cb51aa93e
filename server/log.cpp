#include "server/log.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace loam::server {

namespace {

std::atomic<LogFormat> gFormat{LogFormat::Text};

/// Appends into a fixed buffer up to `limit`; past it, `full` is set and bytes are
/// dropped, so callers can roll back to a mark.
struct Out {
  char* p;
  std::size_t limit;
  std::size_t n = 0;
  bool full = false;

  void put(char c) noexcept {
    if (n < limit) {
      p[n++] = c;
    } else {
      full = true;
    }
  }
  void put(const char* s, std::size_t len) noexcept {
    for (std::size_t i = 0; i < len; ++i) put(s[i]);
  }
  void put(const char* s) noexcept { put(s, std::strlen(s)); }
};

/// "2026-11-30T17:16:32.123Z" (24 bytes + NUL).
void formatTime(std::int64_t unixMs, char (&buf)[32]) noexcept {
  std::time_t secs = static_cast<std::time_t>(unixMs / 1000);
  int ms = static_cast<int>(unixMs % 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", ms);
}

/// Appends s[0..len) as the inside of a JSON string; stops (with full set) before an
/// escape sequence that would not fit, so the output never ends mid-escape.
void putEscaped(Out& o, const char* s, std::size_t len) noexcept {
  for (std::size_t i = 0; i < len && !o.full; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    char esc[8];
    std::size_t m = 0;
    if (c == '"' || c == '\\') {
      esc[m++] = '\\';
      esc[m++] = static_cast<char>(c);
    } else if (c == '\n') {
      esc[m++] = '\\';
      esc[m++] = 'n';
    } else if (c == '\t') {
      esc[m++] = '\\';
      esc[m++] = 't';
    } else if (c < 0x20 || c == 0x7f) {
      m = static_cast<std::size_t>(std::snprintf(esc, sizeof esc, "\\u%04x", c));
    } else {
      esc[m++] = static_cast<char>(c);
    }
    if (o.n + m > o.limit) {
      o.full = true;
      return;
    }
    o.put(esc, m);
  }
}

bool isKeyStart(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isKeyChar(char c) noexcept { return isKeyStart(c) || (c >= '0' && c <= '9') || c == '.'; }
bool isDigit(char c) noexcept { return c >= '0' && c <= '9'; }

/// A JSON number exactly: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool isJsonNumber(const char* s, std::size_t len) noexcept {
  std::size_t i = 0;
  if (i < len && s[i] == '-') ++i;
  if (i >= len || !isDigit(s[i])) return false;
  if (s[i] == '0') {
    ++i;
  } else {
    while (i < len && isDigit(s[i])) ++i;
  }
  if (i < len && s[i] == '.') {
    ++i;
    if (i >= len || !isDigit(s[i])) return false;
    while (i < len && isDigit(s[i])) ++i;
  }
  if (i < len && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < len && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= len || !isDigit(s[i])) return false;
    while (i < len && isDigit(s[i])) ++i;
  }
  return i == len;
}

const char* levelName(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::Info:
      return "info";
    case LogLevel::Warn:
      return "warn";
    case LogLevel::Error:
      return "error";
  }
  return "info";
}

/// Appends ,"key":value for every key=value token of the message: a key is
/// [A-Za-z_][A-Za-z0-9_.]* at the start or after a space, '(' or ','; a value runs to
/// the next space (or control byte), ',', ';' or ')', or is quoted with ' or ". Reserved and repeated
/// keys are skipped; a field that does not fit is left out whole.
void putFields(Out& o, const char* msg) noexcept {
  struct Key {
    const char* s;
    std::size_t len;
  };
  Key seen[32];
  std::size_t nSeen = 0;
  const std::size_t len = std::strlen(msg);
  for (std::size_t i = 0; i < len; ++i) {
    if (!isKeyStart(msg[i])) continue;
    if (i > 0 && msg[i - 1] != ' ' && msg[i - 1] != '(' && msg[i - 1] != ',') continue;
    std::size_t k = i;
    while (k < len && isKeyChar(msg[k])) ++k;
    if (k >= len || msg[k] != '=') {
      i = k;
      continue;
    }
    const char* key = msg + i;
    std::size_t keyLen = k - i;
    std::size_t v = k + 1, vEnd = v;
    bool quoted = v < len && (msg[v] == '\'' || msg[v] == '"');
    if (quoted) {
      char q = msg[v++];
      vEnd = v;
      // A backslash escapes the next byte (LogValue writes \" inside a quoted value).
      while (vEnd < len && msg[vEnd] != q) vEnd += msg[vEnd] == '\\' && vEnd + 1 < len ? 2 : 1;
      vEnd = std::min(vEnd, len);
      i = vEnd;  // skip past the closing quote on the next iteration
    } else {
      while (vEnd < len && static_cast<unsigned char>(msg[vEnd]) > ' ' && msg[vEnd] != ',' && msg[vEnd] != ';' &&
             msg[vEnd] != ')') {
        ++vEnd;
      }
      i = vEnd;
    }
    if (!quoted && vEnd == v) continue;
    bool skip = false;
    for (const char* reserved : {"time", "level", "component", "msg"}) {
      if (std::strlen(reserved) == keyLen && std::memcmp(reserved, key, keyLen) == 0) skip = true;
    }
    for (std::size_t s = 0; s < nSeen && !skip; ++s) {
      if (seen[s].len == keyLen && std::memcmp(seen[s].s, key, keyLen) == 0) skip = true;
    }
    if (skip || nSeen == std::size(seen)) continue;
    seen[nSeen++] = {key, keyLen};
    const std::size_t mark = o.n;
    o.put(",\"");
    putEscaped(o, key, keyLen);
    o.put("\":");
    if (!quoted && isJsonNumber(msg + v, vEnd - v)) {
      o.put(msg + v, vEnd - v);
    } else {
      o.put('"');
      putEscaped(o, msg + v, vEnd - v);
      o.put('"');
    }
    if (o.full) {
      o.n = mark;
      return;
    }
  }
}

/// Copies msg into out with every control byte as \xNN (one event, one line).
void escapeControls(const char* msg, char* out, std::size_t cap) noexcept {
  std::size_t n = 0;
  for (const char* p = msg; *p != '\0' && n + 5 < cap; ++p) {
    auto c = static_cast<unsigned char>(*p);
    if (c < 0x20 || c == 0x7f) {
      n += static_cast<std::size_t>(std::snprintf(out + n, cap - n, "\\x%02x", c));
    } else {
      out[n++] = static_cast<char>(c);
    }
  }
  out[n] = '\0';
}

void emit(LogLevel level, const char* component, const char* format, va_list args) noexcept {
  char raw[1024];
  int m = std::vsnprintf(raw, sizeof raw, format, args);
  if (m < 0) raw[0] = '\0';
  char msg[4096];
  escapeControls(raw, msg, sizeof msg);
  auto now = std::chrono::system_clock::now();
  auto unixMs = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  // Big enough that a 1 KB message escaped to JSON, with its fields, is never cut.
  char out[16384];
  std::size_t n = formatLogRecord(out, sizeof out, gFormat.load(std::memory_order_relaxed),
                                  static_cast<std::int64_t>(unixMs), level, component, msg);
  // One write(2) per line: atomic with respect to other writers of stderr.
  ssize_t ignored = ::write(STDERR_FILENO, out, n);
  (void)ignored;
}

}  // namespace

void setLogFormat(LogFormat format) noexcept { gFormat.store(format, std::memory_order_relaxed); }

LogLevel levelOf(const char* message) noexcept {
  if (std::strncmp(message, "error: ", 7) == 0) return LogLevel::Error;
  if (std::strncmp(message, "warning: ", 9) == 0) return LogLevel::Warn;
  return LogLevel::Info;
}

std::size_t formatLogRecord(char* out, std::size_t cap, LogFormat format, std::int64_t unixMs, LogLevel level,
                            const char* component, const char* message) noexcept {
  if (cap < 256) return 0;
  char time[32];
  formatTime(unixMs, time);
  switch (format) {
    case LogFormat::Text: {
      Out o{out, cap - 1};  // room for the newline
      o.put(time);
      o.put(' ');
      if (std::strcmp(component, "server") != 0) {
        o.put(component);
        o.put(": ");
      }
      o.put(message);
      out[o.n++] = '\n';
      return o.n;
    }
    case LogFormat::Json: {
      Out o{out, cap - 3};  // room for a closing quote, brace and newline after a cut
      o.put("{\"time\":\"");
      o.put(time);
      o.put("\",\"level\":\"");
      o.put(levelName(level));
      o.put("\",\"component\":\"");
      putEscaped(o, component, std::strlen(component));
      o.put("\",\"msg\":\"");
      putEscaped(o, message, std::strlen(message));
      if (o.full) {
        out[o.n++] = '"';
      } else {
        o.put('"');
        putFields(o, message);
      }
      out[o.n++] = '}';
      out[o.n++] = '\n';
      return o.n;
    }
  }
  return 0;
}

void logLine(const char* format, ...) noexcept {
  va_list args;
  va_start(args, format);
  // The level comes from the formatted text; format strings start with it literally.
  emit(levelOf(format), "server", format, args);
  va_end(args);
}

void logAs(LogLevel level, const char* component, const char* format, ...) noexcept {
  va_list args;
  va_start(args, format);
  emit(level, component, format, args);
  va_end(args);
}

}  // namespace loam::server
