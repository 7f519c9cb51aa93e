// The client end to end without a display: an in-process server (LocalServer), the
// app joining it, and offscreen frames from lavapipe checked pixel by pixel, with
// the validation layer on and no validation error allowed:
// - glade at noon: the top of the picture is sky (blue, bright); at midnight, dark;
// - a brick block placed in front of the player shows red at the screen centre;
// - a second player (Alice) gets a white name tag above her head, absent when the
//   camera looks away;
// - court from a fixed camera: ground and walls in the lower half;
// - a renderer slowed to 5 frames a second: with the network thread, ping stays at
//   a few ms, inputs go out at 60 Hz and an edit shows in the frame it is made.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <set>
#include <thread>

#include "client/client_app.h"
#include "sim/systems/motion.h"

using namespace loam;
using namespace loam::client;

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kW = 320, kH = 180;

/// Progress lines on stderr (seconds since the first call), for slow CI machines.
void step(const char* what) {
  static const Clock::time_point t0 = Clock::now();
  std::fprintf(stderr, "[client_offscreen_test %6.1f s] %s\n",
               std::chrono::duration<double>(Clock::now() - t0).count(), what);
}

ClientOptions localOptions(const char* scene, double timeOfDay) {
  ClientOptions o;
  o.local = true;
  o.scene = std::string(LOAM_SOURCE_DIR) + "/scenes/" + scene;
  o.offscreen = true;
  o.width = kW;
  o.height = kH;
  o.validation = true;
  o.timeOfDay = timeOfDay;
  o.name = "tester";
  o.viewDistanceMetres = 64;  // enough for the shots, and quicker to mesh on lavapipe
  return o;
}

std::unique_ptr<ClientApp> startApp(const ClientOptions& o, double slowFrameMs = 0) {
  step(o.scene.c_str());
  auto app = ClientApp::create(o);
  REQUIRE_MESSAGE(app, (app ? "" : app.error().message));
  render::RendererConfig rc;
  rc.offscreen = true;
  rc.width = o.width;
  rc.height = o.height;
  rc.validation = o.validation;
  rc.meshThreads = 2;
  rc.viewDistanceMetres = o.viewDistanceMetres;
  rc.slowFrameMs = slowFrameMs;
  auto r = (*app)->createRenderer(rc);
  REQUIRE_MESSAGE(r, (r ? "" : r.error().message));
  const bool joined = (*app)->waitForPlaying(240);
  REQUIRE_MESSAGE(joined, (*app)->connection().error());
  step("joined");
  return std::move(*app);
}

struct Stats {
  double r = 0, g = 0, b = 0;
  double brightness() const { return (r + g + b) / 3; }
};

/// Mean colour over [x0, x1) x [y0, y1).
Stats meanColour(const render::Image& img, int x0, int y0, int x1, int y1) {
  Stats s;
  int n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const render::Rgba8 p = img.at(x, y);
      s.r += p.r;
      s.g += p.g;
      s.b += p.b;
      ++n;
    }
  s.r /= n;
  s.g /= n;
  s.b /= n;
  return s;
}

bool whitish(render::Rgba8 p) {
  const int mn = std::min({p.r, p.g, p.b}), mx = std::max({p.r, p.g, p.b});
  return mn >= 200 && mx - mn <= 40;
}

int countWhitish(const render::Image& img, int x0, int y0, int x1, int y1) {
  int n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) n += whitish(img.at(x, y)) ? 1 : 0;
  return n;
}

void save(const render::Image& img, const char* name) {
  step(name);
  // For people looking at failures: build/.../tests/client/<name>.png
  (void)render::writePng(name, img);
}

render::Image shot(ClientApp& app, int frames = 2) {
  auto img = app.renderShot(frames);
  REQUIRE_MESSAGE(img, (img ? "" : img.error().message));
  REQUIRE(img->width == kW);
  REQUIRE(img->height == kH);
  return std::move(*img);
}

