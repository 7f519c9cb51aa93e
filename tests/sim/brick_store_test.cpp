#include "sim/world/brick_store.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "sim/world/world_hash.h"

using namespace loam::sim;

namespace {

// 2 x 1 x 2 chunks with a negative corner: 256 x 128 x 256 voxels.
WorldBounds smallBounds() { return {{-16, 0, -16}, {16, 16, 16}}; }

/// Dense reference model of a store's voxels.
struct Reference {
  explicit Reference(const WorldBounds& b) : bounds(b) {
    sx = (b.maxBrick.x - b.minBrick.x) * kBrickSize;
    sy = (b.maxBrick.y - b.minBrick.y) * kBrickSize;
    sz = (b.maxBrick.z - b.minBrick.z) * kBrickSize;
    v.assign(static_cast<std::size_t>(sx) * sy * sz, kAir);
  }
  MaterialId& at(int x, int y, int z) {
    return v[static_cast<std::size_t>(x - bounds.minBrick.x * 8) +
             static_cast<std::size_t>(sx) * (static_cast<std::size_t>(y - bounds.minBrick.y * 8) +
                                             static_cast<std::size_t>(sy) * (z - bounds.minBrick.z * 8))];
  }
  WorldBounds bounds;
  int sx, sy, sz;
  std::vector<MaterialId> v;
};

VoxelCoord voxelInBrick(BrickCoord b, int i) {
  return {b.x * 8 + (i & 7), b.y * 8 + ((i >> 3) & 7), b.z * 8 + (i >> 6)};
}

}  // namespace

TEST_CASE("empty store reads air everywhere and rejects writes outside") {
  BrickStore s(smallBounds());
  CHECK(s.get(0, 0, 0) == kAir);
  CHECK(s.get(-128, 0, -128) == kAir);
  CHECK(s.get(127, 127, 127) == kAir);
  CHECK(s.get(128, 0, 0) == kAir);
  CHECK(s.get(0, -1, 0) == kAir);
  CHECK_FALSE(s.set({128, 0, 0}, 3));
  CHECK_FALSE(s.set({0, 128, 0}, 3));
  CHECK_FALSE(s.set({-129, 0, 0}, 3));
  CHECK(s.modifiedCount() == 0);
  // Nothing is resident until something that is not air is written.
  CHECK(s.chunkCount() == 0);
  CHECK(s.set({-100, 0, -100}, kAir));
  CHECK(s.fillBrick({3, 3, 3}, kAir));
  CHECK(s.fillChunk({0, 0, 0}, kAir));
  CHECK(s.chunkCount() == 0);
  CHECK(s.set({-128, 0, -128}, 3));
  CHECK(s.chunkCount() == 1);
  CHECK(s.chunkIndex({-1, 0, -1}) == 0);
  CHECK(s.chunkIndex({0, 0, 0}) == -1);
  CHECK(s.chunkIsAir({0, 0, 0}));
  CHECK_FALSE(s.chunkIsAir({-1, 0, -1}));
  CHECK(s.get(-128, 0, -128) == 3);
  CHECK(s.get(-127, 0, -128) == kAir);
}

TEST_CASE("chunks far apart in a world kilometres across cost only themselves") {
  // +-32 km horizontally, 512 m high: 10,000 x 80 x 10,000 chunks, none allocated.
  constexpr int kHalf = 5000 * 16;  // bricks
  BrickStore s(WorldBounds{{-kHalf, -640, -kHalf}, {kHalf, 640, kHalf}});
  CHECK(s.memoryBytes() == 0);
  const VoxelCoord far[] = {{-kHalf * 8, -5120, -kHalf * 8}, {kHalf * 8 - 1, 5119, kHalf * 8 - 1}, {0, 0, 0},
                            {-kHalf * 8, 0, kHalf * 8 - 1}};
  for (const VoxelCoord& v : far) CHECK(s.set(v, 9));
  CHECK_FALSE(s.set({kHalf * 8, 0, 0}, 9));
  CHECK(s.chunkCount() == 4);
  for (const VoxelCoord& v : far) CHECK(s.get(v) == 9);
  CHECK(s.get(1, 0, 0) == kAir);
  CHECK(s.memoryBytes() < 4 * 12000);  // four expanded chunks of one mixed brick each
  // Canonical order: z, then y, then x.
  std::vector<ChunkCoord> order;
  for (int i : s.canonicalChunks()) order.push_back(s.chunkCoord(i));
  REQUIRE(order.size() == 4);
  CHECK(order[0] == ChunkCoord{-5000, -40, -5000});
  CHECK(order[1] == ChunkCoord{0, 0, 0});
  CHECK(order[2] == ChunkCoord{-5000, 0, 4999});
  CHECK(order[3] == ChunkCoord{4999, 39, 4999});
}

