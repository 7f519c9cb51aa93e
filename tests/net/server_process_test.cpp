// loam-server as a process: runs for --duration and exits 0, commits to its world
// database every --save-interval, loads it on the next start (refusing damaged rows
// unless --skip-damaged-bricks, and files that are not databases), imports an old
// single-file save when there is no database, commits and exits 0 on SIGTERM, opens a
// big world's database lazily (and upgrades a format-1 one), and uses exit codes 1 and
// 2 as documented.
// The binary comes from LOAM_SERVER_BIN (compile definition; the environment
// variable of the same name overrides it).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sqlite3.h>

#include "sim/gen/column_streamer.h"
#include "sim/gen/generator_version.h"
#include "sim/gen/scene.h"
#include "sim/save/state_codec.h"
#include "sim/save/world_db.h"
#include "tests/support/process_util.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using loam::test::countOf;
using loam::test::freeUdpPort;

const std::string kScene = std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml";
// Generation of flat.toml takes seconds; on a loaded CI machine, much longer.
constexpr auto kStartTimeout = 240s;

struct TempDir : loam::test::TempDir {
  TempDir() : loam::test::TempDir("loam_server_process_test_") {}
};

/// A running loam-server whose stdout and stderr go to log.
struct Server : loam::test::Process {
  Server(const std::vector<std::string>& args, fs::path log)
      : Process(loam::test::binaryPath("LOAM_SERVER_BIN", LOAM_SERVER_BIN), args, std::move(log)) {}
};

/// The world database of flat.toml seed 1 in a save folder.
fs::path dbPath(const fs::path& saves) { return saves / "flat-1.loamdb"; }

/// The tick of the last commit in a world database (0 when it cannot be opened).
std::uint64_t dbTick(const fs::path& db) {
  auto opened = loam::sim::WorldDb::open(db.string());
  return opened ? (*opened)->header().tick : 0;
}

/// Runs SQL on a world database behind the server's back (damage it).
void tamper(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open(db.string().c_str(), &h) == SQLITE_OK);
  const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(h);
  REQUIRE(rc == SQLITE_OK);
}

/// The number after `before` in text (0 if absent).
std::uint64_t numberAfter(const std::string& text, const std::string& before) {
  auto at = text.find(before);
  if (at == std::string::npos) return 0;
  return std::strtoull(text.c_str() + at + before.size(), nullptr, 10);
}

std::vector<std::string> baseArgs(const TempDir& dir, int port) {
  return {"--scene", kScene, "--port", std::to_string(port), "--bind", "127.0.0.1", "--save-dir",
          (dir.path / "saves").string()};
}

}  // namespace

