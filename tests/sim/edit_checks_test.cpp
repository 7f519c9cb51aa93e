// The step's checks on a player's edits beyond reach and rate (sim/step/step.cpp):
// the global cap on poured water (sim/systems/water.h, waterFull). Player 1 stands
// at the origin on the stone floor of the test world.
#include <doctest/doctest.h>

#include <vector>

#include "sim/step/step.h"
#include "sim/systems/water.h"
#include "tests/sim/sim_fixture.h"

using namespace loam::sim;

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
  CHECK(waterAt(s.water, VoxelCoord{10, 0, -20}) == 0);
  CHECK(waterStats(s.water).wetVoxels <= wet);  // nothing was added (it may only spread and soak)
  // A refused pour costs no edit token: the player can still dig at once.
  CHECK(rejections(run(s, DigCommand{VoxelCoord{5, -1, -5}, ToolSize::Cm5})).empty());
  // The server (console, scenario events) is not capped.
  const StepOutput server = run(s, PourCommand{VoxelCoord{-10, 4, -20}, kWaterPerVoxel}, 0);
  CHECK(rejections(server).empty());
  CHECK_FALSE(server.water.empty());
}
