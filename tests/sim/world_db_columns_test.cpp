// WorldDbColumns: a streamed world opened lazily from its database (its index, not its
// rows) reads, hashes and steps as the world it was saved from, and columns holding
// edits page out once committed and load again when read; pinned columns stay.
#include "sim/save/world_db_columns.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/gen/column_streamer.h"
#include "sim/gen/generator_version.h"
#include "sim/gen/scene.h"
#include "sim/save/state_codec.h"
#include "sim/step/mirror.h"
#include "sim/step/step.h"
#include "sim/step/world_hash_tracker.h"
#include "sim/trace/script.h"
#include "sim/world/world_hash.h"
#include "tests/sim/save_fixture.h"

using namespace loam::sim;

namespace {

/// A database path under the temp folder, removed (with its -wal and -shm) at the end.
struct TempDb {
  std::string path;
  explicit TempDb(const char* name)
      : path(std::string(P_tmpdir) + "/loam_world_db_columns_test_" + std::to_string(::getpid()) + "_" + name) {
    remove();
  }
  ~TempDb() { remove(); }
  void remove() const {
    for (const char* side : {"", "-wal", "-shm"}) std::remove((path + side).c_str());
  }
};

/// A streamed forest-fires server: the scripted commands plus a pour every 20 ticks.
struct Run {
  Scene scene;
  std::unique_ptr<ColumnStreamer> streamer;
  SimState state;
  ScriptRunner runner;
  std::vector<Command> commands;
  StepOutput out;

  void stepOnce() {
    loam::test::forestFiresCommands(state, runner, commands);
    step(state, commands, out);
    playerStreamCentres(state, centres);
    streamer->update(state.world, centres);  // releases unmodified (and unpinned) columns beyond the budget
  }
  std::vector<StreamCentre> centres;
};

Scene forestFires() {
  auto scene = loadScene(LOAM_SOURCE_DIR "/scenes/forest-fires.toml");
  REQUIRE_MESSAGE(scene.has_value(), (scene ? "" : scene.error().message));
  return std::move(scene).value();
}

/// A streamed state with a small residency budget, so columns leave and come back.
std::pair<std::unique_ptr<ColumnStreamer>, SimState> streamedState(const Scene& scene) {
  auto streamer = ColumnStreamer::create(scene, scene.defaultSeed,
                                         {.threads = 1, .prefetchRadiusVoxels = 0, .maxResidentColumns = 48});
  REQUIRE(streamer.has_value());
  auto state = createStreamedSimState(scene, scene.defaultSeed, **streamer);
  REQUIRE_MESSAGE(state.has_value(), (state ? "" : state.error().message));
  return {std::move(streamer).value(), std::move(state).value()};
}

std::vector<BrickCoord> modifiedBricks(const BrickStore& w) {
  std::vector<BrickCoord> out;
  w.forEachModified([&](BrickCoord b) { out.push_back(b); });
  return out;
}

}  // namespace

