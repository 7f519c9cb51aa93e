// LOAM_ASSERT: the engine's one assertion macro, for programmer errors only (bad
// input from files, the wire or users returns an error result instead).
#pragma once

#include <cstdio>
#include <cstdlib>

namespace loam::sim::detail {

/// Prints the failed condition with its location to stderr and aborts. Never returns.
[[noreturn]] inline void assertFailed(const char* expr, const char* file, int line) noexcept {
  std::fprintf(stderr, "%s:%d: LOAM_ASSERT(%s) failed\n", file, line, expr);
  std::abort();
}

}  // namespace loam::sim::detail

#ifndef LOAM_ASSERT
#if !defined(NDEBUG) || defined(LOAM_ENABLE_ASSERTS)
#define LOAM_ASSERT(cond) \
  ((cond) ? static_cast<void>(0) : ::loam::sim::detail::assertFailed(#cond, __FILE__, __LINE__))
#else
#define LOAM_ASSERT(cond) static_cast<void>(sizeof(static_cast<bool>(cond)))
#endif
#endif
