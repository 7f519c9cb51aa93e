// The world database (sim/save/world_db.h): round trip, incremental commits, rows of
// reverted bricks deleted, damaged rows named, identity and non-database files
// refused, import/export of single-file saves, kill -9 during commits, and the lazy
// load: chunk terms, the index, columns read one by one, the upgrade of format 1 and
// read-only connections beside a writer.
#include "sim/save/world_db.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
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

/// A whole brick of material m (one voxel air, so not uniform).
SavedBrick wholeBrick(BrickCoord c, MaterialId m) {
  SavedBrick sb;
  sb.coord = c;
  sb.voxels.fill(m);
  sb.voxels[static_cast<std::size_t>((c.x + 3 * c.y + 7 * c.z) & (kBrickVoxels - 1))] = kAir;
  return sb;
}

std::vector<SavedBrick> canonicalSorted(std::vector<SavedBrick> bricks) {
  std::sort(bricks.begin(), bricks.end(), [](const SavedBrick& x, const SavedBrick& y) {
    return canonicalBrickOrder(kBounds, x.coord) < canonicalBrickOrder(kBounds, y.coord);
  });
  return bricks;
}

std::string allLines(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  return all;
}

/// A meta value read straight from the file.
std::int64_t rawMeta(const std::string& path, const char* key) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?1", -1, &st, nullptr) == SQLITE_OK);
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  const bool found = sqlite3_step(st) == SQLITE_ROW;
  const std::int64_t v = found ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(db);
  REQUIRE(found);
  return v;
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
  auto saved =
      captureSave(header, world, {{"fire", {1, 2, 3}}, {"water", std::vector<std::uint8_t>(1000, 7)}, {"empty", {}}});
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

TEST_CASE("chunk terms round trip through commits, createWorldDbFromSave, loadIndex and load") {
  const std::string path = tempPath("terms.db");
  auto db = WorldDb::create(path, {kSaveFormatVersion, kId, 0}, kBounds);
  REQUIRE_MESSAGE(db.has_value(), (db ? "" : db.error().message));
  WorldDb& w = **db;
  // Terms with the top bit set: stored as signed INTEGER, read back as the same bits.
  const ChunkTerm a{{1, 0, -2}, 0xffffffffffffffffULL}, b{{-2, 1, 0}, 0x8000000000000000ULL}, c{{0, 0, 0}, 42};
  WorldDbCommit c1;
  c1.tick = 10;
  c1.terms = {a, b, c};
  auto s1 = w.commit(c1);
  REQUIRE(s1.has_value());
  CHECK(s1->termsWritten == 3);
  auto i1 = w.loadIndex();
  REQUIRE_MESSAGE(i1.has_value(), (i1 ? "" : i1.error().message));
  CHECK(i1->terms == std::vector<ChunkTerm>{b, c, a});  // sorted by chunk (x, y, z)
  CHECK(i1->damaged.empty());
  CHECK(i1->header.tick == 10);

  // b replaced, a deleted (and a chunk that has no row: nothing deleted).
  const ChunkTerm b2{b.chunk, 7};
  WorldDbCommit c2;
  c2.tick = 20;
  c2.terms = {b2};
  c2.removedTerms = {a.chunk, {1, 1, 1}};
  auto s2 = w.commit(c2);
  REQUIRE(s2.has_value());
  CHECK(s2->termsWritten == 1);
  CHECK(s2->termsDeleted == 1);
  db->reset();
  auto reopened = WorldDb::open(path);
  REQUIRE(reopened.has_value());
  auto i2 = (*reopened)->loadIndex();
  REQUIRE(i2.has_value());
  CHECK(i2->terms == std::vector<ChunkTerm>{b2, c});
  CHECK(i2->header.tick == 20);
  auto loaded = (*reopened)->load();
  REQUIRE(loaded.has_value());
  CHECK(loaded->terms == std::vector<ChunkTerm>{b2, c});
  CHECK(loaded->damaged.empty());
  reopened->reset();
  removeDb(path);

  // Both createWorldDbFromSave variants write the terms with the save.
  BrickStore world = generate();
  edit(world, 6, 10);
  auto saved = captureSave({kSaveFormatVersion, kId, 3}, world, {{"water", {1}}});
  REQUIRE(saved.has_value());
  const std::vector<ChunkTerm> terms{c, a};
  for (int moved = 0; moved < 2; ++moved) {
    SaveData copy = *saved;
    auto created =
        moved ? createWorldDbFromSave(path, std::move(copy), terms) : createWorldDbFromSave(path, copy, terms);
    REQUIRE_MESSAGE(created.has_value(), (created ? "" : created.error().message));
    auto index = (*created)->loadIndex();
    REQUIRE(index.has_value());
    CHECK(index->terms == std::vector<ChunkTerm>{c, a});
    REQUIRE(index->blobs.size() == 1);
    CHECK(index->blobs[0].bytes == std::vector<std::uint8_t>{1});
    CHECK(index->header.tick == 3);
    created->reset();
    removeDb(path);
  }
}

