// Flags (options.cpp) and controls (input.cpp): parsing and exit codes, the tool
// palette and sizes, movement and look to PlayerInput, tool commands, auto-repeat.
#include <doctest/doctest.h>

#include <numbers>
#include <vector>

#include "client/input.h"
#include "client/options.h"
#include "tests/sim/sim_fixture.h"

using namespace loam;
using namespace loam::client;

namespace {

ParseOutcome parse(std::vector<const char*> args) {
  args.insert(args.begin(), "loam-client");
  return parseOptions(static_cast<int>(args.size()), args.data());
}

}  // namespace

TEST_CASE("flags: server, local, offscreen and the values they carry") {
  ParseOutcome p = parse({"--server", "example.org:7000", "--name", "Bob"});
  REQUIRE(p.run);
  CHECK(p.options.host == "example.org");
  CHECK(p.options.port == 7000);
  CHECK(p.options.name == "Bob");
  CHECK_FALSE(p.options.local);

  p = parse({"--local", "--scene", "scenes/court.toml", "--seed", "5", "--offscreen", "--frames", "3", "--screenshot",
             "x.png", "--camera", "1,2.5,-3,90,-10", "--time", "18:30", "--width", "320", "--height", "180",
             "--link-latency-ms", "50", "--link-loss", "0.1", "--no-audio"});
  REQUIRE(p.run);
  CHECK(p.options.local);
  CHECK(p.options.seed == 5u);
  CHECK(p.options.frames == 3);
  REQUIRE(p.options.camera);
  CHECK(p.options.camera->y == doctest::Approx(2.5));
  CHECK(p.options.camera->z == doctest::Approx(-3));
  CHECK(p.options.camera->yawDegrees == doctest::Approx(90));
  CHECK(p.options.camera->pitchDegrees == doctest::Approx(-10));
  REQUIRE(p.options.timeOfDay);
  CHECK(*p.options.timeOfDay == doctest::Approx((18 * 60 + 30) / 1440.0));
  CHECK(p.options.width == 320);
  CHECK(p.options.link.latencyMs == doctest::Approx(50));
  CHECK(p.options.link.active());
  CHECK_FALSE(p.options.audio);
}

TEST_CASE("bad flags exit 2 with a message naming the problem; --help exits 0") {
  struct Bad {
    std::vector<const char*> args;
    const char* mentions;
  };
  const Bad bad[] = {
      {{}, "--server"},
      {{"--server", "nohost"}, "HOST:PORT"},
      {{"--server", "h:70000"}, "HOST:PORT"},
      {{"--local", "--server", "h:1"}, "exclude"},
      {{"--local", "--time", "25:00"}, "--time"},
      {{"--local", "--time", "noon"}, "--time"},
      {{"--local", "--camera", "1,2,3"}, "--camera"},
      {{"--local", "--camera", "1,2,3,4,100"}, "--camera"},
      {{"--local", "--width", "0"}, "width"},
      {{"--local", "--link-loss", "2"}, "link-loss"},
      {{"--local", "--bogus"}, "bogus"},
      {{"--server", "h:1", "--seed", "3"}, "--seed"},
  };
  for (const Bad& b : bad) {
    ParseOutcome p = parse(b.args);
    CAPTURE(p.message);
    CHECK_FALSE(p.run);
    CHECK(p.exitCode == 2);
    CHECK(p.message.find(b.mentions) != std::string::npos);
  }
  ParseOutcome help = parse({"--help"});
  CHECK_FALSE(help.run);
  CHECK(help.exitCode == 0);
  CHECK(help.message.find("--offscreen") != std::string::npos);
}

TEST_CASE("time and camera parsers") {
  CHECK(parseTimeOfDay("00:00") == 0.0);
  CHECK(parseTimeOfDay("12:00") == doctest::Approx(0.5));
  CHECK(parseTimeOfDay("6:00") == doctest::Approx(0.25));
  CHECK_FALSE(parseTimeOfDay("12:0"));
  CHECK_FALSE(parseTimeOfDay("12:60"));
  CHECK_FALSE(parseTimeOfDay(""));
  CHECK(parseCamera("0,1,2,3,4"));
  CHECK_FALSE(parseCamera("0,1,2,3,"));
  CHECK_FALSE(parseCamera("0,1,x,3,4"));
}

