// sin, cos, tan, sincos, asin, acos, atan, atan2 (float and double) against a 256-bit
// MPFR reference: 1,000,000 inputs per function and format (half random bit patterns
// over the whole finite range, half in the useful range), plus the special cases of
// C23 Annex F, huge arguments and arguments next to multiples of pi/2.
// LOAM_TRIG_N overrides the input count (for quick runs while developing).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

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

int inputCount() {
  const char* s = std::getenv("LOAM_TRIG_N");
  return s ? std::atoi(s) : 1000000;
}

template <typename T>
const char* typeName() {
  return sizeof(T) == 4 ? "float" : "double";
}

/// Same bits, NaNs included (sincos must match sin and cos exactly).
template <typename T>
bool sameBits(T a, T b) {
  if constexpr (sizeof(T) == 4) {
    return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
  } else {
    return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
  }
}

/// Arguments next to multiples of pi/2: the nearest value to k pi/2 and its neighbours,
/// for small k and for k spread up to the Cody-Waite limit and beyond.
template <typename T>
std::vector<T> nearPio2Multiples() {
  std::vector<T> v;
  mpfr_t p, t;
  mpfr_inits2(400, p, t, static_cast<mpfr_ptr>(nullptr));
  mpfr_const_pi(p, MPFR_RNDN);
  mpfr_div_2ui(p, p, 1, MPFR_RNDN);
  auto add = [&](double k) {
    mpfr_mul_d(t, p, k, MPFR_RNDN);
    T x = sizeof(T) == 4 ? static_cast<T>(mpfr_get_flt(t, MPFR_RNDN)) : static_cast<T>(mpfr_get_d(t, MPFR_RNDN));
    T lo = x, hi = x;
    for (int i = 0; i < 3; ++i) {
      lo = std::nextafter(lo, T(0));
      hi = std::nextafter(hi, std::numeric_limits<T>::infinity());
    }
    for (T y = lo; y <= hi; y = std::nextafter(y, std::numeric_limits<T>::infinity())) {
      v.push_back(y);
      v.push_back(-y);
    }
  };
  for (int k = 1; k <= 200; ++k) add(k);
  for (double k = 201; k < 1e25; k *= 1.37) add(std::floor(k));
  mpfr_clears(p, t, static_cast<mpfr_ptr>(nullptr));
  return v;
}

/// Huge and awkward arguments for sin/cos/tan, including the closest double to a
/// multiple of pi/2 (6381956970095103 * 2^797, Kahan and McDonald).
template <typename T>
std::vector<T> hardArguments() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {L::max(), -L::max(), L::min(), L::denorm_min(), T(1e30), T(-1e30), T(1e38), T(0x1p19),
                      T(0x1p20), T(0x1p21), T(0x1p24), T(0x1p60), T(0x1p64), T(0x1p100), T(0x1p127), T(3.0e6),
                      T(22.0), T(355.0), T(103993.0), T(0.78539816), T(0.7853982), T(1e-10), T(0.5)};
  // Every binade boundary and its neighbours.
  for (int e = -20; e < L::max_exponent; ++e) {
    T x = std::ldexp(T(1), e);
    v.push_back(x);
    v.push_back(std::nextafter(x, T(0)));
    v.push_back(std::nextafter(x, L::infinity()));
  }
  if constexpr (sizeof(T) == 8) {
    v.push_back(0x1.6ac5b262ca1ffp+849);
    v.push_back(1e300);
    v.push_back(0x1p1023);
    v.push_back(1e22);
    v.push_back(0x1.fffffffffffffp+1023);
  }
  return v;
}

template <typename T, typename F>
void checkTrigFunction(const char* name, F fn, loam::dm::test::MpfrUnary ref, T usefulRange, bool reduces) {
  InputGen g(0x5EED7000u + static_cast<std::uint64_t>(name[0]) * 31u + sizeof(T));
  UlpReport r;
  using L = std::numeric_limits<T>;
  const T specials[] = {T(0),           -T(0),           T(0.5),           T(-0.5),         T(1),
                        T(-1),          L::min(),        -L::min(),        L::denorm_min(), -L::denorm_min(),
                        T(0x1p-12),     T(-0x1p-13),     T(0x1p-26),       T(0x1p-27),      L::max(),
                        -L::max(),      L::infinity(),   -L::infinity(),   L::quiet_NaN()};
  for (T x : specials) note(r, checkUnary<T>(fn, ref, x), x);
  if (reduces) {
    for (T x : hardArguments<T>()) note(r, checkUnary<T>(fn, ref, x), x);
    for (T x : nearPio2Multiples<T>()) note(r, checkUnary<T>(fn, ref, x), x);
  }
  const int n = inputCount();
  for (int i = 0; i < n; ++i) {
    T x = (i % 2) ? g.anyFinite<T>() : g.uniform<T>(-usefulRange, usefulRange);
    note(r, checkUnary<T>(fn, ref, x), x);
  }
  printReport(name, typeName<T>(), r);
  CHECK_MESSAGE(r.maxUlp < 1.0, name, " ", typeName<T>(), " worst at ", r.worstX);
  CHECK(r.specialMismatches == 0);
}

