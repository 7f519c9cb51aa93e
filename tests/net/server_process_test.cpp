// loam-server as a process: runs for --duration and exits 0, saves every
// --save-interval, loads the newest save on the next start (moving a corrupt one
// aside), saves and exits 0 on SIGTERM, and uses exit codes 1 and 2 as documented.
// The binary comes from LOAM_SERVER_BIN (compile definition; the environment
// variable of the same name overrides it).
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kScene = std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml";
// Generation of flat.toml takes seconds; on a loaded CI machine, much longer.
constexpr auto kStartTimeout = 240s;

std::string serverBinary() {
  if (const char* env = std::getenv("LOAM_SERVER_BIN")) return env;
  return LOAM_SERVER_BIN;
}

/// A UDP port that was free a moment ago on 127.0.0.1.
int freeUdpPort() {
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

/// A fresh temp folder, removed with the object.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("loam_server_process_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string readText(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A running loam-server whose stdout and stderr go to logPath.
struct Server {
  pid_t pid = -1;
  fs::path logPath;
  int exitCode = -1;

  Server(const std::vector<std::string>& args, fs::path log) : logPath(std::move(log)) {
    std::string bin = serverBinary();
    std::vector<std::string> argv{bin};
    argv.insert(argv.end(), args.begin(), args.end());
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int fd = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) ::_exit(120);
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      std::vector<char*> cargv;
      for (std::string& s : argv) cargv.push_back(s.data());
      cargv.push_back(nullptr);
      ::execv(bin.c_str(), cargv.data());
      ::_exit(121);  // exec failed
    }
  }
  ~Server() {
    if (exitCode < 0 && pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }

  std::string log() const { return readText(logPath); }

  /// Waits for the process to end; kills it after timeout. Returns its exit code,
  /// or -1 when it had to be killed or died from a signal.
  int wait(std::chrono::seconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int status = 0;
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        if (exitCode < 0) exitCode = 255;  // reaped: the destructor must not kill again
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        exitCode = 255;
        return -1;
      }
      std::this_thread::sleep_for(20ms);
    }
  }

  /// Waits until the log contains needle (or the process ended / timeout).
  bool waitForLog(const std::string& needle, std::chrono::seconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (log().find(needle) != std::string::npos) return true;
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
        return log().find(needle) != std::string::npos;
      }
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }
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

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
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
  CHECK(count(log1, "Z saved ") >= 3);  // at 2 s, 4 s and on exit
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
    CHECK(count(log, "\n") == 1);  // one line
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
    int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    Server s(baseArgs(dir, ntohs(a.sin_port)), dir.path / "e.log");
    int rc = s.wait(kStartTimeout);
    ::close(fd);
    INFO("log:\n" << s.log());
    CHECK(rc == 1);
    CHECK(s.log().find("cannot start the server") != std::string::npos);
  }
}
