// Generator for the literal constants of detmath's trigonometric family:
// the bits of 2/pi and the pieces of pi/2 (internal/rem_pio2.h), the atan table
// (inverse_trig.cpp) and the minimax polynomial coefficients of trig.cpp and
// inverse_trig.cpp. Nothing here is used at run time; the outputs are pasted into
// the sources as hex literals, so the library never depends on MPFR or on libm.
//
// Rerun (from the repository root) and compare the output with the sources:
//   g++ -std=c++20 -O2 detmath/tools/gen_trig_constants.cpp -lmpfr -lgmp -o /tmp/gen_trig
//   /tmp/gen_trig               # everything (a few minutes: the Remez runs dominate)
//   /tmp/gen_trig tables        # 2/pi bits, pi/2 pieces, constants, atan table only
//   /tmp/gen_trig asinD 11      # one polynomial, optionally at another degree
// Not built by CMake on purpose: it is run by hand when a constant has to change.
//
// Polynomials come from the Remez exchange algorithm run in 320-bit MPFR arithmetic.
// Each one approximates the tail of a power series: for f(x) = sum a_k x^(2k+e)
// (e = 1 for odd functions, 0 for even ones) and z = x^2, the kernel computes the
// terms below k0 exactly (or in double-double) and P(z) ~ sum_{k>=k0} a_k z^(k-k0).
// The weight makes the error relative to the whole function f, which is what the
// accuracy budget is about: w(z) = z^k0 / sum_k a_k z^k.
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr mpfr_prec_t kPrec = 320;

/// Minimal RAII wrapper so the algorithm reads like arithmetic.
class Real {
 public:
  Real() { mpfr_init2(v_, kPrec); mpfr_set_ui(v_, 0, MPFR_RNDN); }
  Real(double d) { mpfr_init2(v_, kPrec); mpfr_set_d(v_, d, MPFR_RNDN); }  // NOLINT: implicit on purpose
  Real(const Real& o) { mpfr_init2(v_, kPrec); mpfr_set(v_, o.v_, MPFR_RNDN); }
  Real& operator=(const Real& o) {
    mpfr_set(v_, o.v_, MPFR_RNDN);
    return *this;
  }
  ~Real() { mpfr_clear(v_); }
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  double toDouble() const { return mpfr_get_d(v_, MPFR_RNDN); }

  friend Real operator+(const Real& a, const Real& b) { Real r; mpfr_add(r.v_, a.v_, b.v_, MPFR_RNDN); return r; }
  friend Real operator-(const Real& a, const Real& b) { Real r; mpfr_sub(r.v_, a.v_, b.v_, MPFR_RNDN); return r; }
  friend Real operator*(const Real& a, const Real& b) { Real r; mpfr_mul(r.v_, a.v_, b.v_, MPFR_RNDN); return r; }
  friend Real operator/(const Real& a, const Real& b) { Real r; mpfr_div(r.v_, a.v_, b.v_, MPFR_RNDN); return r; }
  Real operator-() const { Real r; mpfr_neg(r.v_, v_, MPFR_RNDN); return r; }
  friend bool operator<(const Real& a, const Real& b) { return mpfr_less_p(a.v_, b.v_) != 0; }

 private:
  mpfr_t v_;
};

Real absR(const Real& a) { Real r; mpfr_abs(r.get(), a.get(), MPFR_RNDN); return r; }
Real piR() { Real r; mpfr_const_pi(r.get(), MPFR_RNDN); return r; }
Real atanR(const Real& a) { Real r; mpfr_atan(r.get(), a.get(), MPFR_RNDN); return r; }
Real ldexpR(const Real& a, long e) { Real r; mpfr_mul_2si(r.get(), a.get(), e, MPFR_RNDN); return r; }

/// Rounds to a binary floating-point number with `bits` significant bits.
Real roundBits(const Real& a, mpfr_prec_t bits) {
  mpfr_t t;
  mpfr_init2(t, bits);
  mpfr_set(t, a.get(), MPFR_RNDN);
  Real r;
  mpfr_set(r.get(), t, MPFR_RNDN);
  mpfr_clear(t);
  return r;
}

