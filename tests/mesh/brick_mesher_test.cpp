#include "mesh/brick_mesher.h"
#include "mesh/internal/coarse_gather.h"

#include <doctest/doctest.h>

#include "sim/world/voxel_overlay.h"
#include "tests/support/materials.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

using namespace loam;
using namespace loam::mesh;

namespace {

const sim::MaterialTable& table() { return test::materials(); }
sim::MaterialId mat(const char* name) { return test::materialId(name); }

/// Sets padded voxel (x, y, z), each -1..8 brick-local.
void put(PaddedBrick& p, int x, int y, int z, sim::MaterialId m) {
  p.voxels[static_cast<std::size_t>((x + 1) + kPadded * ((y + 1) + kPadded * (z + 1)))] = m;
}

struct Quad {
  std::array<PackedVertex, 4> v;
  int face() const { return vertexFace(v[0]); }
};

std::vector<Quad> quads(const std::vector<PackedVertex>& verts) {
  REQUIRE(verts.size() % 4 == 0);
  std::vector<Quad> q;
  for (std::size_t i = 0; i < verts.size(); i += 4) q.push_back({{verts[i], verts[i + 1], verts[i + 2], verts[i + 3]}});
  return q;
}

std::array<int, 3> pos(PackedVertex v) { return {vertexX(v), vertexY(v), vertexZ(v)}; }

constexpr std::array<std::array<int, 3>, 6> kNormals = {
    {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}}};

/// Checks a quad is planar on its face's axis, its four corners share face and
/// material, and both triangles (0,1,2) and (0,2,3) are counter-clockwise seen from
/// outside (their normal points along the face normal).
void checkQuadShape(const Quad& q) {
  const int f = q.face();
  const auto n = kNormals[static_cast<std::size_t>(f)];
  const int axis = f / 2;
  for (const PackedVertex& v : q.v) {
    CHECK(vertexFace(v) == f);
    CHECK(vertexMaterial(v) == vertexMaterial(q.v[0]));
    CHECK(pos(v)[static_cast<std::size_t>(axis)] == pos(q.v[0])[static_cast<std::size_t>(axis)]);
  }
  auto tri = [&](int a, int b, int c) {
    auto pa = pos(q.v[static_cast<std::size_t>(a)]), pb = pos(q.v[static_cast<std::size_t>(b)]),
         pc = pos(q.v[static_cast<std::size_t>(c)]);
    std::array<int, 3> e1{pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]};
    std::array<int, 3> e2{pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2]};
    std::array<int, 3> cr{e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
    return cr[0] * n[0] + cr[1] * n[1] + cr[2] * n[2];
  };
  CHECK(tri(0, 1, 2) > 0);
  CHECK(tri(0, 2, 3) > 0);
  // The shared diagonal (0-2) carries the brighter AO sum.
  CHECK(vertexAo(q.v[0]) + vertexAo(q.v[2]) >= vertexAo(q.v[1]) + vertexAo(q.v[3]));
}

/// Extent of a quad along the two axes other than its normal: {min, max} per axis.
std::array<std::array<int, 2>, 3> bounds(const Quad& q) {
  std::array<std::array<int, 2>, 3> b{};
  for (int a = 0; a < 3; ++a) {
    b[static_cast<std::size_t>(a)] = {1000, -1};
    for (const PackedVertex& v : q.v) {
      int c = pos(v)[static_cast<std::size_t>(a)];
      b[static_cast<std::size_t>(a)][0] = std::min(b[static_cast<std::size_t>(a)][0], c);
      b[static_cast<std::size_t>(a)][1] = std::max(b[static_cast<std::size_t>(a)][1], c);
    }
  }
  return b;
}

std::vector<Quad> ofFace(const std::vector<Quad>& qs, int face) {
  std::vector<Quad> out;
  for (const Quad& q : qs)
    if (q.face() == face) out.push_back(q);
  return out;
}

}  // namespace

TEST_CASE("meshClasses: air empty, water liquid, the rest opaque") {
  MeshClassTable c = meshClasses(table());
  CHECK(c[sim::kAir] == MeshClass::Empty);
  CHECK(c[mat("water")] == MeshClass::Liquid);
  CHECK(c[mat("stone")] == MeshClass::Opaque);
  CHECK(c[mat("leaves")] == MeshClass::Opaque);
  CHECK(c[mat("glass")] == MeshClass::Opaque);
}

