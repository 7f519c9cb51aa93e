#include "sim/trace/trace_run.h"

#include <memory>
#include <vector>

#include "sim/gen/scene.h"
#include "sim/trace/script.h"
#include "sim/systems/sim_state.h"
#include "sim/step/step.h"
#include "sim/trace/trace_hash.h"

namespace loam::sim {

Result<TraceRun> runTrace(const std::string& scenePath, std::optional<std::uint64_t> seed,
                          const std::string& scriptPath, std::uint64_t steps, const TraceOptions& options) {
  auto scene = loadScene(scenePath);
  if (!scene) return scene.error();
  Script script;
  if (!scriptPath.empty()) {
    auto s = loadScript(scriptPath);
    if (!s) return s.error();
    script = std::move(s).value();
  }
  const std::uint64_t worldSeed = seed ? *seed : scene->defaultSeed;
  std::unique_ptr<ColumnStreamer> streamer;
  if (options.stream) {
    auto made = ColumnStreamer::create(*scene, worldSeed, *options.stream);
    if (!made) return made.error();
    streamer = std::move(made).value();
  }
  auto state = streamer ? createStreamedSimState(*scene, worldSeed, *streamer) : createSimState(*scene, worldSeed);
  if (!state) return state.error();
  SimState& st = *state;
  std::vector<StreamCentre> centres;
  TraceRun run;
  TraceHasher trace(st);
  ScriptRunner runner(std::move(script));
  std::vector<Command> commands;
  StepOutput out;
  for (std::uint64_t i = 0; i < steps; ++i) {
    commands.clear();
    runner.commandsFor(st, commands);
    if (streamer) {
      playerStreamCentres(st, centres);
      streamer->update(st.world, centres);
    }
    step(st, commands, out);
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
  if (streamer) run.stats.stream = streamer->stats();
  return run;
}

}  // namespace loam::sim
