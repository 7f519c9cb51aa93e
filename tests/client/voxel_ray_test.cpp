// castVoxelRay: the targeted voxel and face from an eye through a hand-built world
// (stone floor below y = 0, single voxels placed by the tests).
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "client/voxel_ray.h"
#include "tests/sim/sim_fixture.h"

using namespace loam;
using client::castVoxelRay;

namespace {

const sim::MaterialLut& lut() {
  static const sim::MaterialLut l = sim::makeMaterialLut(*test::testMaterials());
  return l;
}

constexpr double kV = 0.05;  // metres per voxel

}  // namespace

TEST_CASE("looking straight down hits the floor's top face") {
  sim::BrickStore w = test::flatWorld();
  auto hit = castVoxelRay(w, lut(), {0.125, 1.62, 0.125}, {0, -1, 0}, 5.0);
  REQUIRE(hit);
  CHECK(hit->voxel == sim::VoxelCoord{2, -1, 2});
  CHECK(hit->face == sim::Face::PosY);
  CHECK(hit->before == sim::VoxelCoord{2, 0, 2});
  CHECK(hit->distance == doctest::Approx(1.62).epsilon(1e-9));
}

TEST_CASE("the floor beyond reach is not targeted") {
  sim::BrickStore w = test::flatWorld();
  CHECK_FALSE(castVoxelRay(w, lut(), {0.1, 6.0, 0.1}, {0, -1, 0}, 5.0));
  CHECK(castVoxelRay(w, lut(), {0.1, 4.99, 0.1}, {0, -1, 0}, 5.0));
}

TEST_CASE("a wall voxel is hit on the face toward the eye, for each axis direction") {
  sim::BrickStore w = test::flatWorld();
  const sim::MaterialId stone = test::mat("stone");
  // A voxel 1 m north (-z) of the eye at eye height.
  const sim::VoxelCoord north{0, 20, -20};
  w.set(north, stone);
  const std::array<double, 3> eye{0.025, 1.025, 0.025};
  auto hit = castVoxelRay(w, lut(), eye, client::viewDirection(0, 0), 5.0);  // yaw 0 = north
  REQUIRE(hit);
  CHECK(hit->voxel == north);
  CHECK(hit->face == sim::Face::PosZ);
  CHECK(hit->before == sim::VoxelCoord{0, 20, -19});
  CHECK(hit->distance == doctest::Approx(0.975).epsilon(1e-6));  // from z 0.025 to the face at z -0.95

  const sim::VoxelCoord east{20, 20, 0};
  w.set(east, stone);
  hit = castVoxelRay(w, lut(), eye, client::viewDirection(std::numbers::pi / 2, 0), 5.0);  // east = +x
  REQUIRE(hit);
  CHECK(hit->voxel == east);
  CHECK(hit->face == sim::Face::NegX);

  const sim::VoxelCoord west{-20, 20, 0};
  w.set(west, stone);
  hit = castVoxelRay(w, lut(), eye, {-1, 0, 0}, 5.0);
  REQUIRE(hit);
  CHECK(hit->voxel == west);
  CHECK(hit->face == sim::Face::PosX);

  const sim::VoxelCoord south{0, 20, 20};
  w.set(south, stone);
  hit = castVoxelRay(w, lut(), eye, {0, 0, 1}, 5.0);
  REQUIRE(hit);
  CHECK(hit->voxel == south);
  CHECK(hit->face == sim::Face::NegZ);

  const sim::VoxelCoord above{0, 40, 0};
  w.set(above, stone);
  hit = castVoxelRay(w, lut(), eye, {0, 1, 0}, 5.0);
  REQUIRE(hit);
  CHECK(hit->voxel == above);
  CHECK(hit->face == sim::Face::NegY);
}

TEST_CASE("a diagonal ray finds the first voxel it crosses, not one it passes beside") {
  sim::BrickStore w = test::flatWorld();
  const sim::MaterialId stone = test::mat("stone");
  // The ray from (0.5, 20.2, 0.5) voxels along +x+y runs along y = x + 19.7: a
  // voxel just above it must not be hit, one on it must.
  w.set(sim::VoxelCoord{3, 24, 0}, stone);  // off the path (crossed at y 22.7..23.7)
  w.set(sim::VoxelCoord{10, 30, 0}, stone);  // on the path (y 29.7..30.7)
  const std::array<double, 3> eye{0.5 * kV, 20.2 * kV, 0.5 * kV};
  auto hit = castVoxelRay(w, lut(), eye, {1, 1, 0}, 5.0);
  REQUIRE(hit);
  CHECK(hit->voxel == sim::VoxelCoord{10, 30, 0});
  // Entered from below or from the -x side; either way `before` is the neighbour.
  const sim::VoxelCoord n = client::faceNormal(hit->face);
  CHECK(hit->before == sim::VoxelCoord{10 + n.x, 30 + n.y, 0 + n.z});
  CHECK((hit->face == sim::Face::NegX || hit->face == sim::Face::NegY));
}

TEST_CASE("water and air are looked through; negative coordinates floor correctly") {
  sim::BrickStore w = test::flatWorld();
  const sim::MaterialId water = test::mat("water");
  const sim::MaterialId stone = test::mat("stone");
  for (int z = -2; z >= -10; --z) w.set(sim::VoxelCoord{-3, 10, z}, water);
  w.set(sim::VoxelCoord{-3, 10, -11}, stone);
  const std::array<double, 3> eye{-3 * kV + 0.01, 10 * kV + 0.01, -1 * kV + 0.01};  // inside voxel (-3, 10, -1)
  auto hit = castVoxelRay(w, lut(), eye, {0, 0, -1}, 5.0);
  REQUIRE(hit);
  CHECK(hit->voxel == sim::VoxelCoord{-3, 10, -11});
  CHECK(hit->face == sim::Face::PosZ);
}

TEST_CASE("viewDirection follows the sim's yaw and pitch convention") {
  auto d = client::viewDirection(0, 0);
  CHECK(d[2] == doctest::Approx(-1));
  d = client::viewDirection(std::numbers::pi / 2, 0);
  CHECK(d[0] == doctest::Approx(1));
  d = client::viewDirection(0, std::numbers::pi / 2);
  CHECK(d[1] == doctest::Approx(1));
  CHECK(std::hypot(d[0], d[1], d[2]) == doctest::Approx(1));
}

TEST_CASE("the ray sees the world through an overlay: the player aims at what is shown") {
  const sim::BrickStore w = test::flatWorld();
  sim::VoxelOverlay shown;
  shown.set({2, -1, 2}, sim::kAir);             // a predicted dig of the floor voxel below
  shown.set({2, 10, 2}, test::mat("planks"));  // and a predicted plank above it
  auto hit = castVoxelRay(w, lut(), {0.125, 1.62, 0.125}, {0, -1, 0}, 5.0, &shown);
  REQUIRE(hit);
  CHECK(hit->voxel == sim::VoxelCoord{2, 10, 2});
  shown.set({2, 10, 2}, sim::kAir);
  hit = castVoxelRay(w, lut(), {0.125, 1.62, 0.125}, {0, -1, 0}, 5.0, &shown);
  REQUIRE(hit);
  CHECK(hit->voxel == sim::VoxelCoord{2, -2, 2});  // through the dug voxel to the one under it
  CHECK(castVoxelRay(w, lut(), {0.125, 1.62, 0.125}, {0, -1, 0}, 5.0)->voxel == sim::VoxelCoord{2, -1, 2});
}
