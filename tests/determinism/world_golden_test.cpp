// Every shipped scene's world hash in this build equals its committed golden
// (goldens.txt "world-<scene>"); scripts/check-determinism checks the same goldens
// across compilers, optimisation levels, aarch64 and Windows through loam-tool gen.
#include <doctest/doctest.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/gen/generator.h"
#include "sim/gen/scene.h"
#include "sim/world/world_hash.h"
#include "tests/determinism/golden.h"

using namespace loam::sim;

TEST_CASE("world hashes of the shipped scenes match the goldens") {
  for (const char* name : {"glade", "court", "flat", "forest-fires"}) {
    CAPTURE(name);
    auto scene = loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/" + name + ".toml");
    if (!scene) FAIL(scene.error().message);
    // The goldens use seed 1 for every scene (as `gen --seed 1`).
    auto world = generateWorld(*scene, 1);
    REQUIRE(world.has_value());
    std::uint64_t got = hashContent(*world).world;
    std::uint64_t want = loam::test::golden(std::string("world-") + name);
    if (got != want) {
      std::printf("world-%s: hash %016" PRIx64 ", golden %016" PRIx64 "\n", name, got, want);
    }
    CHECK(got == want);
  }
}

TEST_CASE("the big scene's home region matches its golden (highlands is too big to generate whole)") {
  auto scene = loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/highlands.toml");
  if (!scene) FAIL(scene.error().message);
  CHECK(!generateWorld(*scene, 1).has_value());  // about 33 million chunks
  // As `gen --seed 1 --around 0,0 --radius 64`: the columns reaching within 64 m of the origin.
  const std::vector<ChunkColumn> region = columnsAround(scene->worldBounds, 0, 0, 64 * kVoxelsPerMetre);
  auto world = generateRegion(*scene, 1, region);
  REQUIRE(world.has_value());
  const std::uint64_t got = residentContentHash(*world);
  const std::uint64_t want = loam::test::golden("world-highlands-home");
  if (got != want) std::printf("world-highlands-home: hash %016" PRIx64 ", golden %016" PRIx64 "\n", got, want);
  CHECK(got == want);
}

TEST_CASE("riverlands: a river's region matches its golden (the landscape plan, rivers and ecotopes)") {
  auto scene = loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/riverlands.toml");
  if (!scene) FAIL(scene.error().message);
  // As `gen --seed 11 --around 540,-2075 --radius 64`.
  const std::vector<ChunkColumn> region =
      columnsAround(scene->worldBounds, 540 * kVoxelsPerMetre, -2075 * kVoxelsPerMetre, 64 * kVoxelsPerMetre);
  auto world = generateRegion(*scene, 11, region);
  REQUIRE(world.has_value());
  const std::uint64_t got = residentContentHash(*world);
  const std::uint64_t want = loam::test::golden("world-riverlands-river");
  if (got != want) std::printf("world-riverlands-river: hash %016" PRIx64 ", golden %016" PRIx64 "\n", got, want);
  CHECK(got == want);
}