TEST_CASE("loadIndex lists the columns holding rows and the chunks that have no term") {
  const std::string path = tempPath("index.db");
  auto db = WorldDb::create(path, {kSaveFormatVersion, kId, 0}, kBounds);
  REQUIRE(db.has_value());
  WorldDb& w = **db;
  // Column (0, 0): chunks (0, 0, 0) and (0, 1, 0); column (-1, -2): chunk (-1, 0, -2);
  // column (1, 1): one brick, removed by the second commit.
  WorldDbCommit c1;
  c1.tick = 1;
  c1.bricks = {wholeBrick({0, 3, 0}, 7), wholeBrick({15, 20, 15}, 8), wholeBrick({-5, 2, -20}, 9),
               wholeBrick({20, 5, 20}, 7)};
  c1.terms = {{{0, 0, 0}, 11}, {{-1, 0, -2}, 12}, {{1, 0, 1}, 13}};
  REQUIRE(w.commit(c1).has_value());
  WorldDbCommit c2;
  c2.tick = 2;
  c2.removed = {{20, 5, 20}};
  c2.removedTerms = {{1, 0, 1}};
  REQUIRE(w.commit(c2).has_value());

  auto index = w.loadIndex();
  REQUIRE(index.has_value());
  CHECK(index->damaged.empty());
  CHECK(index->damagedRows == 0);
  CHECK(index->columns == std::vector<ChunkColumn>{{-1, -2}, {0, 0}});  // z, then x
  CHECK(index->missingTerms == std::vector<ChunkCoord>{{0, 1, 0}});
  CHECK(index->terms == std::vector<ChunkTerm>{{{-1, 0, -2}, 12}, {{0, 0, 0}, 11}});
  CHECK(index->bounds.minBrick == kBounds.minBrick);
  CHECK(index->bounds.maxBrick == kBounds.maxBrick);
  db->reset();
  removeDb(path);
}

TEST_CASE("damaged term rows are named by their chunk and left out") {
  const std::string path = tempPath("damaged_terms.db");
  auto db = WorldDb::create(path, {kSaveFormatVersion, kId, 0}, kBounds);
  REQUIRE(db.has_value());
  WorldDbCommit c;
  c.tick = 1;
  c.bricks = {wholeBrick({1, 1, 1}, 7), wholeBrick({17, 1, 1}, 7)};
  // (5, 0, 0) is outside the bounds' chunks (x in -2..1); commit does not check keys.
  c.terms = {{{0, 0, 0}, 1}, {{1, 0, 0}, 2}, {{5, 0, 0}, 3}};
  REQUIRE((*db)->commit(c).has_value());
  db->reset();
  tamper(path, "UPDATE chunks SET hash = hash + 1 WHERE x = 1 AND y = 0 AND z = 0");

  auto reopened = WorldDb::open(path);
  REQUIRE(reopened.has_value());
  auto index = (*reopened)->loadIndex();
  REQUIRE(index.has_value());
  const std::string all = allLines(index->damaged);
  INFO(all);
  CHECK(index->damaged.size() == 2);
  CHECK(index->damagedRows == 2);
  CHECK(all.find("chunk (1, 0, 0): hash mismatch") != std::string::npos);
  CHECK(all.find("chunk (5, 0, 0): outside the world's bounds") != std::string::npos);
  CHECK(index->damagedTerms == std::vector<ChunkCoord>{{1, 0, 0}, {5, 0, 0}});
  CHECK(index->damagedBricks.empty());
  CHECK(index->terms == std::vector<ChunkTerm>{{{0, 0, 0}, 1}});
  // Chunk (1, 0, 0) holds a brick and lost its term: missing, to be computed again.
  CHECK(index->missingTerms == std::vector<ChunkCoord>{{1, 0, 0}});
  auto loaded = (*reopened)->load();
  REQUIRE(loaded.has_value());
  CHECK(loaded->damagedRows == 2);
  CHECK(loaded->damagedTerms == index->damagedTerms);
  CHECK(loaded->terms == index->terms);
  CHECK(loaded->save.bricks.size() == 2);

  // Deleting the damaged rows (as a server told to skip them does) leaves a clean index.
  WorldDbCommit drop;
  drop.tick = 2;
  drop.removedTerms = index->damagedTerms;
  REQUIRE((*reopened)->commit(drop).has_value());
  auto clean = (*reopened)->loadIndex();
  REQUIRE(clean.has_value());
  CHECK(clean->damaged.empty());
  reopened->reset();
  removeDb(path);
}

