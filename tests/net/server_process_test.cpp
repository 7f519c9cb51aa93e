// loam-server as a process: runs for --duration and exits 0, saves every
// --save-interval, loads the newest save on the next start (moving a corrupt one
// aside), saves and exits 0 on SIGTERM, and uses exit codes 1 and 2 as documented.
// The binary comes from LOAM_SERVER_BIN (compile definition; the environment
// variable of the same name overrides it).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/process_util.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using loam::test::countOf;
using loam::test::freeUdpPort;

const std::string kScene = std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml";
// Generation of flat.toml takes seconds; on a loaded CI machine, much longer.
constexpr auto kStartTimeout = 240s;

struct TempDir : loam::test::TempDir {
  TempDir() : loam::test::TempDir("loam_server_process_test_") {}
};

/// A running loam-server whose stdout and stderr go to log.
struct Server : loam::test::Process {
  Server(const std::vector<std::string>& args, fs::path log)
      : Process(loam::test::binaryPath("LOAM_SERVER_BIN", LOAM_SERVER_BIN), args, std::move(log)) {}
};

/// Ticks of the saves in dir (flat-1-<tick>.loamsave), ascending.
std::vector<std::uint64_t> saveTicks(const fs::path& dir) {
  std::vector<std::uint64_t> ticks;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    const std::string prefix = "flat-1-", ext = ".loamsave";
    if (name.size() > prefix.size() + ext.size() && name.rfind(prefix, 0) == 0 &&
        name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
      ticks.push_back(std::stoull(name.substr(prefix.size(), name.size() - prefix.size() - ext.size())));
    }
  }
  std::sort(ticks.begin(), ticks.end());
  return ticks;
}

/// The number after `before` in text (0 if absent).
std::uint64_t numberAfter(const std::string& text, const std::string& before) {
  auto at = text.find(before);
  if (at == std::string::npos) return 0;
  return std::strtoull(text.c_str() + at + before.size(), nullptr, 10);
}

std::vector<std::string> baseArgs(const TempDir& dir, int port) {
  return {"--scene", kScene, "--port", std::to_string(port), "--bind", "127.0.0.1", "--save-dir",
          (dir.path / "saves").string()};
}

}  // namespace

TEST_CASE("loam-server runs for --duration, saves, and the next start loads the newest save") {
  TempDir dir;
  const fs::path saves = dir.path / "saves";

  // 1. Six seconds with a save every two: exits 0 with periodic saves and a final one.
  std::vector<std::string> args = baseArgs(dir, freeUdpPort());
  for (const char* a : {"--save-interval", "2", "--duration", "6", "--stats-interval", "2"}) args.push_back(a);
  Server first(args, dir.path / "first.log");
  int rc = first.wait(kStartTimeout + 60s);
  std::string log1 = first.log();
  INFO("first run log:\n" << log1);
  REQUIRE(rc == 0);
  CHECK(log1.find("listening on 127.0.0.1:") != std::string::npos);
  CHECK(log1.find("generating world: 100%") != std::string::npos);
  CHECK(log1.find("stats: ") != std::string::npos);
  CHECK(countOf(log1, "Z saved ") >= 3);  // at 2 s, 4 s and on exit
  std::uint64_t stopTick = numberAfter(log1, "stopping (duration reached) at tick ");
  CHECK(stopTick >= 300);  // 6 s at 60 Hz, minus scheduling slack
  CHECK(stopTick <= 370);
  std::vector<std::uint64_t> ticks = saveTicks(saves);
  REQUIRE(!ticks.empty());
  CHECK(ticks.size() <= 3);  // the newest 3 are kept
  CHECK(ticks.back() == stopTick);
  for (const auto& e : fs::directory_iterator(saves)) CHECK(e.path().extension() != ".tmp");

  // 2. The next start loads it.
  std::vector<std::string> args2 = baseArgs(dir, freeUdpPort());
  for (const char* a : {"--save-interval", "0", "--duration", "1"}) args2.push_back(a);
  Server second(args2, dir.path / "second.log");
  rc = second.wait(kStartTimeout + 30s);
  std::string log2 = second.log();
  INFO("second run log:\n" << log2);
  REQUIRE(rc == 0);
  const std::string newest = (saves / ("flat-1-" + std::to_string(stopTick) + ".loamsave")).string();
  CHECK(log2.find("loaded save " + newest + ": tick " + std::to_string(stopTick)) != std::string::npos);
  CHECK(log2.find("tick " + std::to_string(stopTick) + ", max") != std::string::npos);
  std::uint64_t secondStop = numberAfter(log2, "stopping (duration reached) at tick ");
  CHECK(secondStop > stopTick);
  CHECK(saveTicks(saves).back() == secondStop);

  // 3. A corrupt newest save is moved aside and the next newest is loaded.
  const fs::path corrupt = saves / "flat-1-999999.loamsave";
  std::ofstream(corrupt) << "this is not a save file";
  std::vector<std::string> args3 = baseArgs(dir, freeUdpPort());
  for (const char* a : {"--save-interval", "0", "--duration", "0.5"}) args3.push_back(a);
  Server third(args3, dir.path / "third.log");
  rc = third.wait(kStartTimeout + 30s);
  std::string log3 = third.log();
  INFO("third run log:\n" << log3);
  REQUIRE(rc == 0);
  CHECK(log3.find(corrupt.string() + " is corrupt") != std::string::npos);
  CHECK(fs::exists(corrupt.string() + ".corrupt"));
  CHECK_FALSE(fs::exists(corrupt));
  CHECK(log3.find("loaded save " + (saves / ("flat-1-" + std::to_string(secondStop) + ".loamsave")).string()) !=
        std::string::npos);
}