// ---- power series a_k of f(x) = sum a_k x^(2k+e), as many terms as 320 bits need ----
std::vector<Real> sinSeries() {
  std::vector<Real> a;
  Real fact = 1.0;  // (2k+1)!
  for (int k = 0; k < 90; ++k) {
    if (k > 0) fact = fact * Real(2.0 * k) * Real(2.0 * k + 1);
    a.push_back(Real((k % 2) ? -1.0 : 1.0) / fact);
  }
  return a;
}
std::vector<Real> cosSeries() {
  std::vector<Real> a;
  Real fact = 1.0;  // (2k)!
  for (int k = 0; k < 90; ++k) {
    if (k > 0) fact = fact * Real(2.0 * k - 1) * Real(2.0 * k);
    a.push_back(Real((k % 2) ? -1.0 : 1.0) / fact);
  }
  return a;
}
std::vector<Real> asinSeries() {
  // a_k = (2k)! / (4^k (k!)^2 (2k+1)); c_k = (2k)!/(4^k (k!)^2) obeys c_k = c_{k-1} (2k-1)/(2k).
  std::vector<Real> a;
  Real c = 1.0;
  for (int k = 0; k < 400; ++k) {
    if (k > 0) c = c * Real(2.0 * k - 1) / Real(2.0 * k);
    a.push_back(c / Real(2.0 * k + 1));
  }
  return a;
}
std::vector<Real> atanSeries() {
  std::vector<Real> a;
  for (int k = 0; k < 400; ++k) a.push_back(Real((k % 2) ? -1.0 : 1.0) / Real(2.0 * k + 1));
  return a;
}

/// sum_{k>=k0} a_k z^(k-k0), Horner from the top (the series converge on our domains).
Real evalSeries(const std::vector<Real>& a, int k0, const Real& z) {
  Real s = 0.0;
  for (int k = static_cast<int>(a.size()) - 1; k >= k0; --k) s = s * z + a[k];
  return s;
}

Real evalPoly(const std::vector<Real>& c, const Real& z) {
  Real s = 0.0;
  for (int k = static_cast<int>(c.size()) - 1; k >= 0; --k) s = s * z + c[k];
  return s;
}

struct Problem {
  std::string name;
  std::vector<Real> series;
  int k0 = 1;
  double zMax = 1.0;
  int degree = 4;
  std::vector<double> fixed;  ///< leading coefficients already rounded to double
};

/// The polynomial the kernel evaluates: fixed leading coefficients, then the free ones.
std::vector<Real> fullPoly(const Problem& pb, const std::vector<Real>& freeCoeffs) {
  std::vector<Real> c(pb.fixed.begin(), pb.fixed.end());
  c.insert(c.end(), freeCoeffs.begin(), freeCoeffs.end());
  return c;
}

/// Weighted error w(z) (g(z) - p(z)) of polynomial c.
Real weightedError(const Problem& pb, const std::vector<Real>& c, const Real& z) {
  Real g = evalSeries(pb.series, pb.k0, z);
  Real zk = 1.0;
  for (int i = 0; i < pb.k0; ++i) zk = zk * z;
  Real w = zk / evalSeries(pb.series, 0, z);
  return w * (g - evalPoly(fullPoly(pb, c), z));
}

/// Solves m x = rhs in place (Gaussian elimination with partial pivoting).
std::vector<Real> solve(std::vector<std::vector<Real>> m, std::vector<Real> rhs) {
  std::size_t n = rhs.size();
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t piv = col;
    for (std::size_t r = col + 1; r < n; ++r)
      if (absR(m[piv][col]) < absR(m[r][col])) piv = r;
    std::swap(m[piv], m[col]);
    std::swap(rhs[piv], rhs[col]);
    for (std::size_t r = col + 1; r < n; ++r) {
      Real f = m[r][col] / m[col][col];
      for (std::size_t k = col; k < n; ++k) m[r][k] = m[r][k] - f * m[col][k];
      rhs[r] = rhs[r] - f * rhs[col];
    }
  }
  std::vector<Real> x(n);
  for (std::size_t i = n; i-- > 0;) {
    Real s = rhs[i];
    for (std::size_t k = i + 1; k < n; ++k) s = s - m[i][k] * x[k];
    x[i] = s / m[i][i];
  }
  return x;
}

