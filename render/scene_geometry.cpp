#include "render/scene_geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace loam::render {

namespace {

constexpr double kPi = 3.14159265358979323846;

float smoothstep(float a, float b, float x) {
  float t = std::clamp((x - a) / (b - a), 0.0f, 1.0f);
  return t * t * (3 - 2 * t);
}

struct Rgb {
  float r, g, b;
};
Rgb mix(Rgb a, Rgb b, float t) { return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t}; }
Rgb scale(Rgb a, float s) { return {a.r * s, a.g * s, a.b * s}; }
void put(float* dst, Rgb c, float w = 0) { dst[0] = c.r, dst[1] = c.g, dst[2] = c.b, dst[3] = w; }
void put(float* dst, Vec3f v, float w = 0) { dst[0] = v.x, dst[1] = v.y, dst[2] = v.z, dst[3] = w; }

std::uint32_t hash(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}
float unit(std::uint32_t h) { return static_cast<float>(h & 0xffffffu) / 16777216.0f; }

Vec3f rel(const GeometryView& v, double x, double y, double z) {
  return {static_cast<float>(x - v.eye[0]), static_cast<float>(y - v.eye[1]), static_cast<float>(z - v.eye[2])};
}

vk::ColourVertex vert(Vec3f p, Rgba8 c, Vec3f n, bool lit) {
  auto sn = [](float x) { return static_cast<std::int8_t>(std::lround(std::clamp(x, -1.0f, 1.0f) * 127.0f)); };
  return {p.x, p.y, p.z, c.r, c.g, c.b, c.a, sn(n.x), sn(n.y), sn(n.z), static_cast<std::int8_t>(lit ? 127 : 0)};
}

void quad(std::vector<vk::ColourVertex>& out, Vec3f a, Vec3f b, Vec3f c, Vec3f d, Rgba8 col, Vec3f n, bool lit) {
  vk::ColourVertex va = vert(a, col, n, lit), vb = vert(b, col, n, lit), vc = vert(c, col, n, lit),
                   vd = vert(d, col, n, lit);
  out.insert(out.end(), {va, vb, vc, va, vc, vd});
}

/// A box centred at c with half sizes along the axes ax, ay, az (unit vectors).
void box(std::vector<vk::ColourVertex>& out, Vec3f c, Vec3f ax, Vec3f ay, Vec3f az, Vec3f half, Rgba8 col, bool lit) {
  Vec3f X = ax * half.x, Y = ay * half.y, Z = az * half.z;
  for (int s = -1; s <= 1; s += 2) {
    float f = static_cast<float>(s);
    Vec3f cx = c + X * f, cy = c + Y * f, cz = c + Z * f;
    quad(out, cx - Y - Z, cx + Y - Z, cx + Y + Z, cx - Y + Z, col, ax * f, lit);
    quad(out, cy - X - Z, cy + X - Z, cy + X + Z, cy - X + Z, col, ay * f, lit);
    quad(out, cz - X - Y, cz + X - Y, cz + X + Y, cz - X + Y, col, az * f, lit);
  }
}

Rgba8 shade(Rgba8 c, float s) {
  auto f = [&](std::uint8_t x) { return static_cast<std::uint8_t>(std::clamp(static_cast<float>(x) * s, 0.0f, 255.0f)); };
  return {f(c.r), f(c.g), f(c.b), c.a};
}

}  // namespace

