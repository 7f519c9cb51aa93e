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

/// Chunk meshes from meshOne(brick, opaque, water) over every brick of bounds.
template <class MeshOne>
Meshes meshEach(const sim::WorldBounds& b, MeshOne&& meshOne) {
  Meshes out;
  std::map<sim::ChunkCoord, std::map<int, std::pair<std::vector<PackedVertex>, std::vector<PackedVertex>>>> per;
  for (int z = b.minBrick.z; z < b.maxBrick.z; ++z)
    for (int y = b.minBrick.y; y < b.maxBrick.y; ++y)
      for (int x = b.minBrick.x; x < b.maxBrick.x; ++x) {
        sim::BrickCoord c{x, y, z};
        std::vector<PackedVertex> o, wv;
        meshOne(c, o, wv);
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

/// Meshes every brick of world directly (bricks within the cache's range rule), with
/// AO unless flatAo (how the cache meshes coarse bricks).
Meshes reference(const sim::BrickStore& world, double radius = 1e9, int cbx = 0, int cbz = 0, bool flatAo = false) {
  MeshClassTable classes = meshClasses(table());
  if (flatAo) classes.flatAo.fill(1);
  return meshEach(world.bounds(), [&](sim::BrickCoord c, std::vector<PackedVertex>& o, std::vector<PackedVertex>& w) {
    const double dx = (c.x - cbx) * 0.4, dz = (c.z - cbz) * 0.4;
    if (dx * dx + dz * dz > radius * radius) return;
    PaddedBrick p;
    gatherPaddedBrick(world, c, p);
    meshBrick(p, classes, o, w);
  });
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

// ---- levels of detail (MeshCacheConfig::coarseMetres) ------------------------------

namespace {

/// world with every voxel replaced by the material of its block at level: a coarse
/// gather of world reads what a fine gather of this world reads.
sim::BrickStore blockify(const sim::BrickStore& world, int level) {
  const MeshClassTable classes = meshClasses(table());
  const int k = 1 << level;
  sim::BrickStore out(world.bounds());
  const sim::WorldBounds& b = world.bounds();
  sim::MaterialId in[sim::kBrickVoxels], coarse[sim::kBrickVoxels], block[64];
  for (int bz = b.minBrick.z; bz < b.maxBrick.z; ++bz)
    for (int by = b.minBrick.y; by < b.maxBrick.y; ++by)
      for (int bx = b.minBrick.x; bx < b.maxBrick.x; ++bx) {
        if (world.brick({bx, by, bz}).isAir()) continue;
        world.readBrick({bx, by, bz}, in);
        for (int z = 0; z < 8; z += k)
          for (int y = 0; y < 8; y += k)
            for (int x = 0; x < 8; x += k) {
              for (int l = 0; l < k; ++l)
                for (int j = 0; j < k; ++j)
                  for (int i = 0; i < k; ++i)
                    block[i + k * (j + k * l)] = in[sim::voxelIndexInBrick(x + i, y + j, z + l)];
              const sim::MaterialId m = coarseBlockMaterial(block, k, classes);
              for (int l = 0; l < k; ++l)
                for (int j = 0; j < k; ++j)
                  for (int i = 0; i < k; ++i) coarse[sim::voxelIndexInBrick(x + i, y + j, z + l)] = m;
            }
        out.writeBrick({bx, by, bz}, coarse);
      }
  return out;
}

/// What the cache shows with every chunk at level (meshed without AO).
Meshes coarseReference(const sim::BrickStore& world, int level) {
  return reference(blockify(world, level), 1e9, 0, 0, true);
}

/// Meshes every brick of world at its chunk column's level, levelOf(column), as the
/// cache does: coarse bricks from the blockified world without AO, and the sides
/// facing a column at another level opened (openFaces) where the brick across is mixed.
template <class LevelOf>
Meshes levelReference(const sim::BrickStore& world, LevelOf&& levelOf) {
  const sim::BrickStore level1 = blockify(world, 1), level2 = blockify(world, 2);
  const sim::BrickStore* at[3] = {&world, &level1, &level2};
  const MeshClassTable classes = meshClasses(table());
  MeshClassTable flat = classes;
  flat.flatAo.fill(1);
  const sim::WorldBounds& bounds = world.bounds();
  return meshEach(bounds, [&](sim::BrickCoord c, std::vector<PackedVertex>& o, std::vector<PackedVertex>& w) {
    const sim::ChunkCoord chunk = sim::chunkOf(c);
    const int level = levelOf(sim::ChunkColumn{chunk.x, chunk.z});
    PaddedBrick p;
    gatherPaddedBrick(*at[level], c, p);
    std::uint8_t open = 0;
    const struct {
      int dx, dz;
      std::uint8_t bit;
    } sides[4] = {{-1, 0, kOpenNegX}, {1, 0, kOpenPosX}, {0, -1, kOpenNegZ}, {0, 1, kOpenPosZ}};
    for (const auto& side : sides) {
      const sim::BrickCoord across{c.x + side.dx, c.y, c.z + side.dz};
      const sim::ChunkCoord other = sim::chunkOf(across);
      if (other == chunk || !bounds.containsBrick(across)) continue;
      if (levelOf(sim::ChunkColumn{other.x, other.z}) != level && !world.brick(across).isUniform()) open |= side.bit;
    }
    openFaces(p, open, classes);
    meshBrick(p, level > 0 ? flat : classes, o, w);
  });
}

MeshCacheConfig lodConfig(int workers, double radius, double level1, double level2) {
  MeshCacheConfig c{workers, radius};
  c.coarseMetres[0] = level1;
  c.coarseMetres[1] = level2;
  return c;
}

bool onGrid(const std::vector<PackedVertex>& v, int k) {
  for (const PackedVertex& p : v)
    if (vertexX(p) % k || vertexY(p) % k || vertexZ(p) % k) return false;
  return true;
}

}  // namespace

TEST_CASE("levels of detail: coarse chunks mesh the blockified world, and their up faces cover every column once") {
  const sim::BrickStore world = makeWorld();
  const MeshClassTable classes = meshClasses(table());
  for (int level = 1; level <= kMaxMeshLevel; ++level) {
    CAPTURE(level);
    const int k = 1 << level;
    MeshCache cache(table(), lodConfig(2, 1000.0, level == 1 ? 0.001 : 0.0, level == 2 ? 0.001 : 0.0));
    cache.reset(world, kCentre);
    cache.finish(world, kCentre);
    Meshes view;
    apply(view, cache.takeChunkUpdates());
    const sim::BrickStore blocky = blockify(world, level);
    checkEqual(view, reference(blocky, 1e9, 0, 0, true));
    const MeshCacheStats s = cache.stats();
    CHECK(s.coarseChunks == s.chunks);
    CHECK(s.chunks == view.size());

    // Fine columns x -128..255, z -128..127: the heights of the up faces over each.
    std::vector<std::vector<int>> got(384 * 256), want(384 * 256);
    std::size_t quads = 0;
    for (const auto& [c, m] : view) {
      CHECK(onGrid(m.opaque, k));
      CHECK(onGrid(m.water, k));
      quads += (m.opaque.size() + m.water.size()) / 4;
      for (std::size_t i = 0; i < m.opaque.size(); i += 4) {
        if (vertexFace(m.opaque[i]) != 3) continue;
        int x0 = 1000, x1 = -1, z0 = 1000, z1 = -1;
        for (std::size_t j = i; j < i + 4; ++j) {
          x0 = std::min(x0, vertexX(m.opaque[j]));
          x1 = std::max(x1, vertexX(m.opaque[j]));
          z0 = std::min(z0, vertexZ(m.opaque[j]));
          z1 = std::max(z1, vertexZ(m.opaque[j]));
        }
        for (int z = z0; z < z1; ++z)
          for (int x = x0; x < x1; ++x)
            got[static_cast<std::size_t>((c.x * 128 + x + 128) + 384 * (c.z * 128 + z + 128))].push_back(
                c.y * 128 + vertexY(m.opaque[i]));
      }
    }
    auto opaqueAt = [&](int x, int y, int z) { return classes[blocky.get(x, y, z)] == MeshClass::Opaque; };
    for (int z = -128; z < 128; ++z)
      for (int x = -128; x < 256; ++x) {
        std::vector<int>& w = want[static_cast<std::size_t>((x + 128) + 384 * (z + 128))];
        for (int y = 0; y < 128; ++y)
          if (opaqueAt(x, y, z) && !opaqueAt(x, y + 1, z)) w.push_back(y + 1);
        REQUIRE(!w.empty());  // ground everywhere
        std::vector<int>& g = got[static_cast<std::size_t>((x + 128) + 384 * (z + 128))];
        std::sort(g.begin(), g.end());
        REQUIRE(g == w);
      }

    // Far fewer quads than at level 0.
    std::size_t fine = 0;
    for (const auto& [c, m] : reference(world)) fine += (m.opaque.size() + m.water.size()) / 4;
    INFO("quads at level 0: " << fine << ", at level " << level << ": " << quads);
    CHECK(static_cast<double>(quads) < (level == 1 ? 0.35 : 0.12) * static_cast<double>(fine));
  }
}

TEST_CASE("levels of detail: a chunk crossing a threshold is re-meshed at its new level, and back") {
  sim::BrickStore world = makeWorld();
  const std::array<double, 3> near{2.0, 15.0, 2.0};  // every chunk column centre within 9.3 m
  // Column (1, 0) 14.3 m away, past 12 + 1.6; column (1, -1) 13.5 m: past 12 but
  // within the hysteresis band, so it keeps the level it had.
  const std::array<double, 3> moved{-4.0, 15.0, -2.0};
  const Meshes fine = reference(world);
  const sim::ChunkCoord crossing{1, 0, 0};
  // The crossing chunk at level 1, and the seams with its neighbours open.
  const Meshes want = levelReference(world, [&](sim::ChunkColumn c) { return c.x == 1 && c.z == 0 ? 1 : 0; });
  const std::set<sim::ChunkCoord> seamed{crossing, {0, 0, 0}, {1, 0, -1}};

  MeshCache cache(table(), lodConfig(2, 1000.0, 12.0, 0.0));
  cache.reset(world, near);
  cache.finish(world, near);
  Meshes view;
  apply(view, cache.takeChunkUpdates());
  checkEqual(view, fine);
  CHECK(cache.stats().coarseChunks == 0);

  SUBCASE("finish()") { cache.finish(world, moved); }
  SUBCASE("update() with a small budget: the old mesh stays until the new one is whole") {
    int frames = 0, crossingUpdates = 0;
    do {
      cache.update(world, moved, 0.02);
      for (ChunkMesh& m : cache.takeChunkUpdates()) {
        REQUIRE(seamed.count(m.chunk) == 1);
        if (m.chunk == crossing) {
          CHECK(m.opaque == want.at(crossing).opaque);
          CHECK(m.water == want.at(crossing).water);
          ++crossingUpdates;
        }
        view[m.chunk] = std::move(m);
      }
    } while (!cache.idle() && ++frames < 200000);
    CHECK(frames > 8);  // long enough that the chunk would have been assembled part-way without the hold
    CHECK(crossingUpdates == 1);
  }
  auto u = cache.takeChunkUpdates();
  for (const ChunkMesh& m : u) CHECK(seamed.count(m.chunk) == 1);  // (update(): already taken)
  apply(view, std::move(u));
  checkEqual(view, want);
  CHECK(view.at({0, 0, 0}).opaque != fine.at({0, 0, 0}).opaque);  // its seam with the crossing chunk is open
  CHECK(onGrid(view.at(crossing).opaque, 2));
  CHECK_FALSE(onGrid(fine.at(crossing).opaque, 2));
  CHECK(cache.stats().coarseChunks == 1);
  {
    MeshCache fresh(table(), lodConfig(1, 1000.0, 12.0, 0.0));  // no history: (1, -1) is coarse too
    fresh.reset(world, moved);
    fresh.finish(world, moved);
    CHECK(fresh.stats().coarseChunks == 2);
  }

  // Back: the level-0 mesh returns exactly, as a fresh cache without levels makes it.
  // The neighbours' seams close only once the crossing chunk shows level 0 again (closed
  // beside its level-1 mesh, they would crack), so their updates never come first.
  std::set<sim::ChunkCoord> updated;
  int frames = 0;
  do {
    cache.update(world, near, 0.02);
    u = cache.takeChunkUpdates();
    for (const ChunkMesh& m : u) {
      CHECK(seamed.count(m.chunk) == 1);
      if (m.chunk != crossing) CHECK(updated.count(crossing) == 1);
      updated.insert(m.chunk);
    }
    apply(view, std::move(u));
  } while (!cache.idle() && ++frames < 200000);
  CHECK(updated == seamed);  // the crossing chunk, and its neighbours' seams closed again
  MeshCache plain(table(), MeshCacheConfig{1, 1000.0});
  plain.reset(world, near);
  plain.finish(world, near);
  Meshes plainView;
  apply(plainView, plain.takeChunkUpdates());
  checkEqual(view, plainView);
  CHECK(cache.stats().coarseChunks == 0);
}

namespace {

/// Checks that every seam between chunk columns at different levels is closed: where
/// one side's blockified voxel is Opaque and the other side's (at its own level) is
/// not, a quad on the seam covers that voxel face, looking toward the other side.
/// Returns the faces that would be open if each side met the other at its own level
/// (the cracks before openFaces), so that a caller can tell the check was not vacuous.
std::size_t checkSeamsClosed(const sim::BrickStore& world, const Meshes& view, const MeshCache& cache) {
  const sim::BrickStore level1 = blockify(world, 1), level2 = blockify(world, 2);
  const sim::BrickStore* at[3] = {&world, &level1, &level2};
  const MeshClassTable classes = meshClasses(table());
  auto opaque = [&](int level, int x, int y, int z) {
    return classes[at[level]->get(x, y, z)] == MeshClass::Opaque;
  };
  // Covered voxel faces on chunk-column planes: (face, world x, y, z of the voxel behind the face).
  std::set<std::array<int, 4>> covered;
  for (const auto& [c, m] : view) {
    for (std::size_t i = 0; i < m.opaque.size(); i += 4) {
      const int f = vertexFace(m.opaque[i]);
      if (f == 2 || f == 3) continue;
      int lo[3] = {1000, 1000, 1000}, hi[3] = {-1, -1, -1};
      for (std::size_t j = i; j < i + 4; ++j) {
        const int v[3] = {vertexX(m.opaque[j]), vertexY(m.opaque[j]), vertexZ(m.opaque[j])};
        for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], v[a]), hi[a] = std::max(hi[a], v[a]);
      }
      const int axis = f < 2 ? 0 : 2, plane = lo[axis];
      if (plane != 0 && plane != kChunkVoxels) continue;
      const int inside = (f & 1) ? plane - 1 : plane;  // the voxel whose face this is
      for (int y = lo[1]; y < hi[1]; ++y)
        for (int w = lo[2 - axis]; w < hi[2 - axis]; ++w) {
          const int lx = axis == 0 ? inside : w, lz = axis == 0 ? w : inside;
          covered.insert({f, c.x * kChunkVoxels + lx, c.y * kChunkVoxels + y, c.z * kChunkVoxels + lz});
        }
    }
  }
  const sim::WorldBounds& b = world.bounds();
  const int cx0 = b.minBrick.x / sim::kChunkBricks, cx1 = b.maxBrick.x / sim::kChunkBricks;
  const int cz0 = b.minBrick.z / sim::kChunkBricks, cz1 = b.maxBrick.z / sim::kChunkBricks;
  const int ny = (b.maxBrick.y - b.minBrick.y) * sim::kBrickSize;
  std::size_t seams = 0, needed = 0, missing = 0, wouldCrack = 0;
  for (int cz = cz0; cz < cz1; ++cz)
    for (int cx = cx0; cx < cx1; ++cx) {
      const int la = cache.columnLevel({cx, cz});
      for (int axis : {0, 2}) {  // the seam with (cx + 1, cz), then with (cx, cz + 1)
        const sim::ChunkColumn other = axis == 0 ? sim::ChunkColumn{cx + 1, cz} : sim::ChunkColumn{cx, cz + 1};
        if (other.x >= cx1 || other.z >= cz1) continue;
        const int lb = cache.columnLevel(other);
        if (la == lb) continue;
        ++seams;
        const int plane = (axis == 0 ? other.x : other.z) * kChunkVoxels;  // first voxel of the b side
        const int w0 = (axis == 0 ? cz : cx) * kChunkVoxels;
        for (int y = 0; y < ny; ++y)
          for (int w = w0; w < w0 + kChunkVoxels; ++w) {
            const int ax = axis == 0 ? plane - 1 : w, az = axis == 0 ? w : plane - 1;  // a side
            const int bx = axis == 0 ? plane : w, bz = axis == 0 ? w : plane;          // b side
            const bool sa = opaque(la, ax, y, az), sb = opaque(lb, bx, y, bz);
            if (sa == sb) continue;
            ++needed;
            // a's face looks toward +axis, b's toward -axis (sim::Face: NegX 0, PosX 1, NegZ 4, PosZ 5).
            const std::array<int, 4> face = sa ? std::array<int, 4>{axis == 0 ? 1 : 5, ax, y, az}
                                               : std::array<int, 4>{axis == 0 ? 0 : 4, bx, y, bz};
            if (!covered.count(face)) ++missing;
            // Each side at its own level: a sees b's voxel as blocks of level la, and so on.
            if (sa ? opaque(la, bx, y, bz) : opaque(lb, ax, y, az)) ++wouldCrack;
          }
      }
    }
  INFO("seams " << seams << ", voxel faces needed " << needed << ", missing " << missing);
  CHECK(seams > 0);
  CHECK(needed > 100);
  CHECK(missing == 0);
  return wouldCrack;
}

}  // namespace

TEST_CASE("levels of detail: seams between levels are closed, also after the viewer moves") {
  const sim::BrickStore world = makeWorld();
  // From kCentre, column (0, 0) is at level 0, (1, -1) at 2 and the others at 1.
  MeshCache cache(table(), lodConfig(2, 1000.0, 5.0, 8.0));
  cache.reset(world, kCentre);
  cache.finish(world, kCentre);
  Meshes view;
  apply(view, cache.takeChunkUpdates());
  CHECK(cache.columnLevel({0, 0}) == 0);
  CHECK(cache.columnLevel({1, 0}) == 1);
  CHECK(cache.columnLevel({1, -1}) == 2);
  checkEqual(view, levelReference(world, [&](sim::ChunkColumn c) { return cache.columnLevel(c); }));
  const std::size_t wouldCrack = checkSeamsClosed(world, view, cache);
  MESSAGE("voxel faces that would be cracks without open sides: " << wouldCrack);
  CHECK(wouldCrack > 0);

  // Moving changes some levels (others keep theirs within the hysteresis band); the
  // neighbours of each changed column re-mesh their seams with it.
  const std::array<double, 3> moved{6.0, 15.0, -3.0};
  SUBCASE("finish()") { cache.finish(world, moved); }
  SUBCASE("update() with a small budget") {
    for (int i = 0; i < 200000 && !(i > 0 && cache.idle()); ++i) {
      cache.update(world, moved, 0.05);
      apply(view, cache.takeChunkUpdates());
    }
  }
  apply(view, cache.takeChunkUpdates());
  CHECK(cache.columnLevel({0, -1}) == 0);
  CHECK(cache.columnLevel({-1, 0}) == 2);
  CHECK(cache.columnLevel({0, 0}) == 1);
  checkEqual(view, levelReference(world, [&](sim::ChunkColumn c) { return cache.columnLevel(c); }));
  checkSeamsClosed(world, view, cache);
}

TEST_CASE("levels of detail: predicted voxels are coarsened with the world's") {
  const sim::BrickStore world = makeWorld();
  sim::BrickStore edited = makeWorld();
  sim::VoxelOverlay overlay;
  MeshCache cache(table(), lodConfig(2, 1000.0, 0.001, 0.0));
  cache.setOverlay(&overlay);
  cache.reset(world, kCentre);
  cache.finish(world, kCentre);
  Meshes view;
  apply(view, cache.takeChunkUpdates());
  const Meshes before = coarseReference(world, 1);
  checkEqual(view, before);

  // Planks in the air, in the 2x2x2 block at (10, 100, 10): three of eight voxels
  // are not a majority (the block stays air), four are.
  const sim::VoxelCoord block[4] = {{10, 100, 10}, {11, 100, 10}, {10, 100, 11}, {11, 101, 11}};
  for (int i = 0; i < 3; ++i) {
    overlay.set(block[i], mat("planks"));
    edited.set(block[i], mat("planks"));
  }
  cache.markDirty(overlay.bricks());
  cache.finish(world, kCentre);
  CHECK(cache.takeChunkUpdates().empty());  // re-meshed, same coarse mesh

  overlay.set(block[3], mat("planks"));
  edited.set(block[3], mat("planks"));
  cache.markDirty(overlay.bricks());
  SUBCASE("copied out by update()") {
    for (int i = 0; i < 200000 && !cache.idle(); ++i) {
      cache.update(world, kCentre, 1e9);
      apply(view, cache.takeChunkUpdates());
    }
  }
  SUBCASE("gathered by the workers (finish)") { cache.finish(world, kCentre); }
  apply(view, cache.takeChunkUpdates());
  const Meshes after = coarseReference(edited, 1);
  checkEqual(view, after);
  CHECK(after.at({0, 0, 0}).opaque != before.at({0, 0, 0}).opaque);
}

TEST_CASE("levels of detail: a streamed world waits for columns as before and meshes as the whole world does") {
  const sim::BrickStore whole = makeWorld();
  CopySource source(whole);
  sim::BrickStore world = streamedStore(source);
  for (int z = -1; z <= 0; ++z)
    for (int x = -1; x <= 1; ++x)
      if (x != 1 || z != 0) source.deliver({x, z}, world);
  MeshCache cache(table(), lodConfig(2, 1000.0, 0.001, 0.0));
  cache.reset(world, kCentre);
  cache.finish(world, kCentre);
  Meshes view;
  apply(view, cache.takeChunkUpdates());
  CHECK(source.faults == 0);
  CHECK(cache.stats().waitingForColumns > 0);
  source.deliver({1, 0}, world);
  cache.finish(world, kCentre);
  apply(view, cache.takeChunkUpdates());
  CHECK(source.faults == 0);
  CHECK(cache.stats().waitingForColumns == 0);
  checkEqual(view, coarseReference(whole, 1));
}
