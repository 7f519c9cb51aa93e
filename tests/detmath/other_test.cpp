// cbrt, hypot and fmod against MPFR: 1,000,000+ inputs per function and precision over
// the whole exponent range and the ranges where each function is hard (hypot with far
// apart magnitudes and subnormal results, fmod with huge x and tiny y), plus every
// Annex F special case checked bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "detmath/detmath.h"
#include "tests/detmath/ulp_check.h"

namespace dm = loam::dm;
using loam::dm::test::checkBinary;
using loam::dm::test::checkUnary;
using loam::dm::test::InputGen;
using loam::dm::test::note;
using loam::dm::test::printReport;
using loam::dm::test::UlpReport;

namespace {

constexpr int kRandomPerMix = 1000000;

template <typename T>
const char* typeName() {
  return sizeof(T) == 4 ? "float" : "double";
}

/// Bits of a value, to compare results exactly (signed zeros included).
template <typename T>
std::uint64_t bitsOf(T v) {
  if constexpr (sizeof(T) == 4) {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  } else {
    std::uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  }
}

template <typename T>
bool sameBits(T got, T want) {
  return bitsOf(got) == bitsOf(want);
}

/// Random finite value sign * m * 2^e with e uniform in [eLo, eHi] (unbiased exponent of
/// the leading bit), full random mantissa; values below the normal range come out as
/// subnormals with their low bits dropped.
template <typename T>
T withExponent(InputGen& g, int eLo, int eHi) {
  std::uint64_t r = g.next();
  int e = eLo + static_cast<int>(r % static_cast<std::uint64_t>(eHi - eLo + 1));
  // [1, 2): the random fraction has exactly the format's mantissa width.
  constexpr int kFracBits = std::numeric_limits<T>::digits - 1;
  T m = T(1) + std::ldexp(static_cast<T>(g.next() >> (64 - kFracBits)), -kFracBits);
  T v = std::ldexp(m, e);
  return (r >> 40) & 1 ? -v : v;
}

/// Exact cubes of random integers and of random small dyadic values, and their
/// neighbours: where a wrong last bit would show first.
template <typename T>
T nearCube(InputGen& g) {
  constexpr int kBits = sizeof(T) == 4 ? 8 : 17;  // n^3 exact in the format
  T n = static_cast<T>(g.next() >> (64 - kBits)) + T(1);
  T c = n * n * n;
  c = std::ldexp(c, 3 * (static_cast<int>(g.next() % 60) - 30));
  switch (g.next() % 3) {
    case 0: return c;
    case 1: return std::nextafter(c, T(0));
    default: return std::nextafter(c, std::numeric_limits<T>::infinity());
  }
}

int mpfrCbrt(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t m) { return mpfr_cbrt(r, x, m); }
int mpfrHypot(mpfr_ptr r, mpfr_srcptr x, mpfr_srcptr y, mpfr_rnd_t m) { return mpfr_hypot(r, x, y, m); }
int mpfrFmod(mpfr_ptr r, mpfr_srcptr x, mpfr_srcptr y, mpfr_rnd_t m) { return mpfr_fmod(r, x, y, m); }

template <typename T>
void cbrtAccuracy() {
  using L = std::numeric_limits<T>;
  constexpr int kEmin = L::min_exponent - L::digits;  // lowest subnormal exponent
  constexpr int kEmax = L::max_exponent - 1;
  InputGen g(sizeof(T) == 4 ? 0xC0B7F001ull : 0xC0B7D001ull);
  UlpReport r;
  auto f = [](T x) { return dm::cbrt(x); };
  const T specials[] = {L::min(), -L::min(), L::denorm_min(), -L::denorm_min(), L::max(), -L::max(), T(1), T(-1), T(2),
                        T(0.125), T(1e-30), T(7.999999), T(8.000001)};
  for (T x : specials) note(r, checkUnary<T>(f, mpfrCbrt, x), x);
  for (int i = 0; i < kRandomPerMix; ++i) {
    T x;
    switch (i % 4) {
      case 0: x = g.anyFinite<T>(); break;
      case 1: x = withExponent<T>(g, kEmin, kEmax); break;
      case 2: x = g.uniform<T>(T(-1000), T(1000)); break;
      default: x = nearCube<T>(g); break;
    }
    note(r, checkUnary<T>(f, mpfrCbrt, x), x);
  }
  printReport("cbrt", typeName<T>(), r);
  CHECK(r.specialMismatches == 0);
  CHECK(r.maxUlp < 1.0);
}

template <typename T>
void hypotAccuracy() {
  using L = std::numeric_limits<T>;
  constexpr int kEmin = L::min_exponent - L::digits;
  constexpr int kEmax = L::max_exponent - 1;
  InputGen g(sizeof(T) == 4 ? 0x4790F001ull : 0x4790D001ull);
  UlpReport r;
  auto f = [](T x, T y) { return dm::hypot(x, y); };
  const T specials[] = {L::min(), L::denorm_min(), L::max(), T(1), T(-3), T(4), T(0.5), T(1e-20)};
  for (T x : specials)
    for (T y : specials) note(r, checkBinary<T>(f, mpfrHypot, x, y), x, y);
  for (int i = 0; i < kRandomPerMix; ++i) {
    T x;
    T y;
    switch (i % 6) {
      case 0:  // anywhere, usually far apart
        x = g.anyFinite<T>();
        y = g.anyFinite<T>();
        break;
      case 1: {  // any scale, magnitudes within 2^0..2^-70 of each other
        x = withExponent<T>(g, kEmin, kEmax);
        int e = std::ilogb(x) - static_cast<int>(g.next() % 71);
        y = withExponent<T>(g, e, e);
        break;
      }
      case 2:  // same binade region: cancellation-free but every bit counts
        x = withExponent<T>(g, -4, 4);
        y = withExponent<T>(g, -4, 4);
        break;
      case 3:  // near overflow: the true result may exceed max
        x = withExponent<T>(g, kEmax - 2, kEmax);
        y = withExponent<T>(g, kEmax - 30, kEmax);
        break;
      case 4:  // subnormal and near-subnormal arguments and results
        x = withExponent<T>(g, kEmin, L::min_exponent + 2);
        y = withExponent<T>(g, kEmin, L::min_exponent + 2);
        break;
      default:
        x = g.uniform<T>(T(-1e4), T(1e4));
        y = g.uniform<T>(T(-1e4), T(1e4));
        break;
    }
    note(r, checkBinary<T>(f, mpfrHypot, x, y), x, y);
  }
  printReport("hypot", typeName<T>(), r);
  CHECK(r.specialMismatches == 0);
  CHECK(r.maxUlp < 1.0);
}

template <typename T>
void fmodExactness() {
  using L = std::numeric_limits<T>;
  constexpr int kEmin = L::min_exponent - L::digits;
  constexpr int kEmax = L::max_exponent - 1;
  InputGen g(sizeof(T) == 4 ? 0xF30DF001ull : 0xF30DD001ull);
  UlpReport r;
  auto f = [](T x, T y) { return dm::fmod(x, y); };
  const T specials[] = {L::min(), L::denorm_min(), L::max(), T(1), T(-3), T(0.1), T(-0.1), T(1e20), T(7), T(2.5)};
  for (T x : specials)
    for (T y : specials) note(r, checkBinary<T>(f, mpfrFmod, x, y), x, y);
  for (int i = 0; i < kRandomPerMix; ++i) {
    T x;
    T y;
    switch (i % 6) {
      case 0:
        x = g.anyFinite<T>();
        y = g.anyFinite<T>();
        break;
      case 1:  // huge x, tiny y: the longest divisions
        x = withExponent<T>(g, kEmax - 40, kEmax);
        y = withExponent<T>(g, kEmin, kEmin + 80);
        break;
      case 2: {  // x above y by any amount of the range
        y = withExponent<T>(g, kEmin, kEmax);
        int e = std::ilogb(y);
        x = withExponent<T>(g, e, kEmax);
        break;
      }
      case 3:  // close magnitudes: quotient 0, 1 or a few
        x = withExponent<T>(g, -2, 2);
        y = withExponent<T>(g, -2, 2);
        break;
      case 4: {  // divisors with few significant bits (integers, powers of two)
        x = withExponent<T>(g, kEmin, kEmax);
        y = std::ldexp(static_cast<T>(g.next() % 64 + 1), static_cast<int>(g.next() % 200) - 100);
        break;
      }
      default:  // angles and the like
        x = g.uniform<T>(T(-1000), T(1000));
        y = g.uniform<T>(T(0.01), T(10));
        break;
    }
    note(r, checkBinary<T>(f, mpfrFmod, x, y), x, y);
  }
  printReport("fmod", typeName<T>(), r);
  CHECK(r.specialMismatches == 0);
  CHECK(r.maxUlp == 0.0);
}

template <typename T>
void specialCases() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity();
  const T nan = L::quiet_NaN();
  const T zero = T(0);
  const T sub = L::denorm_min();
  const T big = L::max();

