// Result<T>: a value or an Error, the expected-style return type for anything in
// sim that reads input which can be bad (material tables, scene files, saves).
// A minimal stand-in for C++23 std::expected<T, Error>; the member names follow it
// (has_value, value, error, operator*, operator->) so the switch is mechanical.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "sim/core/assert.h"

namespace loam::sim {

/// Why an operation on untrusted input failed: a human-readable message, already
/// prefixed with its location where one exists ("file:line:column: what is wrong").
struct Error {
  std::string message;
};

/// Builds an Error from a message. Allocates (the string).
inline Error makeError(std::string message) { return Error{std::move(message)}; }

/// Holds either a T or an Error. Reading the side it does not hold is a programmer
/// error (LOAM_ASSERT). Not thread-safe for concurrent mutation, like any value type.
template <class T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::remove_cv_t<T>, Error>, "Result<Error> is ambiguous");

 public:
  /// A successful result holding value.
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT(implicit)
  /// A failed result holding error.
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT(implicit)

  /// True when a value is held.
  bool has_value() const noexcept { return v_.index() == 0; }
  /// True when a value is held.
  explicit operator bool() const noexcept { return has_value(); }

  /// The held value; asserts has_value().
  T& value() & {
    LOAM_ASSERT(has_value());
    return *std::get_if<0>(&v_);
  }
  /// The held value; asserts has_value().
  const T& value() const& {
    LOAM_ASSERT(has_value());
    return *std::get_if<0>(&v_);
  }
  /// The held value, moved out; asserts has_value().
  T&& value() && {
    LOAM_ASSERT(has_value());
    return std::move(*std::get_if<0>(&v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// The held error; asserts !has_value().
  const Error& error() const& {
    LOAM_ASSERT(!has_value());
    return *std::get_if<1>(&v_);
  }
  /// The held error, moved out; asserts !has_value().
  Error&& error() && {
    LOAM_ASSERT(!has_value());
    return std::move(*std::get_if<1>(&v_));
  }

 private:
  std::variant<T, Error> v_;
};

/// Success or an Error, for operations that produce nothing.
template <>
class [[nodiscard]] Result<void> {
 public:
  /// A successful result.
  Result() = default;
  /// A failed result holding error.
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT(implicit)

  /// True on success.
  bool has_value() const noexcept { return ok_; }
  /// True on success.
  explicit operator bool() const noexcept { return ok_; }
  /// No-op on success; asserts has_value().
  void value() const { LOAM_ASSERT(ok_); }
  /// The held error; asserts !has_value().
  const Error& error() const& {
    LOAM_ASSERT(!ok_);
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

/// Shorthand for a successful Result<void>.
inline Result<void> ok() { return Result<void>{}; }

}  // namespace loam::sim
