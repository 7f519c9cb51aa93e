// Fire system (sim/systems/fire.h): burning by fuel through the edit log, burnt forms, stone,
// wind-biased spread, rain and water putting fires out, replication through the
// streams (a mirror follows every step) and run-to-run determinism.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/world/brick_store.h"
#include "sim/systems/fire.h"
#include "sim/world/material.h"
#include "sim/step/mirror.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/step/step.h"
#include "sim/trace/trace_hash.h"
#include "sim/world/world_hash.h"
#include "tests/sim/sim_fixture.h"

using namespace loam::sim;

namespace {

// Materials come from the shared fixture (tests/sim/sim_fixture.h).
std::shared_ptr<const MaterialTable> materials() { return loam::test::testMaterials(); }
using loam::test::mat;

// 25.6 x 12.8 x 25.6 m, stone below y = 0, one spawn at the origin, wind 2 m/s toward east.
Scene scene() {
  Scene s;
  s.name = "fire-test";
  s.materials = materials();
  s.worldBounds = {{-32, -16, -32}, {32, 16, 32}};
  SpawnPoint sp;
  sp.position = {0.0, 0.0, 0.0};
  s.spawns.push_back(sp);
  return s;
}

BrickStore stoneFloor() {
  Scene s = scene();
  BrickStore w(s.worldBounds, makeCoarseLut(*s.materials));
  for (int cz = -2; cz < 2; ++cz)
    for (int cx = -2; cx < 2; ++cx) w.fillChunk(ChunkCoord{cx, -1, cz}, mat("stone"));
  return w;
}

// Count of material m in brick b.
int countIn(const BrickStore& w, BrickCoord b, MaterialId m) {
  int n = 0;
  for (int i = 0; i < kBrickVoxels; ++i) n += w.brick(b).at(i) == m;
  return n;
}

template <class T>
int countEvents(const std::vector<Event>& events, bool (*pred)(const T&)) {
  int n = 0;
  for (const Event& e : events)
    if (const T* x = std::get_if<T>(&e)) n += pred(*x);
  return n;
}

// A server and a mirror that follows only the streams; every step is compared.
struct Sim {
  SimState server;
  SimState mirror;
  StepOutput out;
  std::vector<Event> events;
  std::vector<EditRecord> edits;
  std::uint32_t serverSequence = 0;
  ChangeSubscriber serverChanges, mirrorChanges;

  explicit Sim(BrickStore world, std::uint64_t seed = 7)
      : server(createSimStateFromWorld(scene(), seed, generated(world))), mirror(createSimStateFromWorld(scene(), seed, world)),
        serverChanges(server.world.subscribeChanges()), mirrorChanges(mirror.world.subscribeChanges()) {}

  static BrickStore& generated(BrickStore& w) {
    w.markGenerated();
    return w;
  }

  // Lights a voxel as a command would (before the next step); the mirror gets the records.
  bool ignite(VoxelCoord v) {
    StepOutput side;
    SimContext ctx(server, side);
    const bool ok = igniteFire(server.fire, ctx, v, Actor{});
    // Between steps, as of the last one: the mirror's walk has nothing more due then.
    followFire(mirror, static_cast<std::uint32_t>(server.tick), side.fire, nullptr);
    edits.insert(edits.end(), side.edits.begin(), side.edits.end());
    events.insert(events.end(), side.events.begin(), side.events.end());
    return ok;
  }

  Command weather(std::uint16_t rain, std::uint16_t toward, std::uint16_t strength) {
    return Command{kServerPlayer, ++serverSequence, SetWeatherCommand{rain, toward, strength}};
  }

  // One step with commands; false (after a FAIL) if the mirror differs.
  bool step(std::span<const Command> commands = {}) {
    loam::sim::step(server, commands, out);
    applyStepOutput(mirror, out);
    std::vector<BrickCoord> bricks = server.world.takeChanged(serverChanges);
    std::vector<BrickCoord> more = mirror.world.takeChanged(mirrorChanges);
    bricks.insert(bricks.end(), more.begin(), more.end());
    if (auto d = firstDifference(server, mirror, bricks)) {
      FAIL("step " << out.tick << ": " << *d);
      return false;
    }
    edits.insert(edits.end(), out.edits.begin(), out.edits.end());
    events.insert(events.end(), out.events.begin(), out.events.end());
    return true;
  }

