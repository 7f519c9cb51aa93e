// Client prediction against a simulated server: bit-exact agreement when the worlds
// match, a counted and eased correction when they do not, and ack bookkeeping.
#include <doctest/doctest.h>

#include <cstdlib>
#include <deque>

#include "net/prediction.h"
#include "sim/systems/motion.h"
#include "tests/sim/sim_fixture.h"

using namespace loam;
using loam::test::flatWorld;
using loam::test::mat;

namespace {

/// A server that applies the client's inputs `delay` inputs late, in its own world,
/// with the same motionStep, and acknowledges its state after each.
struct FakeServer {
  sim::BrickStore world = flatWorld();
  sim::PlayerState state;
  std::deque<sim::PlayerInput> inbox;
  std::size_t delay = 5;

  /// Receives one input; returns true and the acked state when one was applied.
  bool receive(const sim::PlayerInput& in, const sim::MaterialLut& lut, sim::PlayerState& ack) {
    inbox.push_back(in);
    if (inbox.size() <= delay) return false;
    return applyOne(lut, ack);
  }
  bool applyOne(const sim::MaterialLut& lut, sim::PlayerState& ack) {
    if (inbox.empty()) return false;
    state = sim::motionStep(state, inbox.front(), world, lut);
    inbox.pop_front();
    ack = state;
    return true;
  }
};

sim::PlayerInput inputFor(std::uint32_t seq) {
  // Walk, turn, run and jump in a pattern that keeps the player inside the test world.
  sim::PlayerInput in;
  in.sequence = seq;
  in.moveForward = static_cast<std::int8_t>((seq / 40) % 2 == 0 ? 127 : -127);
  in.moveRight = static_cast<std::int8_t>((seq % 50) < 10 ? 60 : 0);
  in.yaw = static_cast<std::uint16_t>(seq * 97);
  in.pitch = static_cast<std::int16_t>((seq % 64) * 100 - 3200);
  in.buttons = static_cast<std::uint8_t>(((seq % 37) == 0 ? sim::kButtonJump : 0) |
                                          ((seq % 90) > 60 ? sim::kButtonRun : 0));
  return in;
}

}  // namespace

TEST_CASE("prediction matches a delayed server exactly when the worlds agree") {
  const sim::MaterialLut lut = sim::makeMaterialLut(*test::testMaterials());
  const sim::BrickStore clientWorld = flatWorld();
  FakeServer server;
  net::Predictor p;
  p.reset(server.state);
  CHECK(p.pending().empty());

  sim::PlayerState ack;
  for (std::uint32_t seq = 1; seq <= 400; ++seq) {
    const sim::PlayerInput in = inputFor(seq);
    p.predict(in, clientWorld, lut);
    CHECK(p.state().lastInput == seq);
    if (server.receive(in, lut, ack)) {
      CHECK_FALSE(p.reconcile(ack, clientWorld, lut));
      CHECK(p.acknowledged() == ack.lastInput);
      // The unacknowledged inputs are exactly the ones the server has not applied.
      REQUIRE(p.pending().size() == server.inbox.size());
      CHECK(p.pending().front().sequence == ack.lastInput + 1);
      CHECK(p.pending().back().sequence == seq);
      CHECK(p.visualOffset() == sim::Vec3i{});
    }
  }
  while (server.applyOne(lut, ack)) CHECK_FALSE(p.reconcile(ack, clientWorld, lut));

  CHECK(p.pending().empty());
  CHECK(p.state() == server.state);
  CHECK(p.state().lastInput == 400);
  CHECK(p.stats().predicted == 400);
  CHECK(p.stats().reconciled == 400);
  CHECK(p.stats().corrections == 0);
  CHECK(p.stats().replayed > 0);
  // The player really moved (the test exercises motion, not a standing box).
  CHECK(std::abs(p.state().position.z) + std::abs(p.state().position.x) > sim::unitsFromMetres(1.0));
}