TEST_CASE("validBounds requires chunk-aligned non-empty bounds") {
  CHECK(BrickStore::validBounds({{0, 0, 0}, {16, 16, 16}}));
  CHECK(BrickStore::validBounds({{-32, -16, 0}, {16, 16, 48}}));
  CHECK_FALSE(BrickStore::validBounds({{0, 0, 0}, {0, 16, 16}}));
  CHECK_FALSE(BrickStore::validBounds({{0, 0, 0}, {8, 16, 16}}));
  CHECK_FALSE(BrickStore::validBounds({{4, 0, 0}, {20, 16, 16}}));
  CHECK_FALSE(BrickStore::validBounds({{16, 0, 0}, {0, 16, 16}}));
}

TEST_CASE("palette grows 1 -> 2 -> 4 -> 8 bits and shrinks back to uniform") {
  BrickStore s(smallBounds());
  BrickCoord b{1, 2, 3};
  s.fillBrick(b, 5);
  CHECK(s.brick(b).isUniform());
  CHECK(s.brick(b).uniformMaterial() == 5);
  // Materials 10, 11, ... one voxel each.
  const int expectBits[] = {1, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 8, 8, 8, 8};
  for (int k = 0; k < 19; ++k) {
    s.set(voxelInBrick(b, k), static_cast<MaterialId>(10 + k));
    CHECK(s.brick(b).bitsPerVoxel() == expectBits[k]);
    CHECK(s.brick(b).distinctMaterials() == k + 2);
  }
  for (int k = 0; k < 19; ++k) CHECK(s.get(voxelInBrick(b, k)) == 10 + k);
  CHECK(s.get(voxelInBrick(b, 19)) == 5);
  // Remove them again from the last: the palette shrinks when the rest fits.
  for (int k = 18; k >= 0; --k) {
    s.set(voxelInBrick(b, k), 5);
    BrickView v = s.brick(b);
    if (k == 0) {
      CHECK(v.isUniform());
      CHECK(v.uniformMaterial() == 5);
    } else {
      int distinct = k + 1;
      CHECK(v.distinctMaterials() == distinct);
      int want = distinct <= 2 ? 1 : distinct <= 4 ? 2 : distinct <= 16 ? 4 : 8;
      CHECK(v.bitsPerVoxel() == want);
    }
  }
}

TEST_CASE("a hole left by a vanished material is reused before growing") {
  BrickStore s(smallBounds());
  BrickCoord b{0, 0, 0};
  s.fillBrick(b, 1);
  s.set(voxelInBrick(b, 0), 2);
  s.set(voxelInBrick(b, 1), 3);
  s.set(voxelInBrick(b, 2), 4);  // 4 materials: 2 bits
  CHECK(s.brick(b).bitsPerVoxel() == 2);
  s.set(voxelInBrick(b, 1), 1);  // 3 disappears: 3 left, still 2 bits, one hole
  CHECK(s.brick(b).bitsPerVoxel() == 2);
  s.set(voxelInBrick(b, 3), 7);  // takes the hole
  CHECK(s.brick(b).bitsPerVoxel() == 2);
  CHECK(s.brick(b).distinctMaterials() == 4);
  MaterialId out[512];
  s.readBrick(b, out);
  CHECK(out[0] == 2);
  CHECK(out[1] == 1);
  CHECK(out[2] == 4);
  CHECK(out[3] == 7);
  CHECK(std::count(out, out + 512, MaterialId{1}) == 509);
}

TEST_CASE("writeBrick picks the smallest encoding and readBrick returns it") {
  BrickStore s(smallBounds());
  std::mt19937 rng(7);
  for (int distinct : {1, 2, 3, 4, 5, 16, 17, 200}) {
    MaterialId v[512];
    for (int i = 0; i < 512; ++i) v[i] = static_cast<MaterialId>(i < distinct ? i : rng() % distinct);
    std::shuffle(v, v + 512, rng);
    BrickCoord b{distinct % 16, 1, 2};
    CHECK(s.writeBrick(b, v));
    BrickView view = s.brick(b);
    int want = distinct == 1 ? 0 : distinct <= 2 ? 1 : distinct <= 4 ? 2 : distinct <= 16 ? 4 : 8;
    CHECK(view.bitsPerVoxel() == want);
    MaterialId out[512];
    s.readBrick(b, out);
    CHECK(std::equal(v, v + 512, out));
    for (int i = 0; i < 512; ++i) CHECK(view.at(i) == v[i]);
  }
  MaterialId v[512] = {};
  CHECK_FALSE(s.writeBrick({16, 0, 0}, v));
  CHECK_FALSE(s.fillBrick({0, 16, 0}, 1));
}

