// The far view on lavapipe (validation on, zero errors): terrain kilometres away
// from the scene's generator appears where the generator's heights say, without
// cracks while the eye moves through the levels of detail. Pixels are checked
// against rays marched through the generator's heightfield on the CPU, and "sky"
// means the colour the same frame has with no far terrain. Surface changes (far edits)
// are checked by comparing frames before, with and after undoing them.
// Set LOAM_RENDER_TEST_PNG_DIR to keep the rendered images.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "render/renderer.h"
#include "sim/gen/generator.h"
#include "sim/gen/scene.h"
#include "sim/world/brick_store.h"
#include "sim/world/surface_change.h"

using namespace loam;
using render::Image;

namespace {

constexpr int kW = 320, kH = 240;
constexpr double kFovY = 70.0;
constexpr double kPi = 3.14159265358979323846;

struct Scene {
  sim::Scene scene;
  std::shared_ptr<const sim::TerrainSampler> sampler;
  double minX = 0, minZ = 0, maxX = 0, maxZ = 0;  ///< plan bounds, metres
};

Scene loadScene(const char* name) {
  auto scene = sim::loadScene(std::string(LOAM_SOURCE_DIR "/scenes/") + name + ".toml");
  REQUIRE(scene.has_value());
  Scene out{*scene, std::make_shared<sim::TerrainSampler>(*scene, scene->defaultSeed)};
  const sim::WorldBounds& b = scene->worldBounds;
  const double brick = static_cast<double>(sim::kBrickSize) / sim::kVoxelsPerMetre;
  out.minX = b.minBrick.x * brick, out.minZ = b.minBrick.z * brick;
  out.maxX = b.maxBrick.x * brick, out.maxZ = b.maxBrick.z * brick;
  return out;
}

const Scene& highlands() {
  static Scene s = loadScene("highlands");
  return s;
}

double heightAt(const sim::TerrainSampler& t, double x, double z) {
  const auto s = t.at(static_cast<std::int32_t>(std::floor(x * sim::kVoxelsPerMetre)),
                      static_cast<std::int32_t>(std::floor(z * sim::kVoxelsPerMetre)));
  return std::max(s.column.ground, s.column.water) / static_cast<double>(sim::kVoxelsPerMetre);
}

// The renderer's camera basis (render/render_math.h): yaw 0 looks north (-z),
// clockwise from above; pitch + up. The ray through pixel (px, py).
std::array<double, 3> rayThrough(const render::Camera& c, double px, double py) {
  const double fx = std::sin(c.yaw) * std::cos(c.pitch), fy = std::sin(c.pitch), fz = -std::cos(c.yaw) * std::cos(c.pitch);
  const double rx = std::cos(c.yaw), rz = std::sin(c.yaw);  // right, level
  // up = right x forward
  const double ux = -rz * fy, uy = rz * fx - rx * fz, uz = rx * fy;
  const double tanY = std::tan(c.fovYDegrees * kPi / 360.0), tanX = tanY * kW / kH;
  const double sx = (2.0 * (px + 0.5) / kW - 1.0) * tanX, sy = (1.0 - 2.0 * (py + 0.5) / kH) * tanY;
  std::array<double, 3> d{fx + sx * rx + sy * ux, fy + sy * uy, fz + sx * rz + sy * uz};
  const double n = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  return {d[0] / n, d[1] / n, d[2] / n};
}

// Plan distance at which the ray first goes below the terrain, or -1 when it leaves
// the world or passes maxPlan first.
double hitDistance(const Scene& sc, const render::Camera& c, std::array<double, 3> d, double maxPlan) {
  const double plan = std::sqrt(d[0] * d[0] + d[2] * d[2]);
  if (plan < 1e-6) return -1;
  for (double s = 2.0; s <= maxPlan; s += s < 400 ? 2.0 : 4.0) {
    const double k = s / plan;
    const double x = c.position[0] + d[0] * k, y = c.position[1] + d[1] * k, z = c.position[2] + d[2] * k;
    if (x < sc.minX || x >= sc.maxX || z < sc.minZ || z >= sc.maxZ) return -1;
    if (y <= heightAt(*sc.sampler, x, z)) return s;
  }
  return -1;
}

bool sameColour(render::Rgba8 a, render::Rgba8 b) {
  return std::abs(a.r - b.r) <= 3 && std::abs(a.g - b.g) <= 3 && std::abs(a.b - b.b) <= 3;
}

struct Shot {
  Image terrain, sky;
  std::size_t tilesDrawn = 0;  ///< far tiles drawn in the terrain frame
};

void keep(const Image& img, const std::string& name) {
  if (const char* dir = std::getenv("LOAM_RENDER_TEST_PNG_DIR"))
    CHECK(render::writePng(std::string(dir) + "/" + name + ".png", img).has_value());
}

// A renderer with an empty voxel world (the near region shows nothing) and far
// terrain out to farMetres.
std::unique_ptr<render::Renderer> farRenderer(double farMetres, const sim::BrickStore& world, const Scene& s,
                                              const std::array<double, 3>& eye, double detail = 96) {
  render::RendererConfig c;
  c.offscreen = true;
  c.width = kW;
  c.height = kH;
  c.validation = true;
  c.meshThreads = 2;
  c.viewDistanceMetres = detail;
  c.farViewMetres = farMetres;
  auto r = render::Renderer::create(c);
  if (!r) FAIL("Renderer::create: " << r.error().message);
  (*r)->setWorld(world, *s.scene.materials, eye);
  (*r)->setFarTerrain(s.sampler);
  return std::move(*r);
}

render::FrameInput frameFor(const render::Camera& c) {
  render::FrameInput f;
  f.camera = c;
  f.environment.timeOfDay = 0.5;
  f.crosshair = false;
  return f;
}

// Checks every 8th pixel of the frame against the CPU ray: where the ray meets the
// terrain between minPlan and maxPlan metres (and its neighbours one row above and
// below meet it at a similar distance, so it is not a silhouette edge), the pixel
// must not be sky; where the ray misses everything out to the far view, it must be.
struct Verdict {
  int terrainChecked = 0, terrainWrong = 0, skyChecked = 0, skyWrong = 0;
};
Verdict checkAgainstRays(const Scene& s, const render::Camera& cam, const Shot& shot, double minPlan, double maxPlan,
                         double farMetres) {
  Verdict v;
  for (int py = 4; py < kH - 4; py += 8) {
    for (int px = 4; px < kW; px += 8) {
      const double d = hitDistance(s, cam, rayThrough(cam, px, py), farMetres + 400);
      const bool sky = sameColour(shot.terrain.at(px, py), shot.sky.at(px, py));
      if (d < 0) {
        // Beyond the far view's reach the terrain may still be drawn by partial tiles:
        // only rays that miss everything count.
        ++v.skyChecked;
        if (!sky) ++v.skyWrong;
        continue;
      }
      if (d < minPlan || d > maxPlan) continue;
      const double up = hitDistance(s, cam, rayThrough(cam, px, py - 3), farMetres + 400);
      const double down = hitDistance(s, cam, rayThrough(cam, px, py + 3), farMetres + 400);
      if (up < 0 || up > d * 1.25 || down < 0 || down > d * 1.05) continue;  // silhouette edge
      ++v.terrainChecked;
      if (sky) {
        ++v.terrainWrong;
        MESSAGE("sky at pixel (" << px << ", " << py << ") where the terrain is " << d << " m away");
      }
    }
  }
  return v;
}

Shot shoot(render::Renderer& r, const Scene& s, const render::Camera& cam, const std::string& name) {
  r.renderFrame(frameFor(cam));  // the selection follows the eye
  r.finishMeshing();
  Shot out;
  REQUIRE(r.renderFrame(frameFor(cam)));
  auto a = r.readPixels();
  REQUIRE(a.has_value());
  out.terrain = std::move(*a);
  out.tilesDrawn = r.stats().farTilesDrawn;
  r.setFarTerrain(nullptr);
  REQUIRE(r.renderFrame(frameFor(cam)));
  auto b = r.readPixels();
  REQUIRE(b.has_value());
  out.sky = std::move(*b);
  r.setFarTerrain(s.sampler);
  keep(out.terrain, name);
  keep(out.sky, name + "_sky");
  return out;
}

// The highest point of the ring [inner, outer] metres around (x, z), on a 20 m grid.
std::array<double, 3> highestAround(const sim::TerrainSampler& t, double x, double z, double inner, double outer) {
  std::array<double, 3> best{x, -1e9, z};
  for (double dz = -outer; dz <= outer; dz += 20)
    for (double dx = -outer; dx <= outer; dx += 20) {
      const double r = std::sqrt(dx * dx + dz * dz);
      if (r < inner || r > outer) continue;
      const double h = heightAt(t, x + dx, z + dz);
      if (h > best[1]) best = {x + dx, h, z + dz};
    }
  return best;
}

// Where point p (metres) lands on screen: the inverse of rayThrough. {px, py, depth
// along the view direction}; depth <= 0 means behind the eye.
std::array<double, 3> project(const render::Camera& c, const std::array<double, 3>& p) {
  const double fx = std::sin(c.yaw) * std::cos(c.pitch), fy = std::sin(c.pitch);
  const double fz = -std::cos(c.yaw) * std::cos(c.pitch);
  const double rx = std::cos(c.yaw), rz = std::sin(c.yaw);
  const double ux = -rz * fy, uy = rz * fx - rx * fz, uz = rx * fy;
  const double dx = p[0] - c.position[0], dy = p[1] - c.position[1], dz = p[2] - c.position[2];
  const double depth = dx * fx + dy * fy + dz * fz;
  const double tanY = std::tan(c.fovYDegrees * kPi / 360.0), tanX = tanY * kW / kH;
  const double sx = (dx * rx + dz * rz) / depth / tanX, sy = (dx * ux + dy * uy + dz * uz) / depth / tanY;
  return {(sx + 1.0) * kW / 2 - 0.5, (1.0 - sy) * kH / 2 - 0.5, depth};
}

bool dryAt(const sim::TerrainSampler& t, double x, double z) {
  const auto s = t.at(static_cast<std::int32_t>(std::floor(x * sim::kVoxelsPerMetre)),
                      static_cast<std::int32_t>(std::floor(z * sim::kVoxelsPerMetre)));
  return s.column.water <= s.column.ground;
}

// True when the segment from the eye to p clears the generator's terrain over its
// first `part` (the end itself may touch it).
bool inSight(const sim::TerrainSampler& t, const std::array<double, 3>& eye, const std::array<double, 3>& p,
             double part) {
  for (double f = 0.02; f < part; f += 0.005) {
    const double x = eye[0] + (p[0] - eye[0]) * f, z = eye[2] + (p[2] - eye[2]) * f;
    if (eye[1] + (p[1] - eye[1]) * f <= heightAt(t, x, z) + 1.0) return false;
  }
  return true;
}

// Pixels whose colour differs by more than 24 in some channel, inside [x0, x1) x [y0, y1)
// (clamped to the image) or, with outside, everywhere else.
int changedPixels(const Image& a, const Image& b, int x0, int y0, int x1, int y1, bool outside = false) {
  int n = 0;
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      if ((x >= x0 && x < x1 && y >= y0 && y < y1) == outside) continue;
      const render::Rgba8 p = a.at(x, y), q = b.at(x, y);
      if (std::abs(p.r - q.r) > 24 || std::abs(p.g - q.g) > 24 || std::abs(p.b - q.b) > 24) ++n;
    }
  return n;
}

