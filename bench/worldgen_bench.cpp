// worldgen_bench: world generation time and memory for glade and flat, printed as
// one JSON object. Never run as a test; results and commands go in docs/PERF.md.
//
//   worldgen_bench [--threads N] [--repeat N] [--scenes glade,flat,...] [--radius M]
//                  [--half-width M]
//
// For each scene (a name in scenes/, or a path ending in .toml): wall time of
// generateWorld (min and median over --repeat runs, the default 2 threads as the
// budget says), CPU time of the same runs, the store's heap bytes and brick counts,
// and the process's resident memory before and after (the world's resident cost is
// the difference, measured on the first run). With --radius, only the chunk columns
// within M metres of the origin are generated (generateRegion: what on-demand
// generation costs, whatever the world's size), with chunks per CPU second. With
// --half-width, each scene's bounds are widened to +-M metres in x and z (its rules
// unchanged): the same region of a world up to +-32 km. With --radius it also times
// the columns hash of each region column alone (column_hash_us: what a client pays
// per column it generates, on its worker, and the server per column it checks, on
// its step thread: net/host/column_checks.h).
#include <algorithm>
#include <cmath>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/gen/generator.h"
#include "sim/gen/landscape_plan.h"
#include "sim/gen/scene.h"
#include "sim/world/world_hash.h"

using namespace loam::sim;

namespace {

/// A field of /proc/self/status in kB ("VmRSS", "VmHWM"), 0 where unavailable.
long statusKb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  std::string prefix = std::string(key) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) return std::strtol(line.c_str() + prefix.size(), nullptr, 10);
  }
  return 0;
}

double cpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  int repeat = 3;
  std::string scenes = "glade,flat";
  double radius = -1;      // metres; < 0: whole worlds
  double halfWidth = -1;   // metres; < 0: the scene's own bounds
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--threads") {
      threads = std::atoi(argv[i + 1]);
    } else if (a == "--repeat") {
      repeat = std::max(1, std::atoi(argv[i + 1]));
    } else if (a == "--scenes") {
      scenes = argv[i + 1];
    } else if (a == "--half-width") {
      halfWidth = std::atof(argv[i + 1]);
      if (!(halfWidth >= 6.4 && halfWidth <= kMaxSceneCoordinate)) {
        std::fprintf(stderr, "worldgen_bench: --half-width must be in [6.4, 32768] m\n");
        return 2;
      }
    } else if (a == "--radius") {
      radius = std::atof(argv[i + 1]);
      if (!(radius >= 0 && radius <= 1.0e5)) {
        std::fprintf(stderr, "worldgen_bench: --radius must be in [0, 100000] m\n");
        return 2;
      }
    } else {
      std::fprintf(stderr, "worldgen_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::vector<std::string> names;
  std::stringstream ss(scenes);
  for (std::string n; std::getline(ss, n, ',');) names.push_back(n);

  std::printf("{\n  \"benchmark\": \"worldgen\",\n  \"threads\": %d,\n  \"repeat\": %d,\n  \"radius_m\": %.1f,\n"
              "  \"scenes\": [\n",
              threads, repeat, radius);
  for (size_t si = 0; si < names.size(); ++si) {
    const bool isPath = names[si].size() > 5 && names[si].ends_with(".toml");
    const std::string path = isPath ? names[si] : std::string(LOAM_SOURCE_DIR) + "/scenes/" + names[si] + ".toml";
    auto scene = loadScene(path);
    if (!scene) {
      std::fprintf(stderr, "%s\n", scene.error().message.c_str());
      return 2;
    }
    if (halfWidth > 0) {
      scene->bounds.min.x = scene->bounds.min.z = -halfWidth;
      scene->bounds.max.x = scene->bounds.max.z = halfWidth;
      scene->worldBounds = worldBoundsFromMetres(scene->bounds.min, scene->bounds.max);
    }
    // A landscape's whole-map plan, built once per world before its chunks (timed
    // alone; the runs below reuse it, as a server does), and its rivers' and roads'
    // validity.
    double planS = 0.0, riverKm = 0.0, roadKm = 0.0;
    std::size_t riverSegments = 0, uphill = 0, settlements = 0, steepRoad = 0;
    int lakes = 0;
    if (scene->landscape) {
      const auto p0 = std::chrono::steady_clock::now();
      auto plan = LandscapePlan::build(*scene, 1);
      planS = std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count();
      (void)landscapePlan(*scene, 1);
      const auto& pts = plan->riverPoints();
      for (const RiverSegment& sg : plan->riverSegments()) {
        const RiverPoint& a = pts[sg.up];
        const RiverPoint& b = pts[sg.down];
        if (b.level > a.level) ++uphill;
        const double dx = b.at.x - a.at.x, dz = b.at.z - a.at.z;
        riverKm += std::sqrt(dx * dx + dz * dz) / 1000.0;
      }
      riverSegments = plan->riverSegments().size();
      lakes = plan->lakeCount();
      settlements = plan->settlements().size();
      for (const RoadSegment& sg : plan->roadSegments()) {
        const RoadPoint& a = plan->roadPoints()[sg.a];
        const RoadPoint& b = plan->roadPoints()[sg.b];
        const double run = std::hypot(b.at.x - a.at.x, b.at.z - a.at.z);
        if (std::abs(b.level - a.level) > scene->landscape->roads.maxGrade * run + 1e-9) ++steepRoad;
        roadKm += run / 1000.0;
      }
    }
    std::vector<double> wall, cpu;
    long rssBefore = 0, rssAfter = 0;
    std::size_t heap = 0;
    StoreMemoryStats stats;
    std::uint64_t hash = 0;
    double columnHashUs = 0;
    const std::vector<ChunkColumn> region =
        radius < 0 ? std::vector<ChunkColumn>{}
                   : columnsAround(scene->worldBounds, 0, 0, static_cast<std::int32_t>(radius * kVoxelsPerMetre));
    const std::int64_t chunksPerColumn =
        (scene->worldBounds.maxBrick.y >> kChunkShift) - (scene->worldBounds.minBrick.y >> kChunkShift);
    for (int r = 0; r < repeat; ++r) {
      if (r == 0) rssBefore = statusKb("VmRSS");
      GenerateOptions o;
      o.threads = threads;
      double c0 = cpuSeconds();
      auto t0 = std::chrono::steady_clock::now();
      auto world = radius < 0 ? generateWorld(*scene, 1, kGeneratorVersion, o)
                              : generateRegion(*scene, 1, region, kGeneratorVersion, o);
      auto t1 = std::chrono::steady_clock::now();
      double c1 = cpuSeconds();
      if (!world) {
        std::fprintf(stderr, "%s\n", world.error().message.c_str());
        return 1;
      }
      wall.push_back(std::chrono::duration<double>(t1 - t0).count());
      cpu.push_back(c1 - c0);
      if (r == 0) {
        rssAfter = statusKb("VmRSS");
        heap = world->memoryBytes();
        stats = world->memoryStats();
        if (radius < 0) hash = hashContent(*world).world;  // a region's would cost the whole bounds
        if (!region.empty()) {
          const auto h0 = std::chrono::steady_clock::now();
          for (const ChunkColumn& c : region) (void)hashColumns(*world, std::span(&c, 1));
          columnHashUs = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count() /
                         static_cast<double>(region.size());
        }
      }
    }
    std::vector<double> sorted = wall;
    std::sort(sorted.begin(), sorted.end());
    double median = sorted[sorted.size() / 2];
    double cpuMedian = cpu[0];
    {
      std::vector<double> c = cpu;
      std::sort(c.begin(), c.end());
      cpuMedian = c[c.size() / 2];
    }
    const WorldBounds& b = scene->worldBounds;
    // Every chunk of the columns generated (the whole bounds, or the region's columns).
    const double generated =
        radius < 0 ? static_cast<double>(b.maxBrick.x - b.minBrick.x) * (b.maxBrick.z - b.minBrick.z) /
                         (kChunkBricks * kChunkBricks) * static_cast<double>(chunksPerColumn)
                   : static_cast<double>(region.size()) * static_cast<double>(chunksPerColumn);
    std::size_t mixed = stats.mixedBricks[0] + stats.mixedBricks[1] + stats.mixedBricks[2] + stats.mixedBricks[3];
    std::printf(
        "    {\n      \"scene\": \"%s\",\n      \"size_m\": [%.1f, %.1f, %.1f],\n      \"chunks\": %zu,\n"
        "      \"world_hash\": \"%016" PRIx64 "\",\n      \"wall_s_min\": %.4f,\n      \"wall_s_median\": %.4f,\n"
        "      \"cpu_s_median\": %.4f,\n      \"world_heap_mb\": %.2f,\n      \"world_resident_mb\": %.2f,\n"
        "      \"process_peak_rss_mb\": %.2f,\n      \"mixed_bricks\": %zu,\n      \"expanded_chunks\": %zu,\n"
        "      \"uniform_chunks\": %zu,\n      \"region_columns\": %zu,\n      \"generated_chunks\": %.0f,\n"
        "      \"chunks_per_cpu_s\": %.1f,\n      \"column_hash_us\": %.1f,\n      \"plan_s\": %.3f,\n"
        "      \"river_segments\": %zu,\n      \"river_km\": %.1f,\n      \"uphill_river_segments\": %zu,\n"
        "      \"lakes\": %d,\n      \"settlements\": %zu,\n      \"road_km\": %.1f,\n"
        "      \"road_segments_over_grade\": %zu\n    }%s\n",
        names[si].c_str(), (b.maxBrick.x - b.minBrick.x) * 0.4, (b.maxBrick.y - b.minBrick.y) * 0.4,
        (b.maxBrick.z - b.minBrick.z) * 0.4, stats.uniformChunks + stats.expandedChunks, hash, sorted.front(), median,
        cpuMedian, static_cast<double>(heap) / 1048576.0, static_cast<double>(rssAfter - rssBefore) / 1024.0,
        static_cast<double>(statusKb("VmHWM")) / 1024.0, mixed, stats.expandedChunks, stats.uniformChunks,
        region.size(), generated, generated / std::max(cpuMedian, 1e-9), columnHashUs, planS, riverSegments, riverKm, uphill,
        lakes, settlements, roadKm, steepRoad, si + 1 < names.size() ? "," : "");
  }
  std::printf("  ]\n}\n");
  return 0;
}