/// Maximises s * e(z) on [lo, hi] by golden-section search (e is smooth and unimodal there).
Real refineExtremum(const Problem& pb, const std::vector<Real>& c, Real lo, Real hi, double s) {
  const Real kInvPhi = 0.6180339887498949;
  Real a = lo, b = hi;
  Real x1 = b - kInvPhi * (b - a), x2 = a + kInvPhi * (b - a);
  Real f1 = Real(s) * weightedError(pb, c, x1), f2 = Real(s) * weightedError(pb, c, x2);
  for (int it = 0; it < 80; ++it) {
    if (f2 < f1) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - kInvPhi * (b - a);
      f1 = Real(s) * weightedError(pb, c, x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + kInvPhi * (b - a);
      f2 = Real(s) * weightedError(pb, c, x2);
    }
  }
  return (a + b) / Real(2.0);
}

/// Remez exchange on [0, zMax]; returns the coefficients and the weighted max error.
std::pair<std::vector<Real>, double> remez(const Problem& pb) {
  const int m0 = static_cast<int>(pb.fixed.size());
  const int n = pb.degree - m0 + 2;  // unknowns: the free coefficients and the levelled error
  const Real zMax = pb.zMax;
  // The weight vanishes at z = 0, so the reference starts just inside the interval.
  std::vector<Real> ref(n);
  for (int i = 0; i < n; ++i) {
    double t = (1.0 - std::cos(std::numbers::pi * (i + 0.5) / n)) / 2.0;  // detmath-ok: offline table generator, never linked into the engine
    ref[i] = zMax * Real(t);
  }
  std::vector<Real> c;
  double maxErr = 0.0;
  const int kGrid = 3000;
  for (int iter = 0; iter < 30; ++iter) {
    std::vector<std::vector<Real>> m(n, std::vector<Real>(n));
    std::vector<Real> rhs(n);
    for (int i = 0; i < n; ++i) {
      Real zp = 1.0;
      Real fixedPart = 0.0;
      for (int k = 0; k <= pb.degree; ++k) {
        if (k < m0) {
          fixedPart = fixedPart + Real(pb.fixed[k]) * zp;
        } else {
          m[i][k - m0] = zp;
        }
        zp = zp * ref[i];
      }
      Real zk = 1.0;
      for (int j = 0; j < pb.k0; ++j) zk = zk * ref[i];
      Real w = zk / evalSeries(pb.series, 0, ref[i]);
      m[i][n - 1] = Real((i % 2) ? -1.0 : 1.0) / w;
      rhs[i] = evalSeries(pb.series, pb.k0, ref[i]) - fixedPart;
    }
    std::vector<Real> sol = solve(m, rhs);
    c.assign(sol.begin(), sol.end() - 1);
    double levelled = std::fabs(sol.back().toDouble());

    // Scan a Chebyshev-spaced grid for local extrema of the weighted error.
    std::vector<Real> zs(kGrid), es(kGrid);
    for (int j = 0; j < kGrid; ++j) {
      double t = (1.0 - std::cos(std::numbers::pi * j / (kGrid - 1))) / 2.0;  // detmath-ok: offline table generator, never linked into the engine
      zs[j] = zMax * Real(t);
      es[j] = weightedError(pb, c, zs[j]);
    }
    std::vector<Real> exZ, exE;
    for (int j = 1; j < kGrid; ++j) {
      double ej = std::fabs(es[j].toDouble());
      double prev = std::fabs(es[j - 1].toDouble());
      double next = j + 1 < kGrid ? std::fabs(es[j + 1].toDouble()) : -1.0;
      if (ej >= prev && ej >= next) {
        Real z = zs[j];
        if (j + 1 < kGrid) z = refineExtremum(pb, c, zs[j - 1], zs[j + 1], es[j].toDouble() < 0 ? -1.0 : 1.0);
        exZ.push_back(z);
        exE.push_back(weightedError(pb, c, z));
      }
    }
    // Keep one extremum per run of equal signs (the largest), then trim to n.
    std::vector<Real> altZ, altE;
    for (std::size_t i = 0; i < exZ.size(); ++i) {
      bool neg = exE[i].toDouble() < 0;
      if (!altE.empty() && (altE.back().toDouble() < 0) == neg) {
        if (absR(altE.back()) < absR(exE[i])) {
          altZ.back() = exZ[i];
          altE.back() = exE[i];
        }
      } else {
        altZ.push_back(exZ[i]);
        altE.push_back(exE[i]);
      }
    }
    while (static_cast<int>(altZ.size()) > n) {
      if (absR(altE.front()) < absR(altE.back())) {
        altZ.erase(altZ.begin());
        altE.erase(altE.begin());
      } else {
        altZ.pop_back();
        altE.pop_back();
      }
    }
    maxErr = 0.0;
    for (const Real& e : altE) maxErr = std::fmax(maxErr, std::fabs(e.toDouble()));
    if (static_cast<int>(altZ.size()) < n) break;  // cannot exchange further; keep what we have
    ref = altZ;
    if (maxErr - levelled < 1e-4 * maxErr) break;
  }
  return {c, maxErr};
}

