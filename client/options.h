// loam-client's command line: what to join (a server or an in-process one), how to
// show it (a window, or offscreen into a PNG) and the link to simulate. Parsing is
// here rather than in main.cpp so tests can check flags without a process.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "net/link_sim.h"

namespace loam::client {

/// A fixed camera for offscreen shots: eye in metres, yaw and pitch in degrees (yaw
/// 0 north (-z), clockwise; pitch + up).
struct CameraSpec {
  double x = 0, y = 0, z = 0;
  double yawDegrees = 0, pitchDegrees = 0;
};

struct ClientOptions {
  // What to join.
  std::string server;                 ///< "HOST:PORT" ("" with local)
  std::string host = "127.0.0.1";     ///< parsed from server
  std::uint16_t port = 7777;
  std::string name = "player";
  std::string identity;               ///< --identity: account key file; "" = defaultIdentityPath() (servers only)
  bool local = false;                 ///< run an in-process server
  std::string scene = "scenes/glade.toml";  ///< local server's scene file
  std::optional<std::uint64_t> seed;  ///< local server's seed (default: the scene's)
  std::string sceneDir = "scenes";    ///< where <scene name>.toml is looked up when joining
  net::LinkProfile link;
  // How to show it.
  bool offscreen = false;
  int frames = 1;                     ///< offscreen: frames rendered before the shot
  std::string screenshot;             ///< PNG of the last frame ("" = none; a window writes it when quitting)
  std::optional<CameraSpec> camera;   ///< fixed camera (offscreen; windowed: ignored)
  std::optional<double> timeOfDay;    ///< --time as a day fraction 0..1 (0 midnight)
  bool hud = false;                   ///< offscreen: draw the HUD and crosshair too
  int width = 1280, height = 720;
  double viewDistanceMetres = 2048;  ///< how far the world is drawn (beyond the detail: far terrain)
  double detailDistanceMetres = 96;  ///< how far the voxels themselves are drawn (and streamed)
  /// The voxels' reach: the detail distance, or the view distance when that is nearer.
  double detailMetres() const { return std::min(viewDistanceMetres, detailDistanceMetres); }
#ifndef NDEBUG
  bool validation = true;
#else
  bool validation = false;
#endif
  bool audio = true;                  ///< --no-audio clears it
  bool speakers = false;              ///< --speakers: stereo panning instead of the HRTF (headphones)
  bool vsync = true;
  double slowFrameMs = 0;             ///< --slow-frame-ms: a deliberately slow renderer (RendererConfig::slowFrameMs)
  double joinTimeoutSeconds = 180;    ///< offscreen: give up joining after this
  double durationSeconds = 0;         ///< windowed: quit after this (0 = until closed; smoke tests)
};

/// Result of parsing: run with options, or exit at once with exitCode (0 for
/// --help, 2 for bad flags; message holds the text to print, stdout for 0,
/// stderr otherwise).
struct ParseOutcome {
  bool run = false;
  int exitCode = 0;
  std::string message;
  ClientOptions options;
};

/// Parses argv (CLI11). Never throws. Allocates.
ParseOutcome parseOptions(int argc, const char* const* argv);

/// "HH:MM" (00:00..23:59) to a day fraction; nullopt when malformed.
std::optional<double> parseTimeOfDay(const std::string& text);
/// "x,y,z,yaw,pitch" (metres, degrees); nullopt when malformed.
std::optional<CameraSpec> parseCamera(const std::string& text);
/// "HOST:PORT" with a port 1..65535; false when malformed.
bool parseServerAddress(const std::string& text, std::string& host, std::uint16_t& port);

/// Where the account key lives by default: $XDG_DATA_HOME/loam/identity.key, else
/// $HOME/.local/share/loam/identity.key ("" when neither variable is set).
std::string defaultIdentityPath();

}  // namespace loam::client
