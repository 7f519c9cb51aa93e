// Predicted edits (net/predicted_edits.h) against the real step: a prediction shows
// at once exactly what the step then does, the mirror never holds it, and every
// answer settles it once: confirmed, overridden by another edit, rolled back, or
// expired. No sockets: the "server" is sim::step on a copy of the state.
#include <doctest/doctest.h>

#include <algorithm>
#include <variant>
#include <vector>

#include "net/predicted_edits.h"
#include "sim/step/step.h"
#include "tests/sim/sim_fixture.h"

using namespace loam;
using loam::test::mat;

namespace {

constexpr sim::PlayerId kOwn{1};

/// The flat test world with player 1 standing at the origin (facing -z).
sim::SimState joined() {
  sim::SimState s = test::flatState();
  const sim::Command join{kOwn, 0, sim::JoinCommand{sim::PlayerName::from("own")}};
  sim::step(s, std::span<const sim::Command>(&join, 1));
  REQUIRE(s.findPlayer(kOwn) != nullptr);
  return s;
}

sim::StepOutput stepWith(sim::SimState& s, const sim::CommandBody& body, std::uint32_t sequence = 1) {
  const sim::Command c{kOwn, sequence, body};
  return sim::step(s, std::span<const sim::Command>(&c, 1));
}

/// Voxels within `r` of `at` that the overlay over `shown` shows unlike `server`.
int differences(const sim::VoxelOverlay& overlay, const sim::BrickStore& shown, const sim::BrickStore& server,
                sim::VoxelCoord at, int r) {
  int n = 0;
  for (int z = -r; z <= r; ++z)
    for (int y = -r; y <= r; ++y)
      for (int x = -r; x <= r; ++x) {
        const sim::VoxelCoord v{at.x + x, at.y + y, at.z + z};
        n += overlay.get(shown, v) != server.get(v) ? 1 : 0;
      }
  return n;
}

}  // namespace

TEST_CASE("a predicted dig shows at once what the step does, plays its sound once, and is confirmed") {
  sim::SimState server = joined();
  sim::SimState mirror = server;  // the client's copy, as of the same tick
  net::PredictedEdits predicted;
  const sim::DigCommand dig{{0, -1, -20}, sim::ToolSize::Cm20};  // 1 m ahead, in the floor
  std::vector<sim::Event> sounds;
  predicted.predict(7, dig, mirror, kOwn, 0, sounds);

  // Shown at once, over a mirror that does not hold it.
  CHECK(predicted.overlay().get(mirror.world, dig.target) == sim::kAir);
  CHECK(mirror.world.get(dig.target) == mat("stone"));
  CHECK(predicted.stats().pending == 1);
  const std::vector<sim::BrickCoord> changed = predicted.takeChangedBricks();
  CHECK(std::count(changed.begin(), changed.end(), sim::brickOf(dig.target)) == 1);
  CHECK(predicted.takeChangedBricks().empty());
  REQUIRE(sounds.size() == 2);  // the dig and the stone that broke, as the step emits them
  const auto* d = std::get_if<sim::DigEvent>(&sounds[0]);
  REQUIRE(d != nullptr);

  // The server's step removes exactly what is shown, and emits the same events.
  const sim::StepOutput out = stepWith(server, dig);
  CHECK(differences(predicted.overlay(), mirror.world, server.world, dig.target, 5) == 0);
  const auto* served = std::get_if<sim::DigEvent>(&out.events.at(0));
  REQUIRE(served != nullptr);
  CHECK(served->voxels == d->voxels);
  CHECK(served->material == d->material);
  // Its events are the prediction's echo (already played); another player's are not.
  for (const sim::Event& e : out.events) CHECK(predicted.echoes(e, kOwn));
  CHECK_FALSE(predicted.echoes(out.events.at(0), sim::PlayerId{2}));

  // The mirror follows the step, then the answer arrives: confirmed, nothing left.
  mirror = server;
  CHECK(predicted.settle(7, true, mirror.world, 0));
  CHECK_FALSE(predicted.settle(7, true, mirror.world, 0));  // a duplicate answer changes nothing
  CHECK_FALSE(predicted.settle(99, false, mirror.world, 0));  // nor one for an action never predicted
  const net::EditPredictionStats s = predicted.stats();
  CHECK(s.predicted == 1);
  CHECK(s.confirmed == 1);
  CHECK(s.rolledBack + s.overridden + s.expired + s.pending == 0);
  CHECK(predicted.overlay().empty());
  CHECK(predicted.ghostVoxels(mirror.world) == 0);
  const std::vector<sim::BrickCoord> settled = predicted.takeChangedBricks();  // meshes redo them
  CHECK(std::count(settled.begin(), settled.end(), sim::brickOf(dig.target)) == 1);
}