TEST_CASE("a save of another world stops the start (exit 2); --fresh-world keeps it as .stale") {
  TempDir dir;
  const fs::path saves = dir.path / "saves";
  // The same scene name and seed, one terrain number changed: a different world.
  const fs::path edited = dir.path / "flat.toml";
  {
    std::string text = loam::test::readText(kScene);
    const std::string materials = "materials = \"";
    REQUIRE(text.find(materials) != std::string::npos);
    text.replace(text.find(materials), materials.size(), materials + LOAM_SOURCE_DIR + "/");
    REQUIRE(text.find("base_height = 0.4") != std::string::npos);
    text.replace(text.find("base_height = 0.4"), 17, "base_height = 0.6");
    std::ofstream(edited) << text;
  }
  std::vector<std::string> old = baseArgs(dir, freeUdpPort());
  old[1] = edited.string();
  for (const char* a : {"--save-interval", "1", "--duration", "4"}) old.push_back(a);
  Server oldWorld(old, dir.path / "old.log");
  REQUIRE(oldWorld.wait(kStartTimeout + 30s) == 0);
  const std::vector<std::uint64_t> oldTicks = saveTicks(saves);
  REQUIRE(oldTicks.size() == 3);

  // Without --fresh-world the current world refuses to start over the old one: exit 2,
  // one error line naming the newest file and what differs, nothing moved.
  std::vector<std::string> args = baseArgs(dir, freeUdpPort());
  for (const char* a : {"--save-interval", "0", "--duration", "0.5"}) args.push_back(a);
  {
    Server refused(args, dir.path / "refused.log");
    const int rc = refused.wait(kStartTimeout + 30s);
    const std::string log = refused.log();
    INFO("log:\n" << log);
    CHECK(rc == 2);
    const std::string newest = (saves / ("flat-1-" + std::to_string(oldTicks.back()) + ".loamsave")).string();
    CHECK(log.find("error: save " + newest + " cannot be used here: ") != std::string::npos);
    CHECK(log.find("scene hash") != std::string::npos);
    CHECK(log.find("--fresh-world") != std::string::npos);
    CHECK(countOf(log, "error: ") == 1);
    CHECK(saveTicks(saves) == oldTicks);
  }
  // A save of another format is refused the same way, naming both versions.
  {
    const fs::path future = saves / ("flat-1-" + std::to_string(oldTicks.back() + 1000) + ".loamsave");
    std::string header(64, '\0');
    header.replace(0, 8, "LOAMSAVE");
    header[8] = 99;
    std::ofstream(future, std::ios::binary) << header;
    Server refused(args, dir.path / "format.log");
    const int rc = refused.wait(kStartTimeout + 30s);
    const std::string log = refused.log();
    INFO("log:\n" << log);
    CHECK(rc == 2);
    CHECK(log.find("error: save " + future.string() + " cannot be used here: save format version 99, this build "
                   "reads version ") != std::string::npos);
    fs::remove(future);
  }

  // With --fresh-world the current world starts fresh, moves the old saves aside and
  // keeps its own save although its tick is lower than theirs.
  args.push_back("--fresh-world");
  Server current(args, dir.path / "current.log");
  REQUIRE(current.wait(kStartTimeout + 30s) == 0);
  std::string log = current.log();
  INFO("log:\n" << log);
  CHECK(countOf(log, "--fresh-world: skipping save ") == 3);
  for (std::uint64_t t : oldTicks) {
    CHECK(fs::exists(saves / ("flat-1-" + std::to_string(t) + ".loamsave.stale")));
  }
  const std::vector<std::uint64_t> now = saveTicks(saves);
  REQUIRE(now.size() == 1);
  CHECK(now[0] < oldTicks.front());
}