  // cbrt: signed zeros and infinities unchanged, NaN stays NaN, exact cubes exact.
  CHECK(sameBits(dm::cbrt(zero), zero));
  CHECK(sameBits(dm::cbrt(-zero), -zero));
  CHECK(sameBits(dm::cbrt(inf), inf));
  CHECK(sameBits(dm::cbrt(-inf), -inf));
  CHECK(std::isnan(dm::cbrt(nan)));
  CHECK(std::isnan(dm::cbrt(-nan)));
  CHECK(dm::cbrt(T(-8)) == T(-2));
  CHECK(dm::cbrt(T(27)) == T(3));
  CHECK(dm::cbrt(T(1)) == T(1));
  CHECK(dm::cbrt(T(-1)) == T(-1));
  CHECK(dm::cbrt(T(0.125)) == T(0.5));
  CHECK(dm::cbrt(T(1000)) == T(10));
  CHECK(dm::cbrt(T(-3375)) == T(-15));
  for (int k = (L::min_exponent - L::digits) / 3; k <= (L::max_exponent - 1) / 3; ++k) {
    // Every power 2^(3k), subnormals included, has an exact cube root.
    T x = std::ldexp(T(1), 3 * k);
    CHECK(dm::cbrt(x) == std::ldexp(T(1), k));
    CHECK(dm::cbrt(-x) == -std::ldexp(T(1), k));
  }
  CHECK(dm::cbrt(sub) > 0);
  CHECK(dm::cbrt(-sub) < 0);

