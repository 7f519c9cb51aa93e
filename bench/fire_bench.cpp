// Forest-fires budget: with all five fires burning, the whole sim step at
// most 4 ms mean and 8 ms p99 on one core. Lights the scene's five marked ignition
// points through igniteFire (at tick 0, or at their scene delays with --delays),
// runs the steps and prints one JSON object: step time mean / p50 / p99 / max (ms)
// over all steps and over the second half, burning cells, edits and fire records.
//
// Run: build/release/bench/fire_bench [--steps 1200] [--points 5] [--delays] [--scene PATH] [--seed N]
// (--points 0: the same steps without fire, for the baseline of the other systems)
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "sim/systems/fire.h"
#include "sim/gen/generator.h"
#include "sim/world/material.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/step/step.h"

using namespace loam::sim;

namespace {

std::string repoPath(const char* rel) { return std::string(LOAM_SOURCE_DIR "/") + rel; }

// A flammable voxel near the marked point (the point is the air above the ground;
// in the leaf-litter biome the ground is soil, so the nearest grass, bush or trunk).
bool findFuel(const SimState& st, VoxelCoord at, VoxelCoord& out) {
  for (int r = 0; r <= 60; ++r) {
    for (int dy = -2; dy <= 40; ++dy)
      for (int dz = -r; dz <= r; ++dz)
        for (int dx = -r; dx <= r; ++dx) {
          if (std::max(std::abs(dx), std::abs(dz)) != r) continue;
          const VoxelCoord v{at.x + dx, at.y + dy, at.z + dz};
          if (st.lut.flammable[st.world.get(v)]) {
            out = v;
            return true;
          }
        }
  }
  return false;
}

// CPU time of this thread, ms (bench::threadCpuUs: leaves out preemption).
double threadCpuMs() { return loam::bench::threadCpuUs() / 1e3; }

struct Stats {
  double mean = 0, p50 = 0, p99 = 0, max = 0;
};

Stats stats(std::vector<double> ms) {
  Stats s;
  if (ms.empty()) return s;
  double sum = 0;
  for (double v : ms) sum += v;
  s.mean = sum / static_cast<double>(ms.size());
  std::sort(ms.begin(), ms.end());
  s.p50 = ms[ms.size() / 2];
  s.p99 = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  s.max = ms.back();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenePath = repoPath("scenes/forest-fires.toml");
  int steps = 1200;
  bool delays = false;
  std::uint64_t seed = 0;
  bool haveSeed = false;
  std::size_t maxPoints = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--points") && i + 1 < argc) {
      maxPoints = static_cast<std::size_t>(std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--delays")) {
      delays = true;
    } else if (!std::strcmp(argv[i], "--scene") && i + 1 < argc) {
      scenePath = argv[++i];
    } else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
      haveSeed = true;
    } else {
      std::fprintf(stderr, "usage: fire_bench [--steps N] [--points N] [--delays] [--scene PATH] [--seed N]\n");
      return 2;
    }
  }
  auto scene = loadScene(scenePath);
  if (!scene) {
    std::fprintf(stderr, "fire_bench: %s\n", scene.error().message.c_str());
    return 2;
  }
  if (!haveSeed) seed = scene->defaultSeed;
  const auto g0 = std::chrono::steady_clock::now();
  auto created = createSimState(*scene, seed);
  if (!created) {
    std::fprintf(stderr, "fire_bench: %s\n", created.error().message.c_str());
    return 1;
  }
  SimState& st = *created;
  const double genSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - g0).count();

  struct Point {
    VoxelCoord fuel;
    std::uint64_t tick;
    bool lit = false;
  };
  std::vector<Point> points;
  for (const IgnitionPoint& ip : scene->ignitions) {
    if (points.size() >= maxPoints) break;
    Point p;
    if (!findFuel(st, placementVoxel(*scene, seed, ip.position, ip.onGround), p.fuel)) {
      std::fprintf(stderr, "fire_bench: no fuel near ignition point %s\n", ip.name.c_str());
      return 1;
    }
    p.tick = delays ? static_cast<std::uint64_t>(ip.delay * 60.0 + 0.5) : 0;
    points.push_back(p);
  }

  StepOutput out;
  std::vector<double> ms, cpu;
  ms.reserve(static_cast<std::size_t>(steps));
  cpu.reserve(static_cast<std::size_t>(steps));
  std::uint64_t edits = 0, fireRecords = 0, maxEdits = 0, ignited = 0, extinguished = 0;
  std::size_t maxCells = 0;
  // Edits by what burnt: grass, leaves, wood (and planks), charcoal, brick fills.
  std::uint64_t byKind[5] = {};
  const MaterialTable& mt = *st.materials;
  const MaterialId grass = mt.find("grass").value_or(255), leaves = mt.find("leaves").value_or(255),
                   charcoal = mt.find("charcoal").value_or(255);
  for (int i = 0; i < steps; ++i) {
    // Light the points due at this tick, as a command would just before the step.
    for (Point& p : points) {
      if (p.lit || p.tick > st.tick) continue;
      StepOutput side;
      SimContext ctx(st, side);
      p.lit = igniteFire(st.fire, ctx, p.fuel, Actor{});
    }
    const double c0 = threadCpuMs();
    const auto t0 = std::chrono::steady_clock::now();
    step(st, {}, out);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(threadCpuMs() - c0);
    edits += out.edits.size();
    maxEdits = std::max<std::uint64_t>(maxEdits, out.edits.size());
    for (const EditRecord& e : out.edits) {
      const int k = e.kind == EditRecord::Kind::BrickFill ? 4
                    : e.before == grass                    ? 0
                    : e.before == leaves                   ? 1
                    : e.before == charcoal                 ? 3
                                                           : 2;
      ++byKind[k];
    }
    fireRecords += out.fire.size();
    for (const Event& e : out.events) {
      ignited += std::holds_alternative<IgnitedEvent>(e);
      extinguished += std::holds_alternative<ExtinguishedEvent>(e);
    }
    maxCells = std::max(maxCells, st.fire.cells.size());
  }
  // Burning cells by burn duration: fast fuel (grass, leaves), slow (wood, charcoal).
  std::size_t fast = 0, slow = 0;
  for (const FireWork& w : st.fire.work) (w.duration <= 300 ? fast : slow) += 1;
  const Stats all = stats(ms);
  const Stats late = stats(std::vector<double>(ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end()));
  const Stats cpuAll = stats(cpu);
  const Stats cpuLate = stats(std::vector<double>(cpu.begin() + static_cast<std::ptrdiff_t>(cpu.size() / 2), cpu.end()));
  std::printf(
      "{\"bench\": \"fire\", \"scene\": \"%s\", \"seed\": %" PRIu64 ", \"steps\": %d, \"points\": %zu, \"delays\": %s, "
      "\"generate_s\": %.2f,\n"
      " \"step_ms\": {\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f},\n"
      " \"second_half_step_ms\": {\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f},\n"
      " \"step_cpu_ms\": {\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f},\n"
      " \"second_half_step_cpu_ms\": {\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f},\n"
      " \"burning_cells\": {\"end\": %zu, \"end_fast_fuel\": %zu, \"end_slow_fuel\": %zu, \"max\": %zu}, \"edits_per_step\": {\"mean\": %.1f, \"max\": %" PRIu64 "},\n"
      " \"edits_by_kind\": {\"grass\": %" PRIu64 ", \"leaves\": %" PRIu64 ", \"wood\": %" PRIu64
      ", \"charcoal\": %" PRIu64 ", \"brick_fills\": %" PRIu64 "},\n"
      " \"fire_records_per_step\": %.1f, \"ignited\": %" PRIu64 ", \"extinguished\": %" PRIu64 "}\n",
      scene->name.c_str(), seed, steps, points.size(), delays ? "true" : "false", genSeconds, all.mean, all.p50, all.p99, all.max,
      late.mean, late.p50, late.p99, late.max, cpuAll.mean, cpuAll.p50, cpuAll.p99, cpuAll.max, cpuLate.mean,
      cpuLate.p50, cpuLate.p99, cpuLate.max, st.fire.cells.size(), fast, slow, maxCells,
      steps ? static_cast<double>(edits) / steps : 0.0, maxEdits, byKind[0], byKind[1], byKind[2], byKind[3], byKind[4], steps ? static_cast<double>(fireRecords) / steps : 0.0,
      ignited, extinguished);
  return 0;
}
