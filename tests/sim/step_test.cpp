// The step: command order, validation (a rejected command changes nothing and says
// why), digging and placing through the edit log, rate limits, and the state stream.
#include <doctest/doctest.h>

#include <algorithm>

#include "sim/step/mirror.h"
#include "sim/systems/motion.h"
#include "sim/world/voxel_collision.h"
#include "sim/step/step.h"
#include "tests/sim/sim_fixture.h"

using namespace loam::sim;
using loam::test::mat;

namespace {

Command cmd(std::uint32_t player, std::uint32_t seq, CommandBody body) { return Command{PlayerId{player}, seq, body}; }

Command join(std::uint32_t player, const char* name = "P") {
  return cmd(player, 1, JoinCommand{PlayerName::from(name)});
}

template <class E>
std::vector<E> eventsOf(const StepOutput& out) {
  std::vector<E> r;
  for (const Event& e : out.events)
    if (auto* x = std::get_if<E>(&e)) r.push_back(*x);
  return r;
}

std::vector<RejectReason> rejections(const StepOutput& out) {
  std::vector<RejectReason> r;
  for (const auto& e : eventsOf<CommandRejectedEvent>(out)) r.push_back(e.reason);
  return r;
}

// A state with player 1 standing at the origin on the stone floor.
SimState withPlayer() {
  SimState s = loam::test::flatState();
  std::vector<Command> c{join(1, "Ada")};
  (void)step(s, c);
  return s;
}

StepOutput run(SimState& s, std::vector<Command> c) { return step(s, c); }

}  // namespace

TEST_CASE("join and leave produce events and player records; bad joins are rejected") {
  SimState s = loam::test::flatState();
  StepOutput out = run(s, {join(2, "Bo"), join(1, "Ada"), join(0, "Server"), join(2, "Again")});
  REQUIRE(s.players.size() == 2);
  CHECK(s.players[0].id == PlayerId{1});  // sorted by id
  CHECK(s.players[1].name.view() == "Bo");
  CHECK(rejections(out) == std::vector{RejectReason::BadPlayerId, RejectReason::AlreadyJoined});
  REQUIRE(out.players.size() == 2);
  CHECK(out.players[0].kind == PlayerChange::Kind::Joined);
  CHECK(out.players[0].player.id == PlayerId{1});
  CHECK(out.players[0].player.motion.position == s.spawns[0].position);

  out = run(s, {cmd(1, 2, LeaveCommand{}), cmd(3, 1, LeaveCommand{})});
  CHECK(s.players.size() == 1);
  CHECK(rejections(out) == std::vector{RejectReason::UnknownPlayer});
  REQUIRE(out.players.size() == 1);
  CHECK(out.players[0].kind == PlayerChange::Kind::Left);
}

TEST_CASE("inputs move the player once per sequence number; idle players produce no records") {
  SimState s = withPlayer();
  (void)step(s, {});  // settle
  PlayerInput in;
  in.moveForward = 127;
  in.sequence = 5;
  StepOutput out = run(s, {cmd(1, 5, InputCommand{in}), cmd(1, 5, InputCommand{in}), cmd(1, 4, InputCommand{in})});
  CHECK(s.players[0].motion.lastInput == 5);
  CHECK(rejections(out).empty());  // stale and duplicate inputs are ignored silently
  const Vec3i after = s.players[0].motion.position;
  CHECK(after.z < 0);
  REQUIRE(out.players.size() == 1);
  // One motionStep only: equal to applying the input once.
  SimState t = withPlayer();
  (void)step(t, {});
  PlayerState expect = motionStep(t.players[0].motion, in, t.world, t.lut);
  CHECK(expect.position == after);

  // Coming to rest, then nothing changes: no player records at all.
  for (std::uint32_t q = 6; q < 60; ++q) {
    PlayerInput still;
    still.sequence = q;
    (void)step(s, std::vector{cmd(1, q, InputCommand{still})});
  }
  out = run(s, {});
  CHECK(out.players.empty());
}

