#include "detmath/digest.h"

#include <xxhash.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "detmath/detmath.h"

namespace loam::dm {
namespace {

// Fixed input generator (SplitMix64): the digest's inputs must never change, or the
// golden changes with them.
struct Inputs {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

template <typename T>
std::vector<T> specials() {
  using L = std::numeric_limits<T>;
  return {T(0),        -T(0),        T(1),         T(-1),       T(0.5),        T(-0.5),     T(2),
          T(-2),       L::infinity(), -L::infinity(), L::quiet_NaN(), L::min(),    -L::min(),   L::denorm_min(),
          -L::denorm_min(), L::max(), -L::max(),    kPiF,         T(1e30),     T(-1e30),      T(88.7),     T(-103.9),
          T(709.7),    T(-745.1),    T(1e-8),       T(3),         T(0.75),       T(10),       T(100)};
}

// Half the inputs anywhere in the finite range (random bit patterns), half in
// [-range, range] where the engine actually evaluates these functions.
template <typename T>
std::vector<T> inputsFor(std::uint64_t key, int n, T range) {
  std::vector<T> v = specials<T>();
  Inputs g{key};
  while (static_cast<int>(v.size()) < n) {
    std::uint64_t r = g.next();
    T x;
    if (v.size() % 2 == 0) {
      if constexpr (sizeof(T) == 4) {
        x = std::bit_cast<float>(static_cast<std::uint32_t>(r));
      } else {
        x = std::bit_cast<double>(r);
      }
      if (!std::isfinite(x)) continue;
    } else {
      double u = static_cast<double>(r >> 11) * 0x1.0p-53;  // [0, 1)
      x = static_cast<T>((2.0 * u - 1.0) * static_cast<double>(range));
    }
    v.push_back(x);
  }
  return v;
}

template <typename T>
void hashValue(XXH3_state_t* s, T y) {
  if (std::isnan(y)) y = std::numeric_limits<T>::quiet_NaN();
  auto bits = std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(y);
  if (std::isnan(y)) bits = sizeof(T) == 4 ? 0x7FC00000u : 0x7FF8000000000000ull;
  XXH3_64bits_update(s, &bits, sizeof bits);
}

template <typename T>
void hashValue(XXH3_state_t* s, std::pair<T, T> y) {
  hashValue(s, y.first);
  hashValue(s, y.second);
}

template <typename T, typename F>
std::uint64_t hashUnary(std::uint64_t key, int n, T range, F f) {
  XXH3_state_t* s = XXH3_createState();
  XXH3_64bits_reset(s);
  for (T x : inputsFor<T>(key, n, range)) hashValue(s, f(x));
  std::uint64_t h = XXH3_64bits_digest(s);
  XXH3_freeState(s);
  return h;
}

template <typename T, typename F>
std::uint64_t hashBinary(std::uint64_t key, int n, T range, F f) {
  XXH3_state_t* s = XXH3_createState();
  XXH3_64bits_reset(s);
  std::vector<T> xs = inputsFor<T>(key, n, range);
  std::vector<T> ys = inputsFor<T>(key ^ 0xA5A5A5A5ull, n, range);
  std::vector<T> sp = specials<T>();
  // Every pair of special values first (pow's and atan2's Annex F table), then pairs.
  for (T x : sp)
    for (T y : sp) hashValue(s, f(x, y));
  for (std::size_t i = 0; i < xs.size(); ++i) hashValue(s, f(xs[i], ys[i]));
  std::uint64_t h = XXH3_64bits_digest(s);
  XXH3_freeState(s);
  return h;
}

using UnaryF = float (*)(float) noexcept;
using UnaryD = double (*)(double) noexcept;
using BinaryF = float (*)(float, float) noexcept;
using BinaryD = double (*)(double, double) noexcept;

struct UnaryEntry {
  const char* name;
  UnaryF f;
  UnaryD d;
  double range;  // half the inputs are drawn from [-range, range]
};
struct BinaryEntry {
  const char* name;
  BinaryF f;
  BinaryD d;
  double range;
};

// The digest's fixed order. Append only: reordering or editing changes the golden.
constexpr UnaryEntry kUnary[] = {
    {"sqrt", sqrt, sqrt, 1e6},   {"floor", floor, floor, 1e6}, {"ceil", ceil, ceil, 1e6},
    {"round", round, round, 1e6}, {"trunc", trunc, trunc, 1e6}, {"sin", sin, sin, 100.0},
    {"cos", cos, cos, 100.0},    {"tan", tan, tan, 100.0},    {"asin", asin, asin, 1.0},
    {"acos", acos, acos, 1.0},   {"atan", atan, atan, 100.0}, {"exp", exp, exp, 80.0},
    {"exp2", exp2, exp2, 120.0}, {"expm1", expm1, expm1, 80.0}, {"log", log, log, 1e6},
    {"log2", log2, log2, 1e6},   {"log10", log10, log10, 1e6}, {"log1p", log1p, log1p, 1e6},
    {"sinh", sinh, sinh, 80.0},  {"cosh", cosh, cosh, 80.0},  {"tanh", tanh, tanh, 20.0},
    {"cbrt", cbrt, cbrt, 1e6},
};
constexpr BinaryEntry kBinary[] = {
    {"atan2", atan2, atan2, 100.0},
    {"pow", pow, pow, 20.0},
    {"hypot", hypot, hypot, 1e6},
    {"fmod", fmod, fmod, 1e6},
};

}  // namespace

void detmathDigestPerFunction(const std::function<void(std::string_view, std::uint64_t)>& visit, int n) {
  std::uint64_t key = 1;
  for (const UnaryEntry& e : kUnary) {
    visit(std::string(e.name) + "f", hashUnary<float>(key++, n, static_cast<float>(e.range), e.f));
    visit(e.name, hashUnary<double>(key++, n, e.range, e.d));
  }
  // sincos: both outputs of every input.
  visit("sincosf", hashUnary<float>(key++, n, 100.0f, [](float x) {
          float s, c;
          sincos(x, &s, &c);
          return std::pair{s, c};
        }));
  visit("sincos", hashUnary<double>(key++, n, 100.0, [](double x) {
          double s, c;
          sincos(x, &s, &c);
          return std::pair{s, c};
        }));
  for (const BinaryEntry& e : kBinary) {
    visit(std::string(e.name) + "f", hashBinary<float>(key++, n, static_cast<float>(e.range), e.f));
    visit(e.name, hashBinary<double>(key++, n, e.range, e.d));
  }
}

std::uint64_t detmathDigest(int n) {
  XXH3_state_t* s = XXH3_createState();
  XXH3_64bits_reset(s);
  detmathDigestPerFunction(
      [s](std::string_view name, std::uint64_t h) {
        XXH3_64bits_update(s, name.data(), name.size());
        XXH3_64bits_update(s, &h, sizeof h);
      },
      n);
  std::uint64_t h = XXH3_64bits_digest(s);
  XXH3_freeState(s);
  return h;
}

}  // namespace loam::dm
