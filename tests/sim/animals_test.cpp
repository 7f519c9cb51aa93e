// Animals: fleeing, water avoidance, stuck detection, following, perching and
// taking off, calls, never ending inside solid voxels, determinism and the mirror.
#include "sim/systems/animals.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "sim/step/mirror.h"
#include "sim/systems/motion.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/core/state_hasher.h"
#include "sim/step/step.h"
#include "sim/world/voxel_collision.h"
#include "tests/sim/sim_fixture.h"

using namespace loam::sim;
using loam::test::mat;

namespace {

constexpr std::int32_t kM = kUnitsPerMetre;
constexpr std::int32_t kVoxelsPerM = kVoxelsPerMetre;

AnimalDen den(Species species, double x, double z, double range, int count = 1) {
  AnimalDen d;
  d.name = "den";
  d.species = species;
  d.position = {x, 0.0, z};
  d.onGround = true;
  d.count = count;
  d.range = range;
  return d;
}

// 51.2 x 12.8 x 51.2 m, stone below y = 0.
Scene flatScene(std::vector<AnimalDen> dens) {
  Scene s = loam::test::testScene();
  s.worldBounds = {{-64, -16, -64}, {64, 16, 64}};
  s.dens = std::move(dens);
  s.spawns[0].position = {22.0, 0.0, 22.0};  // joins happen far from the dens
  return s;
}

BrickStore stoneFloor(const Scene& s) {
  BrickStore w(s.worldBounds, makeCoarseLut(*s.materials));
  for (int cz = -4; cz < 4; ++cz)
    for (int cx = -4; cx < 4; ++cx) w.fillChunk(ChunkCoord{cx, -1, cz}, mat("stone"));
  return w;
}

// Fills voxels [x0,x1) x [y0,y1) x [z0,z1) (metres) with m.
void fillMetres(BrickStore& w, double x0, double y0, double z0, double x1, double y1, double z1, MaterialId m) {
  auto v = [](double metres) { return static_cast<int>(metres * kVoxelsPerM); };
  for (int z = v(z0); z < v(z1); ++z)
    for (int y = v(y0); y < v(y1); ++y)
      for (int x = v(x0); x < v(x1); ++x) w.set(x, y, z, m);
}

SimState makeState(const Scene& scene, BrickStore world) {
  world.markGenerated();
  return createSimStateFromWorld(scene, 7, std::move(world));
}

// Joins player id and puts it at pos (teleporting: server-side test setup only).
void addPlayer(SimState& s, std::uint32_t id, Vec3i pos) {
  std::vector<Command> c{Command{PlayerId{id}, 1, JoinCommand{PlayerName::from("P")}}};
  StepOutput out;
  step(s, c, out);
  s.findPlayer(PlayerId{id})->motion.position = pos;
}

void stepOnce(SimState& s, StepOutput& out) { step(s, std::span<const Command>{}, out); }

Vec3i bodySize(const Animal& a) {
  switch (a.species) {
    case AnimalSpecies::Bird:
      return {kBirdHalfWidth, kBirdHeight, 0};
    case AnimalSpecies::Fox:
      return {kFoxHalfWidth, kFoxHeight, 0};
    case AnimalSpecies::Dog:
      return {kDogHalfWidth, kDogHeight, 0};
  }
  return {};
}

bool inSolid(const SimState& s, const Animal& a) {
  const Vec3i b = bodySize(a);
  return boxCollides(s.world, s.lut, boxAtFeet(a.position, b.x, b.y));
}

// Water in the body or in the voxel layer it stands on.
bool inWater(const SimState& s, const Animal& a) {
  const Vec3i b = bodySize(a);
  VoxelBox r = voxelsOfBox(boxAtFeet(a.position, b.x, b.y));
  r.min.y -= 1;
  return regionHasAny(s.world, s.lut.liquid, r);
}

std::int64_t horizontalDistance(Vec3i a, Vec3i b) {
  const std::int64_t dx = std::int64_t{a.x} - b.x, dz = std::int64_t{a.z} - b.z;
  return isqrt64(static_cast<std::uint64_t>(dx * dx + dz * dz));
}

std::vector<AnimalCallEvent> callsOf(const StepOutput& out) {
  std::vector<AnimalCallEvent> r;
  for (const Event& e : out.events)
    if (auto* c = std::get_if<AnimalCallEvent>(&e)) r.push_back(*c);
  return r;
}

const SimState& glade() {
  static const SimState state = [] {
    auto scene = loadScene(LOAM_SOURCE_DIR "/scenes/glade.toml");
    LOAM_ASSERT(scene.has_value());
    auto s = createSimState(*scene, scene->defaultSeed);
    LOAM_ASSERT(s.has_value());
    return std::move(s).value();
  }();
  return state;
}

}  // namespace

