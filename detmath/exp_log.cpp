// exp, exp2, expm1, log, log2, log10, log1p in float and double.
//
// Float versions evaluate in double with the "Lite" kernels of exp_log_kernels.h
// (2^(j/128) table + degree-3/4 polynomial; 128-bin log table + degree-4 log1p) and
// round once to float. Double versions use the same tables with more terms: exp and
// exp2 evaluate T_j (1 + p) as Thi + (Tlo + Thi p) and round that sum once (~0.51 ulp);
// expm1, log, log2, log10 and log1p go through the double-double kernels (relative
// error below 2^-61) and round once (~0.50 ulp). Results below the normal range are
// rounded once at the subnormal quantum (scaleDd), never first to 53 bits.
#include <cstdint>
#include <limits>

#include "detmath/detmath.h"
#include "detmath/internal/bits.h"
#include "detmath/internal/exp_log_kernels.h"

namespace loam::dm {
namespace {

using internal::bitsOf;
using internal::DD;
using internal::doubleFromBits;
using internal::fastTwoSum;

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Created NaNs use the canonical quiet NaN: the bits a hardware 0/0 produces differ
// between x86 (sign set) and AArch64.
constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// ---- float exp family --------------------------------------------------------

/// expf/exp2f for |x| >= 160 or NaN: overflow, underflow to +0, or NaN.
float expOutOfRange(float x) {
  if (x != x) return x + x;
  return x > 0 ? kInfF : 0.0f;
}

// ---- double exp family -------------------------------------------------------

/// e^(r) * 2^(k/128) pieces shared by exp and exp2: returns T_j (as hi, lo) * (1 + p)
/// split as hi + lo, plus the power-of-two exponent.
struct ExpPieces {
  double hi;
  double lo;
  int e;
  std::uint64_t eBits;  // e << 52, wrapped, for the fast path's exponent add
};

/// Degree-5 Taylor polynomial of e^r - 1 for |r| <= ln2/256 (error < 2^-60.7).
inline double expPoly(double r) {
  const double* f = internal::kInvFactorial;
  double r2 = r * r;
  return r + r2 * (f[2] + r * (f[3] + r * (f[4] + r * f[5])));
}

/// Degree-5 polynomial of 2^(u/128) - 1 for |u| <= 1/2.
inline double exp2Poly(double u) {
  const double* c = internal::kExp2By128Poly;
  return u * (c[0] + u * (c[1] + u * (c[2] + u * (c[3] + u * c[4]))));
}

inline ExpPieces assemble(double p, double s) {
  std::uint64_t ki = bitsOf(s);
  int j = static_cast<int>(ki & 127);
  int k = static_cast<int>(s - internal::kRoundShift);
  DD t = internal::kExp2Table[j];
  // T (1 + p) = Thi + (Tlo + Thi p): the one rounding that matters is the final sum.
  return {t.hi, t.lo + t.hi * p, (k - j) / 128, (ki >> 7) << 52};
}

inline ExpPieces expPieces(double x) {
  double s = x * internal::kInvLn2Times128 + internal::kRoundShift;
  double kd = s - internal::kRoundShift;
  // kd * kLn2By128Hi and the first subtraction are exact.
  double r = (x - kd * internal::kLn2By128Hi) - kd * internal::kLn2By128Lo;
  return assemble(expPoly(r), s);
}

inline ExpPieces exp2Pieces(double x) {
  double z = x * 128.0;  // exact
  double s = z + internal::kRoundShift;
  double kd = s - internal::kRoundShift;
  return assemble(exp2Poly(z - kd), s);
}

/// Fast-path result: the sum lies in (0.99, 2) and the result is normal, so adding e to
/// the exponent field is exact.
inline double finish(const ExpPieces& p) { return doubleFromBits(bitsOf(p.hi + p.lo) + p.eBits); }

/// exp/exp2 outside the fast range: tiny, huge, non-finite; `upper` and `lower` are the
/// arguments beyond which the result surely overflows or surely rounds to zero.
template <typename Pieces>
double expSlow(double x, double upper, double lower, Pieces pieces) {
  if (x != x) return x + x;
  if (x >= upper) return kInf;  // includes +inf
  if (x <= lower) return 0.0;   // includes -inf
  if (x < 1.0 && x > -1.0) return 1.0 + x;  // |x| < 2^-54: rounds to 1
  ExpPieces p = pieces(x);
  return internal::scaleDd(p.hi, p.lo, p.e);
}

}  // namespace

float exp(float x) noexcept {
  std::uint32_t ax = bitsOf(x) & 0x7fffffffu;
  if (ax >= 0x43200000u) [[unlikely]] return expOutOfRange(x);  // |x| >= 160
  // Any |x| < 160 keeps 2^(z/128) a normal double; the conversion to float rounds
  // once, handling float overflow and subnormals.
  internal::ExpLite e = internal::exp2By128Lite<3>(static_cast<double>(x) * internal::kInvLn2Times128);
  return static_cast<float>(e.scale + e.scale * e.poly);
}

float exp2(float x) noexcept {
  std::uint32_t ax = bitsOf(x) & 0x7fffffffu;
  if (ax >= 0x43200000u) [[unlikely]] return expOutOfRange(x);
  internal::ExpLite e = internal::exp2By128Lite<3>(static_cast<double>(x) * 128.0);
  return static_cast<float>(e.scale + e.scale * e.poly);
}

float expm1(float x) noexcept {
  std::uint32_t ux = bitsOf(x);
  std::uint32_t ax = ux & 0x7fffffffu;
  if (ax < 0x33000000u) return x;  // |x| < 2^-25: x + x^2/2 rounds to x (also keeps -0)
  if (ax >= 0x41900000u) [[unlikely]] {  // |x| >= 18
    if (ax > 0x7f800000u) return x + x;
    if (ux >> 31) return -1.0f;  // e^x < 2^-25: rounds to -1
    if (ax >= 0x43200000u) return kInfF;
  }
  // (scale - 1) + scale * poly: for |x| < ln2/256 scale is exactly 1 and the result is
  // poly with full relative accuracy; elsewhere |result| > 2^-8.5 bounds the
  // cancellation.
  internal::ExpLite e = internal::exp2By128Lite<4>(static_cast<double>(x) * internal::kInvLn2Times128);
  return static_cast<float>((e.scale - 1.0) + e.scale * e.poly);
}

double exp(double x) noexcept {
  std::uint32_t top = static_cast<std::uint32_t>(bitsOf(x) >> 52) & 0x7ffu;
  // Fast path 2^-54 <= |x| < 512: the result is a normal double.
  if (top - 0x3c9u >= 0x408u - 0x3c9u) [[unlikely]] {
    return expSlow(x, 710.0, -746.0, [](double v) { return expPieces(v); });
  }
  return finish(expPieces(x));
}

double exp2(double x) noexcept {
  std::uint32_t top = static_cast<std::uint32_t>(bitsOf(x) >> 52) & 0x7ffu;
  if (top - 0x3c9u >= 0x408u - 0x3c9u) [[unlikely]] {
    return expSlow(x, 1024.0, -1076.0, [](double v) { return exp2Pieces(v); });
  }
  return finish(exp2Pieces(x));
}

double expm1(double x) noexcept {
  std::uint64_t ix = bitsOf(x);
  std::uint32_t top = static_cast<std::uint32_t>(ix >> 52) & 0x7ffu;
  if (top < 0x3c9u) return x;  // |x| < 2^-54 (and +-0): x is the rounded result
  if (top >= 0x404u) [[unlikely]] {  // |x| >= 32, inf, NaN
    if (x != x) return x + x;
    if (x < -38.0) return -1.0;    // e^x < 2^-54: -1 + e^x rounds to -1
    if (x > 700.0) return exp(x);  // the -1 is far below half an ulp
  }
  DD r = internal::expm1Dd(x);
  return r.hi;
}

// ---- float log family ----------------------------------------------------------

namespace {

/// log for x <= 0, +inf, NaN (float or double): x is not in (0, inf).
template <typename T>
T logSpecial(T x, T inf, T nan) {
  if (x != x) return x + x;
  if (x == 0) return -inf;
  if (x < 0) return nan;
  return x;  // +inf
}

}  // namespace

float log(float x) noexcept {
  std::uint32_t ux = bitsOf(x);
  // One compare rejects +-0, negatives, inf and NaN; float subnormals are normal doubles.
  if (ux - 1u >= 0x7f7fffffu) [[unlikely]] return logSpecial(x, kInfF, kNanF);
  internal::LogLite l = internal::logLite(static_cast<double>(x));
  return static_cast<float>(l.k * internal::kLn2 + l.t);
}

float log2(float x) noexcept {
  std::uint32_t ux = bitsOf(x);
  if (ux - 1u >= 0x7f7fffffu) [[unlikely]] return logSpecial(x, kInfF, kNanF);
  internal::LogLite l = internal::logLite(static_cast<double>(x));
  // Exact for powers of two: then t = 0.
  return static_cast<float>(l.k + l.t * internal::kInvLn2.hi);
}

float log10(float x) noexcept {
  std::uint32_t ux = bitsOf(x);
  if (ux - 1u >= 0x7f7fffffu) [[unlikely]] return logSpecial(x, kInfF, kNanF);
  internal::LogLite l = internal::logLite(static_cast<double>(x));
  return static_cast<float>(l.k * internal::kLog10Of2 + l.t * internal::kInvLn10.hi);
}

float log1p(float x) noexcept {
  std::uint32_t ux = bitsOf(x);
  std::uint32_t ax = ux & 0x7fffffffu;
  if (ax < 0x33800000u) return x;  // |x| < 2^-24: x is the rounded result (also +-0)
  if (ux >= 0xbf800000u || ax >= 0x7f800000u) [[unlikely]] {  // x <= -1, inf, NaN
    if (ax > 0x7f800000u) return x + x;
    if (ux == 0xbf800000u) return -kInfF;
    if (ux >> 31) return kNanF;
    return x;  // +inf
  }
  // 1 + x is exact in double for 2^-24 <= |x| < 2^29 (and its rounding is harmless
  // beyond); in bin 74 (|x| small) r = u - 1 exactly.
  double u = 1.0 + static_cast<double>(x);
  internal::LogLite l = internal::logLite(u);
  return static_cast<float>(l.k * internal::kLn2 + l.t);
}

// ---- double log family --------------------------------------------------------

namespace {

/// A log argument as the bits of a positive normal double and a power of two:
/// x = fromBits(ix) * 2^kAdj.
struct LogArg {
  std::uint64_t ix;
  int kAdj;
};

inline bool isLogFast(std::uint64_t ix) { return ix - 0x0010000000000000ull < 0x7fe0000000000000ull; }

/// Normalises a positive subnormal x.
inline LogArg normaliseSubnormal(double x) { return {bitsOf(x * 0x1p52), -52}; }

inline bool isPositiveSubnormal(std::uint64_t ix) { return ix != 0 && ix < 0x0010000000000000ull; }

}  // namespace

double log(double x) noexcept {
  std::uint64_t ix = bitsOf(x);
  LogArg a{ix, 0};
  if (!isLogFast(ix)) [[unlikely]] {
    if (!isPositiveSubnormal(ix)) return logSpecial(x, kInf, kNan);
    a = normaliseSubnormal(x);
  }
  DD l = internal::logDd<false>(a.ix, a.kAdj);
  return l.hi;
}

double log2(double x) noexcept {
  std::uint64_t ix = bitsOf(x);
  LogArg a{ix, 0};
  if (!isLogFast(ix)) [[unlikely]] {
    if (!isPositiveSubnormal(ix)) return logSpecial(x, kInf, kNan);
    a = normaliseSubnormal(x);
  }
  internal::LogDd l = internal::logKernelDd<false>(a.ix);
  double kd = static_cast<double>(l.k + a.kAdj);
  DD t = internal::ddMul(l.logm, internal::kInvLn2);
  // |t| < 0.51 < 1 <= |k| unless k = 0, so the fast two-sum applies. Exact for powers
  // of two (t = 0).
  DD s = fastTwoSum(kd, t.hi);
  return s.hi + (s.lo + t.lo);
}

double log10(double x) noexcept {
  std::uint64_t ix = bitsOf(x);
  LogArg a{ix, 0};
  if (!isLogFast(ix)) [[unlikely]] {
    if (!isPositiveSubnormal(ix)) return logSpecial(x, kInf, kNan);
    a = normaliseSubnormal(x);
  }
  internal::LogDd l = internal::logKernelDd<false>(a.ix);
  double kd = static_cast<double>(l.k + a.kAdj);
  DD t = internal::ddMul(l.logm, internal::kInvLn10);
  // kd * kLog10Of2Hi is exact (42-bit constant); |t| < 0.16 < 0.30 <= |k log10 2|.
  DD s = fastTwoSum(kd * internal::kLog10Of2Hi, t.hi);
  return s.hi + ((s.lo + t.lo) + kd * internal::kLog10Of2Lo);
}

double log1p(double x) noexcept {
  std::uint64_t ix = bitsOf(x);
  std::uint32_t top = static_cast<std::uint32_t>(ix >> 52) & 0x7ffu;
  if (top < 0x3c9u) return x;  // |x| < 2^-54: x is the rounded result (also +-0)
  if (ix >= 0xbff0000000000000ull || top == 0x7ffu) [[unlikely]] {  // x <= -1, inf, NaN
    if (x != x) return x + x;
    if (x == -1.0) return -kInf;
    if (ix >> 63) return kNan;
    return x;  // +inf
  }
  if (top < 0x3d7u) {
    // |x| < 2^-40: x - x^2/2 + x^3/3 with one significant rounding. (Through 1 + x the
    // rounding of u.lo/u.hi below would be a sizeable part of an ulp of so small a result.)
    return x + x * x * (-0.5 + x * internal::kInv[3]);
  }
  // 1 + x = u.hi + u.lo exactly; log(u.hi + u.lo) = log(u.hi) + u.lo/u.hi + O(2^-106),
  // and |u.lo/u.hi| <= 2^-53 is tiny next to |log1p(x)| >= 2^-41.
  DD u = internal::twoSum(1.0, x);
  DD l = internal::logDd<false>(bitsOf(u.hi), 0);
  return l.hi + (l.lo + u.lo / u.hi);
}

}  // namespace loam::dm
