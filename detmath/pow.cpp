// pow in float and double, with every special case of C23 Annex F (F.10.4.4).
//
// float: 128 log2|x| in double (128-bin table, degree-5 polynomial, relative error
// < 2^-40), times y, then 2^(z/128) with the double exp kernel (degree 3, < 2^-38)
// and one rounding to float. |y log2 x| < 150 keeps the error of the exponent below
// 2^-32, far under a float ulp.
// double: log|x| as a double-double (error < 2^-72 relative), z = y log|x| as a
// double-double, e^z with the double-double exp kernel and one rounding (scaleDd,
// which also rounds subnormal results once). |z| < 746 keeps the error near 2^-59.
#include <cstdint>
#include <limits>

#include "detmath/detmath.h"
#include "detmath/internal/bits.h"
#include "detmath/internal/exp_log_kernels.h"

namespace loam::dm {
namespace {

using internal::bitsOf;
using internal::DD;

enum class Parity { NotInteger, Odd, Even };

/// Integer-ness and parity of a finite nonzero y from its bits.
Parity parityOf(float y) {
  std::uint32_t iy = bitsOf(y);
  int e = static_cast<int>((iy >> 23) & 0xffu) - 127;
  if (e < 0) return Parity::NotInteger;  // 0 < |y| < 1
  if (e >= 24) return Parity::Even;      // |y| >= 2^24: a multiple of 2
  // Bit 23 - e has weight 1 (for e = 0 it is the low exponent bit, set for 127: y = 1.x).
  std::uint32_t fracMask = (1u << (23 - e)) - 1u;
  if (iy & fracMask) return Parity::NotInteger;
  return ((iy >> (23 - e)) & 1u) ? Parity::Odd : Parity::Even;
}

Parity parityOf(double y) {
  std::uint64_t iy = bitsOf(y);
  int e = static_cast<int>((iy >> 52) & 0x7ffu) - 1023;
  if (e < 0) return Parity::NotInteger;
  if (e >= 53) return Parity::Even;
  std::uint64_t fracMask = (std::uint64_t{1} << (52 - e)) - 1u;
  if (iy & fracMask) return Parity::NotInteger;
  return ((iy >> (52 - e)) & 1u) ? Parity::Odd : Parity::Even;
}

/// x^y for x positive, finite and nonzero (may be subnormal), y finite and nonzero.
float powPositive(float x, float y) {
  // z = 128 y log2(x), the exp kernel's argument.
  double z = static_cast<double>(y) * internal::log2By128Lite(static_cast<double>(x));
  if (z >= 128.0 * 128.0) return std::numeric_limits<float>::infinity();  // x^y >= 2^128
  if (z < -150.0 * 128.0) return 0.0f;  // below half the smallest subnormal (2^-150)
  internal::ExpLite e = internal::exp2By128Lite<3>(z);
  return static_cast<float>(e.scale + e.scale * e.poly);
}

double powPositive(double x, double y) {
  std::uint64_t ix = bitsOf(x);
  int kAdj = 0;
  if (ix < 0x0010000000000000ull) {  // subnormal x
    ix = bitsOf(x * 0x1p52);
    kAdj = -52;
  }
  double ay = y < 0 ? -y : y;
  if (ay >= 0x1p64) {
    // |log x| >= 2^-53 for any x != 1, so |y log x| >= 2^11: overflow or underflow.
    if (x == 1.0) return 1.0;
    return ((x > 1.0) == (y > 0)) ? std::numeric_limits<double>::infinity() : 0.0;
  }
  DD l = internal::logDd<true>(ix, kAdj);
  DD z = internal::twoProd(y, l.hi);  // |y| < 2^64 and |l| < 745: no overflow in the split
  z = internal::fastTwoSum(z.hi, z.lo + y * l.lo);
  if (z.hi > 710.0) return std::numeric_limits<double>::infinity();  // e^z > 2^1024
  if (z.hi < -746.0) return 0.0;                                     // e^z < 2^-1076
  internal::ExpDd e = internal::expKernelDd(z.hi, z.lo);
  return internal::scaleDd(e.hi, e.lo, e.e);
}

/// Every case other than (positive finite x, finite nonzero y), in Annex F's order.
template <typename T>
T powSpecial(T x, T y) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  if (y != y) return x == T(1) ? T(1) : y + y;  // pow(+1, NaN) = 1
  if (y == T(0)) return T(1);                   // pow(x, +-0) = 1, even for NaN x
  if (x != x) return x + x;
  if (x == T(1)) return T(1);
  T ax = x < T(0) ? -x : x;  // (for -0 this is -0, which compares equal to 0)
  if (y == kInf || y == -kInf) {
    if (ax == T(1)) return T(1);  // pow(-1, +-inf) = 1
    return ((ax > T(1)) == (y > T(0))) ? kInf : T(0);
  }
  Parity py = parityOf(y);
  bool negate = false;
  if (bitsOf(x) >> (sizeof(T) * 8 - 1)) {  // sign bit: -0, negative, -inf
    if (py == Parity::Odd) {
      negate = true;
    } else if (py == Parity::NotInteger && ax != T(0) && ax != kInf) {
      return std::numeric_limits<T>::quiet_NaN();  // negative finite base, non-integer y
    }
  }
  T r;
  if (ax == T(0)) {
    r = y < T(0) ? kInf : T(0);
  } else if (ax == kInf) {
    r = y < T(0) ? T(0) : kInf;
  } else {
    r = powPositive(ax, y);
  }
  return negate ? -r : r;
}

}  // namespace

float pow(float x, float y) noexcept {
  std::uint32_t ux = bitsOf(x);
  std::uint32_t uy = bitsOf(y);
  // x positive finite nonzero, y finite nonzero: one compare each.
  if (ux - 1u < 0x7f7fffffu && (uy << 1) - 1u < 0xfeffffffu) [[likely]] return powPositive(x, y);
  return powSpecial(x, y);
}

double pow(double x, double y) noexcept {
  std::uint64_t ix = bitsOf(x);
  std::uint64_t iy = bitsOf(y);
  if (ix - 1u < 0x7fefffffffffffffull && (iy << 1) - 1u < 0xffdfffffffffffffull) [[likely]] {
    return powPositive(x, y);
  }
  return powSpecial(x, y);
}

}  // namespace loam::dm