TEST_CASE("loadColumn reads exactly one column's bricks, as committed, in canonical order") {
  const std::string path = tempPath("column.db");
  auto db = WorldDb::create(path, {kSaveFormatVersion, kId, 0}, kBounds);
  REQUIRE(db.has_value());
  WorldDb& w = **db;
  // Column (-1, 0) holds brick x -16..-1 and z 0..15: bricks at its edges and corners.
  const std::vector<SavedBrick> inside = {wholeBrick({-1, 31, 15}, 7), wholeBrick({-16, 0, 0}, 8),
                                          wholeBrick({-16, 17, 15}, 9), wholeBrick({-8, 5, 7}, 10),
                                          wholeBrick({-1, 0, 0}, 11)};
  // Its neighbours' nearest bricks.
  const std::vector<SavedBrick> outside = {wholeBrick({0, 0, 0}, 12), wholeBrick({-17, 0, 0}, 13),
                                           wholeBrick({-1, 0, 16}, 14), wholeBrick({-16, 31, -1}, 15)};
  WorldDbCommit c;
  c.tick = 1;
  c.bricks = outside;
  c.bricks.insert(c.bricks.end(), inside.begin(), inside.end());
  REQUIRE(w.commit(c).has_value());

  std::vector<SavedBrick> got{wholeBrick({9, 9, 9}, 1)};  // cleared by loadColumn
  std::vector<std::string> damaged;
  REQUIRE(w.loadColumn({-1, 0}, got, damaged).has_value());
  CHECK(damaged.empty());
  CHECK(sameBricks(got, canonicalSorted(inside)));
  REQUIRE(w.loadColumn({0, 0}, got, damaged).has_value());
  CHECK(sameBricks(got, {outside[0]}));
  REQUIRE(w.loadColumn({1, 1}, got, damaged).has_value());  // no rows
  CHECK(got.empty());
  REQUIRE(w.loadColumn({1000, -1000}, got, damaged).has_value());  // outside the world
  CHECK(got.empty());

  // An edited world: the columns of the index, read one by one, hold what load() does.
  BrickStore world = generate();
  const std::vector<BrickCoord> touched = edit(world, 7, 40);
  REQUIRE(w.commit(commitOf(world, touched, 2)).has_value());
  auto index = w.loadIndex();
  auto loaded = w.load();
  REQUIRE(index.has_value());
  REQUIRE(loaded.has_value());
  std::size_t total = 0;
  for (ChunkColumn col : index->columns) {
    REQUIRE(w.loadColumn(col, got, damaged).has_value());
    std::vector<SavedBrick> expected;
    for (const SavedBrick& sb : loaded->save.bricks)
      if (chunkOf(sb.coord).x == col.x && chunkOf(sb.coord).z == col.z) expected.push_back(sb);
    CHECK(!got.empty());
    CHECK(sameBricks(got, expected));
    total += got.size();
  }
  CHECK(total == loaded->save.bricks.size());
  CHECK(damaged.empty());

  // A damaged row is named and left out of its column.
  db->reset();
  tamper(path, "UPDATE bricks SET hash = hash + 1 WHERE x = -8 AND y = 5 AND z = 7");
  tamper(path, "UPDATE bricks SET content = x'07ff' WHERE x = -1 AND y = 0 AND z = 0");
  auto reopened = WorldDb::open(path);
  REQUIRE(reopened.has_value());
  REQUIRE((*reopened)->loadColumn({-1, 0}, got, damaged).has_value());
  const std::string all = allLines(damaged);
  INFO(all);
  CHECK(damaged.size() == 2);
  CHECK(all.find("brick (-8, 5, 7): hash mismatch") != std::string::npos);
  CHECK(all.find("brick (-1, 0, 0): hash mismatch") != std::string::npos);
  CHECK(got.size() >= 3);
  for (const SavedBrick& sb : got) CHECK((sb.coord != BrickCoord{-8, 5, 7} && sb.coord != BrickCoord{-1, 0, 0}));
  reopened->reset();
  removeDb(path);
}

