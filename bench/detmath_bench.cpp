// detmath against glibc: time per call of every detmath function, float and double.
//
// Each benchmark evaluates one function over a fixed array of kInputs realistic
// arguments (generated once, before timing, from a fixed seed) and reports items
// processed, so ns/call = 1e9 / items_per_second. The calls are independent, so this
// measures throughput, not latency; loam and glibc get the same arrays and the same
// loop. Names line up in pairs: `sin/f32/loam` next to `sin/f32/glibc`.
// scripts/bench-detmath runs this and prints the loam/glibc table.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "detmath/detmath.h"

namespace dm = loam::dm;

namespace {

constexpr std::size_t kInputs = 4096;

/// Argument range of one function: uniform in [lo, hi] (per argument for binary ones).
struct Range {
  double lo = 0.0;
  double hi = 1.0;
};

/// Fixed-seed uniform values (SplitMix64), so every run times the same inputs.
template <typename T>
std::vector<T> makeInputs(Range r, std::uint64_t seed) {
  std::vector<T> v(kInputs);
  std::uint64_t s = seed;
  for (T& x : v) {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    double u = static_cast<double>(z >> 11) * 0x1.0p-53;
    x = static_cast<T>(r.lo + (r.hi - r.lo) * u);
  }
  return v;
}

template <typename T>
const char* precisionName() {
  return sizeof(T) == 4 ? "f32" : "f64";
}

template <typename T, typename F>
void registerUnary(const std::string& fn, const char* impl, Range r, std::uint64_t seed, F f) {
  std::string name = fn + "/" + precisionName<T>() + "/" + impl;
  benchmark::RegisterBenchmark(name.c_str(), [in = makeInputs<T>(r, seed), f](benchmark::State& state) {
    for (auto _ : state) {
      for (T x : in) benchmark::DoNotOptimize(f(x));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(in.size()));
  });
}

template <typename T, typename F>
void registerBinary(const std::string& fn, const char* impl, Range rx, Range ry, std::uint64_t seed, F f) {
  std::string name = fn + "/" + precisionName<T>() + "/" + impl;
  benchmark::RegisterBenchmark(
      name.c_str(), [xs = makeInputs<T>(rx, seed), ys = makeInputs<T>(ry, seed ^ 0x5A5A5A5Aull), f](benchmark::State& state) {
        for (auto _ : state) {
          for (std::size_t i = 0; i < xs.size(); ++i) benchmark::DoNotOptimize(f(xs[i], ys[i]));
        }
        state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(xs.size()));
      });
}

/// glibc's sincos where it exists (a GNU extension); elsewhere the two calls it replaces.
template <typename T>
void platformSincos(T x, T* s, T* c) {
#if defined(__GLIBC__)
  if constexpr (sizeof(T) == 4) {
    ::sincosf(x, s, c);
  } else {
    ::sincos(x, s, c);
  }
#else
  *s = std::sin(x);
  *c = std::cos(x);
#endif
}

/// One unary function in one precision, loam and glibc on the same inputs.
template <typename T, typename Loam, typename Glibc>
void unaryPair(const char* fn, Range r, std::uint64_t seed, Loam loam, Glibc glibc) {
  registerUnary<T>(fn, "loam", r, seed, loam);
  registerUnary<T>(fn, "glibc", r, seed, glibc);
}

template <typename T, typename Loam, typename Glibc>
void binaryPair(const char* fn, Range rx, Range ry, std::uint64_t seed, Loam loam, Glibc glibc) {
  registerBinary<T>(fn, "loam", rx, ry, seed, loam);
  registerBinary<T>(fn, "glibc", rx, ry, seed, glibc);
}