TEST_CASE("a single voxel gives six unit quads with outward normals") {
  const MeshClassTable classes = meshClasses(table());
  PaddedBrick p;
  p.brick = {1, 2, 3};  // chunk-relative base (8, 16, 24)
  put(p, 3, 4, 5, mat("stone"));
  std::vector<PackedVertex> opaque, water;
  meshBrick(p, classes, opaque, water);
  CHECK(opaque.size() == 24);
  CHECK(water.empty());
  auto qs = quads(opaque);
  std::array<int, 6> perFace{};
  const std::array<int, 3> lo{8 + 3, 16 + 4, 24 + 5};
  for (const Quad& q : qs) {
    checkQuadShape(q);
    ++perFace[static_cast<std::size_t>(q.face())];
    auto b = bounds(q);
    const int axis = q.face() / 2;
    const bool positive = q.face() % 2 == 1;
    for (int a = 0; a < 3; ++a) {
      auto ab = static_cast<std::size_t>(a);
      if (a == axis) {
        CHECK(b[ab][0] == lo[ab] + (positive ? 1 : 0));
        CHECK(b[ab][1] == b[ab][0]);
      } else {
        CHECK(b[ab][0] == lo[ab]);
        CHECK(b[ab][1] == lo[ab] + 1);
      }
    }
    for (const PackedVertex& v : q.v) {
      CHECK(vertexAo(v) == 3);
      CHECK(vertexMaterial(v) == mat("stone"));
    }
  }
  for (int f = 0; f < 6; ++f) CHECK(perFace[static_cast<std::size_t>(f)] == 1);
}

TEST_CASE("negative bricks are positioned relative to their chunk") {
  const MeshClassTable classes = meshClasses(table());
  PaddedBrick p;
  p.brick = {-1, -16, -17};  // local bricks 15, 0, 15
  put(p, 7, 0, 0, mat("stone"));
  std::vector<PackedVertex> opaque, water;
  meshBrick(p, classes, opaque, water);
  REQUIRE(opaque.size() == 24);
  for (const PackedVertex& v : opaque) {
    CHECK(vertexX(v) >= 127);
    CHECK(vertexX(v) <= 128);
    CHECK(vertexY(v) <= 1);
    CHECK(vertexZ(v) >= 120);
    CHECK(vertexZ(v) <= 121);
  }
}

TEST_CASE("a flat 8x8 layer merges into one quad per face") {
  const MeshClassTable classes = meshClasses(table());
  PaddedBrick p;
  for (int z = 0; z < 8; ++z)
    for (int x = 0; x < 8; ++x) put(p, x, 0, z, mat("grass"));
  std::vector<PackedVertex> opaque, water;
  meshBrick(p, classes, opaque, water);
  auto qs = quads(opaque);
  CHECK(qs.size() == 6);  // top, bottom, four 8x1 sides
  auto top = ofFace(qs, 3);
  REQUIRE(top.size() == 1);
  auto b = bounds(top[0]);
  CHECK(b[0][0] == 0);
  CHECK(b[0][1] == 8);
  CHECK(b[1][0] == 1);
  CHECK(b[2][0] == 0);
  CHECK(b[2][1] == 8);

  SUBCASE("continued by the neighbours: only top and bottom remain") {
    for (int z = -1; z <= 8; ++z)
      for (int x = -1; x <= 8; ++x) put(p, x, 0, z, mat("grass"));
    opaque.clear();
    meshBrick(p, classes, opaque, water);
    auto q2 = quads(opaque);
    CHECK(q2.size() == 2);
    CHECK(ofFace(q2, 3).size() == 1);
    CHECK(ofFace(q2, 2).size() == 1);
    for (const Quad& q : q2) checkQuadShape(q);
  }
}

TEST_CASE("different materials do not merge") {
  const MeshClassTable classes = meshClasses(table());
  PaddedBrick p;
  for (int z = -1; z <= 8; ++z)
    for (int x = -1; x <= 8; ++x) put(p, x, 0, z, x < 4 ? mat("grass") : mat("stone"));
  std::vector<PackedVertex> opaque, water;
  meshBrick(p, classes, opaque, water);
  auto top = ofFace(quads(opaque), 3);
  REQUIRE(top.size() == 2);
  CHECK(vertexMaterial(top[0].v[0]) != vertexMaterial(top[1].v[0]));
  for (const Quad& q : top) {
    auto b = bounds(q);
    CHECK(b[0][1] - b[0][0] == 4);
    CHECK(b[2][1] - b[2][0] == 8);
  }
}

