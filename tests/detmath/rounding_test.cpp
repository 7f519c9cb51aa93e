// sqrt, floor, ceil, round and trunc are exact: compared bit for bit with MPFR on
// 1,000,000 inputs each, plus the special values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "detmath/detmath.h"
#include "tests/detmath/ulp_check.h"

namespace dm = loam::dm;
using loam::dm::test::checkUnary;
using loam::dm::test::InputGen;
using loam::dm::test::UlpReport;

namespace {

int mpfrFloor(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t) { return mpfr_floor(r, x); }
int mpfrCeil(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t) { return mpfr_ceil(r, x); }
int mpfrRound(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t) { return mpfr_round(r, x); }
int mpfrTrunc(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t) { return mpfr_trunc(r, x); }

template <typename T, typename F>
void exactOn(const char* name, F fn, loam::dm::test::MpfrUnary ref) {
  InputGen g(0x5EED0001);
  UlpReport r;
  using L = std::numeric_limits<T>;
  const T specials[] = {T(0), -T(0), T(0.5), T(-0.5), T(1.5), T(-1.5), T(2.5), T(-2.5), T(0.49999997), L::min(),
                        L::denorm_min(), -L::denorm_min(), L::max(), -L::max(), L::infinity(), -L::infinity()};
  for (T x : specials) loam::dm::test::note(r, checkUnary<T>(fn, ref, x), x);
  for (int i = 0; i < 1000000; ++i) {
    T x = (i % 2) ? g.anyFinite<T>() : g.uniform<T>(T(-1e4), T(1e4));
    loam::dm::test::note(r, checkUnary<T>(fn, ref, x), x);
  }
  loam::dm::test::printReport(name, sizeof(T) == 4 ? "float" : "double", r);
  CHECK(r.maxUlp == 0.0);
  CHECK(std::isnan(fn(L::quiet_NaN())));
}

}  // namespace

TEST_CASE("sqrt is correctly rounded") {
  exactOn<float>("sqrt", [](float x) { return dm::sqrt(std::fabs(x)); }, [](mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t m) {
    mpfr_t a;
    mpfr_init2(a, mpfr_get_prec(x));
    mpfr_abs(a, x, m);
    int i = mpfr_sqrt(r, a, m);
    mpfr_clear(a);
    return i;
  });
  exactOn<double>("sqrt", [](double x) { return dm::sqrt(std::fabs(x)); }, [](mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t m) {
    mpfr_t a;
    mpfr_init2(a, mpfr_get_prec(x));
    mpfr_abs(a, x, m);
    int i = mpfr_sqrt(r, a, m);
    mpfr_clear(a);
    return i;
  });
  CHECK(std::isnan(dm::sqrt(-1.0)));
  CHECK(std::signbit(dm::sqrt(-0.0)));
}

TEST_CASE("floor, ceil, round, trunc are exact") {
  exactOn<float>("floor", [](float x) { return dm::floor(x); }, mpfrFloor);
  exactOn<double>("floor", [](double x) { return dm::floor(x); }, mpfrFloor);
  exactOn<float>("ceil", [](float x) { return dm::ceil(x); }, mpfrCeil);
  exactOn<double>("ceil", [](double x) { return dm::ceil(x); }, mpfrCeil);
  exactOn<float>("round", [](float x) { return dm::round(x); }, mpfrRound);
  exactOn<double>("round", [](double x) { return dm::round(x); }, mpfrRound);
  exactOn<float>("trunc", [](float x) { return dm::trunc(x); }, mpfrTrunc);
  exactOn<double>("trunc", [](double x) { return dm::trunc(x); }, mpfrTrunc);
  CHECK(std::signbit(dm::ceil(-0.5)));
  CHECK(std::signbit(dm::trunc(-0.5f)));
  CHECK(dm::round(0.49999999999999994) == 0.0);
  CHECK(dm::round(-2.5) == -3.0);
}