template <typename T>
void registerAll() {
  // Lambdas pick the overload for T (both names are overload sets) and are passed by
  // type, not as function pointers, so each side is called as user code would call it:
  // detmath out of line, std:: inlined where the compiler does so (sqrt).
  std::uint64_t seed = sizeof(T) == 4 ? 0xF32000 : 0xF64000;
  auto next = [&seed] { return ++seed; };
  unaryPair<T>("sqrt", {0.0, 1e4}, next(), [](T x) noexcept { return dm::sqrt(x); }, [](T x) { return std::sqrt(x); });
  unaryPair<T>("floor", {-1e4, 1e4}, next(), [](T x) noexcept { return dm::floor(x); }, [](T x) { return std::floor(x); });
  unaryPair<T>("ceil", {-1e4, 1e4}, next(), [](T x) noexcept { return dm::ceil(x); }, [](T x) { return std::ceil(x); });
  unaryPair<T>("round", {-1e4, 1e4}, next(), [](T x) noexcept { return dm::round(x); }, [](T x) { return std::round(x); });
  unaryPair<T>("trunc", {-1e4, 1e4}, next(), [](T x) noexcept { return dm::trunc(x); }, [](T x) { return std::trunc(x); });
  unaryPair<T>("sin", {-10.0, 10.0}, next(), [](T x) noexcept { return dm::sin(x); }, [](T x) { return std::sin(x); });
  unaryPair<T>("cos", {-10.0, 10.0}, next(), [](T x) noexcept { return dm::cos(x); }, [](T x) { return std::cos(x); });
  unaryPair<T>("tan", {-10.0, 10.0}, next(), [](T x) noexcept { return dm::tan(x); }, [](T x) { return std::tan(x); });
  {
    // sincos returns through pointers: time the pair, keep both results alive.
    std::uint64_t s = next();
    registerUnary<T>("sincos", "loam", {-10.0, 10.0}, s, [](T x) noexcept {
      T sv, cv;
      dm::sincos(x, &sv, &cv);
      return sv + cv;
    });
    registerUnary<T>("sincos", "glibc", {-10.0, 10.0}, s, [](T x) {
      T sv, cv;
      platformSincos(x, &sv, &cv);
      return sv + cv;
    });
  }
  unaryPair<T>("asin", {-1.0, 1.0}, next(), [](T x) noexcept { return dm::asin(x); }, [](T x) { return std::asin(x); });
  unaryPair<T>("acos", {-1.0, 1.0}, next(), [](T x) noexcept { return dm::acos(x); }, [](T x) { return std::acos(x); });
  unaryPair<T>("atan", {-10.0, 10.0}, next(), [](T x) noexcept { return dm::atan(x); }, [](T x) { return std::atan(x); });
  binaryPair<T>("atan2", {-100.0, 100.0}, {-100.0, 100.0}, next(), [](T y, T x) noexcept { return dm::atan2(y, x); },
                [](T y, T x) { return std::atan2(y, x); });
  unaryPair<T>("exp", {-20.0, 20.0}, next(), [](T x) noexcept { return dm::exp(x); }, [](T x) { return std::exp(x); });
  unaryPair<T>("exp2", {-30.0, 30.0}, next(), [](T x) noexcept { return dm::exp2(x); }, [](T x) { return std::exp2(x); });
  unaryPair<T>("expm1", {-5.0, 5.0}, next(), [](T x) noexcept { return dm::expm1(x); }, [](T x) { return std::expm1(x); });
  unaryPair<T>("log", {1e-3, 1e4}, next(), [](T x) noexcept { return dm::log(x); }, [](T x) { return std::log(x); });
  unaryPair<T>("log2", {1e-3, 1e4}, next(), [](T x) noexcept { return dm::log2(x); }, [](T x) { return std::log2(x); });
  unaryPair<T>("log10", {1e-3, 1e4}, next(), [](T x) noexcept { return dm::log10(x); }, [](T x) { return std::log10(x); });
  unaryPair<T>("log1p", {-0.5, 10.0}, next(), [](T x) noexcept { return dm::log1p(x); }, [](T x) { return std::log1p(x); });
  binaryPair<T>("pow", {0.1, 10.0}, {-5.0, 5.0}, next(), [](T x, T y) noexcept { return dm::pow(x, y); },
                [](T x, T y) { return std::pow(x, y); });
  unaryPair<T>("sinh", {-10.0, 10.0}, next(), [](T x) noexcept { return dm::sinh(x); }, [](T x) { return std::sinh(x); });
  unaryPair<T>("cosh", {-10.0, 10.0}, next(), [](T x) noexcept { return dm::cosh(x); }, [](T x) { return std::cosh(x); });
  unaryPair<T>("tanh", {-5.0, 5.0}, next(), [](T x) noexcept { return dm::tanh(x); }, [](T x) { return std::tanh(x); });
  unaryPair<T>("cbrt", {-1e4, 1e4}, next(), [](T x) noexcept { return dm::cbrt(x); }, [](T x) { return std::cbrt(x); });
  binaryPair<T>("hypot", {-1e4, 1e4}, {-1e4, 1e4}, next(), [](T x, T y) noexcept { return dm::hypot(x, y); },
                [](T x, T y) { return std::hypot(x, y); });
  binaryPair<T>("fmod", {-1000.0, 1000.0}, {0.1, 10.0}, next(), [](T x, T y) noexcept { return dm::fmod(x, y); },
                [](T x, T y) { return std::fmod(x, y); });
}

}  // namespace

int main(int argc, char** argv) {
  registerAll<float>();
  registerAll<double>();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