TEST_CASE("chunks collapse to one material") {
  BrickStore s(smallBounds());
  ChunkCoord cc{0, 0, 0};
  int ci = s.addChunk(cc);
  REQUIRE(ci >= 0);
  CHECK(s.addChunk(cc) == ci);
  CHECK(s.addChunk({1, 0, 0}) == -1);  // outside the bounds
  // Fill brick by brick, as a generator might: expanded until compacted.
  for (int z = 0; z < 16; ++z)
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 16; ++x) s.fillBrick({x, y, z}, 6);
  CHECK_FALSE(s.chunkIsCollapsed(ci));
  CHECK(s.chunkUniform(ci) == MaterialId{6});
  CHECK(s.compactChunk(cc));
  CHECK(s.chunkIsCollapsed(ci));
  CHECK(s.get(5, 5, 5) == 6);
  // One voxel changed and back: the brick and then the chunk collapse again.
  s.set({5, 5, 5}, 2);
  CHECK_FALSE(s.chunkIsCollapsed(ci));
  CHECK(s.brick({0, 0, 0}).bitsPerVoxel() == 1);
  s.set({5, 5, 5}, 6);
  CHECK(s.brick({0, 0, 0}).isUniform());
  CHECK(s.chunkIsCollapsed(ci));
  // fillChunk frees storage at once.
  s.set({1, 1, 1}, 3);
  CHECK(s.fillChunk(cc, 9));
  CHECK(s.chunkIsCollapsed(ci));
  CHECK(s.get(1, 1, 1) == 9);
  // Mixed chunks do not collapse; compacting keeps content.
  s.set({1, 1, 1}, 3);
  s.set({100, 1, 1}, 4);
  CHECK_FALSE(s.compactChunk(cc));
  CHECK(s.get(1, 1, 1) == 3);
  CHECK(s.get(100, 1, 1) == 4);
  CHECK(s.get(2, 1, 1) == 9);
}

TEST_CASE("random operations agree with a dense reference model") {
  const WorldBounds bounds = smallBounds();
  BrickStore s(bounds);
  Reference ref(bounds);
  std::mt19937 rng(12345);
  auto randInt = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1)); };
  // Writes concentrate in a 6x4x6-brick region so bricks get many materials; some
  // land anywhere, some outside.
  auto randVoxel = [&]() -> VoxelCoord {
    if (rng() % 8 == 0) return {randInt(-140, 140), randInt(-10, 140), randInt(-140, 140)};
    return {randInt(-24, 23), randInt(0, 31), randInt(-24, 23)};
  };
  auto randMat = [&]() -> MaterialId {
    unsigned r = rng() % 100;
    if (r < 40) return kAir;
    if (r < 90) return static_cast<MaterialId>(1 + rng() % 4);
    return static_cast<MaterialId>(rng() % 256);
  };
  MaterialId buf[512];
  for (int op = 0; op < 200000; ++op) {
    unsigned kind = rng() % 1000;
    if (kind < 970) {
      VoxelCoord v = randVoxel();
      MaterialId m = randMat();
      bool inside = bounds.containsVoxel(v);
      CHECK(s.set(v, m) == inside);
      if (inside) ref.at(v.x, v.y, v.z) = m;
    } else if (kind < 985) {
      VoxelCoord v = randVoxel();
      BrickCoord b = brickOf(v);
      unsigned distinct = 1 + rng() % 20;
      for (int i = 0; i < 512; ++i) buf[i] = static_cast<MaterialId>(rng() % distinct);
      bool inside = bounds.containsBrick(b);
      CHECK(s.writeBrick(b, buf) == inside);
      if (inside)
        for (int i = 0; i < 512; ++i) {
          VoxelCoord w = voxelInBrick(b, i);
          ref.at(w.x, w.y, w.z) = buf[i];
        }
    } else if (kind < 995) {
      VoxelCoord v = randVoxel();
      BrickCoord b = brickOf(v);
      MaterialId m = randMat();
      bool inside = bounds.containsBrick(b);
      CHECK(s.fillBrick(b, m) == inside);
      if (inside)
        for (int i = 0; i < 512; ++i) {
          VoxelCoord w = voxelInBrick(b, i);
          ref.at(w.x, w.y, w.z) = m;
        }
    } else if (kind < 998) {
      s.compactChunk(chunkOf(brickOf(randVoxel())));
    } else {
      // Probe reads.
      for (int k = 0; k < 64; ++k) {
        VoxelCoord v = randVoxel();
        MaterialId want = bounds.containsVoxel(v) ? ref.at(v.x, v.y, v.z) : kAir;
        REQUIRE(s.get(v) == want);
      }
    }
  }
  // Every voxel, and every brick view.
  std::size_t mismatches = 0;
  for (int z = -128; z < 128; ++z)
    for (int y = 0; y < 128; ++y)
      for (int x = -128; x < 128; ++x) mismatches += s.get(x, y, z) != ref.at(x, y, z);
  CHECK(mismatches == 0);
  s.forEachBrick(
      [&](BrickCoord b, BrickView v) {
        if (!v.isUniform()) {
          CHECK(v.distinctMaterials() >= 2);
          int want = v.distinctMaterials() <= 2 ? 1 : v.distinctMaterials() <= 4 ? 2 : v.distinctMaterials() <= 16 ? 4 : 8;
          CHECK(v.bitsPerVoxel() == want);
        }
        for (int i = 0; i < 512; i += 37) {
          VoxelCoord w = voxelInBrick(b, i);
          REQUIRE(v.at(i) == ref.at(w.x, w.y, w.z));
        }
      },
      BrickFilter::All);
  // Compacting everything changes nothing visible.
  std::uint64_t before = worldHash(s);
  s.compactAll();
  CHECK(worldHash(s) == before);
  // A copy equals the original.
  BrickStore copy = s;
  CHECK(worldHash(copy) == before);
}

