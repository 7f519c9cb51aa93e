// WorldHashTracker must equal hashWorld bit for bit after every update: the world
// hash, and the hash of every cell it reports as touched and of every cell read
// from its cache.
#include "sim/step/world_hash_tracker.h"

#include <doctest/doctest.h>

#include <chrono>
#include <vector>

#include "sim/world/brick_store.h"
#include "sim/gen/scene.h"
#include "sim/trace/script.h"
#include "sim/step/step.h"
#include "tests/sim/sim_fixture.h"

using namespace loam::sim;

namespace {

// Checks the tracker against a full hashWorld of the store.
void checkAgainstFull(const WorldHashTracker& t, const BrickStore& store, std::uint64_t tick) {
  const WorldHashes full = hashWorld(store);
  REQUIRE_MESSAGE(t.worldHash() == full.world, "tick " << tick);
  for (const CellHash& c : t.touchedCells()) {
    auto it = std::lower_bound(full.cells.begin(), full.cells.end(), c.cell,
                               [](const CellHash& a, CellCoord b) { return a.cell < b; });
    // hashWorld lists only cells holding changed chunks; a touched cell back to what
    // generation made has the hash of an empty sum (a tracker never reset has only those).
    const std::uint64_t want =
        it != full.cells.end() && it->cell == c.cell ? it->hash : WorldHashTracker{}.cellHash(store, c.cell);
    REQUIRE_MESSAGE(want == c.hash, "tick " << tick << " cell " << c.cell.x << "," << c.cell.z);
  }
  for (std::size_t i = 1; i < t.touchedCells().size(); ++i) {
    REQUIRE(t.touchedCells()[i - 1].cell < t.touchedCells()[i].cell);
  }
}

}  // namespace

TEST_CASE("tracker: reset equals hashWorld, every cell from the cache") {
  BrickStore w = loam::test::flatWorld();
  w.set(VoxelCoord{3, 4, 5}, loam::test::mat("planks"));
  WorldHashTracker t;
  t.reset(w);
  const WorldHashes full = hashWorld(w);
  CHECK(t.worldHash() == full.world);
  CHECK(t.touchedCells().empty());
  for (const CellHash& c : full.cells) CHECK(t.cellHash(w, c.cell) == c.hash);
}

TEST_CASE("tracker: voxel edits, brick fills and steps without edits") {
  BrickStore w = loam::test::flatWorld();
  WorldHashTracker t;
  t.reset(w);
  const std::uint64_t before = t.worldHash();

  // No edit: nothing touched, hash unchanged.
  t.update(w, {});
  CHECK(t.worldHash() == before);
  CHECK(t.touchedCells().empty());

  // Voxel edits in two cells (one at a negative coordinate).
  std::vector<EditRecord> edits;
  const MaterialId planks = loam::test::mat("planks");
  for (VoxelCoord v : {VoxelCoord{1, 2, 3}, VoxelCoord{-100, 5, -200}, VoxelCoord{-100, 6, -200}}) {
    edits.push_back(EditRecord{v.x, v.y, v.z, w.get(v), planks, EditRecord::Kind::Voxel});
    w.set(v, planks);
  }
  t.update(w, edits);
  CHECK(t.worldHash() != before);
  CHECK(t.touchedCells().size() == 2);
  checkAgainstFull(t, w, 1);

  // A brick fill (brick coordinates) in a third cell.
  edits.clear();
  const BrickCoord b{20, -1, 20};
  edits.push_back(EditRecord{b.x, b.y, b.z, loam::test::mat("stone"), kAir, EditRecord::Kind::BrickFill});
  w.fillBrick(b, kAir);
  t.update(w, edits);
  REQUIRE(t.touchedCells().size() == 1);
  CHECK(t.touchedCells()[0].cell == cellOf(b));
  checkAgainstFull(t, w, 2);

  // Undoing the fill brings back the earlier hash of that cell and world.
  const std::uint64_t afterFill = t.worldHash();
  edits[0] = EditRecord{b.x, b.y, b.z, kAir, loam::test::mat("stone"), EditRecord::Kind::BrickFill};
  w.fillBrick(b, loam::test::mat("stone"));
  t.update(w, edits);
  CHECK(t.worldHash() != afterFill);
  checkAgainstFull(t, w, 3);

  // Cached cell hashes of untouched cells stay right.
  for (const CellHash& c : cellHashes(w)) CHECK(t.cellHash(w, c.cell) == c.hash);
}

TEST_CASE("tracker: forest-fires, 300 scripted steps, equal to hashWorld after each") {
  auto scene = loadScene(LOAM_SOURCE_DIR "/scenes/forest-fires.toml");
  REQUIRE_MESSAGE(scene.has_value(), (scene ? "" : scene.error().message));
  auto script = loadScript(LOAM_SOURCE_DIR "/scenes/scripts/forest-fires.txt");
  REQUIRE_MESSAGE(script.has_value(), (script ? "" : script.error().message));
  auto created = createSimState(*scene, scene->defaultSeed);
  REQUIRE(created.has_value());
  SimState& s = *created;

  WorldHashTracker t;
  t.reset(s.world);
  REQUIRE(t.worldHash() == worldHash(s.world));
  ScriptRunner runner(std::move(script).value());
  std::vector<Command> commands;
  StepOutput out;
  std::size_t edits = 0, fills = 0, quiet = 0;
  std::chrono::steady_clock::duration updateTime{};
  for (int i = 0; i < 300; ++i) {
    commands.clear();
    runner.commandsFor(s, commands);
    step(s, commands, out);
    const auto t0 = std::chrono::steady_clock::now();
    t.update(s.world, out.edits);
    updateTime += std::chrono::steady_clock::now() - t0;
    edits += out.edits.size();
    for (const EditRecord& e : out.edits) fills += e.kind == EditRecord::Kind::BrickFill;
    quiet += out.edits.empty();
    checkAgainstFull(t, s.world, out.tick);
  }
  // The run must have exercised the interesting paths.
  CHECK(edits > 100);
  const auto t0 = std::chrono::steady_clock::now();
  (void)hashWorld(s.world);
  const auto full = std::chrono::steady_clock::now() - t0;
  MESSAGE("edits " << edits << ", brick fills " << fills << ", steps without edits " << quiet << "; update "
                   << std::chrono::duration<double, std::micro>(updateTime).count() / 300 << " us per step, hashWorld "
                   << std::chrono::duration<double, std::micro>(full).count() << " us");
  for (const CellHash& c : cellHashes(s.world)) CHECK(t.cellHash(s.world, c.cell) == c.hash);
}