  void run(int steps) {
    for (int i = 0; i < steps; ++i)
      if (!step()) return;
  }
};

// Grass two voxels deep (y = 0, 1) over the whole floor.
BrickStore grassPlain() {
  BrickStore w = stoneFloor();
  MaterialId layer[kBrickVoxels] = {};
  for (int i = 0; i < kBrickVoxels; ++i) layer[i] = ((i >> 3) & 7) < 2 ? mat("grass") : kAir;
  for (int z = -32; z < 32; ++z)
    for (int x = -32; x < 32; ++x) w.writeBrick(BrickCoord{x, 0, z}, layer);
  return w;
}

}  // namespace

TEST_CASE("a lit wooden block burns to charcoal over time, through the edit log") {
  // Two blocks: one all wood (its burnt result is uniform: thinned voxel by voxel,
  // then one BrickFill record), one with a stone voxel (every wood voxel one by one).
  BrickStore w = stoneFloor();
  const BrickCoord pure{2, 0, 2}, mixed{-3, 0, -3};
  w.fillBrick(pure, mat("wood"));
  w.fillBrick(mixed, mat("wood"));
  w.set(VoxelCoord{-24, 0, -24}, mat("stone"));
  Sim sim(std::move(w));
  REQUIRE(sim.ignite({18, 7, 18}));
  REQUIRE(sim.ignite({-20, 7, -20}));
  CHECK(isBurning(sim.server.fire, {16, 0, 16}));
  REQUIRE(sim.server.fire.cells.size() == 2);
  for (const FireCell& c : sim.server.fire.cells) {
    CHECK((c.corner == VoxelCoord{16, 0, 16} || c.corner == VoxelCoord{-24, 0, -24}));  // brick corners
    CHECK(c.endTick == 1800);  // wood burns 1800 ticks a voxel
  }

  sim.run(900);
  // Part-way: some charcoal, some wood.
  CHECK(countIn(sim.server.world, pure, mat("charcoal")) > 20);
  CHECK(countIn(sim.server.world, pure, mat("wood")) > 300);
  CHECK(countIn(sim.server.world, mixed, mat("charcoal")) > 200);
  CHECK(countIn(sim.server.world, mixed, mat("wood")) > 200);
  CHECK(isBurning(sim.server.fire, {20, 4, 20}));

  sim.run(950);
  CHECK(countIn(sim.server.world, pure, mat("charcoal")) == kBrickVoxels);
  CHECK(countIn(sim.server.world, mixed, mat("charcoal")) == kBrickVoxels - 1);
  CHECK(countIn(sim.server.world, mixed, mat("stone")) == 1);
  CHECK(sim.server.fire.cells.empty());
  int pureVoxelEdits = 0, pureFills = 0, mixedVoxelEdits = 0, other = 0;
  for (const EditRecord& e : sim.edits) {
    const bool woodToCharcoal = e.before == mat("wood") && e.after == mat("charcoal");
    if (e.kind == EditRecord::Kind::Voxel && brickOf({e.x, e.y, e.z}) == pure && woodToCharcoal) {
      ++pureVoxelEdits;
    } else if (e.kind == EditRecord::Kind::Voxel && brickOf({e.x, e.y, e.z}) == mixed && woodToCharcoal) {
      ++mixedVoxelEdits;
    } else if (e.kind == EditRecord::Kind::BrickFill && BrickCoord{e.x, e.y, e.z} == pure &&
               e.after == mat("charcoal")) {
      ++pureFills;
    } else {
      ++other;
    }
  }
  CHECK(pureVoxelEdits == 64);  // an eighth of the positions, then the fill
  CHECK(pureFills == 1);
  CHECK(mixedVoxelEdits == kBrickVoxels - 1);
  CHECK(other == 0);
  CHECK(countEvents<IgnitedEvent>(sim.events, [](const IgnitedEvent& e) { return e.material == mat("wood"); }) == 2);
  CHECK(countEvents<ExtinguishedEvent>(
            sim.events, [](const ExtinguishedEvent& e) { return e.cause == ExtinguishCause::BurntOut; }) == 2);
}

TEST_CASE("leaves burn to air; grass to ash on the ground, air above it") {
  BrickStore w = stoneFloor();
  const BrickCoord leaves{2, 1, 2};
  w.fillBrick(leaves, mat("leaves"));
  for (int z = 40; z < 48; ++z)
    for (int x = 40; x < 48; ++x) {
      w.set(VoxelCoord{x, 0, z}, mat("grass"));
      w.set(VoxelCoord{x, 1, z}, mat("grass"));
    }
  Sim sim(std::move(w));
  REQUIRE(sim.ignite({20, 12, 20}));
  REQUIRE(sim.ignite({44, 1, 44}));
  sim.run(400);
  CHECK(sim.server.fire.cells.empty());
  CHECK(sim.server.world.brick(leaves).isAir());
  const BrickCoord grass{5, 0, 5};
  CHECK(countIn(sim.server.world, grass, mat("grass")) == 0);
  for (int z = 40; z < 48; ++z)
    for (int x = 40; x < 48; ++x) CHECK(sim.server.world.get(x, 0, z) == mat("ash"));
  for (const EditRecord& e : sim.edits) {
    if (e.before == mat("leaves")) CHECK(e.after == kAir);
    if (e.before == mat("grass")) CHECK((e.after == kAir || e.after == mat("ash")));
  }
}

