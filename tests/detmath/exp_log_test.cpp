// exp, exp2, expm1, log, log2, log10, log1p, pow, sinh, cosh, tanh in float and double:
// 1,000,000 random inputs per function and precision against a 256-bit MPFR reference
// (half over the whole exponent range, half over the useful range), the overflow and
// underflow thresholds swept ulp by ulp, the exact cases, and every special case of
// C23 Annex F including the whole pow table. LOAM_DETMATH_TEST_N overrides the input
// count (for quick local runs).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "detmath/detmath.h"
#include "tests/detmath/ulp_check.h"

namespace dm = loam::dm;
using loam::dm::test::checkBinary;
using loam::dm::test::checkUnary;
using loam::dm::test::InputGen;
using loam::dm::test::MpfrUnary;
using loam::dm::test::note;
using loam::dm::test::UlpReport;

namespace {

int inputCount() {
  const char* s = std::getenv("LOAM_DETMATH_TEST_N");
  return s ? std::atoi(s) : 1000000;
}

/// A run's report plus how many results were not the correctly rounded value (the
/// harness reports 0 ulp for a correctly rounded result, so maxUlp alone cannot tell
/// "all correctly rounded" from "errors below 0.5").
struct Result {
  UlpReport report;
  std::uint64_t notCorrectlyRounded = 0;
  void add(double err, double x, double y = 0.0) {
    note(report, err, x, y);
    if (err > 0.0) ++notCorrectlyRounded;
  }
};

template <typename T>
const char* typeName() {
  return sizeof(T) == 4 ? "float" : "double";
}

/// Magnitude 2^e with e uniform in [lo, hi] and a random mantissa and sign: exercises
/// the tiny-argument paths that uniform sampling never reaches.
template <typename T>
T logUniform(InputGen& g, int lo, int hi, bool bothSigns = true) {
  int e = lo + static_cast<int>(g.next() % static_cast<std::uint64_t>(hi - lo + 1));
  T v = std::ldexp(g.uniform<T>(T(1), T(2)), e);
  return (bothSigns && (g.next() & 1)) ? -v : v;
}

/// `count` inputs per round robin over `gens`, all checked against MPFR.
template <typename T, typename F, typename... Gens>
Result sweep(F fn, MpfrUnary ref, std::uint64_t seed, const std::vector<T>& edges, Gens... gens) {
  InputGen g(seed);
  Result r;
  for (T x : edges) r.add(checkUnary<T>(fn, ref, x), x);
  // Thresholds and exact points: 64 ulps either side of every edge.
  for (T x : edges) {
    if (!std::isfinite(x)) continue;
    T lo = x, hi = x;
    for (int i = 0; i < 64; ++i) {
      lo = std::nextafter(lo, -std::numeric_limits<T>::infinity());
      hi = std::nextafter(hi, std::numeric_limits<T>::infinity());
      r.add(checkUnary<T>(fn, ref, lo), lo);
      r.add(checkUnary<T>(fn, ref, hi), hi);
    }
  }
  constexpr int kGens = sizeof...(Gens);
  auto pick = [&](int which) {
    T v{};
    int k = 0;
    ((k++ == which ? (v = gens(g), 0) : 0), ...);
    return v;
  };
  int n = inputCount();
  for (int i = 0; i < n; ++i) {
    T x = pick(i % kGens);
    r.add(checkUnary<T>(fn, ref, x), x);
  }
  return r;
}

template <typename T>
void finishReport(const char* name, const Result& res) {
  const UlpReport& r = res.report;
  loam::dm::test::printReport(name, typeName<T>(), r);
  std::printf("    %s %s: %llu of %llu results not correctly rounded\n", name, typeName<T>(),
              static_cast<unsigned long long>(res.notCorrectlyRounded), static_cast<unsigned long long>(r.count));
  CHECK_MESSAGE(r.maxUlp < 1.0, name, " ", typeName<T>(), " worst x=", r.worstX, " y=", r.worstY);
  CHECK(r.specialMismatches == 0);
}

template <typename T>
bool same(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

constexpr double kInfD = std::numeric_limits<double>::infinity();

}  // namespace

// ---------------------------------------------------------------------------------

TEST_CASE("exp family accuracy") {
  using LF = std::numeric_limits<float>;
  using LD = std::numeric_limits<double>;
  auto anyF = [](InputGen& g) { return g.anyFinite<float>(); };
  auto anyD = [](InputGen& g) { return g.anyFinite<double>(); };
  auto tinyF = [](InputGen& g) { return logUniform<float>(g, -30, 0); };
  auto tinyD = [](InputGen& g) { return logUniform<double>(g, -60, 0); };

  const std::vector<float> expEdgesF = {0.0f, -0.0f, 88.72283f, 88.7228394f, -87.33654f, -103.27893f, -103.97208f,
                                        -104.0f, 1.0f, -1.0f, LF::denorm_min(), LF::max(), -LF::max()};
  const std::vector<double> expEdgesD = {0.0,   709.782712893384, -708.3964185322641, -744.4400719213812,
                                         -745.1332191019411, -745.1332191019412, 1.0, -1.0, 0x1p-54, -0x1p-54,
                                         LD::denorm_min(), LD::max(), -LD::max(), 512.0, -512.0};
  finishReport<float>("exp", sweep<float>([](float x) { return dm::exp(x); }, mpfr_exp, 0xE1, expEdgesF, anyF,
                                           [](InputGen& g) { return g.uniform<float>(-104.0f, 89.0f); }, tinyF));
  finishReport<double>("exp", sweep<double>([](double x) { return dm::exp(x); }, mpfr_exp, 0xE2, expEdgesD, anyD,
                                            [](InputGen& g) { return g.uniform<double>(-750.0, 710.0); }, tinyD));

  const std::vector<float> exp2EdgesF = {128.0f, 127.99999f, -126.0f, -149.0f, -150.0f, -149.5f, 0.0f, 1.0f, -1.0f};
  const std::vector<double> exp2EdgesD = {1024.0, -1022.0, -1074.0, -1075.0, -1074.5, 0.0, 1.0, -1.0, 512.0, -512.0};
  finishReport<float>("exp2", sweep<float>([](float x) { return dm::exp2(x); }, mpfr_exp2, 0xE3, exp2EdgesF, anyF,
                                            [](InputGen& g) { return g.uniform<float>(-151.0f, 129.0f); }, tinyF));
  finishReport<double>("exp2",
                       sweep<double>([](double x) { return dm::exp2(x); }, mpfr_exp2, 0xE4, exp2EdgesD, anyD,
                                     [](InputGen& g) { return g.uniform<double>(-1080.0, 1025.0); }, tinyD));

  const std::vector<float> expm1EdgesF = {0.0f, -0.0f, 88.72283f, -17.0f, -18.0f, 0x1p-24f, -0x1p-24f,
                                          0.0027f, -0.0027f, LF::denorm_min()};
  const std::vector<double> expm1EdgesD = {0.0,  709.782712893384, -38.0, -37.42994775023705, 0x1p-54, -0x1p-54,
                                           0x1p-5, -0x1p-5, 32.0, -32.0, 700.0, LD::denorm_min()};
  finishReport<float>("expm1", sweep<float>([](float x) { return dm::expm1(x); }, mpfr_expm1, 0xE5, expm1EdgesF,
                                             anyF, [](InputGen& g) { return g.uniform<float>(-18.0f, 89.0f); }, tinyF));
  finishReport<double>("expm1",
                       sweep<double>([](double x) { return dm::expm1(x); }, mpfr_expm1, 0xE6, expm1EdgesD, anyD,
                                     [](InputGen& g) { return g.uniform<double>(-40.0, 710.0); }, tinyD));
}

TEST_CASE("log family accuracy") {
  using LF = std::numeric_limits<float>;
  using LD = std::numeric_limits<double>;
  // Positive inputs over the whole range, inputs near 1 (where log is small), and
  // [0.5, 2] (every table bin).
  auto anyPosF = [](InputGen& g) { return std::fabs(g.anyFinite<float>()); };
  auto anyPosD = [](InputGen& g) { return std::fabs(g.anyFinite<double>()); };
  auto near1F = [](InputGen& g) { return 1.0f + logUniform<float>(g, -24, -4); };
  auto near1D = [](InputGen& g) { return 1.0 + logUniform<double>(g, -53, -4); };
  auto midF = [](InputGen& g) { return g.uniform<float>(0.5f, 2.0f); };
  auto midD = [](InputGen& g) { return g.uniform<double>(0.5, 2.0); };
  const std::vector<float> logEdgesF = {1.0f, 2.0f, 0.5f, 10.0f, LF::denorm_min(), LF::min(), LF::max(), 0.70703125f,
                                        1.41796875f, 0.998046875f, 1.00390625f};
  const std::vector<double> logEdgesD = {1.0,        2.0,         0.5,          10.0,           LD::denorm_min(),
                                         LD::min(),  LD::max(),   0.708984375,  1.41796875,     0.998046875,
                                         1.00390625, 1e-300,      1e300};
  finishReport<float>("log", sweep<float>([](float x) { return dm::log(x); }, mpfr_log, 0x10, logEdgesF, anyPosF,
                                           near1F, midF));
  finishReport<double>("log", sweep<double>([](double x) { return dm::log(x); }, mpfr_log, 0x11, logEdgesD, anyPosD,
                                            near1D, midD));
  finishReport<float>("log2", sweep<float>([](float x) { return dm::log2(x); }, mpfr_log2, 0x12, logEdgesF, anyPosF,
                                            near1F, midF));
  finishReport<double>("log2", sweep<double>([](double x) { return dm::log2(x); }, mpfr_log2, 0x13, logEdgesD,
                                             anyPosD, near1D, midD));
  finishReport<float>("log10", sweep<float>([](float x) { return dm::log10(x); }, mpfr_log10, 0x14, logEdgesF,
                                             anyPosF, near1F, midF));
  finishReport<double>("log10", sweep<double>([](double x) { return dm::log10(x); }, mpfr_log10, 0x15, logEdgesD,
                                              anyPosD, near1D, midD));

  const std::vector<float> log1pEdgesF = {0.0f, -0.0f, -1.0f, -0.99999994f, 0x1p-24f, -0x1p-24f, 1.0f, LF::max(),
                                          LF::denorm_min(), -0.5f, 0x1p24f};
  const std::vector<double> log1pEdgesD = {0.0,     -0.0,    -1.0, -0.9999999999999999, 0x1p-54, -0x1p-54,
                                           1.0,     LD::max(), LD::denorm_min(), -0.5, 0x1p53};
  finishReport<float>("log1p",
                      sweep<float>([](float x) { return dm::log1p(x); }, mpfr_log1p, 0x16, log1pEdgesF, anyPosF,
                                   [](InputGen& g) { return g.uniform<float>(-1.0f, 1.0f); },
                                   [](InputGen& g) { return logUniform<float>(g, -40, 0); }));
  finishReport<double>("log1p",
                       sweep<double>([](double x) { return dm::log1p(x); }, mpfr_log1p, 0x17, log1pEdgesD, anyPosD,
                                     [](InputGen& g) { return g.uniform<double>(-1.0, 1.0); },
                                     [](InputGen& g) { return logUniform<double>(g, -80, 0); }));
}

TEST_CASE("hyperbolic accuracy") {
  auto anyF = [](InputGen& g) { return g.anyFinite<float>(); };
  auto anyD = [](InputGen& g) { return g.anyFinite<double>(); };
  auto tinyF = [](InputGen& g) { return logUniform<float>(g, -30, 3); };
  auto tinyD = [](InputGen& g) { return logUniform<double>(g, -60, 4); };
  const std::vector<float> edgesF = {0.0f, -0.0f, 89.41599f, -89.41599f, 9.0f, 9.125f, -9.125f, 0x1p-12f};
  const std::vector<double> edgesD = {0.0,  -0.0,  710.4758600739439, -710.4758600739439, 22.0, -22.0,
                                      0x1p-26, 0x1p-27, 0x1p-5, -0x1p-5, 19.06, 711.0};
  finishReport<float>("sinh", sweep<float>([](float x) { return dm::sinh(x); }, mpfr_sinh, 0x20, edgesF, anyF,
                                            [](InputGen& g) { return g.uniform<float>(-90.0f, 90.0f); }, tinyF));
  finishReport<double>("sinh", sweep<double>([](double x) { return dm::sinh(x); }, mpfr_sinh, 0x21, edgesD, anyD,
                                             [](InputGen& g) { return g.uniform<double>(-712.0, 712.0); }, tinyD));
  finishReport<float>("cosh", sweep<float>([](float x) { return dm::cosh(x); }, mpfr_cosh, 0x22, edgesF, anyF,
                                            [](InputGen& g) { return g.uniform<float>(-90.0f, 90.0f); }, tinyF));
  finishReport<double>("cosh", sweep<double>([](double x) { return dm::cosh(x); }, mpfr_cosh, 0x23, edgesD, anyD,
                                             [](InputGen& g) { return g.uniform<double>(-712.0, 712.0); }, tinyD));
  finishReport<float>("tanh", sweep<float>([](float x) { return dm::tanh(x); }, mpfr_tanh, 0x24, edgesF, anyF,
                                            [](InputGen& g) { return g.uniform<float>(-10.0f, 10.0f); }, tinyF));
  finishReport<double>("tanh", sweep<double>([](double x) { return dm::tanh(x); }, mpfr_tanh, 0x25, edgesD, anyD,
                                             [](InputGen& g) { return g.uniform<double>(-25.0, 25.0); }, tinyD));
}

namespace {

/// pow pairs: whole range, bases near 1 with large exponents, negative bases with
/// integer exponents, results near overflow and underflow, small integer exponents.
template <typename T>
void powAccuracy(std::uint64_t seed) {
  InputGen g(seed);
  Result r;
  // ln of the largest finite and of half the smallest subnormal.
  const double hiLn = sizeof(T) == 4 ? 88.72 : 709.78;
  const double loLn = sizeof(T) == 4 ? -103.97 : -745.13;
  auto fn = [](T x, T y) { return dm::pow(x, y); };
  auto check = [&](T x, T y) { r.add(checkBinary<T>(fn, mpfr_pow, x, y), x, y); };
  /// y with y ln(x) = target (rounded to T), for x > 0, x != 1.
  auto yFor = [](T x, double target) { return static_cast<T>(target / std::log(static_cast<double>(x))); };
  int n = inputCount();
  for (int i = 0; i < n; ++i) {
    switch (i % 6) {
      case 0: {  // any finite pair
        check(g.anyFinite<T>(), g.anyFinite<T>());
        break;
      }
      case 1: {  // any positive base, exponent putting the result anywhere in range
        T x = std::fabs(g.anyFinite<T>());
        if (x == T(1) || x == T(0)) x = T(3);
        check(x, yFor(x, g.uniform<double>(loLn - 2, hiLn + 2)));
        break;
      }
      case 2: {  // bases within 2^-k of 1 with large exponents
        int bits = sizeof(T) == 4 ? 24 : 53;
        T x = T(1) + logUniform<T>(g, -bits, -1);
        if (x == T(1)) x = std::nextafter(T(1), T(2));
        check(x, yFor(x, g.uniform<double>(loLn, hiLn)));
        break;
      }
      case 3: {  // negative bases with integer exponents
        T x = -std::ldexp(g.uniform<T>(T(1), T(2)), static_cast<int>(g.next() % 64) - 32);
        double lim = std::floor(std::min(hiLn, -loLn) / std::log(std::fabs(static_cast<double>(x))));
        double yy = std::floor(g.uniform<double>(-std::fabs(lim) - 2, std::fabs(lim) + 2));
        check(x, static_cast<T>(yy));
        break;
      }
      case 4: {  // results near overflow and underflow, including subnormal results
        T x = std::fabs(g.anyFinite<T>());
        if (x == T(1) || x == T(0)) x = T(0.5);
        double target = (g.next() & 1) ? hiLn - g.uniform<double>(0, 2) : loLn + g.uniform<double>(-1, 14);
        check(x, yFor(x, target));
        break;
      }
      default: {  // small integer exponents and halves
        T x = g.uniform<T>(T(-20), T(20));
        T y = static_cast<T>(static_cast<int>(g.next() % 41) - 20) * ((g.next() & 1) ? T(1) : T(0.5));
        check(x, y);
        break;
      }
    }
  }
  finishReport<T>("pow", r);
}

/// Annex F F.10.4.4, every row, for float and double.
template <typename T>
void powAnnexF() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity(), nan = L::quiet_NaN(), z = T(0);
  auto p = [](T x, T y) { return dm::pow(x, y); };
  // pow(+-0, y), y < 0 odd integer: +-inf.
  CHECK(same(p(z, T(-3)), inf));
  CHECK(same(p(-z, T(-3)), -inf));
  CHECK(same(p(-z, T(-1)), -inf));
  // pow(+-0, -inf): +inf.
  CHECK(same(p(z, -inf), inf));
  CHECK(same(p(-z, -inf), inf));
  // pow(+-0, y), y < 0 finite, not an odd integer: +inf.
  CHECK(same(p(z, T(-2)), inf));
  CHECK(same(p(-z, T(-2)), inf));
  CHECK(same(p(-z, T(-0.5)), inf));
  CHECK(same(p(-z, -L::max()), inf));
  CHECK(same(p(-z, -L::denorm_min()), inf));
  // pow(+-0, y), y > 0 odd integer: +-0.
  CHECK(same(p(z, T(3)), z));
  CHECK(same(p(-z, T(3)), -z));
  CHECK(same(p(-z, T(1)), -z));
  // pow(+-0, y), y > 0 not an odd integer: +0 (including +inf).
  CHECK(same(p(-z, T(2)), z));
  CHECK(same(p(-z, T(0.5)), z));
  CHECK(same(p(-z, inf), z));
  CHECK(same(p(z, inf), z));
  CHECK(same(p(-z, L::max()), z));
  // pow(-1, +-inf) = 1.
  CHECK(same(p(T(-1), inf), T(1)));
  CHECK(same(p(T(-1), -inf), T(1)));
  // pow(+1, y) = 1 for any y, even NaN.
  for (T y : {nan, -nan, inf, -inf, z, -z, T(3), T(-0.5), L::max(), L::denorm_min()}) CHECK(same(p(T(1), y), T(1)));
  // pow(x, +-0) = 1 for any x, even NaN.
  for (T x : {nan, -nan, inf, -inf, z, -z, T(-3), T(-0.5), L::max(), L::denorm_min()}) {
    CHECK(same(p(x, z), T(1)));
    CHECK(same(p(x, -z), T(1)));
  }
  // pow(x, y) = NaN for finite x < 0 and finite non-integer y.
  CHECK(std::isnan(p(T(-2), T(0.5))));
  CHECK(std::isnan(p(T(-1), T(1.5))));
  CHECK(std::isnan(p(-L::denorm_min(), T(-0.5))));
  CHECK(std::isnan(p(-L::max(), T(2.5))));
  // pow(x, -inf): +inf for |x| < 1, +0 for |x| > 1.
  CHECK(same(p(T(0.5), -inf), inf));
  CHECK(same(p(T(-0.5), -inf), inf));
  CHECK(same(p(L::denorm_min(), -inf), inf));
  CHECK(same(p(T(2), -inf), z));
  CHECK(same(p(T(-2), -inf), z));
  CHECK(same(p(-inf, -inf), z));
  // pow(x, +inf): +0 for |x| < 1, +inf for |x| > 1.
  CHECK(same(p(T(0.5), inf), z));
  CHECK(same(p(T(-0.5), inf), z));
  CHECK(same(p(T(2), inf), inf));
  CHECK(same(p(T(-2), inf), inf));
  CHECK(same(p(inf, inf), inf));
  CHECK(same(p(-inf, inf), inf));
  CHECK(same(p(std::nextafter(T(1), T(2)), inf), inf));
  CHECK(same(p(std::nextafter(T(1), T(0)), inf), z));
  // pow(-inf, y): -0 (y odd integer < 0), +0 (y < 0 otherwise), -inf (y odd integer > 0),
  // +inf (y > 0 otherwise).
  CHECK(same(p(-inf, T(-3)), -z));
  CHECK(same(p(-inf, T(-1)), -z));
  CHECK(same(p(-inf, T(-2)), z));
  CHECK(same(p(-inf, T(-0.5)), z));
  CHECK(same(p(-inf, T(3)), -inf));
  CHECK(same(p(-inf, T(1)), -inf));
  CHECK(same(p(-inf, T(2)), inf));
  CHECK(same(p(-inf, T(0.5)), inf));
  // pow(+inf, y): +0 for y < 0, +inf for y > 0.
  CHECK(same(p(inf, T(-1)), z));
  CHECK(same(p(inf, -L::denorm_min()), z));
  CHECK(same(p(inf, T(0.5)), inf));
  CHECK(same(p(inf, L::denorm_min()), inf));
  // NaN otherwise.
  CHECK(std::isnan(p(nan, T(1))));
  CHECK(std::isnan(p(T(2), nan)));
  CHECK(std::isnan(p(nan, nan)));
  CHECK(std::isnan(p(T(-1), nan)));
  CHECK(std::isnan(p(nan, inf)));
  // Negative base with an odd integer exponent keeps the sign; huge |y| is even.
  CHECK(same(p(T(-2), T(3)), T(-8)));
  CHECK(same(p(T(-2), T(-3)), T(-0.125)));
  CHECK(same(p(T(-0.5), T(3)), T(-0.125)));
  CHECK(same(p(T(-1), T(5)), T(-1)));
  CHECK(same(p(T(-1), T(-5)), T(-1)));
  CHECK(same(p(T(-1), T(4)), T(1)));
  const T kBigEven = sizeof(T) == 4 ? T(0x1p24) : T(0x1p53);
  const T kBigOdd = sizeof(T) == 4 ? T(0x1p24) - T(1) : T(0x1p53) - T(1);
  CHECK(same(p(T(-1), kBigEven), T(1)));
  CHECK(same(p(T(-1), kBigOdd), T(-1)));
  CHECK(same(p(T(-1), L::max()), T(1)));
  CHECK(same(p(T(-1), -L::max()), T(1)));
  CHECK(same(p(T(-2), L::max()), inf));
  CHECK(same(p(T(-2), -L::max()), z));
  CHECK(same(p(T(-0.5), L::max()), z));
  CHECK(same(p(-z, kBigOdd), -z));
  CHECK(same(p(-z, -kBigOdd), -inf));
  CHECK(same(p(-z, kBigEven), z));
  CHECK(same(p(-inf, kBigOdd), -inf));
  // Overflow and underflow keep the sign of an odd power of a negative base.
  CHECK(same(p(T(-10), T(sizeof(T) == 4 ? 39 : 309)), -inf));
  CHECK(same(p(T(-10), T(sizeof(T) == 4 ? -47 : -325)), -z));
  CHECK(same(p(T(-10), T(sizeof(T) == 4 ? 40 : 310)), inf));
  CHECK(same(p(T(-10), T(sizeof(T) == 4 ? -48 : -326)), z));
}

}  // namespace

