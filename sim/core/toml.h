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
#pragma once

#include <toml++/impl/preprocessor.h>

#undef TOML_ASSERT
#undef TOML_ASSERT_ASSUME
#define TOML_ASSERT(expr) static_cast<void>(0)
#define TOML_ASSERT_ASSUME(expr) static_cast<void>(0)

#include <toml++/toml.h>