TEST_CASE("dig removes a sphere through the edit log, with dig and fracture events") {
  SimState s = withPlayer();
  const VoxelCoord target{0, -1, -20};  // 1 m ahead, the floor's top layer (in sight)
  StepOutput out = run(s, {cmd(1, 2, DigCommand{target, ToolSize::Cm5})});
  CHECK(rejections(out).empty());
  REQUIRE(out.edits.size() == 6);  // centre and its five neighbours in the floor
  for (const EditRecord& e : out.edits) {
    CHECK(e.kind == EditRecord::Kind::Voxel);
    CHECK(e.before == mat("stone"));
    CHECK(e.after == kAir);
    CHECK(s.world.get(e.x, e.y, e.z) == kAir);
  }
  auto digs = eventsOf<DigEvent>(out);
  REQUIRE(digs.size() == 1);
  CHECK(digs[0].voxels == 6);
  CHECK(digs[0].material == mat("stone"));
  CHECK(eventsOf<FractureEvent>(out).size() == 1);

  // Out of reach, out of bounds, nothing there: rejected, nothing changes.
  out = run(s, {cmd(1, 3, DigCommand{{0, -3, -200}, ToolSize::Cm40}),
                cmd(1, 4, DigCommand{{0, -300, 0}, ToolSize::Cm5}),
                cmd(1, 5, DigCommand{{0, 20, -20}, ToolSize::Cm10}),
                cmd(1, 6, DigCommand{{0, -3, -20}, static_cast<ToolSize>(3)}),
                cmd(9, 1, DigCommand{{0, -3, -20}, ToolSize::Cm10})});
  CHECK(out.edits.empty());
  CHECK(rejections(out) == std::vector{RejectReason::OutOfReach, RejectReason::OutOfBounds,
                                       RejectReason::NothingToDig, RejectReason::BadArgument,
                                       RejectReason::UnknownPlayer});
}

TEST_CASE("place puts a cube on the face; players, bad materials and full space block it") {
  SimState s = withPlayer();
  // 10 cm cube on top of the floor voxel 1 m ahead: x in [-1, 1), y in [0, 2), z [-21, -19).
  StepOutput out = run(s, {cmd(1, 2, PlaceCommand{{0, -1, -20}, Face::PosY, ToolSize::Cm10, mat("cobble")})});
  CHECK(rejections(out).empty());
  CHECK(out.edits.size() == 8);
  CHECK(s.world.get(-1, 0, -21) == mat("cobble"));
  CHECK(s.world.get(0, 1, -20) == mat("cobble"));
  CHECK(s.world.get(0, 2, -20) == kAir);

  out = run(s, {cmd(1, 3, PlaceCommand{{0, -1, 0}, Face::PosY, ToolSize::Cm10, mat("cobble")}),  // under the player
                cmd(1, 4, PlaceCommand{{0, -1, -20}, Face::PosY, ToolSize::Cm10, mat("water")}),
                cmd(1, 5, PlaceCommand{{0, -1, -20}, Face::PosY, ToolSize::Cm10, kAir}),
                cmd(1, 6, PlaceCommand{{0, -1, -20}, Face::PosY, ToolSize::Cm10, 200}),
                cmd(1, 7, PlaceCommand{{0, 5, -20}, Face::PosY, ToolSize::Cm10, mat("stone")})});  // aimed at air
  CHECK(out.edits.empty());
  CHECK(rejections(out) == std::vector{RejectReason::Blocked, RejectReason::BadMaterial, RejectReason::BadMaterial,
                                       RejectReason::BadMaterial, RejectReason::BadArgument});

  // A brick-aligned 40 cm cube over air is one brick-level record.
  out = run(s, {cmd(1, 8, PlaceCommand{{12, -1, -36}, Face::PosY, ToolSize::Cm40, mat("planks")})});
  REQUIRE(out.edits.size() == 1);
  CHECK(out.edits[0].kind == EditRecord::Kind::BrickFill);
  CHECK(out.edits[0].after == mat("planks"));
  CHECK(s.world.brick({1, 0, -5}).isUniform());
  CHECK(s.world.brick({1, 0, -5}).uniformMaterial() == mat("planks"));
}

