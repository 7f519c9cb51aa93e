#include "sim/world/coarse_grid.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "sim/world/brick_store.h"
#include "sim/world/material.h"

using namespace loam::sim;

namespace {

CoarseLut testLut() {
  CoarseLut lut = defaultCoarseLut();
  lut.solid[4] = 0;  // "water": not solid, part opaque
  lut.opacity[4] = 77;
  lut.solid[5] = 0;  // "leaves": nearly transparent
  lut.opacity[5] = 26;
  lut.opacity[2] = 200;
  return lut;
}

}  // namespace

TEST_CASE("coarse sums follow sums exactly") {
  CHECK(coarseFromSums(0, 0) == CoarseSample{0, 0});
  CHECK(coarseFromSums(512, 512 * 255) == CoarseSample{255, 255});
  CHECK(coarseFromSums(256, 512 * 100) == CoarseSample{128, 100});
}

TEST_CASE("uniform bricks and chunks read the lookup") {
  BrickStore s(WorldBounds{{0, 0, 0}, {16, 16, 16}}, testLut());
  CHECK(s.coarse({0, 0, 0}) == CoarseSample{0, 0});
  s.fillBrick({1, 1, 1}, 4);
  CHECK(s.coarse({1, 1, 1}) == CoarseSample{0, 77});
  s.fillChunk({0, 0, 0}, 2);
  CHECK(s.coarse({3, 3, 3}) == CoarseSample{255, 200});
  CHECK(s.coarse({-1, 0, 0}) == CoarseSample{0, 0});  // outside: air
  s.set({0, 0, 0}, kAir);
  CHECK(s.coarse({0, 0, 0}) == coarseFromSums(511, 511 * 200));
}

TEST_CASE("incremental coarse copy equals a full rebuild after random edits") {
  const WorldBounds bounds{{0, 0, 0}, {32, 16, 16}};
  BrickStore s(bounds, testLut());
  std::mt19937 rng(99);
  MaterialId buf[512];
  for (int op = 0; op < 100000; ++op) {
    unsigned kind = rng() % 100;
    VoxelCoord v{static_cast<int>(rng() % 64), static_cast<int>(rng() % 48), static_cast<int>(rng() % 64)};
    if (kind < 95) {
      s.set(v, static_cast<MaterialId>(rng() % 7));
    } else if (kind < 98) {
      for (int i = 0; i < 512; ++i) buf[i] = static_cast<MaterialId>(rng() % (1 + rng() % 20));
      s.writeBrick(brickOf(v), buf);
    } else {
      s.fillBrick(brickOf(v), static_cast<MaterialId>(rng() % 7));
    }
  }
  CHECK(verifyCoarse(s).empty());
  // Snapshot the incremental samples, rebuild from voxels, compare brick by brick.
  std::vector<CoarseSample> before;
  s.forEachBrick([&](BrickCoord b, BrickView) { before.push_back(s.coarse(b)); }, BrickFilter::All);
  s.rebuildCoarse();
  std::vector<CoarseSample> after;
  s.forEachBrick([&](BrickCoord b, BrickView) { after.push_back(s.coarse(b)); }, BrickFilter::All);
  CHECK(before == after);
  // A new lookup is applied everywhere.
  CoarseLut lut2 = testLut();
  lut2.opacity[1] = 3;
  s.setCoarseLut(lut2);
  CHECK(verifyCoarse(s).empty());
  CHECK(coarseSample(s, {0, 0, 0}) == s.coarse({0, 0, 0}));
}

TEST_CASE("lookup from the material table") {
  auto table = MaterialTable::load(LOAM_SOURCE_DIR "/sim/data/materials.toml");
  REQUIRE_MESSAGE(table.has_value(), (table ? "" : table.error().message));
  CoarseLut lut = makeCoarseLut(*table);
  CHECK(lut.solid[0] == 0);
  CHECK(lut.opacity[0] == 0);
  MaterialId stone = *table->find("stone");
  MaterialId leaves = *table->find("leaves");
  MaterialId water = *table->find("water");
  CHECK(lut.solid[stone] == 1);
  CHECK(lut.opacity[stone] == 255);
  CHECK(lut.solid[leaves] == 0);
  CHECK(lut.opacity[leaves] < 40);
  CHECK(lut.solid[water] == 0);
}
