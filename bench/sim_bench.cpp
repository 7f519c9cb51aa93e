// Simulation step cost on the glade: idle (no players; the systems alone, e.g. the
// waterfall once water flows) and with the eight-player mirror script. Budget
// (docs/PERF.md): glade idle step at most 1 ms mean on one core.
// Run: build/release/bench/sim_bench --benchmark_format=json
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "sim/gen/scene.h"
#include "sim/trace/script.h"
#include "sim/systems/sim_state.h"
#include "sim/step/step.h"

using namespace loam::sim;

namespace {

std::unique_ptr<SimState> makeGlade() {
  auto scene = loadScene(LOAM_SOURCE_DIR "/scenes/glade.toml");
  if (!scene) {
    std::fprintf(stderr, "sim_bench: %s\n", scene.error().message.c_str());
    std::exit(2);
  }
  auto st = createSimState(*scene, scene->defaultSeed);
  if (!st) {
    std::fprintf(stderr, "sim_bench: %s\n", st.error().message.c_str());
    std::exit(1);
  }
  return std::make_unique<SimState>(std::move(st).value());
}

void BM_GladeIdleStep(benchmark::State& bs) {
  auto st = makeGlade();
  StepOutput out;
  // Warm up: let sources start flowing so the measured steps are steady state.
  for (int i = 0; i < 600; ++i) step(*st, {}, out);
  for (auto _ : bs) {
    step(*st, {}, out);
    benchmark::DoNotOptimize(out.edits.data());
  }
  bs.SetItemsProcessed(bs.iterations());
}

void BM_GladeScriptedStep(benchmark::State& bs) {
  auto st = makeGlade();
  auto script = loadScript(LOAM_SOURCE_DIR "/scenes/scripts/glade-mirror.txt");
  if (!script) {
    std::fprintf(stderr, "sim_bench: %s\n", script.error().message.c_str());
    std::exit(2);
  }
  ScriptRunner runner(std::move(script).value());
  std::vector<Command> commands;
  StepOutput out;
  for (auto _ : bs) {
    bs.PauseTiming();
    commands.clear();
    runner.commandsFor(*st, commands);
    bs.ResumeTiming();
    step(*st, commands, out);
    benchmark::DoNotOptimize(out.edits.data());
  }
  bs.SetItemsProcessed(bs.iterations());
}

}  // namespace

BENCHMARK(BM_GladeIdleStep)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GladeScriptedStep)->Unit(benchmark::kMicrosecond)->Iterations(3000);

BENCHMARK_MAIN();