TEST_CASE("iteration is in canonical order and filters") {
  BrickStore s(smallBounds());
  s.set({0, 0, 0}, 1);          // mixed brick in chunk (0,0,0)
  s.fillBrick({-16, 3, -16}, 2);  // uniform non-air brick in chunk (-1,0,-1)
  s.fillBrick({5, 0, -1}, 3);     // chunk (0,0,-1)
  std::vector<BrickCoord> seen;
  s.forEachBrick([&](BrickCoord b, BrickView) { seen.push_back(b); });
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == BrickCoord{-16, 3, -16});
  CHECK(seen[1] == BrickCoord{5, 0, -1});
  CHECK(seen[2] == BrickCoord{0, 0, 0});
  std::vector<BrickCoord> mixed;
  s.forEachBrick([&](BrickCoord b, BrickView) { mixed.push_back(b); }, BrickFilter::Mixed);
  REQUIRE(mixed.size() == 1);
  CHECK(mixed[0] == BrickCoord{0, 0, 0});
  std::size_t all = 0;
  s.forEachBrick([&](BrickCoord, BrickView) { ++all; }, BrickFilter::All);
  CHECK(all == 3u * 4096u);  // the resident chunks (the rest reads as air)
}

TEST_CASE("box query returns whole bricks overlapping the box") {
  BrickStore s(smallBounds());
  s.fillBrick({0, 0, 0}, 1);
  s.fillBrick({1, 0, 0}, 1);
  s.set({23, 7, 7}, 2);   // brick (2,0,0)
  s.fillBrick({3, 0, 0}, 1);  // outside the box below
  std::vector<BrickHit> hits;
  // Voxels [7, 17) x [0, 8) x [0, 8): bricks x 0..2.
  CHECK(s.queryBox({{7, 0, 0}, {17, 8, 8}}, hits) == 3);
  REQUIRE(hits.size() == 3);
  CHECK(hits[0].coord == BrickCoord{0, 0, 0});
  CHECK(hits[1].coord == BrickCoord{1, 0, 0});
  CHECK(hits[2].coord == BrickCoord{2, 0, 0});
  CHECK(hits[2].view.get(7, 7, 7) == 2);
  CHECK_FALSE(hits[2].view.isUniform());
  hits.clear();
  CHECK(s.queryBox({{7, 0, 0}, {16, 8, 8}}, hits) == 2);  // max is exclusive
  hits.clear();
  CHECK(s.queryBox({{-1000, -1000, -1000}, {1000, 1000, 1000}}, hits) == 4);  // clipped
  hits.clear();
  CHECK(s.queryBox({{0, 0, 0}, {16, 16, 8}}, hits, BrickFilter::All) == 4);
  hits.clear();
  CHECK(s.queryBox({{5, 5, 5}, {5, 9, 9}}, hits, BrickFilter::All) == 0);  // empty box
  // Negative coordinates round toward -inf.
  s.fillBrick({-1, 0, -1}, 4);
  hits.clear();
  CHECK(s.queryBox({{-1, 0, -1}, {0, 1, 0}}, hits) == 1);
  CHECK(hits[0].coord == BrickCoord{-1, 0, -1});
}

