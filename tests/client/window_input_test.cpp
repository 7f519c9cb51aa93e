// The window loop's input mapping without a window: synthetic SDL events and held
// keys fed to an app joined to an in-process glade server (no renderer). Keys pick
// the tool, Esc opens and closes the menu (a click on Resume closes it too), the
// mouse turns the view, T / text / Enter sends a chat line that comes back from
// the server, W walks north, a held left button digs the targeted voxel, G lights
// a fire and F pours water.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <numbers>

#include "client/window_input.h"
#include "sim/systems/water.h"

using namespace loam;
using namespace loam::client;

namespace {

SDL_Event keyDown(SDL_Keycode k) {
  SDL_Event e{};
  e.type = SDL_KEYDOWN;
  e.key.keysym.sym = k;
  return e;
}

SDL_Event text(const char* t) {
  SDL_Event e{};
  e.type = SDL_TEXTINPUT;
  std::strncpy(e.text.text, t, sizeof e.text.text - 1);
  return e;
}

bool chatHas(ClientApp& app, const std::string& line) {
  for (const ChatLog::Line& l : app.chat().lines())
    if (l.text == line) return true;
  return false;
}

}  // namespace

TEST_CASE("keyboard, mouse and text events drive the client") {
  ClientOptions o;
  o.local = true;
  o.scene = std::string(LOAM_SOURCE_DIR) + "/scenes/glade.toml";
  o.name = "tester";
  auto created = ClientApp::create(o);
  REQUIRE_MESSAGE(created, (created ? "" : created.error().message));
  ClientApp& app = **created;
  REQUIRE_MESSAGE(app.waitForPlaying(240), app.connection().error());
  WindowControls c;

  // Tool keys and the wheel.
  handleEvent(app, c, keyDown(SDLK_3));
  CHECK(app.tool().materialName() == "sand");
  handleEvent(app, c, keyDown(SDLK_RIGHTBRACKET));
  CHECK(app.tool().sizeCm() == 20);
  handleEvent(app, c, keyDown(SDLK_q));
  CHECK(app.tool().sizeCm() == 10);
  SDL_Event wheel{};
  wheel.type = SDL_MOUSEWHEEL;
  wheel.wheel.y = -1;
  handleEvent(app, c, wheel);
  CHECK(app.tool().materialName() == "gravel");

  // Esc menu: keys and mouse look are ignored while it is open; Resume closes it.
  handleEvent(app, c, keyDown(SDLK_ESCAPE));
  CHECK(app.ui().menuOpen);
  handleEvent(app, c, keyDown(SDLK_1));
  CHECK(app.tool().materialName() == "gravel");
  const double yaw0 = app.look().yaw;
  SDL_Event motion{};
  motion.type = SDL_MOUSEMOTION;
  motion.motion.xrel = 100;
  handleEvent(app, c, motion);
  CHECK(app.look().yaw == yaw0);
  const HudModel m = app.hudModel();
  // The view button picks the next view distance and leaves the menu open.
  const double view0 = app.options().viewDistanceMetres;
  const render::HudRect view = menuButtons(m.width, m.height)[kMenuView];
  SDL_Event click{};
  click.type = SDL_MOUSEBUTTONDOWN;
  click.button.button = SDL_BUTTON_LEFT;
  click.button.x = static_cast<Sint32>(view.x + view.w / 2);
  click.button.y = static_cast<Sint32>(view.y + view.h / 2);
  handleEvent(app, c, click);
  CHECK(app.ui().menuOpen);
  CHECK(app.options().viewDistanceMetres == nextViewDistance(view0));
  CHECK(app.options().viewDistanceMetres != view0);
  CHECK(app.hudModel().viewDistanceMetres == app.options().viewDistanceMetres);
  const render::HudRect resume = menuButtons(m.width, m.height)[kMenuResume];
  click.button.x = static_cast<Sint32>(resume.x + resume.w / 2);
  click.button.y = static_cast<Sint32>(resume.y + resume.h / 2);
  handleEvent(app, c, click);
  CHECK_FALSE(app.ui().menuOpen);
  CHECK_FALSE(c.quit);
  handleEvent(app, c, motion);
  CHECK(app.look().yaw == doctest::Approx(std::fmod(yaw0 + 0.22, 2 * std::numbers::pi)));

  // Chat: T opens the line (its own 't' is not typed), Enter sends it.
  handleEvent(app, c, keyDown(SDLK_t));
  CHECK(app.ui().chatOpen);
  handleEvent(app, c, text("t"));
  handleEvent(app, c, text("hello there"));
  handleEvent(app, c, keyDown(SDLK_e));  // keys type text now, they do not change the tool
  CHECK(app.tool().sizeCm() == 10);
  CHECK(app.ui().chatDraft == "hello there");
  handleEvent(app, c, keyDown(SDLK_RETURN));
  CHECK_FALSE(app.ui().chatOpen);
  for (int i = 0; i < 100 && !chatHas(app, "tester: hello there"); ++i) app.runFor(0.05);
  CHECK(chatHas(app, "tester: hello there"));

  // W walks north (-z), whatever the mouse did to yaw before.
  app.look().yaw = 0;
  app.look().pitch = 0;
  Uint8 keys[SDL_NUM_SCANCODES] = {};
  keys[SDL_SCANCODE_W] = 1;
  const double z0 = app.connection().predictor().state().position.z / double(sim::kUnitsPerMetre);
  applyHeld(app, c, keys, 0, nullptr, app.nowMs(), 0.016);
  CHECK(app.move().forward);
  app.runFor(1.0);
  keys[SDL_SCANCODE_W] = 0;
  applyHeld(app, c, keys, 0, nullptr, app.nowMs(), 0.016);
  CHECK_FALSE(app.move().forward);
  const double z1 = app.connection().predictor().state().position.z / double(sim::kUnitsPerMetre);
  CHECK(z1 < z0 - 1.0);

  // A held left button digs where the player looks (down, in front of the feet).
  app.look().pitch = -60 * std::numbers::pi / 180;
  app.runFor(0.1);
  const std::optional<RayHit> hit = app.target();
  REQUIRE(hit);
  applyHeld(app, c, keys, SDL_BUTTON(SDL_BUTTON_LEFT), nullptr, app.nowMs(), 0.016);
  applyHeld(app, c, keys, 0, nullptr, app.nowMs(), 0.016);
  const sim::SimState& mirror = app.connection().mirror();
  for (int i = 0; i < 100 && mirror.world.get(hit->voxel) != sim::kAir; ++i) app.runFor(0.05);
  CHECK(mirror.world.get(hit->voxel) == sim::kAir);

  // G sets the grass east of the player alight.
  app.look().yaw = std::numbers::pi / 2;
  app.runFor(0.1);
  REQUIRE(app.target());
  handleEvent(app, c, keyDown(SDLK_g));
  for (int i = 0; i < 100 && mirror.fire.cells.empty(); ++i) app.runFor(0.05);
  CHECK_FALSE(mirror.fire.cells.empty());

  // F pours water in front of the ground to the west (the fire spreads east).
  app.look().yaw = 3 * std::numbers::pi / 2;
  app.runFor(0.1);
  const std::optional<RayHit> ground = app.target();
  REQUIRE(ground);
  handleEvent(app, c, keyDown(SDLK_f));
  auto waterNear = [&] {
    std::uint64_t sum = 0;
    const sim::VoxelCoord p = ground->before;
    for (int dy = -12; dy <= 4; ++dy)
      for (int dz = -12; dz <= 12; ++dz)
        for (int dx = -12; dx <= 12; ++dx) sum += sim::waterAt(mirror.water, mirror.world, {p.x + dx, p.y + dy, p.z + dz});
    return sum;
  };
  std::uint64_t water = 0;
  for (int i = 0; i < 100 && water == 0; ++i) {
    app.runFor(0.05);
    water = waterNear();
  }
  CHECK(water > 0);

  SDL_Event quit{};
  quit.type = SDL_QUIT;
  handleEvent(app, c, quit);
  CHECK(c.quit);
}
