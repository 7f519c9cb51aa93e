// detmath: bit-reproducible elementary functions for Loam.
//
// Every function here is written from IEEE-754 basic operations only (+ - * / and
// sqrt, which are correctly rounded on every platform), evaluated in a fixed order,
// with no call into the platform libm, no FMA, no long double and no run-time CPU
// dispatch. The same input therefore gives the same bits on every compiler,
// optimisation level, CPU architecture and operating system, provided the project's
// flags are used (-ffp-contract=off, never fast-math, SSE2 on x86).
//
// Accuracy: every function is within 1 ulp of the correctly rounded result (see
// docs/PERF.md for the measured maximum per function). IEEE special cases (+-0,
// +-inf, NaN, subnormals) follow C23 Annex F. All functions are pure, thread-safe,
// noexcept and never allocate.
#pragma once

namespace loam::dm {

// ---- exact operations (may wrap the hardware instruction; IEEE requires exactness) ----
/// Correctly rounded square root; NaN for x < 0, -0 for -0.
float sqrt(float x) noexcept;
double sqrt(double x) noexcept;
/// Largest integral value not greater than x.
float floor(float x) noexcept;
double floor(double x) noexcept;
/// Smallest integral value not less than x.
float ceil(float x) noexcept;
double ceil(double x) noexcept;
/// Nearest integral value, halfway cases away from zero (as C round()).
float round(float x) noexcept;
double round(double x) noexcept;
/// Integral value nearest to x not larger in magnitude.
float trunc(float x) noexcept;
double trunc(double x) noexcept;

// ---- trigonometric (radians) ----
/// Sine; exact range reduction for any finite x (sin(1e30f) is right). NaN for +-inf.
float sin(float x) noexcept;
double sin(double x) noexcept;
/// Cosine; exact range reduction for any finite x. NaN for +-inf.
float cos(float x) noexcept;
double cos(double x) noexcept;
/// Tangent; exact range reduction for any finite x. NaN for +-inf.
float tan(float x) noexcept;
double tan(double x) noexcept;
/// Sine and cosine together, sharing one range reduction; same bits as sin() and cos().
void sincos(float x, float* outSin, float* outCos) noexcept;
void sincos(double x, double* outSin, double* outCos) noexcept;
/// Arc sine in [-pi/2, pi/2]; NaN for |x| > 1.
float asin(float x) noexcept;
double asin(double x) noexcept;
/// Arc cosine in [0, pi]; NaN for |x| > 1.
float acos(float x) noexcept;
double acos(double x) noexcept;
/// Arc tangent in [-pi/2, pi/2].
float atan(float x) noexcept;
double atan(double x) noexcept;
/// Angle of (x, y) in [-pi, pi], with every quadrant and signed-zero case of Annex F.
float atan2(float y, float x) noexcept;
double atan2(double y, double x) noexcept;

// ---- exponential and logarithmic ----
/// e^x; overflows to +inf, underflows through subnormals to +0.
float exp(float x) noexcept;
double exp(double x) noexcept;
/// 2^x.
float exp2(float x) noexcept;
double exp2(double x) noexcept;
/// e^x - 1, accurate for small x.
float expm1(float x) noexcept;
double expm1(double x) noexcept;
/// Natural logarithm; -inf for +-0, NaN for x < 0.
float log(float x) noexcept;
double log(double x) noexcept;
/// Base-2 logarithm; exact for powers of two.
float log2(float x) noexcept;
double log2(double x) noexcept;
/// Base-10 logarithm.
float log10(float x) noexcept;
double log10(double x) noexcept;
/// log(1 + x), accurate for small x; -inf at -1, NaN below.
float log1p(float x) noexcept;
double log1p(double x) noexcept;
/// x^y with every special case of C23 Annex F (pow(-1, +-inf) = 1, pow(x, +-0) = 1, ...).
float pow(float x, float y) noexcept;
double pow(double x, double y) noexcept;

// ---- hyperbolic ----
float sinh(float x) noexcept;
double sinh(double x) noexcept;
float cosh(float x) noexcept;
double cosh(double x) noexcept;
float tanh(float x) noexcept;
double tanh(double x) noexcept;

// ---- other ----
/// Real cube root; cbrt(-8) = -2.
float cbrt(float x) noexcept;
double cbrt(double x) noexcept;
/// sqrt(x*x + y*y) without undue overflow or underflow; +inf if either is inf, even with NaN.
float hypot(float x, float y) noexcept;
double hypot(double x, double y) noexcept;
/// Remainder of x / y with the sign of x; exact (IEEE fmod is always exact).
float fmod(float x, float y) noexcept;
double fmod(double x, double y) noexcept;

/// pi rounded to the format.
inline constexpr float kPiF = 3.14159265358979323846f;
inline constexpr double kPi = 3.14159265358979323846;

}  // namespace loam::dm
