// kSanitizerScale: how many times longer a time budget is in a sanitizer build. The
// asan-net preset runs the net suites under ASan + UBSan, where everything costs a
// few times more; a test's wall-time or tick budgets are multiplied by this so what
// it checks (the attack does not lock out an honest join, a reply comes) stays the
// same. ctest's own timeouts are scaled likewise (cmake/LoamTest.cmake).
#pragma once

namespace loam::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr int kSanitizerScale = 3;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr int kSanitizerScale = 3;
#else
inline constexpr int kSanitizerScale = 1;
#endif
#else
inline constexpr int kSanitizerScale = 1;
#endif

}  // namespace loam::test
