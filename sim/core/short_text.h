// ShortText<N>: a fixed-capacity, trivially copyable UTF-8 string for names and
// chat, so commands, events and player records stay plain data and never allocate.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace loam::sim {

/// Up to Capacity bytes of UTF-8 text, stored inline. Longer input is truncated
/// (at a byte boundary; callers validating user text check length first).
template <std::size_t Capacity>
struct ShortText {
  static_assert(Capacity < 256, "length is one byte");
  std::array<char, Capacity> bytes{};  ///< text, not NUL-terminated; unused bytes are 0
  std::uint8_t length = 0;             ///< bytes in use

  /// Text from s, truncated to Capacity bytes. No allocation.
  static constexpr ShortText from(std::string_view s) noexcept {
    ShortText t;
    t.length = static_cast<std::uint8_t>(s.size() < Capacity ? s.size() : Capacity);
    for (std::size_t i = 0; i < t.length; ++i) t.bytes[i] = s[i];
    return t;
  }
  /// A view of the text; valid while this object lives.
  constexpr std::string_view view() const noexcept { return {bytes.data(), length}; }
  friend bool operator==(const ShortText&, const ShortText&) = default;
};

inline constexpr std::size_t kMaxNameBytes = 31;   ///< player names
inline constexpr std::size_t kMaxChatBytes = 120;  ///< one chat line

using PlayerName = ShortText<kMaxNameBytes>;
using ChatText = ShortText<kMaxChatBytes>;

}  // namespace loam::sim