void fillEnvironment(const Environment& env, double viewDistance, vk::FrameUniforms& u) {
  // Sun: rises in the east at 0.25, culminates in the south at noon, sets in the west.
  double a = (env.timeOfDay - 0.25) * 2 * kPi;
  const double tilt = 25.0 * kPi / 180.0;
  Vec3f sun = normalize(Vec3f{static_cast<float>(std::cos(a)), static_cast<float>(std::sin(a) * std::cos(tilt)),
                              static_cast<float>(std::sin(a) * std::sin(tilt))});
  float elev = sun.y;
  float day = smoothstep(-0.12f, 0.2f, elev);
  float night = 1 - smoothstep(-0.25f, 0.0f, elev);
  float low = 1 - smoothstep(0.0f, 0.35f, std::fabs(elev));  // dawn and dusk tint
  float rain = std::clamp(env.rain, 0.0f, 1.0f);

  // Linear colours (sRGB noted): noon zenith ~(60,120,215), horizon ~(175,205,235);
  // night zenith ~(4,6,16), horizon ~(14,20,40); dusk horizon ~(230,140,80).
  Rgb zenith = mix(Rgb{0.0012f, 0.0018f, 0.0052f}, Rgb{0.045f, 0.188f, 0.680f}, day);
  Rgb horizon = mix(Rgb{0.0044f, 0.0070f, 0.021f}, Rgb{0.43f, 0.61f, 0.83f}, day);
  horizon = mix(horizon, Rgb{0.79f, 0.26f, 0.08f}, low * 0.7f * day + low * 0.3f * (1 - day));
  zenith = mix(zenith, Rgb{0.03f, 0.06f, 0.22f}, low * 0.5f * day);
  // Overcast: towards grey, darker.
  Rgb grey = scale(Rgb{0.30f, 0.32f, 0.35f}, 0.05f + 0.95f * day);
  zenith = mix(zenith, grey, rain * 0.75f);
  horizon = mix(horizon, scale(grey, 1.15f), rain * 0.75f);

  Rgb sunColour = mix(Rgb{1.25f, 1.2f, 1.1f}, Rgb{1.1f, 0.55f, 0.25f}, low);
  Rgb moonColour{0.05f, 0.07f, 0.13f};
  bool sunUp = elev > -0.05f;
  Vec3f lightDir = sunUp ? sun : sun * -1.0f;
  Rgb light = sunUp ? scale(sunColour, day) : moonColour;
  if (lightDir.y < 0.15f) lightDir = normalize(Vec3f{lightDir.x, 0.15f, lightDir.z});  // never from below
  light = scale(light, 1.0f - 0.6f * rain);
  Rgb ambient = mix(Rgb{0.02f, 0.03f, 0.06f}, Rgb{0.40f, 0.45f, 0.55f}, day);

  put(u.sunDir, sun, day);
  put(u.lightDir, lightDir);
  put(u.lightColour, light);
  put(u.ambient, ambient);
  put(u.zenith, zenith);
  put(u.horizon, horizon);
  u.fog[0] = static_cast<float>(viewDistance * (0.45 - 0.2 * rain));
  u.fog[1] = static_cast<float>(viewDistance * (1.0 - 0.3 * rain));
  u.fog[3] = night;
  u.camPos[3] = rain;
  u.wind[0] = env.windX;
  u.wind[2] = env.windZ;
}