TEST_CASE("loam-server commits to its world database, loads it, refuses damage, imports an old save") {
  TempDir dir;
  const fs::path saves = dir.path / "saves";
  const fs::path db = dbPath(saves);

  // 1. Six seconds with a commit every two: exits 0 with periodic commits and a final one.
  std::vector<std::string> args = baseArgs(dir, freeUdpPort());
  for (const char* a : {"--save-interval", "2", "--duration", "6", "--stats-interval", "2"}) args.push_back(a);
  Server first(args, dir.path / "first.log");
  int rc = first.wait(kStartTimeout + 60s);
  std::string log1 = first.log();
  INFO("first run log:\n" << log1);
  REQUIRE(rc == 0);
  CHECK(log1.find("listening on 127.0.0.1:") != std::string::npos);
  CHECK(log1.find("generating world: 100%") != std::string::npos);
  CHECK(log1.find("stats: ") != std::string::npos);
  CHECK(log1.find("created world database " + db.string()) != std::string::npos);
  CHECK(countOf(log1, "Z committed tick ") >= 3);  // at 2 s, 4 s and on exit
  std::uint64_t stopTick = numberAfter(log1, "stopping (duration reached) at tick ");
  CHECK(stopTick >= 300);  // 6 s at 60 Hz, minus scheduling slack
  CHECK(stopTick <= 370);
  CHECK(dbTick(db) == stopTick);

  // 2. The next start loads it.
  std::vector<std::string> args2 = baseArgs(dir, freeUdpPort());
  for (const char* a : {"--save-interval", "0", "--duration", "1"}) args2.push_back(a);
  Server second(args2, dir.path / "second.log");
  rc = second.wait(kStartTimeout + 30s);
  std::string log2 = second.log();
  INFO("second run log:\n" << log2);
  REQUIRE(rc == 0);
  CHECK(log2.find("loaded world database " + db.string() + ": tick " + std::to_string(stopTick)) != std::string::npos);
  CHECK(log2.find("tick " + std::to_string(stopTick) + ", max") != std::string::npos);
  std::uint64_t secondStop = numberAfter(log2, "stopping (duration reached) at tick ");
  CHECK(secondStop > stopTick);
  CHECK(dbTick(db) == secondStop);

  // 3. A damaged row stops the start (exit 2) naming the brick; --skip-damaged-bricks
  //    goes on without it and deletes the row.
  tamper(db, "INSERT INTO bricks(x, y, z, content, hash) VALUES(1, 2, 3, x'00', 0)");
  std::vector<std::string> args3 = baseArgs(dir, freeUdpPort());
  for (const char* a : {"--save-interval", "0", "--duration", "0.5"}) args3.push_back(a);
  {
    Server refused(args3, dir.path / "damaged.log");
    rc = refused.wait(kStartTimeout + 30s);
    const std::string log = refused.log();
    INFO("damaged run log:\n" << log);
    CHECK(rc == 2);
    CHECK(log.find("damaged brick (1, 2, 3): ") != std::string::npos);
    CHECK(log.find("--skip-damaged-bricks") != std::string::npos);
    CHECK(countOf(log, "error: ") == 1);
    CHECK(dbTick(db) == secondStop);
  }
  {
    std::vector<std::string> skip = args3;
    skip.push_back("--skip-damaged-bricks");
    Server skipping(skip, dir.path / "skip.log");
    rc = skipping.wait(kStartTimeout + 30s);
    const std::string log = skipping.log();
    INFO("skipping run log:\n" << log);
    CHECK(rc == 0);
    CHECK(log.find("continuing without 1 damaged rows") != std::string::npos);
    auto reopened = loam::sim::WorldDb::open(db.string());
    REQUIRE(reopened.has_value());
    auto contents = (*reopened)->load();
    REQUIRE(contents.has_value());
    CHECK(contents->damaged.empty());
  }
  const std::uint64_t thirdStop = dbTick(db);
  CHECK(thirdStop > secondStop);

  // 4. A file that is not a database: exit 2, the file left as it is.
  const fs::path kept = dir.path / "kept.loamdb";
  fs::rename(db, kept);
  std::ofstream(db, std::ios::binary) << "this is not a database, not even a small one";
  {
    Server refused(args3, dir.path / "notdb.log");
    rc = refused.wait(kStartTimeout + 30s);
    const std::string log = refused.log();
    INFO("not-a-database run log:\n" << log);
    CHECK(rc == 2);
    CHECK(log.find("not an SQLite database") != std::string::npos);
    CHECK(loam::test::readText(db) == "this is not a database, not even a small one");
  }
  fs::remove(db);

  // 5. No database but an old single-file save: it is imported.
  {
    auto old = loam::sim::WorldDb::open(kept.string());
    REQUIRE(old.has_value());
    auto contents = (*old)->load();
    REQUIRE(contents.has_value());
    auto bytes = loam::sim::encodeSave(contents->save);
    REQUIRE(bytes.has_value());
    REQUIRE(loam::sim::writeSaveFile((saves / ("flat-1-" + std::to_string(thirdStop) + ".loamsave")).string(), *bytes)
                .has_value());
  }
  Server imported(args3, dir.path / "import.log");
  rc = imported.wait(kStartTimeout + 30s);
  const std::string log5 = imported.log();
  INFO("import run log:\n" << log5);
  REQUIRE(rc == 0);
  CHECK(log5.find("imported save " + (saves / ("flat-1-" + std::to_string(thirdStop) + ".loamsave")).string() +
                  " into world database " + db.string() + ": tick " + std::to_string(thirdStop)) != std::string::npos);
  CHECK(log5.find("tick " + std::to_string(thirdStop) + ", max") != std::string::npos);
  CHECK(dbTick(db) > thirdStop);
}