TEST_CASE("pow accuracy") {
  powAccuracy<float>(0x30);
  powAccuracy<double>(0x31);
}

TEST_CASE("pow: every special case of Annex F") {
  powAnnexF<float>();
  powAnnexF<double>();
}

TEST_CASE("pow: exact cases") {
  for (int n = -149; n <= 127; ++n) CHECK(dm::pow(2.0f, static_cast<float>(n)) == std::ldexp(1.0f, n));
  for (int n = -1074; n <= 1023; ++n) CHECK(dm::pow(2.0, static_cast<double>(n)) == std::ldexp(1.0, n));
  CHECK(dm::pow(2.0f, -150.0f) == 0.0f);  // exactly half the smallest subnormal: ties to even
  CHECK(dm::pow(2.0, -1075.0) == 0.0);
  CHECK(dm::pow(2.0f, 128.0f) == std::numeric_limits<float>::infinity());
  CHECK(dm::pow(2.0, 1024.0) == kInfD);
  float p10f = 1.0f;
  for (int n = 0; n <= 10; ++n, p10f *= 10.0f) CHECK(dm::pow(10.0f, static_cast<float>(n)) == p10f);
  double p10 = 1.0;
  for (int n = 0; n <= 22; ++n, p10 *= 10.0) CHECK(dm::pow(10.0, static_cast<double>(n)) == p10);
  CHECK(dm::pow(3.0, 33.0) == 5559060566555523.0);
  CHECK(dm::pow(-3.0, 33.0) == -5559060566555523.0);
  CHECK(dm::pow(3.0f, 15.0f) == 14348907.0f);
  CHECK(dm::pow(0.5, 1074.0) == std::numeric_limits<double>::denorm_min());
  CHECK(dm::pow(4.0, 0.5) == 2.0);
  CHECK(dm::pow(0.25f, -1.5f) == 8.0f);
  CHECK(dm::pow(7.0, 1.0) == 7.0);
  CHECK(dm::pow(7.0, -1.0) == 1.0 / 7.0);
  CHECK(dm::pow(0.1f, 1.0f) == 0.1f);
}

