// The mirror test (DESIGN.md "the spine"): a second world built from the same scene
// and seed follows only the three streams and must equal the authoritative world
// after every step, brick by brick (the bricks either world marked dirty) and
// player, weather, water, fire and animal state field by field. A third follows as a
// client does (net/client_playing.cpp): the step's records through applyStep, but
// water per interest cell through applyCellState.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <vector>

#include "sim/step/mirror.h"
#include "sim/gen/scene.h"
#include "sim/trace/script.h"
#include "sim/step/step.h"
#include "sim/world/world_hash.h"
#include "tests/sim/sim_fixture.h"

using namespace loam::sim;

namespace {

// The bricks either of two worlds changed since the last take (one change
// subscriber in each).
struct ChangedBricks {
  SimState& a;
  SimState& b;
  ChangeSubscriber inA = a.world.subscribeChanges();
  ChangeSubscriber inB = b.world.subscribeChanges();

  std::vector<BrickCoord> take() {
    std::vector<BrickCoord> bricks = a.world.takeChanged(inA);
    std::vector<BrickCoord> more = b.world.takeChanged(inB);
    bricks.insert(bricks.end(), more.begin(), more.end());
    return bricks;
  }
};

// What a client receives of one step: everything but water in the step's records
// (the fire records too: the client burns its cells itself), water per interest
// cell (CellState messages), each cell's in step order.
void followAsClient(SimState& client, const StepOutput& out) {
  std::vector<EditRecord> edits;
  StepRecords records = recordsOf(out, edits);
  records.water = {};
  applyStep(client, records);
  std::vector<CellCoord> cells;
  for (const WaterChange& w : out.water) cells.push_back(cellOf(brickOf(w.voxel)));
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  std::vector<WaterChange> water;
  for (const CellCoord& cell : cells) {
    water.clear();
    for (const WaterChange& w : out.water) {
      if (cellOf(brickOf(w.voxel)) == cell) water.push_back(w);
    }
    applyCellState(client, out.tick, cell, false, water, {});
  }
}

struct Tally {
  std::array<std::uint64_t, std::variant_size_v<Event>> events{};
  std::uint64_t edits = 0, water = 0, fire = 0, players = 0, checkedBricks = 0;
};

}  // namespace

TEST_CASE("glade: 3,000 scripted steps, the mirror follows the streams exactly") {
  auto scene = loadScene(LOAM_SOURCE_DIR "/scenes/glade.toml");
  REQUIRE_MESSAGE(scene.has_value(), (scene ? "" : scene.error().message));
  auto script = loadScript(LOAM_SOURCE_DIR "/scenes/scripts/glade-mirror.txt");
  REQUIRE_MESSAGE(script.has_value(), (script ? "" : script.error().message));

  auto authoritative = createSimState(*scene, scene->defaultSeed);
  REQUIRE(authoritative.has_value());
  auto mirrored = createSimState(*scene, scene->defaultSeed);
  REQUIRE(mirrored.has_value());
  auto followed = createSimState(*scene, scene->defaultSeed);
  REQUIRE(followed.has_value());
  SimState& server = *authoritative;
  SimState& mirror = *mirrored;
  SimState& client = *followed;
  REQUIRE(worldHash(server.world) == worldHash(mirror.world));
  ChangedBricks changed{server, mirror};

  ScriptRunner runner(std::move(script).value());
  std::vector<Command> commands;
  StepOutput out;
  Tally tally;
  constexpr int kSteps = 3000;
  for (int i = 0; i < kSteps; ++i) {
    commands.clear();
    runner.commandsFor(server, commands);
    step(server, commands, out);
    applyStepOutput(mirror, out);
    followAsClient(client, out);
    const std::vector<BrickCoord> bricks = changed.take();
    tally.checkedBricks += bricks.size();
    if (auto diff = firstDifference(server, mirror, bricks)) {
      FAIL("step " << out.tick << ": " << *diff);
    }
    if (auto diff = firstDifference(server, client, bricks)) {
      FAIL("step " << out.tick << ", followed as a client: " << *diff);
    }
    tally.edits += out.edits.size();
    tally.water += out.water.size();
    tally.fire += out.fire.size();
    tally.players += out.players.size();
    for (const Event& e : out.events) ++tally.events[e.index()];
  }
  CHECK(worldHash(server.world) == worldHash(mirror.world));
  CHECK(worldHash(server.world) == worldHash(client.world));

  // The script exercises everything that exists: make sure it really did.
  MESSAGE("edits " << tally.edits << ", bricks compared " << tally.checkedBricks << ", water records " << tally.water
                   << ", fire records " << tally.fire << ", player records " << tally.players);
  const auto& ev = tally.events;
  MESSAGE("events: ignited " << ev[0] << " extinguished " << ev[1] << " landed " << ev[2] << " footstep " << ev[3]
                             << " dig " << ev[4] << " fracture " << ev[5] << " splash " << ev[6] << " chat " << ev[8]
                             << " rejected " << ev[9] << " joined " << ev[10] << " left " << ev[11]);
  CHECK(tally.edits > 1000);
  CHECK(ev[4] > 40);   // digs (the script digs some pits it can no longer see into)
  CHECK(ev[3] > 100);  // footsteps
  CHECK(ev[0] > 0);    // ignitions
  CHECK(ev[1] > 0);    // extinguished (rain from 30 s)
  CHECK(tally.water > 0);
  CHECK(ev[8] > 0);   // chat
  CHECK(ev[9] > 0);   // rejected commands
  CHECK(ev[11] == 1);  // p8 left once
  CHECK(server.players.size() == 8);
}

TEST_CASE("a change that bypasses the streams is caught at that step, naming brick and field") {
  SimState server = loam::test::flatState();
  SimState mirror = loam::test::flatState();
  std::vector<Command> cmds{{PlayerId{1}, 1, JoinCommand{PlayerName::from("Ada")}}};
  ChangedBricks changed{server, mirror};
  StepOutput out;
  step(server, cmds, out);
  applyStepOutput(mirror, out);
  auto bricks = changed.take();
  REQUIRE_FALSE(firstDifference(server, mirror, bricks).has_value());

  // A voxel set directly on the authoritative store, not through SimContext.
  server.world.set(VoxelCoord{3, 1, -5}, loam::test::mat("stone"));
  step(server, {}, out);
  applyStepOutput(mirror, out);
  bricks = changed.take();
  auto diff = firstDifference(server, mirror, bricks);
  REQUIRE(diff.has_value());
  CHECK(diff->find("brick (0,0,-1) voxel (3,1,-5)") != std::string::npos);
  CHECK(diff->find("expected material 5, actual 0") != std::string::npos);

  // A player field changed without a state record.
  SimState server2 = loam::test::flatState();
  SimState mirror2 = loam::test::flatState();
  step(server2, cmds, out);
  applyStepOutput(mirror2, out);
  server2.players[0].motion.velocity.y = 99;
  diff = firstDifference(server2, mirror2, {});
  REQUIRE(diff.has_value());
  CHECK(*diff == "player 1 velocity.y: expected 99, actual 0");
}
