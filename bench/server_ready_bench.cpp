// server_ready_bench: how long loam-server's start path takes per scene, in process,
// split into its phases, printed as JSON. Never run as a test; results and commands
// go in docs/PERF.md ("Server start").
//
//   server_ready_bench [--scenes highlands,glade,...] [--threads N] [--dir DIR]
//                      [--repeat N] [--no-breakdown]
//
// For each scene (a name in scenes/, or a path ending in .toml) it runs what
// server/server_loop.cpp runs before /readyz turns 200, with the server's defaults
// (stream threads 2, port 0 on 127.0.0.1, a fresh save folder under --dir):
//   load      loadScene
//   streamer  ColumnStreamer::create (streamed scenes: !generatableWhole)
//   state     createStreamedSimState, or generateWorld + describeWorld +
//             createSimStateFromWorld for a scene generated whole
//   describe  describeWorld (streamed: the spawn columns' hashes)
//   db        openWorldDb (creates the world database for the generated world)
//   host      ServerHost::open
// total_ms is their sum (wall time); cpu_ms the process's CPU time over the same
// span (both threads), which the machine's load does not inflate. The minimum and
// median of --repeat runs are printed.
//
// Streamed scenes also get a breakdown (unless --no-breakdown), measured separately
// after the runs, on a scratch store: the columns createStreamedSimState generates
// at start, by why (spawn, water, dens; each group without the columns of the groups
// before it, so they add up), with the wall time of generating each group on the
// streamer's threads (dens: the rest of what it starts with, the ground initAnimals
// reads), and the time of initWater and initAnimals over the started
// state (the state's setup reads only what is present by then).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "net/server_host.h"
#include "server/saves.h"
#include "sim/gen/column_streamer.h"
#include "sim/gen/generator.h"
#include "sim/gen/scene.h"
#include "sim/save/save.h"
#include "sim/systems/animals.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/systems/water.h"

using namespace loam;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double cpuMs() { return static_cast<double>(std::clock()) * 1000.0 / CLOCKS_PER_SEC; }

/// One run of the start path.
struct Run {
  double loadMs = 0, streamerMs = 0, stateMs = 0, describeMs = 0, dbMs = 0, hostMs = 0, totalMs = 0, cpuMs = 0;
  std::size_t startColumns = 0;  ///< streamed: columns present after the start state
};

/// A group of start columns.
struct Group {
  const char* name;
  std::size_t columns = 0;
  double ms = 0;
};

struct Figures {
  std::string scene;
  bool streamed = false;
  std::vector<Run> runs;
  std::vector<Group> groups;
  double initWaterMs = 0, initAnimalsMs = 0;
  std::size_t waterBricks = 0, wetVoxels = 0;  ///< the water grid's records and wet cells
};

std::string scenePath(const std::string& name) {
  if (name.size() > 5 && name.substr(name.size() - 5) == ".toml") return name;
  return std::string(LOAM_SOURCE_DIR) + "/scenes/" + name + ".toml";
}