TEST_CASE("ambient occlusion next to a wall and in a corner") {
  const MeshClassTable classes = meshClasses(table());
  PaddedBrick p;
  const sim::MaterialId stone = mat("stone");
  // Floor at y = 0 everywhere (border included), a wall at x = 4 on y = 1.
  for (int z = -1; z <= 8; ++z)
    for (int x = -1; x <= 8; ++x) put(p, x, 0, z, stone);
  for (int z = -1; z <= 8; ++z) put(p, 4, 1, z, stone);
  std::vector<PackedVertex> opaque, water;
  meshBrick(p, classes, opaque, water);
  auto qs = quads(opaque);
  for (const Quad& q : qs) checkQuadShape(q);
  // Floor top faces lie in plane y = 1.
  std::vector<Quad> floorTop;
  for (const Quad& q : ofFace(qs, 3))
    if (vertexY(q.v[0]) == 1) floorTop.push_back(q);
  // x 0..3 open except the strip touching the wall; x 5..7 likewise: 4 quads.
  CHECK(floorTop.size() == 4);
  for (const Quad& q : floorTop) {
    for (const PackedVertex& v : q.v) {
      int x = vertexX(v);
      // Corners on the wall's foot (x = 4 or 5): side + corner occupied -> 1; else open.
      CHECK(vertexAo(v) == ((x == 4 || x == 5) ? 1 : 3));
    }
  }

  SUBCASE("inner corner between two walls is darkest") {
    PaddedBrick c;
    for (int z = -1; z <= 8; ++z)
      for (int x = -1; x <= 8; ++x) put(c, x, 0, z, stone);
    for (int z = -1; z <= 8; ++z) put(c, 4, 1, z, stone);  // wall along z at x = 4
    for (int x = -1; x <= 8; ++x) put(c, x, 1, 4, stone);  // wall along x at z = 4
    opaque.clear();
    meshBrick(c, classes, opaque, water);
    bool found = false;
    for (const Quad& q : ofFace(quads(opaque), 3)) {
      if (vertexY(q.v[0]) != 1) continue;
      checkQuadShape(q);
      for (const PackedVertex& v : q.v) {
        if (vertexX(v) == 4 && vertexZ(v) == 4) {
          CHECK(vertexAo(v) == 0);
          found = true;
        }
      }
    }
    CHECK(found);
  }
}

TEST_CASE("foliage carries no AO, so a leaf floor beside a wall stays one quad per side") {
  const MeshClassTable classes = meshClasses(table());
  CHECK(classes.flatAo[mat("leaves")] == 1);
  CHECK(classes.flatAo[mat("stone")] == 0);
  PaddedBrick p;
  const sim::MaterialId leaves = mat("leaves");
  for (int z = -1; z <= 8; ++z)
    for (int x = -1; x <= 8; ++x) put(p, x, 0, z, leaves);
  for (int z = -1; z <= 8; ++z) put(p, 4, 1, z, leaves);
  std::vector<PackedVertex> opaque, water;
  meshBrick(p, classes, opaque, water);
  std::vector<Quad> floorTop;
  for (const Quad& q : ofFace(quads(opaque), 3))
    if (vertexY(q.v[0]) == 1) floorTop.push_back(q);
  // Stone gives 4 quads here (the AO strips along the wall); leaves give 2, all open.
  CHECK(floorTop.size() == 2);
  for (const Quad& q : floorTop)
    for (const PackedVertex& v : q.v) CHECK(vertexAo(v) == 3);
}

TEST_CASE("water: top face toward air, stone face under it, none between them") {
  const MeshClassTable classes = meshClasses(table());
  PaddedBrick p;
  const sim::MaterialId stone = mat("stone"), waterId = mat("water");
  for (int z = -1; z <= 8; ++z) {
    for (int x = -1; x <= 8; ++x) {
      put(p, x, 0, z, stone);
      put(p, x, 1, z, waterId);
    }
  }
  std::vector<PackedVertex> opaque, water;
  meshBrick(p, classes, opaque, water);
  auto wq = quads(water);
  REQUIRE(wq.size() == 1);
  CHECK(wq[0].face() == 3);
  CHECK(vertexY(wq[0].v[0]) == 2);
  CHECK(vertexMaterial(wq[0].v[0]) == waterId);
  checkQuadShape(wq[0]);
  // Stone toward water is drawn (seen through the water); stone bottom toward the air below too.
  auto oq = quads(opaque);
  REQUIRE(ofFace(oq, 3).size() == 1);
  CHECK(vertexY(ofFace(oq, 3)[0].v[0]) == 1);
  CHECK(ofFace(oq, 2).size() == 1);
  CHECK(oq.size() == 2);
}

TEST_CASE("brickIsHidden: uniform bricks that cannot show a face") {
  const MeshClassTable classes = meshClasses(table());
  const sim::MaterialId stone = mat("stone"), waterId = mat("water");
  sim::BrickStore world(sim::WorldBounds{{0, 0, 0}, {16, 16, 16}});
  // Stone up to brick y = 7, a water brick buried at (5, 5, 5), a mixed brick at (8, 7, 8).
  for (int z = 0; z < 16; ++z)
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 16; ++x) world.fillBrick({x, y, z}, stone);
  world.fillBrick({5, 5, 5}, waterId);
  world.set({8 * 8 + 3, 7 * 8 + 7, 8 * 8 + 3}, sim::kAir);

  CHECK(brickIsHidden(world, {3, 3, 3}, classes));      // deep stone
  CHECK_FALSE(brickIsHidden(world, {3, 7, 3}, classes)); // top layer, air above
  CHECK(brickIsHidden(world, {3, 12, 3}, classes));     // air never draws
  CHECK(brickIsHidden(world, {5, 5, 5}, classes));      // water among stone draws nothing
  CHECK_FALSE(brickIsHidden(world, {5, 4, 5}, classes)); // stone under water draws toward it
  CHECK_FALSE(brickIsHidden(world, {8, 7, 8}, classes)); // mixed
  CHECK_FALSE(brickIsHidden(world, {8, 6, 8}, classes)); // under a mixed brick
  CHECK_FALSE(brickIsHidden(world, {0, 3, 3}, classes)); // world edge: air outside the bounds

  // Whatever is reported hidden must really mesh to nothing.
  std::vector<PackedVertex> opaque, water;
  PaddedBrick p;
  for (int z = 0; z < 16; ++z)
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 16; ++x) {
        sim::BrickCoord b{x, y, z};
        if (!brickIsHidden(world, b, classes)) continue;
        gatherPaddedBrick(world, b, p);
        meshBrick(p, classes, opaque, water);
      }
  CHECK(opaque.empty());
  CHECK(water.empty());
}

