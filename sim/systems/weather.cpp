// Weather and time of day (see sim/systems/weather.h for the model). Integer maths only in
// everything that reaches state; doubles appear only when converting the scene's
// values once at init (exact, platform-independent operations).
#include "sim/systems/weather.h"

#include <algorithm>

#include "sim/world/brick_store.h"
#include "sim/core/internal/format.h"
#include "sim/core/keyed_random.h"
#include "sim/systems/motion.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/core/state_hasher.h"

namespace loam::sim {

namespace {

constexpr std::uint32_t kGustLatticeSlow = 180;  // ticks between lattice points, octave 1 (3 s)
constexpr std::uint32_t kGustLatticeFast = 45;   // octave 2 (0.75 s)
constexpr std::int32_t kMaxVeer = 5461;          // binary angle at gustiness 1 (30 degrees)
constexpr std::uint32_t kMinShelterShare = 26;   // of 256: wind left under full cover (10 %)

std::uint16_t angleFromDegrees(double deg) {
  double a = deg * (65536.0 / 360.0);
  auto i = static_cast<std::int64_t>(a < 0 ? a - 0.5 : a + 0.5);
  return static_cast<std::uint16_t>(static_cast<std::uint64_t>(i) & 0xFFFFu);
}

std::uint64_t roundPositive(double v) { return v <= 0 ? 0u : static_cast<std::uint64_t>(v + 0.5); }

std::uint16_t perMille(double unit) {
  return static_cast<std::uint16_t>(std::min<std::uint64_t>(1000, roundPositive(unit * 1000.0)));
}

// Copies the replicated fields into the step's record and flags it.
void publish(const WeatherState& state, SimContext& ctx) {
  StepOutput& out = ctx.output();
  out.weatherChanged = true;
  applyWeatherChange(out.weather, state);
}

// A lattice value in [-32768, 32767] for (seed, octave, lattice index).
std::int32_t latticeValue(std::uint64_t seed, std::uint64_t latticeTick, std::uint32_t octave, std::uint32_t field) {
  const std::uint64_t h = keyedHash(RandomKey{seed, RandomPurpose::WeatherGust, latticeTick, field, octave});
  return static_cast<std::int32_t>(h >> 48) - 32768;
}

// 1-D value noise over ticks with smoothstep interpolation, Q15 in [-32768, 32767].
std::int32_t valueNoiseQ15(std::uint64_t seed, std::uint64_t tick, std::uint32_t period, std::uint32_t octave,
                           std::uint32_t field) {
  const std::uint64_t k = tick / period;
  const std::int64_t a = latticeValue(seed, k * period, octave, field);
  const std::int64_t b = latticeValue(seed, (k + 1) * period, octave, field);
  const std::int64_t t = static_cast<std::int64_t>(tick % period) * 65536 / period;  // Q16
  const std::int64_t s = t * t / 65536 * (3 * 65536 - 2 * t) / 65536;             // smoothstep, Q16
  return static_cast<std::int32_t>(a + (b - a) * s / 65536);
}

// Two octaves (70 % slow, 30 % fast), Q15.
std::int32_t gustNoiseQ15(std::uint64_t seed, std::uint64_t tick, std::uint32_t field) {
  const std::int64_t slow = valueNoiseQ15(seed, tick, kGustLatticeSlow, 0, field);
  const std::int64_t fast = valueNoiseQ15(seed, tick, kGustLatticeFast, 1, field);
  return static_cast<std::int32_t>((slow * 7 + fast * 3) / 10);
}

std::int32_t quantise(std::int64_t v, std::int32_t step) {
  // Round half away from zero to a multiple of step (symmetric for gusts and lulls).
  const std::int64_t q = v >= 0 ? (v + step / 2) / step : -((-v + step / 2) / step);
  return static_cast<std::int32_t>(q * step);
}

// Gust and veer at tick from the noise (quantised, never below zero total speed).
void refreshGust(WeatherState& s, std::uint64_t seed, std::uint64_t tick) {
  const std::int64_t amp = std::int64_t{s.windStrength} * s.gustiness / 1000;  // cm/s
  std::int32_t gust = quantise(amp * gustNoiseQ15(seed, tick, 0) / 32768, kGustStep);
  gust = std::max<std::int32_t>(gust, -static_cast<std::int32_t>(s.windStrength));
  gust = std::clamp<std::int32_t>(gust, -32760, 32760);
  const std::int64_t veerAmp = std::int64_t{kMaxVeer} * s.gustiness / 1000;
  const std::int32_t veer = quantise(veerAmp * gustNoiseQ15(seed, tick, 1) / 32768, kVeerStep);
  s.gust = static_cast<std::int16_t>(gust);
  s.veer = static_cast<std::int16_t>(veer);
}

// Boundary i of the schedule: even = start of spell i/2, odd = its end.
std::uint64_t boundaryTick(const WeatherState& s, std::uint32_t i) {
  const RainSpellTicks& sp = s.schedule[i / 2];
  return (i & 1u) ? sp.end : sp.start;
}

}  // namespace

void initWeather(WeatherState& state, const SimSetup& setup) {
  const Scene& sc = setup.scene;
  state = WeatherState{};
  // The scene gives the direction the wind blows from; the state the one it blows toward.
  state.windDirection = static_cast<std::uint16_t>(angleFromDegrees(sc.weather.windDirection) + 32768u);
  state.windStrength = static_cast<std::uint16_t>(std::min<std::uint64_t>(65535, roundPositive(sc.weather.windStrength * 100.0)));
  state.gustiness = perMille(sc.weather.gustiness);
  state.baseRain = perMille(sc.weather.rainIntensity);
  state.rain = state.baseRain;
  state.dayLength = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, roundPositive(sc.time.dayLength * kTicksPerSecond)));
  state.timeOrigin = static_cast<std::uint32_t>(roundPositive(sc.time.startHour / 24.0 * state.dayLength) % state.dayLength);
  state.schedule.reserve(sc.weather.rain.size());
  for (const RainSpell& sp : sc.weather.rain) {
    RainSpellTicks t;
    t.start = roundPositive(sp.start * kTicksPerSecond);
    t.end = t.start + std::max<std::uint64_t>(1, roundPositive(sp.duration * kTicksPerSecond));
    t.rain = perMille(sp.intensity);
    state.schedule.push_back(t);
  }
  refreshGust(state, setup.seed, 0);
}

