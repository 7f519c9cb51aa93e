// The step's checks on a player's edits beyond reach and rate (sim/step/step.cpp):
// a line of sight from the eye (inSight) and the global cap on poured water
// (sim/systems/water.h, waterFull). Player 1 stands at the origin on the stone floor
// of the test world; its eye is 1.62 m up.
#include <doctest/doctest.h>

#include <vector>

#include "sim/step/step.h"
#include "sim/systems/motion.h"
#include "sim/systems/water.h"
#include "tests/sim/sim_fixture.h"

using namespace loam::sim;
using loam::test::mat;

namespace {

Command as(std::uint32_t player, std::uint32_t seq, CommandBody body) { return Command{PlayerId{player}, seq, body}; }

SimState withPlayer() {
  SimState s = loam::test::flatState();
  std::vector<Command> c{as(1, 1, JoinCommand{PlayerName::from("Ada")})};
  (void)step(s, c);
  return s;
}

std::vector<RejectReason> rejections(const StepOutput& out) {
  std::vector<RejectReason> r;
  for (const Event& e : out.events)
    if (const auto* x = std::get_if<CommandRejectedEvent>(&e)) r.push_back(x->reason);
  return r;
}

/// A stone wall across the -z side: z = wallZ, x in [-20, 20], y in [0, 60).
void buildWall(SimState& s, std::int32_t wallZ) {
  for (std::int32_t y = 0; y < 60; ++y)
    for (std::int32_t x = -20; x <= 20; ++x) s.world.set(VoxelCoord{x, y, wallZ}, mat("stone"));
}

StepOutput run(SimState& s, CommandBody body, std::uint32_t player = 1) {
  std::vector<Command> c{as(player, 2, body)};
  return step(s, c);
}

}  // namespace

TEST_CASE("water cap: the generated world leaves room; pours stop at the cap; the server may still pour") {
  SimState s = withPlayer();
  CHECK(s.water.pourCapWetVoxels == waterStats(s.water).wetVoxels + kMaxPouredWetVoxels);
  CHECK_FALSE(waterFull(s.water));

  // A cap just above the water there is: the first pour passes it, the next is refused.
  s.water.pourCapWetVoxels = waterStats(s.water).wetVoxels + 4;
  const VoxelCoord at{0, 4, -20};
  const StepOutput first = run(s, PourCommand{at, 8 * kWaterPerVoxel});
  CHECK(rejections(first).empty());
  CHECK_FALSE(first.water.empty());
  CHECK(waterFull(s.water));
  for (int i = 0; i < 30; ++i) (void)step(s, {});  // edit tokens back
  const std::size_t wet = waterStats(s.water).wetVoxels;
  const StepOutput refused = run(s, PourCommand{VoxelCoord{10, 4, -20}, kWaterPerVoxel});
  CHECK(rejections(refused) == std::vector{RejectReason::WaterLimit});
  CHECK(waterAt(s.water, s.world, VoxelCoord{10, 0, -20}) == 0);
  CHECK(waterStats(s.water).wetVoxels <= wet);  // nothing was added (it may only spread and soak)
  // A refused pour costs no edit token: the player can still dig at once.
  CHECK(rejections(run(s, DigCommand{VoxelCoord{5, -1, -5}, ToolSize::Cm5})).empty());
  // The server (console, scenario events) is not capped.
  const StepOutput server = run(s, PourCommand{VoxelCoord{-10, 4, -20}, kWaterPerVoxel}, 0);
  CHECK(rejections(server).empty());
  CHECK_FALSE(server.water.empty());
}

TEST_CASE("each player's pours draw on its own water budget, refilled per tick") {
  SimState s = withPlayer();
  s.rules.pourUnitsBurst = 3 * kWaterPerVoxel;
  s.rules.pourUnitsPerTick = kWaterPerVoxel / 4;
  s.players[0].budget.pourTokens = s.rules.pourUnitsBurst;
  CHECK(rejections(run(s, PourCommand{VoxelCoord{0, 4, -20}, 2 * kWaterPerVoxel})).empty());
  // One voxel left, a quarter voxel back per tick: the next tick's 1.25 is too little
  // (edit tokens are not what is short: a burst holds five edits).
  CHECK(rejections(run(s, PourCommand{VoxelCoord{8, 4, -20}, 2 * kWaterPerVoxel})) ==
        std::vector{RejectReason::WaterLimit});
  (void)step(s, {});
  CHECK(rejections(run(s, PourCommand{VoxelCoord{8, 4, -20}, 2 * kWaterPerVoxel})) ==
        std::vector{RejectReason::WaterLimit});  // 1.75
  (void)step(s, {});
  CHECK(rejections(run(s, PourCommand{VoxelCoord{8, 4, -20}, 2 * kWaterPerVoxel})).empty());  // 2.25
}