TEST_CASE("a wall only the server has causes corrections, then the prediction converges") {
  const sim::MaterialLut lut = sim::makeMaterialLut(*test::testMaterials());
  const sim::BrickStore clientWorld = flatWorld();
  FakeServer server;
  server.delay = 6;
  // 3 m high wall across the path north, from z = -2 m to -1.5 m.
  for (int z = -40; z < -30; ++z)
    for (int y = 0; y < 60; ++y)
      for (int x = -60; x < 60; ++x) server.world.set(x, y, z, mat("stone"));

  net::Predictor p;
  p.reset(server.state);
  sim::PlayerState ack;
  std::uint32_t seq = 0;
  bool sawOffset = false;
  auto tick = [&](std::int8_t forward) {
    sim::PlayerInput in;
    in.sequence = ++seq;
    in.moveForward = forward;
    p.predict(in, clientWorld, lut);
    if (server.receive(in, lut, ack)) p.reconcile(ack, clientWorld, lut);
    if (p.visualOffset() != sim::Vec3i{}) sawOffset = true;
  };
  for (int i = 0; i < 120; ++i) tick(127);  // walk north into the wall for 2 s
  MESSAGE("corrections ", p.stats().corrections, " replayed ", p.stats().replayed);
  CHECK(p.stats().corrections > 0);
  CHECK(sawOffset);
  // The server's player stopped at the wall; the client's predicted one is pulled back.
  CHECK(server.state.position.z > sim::unitsFromMetres(-1.5));

  // Stand still: once the server has caught up, nothing differs any more.
  for (int i = 0; i < 60; ++i) tick(0);
  const std::uint64_t corrections = p.stats().corrections;
  for (int i = 0; i < 60; ++i) tick(0);
  CHECK(p.stats().corrections == corrections);
  while (server.applyOne(lut, ack)) p.reconcile(ack, clientWorld, lut);
  CHECK(p.state() == server.state);
  CHECK(p.state().position.z > sim::unitsFromMetres(-1.5));
}

TEST_CASE("the visual offset eases a correction away over about 6 frames") {
  const sim::MaterialLut lut = sim::makeMaterialLut(*test::testMaterials());
  const sim::BrickStore world = flatWorld();
  net::Predictor p;
  sim::PlayerState start;
  p.reset(start);
  sim::PlayerInput in;
  in.moveForward = 127;
  for (std::uint32_t s = 1; s <= 10; ++s) {
    in.sequence = s;
    p.predict(in, world, lut);
  }
  // The server says input 5 left the player 1 m east of where the client thought.
  sim::PlayerState server = sim::motionStep(start, {}, world, lut);
  server.position.x += sim::unitsFromMetres(1.0);
  server.lastInput = 5;
  const sim::Vec3i before = p.state().position;
  CHECK(p.reconcile(server, world, lut));
  CHECK(p.stats().corrections == 1);
  CHECK(p.pending().size() == 5);
  CHECK(p.stats().replayed == 5);
  // Drawn where it was: state + offset equals the old prediction.
  const sim::Vec3i off = p.visualOffset();
  CHECK(p.state().position.x + off.x == before.x);
  CHECK(p.state().position.z + off.z == before.z);
  CHECK(off.x < -sim::unitsFromMetres(0.9));

  std::int32_t last = std::abs(off.x);
  for (int f = 0; f < 6; ++f) {
    p.advanceFrame();
    const std::int32_t now = std::abs(p.visualOffset().x);
    CHECK((now < last || now == 0));
    last = now;
  }
  CHECK(p.visualOffset() == sim::Vec3i{});
}