TEST_CASE("voxel_collision agrees with player motion for player-sized boxes") {
  Scene scene = flatScene({});
  BrickStore w = stoneFloor(scene);
  // Scattered blocks and a ledge.
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t h = keyedHash(RandomKey{1, RandomPurpose::Test, 0, static_cast<std::uint64_t>(i), 0});
    const int x = static_cast<int>(h % 200) - 100, z = static_cast<int>((h >> 16) % 200) - 100;
    const int y = static_cast<int>((h >> 32) % 30);
    w.set(x, y, z, mat("rock"));
  }
  w.markGenerated();
  const MaterialLut lut = makeMaterialLut(*scene.materials);
  int hits = 0;
  for (int i = 0; i < 4000; ++i) {
    const std::uint64_t h = keyedHash(RandomKey{2, RandomPurpose::Test, 0, static_cast<std::uint64_t>(i), 0});
    const Vec3i p{static_cast<std::int32_t>(h % (12u * kM)) - 6 * kM,
                  static_cast<std::int32_t>((h >> 20) % (2u * kM)) - kM / 4,
                  static_cast<std::int32_t>((h >> 40) % (12u * kM)) - 6 * kM};
    const bool mine = boxCollides(w, lut, boxAtFeet(p, kPlayerHalfWidth, kPlayerHeight));
    CHECK(mine == boxCollides(w, lut, p, kPlayerHeight));
    hits += mine ? 1 : 0;
  }
  CHECK(hits > 100);
  // A sweep down lands flush on the floor; one sideways stops flush at a wall.
  fillMetres(w, 2.0, 0.0, -1.0, 2.5, 1.0, 1.0, mat("stone"));
  UnitBox box = boxAtFeet(Vec3i{0, kM, 0}, kFoxHalfWidth, kFoxHeight);
  bool blocked = false;
  sweepBox(w, lut, box, 1, -2 * kM, blocked);
  CHECK(blocked);
  CHECK(box.lo.y == 0);
  sweepBox(w, lut, box, 0, 3 * kM, blocked);
  CHECK(blocked);
  CHECK(box.hi.x == 2 * kM);
}

TEST_CASE("a fox flees a player who approaches, with an alarm call") {
  SimState s = makeState(flatScene({den(Species::Fox, 0.0, 0.0, 8.0)}), stoneFloor(flatScene({})));
  REQUIRE(s.animals.animals.size() == 1);
  const Animal fox0 = s.animals.animals[0];
  CHECK(fox0.species == AnimalSpecies::Fox);
  CHECK(fox0.position.y == 0);  // on the floor
  addPlayer(s, 1, Vec3i{fox0.position.x + 3 * kM, 0, fox0.position.z});
  StepOutput out;
  const std::int64_t start = horizontalDistance(s.players[0].motion.position, s.animals.animals[0].position);
  bool alarmed = false, fled = false;
  for (int t = 0; t < 90; ++t) {
    // The player walks toward the fox at 3 m/s.
    Vec3i& pp = s.players[0].motion.position;
    const Vec3i fp = s.animals.animals[0].position;
    const std::int64_t d = horizontalDistance(pp, fp);
    if (d > 0) {
      pp.x += static_cast<std::int32_t>((fp.x - std::int64_t{pp.x}) * (kM / 20) / d);
      pp.z += static_cast<std::int32_t>((fp.z - std::int64_t{pp.z}) * (kM / 20) / d);
    }
    stepOnce(s, out);
    for (const AnimalCallEvent& c : callsOf(out))
      alarmed = alarmed || c.call == static_cast<std::uint8_t>(AnimalCallKind::Alarm);
    fled = fled || s.animals.animals[0].mode == static_cast<std::uint8_t>(WalkerMode::Flee);
    CHECK_FALSE(inSolid(s, s.animals.animals[0]));
  }
  const std::int64_t end = horizontalDistance(s.players[0].motion.position, s.animals.animals[0].position);
  CHECK(alarmed);
  CHECK(fled);
  MESSAGE("distance " << start << " -> " << end << " units");
  CHECK(end > start + kM);
}