TEST_CASE("loam-server saves and exits 0 on SIGTERM") {
  TempDir dir;
  std::vector<std::string> args = baseArgs(dir, freeUdpPort());
  for (const char* a : {"--save-interval", "0"}) args.push_back(a);
  Server server(args, dir.path / "server.log");
  REQUIRE(server.waitForLog("listening on", kStartTimeout));
  std::this_thread::sleep_for(1500ms);
  REQUIRE(::kill(server.pid, SIGTERM) == 0);
  int rc = server.wait(60s);
  std::string log = server.log();
  INFO("log:\n" << log);
  CHECK(rc == 0);
  CHECK(log.find("stopping (SIGTERM)") != std::string::npos);
  std::uint64_t stopTick = numberAfter(log, "stopping (SIGTERM) at tick ");
  CHECK(stopTick >= 30);
  std::vector<std::uint64_t> ticks = saveTicks(dir.path / "saves");
  REQUIRE(ticks.size() == 1);  // --save-interval 0: only the final save
  CHECK(ticks.back() == stopTick);
  CHECK(log.find("stopped") != std::string::npos);
}

TEST_CASE("loam-server exit codes: 2 for bad config, 1 for runtime failures") {
  TempDir dir;
  SUBCASE("port out of range") {
    Server s({"--scene", kScene, "--port", "70000"}, dir.path / "a.log");
    CHECK(s.wait(30s) == 2);
    std::string log = s.log();
    CHECK(log.find("--port 70000") != std::string::npos);
    CHECK(countOf(log, "\n") == 1);  // one line
  }
  SUBCASE("unknown flag") {
    Server s({"--scene", kScene, "--frobnicate"}, dir.path / "b.log");
    CHECK(s.wait(30s) == 2);
    CHECK(s.log().find("--frobnicate") != std::string::npos);
  }
  SUBCASE("unknown scene file") {
    Server s({"--scene", (dir.path / "missing.toml").string()}, dir.path / "c.log");
    CHECK(s.wait(30s) == 2);
    CHECK(s.log().find("not found") != std::string::npos);
  }
  SUBCASE("a scene that does not load") {
    const fs::path bad = dir.path / "bad.toml";
    std::ofstream(bad) << "name = \"bad\"\nnot_a_key = 3\n";
    Server s({"--scene", bad.string(), "--save-dir", (dir.path / "saves").string()}, dir.path / "d.log");
    CHECK(s.wait(30s) == 1);
    CHECK(s.log().find("cannot load scene") != std::string::npos);
  }
  SUBCASE("the port is taken") {
    loam::test::LoopbackSocket taken(SOCK_DGRAM);  // held until the server gave up
    Server s(baseArgs(dir, taken.port), dir.path / "e.log");
    int rc = s.wait(kStartTimeout);
    INFO("log:\n" << s.log());
    CHECK(rc == 1);
    CHECK(s.log().find("cannot start the server") != std::string::npos);
  }
}
