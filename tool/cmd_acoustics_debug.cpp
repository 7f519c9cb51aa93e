// `loam-tool acoustics-debug`: what the acoustic probe sees around a listener, drawn
// from above as a PNG (north up, east right, centred on the listener) plus the room
// estimate as one JSON line on stdout. For tuning the probe, the openings and the
// early reflections by eye on real scenes.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <stb/stb_image_write.h>
#include <stb/stb_easy_font.h>

#include "audio/early_reflections.h"
#include "audio/room_probe.h"
#include "sim/world/brick_store.h"
#include "sim/gen/generator.h"
#include "sim/gen/scene.h"
#include "tool/commands.h"
#include "tool/tool_util.h"

namespace loam::tool {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr float kSpeedOfSound = 343.0f;

struct Rgb {
  float r = 0, g = 0, b = 0;
};

/// An RGB8 canvas with alpha-blended plotting; writes outside it are dropped.
class Canvas {
 public:
  explicit Canvas(int size) : size_(size), px_(static_cast<std::size_t>(size) * static_cast<std::size_t>(size) * 3) {}
  int size() const noexcept { return size_; }
  std::vector<std::uint8_t>& pixels() noexcept { return px_; }

  void set(int x, int y, Rgb c) noexcept { blend(x, y, c, 1.0f); }
  void blend(int x, int y, Rgb c, float a) noexcept {
    if (x < 0 || y < 0 || x >= size_ || y >= size_) return;
    std::uint8_t* p = &px_[(static_cast<std::size_t>(y) * static_cast<std::size_t>(size_) + static_cast<std::size_t>(x)) * 3];
    const float v[3] = {c.r, c.g, c.b};
    for (int k = 0; k < 3; ++k) {
      float o = static_cast<float>(p[k]) * (1.0f - a) + v[k] * a;
      p[k] = static_cast<std::uint8_t>(std::clamp(o + 0.5f, 0.0f, 255.0f));
    }
  }
  /// A filled disc of radius r (pixels) at (x, y).
  void disc(float x, float y, float r, Rgb c, float a = 1.0f) noexcept {
    int x0 = static_cast<int>(std::floor(x - r)), x1 = static_cast<int>(std::ceil(x + r));
    int y0 = static_cast<int>(std::floor(y - r)), y1 = static_cast<int>(std::ceil(y + r));
    for (int py = y0; py <= y1; ++py)
      for (int px = x0; px <= x1; ++px) {
        float dx = static_cast<float>(px) + 0.5f - x, dy = static_cast<float>(py) + 0.5f - y;
        if (dx * dx + dy * dy <= r * r) blend(px, py, c, a);
      }
  }
  /// A ring of radius r and width w at (x, y).
  void ring(float x, float y, float r, float w, Rgb c, float a = 1.0f) noexcept {
    int x0 = static_cast<int>(std::floor(x - r - w)), x1 = static_cast<int>(std::ceil(x + r + w));
    int y0 = static_cast<int>(std::floor(y - r - w)), y1 = static_cast<int>(std::ceil(y + r + w));
    for (int py = y0; py <= y1; ++py)
      for (int px = x0; px <= x1; ++px) {
        float dx = static_cast<float>(px) + 0.5f - x, dy = static_cast<float>(py) + 0.5f - y;
        if (std::fabs(std::sqrt(dx * dx + dy * dy) - r) <= w * 0.5f) blend(px, py, c, a);
      }
  }
  /// A line from (x0, y0) to (x1, y1), clipped to the canvas first (rays may reach
  /// far past it), width 1 or a disc of radius `thick` per step.
  void line(float x0, float y0, float x1, float y1, Rgb c, float a = 1.0f, float thick = 0.0f) noexcept {
    if (!clip(x0, y0, x1, y1)) return;
    float dx = x1 - x0, dy = y1 - y0;
    int steps = std::max(1, static_cast<int>(std::ceil(std::max(std::fabs(dx), std::fabs(dy)))));
    int lastX = INT32_MIN, lastY = INT32_MIN;
    for (int i = 0; i <= steps; ++i) {
      float t = static_cast<float>(i) / static_cast<float>(steps);
      float x = x0 + dx * t, y = y0 + dy * t;
      if (thick > 0.0f) {
        disc(x, y, thick, c, a);
        continue;
      }
      int px = static_cast<int>(std::floor(x)), py = static_cast<int>(std::floor(y));
      if (px == lastX && py == lastY) continue;  // blend each pixel once
      blend(px, py, c, a);
      lastX = px;
      lastY = py;
    }
  }
  /// Text at (x, y) (top left), in pixels scaled by `scale`, with a dark shadow.
  void text(float x, float y, const std::string& s, Rgb c, int scale) {
    std::vector<char> buf(s.begin(), s.end());
    buf.push_back('\0');
    // 16-byte vertices (x, y, z floats + colour), 4 per quad; ~270 bytes per char.
    std::vector<char> verts(buf.size() * 300 + 64);
    int quads = stb_easy_font_print(0, 0, buf.data(), nullptr, verts.data(), static_cast<int>(verts.size()));
    for (int pass = 0; pass < 2; ++pass) {
      Rgb col = pass == 0 ? Rgb{0, 0, 0} : c;
      float off = pass == 0 ? static_cast<float>(scale) : 0.0f;
      for (int q = 0; q < quads; ++q) {
        float v0[2], v2[2];  // the quad's first and third corners (x, y)
        std::memcpy(v0, verts.data() + q * 64, sizeof v0);
        std::memcpy(v2, verts.data() + q * 64 + 32, sizeof v2);
        int qx0 = static_cast<int>(x + off + v0[0] * static_cast<float>(scale));
        int qy0 = static_cast<int>(y + off + v0[1] * static_cast<float>(scale));
        int qx1 = static_cast<int>(x + off + v2[0] * static_cast<float>(scale));
        int qy1 = static_cast<int>(y + off + v2[1] * static_cast<float>(scale));
        for (int py = qy0; py < qy1; ++py)
          for (int px = qx0; px < qx1; ++px) set(px, py, col);
      }
    }
  }