template <typename T, typename F>
void checkAtan2(F fn) {
  InputGen g(0x5EED7A72u + sizeof(T));
  UlpReport r;
  using L = std::numeric_limits<T>;
  const T specials[] = {T(0),      -T(0),     T(1),         T(-1),          T(0.5),           L::min(),
                        -L::min(), L::max(),  -L::max(),    L::denorm_min(), -L::denorm_min(), L::infinity(),
                        -L::infinity(), L::quiet_NaN(), T(1e-30), T(3)};
  for (T y : specials)
    for (T x : specials) note(r, checkBinary<T>(fn, mpfr_atan2, y, x), y, x);
  const int n = inputCount();
  for (int i = 0; i < n; ++i) {
    T y, x;
    switch (i % 4) {
      case 0:
        y = g.uniform<T>(T(-10), T(10));
        x = g.uniform<T>(T(-10), T(10));
        break;
      case 1:
        y = g.anyFinite<T>();
        x = g.anyFinite<T>();
        break;
      case 2: {
        // Ratios near the table centres and the branch limits: x * 2^k * (1 + small).
        x = g.uniform<T>(T(-4), T(4));
        int k = static_cast<int>(g.next() % 140) - 70;
        y = std::ldexp(x * g.uniform<T>(T(0.9), T(1.1)), k);
        if (g.next() & 1) y = -y;
        break;
      }
      default:
        y = g.uniform<T>(T(-1), T(1));
        x = g.uniform<T>(T(-1e-3), T(1e-3));
        break;
    }
    note(r, checkBinary<T>(fn, mpfr_atan2, y, x), y, x);
  }
  printReport("atan2", typeName<T>(), r);
  CHECK_MESSAGE(r.maxUlp < 1.0, "atan2 ", typeName<T>(), " worst at ", r.worstX, ", ", r.worstY);
  CHECK(r.specialMismatches == 0);
}