  // hypot: inf beats NaN in either position and sign; hypot(x, +-0) = |x|.
  for (T i : {inf, -inf}) {
    CHECK(sameBits(dm::hypot(i, nan), inf));
    CHECK(sameBits(dm::hypot(nan, i), inf));
    CHECK(sameBits(dm::hypot(i, T(1)), inf));
    CHECK(sameBits(dm::hypot(T(-1), i), inf));
    CHECK(sameBits(dm::hypot(i, i), inf));
  }
  CHECK(std::isnan(dm::hypot(nan, T(1))));
  CHECK(std::isnan(dm::hypot(T(1), nan)));
  CHECK(std::isnan(dm::hypot(nan, nan)));
  for (T x : {T(0), -T(0), T(1), T(-1.5), sub, -sub, big, -big, L::min()}) {
    CHECK(sameBits(dm::hypot(x, zero), std::fabs(x)));
    CHECK(sameBits(dm::hypot(x, -zero), std::fabs(x)));
    CHECK(sameBits(dm::hypot(zero, x), std::fabs(x)));
    CHECK(sameBits(dm::hypot(-zero, x), std::fabs(x)));
  }
  CHECK(dm::hypot(T(3), T(4)) == T(5));
  CHECK(dm::hypot(T(-5), T(12)) == T(13));
  // No spurious overflow or underflow.
  CHECK(dm::hypot(big / 2, big / 2) < inf);
  CHECK(dm::hypot(big, big) == inf);
  CHECK(dm::hypot(std::ldexp(T(3), L::max_exponent - 3), std::ldexp(T(4), L::max_exponent - 3)) ==
        std::ldexp(T(5), L::max_exponent - 3));
  CHECK(dm::hypot(T(3) * sub, T(4) * sub) == T(5) * sub);
  CHECK(dm::hypot(sub, sub) == sub);  // sqrt(2) * denorm_min rounds to denorm_min
  CHECK(dm::hypot(L::min(), L::min()) > L::min());

  // fmod: Annex F table, sign of x, exactness at the ends of the range.
  for (T y : {T(1), T(-1), T(0.3), sub, big, inf, -inf}) {
    CHECK(sameBits(dm::fmod(zero, y), zero));
    CHECK(sameBits(dm::fmod(-zero, y), -zero));
  }
  for (T x : {T(0), T(1), T(-1), sub, big, inf, -inf}) {
    CHECK(std::isnan(dm::fmod(x, zero)));
    CHECK(std::isnan(dm::fmod(x, -zero)));
  }
  for (T y : {T(1), T(-2), sub, big, inf}) {
    CHECK(std::isnan(dm::fmod(inf, y)));
    CHECK(std::isnan(dm::fmod(-inf, y)));
  }
  for (T x : {T(1), T(-2.5), sub, -sub, big, -big}) {
    CHECK(sameBits(dm::fmod(x, inf), x));
    CHECK(sameBits(dm::fmod(x, -inf), x));
  }
  CHECK(std::isnan(dm::fmod(nan, T(1))));
  CHECK(std::isnan(dm::fmod(T(1), nan)));
  CHECK(std::isnan(dm::fmod(nan, inf)));
  CHECK(std::isnan(dm::fmod(zero, nan)));
  CHECK(dm::fmod(T(5.5), T(2)) == T(1.5));
  CHECK(dm::fmod(T(-5.5), T(2)) == T(-1.5));
  CHECK(dm::fmod(T(5.5), T(-2)) == T(1.5));
  CHECK(sameBits(dm::fmod(T(-4), T(2)), -zero));  // exact multiple keeps the sign of x
  CHECK(sameBits(dm::fmod(T(6), T(-3)), zero));
  CHECK(sameBits(dm::fmod(T(-3), T(3)), -zero));
  CHECK(dm::fmod(T(1), T(3)) == T(1));
  CHECK(dm::fmod(sub, big) == sub);
  CHECK(sameBits(dm::fmod(big, sub), zero));  // max is a multiple of the smallest step
  CHECK(dm::fmod(T(3) * sub, T(2) * sub) == sub);
  CHECK(dm::fmod(big, T(3)) == std::fmod(big, T(3)));
}

}  // namespace

TEST_CASE("cbrt within 1 ulp") {
  cbrtAccuracy<float>();
  cbrtAccuracy<double>();
}

TEST_CASE("hypot within 1 ulp, no spurious overflow or underflow") {
  hypotAccuracy<float>();
  hypotAccuracy<double>();
}

TEST_CASE("fmod is exact") {
  fmodExactness<float>();
  fmodExactness<double>();
}

TEST_CASE("cbrt, hypot, fmod special cases (Annex F)") {
  specialCases<float>();
  specialCases<double>();
}