TEST_CASE("stone never burns") {
  BrickStore w = stoneFloor();
  w.fillBrick(BrickCoord{2, 0, 2}, mat("wood"));
  w.fillBrick(BrickCoord{3, 0, 2}, mat("stone"));
  w.fillBrick(BrickCoord{2, 1, 2}, mat("stone"));
  Sim sim(std::move(w));
  CHECK_FALSE(sim.ignite({26, 3, 18}));   // a stone block
  CHECK_FALSE(sim.ignite({0, -1, 0}));    // the stone floor
  CHECK(sim.server.fire.cells.empty());
  CHECK(sim.events.empty());
  REQUIRE(sim.ignite({18, 3, 18}));
  sim.run(1850);
  CHECK(sim.server.fire.cells.empty());
  CHECK(countIn(sim.server.world, BrickCoord{3, 0, 2}, mat("stone")) == kBrickVoxels);
  CHECK(countIn(sim.server.world, BrickCoord{2, 1, 2}, mat("stone")) == kBrickVoxels);
  for (const EditRecord& e : sim.edits) CHECK(e.before != mat("stone"));
}

TEST_CASE("wind biases spread: more burns downwind than upwind") {
  Sim sim(grassPlain(), 11);
  const Command wind = sim.weather(0, 16384, 500);  // toward east (+x), 5 m/s
  REQUIRE(sim.step(std::span<const Command>(&wind, 1)));
  REQUIRE(sim.ignite({0, 1, 0}));
  sim.run(600);
  int east = 0, west = 0, reachEast = 0, reachWest = 0;
  for (const Event& e : sim.events) {
    if (const auto* ig = std::get_if<IgnitedEvent>(&e)) {
      if (ig->position.x >= 16) ++east;
      if (ig->position.x < -8) ++west;
      reachEast = std::max(reachEast, ig->position.x);
      reachWest = std::max(reachWest, -ig->position.x);
    }
  }
  MESSAGE("in 10 s: ignitions east " << east << ", west " << west << "; reach east " << reachEast * 5 << " cm, west "
                                     << reachWest * 5 << " cm; burning " << sim.server.fire.cells.size());
  CHECK(east > 20);
  CHECK(east > 3 * west);
}

TEST_CASE("the burst is bounded: a big canopy catches over seconds, not in one tick") {
  BrickStore w = stoneFloor();
  for (int z = -8; z < 8; ++z)
    for (int y = 0; y < 8; ++y)
      for (int x = -8; x < 8; ++x) w.fillBrick(BrickCoord{x, y, z}, mat("leaves"));  // 6.4 m cube, 2048 bricks
  Sim sim(std::move(w));
  REQUIRE(sim.ignite({0, 0, 0}));
  std::size_t maxPerStep = 0;
  for (int i = 0; i < 120; ++i) {
    const std::size_t before = sim.events.size();
    REQUIRE(sim.step());
    std::size_t ignited = 0;
    for (std::size_t e = before; e < sim.events.size(); ++e) ignited += std::holds_alternative<IgnitedEvent>(sim.events[e]);
    maxPerStep = std::max(maxPerStep, ignited);
    if (i == 29) CHECK(sim.server.fire.cells.size() < 200);  // half a second in: still small
  }
  MESSAGE("after 2 s: " << sim.server.fire.cells.size() << " cells burning, at most " << maxPerStep << " new per step");
  CHECK(maxPerStep <= kMaxIgnitionsPerTick);
  CHECK(sim.server.fire.cells.size() > 50);   // it does grow
  CHECK(sim.server.fire.cells.size() < 2048);  // but has not taken the whole block
}