/// Max weighted error of the coefficients once rounded to double (what the code uses).
double roundedError(Problem pb, const std::vector<double>& cd) {
  pb.fixed.clear();
  std::vector<Real> c(cd.begin(), cd.end());
  double worst = 0.0;
  for (int j = 0; j <= 20000; ++j) {
    Real z = pb.zMax * Real(j / 20000.0);
    worst = std::fmax(worst, std::fabs(weightedError(pb, c, z).toDouble()));
  }
  return worst;
}

/// Remez, then rounds the coefficients to double one at a time from the constant term
/// up, re-optimising the remaining ones after each rounding so that they absorb its
/// error (rounding them all at once loses several bits on the double kernels).
void emitPolynomial(Problem pb) {
  auto [c, err] = remez(pb);
  while (static_cast<int>(pb.fixed.size()) < pb.degree) {
    auto [cf, errf] = remez(pb);
    pb.fixed.push_back(cf.front().toDouble());
  }
  auto [cl, errl] = remez(pb);
  pb.fixed.push_back(cl.front().toDouble());
  std::vector<double> cd = pb.fixed;
  double rerr = roundedError(pb, cd);
  std::printf("// %s: degree %d in z on [0, %a]; relative error 2^%.1f (2^%.1f with double coefficients)\n",
              pb.name.c_str(), pb.degree, pb.zMax, std::log2(err), std::log2(rerr));  // detmath-ok: offline table generator, never linked into the engine
  std::printf("{");
  for (std::size_t i = 0; i < cd.size(); ++i) std::printf("%s%a", i ? ", " : "", cd[i]);
  std::printf("}\n");
}

void emitTwoOverPi() {
  // 2/pi = 0.1010 0010 1111 1001 ...: 40 words of 32 bits after the binary point.
  mpfr_t t;
  mpfr_init2(t, 1600);
  mpfr_const_pi(t, MPFR_RNDN);
  mpfr_ui_div(t, 2, t, MPFR_RNDN);
  std::printf("// 2/pi, 32 bits per word, most significant first (bits 1..1280 after the point)\n");
  for (int i = 0; i < 40; ++i) {
    mpfr_mul_2ui(t, t, 32, MPFR_RNDN);
    unsigned long w = mpfr_get_ui(t, MPFR_RNDZ);
    mpfr_sub_ui(t, t, w, MPFR_RNDN);
    std::printf("0x%08lxu,%s", w, (i % 6 == 5) ? "\n" : " ");
  }
  std::printf("\n");
  mpfr_clear(t);
}

