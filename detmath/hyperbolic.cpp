// sinh, cosh, tanh in float and double.
//
// float: evaluated in double from one e^|x| (exp2By128Lite): cosh = (E + 1/E)/2,
// sinh = (u + u/(u+1))/2 and tanh = u/(u+2) with u = e^|x| - 1 or e^(2|x|) - 1, which
// never cancel. double: e^|x| and e^-|x| as double-doubles from one reduction
// (expPairDd), combined and rounded once; below |x| = 1/8 the odd parts come from the
// Taylor series of sinh instead. For |x| >= 22 e^-|x| is below 2^-63 of the result and
// sinh = cosh = e^|x| / 2 is scaled with overflow handled exactly (scaleDd).
#include <cstdint>
#include <limits>

#include "detmath/detmath.h"
#include "detmath/internal/bits.h"
#include "detmath/internal/exp_log_kernels.h"

namespace loam::dm {
namespace {

using internal::bitsOf;
using internal::DD;

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr double kInf = std::numeric_limits<double>::infinity();

inline float withSign(float v, std::uint32_t signBit) { return internal::floatFromBits(bitsOf(v) | signBit); }
inline double withSign(double v, std::uint64_t signBit) { return internal::doubleFromBits(bitsOf(v) | signBit); }

/// e^a - 1 in double for 0 <= a < 180 (relative error < 2^-44; exact scale 1 near 0).
inline double expm1Lite(double a) {
  internal::ExpLite e = internal::exp2By128Lite<4>(a * internal::kInvLn2Times128);
  return (e.scale - 1.0) + e.scale * e.poly;
}

/// e^a / 2 for 22 <= a, overflowing to +inf exactly where the rounded result does.
double halfExpLarge(double a) {
  if (a > 711.0) return kInf;  // e^711 / 2 > 2^1024
  internal::ExpDd e = internal::expKernelDd(a, 0.0);
  return internal::scaleDd(e.hi, e.lo, e.e - 1);
}

}  // namespace

float sinh(float x) noexcept {
  std::uint32_t ux = bitsOf(x);
  std::uint32_t ax = ux & 0x7fffffffu;
  std::uint32_t sign = ux & 0x80000000u;
  if (ax >= 0x42b40000u) [[unlikely]] {  // |x| >= 90: overflow, or NaN
    if (ax > 0x7f800000u) return x + x;
    return withSign(kInfF, sign);
  }
  double u = expm1Lite(static_cast<double>(internal::floatFromBits(ax)));
  return withSign(static_cast<float>(0.5 * (u + u / (u + 1.0))), sign);
}

float cosh(float x) noexcept {
  std::uint32_t ax = bitsOf(x) & 0x7fffffffu;
  if (ax >= 0x42b40000u) [[unlikely]] {  // |x| >= 90
    if (ax > 0x7f800000u) return x + x;
    return kInfF;
  }
  internal::ExpLite e =
      internal::exp2By128Lite<3>(static_cast<double>(internal::floatFromBits(ax)) * internal::kInvLn2Times128);
  double big = e.scale + e.scale * e.poly;
  return static_cast<float>(0.5 * big + 0.5 / big);
}

float tanh(float x) noexcept {
  std::uint32_t ux = bitsOf(x);
  std::uint32_t ax = ux & 0x7fffffffu;
  std::uint32_t sign = ux & 0x80000000u;
  if (ax >= 0x41120000u) [[unlikely]] {  // |x| >= 9.125: 1 - tanh < 2^-25 rounds to 1
    if (ax > 0x7f800000u) return x + x;
    return withSign(1.0f, sign);
  }
  double u = expm1Lite(2.0 * static_cast<double>(internal::floatFromBits(ax)));
  return withSign(static_cast<float>(u / (u + 2.0)), sign);
}

/// sinh(a) for 0 <= a < 1/8 from its Taylor series through a^11 (truncation below
/// 2^-68 relative); returned as a + tail so callers can keep the extra bits.
inline DD sinhSmall(double a) {
  const double* f = internal::kInvFactorial;
  double a2 = a * a;
  double tail = a * a2 * (f[3] + a2 * (f[5] + a2 * (f[7] + a2 * (f[9] + a2 * f[11]))));
  return internal::fastTwoSum(a, tail);
}

double sinh(double x) noexcept {
  std::uint64_t ix = bitsOf(x);
  std::uint64_t sign = ix & 0x8000000000000000ull;
  double a = internal::doubleFromBits(ix ^ sign);
  if (a < 0x1p-26) return x;  // sinh x = x (1 + x^2/6) rounds to x; also +-0
  if (!(a < 22.0)) [[unlikely]] {
    if (a != a) return x + x;
    return withSign(halfExpLarge(a), sign);
  }
  if (a < 0.125) {
    DD s = sinhSmall(a);
    return withSign(s.hi + s.lo, sign);
  }
  // e^a - e^-a: e^-a <= 0.89 e^a here, so the cancellation costs at most 2^4.
  internal::ExpPair e = internal::expPairDd(a);
  DD d = internal::fastTwoSum(e.pos.hi, -e.neg.hi);
  return withSign(0.5 * (d.hi + ((d.lo + e.pos.lo) - e.neg.lo)), sign);
}

double cosh(double x) noexcept {
  double a = internal::doubleFromBits(bitsOf(x) & 0x7fffffffffffffffull);
  if (a < 0x1p-26) return 1.0;  // 1 + x^2/2 rounds to 1
  if (!(a < 22.0)) [[unlikely]] {
    if (a != a) return x + x;
    return halfExpLarge(a);
  }
  internal::ExpPair e = internal::expPairDd(a);
  DD s = internal::fastTwoSum(e.pos.hi, e.neg.hi);
  return 0.5 * (s.hi + ((s.lo + e.pos.lo) + e.neg.lo));
}

double tanh(double x) noexcept {
  std::uint64_t ix = bitsOf(x);
  std::uint64_t sign = ix & 0x8000000000000000ull;
  double a = internal::doubleFromBits(ix ^ sign);
  if (a < 0x1p-27) return x;  // tanh x = x (1 - x^2/3) rounds to x; also +-0
  if (!(a < 22.0)) [[unlikely]] {  // 1 - tanh < 2^-62: rounds to 1
    if (a != a) return x + x;
    return withSign(1.0, sign);
  }
  // (e^a - e^-a) / (e^a + e^-a); the numerator from the series below 1/8, where the
  // difference would cancel.
  internal::ExpPair e = internal::expPairDd(a);
  DD den = internal::fastTwoSum(e.pos.hi, e.neg.hi);
  den.lo += e.pos.lo + e.neg.lo;
  DD num;
  if (a < 0.125) {
    DD s = sinhSmall(a);
    num = DD{2.0 * s.hi, 2.0 * s.lo};
  } else {
    num = internal::fastTwoSum(e.pos.hi, -e.neg.hi);
    num.lo += e.pos.lo - e.neg.lo;
  }
  DD t = internal::ddDivFast(num, den);
  return withSign(t.hi, sign);
}

}  // namespace loam::dm
