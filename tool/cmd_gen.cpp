// `loam-tool gen`: generate a scene's world and print its hash (the determinism gate
// runs this on every build), with timing, memory and progress on stderr.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "sim/gen/generator.h"
#include "sim/gen/scene.h"
#include "sim/world/world_hash.h"
#include "tool/commands.h"
#include "tool/tool_util.h"

namespace loam::tool {

void addGenCommand(CLI::App& app, int& exitCode) {
  struct Options {
    std::string scene;
    std::int64_t seed = -1;
    int threads = 0;
    bool hash = false;
    bool cells = false;
    bool quiet = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("gen", "Generate a scene's world; print its hash with --hash");
  cmd->add_option("--scene", opt->scene, "Scene file (TOML)")->required();
  cmd->add_option("--seed", opt->seed, "World seed (default: the scene's seed)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--threads", opt->threads, "Worker threads (0 = all cores); never changes the result")
      ->check(CLI::Range(0, 1024));
  cmd->add_flag("--hash", opt->hash, "Print the content hash of the generated world (16 hex digits) as the last line of stdout");
  cmd->add_flag("--cells", opt->cells, "Also print every 12.8 m cell's hash (x z hash)");
  cmd->add_flag("--quiet", opt->quiet, "No progress on stderr");
  cmd->callback([opt, &exitCode] {
    auto t0 = std::chrono::steady_clock::now();
    auto scene = sim::loadScene(opt->scene);
    if (!scene) {
      std::fprintf(stderr, "%s\n", scene.error().message.c_str());
      exitCode = 2;
      return;
    }
    const std::uint64_t seed = seedFor(*scene, opt->seed);
    auto t1 = std::chrono::steady_clock::now();
    std::optional<sim::BrickStore> world = generateForCommand(*scene, seed, opt->threads, "gen", opt->quiet);
    auto t2 = std::chrono::steady_clock::now();
    if (!world) {
      exitCode = 1;
      return;
    }
    sim::WorldHashes h = sim::hashContent(*world);
    auto t3 = std::chrono::steady_clock::now();
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    sim::StoreMemoryStats mem = world->memoryStats();
    std::size_t mixed = mem.mixedBricks[0] + mem.mixedBricks[1] + mem.mixedBricks[2] + mem.mixedBricks[3];
    std::fprintf(stderr,
                 "gen: scene %s seed %" PRIu64 " generator v%u: load %.1f ms, generate %.1f ms, hash %.1f ms; "
                 "world %.1f MB (%zu mixed bricks, %zu expanded chunks of %d); process peak RSS %s\n",
                 scene->name.c_str(), seed, sim::kGeneratorVersion, ms(t0, t1), ms(t1, t2), ms(t2, t3),
                 static_cast<double>(mem.totalBytes) / 1048576.0, mixed, mem.expandedChunks, world->chunkCount(),
                 peakRssText().c_str());
    if (opt->cells) {
      for (const sim::CellHash& c : h.cells) {
        std::printf("%d %d %016" PRIx64 "\n", c.cell.x, c.cell.z, c.hash);
      }
    }
    if (opt->hash) {
      std::printf("%016" PRIx64 "\n", h.world);
    } else if (!opt->cells) {
      std::printf("scene %s seed %" PRIu64 " world %016" PRIx64 " (%.1f MB)\n", scene->name.c_str(), seed, h.world,
                  static_cast<double>(mem.totalBytes) / 1048576.0);
    }
    exitCode = 0;
  });
}

}  // namespace loam::tool