void emitPiPieces() {
  Real pio2 = ldexpR(piR(), -1);
  // Double reduction: three 33-bit pieces (k * piece exact for k < 2^20) and a 53-bit tail.
  Real p1 = roundBits(pio2, 33);
  Real p2 = roundBits(pio2 - p1, 33);
  Real p3 = roundBits(pio2 - p1 - p2, 33);
  Real p4 = roundBits(pio2 - p1 - p2 - p3, 53);
  std::printf("pi/2 pieces (33, 33, 33, 53 bits): %a %a %a %a\n", p1.toDouble(), p2.toDouble(), p3.toDouble(),
              p4.toDouble());
  Real b2 = roundBits(pio2 - p1, 53);
  std::printf("float reduction second piece (53 bits): %a\n", b2.toDouble());
  Real hi = roundBits(pio2, 53);
  std::printf("pi/2 = %a + %a\n", hi.toDouble(), (pio2 - hi).toDouble());
  Real pi = piR();
  Real phi = roundBits(pi, 53);
  std::printf("pi = %a + %a\n", phi.toDouble(), (pi - phi).toDouble());
  std::printf("2/pi = %a\n", (Real(2.0) / pi).toDouble());
  std::printf("pi/4 = %a (float %a), 3pi/4 = %a (float %a)\n", ldexpR(pi, -2).toDouble(),
              static_cast<double>(static_cast<float>(ldexpR(pi, -2).toDouble())),
              (Real(3.0) * ldexpR(pi, -2)).toDouble(), static_cast<double>(roundBits(Real(3.0) * ldexpR(pi, -2), 24).toDouble()));
  std::printf("pi/2 float %a, pi float %a\n", roundBits(pio2, 24).toDouble(), roundBits(pi, 24).toDouble());
  Real sixth = Real(1.0) / Real(6.0);
  Real s6 = roundBits(sixth, 53);
  std::printf("1/6 = %a + %a\n", s6.toDouble(), (sixth - s6).toDouble());
}

void emitAtanTable() {
  // Entry 8*(e+4)+j is atan(c) for c = 2^e (1 + (2j+1)/16), the centre of the j-th
  // eighth of the binade [2^e, 2^(e+1)), e = -4..4.
  std::printf("// atan(c) as hi, lo\n");
  double worstU = 0.0;
  for (int e = -4; e <= 4; ++e) {
    for (int j = 0; j < 8; ++j) {
      double c = std::ldexp(1.0 + (2 * j + 1) / 16.0, e);
      Real a = atanR(Real(c));
      Real hi = roundBits(a, 53);
      std::printf("{%a, %a},%s", hi.toDouble(), (a - hi).toDouble(), (j % 2) ? "\n" : " ");
      double lo = std::ldexp(1.0 + j / 8.0, e), up = std::ldexp(1.0 + (j + 1) / 8.0, e);
      worstU = std::fmax(worstU, std::fabs((lo - c) / (1 + lo * c)));
      worstU = std::fmax(worstU, std::fabs((up - c) / (1 + up * c)));
    }
  }
  std::printf("// largest reduced argument |u| in the table range: %a\n", worstU);
}

}  // namespace

int main(int argc, char** argv) {
  std::string only = argc > 1 ? argv[1] : "";
  if (only.empty() || only == "tables") {
    emitTwoOverPi();
    emitPiPieces();
    emitAtanTable();
  }
  const double kPio4Sq = 0.78539816339744831 * 0.78539816339744831 * (1.0 + 1e-6);
  std::vector<Problem> problems = {
      // float kernels, evaluated in double: everything from the first correction term
      {"sinF  (sin = x + x^3 P)", sinSeries(), 1, kPio4Sq, 4, {}},
      {"cosF  (cos = 1 + z P)", cosSeries(), 1, kPio4Sq, 4, {}},
      {"asinF (asin = x + x^3 P)", asinSeries(), 1, 0.25 * (1.0 + 1e-6), 7, {}},
      {"atanF (atan = u + u^3 P)", atanSeries(), 1, 1.0 / 256 * (1.0 + 1e-3), 2, {}},
      // double kernels: leading terms in double-double, P is the tail
      {"sinD  (sin = x - x^3/6 + x^5 P)", sinSeries(), 2, kPio4Sq, 6, {}},
      {"cosD  (cos = 1 - z/2 + z^2 P)", cosSeries(), 2, kPio4Sq, 5, {}},
      {"asinD (asin = x + x^3/6 + x^5 P)", asinSeries(), 2, 0.25 * (1.0 + 1e-6), 12, {}},
      {"atanD (atan = u + u^3 P)", atanSeries(), 1, 1.0 / 256 * (1.0 + 1e-3), 5, {}},
  };
  for (Problem& pb : problems) {
    if (!only.empty() && only != "poly" && pb.name.find(only) == std::string::npos) continue;
    if (argc > 2) pb.degree = std::atoi(argv[2]);
    if (only == "tables") continue;
    emitPolynomial(pb);
  }
  return 0;
}
