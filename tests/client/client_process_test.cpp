// loam-client as a process: bad flags exit 2 with a message, --help exits 0, and an
// offscreen shot of glade at noon (local server, validation on) exits 0 and writes
// a PNG whose top is sky. The binary comes from LOAM_CLIENT_BIN (compile definition;
// the environment variable of the same name overrides it).
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <stb/stb_image.h>

#include "tests/support/process_util.h"

namespace {

namespace fs = std::filesystem;

struct Run {
  int exitCode = -1;
  std::string output;
};

/// Runs the client with args (stdout and stderr captured), killing it after timeout.
Run runClient(const std::vector<std::string>& args, std::chrono::seconds timeout) {
  const fs::path log = fs::temp_directory_path() / ("loam_client_test_" + std::to_string(::getpid()) + ".log");
  Run r;
  // No display: the offscreen path must not need one.
  loam::test::Process client(loam::test::binaryPath("LOAM_CLIENT_BIN", LOAM_CLIENT_BIN), args, log, {},
                             {"DISPLAY", "WAYLAND_DISPLAY"});
  r.exitCode = client.wait(timeout);
  r.output = loam::test::readText(log);
  fs::remove(log);
  return r;
}

}  // namespace

TEST_CASE("bad flags exit 2 with a message; --help exits 0") {
  Run r = runClient({"--server", "localhost"}, std::chrono::seconds(20));
  CHECK(r.exitCode == 2);
  CHECK(r.output.find("HOST:PORT") != std::string::npos);
  r = runClient({"--local", "--time", "7pm"}, std::chrono::seconds(20));
  CHECK(r.exitCode == 2);
  CHECK(r.output.find("--time") != std::string::npos);
  r = runClient({"--help"}, std::chrono::seconds(20));
  CHECK(r.exitCode == 0);
  CHECK(r.output.find("--screenshot") != std::string::npos);
}

TEST_CASE("no server to join: exit 1 with a message saying so") {
  // Port 9 (discard) on loopback: nothing answers ENet there.
  const Run r = runClient({"--server", "127.0.0.1:9", "--offscreen", "--join-timeout", "4", "--width", "64",
                           "--height", "36", "--no-validation"},
                          std::chrono::seconds(120));
  INFO(r.output);
  CHECK(r.exitCode == 1);
  CHECK(r.output.find("could not join") != std::string::npos);
}

TEST_CASE("an offscreen shot of glade at noon: exit 0, no validation errors, sky at the top") {
  const fs::path png = fs::temp_directory_path() / ("loam_client_test_" + std::to_string(::getpid()) + ".png");
  fs::remove(png);
  const Run r = runClient({"--local", "--scene", std::string(LOAM_SOURCE_DIR) + "/scenes/glade.toml", "--offscreen",
                           "--frames", "2", "--screenshot", png.string(), "--camera", "0,8,6,180,20", "--time",
                           "12:00", "--width", "240", "--height", "136", "--validation", "--no-audio"},
                          std::chrono::seconds(300));
  INFO(r.output);
  REQUIRE(r.exitCode == 0);  // 3 would mean validation errors
  CHECK(r.output.find(" 0 validation errors") != std::string::npos);
  int w = 0, h = 0, n = 0;
  unsigned char* px = stbi_load(png.c_str(), &w, &h, &n, 4);
  REQUIRE(px != nullptr);
  CHECK(w == 240);
  CHECK(h == 136);
  double r0 = 0, g0 = 0, b0 = 0;
  for (int y = 0; y < h / 5; ++y)
    for (int x = 0; x < w; ++x) {
      const unsigned char* p = px + 4 * (y * w + x);
      r0 += p[0];
      g0 += p[1];
      b0 += p[2];
    }
  stbi_image_free(px);
  fs::remove(png);
  CHECK(b0 > r0);
  CHECK((r0 + g0 + b0) / (3.0 * w * (h / 5)) > 110);
}
