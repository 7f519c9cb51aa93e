// sin, cos, tan and sincos for float and double.
//
// Both reduce x to y = x - n*pi/2 with |y| <= pi/4 (internal/rem_pio2.h) and evaluate
// sin(y) or cos(y) by the quadrant n mod 4.
// - float: y and the polynomials are in double. Their error (below 2^-43 relative)
//   is far under a float ulp, so the one rounding to float gives < 0.51 ulp.
// - double: y is a double-double. The leading terms (x - x^3/6 and 1 - x^2/2) are
//   formed in double-double and only the small tail is a plain double polynomial,
//   so the error before the final rounding is a few hundredths of an ulp.
//   tan divides the double-double sine by the double-double cosine.
// The polynomial tails are minimax fits from detmath/tools/gen_trig_constants.cpp
// (Remez in 320-bit MPFR, coefficients rounded to double one at a time).
#include <cstddef>
#include <cstdint>

#include "detmath/detmath.h"
#include "detmath/internal/bits.h"
#include "detmath/internal/trig_common.h"
#include "detmath/internal/rem_pio2.h"

namespace loam::dm {
namespace {

using internal::bitsOf;
using internal::DD;
using internal::poly;
using internal::quotientDD;

// ---- float kernels (double arithmetic, |x| <= pi/4) ----

// sin(x) = x + x^3 P(x^2); relative error 2^-47.5.
constexpr double kSinF[] = {-0x1.5555555552239p-3, 0x1.1111110c87307p-7, -0x1.a019f93964eafp-13,
                            0x1.71d76d146333cp-19, -0x1.a961a0bbc99ffp-26};
// cos(x) = 1 + x^2 P(x^2); relative error 2^-43.6.
constexpr double kCosF[] = {-0x1.ffffffffe98afp-2, 0x1.55555545c5143p-5, -0x1.6c16b348bbc42p-10,
                            0x1.a00eb9af09cc3p-16, -0x1.23c97e5928f95p-22};

// ---- double kernels (tails behind double-double leading terms, |x| <= pi/4) ----

// sin(x) = x - x^3/6 + x^5 P(x^2); relative error of the whole sine 2^-73.
constexpr double kSinD[] = {0x1.1111111111111p-7,  -0x1.a01a01a019fbcp-13, 0x1.71de3a5560566p-19,
                            -0x1.ae645666b129fp-26, 0x1.61244690d98ap-33,   -0x1.ae6163d74a5a6p-41,
                            0x1.86bda63c8c807p-49};
// cos(x) = 1 - x^2/2 + x^4 P(x^2); relative error of the whole cosine 2^-63.9.
constexpr double kCosD[] = {0x1.555555555554bp-5,  -0x1.6c16c16c15015p-10, 0x1.a01a019c8f254p-16,
                            -0x1.27e4f7f19148bp-22, 0x1.1ee9dbcefbdc4p-29,  -0x1.8fa684873cb97p-37};
/// -1/6 as a double-double.
constexpr DD kMinusSixth = {-0x1.5555555555555p-3, -0x1.5555555555555p-57};

/// Float bits of the largest |x| handled without reduction: RN(pi/4), just above pi/4.
constexpr std::uint32_t kPio4BitsF = 0x3f490fdbu;
/// Below 2^-12, sin x and tan x round to x and cos x to 1 in float (x^2/2 < 2^-25).
constexpr std::uint32_t kTinyBitsF = 0x39800000u;
/// Double bits of RN(pi/4), just below pi/4.
constexpr std::uint64_t kPio4BitsD = 0x3fe921fb54442d18ull;
/// Below 2^-26 sin x rounds to x (x^2/6 < 2^-54); below 2^-27 cos x rounds to 1 and tan x to x.
constexpr std::uint64_t kTinySinBitsD = 0x3e50000000000000ull;
constexpr std::uint64_t kTinyCosBitsD = 0x3e40000000000000ull;


inline double sinKernelF(double x) noexcept {
  double z = x * x;
  return x + (x * z) * poly(z, kSinF);
}

inline double cosKernelF(double x) noexcept {
  double z = x * x;
  return 1.0 + z * poly(z, kCosF);
}

/// sin(y.hi + y.lo) as a normalised double-double, |y| <= pi/4 (+ a few ulps).
DD sinKernelD(DD y) noexcept {
  double x = y.hi;
  DD x2 = internal::twoProd(x, x);  // x^2 exactly
  // -x^3/6 = (-x/6) x^2 to about 2^-104; the two products above it are independent,
  // which keeps the dependency chain short.
  DD xs = internal::twoProd(x, kMinusSixth.hi);
  xs.lo += x * kMinusSixth.lo;
  DD t1 = internal::twoProd(xs.hi, x2.hi);
  t1.lo += xs.hi * x2.lo + xs.lo * x2.hi;
  double z = x2.hi;
  double tail = ((x * z) * z) * poly(z, kSinD);
  // sin(x + lo) = sin x + lo cos x, with cos x ~ 1 - x^2/2 (lo is below ulp(x)).
  double corr = y.lo * (1.0 - 0.5 * z);
  DD s = internal::fastTwoSum(x, t1.hi);
  s.lo += (t1.lo + corr) + tail;
  return internal::fastTwoSum(s.hi, s.lo);
}

/// cos(y.hi + y.lo) as a normalised double-double, |y| <= pi/4 (+ a few ulps).
DD cosKernelD(DD y) noexcept {
  double x = y.hi;
  DD x2 = internal::twoProd(x, x);
  double z = x2.hi;
  // 1 - x^2/2 exactly: halving is exact and 1 >= x^2/2, so fastTwoSum applies.
  DD w = internal::fastTwoSum(1.0, -0.5 * z);
  double tail = (z * z) * poly(z, kCosD);
  // cos(x + lo) = cos x - lo sin x, with sin x ~ x - x^3/6.
  double corr = -(y.lo * x) * (1.0 + z * kMinusSixth.hi);
  w.lo += (-0.5 * x2.lo + corr) + tail;
  return internal::fastTwoSum(w.hi, w.lo);
}

/// NaN result: a quietened copy of a NaN input, or the positive default NaN for an
/// invalid operation (sin(inf)). Built from bits so every platform gives the same NaN.
inline float nanResult(float x) noexcept {
  std::uint32_t b = bitsOf(x);
  return (b & 0x7fffffffu) > 0x7f800000u ? internal::floatFromBits(b | 0x00400000u) : internal::floatFromBits(0x7fc00000u);
}
inline double nanResult(double x) noexcept {
  std::uint64_t b = bitsOf(x);
  return (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull ? internal::doubleFromBits(b | 0x0008000000000000ull)
                                                              : internal::doubleFromBits(0x7ff8000000000000ull);
}

/// sin or cos of the reduced argument by quadrant: sin x for q = n mod 4, cos x for q + 1.
/// (A branch-free variant computing both kernels measured slower.)
inline double sinByQuadrantF(unsigned q, double y) noexcept {
  double r = (q & 1u) ? cosKernelF(y) : sinKernelF(y);
  return (q & 2u) ? -r : r;
}

inline double sinByQuadrantD(unsigned q, DD y) noexcept {
  DD r = (q & 1u) ? cosKernelD(y) : sinKernelD(y);
  double v = r.hi + r.lo;
  return (q & 2u) ? -v : v;
}

}  // namespace

float sin(float x) noexcept {
  std::uint32_t ix = bitsOf(x) & 0x7fffffffu;
  if (ix <= kPio4BitsF) {
    if (ix < kTinyBitsF) return x;  // also +-0 and subnormals, sign kept
    return static_cast<float>(sinKernelF(x));
  }
  if (ix >= 0x7f800000u) return nanResult(x);
  double y;
  unsigned q = internal::remPio2F(x, &y);
  return static_cast<float>(sinByQuadrantF(q, y));
}

float cos(float x) noexcept {
  std::uint32_t ix = bitsOf(x) & 0x7fffffffu;
  if (ix <= kPio4BitsF) {
    if (ix < kTinyBitsF) return 1.0f;
    return static_cast<float>(cosKernelF(x));
  }
  if (ix >= 0x7f800000u) return nanResult(x);
  double y;
  unsigned q = internal::remPio2F(x, &y);
  return static_cast<float>(sinByQuadrantF(q + 1u, y));
}

float tan(float x) noexcept {
  std::uint32_t ix = bitsOf(x) & 0x7fffffffu;
  double y = x;
  unsigned q = 0;
  if (ix <= kPio4BitsF) {
    if (ix < kTinyBitsF) return x;  // tan x = x (1 + x^2/3) rounds to x
  } else {
    if (ix >= 0x7f800000u) return nanResult(x);
    q = internal::remPio2F(x, &y);
  }
  double s = sinKernelF(y);
  double c = cosKernelF(y);
  // tan(y + n pi/2) is tan y for even n and -cot y for odd n.
  return static_cast<float>((q & 1u) ? -c / s : s / c);
}

void sincos(float x, float* outSin, float* outCos) noexcept {
  // Same branches and operations as sin() and cos(), sharing the reduction.
  std::uint32_t ix = bitsOf(x) & 0x7fffffffu;
  if (ix <= kPio4BitsF) {
    if (ix < kTinyBitsF) {
      *outSin = x;
      *outCos = 1.0f;
      return;
    }
    double xd = x;
    *outSin = static_cast<float>(sinKernelF(xd));
    *outCos = static_cast<float>(cosKernelF(xd));
    return;
  }
  if (ix >= 0x7f800000u) {
    *outSin = nanResult(x);
    *outCos = nanResult(x);
    return;
  }
  double y;
  unsigned q = internal::remPio2F(x, &y);
  *outSin = static_cast<float>(sinByQuadrantF(q, y));
  *outCos = static_cast<float>(sinByQuadrantF(q + 1u, y));
}

double sin(double x) noexcept {
  std::uint64_t ix = bitsOf(x) & 0x7fffffffffffffffull;
  if (ix <= kPio4BitsD) {
    if (ix < kTinySinBitsD) return x;  // also +-0 and subnormals
    DD s = sinKernelD(DD{x, 0.0});
    return s.hi + s.lo;
  }
  if (ix >= 0x7ff0000000000000ull) return nanResult(x);
  DD y;
  unsigned q = internal::remPio2D(x, &y);
  return sinByQuadrantD(q, y);
}

double cos(double x) noexcept {
  std::uint64_t ix = bitsOf(x) & 0x7fffffffffffffffull;
  if (ix <= kPio4BitsD) {
    if (ix < kTinyCosBitsD) return 1.0;
    DD c = cosKernelD(DD{x, 0.0});
    return c.hi + c.lo;
  }
  if (ix >= 0x7ff0000000000000ull) return nanResult(x);
  DD y;
  unsigned q = internal::remPio2D(x, &y);
  return sinByQuadrantD(q + 1u, y);
}

double tan(double x) noexcept {
  std::uint64_t ix = bitsOf(x) & 0x7fffffffffffffffull;
  DD y{x, 0.0};
  unsigned q = 0;
  if (ix <= kPio4BitsD) {
    if (ix < kTinyCosBitsD) return x;  // tan x = x (1 + x^2/3) rounds to x
  } else {
    if (ix >= 0x7ff0000000000000ull) return nanResult(x);
    q = internal::remPio2D(x, &y);
  }
  DD s = sinKernelD(y);
  DD c = cosKernelD(y);
  if (q & 1u) {
    DD t = quotientDD(c, s);
    return -(t.hi + t.lo);
  }
  DD t = quotientDD(s, c);
  return t.hi + t.lo;
}

void sincos(double x, double* outSin, double* outCos) noexcept {
  // Same branches and operations as sin() and cos(), sharing the reduction.
  std::uint64_t ix = bitsOf(x) & 0x7fffffffffffffffull;
  if (ix <= kPio4BitsD) {
    if (ix < kTinySinBitsD) {
      *outSin = x;
    } else {
      DD s = sinKernelD(DD{x, 0.0});
      *outSin = s.hi + s.lo;
    }
    if (ix < kTinyCosBitsD) {
      *outCos = 1.0;
    } else {
      DD c = cosKernelD(DD{x, 0.0});
      *outCos = c.hi + c.lo;
    }
    return;
  }
  if (ix >= 0x7ff0000000000000ull) {
    *outSin = nanResult(x);
    *outCos = nanResult(x);
    return;
  }
  DD y;
  unsigned q = internal::remPio2D(x, &y);
  *outSin = sinByQuadrantD(q, y);
  *outCos = sinByQuadrantD(q + 1u, y);
}

}  // namespace loam::dm