TEST_CASE("change tracking: independent subscribers, modified since generation") {
  BrickStore s(smallBounds());
  const ChangeSubscriber stream = s.subscribeChanges();
  const ChangeSubscriber mesh = s.subscribeChanges();
  const ChangeSubscriber audio = s.subscribeChanges();
  const ChangeSubscriber all[] = {stream, mesh, audio, s.subscribeChanges()};
  s.fillBrick({0, 0, 0}, 1);
  s.set({100, 3, 3}, 2);
  CHECK(s.isModified({0, 0, 0}));
  s.markGenerated();
  CHECK(s.modifiedCount() == 0);
  CHECK_FALSE(s.isChanged({0, 0, 0}, mesh));

  CHECK(s.set({1, 1, 1}, 2));
  CHECK(s.set({-50, 60, 70}, 3));
  CHECK(s.set({100, 3, 3}, 2));  // same value: no change
  for (const ChangeSubscriber sub : all) {
    CHECK(s.isChanged({0, 0, 0}, sub));
    CHECK(s.isChanged({-7, 7, 8}, sub));
    CHECK_FALSE(s.isChanged({12, 0, 0}, sub));
  }
  CHECK(s.modifiedCount() == 2);

  std::vector<BrickCoord> meshed = s.takeChanged(mesh);
  REQUIRE(meshed.size() == 2);
  CHECK(meshed[0] == BrickCoord{-7, 7, 8});  // chunk (-1,0,0) precedes chunk (0,0,0)
  CHECK(meshed[1] == BrickCoord{0, 0, 0});
  CHECK(s.takeChanged(mesh).empty());
  CHECK(s.isChanged({0, 0, 0}, stream));  // other consumers keep theirs
  s.clearChanged({0, 0, 0}, stream);
  CHECK_FALSE(s.isChanged({0, 0, 0}, stream));
  CHECK(s.isChanged({-7, 7, 8}, stream));
  CHECK(s.isModified({0, 0, 0}));

  // Identical writes do not mark.
  MaterialId buf[512];
  s.readBrick({0, 0, 0}, buf);
  s.clearChanged(audio);
  s.writeBrick({0, 0, 0}, buf);
  s.fillBrick({5, 5, 5}, kAir);
  CHECK_FALSE(s.isChanged({0, 0, 0}, audio));
  CHECK_FALSE(s.isChanged({5, 5, 5}, audio));
  // A write that changes content does.
  buf[7] = 9;
  s.writeBrick({0, 0, 0}, buf);
  CHECK(s.isChanged({0, 0, 0}, audio));

  std::vector<BrickCoord> modified;
  s.forEachModified([&](BrickCoord b) { modified.push_back(b); });
  CHECK(modified.size() == 2);
  s.markGenerated();
  CHECK(s.modifiedCount() == 0);
  CHECK_FALSE(s.isChanged({0, 0, 0}, stream));
}

TEST_CASE("adopted chunks arrive as generated content: changed for subscribers, never modified") {
  BrickStore world(smallBounds());
  const ChangeSubscriber mesh = world.subscribeChanges();
  world.markGenerated();
  CHECK(world.set({-3, 3, 3}, 4));  // an edit in chunk (-1, 0, 0) before anything arrives

  BrickStore arriving(smallBounds());
  arriving.fillBrick({2, 2, 2}, 1);    // chunk (0, 0, 0)
  arriving.set({-9, 9, 9}, 2);         // chunk (-1, 0, 0): resident in world, kept as it is
  arriving.set({20, 1, -20}, 3);       // chunk (0, 0, -1)
  arriving.set({20, 1, -20}, kAir);    // ... then all air again: not adopted
  CHECK(world.adoptChunks(arriving) == 1);

  CHECK(world.get({2 * 8 + 1, 2 * 8 + 1, 2 * 8 + 1}) == 1);
  CHECK(world.get({-9, 9, 9}) == kAir);  // the world's chunk won
  CHECK(world.get({-3, 3, 3}) == 4);
  CHECK(arriving.get({-9, 9, 9}) == 2);  // and the arriving one stayed where it was
  CHECK(world.chunkIndex({0, 0, -1}) < 0);
  CHECK(world.isChanged({2, 2, 2}, mesh));
  CHECK(world.isChanged({0, 15, 15}, mesh));  // every brick of a new chunk is news
  CHECK_FALSE(world.isModified({2, 2, 2}));
  CHECK(world.modifiedCount() == 1);  // only the edit
  // The first edit of an adopted brick keeps what was generated.
  CHECK(world.set({17, 17, 17}, 5));
  CHECK(world.isModified({2, 2, 2}));
  const int slot = world.chunkIndex({0, 0, 0});
  CHECK_FALSE(world.brickMatchesGenerated(slot, brickIndexInChunk({2, 2, 2})));
  CHECK(world.set({17, 17, 17}, 1));
  CHECK(world.brickMatchesGenerated(slot, brickIndexInChunk({2, 2, 2})));
}

