#include <CLI/CLI.hpp>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "sim/trace/trace_run.h"
#include "tool/commands.h"

namespace loam::tool {

void addSimCommand(CLI::App& app, int& exitCode) {
  struct Options {
    std::string scene;
    std::uint64_t seed = 0;
    std::string script;
    std::uint64_t steps = 600;
    bool hash = false;
    bool stats = false;
    int streamThreads = 0;
    std::size_t residentColumns = 4096;
    double prefetchMetres = 64.0;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("sim", "Run the simulation on a scene with a script; print the trace hash");
  cmd->add_option("--scene", opt->scene, "Scene file (e.g. scenes/glade.toml)")->required();
  cmd->add_option("--seed", opt->seed, "World seed (default: the scene's)");
  cmd->add_option("--script", opt->script, "Script of timed commands (sim/trace/script.h); none = idle");
  cmd->add_option("--steps", opt->steps, "Steps to run (60 per simulated second)")->check(CLI::Range(0, 100000000));
  cmd->add_flag("--hash", opt->hash, "Print the trace hash (world plus state after every step) as the last line");
  cmd->add_flag("--stats", opt->stats, "Print stream totals and step timing to stderr");
  cmd->add_option("--stream-threads", opt->streamThreads,
                  "Stream the world with N generator threads (1 = all on the step thread) instead of generating it "
                  "whole; the hash is the same")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--resident-columns", opt->residentColumns,
                  "With --stream-threads: chunk columns kept resident at most (default 4096)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 24));
  cmd->add_option("--prefetch-radius", opt->prefetchMetres,
                  "With --stream-threads: metres around each player generated ahead (default 64)")
      ->check(CLI::Range(0.0, 4096.0));
  cmd->callback([opt, cmd, &exitCode] {
    std::optional<std::uint64_t> seed;
    if (cmd->count("--seed") > 0) seed = opt->seed;
    // Wall time is measured here, outside sim/: nothing in the simulation reads a clock.
    const auto t0 = std::chrono::steady_clock::now();
    sim::TraceOptions options;
    if (cmd->count("--stream-threads") > 0) {
      options.stream = sim::StreamOptions{
          .threads = opt->streamThreads,
          .prefetchRadiusVoxels = static_cast<std::int32_t>(opt->prefetchMetres * sim::kVoxelsPerMetre),
          .maxResidentColumns = opt->residentColumns};
    }
    auto run = sim::runTrace(opt->scene, seed, opt->script, opt->steps, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!run) {
      std::fprintf(stderr, "loam-tool sim: %s\n", run.error().message.c_str());
      // Bad files are usage errors; a world that cannot be built is a failure.
      exitCode = run.error().message.find("generat") != std::string::npos ? 1 : 2;
      return;
    }
    if (opt->stats) {
      const sim::TraceRunStats& s = run->stats;
      std::fprintf(stderr,
                   "steps %" PRIu64 " edits %" PRIu64 " state records %" PRIu64
                   " players %zu animals %zu; %.2f s wall including world build and trace hashing\n",
                   s.steps, s.edits, s.stateRecords, s.players, s.animals,
                   seconds);
      std::fprintf(stderr, "events by kind (sim/systems/events.h order):");
      for (std::uint64_t c : s.events) std::fprintf(stderr, " %" PRIu64, c);
      std::fprintf(stderr, "\nrejections by reason (RejectReason order):");
      for (std::uint64_t c : s.rejections) std::fprintf(stderr, " %" PRIu64, c);
      std::fprintf(stderr, "\n");
      if (options.stream) {
        std::fprintf(stderr,
                     "stream: %" PRIu64 " columns faulted on the step thread, %" PRIu64 " generated ahead, %" PRIu64
                     " wasted, %" PRIu64 " released; at most %zu resident\n",
                     s.stream.faults, s.stream.prefetched, s.stream.wasted, s.stream.released, s.stream.peakResident);
      }
    }
    if (opt->hash) std::printf("%016" PRIx64 "\n", run->hash);
    exitCode = 0;
  });
}

}  // namespace loam::tool
