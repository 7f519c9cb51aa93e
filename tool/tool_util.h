// Small helpers shared by loam-tool commands: progress lines, process memory,
// number-list flags ("x,y,z,yaw") and generating a scene's world.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <span>
#include <string>
#include <vector>

#include "sim/world/brick_store.h"
#include "sim/gen/generator.h"
#include "sim/gen/scene.h"

namespace loam::tool {

/// Prints "label: 10% ... 100%" to stderr in steps of 10%, one line at the end.
/// Call update() from one thread only.
class ProgressPrinter {
 public:
  /// quiet suppresses all output.
  ProgressPrinter(std::string label, bool quiet) : label_(std::move(label)), quiet_(quiet) {}
  /// Reports fraction f in [0, 1].
  void update(double f) {
    if (quiet_) return;
    int step = static_cast<int>(f * 10.0);
    if (step <= last_) return;
    if (last_ < 0) std::fprintf(stderr, "%s:", label_.c_str());
    last_ = step;
    std::fprintf(stderr, " %d%%", step * 10);
    if (step >= 10) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  std::string label_;
  bool quiet_ = false;
  int last_ = -1;
};

/// The process's peak resident set ("123.4 MB"), or "n/a" where /proc is missing.
inline std::string peakRssText() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      double kb = std::strtod(line.c_str() + 6, nullptr);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f MB", kb / 1024.0);
      return buf;
    }
  }
  return "n/a";
}

/// Parses comma-separated finite numbers ("1.5,2,-3") into out (replaced); false on
/// empty text, a stray character or a non-finite value. Callers check out.size().
inline bool parseNumberList(const std::string& text, std::vector<double>& out) {
  out.clear();
  std::istringstream in(text);
  for (;;) {
    double v = 0;
    if (!(in >> v) || !std::isfinite(v)) return false;
    out.push_back(v);
    in >> std::ws;
    if (in.eof()) return true;
    char comma = 0;
    if (!(in >> comma) || comma != ',') return false;
  }
}

/// The seed a command uses: its --seed when given (>= 0), else the scene's own.
inline std::uint64_t seedFor(const sim::Scene& scene, std::int64_t seedOption) {
  return seedOption >= 0 ? static_cast<std::uint64_t>(seedOption) : scene.defaultSeed;
}

/// Generates the scene's world for `command` (threads 0: all cores), or only the
/// chunk columns of region when it is not empty, with progress "command scene: 10%
/// ..." on stderr unless quiet. On failure prints "command: why" and returns nothing
/// (the command exits 1).
inline std::optional<sim::BrickStore> generateForCommand(const sim::Scene& scene, std::uint64_t seed, int threads,
                                                         const std::string& command, bool quiet,
                                                         std::span<const sim::ChunkColumn> region = {}) {
  sim::GenerateOptions go;
  go.threads = threads;
  ProgressPrinter progress(command + " " + scene.name, quiet);
  go.progress = [&progress](double f) { progress.update(f); };
  auto world = region.empty() ? sim::generateWorld(scene, seed, sim::kGeneratorVersion, go)
                              : sim::generateRegion(scene, seed, region, sim::kGeneratorVersion, go);
  if (!world) {
    std::fprintf(stderr, "%s: %s\n", command.c_str(), world.error().message.c_str());
    return std::nullopt;
  }
  return std::move(*world);
}

}  // namespace loam::tool
