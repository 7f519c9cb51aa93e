// Offscreen renderer tests (lavapipe in CI, no display): pixels of small hand-built
// worlds, with the Khronos validation layer on and zero validation errors required.
// Set LOAM_RENDER_TEST_PNG_DIR to keep the rendered images.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

#include "render/renderer.h"
#include "sim/world/brick_store.h"
#include "sim/world/material.h"

using namespace loam;
using render::Image;
using render::Rgba8;

namespace {

constexpr int kW = 320, kH = 240;

const sim::MaterialTable& materials() {
  static sim::MaterialTable table = [] {
    auto t = sim::MaterialTable::load(LOAM_SOURCE_DIR "/sim/data/materials.toml");
    REQUIRE(t.has_value());
    return std::move(*t);
  }();
  return table;
}

sim::MaterialId material(const char* name) {
  auto id = materials().find(name);
  REQUIRE(id.has_value());
  return *id;
}

std::unique_ptr<render::Renderer> makeRenderer(int w = kW, int h = kH) {
  render::RendererConfig c;
  c.offscreen = true;
  c.width = w;
  c.height = h;
  c.validation = true;
  auto r = render::Renderer::create(c);
  if (!r) FAIL("Renderer::create: " << r.error().message);
  return std::move(*r);
}

// 12.8 x 6.4 x 12.8 m, centred on x = z = 0.
sim::BrickStore emptyWorld() { return sim::BrickStore(sim::WorldBounds{{-16, 0, -16}, {16, 16, 16}}); }

// Fills voxels [x0, x1) x [y0, y1) x [z0, z1) with m.
void fill(sim::BrickStore& w, int x0, int y0, int z0, int x1, int y1, int z1, sim::MaterialId m) {
  for (int z = z0; z < z1; ++z)
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) w.set(x, y, z, m);
}

// A 1 m thick floor (y voxels 0..19) of m under the whole world.
void floor(sim::BrickStore& w, sim::MaterialId m) { fill(w, -128, 0, -128, 128, 20, 128, m); }

render::FrameInput frameAt(double timeOfDay, double eyeY = 2.6, double pitch = 0) {
  render::FrameInput f;
  f.camera.position = {0.0, eyeY, 0.0};
  f.camera.yaw = 0;  // north, -z
  f.camera.pitch = pitch;
  f.environment.timeOfDay = timeOfDay;
  f.crosshair = false;
  return f;
}

Image renderOnce(render::Renderer& r, const render::FrameInput& f, const char* name) {
  CHECK(r.renderFrame(f));
  auto img = r.readPixels();
  REQUIRE(img.has_value());
  if (const char* dir = std::getenv("LOAM_RENDER_TEST_PNG_DIR")) {
    auto w = render::writePng(std::string(dir) + "/" + name + ".png", *img);
    CHECK(w.has_value());
  }
  return std::move(*img);
}

float luminance(Rgba8 p) { return 0.2126f * p.r + 0.7152f * p.g + 0.0722f * p.b; }

int diff(Rgba8 a, Rgba8 b) { return std::abs(a.r - b.r) + std::abs(a.g - b.g) + std::abs(a.b - b.b); }

}  // namespace

TEST_CASE("empty world: sky is blue at noon and dark at midnight") {
  auto r = makeRenderer();
  sim::BrickStore world = emptyWorld();
  r->setWorld(world, materials(), {0, 2.6, 0});
  r->finishMeshing();

  Image noon = renderOnce(*r, frameAt(0.5), "sky_noon");
  REQUIRE(noon.width == kW);
  REQUIRE(noon.height == kH);
  for (int x = 0; x < kW; ++x) {
    Rgba8 p = noon.at(x, 0);
    INFO("x " << x << " rgb " << int(p.r) << "," << int(p.g) << "," << int(p.b));
    CHECK(p.b > 150);
    CHECK(p.b > p.r);
  }
  Image night = renderOnce(*r, frameAt(0.0), "sky_midnight");
  double sum = 0;
  int dark = 0;
  for (int x = 0; x < kW; ++x) {
    float l = luminance(night.at(x, 0));
    sum += l;
    dark += l < 40 ? 1 : 0;
  }
  CHECK(sum / kW < 40);
  CHECK(dark >= kW * 95 / 100);  // a star may light a pixel or two
  CHECK(r->stats().validationErrors == 0);
}

