// Player motion on uneven terrain: time per motionStep of one player walking (and
// running) across the generated glade, turning slowly so it crosses slopes, grass
// tufts, roots and ledges, with a CollisionCache as the step and client prediction
// use (and once without). Budget: at most 2 us median per walking step.
// Run: build/release/bench/motion_bench --benchmark_format=json
//        --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
// (the median aggregate is the figure; docs/PERF.md records it).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "sim/world/material.h"
#include "sim/systems/motion.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_state.h"

using namespace loam::sim;

namespace {

struct World {
  std::unique_ptr<SimState> state;
};

const SimState& glade() {
  static World w = [] {
    auto scene = loadScene(LOAM_SOURCE_DIR "/scenes/glade.toml");
    if (!scene) {
      std::fprintf(stderr, "motion_bench: %s\n", scene.error().message.c_str());
      std::exit(2);
    }
    auto st = createSimState(*scene, scene->defaultSeed);
    if (!st) {
      std::fprintf(stderr, "motion_bench: %s\n", st.error().message.c_str());
      std::exit(1);
    }
    return World{std::make_unique<SimState>(std::move(st).value())};
  }();
  return *w.state;
}

void walk(benchmark::State& bs, std::uint8_t buttons, bool useCache) {
  const SimState& st = glade();
  CollisionCache cache;  // as the server's step and client prediction use it
  CollisionCache* masks = useCache ? &cache : nullptr;
  const Spawn start = st.spawns.front();
  PlayerState p;
  p.position = start.position;
  PlayerInput in;
  in.moveForward = 127;
  in.buttons = buttons;
  // Settle on the ground first.
  for (int i = 0; i < 30; ++i) p = motionStep(p, PlayerInput{.sequence = 0}, st.world, st.lut);
  std::uint32_t tick = 0;
  std::int64_t onGround = 0;
  for (auto _ : bs) {
    ++tick;
    in.sequence = tick;
    in.yaw = static_cast<std::uint16_t>(tick * 23u);  // a full turn every ~47 s: a wandering loop
    p = motionStep(p, in, st.world, st.lut, masks);
    onGround += p.onGround ? 1 : 0;
    // Stay on the meadow and the slopes around it (12 m): walk back to the spawn.
    const std::int64_t dx = p.position.x - start.position.x, dz = p.position.z - start.position.z;
    if (dx * dx + dz * dz > std::int64_t{unitsFromMetres(12.0)} * unitsFromMetres(12.0)) {
      p = PlayerState{};
      p.position = start.position;
    }
    benchmark::DoNotOptimize(p);
  }
  bs.counters["on_ground_share"] = static_cast<double>(onGround) / static_cast<double>(bs.iterations());
  bs.SetItemsProcessed(bs.iterations());
}

void BM_MotionWalk(benchmark::State& bs) { walk(bs, 0, true); }
void BM_MotionRun(benchmark::State& bs) { walk(bs, kButtonRun, true); }
void BM_MotionWalkNoCache(benchmark::State& bs) { walk(bs, 0, false); }

void BM_MotionStandIdle(benchmark::State& bs) {
  const SimState& st = glade();
  PlayerState p;
  p.position = st.spawns.front().position;
  for (int i = 0; i < 30; ++i) p = motionStep(p, PlayerInput{}, st.world, st.lut);
  for (auto _ : bs) {
    p = motionStep(p, PlayerInput{}, st.world, st.lut);
    benchmark::DoNotOptimize(p);
  }
  bs.SetItemsProcessed(bs.iterations());
}

}  // namespace

BENCHMARK(BM_MotionWalk);
BENCHMARK(BM_MotionRun);
BENCHMARK(BM_MotionWalkNoCache);
BENCHMARK(BM_MotionStandIdle);

BENCHMARK_MAIN();