TEST_CASE("a fox cornered against a wall picks a new heading and gets away") {
  Scene scene = flatScene({den(Species::Fox, 2.5, 0.0, 1.0)});
  BrickStore w = stoneFloor(scene);
  fillMetres(w, 4.0, 0.0, -20.0, 4.3, 2.0, 20.0, mat("stone"));
  SimState s = makeState(scene, std::move(w));
  REQUIRE(s.animals.animals.size() == 1);
  addPlayer(s, 1, Vec3i{0, 0, 0});
  StepOutput out;
  for (int t = 0; t < 600; ++t) {
    stepOnce(s, out);
    const Animal& fox = s.animals.animals[0];
    REQUIRE_FALSE(inSolid(s, fox));
    REQUIRE(fox.position.x + kFoxHalfWidth <= 4 * kM);  // never through the wall
  }
  CHECK(horizontalDistance(s.players[0].motion.position, s.animals.animals[0].position) > 6 * kM);
}

TEST_CASE("a fox never enters water: fleeing toward a pond it turns, wandering past it it stays dry") {
  Scene scene = flatScene({den(Species::Fox, 0.5, 0.0, 1.0)});
  BrickStore w = stoneFloor(scene);
  fillMetres(w, 2.0, -1.0, -3.0, 6.0, 0.0, 3.0, mat("water"));  // a pond flush with the ground
  SimState s = makeState(scene, std::move(w));
  REQUIRE(s.animals.animals.size() == 1);
  REQUIRE_FALSE(inWater(s, s.animals.animals[0]));
  addPlayer(s, 1, Vec3i{-2 * kM, 0, 0});  // behind it: it flees toward the pond
  StepOutput out;
  for (int t = 0; t < 600; ++t) {
    stepOnce(s, out);
    const Animal& fox = s.animals.animals[0];
    REQUIRE_FALSE(inWater(s, fox));
    REQUIRE_FALSE(inSolid(s, fox));
  }
  CHECK(horizontalDistance(s.players[0].motion.position, s.animals.animals[0].position) > 6 * kM);

  // Wandering with the pond inside its range: goals across it are refused.
  Scene scene2 = flatScene({den(Species::Fox, 1.2, 0.0, 8.0, 3)});
  BrickStore w2 = stoneFloor(scene2);
  fillMetres(w2, 2.0, -1.0, -3.0, 6.0, 0.0, 3.0, mat("water"));
  SimState s2 = makeState(scene2, std::move(w2));
  std::int64_t walked = 0;
  std::vector<Vec3i> last;
  for (const Animal& a : s2.animals.animals) last.push_back(a.position);
  for (int t = 0; t < 6000; ++t) {
    stepOnce(s2, out);
    for (std::size_t i = 0; i < s2.animals.animals.size(); ++i) {
      const Animal& fox = s2.animals.animals[i];
      REQUIRE_FALSE(inWater(s2, fox));
      walked += horizontalDistance(fox.position, last[i]);
      last[i] = fox.position;
    }
  }
  MESSAGE("three foxes walked " << walked / kM << " m in 100 s");
  CHECK(walked > 50 * kM);
}

TEST_CASE("a block placed on a fox lifts it out; resting animals send no records") {
  SimState s = makeState(flatScene({den(Species::Fox, 0.0, 0.0, 4.0)}), stoneFloor(flatScene({})));
  StepOutput out;
  stepOnce(s, out);
  const Animal fox = s.animals.animals[0];
  {
    StepOutput edits;
    SimContext ctx(s, edits);
    const VoxelBox r = voxelsOfBox(boxAtFeet(fox.position, kFoxHalfWidth, kFoxHeight));
    for (int z = r.min.z; z < r.max.z; ++z)
      for (int y = r.min.y; y < r.max.y; ++y)
        for (int x = r.min.x; x < r.max.x; ++x) ctx.setVoxel(VoxelCoord{x, y, z}, mat("stone"));
  }
  REQUIRE(inSolid(s, s.animals.animals[0]));
  stepOnce(s, out);
  CHECK_FALSE(inSolid(s, s.animals.animals[0]));
  CHECK(s.animals.animals[0].position.y >= fox.position.y + kFoxHeight);

  // Records only for animals whose replicated fields changed.
  std::vector<Animal> before = s.animals.animals;
  int records = 0;
  for (int t = 0; t < 600; ++t) {
    stepOnce(s, out);
    for (const AnimalChange& c : out.animals) {
      ++records;
      for (const Animal& b : before)
        if (b.id == c.animal.id) CHECK_FALSE(b == c.animal);
    }
    before = s.animals.animals;
  }
  CHECK(records < 600);  // idle spells send nothing
}

