// Counts heap allocations, for tests that assert a path never allocates (the audio
// thread), and keeps the largest single one, for tests that bound what a decoder of
// hostile bytes allocates (gLargestAlloc = 0; ...; gLargestAlloc.load()). Replaces the global operator new/delete for the whole test binary: include
// this header in exactly one source file of a test executable.
//   loam::test::gAllocs = 0; loam::test::gCountAllocs = true; ...; gCountAllocs = false;
#pragma once
#include <atomic>
#include <cstdlib>
#include <new>

namespace loam::test {
inline std::atomic<bool> gCountAllocs{false};
inline std::atomic<long> gAllocs{0};
inline std::atomic<std::size_t> gLargestAlloc{0};
}  // namespace loam::test

// These replace the global operators for the whole binary, so malloc/free pair up;
// GCC cannot see that once std::allocator inlines them and warns wrongly.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  if (loam::test::gCountAllocs.load(std::memory_order_relaxed))
    loam::test::gAllocs.fetch_add(1, std::memory_order_relaxed);
  std::size_t seen = loam::test::gLargestAlloc.load(std::memory_order_relaxed);
  while (n > seen && !loam::test::gLargestAlloc.compare_exchange_weak(seen, n, std::memory_order_relaxed)) {
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
