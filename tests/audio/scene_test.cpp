// AudioScene (audio/audio_scene.h): events become one-shot voices, burning cells are
// grouped into fires, rain makes patches where drops land, wind emitters sit around
// the listener, a waterfall is found from the water state; and AudioOutput fails
// cleanly when there is no sound card.
#include "sim/gen/scene.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "audio/audio_output.h"
#include "audio/audio_scene.h"
#include "audio/engine.h"
#include "audio/spectrum.h"
#include "sim/systems/events.h"
#include "sim/systems/sim_state.h"
#include "tests/audio/audio_world.h"

using namespace loam;
using loam::test::mat;

namespace {

audio::Listener at(audio::Vec3f p) {
  audio::Listener l;
  l.position = p;
  return l;
}

sim::VoxelCoord voxel(float x, float y, float z) {
  auto f = [](float m) { return static_cast<std::int32_t>(std::floor(m * 20.0f)); };
  return {f(x), f(y), f(z)};
}

/// Renders n blocks and returns their mono RMS.
double renderRms(audio::AudioEngine& engine, int blocks) {
  std::vector<float> out(static_cast<std::size_t>(blocks) * audio::kBlockFrames * 2);
  for (int b = 0; b < blocks; ++b)
    engine.renderBlock(out.data() + static_cast<std::size_t>(b) * audio::kBlockFrames * 2);
  return audio::rms(audio::toMono(out, 2));
}

const sim::SimState& world() {
  static const sim::SimState s = loam::test::audioWorldState();
  return s;
}

}  // namespace

TEST_CASE("a footstep event starts a voice near the listener and none beyond hearing") {
  audio::AudioEngine engine;
  audio::AudioSceneConfig cfg;
  cfg.self = sim::PlayerId{1};
  audio::AudioScene scene(engine, cfg);
  const audio::Listener l = at(loam::test::kOverStone);

  std::vector<sim::Event> none;
  scene.update(world(), none, l);
  engine.commit();
  CHECK(scene.stats().oneShots == 0);

  sim::FootstepEvent far;
  far.who = {sim::Actor::Kind::Player, 2};
  far.position = voxel(-40.0f, 0.0f, 30.0f);  // 60 m away
  far.surface = mat("stone");
  far.speed = 1400;
  std::vector<sim::Event> events{far};
  scene.update(world(), events, l);
  engine.commit();
  CHECK(scene.stats().oneShots == 0);

  sim::FootstepEvent own;
  own.who = {sim::Actor::Kind::Player, 1};
  own.position = voxel(l.position.x, 0.0f, l.position.z);
  own.surface = mat("stone");
  own.speed = 1400;
  events = {own};
  scene.update(world(), events, l);
  engine.commit();
  CHECK(scene.stats().oneShots == 1);
  CHECK(renderRms(engine, 40) > 0.0);
  CHECK(engine.stats().started >= 1);
}

TEST_CASE("events of every audible kind start voices") {
  audio::AudioEngine engine;
  audio::AudioScene scene(engine);
  const audio::Listener l = at(loam::test::kOverStone);
  const sim::VoxelCoord near = voxel(l.position.x + 2.0f, 0.0f, l.position.z);
  std::vector<sim::Event> events;
  events.push_back(sim::LandedEvent{{sim::Actor::Kind::Player, 3}, near, mat("stone"), 4000});
  events.push_back(sim::DigEvent{{sim::Actor::Kind::Player, 3}, near, 2, mat("soil"), 30});
  events.push_back(sim::FractureEvent{near, mat("stone"), 30});
  events.push_back(sim::FractureEvent{near, mat("soil"), 30});  // soft: the dig covers it
  events.push_back(sim::SplashEvent{{sim::Actor::Kind::Player, 3}, near, 3000});
  events.push_back(sim::SplashEvent{{}, near, 2000});  // poured or falling water: a short pour voice
  events.push_back(sim::IgnitedEvent{near, mat("planks"), {sim::Actor::Kind::Player, 3}});
  events.push_back(sim::ExtinguishedEvent{near, sim::ExtinguishCause::Water});
  events.push_back(sim::ExtinguishedEvent{near, sim::ExtinguishCause::BurntOut});  // silent
  events.push_back(sim::AnimalCallEvent{4, static_cast<std::uint8_t>(sim::AnimalSpecies::Bird), 0, near});
  events.push_back(sim::AnimalCallEvent{5, static_cast<std::uint8_t>(sim::AnimalSpecies::Dog), 0, near});
  scene.update(world(), events, l);
  engine.commit();
  CHECK(scene.stats().oneShots == 9);
}

