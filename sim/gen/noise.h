// Deterministic coherent noise for world generation: value and gradient noise on an
// integer lattice hashed with gen_random.h, quintic interpolation, fBm and ridged
// sums. Only + - * / and integer conversion are used, so with the project's flags
// (-ffp-contract=off, SSE2) every platform gets the same bits. All functions are
// pure, thread-safe, noexcept and never allocate.
#pragma once

#include <cstdint>

namespace loam::sim {

/// Largest integer not greater than x, for |x| < 2^62 (exact: truncation + compare).
inline std::int64_t floorToInt(double x) noexcept {
  auto i = static_cast<std::int64_t>(x);
  return (x < static_cast<double>(i)) ? i - 1 : i;
}

/// Quintic fade 6t^5 - 15t^4 + 10t^3: C2-continuous interpolation weight for t in [0, 1].
inline double fade(double t) noexcept { return t * t * t * (t * (t * 6.0 - 15.0) + 10.0); }

/// Smooth step 3t^2 - 2t^3 of t clamped to [0, 1].
inline double smoothStep(double t) noexcept {
  if (t <= 0.0) return 0.0;
  if (t >= 1.0) return 1.0;
  return t * t * (3.0 - 2.0 * t);
}

/// 2-D value noise in [-1, 1] at (x, z) lattice units; key selects an independent field.
double valueNoise2(std::uint64_t key, double x, double z) noexcept;

/// 2-D gradient (Perlin-style) noise, roughly in [-1, 1], 0 at lattice points.
double gradientNoise2(std::uint64_t key, double x, double z) noexcept;

/// 3-D value noise in [-1, 1].
double valueNoise3(std::uint64_t key, double x, double y, double z) noexcept;

/// How octaves of noise are summed.
struct Octaves {
  int count = 1;            ///< number of octaves (1..12)
  double lacunarity = 2.0;  ///< frequency multiplier per octave
  double gain = 0.5;        ///< amplitude multiplier per octave
};

/// Fractal sum of gradient noise, normalised so the result stays roughly in [-1, 1].
/// x and z are in lattice units of the first octave.
double fbm2(std::uint64_t key, double x, double z, const Octaves& octaves) noexcept;

/// Ridged fractal sum: each octave is (1 - |n|)^2, weighted by the previous octave, so
/// sharp crests form along the zero lines of the noise. Result roughly in [0, 1].
double ridged2(std::uint64_t key, double x, double z, const Octaves& octaves) noexcept;

/// Fractal sum of 2-D value noise, normalised to roughly [-1, 1] (cheaper, blockier;
/// used for masks).
double valueFbm2(std::uint64_t key, double x, double z, const Octaves& octaves) noexcept;

}  // namespace loam::sim
