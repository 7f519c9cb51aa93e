// The world database (sim/save/world_db.h): round trip, incremental commits, rows of
// reverted bricks deleted, damaged rows named, identity and non-database files
// refused, import/export of single-file saves, and kill -9 during commits.
#include "sim/save/world_db.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sim/world/brick_store.h"
#include "sim/world/world_hash.h"
#include "tests/sim/save_fixture.h"

using namespace loam::sim;

namespace {

const WorldBounds kBounds = loam::test::kSaveBounds;
const SaveIdentity kId = loam::test::kSaveId;

BrickStore generate() { return loam::test::generateSaveWorld(); }

/// Digs and places spheres; returns the bricks touched.
std::vector<BrickCoord> edit(BrickStore& s, unsigned seed, int edits) {
  std::mt19937 rng(seed);
  std::vector<BrickCoord> touched;
  for (int e = 0; e < edits; ++e) {
    int cx = static_cast<int>(rng() % 480) - 240, cz = static_cast<int>(rng() % 480) - 240;
    int cy = 120 + static_cast<int>(rng() % 16);
    MaterialId m = (rng() % 2) ? kAir : static_cast<MaterialId>(7 + rng() % 3);
    for (int dz = -3; dz <= 3; ++dz)
      for (int dy = -3; dy <= 3; ++dy)
        for (int dx = -3; dx <= 3; ++dx)
          if (dx * dx + dy * dy + dz * dz <= 9) {
            s.set({cx + dx, cy + dy, cz + dz}, m);
            touched.push_back(brickOf(VoxelCoord{cx + dx, cy + dy, cz + dz}));
          }
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  return touched;
}

/// The commit of the touched bricks, as the server builds it.
WorldDbCommit commitOf(const BrickStore& s, const std::vector<BrickCoord>& touched, std::uint64_t tick) {
  WorldDbCommit c;
  c.tick = tick;
  SavedBrick sb;
  for (BrickCoord b : touched) {
    if (captureBrick(s, b, sb)) {
      c.bricks.push_back(sb);
    } else {
      c.removed.push_back(b);
    }
  }
  return c;
}

std::string tempPath(const char* name) {
  std::string p = std::string(P_tmpdir) + "/loam_world_db_test_" + std::to_string(::getpid()) + "_" + name;
  for (const char* ext : {"", "-wal", "-shm"}) ::unlink((p + ext).c_str());
  return p;
}

void removeDb(const std::string& p) {
  for (const char* ext : {"", "-wal", "-shm"}) ::unlink((p + ext).c_str());
}

/// Saved bricks equal where they hold data (a delta brick only at its changed voxels).
bool sameBricks(const std::vector<SavedBrick>& a, const std::vector<SavedBrick>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].coord != b[i].coord || a[i].delta != b[i].delta || a[i].changed != b[i].changed) return false;
    for (int v = 0; v < kBrickVoxels; ++v) {
      const bool held = !a[i].delta || ((a[i].changed[static_cast<std::size_t>(v >> 6)] >> (v & 63)) & 1u);
      if (held && a[i].voxels[static_cast<std::size_t>(v)] != b[i].voxels[static_cast<std::size_t>(v)]) return false;
    }
  }
  return true;
}

/// Runs SQL on the file behind the database's back (damage it).
void tamper(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* msg = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &msg);
  INFO((msg != nullptr ? msg : ""));
  sqlite3_free(msg);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

}  // namespace

TEST_CASE("world db round trip: bricks, blobs and tick equal after reopening") {
  const std::string path = tempPath("roundtrip.db");
  BrickStore world = generate();
  edit(world, 1, 60);
  SaveHeader header{kSaveFormatVersion, kId, 0};
  auto saved = captureSave(header, world, {{"fire", {1, 2, 3}}, {"water", std::vector<std::uint8_t>(1000, 7)}, {"empty", {}}});
  REQUIRE(saved.has_value());
  saved->header.tick = 12345;
  {
    auto db = createWorldDbFromSave(path, *saved);
    REQUIRE_MESSAGE(db.has_value(), (db ? "" : db.error().message));
  }
  auto db = WorldDb::open(path);
  REQUIRE_MESSAGE(db.has_value(), (db ? "" : db.error().message));
  CHECK((*db)->header().tick == 12345);
  CHECK(checkSaveIdentity((*db)->header(), kId).has_value());
  auto loaded = (*db)->load();
  REQUIRE(loaded.has_value());
  CHECK(loaded->damaged.empty());
  CHECK(sameBricks(loaded->save.bricks, saved->bricks));
  REQUIRE(loaded->save.blobs.size() == 3);  // in name order
  CHECK(loaded->save.blobs[0].name == "empty");
  CHECK(loaded->save.blobs[0].bytes.empty());
  CHECK(loaded->save.blobs[1].bytes == std::vector<std::uint8_t>{1, 2, 3});
  CHECK(loaded->save.blobs[2].bytes.size() == 1000);

  BrickStore fresh = generate();
  REQUIRE(applySave(loaded->save, fresh).has_value());
  CHECK(hashContent(fresh).world == hashContent(world).world);
  CHECK(fresh.modifiedCount() == world.modifiedCount());
  db->reset();
  removeDb(path);
}

