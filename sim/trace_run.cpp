#include "sim/trace_run.h"

#include <chrono>
#include <vector>

#include "sim/scene.h"
#include "sim/script.h"
#include "sim/sim_state.h"
#include "sim/step.h"
#include "sim/trace_hash.h"

namespace loam::sim {

Result<TraceRun> runTrace(const std::string& scenePath, std::optional<std::uint64_t> seed,
                          const std::string& scriptPath, std::uint64_t steps) {
  auto scene = loadScene(scenePath);
  if (!scene) return scene.error();
  Script script;
  if (!scriptPath.empty()) {
    auto s = loadScript(scriptPath);
    if (!s) return s.error();
    script = std::move(s).value();
  }
  auto state = createSimState(*scene, seed ? *seed : scene->defaultSeed);
  if (!state) return state.error();
  SimState& st = *state;
  TraceRun run;
  TraceHasher trace(st);
  ScriptRunner runner(std::move(script));
  std::vector<Command> commands;
  StepOutput out;
  for (std::uint64_t i = 0; i < steps; ++i) {
    commands.clear();
    runner.commandsFor(st, commands);
    // Timing is reported, never folded into anything that affects state.
    const auto t0 = std::chrono::steady_clock::now();
    step(st, commands, out);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    run.stats.stepSeconds += dt;
    if (dt > run.stats.maxStepSeconds) run.stats.maxStepSeconds = dt;
    trace.addStep(st, out);
    run.stats.edits += out.edits.size();
    run.stats.stateRecords += out.players.size() + out.water.size() + out.fire.size() + out.animals.size();
    for (const Event& e : out.events) {
      ++run.stats.events[e.index()];
      if (const auto* r = std::get_if<CommandRejectedEvent>(&e)) ++run.stats.rejections[static_cast<unsigned>(r->reason) & 15u];
    }
  }
  run.stats.steps = steps;
  run.stats.players = st.players.size();
  run.stats.animals = st.animals.animals.size();
  run.hash = trace.finish(st);
  return run;
}

}  // namespace loam::sim
