// The state codec: round trips through bytes and through a save file, a restored
// server that a snapshot-joined mirror follows, hostile bytes, and the cell helpers.
#include "sim/save/state_codec.h"

#include <doctest/doctest.h>

#include <vector>

#include "sim/gen/generator_version.h"
#include "sim/step/mirror.h"
#include "sim/gen/scene.h"
#include "sim/trace/script.h"
#include "sim/step/step.h"
#include "sim/world/world_hash.h"
#include "tests/sim/save_fixture.h"

using namespace loam::sim;

namespace {

struct Run {
  Scene scene;
  SimState server;
  ScriptRunner runner;
  std::vector<Command> commands;
  StepOutput out;

  // The scripted commands plus a server pour every 20 ticks over the clearing.
  void stepOnce() {
    loam::test::forestFiresCommands(server, runner, commands);
    step(server, commands, out);
  }
};

Run& fixture() {
  static Run* run = [] {
    auto scene = loadScene(LOAM_SOURCE_DIR "/scenes/forest-fires.toml");
    LOAM_ASSERT(scene.has_value());
    auto script = loadScript(LOAM_SOURCE_DIR "/scenes/scripts/forest-fires.txt");
    LOAM_ASSERT(script.has_value());
    auto state = createSimState(*scene, scene->defaultSeed);
    LOAM_ASSERT(state.has_value());
    auto* r = new Run{*scene, std::move(state).value(), ScriptRunner(std::move(script).value()), {}, {}};
    for (int i = 0; i < 400; ++i) r->stepOnce();
    return r;
  }();
  return *run;
}

std::vector<BrickCoord> modifiedBricks(const BrickStore& w) {
  std::vector<BrickCoord> out;
  w.forEachModified([&](BrickCoord b) { out.push_back(b); });
  return out;
}

SaveData roundTripSave(const SimState& s) {
  SaveHeader h{kSaveFormatVersion, SaveIdentity{s.sceneHash, s.seed, kGeneratorVersion}, s.tick};
  auto data = captureSave(h, s.world, stateBlobs(s));
  REQUIRE(data.has_value());
  auto bytes = encodeSave(*data);
  REQUIRE(bytes.has_value());
  auto back = decodeSave(*bytes);
  REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().message));
  return std::move(back).value();
}

// Decodes one named blob into target state t.
Result<void> decodeInto(const std::string& name, std::span<const std::uint8_t> b, SimState& t) {
  if (name == "players") return decodePlayers(b, t.players);
  if (name == "water") return decodeWater(b, t.water, t.world);
  if (name == "fire") return decodeFire(b, t.fire, t.world);
  if (name == "animals") return decodeAnimals(b, t.animals, t.tick);
  return decodeWeather(b, t.weather);
}

}  // namespace

TEST_CASE("codec: the fixture is non-trivial") {
  const SimState& s = fixture().server;
  CHECK(s.players.size() == 5);
  CHECK(s.water.grid.size() > 0);
  CHECK(s.fire.cells.size() > 0);
  CHECK(s.animals.animals.size() > 0);
  MESSAGE("wet cells " << s.water.grid.size() << ", fire cells " << s.fire.cells.size() << ", animals "
                       << s.animals.animals.size());
}

TEST_CASE("codec: blobs decode into a fresh mirror equal to the server, and re-encode to the same bytes") {
  Run& run = fixture();
  const std::vector<SaveBlob> blobs = stateBlobs(run.server);
  REQUIRE(blobs.size() == 5);
  auto mirror = createSimState(run.scene, run.scene.defaultSeed);
  REQUIRE(mirror.has_value());
  mirror->tick = run.server.tick;
  for (const SaveBlob& b : blobs) {
    Result<void> r = decodeInto(b.name, b.bytes, *mirror);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  }
  auto diff = firstDifference(run.server, *mirror, {});
  CHECK_MESSAGE(!diff.has_value(), (diff ? *diff : ""));
  const std::vector<SaveBlob> again = stateBlobs(*mirror);
  for (std::size_t i = 0; i < blobs.size(); ++i) {
    CHECK(again[i].name == blobs[i].name);
    CHECK(again[i].bytes == blobs[i].bytes);
  }
}