void stepWeather(WeatherState& s, SimContext& ctx) {
  const std::uint64_t tick = ctx.tick();
  const std::uint16_t rain0 = s.rain, wet0 = s.wetness;
  const std::int16_t gust0 = s.gust, veer0 = s.veer;

  // Schedule boundaries due by this tick (all of them, in order, if ticks were skipped).
  const std::uint32_t boundaries = static_cast<std::uint32_t>(s.schedule.size() * 2);
  while (s.nextBoundary < boundaries && boundaryTick(s, s.nextBoundary) <= tick) {
    s.rain = (s.nextBoundary & 1u) ? s.baseRain : s.schedule[s.nextBoundary / 2].rain;
    ++s.nextBoundary;
  }

  if (tick % kGustPeriod == 0) refreshGust(s, ctx.seed(), tick);

  if (tick % kWetnessPeriod == 0) {
    // Per second: rain wets exposed ground (a downpour saturates it in 10 s); without
    // rain it dries, faster in sunshine and in wind (saturated ground dries in about
    // 4 minutes on a breezy day, 15 at night).
    std::int32_t w = s.wetness;
    if (s.rain > 0) {
      w += std::max<std::int32_t>(1, s.rain / 10);
    } else {
      const std::int32_t sun = isDaytime(s, tick) ? 3 : 1;
      w -= sun + std::min<std::int32_t>(3, (s.windStrength + s.gust) / 300);
    }
    s.wetness = static_cast<std::uint16_t>(std::clamp(w, 0, 1000));
  }

  if (s.rain != rain0 || s.wetness != wet0 || s.gust != gust0 || s.veer != veer0 || ctx.output().weatherChanged) {
    publish(s, ctx);
  }
}

void setWeather(WeatherState& state, SimContext& ctx, std::uint16_t rain, std::uint16_t windDirection,
                std::uint16_t windStrength) {
  state.rain = std::min<std::uint16_t>(rain, 1000);
  state.windDirection = windDirection;
  state.windStrength = windStrength;
  // Keep the gust consistent with the new mean at once (it scales with strength).
  refreshGust(state, ctx.seed(), ctx.tick() - ctx.tick() % kGustPeriod);
  publish(state, ctx);
}

