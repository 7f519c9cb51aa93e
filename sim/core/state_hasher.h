// StateHasher: folds simulation state into a 64-bit hash from a canonical
// serialisation (each field added explicitly, little-endian, fixed width; never raw
// struct bytes, whose padding and layout differ between compilers). Used for the
// trace hash (loam-tool sim --hash) and by each system's hashX() function.
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace loam::sim {

/// Streaming XXH3-64 over explicitly added fields. Buffers internally; no heap
/// allocation. Not thread-safe; one hasher per thread.
class StateHasher {
 public:
  /// Starts a hash with the given seed.
  explicit StateHasher(std::uint64_t seed = 0) noexcept;
  StateHasher(const StateHasher&) = delete;
  StateHasher& operator=(const StateHasher&) = delete;

  /// Adds a bool as one byte.
  void add(bool v) noexcept { add(static_cast<std::uint8_t>(v ? 1 : 0)); }
  /// Adds an integer or enum as its fixed-width little-endian bytes.
  template <class T>
    requires((std::is_integral_v<T> && !std::is_same_v<T, bool>) || std::is_enum_v<T>)
  void add(T v) noexcept {
    using I = typename std::conditional_t<std::is_enum_v<T>, std::underlying_type<T>, std::type_identity<T>>::type;
    using U = std::make_unsigned_t<I>;
    U u = static_cast<U>(v);
    unsigned char b[sizeof(U)];
    for (std::size_t i = 0; i < sizeof(U); ++i) b[i] = static_cast<unsigned char>(u >> (8 * i));
    put(b, sizeof(U));
  }
  /// Adds a float by its IEEE-754 bit pattern (so -0 and +0 differ, NaNs by payload).
  void add(float v) noexcept { add(std::bit_cast<std::uint32_t>(v)); }
  /// Adds a double by its IEEE-754 bit pattern.
  void add(double v) noexcept { add(std::bit_cast<std::uint64_t>(v)); }
  /// Adds a length-prefixed byte string.
  void add(std::string_view s) noexcept {
    add(static_cast<std::uint32_t>(s.size()));
    put(s.data(), s.size());
  }
  /// The hash of everything added so far (the hasher can keep going).
  std::uint64_t digest() const noexcept;

 private:
  void put(const void* p, std::size_t n) noexcept {
    if (used_ + n > sizeof(buf_)) {
      flush(p, n);
      return;
    }
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) buf_[used_ + i] = c[i];
    used_ += n;
  }
  /// Feeds the buffer and then p[0..n) to XXH3 (state_hasher.cpp).
  void flush(const void* p, std::size_t n) noexcept;

  alignas(64) unsigned char state_[640];  ///< an XXH3_state_t (size checked in the .cpp)
  unsigned char buf_[256];
  std::size_t used_ = 0;
};

}  // namespace loam::sim