TEST_CASE("exp and log families: special cases and exact results") {
  using LF = std::numeric_limits<float>;
  using LD = std::numeric_limits<double>;
  const float infF = LF::infinity(), nanF = LF::quiet_NaN();
  const double inf = LD::infinity(), nan = LD::quiet_NaN();
  // exp, exp2, expm1.
  CHECK(same(dm::exp(0.0f), 1.0f));
  CHECK(same(dm::exp(-0.0f), 1.0f));
  CHECK(same(dm::exp(0.0), 1.0));
  CHECK(same(dm::exp(-0.0), 1.0));
  CHECK(same(dm::exp(infF), infF));
  CHECK(same(dm::exp(-infF), 0.0f));
  CHECK(same(dm::exp(inf), inf));
  CHECK(same(dm::exp(-inf), 0.0));
  CHECK(same(dm::exp(1000.0f), infF));
  CHECK(same(dm::exp(-1000.0f), 0.0f));
  CHECK(same(dm::exp(710.0), inf));
  CHECK(same(dm::exp(-746.0), 0.0));
  CHECK(dm::exp(709.78) < inf);
  CHECK(dm::exp(-745.0) == LD::denorm_min());
  CHECK(same(dm::exp2(infF), infF));
  CHECK(same(dm::exp2(-infF), 0.0f));
  CHECK(same(dm::exp2(inf), inf));
  CHECK(same(dm::exp2(-inf), 0.0));
  CHECK(same(dm::expm1(0.0f), 0.0f));
  CHECK(same(dm::expm1(-0.0f), -0.0f));
  CHECK(same(dm::expm1(0.0), 0.0));
  CHECK(same(dm::expm1(-0.0), -0.0));
  CHECK(same(dm::expm1(-infF), -1.0f));
  CHECK(same(dm::expm1(-inf), -1.0));
  CHECK(same(dm::expm1(infF), infF));
  CHECK(same(dm::expm1(inf), inf));
  CHECK(same(dm::expm1(LD::denorm_min()), LD::denorm_min()));
  CHECK(same(dm::expm1(-LF::denorm_min()), -LF::denorm_min()));
  for (int n = -149; n <= 127; ++n) CHECK(dm::exp2(static_cast<float>(n)) == std::ldexp(1.0f, n));
  for (int n = -1074; n <= 1023; ++n) CHECK(dm::exp2(static_cast<double>(n)) == std::ldexp(1.0, n));
  CHECK(same(dm::exp2(128.0f), infF));
  CHECK(same(dm::exp2(-150.0f), 0.0f));
  CHECK(same(dm::exp2(1024.0), inf));
  CHECK(same(dm::exp2(-1075.0), 0.0));
  // log, log2, log10, log1p.
  CHECK(same(dm::log(1.0f), 0.0f));
  CHECK(same(dm::log(1.0), 0.0));
  CHECK(same(dm::log2(1.0), 0.0));
  CHECK(same(dm::log10(1.0f), 0.0f));
  for (float z : {0.0f, -0.0f}) {
    CHECK(same(dm::log(z), -infF));
    CHECK(same(dm::log2(z), -infF));
    CHECK(same(dm::log10(z), -infF));
    CHECK(same(dm::log1p(z), z));
  }
  for (double z : {0.0, -0.0}) {
    CHECK(same(dm::log(z), -inf));
    CHECK(same(dm::log2(z), -inf));
    CHECK(same(dm::log10(z), -inf));
    CHECK(same(dm::log1p(z), z));
  }
  for (float v : {-1.0f, -LF::denorm_min(), -infF, -LF::max()}) {
    CHECK(std::isnan(dm::log(v)));
    CHECK(std::isnan(dm::log2(v)));
    CHECK(std::isnan(dm::log10(v)));
  }
  for (double v : {-1.0, -LD::denorm_min(), -inf, -LD::max()}) {
    CHECK(std::isnan(dm::log(v)));
    CHECK(std::isnan(dm::log2(v)));
    CHECK(std::isnan(dm::log10(v)));
  }
  CHECK(same(dm::log(infF), infF));
  CHECK(same(dm::log(inf), inf));
  CHECK(same(dm::log2(inf), inf));
  CHECK(same(dm::log10(infF), infF));
  CHECK(same(dm::log1p(-1.0f), -infF));
  CHECK(same(dm::log1p(-1.0), -inf));
  CHECK(std::isnan(dm::log1p(-1.5f)));
  CHECK(std::isnan(dm::log1p(-2.0)));
  CHECK(std::isnan(dm::log1p(-inf)));
  CHECK(same(dm::log1p(infF), infF));
  CHECK(same(dm::log1p(inf), inf));
  for (int n = -149; n <= 127; ++n) CHECK(dm::log2(std::ldexp(1.0f, n)) == static_cast<float>(n));
  for (int n = -1074; n <= 1023; ++n) CHECK(dm::log2(std::ldexp(1.0, n)) == static_cast<double>(n));
  float p10f = 1.0f;
  for (int n = 0; n <= 10; ++n, p10f *= 10.0f) CHECK(dm::log10(p10f) == static_cast<float>(n));
  double p10 = 1.0;
  for (int n = 0; n <= 22; ++n, p10 *= 10.0) CHECK(dm::log10(p10) == static_cast<double>(n));
  // NaN in, NaN out.
  CHECK(std::isnan(dm::exp(nanF)));
  CHECK(std::isnan(dm::exp(nan)));
  CHECK(std::isnan(dm::exp2(nanF)));
  CHECK(std::isnan(dm::exp2(nan)));
  CHECK(std::isnan(dm::expm1(nanF)));
  CHECK(std::isnan(dm::expm1(nan)));
  CHECK(std::isnan(dm::log(nanF)));
  CHECK(std::isnan(dm::log(nan)));
  CHECK(std::isnan(dm::log2(nanF)));
  CHECK(std::isnan(dm::log2(nan)));
  CHECK(std::isnan(dm::log10(nanF)));
  CHECK(std::isnan(dm::log10(nan)));
  CHECK(std::isnan(dm::log1p(nanF)));
  CHECK(std::isnan(dm::log1p(nan)));
}

