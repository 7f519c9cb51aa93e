// RangeAllocator: alignment, exhaustion, coalescing, best fit, and a 100k-operation
// chunk-mesh churn checked at every step against a reference model of live ranges.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "render/range_allocator.h"

using loam::render::RangeAllocator;

namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;

/// Independent of RangeAllocator::roundUp, which the first test checks against it.
std::uint64_t alignedSize(std::uint64_t bytes, std::uint64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

/// What best fit must return given the live ranges (offset -> rounded size): the
/// smallest gap that fits, the lowest among equal sizes; nullopt when none fits.
std::optional<std::uint64_t> expectedBestFit(const std::map<std::uint64_t, std::uint64_t>& live,
                                             std::uint64_t capacity, std::uint64_t size) {
  std::optional<std::uint64_t> best;
  std::uint64_t bestSize = 0;
  std::uint64_t cursor = 0;
  auto consider = [&](std::uint64_t start, std::uint64_t end) {
    const std::uint64_t gap = end - start;
    if (gap >= size && (!best || gap < bestSize)) best = start, bestSize = gap;
  };
  for (const auto& [offset, bytes] : live) {
    consider(cursor, offset);
    cursor = offset + bytes;
  }
  consider(cursor, capacity);
  return best;
}

/// Free gaps between the live ranges: their count and the largest.
struct Gaps {
  std::size_t count = 0;
  std::uint64_t largest = 0;
};
Gaps gapsOf(const std::map<std::uint64_t, std::uint64_t>& live, std::uint64_t capacity) {
  Gaps g;
  std::uint64_t cursor = 0;
  auto add = [&](std::uint64_t start, std::uint64_t end) {
    if (end > start) ++g.count, g.largest = std::max(g.largest, end - start);
  };
  for (const auto& [offset, bytes] : live) {
    add(cursor, offset);
    cursor = offset + bytes;
  }
  add(cursor, capacity);
  return g;
}

}  // namespace

TEST_CASE("RangeAllocator: offsets are aligned and sizes round up to the alignment") {
  RangeAllocator a(1 * kMiB);
  CHECK(a.alignment() == 256);
  auto x = a.allocate(1);
  auto y = a.allocate(257);
  auto z = a.allocate(256);
  REQUIRE(x);
  REQUIRE(y);
  REQUIRE(z);
  CHECK(*x == 0);
  CHECK(*y == 256);
  CHECK(*z == 768);
  CHECK(a.used() == 256 + 512 + 256);
  CHECK(a.allocations() == 3);
  CHECK(a.largestFree() == 1 * kMiB - 1024);

  RangeAllocator b(64 * kKiB, 4096);
  for (std::uint64_t bytes : {1u, 4095u, 4096u, 4097u, 10000u}) {
    auto o = b.allocate(bytes);
    REQUIRE(o);
    CHECK(*o % 4096 == 0);
  }
  CHECK(b.used() == 4096 * (1 + 1 + 1 + 2 + 3));

  for (std::uint64_t bytes : {1u, 255u, 256u, 257u, 1000u, 65536u}) {
    CHECK(RangeAllocator::roundUp(bytes, 256) == alignedSize(bytes, 256));
    CHECK(RangeAllocator::roundUp(bytes, 1) == bytes);
  }

  RangeAllocator c(100, 1);  // alignment 1: sizes are exact
  CHECK(c.allocate(3) == std::optional<std::uint64_t>(0));
  CHECK(c.allocate(97) == std::optional<std::uint64_t>(3));
  CHECK(c.used() == 100);
  CHECK(c.largestFree() == 0);
}

TEST_CASE("RangeAllocator: zero bytes and requests larger than the block return nullopt") {
  RangeAllocator a(1 * kMiB);
  CHECK_FALSE(a.allocate(0));
  CHECK_FALSE(a.allocate(1 * kMiB + 1));
  CHECK_FALSE(a.allocate(~std::uint64_t{0}));  // must not overflow while rounding up
  CHECK(a.used() == 0);
  CHECK(a.allocations() == 0);
  CHECK(a.freeRanges() == 1);
  auto all = a.allocate(1 * kMiB);
  REQUIRE(all);
  CHECK(*all == 0);

  RangeAllocator empty(0);
  CHECK(empty.largestFree() == 0);
  CHECK(empty.freeRanges() == 0);
  CHECK_FALSE(empty.allocate(1));
}

