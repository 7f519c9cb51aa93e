#include "client/options.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "net/player_name.h"

namespace loam::client {

namespace {

bool parseDouble(const std::string& s, double& out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  while (b < e && *b == ' ') ++b;
  auto r = std::from_chars(b, e, out);
  return r.ec == std::errc() && r.ptr == e && std::isfinite(out);
}

}  // namespace

std::optional<double> parseTimeOfDay(const std::string& text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon > 2 || text.size() != colon + 3) return std::nullopt;
  int h = 0, m = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == colon) continue;
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
  }
  h = std::stoi(text.substr(0, colon));
  m = std::stoi(text.substr(colon + 1));
  if (h > 23 || m > 59) return std::nullopt;
  return (h * 60.0 + m) / (24.0 * 60.0);
}

std::optional<CameraSpec> parseCamera(const std::string& text) {
  std::vector<double> v;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    double d = 0;
    if (!parseDouble(part, d)) return std::nullopt;
    v.push_back(d);
  }
  if (v.size() != 5 || text.empty() || text.back() == ',') return std::nullopt;
  if (v[4] < -90 || v[4] > 90) return std::nullopt;
  return CameraSpec{v[0], v[1], v[2], v[3], v[4]};
}

bool parseServerAddress(const std::string& s, std::string& host, std::uint16_t& port) {
  const std::size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  const std::string p = s.substr(colon + 1);
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
  const long v = std::stol(p);
  if (v < 1 || v > 65535) return false;
  host = s.substr(0, colon);
  port = static_cast<std::uint16_t>(v);
  return true;
}

std::string defaultIdentityPath() {
  if (const char* data = std::getenv("XDG_DATA_HOME"); data != nullptr && *data == '/') {
    return std::string(data) + "/loam/identity.key";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.local/share/loam/identity.key";
  }
  return "";
}

