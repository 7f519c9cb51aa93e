// render_frame_bench: offscreen frame cost with a scene in view, printed as one JSON
// object. Never run as a test; results and commands go in docs/PERF.md.
//
//   render_frame_bench [--scene NAME] [--view-distance M] [--detail M] [--peak R] [--lift M]
//                      [--yaw DEG] [--pitch RAD] [--coarse A,B] [--frames N] [--width W] [--height H] [--time T]
//                      [--png out.png] [--validation 0|1] [--mesh-threads N]
//
// Builds scenes/NAME.toml (default glade; seed = the scene's default; a world too big
// to build whole is built around the first spawn, as far as the voxel meshes reach),
// puts the camera at the first spawn's eye (with --peak R: on the highest ground within
// R metres of it, by the generator's heights on a 10 m grid), raised by --lift metres,
// looking along --yaw (degrees, 0 north, clockwise), meshes everything in view: voxels out to
// --detail metres (default 96; chunks from A and from B metres, default the
// renderer's, meshed from 2x and 4x coarser blocks, 0 = off) and, with --view-distance beyond it, the far terrain
// out to there (the "first view", timed), then renders N
// frames: per-frame wall time of renderFrame (median, p99: meshing budget, geometry,
// recording, submission and waiting for a free frame slot), the same without that
// wait ("record": the CPU cost a fast GPU would leave), the calling thread's CPU time
// per frame ("record_cpu": what record costs when lavapipe's rasteriser threads do not
// take the core from it, as on a real GPU; blocked waits cost none), and the wall time
// per frame including the GPU (N frames plus the final wait for the device, divided by N).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "render/renderer.h"
#include "sim/core/fixed_point.h"
#include "sim/systems/motion.h"
#include "sim/gen/generator.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_state.h"

using namespace loam;

namespace {

using bench::percentile;

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}


}  // namespace

