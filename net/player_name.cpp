#include "net/player_name.h"

#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "sim/core/short_text.h"

namespace loam::net {
namespace {

struct Range {
  char32_t first, last;
  const char* what;
};

// Code points a name may not hold: invisible, direction-changing or look-alike
// characters that make two different names print the same (or reorder a log line).
constexpr std::array kRefused{
    Range{0x0000, 0x001F, "a control character"},
    Range{0x007F, 0x009F, "a control character"},
    Range{0x00A0, 0x00A0, "a space other than ASCII space"},
    Range{0x00AD, 0x00AD, "an invisible character (soft hyphen)"},
    Range{0x034F, 0x034F, "an invisible character (combining grapheme joiner)"},
    Range{0x061C, 0x061C, "a bidi mark"},
    Range{0x115F, 0x1160, "an invisible character (Hangul filler)"},
    Range{0x1680, 0x1680, "a space other than ASCII space"},
    Range{0x17B4, 0x17B5, "an invisible character (Khmer vowel)"},
    Range{0x180B, 0x180F, "an invisible character (Mongolian selector)"},
    Range{0x2000, 0x200A, "a space other than ASCII space"},
    Range{0x200B, 0x200D, "a zero-width character"},
    Range{0x200E, 0x200F, "a bidi mark"},
    Range{0x2028, 0x2029, "a line or paragraph separator"},
    Range{0x202A, 0x202E, "a bidi embedding or override"},
    Range{0x202F, 0x202F, "a space other than ASCII space"},
    Range{0x205F, 0x205F, "a space other than ASCII space"},
    Range{0x2060, 0x2065, "an invisible character (word joiner, invisible operator)"},
    Range{0x2066, 0x2069, "a bidi isolate"},
    Range{0x206A, 0x206F, "an invisible format character"},
    Range{0x3000, 0x3000, "a space other than ASCII space"},
    Range{0x3164, 0x3164, "an invisible character (Hangul filler)"},
    Range{0xD800, 0xDFFF, "a surrogate"},
    Range{0xE000, 0xF8FF, "a private-use character"},
    Range{0xFDD0, 0xFDEF, "a noncharacter"},
    Range{0xFE00, 0xFE0F, "a variation selector"},
    Range{0xFEFF, 0xFEFF, "a zero-width character (byte order mark)"},
    Range{0xFFA0, 0xFFA0, "an invisible character (Hangul filler)"},
    Range{0xFFF0, 0xFFFD, "a special (annotation, replacement character)"},
    Range{0x1BCA0, 0x1BCA3, "an invisible format character"},
    Range{0x1D173, 0x1D17A, "an invisible format character"},
    Range{0xE0000, 0xE0FFF, "a tag or variation selector"},
    Range{0xF0000, 0x10FFFF, "a private-use character"},
};

// The blocks of combining marks that stack (Zalgo text): allowed, but not first and
// not more than kMaxMarksInRow in a row.
constexpr std::array kCombining{
    Range{0x0300, 0x036F, ""}, Range{0x1AB0, 0x1AFF, ""}, Range{0x1DC0, 0x1DFF, ""},
    Range{0x20D0, 0x20FF, ""}, Range{0xFE20, 0xFE2F, ""},
};
constexpr int kMaxMarksInRow = 2;

constexpr std::array<std::string_view, 16> kReservedWords{
    "server", "admin",  "administrator", "console",   "system", "loam", "root",     "operator",
    "host",   "owner",  "moderator",     "mod",       "staff",  "everyone", "nobody", "anonymous",
};

template <std::size_t N>
const Range* find(const std::array<Range, N>& table, char32_t c) noexcept {
  for (const Range& r : table) {
    if (c >= r.first && c <= r.last) return &r;
  }
  return nullptr;
}

// Decodes one UTF-8 sequence at s[i], advancing i; nullopt for an invalid one
// (truncated, bad continuation, overlong, surrogate, past U+10FFFF).
std::optional<char32_t> decode(std::string_view s, std::size_t& i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(s[k]); };
  const std::uint8_t b0 = byte(i);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  std::size_t len = 0;
  char32_t c = 0, min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, c = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, c = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, c = b0 & 0x07, min = 0x10000;
  } else {
    return std::nullopt;
  }
  if (s.size() - i < len) return std::nullopt;
  for (std::size_t k = 1; k < len; ++k) {
    const std::uint8_t b = byte(i + k);
    if ((b & 0xC0) != 0x80) return std::nullopt;
    c = (c << 6) | (b & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return std::nullopt;
  i += len;
  return c;
}

bool isNoncharacter(char32_t c) noexcept { return (c & 0xFFFE) == 0xFFFE; }  // U+xxFFFE, U+xxFFFF

NameCheck bad(RejectCode code, std::string why) { return NameCheck{code, std::move(why), {}}; }

std::string hex(char32_t c) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out = "U+";
  for (int shift = c > 0xFFFF ? 20 : 12; shift >= 0; shift -= 4) out += kDigits[(c >> shift) & 0xF];
  return out;
}

}  // namespace