// Pixels in [x0, x1) x [y0, y1) red like brick (#b22a22 lit), not like soil or grass.
int redPixels(const Image& a, int x0, int y0, int x1, int y1) {
  int n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const render::Rgba8 p = a.at(x, y);
      if (p.r > 80 && p.r > 2 * p.g && p.r > 2 * p.b) ++n;
    }
  return n;
}

}  // namespace

TEST_CASE("terrain 1.5 km away appears where the generator's heights put it, and the sky above its silhouette") {
  const Scene& s = highlands();
  const sim::BrickStore world(s.scene.worldBounds);  // empty: the near region shows nothing
  render::Camera cam;
  cam.fovYDegrees = kFovY;
  const double ground = heightAt(*s.sampler, 0, 0);
  cam.position = {0.0, ground + 60.0, 0.0};
  // Look at the highest ground 1.3-1.7 km away, its top a little below the centre.
  const auto peak = highestAround(*s.sampler, 0, 0, 1300, 1700);
  const double dx = peak[0] - cam.position[0], dz = peak[2] - cam.position[2];
  cam.yaw = std::atan2(dx, -dz);
  cam.pitch = std::atan2(peak[1] - cam.position[1], std::sqrt(dx * dx + dz * dz)) + 0.05;
  auto r = farRenderer(2048, world, s, cam.position);
  const Shot shot = shoot(*r, s, cam, "far_view_peak");
  const Verdict v = checkAgainstRays(s, cam, shot, 150, 1800, 2048);
  MESSAGE("terrain pixels checked " << v.terrainChecked << ", sky pixels checked " << v.skyChecked);
  CHECK(v.terrainChecked > 100);
  CHECK(v.skyChecked > 50);
  CHECK(v.terrainWrong == 0);
  CHECK(v.skyWrong <= v.skyChecked / 50);  // a tile may reach a little beyond the far view
  CHECK(shot.tilesDrawn > 0);
  CHECK(r->stats().validationErrors == 0);
}

