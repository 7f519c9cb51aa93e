// Surface changes (sim/world/surface_change.h): the rise of a patch since generation,
// summed over its 256 columns, on the hand-built stone floor (top voxel y = -1).
#include <doctest/doctest.h>

#include "sim/world/material_lut.h"
#include "sim/world/surface_change.h"
#include "tests/sim/sim_fixture.h"

namespace {

using namespace loam;
using test::mat;

struct Floor {
  sim::BrickStore world;
  sim::MaterialLut lut = sim::makeMaterialLut(*test::testMaterials());
  sim::MaterialMask trees = sim::treePartsOf(*test::testMaterials());
  sim::SurfaceChange at(std::int32_t x, std::int32_t z) const { return sim::surfaceChange(world, lut, trees, x, z); }
};

/// The floor with a generated tree: a 3 x 3 wood trunk 40 voxels tall at voxel (20..22, 4..6).
sim::BrickStore floorWithTree() {
  sim::Scene s = test::testScene();
  sim::BrickStore w(s.worldBounds, sim::makeCoarseLut(*s.materials));
  for (int cz = -2; cz < 2; ++cz)
    for (int cx = -2; cx < 2; ++cx) w.fillChunk(sim::ChunkCoord{cx, -1, cz}, mat("stone"));
  for (int y = 0; y < 40; ++y)
    for (int z = 4; z < 7; ++z)
      for (int x = 20; x < 23; ++x) w.set(x, y, z, mat("wood"));
  w.markGenerated();
  return w;
}

TEST_CASE("surface change: patches, digs, builds, and trees that were never ground") {
  CHECK(sim::surfacePatchOf(0) == 0);
  CHECK(sim::surfacePatchOf(7) == 0);
  CHECK(sim::surfacePatchOf(8) == 1);
  CHECK(sim::surfacePatchOf(-8) == 0);
  CHECK(sim::surfacePatchOf(-9) == -1);
  CHECK(sim::surfacePatchOf(23) == 1);
  CHECK(sim::surfacePatchOf(24) == 2);

  Floor f{floorWithTree()};
  // As generated: nothing changed, the tree included.
  for (std::int32_t z = -2; z <= 2; ++z)
    for (std::int32_t x = -2; x <= 2; ++x) CHECK(f.at(x, z) == sim::SurfaceChange{x, z, 0, sim::kAir});

  SUBCASE("a whole patch dug one voxel deep sinks by its 256 columns, its top now stone below") {
    for (int z = -8; z < 8; ++z)
      for (int x = -8; x < 8; ++x) f.world.set(x, -1, z, sim::kAir);
    CHECK(f.at(0, 0) == sim::SurfaceChange{0, 0, -256, mat("stone")});
    CHECK(f.at(1, 0).rise == 0);
    CHECK(f.at(0, -1).rise == 0);
  }
  SUBCASE("a 4 x 4 hole 3 deep: -48, too small a share to change the material") {
    for (int y = -3; y < 0; ++y)
      for (int z = 0; z < 4; ++z)
        for (int x = 10; x < 14; ++x) f.world.set(x, y, z, sim::kAir);
    CHECK(f.at(1, 0) == sim::SurfaceChange{1, 0, -48, sim::kAir});
  }
  SUBCASE("a planks tower 10 high on one column rises 10; over more than half the patch, planks show") {
    for (int y = 0; y < 10; ++y) f.world.set(-20, y, -20, mat("planks"));
    CHECK(f.at(-1, -1).rise == 10);
    for (int z = -24; z < -8; ++z)
      for (int x = -24; x < -8; ++x)
        if (x < -12) f.world.set(x, 0, z, mat("brick"));
    const sim::SurfaceChange c = f.at(-1, -1);
    CHECK(c.rise == 10 + 12 * 16 - 1);
    CHECK(c.material == mat("brick"));
  }
  SUBCASE("a felled tree changes nothing; digging under it still counts") {
    for (int y = 0; y < 40; ++y)
      for (int z = 4; z < 7; ++z)
        for (int x = 20; x < 23; ++x) f.world.set(x, y, z, sim::kAir);
    CHECK(f.at(1, 0).rise == 0);
    f.world.set(20, -1, 4, sim::kAir);
    CHECK(f.at(1, 0).rise == -1);
  }
  SUBCASE("a tree burnt to charcoal and ash stands where it stood: nothing changed") {
    for (int y = 0; y < 40; ++y)
      for (int z = 4; z < 7; ++z)
        for (int x = 20; x < 23; ++x) f.world.set(x, y, z, y < 20 ? mat("ash") : mat("charcoal"));
    CHECK(f.at(1, 0).rise == 0);
  }
  SUBCASE("building on the tree's top counts what grew") {
    f.world.set(21, 40, 5, mat("planks"));
    CHECK(f.at(1, 0).rise == 1);
  }
}

TEST_CASE("surface change: a store never marked generated has none; patches at the bounds read what is inside") {
  sim::Scene s = test::testScene();
  sim::BrickStore w(s.worldBounds, sim::makeCoarseLut(*s.materials));
  w.fillChunk(sim::ChunkCoord{0, -1, 0}, mat("stone"));
  const sim::MaterialLut lut = sim::makeMaterialLut(*s.materials);
  const sim::MaterialMask trees = sim::treePartsOf(*s.materials);
  w.set(3, -1, 3, sim::kAir);
  CHECK(sim::surfaceChange(w, lut, trees, 0, 0).rise == 0);

  Floor f{test::flatWorld()};
  // The world spans voxels [-256, 256): patch 16 is half inside.
  for (int z = 120; z < 136; ++z)
    for (int x = 248; x < 256; ++x) f.world.set(x, -1, z, sim::kAir);
  CHECK(f.at(16, 8).rise == -8 * 16);
  CHECK(f.at(17, 8).rise == 0);  // wholly outside
}

}  // namespace
