// loam-server under Agones: against a local fake SDK sidecar implementing the REST
// endpoints as the Agones documentation specifies (POST /ready, /health, /shutdown
// with body "{}" and Content-Type application/json, answered 200 "{}"), the server
// sends /ready once the world is built, /health every 2 s, and /shutdown after
// SIGTERM and the final save, before it exits. Without a sidecar it still runs and
// exits 0, logging the failure once.
// The binary comes from LOAM_SERVER_BIN (compile definition; the environment
// variable of the same name overrides it).
#include <doctest/doctest.h>
#include <httplib.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/process_util.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using loam::test::countOf;
using loam::test::readText;

const std::string kScene = std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml";
constexpr auto kStartTimeout = 120s;

struct TempDir : loam::test::TempDir {
  TempDir() : loam::test::TempDir("loam_agones_test_") {}
};

/// A loam-server started with extra environment variables; output to log.
struct Server : loam::test::Process {
  Server(const std::vector<std::string>& args, const std::vector<std::string>& extraEnv, fs::path log)
      : Process(loam::test::binaryPath("LOAM_SERVER_BIN", LOAM_SERVER_BIN), args, std::move(log), extraEnv) {}
};

/// One request the fake sidecar received.
struct Call {
  std::string method, path, body, contentType;
  Clock::time_point at;
  bool worldBuilt = false;  ///< the server had logged "listening on" when it arrived
};

/// The Agones SDK sidecar's REST lifecycle endpoints, recording every request.
class FakeSidecar {
 public:
  explicit FakeSidecar(fs::path serverLog) : serverLog_(std::move(serverLog)) {
    for (const char* path : {"/ready", "/health", "/shutdown"}) {
      http_.Post(path, [this](const httplib::Request& req, httplib::Response& res) {
        Call c{req.method, req.path, req.body, req.get_header_value("Content-Type"), Clock::now(), false};
        c.worldBuilt = readText(serverLog_).find("listening on") != std::string::npos;
        {
          std::lock_guard lock(mutex_);
          calls_.push_back(std::move(c));
        }
        res.set_content("{}", "application/json");
      });
    }
    port_ = http_.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    while (!http_.is_running()) std::this_thread::sleep_for(1ms);
  }
  ~FakeSidecar() {
    http_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::vector<Call> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  fs::path serverLog_;
  httplib::Server http_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<Call> calls_;
};

std::size_t firstIndex(const std::vector<Call>& calls, const std::string& path) {
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].path == path) return i;
  }
  return calls.size();
}

double secondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

