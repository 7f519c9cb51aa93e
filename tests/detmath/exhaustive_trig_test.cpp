// Exhaustive check of float sin, cos and atan: every one of the 2^32 bit patterns.
//
// The platform's double sin/cos/atan (allowed here, in test code only) is a reference
// good to about 1 double ulp, i.e. 2^-29 of a float ulp. Rounding it to float gives the
// correctly rounded result unless it lies within a few double ulps of a float rounding
// boundary; only those inputs, and inputs where detmath disagrees with the rounded
// reference, are settled by MPFR (tests/detmath/ulp_check.h). That keeps a run to
// minutes. The range is split over two threads; each keeps its own tally and the two
// are merged in a fixed order.
//
// LOAM_TRIG_EXHAUSTIVE_STEP=k checks every k-th pattern only (for quick runs).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <thread>

#include "detmath/detmath.h"
#include "tests/detmath/ulp_check.h"

namespace dm = loam::dm;
using loam::dm::test::checkUnary;
using loam::dm::test::MpfrUnary;

namespace {

/// Reference rounding to float is trusted only this many double ulps away from a float
/// rounding boundary (the platform's double functions are within 1 ulp).
constexpr double kTrustUlps = 64.0;

struct Tally {
  double maxUlp = 0.0;
  std::uint32_t worstBits = 0;
  std::uint64_t checked = 0;
  std::uint64_t notCorrectlyRounded = 0;
  std::uint64_t mpfrCalls = 0;
  std::uint64_t specialMismatches = 0;
};

bool sameBits(float a, float b) { return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b); }

/// True when the double reference r may round to a different float than the exact value.
bool nearRoundingBoundary(double r) {
  if (r == 0.0 || !std::isfinite(r)) return false;
  float f = static_cast<float>(r);
  if (static_cast<double>(f) == r) return false;
  float g = std::nextafter(f, r > static_cast<double>(f) ? std::numeric_limits<float>::infinity()
                                                         : -std::numeric_limits<float>::infinity());
  double mid = (static_cast<double>(f) + static_cast<double>(g)) * 0.5;  // exact
  return std::fabs(r - mid) <= kTrustUlps * 0x1p-52 * std::fabs(r);
}

template <typename Ours, typename Ref>
void scan(std::uint64_t begin, std::uint64_t end, std::uint64_t step, Ours ours, Ref ref, MpfrUnary mpfrRef,
          Tally* out) {
  Tally t;
  for (std::uint64_t b = begin; b < end; b += step) {
    float x = std::bit_cast<float>(static_cast<std::uint32_t>(b));
    float got = ours(x);
    double r = ref(static_cast<double>(x));
    ++t.checked;
    if (!std::isfinite(x)) {
      float expect = static_cast<float>(r);
      bool ok = std::isnan(expect) ? std::isnan(got) : sameBits(got, expect);
      if (!ok) ++t.specialMismatches;
      continue;
    }
    bool ambiguous = nearRoundingBoundary(r);
    if (!ambiguous && sameBits(got, static_cast<float>(r))) continue;
    ++t.mpfrCalls;
    double err = checkUnary<float>(ours, mpfrRef, x);
    if (err == 0.0) continue;  // the harness reports 0 for a correctly rounded result
    ++t.notCorrectlyRounded;
    if (std::isinf(err)) ++t.specialMismatches;
    if (err > t.maxUlp) {
      t.maxUlp = err;
      t.worstBits = static_cast<std::uint32_t>(b);
    }
  }
  *out = t;
}

template <typename Ours, typename Ref>
Tally exhaustive(const char* name, Ours ours, Ref ref, MpfrUnary mpfrRef) {
  const char* s = std::getenv("LOAM_TRIG_EXHAUSTIVE_STEP");
  std::uint64_t step = s ? std::strtoull(s, nullptr, 10) : 1;
  if (step == 0) step = 1;
  constexpr std::uint64_t kAll = std::uint64_t{1} << 32;
  Tally halves[2];
  // Positive and negative patterns: two equal halves. The second start is aligned to
  // the step so a sampled run checks the same patterns however it is split.
  std::uint64_t mid = (kAll / 2 + step - 1) / step * step;
  std::thread worker([&] { scan(mid, kAll, step, ours, ref, mpfrRef, &halves[1]); });
  scan(0, mid, step, ours, ref, mpfrRef, &halves[0]);
  worker.join();
  Tally t = halves[0];
  t.checked += halves[1].checked;
  t.notCorrectlyRounded += halves[1].notCorrectlyRounded;
  t.mpfrCalls += halves[1].mpfrCalls;
  t.specialMismatches += halves[1].specialMismatches;
  if (halves[1].maxUlp > t.maxUlp) {
    t.maxUlp = halves[1].maxUlp;
    t.worstBits = halves[1].worstBits;
  }
  std::printf(
      "exhaustive %-5s float: max %.4f ulp at x=%a, %llu of %llu inputs not correctly rounded, %llu MPFR calls, "
      "%llu special mismatches\n",
      name, t.maxUlp, static_cast<double>(std::bit_cast<float>(t.worstBits)),
      static_cast<unsigned long long>(t.notCorrectlyRounded), static_cast<unsigned long long>(t.checked),
      static_cast<unsigned long long>(t.mpfrCalls), static_cast<unsigned long long>(t.specialMismatches));
  std::fflush(stdout);
  return t;
}

}  // namespace

TEST_CASE("float sin over every input") {
  Tally t = exhaustive("sin", [](float x) { return dm::sin(x); }, [](double x) { return std::sin(x); }, mpfr_sin);
  CHECK(t.maxUlp < 1.0);
  CHECK(t.specialMismatches == 0);
}

TEST_CASE("float cos over every input") {
  Tally t = exhaustive("cos", [](float x) { return dm::cos(x); }, [](double x) { return std::cos(x); }, mpfr_cos);
  CHECK(t.maxUlp < 1.0);
  CHECK(t.specialMismatches == 0);
}

TEST_CASE("float atan over every input") {
  Tally t = exhaustive("atan", [](float x) { return dm::atan(x); }, [](double x) { return std::atan(x); }, mpfr_atan);
  CHECK(t.maxUlp < 1.0);
  CHECK(t.specialMismatches == 0);
}