/// Yaw and pitch (degrees) looking from `from` to `to` (metres).
CameraSpec lookAt(std::array<double, 3> from, std::array<double, 3> to) {
  const double dx = to[0] - from[0], dy = to[1] - from[1], dz = to[2] - from[2];
  CameraSpec c{from[0], from[1], from[2], 0, 0};
  c.yawDegrees = std::atan2(dx, -dz) * 180 / std::numbers::pi;
  c.pitchDegrees = std::atan2(dy, std::hypot(dx, dz)) * 180 / std::numbers::pi;
  return c;
}

}  // namespace

TEST_CASE("glade: sky at noon and midnight, a red brick block, a second player's name tag") {
  std::unique_ptr<ClientApp> app = startApp(localOptions("glade.toml", 0.5));
  ClientApp& a = *app;
  LocalServer& server = *a.localServer();

  // Above the spawn, looking south over the meadow, tilted up: the top fifth is sky.
  const CameraSpec skyCam{0, 8, 6, 180, 20};
  a.setCamera(skyCam);
  Stats top;
  {  // noon: blue, bright sky
    render::Image noon = shot(a);
    save(noon, "client_glade_noon.png");
    top = meanColour(noon, 0, 0, kW, kH / 5);
    INFO("noon top rgb " << top.r << " " << top.g << " " << top.b);
    CHECK(top.b > top.r);
    CHECK(top.b > top.g - 5);
    CHECK(top.brightness() > 110);
  }

  {  // a second player's name tag appears above her
    net::ClientConfig cfg;
    cfg.host = "127.0.0.1";
    cfg.port = server.port();
    cfg.name = "Alice";
    cfg.sceneDir = server.sceneDir();
    cfg.worldFactory = server.worldFactory();
    auto alice = net::ClientConnection::connect(cfg);
    REQUIRE(alice);
    net::ClientConnection& al = **alice;
    // Both clients play (idle inputs at 60 Hz) until the app sees Alice's pose.
    const Clock::time_point start = Clock::now();
    const auto end = start + std::chrono::seconds(60);
    std::optional<net::Pose> pose;
    double next = 0;
    while (Clock::now() < end) {
      const double now = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      al.service(now, 0);
      a.service(0);
      if (now >= next) {
        next = now + 1000.0 / 60;
        if (al.phase() == net::ClientPhase::Playing) al.sendInput(sim::PlayerInput{});
        a.inputTick();
      }
      REQUIRE(al.phase() != net::ClientPhase::Failed);
      if (al.phase() == net::ClientPhase::Playing) {
        pose = a.connection().others().sample(al.playerId().value, a.nowMs());
        if (pose && a.connection().playerName(al.playerId().value) == "Alice") break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    REQUIRE(pose);
    a.runFor(0.3);  // let her pose settle in the interpolation buffer
    pose = a.connection().others().sample(al.playerId().value, a.nowMs());
    REQUIRE(pose);
    const double u = sim::kUnitsPerMetre;
    const std::array<double, 3> feet{pose->x / u, pose->y / u, pose->z / u};
    // 4 m south of her at head height, looking at a point 1 m above her head.
    const std::array<double, 3> eye{feet[0], feet[1] + 1.7, feet[2] + 4};
    a.setCamera(lookAt(eye, {feet[0], feet[1] + 1.7, feet[2]}));
    render::Image seen = shot(a);
    save(seen, "client_glade_alice.png");
    const int above = countWhitish(seen, kW / 4, 0, 3 * kW / 4, kH / 2);
    // The same place, looking away from her.
    CameraSpec away = lookAt(eye, {feet[0], feet[1] + 1.7, feet[2]});
    away.yawDegrees += 180;
    a.setCamera(away);
    render::Image unseen = shot(a);
    save(unseen, "client_glade_alice_away.png");
    const int aboveAway = countWhitish(unseen, kW / 4, 0, 3 * kW / 4, kH / 2);
    INFO("whitish pixels above her: " << above << ", looking away: " << aboveAway);
    CHECK(above >= 8);
    CHECK(aboveAway * 4 < above);
    al.disconnect();
  }


  {  // a brick block placed in front of the player is red at the screen centre
    const sim::MaterialId brick = *a.connection().mirror().materials->find("brick");
    ToolState& tool = a.tool();
    int slot = -1;
    for (std::size_t i = 0; i < tool.palette.size(); ++i)
      if (tool.palette[i] == brick) slot = static_cast<int>(i);
    REQUIRE(slot >= 0);
    tool.selectMaterial(slot);
    tool.size = 3;  // 40 cm
    REQUIRE(tool.toolSize() == sim::ToolSize::Cm40);
    // The player's own eye, looking north and down at the ground a few metres ahead.
    a.setCamera(std::nullopt);
    a.look().yaw = 0;
    a.look().pitch = -35 * std::numbers::pi / 180;
    a.runFor(0.2);
    const std::optional<RayHit> hit = a.target();
    REQUIRE(hit);
    CHECK(a.act(ToolAction::Place));
    const sim::VoxelCoord inside = hit->before;  // the cube lies on the hit face's outer side
    const auto end = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < end && a.connection().mirror().world.get(inside) != brick) a.runFor(0.05);
    REQUIRE(a.connection().mirror().world.get(inside) == brick);

    // Look at the cube's middle from 1.5 m south and 0.6 m above its top.
    const sim::VoxelCoord n = faceNormal(hit->face);
    const double v = 1.0 / sim::kVoxelsPerMetre;
    std::array<double, 3> centre{(hit->voxel.x + 0.5 + n.x * 4) * v, (hit->voxel.y + 0.5 + n.y * 4) * v,
                                 (hit->voxel.z + 0.5 + n.z * 4) * v};
    a.setCamera(lookAt({centre[0], centre[1] + 0.8, centre[2] + 1.5}, centre));
    render::Image img = shot(a);
    save(img, "client_glade_brick.png");
    const Stats c = meanColour(img, kW / 2 - 2, kH / 2 - 2, kW / 2 + 2, kH / 2 + 2);
    INFO("centre rgb " << c.r << " " << c.g << " " << c.b);
    CHECK(c.r > c.g + 40);
    CHECK(c.r > c.b + 40);
    CHECK(c.r > 60);
  }


  {  // midnight: dark
    a.setCamera(skyCam);
    server.setTimeOfDay(0.0);
    // Wait for the weather record with the new time to reach the mirror.
    const auto end = Clock::now() + std::chrono::seconds(10);
    const sim::WeatherState& w = a.connection().mirror().weather;
    while (Clock::now() < end) {
      a.runFor(0.1);
      const std::uint32_t t = sim::timeOfDayAt(w, a.connection().serverTick());
      if (t < w.dayLength / 48) break;  // within half an hour after midnight
    }
    CHECK(sim::timeOfDayAt(w, a.connection().serverTick()) < w.dayLength / 48);
    render::Image night = shot(a);
    save(night, "client_glade_midnight.png");
    const Stats dark = meanColour(night, 0, 0, kW, kH / 5);
    INFO("midnight top rgb " << dark.r << " " << dark.g << " " << dark.b);
    CHECK(dark.brightness() < 60);
    CHECK(dark.brightness() < top.brightness() / 2);
  }

  {  // a fire glows in the night
    // The server (no reach or rate checks) builds a 40 cm planks cube on the ground
    // 3 m south of the player and sets it alight.
    const sim::SimState& m = a.connection().mirror();
    const sim::MaterialId planks = *m.materials->find("planks");
    const double u = sim::kUnitsPerMetre;
    const sim::Vec3i feet = a.connection().predictor().state().position;
    const std::array<double, 3> above{feet.x / u, feet.y / u + 6, feet.z / u + 3};
    const std::optional<RayHit> ground = castVoxelRay(m.world, m.lut, above, {0, -1, 0}, 12);
    REQUIRE(ground);
    server.post(sim::PlaceCommand{ground->voxel, sim::Face::PosY, sim::ToolSize::Cm40, planks});
    const sim::VoxelCoord block = ground->before;
    auto end = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < end && m.world.get(block) != planks) a.runFor(0.05);
    REQUIRE(m.world.get(block) == planks);
    const double v = 1.0 / sim::kVoxelsPerMetre;
    const std::array<double, 3> centre{(block.x + 0.5) * v, (block.y + 4) * v, (block.z + 0.5) * v};
    a.setCamera(lookAt({centre[0], centre[1] + 1.0, centre[2] + 2.5}, centre));
    auto glowing = [](const render::Image& img) {
      int n = 0;
      for (int y = 0; y < kH; ++y)
        for (int x = 0; x < kW; ++x) {
          const render::Rgba8 p = img.at(x, y);
          n += (p.r > 150 && p.r > p.b + 70 && p.g > 40) ? 1 : 0;
        }
      return n;
    };
    const int before = glowing(shot(a));
    server.post(sim::IgniteCommand{block});
    end = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < end && m.fire.cells.empty()) a.runFor(0.05);
    REQUIRE_FALSE(m.fire.cells.empty());
    // The fire spreads in real time, so wait (up to 5 s) for it to glow rather than a fixed half second.
    render::Image burning;
    int after = 0;
    end = Clock::now() + std::chrono::seconds(5);
    do {
      a.runFor(0.25);
      burning = shot(a);
      after = glowing(burning);
    } while (Clock::now() < end && after < 30);
    save(burning, "client_glade_fire.png");
    INFO("glowing pixels before " << before << ", burning " << after);
    CHECK(after >= 30);
    CHECK(after > 4 * before);
  }

  CHECK(a.renderer()->stats().validationErrors == 0);
}