TEST_CASE("a red brick wall in front of the camera shows red at the centre") {
  auto r = makeRenderer();
  sim::BrickStore world = emptyWorld();
  floor(world, material("grass"));
  // The wall: 2 m north of the eye (z = -2 m), 2 m wide, 1..4 m high, 40 cm thick.
  fill(world, -20, 20, -48, 20, 80, -40, material("brick"));
  r->setWorld(world, materials(), {0, 2.6, 0});
  r->finishMeshing();
  CHECK(r->meshIdle());
  Image img = renderOnce(*r, frameAt(0.5), "brick_wall_noon");
  Rgba8 c = img.at(kW / 2, kH / 2);
  INFO("centre rgb " << int(c.r) << "," << int(c.g) << "," << int(c.b));
  CHECK(c.r > 120);
  CHECK(c.r > 2 * c.g);
  CHECK(c.r > 2 * c.b);
  // The grass floor shows beside the wall, bottom left (green dominant).
  Rgba8 g = img.at(2, kH - 2);
  INFO("floor rgb " << int(g.r) << "," << int(g.g) << "," << int(g.b));
  CHECK(g.g > g.r);
  CHECK(g.g > g.b);
  // The targeted voxel (on the wall's face at the centre) gets a dark outline.
  auto darkNearCentre = [&](const Image& im) {
    int n = 0;
    for (int y = kH / 2 - 8; y <= kH / 2 + 8; ++y)
      for (int x = kW / 2 - 8; x <= kW / 2 + 8; ++x) n += luminance(im.at(x, y)) < 30 ? 1 : 0;
    return n;
  };
  CHECK(darkNearCentre(img) == 0);
  render::FrameInput h = frameAt(0.5);
  h.highlight = sim::VoxelCoord{0, 52, -41};
  Image outlined = renderOnce(*r, h, "brick_wall_highlight");
  CHECK(darkNearCentre(outlined) > 8);
  auto s = r->stats();
  // Four chunks hold the floor; the two south of the eye (behind it) are culled.
  CHECK(s.chunksDrawn == 2);
  CHECK(s.chunksCulled == 2);
  CHECK(s.quadsDrawn > 0);
  CHECK(s.validationErrors == 0);
}

TEST_CASE("a name tag appears above the entity's head, and not without a tag") {
  auto r = makeRenderer();
  sim::BrickStore world = emptyWorld();
  floor(world, material("grass"));
  r->setWorld(world, materials(), {0, 2.6, 0});
  r->finishMeshing();

  render::EntityDraw e;
  e.shape = render::EntityDraw::Shape::Player;
  e.feet = {0.0, 1.0, -5.0};
  e.yaw = 3.14159265;  // facing the camera
  e.colour = {40, 60, 200, 255};
  e.tag = "Alice";
  render::FrameInput f = frameAt(0.5);
  f.entities = std::span<const render::EntityDraw>(&e, 1);

  // The head's top (1.8 m above the feet) 5 m away: its screen row.
  const double tanHalf = std::tan(70.0 / 2 * 3.14159265358979 / 180);
  const int headRow = static_cast<int>(kH / 2 - (1.0 + 1.8 - 2.6) / 5.0 / tanHalf * (kH / 2));
  auto countWhite = [&](const Image& img, int& above, int& below, int& outside) {
    above = below = outside = 0;
    float half = render::textWidth("Alice", 2) / 2 + 6;
    for (int y = 0; y < kH; ++y)
      for (int x = 0; x < kW; ++x) {
        Rgba8 p = img.at(x, y);
        if (p.r < 235 || p.g < 235 || p.b < 235) continue;
        if (std::abs(x - kW / 2) > half) ++outside;
        else if (y < headRow) ++above;
        else ++below;
      }
  };
  Image tagged = renderOnce(*r, f, "name_tag");
  int above = 0, below = 0, outside = 0;
  countWhite(tagged, above, below, outside);
  INFO("head row " << headRow << " white above " << above << " below " << below << " outside " << outside);
  CHECK(above > 20);
  CHECK(below == 0);
  CHECK(outside == 0);
  // The body is drawn (blue) at the centre column, below the head.
  Rgba8 body = tagged.at(kW / 2, kH / 2 + 20);
  CHECK(body.b > body.r);

  e.tag.clear();
  Image plain = renderOnce(*r, f, "name_tag_empty");
  countWhite(plain, above, below, outside);
  CHECK(above + below + outside == 0);
  CHECK(r->stats().validationErrors == 0);
}

TEST_CASE("the offscreen target renders at two sizes (resize)") {
  auto r = makeRenderer(160, 120);
  sim::BrickStore world = emptyWorld();
  r->setWorld(world, materials(), {0, 2.6, 0});
  Image a = renderOnce(*r, frameAt(0.5), "size_a");
  CHECK(a.width == 160);
  CHECK(a.height == 120);
  r->resize(96, 64);
  CHECK_FALSE(r->readPixels().has_value());  // nothing rendered at the new size yet
  Image b = renderOnce(*r, frameAt(0.5), "size_b");
  CHECK(b.width == 96);
  CHECK(b.height == 64);
  CHECK(b.rgba.size() == 96u * 64u * 4u);
  CHECK(b.at(48, 0).b > 150);
  CHECK(r->stats().validationErrors == 0);
}

