// `loam-tool preview`: a shaded top-down map of a generated scene as a PNG, for scene
// authors (material colours, hill shading, water depth, markers for spawn points,
// dens, water sources and ignition points, optional 12.8 m cell grid). A world too big
// to generate whole is drawn coarse: its terrain alone (TerrainSampler), forests
// tinted by their trees' leaves, without generating a chunk.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
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
  sim::Rgb8 tint{};             // coarse maps: canopy colour over dry ground
  double tintShare = 0.0;       // 0..1
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

/// The top of column (x, z) from the terrain alone, tinted by the canopy cover of its
/// biome (cover and leaf by biome index).
Top terrainTop(const sim::TerrainSampler& terrain, const std::vector<double>& cover,
               const std::vector<sim::Rgb8>& leaf, std::int32_t x, std::int32_t z) {
  const sim::TerrainSample t = terrain.at(x, z);
  Top top;
  if (t.biome >= 0 && static_cast<std::size_t>(t.biome) < cover.size()) {
    top.tint = leaf[static_cast<std::size_t>(t.biome)];
    top.tintShare = cover[static_cast<std::size_t>(t.biome)];
  }
  if (t.column.water > t.column.ground) {
    top.y = t.column.water - 1;
    top.m = t.waterMaterial;
    top.waterDepth = t.column.water - t.column.ground - 1;
    top.bed = t.surface;
  } else {
    top.y = t.column.ground - 1;
    top.m = t.surface;
  }
  return top;
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
    bool coarse = false;
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
  cmd->add_flag("--coarse", opt->coarse,
                "Draw the terrain alone, without generating the world (always, for a world too big to generate "
                "whole)");
  cmd->callback([opt, &exitCode] {
    auto scene = sim::loadScene(opt->scene);
    if (!scene) {
      std::fprintf(stderr, "%s\n", scene.error().message.c_str());
      exitCode = 2;
      return;
    }
    const std::uint64_t seed = seedFor(*scene, opt->seed);
    const sim::WorldBounds& b = scene->worldBounds;
    const bool coarse = opt->coarse || !sim::generatableWhole(*scene);
    std::optional<sim::BrickStore> world;
    if (!coarse) {
      world = generateForCommand(*scene, seed, opt->threads, "preview", opt->quiet);
      if (!world) {
        exitCode = 1;
        return;
      }
    }
    const sim::MaterialTable& mats = *scene->materials;
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
    std::optional<sim::TerrainSampler> terrain;
    // Forests, when coarse: a biome that grows trees is tinted by their leaves, as far
    // as their canopies cover it.
    std::vector<double> cover(scene->biomes.size(), 0.0);
    std::vector<sim::Rgb8> leaf(scene->biomes.size());
    if (coarse) {
      terrain.emplace(*scene, seed);
      for (const sim::ScatterRule& r : scene->scatter) {
        if (r.kind != sim::ScatterKind::Tree) continue;
        const double share = std::min(0.85, r.density * std::min(1.0, 2.0 * r.radius.max / r.spacing));
        for (int bi : r.biomeIndices) {
          if (bi < 0 || static_cast<std::size_t>(bi) >= cover.size() || cover[bi] >= share) continue;
          cover[bi] = share;
          leaf[bi] = mats[r.leafMaterial.id].colour;
        }
      }
    }
    // Rows on every thread (the sampler and the generated world are read-only here).
    auto rows = [&](int first, int stride) {
      for (int pz = first; pz < h; pz += stride) {
        for (int px = 0; px < w; ++px) {
          auto x = vx0 + static_cast<std::int32_t>((px + 0.5) * step);
          auto z = vz0 + static_cast<std::int32_t>((pz + 0.5) * step);
          tops[static_cast<size_t>(pz) * static_cast<size_t>(w) + static_cast<size_t>(px)] =
              coarse ? terrainTop(*terrain, cover, leaf, x, z) : columnTop(*world, mats, x, z);
        }
      }
    };
    const int threads =
        std::max(1, opt->threads > 0 ? opt->threads : static_cast<int>(std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(rows, t, threads);
    rows(0, threads);
    for (std::thread& t : pool) t.join();

    double yLow = 0.0, yRange = 1.0;  // the height range drawn, for coarse maps
    {
      std::int32_t lo = INT32_MAX, hi = INT32_MIN;
      for (const Top& t : tops)
        if (t.y != INT32_MIN) lo = std::min(lo, t.y), hi = std::max(hi, t.y);
      if (lo <= hi) yLow = lo, yRange = std::max(1.0, static_cast<double>(hi - lo));
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
            r = r * (1 - t.tintShare) + t.tint.r * t.tintShare;
            g = g * (1 - t.tintShare) + t.tint.g * t.tintShare;
            bl = bl * (1 - t.tintShare) + t.tint.b * t.tintShare;
            // Hill shading: light from the north-west, slope in voxels per pixel.
            double dx = heightAt(px + 1, pz) - heightAt(px - 1, pz);
            double dz = heightAt(px, pz + 1) - heightAt(px, pz - 1);
            double shade = 1.0 - (dx + dz) / (step * 4.0);
            // A map kilometres across: steeper shading and brighter heights, or hills vanish.
            if (coarse) shade = (1.0 - 3.0 * (dx + dz) / (step * 2.0)) * (0.75 + 0.5 * (t.y - yLow) / yRange);
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