TEST_CASE("the server edits anywhere without reach or budget") {
  SimState s = loam::test::flatState();
  std::vector<Command> cmds;
  for (std::uint32_t i = 0; i < 8; ++i) cmds.push_back(cmd(0, 1 + i, DigCommand{{static_cast<int>(i) * 20 - 200, -1, 200}, ToolSize::Cm5}));
  StepOutput out = run(s, cmds);
  CHECK(rejections(out).empty());
  auto digs = eventsOf<DigEvent>(out);
  REQUIRE(digs.size() == 8);
  CHECK(digs[0].who.kind == Actor::Kind::None);
}

TEST_CASE("edits are rate limited per player: a burst of five, then one every 0.1 s") {
  SimState s = withPlayer();
  std::vector<Command> burst;
  for (std::uint32_t i = 0; i < 7; ++i) burst.push_back(cmd(1, 2 + i, DigCommand{{static_cast<int>(i) * 4 - 12, -1, -20}, ToolSize::Cm5}));
  StepOutput out = run(s, burst);
  CHECK(eventsOf<DigEvent>(out).size() == 5);
  CHECK(rejections(out) == std::vector{RejectReason::RateLimited, RejectReason::RateLimited});
  for (int i = 0; i < 5; ++i) (void)step(s, {});
  out = run(s, {cmd(1, 20, DigCommand{{0, -1, -30}, ToolSize::Cm5}), cmd(1, 21, DigCommand{{0, -1, -34}, ToolSize::Cm5})});
  CHECK(eventsOf<DigEvent>(out).size() == 1);  // 6 ticks refilled one edit
}

TEST_CASE("weather and time are server-only; chat is echoed and validated") {
  SimState s = withPlayer();
  StepOutput out = run(s, {cmd(1, 2, SetWeatherCommand{500, 0, 300}), cmd(0, 1, SetWeatherCommand{800, 16384, 600}),
                           cmd(0, 2, SetTimeCommand{s.weather.dayLength}), cmd(0, 3, SetWeatherCommand{1001, 0, 0})});
  // Server commands (player 0) come first in the step's order.
  CHECK(rejections(out) == std::vector{RejectReason::BadArgument, RejectReason::BadArgument, RejectReason::BadPlayerId});
  CHECK(s.weather.rain == 800);
  CHECK(out.weatherChanged);
  CHECK(sameWeather(out.weather, s.weather));

  out = run(s, {cmd(1, 3, ChatCommand{ChatText::from("hello")}), cmd(1, 4, ChatCommand{ChatText::from("")}),
                cmd(0, 4, ChatCommand{ChatText::from("server says")})});
  auto chats = eventsOf<ChatEvent>(out);
  REQUIRE(chats.size() == 2);
  CHECK(chats[0].from == kServerPlayer);  // sorted by player id first
  CHECK(chats[1].text.view() == "hello");
  CHECK(rejections(out) == std::vector{RejectReason::BadArgument});
}

TEST_CASE("the order of commands in the span does not matter") {
  std::vector<Command> cmds{join(1, "Ada"), join(2, "Bo"), join(3, "Cy")};
  PlayerInput in;
  in.moveForward = 100;
  in.sequence = 2;
  for (std::uint32_t p = 1; p <= 3; ++p) {
    cmds.push_back(cmd(p, 2, InputCommand{in}));
    cmds.push_back(cmd(p, 3, DigCommand{{static_cast<int>(p) * 3, -1, -10}, ToolSize::Cm10}));
    cmds.push_back(cmd(p, 4, PlaceCommand{{static_cast<int>(p) * 3 - 20, -1, -10}, Face::PosY, ToolSize::Cm5, mat("cobble")}));
  }
  SimState a = loam::test::flatState();
  StepOutput oa = step(a, cmds);
  std::reverse(cmds.begin(), cmds.end());
  std::rotate(cmds.begin(), cmds.begin() + 4, cmds.end());
  SimState b = loam::test::flatState();
  StepOutput ob = step(b, cmds);
  CHECK(oa.edits == ob.edits);
  CHECK(oa.players == ob.players);
  CHECK(oa.events.size() == ob.events.size());
  CHECK(a.players == b.players);
}