TEST_CASE("dig in the open is accepted; through a wall it is refused and nothing changes") {
  SimState s = withPlayer();
  const VoxelCoord floor{0, -1, -20};  // 1 m ahead, in the floor
  const StepOutput open = run(s, DigCommand{floor, ToolSize::Cm5});
  CHECK(rejections(open).empty());
  CHECK(s.world.get(floor) == kAir);

  SimState w = withPlayer();
  buildWall(w, -10);
  const MaterialId before = w.world.get(floor);
  const StepOutput blocked = run(w, DigCommand{floor, ToolSize::Cm5});
  CHECK(rejections(blocked) == std::vector{RejectReason::NoLineOfSight});
  CHECK(w.world.get(floor) == before);
  CHECK(blocked.edits.empty());
  // The server itself (console, scenario events) needs no line of sight.
  const StepOutput server = run(w, DigCommand{floor, ToolSize::Cm5}, 0);
  CHECK(rejections(server).empty());
  CHECK(w.world.get(floor) == kAir);
}

TEST_CASE("a floor voxel seen at a low angle is in sight; one under the floor is not") {
  SimState s = withPlayer();
  // 4.5 m ahead: the line to its centre would cross the floor voxels before it, the
  // line to its top face does not.
  CHECK(rejections(run(s, DigCommand{VoxelCoord{0, -1, -90}, ToolSize::Cm5})).empty());
  CHECK(rejections(run(s, DigCommand{VoxelCoord{3, -4, -40}, ToolSize::Cm5})) ==
        std::vector{RejectReason::NoLineOfSight});
}

TEST_CASE("place against a face: the clicked voxel does not block; a voxel behind the wall is out of sight") {
  SimState s = withPlayer();
  buildWall(s, -10);
  // The face of the wall turned toward the player: the cube goes on the player's side.
  const StepOutput onWall = run(s, PlaceCommand{VoxelCoord{0, 20, -10}, Face::PosZ, ToolSize::Cm5, mat("planks")});
  CHECK(rejections(onWall).empty());
  CHECK(s.world.get(VoxelCoord{0, 20, -9}) == mat("planks"));
  // On the floor in front of the wall, against its top face.
  SimState f = withPlayer();
  buildWall(f, -10);
  const StepOutput onFloor = run(f, PlaceCommand{VoxelCoord{10, -1, -5}, Face::PosY, ToolSize::Cm5, mat("planks")});
  CHECK(rejections(onFloor).empty());
  CHECK(f.world.get(VoxelCoord{10, 0, -5}) == mat("planks"));
  // The far face of the wall, and the floor behind it.
  SimState b = withPlayer();
  buildWall(b, -10);
  CHECK(rejections(run(b, PlaceCommand{VoxelCoord{0, -1, -20}, Face::PosY, ToolSize::Cm5, mat("planks")})) ==
        std::vector{RejectReason::NoLineOfSight});
  CHECK(b.world.get(VoxelCoord{0, 0, -20}) == kAir);
}

TEST_CASE("pour and ignite need a line of sight too") {
  SimState s = withPlayer();
  buildWall(s, -10);
  CHECK(rejections(run(s, PourCommand{VoxelCoord{0, 5, -20}, kWaterPerVoxel})) ==
        std::vector{RejectReason::NoLineOfSight});
  CHECK(rejections(run(s, IgniteCommand{VoxelCoord{0, 5, -20}})) == std::vector{RejectReason::NoLineOfSight});
  // On the near side the pour goes through (ignite on stone is refused for another reason).
  CHECK(rejections(run(s, PourCommand{VoxelCoord{0, 5, -5}, kWaterPerVoxel})).empty());
  CHECK(rejections(run(s, IgniteCommand{VoxelCoord{0, 5, -5}})) == std::vector{RejectReason::NotFlammable});
}