TEST_CASE("a commit writes only the touched bricks and changed blobs; a reverted brick's row is deleted") {
  const std::string path = tempPath("incremental.db");
  BrickStore world = generate();
  auto db = WorldDb::create(path, {kSaveFormatVersion, kId, 0}, kBounds);
  REQUIRE_MESSAGE(db.has_value(), (db ? "" : db.error().message));
  WorldDb& w = **db;

  std::vector<BrickCoord> first = edit(world, 2, 40);
  WorldDbCommit c1 = commitOf(world, first, 100);
  c1.blobs = {{"water", std::vector<std::uint8_t>(500, 1)}, {"fire", {9}}};
  auto s1 = w.commit(c1);
  REQUIRE(s1.has_value());
  CHECK(s1->bricksWritten == c1.bricks.size());
  CHECK(s1->blobsWritten == 2);
  const std::uint64_t rows1 = *w.brickRows();
  CHECK(rows1 == c1.bricks.size());

  // A few voxels in 3 bricks: 3 rows written, the others untouched; only the changed
  // blob is written.
  std::vector<BrickCoord> second;
  for (VoxelCoord v : {VoxelCoord{5, 131, 5}, VoxelCoord{100, 130, -100}, VoxelCoord{-200, 129, 60}}) {
    world.set(v, 9);
    second.push_back(brickOf(v));
  }
  WorldDbCommit c2 = commitOf(world, second, 200);
  c2.blobs = {{"water", std::vector<std::uint8_t>(500, 1)}, {"fire", {10}}};
  auto s2 = w.commit(c2);
  REQUIRE(s2.has_value());
  CHECK(s2->bricksWritten == 3);
  CHECK(s2->bricksDeleted == 0);
  CHECK(s2->blobsWritten == 1);
  const std::uint64_t rows2 = *w.brickRows();
  CHECK(rows2 >= rows1);
  CHECK(rows2 <= rows1 + 3);

  // Putting the generated voxel back makes the brick plain generated: its row goes.
  const VoxelCoord v{5, 131, 5};
  MaterialId generated[kBrickVoxels];
  REQUIRE(world.generatedBrick(brickOf(v), generated));
  BrickStore reference = generate();
  world.set(v, reference.get(v));
  SavedBrick sb;
  REQUIRE_FALSE(captureBrick(world, brickOf(v), sb));
  auto s3 = w.commit(commitOf(world, {brickOf(v)}, 300));
  REQUIRE(s3.has_value());
  CHECK(s3->bricksWritten == 0);
  CHECK(s3->bricksDeleted == 1);
  CHECK(*w.brickRows() == rows2 - 1);

  // The database holds what a whole save would.
  auto whole = captureSave({}, world, {});
  auto loaded = w.load();
  REQUIRE(loaded.has_value());
  CHECK(loaded->save.header.tick == 300);
  CHECK(sameBricks(loaded->save.bricks, whole->bricks));
  db->reset();
  removeDb(path);
}