TEST_CASE("tool palette: the placeable materials in key order, sizes 5..40 cm") {
  const auto& table = *test::testMaterials();
  const sim::MaterialLut lut = sim::makeMaterialLut(table);
  ToolState t = makeToolState(table, lut);
  REQUIRE(t.palette.size() >= 12);
  CHECK(t.names[0] == "grass");
  CHECK(t.names[1] == "soil");
  for (sim::MaterialId id : t.palette) {
    CHECK(lut.placeable[id] == 1);
    CHECK(id != table.find("water"));
    CHECK(id != sim::kAir);
  }
  bool hasBrick = false;
  for (const std::string& n : t.names) hasBrick = hasBrick || n == "brick";
  CHECK(hasBrick);
  t.selectMaterial(2);
  CHECK(t.materialName() == "sand");
  t.selectMaterial(100);  // ignored
  CHECK(t.materialName() == "sand");
  t.cycleMaterial(-3);
  CHECK(t.material == static_cast<int>(t.palette.size()) - 1);
  t.cycleMaterial(1);
  CHECK(t.material == 0);
  CHECK(t.sizeCm() == 10);
  t.cycleSize(5);
  CHECK(t.sizeCm() == 40);
  CHECK(t.toolSize() == sim::ToolSize::Cm40);
  t.cycleSize(-9);
  CHECK(t.sizeCm() == 5);
}

TEST_CASE("movement and look become a PlayerInput") {
  MoveState m;
  LookState look;
  m.forward = true;
  m.left = true;
  m.run = true;
  look.yaw = std::numbers::pi / 2;
  look.pitch = -std::numbers::pi / 4;
  sim::PlayerInput in = makePlayerInput(m, look);
  CHECK(in.moveForward == 127);
  CHECK(in.moveRight == -127);
  CHECK(in.yaw == 16384);
  CHECK(in.pitch == -8192);
  CHECK(in.buttons == sim::kButtonRun);
  m = MoveState{};
  m.stickY = -0.5f;
  m.jump = true;
  in = makePlayerInput(m, look);
  CHECK(in.moveForward == -64);
  CHECK(in.buttons == sim::kButtonJump);
  // Mouse: right turns clockwise, down looks down; pitch stops short of vertical.
  LookState l;
  l.turn(0.1, 0.2);
  CHECK(l.yaw == doctest::Approx(0.1));
  CHECK(l.pitch == doctest::Approx(-0.2));
  l.turn(-0.2, -10);
  CHECK(l.yaw == doctest::Approx(2 * std::numbers::pi - 0.1));
  CHECK(l.pitch < std::numbers::pi / 2);
  CHECK(l.pitch > 1.56);
}

TEST_CASE("tool actions at a hit become the right commands") {
  const auto& table = *test::testMaterials();
  ToolState t = makeToolState(table, sim::makeMaterialLut(table));
  t.size = 3;
  t.selectMaterial(1);
  RayHit hit;
  hit.voxel = {1, 2, 3};
  hit.face = sim::Face::NegX;
  hit.before = {0, 2, 3};
  auto dig = std::get<sim::DigCommand>(makeToolCommand(ToolAction::Dig, hit, t));
  CHECK(dig.target == hit.voxel);
  CHECK(dig.radius == sim::ToolSize::Cm40);
  auto place = std::get<sim::PlaceCommand>(makeToolCommand(ToolAction::Place, hit, t));
  CHECK(place.target == hit.voxel);
  CHECK(place.face == sim::Face::NegX);
  CHECK(place.material == *table.find("soil"));
  auto pour = std::get<sim::PourCommand>(makeToolCommand(ToolAction::Pour, hit, t));
  CHECK(pour.position == hit.before);
  CHECK(pour.amount > 0);
  CHECK(pour.amount <= sim::kMaxPourAmount);
  auto ignite = std::get<sim::IgniteCommand>(makeToolCommand(ToolAction::Ignite, hit, t));
  CHECK(ignite.position == hit.voxel);
}

TEST_CASE("a held button fires at once, then after the first delay, then periodically") {
  RepeatTimer r(300, 100);
  CHECK(r.update(true, 0));
  CHECK_FALSE(r.update(true, 100));
  CHECK_FALSE(r.update(true, 299));
  CHECK(r.update(true, 300));
  CHECK_FALSE(r.update(true, 350));
  CHECK(r.update(true, 400));
  CHECK_FALSE(r.update(false, 410));
  CHECK(r.update(true, 420));  // a new press fires at once
}
