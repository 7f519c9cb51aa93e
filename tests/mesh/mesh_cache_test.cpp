#include "mesh/mesh_cache.h"

#include <doctest/doctest.h>

#include "tests/support/materials.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace loam;
using namespace loam::mesh;

namespace {

const sim::MaterialTable& table() { return test::materials(); }
sim::MaterialId mat(const char* name) { return test::materialId(name); }

/// 3 x 1 x 2 chunks (384 x 128 x 256 voxels) with a negative corner: rolling stone
/// and soil under grass, a sunken pond, and some floating blocks.
sim::BrickStore makeWorld() {
  sim::BrickStore w(sim::WorldBounds{{-16, 0, -16}, {32, 16, 16}});
  const sim::MaterialId stone = mat("stone"), soil = mat("soil"), grass = mat("grass"), water = mat("water"),
                        planks = mat("planks");
  sim::MaterialId v[sim::kBrickVoxels];
  // Ground height per voxel column (x -128..255, z -128..127).
  std::vector<int> height(384 * 256);
  for (int z = -128; z < 128; ++z)
    for (int x = -128; x < 256; ++x) {
      int h = 40 + static_cast<int>(12.0 * std::sin(x * 0.05) + 9.0 * std::cos(z * 0.07) +
                                    3.0 * std::sin((x + z) * 0.21));
      bool pond = (x - 40) * (x - 40) + (z + 20) * (z + 20) < 400;
      height[static_cast<std::size_t>((x + 128) + 384 * (z + 128))] = pond ? std::min(h, 30) : h;
    }
  for (int bz = -16; bz < 16; ++bz) {
    for (int by = 0; by < 12; ++by) {
      for (int bx = -16; bx < 32; ++bx) {
        bool any = false;
        for (int lz = 0; lz < 8; ++lz)
          for (int ly = 0; ly < 8; ++ly)
            for (int lx = 0; lx < 8; ++lx) {
              int x = bx * 8 + lx, y = by * 8 + ly, z = bz * 8 + lz;
              const int h = height[static_cast<std::size_t>((x + 128) + 384 * (z + 128))];
              sim::MaterialId m = sim::kAir;
              bool pond = (x - 40) * (x - 40) + (z + 20) * (z + 20) < 400;
              if (y < h - 4) m = stone;
              else if (y < h - 1) m = soil;
              else if (y < h) m = grass;
              else if (pond && y < 34) m = water;
              if (y >= 70 && y < 74 && ((x >> 3) + (z >> 3)) % 7 == 0) m = planks;
              v[sim::voxelIndexInBrick(lx, ly, lz)] = m;
              any |= m != sim::kAir;
            }
        if (any) w.writeBrick({bx, by, bz}, v);
      }
    }
  }
  w.markGenerated();
  return w;
}

using Meshes = std::map<sim::ChunkCoord, ChunkMesh>;

/// Meshes every brick of world directly (bricks within the cache's range rule).
Meshes reference(const sim::BrickStore& world, double radius = 1e9, int cbx = 0, int cbz = 0) {
  const MeshClassTable classes = meshClasses(table());
  Meshes out;
  PaddedBrick p;
  const sim::WorldBounds& b = world.bounds();
  std::map<sim::ChunkCoord, std::map<int, std::pair<std::vector<PackedVertex>, std::vector<PackedVertex>>>> per;
  for (int z = b.minBrick.z; z < b.maxBrick.z; ++z)
    for (int y = b.minBrick.y; y < b.maxBrick.y; ++y)
      for (int x = b.minBrick.x; x < b.maxBrick.x; ++x) {
        double dx = (x - cbx) * 0.4, dz = (z - cbz) * 0.4;
        if (dx * dx + dz * dz > radius * radius) continue;
        sim::BrickCoord c{x, y, z};
        gatherPaddedBrick(world, c, p);
        std::vector<PackedVertex> o, wv;
        meshBrick(p, classes, o, wv);
        if (o.empty() && wv.empty()) continue;
        per[sim::chunkOf(c)][sim::brickIndexInChunk(c)] = {std::move(o), std::move(wv)};
      }
  for (auto& [c, bricks] : per) {
    ChunkMesh m{c, {}, {}};
    for (auto& [l, ow] : bricks) {
      m.opaque.insert(m.opaque.end(), ow.first.begin(), ow.first.end());
      m.water.insert(m.water.end(), ow.second.begin(), ow.second.end());
    }
    out[c] = std::move(m);
  }
  return out;
}

/// Applies updates to a client-side view of the chunk meshes, as the renderer would.
void apply(Meshes& view, std::vector<ChunkMesh> updates) {
  for (ChunkMesh& m : updates) {
    if (m.opaque.empty() && m.water.empty()) {
      view.erase(m.chunk);
    } else {
      view[m.chunk] = std::move(m);
    }
  }
}

void checkEqual(const Meshes& got, const Meshes& want) {
  REQUIRE(got.size() == want.size());
  for (const auto& [c, m] : want) {
    auto it = got.find(c);
    REQUIRE(it != got.end());
    CHECK(it->second.opaque == m.opaque);
    CHECK(it->second.water == m.water);
  }
}

std::set<sim::ChunkCoord> chunksOf(const std::vector<ChunkMesh>& u) {
  std::set<sim::ChunkCoord> s;
  for (const ChunkMesh& m : u) s.insert(m.chunk);
  return s;
}

const std::array<double, 3> kCentre{2.0, 15.0, 2.0};

}  // namespace

