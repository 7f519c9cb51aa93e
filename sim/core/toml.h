// The one way Loam includes toml++: every file that parses TOML includes this header,
// never <toml++/toml.h> itself (toml++ is header-only here, so a file that included it
// directly would compile its parser with other macros: an ODR violation).
//
// Why: toml++ 3.x states its parser's invariants with TOML_ASSERT_ASSUME, which is
// assert() without NDEBUG and __builtin_assume() with it under clang. Hostile text
// breaks at least two of them (parse_key's first character on "[[[1]]]", fixed
// upstream in marzer/tomlplusplus PR #301 but not in Debian's 3.3.0, and
// !is_value_terminator(*cp) in parse_value): a Debug build aborts and a clang release
// build has undefined behaviour. Here neither macro asserts nor assumes, in every
// build: the parser goes on as GCC's release build always did, and reports the text
// as a syntax error with its line and column (tests/sim/toml_test.cpp; the fuzz
// targets run it under ASan and UBSan). Throwing at the broken invariant instead
// would lose the position the error messages carry.
//
// Second: toml++ 3.3's generated is_non_ascii_horizontal_whitespace reaches
// TOML_UNREACHABLE (__builtin_unreachable) for U+00A1..U+0499 and U+2D0E..U+3107
// (its bitmask skips two table rows), so "a = 1" followed by such a character is
// undefined behaviour (found by fuzz/scene.cpp under UBSan). Its only caller,
// is_horizontal_whitespace, is redirected to tomlNonAsciiHorizontalWhitespace below by
// token pasting: the definition `is_non_ascii_horizontal_whitespace(char32_t c)`
// becomes an unused function of another name, the call
// `is_non_ascii_horizontal_whitespace(c)` becomes the call of the correct one.
#pragma once

#include <toml++/impl/preprocessor.h>

#undef TOML_ASSERT
#undef TOML_ASSERT_ASSUME
#define TOML_ASSERT(expr) static_cast<void>(0)
#define TOML_ASSERT_ASSUME(expr) static_cast<void>(0)

namespace loam::sim::internal {
/// The non-ASCII horizontal whitespace toml++ accepts (its table, without the gaps).
constexpr bool tomlNonAsciiHorizontalWhitespace(char32_t c) noexcept {
  return c == U'\u00A0' || c == U'\u1680' || c == U'\u180E' || (c >= U'\u2000' && c <= U'\u200B') ||
         c == U'\u202F' || c == U'\u205F' || c == U'\u2060' || c == U'\u3000' || c == U'\uFEFF';
}
}  // namespace loam::sim::internal

#define is_non_ascii_horizontal_whitespace(arg) LOAM_TOML_WS_##arg)
#define LOAM_TOML_WS_char32_t toml_3_3_unused_is_non_ascii_horizontal_whitespace(char32_t
#define LOAM_TOML_WS_c ::loam::sim::internal::tomlNonAsciiHorizontalWhitespace(c

#include <toml++/toml.h>

#undef is_non_ascii_horizontal_whitespace
#undef LOAM_TOML_WS_char32_t
#undef LOAM_TOML_WS_c
