#include <CLI/CLI.hpp>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sim/scene.h"
#include "sim/script.h"
#include "sim/sim_state.h"
#include "sim/step.h"
#include "sim/trace_hash.h"
#include "tool/commands.h"

namespace loam::tool {

void addSimCommand(CLI::App& app, int& exitCode) {
  struct Options {
    std::string scene;
    std::uint64_t seed = 0;
    bool seedGiven = false;
    std::string script;
    std::uint64_t steps = 600;
    bool hash = false;
    bool stats = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("sim", "Run the simulation on a scene with a script; print the trace hash");
  cmd->add_option("--scene", opt->scene, "Scene file (e.g. scenes/glade.toml)")->required();
  cmd->add_option("--seed", opt->seed, "World seed (default: the scene's)");
  cmd->add_option("--script", opt->script, "Script of timed commands (sim/script.h); none = idle");
  cmd->add_option("--steps", opt->steps, "Steps to run (60 per simulated second)")->check(CLI::Range(0, 100000000));
  cmd->add_flag("--hash", opt->hash, "Print the trace hash (world plus state after every step) as the last line");
  cmd->add_flag("--stats", opt->stats, "Print stream totals and step timing to stderr");
  cmd->callback([opt, cmd, &exitCode] {
    auto scene = sim::loadScene(opt->scene);
    if (!scene) {
      std::fprintf(stderr, "loam-tool sim: %s\n", scene.error().message.c_str());
      exitCode = 2;
      return;
    }
    const std::uint64_t seed = cmd->count("--seed") > 0 ? opt->seed : scene->defaultSeed;
    sim::Script script;
    if (!opt->script.empty()) {
      auto s = sim::loadScript(opt->script);
      if (!s) {
        std::fprintf(stderr, "loam-tool sim: %s\n", s.error().message.c_str());
        exitCode = 2;
        return;
      }
      script = std::move(s).value();
    }
    auto state = sim::createSimState(*scene, seed);
    if (!state) {
      std::fprintf(stderr, "loam-tool sim: %s\n", state.error().message.c_str());
      exitCode = 1;
      return;
    }
    sim::SimState& st = *state;
    sim::TraceHasher trace(st);
    sim::ScriptRunner runner(std::move(script));
    std::vector<sim::Command> commands;
    sim::StepOutput out;
    std::uint64_t edits = 0, events = 0, rejected = 0, stateRecords = 0;
    std::uint64_t eventCounts[std::variant_size_v<sim::Event>] = {};
    std::uint64_t reasons[16] = {};
    double stepSeconds = 0;
    for (std::uint64_t i = 0; i < opt->steps; ++i) {
      commands.clear();
      runner.commandsFor(st, commands);
      const auto t0 = std::chrono::steady_clock::now();
      sim::step(st, commands, out);
      stepSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      trace.addStep(st, out);
      edits += out.edits.size();
      events += out.events.size();
      stateRecords += out.players.size() + out.water.size() + out.fire.size() + out.animals.size();
      for (const sim::Event& e : out.events) {
        ++eventCounts[e.index()];
        if (const auto* r = std::get_if<sim::CommandRejectedEvent>(&e)) {
          ++rejected;
          ++reasons[static_cast<unsigned>(r->reason) & 15u];
        }
      }
    }
    const std::uint64_t h = trace.finish(st);
    if (opt->stats) {
      std::fprintf(stderr,
                   "steps %" PRIu64 " edits %" PRIu64 " events %" PRIu64 " (rejected %" PRIu64 ") state records %" PRIu64
                   " players %zu water %zu fire %zu animals %zu; step mean %.1f us\n",
                   opt->steps, edits, events, rejected, stateRecords, st.players.size(), st.water.cells.size(),
                   st.fire.cells.size(), st.animals.animals.size(),
                   opt->steps ? stepSeconds / static_cast<double>(opt->steps) * 1e6 : 0.0);
      std::fprintf(stderr, "events by kind (sim/events.h order):");
      for (std::uint64_t c : eventCounts) std::fprintf(stderr, " %" PRIu64, c);
      std::fprintf(stderr, "\nrejections by reason (RejectReason order):");
      for (std::uint64_t c : reasons) std::fprintf(stderr, " %" PRIu64, c);
      std::fprintf(stderr, "\n");
    }
    if (opt->hash) std::printf("%016" PRIx64 "\n", h);
    exitCode = 0;
  });
}

}  // namespace loam::tool