TEST_CASE("uniform chunks cost almost nothing; memory is accounted") {
  BrickStore s(WorldBounds{{0, 0, 0}, {64, 32, 64}});  // 32 chunks
  CHECK(s.memoryBytes() == 0);
  for (int z = 0; z < 4; ++z)
    for (int x = 0; x < 4; ++x) s.fillChunk({x, 0, z}, 5);
  s.markGenerated();
  const std::size_t uniform = s.memoryBytes();
  CHECK(uniform < 16 * 200);
  s.set({3, 130, 3}, 1);  // one mixed brick in an air chunk
  s.markGenerated();
  StoreMemoryStats st = s.memoryStats();
  CHECK(st.expandedChunks == 1);
  CHECK(st.mixedBricks[0] == 1);
  CHECK(st.uniformBricks == 4095);
  CHECK(st.totalBytes == s.memoryBytes());
  CHECK(s.memoryBytes() < uniform + 9500);  // one expanded chunk (and a slot more)
}

TEST_CASE("different chunks can be written from different threads") {
  const WorldBounds bounds{{0, 0, 0}, {64, 16, 64}};  // 16 chunks
  auto fill = [](BrickStore& s, int chunkIndex) {
    ChunkCoord cc = s.chunkCoord(chunkIndex);
    std::mt19937 rng(static_cast<unsigned>(chunkIndex));
    MaterialId buf[512];
    for (int local = 0; local < 4096; local += 3) {
      BrickCoord b{cc.x * 16 + (local & 15), cc.y * 16 + ((local >> 4) & 15), cc.z * 16 + (local >> 8)};
      for (int i = 0; i < 512; ++i) buf[i] = static_cast<MaterialId>(rng() % 3);
      if (local % 2) s.fillBrick(b, static_cast<MaterialId>(rng() % 4));
      else s.writeBrick(b, buf);
    }
    s.compactChunk(cc);
  };
  // Threads may write only resident chunks: make them resident first, as the generator does.
  auto addAll = [&](BrickStore& s) {
    for (int z = 0; z < 4; ++z)
      for (int x = 0; x < 4; ++x) s.addChunk({x, 0, z});
  };
  BrickStore serial(bounds);
  addAll(serial);
  for (int i = 0; i < serial.chunkCount(); ++i) fill(serial, i);
  BrickStore parallel(bounds);
  addAll(parallel);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = t; i < parallel.chunkCount(); i += 4) fill(parallel, i);
    });
  for (auto& th : threads) th.join();
  CHECK(worldHash(parallel) == worldHash(serial));
}

