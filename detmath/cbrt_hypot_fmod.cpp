// cbrt, hypot and fmod from IEEE basic operations and integer arithmetic only.
//
// cbrt: the exponent is split as 3k + r, a degree-4 polynomial (minimax for relative
// error on [1, 2), derived with mpmath's Remez iteration) times 2^(r/3) gives about
// 17 bits, one Halley step triples that to about 48 bits (enough for float), and for
// double one Newton step on an exactly computed residual a - y^3 (Dekker products)
// brings the error far below half an ulp before the single final rounding.
//
// hypot: float works in double, where x^2 + y^2 can neither overflow nor underflow and
// carries more than twice float's precision. Double scales both arguments by a power of
// two into a safe range, forms x^2 + y^2 as a double-double, takes the square root and
// corrects it with the exact residual; results that land among the subnormals are
// rounded once, straight onto the subnormal grid.
//
// fmod: the result is always exactly representable, so it is computed exactly as an
// integer: (mx * 2^d) mod my by 64-bit long division, many bits per step.
#include <bit>
#include <cstdint>
#include <limits>

#include "detmath/detmath.h"
#include "detmath/internal/bits.h"

namespace loam::dm {
namespace {

using internal::bitsOf;
using internal::DD;
using internal::doubleFromBits;
using internal::fastTwoSum;
using internal::floatFromBits;
using internal::twoProd;

constexpr std::uint64_t kSignD = 0x8000000000000000ull;
constexpr std::uint64_t kExpMaskD = 0x7FF0000000000000ull;
constexpr std::uint64_t kMantMaskD = 0x000FFFFFFFFFFFFFull;
constexpr std::uint64_t kOneBitsD = 0x3FF0000000000000ull;
constexpr std::uint32_t kSignF = 0x80000000u;
constexpr std::uint32_t kExpMaskF = 0x7F800000u;

/// 2^k as a double, for k in the normal range [-1022, 1023].
inline double pow2(int k) noexcept { return doubleFromBits(static_cast<std::uint64_t>(k + 1023) << 52); }

// ---------------------------------------------------------------------------------
// cbrt

// Minimax (relative error 9.21e-6 = 2^-16.7) degree-4 fit of m^(1/3) on [1, 2].
constexpr double kCbrtC0 = 0x1.0392ccec67e78p-1;
constexpr double kCbrtC1 = 0x1.6fb1dfe039374p-1;
constexpr double kCbrtC2 = -0x1.33d3850702b84p-2;
constexpr double kCbrtC3 = 0x1.60a153729fdf5p-4;
constexpr double kCbrtC4 = -0x1.5b77f08c29f65p-7;
// 2^(r/3) for r = 0, 1, 2, rounded to nearest (computed with mpmath at 120 bits).
constexpr double kCbrtPow2[3] = {0x1.0p+0, 0x1.428a2f98d728bp+0, 0x1.965fea53d6e3dp+0};

/// Exponent split e = 3k + r with 0 <= r < 3, valid for e >= -1080. The offset keeps
/// the integer division on non-negative values, where it has no rounding ambiguity.
struct ThirdSplit {
  int k = 0;
  int r = 0;
};
inline ThirdSplit splitThird(int e) noexcept {
  int t = e + 1080;  // 1080 = 3 * 360
  int q = t / 3;
  return {q - 360, t - 3 * q};
}

/// cbrt(a) for a = m * 2^r, m in [1, 2), r in {0, 1, 2}, with relative error below
/// about 2^-47 (polynomial error cubed by Halley's step plus a few roundings).
inline double cbrtReduced(double m, int r, double a) noexcept {
  double y = (kCbrtC0 + m * (kCbrtC1 + m * (kCbrtC2 + m * (kCbrtC3 + m * kCbrtC4)))) * kCbrtPow2[r];
  double y3 = y * y * y;
  // Halley: y * (y^3 + 2a) / (2y^3 + a) converges cubically to a^(1/3).
  return y * (y3 + (a + a)) / ((y3 + y3) + a);
}

// ---------------------------------------------------------------------------------
// fmod

/// Format parameters for the shared fmod code.
template <typename T>
struct Layout;
template <>
struct Layout<float> {
  using Bits = std::uint32_t;
  static constexpr int kMantBits = 23;
  static constexpr Bits kSign = kSignF;
  static constexpr Bits kExpMask = kExpMaskF;
  static constexpr Bits kQuietNaN = 0x7FC00000u;
  static float fromBits(Bits b) noexcept { return floatFromBits(b); }
};
template <>
struct Layout<double> {
  using Bits = std::uint64_t;
  static constexpr int kMantBits = 52;
  static constexpr Bits kSign = kSignD;
  static constexpr Bits kExpMask = kExpMaskD;
  static constexpr Bits kQuietNaN = 0x7FF8000000000000ull;
  static double fromBits(Bits b) noexcept { return doubleFromBits(b); }
};

template <typename T>
T fmodImpl(T x, T y) noexcept {
  using L = Layout<T>;
  using Bits = typename L::Bits;
  constexpr Bits kMant = (Bits{1} << L::kMantBits) - 1;
  constexpr std::uint64_t kHidden = std::uint64_t{1} << L::kMantBits;

  Bits ux = bitsOf(x);
  Bits sx = ux & L::kSign;
  Bits ax = ux ^ sx;
  Bits ay = bitsOf(y) & ~L::kSign;
  if (ax >= L::kExpMask || ay > L::kExpMask || ay == 0) {
    // A NaN argument is returned quietened (one operand, so every target keeps its
    // payload); the invalid cases x = +-inf and y = 0 get one fixed NaN, because
    // x86 and Arm disagree on the bits of a NaN made by an invalid operation.
    if (ax > L::kExpMask) return x + x;
    if (ay > L::kExpMask) return y + y;
    return L::fromBits(L::kQuietNaN);
  }
  if (ax < ay) return x;  // covers x = +-0 and y = +-inf
  if (ax == ay) return L::fromBits(sx);

  // |x| = mx * 2^(ex - bias - kMantBits) and the same for y, with ex, ey >= 1 (the
  // subnormal encoding 0 stands for exponent 1 without the hidden bit).
  int ex = static_cast<int>(ax >> L::kMantBits);
  int ey = static_cast<int>(ay >> L::kMantBits);
  std::uint64_t mx = ax & kMant;
  std::uint64_t my = ay & kMant;
  if (ex == 0) {
    ex = 1;
  } else {
    mx |= kHidden;
  }
  if (ey == 0) {
    ey = 1;
  } else {
    my |= kHidden;
  }
  // Odd my: the fewer bits my has, the more bits each division step can take.
  int tz = std::countr_zero(my);
  my >>= tz;
  ey += tz;

  std::uint64_t rem;
  int base;  // rem is in units of 2^(base - bias - kMantBits)
  if (ex < ey) {
    // |y| < |x| with y's scale above x's: my * 2^(ey - ex) < mx, so it fits.
    rem = mx % (my << (ey - ex));
    base = ex;
  } else {
    // rem = (mx * 2^d) mod my, taking `step` bits of the shift at a time: rem < my,
    // so rem << step stays below 2^64.
    int d = ex - ey;
    int step = 64 - std::bit_width(my);
    rem = mx % my;
    while (d > 0 && rem != 0) {
      int s = d < step ? d : step;
      rem = (rem << s) % my;
      d -= s;
    }
    base = ey;
  }
  if (rem == 0) return L::fromBits(sx);
  // rem < my fits the mantissa, so the result is exact: normalise it, or store it as
  // a subnormal when the exponent runs out.
  int shift = L::kMantBits + 1 - std::bit_width(rem);
  int e = base - shift;
  Bits out;
  if (e >= 1) {
    out = (static_cast<Bits>(e) << L::kMantBits) | (static_cast<Bits>(rem << shift) & kMant);
  } else {
    out = static_cast<Bits>(rem << (base - 1));
  }
  return L::fromBits(out | sx);
}

}  // namespace

float cbrt(float x) noexcept {
  // Work in double: every float, subnormals included, is a normal double.
  double d = x;
  std::uint64_t b = bitsOf(d);
  std::uint64_t sign = b & kSignD;
  std::uint64_t abs = b ^ sign;
  if (abs == 0 || abs >= kExpMaskD) return x + x;  // +-0 and +-inf as they are, NaN quietened
  ThirdSplit s = splitThird(static_cast<int>(abs >> 52) - 1023);
  std::uint64_t frac = abs & kMantMaskD;
  double m = doubleFromBits(frac | kOneBitsD);
  double a = doubleFromBits(frac | (static_cast<std::uint64_t>(1023 + s.r) << 52));
  double y = cbrtReduced(m, s.r, a) * pow2(s.k);  // exact scaling, normal range
  // y carries ~47 good bits: one rounding to float is within 0.5 + 2^-23 ulp.
  return static_cast<float>(doubleFromBits(bitsOf(y) | sign));
}

double cbrt(double x) noexcept {
  std::uint64_t b = bitsOf(x);
  std::uint64_t sign = b & kSignD;
  std::uint64_t abs = b ^ sign;
  if (abs == 0 || abs >= kExpMaskD) return x + x;
  int e = static_cast<int>(abs >> 52) - 1023;
  if (e == -1023) {
    // Subnormal: scale by 2^54 (exact) so the mantissa is normal, and take it back
    // out of the exponent (54 = 3 * 18 keeps the split simple).
    abs = bitsOf(doubleFromBits(abs) * 0x1.0p54);
    e = static_cast<int>(abs >> 52) - 1023 - 54;
  }
  ThirdSplit s = splitThird(e);
  std::uint64_t frac = abs & kMantMaskD;
  double m = doubleFromBits(frac | kOneBitsD);
  double a = doubleFromBits(frac | (static_cast<std::uint64_t>(1023 + s.r) << 52));
  double y = cbrtReduced(m, s.r, a);
  // Newton on the exact residual a - y^3, with y^3 = y3.hi + y3.lo + y2.lo * y (Dekker,
  // no FMA). a - y3.hi is exact (Sterbenz: y^3 is within 2^-46 of a); the residual is
  // ~2^-47 a, so rounding the remaining terms costs nothing, and the step leaves an
  // error near 2^-94 before the single final rounding.
  DD y2 = twoProd(y, y);
  DD y3 = twoProd(y2.hi, y);
  double res = ((a - y3.hi) - y3.lo) - y2.lo * y;
  y = y + res / (3.0 * y2.hi);
  return doubleFromBits(bitsOf(y * pow2(s.k)) | sign);
}

float hypot(float x, float y) noexcept {
  std::uint32_t ax = bitsOf(x) & ~kSignF;
  std::uint32_t ay = bitsOf(y) & ~kSignF;
  if (ax >= kExpMaskF || ay >= kExpMaskF) {
    // Annex F: an infinity wins over a NaN.
    if (ax == kExpMaskF || ay == kExpMaskF) return std::numeric_limits<float>::infinity();
    // One NaN operand per addition, so no target-specific choice between two payloads.
    return ax > kExpMaskF ? x + x : y + y;
  }
  // In double, x^2 and y^2 are exact (48 bits, far from overflow and underflow), the
  // sum and the root each round once at 2^-53: within 0.5 + 2^-28 ulp after the
  // final rounding to float.
  double dx = x;
  double dy = y;
  return static_cast<float>(sqrt(dx * dx + dy * dy));
}

double hypot(double x, double y) noexcept {
  std::uint64_t ax = bitsOf(x) & ~kSignD;
  std::uint64_t ay = bitsOf(y) & ~kSignD;
  if (ax >= kExpMaskD || ay >= kExpMaskD) {
    if (ax == kExpMaskD || ay == kExpMaskD) return std::numeric_limits<double>::infinity();
    return ax > kExpMaskD ? x + x : y + y;
  }
  if (ax < ay) {
    std::uint64_t t = ax;
    ax = ay;
    ay = t;
  }
  double a = doubleFromBits(ax);
  double b = doubleFromBits(ay);
  if (ay == 0) return a;
  // b < 2^-53 a: hypot = a (1 + b^2/2a^2 + ...) is within far less than half an ulp
  // of a, and a + b rounds to a.
  if ((ax >> 52) - (ay >> 52) > 54) return a + b;

  // Scale so a^2 and b^2 (b >= 2^-56 a here) are exact double-doubles with no
  // overflow or underflow, and a is below the 2^996 limit of Dekker's split.
  constexpr std::uint64_t kBig = 0x5F30000000000000ull;    // 2^500
  constexpr std::uint64_t kSmall = 0x23D0000000000000ull;  // 2^-450
  int k = 0;
  if (ax > kBig) {
    k = 700;
  } else if (ax < kSmall) {
    k = -700;
  }
  if (k != 0) {
    a *= pow2(-k);
    b *= pow2(-k);
  }
  DD a2 = twoProd(a, a);
  DD b2 = twoProd(b, b);
  DD s = fastTwoSum(a2.hi, b2.hi);  // a^2 >= b^2
  double sLo = s.lo + (a2.lo + b2.lo);
  double r = sqrt(s.hi);
  // One Newton step on the residual S - r^2: s.hi - rr.hi is exact (Sterbenz) and
  // the other terms are ulp-sized, so the correction is accurate to ~2^-100.
  DD rr = twoProd(r, r);
  double c = (((s.hi - rr.hi) - rr.lo) + sLo) / (r + r);
  if (k >= 0) return (r + c) * pow2(k);  // overflow to inf here is the true result

  // Results below 2^-1022 (scaled: 2^-322) must be rounded once, onto the subnormal
  // grid G = 2^-1074 (scaled: 2^-374), not to 53 bits first.
  DD h = fastTwoSum(r, c);
  if (h.hi >= 0x1.0p-322) return h.hi * pow2(k);
  constexpr double kGrid = 0x1.0p-374;
  constexpr double kRound = 0x1.0p-322;  // h.hi + kRound stays in [2^-322, 2^-321]: ulp = G
  double g = (h.hi + kRound) - kRound;  // h.hi rounded to the grid, ties to even
  // h.hi has spacing <= G/2, so only an exact tie in h.hi can be decided by h.lo.
  double off = h.hi - g;
  if (off == 0.5 * kGrid && h.lo > 0) g += kGrid;
  if (off == -0.5 * kGrid && h.lo < 0) g -= kGrid;
  return g * pow2(k);  // exact: g is a multiple of the grid
}

float fmod(float x, float y) noexcept { return fmodImpl(x, y); }
double fmod(double x, double y) noexcept { return fmodImpl(x, y); }

}  // namespace loam::dm
