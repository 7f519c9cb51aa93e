// Generator for the constant tables in detmath/internal/exp_log_kernels.h.
//
// The tables are derived here from first principles with MPFR (no libm, no tables
// copied from other libraries) and printed as hex-float literals, so the library
// itself never computes a table at run time. To rerun:
//
//   g++ -std=c++20 -O1 detmath/tools/gen_exp_log_tables.cpp -lmpfr -lgmp -o /tmp/gen
//   /tmp/gen > /tmp/tables.inc
//
// and replace everything between the "BEGIN generated" and "END generated" lines of
// exp_log_kernels.h with the output (minus its first comment line). The program also
// prints (to stderr) the largest reduced argument |r| of the log table,
// which the polynomial degrees in the kernels rely on.
#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <vector>

namespace {

constexpr mpfr_prec_t kPrec = 300;

/// Rounds `v` to a double (nearest).
double toDouble(const mpfr_t v) { return mpfr_get_d(v, MPFR_RNDN); }

/// Splits v into hi + lo where hi is v rounded to a multiple of 2^-quantum (bits after
/// the binary point) and lo = v - hi rounded to double.
void splitFixed(const mpfr_t v, int quantum, double* hi, double* lo) {
  mpfr_t t;
  mpfr_init2(t, kPrec);
  mpfr_mul_2si(t, v, quantum, MPFR_RNDN);
  mpfr_rint(t, t, MPFR_RNDN);
  mpfr_div_2si(t, t, quantum, MPFR_RNDN);
  *hi = toDouble(t);
  mpfr_sub(t, v, t, MPFR_RNDN);
  *lo = toDouble(t);
  mpfr_clear(t);
}

/// Splits v into hi (rounded to `bits` significant bits) and lo = v - hi as double.
void splitBits(const mpfr_t v, int bits, double* hi, double* lo) {
  mpfr_t t;
  mpfr_init2(t, bits);
  mpfr_set(t, v, MPFR_RNDN);
  *hi = toDouble(t);
  mpfr_clear(t);
  mpfr_t d;
  mpfr_init2(d, kPrec);
  mpfr_sub_d(d, v, *hi, MPFR_RNDN);
  *lo = toDouble(d);
  mpfr_clear(d);
}

void printDd(const char* name, const mpfr_t v) {
  double hi = toDouble(v);
  mpfr_t d;
  mpfr_init2(d, kPrec);
  mpfr_sub_d(d, v, hi, MPFR_RNDN);
  std::printf("inline constexpr DD %s = {%a, %a};\n", name, hi, toDouble(d));
  mpfr_clear(d);
}

}  // namespace