void setTimeOfDay(WeatherState& state, SimContext& ctx, std::uint32_t timeOfDay) {
  const std::uint32_t day = state.dayLength;
  const std::uint32_t now = static_cast<std::uint32_t>(ctx.tick() % day);
  state.timeOrigin = static_cast<std::uint32_t>((std::uint64_t{timeOfDay % day} + day - now) % day);
  publish(state, ctx);
}

std::uint32_t timeOfDayAt(const WeatherState& state, std::uint64_t tick) noexcept {
  const std::uint64_t day = state.dayLength ? state.dayLength : 1;
  return static_cast<std::uint32_t>((state.timeOrigin % day + tick % day) % day);
}

bool isDaytime(const WeatherState& state, std::uint64_t tick) noexcept {
  const std::uint64_t t = timeOfDayAt(state, tick);
  const std::uint64_t day = state.dayLength ? state.dayLength : 1;
  return t * 4 >= day && t * 4 < day * 3;
}

std::uint32_t exposureAt(const BrickStore& world, VoxelCoord where) noexcept {
  const BrickCoord start = brickOf(where);
  const std::int32_t top = world.bounds().maxBrick.y;
  std::uint32_t open = kExposureOpen;
  for (std::int32_t y = start.y + 1; y < top && y <= start.y + kCoverBricks; ++y) {
    const CoarseSample c = world.coarse(BrickCoord{start.x, y, start.z});
    if (c.solid == 0 && c.opacity == 0) continue;
    const std::uint32_t seeThrough = std::min<std::uint32_t>(255, std::uint32_t{c.opacity} * 8);
    const std::uint32_t block =
        std::min<std::uint32_t>(255, c.solid + (255u - c.solid) * seeThrough / 255u);
    open = open * (256u - block) / 256u;
    if (open < 4) return 0;
  }
  return open;
}

Wind openWind(const WeatherState& state) noexcept {
  const std::int64_t speed = std::max<std::int64_t>(0, std::int64_t{state.windStrength} + state.gust);
  const auto dir = static_cast<std::uint16_t>(state.windDirection + static_cast<std::uint16_t>(state.veer));
  return {static_cast<std::int32_t>(speed * sinQ14(dir) / 16384), static_cast<std::int32_t>(-speed * cosQ14(dir) / 16384)};
}

std::int32_t shelteredSpeed(std::int32_t openSpeed, std::uint32_t exposure) noexcept {
  const std::int64_t share = kMinShelterShare + (256 - kMinShelterShare) * std::int64_t{std::min(exposure, kExposureOpen)} / 256;
  return static_cast<std::int32_t>(openSpeed * share / 256);
}

Wind windAt(const WeatherState& state, const BrickStore& world, VoxelCoord where) noexcept {
  const Wind w = openWind(state);
  const std::uint32_t e = exposureAt(world, where);
  return {shelteredSpeed(w.x, e), shelteredSpeed(w.z, e)};
}

std::uint32_t wetnessAt(const WeatherState& state, const BrickStore& world, VoxelCoord where) noexcept {
  return std::uint32_t{state.wetness} * exposureAt(world, where) / kExposureOpen;
}

void applyWeatherChange(WeatherState& state, const WeatherState& record) noexcept {
  for (const WeatherField& f : kWeatherFields) f.set(state, f.get(record));
}

bool sameWeather(const WeatherState& a, const WeatherState& b) noexcept {
  for (const WeatherField& f : kWeatherFields) {
    if (f.get(a) != f.get(b)) return false;
  }
  return true;
}

void hashWeather(const WeatherState& s, StateHasher& h) {
  for (const WeatherField& f : kWeatherFields) h.add(f.get(s));
}

std::optional<std::string> diffWeather(const WeatherState& e, const WeatherState& a) {
  for (const WeatherField& f : kWeatherFields) {
    if (f.get(e) != f.get(a)) {
      return internal::format("weather.%s: expected %lld, actual %lld", f.name, static_cast<long long>(f.get(e)),
                              static_cast<long long>(f.get(a)));
    }
  }
  return std::nullopt;
}

}  // namespace loam::sim