TEST_CASE("a dog follows a player at a distance and greets them") {
  SimState s = makeState(flatScene({den(Species::Dog, 0.0, 0.0, 10.0)}), stoneFloor(flatScene({})));
  const Animal dog0 = s.animals.animals[0];
  CHECK(dog0.species == AnimalSpecies::Dog);
  addPlayer(s, 1, Vec3i{dog0.position.x + 9 * kM, 0, dog0.position.z});
  StepOutput out;
  bool greeted = false;
  for (int t = 0; t < 300; ++t) {
    stepOnce(s, out);
    for (const AnimalCallEvent& c : callsOf(out))
      greeted = greeted || c.call == static_cast<std::uint8_t>(AnimalCallKind::Greet);
  }
  const Animal& dog = s.animals.animals[0];
  const std::int64_t d = horizontalDistance(dog.position, s.players[0].motion.position);
  MESSAGE("dog at " << d * 100 / kM << " cm from the player");
  CHECK(greeted);
  CHECK(dog.mode == static_cast<std::uint8_t>(WalkerMode::Follow));
  CHECK(d >= 3 * kM);
  CHECK(d <= 5 * kM);
}

TEST_CASE("glade: birds perch on canopy tops and take off when a player comes near") {
  SimState s = glade();
  const MaterialId leaves = mat("leaves");
  int birds = 0;
  for (const Animal& a : s.animals.animals) {
    if (a.species != AnimalSpecies::Bird) continue;
    ++birds;
    CHECK(a.mode == static_cast<std::uint8_t>(BirdMode::Perched));
    CHECK(s.world.get(voxelOf(a.position).x, voxelOf(a.position).y - 1, voxelOf(a.position).z) == leaves);
    CHECK_FALSE(inSolid(s, a));
  }
  CHECK(birds == 8);
  CHECK(s.animals.perches.size() >= 16);

  std::size_t bi = 0;
  while (s.animals.animals[bi].species != AnimalSpecies::Bird) ++bi;
  const Animal bird0 = s.animals.animals[bi];
  addPlayer(s, 1, Vec3i{bird0.position.x + 2 * kM, bird0.position.y, bird0.position.z});
  StepOutput out;
  bool alarm = false, tookOff = false, landedAgain = false;
  for (int t = 0; t < 1800 && !landedAgain; ++t) {
    stepOnce(s, out);
    const Animal& b = s.animals.animals[bi];
    for (const AnimalCallEvent& c : callsOf(out))
      alarm = alarm || (c.animal == b.id.value && c.call == static_cast<std::uint8_t>(AnimalCallKind::Alarm));
    REQUIRE_FALSE(inSolid(s, b));
    if (b.mode != static_cast<std::uint8_t>(BirdMode::Perched)) {
      tookOff = true;
    } else if (tookOff) {
      landedAgain = true;
      CHECK(horizontalDistance(b.position, s.players[0].motion.position) > 5 * kM);
      CHECK(s.world.get(voxelOf(b.position).x, voxelOf(b.position).y - 1, voxelOf(b.position).z) == leaves);
      MESSAGE("landed again after " << t << " ticks, "
                                    << horizontalDistance(b.position, bird0.position) * 10 / kM / 10.0
                                    << " m from its first perch");
    }
  }
  CHECK(alarm);
  CHECK(tookOff);
  CHECK(landedAgain);
}

