// Weather and time-of-day system (the system contract is in sim/systems.h).
//
// Model:
// - Time of day is a function of the tick: (timeOrigin + tick) % dayLength, so it
//   needs no per-tick record; a set-time command moves timeOrigin.
// - Wind: a global mean (direction, strength) from the scene and set-weather
//   commands, plus a gust (speed) and a veer (direction) from 1-D keyed value noise
//   over time (two octaves, integer maths, keyed by (seed, lattice tick)), refreshed
//   every kGustPeriod ticks and quantised, so the record changes a few times a second
//   at most. windAt() scales the wind by the cover above a point (bricks of the
//   coarse copy, looked up upward): canopy and tunnel roofs shelter.
// - Rain: per mille, from the scene's schedule (a spell sets its intensity at its
//   start and the scene default at its end) and set-weather commands (immediate; the
//   next schedule boundary overrides).
// - Wetness: a global per-mille value for exposed ground, rising with rain and drying
//   (faster by day and in wind), updated once a second. wetnessAt() scales it by
//   exposure; fire reads it to slow ignition.
//
// Replication: the replicated fields (kWeatherFields) are published as one small
// record (StepOutput::weather with weatherChanged) only in steps where one of them
// changed: commands, gust/veer refresh (<= 4 Hz), wetness (<= 1 Hz), rain boundaries.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/core/result.h"
#include "sim/world/voxel.h"

