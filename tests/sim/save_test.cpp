#include "sim/save/save.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>
#include <xxhash.h>
#include <zstd.h>

#include "sim/world/brick_store.h"
#include "sim/world/world_hash.h"
#include "tests/sim/save_fixture.h"

using namespace loam::sim;

namespace {

const WorldBounds kBounds = loam::test::kSaveBounds;
const SaveIdentity kId = loam::test::kSaveId;

BrickStore generate() { return loam::test::generateSaveWorld(); }

/// Some digs and placed blocks.
void edit(BrickStore& s, unsigned seed, int edits) {
  std::mt19937 rng(seed);
  for (int e = 0; e < edits; ++e) {
    int cx = static_cast<int>(rng() % 480) - 240, cz = static_cast<int>(rng() % 480) - 240;
    int cy = 120 + static_cast<int>(rng() % 16);
    MaterialId m = (rng() % 2) ? kAir : static_cast<MaterialId>(7 + rng() % 3);
    for (int dz = -3; dz <= 3; ++dz)
      for (int dy = -3; dy <= 3; ++dy)
        for (int dx = -3; dx <= 3; ++dx)
          if (dx * dx + dy * dy + dz * dz <= 9) s.set({cx + dx, cy + dy, cz + dz}, m);
  }
}

std::string tempPath(const char* name) {
  return std::string(P_tmpdir) + "/loam_save_test_" + std::to_string(::getpid()) + "_" + name;
}

/// Builds file bytes around an arbitrary raw payload (valid header and checksum), to
/// reach the payload parser with malformed content.
std::vector<std::uint8_t> seal(const std::vector<std::uint8_t>& raw) {
  std::vector<std::uint8_t> out(kSaveHeaderBytes + ZSTD_compressBound(raw.size()));
  std::size_t packed = ZSTD_compress(out.data() + 64, out.size() - 64, raw.data(), raw.size(), 1);
  REQUIRE_FALSE(ZSTD_isError(packed));
  out.resize(64 + packed);
  auto put = [&](std::size_t at, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
  };
  std::memcpy(out.data(), "LOAMSAVE", 8);
  put(8, kSaveFormatVersion, 4);
  put(12, kId.generatorVersion, 4);
  put(16, kId.sceneHash, 8);
  put(24, kId.seed, 8);
  put(32, 99, 8);
  put(40, raw.size(), 8);
  put(48, packed, 8);
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, out.data(), 56);
  XXH3_64bits_update(&st, out.data() + 64, packed);
  put(56, XXH3_64bits_digest(&st), 8);
  return out;
}

std::vector<std::uint8_t> rawPayload(const std::vector<std::uint8_t>& file) {
  std::uint64_t rawSize = 0;
  for (int i = 0; i < 8; ++i) rawSize |= std::uint64_t{file[40 + static_cast<std::size_t>(i)]} << (8 * i);
  std::vector<std::uint8_t> raw(rawSize);
  std::size_t got = ZSTD_decompress(raw.data(), raw.size(), file.data() + 64, file.size() - 64);
  REQUIRE(got == rawSize);
  return raw;
}

}  // namespace

TEST_CASE("save round trip: the loaded world equals the saved one") {
  BrickStore world = generate();
  const std::uint64_t generatedHash = hashContent(world).world;
  edit(world, 1, 60);
  REQUIRE(world.modifiedCount() > 0);
  SaveHeader header{kSaveFormatVersion, kId, 12345};
  std::vector<SaveBlob> blobs{{"fire", {1, 2, 3}}, {"water", std::vector<std::uint8_t>(1000, 7)}, {"empty", {}}};
  const std::string path = tempPath("roundtrip.loamsave");
  auto sizes = saveWorld(path, header, world, blobs);
  REQUIRE_MESSAGE(sizes.has_value(), (sizes ? "" : sizes.error().message));
  CHECK(sizes->wholeBricks == 0);
  CHECK(sizes->deltaBricks <= world.modifiedCount());
  CHECK(sizes->deltaBricks > 0);
  CHECK(sizes->fileBytes < sizes->rawBytes);
  CHECK(access((path + ".tmp").c_str(), F_OK) != 0);  // temp file renamed away

  auto loaded = loadSave(path, kId);
  REQUIRE_MESSAGE(loaded.has_value(), (loaded ? "" : loaded.error().message));
  CHECK(loaded->header.tick == 12345);
  CHECK(loaded->header.identity.seed == kId.seed);
  REQUIRE(loaded->blobs.size() == 3);
  CHECK(loaded->blobs[0].name == "fire");
  CHECK(loaded->blobs[0].bytes == std::vector<std::uint8_t>{1, 2, 3});
  CHECK(loaded->blobs[1].bytes.size() == 1000);
  CHECK(loaded->blobs[2].bytes.empty());
  CHECK(loaded->sizes.fileBytes == sizes->fileBytes);

  BrickStore fresh = generate();
  CHECK(hashContent(fresh).world == generatedHash);
  REQUIRE(applySave(*loaded, fresh).has_value());
  CHECK(worldHash(fresh) == worldHash(world));
  CHECK(hashContent(fresh).world == hashContent(world).world);
  CHECK(cellHashes(fresh) == cellHashes(world));
  // The applied bricks stay modified, so saving again gives the same bricks.
  CHECK(fresh.modifiedCount() == world.modifiedCount());
  ::unlink(path.c_str());
}