TEST_CASE("a world database of another world stops the start (exit 2); --fresh-world keeps it as .stale") {
  TempDir dir;
  const fs::path saves = dir.path / "saves";
  const fs::path db = dbPath(saves);
  // The same scene name and seed, one terrain number changed: a different world.
  const fs::path edited = dir.path / "flat.toml";
  {
    std::string text = loam::test::readText(kScene);
    const std::string materials = "materials = \"";
    REQUIRE(text.find(materials) != std::string::npos);
    text.replace(text.find(materials), materials.size(), materials + LOAM_SOURCE_DIR + "/");
    REQUIRE(text.find("base_height = 0.4") != std::string::npos);
    text.replace(text.find("base_height = 0.4"), 17, "base_height = 0.6");
    std::ofstream(edited) << text;
  }
  std::vector<std::string> old = baseArgs(dir, freeUdpPort());
  old[1] = edited.string();
  for (const char* a : {"--save-interval", "1", "--duration", "4"}) old.push_back(a);
  Server oldWorld(old, dir.path / "old.log");
  REQUIRE(oldWorld.wait(kStartTimeout + 30s) == 0);
  const std::uint64_t oldTick = dbTick(db);
  REQUIRE(oldTick > 0);

  // Without --fresh-world the current world refuses to start over the old one: exit 2,
  // one error line naming the database and what differs, nothing moved or written.
  std::vector<std::string> args = baseArgs(dir, freeUdpPort());
  for (const char* a : {"--save-interval", "0", "--duration", "0.5"}) args.push_back(a);
  {
    Server refused(args, dir.path / "refused.log");
    const int rc = refused.wait(kStartTimeout + 30s);
    const std::string log = refused.log();
    INFO("log:\n" << log);
    CHECK(rc == 2);
    CHECK(log.find("error: world database " + db.string() + " cannot be used here: ") != std::string::npos);
    CHECK(log.find("scene hash") != std::string::npos);
    CHECK(log.find("--fresh-world") != std::string::npos);
    CHECK(countOf(log, "error: ") == 1);
    CHECK(dbTick(db) == oldTick);
  }
  // A database of another save format is refused the same way, naming both versions.
  {
    tamper(db, "UPDATE meta SET value = 99 WHERE key = 'save_format'");
    Server refused(args, dir.path / "format.log");
    const int rc = refused.wait(kStartTimeout + 30s);
    const std::string log = refused.log();
    INFO("log:\n" << log);
    CHECK(rc == 2);
    CHECK(log.find("error: world database " + db.string() + " cannot be used here: save format version 99, this "
                   "build reads version ") != std::string::npos);
  }

  // With --fresh-world the current world starts fresh and moves the old database aside.
  args.push_back("--fresh-world");
  Server current(args, dir.path / "current.log");
  REQUIRE(current.wait(kStartTimeout + 30s) == 0);
  std::string log = current.log();
  INFO("log:\n" << log);
  CHECK(countOf(log, "--fresh-world: setting world database ") == 1);
  CHECK(fs::exists(db.string() + ".stale"));
  CHECK(dbTick(fs::path(db.string() + ".stale")) == oldTick);
  const std::uint64_t now = dbTick(db);
  CHECK(now > 0);
  CHECK(now < oldTick);
}

TEST_CASE("loam-server commits and exits 0 on SIGTERM") {
  TempDir dir;
  std::vector<std::string> args = baseArgs(dir, freeUdpPort());
  for (const char* a : {"--save-interval", "0"}) args.push_back(a);
  Server server(args, dir.path / "server.log");
  REQUIRE(server.waitForLog("listening on", kStartTimeout));
  std::this_thread::sleep_for(1500ms);
  REQUIRE(::kill(server.pid, SIGTERM) == 0);
  int rc = server.wait(60s);
  std::string log = server.log();
  INFO("log:\n" << log);
  CHECK(rc == 0);
  CHECK(log.find("stopping (SIGTERM)") != std::string::npos);
  std::uint64_t stopTick = numberAfter(log, "stopping (SIGTERM) at tick ");
  CHECK(stopTick >= 30);
  CHECK(countOf(log, "Z committed tick ") == 1);  // --save-interval 0: only the final commit
  CHECK(dbTick(dbPath(dir.path / "saves")) == stopTick);
  CHECK(log.find("stopped") != std::string::npos);
}

TEST_CASE("loam-server exit codes: 2 for bad config, 1 for runtime failures") {
  TempDir dir;
  SUBCASE("port out of range") {
    Server s({"--scene", kScene, "--port", "70000"}, dir.path / "a.log");
    CHECK(s.wait(30s) == 2);
    std::string log = s.log();
    CHECK(log.find("--port 70000") != std::string::npos);
    CHECK(countOf(log, "\n") == 1);  // one line
  }
  SUBCASE("unknown flag") {
    Server s({"--scene", kScene, "--frobnicate"}, dir.path / "b.log");
    CHECK(s.wait(30s) == 2);
    CHECK(s.log().find("--frobnicate") != std::string::npos);
  }
  SUBCASE("unknown scene file") {
    Server s({"--scene", (dir.path / "missing.toml").string()}, dir.path / "c.log");
    CHECK(s.wait(30s) == 2);
    CHECK(s.log().find("not found") != std::string::npos);
  }
  SUBCASE("a scene that does not load") {
    const fs::path bad = dir.path / "bad.toml";
    std::ofstream(bad) << "name = \"bad\"\nnot_a_key = 3\n";
    Server s({"--scene", bad.string(), "--save-dir", (dir.path / "saves").string()}, dir.path / "d.log");
    CHECK(s.wait(30s) == 1);
    CHECK(s.log().find("cannot load scene") != std::string::npos);
  }
  SUBCASE("the port is taken") {
    loam::test::LoopbackSocket taken(SOCK_DGRAM);  // held until the server gave up
    Server s(baseArgs(dir, taken.port), dir.path / "e.log");
    int rc = s.wait(kStartTimeout);
    INFO("log:\n" << s.log());
    CHECK(rc == 1);
    CHECK(s.log().find("cannot start the server") != std::string::npos);
  }
}