TEST_CASE("canonical packed form depends only on content and round trips") {
  BrickStore a(smallBounds());
  BrickStore b(smallBounds());
  std::mt19937 rng(77);
  MaterialId want[512];
  std::uint8_t fa[BrickView::kMaxPackedBytes], fb[BrickView::kMaxPackedBytes], fv[BrickView::kMaxPackedBytes];
  for (int trial = 0; trial < 300; ++trial) {
    BrickCoord c{trial % 16, (trial / 16) % 16, 0};
    unsigned distinct = 1 + rng() % (trial % 3 == 0 ? 30 : 6);
    for (int i = 0; i < 512; ++i) want[i] = static_cast<MaterialId>(40 + rng() % distinct);
    // a: written whole (ascending palette); b: reached by edits through other
    // materials, leaving holes and an unsorted palette.
    a.writeBrick(c, want);
    b.fillBrick(c, 200);
    for (int i = 0; i < 512; ++i) b.set(voxelInBrick(c, i), static_cast<MaterialId>(i % 7));
    for (int i = 511; i >= 0; --i) b.set(voxelInBrick(c, i), want[i]);
    std::size_t la = a.brick(c).packCanonical(fa);
    std::size_t lb = b.brick(c).packCanonical(fb);
    std::size_t lv = packCanonical(want, fv);
    REQUIRE(la == lb);
    REQUIRE(la == lv);
    CHECK(std::equal(fa, fa + la, fb));
    CHECK(std::equal(fa, fa + la, fv));
    MaterialId back[512];
    REQUIRE(unpackCanonical(fa, la, back) == la);
    CHECK(std::equal(back, back + 512, want));
    CHECK(unpackCanonical(fa, la - 1, back) == 0);  // short input
  }
  // Malformed forms are rejected.
  MaterialId out[512];
  std::uint8_t bad[BrickView::kMaxPackedBytes] = {};
  bad[0] = 9;
  CHECK(unpackCanonical(bad, sizeof bad, out) == 0);  // tag
  bad[0] = 1;
  bad[1] = 3;  // 3 materials need 2 bits, not 1
  CHECK(unpackCanonical(bad, sizeof bad, out) == 0);
  bad[0] = 2;
  bad[2] = 5;
  bad[3] = 5;
  bad[4] = 6;  // not ascending
  CHECK(unpackCanonical(bad, sizeof bad, out) == 0);
  bad[3] = 6;
  bad[4] = 7;
  bad[5] = 0xFF;  // index 3 past a 3-entry palette
  CHECK(unpackCanonical(bad, sizeof bad, out) == 0);
  bad[5] = 0x24;  // indices 0, 1, 2, 0
  CHECK(unpackCanonical(bad, sizeof bad, out) == 2 + 3 + 128);
  CHECK(out[0] == 5);
  CHECK(out[1] == 6);
  CHECK(out[2] == 7);
}

TEST_CASE("generated content of modified bricks is kept after markGenerated") {
  BrickStore s(smallBounds());
  s.fillChunk({0, 0, 0}, 5);
  s.set({1, 1, 1}, 2);
  MaterialId buf[512];
  CHECK_FALSE(s.generatedBrick({0, 0, 0}, buf));  // not tracked before markGenerated
  s.markGenerated();
  MaterialId gen[512];
  s.readBrick({0, 0, 0}, gen);
  CHECK_FALSE(s.generatedBrick({0, 0, 0}, buf));  // unmodified
  s.set({2, 2, 2}, 7);
  s.set({3, 2, 2}, 7);
  s.fillBrick({1, 0, 0}, 9);
  s.fillChunk({-1, 0, -1}, 3);
  REQUIRE(s.generatedBrick({0, 0, 0}, buf));
  CHECK(std::equal(buf, buf + 512, gen));  // the content before the first change
  REQUIRE(s.generatedBrick({1, 0, 0}, buf));
  CHECK(std::all_of(buf, buf + 512, [](MaterialId m) { return m == 5; }));
  REQUIRE(s.generatedBrick({-16, 15, -16}, buf));
  CHECK(std::all_of(buf, buf + 512, [](MaterialId m) { return m == kAir; }));
  CHECK_FALSE(s.generatedBrick({2, 0, 0}, buf));
  BrickStore copy = s;
  CHECK(copy.generatedBrick({1, 0, 0}, buf));
  s.markGenerated();
  CHECK_FALSE(s.generatedBrick({0, 0, 0}, buf));
}

// ---- streaming (setColumnSource) ----------------------------------------------------

namespace {

/// A column source whose generated content is a floor: voxel y < 10 + column x is
/// material 2 + (column z & 1). Counts its faults.
struct FloorSource final : ColumnSource {
  explicit FloorSource(WorldBounds b) : bounds(b) {}
  void fault(ChunkColumn c, BrickStore& store) override {
    ++faults;
    BrickStore made(bounds);
    const MaterialId m = static_cast<MaterialId>(2 + (c.z & 1));
    for (int z = c.z * 128; z < c.z * 128 + 128; ++z)
      for (int x = c.x * 128; x < c.x * 128 + 128; ++x)
        for (int y = 0; y < 10 + c.x; ++y) made.set(x, y, z, m);
    store.adoptColumn(c, made);
  }
  static MaterialId expected(int x, int y, int z) {
    const int cx = x >> 7, cz = z >> 7;
    return y < 10 + cx ? static_cast<MaterialId>(2 + (cz & 1)) : kAir;
  }
  WorldBounds bounds;
  int faults = 0;
};

}  // namespace