TEST_CASE("a save with nothing modified is tiny and round trips") {
  BrickStore world = generate();
  SaveData data = *captureSave({}, world, {});
  auto bytes = encodeSave(data);
  REQUIRE(bytes.has_value());
  CHECK(bytes->size() < 128);
  auto back = decodeSave(*bytes);
  REQUIRE(back.has_value());
  CHECK(back->bricks.empty());
}

TEST_CASE("a save for another world is refused with a clear message") {
  BrickStore world = generate();
  edit(world, 2, 5);
  const std::string path = tempPath("identity.loamsave");
  REQUIRE(saveWorld(path, {kSaveFormatVersion, kId, 1}, world).has_value());
  auto other = loadSave(path, {kId.sceneHash, 8, kId.generatorVersion});
  REQUIRE_FALSE(other.has_value());
  CHECK(other.error().message.find("save is for seed 7, this world has seed 8") != std::string::npos);
  CHECK(other.error().message.find(path) == 0);
  auto all = loadSave(path, {1, 8, 4});
  REQUIRE_FALSE(all.has_value());
  CHECK(all.error().message.find("scene hash 1234abcd") != std::string::npos);
  CHECK(all.error().message.find("generator version 3") != std::string::npos);
  CHECK(all.error().message.find("seed 7") != std::string::npos);
  // Bounds must match too.
  auto data = loadSave(path, kId);
  REQUIRE(data.has_value());
  BrickStore small(WorldBounds{{0, 0, 0}, {16, 16, 16}});
  CHECK_FALSE(applySave(*data, small).has_value());
  ::unlink(path.c_str());
}

TEST_CASE("missing files and bad blobs are errors") {
  auto r = loadSave("/nonexistent/x.loamsave", kId);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("/nonexistent/x.loamsave: cannot open") == 0);
  BrickStore world = generate();
  CHECK_FALSE(captureSave({}, world, {{"a", {}}, {"a", {}}}).has_value());
  CHECK_FALSE(captureSave({}, world, {{"", {}}}).has_value());
  auto w = writeSaveFile("/nonexistent/dir/x.loamsave", std::vector<std::uint8_t>{1});
  REQUIRE_FALSE(w.has_value());
  CHECK(w.error().message.find("/nonexistent/dir/x.loamsave.tmp: cannot create") == 0);
}

TEST_CASE("truncated or corrupted saves give errors, never crashes") {
  BrickStore world = generate();
  edit(world, 3, 20);
  SaveData data = *captureSave({kSaveFormatVersion, kId, 5}, world, {{"state", {9, 8, 7, 6}}});
  std::vector<std::uint8_t> good = *encodeSave(data);
  const std::uint64_t wantHash = worldHash(world);
  const BrickStore generated = generate();
  std::mt19937 rng(2024);
  int errors = 0, equal = 0;

  // Truncations (every short length, then random ones).
  for (std::size_t len = 0; len < 200 && len < good.size(); ++len) {
    CHECK_FALSE(decodeSave(std::span(good.data(), len)).has_value());
  }
  for (int t = 0; t < 500; ++t) {
    std::size_t len = rng() % good.size();
    auto r = decodeSave(std::span(good.data(), len));
    CHECK_FALSE(r.has_value());
    errors += !r.has_value();
  }
  // Byte mutations anywhere in the file: an error or the same world.
  for (int t = 0; t < 2000; ++t) {
    std::vector<std::uint8_t> bad = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    auto r = decodeSave(bad);
    if (!r) {
      ++errors;
      CHECK_FALSE(r.error().message.empty());
      continue;
    }
    BrickStore s = generated;
    if (applySave(*r, s)) {
      CHECK(worldHash(s) == wantHash);
      ++equal;
    }
  }
  // Malformed payloads behind a valid checksum reach the parser: errors or a
  // world that applies cleanly.
  std::vector<std::uint8_t> raw = rawPayload(good);
  for (int t = 0; t < 1500; ++t) {
    std::vector<std::uint8_t> bad = raw;
    switch (t % 3) {
      case 0:
        bad.resize(rng() % bad.size());
        break;
      case 1:
        for (int f = 0; f < 3; ++f) bad[rng() % std::min<std::size_t>(bad.size(), 64)] ^= static_cast<std::uint8_t>(rng());
        break;
      default:
        for (int f = 0; f < 3; ++f) bad[rng() % bad.size()] = static_cast<std::uint8_t>(rng());
        break;
    }
    auto r = decodeSave(seal(bad));
    if (!r) {
      ++errors;
      continue;
    }
    BrickStore s = generated;
    (void)applySave(*r, s);
  }
  MESSAGE("errors " << errors << ", equal " << equal);
  CHECK(errors > 3000);
}