TEST_CASE("walking towards a far ridge, its levels of detail change without a crack") {
  const Scene& s = highlands();
  const sim::BrickStore world(s.scene.worldBounds);  // empty: the near region shows nothing
  const auto peak = highestAround(*s.sampler, 0, 0, 900, 1100);
  const double len = std::sqrt(peak[0] * peak[0] + peak[2] * peak[2]);
  render::Camera cam;
  cam.fovYDegrees = kFovY;
  cam.yaw = std::atan2(peak[0], -peak[2]);
  cam.pitch = -0.08;
  auto r = farRenderer(2048, world, s, {0, 0, 0});
  int checked = 0, wrong = 0;
  // 12 steps of 40 m: tiles split and merge on the way (a level-3 tile is 205 m).
  for (int step = 0; step < 12; ++step) {
    const double along = step * 40.0;
    const double x = peak[0] / len * along, z = peak[2] / len * along;
    cam.position = {x, heightAt(*s.sampler, x, z) + 40.0, z};
    const Shot shot = shoot(*r, s, cam, "far_view_walk_" + std::to_string(step));
    const Verdict v = checkAgainstRays(s, cam, shot, 150, 1600, 2048);
    checked += v.terrainChecked;
    wrong += v.terrainWrong;
  }
  MESSAGE("terrain pixels checked " << checked << ", sky among them " << wrong);
  CHECK(checked > 1000);
  CHECK(wrong == 0);
  CHECK(r->stats().validationErrors == 0);
}