TEST_CASE("gatherPaddedBrick copies the brick and its border") {
  sim::BrickStore world(sim::WorldBounds{{0, 0, 0}, {16, 16, 16}});
  for (int z = 0; z < 24; ++z)
    for (int y = 0; y < 24; ++y)
      for (int x = 0; x < 24; ++x) world.set(x, y, z, static_cast<sim::MaterialId>(1 + (x * 7 + y * 3 + z * 5) % 9));
  PaddedBrick p;
  gatherPaddedBrick(world, {1, 1, 0}, p);
  for (int z = -1; z <= 8; ++z)
    for (int y = -1; y <= 8; ++y)
      for (int x = -1; x <= 8; ++x) {
        sim::MaterialId want = world.get(8 + x, 8 + y, z);
        REQUIRE(p.voxels[static_cast<std::size_t>((x + 1) + kPadded * ((y + 1) + kPadded * (z + 1)))] == want);
      }
  CHECK(p.voxels[0] == sim::kAir);  // z = -1 is outside the bounds
}

TEST_CASE("a sealed one-voxel air pocket draws no inner faces") {
  const MeshClassTable classes = meshClasses(table());
  PaddedBrick p;
  for (int z = 2; z <= 4; ++z)
    for (int y = 2; y <= 4; ++y)
      for (int x = 2; x <= 4; ++x) put(p, x, y, z, mat("stone"));
  put(p, 3, 3, 3, sim::kAir);
  std::vector<PackedVertex> opaque, water;
  meshBrick(p, classes, opaque, water);
  auto qs = quads(opaque);
  CHECK(qs.size() == 6);  // the outer 3x3 faces only
  for (const Quad& q : qs) {
    checkQuadShape(q);
    auto b = bounds(q);
    for (int a = 0; a < 3; ++a) {
      if (a == q.face() / 2) continue;
      CHECK(b[static_cast<std::size_t>(a)][1] - b[static_cast<std::size_t>(a)][0] == 3);
    }
  }
  SUBCASE("opened to the outside, the pocket is drawn") {
    put(p, 3, 4, 3, sim::kAir);
    opaque.clear();
    meshBrick(p, classes, opaque, water);
    CHECK(quads(opaque).size() > 6);
  }
}

TEST_CASE("uniformBrickHasNoFaces agrees with meshing") {
  const MeshClassTable classes = meshClasses(table());
  const sim::MaterialId stone = mat("stone"), soil = mat("soil"), grass = mat("grass"), waterId = mat("water");
  sim::BrickStore world(sim::WorldBounds{{0, 0, 0}, {16, 16, 16}});
  // Soil up to voxel y = 45, grass on top (mixed bricks at brick y = 5), a water pool,
  // a pit dug into the soil at one spot, stone below y = 16.
  for (int z = 0; z < 128; ++z)
    for (int x = 0; x < 128; ++x)
      for (int y = 0; y < 48; ++y) world.set(x, y, z, y < 16 ? stone : y < 45 ? soil : grass);
  for (int z = 60; z < 80; ++z)
    for (int x = 60; x < 80; ++x) world.set(x, 47, z, waterId);
  world.set(20, 40, 20, sim::kAir);  // pocket inside brick (2, 5, 2): its neighbours below see air
  world.set(33, 39, 33, sim::kAir);  // at the top of brick (4, 4, 4)
  PaddedBrick p;
  std::vector<PackedVertex> opaque, water;
  int checkedUniform = 0, noFaces = 0;
  for (int z = 0; z < 16; ++z)
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 16; ++x) {
        const sim::BrickCoord b{x, y, z};
        gatherPaddedBrick(world, b, p);
        opaque.clear();
        water.clear();
        meshBrick(p, classes, opaque, water);
        const bool none = opaque.empty() && water.empty();
        if (world.brick(b).isUniform()) {
          ++checkedUniform;
          noFaces += none ? 1 : 0;
          REQUIRE(uniformBrickHasNoFaces(world, b, classes) == none);
        } else {
          CHECK_FALSE(uniformBrickHasNoFaces(world, b, classes));
        }
      }
  CHECK(checkedUniform > 100);
  CHECK(noFaces > 100);
  CHECK_FALSE(uniformBrickHasNoFaces(world, {4, 5, 4}, classes));         // mixed soil/grass brick
  CHECK_FALSE(uniformBrickHasNoFaces(world, {0, 3, 0}, classes));         // world edge: air outside
}