TEST_CASE("fire and water run through the streams and the mirror follows") {
  SimState s = withPlayer();
  SimState mirror = loam::test::flatState();
  {
    // The mirror's history: the same join, through its stream.
    SimState fresh = loam::test::flatState();
    applyStepOutput(mirror, step(fresh, std::vector{join(1, "Ada")}));
  }
  const ChangeSubscriber serverChanges = s.world.subscribeChanges();
  const ChangeSubscriber mirrorChanges = mirror.world.subscribeChanges();
  auto check = [&](const StepOutput& out) {
    applyStepOutput(mirror, out);
    auto bricks = s.world.takeChanged(serverChanges);
    auto more = mirror.world.takeChanged(mirrorChanges);
    bricks.insert(bricks.end(), more.begin(), more.end());
    auto diff = firstDifference(s, mirror, bricks);
    REQUIRE_MESSAGE(!diff, "tick " << out.tick << ": " << *diff);
  };
  StepOutput out = run(s, {cmd(1, 2, PlaceCommand{{0, -1, -20}, Face::PosY, ToolSize::Cm20, mat("planks")})});
  check(out);
  out = run(s, {cmd(1, 3, IgniteCommand{{0, 3, -19}}), cmd(1, 4, IgniteCommand{{6, -1, -24}}),
                cmd(1, 5, PourCommand{{8, 0, -20}, 8 * kWaterPerVoxel})});
  check(out);
  CHECK(rejections(out) == std::vector{RejectReason::NotFlammable});  // stone does not burn
  CHECK(eventsOf<IgnitedEvent>(out).size() == 1);
  CHECK_FALSE(out.fire.empty());
  CHECK_FALSE(out.water.empty());
  std::uint64_t fireRecords = 0, waterRecords = 0, edits = 0;
  for (int i = 0; i < 1200; ++i) {
    out = run(s, {});
    check(out);
    fireRecords += out.fire.size();
    waterRecords += out.water.size();
    edits += out.edits.size();
  }
  MESSAGE("fire records " << fireRecords << ", water records " << waterRecords << ", edits " << edits);
  CHECK(edits > 0);
}

