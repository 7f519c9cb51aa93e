// `loam-tool preview`: a shaded top-down map of a generated scene as a PNG, for scene
// authors (material colours, hill shading, water depth, markers for spawn points,
// dens, water sources and ignition points, optional 12.8 m cell grid).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <stb/stb_image_write.h>

#include "sim/world/brick_store.h"
#include "sim/gen/generator.h"
#include "sim/gen/scene.h"
#include "tool/commands.h"
#include "tool/tool_util.h"

namespace loam::tool {
namespace {

struct Top {
  std::int32_t y = INT32_MIN;  // voxel y of the top non-air voxel (INT32_MIN: none)
  sim::MaterialId m = sim::kAir;
  std::int32_t waterDepth = 0;  // voxels of liquid above the solid top
  sim::MaterialId bed = sim::kAir;
};

/// The first non-air voxel from the top of column (x, z), then the first non-liquid
/// one below it. Skips collapsed air chunks and air bricks without touching voxels.
Top columnTop(const sim::BrickStore& w, const sim::MaterialTable& mats, std::int32_t x, std::int32_t z) {
  const sim::WorldBounds& b = w.bounds();
  Top t;
  std::int32_t y = b.maxBrick.y * sim::kBrickSize - 1;
  std::int32_t yMin = b.minBrick.y * sim::kBrickSize;
  bool inWater = false;
  while (y >= yMin) {
    sim::BrickCoord bc{x >> sim::kBrickShift, y >> sim::kBrickShift, z >> sim::kBrickShift};
    sim::BrickView v = w.brick(bc);
    if (v.isUniform()) {
      sim::MaterialId m = v.uniformMaterial();
      bool skip = m == sim::kAir || (inWater && mats[m].liquid);
      if (skip) {
        if (inWater && m != sim::kAir) t.waterDepth += (y & 7) + 1;
        y = (bc.y << sim::kBrickShift) - 1;
        continue;
      }
    }
    sim::MaterialId m = w.get(x, y, z);
    if (m != sim::kAir) {
      if (!inWater) {
        t.y = y;
        t.m = m;
        if (!mats[m].liquid) return t;
        inWater = true;
      } else if (!mats[m].liquid) {
        t.bed = m;
        return t;
      } else {
        ++t.waterDepth;
      }
    }
    --y;
  }
  return t;
}

void drawMarker(std::vector<std::uint8_t>& img, int w, int h, int px, int pz, std::uint8_t r, std::uint8_t g,
                std::uint8_t b) {
  for (int dz = -3; dz <= 3; ++dz) {
    for (int dx = -3; dx <= 3; ++dx) {
      int x = px + dx, z = pz + dz;
      if (x < 0 || z < 0 || x >= w || z >= h) continue;
      bool edge = dx == -3 || dx == 3 || dz == -3 || dz == 3;
      std::uint8_t* p = &img[(static_cast<size_t>(z) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 3];
      p[0] = edge ? 0 : r;
      p[1] = edge ? 0 : g;
      p[2] = edge ? 0 : b;
    }
  }
}

}  // namespace

void addPreviewCommand(CLI::App& app, int& exitCode) {
  struct Options {
    std::string scene;
    std::string out = "map.png";
    std::int64_t seed = -1;
    double metresPerPixel = 0.25;
    int threads = 0;
    bool grid = false;
    bool quiet = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("preview", "Write a shaded top-down map of a scene's world as PNG");
  cmd->add_option("--scene", opt->scene, "Scene file (TOML)")->required();
  cmd->add_option("--seed", opt->seed, "World seed (default: the scene's seed)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--out", opt->out, "Output PNG path")->capture_default_str();
  cmd->add_option("--metres-per-pixel", opt->metresPerPixel, "Map scale (multiples of 0.05 are exact)")
      ->check(CLI::Range(0.05, 16.0))
      ->capture_default_str();
  cmd->add_option("--threads", opt->threads, "Generation threads (0 = all cores)")->check(CLI::Range(0, 1024));
  cmd->add_flag("--grid", opt->grid, "Draw the 12.8 m interest/hash cell grid");
  cmd->add_flag("--quiet", opt->quiet, "No progress on stderr");
  cmd->callback([opt, &exitCode] {
    auto scene = sim::loadScene(opt->scene);
    if (!scene) {
      std::fprintf(stderr, "%s\n", scene.error().message.c_str());
      exitCode = 2;
      return;
    }
    const std::uint64_t seed = seedFor(*scene, opt->seed);
    std::optional<sim::BrickStore> world = generateForCommand(*scene, seed, opt->threads, "preview", opt->quiet);
    if (!world) {
      exitCode = 1;
      return;
    }
    const sim::MaterialTable& mats = *scene->materials;
    const sim::WorldBounds& b = world->bounds();
    double step = opt->metresPerPixel * sim::kVoxelsPerMetre;  // voxels per pixel
    std::int32_t vx0 = b.minBrick.x * sim::kBrickSize, vz0 = b.minBrick.z * sim::kBrickSize;
    int w = static_cast<int>((b.maxBrick.x - b.minBrick.x) * sim::kBrickSize / step);
    int h = static_cast<int>((b.maxBrick.z - b.minBrick.z) * sim::kBrickSize / step);
    if (w < 1 || h < 1 || static_cast<long long>(w) * h > 64ll * 1024 * 1024) {
      std::fprintf(stderr, "preview: image of %d x %d pixels is out of range; change --metres-per-pixel\n", w, h);
      exitCode = 2;
      return;
    }
    std::vector<Top> tops(static_cast<size_t>(w) * static_cast<size_t>(h));
    for (int pz = 0; pz < h; ++pz) {
      for (int px = 0; px < w; ++px) {
        auto x = vx0 + static_cast<std::int32_t>((px + 0.5) * step);
        auto z = vz0 + static_cast<std::int32_t>((pz + 0.5) * step);
        tops[static_cast<size_t>(pz) * static_cast<size_t>(w) + static_cast<size_t>(px)] = columnTop(*world, mats, x, z);
      }
    }
    std::vector<std::uint8_t> img(static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
    auto heightAt = [&](int px, int pz) {
      px = std::clamp(px, 0, w - 1);
      pz = std::clamp(pz, 0, h - 1);
      const Top& t = tops[static_cast<size_t>(pz) * static_cast<size_t>(w) + static_cast<size_t>(px)];
      return t.y == INT32_MIN ? 0.0 : static_cast<double>(t.y);
    };
    for (int pz = 0; pz < h; ++pz) {
      for (int px = 0; px < w; ++px) {
        const Top& t = tops[static_cast<size_t>(pz) * static_cast<size_t>(w) + static_cast<size_t>(px)];
        double r = 0, g = 0, bl = 0;
        if (t.y != INT32_MIN) {
          const sim::Rgb8 c = mats[t.m].colour;
          r = c.r;
          g = c.g;
          bl = c.b;
          if (t.bed != sim::kAir || t.waterDepth > 0) {
            // Water: blend towards the bed colour when shallow.
            double depth = t.waterDepth / static_cast<double>(sim::kVoxelsPerMetre);
            double a = std::min(1.0, 0.35 + depth * 0.5);
            sim::Rgb8 bc = t.bed != sim::kAir ? mats[t.bed].colour : c;
            r = r * a + bc.r * (1 - a);
            g = g * a + bc.g * (1 - a);
            bl = bl * a + bc.b * (1 - a);
          } else {
            // Hill shading: light from the north-west, slope in voxels per pixel.
            double dx = heightAt(px + 1, pz) - heightAt(px - 1, pz);
            double dz = heightAt(px, pz + 1) - heightAt(px, pz - 1);
            double shade = 1.0 - (dx + dz) / (step * 4.0);
            shade = std::clamp(shade, 0.45, 1.5);
            r *= shade;
            g *= shade;
            bl *= shade;
          }
        }
        if (opt->grid) {
          auto x = vx0 + static_cast<std::int32_t>(px * step);
          auto z = vz0 + static_cast<std::int32_t>(pz * step);
          constexpr int kCellVoxels = sim::kCellBricks * sim::kBrickSize;
          bool line = (x % kCellVoxels + kCellVoxels) % kCellVoxels < step ||
                      (z % kCellVoxels + kCellVoxels) % kCellVoxels < step;
          if (line) {
            r = r * 0.6 + 255 * 0.4;
            g = g * 0.6 + 255 * 0.4;
            bl = bl * 0.6 + 255 * 0.4;
          }
        }
        std::uint8_t* p = &img[(static_cast<size_t>(pz) * static_cast<size_t>(w) + static_cast<size_t>(px)) * 3];
        p[0] = static_cast<std::uint8_t>(std::clamp(r, 0.0, 255.0));
        p[1] = static_cast<std::uint8_t>(std::clamp(g, 0.0, 255.0));
        p[2] = static_cast<std::uint8_t>(std::clamp(bl, 0.0, 255.0));
      }
    }
    auto mark = [&](const sim::Vec3& pos, std::uint8_t r, std::uint8_t g, std::uint8_t bl) {
      int px = static_cast<int>((pos.x * sim::kVoxelsPerMetre - vx0) / step);
      int pz = static_cast<int>((pos.z * sim::kVoxelsPerMetre - vz0) / step);
      drawMarker(img, w, h, px, pz, r, g, bl);
    };
    for (const auto& s : scene->waterSources) mark(s.position, 80, 220, 255);
    for (const auto& d : scene->dens) mark(d.position, 255, 150, 30);
    for (const auto& i : scene->ignitions) mark(i.position, 255, 40, 30);
    for (const auto& s : scene->spawns) mark(s.position, 255, 255, 255);
    if (!stbi_write_png(opt->out.c_str(), w, h, 3, img.data(), w * 3)) {
      std::fprintf(stderr, "preview: cannot write %s\n", opt->out.c_str());
      exitCode = 1;
      return;
    }
    std::fprintf(stderr, "preview: wrote %s (%d x %d, %.2f m per pixel); markers: white spawn, orange den, "
                 "cyan water source, red ignition\n", opt->out.c_str(), w, h, opt->metresPerPixel);
    exitCode = 0;
  });
}

}  // namespace loam::tool