TEST_CASE("repeated and older acknowledgements are ignored; unpredicted ones are adopted") {
  const sim::MaterialLut lut = sim::makeMaterialLut(*test::testMaterials());
  const sim::BrickStore world = flatWorld();
  FakeServer server;
  server.delay = 0;
  net::Predictor p;
  p.reset(server.state);
  std::vector<sim::PlayerState> acks;
  sim::PlayerState ack;
  for (std::uint32_t s = 1; s <= 8; ++s) {
    sim::PlayerInput in = inputFor(s);
    p.predict(in, world, lut);
    REQUIRE(server.receive(in, lut, ack));
    acks.push_back(ack);
  }
  CHECK_FALSE(p.reconcile(acks[5], world, lut));  // ack 6
  CHECK(p.acknowledged() == 6);
  CHECK(p.pending().size() == 2);
  const net::PredictionStats before = p.stats();
  const sim::PlayerState predicted = p.state();

  // A duplicate and an older ack, even one that looks wrong, change nothing.
  sim::PlayerState bogus = acks[2];
  bogus.position.x += 5000;
  CHECK_FALSE(p.reconcile(acks[5], world, lut));
  CHECK_FALSE(p.reconcile(bogus, world, lut));
  CHECK(p.stats().reconciled == before.reconciled);
  CHECK(p.stats().corrections == 0);
  CHECK(p.state() == predicted);
  CHECK(p.pending().size() == 2);

  CHECK_FALSE(p.reconcile(acks[7], world, lut));
  CHECK(p.pending().empty());
  CHECK(p.state() == server.state);

  // After a reset the server may acknowledge inputs this client never predicted.
  p.reset(sim::PlayerState{});
  sim::PlayerState far = server.state;
  far.lastInput = 50;
  far.position.z = sim::unitsFromMetres(-3.0);
  CHECK_FALSE(p.reconcile(far, world, lut));
  CHECK(p.state() == far);
  CHECK(p.acknowledged() == 50);
  sim::PlayerInput next;
  next.sequence = 51;
  p.predict(next, world, lut);
  CHECK(p.state().lastInput == 51);
  CHECK(p.pending().size() == 1);
}

TEST_CASE("a server move (teleport) is adopted at once, with or without a new input, and is no correction") {
  const sim::MaterialLut lut = sim::makeMaterialLut(*test::testMaterials());
  const sim::BrickStore world = flatWorld();
  FakeServer server;
  server.delay = 2;
  net::Predictor p;
  p.reset(server.state);
  sim::PlayerState ack;
  std::uint32_t seq = 0;
  auto tick = [&] {
    sim::PlayerInput in = inputFor(++seq);
    p.predict(in, world, lut);
    if (server.receive(in, lut, ack)) CHECK_FALSE(p.reconcile(ack, world, lut));
  };
  for (int i = 0; i < 30; ++i) tick();
  REQUIRE(p.pending().size() == 2);

  // The server moves the player 40 m east between inputs: the state comes with the
  // input it acknowledged already.
  server.state.position.x += sim::unitsFromMetres(40.0);
  server.state.velocity = {};
  CHECK_FALSE(p.reconcile(server.state, world, lut));
  CHECK(p.stats().teleports == 1);
  CHECK(p.stats().corrections == 0);
  CHECK(p.visualOffset() == sim::Vec3i{});  // snapped, not eased
  CHECK(p.pending().size() == 2);           // replayed from the new place
  CHECK(p.state().position.x > sim::unitsFromMetres(35.0));
  // The same state again is a repeated acknowledgement.
  CHECK_FALSE(p.reconcile(server.state, world, lut));
  CHECK(p.stats().teleports == 1);

  // Moved again, and an input applied after the move: a new acknowledgement far
  // from its prediction.
  server.state.position.z -= sim::unitsFromMetres(100.0);
  for (int i = 0; i < 30; ++i) tick();
  CHECK(p.stats().teleports == 2);
  CHECK(p.stats().corrections == 0);
  while (server.applyOne(lut, ack)) CHECK_FALSE(p.reconcile(ack, world, lut));
  CHECK(p.state() == server.state);
}