TEST_CASE("a format-1 database is upgraded in place by open, refused by openReader") {
  const std::string path = tempPath("format1.db");
  BrickStore world = generate();
  edit(world, 8, 20);
  auto saved = captureSave({kSaveFormatVersion, kId, 4}, world, {{"water", {1, 2}}});
  REQUIRE(saved.has_value());
  REQUIRE(createWorldDbFromSave(path, *saved).has_value());
  // What a format-1 build wrote: no chunks table.
  tamper(path, "DROP TABLE chunks; DROP INDEX bricks_by_column; UPDATE meta SET value = 1 WHERE key = 'db_format'");
  REQUIRE(rawMeta(path, "db_format") == 1);

  auto reader = WorldDb::openReader(path);
  REQUIRE_FALSE(reader.has_value());
  CHECK(reader.error().message.find("format 1 must be upgraded") != std::string::npos);
  CHECK(rawMeta(path, "db_format") == 1);  // the reader wrote nothing

  // A chunks table of another layout: the upgrade fails and is rolled back.
  tamper(path, "CREATE TABLE chunks(a TEXT)");
  CHECK_FALSE(WorldDb::open(path).has_value());
  CHECK(rawMeta(path, "db_format") == 1);
  tamper(path, "DROP TABLE chunks");

  std::vector<ChunkCoord> chunks;
  for (const SavedBrick& sb : saved->bricks) chunks.push_back(chunkOf(sb.coord));
  std::sort(chunks.begin(), chunks.end());
  chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
  {
    auto db = WorldDb::open(path);
    REQUIRE_MESSAGE(db.has_value(), (db ? "" : db.error().message));
    auto index = (*db)->loadIndex();
    REQUIRE(index.has_value());
    CHECK(index->terms.empty());
    CHECK(index->missingTerms == chunks);  // every chunk of the old bricks
    auto loaded = (*db)->load();
    REQUIRE(loaded.has_value());
    CHECK(sameBricks(loaded->save.bricks, saved->bricks));
  }
  CHECK(rawMeta(path, "db_format") == 2);
  // Upgraded for good: a reader takes it, and terms can be committed.
  auto again = WorldDb::openReader(path);
  REQUIRE_MESSAGE(again.has_value(), (again ? "" : again.error().message));
  auto writer = WorldDb::open(path);
  REQUIRE(writer.has_value());
  WorldDbCommit c;
  c.tick = 5;
  for (ChunkCoord k : chunks) c.terms.push_back({k, 99});
  REQUIRE((*writer)->commit(c).has_value());
  auto index = (*again)->loadIndex();
  REQUIRE(index.has_value());
  CHECK(index->missingTerms.empty());
  CHECK(index->terms.size() == chunks.size());
  again->reset();
  writer->reset();
  removeDb(path);
}