int main(int argc, char** argv) {
  int frames = 120, width = 1280, height = 720, meshThreads = 2;
  double timeOfDay = 0.5, viewDistance = 0, detail = 96, lift = 0, yawDegrees = 0, pitch = -0.1;
  double peakRadius = 0;
  std::array<double, 2> coarse = render::RendererConfig{}.coarseMetres;
  std::string sceneName = "glade";
  bool validation = false;
  std::string png;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    const char* v = argv[i + 1];
    if (a == "--frames") frames = std::max(1, std::atoi(v));
    else if (a == "--width") width = std::atoi(v);
    else if (a == "--height") height = std::atoi(v);
    else if (a == "--time") timeOfDay = std::atof(v);
    else if (a == "--png") png = v;
    else if (a == "--validation") validation = std::atoi(v) != 0;
    else if (a == "--mesh-threads") meshThreads = std::max(1, std::atoi(v));
    else if (a == "--scene") sceneName = v;
    else if (a == "--view-distance") viewDistance = std::atof(v);
    else if (a == "--detail") detail = std::max(16.0, std::atof(v));
    else if (a == "--lift") lift = std::atof(v);
    else if (a == "--peak") peakRadius = std::atof(v);
    else if (a == "--coarse") std::sscanf(v, "%lf,%lf", &coarse[0], &coarse[1]);
    else if (a == "--yaw") yawDegrees = std::atof(v);
    else if (a == "--pitch") pitch = std::atof(v);
    else {
      std::fprintf(stderr, "render_frame_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }

  auto scene = sim::loadScene(std::string(LOAM_SOURCE_DIR "/scenes/") + sceneName + ".toml");
  if (!scene) {
    std::fprintf(stderr, "render_frame_bench: %s\n", scene.error().message.c_str());
    return 1;
  }
  const std::uint64_t seed = scene->defaultSeed;
  double t0 = nowSeconds();
  // The first spawn's feet (the world's centre without one).
  sim::Vec3 spawnAt{0, 0, 0};
  bool onGround = true;
  if (!scene->spawns.empty()) spawnAt = scene->spawns.front().position, onGround = scene->spawns.front().onGround;
  if (peakRadius > 0) {
    // The highest ground near the spawn: a view over the land.
    const sim::TerrainSampler sampler(*scene, seed);
    const sim::VoxelCoord base = sim::placementVoxel(*scene, seed, spawnAt, onGround);
    const auto step = static_cast<std::int32_t>(10 * sim::kVoxelsPerMetre);
    const auto r = static_cast<std::int32_t>(peakRadius * sim::kVoxelsPerMetre);
    std::int32_t best = INT32_MIN;
    for (std::int32_t dz = -r; dz <= r; dz += step)
      for (std::int32_t dx = -r; dx <= r; dx += step) {
        if (std::int64_t{dx} * dx + std::int64_t{dz} * dz > std::int64_t{r} * r) continue;
        const sim::TerrainSample t = sampler.at(base.x + dx, base.z + dz);
        if (t.column.water > t.column.ground || t.column.ground <= best) continue;
        best = t.column.ground;
        spawnAt = sim::Vec3{(base.x + dx + 0.5) / sim::kVoxelsPerMetre, 0, (base.z + dz + 0.5) / sim::kVoxelsPerMetre};
      }
    onGround = true;
  }
  const sim::VoxelCoord feet = sim::placementVoxel(*scene, seed, spawnAt, onGround);
  sim::Result<sim::BrickStore> world = sim::makeError("unbuilt");
  if (sim::generatableWhole(*scene)) {
    world = sim::generateWorld(*scene, seed);
  } else {
    const auto radius = static_cast<std::int32_t>((detail + 16.0) * sim::kVoxelsPerMetre);
    world = sim::generateRegion(*scene, seed, sim::columnsAround(scene->worldBounds, feet.x, feet.z, radius));
  }
  if (!world) {
    std::fprintf(stderr, "render_frame_bench: %s\n", world.error().message.c_str());
    return 1;
  }
  double buildSeconds = nowSeconds() - t0;
  const double perVoxel = 1.0 / sim::kVoxelsPerMetre;
  const double eyeHeight = static_cast<double>(sim::kPlayerEyeHeight) / sim::kUnitsPerMetre;
  std::array<double, 3> eye = {(feet.x + 0.5) * perVoxel, feet.y * perVoxel + eyeHeight + lift, (feet.z + 0.5) * perVoxel};

  render::RendererConfig config;
  config.offscreen = true;
  config.width = width;
  config.height = height;
  config.validation = validation;
  config.meshThreads = meshThreads;
  config.viewDistanceMetres = detail;
  config.farViewMetres = viewDistance;
  config.coarseMetres = coarse;
  auto renderer = render::Renderer::create(config);
  if (!renderer) {
    std::fprintf(stderr, "render_frame_bench: %s\n", renderer.error().message.c_str());
    return 1;
  }
  render::Renderer& r = **renderer;
  double m0 = nowSeconds();
  r.setWorld(*world, *scene->materials, eye);
  if (viewDistance > detail) r.setFarTerrain(std::make_shared<sim::TerrainSampler>(*scene, seed));
  r.finishMeshing();
  double meshSeconds = nowSeconds() - m0;

  render::FrameInput f;
  f.camera.position = eye;
  f.camera.yaw = yawDegrees * 3.14159265358979323846 / 180.0;
  f.camera.pitch = pitch;
  f.environment.timeOfDay = timeOfDay;
  render::HudLayer hud;
  hud.texts.push_back({8, 8, 2, {255, 255, 255, 255}, "render_frame_bench"});
  if (png.empty()) f.hud = &hud;  // a picture is for looking at
  else f.crosshair = false;

  std::vector<double> cpuMs, recordMs, recordCpuMs;
  cpuMs.reserve(static_cast<std::size_t>(frames));
  recordMs.reserve(static_cast<std::size_t>(frames));
  recordCpuMs.reserve(static_cast<std::size_t>(frames));
  r.renderFrame(f);  // warm-up (first use of pipelines and buffers)
  (void)r.readPixels();
  double w0 = nowSeconds();
  for (int i = 0; i < frames; ++i) {
    f.animationSeconds = i / 60.0;
    const double a = nowSeconds(), c = bench::threadCpuUs();
    r.renderFrame(f);
    recordCpuMs.push_back((bench::threadCpuUs() - c) / 1e3);
    cpuMs.push_back((nowSeconds() - a) * 1e3);
    recordMs.push_back(cpuMs.back() - r.stats().gpuWaitMs);
  }
  auto image = r.readPixels();  // waits for the GPU
  double wallMs = (nowSeconds() - w0) * 1e3 / frames;
  if (!png.empty() && image) {
    if (auto w = render::writePng(png, *image); !w) std::fprintf(stderr, "render_frame_bench: %s\n", w.error().message.c_str());
  }
  render::FrameStats s = r.stats();
  std::printf(
      "{\n  \"bench\": \"render_frame\",\n  \"device\": \"%s\",\n  \"scene\": \"%s\",\n  \"width\": %d,\n"
      "  \"height\": %d,\n  \"view_distance_m\": %.0f,\n  \"detail_m\": %.0f,\n  \"eye\": [%.1f, %.1f, %.1f],\n"
      "  \"frames\": %d,\n  \"world_build_s\": %.3f,\n  \"first_view_s\": %.3f,\n  \"mesh_threads\": %d,\n"
      "  \"frame_cpu_ms_median\": %.3f,\n  \"frame_cpu_ms_p99\": %.3f,\n"
      "  \"frame_record_ms_median\": %.3f,\n  \"frame_record_ms_p99\": %.3f,\n"
      "  \"frame_record_cpu_ms_median\": %.3f,\n  \"frame_record_cpu_ms_p99\": %.3f,\n  \"frame_total_ms\": %.3f,\n"
      "  \"chunks_drawn\": %zu,\n  \"chunks_culled\": %zu,\n  \"quads_drawn\": %zu,\n  \"far_tiles_drawn\": %zu,\n"
      "  \"triangles_drawn\": %zu,\n  \"mesh_gpu_bytes\": %zu,\n  \"mesh_gpu_reserved_bytes\": %zu,\n"
      "  \"validation_errors\": %llu\n}\n",
      s.deviceName.c_str(), sceneName.c_str(), width, height, viewDistance, detail, eye[0], eye[1], eye[2], frames,
      buildSeconds, meshSeconds, meshThreads, percentile(cpuMs, 0.5),
      percentile(cpuMs, 0.99), percentile(recordMs, 0.5), percentile(recordMs, 0.99),
      percentile(recordCpuMs, 0.5), percentile(recordCpuMs, 0.99), wallMs, s.chunksDrawn, s.chunksCulled, s.quadsDrawn,
      s.farTilesDrawn, s.trianglesDrawn, s.meshBytes, s.meshReservedBytes,
      static_cast<unsigned long long>(s.validationErrors));
  return s.validationErrors == 0 ? 0 : 1;
}