TEST_CASE("streamed store: the first read or write of a column generates it, once; releases keep edits") {
  const WorldBounds wb = smallBounds();
  FloorSource source(wb);
  BrickStore s(wb);
  s.markGenerated();
  s.setColumnSource(&source);
  CHECK(!s.columnPresent({0, 0}));
  CHECK(s.chunkCount() == 0);

  // A read of the sky of a column generates the column (the read must not depend on it).
  CHECK(s.get(5, 100, 5) == kAir);
  CHECK(source.faults == 1);
  CHECK(s.columnPresent({0, 0}));
  CHECK(s.get(5, 3, 5) == FloorSource::expected(5, 3, 5));
  CHECK(source.faults == 1);
  // Brick views, box queries and writes fault too.
  CHECK(s.brick(BrickCoord{-16, 0, 0}).uniformMaterial() == FloorSource::expected(-128, 0, 0));
  CHECK(source.faults == 2);
  CHECK(s.set(VoxelCoord{-1, 50, -1}, 7));
  CHECK(source.faults == 3);
  CHECK(s.get(-1, 2, -1) == FloorSource::expected(-1, 2, -1));  // the write kept the generated floor
  CHECK(!s.chunkIsAir(ChunkCoord{0, 0, -1}));
  CHECK(source.faults == 4);
  // Outside the bounds nothing faults.
  CHECK(s.get(10000, 0, 0) == kAir);
  CHECK(source.faults == 4);
  CHECK(s.presentColumns().size() == 4);

  // Every voxel reads as the generated floor plus the one edit, whatever is present.
  auto matches = [&] {
    for (int z = -128; z < 128; z += 7)
      for (int x = -128; x < 128; x += 5)
        for (int y = 0; y < 128; y += 3) {
          const MaterialId want = (x == -1 && y == 50 && z == -1) ? 7 : FloorSource::expected(x, y, z);
          if (s.get(x, y, z) != want) return false;
        }
    return s.get(-1, 50, -1) == 7;
  };
  CHECK(matches());
  const std::uint64_t hash = worldHash(s);

  // Releasing everything keeps the modified column; the others come back on the next read.
  const std::vector<ChunkColumn> all{{-1, -1}, {0, -1}, {-1, 0}, {0, 0}};
  CHECK(s.releaseColumns(all) == 3);
  CHECK(s.columnPresent({-1, -1}));
  CHECK(!s.columnPresent({0, 0}));
  CHECK(s.presentColumns().size() == 1);
  CHECK(worldHash(s) == hash);
  const int before = source.faults;
  CHECK(matches());
  CHECK(source.faults == before + 3);
  CHECK(worldHash(s) == hash);

  // A copy shares the source and what is present.
  BrickStore copy = s;
  CHECK(copy.columnSource() == &source);
  CHECK(copy.columnPresent({0, 0}));
  CHECK(copy.get(-1, 50, -1) == 7);
}

TEST_CASE("streamed store: slotEpoch counts renumberings (releases, markGenerated), not writes or arrivals") {
  const WorldBounds wb = smallBounds();
  FloorSource source(wb);
  BrickStore s(wb);
  CHECK(s.slotEpoch() == 0);
  s.markGenerated();
  const std::uint64_t e0 = s.slotEpoch();
  CHECK(e0 != 0);
  s.setColumnSource(&source);
  // Columns arriving, writes and compaction only append slots or change content:
  // every slot keeps its chunk.
  CHECK(s.get(5, 3, 5) != kAir);
  CHECK(s.get(-5, 3, -5) != kAir);
  const ChunkCoord c0 = s.chunkCoord(0);
  CHECK(s.set(VoxelCoord{-1, 50, -1}, 7));
  CHECK(s.set(VoxelCoord{5, 3, 5}, kAir));
  CHECK(s.fillBrick(BrickCoord{3, 0, 3}, 9));
  s.compactAll();
  CHECK(s.slotEpoch() == e0);
  CHECK(s.chunkCoord(0) == c0);
  // A release that releases nothing (every column modified or absent) renumbers nothing.
  CHECK(s.releaseColumns(std::vector<ChunkColumn>{{-1, -1}, {5, 5}}) == 0);
  CHECK(s.slotEpoch() == e0);
  // Streaming the untouched columns out renumbers; so does markGenerated.
  CHECK(s.get(-5, 3, 100) != kAir);  // column (-1, 0), unmodified
  CHECK(s.releaseColumns(std::vector<ChunkColumn>{{-1, 0}}) == 1);
  const std::uint64_t e1 = s.slotEpoch();
  CHECK(e1 != e0);
  BrickStore copy = s;
  CHECK(copy.slotEpoch() == e1);
  s.markGenerated();
  CHECK(s.slotEpoch() != e1);
}
