#include "client/window_input.h"

#include <SDL_vulkan.h>

#include <algorithm>
#include <cmath>

namespace loam::client {

namespace {

constexpr double kMouseRadiansPerPixel = 0.0022;
constexpr double kStickRadiansPerSecond = 3.0;
constexpr float kStickDeadZone = 0.18f;

float stick(SDL_GameController* pad, SDL_GameControllerAxis axis) {
  const float v = static_cast<float>(SDL_GameControllerGetAxis(pad, axis)) / 32767.0f;
  if (std::fabs(v) < kStickDeadZone) return 0;
  return std::clamp((v - std::copysign(kStickDeadZone, v)) / (1 - kStickDeadZone), -1.0f, 1.0f);
}

void setMouseCaptured(bool captured) { SDL_SetRelativeMouseMode(captured ? SDL_TRUE : SDL_FALSE); }

void closeChat(ClientApp& app) {
  ClientApp::UiState& ui = app.ui();
  ui.chatOpen = false;
  ui.chatDraft.clear();
  SDL_StopTextInput();
  setMouseCaptured(!ui.menuOpen);
}

// Drawable pixels per window coordinate (high-DPI screens differ).
std::pair<float, float> pixelScale(const WindowControls& c, const HudModel& m) {
  if (c.window == nullptr) return {1.0f, 1.0f};
  int ww = 0, wh = 0;
  SDL_GetWindowSize(c.window, &ww, &wh);
  return {ww > 0 ? static_cast<float>(m.width) / static_cast<float>(ww) : 1.0f,
          wh > 0 ? static_cast<float>(m.height) / static_cast<float>(wh) : 1.0f};
}

void onKey(ClientApp& app, WindowControls& c, const SDL_KeyboardEvent& key) {
  ClientApp::UiState& ui = app.ui();
  const SDL_Keycode k = key.keysym.sym;
  if (ui.chatOpen) {
    if (k == SDLK_ESCAPE) {
      closeChat(app);
    } else if (k == SDLK_RETURN || k == SDLK_KP_ENTER) {
      app.sendChat(ui.chatDraft);
      closeChat(app);
    } else if (k == SDLK_BACKSPACE && !ui.chatDraft.empty()) {
      ui.chatDraft.pop_back();
    }
    return;
  }
  if (k == SDLK_ESCAPE) {
    const net::ClientPhase ph = app.connection().phase();
    if (ph == net::ClientPhase::Failed || ph == net::ClientPhase::Disconnected) c.quit = true;
    else setMenuOpen(app, !ui.menuOpen);
    return;
  }
  if (ui.menuOpen || key.repeat) return;
  if (k == SDLK_F3) ui.debug = !ui.debug;
  if (k == SDLK_F12) c.pendingShot = "loam-" + std::to_string(++c.screenshots) + ".png";
  if (app.connection().phase() != net::ClientPhase::Playing) return;
  if (k >= SDLK_1 && k <= SDLK_9) app.tool().selectMaterial(static_cast<int>(k - SDLK_1));
  else if (k == SDLK_LEFTBRACKET || k == SDLK_q) app.tool().cycleSize(-1);
  else if (k == SDLK_RIGHTBRACKET || k == SDLK_e) app.tool().cycleSize(1);
  else if (k == SDLK_f) app.act(ToolAction::Pour);
  else if (k == SDLK_g) app.act(ToolAction::Ignite);
  else if (k == SDLK_t) {
    ui.chatOpen = true;
    ui.chatDraft.clear();
    c.swallowText = true;
    setMouseCaptured(false);
    SDL_StartTextInput();
  }
}

}  // namespace

void setMenuOpen(ClientApp& app, bool open) {
  ClientApp::UiState& ui = app.ui();
  ui.menuOpen = open;
  ui.menuHover = -1;
  setMouseCaptured(!open && !ui.chatOpen);
}

void handleEvent(ClientApp& app, WindowControls& c, const SDL_Event& e) {
  ClientApp::UiState& ui = app.ui();
  const bool playing = app.connection().phase() == net::ClientPhase::Playing;
  switch (e.type) {
    case SDL_QUIT: c.quit = true; break;
    case SDL_WINDOWEVENT:
      if (e.window.event == SDL_WINDOWEVENT_MINIMIZED) {
        c.minimised = true;
        if (app.renderer()) app.renderer()->resize(0, 0);
      } else if (e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED || e.window.event == SDL_WINDOWEVENT_RESTORED ||
                 e.window.event == SDL_WINDOWEVENT_MAXIMIZED) {
        int w = e.window.data1, h = e.window.data2;
        if (c.window) SDL_Vulkan_GetDrawableSize(c.window, &w, &h);
        c.minimised = w == 0 || h == 0;
        if (app.renderer()) app.renderer()->resize(w, h);
        app.setViewport(w, h);
      } else if (e.window.event == SDL_WINDOWEVENT_FOCUS_LOST && !ui.menuOpen && !ui.chatOpen) {
        setMenuOpen(app, true);  // do not keep the mouse of someone who switched away
      }
      break;
    case SDL_KEYDOWN: onKey(app, c, e.key); break;
    case SDL_TEXTINPUT:
      if (ui.chatOpen) {
        std::string t = e.text.text;
        if (c.swallowText && (t == "t" || t == "T")) t.clear();
        c.swallowText = false;
        for (char ch : t)
          if (static_cast<unsigned char>(ch) >= 0x20 && ui.chatDraft.size() < sim::kMaxChatBytes) ui.chatDraft += ch;
      }
      break;
    case SDL_MOUSEMOTION:
      if (ui.menuOpen) {
        const HudModel m = app.hudModel();
        const auto [sx, sy] = pixelScale(c, m);
        ui.menuHover = menuButtonAt(m.width, m.height, static_cast<float>(e.motion.x) * sx,
                                    static_cast<float>(e.motion.y) * sy);
      } else if (!ui.chatOpen) {
        app.look().turn(e.motion.xrel * kMouseRadiansPerPixel, e.motion.yrel * kMouseRadiansPerPixel);
      }
      break;
    case SDL_MOUSEBUTTONDOWN:
      if (ui.menuOpen && e.button.button == SDL_BUTTON_LEFT) {
        const HudModel m = app.hudModel();
        const auto [sx, sy] = pixelScale(c, m);
        const int b =
            menuButtonAt(m.width, m.height, static_cast<float>(e.button.x) * sx, static_cast<float>(e.button.y) * sy);
        if (b == kMenuResume) setMenuOpen(app, false);
        if (b == kMenuView) app.setViewDistance(nextViewDistance(app.options().viewDistanceMetres));
        if (b == kMenuQuit) c.quit = true;
      }
      break;
    case SDL_MOUSEWHEEL:
      if (!ui.menuOpen && !ui.chatOpen && e.wheel.y != 0) app.tool().cycleMaterial(e.wheel.y > 0 ? -1 : 1);
      break;
    case SDL_CONTROLLERBUTTONDOWN:
      if (e.cbutton.button == SDL_CONTROLLER_BUTTON_START) setMenuOpen(app, !ui.menuOpen);
      else if (ui.menuOpen && e.cbutton.button == SDL_CONTROLLER_BUTTON_A) setMenuOpen(app, false);
      else if (ui.menuOpen && e.cbutton.button == SDL_CONTROLLER_BUTTON_B) c.quit = true;
      else if (!ui.menuOpen && playing) {
        if (e.cbutton.button == SDL_CONTROLLER_BUTTON_LEFTSHOULDER) app.tool().cycleMaterial(-1);
        if (e.cbutton.button == SDL_CONTROLLER_BUTTON_RIGHTSHOULDER) app.tool().cycleMaterial(1);
        if (e.cbutton.button == SDL_CONTROLLER_BUTTON_DPAD_UP) app.tool().cycleSize(1);
        if (e.cbutton.button == SDL_CONTROLLER_BUTTON_DPAD_DOWN) app.tool().cycleSize(-1);
        if (e.cbutton.button == SDL_CONTROLLER_BUTTON_X) app.act(ToolAction::Pour);
        if (e.cbutton.button == SDL_CONTROLLER_BUTTON_Y) app.act(ToolAction::Ignite);
      }
      break;
    default: break;
  }
}

void applyHeld(ClientApp& app, WindowControls& c, const Uint8* keys, Uint32 mouseButtons, SDL_GameController* pad,
               double nowMs, double dtSeconds) {
  const ClientApp::UiState& ui = app.ui();
  const bool controlling =
      app.connection().phase() == net::ClientPhase::Playing && !ui.menuOpen && !ui.chatOpen;
  MoveState& mv = app.move();
  mv = MoveState{};
  bool digHeld = false, placeHeld = false;
  if (controlling) {
    if (keys != nullptr) {
      mv.forward = keys[SDL_SCANCODE_W];
      mv.back = keys[SDL_SCANCODE_S];
      mv.left = keys[SDL_SCANCODE_A];
      mv.right = keys[SDL_SCANCODE_D];
      mv.jump = keys[SDL_SCANCODE_SPACE];
      mv.run = keys[SDL_SCANCODE_LSHIFT] || keys[SDL_SCANCODE_RSHIFT];
      mv.crouch = keys[SDL_SCANCODE_LCTRL] || keys[SDL_SCANCODE_RCTRL];
    }
    digHeld = mouseButtons & SDL_BUTTON(SDL_BUTTON_LEFT);
    placeHeld = mouseButtons & SDL_BUTTON(SDL_BUTTON_RIGHT);
    if (pad != nullptr) {
      mv.stickX = stick(pad, SDL_CONTROLLER_AXIS_LEFTX);
      mv.stickY = -stick(pad, SDL_CONTROLLER_AXIS_LEFTY);
      mv.jump = mv.jump || SDL_GameControllerGetButton(pad, SDL_CONTROLLER_BUTTON_A);
      mv.run = mv.run || SDL_GameControllerGetButton(pad, SDL_CONTROLLER_BUTTON_LEFTSTICK);
      mv.crouch = mv.crouch || SDL_GameControllerGetButton(pad, SDL_CONTROLLER_BUTTON_B);
      digHeld = digHeld || SDL_GameControllerGetAxis(pad, SDL_CONTROLLER_AXIS_TRIGGERRIGHT) > 16000;
      placeHeld = placeHeld || SDL_GameControllerGetAxis(pad, SDL_CONTROLLER_AXIS_TRIGGERLEFT) > 16000;
      const double dt = std::clamp(dtSeconds, 0.0, 0.1);
      app.look().turn(stick(pad, SDL_CONTROLLER_AXIS_RIGHTX) * kStickRadiansPerSecond * dt,
                      stick(pad, SDL_CONTROLLER_AXIS_RIGHTY) * kStickRadiansPerSecond * dt);
    }
  }
  if (c.digRepeat.update(digHeld, nowMs)) app.act(ToolAction::Dig);
  if (c.placeRepeat.update(placeHeld, nowMs)) app.act(ToolAction::Place);
}

}  // namespace loam::client
