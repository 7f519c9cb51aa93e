// `loam-tool acoustics-debug` as a process: on the flat meadow it exits 0, writes a
// PNG of the requested size with the listener's white cross at the centre and prints
// the room as JSON (open sky: openness high, enclosure low); bad input exits 2 with a
// one-line message. The binary comes from LOAM_TOOL_BIN (compile definition; the
// environment variable of the same name overrides it).
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#endif
#include <stb/stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include "tests/support/process_util.h"

namespace {

namespace fs = std::filesystem;

struct Run {
  int exitCode = -1;
  std::string output;  // stdout and stderr together
};

Run runTool(const std::vector<std::string>& args, std::chrono::seconds timeout) {
  const fs::path log = fs::temp_directory_path() / ("loam_acoustics_debug_" + std::to_string(::getpid()) + ".log");
  Run r;
  loam::test::Process tool(loam::test::binaryPath("LOAM_TOOL_BIN", LOAM_TOOL_BIN), args, log);
  r.exitCode = tool.wait(timeout);
  r.output = loam::test::readText(log);
  fs::remove(log);
  return r;
}

/// The JSON line the command prints (starts with {"scene"), "" when missing.
std::string jsonLine(const std::string& out) {
  auto at = out.find("{\"scene\"");
  if (at == std::string::npos) return "";
  return out.substr(at, out.find('\n', at) - at);
}

/// "\"key\"" (built by append: GCC 12's -Wrestrict misfires on "x" + string).
std::string quoted(const std::string& key) {
  std::string q(1, '"');
  q.append(key).push_back('"');
  return q;
}

/// The number after "key": in json; NaN when the key is missing.
double numberOf(const std::string& json, const std::string& key) {
  auto at = json.find(quoted(key));
  if (at == std::string::npos) return std::nan("");
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

const std::string kFlat = std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml";

}  // namespace

TEST_CASE("acoustics-debug on the flat meadow: PNG of the asked size, white listener, open room as JSON") {
  loam::test::TempDir dir("loam_acoustics_debug_");
  const fs::path png = dir.path / "rays.png";
  // The meadow's ground is at y = 0.4 m; the centre is kept clear of grass and bushes.
  const Run r = runTool({"acoustics-debug", "--scene", kFlat, "--listener", "0,2.02,0,90", "--out", png.string(),
                         "--size", "320", "--radius", "20", "--rays", "256"},
                        std::chrono::seconds(300));
  INFO(r.output);
  REQUIRE(r.exitCode == 0);

  int w = 0, h = 0, n = 0;
  unsigned char* px = stbi_load(png.c_str(), &w, &h, &n, 3);
  REQUIRE(px != nullptr);
  CHECK(w == 320);
  CHECK(h == 320);
  auto at = [&](int x, int y) { return px + 3 * (y * w + x); };
  // The listener's cross covers the 2 x 2 pixels round the centre.
  for (int y = 159; y <= 160; ++y)
    for (int x = 159; x <= 160; ++x) {
      const unsigned char* p = at(x, y);
      CHECK(p[0] > 220);
      CHECK(p[1] > 220);
      CHECK(p[2] > 220);
    }
  // Away from the centre the image is ground and rays, not white.
  double sum = 0;
  for (int y = 200; y < 240; ++y)
    for (int x = 30; x < 70; ++x) sum += at(x, y)[0] + at(x, y)[1] + at(x, y)[2];
  CHECK(sum / (40.0 * 40.0 * 3.0) < 200.0);
  stbi_image_free(px);

  const std::string json = jsonLine(r.output);
  REQUIRE(!json.empty());
  for (const char* key : {"enclosure", "openness", "mean_free_path_m", "rt60_s", "openings", "taps", "direction",
                          "share", "distance_m"})
    CHECK(json.find(quoted(key)) != std::string::npos);
  CHECK(json.back() == '}');
  // Open sky over a flat field: almost every sky ray escapes; the ground below hits.
  CHECK(numberOf(json, "openness") > 0.9);
  CHECK(numberOf(json, "enclosure") < 0.2);
  CHECK(numberOf(json, "hit_share") > 0.3);
  CHECK(numberOf(json, "rays") == 256);
  CHECK(numberOf(json, "yaw_deg") == 90);
}

TEST_CASE("acoustics-debug rejects bad input with exit 2 and a one-line message") {
  loam::test::TempDir dir("loam_acoustics_debug_bad_");
  const std::string png = (dir.path / "rays.png").string();
  Run r = runTool({"acoustics-debug", "--scene", kFlat, "--listener", "0,2", "--out", png}, std::chrono::seconds(60));
  CHECK(r.exitCode == 2);
  CHECK(r.output.find("--listener wants x,y,z[,yaw]") != std::string::npos);
  r = runTool({"acoustics-debug", "--scene", kFlat, "--listener", "0,2,zero", "--out", png}, std::chrono::seconds(60));
  CHECK(r.exitCode == 2);
  r = runTool({"acoustics-debug", "--scene", kFlat, "--listener", "5000,2,0", "--out", png}, std::chrono::seconds(60));
  CHECK(r.exitCode == 2);
  CHECK(r.output.find("outside the world") != std::string::npos);
  r = runTool({"acoustics-debug", "--scene", "/nonexistent/scene.toml", "--listener", "0,2,0", "--out", png},
              std::chrono::seconds(60));
  CHECK(r.exitCode == 2);
  CHECK(r.output.find("acoustics-debug:") != std::string::npos);
  CHECK(!fs::exists(png));
}