TEST_CASE("the far terrain stops at the world's edge") {
  // Glade is 128 m across: with 32 m of voxel detail the far terrain draws the rest of
  // it, and nothing of the generator's landscape beyond its bounds.
  const Scene s = loadScene("glade");
  const sim::BrickStore world(s.scene.worldBounds);
  render::Camera cam;
  cam.fovYDegrees = kFovY;
  cam.position = {0.0, heightAt(*s.sampler, 0, 0) + 12.0, 20.0};
  cam.yaw = 0;  // north: the edge at z = -64 is 84 m ahead
  cam.pitch = -0.15;
  auto r = farRenderer(2048, world, s, cam.position, 32);
  const Shot shot = shoot(*r, s, cam, "far_view_edge");
  const Verdict v = checkAgainstRays(s, cam, shot, 30, 200, 2048);
  MESSAGE("terrain pixels checked " << v.terrainChecked << ", sky pixels checked " << v.skyChecked);
  CHECK(v.terrainChecked > 50);
  CHECK(v.skyChecked > 100);
  CHECK(v.terrainWrong == 0);
  CHECK(v.skyWrong == 0);
  CHECK(shot.tilesDrawn > 0);
  CHECK(r->stats().validationErrors == 0);
}

TEST_CASE("an edit 600 m away changes the far level when its notification arrives") {
  const Scene& s = highlands();
  const sim::BrickStore world(s.scene.worldBounds);  // empty: only the far terrain draws
  const double eyeGround = heightAt(*s.sampler, 0, 0);
  const std::array<double, 3> eye{0.0, eyeGround + 40.0, 0.0};
  // A spot 600 m away on dry ground whose surface the eye sees: the first such bearing
  // of 36. The whole 40 m square is dry, so the raised ground is drawn, not water.
  std::array<double, 3> spot{};
  bool found = false;
  for (int i = 0; i < 36 && !found; ++i) {
    const double a = i * kPi / 18, x = 600 * std::sin(a), z = -600 * std::cos(a);
    bool dry = true;
    for (double dz = -20; dz <= 20; dz += 10)
      for (double dx = -20; dx <= 20; dx += 10) dry = dry && dryAt(*s.sampler, x + dx, z + dz);
    spot = {x, heightAt(*s.sampler, x, z), z};
    found = dry && inSight(*s.sampler, eye, {x, spot[1] + 1.0, z}, 0.95);
  }
  REQUIRE(found);
  render::Camera cam;
  cam.fovYDegrees = 30;  // narrow: the 40 m block is about 30 pixels across, not 11
  cam.position = eye;
  cam.yaw = std::atan2(spot[0], -spot[2]);
  cam.pitch = std::atan2(spot[1] + 15.0 - eye[1], 600.0);  // the raised block's middle at the centre
  const std::optional<sim::MaterialId> brick = s.scene.materials->find("brick");
  REQUIRE(brick.has_value());
  auto r = farRenderer(2048, world, s, cam.position);

  auto frame = [&](const std::string& name) {
    r->renderFrame(frameFor(cam));
    r->finishMeshing();  // every tile a change touched is rebuilt and uploaded
    REQUIRE(r->renderFrame(frameFor(cam)));
    auto img = r->readPixels();
    REQUIRE(img.has_value());
    keep(*img, name);
    return std::move(*img);
  };
  // The square of patches 40 m across around the spot, 30 m up (rise: 256 columns of
  // 600 voxels each) in red brick; then the same patches back to the generator's.
  auto square = [&](std::int32_t rise, sim::MaterialId material) {
    const std::int32_t cx = sim::surfacePatchOf(static_cast<std::int32_t>(std::floor(spot[0] * sim::kVoxelsPerMetre)));
    const std::int32_t cz = sim::surfacePatchOf(static_cast<std::int32_t>(std::floor(spot[2] * sim::kVoxelsPerMetre)));
    std::vector<sim::SurfaceChange> out;
    for (std::int32_t z = cz - 25; z < cz + 25; ++z)
      for (std::int32_t x = cx - 25; x < cx + 25; ++x) out.push_back({x, z, rise, material});
    return out;
  };

  const Image before = frame("far_edit_before");
  r->applySurfaceChanges(square(256 * 20 * 30, *brick));
  const Image raised = frame("far_edit_raised");
  r->applySurfaceChanges(square(0, sim::kAir));
  const Image undone = frame("far_edit_undone");

  // Where the block can show: the bounding box of its 8 corners on screen, a few
  // pixels wider for the cells its edges ramp over.
  double x0 = kW, y0 = kH, x1 = 0, y1 = 0;
  for (double dx : {-20.0, 20.0})
    for (double dz : {-20.0, 20.0})
      for (double dy : {0.0, 30.0}) {
        const double gy = heightAt(*s.sampler, spot[0] + dx, spot[2] + dz);
        const auto p = project(cam, {spot[0] + dx, gy + dy, spot[2] + dz});
        REQUIRE(p[2] > 0);
        x0 = std::min(x0, p[0]), y0 = std::min(y0, p[1]), x1 = std::max(x1, p[0]), y1 = std::max(y1, p[1]);
      }
  const int bx0 = static_cast<int>(std::floor(x0)) - 4, by0 = static_cast<int>(std::floor(y0)) - 4;
  const int bx1 = static_cast<int>(std::ceil(x1)) + 5, by1 = static_cast<int>(std::ceil(y1)) + 5;
  MESSAGE("spot (" << spot[0] << ", " << spot[1] << ", " << spot[2] << "), block on screen [" << bx0 << ", "
                   << bx1 << ") x [" << by0 << ", " << by1 << ")");
  REQUIRE(bx0 > 0);
  REQUIRE(bx1 < kW);
  REQUIRE(by0 > 0);
  REQUIRE(by1 < kH);
  const int area = (bx1 - bx0) * (by1 - by0);
  const int inside = changedPixels(before, raised, bx0, by0, bx1, by1);
  const int outside = changedPixels(before, raised, bx0, by0, bx1, by1, true);
  const int back = changedPixels(before, undone, 0, 0, kW, kH);
  MESSAGE("box " << area << " pixels, changed in it " << inside << " (red " << redPixels(raised, bx0, by0, bx1, by1)
                 << "), outside " << outside << "; after the undo " << back);
  // The block's faces and brick top fill much of its box (about 650 of 1,360 pixels
  // on lavapipe); nothing else moves.
  CHECK(inside >= 320);
  CHECK(inside * 3 >= area);
  // Its top is brick red, which no generated ground here is.
  CHECK(redPixels(before, bx0, by0, bx1, by1) == 0);
  CHECK(redPixels(raised, bx0, by0, bx1, by1) >= 100);
  CHECK(outside <= 4);
  CHECK(back <= 4);
  CHECK(r->stats().validationErrors == 0);
}
