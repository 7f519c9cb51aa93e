#include "render/range_allocator.h"

#include <iterator>

#include "sim/core/assert.h"

namespace loam::render {

RangeAllocator::RangeAllocator(std::uint64_t capacity, std::uint64_t alignment)
    : capacity_(capacity), alignment_(alignment) {
  LOAM_ASSERT(alignment != 0 && (alignment & (alignment - 1)) == 0);
  LOAM_ASSERT(capacity % alignment == 0);
  if (capacity > 0) insertFree(0, capacity);
}

std::uint64_t RangeAllocator::largestFree() const noexcept {
  return freeBySize_.empty() ? 0 : freeBySize_.rbegin()->first;
}

std::optional<std::uint64_t> RangeAllocator::allocate(std::uint64_t bytes) {
  // Checked before rounding, so the rounding cannot overflow (capacity is aligned).
  if (bytes == 0 || bytes > capacity_) return std::nullopt;
  const std::uint64_t size = roundUp(bytes, alignment_);
  auto fit = freeBySize_.lower_bound({size, 0});
  if (fit == freeBySize_.end()) return std::nullopt;
  const std::uint64_t offset = fit->second;
  const std::uint64_t rest = fit->first - size;
  live_.emplace(offset, size);
  freeBySize_.erase(fit);
  freeByOffset_.erase(offset);
  if (rest > 0) insertFree(offset + size, rest);
  used_ += size;
  return offset;
}

void RangeAllocator::free(std::uint64_t offset) {
  auto it = live_.find(offset);
  LOAM_ASSERT(it != live_.end());
  if (it == live_.end()) return;  // asserts off: leave the block intact rather than corrupt it
  std::uint64_t start = offset;
  std::uint64_t end = offset + it->second;
  used_ -= it->second;
  live_.erase(it);
  // Merge with the free ranges just after and just before, so free ranges never touch.
  auto next = freeByOffset_.lower_bound(offset);
  if (next != freeByOffset_.end() && next->first == end) {
    end += next->second;
    next = eraseFree(next);
  }
  if (next != freeByOffset_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      eraseFree(prev);
    }
  }
  insertFree(start, end - start);
}

void RangeAllocator::insertFree(std::uint64_t offset, std::uint64_t size) {
  freeBySize_.emplace(size, offset);
  freeByOffset_.emplace(offset, size);
}

std::map<std::uint64_t, std::uint64_t>::iterator RangeAllocator::eraseFree(
    std::map<std::uint64_t, std::uint64_t>::iterator it) {
  freeBySize_.erase({it->second, it->first});
  return freeByOffset_.erase(it);
}

}  // namespace loam::render
