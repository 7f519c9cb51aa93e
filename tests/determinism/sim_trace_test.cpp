// Simulation trace hashes in this build equal their committed goldens (goldens.txt
// "sim-<scene>"): the scripted glade and forest-fires runs, exactly as
// `loam-tool sim ... --hash` computes them (both call sim::runTrace).
// scripts/check-determinism checks the same goldens across compilers, -O levels,
// aarch64 and Windows.
#include <doctest/doctest.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "sim/trace/trace_run.h"
#include "tests/determinism/golden.h"

using namespace loam::sim;

namespace {
void checkTrace(const char* name, const char* scene, const char* script) {
  CAPTURE(name);
  const std::string root = LOAM_SOURCE_DIR;
  // The same arguments as the goldens.txt line (600 steps, the scene's seed).
  auto run = runTrace(root + "/" + scene, std::nullopt, root + "/" + script, 600);
  if (!run) FAIL(run.error().message);
  const std::uint64_t want = loam::test::golden(name);
  if (run->hash != want) std::printf("%s: trace %016" PRIx64 ", golden %016" PRIx64 "\n", name, run->hash, want);
  CHECK(run->hash == want);
}
}  // namespace

TEST_CASE("glade trace hash matches the golden") {
  checkTrace("sim-glade", "scenes/glade.toml", "scenes/scripts/glade-mirror.txt");
}

TEST_CASE("forest-fires trace hash matches the golden") {
  checkTrace("sim-forest-fires", "scenes/forest-fires.toml", "scenes/scripts/forest-fires.txt");
}