TEST_CASE("water is translucent: the floor shows through it") {
  // Looking down at the floor 1.5 m ahead; water 20 cm deep on top of it.
  render::FrameInput f = frameAt(0.5, 2.6, -0.75);
  auto shot = [&](const char* floorName, bool water, const char* png) {
    auto r = makeRenderer();
    sim::BrickStore world = emptyWorld();
    floor(world, material(floorName));
    if (water) fill(world, -128, 20, -128, 128, 24, 128, material("water"));
    r->setWorld(world, materials(), {0, 2.6, 0});
    r->finishMeshing();
    Image img = renderOnce(*r, f, png);
    CHECK(r->stats().validationErrors == 0);
    return img.at(kW / 2, kH / 2);
  };
  Rgba8 brickOnly = shot("brick", false, "water_none");
  Rgba8 brickWater = shot("brick", true, "water_over_brick");
  Rgba8 sandWater = shot("sand", true, "water_over_sand");
  INFO("brick " << int(brickOnly.r) << "," << int(brickOnly.g) << "," << int(brickOnly.b) << " water over brick "
                << int(brickWater.r) << "," << int(brickWater.g) << "," << int(brickWater.b) << " water over sand "
                << int(sandWater.r) << "," << int(sandWater.g) << "," << int(sandWater.b));
  CHECK(diff(brickOnly, brickWater) > 20);  // the water tints the floor
  CHECK(diff(brickWater, sandWater) > 20);  // and is not opaque: the floor shows
  CHECK(brickWater.r > sandWater.r - 40);   // red floor keeps the pixel warmer than it would be opaque
}

TEST_CASE("effects, highlight and HUD draw without validation errors") {
  auto r = makeRenderer();
  sim::BrickStore world = emptyWorld();
  floor(world, material("grass"));
  fill(world, 10, 20, -60, 18, 28, -52, material("wood"));
  r->setWorld(world, materials(), {0, 2.6, 0});
  r->finishMeshing();
  render::FrameInput f = frameAt(0.8, 2.6, -0.2);  // dusk
  f.environment.rain = 1.0f;
  f.environment.windX = 3.0f;
  f.animationSeconds = 12.5;
  render::FireDraw fire{{0.4, 1.0, -2.8}, 1.0f};
  f.fires = std::span<const render::FireDraw>(&fire, 1);
  render::EntityDraw animals[2];
  animals[0].shape = render::EntityDraw::Shape::Walker;
  animals[0].feet = {1.5, 1.0, -4.0};
  animals[0].colour = {200, 110, 40, 255};
  animals[1].shape = render::EntityDraw::Shape::Bird;
  animals[1].feet = {-1.0, 2.5, -4.0};
  animals[1].colour = {60, 60, 70, 255};
  f.entities = animals;
  f.highlight = sim::VoxelCoord{12, 27, -58};
  f.crosshair = true;
  render::HudLayer hud;
  hud.rects.push_back({10, 10, 100, 30, {0, 0, 0, 160}});
  hud.texts.push_back({14, 14, 2, {255, 255, 255, 255}, "fps 60\nping 12"});
  f.hud = &hud;
  Image img = renderOnce(*r, f, "effects_dusk_rain");
  // The HUD text is white inside its rect; the crosshair is white at the centre.
  int white = 0;
  for (int y = 10; y < 40; ++y)
    for (int x = 10; x < 110; ++x) {
      Rgba8 p = img.at(x, y);
      white += (p.r > 235 && p.g > 235 && p.b > 235) ? 1 : 0;
    }
  CHECK(white > 30);
  Rgba8 c = img.at(kW / 2, kH / 2);
  CHECK(c.r > 200);
  CHECK(c.g > 200);
  // Several frames (animation, buffer reuse across frames in flight).
  for (int i = 0; i < 4; ++i) {
    f.animationSeconds += 0.1;
    CHECK(r->renderFrame(f));
  }
  CHECK(r->stats().frames == 5);
  CHECK(r->stats().validationErrors == 0);
}

TEST_CASE("textWidth grows with text and scale") {
  CHECK(render::textWidth("", 2) == 0);
  float a = render::textWidth("Alice", 1);
  CHECK(a > 20);
  CHECK(render::textWidth("Alice", 2) == doctest::Approx(2 * a));
  CHECK(render::textWidth("Alice\nB", 1) == doctest::Approx(a));
}
