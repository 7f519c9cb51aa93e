// render_frame_bench: offscreen frame cost with the glade in view, printed as one
// JSON object. Never run as a test; results and commands go in docs/PERF.md.
//
//   render_frame_bench [--frames N] [--width W] [--height H] [--time T] [--png out.png]
//                      [--validation 0|1] [--mesh-threads N]
//
// Builds glade (seed = the scene's default), puts the camera at the first spawn's eye
// looking north, meshes everything in view (finishMeshing, timed), then renders N
// frames: per-frame wall time of renderFrame (median, p99: meshing budget, geometry,
// recording, submission and waiting for a free frame slot), the same without that
// wait ("record": the CPU cost a fast GPU would leave), and the wall time per frame
// including the GPU (N frames plus the final wait for the device, divided by N).
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
  double timeOfDay = 0.5;
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
    else {
      std::fprintf(stderr, "render_frame_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }

  auto scene = sim::loadScene(LOAM_SOURCE_DIR "/scenes/glade.toml");
  if (!scene) {
    std::fprintf(stderr, "render_frame_bench: %s\n", scene.error().message.c_str());
    return 1;
  }
  double t0 = nowSeconds();
  auto state = sim::createSimState(*scene, scene->defaultSeed);
  if (!state) {
    std::fprintf(stderr, "render_frame_bench: %s\n", state.error().message.c_str());
    return 1;
  }
  double buildSeconds = nowSeconds() - t0;
  const sim::Spawn& spawn = state->spawns.front();
  const double perMetre = sim::kUnitsPerMetre;
  std::array<double, 3> eye = {spawn.position.x / perMetre, (spawn.position.y + sim::kPlayerEyeHeight) / perMetre,
                               spawn.position.z / perMetre};

  render::RendererConfig config;
  config.offscreen = true;
  config.width = width;
  config.height = height;
  config.validation = validation;
  config.meshThreads = meshThreads;
  auto renderer = render::Renderer::create(config);
  if (!renderer) {
    std::fprintf(stderr, "render_frame_bench: %s\n", renderer.error().message.c_str());
    return 1;
  }
  render::Renderer& r = **renderer;
  double m0 = nowSeconds();
  r.setWorld(state->world, *state->materials, eye);
  r.finishMeshing();
  double meshSeconds = nowSeconds() - m0;

  render::FrameInput f;
  f.camera.position = eye;
  f.camera.yaw = 0;  // north
  f.camera.pitch = -0.1;
  f.environment.timeOfDay = timeOfDay;
  render::HudLayer hud;
  hud.texts.push_back({8, 8, 2, {255, 255, 255, 255}, "render_frame_bench"});
  f.hud = &hud;

  std::vector<double> cpuMs, recordMs;
  cpuMs.reserve(static_cast<std::size_t>(frames));
  recordMs.reserve(static_cast<std::size_t>(frames));
  r.renderFrame(f);  // warm-up (first use of pipelines and buffers)
  (void)r.readPixels();
  double w0 = nowSeconds();
  for (int i = 0; i < frames; ++i) {
    f.animationSeconds = i / 60.0;
    double a = nowSeconds();
    r.renderFrame(f);
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
      "{\n  \"bench\": \"render_frame\",\n  \"device\": \"%s\",\n  \"width\": %d,\n  \"height\": %d,\n"
      "  \"frames\": %d,\n  \"glade_build_s\": %.3f,\n  \"first_mesh_s\": %.3f,\n  \"mesh_threads\": %d,\n"
      "  \"frame_cpu_ms_median\": %.3f,\n  \"frame_cpu_ms_p99\": %.3f,\n"
      "  \"frame_record_ms_median\": %.3f,\n  \"frame_record_ms_p99\": %.3f,\n  \"frame_total_ms\": %.3f,\n"
      "  \"chunks_drawn\": %zu,\n  \"chunks_culled\": %zu,\n  \"quads_drawn\": %zu,\n  \"validation_errors\": %llu\n}\n",
      s.deviceName.c_str(), width, height, frames, buildSeconds, meshSeconds, meshThreads, percentile(cpuMs, 0.5),
      percentile(cpuMs, 0.99), percentile(recordMs, 0.5), percentile(recordMs, 0.99), wallMs, s.chunksDrawn, s.chunksCulled, s.quadsDrawn,
      static_cast<unsigned long long>(s.validationErrors));
  return s.validationErrors == 0 ? 0 : 1;
}
