// `loam-tool preview`: a shaded top-down map of a generated scene as a PNG, for scene
// authors (material colours, hill shading, water depth, markers for spawn points,
// dens, water sources and ignition points, optional 12.8 m cell grid, a scale bar).
// A world too big to generate whole is drawn coarse: its terrain alone
// (TerrainSampler), forests tinted by their trees' leaves, a landscape's rivers drawn
// to scale, without generating a chunk; --window draws part of any world at full
// detail, and --ecotopes colours the map by biome with a legend.
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

#include <stb/stb_easy_font.h>
#include <stb/stb_image_write.h>

#include "sim/world/brick_store.h"
#include "sim/gen/generator.h"
#include "sim/gen/landscape_plan.h"
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
  std::int16_t biome = -1;      // coarse maps: the column's biome
};

/// Distinct colours for --ecotopes, by biome index.
constexpr sim::Rgb8 kEcotopeColours[16] = {
    {230, 212, 140}, {120, 110, 105}, {235, 235, 240}, {110, 150, 110}, {170, 200, 120}, {150, 140, 120},
    {40, 100, 50},   {160, 110, 150}, {130, 190, 80},  {200, 160, 80},  {80, 160, 160},  {200, 90, 70},
    {100, 120, 200}, {220, 180, 200}, {90, 70, 40},    {180, 220, 200}};

