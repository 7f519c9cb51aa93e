// Water cost on the glade, idle (no players): the waterfall and the spring flow, the
// stream carries the water to the pond, which overflows at its outlet. Budget
// (docs/PERF.md): the whole glade idle step at most 1 ms mean on one core, water well
// under that. Two runs from the same world: the full step (step()), and the water
// system alone (stepWater in a bare SimContext: the idle glade's other systems do
// not touch water, so it follows the same water trajectory). Windows: steps
// 1..600 (water finding its way) and 3001..3600 (settled).
// Run: build/<dir>/bench/water_bench [--steps N] [--trace]   (prints JSON)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/step/step.h"
#include "sim/systems/water.h"

using namespace loam::sim;

namespace {

// CPU time of this thread (the budget is "on one core"; the build machine is shared,
// so wall time would measure the neighbours too).
double cpuMicros() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;
}
using Clock = std::chrono::steady_clock;

struct Sample {
  double us = 0;            // wall time of the step, microseconds
  std::size_t processed = 0;
  std::size_t changed = 0;
  std::size_t records = 0;  // water records
  std::size_t edits = 0;    // edit records (water voxels)
};

struct Window {
  double mean = 0, p50 = 0, p99 = 0, max = 0;
  double processedMean = 0, recordsMean = 0, editsMean = 0;
  std::size_t processedMax = 0;
};

Window summarise(const std::vector<Sample>& s, std::size_t from, std::size_t to) {  // [from, to) step indices
  Window w;
  std::vector<double> t;
  for (std::size_t i = from; i < to && i < s.size(); ++i) {
    t.push_back(s[i].us);
    w.mean += s[i].us;
    w.processedMean += static_cast<double>(s[i].processed);
    w.recordsMean += static_cast<double>(s[i].records);
    w.editsMean += static_cast<double>(s[i].edits);
    w.processedMax = std::max(w.processedMax, s[i].processed);
  }
  if (t.empty()) return w;
  const auto n = static_cast<double>(t.size());
  w.mean /= n;
  w.processedMean /= n;
  w.recordsMean /= n;
  w.editsMean /= n;
  std::sort(t.begin(), t.end());
  w.p50 = t[t.size() / 2];
  w.p99 = t[std::min(t.size() - 1, t.size() * 99 / 100)];
  w.max = t.back();
  return w;
}

void printWindow(const char* name, const Window& w, bool comma) {
  std::printf(
      "    \"%s\": {\"mean_us\": %.2f, \"p50_us\": %.2f, \"p99_us\": %.2f, \"max_us\": %.2f, "
      "\"processed_cells_mean\": %.1f, \"processed_cells_max\": %zu, \"water_records_mean\": %.1f, "
      "\"edits_mean\": %.1f}%s\n",
      name, w.mean, w.p50, w.p99, w.max, w.processedMean, w.processedMax, w.recordsMean, w.editsMean,
      comma ? "," : "");
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 3600;
  bool trace = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) steps = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--trace") == 0) trace = true;
  }
  auto scene = loadScene(LOAM_SOURCE_DIR "/scenes/glade.toml");
  if (!scene) {
    std::fprintf(stderr, "water_bench: %s\n", scene.error().message.c_str());
    return 2;
  }
  const auto t0 = Clock::now();
  auto created = createSimState(*scene, scene->defaultSeed);
  if (!created) {
    std::fprintf(stderr, "water_bench: %s\n", created.error().message.c_str());
    return 1;
  }
  const double createMs = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  SimState full = std::move(created).value();
  SimState waterOnly = full;  // deep copy: same world, same water state
  const WaterStats initial = waterStats(full.water);

  StepOutput out;
  std::vector<Sample> fullSamples, waterSamples;
  fullSamples.reserve(static_cast<std::size_t>(steps));
  waterSamples.reserve(static_cast<std::size_t>(steps));
  for (int i = 0; i < steps; ++i) {
    const double a = cpuMicros();
    step(full, {}, out);
    const double b = cpuMicros();
    const WaterStats ws = waterStats(full.water);
    fullSamples.push_back({b - a, ws.processedVoxels,
                           ws.changedVoxels, out.water.size(), out.edits.size()});
    if (trace && (i + 1) % 100 == 0) {
      std::fprintf(stderr, "step %d: %.0f us processed %zu changed %zu active %zu wet %zu frozen %d edits %zu\n", i + 1,
                   fullSamples.back().us, ws.processedVoxels, ws.changedVoxels, ws.activeVoxels, ws.wetVoxels,
                   ws.frozen ? 1 : 0, out.edits.size());
    }
  }
  for (int i = 0; i < steps; ++i) {
    out.clear();
    waterOnly.tick += 1;
    out.tick = waterOnly.tick;
    const double a = cpuMicros();
    SimContext ctx(waterOnly, out);
    stepWater(waterOnly.water, ctx);
    const double b = cpuMicros();
    const WaterStats ws = waterStats(waterOnly.water);
    waterSamples.push_back({b - a, ws.processedVoxels,
                            ws.changedVoxels, out.water.size(), out.edits.size()});
  }
  const bool same = !diffWater(full.water, waterOnly.water).has_value();
  const WaterStats end = waterStats(full.water);
  const auto n = static_cast<std::size_t>(steps);

  std::printf("{\n  \"bench\": \"water_glade_idle\",\n  \"steps\": %d,\n  \"create_ms\": %.1f,\n", steps, createMs);
  std::printf("  \"initial\": {\"wet_cells\": %zu, \"bricks\": %zu, \"brick_bytes\": %zu},\n", initial.wetVoxels,
              initial.bricks, initial.bricks * sizeof(internal::WaterBrick));
  std::printf("  \"sources\": [");
  for (std::size_t i = 0; i < full.water.sources.size(); ++i) {
    const internal::WaterSourceRoute& r = full.water.sources[i];
    static const char* const kEnds[] = {"blocked", "leaves", "collects"};
    std::printf("%s{\"units_per_tick\": %u, \"route\": \"%s\", \"route_cells_checked\": %d, \"fall\": %d}",
                i ? ", " : "", r.rate, kEnds[static_cast<int>(r.end)], r.searched, r.fall);
  }
  std::printf("],\n");
  std::printf("  \"full_step\": {\n");
  printWindow("steps_1_600", summarise(fullSamples, 0, 600), true);
  printWindow("steps_3001_3600", summarise(fullSamples, 3000, 3600), true);
  printWindow("all", summarise(fullSamples, 0, n), false);
  std::printf("  },\n  \"water_only\": {\n");
  printWindow("steps_1_600", summarise(waterSamples, 0, 600), true);
  printWindow("steps_3001_3600", summarise(waterSamples, 3000, 3600), true);
  printWindow("all", summarise(waterSamples, 0, n), false);
  std::printf("  },\n");
  std::printf(
      "  \"end\": {\"wet_cells\": %zu, \"bricks\": %zu, \"active_cells\": %zu, \"processed_cells\": %zu, "
      "\"frozen\": %s, \"water_only_matches_full\": %s}\n}\n",
      end.wetVoxels, end.bricks, end.activeVoxels, end.processedVoxels, end.frozen ? "true" : "false",
      same ? "true" : "false");
  return 0;
}
