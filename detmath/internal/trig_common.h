// Internal helpers shared by the trigonometric sources: a one-division double-double
// quotient and polynomial evaluation by Estrin's scheme in a fixed order.
#pragma once

#include <cstddef>

#include "detmath/internal/bits.h"

namespace loam::dm::internal {

/// (a.hi + a.lo) / (b.hi + b.lo) as a double-double with one division: q1 = a.hi / b.hi
/// via the reciprocal is only 1 ulp off, and the correction q2 = (a - q1 b) / b then
/// restores about 2^-104 relative accuracy.
inline DD quotientDD(DD a, DD b) noexcept {
  double inv = 1.0 / b.hi;
  double q1 = a.hi * inv;
  DD p = internal::twoProd(q1, b.hi);
  double r = (((a.hi - p.hi) - p.lo) + a.lo) - q1 * b.lo;  // a.hi - p.hi is exact (Sterbenz)
  return internal::fastTwoSum(q1, r * inv);
}

/// z, z^2, z^4 and z^8 for the Estrin evaluation below.
struct Powers {
  double p1, p2, p4, p8;
};

/// sum_{i<N} c[B+i] z^i by Estrin's scheme: the lower half plus z^h times the upper
/// half, with h the largest power of two below N. Written as a compile-time recursion
/// so the fixed evaluation order is also fully unrolled; the dependency chain is about
/// log2(N) multiply-adds long instead of N for Horner.
template <std::size_t B, std::size_t N, std::size_t M>
inline double estrin(const double (&c)[M], const Powers& z) noexcept {
  if constexpr (N == 1) {
    return c[B];
  } else if constexpr (N == 2) {
    return c[B] + c[B + 1] * z.p1;
  } else {
    constexpr std::size_t kHalf = N > 8 ? 8 : N > 4 ? 4 : 2;
    double zh = kHalf == 8 ? z.p8 : kHalf == 4 ? z.p4 : z.p2;
    return estrin<B, kHalf>(c, z) + zh * estrin<B + kHalf, N - kHalf>(c, z);
  }
}

template <std::size_t N>
inline double poly(double z, const double (&c)[N]) noexcept {
  static_assert(N >= 1 && N <= 16);
  Powers p;
  p.p1 = z;
  p.p2 = z * z;
  p.p4 = p.p2 * p.p2;
  p.p8 = p.p4 * p.p4;
  return estrin<0, N>(c, p);
}

}  // namespace loam::dm::internal
