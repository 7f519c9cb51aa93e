// Weather and time of day (sim/systems/weather.h): the clock and its wrap, set-time, the rain
// schedule and commands, gusts, shelter under canopy and in tunnels, wetness, and
// replication of the (rare, small) weather records through applyWeatherChange.
#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "sim/world/brick_store.h"
#include "sim/world/material.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/step/step.h"
#include "sim/systems/weather.h"
#include "tests/sim/sim_fixture.h"

using namespace loam::sim;

namespace {

// Materials come from the shared fixture (tests/sim/sim_fixture.h).
std::shared_ptr<const MaterialTable> materials() { return loam::test::testMaterials(); }
using loam::test::mat;

// A 10 s day starting at 23:00, wind 4 m/s from the west, gusty, one rain spell from
// 5 s to 10 s at 0.6.
Scene scene() {
  Scene s;
  s.name = "weather-test";
  s.materials = materials();
  s.worldBounds = {{-32, -16, -32}, {32, 16, 32}};
  SpawnPoint sp;
  s.spawns.push_back(sp);
  s.time.dayLength = 10.0;
  s.time.startHour = 23.0;
  s.weather.windDirection = 270.0;
  s.weather.windStrength = 4.0;
  s.weather.gustiness = 0.5;
  s.weather.rain.push_back(RainSpell{5.0, 5.0, 0.6});
  return s;
}

BrickStore world() {
  Scene s = scene();
  BrickStore w(s.worldBounds, makeCoarseLut(*s.materials));
  for (int cz = -2; cz < 2; ++cz)
    for (int cx = -2; cx < 2; ++cx) w.fillChunk(ChunkCoord{cx, -1, cz}, mat("stone"));
  return w;
}

SimState makeState(BrickStore w = world()) {
  w.markGenerated();
  return createSimStateFromWorld(scene(), 3, std::move(w));
}

std::int32_t speedOf(Wind w) { return static_cast<std::int32_t>(std::abs(w.x) + std::abs(w.z)); }

}  // namespace

TEST_CASE("time of day advances with the tick and wraps with the day length") {
  SimState st = makeState();
  REQUIRE(st.weather.dayLength == 600);
  CHECK(st.weather.timeOrigin == 575);  // 23:00 of a 600-tick day
  CHECK(timeOfDayAt(st.weather, 0) == 575);
  CHECK(timeOfDayAt(st.weather, 24) == 599);
  CHECK(timeOfDayAt(st.weather, 25) == 0);  // midnight
  CHECK(timeOfDayAt(st.weather, 625) == 0);
  CHECK_FALSE(isDaytime(st.weather, 0));
  CHECK(isDaytime(st.weather, 25 + 300));  // noon

  StepOutput out;
  for (int i = 0; i < 30; ++i) step(st, {}, out);
  CHECK(timeOfDayAt(st.weather, st.tick) == 5);

  // set-time: the time at the commanded tick is the commanded value, then it runs on.
  const Command set{kServerPlayer, 1, SetTimeCommand{300}};
  step(st, std::span<const Command>(&set, 1), out);
  CHECK(out.weatherChanged);
  CHECK(timeOfDayAt(st.weather, st.tick) == 300);
  for (int i = 0; i < 10; ++i) step(st, {}, out);
  CHECK(timeOfDayAt(st.weather, st.tick) == 310);
  const Command bad{kServerPlayer, 2, SetTimeCommand{600}};
  step(st, std::span<const Command>(&bad, 1), out);
  CHECK(std::holds_alternative<CommandRejectedEvent>(out.events.at(0)));
}

TEST_CASE("rain follows the schedule and commands; wetness rises and dries") {
  SimState st = makeState();
  StepOutput out;
  CHECK(st.weather.rain == 0);
  while (st.tick < 299) step(st, {}, out);
  CHECK(st.weather.rain == 0);
  step(st, {}, out);  // tick 300: the spell starts
  CHECK(st.weather.rain == 600);
  CHECK(out.weatherChanged);
  while (st.tick < 599) step(st, {}, out);
  CHECK(st.weather.rain == 600);
  CHECK(st.weather.wetness == 300);  // five updates of +60 per second
  step(st, {}, out);                 // tick 600: it ends
  CHECK(st.weather.rain == 0);

  // A command holds until the next boundary (none left here); dry ground dries.
  const Command storm{kServerPlayer, 1, SetWeatherCommand{1000, 16384, 800}};
  step(st, std::span<const Command>(&storm, 1), out);
  CHECK(st.weather.rain == 1000);
  CHECK(st.weather.windStrength == 800);
  while (st.tick < 1800) step(st, {}, out);
  CHECK(st.weather.wetness == 1000);
  const Command dry{kServerPlayer, 2, SetWeatherCommand{0, 16384, 800}};
  step(st, std::span<const Command>(&dry, 1), out);
  const std::uint16_t wet = st.weather.wetness;
  while (st.tick < 2400) step(st, {}, out);
  CHECK(st.weather.wetness < wet);
  CHECK(st.weather.wetness > 900);  // drying takes minutes
}