namespace loam::sim {

class BrickStore;
class SimContext;
class StateHasher;
struct SimSetup;

inline constexpr std::uint32_t kGustPeriod = 15;        ///< ticks between gust/veer refreshes (4 Hz)
inline constexpr std::int32_t kGustStep = 10;           ///< gust quantum, cm/s
inline constexpr std::int32_t kVeerStep = 256;          ///< veer quantum, binary angle (1.4 degrees)
inline constexpr std::uint32_t kWetnessPeriod = 60;     ///< ticks between wetness updates (1 Hz)
inline constexpr std::uint32_t kExposureOpen = 256;     ///< exposureAt() of open sky
inline constexpr std::int32_t kCoverBricks = 24;        ///< bricks (9.6 m) exposureAt() looks upward

/// One scheduled rain spell in ticks (server-side copy of the scene's schedule).
struct RainSpellTicks {
  std::uint64_t start = 0;  ///< first tick of the spell
  std::uint64_t end = 0;    ///< first tick after it
  std::uint16_t rain = 0;   ///< per mille
};

/// Global weather and time. The fields listed in kWeatherFields are replicated;
/// the rest is configuration from the scene, used only by the server's stepWeather
/// (a record copies the replicated fields and leaves `schedule` empty, so on a mirror
/// it may be empty; it is never hashed or compared).
struct WeatherState {
  // ---- replicated -----------------------------------------------------------------
  std::uint16_t rain = 0;           ///< intensity per mille (0 dry .. 1000 downpour)
  std::uint16_t windDirection = 0;  ///< binary angle (65536 per turn) the mean wind blows toward
  std::uint16_t windStrength = 0;   ///< mean wind speed, cm/s
  std::int16_t gust = 0;            ///< current gust on top of the mean, cm/s (negative: lull); multiple of kGustStep
  std::int16_t veer = 0;            ///< current direction offset, binary angle; multiple of kVeerStep
  std::uint16_t wetness = 0;        ///< wetness of exposed ground, per mille
  std::uint32_t timeOrigin = 0;     ///< time of day at tick 0 (ticks since midnight), < dayLength
  std::uint32_t dayLength = 1;      ///< ticks per day (from the scene; > 0)
  // ---- configuration (server-side) --------------------------------------------------
  std::uint16_t gustiness = 0;      ///< per mille (scene): gust and veer amplitude
  std::uint16_t baseRain = 0;       ///< per mille (scene default): rain outside spells
  std::uint32_t nextBoundary = 0;   ///< next schedule boundary (2 per spell: start, end)
  std::vector<RainSpellTicks> schedule;  ///< the scene's spells, sorted; empty on mirrors
};

/// One replicated weather field: name, bit width on the wire, read and write.
/// Encoders, decoders, hashWeather, diffWeather and applyWeatherChange walk this table.
struct WeatherField {
  const char* name;
  std::uint8_t bits;   ///< wire width (signed fields are two's complement)
  std::int64_t (*get)(const WeatherState&);
  void (*set)(WeatherState&, std::int64_t);
};

/// The replicated fields, most often changing first.
inline constexpr std::array<WeatherField, 8> kWeatherFields{{
    {"gust", 16, [](const WeatherState& s) -> std::int64_t { return s.gust; },
     [](WeatherState& s, std::int64_t v) { s.gust = static_cast<std::int16_t>(v); }},
    {"veer", 16, [](const WeatherState& s) -> std::int64_t { return s.veer; },
     [](WeatherState& s, std::int64_t v) { s.veer = static_cast<std::int16_t>(v); }},
    {"wetness", 10, [](const WeatherState& s) -> std::int64_t { return s.wetness; },
     [](WeatherState& s, std::int64_t v) { s.wetness = static_cast<std::uint16_t>(v); }},
    {"rain", 10, [](const WeatherState& s) -> std::int64_t { return s.rain; },
     [](WeatherState& s, std::int64_t v) { s.rain = static_cast<std::uint16_t>(v); }},
    {"windDirection", 16, [](const WeatherState& s) -> std::int64_t { return s.windDirection; },
     [](WeatherState& s, std::int64_t v) { s.windDirection = static_cast<std::uint16_t>(v); }},
    {"windStrength", 16, [](const WeatherState& s) -> std::int64_t { return s.windStrength; },
     [](WeatherState& s, std::int64_t v) { s.windStrength = static_cast<std::uint16_t>(v); }},
    {"timeOrigin", 32, [](const WeatherState& s) -> std::int64_t { return s.timeOrigin; },
     [](WeatherState& s, std::int64_t v) { s.timeOrigin = static_cast<std::uint32_t>(v); }},
    {"dayLength", 32, [](const WeatherState& s) -> std::int64_t { return s.dayLength; },
     [](WeatherState& s, std::int64_t v) { s.dayLength = static_cast<std::uint32_t>(v); }},
}};

/// Wind at a point, cm/s toward yaw-convention axes (x east, z south).
struct Wind {
  std::int32_t x = 0, z = 0;
  friend bool operator==(const Wind&, const Wind&) = default;
};

/// Builds the initial weather from the scene defaults, day length and rain schedule.
/// Allocates (the schedule).
void initWeather(WeatherState& state, const SimSetup& setup);

/// One tick: rain schedule, gusts, wetness. Publishes ctx.output().weather (and sets
/// weatherChanged) only when a replicated field changed this step. No allocation.
void stepWeather(WeatherState& state, SimContext& ctx);

/// Applies a validated set-weather command (rain per mille, direction the wind blows
/// toward, strength cm/s). Rain holds until the next schedule boundary.
void setWeather(WeatherState& state, SimContext& ctx, std::uint16_t rain, std::uint16_t windDirection,
                std::uint16_t windStrength);

/// Applies a validated set-time command: the time of day at ctx.tick() becomes
/// timeOfDay (< dayLength).
void setTimeOfDay(WeatherState& state, SimContext& ctx, std::uint32_t timeOfDay);

/// Time of day at tick, in ticks since midnight (< dayLength). Pure.
std::uint32_t timeOfDayAt(const WeatherState& state, std::uint64_t tick) noexcept;

/// True between 06:00 and 18:00 at tick. Pure.
bool isDaytime(const WeatherState& state, std::uint64_t tick) noexcept;

/// Share of open sky above `where`, 0 (roofed) .. kExposureOpen (open): the bricks
/// above it (up to kCoverBricks) attenuate by their coarse solid fraction and, for
/// non-solid material such as leaves, eight times their acoustic opacity. Cost: at
/// most kCoverBricks coarse lookups; no allocation; any thread while nobody writes.
std::uint32_t exposureAt(const BrickStore& world, VoxelCoord where) noexcept;

/// The open-sky wind (mean + gust, direction + veer), cm/s. Pure.
Wind openWind(const WeatherState& state) noexcept;

/// Wind speed for a given exposure (0..kExposureOpen): sheltered places keep 10 %.
std::int32_t shelteredSpeed(std::int32_t openSpeed, std::uint32_t exposure) noexcept;

/// The wind at a voxel: openWind scaled by exposureAt (weaker under canopy and in
/// tunnels). For fire spread, animals and client audio. Pure; any thread.
Wind windAt(const WeatherState& state, const BrickStore& world, VoxelCoord where) noexcept;

/// Wetness of the ground at a voxel, per mille: the global wetness scaled by exposure.
std::uint32_t wetnessAt(const WeatherState& state, const BrickStore& world, VoxelCoord where) noexcept;

/// Mirror side: applies one weather record (the replicated fields of `record`).
void applyWeatherChange(WeatherState& state, const WeatherState& record) noexcept;

/// True when the replicated fields are equal.
bool sameWeather(const WeatherState& a, const WeatherState& b) noexcept;

/// Folds the replicated weather into hasher.
void hashWeather(const WeatherState& state, StateHasher& hasher);

/// The "weather" blob of the state codec (sim/save/state_codec.h): the version byte,
/// then every kWeatherFields entry in table order in (bits + 7) / 8 bytes. Allocates
/// as out grows.
void encodeWeather(const WeatherState& weather, std::vector<std::uint8_t>& out);
/// Replaces the replicated fields with the blob's, checking each field's width, rain
/// and wetness <= 1000, dayLength > 0 and timeOrigin < dayLength; on error weather is
/// untouched. The configuration (schedule, nextBoundary) is left as it was.
Result<void> decodeWeather(std::span<const std::uint8_t> bytes, WeatherState& weather);

/// First difference between two weather states' replicated fields, or nullopt.
std::optional<std::string> diffWeather(const WeatherState& expected, const WeatherState& actual);

}  // namespace loam::sim