TEST_CASE("RangeAllocator: exhaustion returns nullopt and recovers after frees") {
  RangeAllocator a(16 * kKiB, 1 * kKiB);
  std::vector<std::uint64_t> offsets;
  while (auto o = a.allocate(1 * kKiB)) offsets.push_back(*o);
  CHECK(offsets.size() == 16);
  CHECK(a.used() == a.capacity());
  CHECK(a.largestFree() == 0);
  CHECK(a.freeRanges() == 0);
  CHECK_FALSE(a.allocate(1));
  CHECK(a.allocations() == 16);  // the failure changed nothing

  // Two separate 1 KiB holes: 2 KiB free but no 2 KiB range.
  a.free(offsets[3]);
  a.free(offsets[9]);
  CHECK(a.used() == 14 * kKiB);
  CHECK(a.largestFree() == 1 * kKiB);
  CHECK_FALSE(a.allocate(2 * kKiB));
  // Their neighbour joins the second into a 2 KiB range, which now fits.
  a.free(offsets[10]);
  CHECK(a.largestFree() == 2 * kKiB);
  auto big = a.allocate(2 * kKiB);
  REQUIRE(big);
  CHECK(*big == offsets[9]);
  auto small = a.allocate(1);
  REQUIRE(small);
  CHECK(*small == offsets[3]);
  CHECK(a.used() == a.capacity());
  CHECK_FALSE(a.allocate(1));
}

TEST_CASE("RangeAllocator: freeing merges adjacent free ranges") {
  RangeAllocator a(8 * kKiB, 1 * kKiB);
  std::vector<std::uint64_t> o;
  for (int i = 0; i < 8; ++i) o.push_back(*a.allocate(1 * kKiB));
  CHECK(a.freeRanges() == 0);

  a.free(o[2]);
  CHECK(a.freeRanges() == 1);
  a.free(o[4]);
  CHECK(a.freeRanges() == 2);
  a.free(o[3]);  // joins both neighbours: [2, 5)
  CHECK(a.freeRanges() == 1);
  CHECK(a.largestFree() == 3 * kKiB);
  a.free(o[1]);  // joins the range after it: [1, 5)
  CHECK(a.freeRanges() == 1);
  CHECK(a.largestFree() == 4 * kKiB);
  a.free(o[5]);  // joins the range before it: [1, 6)
  CHECK(a.freeRanges() == 1);
  CHECK(a.largestFree() == 5 * kKiB);
  a.free(o[7]);  // the block's end, alone: [7, 8)
  CHECK(a.freeRanges() == 2);
  a.free(o[0]);  // the block's start: [0, 6)
  CHECK(a.freeRanges() == 2);
  CHECK(a.largestFree() == 6 * kKiB);
  a.free(o[6]);
  CHECK(a.freeRanges() == 1);
  CHECK(a.largestFree() == a.capacity());
  CHECK(a.used() == 0);
  CHECK(a.allocations() == 0);
  // The whole block is one range again.
  CHECK(a.allocate(8 * kKiB) == std::optional<std::uint64_t>(0));
}

TEST_CASE("RangeAllocator: best fit takes the smallest free range that fits") {
  // Holes of 4, 1, 2, 3 and 2 KiB (in address order) between 1 KiB live ranges,
  // then the free rest of the block (18 KiB).
  RangeAllocator a(32 * kKiB, 1 * kKiB);
  std::map<std::uint64_t, std::uint64_t> holes;  // offset -> size
  std::uint64_t cursor = 0;
  for (std::uint64_t kib : {4u, 1u, 2u, 3u, 2u}) {
    auto hole = a.allocate(kib * kKiB);
    REQUIRE(hole);
    REQUIRE(a.allocate(1 * kKiB));  // the separator stays live
    holes[*hole] = kib * kKiB;
    cursor = *hole + (kib + 1) * kKiB;
  }
  for (const auto& [offset, size] : holes) a.free(offset);
  CHECK(a.freeRanges() == 6);
  CHECK(a.largestFree() == 32 * kKiB - cursor);
  auto holeAt = [&](std::uint64_t kib) {  // the lowest hole of that size
    for (const auto& [offset, size] : holes)
      if (size == kib * kKiB) return offset;
    FAIL("no hole of " << kib << " KiB");
    return std::uint64_t{0};
  };

  // 1.5 KiB (2 KiB once rounded): the 2 KiB holes fit exactly; the lower one wins and
  // is used up (not the 4 KiB hole first in memory).
  auto x = a.allocate(1536);
  REQUIRE(x);
  CHECK(*x == holeAt(2));
  CHECK(a.freeRanges() == 5);
  // 3 KiB: exactly the 3 KiB hole.
  auto y = a.allocate(3 * kKiB);
  REQUIRE(y);
  CHECK(*y == holeAt(3));
  CHECK(a.freeRanges() == 4);
  // 1 KiB: the 1 KiB hole, not the start of the 4 KiB hole at offset 0.
  auto z = a.allocate(1 * kKiB);
  REQUIRE(z);
  CHECK(*z == holeAt(1));
  CHECK(a.freeRanges() == 3);
  // 1 KiB again: the start of the other 2 KiB hole, whose second half stays free.
  auto v = a.allocate(1 * kKiB);
  REQUIRE(v);
  CHECK(*v == holes.rbegin()->first);
  CHECK(a.freeRanges() == 3);
  CHECK(a.allocate(1 * kKiB) == std::optional<std::uint64_t>(*v + 1 * kKiB));
  CHECK(a.freeRanges() == 2);
  // 5 KiB: only the rest of the block fits.
  auto w = a.allocate(5 * kKiB);
  REQUIRE(w);
  CHECK(*w == cursor);
}