TEST_CASE("lazy world: opened from its index it hashes and steps as the saved server; committed columns page out") {
  const Scene scene = forestFires();
  auto script = loadScript(LOAM_SOURCE_DIR "/scenes/scripts/forest-fires.txt");
  REQUIRE(script.has_value());
  auto [streamer, state] = streamedState(scene);
  Run run{scene, std::move(streamer), std::move(state), ScriptRunner(std::move(script).value()), {}, {}, {}};
  for (int i = 0; i < 400; ++i) run.stepOnce();
  // Besides what the steps changed, soil in the sky over three corners, which nothing reads.
  const WorldBounds& wb = run.state.world.bounds();
  const std::vector<MaterialId> soil(kBrickVoxels, MaterialId{2});
  for (BrickCoord b : {BrickCoord{wb.minBrick.x, wb.maxBrick.y - 1, wb.minBrick.z},
                       BrickCoord{wb.maxBrick.x - 1, wb.maxBrick.y - 1, wb.minBrick.z},
                       BrickCoord{wb.minBrick.x, wb.maxBrick.y - 1, wb.maxBrick.z - 1}})
    run.state.world.writeBrick(b, soil.data());
  REQUIRE(run.state.world.modifiedCount() > 3);

  // The server's database at tick 400: every changed brick, its chunk's term, the blobs.
  TempDb file("lazy");
  {
    SaveHeader h{kSaveFormatVersion, SaveIdentity{run.state.sceneHash, run.state.seed, kGeneratorVersion},
                 run.state.tick};
    auto data = captureSave(h, run.state.world, stateBlobs(run.state));
    REQUIRE(data.has_value());
    auto db = createWorldDbFromSave(file.path, std::move(*data), changedChunkTerms(run.state.world));
    REQUIRE_MESSAGE(db.has_value(), (db ? "" : db.error().message));
  }

  // Opened lazily: the index, then the blobs (whose restore reads the columns with water and fire).
  auto writer = WorldDb::open(file.path);
  REQUIRE(writer.has_value());
  auto index = (*writer)->loadIndex();
  REQUIRE_MESSAGE(index.has_value(), (index ? "" : index.error().message));
  CHECK(index->damaged.empty());
  CHECK(index->missingTerms.empty());
  auto reader = WorldDb::openReader(file.path);
  REQUIRE_MESSAGE(reader.has_value(), (reader ? "" : reader.error().message));
  auto [lazyStreamer, lazyState] = streamedState(scene);
  Run lazy{scene, std::move(lazyStreamer), std::move(lazyState), run.runner, {}, {}, {}};
  WorldDbColumns stored(std::move(*reader), index->columns, index->terms);
  stored.applyPresent(lazy.state.world);
  lazy.state.world.setStoredColumns(&stored);
  SaveData blobs;
  blobs.header = (*writer)->header();
  blobs.bounds = (*writer)->bounds();
  blobs.blobs = index->blobs;
  REQUIRE(restoreState(blobs, lazy.state).has_value());
  const std::size_t absent = static_cast<std::size_t>(std::count_if(
      index->columns.begin(), index->columns.end(), [&](ChunkColumn c) { return !lazy.state.world.columnPresent(c); }));
  MESSAGE(index->columns.size() << " columns hold rows, " << stored.stats().columnsLoaded << " loaded at start, "
                                << absent << " absent");
  CHECK(absent > 0);  // not read, not loaded

  // The world hash counts the chunks it has not loaded: equal before anything reads them.
  WorldHashTracker tracker;
  tracker.reset(lazy.state.world);
  CHECK(tracker.worldHash() == worldHash(run.state.world));
  CHECK(worldHash(lazy.state.world) == worldHash(run.state.world));
  CHECK(cellHashes(lazy.state.world) == cellHashes(run.state.world));

  // Lockstep: every replicated field and the bricks either changed, each step; edits equal.
  const ChangeSubscriber runChanges = run.state.world.subscribeChanges();
  const ChangeSubscriber lazyChanges = lazy.state.world.subscribeChanges();
  std::vector<BrickCoord> touched;
  std::uint64_t pagedOut = 0;
  for (int i = 0; i < 300; ++i) {
    run.stepOnce();
    lazy.stepOnce();
    tracker.update(lazy.state.world, lazy.out.edits);
    for (const EditRecord& e : lazy.out.edits) {
      touched.push_back(editBrick(e));
      stored.touch(editBrick(e));
    }
    std::vector<BrickCoord> both = run.state.world.takeChanged(runChanges);
    const std::vector<BrickCoord> mine = lazy.state.world.takeChanged(lazyChanges);
    both.insert(both.end(), mine.begin(), mine.end());
    auto d = firstDifference(run.state, lazy.state, both);
    REQUIRE_MESSAGE(!d.has_value(), "tick " << lazy.out.tick << ": " << (d ? *d : ""));
    REQUIRE(run.out.edits == lazy.out.edits);
    REQUIRE(tracker.worldHash() == worldHash(run.state.world));

    if (i == 100 || i == 200) {
      // Pinned: the touched columns stay until their commit lands.
      const std::vector<ChunkColumn> before = columnsToPageOut(lazy.state, stored, 0);
      for (ChunkColumn c : before) CHECK_FALSE(stored.pinned(c));
      if (!touched.empty()) {
        const ChunkColumn hot{touched.front().x >> kChunkShift, touched.front().z >> kChunkShift};
        CHECK(stored.pinned(hot));
        CHECK(lazy.state.world.dropColumns({&hot, 1}) == 0);
      }
      std::sort(touched.begin(), touched.end());
      touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
      WorldDbCommit commit =
          captureCommit(lazy.state.world, touched, [&](ChunkCoord c) { return tracker.term(c); });
      commit.tick = lazy.state.tick;
      commit.blobs = stateBlobs(lazy.state);
      auto r = (*writer)->commit(commit);
      REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
      touched.clear();
      stored.submitted();
      stored.landed(false);  // a failed commit keeps them pinned
      CHECK(columnsToPageOut(lazy.state, stored, 0).size() == before.size());
      stored.landed(true);

      // Page out what is committed and quiet; nothing near a player, wet or burning goes.
      const std::vector<ChunkColumn> out = columnsToPageOut(lazy.state, stored, 0);
      std::vector<StreamCentre> centres;
      playerStreamCentres(lazy.state, centres);
      for (ChunkColumn c : out) {
        CHECK(lazy.state.world.columnModified(c));
        for (StreamCentre s : centres) CHECK(distance2(c, s) > 0);
        for (std::uint32_t slot : lazy.state.water.grid.sorted()) {
          const BrickCoord b = lazy.state.water.grid.brick(slot).coord;
          CHECK_FALSE((ChunkColumn{b.x >> kChunkShift, b.z >> kChunkShift} == c));
        }
      }
      stored.pageOut(out, lazy.state.world.bounds(), [&](ChunkCoord c) { return tracker.term(c); });
      CHECK(lazy.state.world.dropColumns(out) == static_cast<int>(out.size()));
      pagedOut += out.size();
      for (ChunkColumn c : out) CHECK_FALSE(lazy.state.world.columnPresent(c));
      CHECK(worldHash(lazy.state.world) == worldHash(run.state.world));
      tracker.reset(lazy.state.world);
      CHECK(tracker.worldHash() == worldHash(run.state.world));
    }
  }
  MESSAGE(pagedOut << " columns paged out; " << stored.stats().columnsLoaded << " loaded, "
                   << stored.stats().bricksLoaded << " bricks");
  CHECK(pagedOut > 0);
  CHECK(stored.stats().problems == 0);
  // Everything reads back: the paged-out columns load again with their edits.
  const std::vector<BrickCoord> edited = modifiedBricks(run.state.world);
  auto d = firstDifference(run.state, lazy.state, edited);
  CHECK_MESSAGE(!d.has_value(), (d ? *d : ""));
  CHECK(modifiedBricks(lazy.state.world) == edited);
  CHECK(worldHash(lazy.state.world) == worldHash(run.state.world));
}