TEST_CASE("loam-server reports ready, health and shutdown to the Agones SDK sidecar, in that order") {
  TempDir dir;
  const fs::path log = dir.path / "server.log";
  FakeSidecar sidecar(log);
  Server server({"--scene", kScene, "--port", "0", "--bind", "127.0.0.1", "--save-dir", (dir.path / "saves").string(),
                 "--save-interval", "0", "--stats-interval", "0"},
                {"AGONES_SDK_HTTP_PORT=" + std::to_string(sidecar.port())}, log);

  // Ready arrives once the world is built.
  auto deadline = Clock::now() + kStartTimeout;
  while (Clock::now() < deadline && server.running() && firstIndex(sidecar.calls(), "/ready") == sidecar.calls().size()) {
    std::this_thread::sleep_for(50ms);
  }
  std::vector<Call> calls = sidecar.calls();
  std::size_t ready = firstIndex(calls, "/ready");
  INFO("log:\n" << server.log());
  REQUIRE(ready < calls.size());
  CHECK(calls[ready].worldBuilt);

  // Health pings every 2 s: wait for two after ready.
  auto healthAfterReady = [&](const std::vector<Call>& cs) {
    std::vector<Clock::time_point> at;
    for (std::size_t i = firstIndex(cs, "/ready") + 1; i < cs.size(); ++i) {
      if (cs[i].path == "/health") at.push_back(cs[i].at);
    }
    return at;
  };
  deadline = Clock::now() + 20s;
  while (Clock::now() < deadline && server.running() && healthAfterReady(sidecar.calls()).size() < 3) {
    std::this_thread::sleep_for(50ms);
  }
  std::vector<Clock::time_point> pings = healthAfterReady(sidecar.calls());
  REQUIRE(pings.size() >= 2);
  bool twoSecondsApart = false;
  for (std::size_t i = 1; i < pings.size(); ++i) {
    double gap = secondsBetween(pings[i - 1], pings[i]);
    INFO("gap " << gap);
    CHECK(gap > 1.0);  // never a burst
    if (gap > 1.5 && gap < 3.0) twoSecondsApart = true;
  }
  CHECK(twoSecondsApart);
  CHECK(firstIndex(sidecar.calls(), "/shutdown") == sidecar.calls().size());  // not before SIGTERM

  // SIGTERM: the final save, then /shutdown, then exit 0.
  const Clock::time_point termAt = Clock::now();
  REQUIRE(::kill(server.pid, SIGTERM) == 0);
  int rc = server.wait(60s);
  std::string text = server.log();
  INFO("log:\n" << text);
  CHECK(rc == 0);
  calls = sidecar.calls();
  REQUIRE(!calls.empty());
  const Call& last = calls.back();
  CHECK(last.path == "/shutdown");
  CHECK(countOf(text, "agones: shutdown sent") == 1);
  CHECK(last.at >= termAt);
  CHECK(last.at <= server.exitSeenAt);
  std::size_t shutdowns = 0, readies = 0;
  for (const Call& c : calls) {
    INFO(c.method << " " << c.path);
    CHECK(c.method == "POST");
    CHECK(c.body == "{}");
    CHECK(c.contentType == "application/json");
    shutdowns += c.path == "/shutdown";
    readies += c.path == "/ready";
    CHECK((c.path == "/ready" || c.path == "/health" || c.path == "/shutdown"));
  }
  CHECK(readies == 1);
  CHECK(shutdowns == 1);
  // The final commit was written before /shutdown was sent.
  auto saved = text.rfind(" committed tick ");
  auto sent = text.find("agones: shutdown sent");
  REQUIRE(saved != std::string::npos);
  REQUIRE(sent != std::string::npos);
  CHECK(saved < sent);
  CHECK(text.find("agones: SDK sidecar answering") != std::string::npos);
  CHECK(text.find("failing") == std::string::npos);
}

TEST_CASE("without a sidecar listening, loam-server still runs and exits 0, logging the failure once") {
  TempDir dir;
  // A port nobody listens on: bound, then closed.
  const int port = loam::test::freeTcpPort();
  Server server({"--scene", kScene, "--port", "0", "--bind", "127.0.0.1", "--save-dir", (dir.path / "saves").string(),
                 "--duration", "5", "--stats-interval", "0"},
                {"AGONES_SDK_HTTP_PORT=" + std::to_string(port)}, dir.path / "server.log");
  int rc = server.wait(kStartTimeout);
  std::string text = server.log();
  INFO("log:\n" << text);
  CHECK(rc == 0);
  CHECK(text.find("stopping (duration reached)") != std::string::npos);
  CHECK(text.find("stopped") != std::string::npos);
  // Health, ready and shutdown all failed: one line for the one change of state.
  CHECK(countOf(text, "agones: SDK sidecar at localhost port=" + std::to_string(port) + " failing") == 1);
  CHECK(text.find("agones: shutdown sent") == std::string::npos);
}

TEST_CASE("a bad AGONES_SDK_HTTP_PORT is a configuration error (exit 2)") {
  TempDir dir;
  Server server({"--scene", kScene, "--save-dir", (dir.path / "saves").string()}, {"AGONES_SDK_HTTP_PORT=nope"},
                dir.path / "server.log");
  CHECK(server.wait(30s) == 2);
  CHECK(server.log().find("AGONES_SDK_HTTP_PORT=nope") != std::string::npos);
}