TEST_CASE("RangeAllocator: 100k operations of chunk-mesh churn match a reference model") {
  // A 64 MiB block; meshes of 8 KiB to 2 MiB (mostly small, as most chunks are sparse),
  // remeshed often to a similar size; the occupancy target wanders between 60 and 95%.
  constexpr std::uint64_t kCapacity = 64 * kMiB;
  constexpr std::uint64_t kAlign = 256;
  constexpr int kOps = 100'000;
  RangeAllocator a(kCapacity, kAlign);
  std::map<std::uint64_t, std::uint64_t> model;  // offset -> rounded size
  std::vector<std::pair<std::uint64_t, std::uint64_t>> meshes;  // offset, requested bytes
  std::mt19937_64 rng(20240611);
  auto uniform = [&](std::uint64_t n) { return rng() % n; };
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  auto freshSize = [&] {
    const double t = unit();
    return static_cast<std::uint64_t>(8.0 * kKiB * std::pow(256.0, t * t));
  };
  std::uint64_t modelUsed = 0, failures = 0, fragmentedFailures = 0, allocs = 0;
  double target = 0.8;

  auto release = [&](std::size_t k) {
    const std::uint64_t offset = meshes[k].first;
    a.free(offset);
    auto it = model.find(offset);
    REQUIRE(it != model.end());
    modelUsed -= it->second;
    model.erase(it);
    meshes[k] = meshes.back();
    meshes.pop_back();
  };
  auto place = [&](std::uint64_t bytes) {
    const std::uint64_t size = alignedSize(bytes, kAlign);
    const auto expected = expectedBestFit(model, kCapacity, size);
    const auto got = a.allocate(bytes);
    ++allocs;
    REQUIRE(got == expected);
    if (!got) {
      ++failures;
      if (kCapacity - modelUsed >= size) ++fragmentedFailures;
      return;
    }
    REQUIRE(*got % kAlign == 0);
    REQUIRE(*got + size <= kCapacity);
    auto next = model.lower_bound(*got);
    if (next != model.end()) REQUIRE(*got + size <= next->first);
    if (next != model.begin()) REQUIRE(std::prev(next)->first + std::prev(next)->second <= *got);
    model.emplace(*got, size);
    modelUsed += size;
    meshes.emplace_back(*got, bytes);
  };

  for (int i = 0; i < kOps; ++i) {
    if (i % 1000 == 0) target = 0.6 + 0.35 * unit();
    const double occupancy = static_cast<double>(a.used()) / kCapacity;
    if (meshes.empty() || occupancy < target - 0.02) {
      place(freshSize());  // a chunk comes into view
    } else if (occupancy > target + 0.02) {
      release(uniform(meshes.size()));  // a chunk leaves view
    } else if (uniform(10) < 8) {
      // Remesh: the old mesh goes, a similar one (-15% to +18%) comes.
      const std::size_t k = uniform(meshes.size());
      const double scaled = static_cast<double>(meshes[k].second) * (0.85 + 0.33 * unit());
      const auto bytes = std::clamp(static_cast<std::uint64_t>(scaled), 8 * kKiB, 2 * kMiB);
      release(k);
      place(bytes);
    } else if (uniform(2) == 0) {
      place(freshSize());
    } else {
      release(uniform(meshes.size()));
    }
    REQUIRE(a.used() == modelUsed);
    REQUIRE(a.allocations() == model.size());
    if (i % 64 == 0) {
      const Gaps g = gapsOf(model, kCapacity);
      REQUIRE(a.freeRanges() == g.count);
      REQUIRE(a.largestFree() == g.largest);
    }
  }
  const Gaps g = gapsOf(model, kCapacity);
  MESSAGE("churn end: " << a.allocations() << " live, used " << a.used() / kKiB << " KiB of " << kCapacity / kKiB
                        << " KiB, largest free " << a.largestFree() / kKiB << " KiB of "
                        << (kCapacity - a.used()) / kKiB << " KiB free in " << g.count << " ranges; " << failures
                        << " of " << allocs << " allocations failed, " << fragmentedFailures
                        << " with enough total free space");
  CHECK(allocs > kOps / 2);

  // Everything freed in random order: one free range, the whole block.
  while (!meshes.empty()) release(uniform(meshes.size()));
  CHECK(a.used() == 0);
  CHECK(a.allocations() == 0);
  CHECK(a.freeRanges() == 1);
  CHECK(a.largestFree() == kCapacity);
}
