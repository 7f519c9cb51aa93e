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

TEST_CASE("regions of the streamed scenes match their goldens (too big to generate whole)") {
  struct Region {
    const char* golden;
    const char* scene;
    std::uint64_t seed;
    std::int32_t x, z;  // metres; the columns reaching within 64 m (as `gen --around x,z --radius 64`)
  };
  // highlands' home; a river of riverlands (its landscape plan, rivers and ecotopes)
  // and its first village (settlements, buildings, roads).
  for (const Region& r : {Region{"world-highlands-home", "highlands", 1, 0, 0},
                          Region{"world-riverlands-river", "riverlands", 11, 540, -2075},
                          Region{"world-riverlands-village", "riverlands", 11, 960, -4384}}) {
    CAPTURE(r.golden);
    auto scene = loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/" + r.scene + ".toml");
    if (!scene) FAIL(scene.error().message);
    CHECK(!generatableWhole(*scene));
    const std::vector<ChunkColumn> region =
        columnsAround(scene->worldBounds, r.x * kVoxelsPerMetre, r.z * kVoxelsPerMetre, 64 * kVoxelsPerMetre);
    auto world = generateRegion(*scene, r.seed, region);
    REQUIRE(world.has_value());
    const std::uint64_t got = residentContentHash(*world);
    const std::uint64_t want = loam::test::golden(r.golden);
    if (got != want) std::printf("%s: hash %016" PRIx64 ", golden %016" PRIx64 "\n", r.golden, got, want);
    CHECK(got == want);
  }
}