template <typename T>
void checkSincosMatches() {
  InputGen g(0x5EED5C05u + sizeof(T));
  std::vector<T> xs = hardArguments<T>();
  using L = std::numeric_limits<T>;
  for (T x : {T(0), -T(0), L::infinity(), -L::infinity(), L::quiet_NaN(), L::denorm_min(), T(0x1p-26),
              std::nextafter(T(0x1p-26), T(0)), T(0x1p-27), std::nextafter(T(0x1p-27), T(0)), T(0x1p-12),
              std::nextafter(T(0x1p-12), T(0))})
    xs.push_back(x);
  for (int i = 0; i < 200000; ++i) xs.push_back((i % 2) ? g.anyFinite<T>() : g.uniform<T>(T(-100), T(100)));
  int mismatches = 0;
  for (T x : xs) {
    T s, c;
    dm::sincos(x, &s, &c);
    if (!sameBits(s, dm::sin(x)) || !sameBits(c, dm::cos(x))) ++mismatches;
    // Odd/even symmetry holds bit for bit (the reduction and kernels are symmetric).
    if (std::isfinite(x) && (!sameBits(dm::sin(-x), T(-dm::sin(x))) || !sameBits(dm::cos(-x), dm::cos(x)) ||
                           !sameBits(dm::tan(-x), T(-dm::tan(x)))))
      ++mismatches;
  }
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("sin, cos, tan are within 1 ulp") {
  checkTrigFunction<float>("sin", [](float x) { return dm::sin(x); }, mpfr_sin, 10.0f, true);
  checkTrigFunction<double>("sin", [](double x) { return dm::sin(x); }, mpfr_sin, 10.0, true);
  checkTrigFunction<float>("cos", [](float x) { return dm::cos(x); }, mpfr_cos, 10.0f, true);
  checkTrigFunction<double>("cos", [](double x) { return dm::cos(x); }, mpfr_cos, 10.0, true);
  checkTrigFunction<float>("tan", [](float x) { return dm::tan(x); }, mpfr_tan, 10.0f, true);
  checkTrigFunction<double>("tan", [](double x) { return dm::tan(x); }, mpfr_tan, 10.0, true);
}

TEST_CASE("asin, acos, atan, atan2 are within 1 ulp") {
  checkTrigFunction<float>("asin", [](float x) { return dm::asin(x); }, mpfr_asin, 1.0f, false);
  checkTrigFunction<double>("asin", [](double x) { return dm::asin(x); }, mpfr_asin, 1.0, false);
  checkTrigFunction<float>("acos", [](float x) { return dm::acos(x); }, mpfr_acos, 1.0f, false);
  checkTrigFunction<double>("acos", [](double x) { return dm::acos(x); }, mpfr_acos, 1.0, false);
  checkTrigFunction<float>("atan", [](float x) { return dm::atan(x); }, mpfr_atan, 40.0f, false);
  checkTrigFunction<double>("atan", [](double x) { return dm::atan(x); }, mpfr_atan, 40.0, false);
  checkAtan2<float>([](float y, float x) { return dm::atan2(y, x); });
  checkAtan2<double>([](double y, double x) { return dm::atan2(y, x); });
}

TEST_CASE("sincos gives the bits of sin and cos") {
  checkSincosMatches<float>();
  checkSincosMatches<double>();
}

TEST_CASE("trig special cases (C23 Annex F)") {
  constexpr float kInfF = std::numeric_limits<float>::infinity();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const float nanF = std::numeric_limits<float>::quiet_NaN();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const float pi = 0x1.921fb6p+1f, pio2 = 0x1.921fb6p+0f, pio4 = 0x1.921fb6p-1f, tpio4 = 0x1.2d97c8p+1f;
  const double piD = 0x1.921fb54442d18p+1, pio2D = 0x1.921fb54442d18p+0, pio4D = 0x1.921fb54442d18p-1,
               tpio4D = 0x1.2d97c7f3321d2p+1;

  // Signed zeros pass through the odd functions; cos(+-0) = 1; acos(1) = +0.
  CHECK(std::signbit(dm::sin(-0.0f)));
  CHECK(std::signbit(dm::sin(-0.0)));
  CHECK(!std::signbit(dm::sin(0.0)));
  CHECK(std::signbit(dm::tan(-0.0f)));
  CHECK(std::signbit(dm::tan(-0.0)));
  CHECK(std::signbit(dm::asin(-0.0f)));
  CHECK(std::signbit(dm::asin(-0.0)));
  CHECK(std::signbit(dm::atan(-0.0f)));
  CHECK(std::signbit(dm::atan(-0.0)));
  CHECK(dm::cos(-0.0f) == 1.0f);
  CHECK(dm::cos(-0.0) == 1.0);
  CHECK(dm::acos(1.0f) == 0.0f);
  CHECK(!std::signbit(dm::acos(1.0f)));
  CHECK(!std::signbit(dm::acos(1.0)));
  CHECK(dm::acos(-1.0f) == pi);
  CHECK(dm::acos(-1.0) == piD);
  CHECK(dm::asin(1.0f) == pio2);
  CHECK(dm::asin(-1.0) == -pio2D);
  CHECK(dm::acos(0.0) == pio2D);
  CHECK(dm::acos(-0.0f) == pio2);

  // Subnormals: sin x = tan x = asin x = atan x = x.
  const float dF = std::numeric_limits<float>::denorm_min();
  const double d = std::numeric_limits<double>::denorm_min();
  CHECK(dm::sin(dF) == dF);
  CHECK(dm::sin(-d) == -d);
  CHECK(dm::tan(d) == d);
  CHECK(dm::asin(-dF) == -dF);
  CHECK(dm::atan(d) == d);
  CHECK(dm::sin(0x1p-1000) == 0x1p-1000);
  CHECK(dm::cos(d) == 1.0);

  // Infinities and NaNs.
  for (float v : {kInfF, -kInfF, nanF}) {
    CHECK(std::isnan(dm::sin(v)));
    CHECK(std::isnan(dm::cos(v)));
    CHECK(std::isnan(dm::tan(v)));
    CHECK(std::isnan(dm::asin(v)));
    CHECK(std::isnan(dm::acos(v)));
  }
  for (double v : {kInf, -kInf, nan}) {
    CHECK(std::isnan(dm::sin(v)));
    CHECK(std::isnan(dm::cos(v)));
    CHECK(std::isnan(dm::tan(v)));
    CHECK(std::isnan(dm::asin(v)));
    CHECK(std::isnan(dm::acos(v)));
  }
  CHECK(std::isnan(dm::asin(1.0000001f)));
  CHECK(std::isnan(dm::acos(-1.0000000000000002)));
  CHECK(std::isnan(dm::atan(nanF)));
  CHECK(std::isnan(dm::atan(nan)));
  CHECK(dm::atan(kInfF) == pio2);
  CHECK(dm::atan(-kInf) == -pio2D);
  CHECK(dm::atan(1e300) == pio2D);
  float sF, cF;
  dm::sincos(kInfF, &sF, &cF);
  CHECK((std::isnan(sF) && std::isnan(cF)));

  // atan2: every quadrant and signed-zero case.
  struct Case {
    double y, x, expect;
  };
  const Case cases[] = {
      {0.0, 0.0, 0.0},        {-0.0, 0.0, -0.0},     {0.0, -0.0, piD},       {-0.0, -0.0, -piD},
      {0.0, 1.0, 0.0},        {-0.0, 1.0, -0.0},     {0.0, -1.0, piD},       {-0.0, -1.0, -piD},
      {0.0, kInf, 0.0},       {-0.0, kInf, -0.0},    {0.0, -kInf, piD},      {-0.0, -kInf, -piD},
      {1.0, 0.0, pio2D},      {1.0, -0.0, pio2D},    {-1.0, 0.0, -pio2D},    {-1.0, -0.0, -pio2D},
      {kInf, 1.0, pio2D},     {-kInf, -1.0, -pio2D}, {kInf, kInf, pio4D},    {-kInf, kInf, -pio4D},
      {kInf, -kInf, tpio4D},  {-kInf, -kInf, -tpio4D}, {1.0, kInf, 0.0},     {-1.0, kInf, -0.0},
      {1.0, -kInf, piD},      {-1.0, -kInf, -piD},   {1.0, 1.0, pio4D},      {-1.0, -1.0, -tpio4D},
      {1.0, -1.0, tpio4D},    {-1.0, 1.0, -pio4D},   {d, -1.0, piD},         {-0.0, 2.0, -0.0},
      {kInf, 0.0, pio2D},     {0.0, kInf, 0.0},
  };
  for (const Case& c : cases) {
    double got = dm::atan2(c.y, c.x);
    CHECK_MESSAGE(sameBits(got, c.expect), "atan2(", c.y, ", ", c.x, ") = ", got);
    float gotF = dm::atan2(static_cast<float>(c.y), static_cast<float>(c.x));
    float expectF = c.expect == piD ? pi : c.expect == -piD ? -pi : c.expect == pio2D ? pio2 : c.expect == -pio2D ? -pio2
                   : c.expect == pio4D ? pio4 : c.expect == -pio4D ? -pio4 : c.expect == tpio4D ? tpio4
                   : c.expect == -tpio4D ? -tpio4 : static_cast<float>(c.expect);
    CHECK_MESSAGE(sameBits(gotF, expectF), "atan2f(", c.y, ", ", c.x, ") = ", gotF);
  }
  CHECK(std::isnan(dm::atan2(nan, 1.0)));
  CHECK(std::isnan(dm::atan2(1.0, nan)));
  CHECK(std::isnan(dm::atan2(nanF, kInfF)));
  CHECK(std::isnan(dm::atan2(kInfF, nanF)));
  // Tiny quotient: correctly rounded subnormal result.
  CHECK(dm::atan2(-d, 1.0) == -d);
  CHECK(dm::atan2(0x1p-1060, 0x1p10) == 0x1p-1070);
  CHECK(dm::atan2(0x1p-140f, 0x1p8f) == 0x1p-148f);

  // Huge arguments, exactly reduced (values from MPFR, correctly rounded).
  CHECK(checkUnary<float>([](float x) { return dm::sin(x); }, mpfr_sin, 1e30f) < 0.6);
  CHECK(checkUnary<double>([](double x) { return dm::cos(x); }, mpfr_cos, 1e300) < 0.6);
  CHECK(checkUnary<double>([](double x) { return dm::sin(x); }, mpfr_sin, 0x1p1023) < 0.6);
  CHECK(checkUnary<double>([](double x) { return dm::sin(x); }, mpfr_sin, 0x1.6ac5b262ca1ffp+849) < 0.6);
  CHECK(checkUnary<double>([](double x) { return dm::tan(x); }, mpfr_tan, 0x1.6ac5b262ca1ffp+849) < 0.6);
}