std::string foldName(std::string_view name) {
  std::string out(name);
  for (char& ch : out) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  return out;
}

bool isReservedName(std::string_view name) {
  if (name.empty()) return false;
  if (name.front() == '#') return true;
  bool digitsOnly = true;
  for (char ch : name) digitsOnly = digitsOnly && ch >= '0' && ch <= '9';
  if (digitsOnly) return true;
  const std::string folded = foldName(name);
  for (std::string_view w : kReservedWords) {
    if (folded == w) return true;
  }
  return false;
}

NameCheck checkPlayerName(std::string_view raw) {
  std::size_t begin = 0, end = raw.size();
  while (begin < end && raw[begin] == ' ') ++begin;
  while (end > begin && raw[end - 1] == ' ') --end;
  const std::string_view name = raw.substr(begin, end - begin);
  if (name.empty()) return bad(RejectCode::BadName, "the name is empty");

  std::size_t count = 0;
  int marksInRow = 0;
  char32_t prev = 0;
  for (std::size_t i = 0; i < name.size();) {
    const std::size_t at = begin + i;
    const std::optional<char32_t> c = decode(name, i);
    if (!c) return bad(RejectCode::BadName, "byte " + std::to_string(at + 1) + " is not valid UTF-8");
    if (const Range* r = find(kRefused, *c)) {
      return bad(RejectCode::BadName, "character " + std::to_string(count + 1) + " (" + hex(*c) + ") is " + r->what);
    }
    if (isNoncharacter(*c)) {
      return bad(RejectCode::BadName, "character " + std::to_string(count + 1) + " (" + hex(*c) + ") is a noncharacter");
    }
    if (*c == ' ' && prev == ' ') return bad(RejectCode::BadName, "two spaces in a row");
    if (find(kCombining, *c)) {
      if (count == 0) return bad(RejectCode::BadName, "the name starts with a combining mark");
      if (++marksInRow > kMaxMarksInRow) {
        return bad(RejectCode::BadName, "more than " + std::to_string(kMaxMarksInRow) + " combining marks in a row");
      }
    } else {
      marksInRow = 0;
    }
    prev = *c;
    ++count;
  }
  if (count > kMaxNameCodePoints) {
    return bad(RejectCode::BadName, std::to_string(count) + " characters, at most " +
                                        std::to_string(kMaxNameCodePoints));
  }
  if (name.size() > sim::kMaxNameBytes) {
    return bad(RejectCode::BadName, std::to_string(name.size()) + " bytes of UTF-8, at most " +
                                        std::to_string(sim::kMaxNameBytes));
  }
  if (isReservedName(name)) {
    // Appended, not `"\"" + std::string(name)`: GCC 12 misreads that as an overlapping copy.
    std::string why = "\"";
    why.append(name).append("\" is reserved (server words, digits only, or a leading '#')");
    return bad(RejectCode::NameReserved, std::move(why));
  }
  return NameCheck{RejectCode::None, {}, std::string(name)};
}

}  // namespace loam::net
