// loam-server options: defaults, the file < environment < flag precedence, and a
// clear one-line error for every kind of bad input (server/config.h).
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "server/config.h"
#include "server/server_loop.h"

namespace {

using loam::server::Environment;
using loam::server::ParseResult;

const std::string kScene = std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml";
const std::string kOtherScene = std::string(LOAM_SOURCE_DIR) + "/scenes/glade.toml";

ParseResult parse(std::initializer_list<std::string> args, const Environment& env = {}) {
  std::vector<std::string> storage{"loam-server"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const std::string& s : storage) argv.push_back(s.c_str());
  argv.push_back(nullptr);
  return loam::server::parseOptions(static_cast<int>(storage.size()), argv.data(), env);
}

/// A config file in a fresh temp folder, removed with the object.
struct TempConfig {
  std::filesystem::path dir;
  std::string path;
  explicit TempConfig(const std::string& text) {
    static int counter = 0;
    dir = std::filesystem::temp_directory_path() /
          ("loam_server_config_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
    path = (dir / "server.toml").string();
    std::ofstream(path) << text;
  }
  ~TempConfig() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

/// Asserts an Error whose one-line text contains every fragment.
void expectError(const ParseResult& r, std::initializer_list<std::string> fragments) {
  REQUIRE(r.action == ParseResult::Action::Error);
  INFO("message: " << r.text);
  CHECK(r.text.find('\n') == std::string::npos);
  CHECK_FALSE(r.text.empty());
  for (const std::string& f : fragments) CHECK(r.text.find(f) != std::string::npos);
}

}  // namespace

TEST_CASE("defaults apply when only the scene is given") {
  ParseResult r = parse({"--scene", kScene});
  REQUIRE(r.action == ParseResult::Action::Run);
  const loam::server::ServerOptions& o = r.options;
  CHECK(o.scenePath == kScene);
  CHECK_FALSE(o.seed.has_value());
  CHECK(o.port == 7777);
  CHECK(o.bind == "0.0.0.0");
  CHECK(o.name == "loam");
  CHECK(o.maxPlayers == 64);
  CHECK(o.saveDir == "saves");
  CHECK(o.saveIntervalSeconds == 300.0);
  CHECK(o.bandwidthCapKBps == 256);
  CHECK(o.maxPeersPerAddress == 4);
  CHECK(o.joinsPerMinutePerAddress == 30);
  CHECK(o.durationSeconds == 0.0);
  CHECK(o.statsIntervalSeconds == 10.0);
  CHECK(o.httpPort == 0);  // no HTTP endpoint unless asked for
  CHECK(o.httpBind == "127.0.0.1");
  CHECK(o.logFormat == "text");
  CHECK(o.agonesSdkPort == 0);
}

TEST_CASE("every option can be set by flag, by variable and by file key") {
  SUBCASE("flags") {
    ParseResult r = parse({"--scene", kScene, "--seed", "18446744073709551615", "--port", "0", "--bind", "127.0.0.1",
                           "--name", "test server", "--max-players", "8", "--save-dir", "/tmp/x", "--save-interval",
                           "2.5", "--bandwidth-cap=512", "--max-peers-per-address", "40", "--joins-per-minute-per-address", "90", "--duration", "6", "--stats-interval", "0", "--http-port", "9100",
                           "--http-bind", "0.0.0.0", "--log-format", "json"});
    REQUIRE(r.action == ParseResult::Action::Run);
    CHECK(r.options.seed == 18446744073709551615ull);
    CHECK(r.options.port == 0);
    CHECK(r.options.bind == "127.0.0.1");
    CHECK(r.options.name == "test server");
    CHECK(r.options.maxPlayers == 8);
    CHECK(r.options.saveDir == "/tmp/x");
    CHECK(r.options.saveIntervalSeconds == 2.5);
    CHECK(r.options.bandwidthCapKBps == 512);
    CHECK(r.options.maxPeersPerAddress == 40);
    CHECK(r.options.joinsPerMinutePerAddress == 90);
    CHECK(r.options.durationSeconds == 6.0);
    CHECK(r.options.statsIntervalSeconds == 0.0);
    CHECK(r.options.httpPort == 9100);
    CHECK(r.options.httpBind == "0.0.0.0");
    CHECK(r.options.logFormat == "json");
  }
  SUBCASE("variables") {
    Environment env{{"LOAM_SCENE", kScene},       {"LOAM_SEED", "42"},         {"LOAM_PORT", "4000"},
                    {"LOAM_BIND", "127.0.0.1"},   {"LOAM_NAME", "env"},        {"LOAM_MAX_PLAYERS", "3"},
                    {"LOAM_SAVE_DIR", "sv"},      {"LOAM_SAVE_INTERVAL", "7"}, {"LOAM_BANDWIDTH_CAP", "9"},
                    {"LOAM_DURATION", "1.5"},     {"LOAM_STATS_INTERVAL", "2"}, {"HOME", "/root"},
                    {"LOAM_HTTP_PORT", "9200"},   {"LOAM_HTTP_BIND", "localhost"}, {"LOAM_LOG_FORMAT", "json"},
                    {"AGONES_SDK_HTTP_PORT", "9358"}};
    ParseResult r = parse({}, env);
    REQUIRE(r.action == ParseResult::Action::Run);
    CHECK(r.options.scenePath == kScene);
    CHECK(r.options.seed == 42u);
    CHECK(r.options.port == 4000);
    CHECK(r.options.bind == "127.0.0.1");
    CHECK(r.options.name == "env");
    CHECK(r.options.maxPlayers == 3);
    CHECK(r.options.saveDir == "sv");
    CHECK(r.options.saveIntervalSeconds == 7.0);
    CHECK(r.options.bandwidthCapKBps == 9);
    CHECK(r.options.durationSeconds == 1.5);
    CHECK(r.options.statsIntervalSeconds == 2.0);
    CHECK(r.options.httpPort == 9200);
    CHECK(r.options.httpBind == "localhost");
    CHECK(r.options.logFormat == "json");
    CHECK(r.options.agonesSdkPort == 9358);
  }
  SUBCASE("file keys") {
    TempConfig cfg("scene = \"" + kScene +
                   "\"\nseed = 5\nport = 5000\nbind = \"localhost\"\nname = \"file\"\nmax_players = 16\n"
                   "save_dir = \"fsaves\"\nsave_interval = 60\nbandwidth_cap = 128\nduration = 0.5\n"
                   "stats_interval = 30.0\nhttp_port = 9300\nhttp_bind = \"127.0.0.2\"\nlog_format = \"json\"\n");
    ParseResult r = parse({"--config", cfg.path});
    REQUIRE(r.action == ParseResult::Action::Run);
    CHECK(r.options.configPath == cfg.path);
    CHECK(r.options.seed == 5u);
    CHECK(r.options.port == 5000);
    CHECK(r.options.bind == "localhost");
    CHECK(r.options.name == "file");
    CHECK(r.options.maxPlayers == 16);
    CHECK(r.options.saveDir == "fsaves");
    CHECK(r.options.saveIntervalSeconds == 60.0);
    CHECK(r.options.bandwidthCapKBps == 128);
    CHECK(r.options.durationSeconds == 0.5);
    CHECK(r.options.statsIntervalSeconds == 30.0);
    CHECK(r.options.httpPort == 9300);
    CHECK(r.options.httpBind == "127.0.0.2");
    CHECK(r.options.logFormat == "json");
  }
}

TEST_CASE("flags win over variables, variables over the file") {
  TempConfig cfg("scene = \"" + kScene + "\"\nport = 1000\nname = \"from-file\"\nsave_interval = 10\n");
  Environment env{{"LOAM_PORT", "2000"}, {"LOAM_NAME", "from-env"}};

  ParseResult fileOnly = parse({"--config", cfg.path});
  REQUIRE(fileOnly.action == ParseResult::Action::Run);
  CHECK(fileOnly.options.port == 1000);
  CHECK(fileOnly.options.name == "from-file");

  ParseResult fileEnv = parse({"--config", cfg.path}, env);
  REQUIRE(fileEnv.action == ParseResult::Action::Run);
  CHECK(fileEnv.options.port == 2000);
  CHECK(fileEnv.options.name == "from-env");
  CHECK(fileEnv.options.saveIntervalSeconds == 10.0);  // untouched keys keep the file's value

  ParseResult all = parse({"--config", cfg.path, "--port", "3000", "--scene", kOtherScene}, env);
  REQUIRE(all.action == ParseResult::Action::Run);
  CHECK(all.options.port == 3000);
  CHECK(all.options.name == "from-env");
  CHECK(all.options.scenePath == kOtherScene);

  SUBCASE("LOAM_CONFIG names the file; --config wins over it") {
    TempConfig other("scene = \"" + kScene + "\"\nport = 1111\n");
    ParseResult viaEnv = parse({}, {{"LOAM_CONFIG", cfg.path}});
    REQUIRE(viaEnv.action == ParseResult::Action::Run);
    CHECK(viaEnv.options.port == 1000);
    ParseResult both = parse({"--config", other.path}, {{"LOAM_CONFIG", cfg.path}});
    REQUIRE(both.action == ParseResult::Action::Run);
    CHECK(both.options.port == 1111);
  }
  SUBCASE("a repeated flag takes its last value") {
    ParseResult r = parse({"--config", cfg.path, "--port", "1", "--port", "2"});
    REQUIRE(r.action == ParseResult::Action::Run);
    CHECK(r.options.port == 2);
  }
  SUBCASE("an empty variable counts as unset") {
    ParseResult r = parse({"--config", cfg.path}, {{"LOAM_PORT", ""}});
    REQUIRE(r.action == ParseResult::Action::Run);
    CHECK(r.options.port == 1000);
  }
}

TEST_CASE("bad flag values are one-line errors naming the flag") {
  expectError(parse({"--scene", kScene, "--port", "70000"}), {"--port 70000", "out of range 0..65535"});
  expectError(parse({"--scene", kScene, "--port=-1"}), {"--port -1", "negative"});
  expectError(parse({"--scene", kScene, "--port", "77x"}), {"--port 77x", "whole number"});
  expectError(parse({"--scene", kScene, "--seed=-5"}), {"--seed -5", "negative"});
  expectError(parse({"--scene", kScene, "--seed", "99999999999999999999"}), {"--seed", "out of range"});
  expectError(parse({"--scene", kScene, "--max-players", "0"}), {"--max-players 0", "out of range 1..1024"});
  expectError(parse({"--scene", kScene, "--max-players", "5000"}), {"--max-players 5000", "out of range"});
  expectError(parse({"--scene", kScene, "--bandwidth-cap", "0"}), {"--bandwidth-cap 0", "out of range"});
  expectError(parse({"--scene", kScene, "--joins-per-minute-per-address", "0"}),
              {"--joins-per-minute-per-address 0", "out of range 1..3600"});
  expectError(parse({"--scene", kScene, "--save-interval=-1"}), {"--save-interval -1", "negative"});
  expectError(parse({"--scene", kScene, "--save-interval", "soon"}), {"--save-interval soon", "seconds"});
  expectError(parse({"--scene", kScene, "--duration", "inf"}), {"--duration inf", "seconds"});
  expectError(parse({"--scene", kScene, "--duration", "nan"}), {"--duration nan", "seconds"});
  expectError(parse({"--scene", kScene, "--stats-interval=-0.5"}), {"--stats-interval -0.5", "negative"});
  expectError(parse({"--scene", kScene, "--name", std::string(64, 'n')}), {"--name", "longer than 63"});
  expectError(parse({"--scene", kScene, "--name", ""}), {"--name", "empty"});
  expectError(parse({"--scene", kScene, "--bind", ""}), {"--bind", "empty"});
  expectError(parse({"--scene", kScene, "--bind", "::1"}), {"--bind ::1", "IPv4"});
  expectError(parse({"--scene", kScene, "--bind", "300.1.2.3"}), {"--bind 300.1.2.3", "IPv4"});
  expectError(parse({"--scene", kScene, "--bind", "my host"}), {"--bind my host", "IPv4"});
  expectError(parse({"--scene", "/nonexistent/nowhere.toml"}), {"/nonexistent/nowhere.toml", "not found"});
  expectError(parse({"--port", "7777"}), {"no scene"});
  expectError(parse({"--scene", kScene, "--http-port", "65536"}), {"--http-port 65536", "out of range 0..65535"});
  expectError(parse({"--scene", kScene, "--http-port", "web"}), {"--http-port web", "whole number"});
  expectError(parse({"--scene", kScene, "--http-bind", "::1"}), {"--http-bind ::1", "IPv4"});
  expectError(parse({"--scene", kScene, "--http-bind", ""}), {"--http-bind", "empty"});
  expectError(parse({"--scene", kScene, "--log-format", "xml"}), {"--log-format xml", "expected text or json"});
  expectError(parse({"--scene", kScene, "--log-format", "JSON"}), {"--log-format JSON", "text or json"});
}

TEST_CASE("unknown flags and stray arguments are errors") {
  expectError(parse({"--scene", kScene, "--colour", "red"}), {"--colour"});
  expectError(parse({"--scene", kScene, "extra"}), {"extra"});
  expectError(parse({"--scene", kScene, "--port"}), {"--port"});
}

TEST_CASE("bad variables are errors naming the variable") {
  expectError(parse({"--scene", kScene}, {{"LOAM_PORT", "99999"}}), {"LOAM_PORT=99999", "out of range"});
  expectError(parse({"--scene", kScene}, {{"LOAM_SEED", "-1"}}), {"LOAM_SEED=-1", "negative"});
  expectError(parse({"--scene", kScene}, {{"LOAM_DURATION", "x"}}), {"LOAM_DURATION=x"});
  expectError(parse({"--scene", kScene}, {{"LOAM_HTTP_PORT", "-80"}}), {"LOAM_HTTP_PORT=-80", "negative"});
  expectError(parse({"--scene", kScene}, {{"LOAM_LOG_FORMAT", "yaml"}}), {"LOAM_LOG_FORMAT=yaml", "text or json"});
  // Agones' own variable is checked too: a server that cannot reach its sidecar
  // would never become Ready, so a bad port stops it at once.
  expectError(parse({"--scene", kScene}, {{"AGONES_SDK_HTTP_PORT", "abc"}}), {"AGONES_SDK_HTTP_PORT=abc", "whole number"});
  expectError(parse({"--scene", kScene}, {{"AGONES_SDK_HTTP_PORT", "0"}}), {"AGONES_SDK_HTTP_PORT=0", "out of range 1..65535"});
  CHECK(parse({"--scene", kScene}, {{"AGONES_SDK_HTTP_PORT", ""}}).options.agonesSdkPort == 0);
  expectError(parse({}, {{"LOAM_SCENE", "/nonexistent/s.toml"}}), {"/nonexistent/s.toml", "not found"});
  expectError(parse({"--scene", kScene}, {{"LOAM_CONFIG", "/nonexistent/c.toml"}}),
              {"LOAM_CONFIG=/nonexistent/c.toml", "not found"});
  // A bad value is reported even when a flag would override it.
  expectError(parse({"--scene", kScene, "--port", "1"}, {{"LOAM_PORT", "abc"}}), {"LOAM_PORT=abc"});
  // Variables Loam does not define are someone else's business.
  CHECK(parse({"--scene", kScene}, {{"LOAM_SOMETHING_ELSE", "1"}}).action == ParseResult::Action::Run);
}

TEST_CASE("bad config files are errors with file, line and column") {
  SUBCASE("unknown key") {
    TempConfig cfg("scene = \"" + kScene + "\"\n\ncolour = \"red\"\n");
    ParseResult r = parse({"--config", cfg.path});
    expectError(r, {cfg.path + ":3:1", "unknown key 'colour'", "known:"});
  }
  SUBCASE("a table is an unknown key too") {
    TempConfig cfg("[server]\nport = 1\n");
    expectError(parse({"--config", cfg.path, "--scene", kScene}), {"unknown key 'server'"});
  }
  SUBCASE("wrong type") {
    TempConfig cfg("port = \"7777\"\n");
    expectError(parse({"--config", cfg.path, "--scene", kScene}), {cfg.path + ":1:", "port", "whole number"});
  }
  SUBCASE("out of range") {
    TempConfig cfg("max_players = 2000\n");
    expectError(parse({"--config", cfg.path, "--scene", kScene}), {"max_players", "out of range 1..1024"});
  }
  SUBCASE("wrong type for the new keys") {
    TempConfig cfg("http_port = \"9100\"\n");
    expectError(parse({"--config", cfg.path, "--scene", kScene}), {"http_port", "whole number"});
    TempConfig cfg2("log_format = 1\n");
    expectError(parse({"--config", cfg2.path, "--scene", kScene}), {"log_format", "expected a string"});
  }
  SUBCASE("negative") {
    TempConfig cfg("save_interval = -3\n");
    expectError(parse({"--config", cfg.path, "--scene", kScene}), {"save_interval", "negative"});
  }
  SUBCASE("syntax error") {
    TempConfig cfg("port = = 1\n");
    expectError(parse({"--config", cfg.path, "--scene", kScene}), {cfg.path + ":1:", "TOML syntax error"});
  }
  SUBCASE("missing file") {
    expectError(parse({"--config", "/nonexistent/server.toml"}), {"--config /nonexistent/server.toml", "not found"});
  }
  SUBCASE("unknown scene file in the file") {
    TempConfig cfg("scene = \"/nonexistent/x.toml\"\n");
    expectError(parse({"--config", cfg.path}), {"/nonexistent/x.toml", "not found"});
  }
}

TEST_CASE("the example config file parses and sets every key") {
  const std::string example = std::string(LOAM_SOURCE_DIR) + "/server/loam-server.example.toml";
  // Its scene path is relative to the checkout, the test runs elsewhere: override it.
  ParseResult r = parse({"--config", example, "--scene", kScene});
  INFO(r.text);
  REQUIRE(r.action == ParseResult::Action::Run);
  CHECK(r.options.port == 7777);
  CHECK(r.options.saveIntervalSeconds == 300.0);
  CHECK(r.options.httpPort == 0);
  CHECK(r.options.httpBind == "127.0.0.1");
  CHECK(r.options.logFormat == "text");
}

TEST_CASE("--help documents every option, variable and key") {
  ParseResult r = parse({"--help"});
  REQUIRE(r.action == ParseResult::Action::Help);
  for (const char* flag : {"--config", "--scene", "--seed", "--port", "--bind", "--name", "--max-players", "--save-dir",
                           "--save-interval", "--bandwidth-cap", "--duration", "--stats-interval", "--http-port",
                           "--http-bind", "--log-format", "http_port", "log_format", "AGONES_SDK_HTTP_PORT", "LOAM_",
                           "save_interval", "Exit codes"}) {
    INFO(flag);
    CHECK(r.text.find(flag) != std::string::npos);
  }
  CHECK(r.text == loam::server::usageText());
}

TEST_CASE("the tick pacer catches up at most 4 ticks, then drops the backlog") {
  using Clock = loam::server::TickPacer::Clock;
  const auto period = std::chrono::milliseconds(16);
  const Clock::time_point t0{};
  loam::server::TickPacer pacer(period, 4, t0);

  // On time: one tick, then wait.
  CHECK(pacer.shouldTick(t0));
  pacer.ticked();
  CHECK_FALSE(pacer.shouldTick(t0 + std::chrono::milliseconds(5)));
  CHECK(pacer.endBurst(t0 + std::chrono::milliseconds(5)) == 0);
  CHECK(pacer.nextDue() == t0 + period);

  // 3 periods late: three ticks back to back catch up, nothing dropped.
  Clock::time_point late = t0 + 3 * period + std::chrono::milliseconds(1);
  int ran = 0;
  while (pacer.shouldTick(late)) {
    pacer.ticked();
    ++ran;
  }
  CHECK(ran == 3);
  CHECK(pacer.endBurst(late) == 0);

  // 10 periods behind: 4 ticks, then the rest of the backlog is dropped and the
  // next tick is due in the future.
  Clock::time_point stalled = pacer.nextDue() + 10 * period;
  ran = 0;
  while (pacer.shouldTick(stalled)) {
    pacer.ticked();
    ++ran;
  }
  CHECK(ran == 4);
  std::int64_t dropped = pacer.endBurst(stalled);
  CHECK(dropped == 7);
  CHECK(pacer.nextDue() > stalled);
  CHECK(pacer.nextDue() - stalled <= period);
}

TEST_CASE("an admin token under 16 bytes is refused without showing it") {
  const std::string shortToken = "tooShort-123456";  // 15 bytes
  REQUIRE(shortToken.size() + 1 == loam::server::kMinAdminTokenBytes);
  for (const ParseResult& r : {parse({"--scene", kScene, "--admin-token", shortToken}),
                               parse({"--scene", kScene}, {{"LOAM_ADMIN_TOKEN", shortToken}})}) {
    expectError(r, {"shorter than 16 bytes"});
    CHECK((r.text.find("--admin-token") != std::string::npos || r.text.find("LOAM_ADMIN_TOKEN") != std::string::npos));
    CHECK(r.text.find(shortToken) == std::string::npos);
  }
  TempConfig cfg("scene = \"" + kScene + "\"\nadmin_token = \"" + shortToken + "\"\n");
  ParseResult fromFile = parse({"--config", cfg.path});
  expectError(fromFile, {cfg.path + ":2:", "shorter than 16 bytes"});
  const std::string good = shortToken + "x";
  ParseResult ok = parse({"--scene", kScene, "--admin-token", good});
  REQUIRE(ok.action == ParseResult::Action::Run);
  CHECK(ok.options.adminToken == good);
}

TEST_CASE("--fresh-world is a switch, a variable and a file key") {
  CHECK_FALSE(parse({"--scene", kScene}).options.freshWorld);
  CHECK(parse({"--scene", kScene, "--fresh-world"}).options.freshWorld);
  CHECK(parse({"--scene", kScene}, {{"LOAM_FRESH_WORLD", "1"}}).options.freshWorld);
  CHECK_FALSE(parse({"--scene", kScene}, {{"LOAM_FRESH_WORLD", "false"}}).options.freshWorld);
  expectError(parse({"--scene", kScene}, {{"LOAM_FRESH_WORLD", "maybe"}}), {"LOAM_FRESH_WORLD=maybe", "true or false"});
  TempConfig on("scene = \"" + kScene + "\"\nfresh_world = true\n");
  CHECK(parse({"--config", on.path}).options.freshWorld);
  TempConfig bad("scene = \"" + kScene + "\"\nfresh_world = \"yes\"\n");
  expectError(parse({"--config", bad.path}), {bad.path + ":2:", "true or false"});
}