void appendEntities(std::span<const EntityDraw> entities, const GeometryView& view, std::vector<vk::ColourVertex>& out) {
  const Vec3f up{0, 1, 0};
  for (const EntityDraw& e : entities) {
    Vec3f feet = rel(view, e.feet[0], e.feet[1], e.feet[2]);
    float cy = static_cast<float>(std::cos(e.yaw)), sy = static_cast<float>(std::sin(e.yaw));
    Vec3f fwd{sy, 0, -cy}, right{cy, 0, sy};
    Rgba8 body = e.colour;
    body.a = 255;
    switch (e.shape) {
      case EntityDraw::Shape::Player: {
        box(out, feet + Vec3f{0, 0.72f, 0}, right, up, fwd, {0.25f, 0.72f, 0.15f}, body, true);
        Rgba8 skin{225, 185, 150, 255};
        Vec3f head = feet + Vec3f{0, 1.62f, 0};
        box(out, head, right, up, fwd, {0.16f, 0.16f, 0.16f}, skin, true);
        // Eyes: two dark squares on the face, so facing is visible.
        for (float s : {-1.0f, 1.0f})
          box(out, head + fwd * 0.165f + right * (0.07f * s) + Vec3f{0, 0.03f, 0}, right, up, fwd,
              {0.025f, 0.025f, 0.005f}, Rgba8{20, 20, 30, 255}, false);
        break;
      }
      case EntityDraw::Shape::Bird: {
        box(out, feet + Vec3f{0, 0.07f, 0}, right, up, fwd, {0.06f, 0.06f, 0.11f}, body, true);
        box(out, feet + Vec3f{0, 0.13f, 0} + fwd * 0.1f, right, up, fwd, {0.04f, 0.04f, 0.04f}, shade(body, 0.8f), true);
        box(out, feet + Vec3f{0, 0.13f, 0} + fwd * 0.16f, right, up, fwd, {0.012f, 0.012f, 0.025f}, Rgba8{230, 170, 40, 255},
            true);
        // Wings flap with time.
        float flap = static_cast<float>(std::sin(view.time * 12.0 + e.feet[0] * 3.0)) * 0.04f;
        for (float s : {-1.0f, 1.0f})
          box(out, feet + Vec3f{0, 0.1f + flap, 0} + right * (0.13f * s), right, up, fwd, {0.08f, 0.008f, 0.06f},
              shade(body, 0.9f), true);
        break;
      }
      case EntityDraw::Shape::Walker: {
        box(out, feet + Vec3f{0, 0.38f, 0}, right, up, fwd, {0.13f, 0.12f, 0.32f}, body, true);
        box(out, feet + Vec3f{0, 0.5f, 0} + fwd * 0.38f, right, up, fwd, {0.1f, 0.1f, 0.1f}, body, true);
        box(out, feet + Vec3f{0, 0.47f, 0} + fwd * 0.5f, right, up, fwd, {0.04f, 0.04f, 0.04f}, shade(body, 0.7f), true);
        box(out, feet + Vec3f{0, 0.45f, 0} - fwd * 0.4f, right, up, fwd, {0.03f, 0.03f, 0.12f}, shade(body, 1.2f), true);
        for (float sx : {-1.0f, 1.0f})
          for (float sz : {-1.0f, 1.0f})
            box(out, feet + Vec3f{0, 0.13f, 0} + right * (0.08f * sx) + fwd * (0.22f * sz), right, up, fwd,
                {0.035f, 0.13f, 0.035f}, shade(body, 0.75f), true);
        break;
      }
    }
  }
}

void appendFire(std::span<const FireDraw> fires, const GeometryView& view, std::vector<vk::ColourVertex>& out) {
  const float brick = 0.4f;
  Vec3f right = view.basis.right, up = view.basis.up;
  for (std::size_t f = 0; f < fires.size(); ++f) {
    const FireDraw& fd = fires[f];
    float intensity = std::clamp(fd.intensity, 0.0f, 1.0f);
    std::uint32_t seed = hash(static_cast<std::uint32_t>(std::lround(fd.corner[0] * 5)) * 73856093u ^
                              static_cast<std::uint32_t>(std::lround(fd.corner[1] * 5)) * 19349663u ^
                              static_cast<std::uint32_t>(std::lround(fd.corner[2] * 5)) * 83492791u);
    Vec3f corner = rel(view, fd.corner[0], fd.corner[1], fd.corner[2]);
    float flicker = 0.75f + 0.25f * static_cast<float>(std::sin(view.time * 17.0 + seed % 100) *
                                                       std::sin(view.time * 7.3 + seed % 37));
    // The burning brick glows.
    Rgba8 glow{255, 110, 30, static_cast<std::uint8_t>(90 * intensity * flicker)};
    box(out, corner + Vec3f{brick / 2, brick / 2, brick / 2}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1},
        {brick * 0.52f, brick * 0.52f, brick * 0.52f}, glow, false);
    // Particles rise, shrink and cool from yellow to red.
    int count = 4 + static_cast<int>(10 * intensity);
    for (int i = 0; i < count; ++i) {
      std::uint32_t h = hash(seed + static_cast<std::uint32_t>(i) * 0x9e3779b9u);
      float rate = 0.9f + unit(h) * 0.8f;
      double cycle = view.time * rate + unit(hash(h)) * 7.0;
      float phase = static_cast<float>(cycle - std::floor(cycle));
      float rise = phase * (0.5f + 0.9f * intensity);
      float sway = 0.05f * static_cast<float>(std::sin(view.time * 3.0 + i));
      Vec3f p = corner + Vec3f{brick * (0.15f + 0.7f * unit(hash(h + 1))) + sway, brick * 0.8f + rise,
                               brick * (0.15f + 0.7f * unit(hash(h + 2)))};
      float size = (0.11f * (1 - phase) + 0.025f) * (0.6f + 0.6f * intensity);
      Rgba8 c{255, static_cast<std::uint8_t>(220 - 160 * phase), static_cast<std::uint8_t>(110 - 100 * phase),
              static_cast<std::uint8_t>(230 * (1 - phase) * flicker)};
      Vec3f r = right * size, u = up * size;
      // A kite, taller than wide, reads as a flame tongue.
      quad(out, p - u, p + r * 0.7f, p + u * 1.8f, p - r * 0.7f, c, {0, 1, 0}, false);
    }
  }
}