TEST_CASE("teleport is server-only, checks its target and the bounds, and moves the player onto the ground") {
  SimState s = withPlayer();
  const std::int32_t m = kUnitsPerMetre;
  Player& ada = s.players[0];
  ada.motion.velocity = {40, -30, 20};
  const PlayerState before = ada.motion;
  StepOutput out = run(s, {cmd(1, 2, TeleportCommand{PlayerId{1}, {5 * m, 0, 5 * m}, true}),
                           cmd(0, 1, TeleportCommand{PlayerId{9}, {5 * m, 0, 5 * m}, true}),
                           cmd(0, 2, TeleportCommand{PlayerId{1}, {13 * m, 0, 0}, true}),       // past x = 12.8 m
                           cmd(0, 3, TeleportCommand{PlayerId{1}, {0, 5 * m, 0}, false}),       // head above 6.4 m
                           cmd(0, 4, TeleportCommand{PlayerId{1}, {0, -7 * m, 0}, false})});    // below the floor
  CHECK(rejections(out) == std::vector{RejectReason::UnknownPlayer, RejectReason::OutOfBounds,
                                       RejectReason::OutOfBounds, RejectReason::OutOfBounds, RejectReason::BadPlayerId});
  CHECK(s.players[0].motion == before);
  CHECK(out.players.empty());

  // A column with nothing to stand on.
  for (std::int32_t y = -128; y < 0; ++y) s.world.set(100, y, 100, kAir);
  out = run(s, {cmd(0, 5, TeleportCommand{PlayerId{1}, {100 * kUnitsPerVoxel + 512, 0, 100 * kUnitsPerVoxel + 512}, true})});
  CHECK(rejections(out) == std::vector{RejectReason::Blocked});
  CHECK(s.players[0].motion == before);

  // On the ground: the floor's top is y = 0; only position, velocity and the derived
  // flags change, and the step's Updated record carries it (the mirror follows).
  out = run(s, {cmd(0, 6, TeleportCommand{PlayerId{1}, {-5 * m, 3 * m, 7 * m}, true})});
  CHECK(rejections(out).empty());
  const PlayerState& now = s.players[0].motion;
  CHECK(now.position == Vec3i{-5 * m, 0, 7 * m});
  CHECK(now.velocity == Vec3i{});
  CHECK(now.onGround);
  CHECK(now.yaw == before.yaw);
  CHECK(now.lastInput == before.lastInput);
  REQUIRE(out.players.size() == 1);
  CHECK(out.players[0].kind == PlayerChange::Kind::Updated);
  CHECK(out.players[0].player.motion == now);

  // With a height: in the air, and an input lets it fall.
  out = run(s, {cmd(0, 7, TeleportCommand{PlayerId{1}, {2 * m, 3 * m, 2 * m}, false})});
  CHECK(rejections(out).empty());
  CHECK(s.players[0].motion.position == Vec3i{2 * m, 3 * m, 2 * m});
  CHECK_FALSE(s.players[0].motion.onGround);
  PlayerInput in;
  in.sequence = s.players[0].motion.lastInput + 1;
  (void)run(s, {cmd(1, 8, InputCommand{in})});
  CHECK(s.players[0].motion.position.y < 3 * m);

  // Never inside something: with a height inside rock, refused; on the ground beside a
  // trunk (a 2 m post of stone next to the column), lifted until the box is free.
  const PlayerState air = s.players[0].motion;
  out = run(s, {cmd(0, 9, TeleportCommand{PlayerId{1}, {2 * m, -1 * m, 2 * m}, false})});
  CHECK(rejections(out) == std::vector{RejectReason::Blocked});
  CHECK(s.players[0].motion == air);
  const MaterialId stone = *s.materials->find("stone");
  const std::int32_t vx = 3 * m / kUnitsPerVoxel, vz = 3 * m / kUnitsPerVoxel;
  for (std::int32_t y = 0; y < 40; ++y) s.world.set(vx + 4, y, vz, stone);  // 20 cm east of the column's centre
  out = run(s, {cmd(0, 10, TeleportCommand{PlayerId{1}, {3 * m, 0, 3 * m}, true})});
  CHECK(rejections(out).empty());
  CHECK(s.players[0].motion.position.y == 40 * kUnitsPerVoxel);  // on top of the post
  CHECK_FALSE(boxCollides(s.world, s.lut, boxAtFeet(s.players[0].motion.position, kPlayerHalfWidth, kPlayerHeight)));
}

TEST_CASE("groundHeight and playerBoxInside") {
  const BrickStore w = loam::test::flatWorld();
  const MaterialLut lut = makeMaterialLut(*loam::test::testMaterials());
  CHECK(groundHeight(w, lut, 0, 0) == 0);
  CHECK(groundHeight(w, lut, -256, 255) == 0);
  CHECK_FALSE(groundHeight(w, lut, 256, 0).has_value());  // outside
  const WorldBounds b = w.bounds();
  CHECK(playerBoxInside(b, {0, 0, 0}));
  CHECK_FALSE(playerBoxInside(b, {256 * kUnitsPerVoxel, 0, 0}));
  CHECK_FALSE(playerBoxInside(b, {256 * kUnitsPerVoxel - kPlayerHalfWidth + 1, 0, 0}));
  CHECK(playerBoxInside(b, {256 * kUnitsPerVoxel - kPlayerHalfWidth, 0, 0}));
  CHECK_FALSE(playerBoxInside(b, {0, INT32_MAX, 0}));
  CHECK_FALSE(playerBoxInside(b, {INT32_MIN, 0, 0}));
}