TEST_CASE("an enclosed 2x2x2 pocket on the even grid draws no inner faces") {
  const MeshClassTable classes = meshClasses(table());
  PaddedBrick p;
  for (int z = 1; z <= 4; ++z)
    for (int y = 1; y <= 4; ++y)
      for (int x = 1; x <= 4; ++x) put(p, x, y, z, mat("leaves"));
  for (int z = 2; z <= 3; ++z)
    for (int y = 2; y <= 3; ++y)
      for (int x = 2; x <= 3; ++x) put(p, x, y, z, sim::kAir);
  std::vector<PackedVertex> opaque, water;
  meshBrick(p, classes, opaque, water);
  auto qs = quads(opaque);
  CHECK(qs.size() == 6);  // the outer 4x4 faces only
  for (const Quad& q : qs) checkQuadShape(q);

  SUBCASE("the same pocket on odd coordinates is still drawn (only the even grid is checked)") {
    PaddedBrick odd;
    for (int z = 2; z <= 5; ++z)
      for (int y = 2; y <= 5; ++y)
        for (int x = 2; x <= 5; ++x) put(odd, x, y, z, mat("leaves"));
    for (int z = 3; z <= 4; ++z)
      for (int y = 3; y <= 4; ++y)
        for (int x = 3; x <= 4; ++x) put(odd, x, y, z, sim::kAir);
    opaque.clear();
    meshBrick(odd, classes, opaque, water);
    CHECK(quads(opaque).size() > 6);
  }
  SUBCASE("a pocket open on one side is drawn") {
    put(p, 2, 4, 2, sim::kAir);
    opaque.clear();
    meshBrick(p, classes, opaque, water);
    CHECK(quads(opaque).size() > 6);
  }
}

// ---- levels of detail (coarseBlockMaterial, gatherCoarseBrick) --------------------

namespace {

/// A k^3 block (index x + k * (y + k * z)) filled by material(x, y, z).
template <class F>
std::vector<sim::MaterialId> block(int k, F&& material) {
  std::vector<sim::MaterialId> v(static_cast<std::size_t>(k * k * k));
  for (int z = 0; z < k; ++z)
    for (int y = 0; y < k; ++y)
      for (int x = 0; x < k; ++x) v[static_cast<std::size_t>(x + k * (y + k * z))] = material(x, y, z);
  return v;
}

/// The first n voxels (in index order) a, the rest b.
std::vector<sim::MaterialId> split(int k, int n, sim::MaterialId a, sim::MaterialId b) {
  std::vector<sim::MaterialId> v(static_cast<std::size_t>(k * k * k), b);
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = a;
  return v;
}

/// A deterministic hash of a voxel position.
unsigned hash3(int x, int y, int z) {
  return (static_cast<unsigned>(x) * 73856093u) ^ (static_cast<unsigned>(y) * 19349663u) ^
         (static_cast<unsigned>(z) * 83492791u);
}

/// A deterministic jumble of air, water and three solids, with some uniform regions.
sim::MaterialId jumble(int x, int y, int z) {
  const unsigned h = hash3(x, y, z);
  if (y > 20) return (h % 7 == 0) ? mat("leaves") : sim::kAir;
  if (y < 4) return mat("stone");
  const sim::MaterialId m[6] = {sim::kAir, sim::kAir, mat("water"), mat("stone"), mat("soil"), mat("grass")};
  return m[(h >> 8) % 6];
}

}  // namespace

