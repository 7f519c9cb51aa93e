// Keyed randomness: every random draw in the simulation is a pure hash of
// (world seed, purpose, tick, stable id, index). There is no sequential generator
// anywhere in state-affecting code, so the order in which systems, cells or threads
// draw numbers can never change a result (DESIGN.md, "The determinism contract").
//
// Usage: `keyedUnit({seed, RandomPurpose::FireSpread, tick, cellId, neighbour})`.
// Pick a stable id that names the thing drawing (a packed cell coordinate, an
// animal id, a player id) and an index that distinguishes draws for the same thing
// in the same tick.
#pragma once

#include <cstdint>

namespace loam::sim {

/// What a random draw is for. Each consumer owns its values; two purposes never
/// share a stream even with equal ids. Append new values; never renumber (that
/// would change every golden trace hash).
enum class RandomPurpose : std::uint32_t {
  Test = 0,            ///< tests only
  WaterSpread = 1,     ///< water: tie-breaks between equal neighbours
  FireIgnite = 2,      ///< fire: ignition of a neighbour cell
  FireBurn = 3,        ///< fire: burn-out / consumption timing
  FireSpread = 4,      ///< fire: heat transfer jitter
  WeatherGust = 5,     ///< weather: gust timing and strength
  WeatherRain = 6,     ///< weather: rain drops / wetting
  AnimalWander = 7,    ///< animals: goal choice
  AnimalCall = 8,      ///< animals: when to call
  AnimalSpawn = 9,     ///< animals: initial placement at dens
  Dig = 10,            ///< digging: debris / fracture sizes
  Motion = 11,         ///< player motion (footstep variation)
  Script = 12,         ///< scripted commands (bots)
  FirstFree = 64,      ///< later systems start here
};

/// The key of one draw. Plain data; every field takes part in the hash.
struct RandomKey {
  std::uint64_t seed = 0;                          ///< world seed
  RandomPurpose purpose = RandomPurpose::Test;     ///< consumer
  std::uint64_t tick = 0;                          ///< simulation tick (0 for tick-free draws)
  std::uint64_t id = 0;                            ///< stable id of the drawer (cell, animal, player)
  std::uint32_t index = 0;                         ///< draw number for this (purpose, tick, id)
};

namespace detail {
/// A strong 64-bit finaliser (the "moremur" constants). Bijective.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 27;
  x *= 0x3C79AC492BA7B653ULL;
  x ^= x >> 33;
  x *= 0x1C69B3F74AC4AE35ULL;
  x ^= x >> 27;
  return x;
}
}  // namespace detail

/// 64 uniformly distributed bits for key. Pure, constexpr, no allocation, any thread.
constexpr std::uint64_t keyedHash(const RandomKey& k) noexcept {
  std::uint64_t h = detail::mix64(k.seed ^ 0x9E3779B97F4A7C15ULL);
  h = detail::mix64(h ^ (static_cast<std::uint64_t>(k.purpose) * 0xD6E8FEB86659FD93ULL));
  h = detail::mix64(h ^ (k.tick + 0x8CB92BA72F3D8DD7ULL));
  h = detail::mix64(h ^ (k.id * 0xA0761D6478BD642FULL));
  h = detail::mix64(h ^ (static_cast<std::uint64_t>(k.index) + 0xE7037ED1A0B428DBULL));
  return h;
}

/// A uniform integer in [0, bound) for key (bound > 0; bound 0 gives 0). Uses the
/// multiply-high reduction, so it is exact integer maths on every platform.
constexpr std::uint32_t keyedBelow(const RandomKey& k, std::uint32_t bound) noexcept {
  return static_cast<std::uint32_t>(((keyedHash(k) >> 32) * bound) >> 32);
}

/// True with probability perMillion / 1,000,000 (integer comparison, bit-exact).
constexpr bool keyedChance(const RandomKey& k, std::uint32_t perMillion) noexcept {
  return keyedBelow(k, 1000000u) < perMillion;
}

/// A float in [0, 1) with 24 random bits (exactly representable; no rounding).
constexpr float keyedUnit(const RandomKey& k) noexcept {
  return static_cast<float>(keyedHash(k) >> 40) * (1.0f / 16777216.0f);
}

/// Packs a voxel or brick coordinate (each within +-2^20) into a stable 64-bit id.
constexpr std::uint64_t packCoordId(std::int32_t x, std::int32_t y, std::int32_t z) noexcept {
  constexpr std::uint64_t m = (1ULL << 21) - 1;
  return ((static_cast<std::uint64_t>(x) & m) << 42) | ((static_cast<std::uint64_t>(y) & m) << 21) |
         (static_cast<std::uint64_t>(z) & m);
}

}  // namespace loam::sim
