// sqrt, floor, ceil, round, trunc: exact operations. sqrt wraps the hardware
// instruction (IEEE requires it to be correctly rounded; -fno-math-errno keeps GCC
// from calling libm). The rounding functions work on the bits, so they need no
// rounding-mode tricks and give the same result everywhere.
#include <cstdint>

#include "detmath/detmath.h"
#include "detmath/internal/bits.h"

namespace loam::dm {
namespace {

using internal::bitsOf;

// Format description shared by the float and double versions.
template <typename T>
struct Layout;
template <>
struct Layout<float> {
  using Bits = std::uint32_t;
  static constexpr int kMantBits = 23;
  static constexpr int kBias = 127;
  static constexpr Bits kSign = 0x80000000u;
  static float fromBits(Bits b) { return internal::floatFromBits(b); }
};
template <>
struct Layout<double> {
  using Bits = std::uint64_t;
  static constexpr int kMantBits = 52;
  static constexpr int kBias = 1023;
  static constexpr Bits kSign = 0x8000000000000000ull;
  static double fromBits(Bits b) { return internal::doubleFromBits(b); }
};

enum class Toward { Zero, Down, Up, NearestAway };

template <typename T>
T roundTo(T x, Toward mode) {
  using L = Layout<T>;
  using Bits = typename L::Bits;
  Bits b = bitsOf(x);
  int e = static_cast<int>((b >> L::kMantBits) & ((Bits{1} << (sizeof(T) * 8 - 1 - L::kMantBits)) - 1)) - L::kBias;
  bool neg = (b & L::kSign) != 0;
  if (e >= L::kMantBits) {
    // Integral already, or inf/NaN: x + x keeps inf and quietens a signalling NaN.
    constexpr int kInfNanExp = (1 << (sizeof(T) * 8 - 1 - L::kMantBits)) - 1 - L::kBias;
    return e == kInfNanExp ? x + x : x;
  }
  if (e < 0) {
    // |x| < 1: the result is +-0 or +-1.
    if ((b & ~L::kSign) == 0) return x;
    Bits one = static_cast<Bits>(L::kBias) << L::kMantBits;
    switch (mode) {
      case Toward::Zero: return L::fromBits(b & L::kSign);
      case Toward::Down: return neg ? L::fromBits(L::kSign | one) : L::fromBits(0);
      case Toward::Up: return neg ? L::fromBits(L::kSign) : L::fromBits(one);
      case Toward::NearestAway: return e == -1 ? L::fromBits((b & L::kSign) | one) : L::fromBits(b & L::kSign);
    }
  }
  Bits fracMask = (Bits{1} << (L::kMantBits - e)) - 1;
  if ((b & fracMask) == 0) return x;
  switch (mode) {
    case Toward::Zero: break;
    case Toward::Down:
      if (neg) b += fracMask + 1;
      break;
    case Toward::Up:
      if (!neg) b += fracMask + 1;
      break;
    case Toward::NearestAway: b += (fracMask + 1) >> 1; break;
  }
  // A carry out of the mantissa bumps the exponent, which is exactly right.
  return L::fromBits(b & ~fracMask);
}

}  // namespace

float sqrt(float x) noexcept { return __builtin_sqrtf(x); }
double sqrt(double x) noexcept { return __builtin_sqrt(x); }
float floor(float x) noexcept { return roundTo(x, Toward::Down); }
double floor(double x) noexcept { return roundTo(x, Toward::Down); }
float ceil(float x) noexcept { return roundTo(x, Toward::Up); }
double ceil(double x) noexcept { return roundTo(x, Toward::Up); }
float round(float x) noexcept { return roundTo(x, Toward::NearestAway); }
double round(double x) noexcept { return roundTo(x, Toward::NearestAway); }
float trunc(float x) noexcept { return roundTo(x, Toward::Zero); }
double trunc(double x) noexcept { return roundTo(x, Toward::Zero); }

}  // namespace loam::dm
