// FireKeySet: the set of burning fire-cell keys (packCoordId of the cell corner), for
// the fire system's "is that neighbour already burning?" question in O(1) instead of
// a binary search over the sorted cell array (which costs ~15 cache misses at 20,000
// cells). Open addressing with linear probing and backward-shift deletion (no
// tombstones). Membership is all it answers: nothing iterates it, so its layout can
// never reach simulation state. Server-side working data of sim/systems/fire.cpp only.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/keyed_random.h"

namespace loam::sim::internal {

class FireKeySet {
 public:
  /// packCoordId never sets bit 63, so all ones marks an empty slot.
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  /// True when key is in the set. No allocation.
  bool contains(std::uint64_t key) const noexcept {
    if (slots_.empty()) return false;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i] == key) return true;
      if (slots_[i] == kEmpty) return false;
    }
  }

  /// Adds key (no-op if present). Allocates only when the table grows (load > 1/2).
  void insert(std::uint64_t key) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i] == key) return;
      if (slots_[i] == kEmpty) {
        slots_[i] = key;
        ++size_;
        return;
      }
    }
  }

  /// Removes key (no-op if absent). No allocation.
  void erase(std::uint64_t key) noexcept {
    if (slots_.empty()) return;
    std::size_t i = home(key);
    while (slots_[i] != key) {
      if (slots_[i] == kEmpty) return;
      i = (i + 1) & mask_;
    }
    // Backward shift: pull later entries of the probe run into the hole when their
    // home position allows it.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_; slots_[j] != kEmpty; j = (j + 1) & mask_) {
      const std::size_t h = home(slots_[j]);
      const bool movable = hole <= j ? (h <= hole || h > j) : (h <= hole && h > j);
      if (movable) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = kEmpty;
    --size_;
  }

  /// Empties the set, keeping its table.
  void clear() noexcept {
    for (std::uint64_t& s : slots_) s = kEmpty;
    size_ = 0;
  }

  /// Sizes the table for `count` keys up front.
  void reserve(std::size_t count) {
    while (slots_.size() < count * 2) grow();
  }

  std::size_t size() const noexcept { return size_; }

 private:
  std::size_t home(std::uint64_t key) const noexcept {
    return static_cast<std::size_t>(detail::mix64(key)) & mask_;
  }

  void grow() {
    std::vector<std::uint64_t> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, kEmpty);
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (std::uint64_t k : old)
      if (k != kEmpty) insert(k);
  }

  std::vector<std::uint64_t> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace loam::sim::internal