 private:
  // Liang-Barsky against [0, size]^2; false when the segment misses the canvas.
  bool clip(float& x0, float& y0, float& x1, float& y1) const noexcept {
    const float lo = -1.0f, hi = static_cast<float>(size_) + 1.0f;
    float t0 = 0.0f, t1 = 1.0f, dx = x1 - x0, dy = y1 - y0;
    const float p[4] = {-dx, dx, -dy, dy};
    const float q[4] = {x0 - lo, hi - x0, y0 - lo, hi - y0};
    for (int i = 0; i < 4; ++i) {
      if (p[i] == 0.0f) {
        if (q[i] < 0.0f) return false;
        continue;
      }
      float r = q[i] / p[i];
      if (p[i] < 0.0f) t0 = std::max(t0, r);
      else t1 = std::min(t1, r);
      if (t0 > t1) return false;
    }
    float nx0 = x0 + t0 * dx, ny0 = y0 + t0 * dy;
    x1 = x0 + t1 * dx;
    y1 = y0 + t1 * dy;
    x0 = nx0;
    y0 = ny0;
    return true;
  }

  int size_;
  std::vector<std::uint8_t> px_;
};

/// The top sound-stopping voxel of a column and whether foliage hangs above it.
struct Column {
  std::int32_t y = INT32_MIN;  // voxel y (INT32_MIN: none)
  sim::MaterialId material = sim::kAir;
  sim::MaterialId foliage = sim::kAir;  // first foliage material above it, kAir when none
};

/// Scans column (x, z) down from voxel yTop (clamped to the world top); skips uniform
/// air and foliage bricks whole, reads voxels only in mixed bricks.
Column scanColumn(const sim::BrickStore& w, const audio::AcousticTable& t, std::int32_t x, std::int32_t yTop,
                  std::int32_t z) {
  const sim::WorldBounds& b = w.bounds();
  Column c;
  std::int32_t y = std::min(yTop, b.maxBrick.y * sim::kBrickSize - 1);
  const std::int32_t yMin = b.minBrick.y * sim::kBrickSize;
  while (y >= yMin) {
    sim::BrickCoord bc{x >> sim::kBrickShift, y >> sim::kBrickShift, z >> sim::kBrickShift};
    sim::BrickView v = w.brick(bc);
    if (v.isUniform() && !t.stops[v.uniformMaterial()]) {
      if (t.foliage[v.uniformMaterial()] && c.foliage == sim::kAir) c.foliage = v.uniformMaterial();
      y = (bc.y << sim::kBrickShift) - 1;
      continue;
    }
    sim::MaterialId m = w.get(x, y, z);
    if (t.stops[m]) {
      c.y = y;
      c.material = m;
      return c;
    }
    if (t.foliage[m] && c.foliage == sim::kAir) c.foliage = m;
    --y;
  }
  return c;
}

/// Hit colour by mid-band absorption: hard (stone, 0) red, through orange and yellow,
/// to soft (soil, grass, foliage, >= 0.6) green.
Rgb absorptionColour(float a) {
  float t = std::clamp(a / 0.6f, 0.0f, 1.0f);
  if (t < 0.5f) return {255.0f, 50.0f + 360.0f * t, 40.0f};
  return {255.0f - 400.0f * (t - 0.5f), 230.0f, 40.0f + 60.0f * (t - 0.5f)};
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

void addAcousticsDebugCommand(CLI::App& app, int& exitCode) {
  struct Options {
    std::string scene;
    std::int64_t seed = -1;
    std::string listener;
    std::string out;
    int size = 768;
    double radius = 32.0;
    int rays = 512;
    std::uint64_t update = 0;
    double cut = -1.0;  // < 0: whole columns
    bool quiet = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "acoustics-debug", "Draw what the acoustic probe sees around a listener (PNG, from above) and print the room");
  cmd->add_option("--scene", opt->scene, "Scene file (e.g. scenes/glade.toml)")->required();
  cmd->add_option("--seed", opt->seed, "World seed (default: the scene's)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--listener", opt->listener, "x,y,z[,yaw]: ears in metres, yaw in degrees (0 north, clockwise)")
      ->required();
  cmd->add_option("--out", opt->out, "Output PNG")->required();
  cmd->add_option("--size", opt->size, "Image width and height in pixels")
      ->check(CLI::Range(64, 8192))
      ->capture_default_str();
  cmd->add_option("--radius", opt->radius, "Metres from the listener to the image edge")
      ->check(CLI::Range(1.0, 1024.0))
      ->capture_default_str();
  cmd->add_option("--rays", opt->rays, "Probe rays")->check(CLI::Range(16, 4096))->capture_default_str();
  cmd->add_option("--update", opt->update, "Probe update index (rotates the ray set and the reflection rings)");
  cmd->add_option("--cut", opt->cut,
                  "Draw the ground from M metres above the ears down (see into tunnels and caves); "
                  "default: whole columns")
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_flag("--quiet", opt->quiet, "No progress on stderr");
  cmd->callback([opt, &exitCode] {
    std::vector<double> lv;
    if (!parseNumberList(opt->listener, lv) || (lv.size() != 3 && lv.size() != 4)) {
      std::fprintf(stderr, "acoustics-debug: --listener wants x,y,z[,yaw] (metres, degrees), got '%s'\n",
                   opt->listener.c_str());
      exitCode = 2;
      return;
    }
    const audio::Vec3f ear{static_cast<float>(lv[0]), static_cast<float>(lv[1]), static_cast<float>(lv[2])};
    const double yawDeg = lv.size() == 4 ? lv[3] : 0.0;
    auto scene = sim::loadScene(opt->scene);
    if (!scene) {
      std::fprintf(stderr, "acoustics-debug: %s\n", scene.error().message.c_str());
      exitCode = 2;
      return;
    }
    const sim::WorldBounds& wb = scene->worldBounds;
    const double brickM = static_cast<double>(sim::kBrickSize) / sim::kVoxelsPerMetre;
    const double lo[3] = {wb.minBrick.x * brickM, wb.minBrick.y * brickM, wb.minBrick.z * brickM};
    const double hi[3] = {wb.maxBrick.x * brickM, wb.maxBrick.y * brickM, wb.maxBrick.z * brickM};
    for (int k = 0; k < 3; ++k) {
      if (lv[static_cast<std::size_t>(k)] < lo[k] || lv[static_cast<std::size_t>(k)] >= hi[k]) {
        std::fprintf(stderr,
                     "acoustics-debug: listener (%g, %g, %g) is outside the world [%g, %g) x [%g, %g) x [%g, %g)\n",
                     lv[0], lv[1], lv[2], lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);
        exitCode = 2;
        return;
      }
    }
    const std::uint64_t seed = seedFor(*scene, opt->seed);
    std::optional<sim::BrickStore> world = generateForCommand(*scene, seed, 0, "acoustics-debug", opt->quiet);
    if (!world) {
      exitCode = 1;
      return;
    }
    const sim::MaterialTable& mats = *scene->materials;
    const audio::AcousticTable table = audio::makeAcousticTable(mats);
    auto voxelOf = [](double m) { return static_cast<std::int32_t>(std::floor(m * sim::kVoxelsPerMetre)); };
    if (table.stops[world->get(voxelOf(ear.x), voxelOf(ear.y), voxelOf(ear.z))])
      std::fprintf(stderr, "acoustics-debug: warning: the listener is inside a sound-stopping voxel\n");

    // The probe and the reflections, as the client runs them.
    audio::ProbeConfig pc;
    pc.rays = opt->rays;
    audio::RoomProbe probe(pc);
    const audio::RoomEstimate est = probe.update(*world, table, ear, opt->update);
    std::array<audio::ReflectionTap, audio::kMaxReflectionTaps> taps{};
    const int tapCount = audio::findReflections(*world, table, ear, opt->update, audio::ReflectionConfig{}, taps);

    // Pixel <-> world: centre on the listener, x east to the right, z south down.
    const int size = opt->size;
    const double mpp = opt->radius / (size * 0.5);  // metres per pixel
    auto toPx = [&](double wx, double wz) {
      return std::array<float, 2>{static_cast<float>((wx - ear.x) / mpp + size * 0.5),
                                  static_cast<float>((wz - ear.z) / mpp + size * 0.5)};
    };
    Canvas img(size);

    // Ground: the top sound-stopping voxel's colour (below the cut, if any), brighter
    // when higher than the listener's feet, hill-shaded, greened under foliage.
    {
      const std::int32_t yTop = opt->cut >= 0 ? voxelOf(ear.y + opt->cut) : INT32_MAX;
      std::vector<Column> cols(static_cast<std::size_t>(size) * static_cast<std::size_t>(size));
      for (int py = 0; py < size; ++py)
        for (int px = 0; px < size; ++px) {
          double wx = ear.x + (px + 0.5 - size * 0.5) * mpp, wz = ear.z + (py + 0.5 - size * 0.5) * mpp;
          if (wx < lo[0] || wx >= hi[0] || wz < lo[2] || wz >= hi[2]) continue;
          cols[static_cast<std::size_t>(py) * static_cast<std::size_t>(size) + static_cast<std::size_t>(px)] =
              scanColumn(*world, table, voxelOf(wx), yTop, voxelOf(wz));
        }
      auto heightAt = [&](int px, int py) {
        px = std::clamp(px, 0, size - 1);
        py = std::clamp(py, 0, size - 1);
        const Column& c = cols[static_cast<std::size_t>(py) * static_cast<std::size_t>(size) + static_cast<std::size_t>(px)];
        return c.y == INT32_MIN ? 0.0 : (c.y + 1.0) / sim::kVoxelsPerMetre;
      };
      const double feet = ear.y - 1.62;
      for (int py = 0; py < size; ++py)
        for (int px = 0; px < size; ++px) {
          const Column& c = cols[static_cast<std::size_t>(py) * static_cast<std::size_t>(size) + static_cast<std::size_t>(px)];
          if (c.y == INT32_MIN) {
            img.set(px, py, c.foliage != sim::kAir ? Rgb{20, 50, 20} : Rgb{12, 12, 16});
            continue;
          }
          const sim::Rgb8 mc = c.material < mats.size() ? mats[c.material].colour : sim::Rgb8{128, 128, 128};
          double h = (c.y + 1.0) / sim::kVoxelsPerMetre - feet;
          double shade = std::clamp(1.0 + h * 0.04, 0.45, 1.6);
          double sx = heightAt(px + 1, py) - heightAt(px - 1, py), sz = heightAt(px, py + 1) - heightAt(px, py - 1);
          shade *= std::clamp(1.0 - (sx + sz) / (mpp * 4.0), 0.6, 1.4);  // light from the north-west
          Rgb col{static_cast<float>(mc.r * shade), static_cast<float>(mc.g * shade), static_cast<float>(mc.b * shade)};
          if (c.foliage != sim::kAir) {
            const sim::Rgb8 fc = c.foliage < mats.size() ? mats[c.foliage].colour : sim::Rgb8{40, 120, 40};
            col = {col.r * 0.55f + fc.r * 0.45f, col.g * 0.55f + fc.g * 0.45f, col.b * 0.55f + fc.b * 0.45f};
          }
          img.set(px, py, col);
        }
    }

    const std::array<float, 2> centre = toPx(ear.x, ear.z);
    const int textScale = std::max(1, size / 384);

    // Rays: the escaping ones faint blue out to maxDistance, the hitting ones to the
    // hit point coloured by the hit's mid-band absorption, a dot there.
    {
      std::span<const audio::Vec3f> dirs = probe.directions();
      std::span<const audio::RayHit> hits = probe.hits();
      for (std::size_t i = 0; i < dirs.size(); ++i) {
        if (hits[i].hit()) continue;
        float d = pc.maxDistance;
        auto e = toPx(ear.x + dirs[i].x * d, ear.z + dirs[i].z * d);
        img.line(centre[0], centre[1], e[0], e[1], Rgb{90, 150, 255}, 0.22f);
      }
      for (std::size_t i = 0; i < dirs.size(); ++i) {
        if (!hits[i].hit()) continue;
        float d = hits[i].distance;
        Rgb c = absorptionColour(table.absorption[hits[i].material][1]);
        auto e = toPx(ear.x + dirs[i].x * d, ear.z + dirs[i].z * d);
        img.line(centre[0], centre[1], e[0], e[1], c, 0.35f);
        img.disc(e[0], e[1], 1.6f * static_cast<float>(textScale), c, 0.9f);
      }
    }

    // Early reflection taps: rings at the reflection points (delay = 2 d / c).
    for (int i = 0; i < tapCount; ++i) {
      const audio::ReflectionTap& t = taps[static_cast<std::size_t>(i)];
      float d = t.delay * kSpeedOfSound * 0.5f;
      auto p = toPx(ear.x + t.direction.x * d, ear.z + t.direction.z * d);
      img.ring(p[0], p[1], 5.0f * static_cast<float>(textScale), 2.0f, Rgb{255, 255, 255});
    }

    // Openings: thick magenta arrows scaled by share (sqrt, so small openings stay
    // visible: the full radius for a share of 1, shortened by the direction's horizontal
    // part), the mouth marked by a ring, share and distance written at the tip; a
    // nearly vertical opening (the sky) is a ring round the listener.
    const Rgb kOpening{255, 70, 230};
    const float half = static_cast<float>(size) * 0.5f;
    for (int i = 0; i < est.openingCount; ++i) {
      const audio::Opening& o = est.openings[static_cast<std::size_t>(i)];
      float hx = o.direction.x, hz = o.direction.z;
      float hLen = std::sqrt(hx * hx + hz * hz);
      std::string label = "#" + std::to_string(i + 1) + " " +
                          fmt(o.share < 0.1f ? "%.1f%%" : "%.0f%%", static_cast<double>(o.share) * 100.0) +
                          (o.distance > 0 ? fmt(" %.1f m", o.distance) : std::string(" ? m")) +
                          (o.direction.y > 0.5f ? " up" : o.direction.y < -0.5f ? " down" : "");
      if (o.aroundCorners()) {
        // Round corners: the air path itself, ears -> corners -> a ring at the mouth.
        auto from = centre;
        for (int k = 0; k < o.waypointCount(); ++k) {
          const audio::Vec3f w = o.waypoint(k);
          auto to = toPx(ear.x + w.x, ear.z + w.z);
          img.line(from[0], from[1], to[0], to[1], kOpening, 0.9f, 1.8f);
          from = to;
        }
        img.ring(from[0], from[1], 6.0f * static_cast<float>(textScale), 2.5f, kOpening);
        img.text(from[0] + 8.0f, from[1] - 4.0f,
                 "#" + std::to_string(i + 1) + " round " + std::to_string(o.beyondCount) +
                     (o.beyondCount == 1 ? " corner " : " corners ") +
                     fmt("%.1f m", static_cast<double>(o.along(o.waypointCount() - 1))),
                 kOpening, textScale);
        continue;
      }
      if (hLen < 0.35f) {
        float r = std::max(8.0f, half * 0.3f * std::sqrt(o.share));
        img.ring(centre[0], centre[1], r, 3.0f, kOpening, 0.85f);
        img.text(centre[0] + r * 0.72f + 4.0f, centre[1] - r * 0.72f - 12.0f * static_cast<float>(textScale), label,
                 kOpening, textScale);
        continue;
      }
      float ux = hx / hLen, uz = hz / hLen;
      float len = std::max(12.0f, half * 0.9f * std::sqrt(o.share) * hLen);
      float ex = centre[0] + ux * len, ey = centre[1] + uz * len;
      img.line(centre[0], centre[1], ex, ey, kOpening, 0.9f, 1.8f);
      // Arrow head: two strokes back from the tip at +-28 degrees.
      float head = 14.0f * static_cast<float>(textScale);
      for (float s : {-1.0f, 1.0f}) {
        float c = std::cos(0.49f), sn = std::sin(0.49f) * s;
        float bx = -(ux * c - uz * sn), by = -(ux * sn + uz * c);
        img.line(ex, ey, ex + bx * head, ey + by * head, kOpening, 0.9f, 1.8f);
      }
      if (o.distance > 0) {
        auto m = toPx(ear.x + o.direction.x * o.distance, ear.z + o.direction.z * o.distance);
        img.ring(m[0], m[1], 6.0f * static_cast<float>(textScale), 2.5f, kOpening);
      }
      img.text(ex + ux * 6.0f + 4.0f, ey + uz * 6.0f - 4.0f, label, kOpening, textScale);
    }

    // The listener: a white cross and a tick along the facing direction
    // (yaw 0 = north = -z = up, clockwise).
    {
      const float arm = 9.0f * static_cast<float>(textScale);
      const Rgb white{255, 255, 255};
      img.line(centre[0] - arm, centre[1], centre[0] + arm, centre[1], white, 1.0f, 1.2f);
      img.line(centre[0], centre[1] - arm, centre[0], centre[1] + arm, white, 1.0f, 1.2f);
      const double yaw = yawDeg * kPi / 180.0;
      const float fx = static_cast<float>(std::sin(yaw)), fz = static_cast<float>(-std::cos(yaw));
      img.line(centre[0], centre[1], centre[0] + fx * arm * 2.2f, centre[1] + fz * arm * 2.2f, white, 1.0f, 1.2f);
    }

    // Legend.
    {
      const float lh = 11.0f * static_cast<float>(textScale);
      float y = 4.0f;
      const Rgb tc{240, 240, 240};
      img.text(4, y, scene->name + " " + fmt("(%.1f, ", ear.x) + fmt("%.1f, ", ear.y) + fmt("%.1f)", ear.z) +
                         fmt("  radius %.0f m", opt->radius), tc, textScale);
      y += lh;
      img.text(4, y,
               fmt("enclosure %.2f", est.enclosure) + fmt("  openness %.2f", est.openness) +
                   fmt("  mfp %.1f m", est.meanFreePath) + fmt("  rt60 %.2f/", est.rt60[0]) +
                   fmt("%.2f/", est.rt60[1]) + fmt("%.2f s", est.rt60[2]),
               tc, textScale);
      y += lh;
      img.text(4, y, "rays: blue escape, hits red (hard) .. green (soft)", tc, textScale);
      y += lh;
      img.text(4, y, "magenta: openings (share, mouth); white rings: reflections", tc, textScale);
    }

    if (!stbi_write_png(opt->out.c_str(), size, size, 3, img.pixels().data(), size * 3)) {
      std::fprintf(stderr, "acoustics-debug: cannot write %s\n", opt->out.c_str());
      exitCode = 1;
      return;
    }

    std::printf("{\"scene\": \"%s\", \"seed\": %" PRIu64 ", \"listener\": [%.3f, %.3f, %.3f], \"yaw_deg\": %.1f, "
                "\"rays\": %d, \"enclosure\": %.4f, \"hit_share\": %.4f, \"openness\": %.4f, "
                "\"mean_hit_distance_m\": %.3f, \"mean_free_path_m\": %.3f, \"rt60_s\": [%.4f, %.4f, %.4f], "
                "\"absorption\": [%.4f, %.4f, %.4f], \"openings\": [",
                scene->name.c_str(), seed, static_cast<double>(ear.x), static_cast<double>(ear.y),
                static_cast<double>(ear.z), yawDeg, opt->rays, static_cast<double>(est.enclosure),
                static_cast<double>(est.hitShare), static_cast<double>(est.openness),
                static_cast<double>(est.meanHitDistance), static_cast<double>(est.meanFreePath),
                static_cast<double>(est.rt60[0]), static_cast<double>(est.rt60[1]), static_cast<double>(est.rt60[2]),
                static_cast<double>(est.absorption[0]), static_cast<double>(est.absorption[1]),
                static_cast<double>(est.absorption[2]));
    for (int i = 0; i < est.openingCount; ++i) {
      const audio::Opening& o = est.openings[static_cast<std::size_t>(i)];
      std::printf("%s{\"direction\": [%.4f, %.4f, %.4f], \"share\": %.4f, \"distance_m\": %.3f, \"waypoints\": [",
                  i ? ", " : "", static_cast<double>(o.direction.x), static_cast<double>(o.direction.y),
                  static_cast<double>(o.direction.z), static_cast<double>(o.share), static_cast<double>(o.distance));
      for (int k = 0; k < o.waypointCount(); ++k) {
        const audio::Vec3f w = o.waypoint(k);
        std::printf("%s[%.3f, %.3f, %.3f]", k ? ", " : "", static_cast<double>(ear.x + w.x),
                    static_cast<double>(ear.y + w.y), static_cast<double>(ear.z + w.z));
      }
      std::printf("], \"path_m\": %.3f}",
                  static_cast<double>(o.along(o.waypointCount() - 1)));
    }
    std::printf("], \"taps\": %d}\n", tapCount);
    std::fflush(stdout);
    if (!opt->quiet)
      std::fprintf(stderr, "acoustics-debug: wrote %s (%d x %d, %.3f m per pixel, %d rays, %d openings, %d taps)\n",
                   opt->out.c_str(), size, size, mpp, opt->rays, est.openingCount, tapCount);
    exitCode = 0;
  });
}

}  // namespace loam::tool
