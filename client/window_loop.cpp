// The windowed game loop: SDL2 window (Vulkan, resizable), keyboard, mouse in
// relative mode and gamepads (SDL_GameController) mapped onto ClientApp's
// controls; one frame per loop iteration, while the app's network thread receives,
// runs the 60 Hz input ticks and sends on its own cadence.
#include <SDL.h>
#include <SDL_vulkan.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <thread>

#include "client/client_app.h"
#include "client/window_input.h"

namespace loam::client {

namespace {

struct Window {
  SDL_Window* window = nullptr;
  std::map<SDL_JoystickID, SDL_GameController*> pads;
  ~Window() {
    for (auto& [id, pad] : pads) SDL_GameControllerClose(pad);
    if (window) SDL_DestroyWindow(window);
    SDL_Quit();
  }
};

}  // namespace

int runWindowed(const ClientOptions& options) {
  if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_GAMECONTROLLER | SDL_INIT_EVENTS) != 0) {
    std::fprintf(stderr, "loam-client: cannot open a window (%s); use --offscreen without a display\n",
                 SDL_GetError());
    return kExitFailure;
  }
  Window win;
  win.window = SDL_CreateWindow("Loam", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, options.width,
                                options.height, SDL_WINDOW_VULKAN | SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
  if (!win.window) {
    std::fprintf(stderr, "loam-client: cannot create a Vulkan window (%s); without a display use --offscreen\n",
                 SDL_GetError());
    return kExitFailure;
  }
  auto drawable = [&] {
    int w = 0, h = 0;
    SDL_Vulkan_GetDrawableSize(win.window, &w, &h);
    return std::pair{w, h};
  };

  auto created = ClientApp::create(options);
  if (!created) {
    std::fprintf(stderr, "loam-client: %s\n", created.error().message.c_str());
    return kExitFailure;
  }
  ClientApp& app = **created;
  {
    auto [w, h] = drawable();
    render::RendererConfig rc;
    rc.window = win.window;
    rc.width = w;
    rc.height = h;
    rc.validation = options.validation;
    rc.vsync = options.vsync;
    rc.viewDistanceMetres = options.detailMetres();
  rc.farViewMetres = options.viewDistanceMetres;
    rc.slowFrameMs = options.slowFrameMs;
    rc.meshThreads = std::max(1u, std::thread::hardware_concurrency() / 2);
    if (auto r = app.createRenderer(rc); !r) {
      std::fprintf(stderr, "loam-client: cannot create the renderer: %s\n", r.error().message.c_str());
      return kExitFailure;
    }
    app.setViewport(w, h);
  }
  // A fixed camera makes no sense in a window; the player's eye is the camera.
  app.setCamera(std::nullopt);

  WindowControls controls;
  controls.window = win.window;
  SDL_StopTextInput();  // SDL starts with text input on; only the chat line wants it
  setMenuOpen(app, false);  // captures the mouse
  app.startInputTicks();
  double loopMs = app.nowMs();
  net::ClientPhase lastPhase = app.connection().phase();
  const double endMs = options.durationSeconds > 0 ? app.nowMs() + options.durationSeconds * 1000 : 0;
  // Receiving, the 60 Hz input ticks and sending run on the app's network thread;
  // this loop holds the app from its top until the frame has read the world.
  app.startNetworkThread();

  while (!controls.quit) {
    if (endMs > 0 && app.nowMs() >= endMs) break;
    app.holdNetwork();
    SDL_Event e;
    while (SDL_PollEvent(&e)) {
      if (e.type == SDL_CONTROLLERDEVICEADDED) {
        if (SDL_GameController* pad = SDL_GameControllerOpen(e.cdevice.which))
          win.pads[SDL_JoystickInstanceID(SDL_GameControllerGetJoystick(pad))] = pad;
      } else if (e.type == SDL_CONTROLLERDEVICEREMOVED) {
        if (auto it = win.pads.find(e.cdevice.which); it != win.pads.end()) {
          SDL_GameControllerClose(it->second);
          win.pads.erase(it);
        }
      } else {
        handleEvent(app, controls, e);
      }
    }
    if (controls.quit) break;

    const double now = app.nowMs();
    const double dt = (now - loopMs) / 1000.0;
    loopMs = now;
    applyHeld(app, controls, SDL_GetKeyboardState(nullptr), SDL_GetMouseState(nullptr, nullptr),
              win.pads.empty() ? nullptr : win.pads.begin()->second, now, dt);

    app.service(0);
    const net::ClientPhase ph = app.connection().phase();
    if (ph != lastPhase) {
      std::fprintf(stderr, "loam-client: %s%s%s\n", net::phaseName(ph), app.connection().error().empty() ? "" : ": ",
                   app.connection().error().c_str());
      lastPhase = ph;
    }
    app.updateAudio();

    if (controls.minimised) {
      app.releaseNetwork();
      std::this_thread::sleep_for(std::chrono::milliseconds(16));
      continue;
    }
    const std::string shot = std::move(controls.pendingShot);
    controls.pendingShot.clear();
    if (!shot.empty()) app.renderer()->captureNextFrame();
    app.renderFrame();
    if (!shot.empty()) {
      auto img = app.renderer()->readPixels();
      auto written = img ? render::writePng(shot, *img) : sim::Result<void>(img.error());
      app.chat().add(written ? "screenshot " + shot : "screenshot failed: " + written.error().message,
                     app.nowMs() / 1000.0, {255, 220, 90, 255});
    }
    app.releaseNetwork();  // renderFrame let go already, unless it returned early
    if (!options.vsync) std::this_thread::yield();
  }
  app.releaseNetwork();  // quit in the middle of an iteration
  int status = kExitOk;
  if (!options.screenshot.empty()) {
    app.renderer()->captureNextFrame();
    app.holdNetwork();
    app.renderFrame();
    auto img = app.renderer()->readPixels();
    auto written = img ? render::writePng(options.screenshot, *img) : sim::Result<void>(img.error());
    if (!written) {
      std::fprintf(stderr, "loam-client: screenshot: %s\n", written.error().message.c_str());
      status = kExitFailure;
    }
  }
  const render::FrameStats stats = app.renderer()->stats();
  std::fprintf(stderr, "loam-client: %llu frames, %llu validation errors (%s)\n",
               static_cast<unsigned long long>(stats.frames), static_cast<unsigned long long>(stats.validationErrors),
               stats.deviceName.c_str());
  app.stopNetworkThread();
  app.connection().disconnect();
  return status;
}

}  // namespace loam::client