TEST_CASE("finish() gives the same meshes as meshing each brick directly") {
  sim::BrickStore world = makeWorld();
  const sim::ChangeSubscriber meshChanges = world.subscribeChanges();
  const Meshes want = reference(world);
  REQUIRE(want.size() >= 6);
  bool anyWater = false;
  for (const auto& [c, m] : want) anyWater |= !m.water.empty();
  CHECK(anyWater);

  MeshCache cache(table(), MeshCacheConfig{1, 1000.0});
  CHECK(cache.idle());
  cache.reset(world, kCentre);
  CHECK_FALSE(cache.idle());
  cache.finish(world, kCentre);
  CHECK(cache.idle());
  Meshes view;
  apply(view, cache.takeChunkUpdates());
  checkEqual(view, want);
  MeshCacheStats s = cache.stats();
  std::size_t quads = 0;
  for (const auto& [c, m] : want) quads += (m.opaque.size() + m.water.size()) / 4;
  CHECK(s.quads == quads);
  CHECK(s.chunks == want.size());
  CHECK(s.skippedBricks > 0);
  CHECK(s.queuedBricks == 0);
  CHECK(s.inFlightBricks == 0);
  CHECK(cache.takeChunkUpdates().empty());

  SUBCASE("an edit inside a chunk updates exactly that chunk") {
    // Dig a hole at the surface near the centre of chunk (0, 0, 0).
    int x = 64 + 3, z = 64 + 2, y = 127;
    while (y > 0 && world.get(x, y, z) == sim::kAir) --y;
    for (int dy = 0; dy < 3; ++dy) world.set(x, y - dy, z, sim::kAir);
    auto dirty = world.takeChanged(meshChanges);
    REQUIRE(!dirty.empty());
    cache.markDirty(dirty);
    CHECK_FALSE(cache.idle());
    cache.finish(world, kCentre);
    CHECK(cache.idle());
    auto u = cache.takeChunkUpdates();
    CHECK(chunksOf(u) == std::set<sim::ChunkCoord>{{0, 0, 0}});
    apply(view, std::move(u));
    checkEqual(view, reference(world));
  }

  SUBCASE("an edit at a chunk border updates both chunks") {
    // Voxel x = 127 is the last of chunk 0; dig underground so that chunk 1's x = 128 is exposed.
    int z = 40, y = 10;
    REQUIRE(world.get(127, y, z) != sim::kAir);
    REQUIRE(world.get(128, y, z) != sim::kAir);
    world.set(127, y, z, sim::kAir);
    cache.markDirty(world.takeChanged(meshChanges));
    cache.finish(world, kCentre);
    auto u = cache.takeChunkUpdates();
    CHECK(chunksOf(u) == std::set<sim::ChunkCoord>{{0, 0, 0}, {1, 0, 0}});
    apply(view, std::move(u));
    checkEqual(view, reference(world));
  }

  SUBCASE("digging a whole chunk's content away removes its mesh") {
    world.fillChunk({1, 0, -1}, sim::kAir);
    cache.markDirty(world.takeChanged(meshChanges));
    cache.finish(world, kCentre);
    auto u = cache.takeChunkUpdates();
    bool removed = false;
    for (const ChunkMesh& m : u) removed |= m.chunk == sim::ChunkCoord{1, 0, -1} && m.opaque.empty() && m.water.empty();
    CHECK(removed);
    apply(view, std::move(u));
    checkEqual(view, reference(world));
  }

  SUBCASE("reset reports every old chunk removed or replaced") {
    cache.reset(world, kCentre);
    auto u = cache.takeChunkUpdates();
    CHECK(u.size() == want.size());
    for (const ChunkMesh& m : u) CHECK((m.opaque.empty() && m.water.empty()));
    cache.finish(world, kCentre);
    Meshes again;
    apply(again, cache.takeChunkUpdates());
    checkEqual(again, want);
  }
}

