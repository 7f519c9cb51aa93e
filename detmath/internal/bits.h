// Internal helpers shared by the detmath sources: bit access and error-free
// transformations (double-double arithmetic) built from IEEE basic operations only.
// No FMA: products are made exact with Dekker's split, so results do not depend on
// whether the target has a fused multiply-add.
#pragma once

#include <bit>
#include <cstdint>

namespace loam::dm::internal {

inline std::uint32_t bitsOf(float x) noexcept { return std::bit_cast<std::uint32_t>(x); }
inline std::uint64_t bitsOf(double x) noexcept { return std::bit_cast<std::uint64_t>(x); }
inline float floatFromBits(std::uint32_t b) noexcept { return std::bit_cast<float>(b); }
inline double doubleFromBits(std::uint64_t b) noexcept { return std::bit_cast<double>(b); }

/// An unevaluated sum hi + lo with |lo| <= ulp(hi)/2: about 106 bits of precision.
struct DD {
  double hi = 0.0;
  double lo = 0.0;
};

/// s + e == a + b exactly (Knuth). Any order of magnitudes.
inline DD twoSum(double a, double b) noexcept {
  double s = a + b;
  double bb = s - a;
  double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}

/// s + e == a + b exactly, valid only when |a| >= |b| (or a == 0) (Dekker).
inline DD fastTwoSum(double a, double b) noexcept {
  double s = a + b;
  double e = b - (s - a);
  return {s, e};
}

/// Splits a into hi + lo with 26 significant bits each (Veltkamp). |a| < 2^996.
inline DD split(double a) noexcept {
  constexpr double kSplitter = 134217729.0;  // 2^27 + 1
  double t = kSplitter * a;
  double hi = t - (t - a);
  return {hi, a - hi};
}

/// p + e == a * b exactly, without FMA (Dekker). Requires no overflow in the split.
inline DD twoProd(double a, double b) noexcept {
  double p = a * b;
  DD as = split(a);
  DD bs = split(b);
  double e = ((as.hi * bs.hi - p) + as.hi * bs.lo + as.lo * bs.hi) + as.lo * bs.lo;
  return {p, e};
}

inline DD ddAdd(DD a, DD b) noexcept {
  DD s = twoSum(a.hi, b.hi);
  DD t = twoSum(a.lo, b.lo);
  s.lo += t.hi;
  s = fastTwoSum(s.hi, s.lo);
  s.lo += t.lo;
  return fastTwoSum(s.hi, s.lo);
}

inline DD ddAdd(DD a, double b) noexcept {
  DD s = twoSum(a.hi, b);
  s.lo += a.lo;
  return fastTwoSum(s.hi, s.lo);
}

inline DD ddMul(DD a, DD b) noexcept {
  DD p = twoProd(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  return fastTwoSum(p.hi, p.lo);
}

inline DD ddMul(DD a, double b) noexcept {
  DD p = twoProd(a.hi, b);
  p.lo += a.lo * b;
  return fastTwoSum(p.hi, p.lo);
}

inline DD ddDiv(DD a, DD b) noexcept {
  double q1 = a.hi / b.hi;
  DD p = twoProd(q1, b.hi);
  DD r = ddAdd(a, DD{-p.hi, -p.lo});
  r = ddAdd(r, -(q1 * b.lo));
  double q2 = r.hi / b.hi;
  return fastTwoSum(q1, q2);
}

}  // namespace loam::dm::internal