TEST_CASE("gusts: keyed noise, bounded, quantised, refreshed a few times a second") {
  SimState st = makeState();
  StepOutput out;
  int changes = 0;
  std::int32_t lo = 0, hi = 0;
  bool veered = false;
  for (int i = 0; i < 1200; ++i) {
    const std::int16_t g = st.weather.gust;
    step(st, {}, out);
    if (st.weather.gust != g) {
      ++changes;
      CHECK(st.tick % kGustPeriod == 0);
    }
    CHECK(st.weather.gust % kGustStep == 0);
    CHECK(std::abs(st.weather.gust) <= 200);  // strength 400 cm/s x gustiness 0.5
    CHECK(std::abs(st.weather.veer) <= 5461 / 2 + kVeerStep);
    veered = veered || st.weather.veer != 0;
    lo = std::min<std::int32_t>(lo, st.weather.gust);
    hi = std::max<std::int32_t>(hi, st.weather.gust);
  }
  CHECK(changes > 20);
  CHECK(lo < 0);  // lulls
  CHECK(hi > 0);  // gusts
  CHECK(veered);

  // Same seed, same gusts; another seed, other gusts.
  SimState again = makeState();
  SimState other = createSimStateFromWorld(scene(), 4, [] {
    BrickStore w = world();
    w.markGenerated();
    return w;
  }());
  bool differs = false;
  for (int i = 0; i < 600; ++i) {
    step(again, {}, out);
    step(other, {}, out);
    differs = differs || again.weather.gust != other.weather.gust;
  }
  SimState first = makeState();
  for (int i = 0; i < 600; ++i) step(first, {}, out);
  CHECK(first.weather.gust == again.weather.gust);
  CHECK(differs);
}

TEST_CASE("windAt: open ground, under a canopy, in a tunnel") {
  BrickStore w = world();
  // A leaf canopy two bricks thick over x in [64, 96), 2.4 m up.
  for (int z = -4; z < 4; ++z)
    for (int x = 8; x < 12; ++x)
      for (int y = 6; y < 8; ++y) w.fillBrick(BrickCoord{x, y, z}, mat("leaves"));
  // A stone roof (a tunnel) over x in [-96, -64).
  for (int z = -4; z < 4; ++z)
    for (int x = -12; x < -8; ++x)
      for (int y = 1; y < 4; ++y) w.fillBrick(BrickCoord{x, y, z}, mat("stone"));
  SimState st = makeState(std::move(w));
  const Wind open = windAt(st.weather, st.world, {0, 0, 0});
  const Wind canopy = windAt(st.weather, st.world, {80, 0, 0});
  const Wind tunnel = windAt(st.weather, st.world, {-80, 0, 0});
  CHECK(open == openWind(st.weather));
  CHECK(open.x > 300);  // from the west: blows toward east
  CHECK(std::abs(open.z) < open.x / 2);
  CHECK(speedOf(canopy) < speedOf(open) / 2);
  CHECK(speedOf(canopy) > speedOf(tunnel));
  CHECK(speedOf(tunnel) <= speedOf(open) / 8);
  CHECK(exposureAt(st.world, {0, 0, 0}) == kExposureOpen);
  CHECK(exposureAt(st.world, {-80, 0, 0}) == 0);
  st.weather.wetness = 800;
  CHECK(wetnessAt(st.weather, st.world, {0, 0, 0}) == 800);
  CHECK(wetnessAt(st.weather, st.world, {-80, 0, 0}) == 0);
}

TEST_CASE("weather records are rare and replicate exactly through applyWeatherChange") {
  SimState server = makeState();
  SimState mirror = makeState();
  StepOutput out;
  int records = 0;
  for (int i = 0; i < 1800; ++i) {
    Command c{kServerPlayer, static_cast<std::uint32_t>(i + 1), SetWeatherCommand{200, 8192, 300}};
    const bool command = i == 900;
    step(server, command ? std::span<const Command>(&c, 1) : std::span<const Command>(), out);
    if (out.weatherChanged) {
      ++records;
      applyWeatherChange(mirror.weather, out.weather);
    }
    if (auto d = diffWeather(server.weather, mirror.weather)) FAIL("step " << out.tick << ": " << *d);
    CHECK(sameWeather(server.weather, mirror.weather));
    CHECK(timeOfDayAt(server.weather, out.tick) == timeOfDayAt(mirror.weather, out.tick));
  }
  MESSAGE("weather records in 1800 steps: " << records);
  CHECK(records > 0);
  CHECK(records <= 1800 / static_cast<int>(kGustPeriod) + 1800 / static_cast<int>(kWetnessPeriod) + 4);
}