TEST_CASE("one and two workers give identical meshes") {
  sim::BrickStore world = makeWorld();
  Meshes one, two;
  {
    MeshCache c(table(), MeshCacheConfig{1, 1000.0});
    c.reset(world, kCentre);
    c.finish(world, kCentre);
    apply(one, c.takeChunkUpdates());
  }
  {
    MeshCache c(table(), MeshCacheConfig{2, 1000.0});
    c.reset(world, kCentre);
    c.finish(world, kCentre);
    apply(two, c.takeChunkUpdates());
  }
  checkEqual(two, one);
}

TEST_CASE("a brick edited while in flight ends with the edited mesh") {
  sim::BrickStore world = makeWorld();
  const sim::ChangeSubscriber meshChanges = world.subscribeChanges();
  MeshCache cache(table(), MeshCacheConfig{2, 1000.0});
  Meshes view;
  cache.update(world, kCentre, 0.5);  // first update queues everything; some bricks go out
  CHECK_FALSE(cache.idle());
  // Edit many surface bricks now, while the earlier copies may still be meshing.
  for (int x = -120; x < 250; x += 5) {
    int z = (x * 3) % 100, y = 120;
    while (y > 0 && world.get(x, y, z) == sim::kAir) --y;
    world.set(x, y, z, mat("brick"));
    world.set(x, y + 1, z, mat("brick"));
  }
  cache.markDirty(world.takeChanged(meshChanges));
  for (int i = 0; i < 3; ++i) {
    cache.update(world, kCentre, 0.5);
    apply(view, cache.takeChunkUpdates());
  }
  cache.finish(world, kCentre);
  apply(view, cache.takeChunkUpdates());
  checkEqual(view, reference(world));
}

TEST_CASE("radius: only nearby bricks are meshed; moving drops and adds chunks") {
  sim::BrickStore world = makeWorld();
  const sim::ChangeSubscriber meshChanges = world.subscribeChanges();
  const double radius = 3.0;  // 7.5 bricks
  MeshCache cache(table(), MeshCacheConfig{1, radius});
  Meshes view;
  std::array<double, 3> c{-3.8, 20.0, -3.8};  // brick column (-10, -10)
  cache.reset(world, c);
  cache.finish(world, c);
  apply(view, cache.takeChunkUpdates());
  checkEqual(view, reference(world, radius, -10, -10));
  CHECK(view.size() == 1);
  CHECK(view.count({-1, 0, -1}) == 1);

  // Walk east: chunk (-1, 0, -1) leaves the disc, chunks (1, 0, -1) and (1, 0, 0) enter.
  std::array<double, 3> c2{10.2, 20.0, 2.2};  // brick column (25, 5)
  cache.finish(world, c2);
  auto u = cache.takeChunkUpdates();
  bool removedWest = false;
  for (const ChunkMesh& m : u) removedWest |= m.chunk.x == -1 && m.opaque.empty() && m.water.empty();
  CHECK(removedWest);
  apply(view, std::move(u));
  checkEqual(view, reference(world, radius, 25, 5));
  CHECK(view.count({-1, 0, -1}) == 0);
  CHECK(view.count({1, 0, 0}) == 1);
  CHECK(view.count({1, 0, -1}) == 1);

  // Edits far away are ignored.
  world.set(-120, 30, -120, sim::kAir);
  cache.markDirty(world.takeChanged(meshChanges));
  CHECK(cache.idle());
}