TEST_CASE("a big world's database opens lazily: far columns load when read; a format-1 database gets its terms") {
  using namespace loam::sim;
  TempDir dir;
  const fs::path saves = dir.path / "saves";
  fs::create_directories(saves);
  const std::string scenePath = std::string(LOAM_SOURCE_DIR) + "/scenes/highlands.toml";
  auto scene = loadScene(scenePath);
  REQUIRE(scene.has_value());
  const fs::path db = saves / (scene->name + "-" + std::to_string(scene->defaultSeed) + ".loamdb");

  // The database a server would have after two bricks of soil set in the sky 2.5 and
  // 3 km from the spawn (the same world: a streamed state of the scene).
  std::vector<ChunkTerm> terms;
  {
    auto streamer = ColumnStreamer::create(*scene, scene->defaultSeed, {.threads = 2});
    REQUIRE(streamer.has_value());
    auto state = createStreamedSimState(*scene, scene->defaultSeed, **streamer);
    REQUIRE(state.has_value());
    const std::int32_t y = state->world.bounds().maxBrick.y - 2;
    std::vector<MaterialId> soil(kBrickVoxels, MaterialId{2});
    for (BrickCoord b : {BrickCoord{2500 * kVoxelsPerMetre / kBrickSize, y, -2500 * kVoxelsPerMetre / kBrickSize},
                         BrickCoord{-3000 * kVoxelsPerMetre / kBrickSize, y, 1500 * kVoxelsPerMetre / kBrickSize}})
      state->world.writeBrick(b, soil.data());
    REQUIRE(state->world.modifiedCount() == 2);
    terms = changedChunkTerms(state->world);
    REQUIRE(terms.size() == 2);
    SaveHeader h{kSaveFormatVersion, SaveIdentity{state->sceneHash, state->seed, kGeneratorVersion}, 0};
    auto data = captureSave(h, state->world, stateBlobs(*state));
    REQUIRE(data.has_value());
    REQUIRE(createWorldDbFromSave(db.string(), std::move(*data), terms).has_value());
  }
  auto args = [&](int port) {
    std::vector<std::string> a{"--scene", scenePath, "--port", std::to_string(port), "--bind", "127.0.0.1",
                               "--save-dir", saves.string(), "--save-interval", "0", "--duration", "1"};
    return a;
  };
  auto indexOf = [&]() {
    auto opened = WorldDb::open(db.string());
    REQUIRE(opened.has_value());
    auto index = (*opened)->loadIndex();
    REQUIRE(index.has_value());
    return std::move(index).value();
  };

  {
    Server lazy(args(freeUdpPort()), dir.path / "lazy.log");
    const int rc = lazy.wait(kStartTimeout);
    const std::string log = lazy.log();
    INFO("log:\n" << log);
    REQUIRE(rc == 0);
    CHECK(log.find("2 columns hold edits, 0 loaded at start") != std::string::npos);
    const WorldDbIndex index = indexOf();
    CHECK(index.columns.size() == 2);
    CHECK(index.terms == terms);  // the final commit kept the rows it never read
  }

  // A format-1 database (no chunk terms): the server loads those columns once and
  // commits their terms, which equal the ones computed where the edits were made.
  tamper(db, "DROP TABLE chunks; DROP INDEX bricks_by_column; UPDATE meta SET value = 1 WHERE key = 'db_format'");
  {
    Server upgraded(args(freeUdpPort()), dir.path / "upgraded.log");
    const int rc = upgraded.wait(kStartTimeout);
    const std::string log = upgraded.log();
    INFO("log:\n" << log);
    REQUIRE(rc == 0);
    CHECK(log.find("computed the terms of 2 chunks") != std::string::npos);
    const WorldDbIndex index = indexOf();
    CHECK(index.missingTerms.empty());
    CHECK(index.terms == terms);
  }
}