TEST_CASE("hyperbolic: special cases") {
  using LF = std::numeric_limits<float>;
  using LD = std::numeric_limits<double>;
  const float infF = LF::infinity();
  const double inf = LD::infinity();
  for (float z : {0.0f, -0.0f}) {
    CHECK(same(dm::sinh(z), z));
    CHECK(same(dm::tanh(z), z));
    CHECK(same(dm::cosh(z), 1.0f));
  }
  for (double z : {0.0, -0.0}) {
    CHECK(same(dm::sinh(z), z));
    CHECK(same(dm::tanh(z), z));
    CHECK(same(dm::cosh(z), 1.0));
  }
  CHECK(same(dm::sinh(infF), infF));
  CHECK(same(dm::sinh(-infF), -infF));
  CHECK(same(dm::sinh(inf), inf));
  CHECK(same(dm::sinh(-inf), -inf));
  CHECK(same(dm::cosh(infF), infF));
  CHECK(same(dm::cosh(-infF), infF));
  CHECK(same(dm::cosh(inf), inf));
  CHECK(same(dm::cosh(-inf), inf));
  CHECK(same(dm::tanh(infF), 1.0f));
  CHECK(same(dm::tanh(-infF), -1.0f));
  CHECK(same(dm::tanh(inf), 1.0));
  CHECK(same(dm::tanh(-inf), -1.0));
  CHECK(same(dm::sinh(-800.0), -inf));
  CHECK(same(dm::cosh(-800.0), inf));
  CHECK(same(dm::sinh(-100.0f), -infF));
  CHECK(same(dm::sinh(LD::denorm_min()), LD::denorm_min()));
  CHECK(same(dm::tanh(-LF::denorm_min()), -LF::denorm_min()));
  CHECK(std::isnan(dm::sinh(LF::quiet_NaN())));
  CHECK(std::isnan(dm::cosh(LF::quiet_NaN())));
  CHECK(std::isnan(dm::tanh(LF::quiet_NaN())));
  CHECK(std::isnan(dm::sinh(LD::quiet_NaN())));
  CHECK(std::isnan(dm::cosh(LD::quiet_NaN())));
  CHECK(std::isnan(dm::tanh(LD::quiet_NaN())));
}