TEST_CASE("rain puts fires out with cause rain") {
  BrickStore w = grassPlain();
  w.fillBrick(BrickCoord{2, 1, 2}, mat("wood"));
  Sim sim(std::move(w));
  REQUIRE(sim.ignite({20, 10, 20}));
  REQUIRE(sim.ignite({-40, 1, -40}));
  sim.run(60);
  REQUIRE(sim.server.fire.cells.size() >= 2);
  const Command rain = sim.weather(1000, 16384, 200);
  REQUIRE(sim.step(std::span<const Command>(&rain, 1)));
  for (int i = 0; i < 900 && !sim.server.fire.cells.empty(); ++i) REQUIRE(sim.step());
  CHECK(sim.server.fire.cells.empty());
  const int byRain = countEvents<ExtinguishedEvent>(
      sim.events, [](const ExtinguishedEvent& e) { return e.cause == ExtinguishCause::Rain; });
  MESSAGE("put out by rain: " << byRain);
  CHECK(byRain >= 2);
  // The wood block did not have time to burn through.
  CHECK(countIn(sim.server.world, BrickCoord{2, 1, 2}, mat("wood")) > 300);
}

TEST_CASE("water puts a fire out with cause water") {
  BrickStore w = stoneFloor();
  for (int z = 0; z < 8; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 16; x < 24; ++x) w.set(VoxelCoord{x, y, z}, mat("wood"));
  Sim sim(std::move(w));
  const Command join{PlayerId{1}, 1, JoinCommand{PlayerName::from("Ada")}};
  REQUIRE(sim.step(std::span<const Command>(&join, 1)));
  REQUIRE(sim.ignite({18, 3, 2}));
  sim.run(30);
  REQUIRE(sim.server.fire.cells.size() == 1);
  const Command pour{PlayerId{1}, 2, PourCommand{VoxelCoord{18, 5, 2}, kWaterPerVoxel}};
  REQUIRE(sim.step(std::span<const Command>(&pour, 1)));
  CHECK(countEvents<CommandRejectedEvent>(sim.events, [](const CommandRejectedEvent&) { return true; }) == 0);
  CHECK(sim.server.fire.cells.empty());
  CHECK(countEvents<ExtinguishedEvent>(
            sim.events, [](const ExtinguishedEvent& e) { return e.cause == ExtinguishCause::Water; }) == 1);
}

TEST_CASE("a follower that takes burning cells mid-fire (a catch-up) burns on in lockstep") {
  // A wood block (uniform result), a mixed one and grass around them; `late` holds
  // the world (every edit, the fire's too) but no fire until tick 100, then takes
  // the burning cells' ignition data as a full CellState gives them, and from then
  // on follows like any client: only the follower's edits and the fire records.
  BrickStore w = grassPlain();
  w.fillBrick(BrickCoord{2, 0, 2}, mat("wood"));
  w.fillBrick(BrickCoord{-3, 0, -3}, mat("wood"));
  w.set(VoxelCoord{-24, 0, -24}, mat("stone"));
  BrickStore lateWorld = w;
  lateWorld.markGenerated();  // as Sim marks the server's
  Sim sim(std::move(w));
  SimState late = createSimStateFromWorld(scene(), 7, lateWorld);
  REQUIRE(sim.ignite({18, 3, 18}));
  REQUIRE(sim.ignite({-22, 3, -22}));
  REQUIRE(sim.ignite({0, 1, 0}));
  std::vector<EditRecord> follower;
  std::size_t cellsAtCatchUp = 0, madeAfter = 0;
  for (int t = 0; t < 900; ++t) {
    if (!sim.step()) return;
    if (sim.server.tick < 100) {
      applyEdits(late, sim.out.edits);
      late.tick = sim.out.tick;
      continue;
    }
    if (sim.server.tick == 100) {
      applyEdits(late, sim.out.edits);
      late.tick = sim.out.tick;
      std::vector<FireChange> burning;
      for (const FireChange& f : fireInCell(sim.server.fire, CellCoord{0, 0})) burning.push_back(f);
      for (const FireChange& f : fireInCell(sim.server.fire, CellCoord{-1, -1})) burning.push_back(f);
      for (const FireChange& f : fireInCell(sim.server.fire, CellCoord{-1, 0})) burning.push_back(f);
      for (const FireChange& f : fireInCell(sim.server.fire, CellCoord{0, -1})) burning.push_back(f);
      insertFireCells(late.fire, late.seed, static_cast<std::uint32_t>(late.tick), burning);
      cellsAtCatchUp = late.fire.cells.size();
    } else {
      std::vector<EditRecord> made;
      applyStep(late, recordsOf(sim.out, follower), &made);
      madeAfter += made.size();
    }
    if (auto d = diffFire(sim.server.fire, late.fire)) FAIL("tick " << sim.server.tick << ": " << *d);
    if (worldHash(sim.server.world) != worldHash(late.world)) FAIL("tick " << sim.server.tick << ": worlds differ");
  }
  MESSAGE("burning cells at the catch-up " << cellsAtCatchUp << ", edits the follower made after it " << madeAfter);
  CHECK(cellsAtCatchUp > 10);
  CHECK(madeAfter > 500);
}

