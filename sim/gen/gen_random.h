// Keyed randomness for world generation: every draw is a pure function of
// (seed, purpose, stable feature id, index). There is no sequential generator, so
// adding a feature never moves another one and the result cannot depend on the order
// chunks are built in or on threads. (The simulation's per-tick draws live in
// sim/core/keyed_random.h; this file is separate so generation bytes never change when the
// simulation's hash does.)
#pragma once

#include <cstdint>

namespace loam::sim {

/// What a generation draw is for. Values are part of the generator version: never
/// renumber, only append.
enum class GenPurpose : std::uint32_t {
  TerrainNoise = 1,  ///< lattice values of terrain height noise (per layer)
  BiomeNoise = 2,    ///< lattice values of biome mask noise (per biome)
  ScatterPlace = 3,  ///< whether and where a scatter feature sits in its grid cell
  ScatterShape = 4,  ///< sizes and leaf-cluster layout of one scatter feature
  VoxelDither = 5,   ///< per-voxel choices (leaf sparsity, grass blades)
  CaveNoise = 6,     ///< roughness of cave walls
  ChunkOrder = 7,    ///< shuffled chunk order in tests (never reaches the world)
  LandscapeNoise = 8,  ///< lattice values of landscape height noise (per layer)
  RiverMeander = 9,    ///< how far a river's point moves from its plan node
  BiomeEdge = 10,      ///< the noise that dithers biome limits
  Settlement = 11,     ///< a settlement's site score, materials and building lots
};

/// 64-bit finaliser (splitmix64's): a bijection with full avalanche. Integer only.
constexpr std::uint64_t genMix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

/// Folds one more word into a running key.
constexpr std::uint64_t genCombine(std::uint64_t h, std::uint64_t v) noexcept {
  return genMix64(h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)));
}

/// The keyed hash: hash(seed, purpose, a, b, c, d). Ids are signed grid coordinates,
/// rule indices and draw indices; unused slots are 0.
constexpr std::uint64_t genHash(std::uint64_t seed, GenPurpose purpose, std::int64_t a, std::int64_t b = 0,
                                std::int64_t c = 0, std::int64_t d = 0) noexcept {
  std::uint64_t h = genMix64(seed ^ 0x4c6f616d57676e31ull);  // "LoamWgn1"
  h = genCombine(h, static_cast<std::uint64_t>(purpose));
  h = genCombine(h, static_cast<std::uint64_t>(a));
  h = genCombine(h, static_cast<std::uint64_t>(b));
  h = genCombine(h, static_cast<std::uint64_t>(c));
  h = genCombine(h, static_cast<std::uint64_t>(d));
  return h;
}

/// A hash turned into a double in [0, 1): the top 53 bits times 2^-53 (exact).
constexpr double genUnit(std::uint64_t h) noexcept {
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

/// Uniform double in [lo, hi) from a hash.
constexpr double genRange(std::uint64_t h, double lo, double hi) noexcept { return lo + (hi - lo) * genUnit(h); }

}  // namespace loam::sim