/// The server's start path once; false (message on stderr) when a part fails.
bool runOnce(const std::string& path, int threads, const std::string& dir, Run& r) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  const double c0 = cpuMs();
  auto t = Clock::now();
  auto scene = sim::loadScene(path);
  if (!scene) return std::fprintf(stderr, "%s\n", scene.error().message.c_str()), false;
  r.loadMs = msSince(t);
  const std::uint64_t seed = scene->defaultSeed;

  t = Clock::now();
  std::unique_ptr<sim::ColumnStreamer> streamer;
  if (!sim::generatableWhole(*scene)) {
    auto made = sim::ColumnStreamer::create(*scene, seed, {.threads = threads, .maxResidentColumns = 2048});
    if (!made) return std::fprintf(stderr, "%s\n", made.error().message.c_str()), false;
    streamer = std::move(made).value();
  }
  r.streamerMs = msSince(t);

  t = Clock::now();
  net::HostedWorld hosted;
  sim::Result<sim::SimState> state = sim::makeError("unset");
  if (streamer) {
    state = sim::createStreamedSimState(*scene, seed, *streamer);
    if (!state) return std::fprintf(stderr, "%s\n", state.error().message.c_str()), false;
    r.stateMs = msSince(t);
    r.startColumns = state->world.presentColumns().size();
    t = Clock::now();
    hosted = net::describeWorld(*scene, state->world);
    r.describeMs = msSince(t);
  } else {
    // As the server: the default options (every hardware thread).
    auto world = sim::generateWorld(*scene, seed, sim::kGeneratorVersion);
    if (!world) return std::fprintf(stderr, "%s\n", world.error().message.c_str()), false;
    hosted = net::describeWorld(*scene, *world);
    state = sim::createSimStateFromWorld(*scene, seed, std::move(*world));
    r.stateMs = msSince(t);
  }

  t = Clock::now();
  const sim::SaveIdentity identity{state->sceneHash, seed, sim::kGeneratorVersion};
  auto opened = server::openWorldDb(
      dir, scene->name, identity, *state, [] { return sim::Result<sim::SimState>(sim::makeError("no regenerate")); },
      false, false);
  if (!opened || !opened->stop.empty()) {
    std::fprintf(stderr, "openWorldDb: %s\n", opened ? opened->stop.c_str() : opened.error().message.c_str());
    return false;
  }
  r.dbMs = msSince(t);

  t = Clock::now();
  net::ServerConfig config;
  config.bindAddress = "127.0.0.1";
  config.port = 0;
  auto host = net::ServerHost::open(config, std::move(*state), std::move(hosted), streamer.get());
  if (!host) return std::fprintf(stderr, "%s\n", host.error().message.c_str()), false;
  r.hostMs = msSince(t);
  r.totalMs = r.loadMs + r.streamerMs + r.stateMs + r.describeMs + r.dbMs + r.hostMs;
  r.cpuMs = cpuMs() - c0;
  host->reset();
  opened->db.reset();
  std::filesystem::remove_all(dir, ec);
  return true;
}

