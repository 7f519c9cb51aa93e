// mesh_bench: CPU meshing budgets on the glade, printed as one JSON object.
// Never run as a test; results and commands go in docs/PERF.md.
//
//   mesh_bench [--threads N] [--repeat N] [--radius M] [--samples N]
//
// - remesh one dirty brick: gatherPaddedBrick + meshBrick of one surface brick (one
//   that brickIsHidden and uniformBrickHasNoFaces do not skip), per brick, over --samples bricks spread over
//   the meshed area: median and p99 in µs (budget: at most 50 µs).
// - edit to chunk mesh: markDirty(one surface brick) + finish() through the cache
//   (the brick, its 26 neighbours, chunk assembly, thread hand-offs): median ms.
// - first full mesh: MeshCache::reset + finish with --threads workers (default 2)
//   of everything within --radius (default 96 m) of the first spawn: min and median
//   wall seconds over --repeat runs (budget: at most 2 s on 2 cores), plus quads,
//   chunks and vertex bytes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <time.h>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "mesh/brick_mesher.h"
#include "mesh/mesh_cache.h"
#include "sim/core/fixed_point.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_state.h"

using namespace loam;
using Clock = std::chrono::steady_clock;

namespace {

using bench::percentile;
using bench::threadCpuUs;  // the main thread's share of a full mesh


double cpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }


}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  int repeat = 3;
  double radius = 96.0;
  int samples = 4000;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--threads") {
      threads = std::max(1, std::atoi(argv[i + 1]));
    } else if (a == "--repeat") {
      repeat = std::max(1, std::atoi(argv[i + 1]));
    } else if (a == "--radius") {
      radius = std::atof(argv[i + 1]);
    } else if (a == "--samples") {
      samples = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr, "mesh_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }

  auto scene = sim::loadScene(LOAM_SOURCE_DIR "/scenes/glade.toml");
  if (!scene) {
    std::fprintf(stderr, "mesh_bench: %s\n", scene.error().message.c_str());
    return 2;
  }
  auto st = sim::createSimState(*scene, scene->defaultSeed);
  if (!st) {
    std::fprintf(stderr, "mesh_bench: %s\n", st.error().message.c_str());
    return 1;
  }
  const sim::BrickStore& world = st->world;
  const sim::MaterialTable& materials = *st->materials;
  const sim::Vec3i sp = st->spawns.front().position;
  const std::array<double, 3> centre{static_cast<double>(sp.x) / sim::kUnitsPerMetre,
                                     static_cast<double>(sp.y) / sim::kUnitsPerMetre + 1.6,
                                     static_cast<double>(sp.z) / sim::kUnitsPerMetre};

  // ---- first full mesh ----
  std::vector<double> wall, cpu, mainCpu;
  mesh::MeshCacheStats stats;
  std::size_t vertexBytes = 0, opaqueQuads = 0, waterQuads = 0, updateChunks = 0;
  for (int r = 0; r < repeat; ++r) {
    mesh::MeshCache cache(materials, mesh::MeshCacheConfig{threads, radius});
    double c0 = cpuSeconds(), m0 = threadCpuUs() * 1e-6;
    auto t0 = Clock::now();
    cache.reset(world, centre);
    cache.finish(world, centre);
    auto t1 = Clock::now();
    double c1 = cpuSeconds(), m1 = threadCpuUs() * 1e-6;
    mainCpu.push_back(m1 - m0);
    wall.push_back(std::chrono::duration<double>(t1 - t0).count());
    cpu.push_back(c1 - c0);
    if (r == 0) {
      stats = cache.stats();
      auto updates = cache.takeChunkUpdates();
      updateChunks = updates.size();
      for (const mesh::ChunkMesh& m : updates) {
        vertexBytes += (m.opaque.size() + m.water.size()) * sizeof(mesh::PackedVertex);
        opaqueQuads += m.opaque.size() / 4;
        waterQuads += m.water.size() / 4;
      }
    }
  }

  // ---- remesh one dirty brick (gather + mesh) ----
  const mesh::MeshClassTable classes = mesh::meshClasses(materials);
  std::vector<sim::BrickCoord> surface;
  const double r2 = radius * radius;
  world.forEachBrick(
      [&](sim::BrickCoord b, const sim::BrickView&) {
        double dx = (b.x + 0.5) * 0.4 - centre[0], dz = (b.z + 0.5) * 0.4 - centre[2];
        if (dx * dx + dz * dz > r2) return;
        if (!mesh::brickIsHidden(world, b, classes) && !mesh::uniformBrickHasNoFaces(world, b, classes)) {
          surface.push_back(b);
        }
      },
      sim::BrickFilter::NonAir);
  std::vector<sim::BrickCoord> picked;
  const std::size_t step = std::max<std::size_t>(1, surface.size() / static_cast<std::size_t>(samples));
  for (std::size_t i = 0; i < surface.size(); i += step) picked.push_back(surface[i]);
  std::vector<double> remeshUs, gatherUs;
  std::vector<mesh::PackedVertex> opaque, water;
  mesh::PaddedBrick padded;
  std::size_t pickedQuads = 0;
  for (int pass = 0; pass < 2; ++pass) {  // pass 0 warms caches and vectors
    for (const sim::BrickCoord& b : picked) {
      opaque.clear();
      water.clear();
      auto t0 = Clock::now();
      mesh::gatherPaddedBrick(world, b, padded);
      auto t1 = Clock::now();
      mesh::meshBrick(padded, classes, opaque, water);
      auto t2 = Clock::now();
      if (pass == 1) {
        remeshUs.push_back(std::chrono::duration<double, std::micro>(t2 - t0).count());
        gatherUs.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        pickedQuads += (opaque.size() + water.size()) / 4;
      }
    }
  }

  // ---- edit to chunk mesh through the cache ----
  std::vector<double> editMs;
  {
    mesh::MeshCache cache(materials, mesh::MeshCacheConfig{threads, radius});
    cache.reset(world, centre);
    cache.finish(world, centre);
    cache.takeChunkUpdates();
    const std::size_t editStep = std::max<std::size_t>(1, picked.size() / 200);
    for (std::size_t i = 0; i < picked.size(); i += editStep) {
      auto t0 = Clock::now();
      cache.markDirty({&picked[i], 1});
      cache.finish(world, centre);
      auto t1 = Clock::now();
      cache.takeChunkUpdates();
      editMs.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
  }

  std::printf("{\n  \"benchmark\": \"mesh\",\n  \"scene\": \"glade\",\n  \"threads\": %d,\n  \"radius_m\": %.1f,\n",
              threads, radius);
  std::printf("  \"centre_m\": [%.2f, %.2f, %.2f],\n", centre[0], centre[1], centre[2]);
  std::printf("  \"remesh_brick_us_median\": %.2f,\n  \"remesh_brick_us_p99\": %.2f,\n", percentile(remeshUs, 0.5),
              percentile(remeshUs, 0.99));
  std::printf("  \"gather_brick_us_median\": %.2f,\n  \"remesh_samples\": %zu,\n  \"remesh_quads_per_brick\": %.2f,\n",
              percentile(gatherUs, 0.5), remeshUs.size(),
              remeshUs.empty() ? 0.0 : static_cast<double>(pickedQuads) / static_cast<double>(remeshUs.size()));
  std::printf("  \"edit_to_chunk_ms_median\": %.3f,\n  \"edit_to_chunk_ms_p99\": %.3f,\n", percentile(editMs, 0.5),
              percentile(editMs, 0.99));
  std::printf("  \"full_mesh_s_min\": %.4f,\n  \"full_mesh_s_median\": %.4f,\n  \"full_mesh_cpu_s_median\": %.4f,\n",
              percentile(wall, 0.0), percentile(wall, 0.5), percentile(cpu, 0.5));
  std::printf("  \"full_mesh_main_thread_cpu_s_median\": %.4f,\n", percentile(mainCpu, 0.5));
  std::printf("  \"surface_bricks\": %zu,\n  \"meshed_bricks\": %zu,\n  \"skipped_bricks\": %zu,\n", surface.size(),
              stats.meshedBricks, stats.skippedBricks);
  std::printf("  \"chunks\": %zu,\n  \"quads\": %zu,\n  \"opaque_quads\": %zu,\n  \"water_quads\": %zu,\n",
              updateChunks, stats.quads, opaqueQuads, waterQuads);
  std::printf("  \"vertex_bytes\": %zu,\n  \"vertex_mb\": %.2f\n}\n", vertexBytes,
              static_cast<double>(vertexBytes) / 1048576.0);
  return 0;
}