TEST_CASE("glade: 40 s with players twice gives identical hashes; the mirror follows; calls; never in solid") {
  SimState a = glade();
  SimState b = glade();
  SimState m = glade();
  const std::vector<Command> joins{Command{PlayerId{1}, 1, JoinCommand{PlayerName::from("Ada")}},
                                   Command{PlayerId{2}, 1, JoinCommand{PlayerName::from("Bo")}}};
  StepOutput outA, outB;
  std::uint64_t calls = 0, alarms = 0, records = 0, idleTicks = 0;
  constexpr std::size_t kTicks = 2400;
  const std::size_t n = a.animals.animals.size();
  REQUIRE(n == 12);
  // Players visit the animals: teleports at fixed ticks, relative to the animal (the
  // same in both runs when the runs agree).
  auto visit = [n](SimState& s, std::size_t t) {
    if (s.players.size() < 2) return;
    auto near = [&](std::size_t i, std::int32_t dx) {
      const Vec3i p = s.animals.animals[i].position;
      return Vec3i{p.x + dx, p.y, p.z};
    };
    if (t == 200) s.players[0].motion.position = near(0, 3 * kM);       // a fox
    if (t == 600) s.players[1].motion.position = near(5, 2 * kM);       // a bird
    if (t == 1000) s.players[0].motion.position = near(n - 1, 8 * kM);  // the dog
    if (t == 1600) s.players[1].motion.position = near(3, 1 * kM);      // another bird
  };
  for (std::size_t t = 0; t < kTicks; ++t) {
    visit(a, t);
    visit(b, t);
    const std::span<const Command> cmds = t == 0 ? std::span<const Command>(joins) : std::span<const Command>{};
    step(a, cmds, outA);
    step(b, cmds, outB);
    applyAnimalChanges(m.animals, outA.animals);
    StateHasher ha, hb;
    hashAnimals(a.animals, ha);
    hashAnimals(b.animals, hb);
    REQUIRE(ha.digest() == hb.digest());
    REQUIRE(outA.animals == outB.animals);
    if (auto d = diffAnimals(a.animals, m.animals)) FAIL("tick " << outA.tick << ": " << *d);
    records += outA.animals.size();
    if (outA.animals.empty()) ++idleTicks;
    for (const AnimalCallEvent& c : callsOf(outA)) {
      ++calls;
      alarms += c.call == static_cast<std::uint8_t>(AnimalCallKind::Alarm) ? 1 : 0;
    }
    for (const Animal& x : a.animals.animals) {
      if (inSolid(a, x)) FAIL("tick " << outA.tick << ": animal " << x.id.value << " inside a solid voxel");
      if (x.species != AnimalSpecies::Bird && inWater(a, x))
        FAIL("tick " << outA.tick << ": animal " << x.id.value << " in water");
    }
  }
  MESSAGE("calls " << calls << " (alarms " << alarms << "), records " << records << ", ticks without records "
                   << idleTicks);
  CHECK(calls > 10);
  CHECK(alarms >= 2);
  CHECK(records > 1000);
  CHECK(records < kTicks * n / 2);
}

TEST_CASE("glade: ten minutes of animals alone stay out of solids and water, near their dens, and keep perching") {
  SimState s = glade();
  const std::vector<Command> joins{Command{PlayerId{1}, 1, JoinCommand{PlayerName::from("Ada")}},
                                   Command{PlayerId{2}, 1, JoinCommand{PlayerName::from("Bo")}}};
  StepOutput out;
  step(s, joins, out);
  const std::size_t n = s.animals.animals.size();
  std::vector<std::uint8_t> lastMode(n);
  for (std::size_t i = 0; i < n; ++i) lastMode[i] = s.animals.animals[i].mode;
  int landings = 0, walkerMoves = 0;
  std::int64_t farthest = 0;
  for (int t = 0; t < 36000; ++t) {
    if (t % 600 == 0) {  // a player drops in next to a different animal every 10 s
      const Animal& target = s.animals.animals[static_cast<std::size_t>(t / 600) % n];
      s.players[static_cast<std::size_t>(t / 600) % 2].motion.position =
          Vec3i{target.position.x + 2 * kM, target.position.y, target.position.z};
    }
    out.clear();
    s.tick += 1;
    out.tick = s.tick;
    SimContext ctx(s, out);
    stepAnimals(s.animals, ctx);
    for (std::size_t i = 0; i < n; ++i) {
      const Animal& a = s.animals.animals[i];
      if (inSolid(s, a)) FAIL("tick " << s.tick << ": animal " << a.id.value << " inside a solid voxel");
      if (a.species == AnimalSpecies::Bird) {
        if (a.mode == static_cast<std::uint8_t>(BirdMode::Perched) && lastMode[i] != a.mode) ++landings;
      } else {
        if (inWater(s, a)) FAIL("tick " << s.tick << ": animal " << a.id.value << " in water");
        walkerMoves += a.mode != lastMode[i] ? 1 : 0;
        const internal::AnimalDenInfo& d = s.animals.dens[s.animals.brains[i].den];
        farthest = std::max(farthest, horizontalDistance(a.position, d.home) * 100 / std::max(d.range, 1));
      }
      lastMode[i] = a.mode;
    }
  }
  MESSAGE("bird landings " << landings << ", walker mode changes " << walkerMoves << ", farthest walker at " << farthest
                           << "% of its den's range");
  CHECK(landings > 50);
  CHECK(walkerMoves > 50);
  CHECK(farthest <= 250);  // dogs follow out to twice their range; flights overshoot a little
}