/// Streamed scenes: the start columns by why, and the systems' setup over them.
bool breakdown(const std::string& path, int threads, Figures& f) {
  auto scene = sim::loadScene(path);
  if (!scene) return false;
  const std::uint64_t seed = scene->defaultSeed;
  auto streamer = sim::ColumnStreamer::create(*scene, seed, {.threads = threads, .maxResidentColumns = 1u << 20});
  if (!streamer) return false;
  sim::BrickStore world(scene->worldBounds);
  world.markGenerated();
  world.setColumnSource(streamer->get());
  std::set<std::pair<std::int32_t, std::int32_t>> seen;
  auto group = [&](const char* name, const std::vector<sim::ChunkColumn>& columns) {
    std::vector<sim::ChunkColumn> fresh;
    for (sim::ChunkColumn c : columns)
      if (seen.insert({c.x, c.z}).second) fresh.push_back(c);
    auto t = Clock::now();
    (*streamer)->faultAll(fresh, world);
    f.groups.push_back({name, fresh.size(), msSince(t)});
  };
  group("spawn", sim::spawnColumns(*scene));
  // The rest of what createStreamedSimState starts with (what initAnimals reads
  // around the dens), from a state made on its own streamer.
  {
    auto other = sim::ColumnStreamer::create(*scene, seed, {.threads = threads, .maxResidentColumns = 1u << 20});
    if (!other) return false;
    auto started = sim::createStreamedSimState(*scene, seed, **other);
    if (!started) return false;
    const std::span<const sim::ChunkColumn> present = started->world.presentColumns();
    group("dens", std::vector<sim::ChunkColumn>(present.begin(), present.end()));
  }
  // The systems' setup over the started state (what is present: nothing faults).
  auto state = sim::createStreamedSimState(*scene, seed, **streamer);
  if (!state) return false;
  const sim::SimSetup setup{*scene, state->world, *state->materials, seed};
  sim::WaterState water;
  auto t = Clock::now();
  sim::initWater(water, setup);
  f.initWaterMs = msSince(t);
  f.waterBricks = water.grid.brickCount();
  f.wetVoxels = water.grid.size();
  sim::AnimalState animals;
  t = Clock::now();
  sim::initAnimals(animals, setup);
  f.initAnimalsMs = msSince(t);
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double minimum(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

void print(const Figures& f, bool last) {
  auto field = [&](const char* name, double Run::*m) {
    std::vector<double> v;
    for (const Run& r : f.runs) v.push_back(r.*m);
    std::printf("    \"%s\": {\"min\": %.1f, \"median\": %.1f},\n", name, minimum(v), median(v));
  };
  std::printf("  {\n    \"scene\": \"%s\",\n    \"streamed\": %s,\n    \"runs\": %zu,\n", f.scene.c_str(),
              f.streamed ? "true" : "false", f.runs.size());
  if (f.streamed && !f.runs.empty()) std::printf("    \"start_columns\": %zu,\n", f.runs.front().startColumns);
  field("load_ms", &Run::loadMs);
  field("streamer_ms", &Run::streamerMs);
  field("state_ms", &Run::stateMs);
  field("describe_ms", &Run::describeMs);
  field("db_ms", &Run::dbMs);
  field("host_ms", &Run::hostMs);
  field("cpu_ms", &Run::cpuMs);
  if (!f.groups.empty()) {
    std::printf("    \"start_column_groups\": [");
    for (std::size_t i = 0; i < f.groups.size(); ++i)
      std::printf("%s{\"why\": \"%s\", \"columns\": %zu, \"ms\": %.1f}", i ? ", " : "", f.groups[i].name,
                  f.groups[i].columns, f.groups[i].ms);
    std::printf("],\n    \"init_water_ms\": %.1f,\n    \"water_bricks\": %zu,\n    \"wet_voxels\": %zu,\n"
                "    \"init_animals_ms\": %.1f,\n",
                f.initWaterMs, f.waterBricks, f.wetVoxels, f.initAnimalsMs);
  }
  std::vector<double> totals;
  for (const Run& r : f.runs) totals.push_back(r.totalMs);
  std::printf("    \"total_ms\": {\"min\": %.1f, \"median\": %.1f}\n  }%s\n", minimum(totals), median(totals),
              last ? "" : ",");
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenes = "highlands,glade,flat,forest-fires,court";
  std::string dir = (std::filesystem::temp_directory_path() / "loam_server_ready_bench").string();
  int threads = 2, repeat = 3;
  bool withBreakdown = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool hasValue = i + 1 < argc;
    if (a == "--scenes" && hasValue) scenes = argv[++i];
    else if (a == "--threads" && hasValue) threads = std::max(1, std::atoi(argv[++i]));
    else if (a == "--dir" && hasValue) dir = argv[++i];
    else if (a == "--repeat" && hasValue) repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--no-breakdown") withBreakdown = false;
    else return std::fprintf(stderr, "unknown argument %s\n", a.c_str()), 2;
  }
  std::vector<Figures> out;
  std::stringstream list(scenes);
  for (std::string name; std::getline(list, name, ',');) {
    Figures f;
    f.scene = name;
    const std::string path = scenePath(name);
    for (int k = 0; k < repeat; ++k) {
      Run r;
      if (!runOnce(path, threads, dir, r)) return 1;
      f.runs.push_back(r);
    }
    auto scene = sim::loadScene(path);
    f.streamed = scene && !sim::generatableWhole(*scene);
    if (f.streamed && withBreakdown && !breakdown(path, threads, f)) return 1;
    out.push_back(std::move(f));
  }
  std::printf("[\n");
  for (std::size_t i = 0; i < out.size(); ++i) print(out[i], i + 1 == out.size());
  std::printf("]\n");
  return 0;
}
