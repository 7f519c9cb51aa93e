// Animal system cost on glade (budget: well under 0.2 ms per step for the
// scene's animals). Times stepAnimals alone (the other systems are not run), per
// tick, in two phases:
//   idle:   no players near: animals wander, perch, fly between perches, call;
//   active: eight players teleported next to animals every second (fleeing foxes,
//           following dog, birds taking off and re-perching).
// Prints one JSON object. Usage: animals_bench [ticks per phase, default 3600]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "sim/systems/animals.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/step/step.h"

using namespace loam::sim;

namespace {

// This thread's CPU time in microseconds: unlike wall time it does not count the
// time the thread was preempted (the machine may be shared).
double cpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

struct Phase {
  double meanUs = 0, p50Us = 0, p99Us = 0, maxUs = 0;
  double cpuMeanUs = 0, cpuP99Us = 0;
  double recordsPerStep = 0, callsPerSecond = 0;
};

template <class Setup>
Phase runPhase(SimState& s, int ticks, Setup&& beforeTick) {
  std::vector<double> us, cpu;
  us.reserve(static_cast<std::size_t>(ticks));
  cpu.reserve(static_cast<std::size_t>(ticks));
  StepOutput out;
  std::uint64_t records = 0, calls = 0;
  for (int t = 0; t < ticks; ++t) {
    beforeTick(s, t);
    out.clear();
    s.tick += 1;
    out.tick = s.tick;
    SimContext ctx(s, out);
    const double c0 = cpuMicros();
    const auto t0 = std::chrono::steady_clock::now();
    stepAnimals(s.animals, ctx);
    const auto t1 = std::chrono::steady_clock::now();
    cpu.push_back(cpuMicros() - c0);
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    records += out.animals.size();
    for (const Event& e : out.events) calls += std::holds_alternative<AnimalCallEvent>(e) ? 1 : 0;
  }
  Phase p;
  for (double v : us) p.meanUs += v;
  p.meanUs /= static_cast<double>(us.size());
  for (double v : cpu) p.cpuMeanUs += v;
  p.cpuMeanUs /= static_cast<double>(cpu.size());
  std::sort(cpu.begin(), cpu.end());
  p.cpuP99Us = cpu[cpu.size() * 99 / 100];
  std::sort(us.begin(), us.end());
  p.p50Us = us[us.size() / 2];
  p.p99Us = us[us.size() * 99 / 100];
  p.maxUs = us.back();
  p.recordsPerStep = static_cast<double>(records) / ticks;
  p.callsPerSecond = static_cast<double>(calls) * kTicksPerSecond / ticks;
  return p;
}

void printPhase(const char* name, const Phase& p, bool last) {
  std::printf(
      "  \"%s\": {\"mean_us\": %.2f, \"p50_us\": %.2f, \"p99_us\": %.2f, \"max_us\": %.2f, "
      "\"cpu_mean_us\": %.2f, \"cpu_p99_us\": %.2f, \"records_per_step\": %.2f, \"calls_per_second\": %.2f}%s\n",
      name, p.meanUs, p.p50Us, p.p99Us, p.maxUs, p.cpuMeanUs, p.cpuP99Us, p.recordsPerStep, p.callsPerSecond,
      last ? "" : ",");
}

}  // namespace

int main(int argc, char** argv) {
  const int ticks = argc > 1 ? std::max(60, std::atoi(argv[1])) : 3600;
  auto scene = loadScene(LOAM_SOURCE_DIR "/scenes/glade.toml");
  if (!scene) {
    std::fprintf(stderr, "%s\n", scene.error().message.c_str());
    return 1;
  }
  const auto c0 = std::chrono::steady_clock::now();
  auto created = createSimState(*scene, scene->defaultSeed);
  const auto c1 = std::chrono::steady_clock::now();
  if (!created) {
    std::fprintf(stderr, "%s\n", created.error().message.c_str());
    return 1;
  }
  SimState& s = *created;
  // initAnimals alone (perch scan and spawns), timed on the generated world.
  AnimalState fresh;
  const double ic0 = cpuMicros();
  const auto i0 = std::chrono::steady_clock::now();
  initAnimals(fresh, SimSetup{*scene, s.world, *s.materials, s.seed});
  const auto i1 = std::chrono::steady_clock::now();
  const double initCpuMs = (cpuMicros() - ic0) / 1000.0;

  const Phase idle = runPhase(s, ticks, [](SimState&, int) {});

  // Eight players, each visiting an animal every second.
  std::vector<Command> joins;
  for (std::uint32_t p = 1; p <= 8; ++p)
    joins.push_back(Command{PlayerId{p}, 1, JoinCommand{PlayerName::from("Bench")}});
  StepOutput out;
  step(s, joins, out);
  const std::size_t n = s.animals.animals.size();
  const Phase active = runPhase(s, ticks, [n](SimState& st, int t) {
    if (n == 0 || t % 60 != 0) return;
    for (std::size_t p = 0; p < st.players.size(); ++p) {
      const Animal& a = st.animals.animals[(p + static_cast<std::size_t>(t / 60)) % n];
      st.players[p].motion.position =
          Vec3i{a.position.x + unitsFromMetres(1.5 + 0.25 * static_cast<double>(p)), a.position.y, a.position.z};
    }
  });

  std::printf("{\n  \"bench\": \"animals\",\n  \"scene\": \"glade\",\n  \"animals\": %zu,\n  \"perches\": %zu,\n", n,
              s.animals.perches.size());
  std::printf("  \"ticks_per_phase\": %d,\n  \"create_ms\": %.1f,\n  \"init_animals_ms\": %.2f,\n", ticks,
              std::chrono::duration<double, std::milli>(c1 - c0).count(),
              std::chrono::duration<double, std::milli>(i1 - i0).count());
  std::printf("  \"init_animals_cpu_ms\": %.2f,\n", initCpuMs);
  printPhase("idle", idle, false);
  printPhase("active_8_players", active, true);
  std::printf("}\n");
  return 0;
}
