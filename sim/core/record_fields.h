// Field tables: each replicated record (PlayerState, RateBudget, Animal, FireCell)
// lists its fields once, as a constexpr std::tuple of RecordField next to the struct,
// and the state codec, the hashes and the difference reports walk that table. Adding
// a field to such a record is one edit to its table; recordFieldCount() lets the
// table's static_assert catch a field that was added to the struct only.
//
// Encodings: a field travels at its own type's width, little-endian (bools one byte,
// 3-vectors as three i32, id structs as their value); the bool fields that carry a
// flag bit travel together as one flags byte, at the place of the first of them.
// Hashes add every field at its own width (flag bools one byte each).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>

#include "sim/core/state_bytes.h"
#include "sim/core/state_hasher.h"

namespace loam::sim {

/// One field of record type R: its name (difference reports) and member. A bool
/// field with a nonzero flagBit is that bit of the record's flags byte.
template <class R, class T>
struct RecordField {
  using Record = R;
  using Type = T;
  const char* name;
  T R::*member;
  std::uint8_t flagBit = 0;
};

/// A table entry: field("position", &PlayerState::position).
template <class R, class T>
constexpr RecordField<R, T> field(const char* name, T R::*member) noexcept {
  return {name, member, 0};
}
/// A bool table entry carried as `bit` of the flags byte.
template <class R>
constexpr RecordField<R, bool> flagField(const char* name, bool R::*member, std::uint8_t bit) noexcept {
  return {name, member, bit};
}

namespace detail {
struct AnyField {
  template <class T>
  operator T() const noexcept;  // declared only: used in unevaluated initialisation
};
template <class T, class... A>
constexpr std::size_t countFields() {
  if constexpr (requires { T{A{}..., AnyField{}}; }) {
    return countFields<T, A..., AnyField>();
  } else {
    return sizeof...(A);
  }
}
template <class T>
concept XyzField = requires(T t) {
  { t.x } -> std::same_as<std::int32_t&>;
  { t.y } -> std::same_as<std::int32_t&>;
  { t.z } -> std::same_as<std::int32_t&>;
};
template <class T>
concept IdField = requires(T t) { t.value; } && std::is_unsigned_v<decltype(T::value)> && !XyzField<T>;
template <class T>
concept ScalarField = std::is_integral_v<T> || std::is_enum_v<T>;

template <class T>
constexpr int widthOf() {
  if constexpr (XyzField<T>) {
    return 12;
  } else if constexpr (IdField<T>) {
    return sizeof(T::value);
  } else {
    return sizeof(T);
  }
}
}  // namespace detail

/// The number of members of aggregate R (counted by aggregate initialisation).
template <class R>
constexpr std::size_t recordFieldCount() {
  return detail::countFields<R>();
}

/// Calls fn(field) for every field of the table, in order.
template <class Table, class Fn>
constexpr void forEachField(const Table& table, Fn&& fn) {
  std::apply([&](const auto&... f) { (fn(f), ...); }, table);
}

/// The number of bytes writeFields writes for one record of the table.
template <class Table>
constexpr std::size_t encodedSize(const Table& table) {
  std::size_t n = 0;
  bool flags = false;
  forEachField(table, [&](const auto& f) {
    using T = typename std::decay_t<decltype(f)>::Type;
    if (f.flagBit != 0) {
      if (!flags) ++n;
      flags = true;
    } else {
      n += static_cast<std::size_t>(detail::widthOf<T>());
    }
  });
  return n;
}

/// The record's flag fields packed into one byte.
template <class R, class Table>
constexpr std::uint8_t packFlags(const R& record, const Table& table) {
  std::uint8_t bits = 0;
  forEachField(table, [&](const auto& f) {
    if constexpr (std::is_same_v<typename std::decay_t<decltype(f)>::Type, bool>) {
      if (f.flagBit != 0 && record.*f.member) bits = static_cast<std::uint8_t>(bits | f.flagBit);
    }
  });
  return bits;
}

/// Sets the record's flag fields from a flags byte (unassigned bits are ignored).
template <class R, class Table>
constexpr void unpackFlags(R& record, const Table& table, std::uint8_t bits) {
  forEachField(table, [&](const auto& f) {
    if constexpr (std::is_same_v<typename std::decay_t<decltype(f)>::Type, bool>) {
      if (f.flagBit != 0) record.*f.member = (bits & f.flagBit) != 0;
    }
  });
}

/// Every flag bit the table assigns.
template <class Table>
constexpr std::uint8_t flagMask(const Table& table) {
  std::uint8_t bits = 0;
  forEachField(table, [&](const auto& f) { bits = static_cast<std::uint8_t>(bits | f.flagBit); });
  return bits;
}

/// Folds one field of the record into h.
template <class R, class T>
void hashField(StateHasher& h, const R& record, const RecordField<R, T>& f) noexcept {
  const T& v = record.*f.member;
  if constexpr (detail::XyzField<T>) {
    h.add(v.x);
    h.add(v.y);
    h.add(v.z);
  } else if constexpr (detail::IdField<T>) {
    h.add(v.value);
  } else {
    h.add(v);
  }
}

/// Folds every field of the record into h, in table order.
template <class R, class Table>
void hashFields(StateHasher& h, const R& record, const Table& table) noexcept {
  forEachField(table, [&](const auto& f) { hashField(h, record, f); });
}

/// Appends the record's fields in table order (see the file comment).
template <class R, class Table>
void writeFields(ByteWriter& w, const R& record, const Table& table) {
  bool flags = false;
  forEachField(table, [&](const auto& f) {
    using T = typename std::decay_t<decltype(f)>::Type;
    const T& v = record.*f.member;
    if (f.flagBit != 0) {
      if (!flags) w.u8(packFlags(record, table));
      flags = true;
    } else if constexpr (detail::XyzField<T>) {
      w.vec(Vec3i{v.x, v.y, v.z});
    } else if constexpr (detail::IdField<T>) {
      w.un(v.value, sizeof(v.value));
    } else if constexpr (std::is_same_v<T, bool>) {
      w.u8(v ? 1 : 0);
    } else {
      static_assert(detail::ScalarField<T>, "field type without an encoding");
      using I = typename std::conditional_t<std::is_enum_v<T>, std::underlying_type<T>, std::type_identity<T>>::type;
      w.un(static_cast<std::make_unsigned_t<I>>(v), sizeof(T));
    }
  });
}

/// Reads what writeFields wrote into the record's fields. Returns the flags byte when
/// it has bits the table does not assign (the caller reports it), else 0; a plain
/// bool byte other than 0 or 1 reads as true. Check r.ok() after.
template <class R, class Table>
std::uint8_t readFields(ByteReader& r, R& record, const Table& table) {
  std::uint8_t badFlags = 0;
  bool flags = false;
  forEachField(table, [&](const auto& f) {
    using T = typename std::decay_t<decltype(f)>::Type;
    T& v = record.*f.member;
    if (f.flagBit != 0) {
      if (!flags) {
        const std::uint8_t bits = r.u8();
        if ((bits & ~flagMask(table)) != 0) badFlags = bits;
        unpackFlags(record, table, bits);
      }
      flags = true;
    } else if constexpr (detail::XyzField<T>) {
      const Vec3i x = r.vec();
      v = T{x.x, x.y, x.z};
    } else if constexpr (detail::IdField<T>) {
      v.value = static_cast<decltype(v.value)>(r.un(sizeof(v.value)));
    } else if constexpr (std::is_same_v<T, bool>) {
      v = r.u8() != 0;
    } else {
      using I = typename std::conditional_t<std::is_enum_v<T>, std::underlying_type<T>, std::type_identity<T>>::type;
      v = static_cast<T>(static_cast<I>(static_cast<std::make_unsigned_t<I>>(r.un(sizeof(T)))));
    }
  });
  return badFlags;
}

/// The first field (3-vectors by component: "position.x") whose value differs.
struct FieldDifference {
  std::string name;
  std::int64_t expected = 0;
  std::int64_t actual = 0;
};

/// The first field in table order that differs between the records, or nullopt.
/// Allocates (the name) only when one differs.
template <class R, class Table>
std::optional<FieldDifference> firstDifferentField(const R& expected, const R& actual, const Table& table) {
  std::optional<FieldDifference> d;
  auto note = [&](const char* name, const char* component, std::int64_t e, std::int64_t a) {
    if (d || e == a) return;
    d = FieldDifference{std::string(name) + component, e, a};
  };
  forEachField(table, [&](const auto& f) {
    using T = typename std::decay_t<decltype(f)>::Type;
    const T& e = expected.*f.member;
    const T& a = actual.*f.member;
    if constexpr (detail::XyzField<T>) {
      note(f.name, ".x", e.x, a.x);
      note(f.name, ".y", e.y, a.y);
      note(f.name, ".z", e.z, a.z);
    } else if constexpr (detail::IdField<T>) {
      note(f.name, "", e.value, a.value);
    } else {
      note(f.name, "", static_cast<std::int64_t>(e), static_cast<std::int64_t>(a));
    }
  });
  return d;
}

}  // namespace loam::sim