ParseOutcome parseOptions(int argc, const char* const* argv) {
  ParseOutcome out;
  ClientOptions& o = out.options;
  std::string camera, time;
  std::uint64_t seed = 0;
  bool noAudio = false, noVsync = false, validation = false, noValidation = false;
  CLI::App app{
      "loam-client: play Loam.\n"
      "  loam-client --server HOST:PORT --name NAME        join a server\n"
      "  loam-client --local --scene scenes/glade.toml      run an in-process server for one player\n"
      "  loam-client --local --offscreen --frames N --screenshot out.png [--camera x,y,z,yaw,pitch] [--time HH:MM]\n"
      "                                                     render without a window or display and write a PNG\n"
      "Controls: WASD move, mouse look, space jump, shift run, ctrl crouch, left click dig, right click place,\n"
      "1-9 / wheel material, [ ] or Q/E tool size, F pour water, G ignite, T chat, F3 debug line,\n"
      "F12 screenshot (loam-N.png), Esc menu.\n"
      "Exit code: 0 ok, 1 runtime failure (join failed, no Vulkan), 2 bad flags,\n"
      "3 offscreen shot taken but the validation layer reported errors."};
  app.add_option("--server", o.server, "Server address HOST:PORT");
  app.add_option("--name", o.name, "Player name (1..24 characters; docs/PROTOCOL.md, Names)")->capture_default_str();
  app.add_option("--identity", o.identity,
                 "Account key file, created on first use (default $XDG_DATA_HOME/loam/identity.key or "
                 "~/.local/share/loam/identity.key)");
  app.add_flag("--local", o.local, "Run an in-process server on 127.0.0.1 (ephemeral port)");
  app.add_option("--scene", o.scene, "Scene file of the local server")->capture_default_str();
  auto* seedOpt = app.add_option("--seed", seed, "World seed of the local server (default: the scene's)");
  app.add_option("--scene-dir", o.sceneDir, "Folder holding <scene>.toml when joining a server")
      ->capture_default_str();
  app.add_flag("--offscreen", o.offscreen, "No window: render offscreen (no display needed)");
  app.add_option("--frames", o.frames, "Offscreen: frames to render before the screenshot")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--screenshot", o.screenshot,
                 "Write the last frame to this PNG (offscreen: after --frames; window: when quitting)");
  app.add_option("--camera", camera, "Fixed camera x,y,z,yaw,pitch (metres, degrees; yaw 0 north, clockwise)");
  app.add_option("--time", time,
                 "Time of day HH:MM (local server: set on the server; with --server: the sky shown only)");
  app.add_flag("--hud", o.hud, "Offscreen: draw the HUD, crosshair and target highlight too");
  app.add_option("--width", o.width, "Window / image width")->check(CLI::Range(16, 16384))->capture_default_str();
  app.add_option("--height", o.height, "Window / image height")->check(CLI::Range(16, 16384))->capture_default_str();
  app.add_option("--view-distance", o.viewDistanceMetres,
                 "How far to see, metres (beyond the detail distance: the landscape from the scene's generator)")
      ->check(CLI::Range(16.0, 8192.0))
      ->capture_default_str();
  app.add_option("--detail-distance", o.detailDistanceMetres, "How far to draw every voxel, metres")
      ->check(CLI::Range(16.0, 1024.0))
      ->capture_default_str();
  app.add_flag("--validation", validation, "Enable the Khronos validation layer (default on in Debug builds)");
  app.add_flag("--no-validation", noValidation, "Disable the validation layer");
  app.add_flag("--no-audio", noAudio, "No sound");
  app.add_flag("--speakers", o.speakers, "Sound for loudspeakers (stereo panning) instead of binaural for headphones");
  app.add_flag("--no-vsync", noVsync, "Present without waiting for vertical sync");
  app.add_option("--slow-frame-ms", o.slowFrameMs,
                 "Make every frame this much slower, as a slow GPU would (ping and edits must not follow)")
      ->check(CLI::Range(0.0, 2000.0))
      ->capture_default_str();
  app.add_option("--join-timeout", o.joinTimeoutSeconds, "Offscreen: seconds to wait for joining")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  app.add_option("--duration", o.durationSeconds, "Window: quit after this many seconds (0 = until closed)")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  app.add_option("--link-latency-ms", o.link.latencyMs, "Link simulator: one-way latency, ms")
      ->check(CLI::Range(0.0, 10000.0));
  app.add_option("--link-jitter-ms", o.link.jitterMs, "Link simulator: +- jitter, ms")
      ->check(CLI::Range(0.0, 10000.0));
  app.add_option("--link-loss", o.link.loss, "Link simulator: drop probability 0..1")->check(CLI::Range(0.0, 1.0));
  app.add_option("--link-dup", o.link.duplicate, "Link simulator: duplicate probability 0..1")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--link-reorder", o.link.reorder, "Link simulator: reorder probability 0..1")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--link-seed", o.link.seed, "Link simulator: randomness seed")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out.exitCode = 0;
    out.message = app.help();
    return out;
  } catch (const CLI::CallForAllHelp&) {
    out.exitCode = 0;
    out.message = app.help();
    return out;
  } catch (const CLI::ParseError& e) {
    out.exitCode = 2;
    out.message = std::string("loam-client: ") + e.what() + "\nRun with --help for more information.";
    return out;
  }
  auto fail = [&](const std::string& why) {
    out.exitCode = 2;
    out.message = "loam-client: " + why;
    return out;
  };
  if (o.local && !o.server.empty()) return fail("--local and --server exclude each other");
  if (!o.local && o.server.empty()) return fail("give --server HOST:PORT or --local");
  if (!o.server.empty() && !parseServerAddress(o.server, o.host, o.port))
    return fail("--server must be HOST:PORT with a port 1..65535, got '" + o.server + "'");
  const net::NameCheck name = net::checkPlayerName(o.name);
  if (!name.ok()) return fail("--name: " + name.why);
  o.name = name.name;
  if (!camera.empty()) {
    o.camera = parseCamera(camera);
    if (!o.camera) return fail("--camera must be x,y,z,yaw,pitch (numbers; pitch -90..90), got '" + camera + "'");
  }
  if (!time.empty()) {
    o.timeOfDay = parseTimeOfDay(time);
    if (!o.timeOfDay) return fail("--time must be HH:MM (00:00..23:59), got '" + time + "'");
  }
  if (seedOpt->count() > 0) {
    if (!o.local) return fail("--seed is for --local (a server picks its own)");
    o.seed = seed;
  }
  if (validation && noValidation) return fail("--validation and --no-validation exclude each other");
  if (validation) o.validation = true;
  if (noValidation) o.validation = false;
  o.audio = !noAudio;
  o.vsync = !noVsync;
  out.run = true;
  return out;
}

}  // namespace loam::client