TEST_CASE("damaged rows are named by their brick and left out; the rest loads") {
  const std::string path = tempPath("damaged.db");
  BrickStore world = generate();
  edit(world, 3, 20);
  auto saved = captureSave({kSaveFormatVersion, kId, 5}, world, {{"water", {1, 2}}});
  REQUIRE(saved.has_value());
  REQUIRE(saved->bricks.size() > 3);
  REQUIRE(createWorldDbFromSave(path, *saved).has_value());
  const BrickCoord a = saved->bricks[0].coord, b = saved->bricks[1].coord, c = saved->bricks[2].coord;
  auto where = [](BrickCoord k) {
    return " WHERE x = " + std::to_string(k.x) + " AND y = " + std::to_string(k.y) + " AND z = " + std::to_string(k.z);
  };
  // a: a flipped hash; b: garbage content (hash of the garbage kept wrong); c: huge.
  tamper(path, ("UPDATE bricks SET hash = hash + 1" + where(a)).c_str());
  tamper(path, ("UPDATE bricks SET content = x'07ff'" + where(b)).c_str());
  tamper(path, ("UPDATE bricks SET content = zeroblob(100000)" + where(c)).c_str());
  auto db = WorldDb::open(path);
  REQUIRE(db.has_value());
  auto loaded = (*db)->load();
  REQUIRE(loaded.has_value());
  REQUIRE(loaded->damaged.size() == 3);
  CHECK(loaded->damagedRows == 3);
  CHECK(loaded->damagedBricks.size() == 3);
  std::string all;
  for (const std::string& line : loaded->damaged) all += line + "\n";
  INFO(all);
  auto name = [](BrickCoord k) {
    return "brick (" + std::to_string(k.x) + ", " + std::to_string(k.y) + ", " + std::to_string(k.z) + ")";
  };
  CHECK(all.find(name(a) + ": hash mismatch") != std::string::npos);
  CHECK(all.find(name(b) + ": hash mismatch") != std::string::npos);
  CHECK(all.find(name(c) + ": content is 100000 bytes") != std::string::npos);
  CHECK(loaded->save.bricks.size() == saved->bricks.size() - 3);

  // A damaged blob cannot be left out: an error naming it.
  tamper(path, "UPDATE blobs SET packed = x'0102ff' WHERE name = 'water'");
  auto again = (*db)->load();
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().message.find("blob 'water' is damaged") != std::string::npos);
  db->reset();
  removeDb(path);
}

TEST_CASE("another world, another format and files that are not databases are refused, never changed") {
  const std::string path = tempPath("identity.db");
  REQUIRE(WorldDb::create(path, {kSaveFormatVersion, kId, 1}, kBounds).has_value());
  {
    auto db = WorldDb::open(path);
    REQUIRE(db.has_value());
    auto id = checkSaveIdentity((*db)->header(), {kId.sceneHash, 8, kId.generatorVersion});
    REQUIRE_FALSE(id.has_value());
    CHECK(id.error().message.find("seed 7, this world has seed 8") != std::string::npos);
    CHECK((*db)->header().formatVersion == kSaveFormatVersion);
  }
  CHECK_FALSE(WorldDb::create(path, {kSaveFormatVersion, kId, 1}, kBounds).has_value());  // exists

  tamper(path, "UPDATE meta SET value = 99 WHERE key = 'db_format'");
  auto future = WorldDb::open(path);
  REQUIRE_FALSE(future.has_value());
  CHECK(future.error().message.find("world database format 99 is not supported") != std::string::npos);

  tamper(path, "DROP TABLE bricks");
  tamper(path, "UPDATE meta SET value = 1 WHERE key = 'db_format'");
  auto noTable = WorldDb::open(path);
  REQUIRE_FALSE(noTable.has_value());
  CHECK(noTable.error().message.find("not a Loam world database") != std::string::npos);
  removeDb(path);

  // Not SQLite at all: an error, the bytes untouched, no -wal left behind.
  const std::string text = "this is not a database, but it is long enough to look like a header......";
  std::ofstream(path, std::ios::binary) << text;
  auto notDb = WorldDb::open(path);
  REQUIRE_FALSE(notDb.has_value());
  CHECK(notDb.error().message.find("not an SQLite database") != std::string::npos);
  std::ifstream in(path, std::ios::binary);
  std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(after == text);
  CHECK(::access((path + "-wal").c_str(), F_OK) != 0);
  removeDb(path);
  CHECK_FALSE(WorldDb::open(path).has_value());  // missing
}

TEST_CASE("import of a single-file save and export back give the same save") {
  const std::string path = tempPath("import.db");
  BrickStore world = generate();
  edit(world, 4, 50);
  auto saved = captureSave({kSaveFormatVersion, kId, 777}, world, {{"players", {4, 5}}, {"weather", {6}}});
  REQUIRE(saved.has_value());
  auto bytes = encodeSave(*saved);
  REQUIRE(bytes.has_value());
  auto decoded = decodeSave(*bytes);
  REQUIRE(decoded.has_value());
  REQUIRE(createWorldDbFromSave(path, *decoded).has_value());
  auto db = WorldDb::open(path);
  REQUIRE(db.has_value());
  auto loaded = (*db)->load();
  REQUIRE(loaded.has_value());
  auto exported = encodeSave(loaded->save);
  REQUIRE(exported.has_value());
  CHECK(*exported == *bytes);  // blobs were given in name order, so the files are equal
  db->reset();
  removeDb(path);
}