TEST_CASE("codec: a restored server equals the original; a mirror joined from its blobs follows it") {
  Run& run = fixture();
  const SaveData save = roundTripSave(run.server);
  auto restored = createSimState(run.scene, run.scene.defaultSeed);
  REQUIRE(restored.has_value());
  Result<void> r = restoreState(save, *restored);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  CHECK(restored->tick == run.server.tick);
  CHECK(worldHash(restored->world) == worldHash(run.server.world));
  auto diff = firstDifference(run.server, *restored, modifiedBricks(run.server.world));
  REQUIRE_MESSAGE(!diff.has_value(), (diff ? *diff : ""));
  CHECK(restored->fire.work.size() == restored->fire.cells.size());
  CHECK(restored->animals.brains.size() == restored->animals.animals.size());
  CHECK(restored->animals.nextId > restored->animals.animals.back().id.value);

  // A client joining now: fresh mirror + the restored server's blobs + its bricks.
  auto joined = createSimState(run.scene, run.scene.defaultSeed);
  REQUIRE(joined.has_value());
  REQUIRE(restoreState(roundTripSave(*restored), *joined).has_value());

  // Both servers keep stepping with the same commands (the runner copied at the
  // save) in lockstep; a mirror joined from the restored server's save follows it.
  Run other{run.scene, std::move(*restored), run.runner, {}, {}};
  const ChangeSubscriber otherChanges = other.server.world.subscribeChanges();
  const ChangeSubscriber runChanges = run.server.world.subscribeChanges();
  for (int i = 0; i < 300; ++i) {
    run.stepOnce();
    other.stepOnce();
    applyStepOutput(*joined, other.out);
    REQUIRE(other.out.tick == run.out.tick);
    REQUIRE_MESSAGE(sameWeather(run.server.weather, other.server.weather), "tick " << other.out.tick);
    std::vector<BrickCoord> bricks = other.server.world.takeChanged(otherChanges);
    auto d = firstDifference(other.server, *joined, bricks);
    REQUIRE_MESSAGE(!d.has_value(), "tick " << other.out.tick << ": " << (d ? *d : ""));
    REQUIRE(other.server.fire.work.size() == other.server.fire.cells.size());
    // Lockstep with the original server: every replicated field and the bricks
    // either server changed this step.
    std::vector<BrickCoord> both = run.server.world.takeChanged(runChanges);
    both.insert(both.end(), bricks.begin(), bricks.end());
    auto l = firstDifference(run.server, other.server, both);
    REQUIRE_MESSAGE(!l.has_value(), "lockstep, tick " << other.out.tick << ": " << (l ? *l : ""));
    REQUIRE(run.out.edits == other.out.edits);
  }
  CHECK(worldHash(joined->world) == worldHash(other.server.world));
  CHECK(worldHash(run.server.world) == worldHash(other.server.world));
}