void appendRain(const Environment& env, const GeometryView& view, std::vector<vk::ColourVertex>& out) {
  float rain = std::clamp(env.rain, 0.0f, 1.0f);
  int count = static_cast<int>(rain * 1500);
  if (count == 0) return;
  const float span = 24.0f, height = 16.0f, fall = 9.0f, length = 0.55f, width = 0.012f;
  Vec3f dir = normalize(Vec3f{env.windX, -fall, env.windZ});
  // Drops are anchored in the world (wrapped into a box around the eye), so walking
  // through rain looks right.
  auto wrap = [](double x, double span) {
    double r = std::fmod(x, span);
    if (r < 0) r += span;
    return static_cast<float>(r - span / 2);
  };
  Rgba8 c{190, 200, 225, static_cast<std::uint8_t>(70 + 60 * rain)};
  for (int i = 0; i < count; ++i) {
    std::uint32_t h = hash(static_cast<std::uint32_t>(i) * 0x9e3779b9u + 17);
    double fallen = view.time * fall + unit(hash(h)) * height;
    // Slant the column with the wind as it falls.
    double drift = fallen / fall;
    float x = wrap(unit(h) * span + env.windX * drift - view.eye[0], span);
    float z = wrap(unit(hash(h + 7)) * span + env.windZ * drift - view.eye[2], span);
    float y = wrap(-fallen - view.eye[1], height);
    Vec3f p{x, y, z};
    if (dot(p, p) < 4.0f) continue;  // drops within 2 m of the eye would be huge sticks
    Vec3f side = normalize(cross(dir, p)) * width;
    Vec3f tail = p - dir * length;
    quad(out, p - side, p + side, tail + side, tail - side, c, {0, 1, 0}, false);
  }
}

void appendHighlight(sim::VoxelCoord v, const GeometryView& view, std::vector<vk::ColourVertex>& out) {
  const double s = 1.0 / sim::kVoxelsPerMetre, e = 0.003;
  Vec3f lo = rel(view, v.x * s - e, v.y * s - e, v.z * s - e);
  Vec3f hi = rel(view, (v.x + 1) * s + e, (v.y + 1) * s + e, (v.z + 1) * s + e);
  Rgba8 c{15, 15, 15, 230};
  auto corner = [&](int i) { return Vec3f{(i & 1) ? hi.x : lo.x, (i & 2) ? hi.y : lo.y, (i & 4) ? hi.z : lo.z}; };
  for (int i = 0; i < 8; ++i)
    for (int bit : {1, 2, 4})
      if (!(i & bit)) {
        out.push_back(vert(corner(i), c, {0, 1, 0}, false));
        out.push_back(vert(corner(i | bit), c, {0, 1, 0}, false));
      }
}

}  // namespace loam::render