TEST_CASE("kill -9 during commits leaves a complete commit, never a torn one") {
  constexpr int kBricks = 24;
  auto brickAt = [](int i) { return BrickCoord{-30 + i * 2, 3, 5}; };
  // Commit t writes every brick whole with material 1 + t % 200 and blob "tick" = t.
  auto commitAt = [&](std::uint64_t t) {
    WorldDbCommit c;
    c.tick = t;
    for (int i = 0; i < kBricks; ++i) {
      SavedBrick& sb = c.bricks.emplace_back();
      sb.coord = brickAt(i);
      sb.voxels.fill(static_cast<MaterialId>(1 + t % 200));
      sb.voxels[static_cast<std::size_t>(i)] = 0;  // not uniform: a longer form
    }
    std::vector<std::uint8_t> tb(8);
    for (int i = 0; i < 8; ++i) tb[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(t >> (8 * i));
    c.blobs.push_back({"tick", tb});
    return c;
  };
  std::mt19937 rng(12345);
  for (int round = 0; round < 4; ++round) {
    const std::string path = tempPath("kill.db");
    REQUIRE(WorldDb::create(path, {kSaveFormatVersion, kId, 0}, kBounds).has_value());
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(ready[0]);
      auto db = WorldDb::open(path);
      if (!db) ::_exit(3);
      for (std::uint64_t t = 1;; ++t) {
        if (!(*db)->commit(commitAt(t))) ::_exit(4);
        if (t == 1 && ::write(ready[1], "1", 1) != 1) ::_exit(5);  // the first commit is in
      }
    }
    ::close(ready[1]);
    char byte = 0;
    REQUIRE(::read(ready[0], &byte, 1) == 1);
    ::close(ready[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 400));
    REQUIRE(::kill(child, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFSIGNALED(status));  // still committing when killed

    auto db = WorldDb::open(path);
    REQUIRE_MESSAGE(db.has_value(), (db ? "" : db.error().message));
    auto loaded = (*db)->load();
    REQUIRE(loaded.has_value());
    const std::uint64_t t = loaded->save.header.tick;
    INFO("round " << round << " tick " << t);
    CHECK(t > 0);
    CHECK(loaded->damaged.empty());
    REQUIRE(loaded->save.bricks.size() == static_cast<std::size_t>(kBricks));
    const WorldDbCommit expected = commitAt(t);
    std::vector<SavedBrick> sorted = expected.bricks;
    std::sort(sorted.begin(), sorted.end(), [](const SavedBrick& x, const SavedBrick& y) {
      return canonicalBrickOrder(kBounds, x.coord) < canonicalBrickOrder(kBounds, y.coord);
    });
    CHECK(sameBricks(loaded->save.bricks, sorted));
    REQUIRE(loaded->save.blobs.size() == 1);
    CHECK(loaded->save.blobs[0].bytes == expected.blobs[0].bytes);
    db->reset();
    removeDb(path);
  }
}

TEST_CASE("random damage to the file gives errors or named rows, never a crash") {
  const std::string path = tempPath("hostile.db");
  BrickStore world = generate();
  edit(world, 5, 30);
  auto saved = captureSave({kSaveFormatVersion, kId, 9}, world, {{"water", std::vector<std::uint8_t>(3000, 5)}});
  REQUIRE(saved.has_value());
  { REQUIRE(createWorldDbFromSave(path, *saved).has_value()); }  // closed: WAL folded into the file
  auto original = readFileBytes(path);
  REQUIRE(original.has_value());
  REQUIRE(original->size() > 4096);
  std::mt19937 rng(99);
  const std::string copy = tempPath("hostile_copy.db");
  int opened = 0, loaded = 0;
  for (int round = 0; round < 150; ++round) {
    std::vector<std::uint8_t> bytes = *original;
    const int flips = 1 + static_cast<int>(rng() % 16);
    for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    if (round % 10 == 9) bytes.resize(rng() % bytes.size());  // truncated too
    removeDb(copy);
    REQUIRE(writeSaveFile(copy, bytes).has_value());
    auto db = WorldDb::open(copy);
    if (!db) continue;
    ++opened;
    auto contents = (*db)->load();
    if (contents) ++loaded;
  }
  MESSAGE("opened " << opened << ", loaded " << loaded << " of 150 damaged files");
  removeDb(copy);
  removeDb(path);
}