TEST_CASE("coarseBlockMaterial: the majority rule on crafted blocks") {
  const MeshClassTable classes = meshClasses(table());
  const sim::MaterialId stone = mat("stone"), soil = mat("soil"), grass = mat("grass"), water = mat("water"),
                        leaves = mat("leaves"), sand = mat("sand");
  auto coarse = [&](const std::vector<sim::MaterialId>& v, int k) { return coarseBlockMaterial(v.data(), k, classes); };

  // Uniform blocks keep their material.
  CHECK(coarse(split(2, 8, stone, stone), 2) == stone);
  CHECK(coarse(split(4, 64, sim::kAir, sim::kAir), 4) == sim::kAir);
  CHECK(coarse(split(2, 8, water, water), 2) == water);

  // Grass over soil, 4 each: a tie, won by the material reaching higher (grass).
  CHECK(coarse(block(2, [&](int, int y, int) { return y == 1 ? grass : soil; }), 2) == grass);
  CHECK(coarse(block(2, [&](int, int y, int) { return y == 0 ? grass : soil; }), 2) == soil);
  // Level 2: two grass layers over two soil layers tie too; one grass layer loses to three of soil.
  CHECK(coarse(block(4, [&](int, int y, int) { return y >= 2 ? grass : soil; }), 4) == grass);
  CHECK(coarse(block(4, [&](int, int y, int) { return y == 3 ? grass : soil; }), 4) == soil);
  // A grass layer over soil with air above (a surface inside the block): Opaque is half, grass is on top.
  CHECK(coarse(block(4, [&](int, int y, int) { return y == 0 ? soil : y == 1 ? grass : sim::kAir; }), 4) == grass);

  // Half-empty blocks: half Opaque is ground, less is air.
  CHECK(coarse(split(2, 4, stone, sim::kAir), 2) == stone);
  CHECK(coarse(split(2, 3, stone, sim::kAir), 2) == sim::kAir);
  CHECK(coarse(split(4, 32, stone, sim::kAir), 4) == stone);
  CHECK(coarse(split(4, 31, stone, sim::kAir), 4) == sim::kAir);
  // The most frequent Opaque material wins, whatever the air.
  CHECK(coarse(block(2, [&](int x, int y, int z) { return y == 1 ? sim::kAir : (x + z == 0) ? sand : stone; }), 2) ==
        stone);

  // Water: half Liquid is water; Opaque half comes first; otherwise the larger class.
  CHECK(coarse(split(2, 4, water, sim::kAir), 2) == water);
  CHECK(coarse(split(2, 3, water, sim::kAir), 2) == sim::kAir);
  CHECK(coarse(block(2, [&](int, int y, int) { return y == 0 ? stone : water; }), 2) == stone);
  {
    // 3 stone, 3 water, 2 air: neither class is half, together they are: a tie goes to Opaque.
    std::vector<sim::MaterialId> v{stone, stone, stone, water, water, water, sim::kAir, sim::kAir};
    CHECK(coarse(v, 2) == stone);
    // 2 stone, 3 water, 3 air: water is the larger class.
    v = {stone, stone, water, water, water, sim::kAir, sim::kAir, sim::kAir};
    CHECK(coarse(v, 2) == water);
    // 3 stone, 1 water, 4 air: stone.
    v = {stone, stone, stone, water, sim::kAir, sim::kAir, sim::kAir, sim::kAir};
    CHECK(coarse(v, 2) == stone);
    // 2 stone, 1 water, 5 air: air.
    v = {stone, stone, water, sim::kAir, sim::kAir, sim::kAir, sim::kAir, sim::kAir};
    CHECK(coarse(v, 2) == sim::kAir);
  }

  // Foliage is Opaque: a leaf block with a hole stays leaves, a sparse one goes.
  CHECK(coarse(block(4, [&](int x, int y, int z) { return x < 2 && y < 2 && z < 2 ? sim::kAir : leaves; }), 4) ==
        leaves);
  CHECK(coarse(split(2, 4, leaves, sim::kAir), 2) == leaves);
  CHECK(coarse(block(4, [&](int x, int y, int z) { return (x + y + z) % 3 == 0 ? leaves : sim::kAir; }), 4) ==
        sim::kAir);
}

TEST_CASE("gatherCoarseBrick: every padded voxel takes its world-aligned block's material") {
  const MeshClassTable classes = meshClasses(table());
  sim::BrickStore world(sim::WorldBounds{{-16, 0, -16}, {16, 16, 16}});
  for (int z = -32; z < 32; ++z)
    for (int y = 0; y < 48; ++y)
      for (int x = -32; x < 32; ++x) world.set(x, y, z, jumble(x, y, z));
  sim::VoxelOverlay overlay;
  sim::BrickStore edited = world;
  for (int i = 0; i < 40; ++i) {  // overlaid voxels in and around brick (-1, 1, 0)
    const sim::VoxelCoord v{-12 + (i * 7) % 16, 4 + (i * 5) % 16, -4 + (i * 3) % 16};
    const sim::MaterialId m = i % 3 == 0 ? sim::kAir : mat("planks");
    overlay.set(v, m);
    edited.set(v.x, v.y, v.z, m);
  }
  auto floorDiv = [](int a, int k) { return a >= 0 ? a / k : -((-a + k - 1) / k); };
  for (int level = 1; level <= kMaxMeshLevel; ++level) {
    const int k = 1 << level;
    for (const sim::BrickCoord b : {sim::BrickCoord{-1, 1, 0}, sim::BrickCoord{0, 2, -1}, sim::BrickCoord{1, 0, 1}}) {
      for (const bool withOverlay : {false, true}) {
        const sim::BrickStore& src = withOverlay ? edited : world;
        PaddedBrick p;
        gatherCoarseBrick(world, b, level, classes, p, withOverlay ? &overlay : nullptr);
        CHECK(p.brick == b);
        for (int z = -1; z <= 8; ++z)
          for (int y = -1; y <= 8; ++y)
            for (int x = -1; x <= 8; ++x) {
              const int wx = b.x * 8 + x, wy = std::max(b.y * 8 + y, 0), wz = b.z * 8 + z;  // below the floor repeats
              const int x0 = floorDiv(wx, k) * k, y0 = floorDiv(wy, k) * k, z0 = floorDiv(wz, k) * k;
              const auto v = block(k, [&](int i, int j, int l) { return src.get(x0 + i, y0 + j, z0 + l); });
              const sim::MaterialId want = coarseBlockMaterial(v.data(), k, classes);
              REQUIRE(p.voxels[static_cast<std::size_t>((x + 1) + kPadded * ((y + 1) + kPadded * (z + 1)))] == want);
            }
      }
    }
  }
}

