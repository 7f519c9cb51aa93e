// ColumnStreamer: a streamed world reads as the whole generated world with any thread
// count and residency budget; update generates ahead around the centres, nearest first,
// and keeps to its budget.
#include "sim/gen/column_streamer.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "sim/gen/scene.h"
#include "sim/systems/sim_state.h"
#include "sim/systems/water.h"
#include "sim/world/world_hash.h"

using namespace loam::sim;

namespace {

Scene loadGlade() {
  auto s = loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/glade.toml");
  REQUIRE_MESSAGE(s.has_value(), (s ? "" : s.error().message));
  return std::move(s).value();
}

/// Bricks that differ between a and b over the whole bounds (reads fault a streamed store).
int differingBricks(const BrickStore& a, const BrickStore& b) {
  const WorldBounds& wb = a.bounds();
  int differ = 0;
  MaterialId va[kBrickVoxels], vb[kBrickVoxels];
  for (std::int32_t z = wb.minBrick.z; z < wb.maxBrick.z; ++z)
    for (std::int32_t y = wb.minBrick.y; y < wb.maxBrick.y; ++y)
      for (std::int32_t x = wb.minBrick.x; x < wb.maxBrick.x; ++x) {
        a.readBrick({x, y, z}, va);
        b.readBrick({x, y, z}, vb);
        if (std::memcmp(va, vb, sizeof va) != 0) ++differ;
      }
  return differ;
}

// A streamed store over scene's bounds whose columns come from streamer.
BrickStore streamedStore(const Scene& scene, ColumnStreamer& streamer) {
  BrickStore world(scene.worldBounds);
  world.markGenerated();
  world.setColumnSource(&streamer);
  return world;
}

// Updates streamer around centre until every column within radiusVoxels of it is
// present in world (60 s at most: the workers run on a shared machine); returns how
// many columns that is.
std::size_t updateUntilAround(ColumnStreamer& streamer, BrickStore& world, StreamCentre centre,
                              std::int32_t radiusVoxels) {
  const std::size_t want = columnsAround(world.bounds(), centre.x, centre.z, radiusVoxels).size();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (world.presentColumns().size() < want && std::chrono::steady_clock::now() < deadline) {
    streamer.update(world, {&centre, 1});
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return want;
}

}  // namespace

TEST_CASE("streamed world: with 1 or 2 threads and any budget it reads as the whole world") {
  const Scene glade = loadGlade();
  auto whole = generateWorld(glade, 1);
  REQUIRE(whole.has_value());
  for (const StreamOptions options : {StreamOptions{.threads = 1, .maxResidentColumns = 4},
                                      StreamOptions{.threads = 2, .maxResidentColumns = 100000}}) {
    CAPTURE(options.threads);
    auto streamer = ColumnStreamer::create(glade, 1, options);
    REQUIRE(streamer.has_value());
    BrickStore world = streamedStore(glade, **streamer);
    const StreamCentre centre{0, 0};
    (*streamer)->update(world, {&centre, 1});
    // The same edit in both, then every brick of the bounds compared.
    BrickStore edited = *whole;
    for (BrickStore* s : {&edited, &world}) s->set(VoxelCoord{3, 200, -7}, 1);
    CHECK(differingBricks(world, edited) == 0);
    CHECK(worldHash(world) == worldHash(edited));
    (*streamer)->update(world, {&centre, 1});
    if (options.maxResidentColumns == 4) {
      // Over budget: everything but the edited column could go, and did (the budget
      // counts the unmodified columns; the edited one stays besides).
      CHECK(world.presentColumns().size() <= 4 + 1);
      CHECK((*streamer)->stats().released > 0);
      CHECK(world.get(3, 200, -7) == 1);
      CHECK(differingBricks(world, edited) == 0);
    } else {
      CHECK((*streamer)->stats().released == 0);
    }
  }
}

TEST_CASE("streamer: update generates ahead around the centres, nearest first, with one thread and with workers") {
  const Scene glade = loadGlade();
  const StreamCentre centre{-600, 400};  // voxels
  // One thread: prefetchPerUpdate columns per update, the nearest first.
  {
    auto streamer = ColumnStreamer::create(glade, 1, {.threads = 1, .prefetchRadiusVoxels = 200, .prefetchPerUpdate = 2});
    REQUIRE(streamer.has_value());
    BrickStore world = streamedStore(glade, **streamer);
    (*streamer)->update(world, {&centre, 1});
    REQUIRE(world.presentColumns().size() == 2);
    CHECK(world.presentColumns()[0] == ChunkColumn{-5, 3});  // the column holding the centre
    const std::size_t want = columnsAround(glade.worldBounds, centre.x, centre.z, 200).size();
    for (int i = 0; i < 100; ++i) (*streamer)->update(world, {&centre, 1});
    CHECK(world.presentColumns().size() == want);
    CHECK((*streamer)->stats().prefetched == want);
    CHECK((*streamer)->stats().faults == 0);
    // Reads there wait for nothing.
    CHECK(world.get(centre.x, 0, centre.z) != kAir);
    CHECK((*streamer)->stats().faults == 0);
  }
  // Workers: the columns arrive on later updates; reads never wait for them.
  {
    auto streamer = ColumnStreamer::create(glade, 1, {.threads = 2, .prefetchRadiusVoxels = 200});
    REQUIRE(streamer.has_value());
    BrickStore world = streamedStore(glade, **streamer);
    const std::size_t want = updateUntilAround(**streamer, world, centre, 200);
    CHECK(world.presentColumns().size() == want);
    CHECK((*streamer)->stats().prefetched + (*streamer)->stats().faults == want);
  }
}

TEST_CASE("streamer: with hashColumns every column generated is hashed as generated, on whichever thread made it") {
  const Scene glade = loadGlade();
  auto whole = generateWorld(glade, 1);
  REQUIRE(whole.has_value());
  const StreamCentre centre{-600, 400};
  for (const int threads : {1, 2}) {
    auto streamer = ColumnStreamer::create(glade, 1, {.threads = threads, .prefetchRadiusVoxels = 200, .hashColumns = true});
    REQUIRE(streamer.has_value());
    BrickStore world = streamedStore(glade, **streamer);
    const std::size_t want = updateUntilAround(**streamer, world, centre, 200);
    REQUIRE(world.presentColumns().size() == want);
    // A read beyond the disc faults one more column in on this thread: hashed too.
    const ChunkColumn faulted{4, -4};
    REQUIRE_FALSE(world.columnPresent(faulted));
    (void)world.get(faulted.x * kChunkBricks * kBrickSize, 0, faulted.z * kChunkBricks * kBrickSize);
    std::vector<GeneratedColumnHash> hashes;
    (*streamer)->takeColumnHashes(hashes);
    CHECK(hashes.size() >= want + 1);  // workers may have made a column twice (wasted)
    std::size_t sawFaulted = 0;
    for (const GeneratedColumnHash& h : hashes) {
      CHECK(h.hash == hashColumns(*whole, std::span(&h.column, 1)).world);
      sawFaulted += h.column == faulted ? 1 : 0;
    }
    CHECK(sawFaulted == 1);
    hashes.clear();
    (*streamer)->takeColumnHashes(hashes);  // taken: nothing new
    CHECK(hashes.empty());
  }
  // Off by default: nothing is hashed.
  auto plain = ColumnStreamer::create(glade, 1, {.threads = 1});
  REQUIRE(plain.has_value());
  BrickStore world = streamedStore(glade, **plain);
  (void)world.get(0, 0, 0);
  std::vector<GeneratedColumnHash> none;
  (*plain)->takeColumnHashes(none);
  CHECK(none.empty());
}

TEST_CASE("streamer: the budget counts unmodified columns; edits beyond it do not crowd out the disc around a centre") {
  const Scene glade = loadGlade();
  const StreamCentre centre{-600, 400};  // voxels
  auto streamer = ColumnStreamer::create(glade, 1,
                                         {.threads = 1, .prefetchRadiusVoxels = 200, .maxResidentColumns = 16, .prefetchPerUpdate = 2});
  REQUIRE(streamer.has_value());
  BrickStore world = streamedStore(glade, **streamer);
  // 20 columns holding edits, away from the centre: more than the whole budget.
  for (std::int32_t cx = -9; cx <= 9; cx += 1)
    for (std::int32_t cz : {-9, 8})
      if ((cz == -9) || cx < -7) world.set(VoxelCoord{cx * 128 + 5, 200, cz * 128 + 5}, 1);
  const std::size_t edited = world.presentColumns().size();
  REQUIRE(edited == 21);
  const auto disc = columnsAround(glade.worldBounds, centre.x, centre.z, 200);
  REQUIRE(disc.size() <= 14);  // within 7/8 of the budget: nothing of it need go
  for (int i = 0; i < 100; ++i) (*streamer)->update(world, {&centre, 1});
  for (ChunkColumn c : disc) {
    CAPTURE(c.x);
    CAPTURE(c.z);
    CHECK(world.columnPresent(c));
  }
  CHECK(world.presentColumns().size() == edited + disc.size());
  CHECK((*streamer)->stats().prefetched == disc.size());  // each generated once, none again
  CHECK((*streamer)->stats().released == 0);
}

TEST_CASE("streamed state: createStreamedSimState holds only the spawn and den columns at first and equals createSimState") {
  const Scene glade = loadGlade();
  auto streamer = ColumnStreamer::create(glade, 1, {.threads = 1});
  REQUIRE(streamer.has_value());
  auto streamed = createStreamedSimState(glade, 1, **streamer);
  REQUIRE(streamed.has_value());
  auto whole = createSimState(glade, 1);
  REQUIRE(whole.has_value());
  const std::size_t columns = static_cast<std::size_t>(glade.worldBounds.maxBrick.x - glade.worldBounds.minBrick.x) / 16 *
                              static_cast<std::size_t>(glade.worldBounds.maxBrick.z - glade.worldBounds.minBrick.z) / 16;
  CHECK(streamed->world.presentColumns().size() < columns);
  CHECK(streamed->water.grid.size() == whole->water.grid.size());
  CHECK_FALSE(diffWater(whole->water, streamed->water).has_value());
  CHECK(streamed->animals.perches == whole->animals.perches);
  CHECK(streamed->spawns == whole->spawns);
  CHECK(differingBricks(streamed->world, whole->world) == 0);
}

TEST_CASE("highlands: the 8 x 8 km scene's streamed state starts from a few hundred columns") {
  auto scene = loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/highlands.toml");
  REQUIRE_MESSAGE(scene.has_value(), (scene ? "" : scene.error().message));
  auto streamer = ColumnStreamer::create(*scene, scene->defaultSeed, {.threads = 1});
  REQUIRE(streamer.has_value());
  auto state = createStreamedSimState(*scene, scene->defaultSeed, **streamer);
  REQUIRE(state.has_value());
  // 1,280 x 1,280 columns in all; the spawns and the dens need few.
  CHECK(state->world.presentColumns().size() < 600);
  CHECK(state->world.memoryBytes() < std::size_t{200} << 20);
  CHECK(state->water.grid.brickCount() == 0);  // all water implicit: the stream's is held when disturbed
  // The tarns' water is implicit: full under each outlet layer, without a record.
  REQUIRE(state->water.outlets.size() == scene->ponds.size());
  for (const internal::PondOutlet& o : state->water.outlets) {
    const VoxelCoord below{o.x, o.y - 1, o.z};
    CHECK(waterAt(state->water, state->world, below) == kWaterPerVoxel);
    CHECK(state->water.grid.find(brickOf(below)) < 0);
  }
  CHECK(state->animals.animals.size() == 9);  // and the animals, on the ground
  // Away from everything, the terrain sampler and the streamed world agree on the ground.
  const TerrainSampler terrain(*scene, scene->defaultSeed);
  const TerrainSample t = terrain.at(30000, -41000);
  CHECK(state->world.get(30000, t.column.ground + 200, -41000) == kAir);
  CHECK(state->world.get(30000, t.column.ground - 30, -41000) != kAir);
}

TEST_CASE("mirror state: createMirrorState holds the spawn columns, no animals, implicit water, and reads as the world") {
  const Scene glade = loadGlade();
  auto streamer = ColumnStreamer::create(glade, 1, {.threads = 2});
  REQUIRE(streamer.has_value());
  auto mirror = createMirrorState(glade, 1, **streamer);
  REQUIRE(mirror.has_value());
  auto whole = createSimState(glade, 1);
  REQUIRE(whole.has_value());
  const std::vector<ChunkColumn> spawn = spawnColumns(glade);
  REQUIRE_FALSE(spawn.empty());
  for (ChunkColumn c : spawn) CHECK(mirror->world.columnPresent(c));
  CHECK(mirror->world.presentColumns().size() == spawn.size());
  CHECK(mirror->animals.animals.empty());
  CHECK(mirror->spawns == whole->spawns);
  // Water: implicit, read from the mirror's own world as the server reads it, and
  // materialised alike when a change arrives.
  CHECK(mirror->water.grid.brickCount() == 0);
  REQUIRE_FALSE(whole->water.outlets.empty());
  std::vector<WaterChange> changes;
  for (const internal::PondOutlet& o : whole->water.outlets) {
    const VoxelCoord below{o.x, o.y - 1, o.z};
    CHECK(waterAt(mirror->water, mirror->world, below) == kWaterPerVoxel);
    CHECK(waterAt(mirror->water, mirror->world, below) == waterAt(whole->water, whole->world, below));
    changes.push_back(WaterChange{below, 100});
  }
  WaterState server = whole->water;
  CHECK_FALSE(diffWater(server, mirror->water).has_value());
  applyWaterChanges(server, whole->world, changes);
  CHECK(diffWater(server, mirror->water).has_value());
  applyWaterChanges(mirror->water, mirror->world, changes);
  CHECK_FALSE(diffWater(server, mirror->water).has_value());
  for (const WaterChange& c : changes) {
    const CellCoord cell = cellOf(brickOf(c.voxel));
    CHECK(waterInCell(mirror->water, cell) == waterInCell(server, cell));
    CHECK(waterInCell(mirror->water, cell).size() > 1);  // the rest of the brick's pond water came along
  }
  // The join check: the spawn columns hash alike in the mirror, the whole world and a
  // region generated on its own, and differently once one voxel there changes.
  const WorldHashes ofMirror = hashColumns(mirror->world, spawn);
  CHECK(ofMirror.world == hashColumns(whole->world, spawn).world);
  CHECK(ofMirror.cells == hashColumns(whole->world, spawn).cells);
  auto region = generateRegion(glade, 1, spawn);
  REQUIRE(region.has_value());
  CHECK(ofMirror.world == hashColumns(*region, spawn).world);
  const std::int32_t vx = spawn.front().x * kChunkBricks * kBrickSize + 3, vz = spawn.front().z * kChunkBricks * kBrickSize + 5;
  const MaterialId before = whole->world.get(vx, 0, vz);
  whole->world.set(vx, 0, vz, before == kAir ? MaterialId{1} : kAir);
  CHECK(hashColumns(whole->world, spawn).world != ofMirror.world);
  CHECK(differingCells(hashColumns(whole->world, spawn).cells, ofMirror.cells).size() == 1);
  CHECK(differingBricks(mirror->world, whole->world) == 1);
}
