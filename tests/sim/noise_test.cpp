// Noise: ranges, continuity, lattice zeros, independence of keys, and bit-exact
// values pinned so a change to the noise (which changes every world) is noticed.
#include "sim/gen/noise.h"

#include <doctest/doctest.h>

#include <cstring>

#include "sim/gen/gen_random.h"

using namespace loam::sim;

TEST_CASE("floorToInt") {
  CHECK(floorToInt(0.0) == 0);
  CHECK(floorToInt(0.5) == 0);
  CHECK(floorToInt(-0.5) == -1);
  CHECK(floorToInt(-1.0) == -1);
  CHECK(floorToInt(3.999) == 3);
  CHECK(floorToInt(-1e12 - 0.5) == -1000000000001);
}

TEST_CASE("noise stays in range and is continuous") {
  Octaves o{5, 2.0, 0.5};
  double lo = 1e9, hi = -1e9;
  for (int i = 0; i < 20000; ++i) {
    double x = genRange(genHash(1, GenPurpose::TerrainNoise, i, 0), -100.0, 100.0);
    double z = genRange(genHash(1, GenPurpose::TerrainNoise, i, 1), -100.0, 100.0);
    double v = valueNoise2(7, x, z), g = gradientNoise2(7, x, z), f = fbm2(7, x, z, o), r = ridged2(7, x, z, o);
    double v3 = valueNoise3(7, x, z, x - z);
    CHECK(v >= -1.0);
    CHECK(v <= 1.0);
    CHECK(v3 >= -1.0);
    CHECK(v3 <= 1.0);
    CHECK(g >= -1.01);
    CHECK(g <= 1.01);
    CHECK(r >= 0.0);
    CHECK(r <= 1.0);
    lo = f < lo ? f : lo;
    hi = f > hi ? f : hi;
    // Continuity: a tiny step changes the value a little.
    CHECK(gradientNoise2(7, x + 1e-6, z) - g < 1e-4);
    CHECK(g - gradientNoise2(7, x + 1e-6, z) < 1e-4);
  }
  CHECK(lo > -1.0);
  CHECK(hi < 1.0);
  CHECK(hi - lo > 0.8);  // not degenerate
}

TEST_CASE("gradient noise is zero on the lattice; keys give independent fields") {
  for (int i = -5; i <= 5; ++i) CHECK(gradientNoise2(3, i, 2 * i) == 0.0);
  int differ = 0;
  for (int i = 0; i < 100; ++i) differ += valueNoise2(1, i * 0.37, i * 0.11) != valueNoise2(2, i * 0.37, i * 0.11);
  CHECK(differ > 95);
}

TEST_CASE("noise values are pinned (a change here changes every world: bump kGeneratorVersion)") {
  auto bits = [](double d) {
    std::uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
  };
  Octaves o{4, 2.0, 0.5};
  // Printed on mismatch so a deliberate change can update them.
  std::uint64_t got[4] = {bits(valueNoise2(42, 1.25, -3.5)), bits(gradientNoise2(42, 1.25, -3.5)),
                          bits(fbm2(42, 10.1, 7.3, o)), bits(ridged2(42, 10.1, 7.3, o))};
  MESSAGE("noise bits: " << got[0] << " " << got[1] << " " << got[2] << " " << got[3]);
  CHECK(genHash(1, GenPurpose::ScatterPlace, 2, 3, 4, 5) == genHash(1, GenPurpose::ScatterPlace, 2, 3, 4, 5));
  CHECK(genHash(1, GenPurpose::ScatterPlace, 2, 3, 4, 5) != genHash(1, GenPurpose::ScatterShape, 2, 3, 4, 5));
  static constexpr std::uint64_t kPinned[4] = {13821821533146231424ull, 4588262517708043305ull,
                                               13814337234466161090ull, 4603921174460051248ull};
  for (int i = 0; i < 4; ++i) CHECK(got[i] == kPinned[i]);
}
