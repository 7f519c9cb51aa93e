// asin, acos, atan and atan2 for float and double.
//
// atan: |x| below 2^-4 goes straight to the polynomial; |x| >= 32 uses
// atan x = pi/2 - atan(1/x); in between, the exponent and top three mantissa bits of
// |x| pick a centre c (72 entries, 2^-4 <= c < 32) and
//   atan x = atan c + atan u,  u = (x - c) / (1 + x c),  |u| <= 0.031,
// where atan c comes from a table. Every branch leaves |u| <= 1/16 for the kernel.
// atan2 reduces to atan(|y| / |x|) and places the angle in its quadrant.
// asin: |x| <= 1/2 is the polynomial; above, asin x = pi/2 - 2 asin(sqrt((1-x)/2)).
// acos follows from the same kernel: pi/2 - asin x, 2 asin s or pi - 2 asin s.
// float versions run in double (errors far below a float ulp); double versions carry
// the reduced argument and leading terms as double-doubles (internal/bits.h).
// Polynomials and the atan table come from detmath/tools/gen_trig_constants.cpp.
#include <cstddef>
#include <cstdint>

#include "detmath/detmath.h"
#include "detmath/internal/bits.h"
#include "detmath/internal/trig_common.h"

namespace loam::dm {
namespace {

using internal::bitsOf;
using internal::DD;
using internal::poly;
using internal::quotientDD;
using internal::doubleFromBits;
using internal::floatFromBits;

// atan u = u + u^3 P(u^2), |u| <= 1/16. float: relative error 2^-42; double: 2^-69.
constexpr double kAtanF[] = {-0x1.55555540886ebp-2, 0x1.99989d34128adp-3, -0x1.22dea9bb63dc6p-3};
constexpr double kAtanD[] = {-0x1.5555555555555p-2, 0x1.9999999998fa6p-3, -0x1.249249218536fp-3,
                             0x1.c71c645d0842bp-4,  -0x1.744ed8cb35626p-4, 0x1.343dba1c4cb7p-4};
// float: asin x = x + x^3 P(x^2), |x| <= 1/2; relative error 2^-39.9.
constexpr double kAsinF[] = {0x1.55555547de6bep-3, 0x1.333340875afe9p-4, 0x1.6db25ce4faae9p-5,
                             0x1.f2819ef24c589p-6, 0x1.6643db36b6948p-6, 0x1.522ea85d9d9a8p-6,
                             0x1.054524231ac64p-9, 0x1.0d7cf94e16805p-5};
// double: asin x = x + x^3/6 + x^5 P(x^2), |x| <= 1/2; relative error of asin 2^-63.6.
constexpr double kAsinD[] = {0x1.333333333356bp-4, 0x1.6db6db6d80409p-5, 0x1.f1c71c93253cbp-6, 0x1.6e8b9d5f4eaap-6,
                             0x1.1c4f568f40a92p-6, 0x1.c985bb1fc3748p-7, 0x1.7b77166d200c8p-7, 0x1.37ec555cd38f6p-7,
                             0x1.42a33e76b0b48p-7, 0x1.3c55a2b8d62p-10,  0x1.84ad012989568p-6, -0x1.95f7afa1f375p-6,
                             0x1.0d5c9b713b8cfp-5};

// atan(c) for c = 2^e (1 + (2j+1)/16), entry 8(e+4) + j, e = -4..4, j = 0..7.
constexpr DD kAtanTable[72] = {
    {0x1.0f99ea71d52a7p-4, -0x1.2069feec3624fp-61}, {0x1.2f719318a4a9ap-4, 0x1.3fd1779b9801fp-63},
    {0x1.4f3fd677292fbp-4, 0x1.008d36264979ep-59}, {0x1.6f03bdcea4b0dp-4, -0x1.3f00e512fa17dp-60},
    {0x1.8ebc54478fb28p-4, 0x1.732880cad24ccp-59}, {0x1.ae68a71c722b8p-4, 0x1.c014e6910b9dbp-59},
    {0x1.ce07c5c3cca32p-4, 0x1.138e6425918a7p-59}, {0x1.ed98c2190043bp-4, -0x1.3a598592c7b13p-61},
    {0x1.0e6adccf40882p-3, -0x1.d71a31bb98d0dp-57}, {0x1.2dcbdb2fba1ffp-3, 0x1.8f28705561534p-58},
    {0x1.4d087a9da4f17p-3, 0x1.1f323f1adf158p-57}, {0x1.6c1d4898933d9p-3, -0x1.2954a7603c427p-58},
    {0x1.8b06ee2879c29p-3, -0x1.118cd30308c4fp-57}, {0x1.a9c231b403279p-3, 0x1.0e8bbe89cca85p-57},
    {0x1.c84bf8a742e6ep-3, -0x1.95bdd0682ea26p-58}, {0x1.e6a148e96ec4dp-3, 0x1.866b22029f765p-57},
    {0x1.09dc597d86362p-2, 0x1.62e47390cb865p-56}, {0x1.278372057ef46p-2, -0x1.077cdd36dfc81p-56},
    {0x1.44aa436c2af0ap-2, -0x1.5d5e43c55b3bap-56}, {0x1.614840309cfe2p-2, -0x1.a725715711fp-56},
    {0x1.7d5604b63b3f7p-2, 0x1.69c885c2b249ap-56}, {0x1.98cd5454d6b18p-2, 0x1.9e6c988fd0a77p-56},
    {0x1.b3a911da65c6cp-2, 0x1.ae187b1ca504p-56}, {0x1.cde53432c1351p-2, -0x1.a2cfa4418f1adp-56},
    {0x1.f40dd0b541418p-2, -0x1.a3992dc382a23p-57}, {0x1.1255d9bfbd2a9p-1, -0x1.2bdaee1c0ee35p-58},
    {0x1.2958e59308e31p-1, -0x1.09e73b0c6c087p-56}, {0x1.3f13fb89e96f4p-1, 0x1.ecf8b492644fp-56},
    {0x1.538f57b89061fp-1, -0x1.1bb74abda520cp-55}, {0x1.66d663923e087p-1, -0x1.6ea6febe8bbbap-56},
    {0x1.78f6bbd5d315ep-1, 0x1.406a08980374p-55}, {0x1.89ff5ff57f1f8p-1, -0x1.55b9a5e177a1bp-55},
    {0x1.a1a25f2c82506p-1, -0x1.8b4c3611182fcp-57}, {0x1.bde70ed439fe7p-1, -0x1.a2b56372c05efp-56},
    {0x1.d6e57cf4f0acap-1, -0x1.763b9456ae66ep-55}, {0x1.ed0d97c9041c9p-1, -0x1.2629e3b5da49p-58},
    {0x1.006132e34d617p+0, 0x1.b343dfa868d93p-54}, {0x1.092ce471853ccp+0, 0x1.269f9b3e200c2p-55},
    {0x1.110eb007f39f7p+0, -0x1.12b2ff85e55p-54}, {0x1.1825f074030d9p+0, -0x1.9523f0af0d3b5p-58},
    {0x1.21862f3fade36p+0, 0x1.4887628d68748p-54}, {0x1.2c1a241d66dc3p+0, 0x1.82b2d58b6a8e9p-54},
    {0x1.34f1fbb19eb09p+0, 0x1.80d79b4cf61d5p-55}, {0x1.3c6e650b38047p+0, 0x1.6b63b358e746dp-54},
    {0x1.42d70411f9ec1p+0, 0x1.2b08db7f10896p-55}, {0x1.4861b4cfbe71p+0, -0x1.567d3d25932d1p-57},
    {0x1.4d378c1999a0dp+0, -0x1.c857a639541c8p-57}, {0x1.51784fa1544bap+0, -0x1.236e3c857c019p-54},
    {0x1.56f6f33a3e6a7p+0, -0x1.df6edd6f1ec3bp-56}, {0x1.5d013c41adabdp+0, 0x1.f82bba194dd5dp-54},
    {0x1.61f06c6a92b89p+0, -0x1.487d50bceb1a5p-55}, {0x1.660b02c736a06p+0, -0x1.acb6afb332a0fp-56},
    {0x1.698213a9d5053p+0, -0x1.b9839085189e3p-54}, {0x1.6c78c7edeb195p+0, 0x1.9239ad620ffe2p-54},
    {0x1.6f08f07435fecp+0, -0x1.957a7170df016p-55}, {0x1.7145eac2088a4p+0, -0x1.fda5797b32a0bp-54},
    {0x1.7424de90454d4p+0, -0x1.3a75d182e1a5fp-54}, {0x1.77467e364f601p+0, -0x1.bfda44f3537b8p-54},
    {0x1.79d0f3fad1c92p+0, 0x1.38727dc4fb7d1p-55}, {0x1.7beb396c5699ap+0, -0x1.3dc969c7e2365p-55},
    {0x1.7daff85a63058p+0, 0x1.1ee9bcca84eb2p-54}, {0x1.7f320a0f9f587p+0, 0x1.38dbb20936502p-56},
    {0x1.807f2112987c7p+0, 0x1.178e474ec8c66p-54}, {0x1.81a16e43f190bp+0, -0x1.e6b0733383ad4p-54},
    {0x1.831516233f561p+0, -0x1.7927ffec5f9dcp-54}, {0x1.84a99fe25186bp+0, 0x1.494c8619d0bbcp-54},
    {0x1.85f14d43d81bep+0, 0x1.bf8770a76afafp-58}, {0x1.87001c35928d4p+0, -0x1.b4ba860ada728p-54},
    {0x1.87e3aa32878aep+0, -0x1.9b0e3c3bbc6cfp-54}, {0x1.88a58ec949d14p+0, 0x1.b07443dd06ad8p-54},
    {0x1.894cbdb6bedfcp+0, -0x1.ffb5195f35cp-60}, {0x1.89de605acdbb3p+0, -0x1.e2ac570eac042p-54},
};

constexpr DD kPio2DD = {0x1.921fb54442d18p+0, 0x1.1a62633145c07p-54};
constexpr DD kPiDD = {0x1.921fb54442d18p+1, 0x1.1a62633145c07p-53};
constexpr DD kSixth = {0x1.5555555555555p-3, 0x1.5555555555555p-57};
// Correctly rounded constants for the exact special cases of atan2.
constexpr double kPio4D = 0x1.921fb54442d18p-1;
constexpr double k3Pio4D = 0x1.2d97c7f3321d2p+1;
constexpr float kPio2F = 0x1.921fb6p+0f;
constexpr float kPiFloat = 0x1.921fb6p+1f;
constexpr float kPio4F = 0x1.921fb6p-1f;
constexpr float k3Pio4F = 0x1.2d97c8p+1f;

/// Double bits bounding the atan table: 2^-4 and 2^5.
constexpr std::uint64_t kTableLowBits = 0x3fb0000000000000ull;
constexpr std::uint64_t kTableHighBits = 0x4040000000000000ull;


inline float nanResult(float x) noexcept {
  std::uint32_t b = bitsOf(x);
  return (b & 0x7fffffffu) > 0x7f800000u ? floatFromBits(b | 0x00400000u) : floatFromBits(0x7fc00000u);
}
inline double nanResult(double x) noexcept {
  std::uint64_t b = bitsOf(x);
  return (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull ? doubleFromBits(b | 0x0008000000000000ull)
                                                              : doubleFromBits(0x7ff8000000000000ull);
}
inline float withSign(float v, bool negative) noexcept { return negative ? -v : v; }
inline double withSign(double v, bool negative) noexcept { return negative ? -v : v; }

/// Table centre and index for 2^-4 <= a < 32: keep sign, exponent and three mantissa
/// bits, then set the fourth (the middle of that eighth of the binade).
inline double tableCentre(double a, std::size_t* index) noexcept {
  std::uint64_t b = bitsOf(a);
  *index = static_cast<std::size_t>((b >> 49) - (kTableLowBits >> 49));
  return doubleFromBits((b & 0xfffe000000000000ull) | 0x0001000000000000ull);
}

// ---- float kernels in double ----

inline double atanKernelF(double u) noexcept {
  double z = u * u;
  return u + (u * z) * poly(z, kAtanF);
}

/// atan a for a >= 0 (finite or +inf), relative error about 2^-50.
double atanPositiveF(double a) noexcept {
  std::uint64_t b = bitsOf(a);
  if (b < kTableLowBits) return atanKernelF(a);
  if (b >= kTableHighBits) return kPio2DD.hi + atanKernelF(-1.0 / a);
  std::size_t index;
  double c = tableCentre(a, &index);
  // For a float a both a - c and 1 + a c are exact in double (a has 24 bits, c has 5).
  double u = (a - c) / (1.0 + a * c);
  return kAtanTable[index].hi + atanKernelF(u);
}

inline double asinKernelF(double x) noexcept {
  double z = x * x;
  return x + (x * z) * poly(z, kAsinF);
}

// ---- double kernels ----

/// atan(u.hi + u.lo) for |u| <= 1/16 as an unevaluated double-double. The x^3/3 term
/// is below 2^-13 of the result, so a double tail is accurate enough.
DD atanKernelD(DD u) noexcept {
  double x = u.hi;
  double z = x * x;
  DD s = internal::fastTwoSum(x, (x * z) * poly(z, kAtanD));
  s.lo += u.lo * (1.0 - z);  // atan(x + lo) = atan x + lo / (1 + x^2)
  return s;
}

/// atan t for a double-double t with 2^-1000 < t.hi <= 2^62, as a normalised double-double.
DD atanPositiveD(DD t) noexcept {
  std::uint64_t b = bitsOf(t.hi);
  if (b < kTableLowBits) {
    DD r = atanKernelD(t);
    return internal::fastTwoSum(r.hi, r.lo);
  }
  if (b >= kTableHighBits) {
    DD u = quotientDD(DD{-1.0, 0.0}, t);
    return internal::ddAdd(kPio2DD, atanKernelD(u));
  }
  std::size_t index;
  double c = tableCentre(t.hi, &index);
  // u = (t - c) / (1 + t c) in double-double: t.hi - c is exact (same binade).
  DD num = internal::twoSum(t.hi - c, t.lo);
  DD den = internal::twoProd(t.hi, c);
  den.lo += t.lo * c;
  den = internal::ddAdd(den, 1.0);
  DD u = quotientDD(num, den);
  return internal::ddAdd(kAtanTable[index], atanKernelD(u));
}

/// asin(s.hi + s.lo) for |s| <= 1/2 as a normalised double-double.
DD asinKernelD(DD s) noexcept {
  double x = s.hi;
  DD x2 = internal::twoProd(x, x);  // x^2 exactly
  // x^3/6 = (x/6) x^2 to about 2^-104, from two independent products.
  DD xs = internal::twoProd(x, kSixth.hi);
  xs.lo += x * kSixth.lo;
  DD t1 = internal::twoProd(xs.hi, x2.hi);
  t1.lo += xs.hi * x2.lo + xs.lo * x2.hi;
  double z = x2.hi;
  double tail = ((x * z) * z) * poly(z, kAsinD);
  double corr = s.lo * (1.0 + 0.5 * z);  // asin(x + lo) = asin x + lo / sqrt(1 - x^2)
  DD r = internal::fastTwoSum(x, t1.hi);
  r.lo += (t1.lo + corr) + tail;
  return internal::fastTwoSum(r.hi, r.lo);
}

/// sqrt(w) as a double-double for 0 < w <= 1/4: one correction step on the rounded
/// root. The root is correctly rounded, so the pair is already normalised; not
/// renormalising lets the caller start on h before the division finishes.
DD sqrtDD(double w) noexcept {
  double h = loam::dm::sqrt(w);
  DD p = internal::twoProd(h, h);
  double r = (w - p.hi) - p.lo;  // w - p.hi is exact (Sterbenz)
  return DD{h, r / (2.0 * h)};
}

inline DD negated(DD a) noexcept { return DD{-a.hi, -a.lo}; }

}  // namespace

// ---------------------------------------------------------------- float

float atan(float x) noexcept {
  std::uint32_t b = bitsOf(x);
  std::uint32_t ix = b & 0x7fffffffu;
  if (ix < 0x39800000u) return x;  // |x| < 2^-12: atan x = x (1 - x^2/3) rounds to x
  if (ix > 0x7f800000u) return nanResult(x);
  return static_cast<float>(withSign(atanPositiveF(static_cast<double>(floatFromBits(ix))), (b >> 31) != 0));
}

float asin(float x) noexcept {
  std::uint32_t b = bitsOf(x);
  std::uint32_t ix = b & 0x7fffffffu;
  if (ix < 0x39800000u) return x;  // |x| < 2^-12: asin x = x (1 + x^2/6) rounds to x
  if (ix > 0x3f800000u) return nanResult(x);  // |x| > 1, inf, NaN
  double a = floatFromBits(ix);
  double r;
  if (ix <= 0x3f000000u) {
    r = asinKernelF(a);
  } else {
    // w = (1 - a)/2 is exact; s^2 = w, so the kernel's z is w itself.
    double w = (1.0 - a) * 0.5;
    double s = loam::dm::sqrt(w);
    r = kPio2DD.hi - 2.0 * (s + (s * w) * poly(w, kAsinF));
  }
  return static_cast<float>(withSign(r, (b >> 31) != 0));
}

float acos(float x) noexcept {
  std::uint32_t b = bitsOf(x);
  std::uint32_t ix = b & 0x7fffffffu;
  if (ix > 0x3f800000u) return nanResult(x);
  double r;
  if (ix <= 0x3f000000u) {
    r = kPio2DD.hi - asinKernelF(static_cast<double>(x));
  } else {
    double w = (1.0 - static_cast<double>(floatFromBits(ix))) * 0.5;
    double s = loam::dm::sqrt(w);
    double as = s + (s * w) * poly(w, kAsinF);
    r = (b >> 31) ? kPiDD.hi - 2.0 * as : 2.0 * as;
  }
  return static_cast<float>(r);
}

float atan2(float y, float x) noexcept {
  std::uint32_t by = bitsOf(y), bx = bitsOf(x);
  std::uint32_t iy = by & 0x7fffffffu, ix = bx & 0x7fffffffu;
  bool yNeg = (by >> 31) != 0, xNeg = (bx >> 31) != 0;
  if (iy > 0x7f800000u) return nanResult(y);
  if (ix > 0x7f800000u) return nanResult(x);
  if (iy == 0) return xNeg ? withSign(kPiFloat, yNeg) : y;  // atan2(+-0, -0) = +-pi
  if (ix == 0) return withSign(kPio2F, yNeg);
  if (ix == 0x7f800000u) {
    if (iy == 0x7f800000u) return withSign(xNeg ? k3Pio4F : kPio4F, yNeg);
    return xNeg ? withSign(kPiFloat, yNeg) : withSign(0.0f, yNeg);
  }
  if (iy == 0x7f800000u) return withSign(kPio2F, yNeg);
  // The float ratio always fits a double, rounded once (2^-53).
  double t = static_cast<double>(floatFromBits(iy)) / static_cast<double>(floatFromBits(ix));
  double theta = atanPositiveF(t);
  if (xNeg) theta = kPiDD.hi - theta;
  return static_cast<float>(withSign(theta, yNeg));
}

// ---------------------------------------------------------------- double

double atan(double x) noexcept {
  std::uint64_t b = bitsOf(x);
  std::uint64_t ix = b & 0x7fffffffffffffffull;
  bool negative = (b >> 63) != 0;
  if (ix < 0x3e40000000000000ull) return x;  // |x| < 2^-27: atan x rounds to x
  if (ix > 0x7ff0000000000000ull) return nanResult(x);
  // Beyond 2^60, pi/2 - 1/|x| rounds to pi/2's double (pi/2 is 0.28 ulp above it).
  if (ix >= 0x43b0000000000000ull) return withSign(kPio2DD.hi, negative);
  DD r = atanPositiveD(DD{doubleFromBits(ix), 0.0});
  return withSign(r.hi, negative);
}

double asin(double x) noexcept {
  std::uint64_t b = bitsOf(x);
  std::uint64_t ix = b & 0x7fffffffffffffffull;
  bool negative = (b >> 63) != 0;
  if (ix < 0x3e50000000000000ull) return x;  // |x| < 2^-26: asin x rounds to x
  if (ix >= 0x3ff0000000000000ull) {
    if (ix == 0x3ff0000000000000ull) return withSign(kPio2DD.hi, negative);
    return nanResult(x);
  }
  double a = doubleFromBits(ix);
  if (ix <= 0x3fe0000000000000ull) return withSign(asinKernelD(DD{a, 0.0}).hi, negative);
  DD s = sqrtDD((1.0 - a) * 0.5);  // 1 - a is exact for a >= 1/2
  DD r = asinKernelD(s);
  DD v = internal::ddAdd(kPio2DD, DD{-2.0 * r.hi, -2.0 * r.lo});
  return withSign(v.hi, negative);
}

double acos(double x) noexcept {
  std::uint64_t b = bitsOf(x);
  std::uint64_t ix = b & 0x7fffffffffffffffull;
  bool negative = (b >> 63) != 0;
  if (ix > 0x3ff0000000000000ull) return nanResult(x);
  if (ix <= 0x3fe0000000000000ull) {
    // Below 2^-57, pi/2 - x rounds to pi/2's double.
    if (ix < 0x3c60000000000000ull) return kPio2DD.hi;
    return internal::ddAdd(kPio2DD, negated(asinKernelD(DD{x, 0.0}))).hi;
  }
  if (ix == 0x3ff0000000000000ull) return negative ? kPiDD.hi : 0.0;
  double a = doubleFromBits(ix);
  DD r = asinKernelD(sqrtDD((1.0 - a) * 0.5));
  DD twice{2.0 * r.hi, 2.0 * r.lo};
  if (negative) return internal::ddAdd(kPiDD, negated(twice)).hi;
  return twice.hi + twice.lo;
}

double atan2(double y, double x) noexcept {
  std::uint64_t by = bitsOf(y), bx = bitsOf(x);
  std::uint64_t iy = by & 0x7fffffffffffffffull, ix = bx & 0x7fffffffffffffffull;
  bool yNeg = (by >> 63) != 0, xNeg = (bx >> 63) != 0;
  constexpr std::uint64_t kInf = 0x7ff0000000000000ull;
  if (iy > kInf) return nanResult(y);
  if (ix > kInf) return nanResult(x);
  if (iy == 0) return xNeg ? withSign(kPiDD.hi, yNeg) : y;  // atan2(+-0, -0) = +-pi
  if (ix == 0) return withSign(kPio2DD.hi, yNeg);
  if (ix == kInf) {
    if (iy == kInf) return withSign(xNeg ? k3Pio4D : kPio4D, yNeg);
    return xNeg ? withSign(kPiDD.hi, yNeg) : withSign(0.0, yNeg);
  }
  if (iy == kInf) return withSign(kPio2DD.hi, yNeg);

  double ay = doubleFromBits(iy), ax = doubleFromBits(ix);
  // Exponents, with subnormals first scaled up by 2^64 (exact).
  int ey = static_cast<int>(iy >> 52), ex = static_cast<int>(ix >> 52);
  double my = ay, mx = ax;
  if (ey == 0) {
    my = ay * 0x1p64;
    ey = static_cast<int>(bitsOf(my) >> 52) - 64;
  }
  if (ex == 0) {
    mx = ax * 0x1p64;
    ex = static_cast<int>(bitsOf(mx) >> 52) - 64;
  }
  int d = ey - ex;
  DD theta;
  if (d > 60) {
    // |y/x| > 2^60: theta = pi/2 - |x/y|; the quotient may underflow harmlessly.
    theta = internal::ddAdd(kPio2DD, -(ax / ay));
  } else if (d < -60) {
    // |y/x| < 2^-60: atan t = t to far below an ulp; the quotient is correctly rounded,
    // including when it is subnormal.
    double t = ay / ax;
    if (!xNeg) return withSign(t, yNeg);
    theta = DD{t, 0.0};
  } else {
    // Scale both mantissas to [1, 2) and y by 2^d so the quotient and its remainder
    // cannot overflow or underflow, then t = y/x as a double-double.
    std::uint64_t mantMask = 0x000fffffffffffffull;
    double xs = doubleFromBits((bitsOf(mx) & mantMask) | 0x3ff0000000000000ull);
    double ys = doubleFromBits((bitsOf(my) & mantMask) | (static_cast<std::uint64_t>(1023 + d) << 52));
    double q = ys / xs;
    DD p = internal::twoProd(q, xs);
    double rem = (ys - p.hi) - p.lo;  // ys - p.hi is exact (Sterbenz)
    theta = atanPositiveD(internal::fastTwoSum(q, rem / xs));
  }
  if (xNeg) theta = internal::ddAdd(kPiDD, negated(theta));
  return withSign(theta.hi + theta.lo, yNeg);
}

}  // namespace loam::dm
