// Simulation trace hashes in this build equal their committed goldens (goldens.txt
// "sim-<scene>"): the scripted glade and forest-fires runs, exactly as
// `loam-tool sim ... --hash` computes them (both call sim::runTrace).
// scripts/check-determinism checks the same goldens across compilers, -O levels,
// aarch64 and Windows. A streamed world (generated a column at a time as the step
// reads it, released again beyond a budget) gives the same hashes with one generator
// thread or two and with a tiny or a large residency budget (sim/step/step.h).
#include <doctest/doctest.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "sim/trace/trace_run.h"
#include "tests/determinism/golden.h"

using namespace loam::sim;

namespace {
TraceRun checkTrace(const char* name, const char* scene, const char* script, const TraceOptions& options = {}) {
  CAPTURE(name);
  const std::string root = LOAM_SOURCE_DIR;
  // The same arguments as the goldens.txt line (600 steps, the scene's seed).
  auto run = runTrace(root + "/" + scene, std::nullopt, root + "/" + script, 600, options);
  if (!run) FAIL(run.error().message);
  const std::uint64_t want = loam::test::golden(name);
  if (run->hash != want) std::printf("%s: trace %016" PRIx64 ", golden %016" PRIx64 "\n", name, run->hash, want);
  CHECK(run->hash == want);
  return *run;
}

// Tiny: 32 columns, nothing generated ahead but the players' own columns, so the
// systems fault their columns in and the budget releases them again every step.
const StreamOptions kTiny1{.threads = 1, .prefetchRadiusVoxels = 0, .maxResidentColumns = 32};
const StreamOptions kTiny2{.threads = 2, .prefetchRadiusVoxels = 40, .maxResidentColumns = 32};
const StreamOptions kLarge2{.threads = 2, .maxResidentColumns = 1 << 20};

void checkStreamed(const char* name, const char* scene, const char* script) {
  for (const StreamOptions& o : {kTiny1, kTiny2, kLarge2}) {
    CAPTURE(o.threads);
    CAPTURE(o.maxResidentColumns);
    const TraceRun run = checkTrace(name, scene, script, TraceOptions{o});
    CHECK(run.stats.stream.faults > 0);  // the world really was streamed
    if (o.maxResidentColumns == 32) {
      CHECK(run.stats.stream.released > 100);
    } else {
      CHECK(run.stats.stream.released == 0);
    }
  }
}
}  // namespace

TEST_CASE("glade trace hash matches the golden") {
  checkTrace("sim-glade", "scenes/glade.toml", "scenes/scripts/glade-mirror.txt");
}

TEST_CASE("forest-fires trace hash matches the golden") {
  checkTrace("sim-forest-fires", "scenes/forest-fires.toml", "scenes/scripts/forest-fires.txt");
}

TEST_CASE("glade trace hash is the same with the world streamed (1 and 2 threads, tiny and large budgets)") {
  checkStreamed("sim-glade", "scenes/glade.toml", "scenes/scripts/glade-mirror.txt");
}

TEST_CASE("forest-fires trace hash is the same with the world streamed (1 and 2 threads, tiny and large budgets)") {
  checkStreamed("sim-forest-fires", "scenes/forest-fires.toml", "scenes/scripts/forest-fires.txt");
}
