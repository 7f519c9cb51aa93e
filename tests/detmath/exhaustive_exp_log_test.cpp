// Exhaustive check of float exp and log: all 2^32 inputs. The platform's double exp
// and log (error below one double ulp, 2^-52 relative) decide the correctly rounded
// float directly, except where that double lies within 2^-50 of a float rounding
// boundary (or at overflow); there, and wherever detmath differs from it, the 256-bit
// MPFR reference decides and measures the error. Reports the maximum error and how
// many inputs were not correctly rounded. Slow label: about a minute per function
// per core. LOAM_EXHAUSTIVE_STRIDE=k checks every k-th bit pattern (quick local runs).
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

namespace {

using loam::dm::test::checkUnary;
using loam::dm::test::MpfrUnary;

struct Tally {
  double maxUlp = 0.0;
  float worstX = 0.0f;
  std::uint64_t checked = 0;
  std::uint64_t notCorrectlyRounded = 0;
  std::uint64_t mpfrCalls = 0;
  std::uint64_t specialMismatches = 0;
};

std::uint64_t stride() {
  const char* s = std::getenv("LOAM_EXHAUSTIVE_STRIDE");
  long v = s ? std::atol(s) : 1;
  return v > 0 ? static_cast<std::uint64_t>(v) : 1;
}

bool sameFloat(float a, float b) { return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b); }

/// True when `ref` (within 2^-52 relative of the exact value) might round to a
/// different float than the exact value does.
bool nearBoundary(double ref, float cr) {
  if (static_cast<double>(cr) == ref || std::isinf(ref)) return false;
  constexpr double kMax = std::numeric_limits<float>::max();
  constexpr double kOverflow = kMax + 0x1p103;  // FLT_MAX + half an ulp: rounds to inf
  double mid;
  if (std::isinf(cr) || (std::fabs(ref) > kMax)) {
    mid = std::copysign(kOverflow, ref);
  } else {
    float side = std::nextafter(cr, ref > static_cast<double>(cr) ? std::numeric_limits<float>::infinity()
                                                                  : -std::numeric_limits<float>::infinity());
    mid = std::isinf(side) ? std::copysign(kOverflow, ref)
                           : (static_cast<double>(cr) + static_cast<double>(side)) * 0.5;  // exact
  }
  return std::fabs(ref - mid) <= std::fabs(ref) * 0x1p-50;
}

template <typename Ours, typename Ref>
void scan(Ours ours, Ref ref, MpfrUnary mpfrRef, std::uint64_t lo, std::uint64_t hi, std::uint64_t step, Tally* t) {
  for (std::uint64_t b = lo; b < hi; b += step) {
    float x = std::bit_cast<float>(static_cast<std::uint32_t>(b));
    float got = ours(x);
    ++t->checked;
    if (std::isnan(x)) {
      if (!std::isnan(got)) ++t->specialMismatches;
      continue;
    }
    double r = ref(static_cast<double>(x));
    if (std::isnan(r)) {  // log of a negative number: only NaN is right
      if (!std::isnan(got)) ++t->specialMismatches;
      continue;
    }
    float cr = static_cast<float>(r);
    if (sameFloat(got, cr) && !nearBoundary(r, cr)) continue;
    ++t->mpfrCalls;
    double err = checkUnary<float>(ours, mpfrRef, x);
    if (std::isinf(err)) ++t->specialMismatches;
    if (err > 0.0) ++t->notCorrectlyRounded;
    if (err > t->maxUlp) {
      t->maxUlp = err;
      t->worstX = x;
    }
  }
}

template <typename Ours, typename Ref>
Tally exhaustive(const char* name, Ours ours, Ref ref, MpfrUnary mpfrRef) {
  const std::uint64_t step = stride();
  constexpr std::uint64_t kAll = std::uint64_t{1} << 32;
  Tally halves[2];
  // Two threads, each over half of the bit patterns (each half has as many negative
  // as positive inputs, so the work is balanced). Merged in a fixed order.
  std::thread worker([&] { scan(ours, ref, mpfrRef, kAll / 2, kAll, step, &halves[1]); });
  scan(ours, ref, mpfrRef, 0, kAll / 2, step, &halves[0]);
  worker.join();
  Tally all = halves[0];
  all.checked += halves[1].checked;
  all.notCorrectlyRounded += halves[1].notCorrectlyRounded;
  all.mpfrCalls += halves[1].mpfrCalls;
  all.specialMismatches += halves[1].specialMismatches;
  if (halves[1].maxUlp > all.maxUlp) {
    all.maxUlp = halves[1].maxUlp;
    all.worstX = halves[1].worstX;
  }
  std::printf(
      "exhaustive %-4s float: max %.4f ulp at x=%a, %llu of %llu inputs not correctly rounded, %llu MPFR calls, "
      "%llu special mismatches\n",
      name, all.maxUlp, static_cast<double>(all.worstX), static_cast<unsigned long long>(all.notCorrectlyRounded),
      static_cast<unsigned long long>(all.checked), static_cast<unsigned long long>(all.mpfrCalls),
      static_cast<unsigned long long>(all.specialMismatches));
  return all;
}

}  // namespace

TEST_CASE("exp(float): every input within 1 ulp") {
  Tally t = exhaustive("exp", [](float x) { return loam::dm::exp(x); }, [](double x) { return std::exp(x); }, mpfr_exp);
  CHECK(t.maxUlp < 1.0);
  CHECK(t.specialMismatches == 0);
}

TEST_CASE("log(float): every input within 1 ulp") {
  Tally t = exhaustive("log", [](float x) { return loam::dm::log(x); }, [](double x) { return std::log(x); }, mpfr_log);
  CHECK(t.maxUlp < 1.0);
  CHECK(t.specialMismatches == 0);
}