TEST_CASE("a burning wood block someone digs into stops burning to one fill; the follower hears it") {
  BrickStore w = stoneFloor();
  w.fillBrick(BrickCoord{2, 0, 2}, mat("wood"));
  Sim sim(std::move(w));
  REQUIRE(sim.ignite({18, 3, 18}));
  REQUIRE(sim.server.fire.work.size() == 1);
  REQUIRE((sim.server.fire.work[0].flags & kFireUniform) != 0);
  sim.run(20);
  // A voxel dug out of the burning block: the fill (charcoal) would put it back, so
  // the brick burns voxel by voxel from here on, and followers must know (the Sim
  // compares the mirror with the server after every step).
  const Command dig{kServerPlayer, ++sim.serverSequence, DigCommand{VoxelCoord{17, 7, 17}, ToolSize::Cm10}};
  REQUIRE(sim.step(std::span<const Command>(&dig, 1)));
  CHECK(countEvents<CommandRejectedEvent>(sim.events, [](const CommandRejectedEvent&) { return true; }) == 0);
  std::size_t updates = 0;
  for (const FireChange& f : sim.out.fire) updates += f.endTick != 0 && !(f.flags & kFireUniform);
  REQUIRE(sim.server.fire.work.size() == 1);
  CHECK((sim.server.fire.work[0].flags & kFireUniform) == 0);
  const std::uint32_t end = sim.server.fire.cells[0].endTick;
  while (sim.server.tick <= end && !sim.server.fire.cells.empty()) {
    if (!sim.step()) return;
  }
  CHECK(sim.server.world.get(VoxelCoord{17, 7, 17}) == kAir);  // no fill buried the hole
  CHECK(sim.server.fire.cells.empty());
  CHECK(updates >= 1);
}

TEST_CASE("same run twice: identical trace hashes; another seed differs") {
  auto run = [](std::uint64_t seed) {
    Sim sim(grassPlain(), seed);
    TraceHasher trace(sim.server);
    sim.ignite({0, 1, 0});
    sim.ignite({-100, 1, 60});
    for (int i = 0; i < 300; ++i) {
      sim.step();
      trace.addStep(sim.server, sim.out);
    }
    return trace.finish(sim.server);
  };
  const std::uint64_t a = run(5), b = run(5), c = run(6);
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("the scene's ignition points are lit by the step at their delay, as the server's ignite, once") {
  Scene s = scene();
  IgnitionPoint now, later;
  now.name = "now";
  now.position = {-3.0, 0.0, -3.0};
  later.name = "later";
  later.position = {4.0, 0.0, 4.0};
  later.delay = 0.5;  // tick 30
  s.ignitions = {now, later};
  BrickStore world = grassPlain();
  world.markGenerated();
  const SimState fresh = createSimStateFromWorld(s, 7, world);
  REQUIRE(fresh.fire.schedule.size() == 2);
  CHECK(fresh.fire.schedule[1].tick == 30);
  // The highest voxel that burns in each column: the grass top (y = 1).
  const VoxelCoord a{-60, 1, -60}, b{80, 1, 80};

  SimState state = fresh;
  StepOutput out;
  step(state, {}, out);
  CHECK(isBurning(state.fire, a));
  CHECK_FALSE(isBurning(state.fire, b));
  CHECK_FALSE(out.fire.empty());  // a mirror hears of it through the fire stream
  for (int i = 1; i < 30; ++i) step(state, {}, out);
  CHECK_FALSE(isBurning(state.fire, b));
  step(state, {}, out);  // the step from tick 30
  CHECK(isBurning(state.fire, b));
  for (const Event& e : out.events) CHECK_FALSE(std::holds_alternative<CommandRejectedEvent>(e));

  // A state that resumes past the delays (a restored world) lights nothing again.
  SimState resumed = fresh;
  resumed.tick = 31;
  for (int i = 0; i < 5; ++i) step(resumed, {}, out);
  CHECK(resumed.fire.cells.empty());
  // Points over nothing that burns are refused like a command would be, and counted.
  Scene bare = scene();
  bare.ignitions = {now};
  BrickStore floor = stoneFloor();
  floor.markGenerated();
  SimState stone = createSimStateFromWorld(bare, 7, floor);
  step(stone, {}, out);
  CHECK(stone.fire.cells.empty());
  int refused = 0;
  for (const Event& e : out.events)
    if (const auto* r = std::get_if<CommandRejectedEvent>(&e)) refused += r->reason == RejectReason::NotFlammable;
  CHECK(refused == 1);
}
