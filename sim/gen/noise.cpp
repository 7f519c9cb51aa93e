#include "sim/gen/noise.h"

#include "sim/gen/gen_random.h"

namespace loam::sim {
namespace {

constexpr std::uint64_t kPrimeX = 0x9e3779b97f4a7c15ull;
constexpr std::uint64_t kPrimeY = 0xd1b54a32d192ed03ull;
constexpr std::uint64_t kPrimeZ = 0xc2b2ae3d27d4eb4full;

inline std::uint64_t lattice2(std::uint64_t key, std::int64_t ix, std::int64_t iz) noexcept {
  return genMix64(key ^ (static_cast<std::uint64_t>(ix) * kPrimeX) ^ (static_cast<std::uint64_t>(iz) * kPrimeZ));
}

inline std::uint64_t lattice3(std::uint64_t key, std::int64_t ix, std::int64_t iy, std::int64_t iz) noexcept {
  return genMix64(key ^ (static_cast<std::uint64_t>(ix) * kPrimeX) ^ (static_cast<std::uint64_t>(iy) * kPrimeY) ^
               (static_cast<std::uint64_t>(iz) * kPrimeZ));
}

/// Lattice value in [-1, 1].
inline double latticeValue(std::uint64_t h) noexcept { return genUnit(h) * 2.0 - 1.0; }

inline double lerp(double a, double b, double t) noexcept { return a + (b - a) * t; }

/// Dot product of one of 8 unit gradients (chosen by the hash) with (dx, dz).
inline double gradDot(std::uint64_t h, double dx, double dz) noexcept {
  constexpr double kD = 0.70710678118654752440;
  switch (h >> 61) {
    case 0: return dx;
    case 1: return -dx;
    case 2: return dz;
    case 3: return -dz;
    case 4: return (dx + dz) * kD;
    case 5: return (dx - dz) * kD;
    case 6: return (-dx + dz) * kD;
    default: return (-dx - dz) * kD;
  }
}

inline std::uint64_t octaveKey(std::uint64_t key, int octave) noexcept {
  return genCombine(key, static_cast<std::uint64_t>(octave) + 1);
}

}  // namespace

double valueNoise2(std::uint64_t key, double x, double z) noexcept {
  std::int64_t ix = floorToInt(x), iz = floorToInt(z);
  double fx = x - static_cast<double>(ix), fz = z - static_cast<double>(iz);
  double u = fade(fx), v = fade(fz);
  double a = latticeValue(lattice2(key, ix, iz));
  double b = latticeValue(lattice2(key, ix + 1, iz));
  double c = latticeValue(lattice2(key, ix, iz + 1));
  double d = latticeValue(lattice2(key, ix + 1, iz + 1));
  return lerp(lerp(a, b, u), lerp(c, d, u), v);
}

double gradientNoise2(std::uint64_t key, double x, double z) noexcept {
  std::int64_t ix = floorToInt(x), iz = floorToInt(z);
  double fx = x - static_cast<double>(ix), fz = z - static_cast<double>(iz);
  double u = fade(fx), v = fade(fz);
  double a = gradDot(lattice2(key, ix, iz), fx, fz);
  double b = gradDot(lattice2(key, ix + 1, iz), fx - 1.0, fz);
  double c = gradDot(lattice2(key, ix, iz + 1), fx, fz - 1.0);
  double d = gradDot(lattice2(key, ix + 1, iz + 1), fx - 1.0, fz - 1.0);
  // Scaled so the extreme value (sqrt(2)/2 at a cell centre) maps near 1.
  return lerp(lerp(a, b, u), lerp(c, d, u), v) * 1.41421356237309504880;
}

double valueNoise3(std::uint64_t key, double x, double y, double z) noexcept {
  std::int64_t ix = floorToInt(x), iy = floorToInt(y), iz = floorToInt(z);
  double fx = x - static_cast<double>(ix), fy = y - static_cast<double>(iy), fz = z - static_cast<double>(iz);
  double u = fade(fx), v = fade(fy), w = fade(fz);
  double c000 = latticeValue(lattice3(key, ix, iy, iz));
  double c100 = latticeValue(lattice3(key, ix + 1, iy, iz));
  double c010 = latticeValue(lattice3(key, ix, iy + 1, iz));
  double c110 = latticeValue(lattice3(key, ix + 1, iy + 1, iz));
  double c001 = latticeValue(lattice3(key, ix, iy, iz + 1));
  double c101 = latticeValue(lattice3(key, ix + 1, iy, iz + 1));
  double c011 = latticeValue(lattice3(key, ix, iy + 1, iz + 1));
  double c111 = latticeValue(lattice3(key, ix + 1, iy + 1, iz + 1));
  double x00 = lerp(c000, c100, u), x10 = lerp(c010, c110, u);
  double x01 = lerp(c001, c101, u), x11 = lerp(c011, c111, u);
  return lerp(lerp(x00, x10, v), lerp(x01, x11, v), w);
}

double fbm2(std::uint64_t key, double x, double z, const Octaves& octaves) noexcept {
  double sum = 0.0, amp = 1.0, norm = 0.0, f = 1.0;
  for (int o = 0; o < octaves.count; ++o) {
    sum += amp * gradientNoise2(octaveKey(key, o), x * f, z * f);
    norm += amp;
    amp *= octaves.gain;
    f *= octaves.lacunarity;
  }
  return norm > 0.0 ? sum / norm : 0.0;
}

double ridged2(std::uint64_t key, double x, double z, const Octaves& octaves) noexcept {
  double sum = 0.0, amp = 1.0, norm = 0.0, f = 1.0, weight = 1.0;
  for (int o = 0; o < octaves.count; ++o) {
    double n = gradientNoise2(octaveKey(key, o), x * f, z * f);
    double r = 1.0 - (n < 0.0 ? -n : n);
    r = r * r;
    r *= weight;
    weight = r * 2.0;
    if (weight > 1.0) weight = 1.0;
    if (weight < 0.0) weight = 0.0;
    sum += amp * r;
    norm += amp;
    amp *= octaves.gain;
    f *= octaves.lacunarity;
  }
  return norm > 0.0 ? sum / norm : 0.0;
}

double valueFbm2(std::uint64_t key, double x, double z, const Octaves& octaves) noexcept {
  double sum = 0.0, amp = 1.0, norm = 0.0, f = 1.0;
  for (int o = 0; o < octaves.count; ++o) {
    sum += amp * valueNoise2(octaveKey(key, o), x * f, z * f);
    norm += amp;
    amp *= octaves.gain;
    f *= octaves.lacunarity;
  }
  return norm > 0.0 ? sum / norm : 0.0;
}

}  // namespace loam::sim