TEST_CASE("gatherBlocks (the mesh cache's coarse gather from each brick's own blocks) equals gatherCoarseBrick") {
  const MeshClassTable classes = meshClasses(table());
  sim::BrickStore world(sim::WorldBounds{{-16, 0, -16}, {16, 16, 16}});
  for (int z = -40; z < 40; ++z)
    for (int y = 0; y < 56; ++y)
      for (int x = -40; x < 40; ++x) world.set(x, y, z, jumble(x, y, z));
  // Uniform bricks among the mixed ones: stone, water and air.
  world.fillBrick({-2, 0, -2}, mat("stone"));
  world.fillBrick({2, 3, 1}, mat("water"));
  world.fillBrick({0, 2, 0}, sim::kAir);
  world.fillBrick({0, 4, 0}, mat("leaves"));
  int mixedCalls = 0, compared = 0;
  for (int level = 1; level <= kMaxMeshLevel; ++level) {
    for (int bz = -4; bz < 4; ++bz)
      for (int by = 0; by < 6; ++by)
        for (int bx = -4; bx < 4; ++bx) {
          const sim::BrickCoord b{bx, by, bz};
          PaddedBrick want, got;
          gatherCoarseBrick(world, b, level, classes, want);
          internal::BrickBlocks blocks;
          internal::gatherBlocks(world, b, level, classes, got,
                                 [&](const sim::BrickView& v, sim::BrickCoord) -> const internal::BrickBlocks& {
                                   ++mixedCalls;
                                   sim::MaterialId voxels[sim::kBrickVoxels];
                                   v.decode(voxels);
                                   internal::blocksOfBrick(voxels, level, classes, blocks);
                                   return blocks;
                                 });
          CHECK(got.brick == b);
          REQUIRE(std::equal(std::begin(got.voxels), std::end(got.voxels), std::begin(want.voxels)));
          ++compared;
        }
  }
  CHECK(compared == 2 * 8 * 6 * 8);
  CHECK(mixedCalls > 0);
}

TEST_CASE("coarse bricks: quads on multiples of k, and about 4x fewer per level on rough ground") {
  const MeshClassTable classes = meshClasses(table());
  MeshClassTable flat = classes;  // coarse bricks are meshed without AO (see gatherCoarseBrick)
  flat.flatAo.fill(1);
  const sim::MaterialId grass = mat("grass"), soil = mat("soil"), sand = mat("sand"), stone = mat("stone");
  sim::BrickStore world(sim::WorldBounds{{0, 0, 0}, {16, 16, 16}});
  // Flat ground up to y = 24 (even), its top 4 layers a per-voxel jumble of three
  // materials (level 0 can hardly merge it); a pit and a ledge for side faces.
  for (int z = 0; z < 128; ++z)
    for (int x = 0; x < 128; ++x)
      for (int y = 0; y < 24; ++y) {
        const sim::MaterialId top[3] = {grass, soil, sand};
        world.set(x, y, z, y < 20 ? stone : top[(hash3(x, y, z) >> 7) % 3]);
      }
  for (int z = 40; z < 50; ++z)
    for (int x = 40; x < 47; ++x)
      for (int y = 17; y < 24; ++y) world.set(x, y, z, sim::kAir);
  for (int z = 60; z < 71; ++z)
    for (int x = 60; x < 65; ++x)
      for (int y = 24; y < 27; ++y) world.set(x, y, z, stone);
  std::size_t quadsAt[kMaxMeshLevel + 1] = {};
  PaddedBrick p;
  std::vector<PackedVertex> opaque, water;
  for (int level = 0; level <= kMaxMeshLevel; ++level) {
    const int k = 1 << level;
    for (int bz = 2; bz < 14; ++bz)
      for (int by = 0; by < 8; ++by)
        for (int bx = 2; bx < 14; ++bx) {
          if (level == 0) {
            gatherPaddedBrick(world, {bx, by, bz}, p);
          } else {
            gatherCoarseBrick(world, {bx, by, bz}, level, classes, p);
          }
          opaque.clear();
          water.clear();
          meshBrick(p, level == 0 ? classes : flat, opaque, water);
          quadsAt[level] += opaque.size() / 4;
          for (const Quad& q : quads(opaque)) {
            checkQuadShape(q);
            for (const PackedVertex& v : q.v) {
              REQUIRE(vertexX(v) % k == 0);
              REQUIRE(vertexY(v) % k == 0);
              REQUIRE(vertexZ(v) % k == 0);
            }
          }
        }
  }
  INFO("quads at levels 0, 1, 2: " << quadsAt[0] << ", " << quadsAt[1] << ", " << quadsAt[2]);
  CHECK(quadsAt[0] > 1000);
  CHECK(static_cast<double>(quadsAt[1]) < 0.35 * static_cast<double>(quadsAt[0]));
  CHECK(static_cast<double>(quadsAt[2]) < 0.35 * static_cast<double>(quadsAt[1]));
}