TEST_CASE("update() with no budget still makes progress and ends idle") {
  sim::BrickStore world = makeWorld();
  MeshCache cache(table(), MeshCacheConfig{1, 1000.0});
  cache.reset(world, kCentre);
  Meshes view;
  int frames = 0;
  while (!cache.idle() && frames < 200000) {
    cache.update(world, kCentre, 0.0);
    apply(view, cache.takeChunkUpdates());
    ++frames;
  }
  CHECK(cache.idle());
  CHECK(frames > 1);
  CHECK(cache.stats().lastGatherMs >= 0.0);
  checkEqual(view, reference(world));
}

// ---- streamed worlds (BrickStore::setColumnSource) --------------------------------

namespace {

/// Serves columns of a whole world (makeWorld) to a streamed store. fault() is what
/// a read of an absent column calls (counted: the cache must never cause one);
/// deliver() is the client's streamer handing over a column made ahead.
struct CopySource final : sim::ColumnSource {
  explicit CopySource(const sim::BrickStore& w) : whole(w) {}
  void fault(sim::ChunkColumn c, sim::BrickStore& store) override {
    ++faults;
    deliver(c, store);
  }
  void deliver(sim::ChunkColumn c, sim::BrickStore& store) const {
    const sim::WorldBounds& b = whole.bounds();
    sim::BrickStore made(b);
    sim::MaterialId v[sim::kBrickVoxels];
    for (int z = c.z * sim::kChunkBricks; z < (c.z + 1) * sim::kChunkBricks; ++z)
      for (int y = b.minBrick.y; y < b.maxBrick.y; ++y)
        for (int x = c.x * sim::kChunkBricks; x < (c.x + 1) * sim::kChunkBricks; ++x) {
          whole.readBrick({x, y, z}, v);
          made.writeBrick({x, y, z}, v);
        }
    store.adoptColumn(c, made);
  }
  const sim::BrickStore& whole;
  int faults = 0;
};

/// A streamed store over source's world with no column present.
sim::BrickStore streamedStore(CopySource& source) {
  sim::BrickStore s(source.whole.bounds());
  s.markGenerated();
  s.setColumnSource(&source);
  return s;
}

/// The chunks of want whose column and the 8 around it are among present.
Meshes readyPart(const Meshes& want, const std::set<std::pair<int, int>>& present) {
  Meshes out;
  for (const auto& [c, m] : want) {
    bool ready = true;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dx = -1; dx <= 1; ++dx) {
        const int x = c.x + dx, z = c.z + dz;
        const bool inBounds = x >= -1 && x <= 1 && z >= -1 && z <= 0;  // makeWorld's columns
        ready &= !inBounds || present.count({x, z}) == 1;
      }
    if (ready) out[c] = m;
  }
  return out;
}

}  // namespace