int main() {
  mpfr_t ln2, ln10, t, u;
  mpfr_inits2(kPrec, ln2, ln10, t, u, static_cast<mpfr_ptr>(nullptr));
  mpfr_const_log2(ln2, MPFR_RNDN);
  mpfr_set_ui(ln10, 10, MPFR_RNDN);
  mpfr_log(ln10, ln10, MPFR_RNDN);

  // ---- constants ----
  std::printf("// ---- constants (generated) ----\n");
  // ln2/128 in two parts: the high part has 35 significant bits so k * hi is exact
  // for |k| < 2^18.
  mpfr_div_2ui(t, ln2, 7, MPFR_RNDN);
  double hi, lo;
  splitBits(t, 35, &hi, &lo);
  std::printf("inline constexpr double kLn2By128Hi = %a;\ninline constexpr double kLn2By128Lo = %a;\n", hi, lo);
  mpfr_ui_div(t, 128, ln2, MPFR_RNDN);
  std::printf("inline constexpr double kInvLn2Times128 = %a;\n", toDouble(t));
  // ln2 with a 42-bit high part: k * hi is exact for |k| < 2^11.
  splitFixed(ln2, 42, &hi, &lo);
  std::printf("inline constexpr double kLn2Hi = %a;\ninline constexpr double kLn2Lo = %a;\n", hi, lo);
  std::printf("inline constexpr double kLn2 = %a;\n", toDouble(ln2));
  mpfr_ui_div(t, 1, ln2, MPFR_RNDN);
  printDd("kInvLn2", t);
  mpfr_ui_div(t, 1, ln10, MPFR_RNDN);
  printDd("kInvLn10", t);
  mpfr_div(t, ln2, ln10, MPFR_RNDN);
  splitFixed(t, 42, &hi, &lo);
  std::printf("inline constexpr double kLog10Of2Hi = %a;\ninline constexpr double kLog10Of2Lo = %a;\n", hi, lo);
  std::printf("inline constexpr double kLog10Of2 = %a;\n", toDouble(t));

  // Taylor coefficients of 2^(u/128) = exp(u * ln2/128): (ln2/128)^n / n!.
  std::printf("inline constexpr double kExp2By128Poly[6] = {");
  mpfr_div_2ui(u, ln2, 7, MPFR_RNDN);
  mpfr_set_ui(t, 1, MPFR_RNDN);
  for (int n = 1; n <= 6; ++n) {
    mpfr_mul(t, t, u, MPFR_RNDN);
    mpfr_div_ui(t, t, n, MPFR_RNDN);
    std::printf("%s%a", n > 1 ? ", " : "", toDouble(t));
  }
  std::printf("};\n");
  // 1/n! and 1/n, used by the exp and log polynomials.
  std::printf("inline constexpr double kInvFactorial[12] = {");
  mpfr_set_ui(t, 1, MPFR_RNDN);
  for (int n = 0; n < 12; ++n) {
    if (n > 0) mpfr_div_ui(t, t, n, MPFR_RNDN);
    std::printf("%s%a", n > 0 ? ", " : "", toDouble(t));
  }
  std::printf("};\n");
  std::printf("inline constexpr double kInv[12] = {0.0");
  for (int n = 1; n < 12; ++n) {
    mpfr_set_ui(t, 1, MPFR_RNDN);
    mpfr_div_ui(t, t, n, MPFR_RNDN);
    std::printf(", %a", toDouble(t));
  }
  std::printf("};\n");
  // Coefficients of 128 log2(1 + r) = sum (-1)^(n+1) r^n * 128 / (n ln2), n = 1..5 (powf).
  std::printf("inline constexpr double kLog2By128Poly[5] = {");
  for (int n = 1; n <= 5; ++n) {
    mpfr_set_ui(t, 128, MPFR_RNDN);
    mpfr_div(t, t, ln2, MPFR_RNDN);
    mpfr_div_ui(t, t, n, MPFR_RNDN);
    if (n % 2 == 0) mpfr_neg(t, t, MPFR_RNDN);
    std::printf("%s%a", n > 1 ? ", " : "", toDouble(t));
  }
  std::printf("};\n\n");

  // ---- 2^(j/128) as double-double ----
  std::printf("// 2^(j/128), j = 0..127, as {hi, lo} (generated)\n");
  std::printf("inline constexpr DD kExp2Table[128] = {\n");
  for (int j = 0; j < 128; ++j) {
    mpfr_set_si(t, j, MPFR_RNDN);
    mpfr_div_2ui(t, t, 7, MPFR_RNDN);
    mpfr_exp2(t, t, MPFR_RNDN);
    double h = toDouble(t);
    mpfr_sub_d(u, t, h, MPFR_RNDN);
    std::printf("    {%a, %a},\n", h, toDouble(u));
  }
  std::printf("};\n\n");

  // ---- log table ----
  // The reduced mantissa m lies in [kLogOff, 2 kLogOff); bin i holds the bit
  // patterns kLogOff + [i, i+1) * 2^45. Bin 74 is centred on 1.0 and uses c = 1
  // exactly, so log(x) for x near 1 is computed from r = x - 1 with no cancellation.
  // Other bins: c ~ 1/centre rounded to 12 significant bits, so m * c is exact for
  // a 24-bit m and exact with a single Dekker split for a 53-bit m.
  constexpr std::uint64_t kLogOff = 0x3fe6b00000000000ull;
  std::printf("// log table: {c, -log(c) high (multiple of 2^-42), -log(c) low} (generated)\n");
  std::printf("inline constexpr std::uint64_t kLogOff = 0x%016llxull;\n", static_cast<unsigned long long>(kLogOff));
  std::printf("struct LogEntry {\n  double c;\n  double negLogHi;\n  double negLogLo;\n};\n");
  std::printf("inline constexpr LogEntry kLogTable[128] = {\n");
  double maxR = 0;
  std::vector<double> cs;
  for (int i = 0; i < 128; ++i) {
    double a = std::bit_cast<double>(kLogOff + (static_cast<std::uint64_t>(i) << 45));
    double b = std::bit_cast<double>(kLogOff + (static_cast<std::uint64_t>(i + 1) << 45));
    double c;
    if (i == 74) {
      c = 1.0;
    } else {
      mpfr_set_d(t, a, MPFR_RNDN);
      mpfr_add_d(t, t, b, MPFR_RNDN);
      mpfr_ui_div(t, 2, t, MPFR_RNDN);
      mpfr_t c12;
      mpfr_init2(c12, 12);
      mpfr_set(c12, t, MPFR_RNDN);
      c = mpfr_get_d(c12, MPFR_RNDN);
      mpfr_clear(c12);
    }
    // |r| at both ends of the bin (the largest m is just below b).
    for (double m : {a, b}) {
      mpfr_set_d(t, m, MPFR_RNDN);
      mpfr_mul_d(t, t, c, MPFR_RNDN);
      mpfr_sub_ui(t, t, 1, MPFR_RNDN);
      double r = std::fabs(toDouble(t));
      if (r > maxR) maxR = r;
    }
    cs.push_back(c);
    mpfr_set_d(t, c, MPFR_RNDN);
    mpfr_log(t, t, MPFR_RNDN);
    mpfr_neg(t, t, MPFR_RNDN);
    double lh, ll;
    splitFixed(t, 42, &lh, &ll);
    lh += 0.0;  // bin 74: -log(1) must print as +0 so that log(1) = +0
    ll += 0.0;
    std::printf("    {%a, %a, %a},\n", c, lh, ll);
  }
  std::printf("};\n");
  // -128 log2(c_i) for the same c_i, rounded to double (powf).
  std::printf("inline constexpr double kNegLog2By128Table[128] = {\n");
  for (double c : cs) {
    mpfr_set_d(t, c, MPFR_RNDN);
    mpfr_log2(t, t, MPFR_RNDN);
    mpfr_mul_si(t, t, -128, MPFR_RNDN);
    std::printf("    %a,\n", toDouble(t) + 0.0);
  }
  std::printf("};\n");
  std::fprintf(stderr, "max |r| of the log table: %a (2^%.3f)\n", maxR, std::log2(maxR));  // detmath-ok: offline table generator, never linked into the engine
  mpfr_clears(ln2, ln10, t, u, static_cast<mpfr_ptr>(nullptr));
  return 0;
}
