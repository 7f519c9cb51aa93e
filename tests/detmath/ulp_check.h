// Test-only accuracy harness: compares detmath against MPFR and reports the maximum
// error in ulps. Shared by the detmath suites (unit) and the exhaustive checks (slow).
#pragma once

#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

namespace loam::dm::test {

/// MPFR reference for a unary function: rop = f(op) rounded to nearest.
using MpfrUnary = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
/// MPFR reference for a binary function.
using MpfrBinary = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);

/// Worst case found by a check.
struct UlpReport {
  double maxUlp = 0.0;     ///< largest error seen, in ulps of the exact result
  double worstX = 0.0;     ///< first argument of the worst case
  double worstY = 0.0;     ///< second argument (binary functions)
  std::uint64_t count = 0; ///< inputs checked
  std::uint64_t specialMismatches = 0;  ///< NaN/inf/zero-sign disagreements
};

/// Precision of the reference computation, in bits. Far above double's 53.
inline constexpr mpfr_prec_t kRefPrec = 256;

/// Format traits: mantissa bits (with the hidden one) and minimum normal exponent
/// in MPFR's convention (x = m * 2^e with 0.5 <= m < 1).
template <typename T>
struct Fmt;
template <>
struct Fmt<float> {
  static constexpr int kPrec = 24;
  static constexpr int kEmin = -125;  // smallest normal 2^-126 = 0.5 * 2^-125
  static constexpr int kEmax = 128;
};
template <>
struct Fmt<double> {
  static constexpr int kPrec = 53;
  static constexpr int kEmin = -1021;
  static constexpr int kEmax = 1024;
};

/// Error of `got` against the exact value in ulps of the target format at the exact
/// value's magnitude (subnormal spacing below the normal range). Returns +inf for a
/// NaN/inf/sign-of-zero disagreement with the correctly rounded result.
template <typename T>
double ulpError(T got, mpfr_srcptr exact) {
  // Correctly rounded reference in the target format, with subnormals and overflow.
  mpfr_exp_t oldEmin = mpfr_get_emin(), oldEmax = mpfr_get_emax();
  mpfr_t cr;
  mpfr_init2(cr, Fmt<T>::kPrec);
  int inex = mpfr_set(cr, exact, MPFR_RNDN);
  mpfr_set_emin(Fmt<T>::kEmin - Fmt<T>::kPrec + 1);
  mpfr_set_emax(Fmt<T>::kEmax);
  inex = mpfr_check_range(cr, inex, MPFR_RNDN);
  mpfr_subnormalize(cr, inex, MPFR_RNDN);
  mpfr_set_emin(oldEmin);
  mpfr_set_emax(oldEmax);
  T crv = std::is_same_v<T, float> ? static_cast<T>(mpfr_get_flt(cr, MPFR_RNDN))
                                    : static_cast<T>(mpfr_get_d(cr, MPFR_RNDN));
  mpfr_clear(cr);

  if (std::isnan(crv) || std::isnan(got)) return (std::isnan(crv) && std::isnan(got)) ? 0.0 : INFINITY;
  if (got == crv && std::signbit(got) == std::signbit(crv)) return 0.0;
  if (std::isinf(got) || std::isinf(crv)) {
    // Accept max-finite vs inf only when exact lies beyond the largest finite value.
    T big = std::numeric_limits<T>::max();
    if (std::isinf(crv) && std::fabs(got) == big && std::signbit(got) == std::signbit(crv)) return 1.0;
    return INFINITY;
  }
  if (got == 0 && crv == 0) return INFINITY;  // wrong sign of zero

  mpfr_t diff, ulp;
  mpfr_inits2(kRefPrec, diff, ulp, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(diff, static_cast<double>(got), MPFR_RNDN);
  mpfr_sub(diff, diff, exact, MPFR_RNDN);
  mpfr_abs(diff, diff, MPFR_RNDN);
  long e = mpfr_zero_p(exact) ? Fmt<T>::kEmin : static_cast<long>(mpfr_get_exp(exact));
  if (e < Fmt<T>::kEmin) e = Fmt<T>::kEmin;
  mpfr_set_ui_2exp(ulp, 1, e - Fmt<T>::kPrec, MPFR_RNDN);
  mpfr_div(diff, diff, ulp, MPFR_RNDN);
  double r = mpfr_get_d(diff, MPFR_RNDN);
  mpfr_clears(diff, ulp, static_cast<mpfr_ptr>(nullptr));
  return r;
}

/// Keeps the worst case of a run.
inline void note(UlpReport& r, double err, double x, double y = 0.0) {
  ++r.count;
  if (std::isinf(err)) ++r.specialMismatches;
  if (err > r.maxUlp || (std::isnan(r.worstX) && !std::isnan(x))) {
    r.maxUlp = err;
    r.worstX = x;
    r.worstY = y;
  }
}

/// Checks one input of a unary function against MPFR.
template <typename T, typename F>
double checkUnary(F ours, MpfrUnary ref, T x) {
  mpfr_t mx, my;
  mpfr_inits2(kRefPrec, mx, my, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(mx, static_cast<double>(x), MPFR_RNDN);
  ref(my, mx, MPFR_RNDN);
  double err = ulpError<T>(ours(x), my);
  mpfr_clears(mx, my, static_cast<mpfr_ptr>(nullptr));
  return err;
}

/// Checks one input of a binary function against MPFR.
template <typename T, typename F>
double checkBinary(F ours, MpfrBinary ref, T x, T y) {
  mpfr_t mx, my, mr;
  mpfr_inits2(kRefPrec, mx, my, mr, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(mx, static_cast<double>(x), MPFR_RNDN);
  mpfr_set_d(my, static_cast<double>(y), MPFR_RNDN);
  ref(mr, mx, my, MPFR_RNDN);
  double err = ulpError<T>(ours(x, y), mr);
  mpfr_clears(mx, my, mr, static_cast<mpfr_ptr>(nullptr));
  return err;
}

/// SplitMix64: the test's own input generator (fixed seed, so failures reproduce).
struct InputGen {
  std::uint64_t state;
  explicit InputGen(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform over finite bit patterns: spreads inputs over the whole exponent range.
  template <typename T>
  T anyFinite() {
    for (;;) {
      T v;
      if constexpr (sizeof(T) == 4) {
        std::uint32_t b = static_cast<std::uint32_t>(next());
        std::memcpy(&v, &b, 4);
      } else {
        std::uint64_t b = next();
        std::memcpy(&v, &b, 8);
      }
      if (std::isfinite(v)) return v;
    }
  }
  /// Uniform in [lo, hi).
  template <typename T>
  T uniform(T lo, T hi) {
    double u = static_cast<double>(next() >> 11) * 0x1.0p-53;
    return static_cast<T>(lo + (hi - lo) * u);
  }
};

/// Prints one line per function, collected by the suites into docs/PERF.md.
inline void printReport(const char* fn, const char* type, const UlpReport& r) {
  std::printf("ulp %-8s %-6s max %.4f ulp at x=%a y=%a over %llu inputs, %llu special mismatches\n", fn, type,
              r.maxUlp, r.worstX, r.worstY, static_cast<unsigned long long>(r.count),
              static_cast<unsigned long long>(r.specialMismatches));
}

}  // namespace loam::dm::test