TEST_CASE("codec: every truncation fails, bit flips never crash") {
  Run& run = fixture();
  const std::vector<SaveBlob> blobs = stateBlobs(run.server);
  auto target = createSimState(run.scene, run.scene.defaultSeed);
  REQUIRE(target.has_value());
  SimState& t = *target;
  for (const SaveBlob& b : blobs) {
    // Truncations: every length for small blobs, a spread for big ones (each costs a decode).
    const std::size_t n = b.bytes.size();
    const std::size_t stride = n > 4000 ? n / 2000 : 1;
    for (std::size_t len = 0; len < n; len += (len < 64 ? 1 : stride)) {
      Result<void> r = decodeInto(b.name, std::span(b.bytes.data(), len), t);
      REQUIRE_MESSAGE(!r.has_value(), b.name << " truncated to " << len);
      CHECK(r.error().message.rfind(b.name, 0) == 0);
    }
    // One trailing byte too many.
    std::vector<std::uint8_t> longer = b.bytes;
    longer.push_back(0);
    CHECK_FALSE(decodeInto(b.name, longer, t).has_value());
    // Bit flips: decode may succeed or fail, but must not crash or read past the input.
    std::vector<std::uint8_t> m = b.bytes;
    const std::size_t bits = n * 8;
    const std::size_t step = bits > 3000 ? bits / 1500 + 1 : 1;
    for (std::size_t bit = 0; bit < bits; bit += step) {
      m[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
      (void)decodeInto(b.name, m, t);
      m[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    }
  }
  // Specific hostile inputs.
  std::vector<std::uint8_t> bad = {kStateCodecVersion, 0xFF, 0xFF, 0xFF, 0xFF};  // count far beyond the input
  for (const char* name : {"players", "water", "fire", "animals"}) CHECK_FALSE(decodeInto(name, bad, t).has_value());
  bad = {static_cast<std::uint8_t>(kStateCodecVersion + 1), 0, 0, 0, 0};
  CHECK_FALSE(decodePlayers(bad, t.players).has_value());
  // The state is still usable: decoding the real blobs gives the server's state.
  t.tick = run.server.tick;
  for (const SaveBlob& b : blobs) REQUIRE(decodeInto(b.name, b.bytes, t).has_value());
  CHECK_FALSE(diffWater(run.server.water, t.water).has_value());
  CHECK_FALSE(diffFire(run.server.fire, t.fire).has_value());
}

TEST_CASE("codec: cell helpers") {
  const SimState& s = fixture().server;
  std::size_t water = 0, fire = 0;
  WaterState w = s.water;
  FireState f = s.fire;
  CellCoord lo = cellOf(s.world.bounds().minBrick);
  CellCoord hi = cellOf(BrickCoord{s.world.bounds().maxBrick.x - 1, 0, s.world.bounds().maxBrick.z - 1});
  CellCoord busiest{};
  std::size_t most = 0;
  for (int x = lo.x; x <= hi.x; ++x) {
    for (int z = lo.z; z <= hi.z; ++z) {
      const CellCoord c{x, z};
      const std::vector<WaterChange> wc = waterInCell(s.water, c);
      const std::vector<FireChange> fc = fireInCell(s.fire, c);
      for (const WaterChange& ch : wc) {
        REQUIRE(cellOf(brickOf(ch.voxel)) == c);
        REQUIRE(ch.amount == waterAt(s.water, s.world, ch.voxel));
      }
      for (const FireChange& ch : fc) REQUIRE(cellOf(brickOf(ch.corner)) == c);
      water += wc.size();
      fire += fc.size();
      if (wc.size() + fc.size() > most) {
        most = wc.size() + fc.size();
        busiest = c;
      }
    }
  }
  // The cells list every wet voxel of the modified bricks (the rest is implicit).
  std::size_t modifiedWet = 0;
  for (const std::uint32_t slot : s.water.grid.sorted())
    if (s.water.grid.brick(slot).modified) modifiedWet += s.water.grid.brick(slot).wet;
  CHECK(water > 0);
  CHECK(water == modifiedWet);
  CHECK(fire == s.fire.cells.size());
  REQUIRE(most > 0);

  const std::size_t f0 = fireInCell(f, busiest).size();
  resetWaterInCell(w, s.world, busiest);
  clearFireInCell(f, busiest);
  CHECK(waterInCell(w, busiest).empty());
  CHECK(fireInCell(f, busiest).empty());
  CHECK(f.cells.size() == s.fire.cells.size() - f0);
  if (!waterInCell(s.water, busiest).empty()) CHECK(diffWater(s.water, w).has_value());
  // Re-applying the cell's records restores the state.
  applyWaterChanges(w, s.world, waterInCell(s.water, busiest));
  insertFireCells(f, s.seed, static_cast<std::uint32_t>(s.tick), fireInCell(s.fire, busiest));
  CHECK_FALSE(diffWater(s.water, w).has_value());
  CHECK_FALSE(diffFire(s.fire, f).has_value());
}

TEST_CASE("codec: field tables give each record's widths, its flags byte and its difference names") {
  CHECK(encodedSize(kPlayerStateFields) == 43);  // the flags byte holds the four motion bools
  CHECK(encodedSize(kRateBudgetFields) == 48);  // with the pour budget (i32 tokens, u64 tick)
  CHECK(encodedSize(kAnimalFields) == 32);
  CHECK(encodedSize(kFireCellFields) == 17);

  PlayerState s;
  s.crouching = true;
  s.running = true;
  CHECK(packMotionFlags(s) == (kMotionCrouching | kMotionRunning));
  PlayerState t;
  unpackMotionFlags(t, 0xF0 | kMotionOnGround);  // unassigned bits are ignored
  CHECK((t.onGround && !t.crouching && !t.swimming && !t.running));

  // One player's bytes: version, count, id, empty name, then the motion fields in
  // table order (the flags byte after position, velocity, yaw and pitch).
  std::vector<Player> players(1);
  players[0].id.value = 7;
  players[0].motion.position = {1, 2, 3};
  players[0].motion.swimming = true;
  std::vector<std::uint8_t> bytes;
  encodePlayers(players, bytes);
  constexpr std::size_t kMotionAt = 1 + 4 + 4 + 1;
  REQUIRE(bytes.size() == kMotionAt + 43 + 48);
  CHECK(bytes[kMotionAt] == 1);
  CHECK(bytes[kMotionAt + 28] == kMotionSwimming);
  std::vector<Player> back;
  REQUIRE(decodePlayers(bytes, back).has_value());
  CHECK(back == players);
  bytes[kMotionAt + 28] |= 0x10;
  CHECK_FALSE(decodePlayers(bytes, back).has_value());

  std::vector<Player> other = players;
  other[0].motion.velocity.z = 5;
  const auto d = diffPlayers(players, other);
  REQUIRE(d.has_value());
  CHECK(*d == "player 7 velocity.z: expected 0, actual 5");
  other = players;
  other[0].budget.chatTick = 9;
  CHECK(diffPlayers(players, other).value_or("") == "player 7 budget.chatTick: expected 0, actual 9");
}