TEST_CASE("coarse bricks mesh exactly as fine bricks of the blockified world do") {
  // A coarse gather reads the world as if each block were filled with its material,
  // and brickIsHidden (read from the fine world) still only skips bricks with no faces.
  const MeshClassTable classes = meshClasses(table());
  sim::BrickStore world(sim::WorldBounds{{-16, 0, -16}, {16, 16, 16}});
  for (int z = -32; z < 32; ++z)
    for (int y = 0; y < 48; ++y)
      for (int x = -32; x < 32; ++x) world.set(x, y, z, jumble(x, y, z));
  for (int level = 1; level <= kMaxMeshLevel; ++level) {
    const int k = 1 << level;
    sim::BrickStore blocky(world.bounds());
    for (int z = -32; z < 32; z += k)
      for (int y = 0; y < 48; y += k)
        for (int x = -32; x < 32; x += k) {
          const auto v = block(k, [&](int i, int j, int l) { return world.get(x + i, y + j, z + l); });
          const sim::MaterialId m = coarseBlockMaterial(v.data(), k, classes);
          for (int l = 0; l < k; ++l)
            for (int j = 0; j < k; ++j)
              for (int i = 0; i < k; ++i) blocky.set(x + i, y + j, z + l, m);
        }
    PaddedBrick coarse, fine;
    std::vector<PackedVertex> o1, w1;
    for (int bz = -4; bz < 4; ++bz)
      for (int by = 0; by < 6; ++by)
        for (int bx = -4; bx < 4; ++bx) {
          const sim::BrickCoord b{bx, by, bz};
          gatherCoarseBrick(world, b, level, classes, coarse);
          gatherPaddedBrick(blocky, b, fine);
          REQUIRE(coarse.voxels == fine.voxels);
          if (brickIsHidden(world, b, classes)) {
            o1.clear();
            w1.clear();
            meshBrick(coarse, classes, o1, w1);
            CHECK(o1.empty());
            CHECK(w1.empty());
          }
        }
  }
}

TEST_CASE("uniformBrickHasNoFaces at levels 1 and 2 agrees with coarse meshing") {
  const MeshClassTable classes = meshClasses(table());
  const sim::MaterialId stone = mat("stone"), soil = mat("soil"), grass = mat("grass"), waterId = mat("water");
  sim::BrickStore world(sim::WorldBounds{{0, 0, 0}, {16, 16, 16}});
  // Soil to y = 40 under two grass layers (mixed bricks at brick y = 5), stone below
  // y = 16, a water pool; in one corner the ground ends one soil layer into brick
  // y = 5 (y = 40 only): too thin for a level-2 block, so the uniform soil brick
  // under it has a top face at level 2 only.
  for (int z = 0; z < 128; ++z)
    for (int x = 0; x < 128; ++x) {
      const bool thin = x >= 32 && x < 64 && z >= 32 && z < 64;
      for (int y = 0; y < 48; ++y) {
        sim::MaterialId m = y < 16 ? stone : y < 40 ? soil : sim::kAir;
        if (!thin && y >= 40 && y < 44) m = soil;
        if (!thin && (y == 44 || y == 45)) m = grass;
        if (thin && y == 40) m = soil;
        world.set(x, y, z, m);
      }
    }
  for (int z = 60; z < 80; ++z)
    for (int x = 60; x < 80; ++x) world.set(x, 46, z, waterId);
  world.set(20 + 64, 41, 20, sim::kAir);  // a pit in the brick above a uniform one
  PaddedBrick p;
  std::vector<PackedVertex> opaque, water;
  int gainedFaces = 0;
  for (int level = 1; level <= kMaxMeshLevel; ++level) {
    int checkedUniform = 0;
    for (int z = 0; z < 16; ++z)
      for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 16; ++x) {
          const sim::BrickCoord b{x, y, z};
          if (!world.brick(b).isUniform()) continue;
          gatherCoarseBrick(world, b, level, classes, p);
          opaque.clear();
          water.clear();
          meshBrick(p, classes, opaque, water);
          const bool none = opaque.empty() && water.empty();
          ++checkedUniform;
          REQUIRE(uniformBrickHasNoFaces(world, b, classes, level) == none);
          if (!none && uniformBrickHasNoFaces(world, b, classes)) ++gainedFaces;
        }
    CHECK(checkedUniform > 100);
  }
  CHECK(gainedFaces >= 16);  // the thin corner's soil bricks at level 2
}