TEST_CASE("predictions stack in order; a refused one rolls back without undoing the others") {
  sim::SimState mirror = joined();
  net::PredictedEdits predicted;
  std::vector<sim::Event> sounds;
  const sim::VoxelCoord floor{0, -1, -20};
  // Place a 10 cm cube of brick on the floor, then dig into it and the floor below.
  const sim::PlaceCommand place{floor, sim::Face::PosY, sim::ToolSize::Cm10, mat("brick")};
  const sim::DigCommand dig{{0, 0, -20}, sim::ToolSize::Cm5};
  predicted.predict(1, place, mirror, kOwn, 0, sounds);
  const sim::VoxelCoord above{0, 0, -20};
  CHECK(predicted.overlay().get(mirror.world, above) == mat("brick"));
  predicted.predict(2, dig, mirror, kOwn, 0, sounds);  // digs what the place shows
  CHECK(predicted.overlay().get(mirror.world, above) == sim::kAir);

  // The dig is refused: the place shows again; the mirror never changed.
  CHECK(predicted.settle(2, false, mirror.world, 0));
  CHECK(predicted.overlay().get(mirror.world, above) == mat("brick"));
  CHECK(mirror.world.get(above) == sim::kAir);
  CHECK(predicted.stats().rolledBack == 1);
  CHECK(predicted.ghostVoxels(mirror.world) > 0);  // the place is still only shown

  // The place is applied as predicted.
  sim::SimState server = mirror;
  stepWith(server, place);
  CHECK(differences(predicted.overlay(), mirror.world, server.world, above, 4) == 0);
  CHECK(predicted.settle(1, true, server.world, 0));
  CHECK(predicted.stats().confirmed == 1);
  CHECK(predicted.overlay().empty());
}

TEST_CASE("an edit another player's won over is overridden: the server's voxels show") {
  sim::SimState mirror = joined();
  net::PredictedEdits predicted;
  std::vector<sim::Event> sounds;
  const sim::PlaceCommand place{{0, -1, -20}, sim::Face::PosY, sim::ToolSize::Cm10, mat("brick")};
  predicted.predict(1, place, mirror, kOwn, 0, sounds);
  // Someone else's clay reached one of those voxels first; ours filled the rest.
  sim::SimState server = mirror;
  server.world.set({0, 0, -20}, mat("clay"));
  stepWith(server, place);
  CHECK(server.world.get({0, 0, -20}) == mat("clay"));
  CHECK(predicted.settle(1, true, server.world, 0));
  CHECK(predicted.stats().overridden == 1);
  CHECK(predicted.overlay().get(server.world, {0, 0, -20}) == mat("clay"));
}

TEST_CASE("pour and ignite show water and a flame until answered; unanswered predictions expire") {
  sim::SimState mirror = joined();
  mirror.world.set({0, 0, -20}, mat("planks"));
  net::PredictedEdits predicted;
  std::vector<sim::Event> sounds;
  predicted.predict(1, sim::PourCommand{{2, 0, -20}, 500}, mirror, kOwn, 100, sounds);
  CHECK(predicted.overlay().get(mirror.world, {2, 0, -20}) == mirror.water.water);
  CHECK(mirror.water.water != sim::kAir);
  predicted.predict(2, sim::IgniteCommand{{0, 0, -20}}, mirror, kOwn, 200, sounds);
  REQUIRE(predicted.flames().size() == 1);
  CHECK(predicted.flames()[0] == sim::VoxelCoord{0, 0, -24});  // the brick's corner
  REQUIRE(sounds.size() == 1);
  CHECK(std::holds_alternative<sim::IgnitedEvent>(sounds[0]));
  // Stone does not burn: nothing shown, nothing played, still awaiting its answer.
  predicted.predict(3, sim::IgniteCommand{{0, -1, -20}}, mirror, kOwn, 300, sounds);
  CHECK(predicted.flames().size() == 1);
  CHECK(sounds.size() == 1);
  CHECK(predicted.stats().pending == 3);
  // Chat is not an edit: nothing to predict.
  predicted.predict(4, sim::ChatCommand{sim::ChatText::from("hi")}, mirror, kOwn, 300, sounds);
  CHECK(predicted.stats().pending == 3);

  predicted.expire(100 + net::kPredictionTimeoutMs);  // not yet: exactly the limit
  CHECK(predicted.stats().expired == 0);
  predicted.expire(250 + net::kPredictionTimeoutMs);
  CHECK(predicted.stats().expired == 2);
  CHECK(predicted.overlay().empty());
  CHECK(predicted.flames().empty());
  CHECK(predicted.settle(3, true, mirror.world, 0));
  CHECK(predicted.stats().pending == 0);
}