TEST_CASE("a reader sees the commits its writer makes after it opened, never half of one") {
  const std::string path = tempPath("reader.db");
  auto writer = WorldDb::create(path, {kSaveFormatVersion, kId, 0}, kBounds);
  REQUIRE(writer.has_value());
  WorldDbCommit c1;
  c1.tick = 1;
  c1.bricks = {wholeBrick({2, 2, 2}, 7)};
  c1.terms = {{{0, 0, 0}, 1}};
  REQUIRE((*writer)->commit(c1).has_value());

  auto reader = WorldDb::openReader(path);
  REQUIRE_MESSAGE(reader.has_value(), (reader ? "" : reader.error().message));
  auto i1 = (*reader)->loadIndex();
  REQUIRE(i1.has_value());
  CHECK(i1->columns == std::vector<ChunkColumn>{{0, 0}});

  WorldDbCommit c2;
  c2.tick = 2;
  c2.bricks = {wholeBrick({-20, 3, 30}, 8), wholeBrick({-17, 30, 17}, 9)};
  c2.terms = {{{-2, 0, 1}, 2}, {{-2, 1, 1}, 3}};
  REQUIRE((*writer)->commit(c2).has_value());
  std::vector<SavedBrick> got;
  std::vector<std::string> damaged;
  REQUIRE((*reader)->loadColumn({-2, 1}, got, damaged).has_value());
  CHECK(sameBricks(got, canonicalSorted(c2.bricks)));
  auto i2 = (*reader)->loadIndex();
  REQUIRE(i2.has_value());
  CHECK(i2->header.tick == 2);
  CHECK((*reader)->header().tick == 2);
  CHECK(i2->columns == std::vector<ChunkColumn>{{0, 0}, {-2, 1}});
  CHECK(i2->terms.size() == 3);

  // A reader never writes.
  WorldDbCommit c3;
  c3.tick = 3;
  CHECK_FALSE((*reader)->commit(c3).has_value());

  // The writer commits on its own thread; every index the reader takes meanwhile is
  // one whole commit: its tick, and the terms and bricks that commit wrote.
  constexpr std::uint64_t kCommits = 60;
  auto commitAt = [](std::uint64_t t) {
    WorldDbCommit c;
    c.tick = t;
    for (int i = 0; i < 8; ++i)
      c.bricks.push_back(wholeBrick({-32 + 8 * i, 4, 5}, static_cast<MaterialId>(1 + t % 200)));
    for (int x = -2; x < 2; ++x) c.terms.push_back({{x, 0, 0}, t});
    return c;
  };
  std::atomic<bool> writerOk{true};
  std::thread committer([&] {
    for (std::uint64_t t = 10; t < 10 + kCommits; ++t)
      if (!(*writer)->commit(commitAt(t))) writerOk = false;
  });
  std::uint64_t lastTick = 0;
  int reads = 0, errors = 0, torn = 0;
  while (lastTick < 10 + kCommits - 1 && reads < 100000) {
    ++reads;
    auto index = (*reader)->loadIndex();
    if (!index) {
      ++errors;
      continue;
    }
    const std::uint64_t t = index->header.tick;
    if (t < lastTick) ++torn;
    lastTick = t;
    if (t < 10) continue;
    for (const ChunkTerm& term : index->terms)
      if (term.chunk.y == 0 && term.chunk.z == 0 && term.term != t) ++torn;
    // A column read is its own snapshot (maybe newer than the index), but one commit.
    // (No REQUIRE while the committer runs: it would end the test with the thread.)
    if (!(*reader)->loadColumn({-2, 0}, got, damaged)) {
      ++errors;
    } else if (got.size() != 2 || got[0].voxels[511] != got[1].voxels[511]) {  // bricks x -32 and -24
      ++torn;
    }
  }
  committer.join();
  INFO("reads " << reads << ", last tick " << lastTick);
  CHECK(writerOk);
  CHECK(errors == 0);
  CHECK(torn == 0);
  CHECK(lastTick == 10 + kCommits - 1);
  CHECK(damaged.empty());
  reader->reset();
  writer->reset();
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
  std::vector<ChunkTerm> terms;
  for (const SavedBrick& sb : saved->bricks)
    if (terms.empty() || terms.back().chunk != chunkOf(sb.coord)) terms.push_back({chunkOf(sb.coord), terms.size()});
  { REQUIRE(createWorldDbFromSave(path, *saved, terms).has_value()); }  // closed: WAL folded into the file
  auto original = readFileBytes(path);
  REQUIRE(original.has_value());
  REQUIRE(original->size() > 4096);
  std::mt19937 rng(99);
  const std::string copy = tempPath("hostile_copy.db");
  int opened = 0, loaded = 0, indexed = 0, columns = 0, readers = 0;
  // Every damaged row is named by its key (or as a malformed row), nothing else.
  auto named = [](const std::vector<std::string>& lines) {
    for (const std::string& line : lines)
      if (line.rfind("brick ", 0) != 0 && line.rfind("chunk ", 0) != 0 && line.rfind("and ", 0) != 0) return false;
    return true;
  };
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
    if (contents) {
      ++loaded;
      CHECK(named(contents->damaged));
    }
    auto index = (*db)->loadIndex();
    if (index) {
      ++indexed;
      CHECK(named(index->damaged));
      CHECK(index->damagedRows >= index->damagedBricks.size() + index->damagedTerms.size());
    }
    std::vector<SavedBrick> bricks;
    std::vector<std::string> damaged;
    for (std::int32_t z = -2; z < 2; ++z)
      for (std::int32_t x = -2; x < 2; ++x) {
        damaged.clear();
        if ((*db)->loadColumn({x, z}, bricks, damaged)) ++columns;
        CHECK(named(damaged));
      }
    if (auto reader = WorldDb::openReader(copy)) {
      ++readers;
      auto readIndex = (*reader)->loadIndex();
      if (readIndex && index) CHECK(readIndex->damagedRows == index->damagedRows);
      (void)(*reader)->loadColumn({0, 0}, bricks, damaged);
    }
  }
  MESSAGE("opened " << opened << ", loaded " << loaded << ", indexed " << indexed << ", read " << columns
                    << " columns and opened " << readers << " readers of 150 damaged files");
  removeDb(copy);
  removeDb(path);
}