TEST_CASE("burning cells are grouped into fires on a 4 m grid") {
  sim::SimState s = world();
  auto cell = [](int bx, int bz) {
    sim::FireCell c;
    c.corner = {bx * 8, 0, bz * 8};
    c.intensity = 200;
    c.endTick = 100000;
    return c;
  };
  // Three cells in one 4 m cell of the grid, two in the next one along x.
  s.fire.cells = {cell(20, -60), cell(21, -60), cell(22, -59), cell(35, -55), cell(36, -55)};
  audio::AudioEngine engine;
  audio::AudioScene scene(engine);
  std::vector<sim::Event> none;
  scene.update(s, none, at(loam::test::kNearWood));
  engine.commit();
  CHECK(scene.stats().fires == 2);
  CHECK(scene.stats().burningCells == 5);
  s.fire.cells.clear();
  scene.update(s, none, at(loam::test::kNearWood));
  engine.commit();
  CHECK(scene.stats().fires == 0);
  CHECK(scene.stats().burningCells == 0);
}

TEST_CASE("rain makes patches where the drops land; dry weather none") {
  sim::SimState s = world();
  audio::AudioEngine engine;
  audio::AudioSceneConfig cfg;
  audio::AudioScene scene(engine, cfg);
  std::vector<sim::Event> none;
  s.weather.rain = 800;
  scene.update(s, none, at(loam::test::kOverWater));
  engine.commit();
  CHECK(scene.stats().rainPatches >= 1);
  CHECK(scene.stats().rainPatches <= cfg.rainPatches);
  s.weather.rain = 0;
  scene.update(s, none, at(loam::test::kOverWater));
  engine.commit();
  CHECK(scene.stats().rainPatches == 0);
}

TEST_CASE("wind emitters sit around the listener, at most the configured number") {
  audio::AudioEngine engine;
  audio::AudioSceneConfig cfg;
  cfg.windEmitters = 5;
  audio::AudioScene scene(engine, cfg);
  std::vector<sim::Event> none;
  scene.update(world(), none, at(loam::test::kOverStone));
  engine.commit();
  CHECK(scene.stats().windEmitters >= 1);
  CHECK(scene.stats().windEmitters <= 5);
}

TEST_CASE("glade: the waterfall and its stream are heard from below the cliff") {
  auto scene = sim::loadScene(LOAM_SOURCE_DIR "/scenes/glade.toml");
  REQUIRE(scene.has_value());
  auto state = sim::createSimState(*scene, scene->defaultSeed);
  REQUIRE(state.has_value());
  audio::AudioEngine engine;
  audio::AudioScene audioScene(engine);
  std::vector<sim::Event> none;
  audioScene.update(*state, none, at({1.0f, 4.0f, -8.0f}));
  engine.commit();
  CHECK(audioScene.stats().waterEmitters >= 2);
  // Far from any water (the glade's south-west corner) there is none.
  audioScene.update(*state, none, at({-60.0f, 4.0f, 60.0f}));
  engine.commit();
  CHECK(audioScene.stats().waterEmitters == 0);
}

TEST_CASE("AudioOutput: no device gives a clear error, never a crash or a hang") {
  audio::AudioEngine engine;
  auto out = audio::AudioOutput::open(engine);
  if (out) {
    // A machine with a sound card: the stream runs and reports where it plays.
    CHECK_FALSE(out.value()->stats().device.empty());
  } else {
    const std::string& message = out.error().message;
    INFO(message);
    CHECK(message.find("no audio output device") != std::string::npos);
  }
}
