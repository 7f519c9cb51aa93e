// SDL events and held controls applied to a ClientApp: the keyboard, mouse and
// gamepad mapping of the window loop, separate from the window so tests can feed
// synthetic SDL_Events to an app without a display.
//
// Thread: the window loop's (SDL's event thread).
#pragma once

#include <SDL.h>

#include <string>

#include "client/client_app.h"

namespace loam::client {

/// Window loop state the events change.
struct WindowControls {
  bool quit = false;
  bool minimised = false;
  bool swallowText = false;   ///< the 't' that opened the chat may still arrive as text
  int screenshots = 0;
  std::string pendingShot;    ///< F12: a PNG path to capture with the next frame
  RepeatTimer digRepeat, placeRepeat;
  SDL_Window* window = nullptr;  ///< for sizes (null in tests)
};

/// Handles one event: quit, window size changes (renderer resize), keys (menu,
/// chat, tool, pour, ignite, F3, F12), text input, mouse look, menu clicks, the
/// wheel, gamepad buttons and hot-plugging is left to the caller.
void handleEvent(ClientApp& app, WindowControls& controls, const SDL_Event& event);

/// Held controls of one loop iteration: movement keys (keys: SDL_GetKeyboardState),
/// mouse buttons (SDL_GetMouseState) and an optional gamepad fill app.move(), turn
/// the view by the right stick over dtSeconds, and fire held dig / place through
/// their repeat timers. Nothing is held while the menu or chat is open.
void applyHeld(ClientApp& app, WindowControls& controls, const Uint8* keys, Uint32 mouseButtons,
               SDL_GameController* pad, double nowMs, double dtSeconds);

/// Opens or closes the Esc menu (releasing or capturing the mouse).
void setMenuOpen(ClientApp& app, bool open);

}  // namespace loam::client