/// An image being drawn: RGB, row-major.
struct Image {
  int w = 0, h = 0;
  std::vector<std::uint8_t> px;
  void put(int x, int z, sim::Rgb8 c) {
    if (x < 0 || z < 0 || x >= w || z >= h) return;
    std::uint8_t* p = &px[(static_cast<size_t>(z) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 3];
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
  }
  void box(int x0, int z0, int x1, int z1, sim::Rgb8 c) {
    for (int z = z0; z < z1; ++z)
      for (int x = x0; x < x1; ++x) put(x, z, c);
  }
  /// Text at (x, z), each font unit `scale` pixels (stb_easy_font's quads).
  void text(int x, int z, const std::string& s, sim::Rgb8 c, int scale = 2) {
    std::vector<char> buf(s.begin(), s.end());
    buf.push_back('\0');
    std::vector<float> quads(static_cast<size_t>(s.size()) * 270 + 64);
    const int n = stb_easy_font_print(0, 0, buf.data(), nullptr, quads.data(), static_cast<int>(quads.size() * sizeof(float)));
    for (int q = 0; q < n; ++q) {
      const float* v = &quads[static_cast<size_t>(q) * 16];  // 4 vertices of x, y, z, colour
      box(x + static_cast<int>(v[0]) * scale, z + static_cast<int>(v[1]) * scale, x + static_cast<int>(v[8]) * scale,
          z + static_cast<int>(v[9]) * scale, c);
    }
  }
  static int textWidth(const std::string& s, int scale = 2) {
    std::vector<char> buf(s.begin(), s.end());
    buf.push_back('\0');
    return stb_easy_font_width(buf.data()) * scale;
  }
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
  top.biome = t.biome;
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
    bool ecotopes = false;
    std::vector<double> window;
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
  cmd->add_option("--window", opt->window,
                  "Draw only the box X0 Z0 X1 Z1 (metres), at full detail unless --coarse")
      ->expected(4);
  cmd->add_flag("--ecotopes", opt->ecotopes, "Colour dry ground by biome (ecotope), with a legend (coarse maps)");
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
    // The box drawn, in voxels: the world, or the window inside it.
    std::int32_t vx0 = b.minBrick.x * sim::kBrickSize, vz0 = b.minBrick.z * sim::kBrickSize;
    std::int32_t vx1 = b.maxBrick.x * sim::kBrickSize, vz1 = b.maxBrick.z * sim::kBrickSize;
    const bool windowed = opt->window.size() == 4;
    if (windowed) {
      auto voxel = [](double m) { return static_cast<std::int32_t>(std::floor(m * sim::kVoxelsPerMetre)); };
      vx0 = std::max(vx0, voxel(std::min(opt->window[0], opt->window[2])));
      vz0 = std::max(vz0, voxel(std::min(opt->window[1], opt->window[3])));
      vx1 = std::min(vx1, voxel(std::max(opt->window[0], opt->window[2])));
      vz1 = std::min(vz1, voxel(std::max(opt->window[1], opt->window[3])));
      if (vx1 <= vx0 || vz1 <= vz0) {
        std::fprintf(stderr, "preview: the window does not overlap the world\n");
        exitCode = 2;
        return;
      }
    }
    const bool coarse = opt->coarse || (!windowed && !sim::generatableWhole(*scene));
    const sim::MaterialTable& mats = *scene->materials;
    double step = opt->metresPerPixel * sim::kVoxelsPerMetre;  // voxels per pixel
    int w = static_cast<int>((vx1 - vx0) / step);
    int h = static_cast<int>((vz1 - vz0) / step);
    if (w < 1 || h < 1 || static_cast<long long>(w) * h > 64ll * 1024 * 1024) {
      std::fprintf(stderr, "preview: image of %d x %d pixels is out of range; change --metres-per-pixel\n", w, h);
      exitCode = 2;
      return;
    }
    std::optional<sim::BrickStore> world;
    if (!coarse) {
      std::vector<sim::ChunkColumn> region;
      if (windowed) {
        constexpr int kShift = sim::kChunkShift + sim::kBrickShift;  // voxels to chunk columns
        for (std::int32_t cz = vz0 >> kShift; cz <= (vz1 - 1) >> kShift; ++cz)
          for (std::int32_t cx = vx0 >> kShift; cx <= (vx1 - 1) >> kShift; ++cx) region.push_back({cx, cz});
      }
      world = generateForCommand(*scene, seed, opt->threads, "preview", opt->quiet, region);
      if (!world) {
        exitCode = 1;
        return;
      }
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
    Image image{w, h, std::vector<std::uint8_t>(static_cast<size_t>(w) * static_cast<size_t>(h) * 3)};
    std::vector<std::uint8_t>& img = image.px;
    const bool ecotopes = opt->ecotopes && coarse;
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
          const bool wet = t.bed != sim::kAir || t.waterDepth > 0;
          const sim::Rgb8 c = ecotopes && !wet && t.biome >= 0 ? kEcotopeColours[t.biome % 16] : mats[t.m].colour;
          r = c.r;
          g = c.g;
          bl = c.b;
          if (wet) {
            // Water: blend towards the bed colour when shallow.
            double depth = t.waterDepth / static_cast<double>(sim::kVoxelsPerMetre);
            double a = std::min(1.0, 0.35 + depth * 0.5);
            sim::Rgb8 bc = t.bed != sim::kAir ? mats[t.bed].colour : c;
            r = r * a + bc.r * (1 - a);
            g = g * a + bc.g * (1 - a);
            bl = bl * a + bc.b * (1 - a);
          } else {
            const double share = ecotopes ? 0.0 : t.tintShare;
            r = r * (1 - share) + t.tint.r * share;
            g = g * (1 - share) + t.tint.g * share;
            bl = bl * (1 - share) + t.tint.b * share;
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
    const sim::Rgb8 waterColour = mats[scene->materials->find("water").value_or(sim::kAir)].colour;
    // A landscape's rivers, to scale but at least a pixel wide: narrower than a pixel,
    // the samples above miss most of them.
    if (coarse) {
      if (const auto plan = sim::landscapePlan(*scene, seed)) {
        // A segment from a to b, its half width (metres) growing from ha to hb; at
        // least `least` pixels wide.
        auto stroke = [&](sim::Vec2 a, sim::Vec2 e, double ha, double hb, int least, sim::Rgb8 colour) {
          const double len = std::hypot(e.x - a.x, e.z - a.z);
          const int n = std::max(2, static_cast<int>(len / opt->metresPerPixel * 2));
          for (int i = 0; i <= n; ++i) {
            const double t = static_cast<double>(i) / n;
            const double x = (a.x + (e.x - a.x) * t) * sim::kVoxelsPerMetre;
            const double z = (a.z + (e.z - a.z) * t) * sim::kVoxelsPerMetre;
            const double hw = (ha + (hb - ha) * t) * sim::kVoxelsPerMetre / step;
            const int r0 = std::max(0, static_cast<int>(hw - 0.5)), r1 = std::max(r0 + 1, least - r0);
            const int px = static_cast<int>((x - vx0) / step), pz = static_cast<int>((z - vz0) / step);
            image.box(px - r0, pz - r0, px + r1, pz + r1, colour);
          }
        };
        const auto& pts = plan->riverPoints();
        for (const sim::RiverSegment& sg : plan->riverSegments()) {
          const sim::RiverPoint& a = pts[sg.up];
          const sim::RiverPoint& e = pts[sg.down];
          stroke(a.at, e.at, a.halfWidth, e.halfWidth, 1, waterColour);
        }
        // Roads: a dark line, two pixels wide.
        const auto& rpts = plan->roadPoints();
        for (const sim::RoadSegment& sg : plan->roadSegments())
          stroke(rpts[sg.a].at, rpts[sg.b].at, 0.0, 0.0, 2, {110, 70, 40});
        // Settlements: a dark red square with a white rim.
        for (const sim::Settlement& st : plan->settlements()) {
          const int px = static_cast<int>((st.centre.x * sim::kVoxelsPerMetre - vx0) / step);
          const int pz = static_cast<int>((st.centre.z * sim::kVoxelsPerMetre - vz0) / step);
          image.box(px - 6, pz - 6, px + 7, pz + 7, {255, 255, 255});
          image.box(px - 4, pz - 4, px + 5, pz + 5, {150, 30, 30});
          std::fprintf(stderr, "preview: settlement at %.0f, %.0f (%d buildings planned)\n", st.centre.x, st.centre.z,
                       st.buildings);
        }
      }
    }
    // The legend (ecotopes) and a scale bar, bottom left, on a light panel.
    {
      const sim::Rgb8 ink{20, 20, 20}, paper{245, 245, 240};
      std::vector<std::pair<std::string, sim::Rgb8>> rows;
      if (ecotopes) {
        for (std::size_t i = 0; i < scene->biomes.size(); ++i) rows.push_back({scene->biomes[i].name, kEcotopeColours[i % 16]});
        rows.push_back({"water", waterColour});
      }
      const double metresWide = w * opt->metresPerPixel;
      double bar = 1.0;
      for (double c : {1.0, 2.0, 5.0}) {
        for (double p10 = 1.0; p10 <= 1e5; p10 *= 10.0)
          if (c * p10 <= metresWide / 5.0) bar = std::max(bar, c * p10);
      }
      const int barPx = static_cast<int>(bar / opt->metresPerPixel);
      const std::string barText = bar >= 1000.0 ? std::to_string(static_cast<int>(bar / 1000.0)) + " km"
                                                : std::to_string(static_cast<int>(bar)) + " m";
      int panelW = std::max(barPx, Image::textWidth(barText)) + 16;
      for (const auto& row : rows) panelW = std::max(panelW, 28 + Image::textWidth(row.first));
      const int rowH = 18, panelH = 44 + rowH * static_cast<int>(rows.size());
      if (panelW < w && panelH < h) {
        const int x0 = 8, z0 = h - panelH - 8;
        image.box(x0, z0, x0 + panelW, z0 + panelH, paper);
        int z = z0 + 8;
        for (const auto& row : rows) {
          image.box(x0 + 8, z, x0 + 22, z + 12, row.second);
          image.text(x0 + 28, z, row.first, ink);
          z += rowH;
        }
        image.box(x0 + 8, z + 4, x0 + 8 + barPx, z + 10, ink);
        image.box(x0 + 8 + barPx / 2, z + 6, x0 + 8 + barPx, z + 8, paper);
        image.text(x0 + 8, z + 14, barText, ink);
      }
    }
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