TEST_CASE("streamed world: the cache never faults; bricks wait for absent columns and are meshed when they arrive") {
  const sim::BrickStore whole = makeWorld();
  const Meshes want = reference(whole);
  CopySource source(whole);
  sim::BrickStore world = streamedStore(source);
  const sim::ChangeSubscriber meshChanges = world.subscribeChanges();
  // Columns x -1..1, z -1..0; (1, -1) and (1, 0) are absent at first.
  std::set<std::pair<int, int>> present{{-1, -1}, {-1, 0}, {0, -1}, {0, 0}};
  for (const auto& [x, z] : present) source.deliver({x, z}, world);
  const Meshes first = readyPart(want, present);
  REQUIRE(!first.empty());
  REQUIRE(first.size() < want.size());

  MeshCache cache(table(), MeshCacheConfig{2, 1000.0});
  Meshes view;
  SUBCASE("update()") {
    int frames = 0;
    do {  // the first update() queues every brick
      cache.update(world, kCentre, 0.2);
      apply(view, cache.takeChunkUpdates());
    } while (!cache.idle() && ++frames < 200000);  // workers finish what is in flight (slowly on a loaded machine)
  }
  SUBCASE("finish()") {
    cache.reset(world, kCentre);
    cache.finish(world, kCentre);  // returns although bricks wait
    apply(view, cache.takeChunkUpdates());
  }
  CHECK(source.faults == 0);
  CHECK(cache.idle());
  MeshCacheStats s = cache.stats();
  CHECK(s.waitingForColumns > 0);
  CHECK(s.queuedBricks == 0);
  checkEqual(view, first);
  cache.update(world, kCentre, 10.0);  // nothing arrived: nothing to do
  CHECK(cache.stats().waitingForColumns == s.waitingForColumns);
  CHECK(cache.stats().meshedBricks == s.meshedBricks);
  CHECK(source.faults == 0);

  // (1, -1) arrives and the store reports its bricks; (1, 0) is still absent.
  source.deliver({1, -1}, world);
  present.insert({1, -1});
  cache.markDirty(world.takeChanged(meshChanges));
  cache.finish(world, kCentre);
  apply(view, cache.takeChunkUpdates());
  CHECK(source.faults == 0);
  checkEqual(view, readyPart(want, present));
  CHECK(cache.stats().waitingForColumns > 0);

  // (1, 0) arrives; no markDirty this time: waiting bricks are retried on their own.
  source.deliver({1, 0}, world);
  for (int i = 0; i < 2000 && !cache.idle(); ++i) {
    cache.update(world, kCentre, 0.2);
    apply(view, cache.takeChunkUpdates());
  }
  cache.finish(world, kCentre);
  apply(view, cache.takeChunkUpdates());
  CHECK(source.faults == 0);
  CHECK(cache.stats().waitingForColumns == 0);
  CHECK(cache.stats().queuedBricks == 0);
  checkEqual(view, want);
}

TEST_CASE("streamed world with every column present meshes as the whole world does") {
  const sim::BrickStore whole = makeWorld();
  CopySource source(whole);
  sim::BrickStore world = streamedStore(source);
  for (int z = -1; z <= 0; ++z)
    for (int x = -1; x <= 1; ++x) source.deliver({x, z}, world);
  MeshCache cache(table(), MeshCacheConfig{2, 1000.0});
  cache.reset(world, kCentre);
  cache.finish(world, kCentre);
  Meshes view;
  apply(view, cache.takeChunkUpdates());
  CHECK(source.faults == 0);
  CHECK(cache.stats().waitingForColumns == 0);
  checkEqual(view, reference(whole));
}

TEST_CASE("an overlay is meshed as if the world held it, and settling it restores the world's meshes") {
  const sim::BrickStore world = makeWorld();
  sim::BrickStore edited = makeWorld();
  sim::VoxelOverlay overlay;
  // A pocket carved deep in the stone (bricks the hidden tests would skip) and a
  // plank ledge in the air: shown by the overlay, held by `edited`.
  for (int z = 8; z < 13; ++z)
    for (int y = 8; y < 13; ++y)
      for (int x = 8; x < 13; ++x) {
        overlay.set({x, y, z}, sim::kAir);
        edited.set(x, y, z, sim::kAir);
      }
  for (int x = 0; x < 6; ++x) {
    overlay.set({x, 100, 0}, mat("planks"));
    edited.set(x, 100, 0, mat("planks"));
  }
  MeshCache cache(table(), MeshCacheConfig{2, 1000.0});
  cache.setOverlay(&overlay);
  cache.reset(world, kCentre);
  Meshes view;
  for (int i = 0; i < 4; ++i) {  // the main thread's copies, then the workers' (finish)
    cache.update(world, kCentre, 0.5);
    apply(view, cache.takeChunkUpdates());
  }
  cache.finish(world, kCentre);
  apply(view, cache.takeChunkUpdates());
  checkEqual(view, reference(edited));

  // Settled: the overlay empties and its bricks are marked; the world shows again.
  const std::vector<sim::BrickCoord> shown = overlay.bricks();
  overlay.clear();
  cache.markDirty(shown);
  cache.update(world, kCentre, 0.5);
  apply(view, cache.takeChunkUpdates());
  cache.finish(world, kCentre);
  apply(view, cache.takeChunkUpdates());
  checkEqual(view, reference(world));
}