TEST_CASE("court from a fixed camera: the lower half shows ground and walls, not sky") {
  std::unique_ptr<ClientApp> app = startApp(localOptions("court.toml", 0.5));
  // From above the outside spawn, looking north down at the court over its wall.
  app->setCamera(CameraSpec{0, 12, 34, 0, -20});
  render::Image img = shot(*app);
  save(img, "client_court.png");
  int nonSky = 0, total = 0;
  for (int y = kH / 2; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      const render::Rgba8 p = img.at(x, y);
      nonSky += (p.b <= std::max(p.r, p.g) + 5) ? 1 : 0;
      ++total;
    }
  INFO("non-sky share of the lower half: " << static_cast<double>(nonSky) / total);
  CHECK(nonSky > total / 2);
  // Not one flat colour: several materials and their shading (colours quantised to 32 levels).
  std::set<int> colours;
  for (int y = kH / 2; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      const render::Rgba8 p = img.at(x, y);
      colours.insert((p.r >> 3) << 10 | (p.g >> 3) << 5 | (p.b >> 3));
    }
  INFO("distinct colours: " << colours.size());
  CHECK(colours.size() >= 12);
  CHECK(app->renderer()->stats().validationErrors == 0);
}

TEST_CASE("at 5 frames a second the network thread keeps ping low, inputs at 60 Hz and edits in the frame") {
  ClientOptions o = localOptions("flat.toml", 0.5);
  auto app = startApp(o, 200);  // every frame 200 ms slower than it is
  ClientApp& a = *app;
  a.startInputTicks();
  a.startNetworkThread();
  a.holdNetwork();
  const std::uint64_t inputsBefore = a.connection().stats().sent["Inputs"].messages;
  a.releaseNetwork();
  const Clock::time_point t0 = Clock::now();
  int frames = 0;
  while (Clock::now() - t0 < std::chrono::seconds(3)) {
    a.holdNetwork();
    a.service(0);
    a.renderFrame();  // lets go of the app once the world is read
    ++frames;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  a.holdNetwork();
  net::ClientStats s = a.connection().stats();
  const double inputsPerSecond = static_cast<double>(s.sent["Inputs"].messages - inputsBefore) / seconds;
  MESSAGE(frames << " frames in " << seconds << " s; ping " << s.rttMs << " ms; " << inputsPerSecond
                 << " Inputs messages a second");
  CHECK(frames <= 20);  // the renderer really is slow
  CHECK(s.rttMs < 20);  // the frames' 200 ms do not reach the ping
  CHECK(inputsPerSecond > 50);
  // An edit shows in the frame it is made, before the network thread has run again.
  a.look().pitch = -1.4;  // at the ground in front of the feet
  const std::optional<RayHit> hit = a.target();
  REQUIRE(hit);
  REQUIRE(a.act(ToolAction::Dig));
  CHECK(a.connection().predictedEdits().overlay().get(a.connection().mirror().world, hit->voxel) == sim::kAir);
  CHECK(a.connection().mirror().world.get(hit->voxel) != sim::kAir);  // the server has not answered yet
  a.releaseNetwork();
  a.stopNetworkThread();
}