TEST_CASE("whole bricks when the store kept no generated content; restored bricks are left out") {
  // Never marked generated: every modified brick is saved whole.
  BrickStore raw(kBounds);
  raw.fillChunk({0, 0, 0}, 4);
  raw.set({3, 200, 3}, 9);
  SaveData whole = *captureSave({}, raw, {});
  auto bytes = encodeSave(whole);
  REQUIRE(bytes.has_value());
  CHECK(whole.sizes.deltaBricks == 0);
  CHECK(whole.sizes.wholeBricks == 4097);
  auto back = decodeSave(*bytes);
  REQUIRE(back.has_value());
  BrickStore empty(kBounds);
  REQUIRE(applySave(*back, empty).has_value());
  CHECK(worldHash(empty) == worldHash(raw));

  // A brick edited and edited back holds its generated content: not saved.
  BrickStore world = generate();
  MaterialId old = world.get(10, 128, 10);
  world.set({10, 128, 10}, 9);
  world.set({10, 128, 10}, old);
  world.set({50, 130, 50}, 9);
  CHECK(world.modifiedCount() == 2);
  SaveData data = *captureSave({}, world, {});
  REQUIRE(data.bricks.size() == 1);
  CHECK(data.bricks[0].delta);
  CHECK(data.bricks[0].coord == brickOf({50, 130, 50}));
  auto enc = encodeSave(data);
  REQUIRE(enc.has_value());
  CHECK(data.sizes.changedVoxels == 1);
  BrickStore fresh = generate();
  REQUIRE(applySave(*decodeSave(*enc), fresh).has_value());
  CHECK(worldHash(fresh) == worldHash(world));
}

namespace {

std::uint64_t hashOfCell(const std::vector<CellHash>& cells, CellCoord c) {
  for (const CellHash& h : cells)
    if (h.cell == c) return h.hash;
  return 0;
}

}  // namespace

TEST_CASE("a cell's changed bricks make another copy of the world hold the same cell, whatever it held") {
  BrickStore server = generate();
  edit(server, 3, 80);
  BrickStore client = generate();
  edit(client, 9, 60);  // stale edits: what a client followed before it lost track of the cell
  const CellCoord cell{0, -1};
  REQUIRE(hashOfCell(cellHashes(server), cell) != hashOfCell(cellHashes(client), cell));

  std::vector<SavedBrick> bricks;
  captureCellBricks(server, cell, bricks);
  REQUIRE(!bricks.empty());
  for (const SavedBrick& b : bricks) CHECK(cellOf(b.coord) == cell);
  // Through the wire form (a save without blobs), as a full CellState carries it.
  SaveData data;
  data.header = {kSaveFormatVersion, kId, 7};
  data.bounds = kBounds;
  data.bricks = bricks;
  auto bytes = encodeSave(data);
  REQUIRE(bytes.has_value());
  auto decoded = decodeSave(*bytes);
  REQUIRE(decoded.has_value());

  const std::vector<CellHash> before = cellHashes(client);
  std::vector<BrickCoord> written;
  REQUIRE(applyCellBricks(client, cell, decoded->bricks, written).has_value());
  CHECK(written.size() >= bricks.size());
  const std::vector<CellHash> after = cellHashes(client);
  CHECK(hashOfCell(after, cell) == hashOfCell(cellHashes(server), cell));
  for (const CellCoord other : {CellCoord{-1, -1}, CellCoord{-1, 0}, CellCoord{0, 0}})
    CHECK(hashOfCell(after, other) == hashOfCell(before, other));

  // A cell the server never changed: the client's stale bricks there go back to generated.
  BrickStore pristine = generate();
  captureCellBricks(pristine, cell, bricks);
  CHECK(bricks.empty());
  written.clear();
  REQUIRE(applyCellBricks(client, cell, bricks, written).has_value());
  CHECK(hashOfCell(cellHashes(client), cell) == 0);

  // A brick outside the named cell, or listed twice, is refused before anything is written.
  captureCellBricks(server, cell, bricks);
  SavedBrick stray = bricks.front();
  stray.coord = {-1, stray.coord.y, 0};  // cell (-1, 0)
  std::vector<SavedBrick> bad = bricks;
  bad.push_back(stray);
  const std::uint64_t clientHash = worldHash(client);
  auto r = applyCellBricks(client, cell, bad, written);
  REQUIRE(!r.has_value());
  CHECK(r.error().message.find("not in cell") != std::string::npos);
  bad = bricks;
  bad.push_back(bricks.front());
  CHECK(!applyCellBricks(client, cell, bad, written).has_value());
  CHECK(worldHash(client) == clientHash);
  // A cell far outside the world (a hostile server's) is an error, never arithmetic on it.
  CHECK(!applyCellBricks(client, CellCoord{2147483647, -2147483647 - 1}, {}, written).has_value());
  captureCellBricks(server, CellCoord{2147483647, 0}, bricks);
  CHECK(bricks.empty());
}
