// The operations side of loam-server: the log formatter (text unchanged, JSON lines),
// the Prometheus and status formatters, the health and readiness rules, and the
// HTTP endpoint of a real loam-server process (/readyz 503 then 200, /healthz,
// /metrics that parses with monotonic counters, /status JSON, SIGTERM exits 0).
// The endpoint's bounds, in process: a 1 GiB POST refused unread, slowloris sockets
// that never hold /healthz back, a connection flood, head and header limits.
// The binary comes from LOAM_SERVER_BIN (compile definition; the environment
// variable of the same name overrides it).
#include <doctest/doctest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "server/admin.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/ops_http.h"
#include "tests/support/process_util.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace loam::server;
using loam::test::freeTcpPort;

const std::string kScene = std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml";
constexpr auto kStartTimeout = 120s;

struct TempDir : loam::test::TempDir {
  TempDir() : loam::test::TempDir("loam_ops_http_test_") {}
};

/// A running loam-server whose stdout and stderr go to log.
struct Server : loam::test::Process {
  Server(const std::vector<std::string>& args, fs::path log)
      : Process(loam::test::binaryPath("LOAM_SERVER_BIN", LOAM_SERVER_BIN), args, std::move(log)) {}
};

/// A minimal JSON checker: one object of string keys and string / number / bool /
/// null values (what the log lines and /status hold). Fills fields with the raw text
/// of each value (strings unescaped only for \" and \\).
struct JsonObject {
  std::map<std::string, std::string> fields;
  bool ok = false;

  explicit JsonObject(const std::string& text) {
    std::size_t i = 0;
    ok = parse(text, i);
    while (ok && i < text.size() && (text[i] == '\n' || text[i] == ' ')) ++i;
    ok = ok && i == text.size();
  }

 private:
  static bool string(const std::string& t, std::size_t& i, std::string& out) {
    if (i >= t.size() || t[i] != '"') return false;
    for (++i; i < t.size(); ++i) {
      char c = t[i];
      if (c == '"') {
        ++i;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c == '\\') {
        if (++i >= t.size()) return false;
        char e = t[i];
        if (e == 'u') {
          if (i + 4 >= t.size()) return false;
          for (int k = 1; k <= 4; ++k) {
            if (!std::isxdigit(static_cast<unsigned char>(t[i + static_cast<std::size_t>(k)]))) return false;
          }
          out += '?';
          i += 4;
        } else if (std::strchr("\"\\/bfnrt", e) != nullptr) {
          out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        } else {
          return false;
        }
      } else {
        out += c;
      }
    }
    return false;
  }
  bool parse(const std::string& t, std::size_t& i) {
    if (i >= t.size() || t[i++] != '{') return false;
    if (i < t.size() && t[i] == '}') return ++i, true;
    for (;;) {
      std::string key, value;
      if (!string(t, i, key)) return false;
      if (i >= t.size() || t[i++] != ':') return false;
      if (i < t.size() && t[i] == '"') {
        if (!string(t, i, value)) return false;
        value = "\"" + value + "\"";
      } else {
        static const std::regex number(R"(^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
        std::smatch m;
        std::string rest = t.substr(i, 64);
        if (rest.rfind("true", 0) == 0 || rest.rfind("null", 0) == 0) {
          value = rest.substr(0, 4);
        } else if (rest.rfind("false", 0) == 0) {
          value = "false";
        } else if (std::regex_search(rest, m, number)) {
          value = m.str();
        } else {
          return false;
        }
        i += value.size();
      }
      if (fields.count(key)) return false;  // duplicate keys are refused by many collectors
      fields[key] = value;
      if (i >= t.size()) return false;
      if (t[i] == '}') return ++i, true;
      if (t[i++] != ',') return false;
    }
  }
};

/// Sample lines of a Prometheus text exposition: name{labels} -> value. Fails the
/// test on a line that is neither a comment nor `name{labels} value`, or a sample
/// whose family has no # TYPE line before it.
std::map<std::string, double> parseExposition(const std::string& text) {
  static const std::regex sample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)$)");
  static const std::regex comment(R"(^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$)");
  std::map<std::string, double> out;
  std::map<std::string, std::string> types;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    INFO("line: " << line);
    std::smatch m;
    if (line.rfind("#", 0) == 0) {
      REQUIRE(std::regex_match(line, m, comment));
      if (m[1] == "TYPE") types[m[2]] = line.substr(line.rfind(' ') + 1);
      continue;
    }
    REQUIRE(std::regex_match(line, m, sample));
    std::string name = m[1];
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      std::string s(suffix);
      if (!types.count(family) && family.size() > s.size() &&
          family.compare(family.size() - s.size(), s.size(), s) == 0) {
        family = family.substr(0, family.size() - s.size());
      }
    }
    CHECK(types.count(family) == 1);
    std::string key = name + m[2].str();
    CHECK(out.count(key) == 0);
    out[key] = std::stod(m[5]);
  }
  return out;
}

std::string record(LogFormat f, LogLevel level, const char* component, const char* msg, std::size_t cap = 16384) {
  std::vector<char> buf(cap);
  // 2026-11-30T17:16:32.123Z
  std::size_t n = formatLogRecord(buf.data(), buf.size(), f, 1796058992123, level, component, msg);
  return std::string(buf.data(), n);
}

}  // namespace

TEST_CASE("text log lines keep their format; other components are prefixed") {
  CHECK(record(LogFormat::Text, LogLevel::Info, "server", "listening on 1.2.3.4:5") ==
        "2026-11-30T17:16:32.123Z listening on 1.2.3.4:5\n");
  CHECK(record(LogFormat::Text, LogLevel::Warn, "agones", "sidecar failing") ==
        "2026-11-30T17:16:32.123Z agones: sidecar failing\n");
  std::string longLine = record(LogFormat::Text, LogLevel::Info, "server", std::string(5000, 'x').c_str(), 1024);
  CHECK(longLine.size() == 1024);
  CHECK(longLine.back() == '\n');
  CHECK(levelOf("error: cannot load scene") == LogLevel::Error);
  CHECK(levelOf("warning: slow") == LogLevel::Warn);
  CHECK(levelOf("the error: is not at the start") == LogLevel::Info);
}

TEST_CASE("JSON log lines are one object with time, level, component, msg and key=value fields") {
  std::string line = record(LogFormat::Json, LogLevel::Error, "http",
                            "error: cannot bind address=127.0.0.1 port=8080 ratio=0.5 path='a b' "
                            "quote=x\"y (code=-3, big=1e3) msg=ignored port=9 bad=01 tab=\t");
  INFO(line);
  REQUIRE(line.back() == '\n');
  CHECK(std::count(line.begin(), line.end(), '\n') == 1);
  JsonObject o(line);
  REQUIRE(o.ok);
  CHECK(o.fields["time"] == "\"2026-11-30T17:16:32.123Z\"");
  CHECK(o.fields["level"] == "\"error\"");
  CHECK(o.fields["component"] == "\"http\"");
  CHECK(o.fields["msg"].rfind("\"error: cannot bind", 0) == 0);
  CHECK(o.fields["address"] == "\"127.0.0.1\"");
  CHECK(o.fields["port"] == "8080");  // numbers stay numbers; the repeated key is dropped
  CHECK(o.fields["ratio"] == "0.5");
  CHECK(o.fields["path"] == "\"a b\"");
  CHECK(o.fields["quote"] == "\"x\"y\"");
  CHECK(o.fields["code"] == "-3");
  CHECK(o.fields["big"] == "1e3");
  CHECK(o.fields["bad"] == "\"01\"");  // not a JSON number: a string
  CHECK(o.fields.count("tab") == 0);   // an empty value is no field
  CHECK(line.find("\\u0009") == std::string::npos);
  CHECK(line.find("\\t") != std::string::npos);

  // Info by default; a cut record is still one closed object.
  std::string plain = record(LogFormat::Json, LogLevel::Info, "server", "stopped");
  JsonObject p(plain);
  REQUIRE(p.ok);
  CHECK(p.fields["level"] == "\"info\"");
  CHECK(p.fields["msg"] == "\"stopped\"");
  std::string control = record(LogFormat::Json, LogLevel::Info, "server", "a\x01z\x7f");
  CHECK(control.find("\\u0001") != std::string::npos);
  CHECK(JsonObject(control).ok);
  std::string big(3000, '"');
  std::string cut = record(LogFormat::Json, LogLevel::Info, "server", ("k=v " + big).c_str(), 1000);
  INFO(cut);
  CHECK(cut.size() <= 1000);
  CHECK(cut.substr(cut.size() - 3) == "\"}\n");
  CHECK(JsonObject(cut).ok);
}

TEST_CASE("health and readiness follow the phase and the heartbeat") {
  CHECK(healthAnswer(OpsPhase::Starting, 0.5).status == 200);
  CHECK(healthAnswer(OpsPhase::Starting, kStallSeconds + 1).status == 503);
  CHECK(healthAnswer(OpsPhase::Ready, 0.1).status == 200);
  CHECK(healthAnswer(OpsPhase::Ready, 0.1).body == "ok\n");
  CHECK(healthAnswer(OpsPhase::Ready, kStallSeconds + 0.5).status == 503);
  CHECK(healthAnswer(OpsPhase::Stopping, 100).status == 200);
  CHECK(readyAnswer(OpsPhase::Starting).status == 503);
  CHECK(readyAnswer(OpsPhase::Ready).status == 200);
  CHECK(readyAnswer(OpsPhase::Stopping).status == 503);

  OpsBoard board(OpsIdentity{"n", "flat", 1, 8, "0.1.0"});
  CHECK(board.phase() == OpsPhase::Starting);
  CHECK(board.secondsSinceBeat() < 5.0);
  CHECK(board.secondsSinceBeat(OpsBoard::Clock::now() + 10s) > 9.0);
  OpsSnapshot s;
  s.tick = 42;
  s.host.sent["StepBatch"] = {3, 300};
  CHECK(board.tryPublish(s));
  CHECK(board.read().tick == 42);
  CHECK(board.read().host.sent.at("StepBatch").bytes == 300);
}

TEST_CASE("Prometheus text: every family typed, histogram cumulative, traffic by type") {
  OpsIdentity id{"my \"server\"", "flat", 7, 64, "0.1.0"};
  OpsSnapshot s;
  s.tick = 600;
  s.host.players = 3;
  s.host.peers = 4;
  s.host.bytesIn = 1000;
  s.host.bytesOut = 50000;
  s.host.malformed = 2;
  s.host.illegalTransitions = 1;
  s.host.joins = 5;
  s.host.joinSecondsBuckets = {0, 1, 2, 0, 0, 0, 0, 1};  // 0.8 s, 1.5 s twice, 40 s
  s.host.joinSecondsSum = 43.8;
  s.host.joinSecondsCount = 4;
  s.host.sent["StepBatch"] = {600, 40000};
  s.host.sent["Snapshot"] = {300, 9000};
  s.host.received["Inputs"] = {900, 800};
  for (double t : {0.0001, 0.0009, 0.003, 0.02, 0.2}) s.step.add(t);
  s.overruns = 1;
  s.lastSaveSeconds = 0.25;
  s.lastSaveBytes = 4096;
  s.host.joinRateRefused = 6;
  s.host.authFailures = 3;
  s.worldBytes = 123456;
  s.modifiedBricks = 42;
  s.fireCells = 7;
  s.dbColumnsLoaded = 11;
  s.dbColumnsPagedOut = 5;
  s.dbReadProblems = 1;
  ProcessSample p{OpsPhase::Ready, 12.5, std::uint64_t{1} << 20};
  std::string text = formatPrometheus(id, s, p);
  INFO(text);
  auto m = parseExposition(text);
  CHECK(m.at("loam_players") == 3);
  CHECK(m.at("loam_peers") == 4);
  CHECK(m.at("loam_ready") == 1);
  CHECK(m.at("loam_tick") == 600);
  CHECK(m.at("loam_uptime_seconds") == 12.5);
  CHECK(m.at("loam_step_seconds_bucket{le=\"0.0005\"}") == 1);
  CHECK(m.at("loam_step_seconds_bucket{le=\"0.001\"}") == 2);
  CHECK(m.at("loam_step_seconds_bucket{le=\"0.004\"}") == 3);
  CHECK(m.at("loam_step_seconds_bucket{le=\"0.025\"}") == 4);
  CHECK(m.at("loam_step_seconds_bucket{le=\"0.1\"}") == 4);
  CHECK(m.at("loam_step_seconds_bucket{le=\"+Inf\"}") == 5);
  CHECK(m.at("loam_step_seconds_count") == 5);
  CHECK(m.at("loam_step_seconds_sum") == doctest::Approx(0.224));
  CHECK(m.at("loam_tick_overruns_total") == 1);
  CHECK(m.at("loam_received_bytes_total") == 1000);
  CHECK(m.at("loam_sent_bytes_total") == 50000);
  CHECK(m.at("loam_sent_message_bytes_total{type=\"StepBatch\"}") == 40000);
  CHECK(m.at("loam_sent_messages_total{type=\"Snapshot\"}") == 300);
  CHECK(m.at("loam_received_messages_total{type=\"Inputs\"}") == 900);
  CHECK(m.at("loam_joins_total") == 5);
  CHECK(m.at("loam_join_seconds_bucket{le=\"0.5\"}") == 0);
  CHECK(m.at("loam_join_seconds_bucket{le=\"1\"}") == 1);
  CHECK(m.at("loam_join_seconds_bucket{le=\"2\"}") == 3);
  CHECK(m.at("loam_join_seconds_bucket{le=\"30\"}") == 3);
  CHECK(m.at("loam_join_seconds_bucket{le=\"+Inf\"}") == 4);
  CHECK(m.at("loam_join_seconds_sum") == doctest::Approx(43.8));
  CHECK(m.at("loam_join_seconds_count") == 4);
  CHECK(m.at("loam_malformed_packets_total") == 2);
  CHECK(m.at("loam_illegal_transitions_total") == 1);
  CHECK(m.at("loam_save_duration_seconds") == 0.25);
  CHECK(m.at("loam_save_size_bytes") == 4096);
  CHECK(m.at("loam_resident_memory_bytes") == 1048576);
  CHECK(m.at("loam_join_rate_refused_total") == 6);
  CHECK(m.at("loam_auth_failures_total") == 3);
  CHECK(m.at("loam_world_bytes") == 123456);
  CHECK(m.at("loam_world_modified_bricks") == 42);
  CHECK(m.at("loam_fire_cells") == 7);
  CHECK(m.at("loam_db_columns_loaded_total") == 11);
  CHECK(m.at("loam_db_columns_paged_out_total") == 5);
  CHECK(m.at("loam_db_read_problems_total") == 1);
  CHECK(m.count("loam_info{name=\"my \\\"server\\\"\",scene=\"flat\",seed=\"7\",version=\"0.1.0\"}") == 1);

  // Without a memory reading the family is left out, not reported as 0.
  p.residentBytes.reset();
  CHECK(formatPrometheus(id, s, p).find("loam_resident_memory_bytes") == std::string::npos);
  CHECK(residentMemoryBytes().value_or(0) > 0);

  JsonObject status(formatStatusJson(id, s, p));
  REQUIRE(status.ok);
  CHECK(status.fields["name"] == "\"my \"server\"\"");
  CHECK(status.fields["scene"] == "\"flat\"");
  CHECK(status.fields["seed"] == "7");
  CHECK(status.fields["players"] == "3");
  CHECK(status.fields["tick"] == "600");
  CHECK(status.fields["version"] == "\"0.1.0\"");
  CHECK(status.fields["ready"] == "true");
  CHECK(status.fields.count("uptime_seconds") == 1);
}

TEST_CASE("loam-server serves /readyz, /healthz, /metrics and /status on --http-port") {
  TempDir dir;
  const int httpPort = freeTcpPort();
  Server server({"--scene", kScene, "--port", "0", "--bind", "127.0.0.1", "--save-dir", (dir.path / "saves").string(),
                 "--save-interval", "0", "--stats-interval", "0", "--http-port", std::to_string(httpPort)},
                dir.path / "server.log");
  httplib::Client http("127.0.0.1", httpPort);
  http.set_connection_timeout(1, 0);
  http.set_read_timeout(5, 0);

  // 1. Not ready while the world is generated (503, or no answer in the first
  //    milliseconds), alive all the same; then ready.
  bool sawNotReady = false, saw503 = false, sawStartingHealth = false, ready = false;
  auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (!ready && std::chrono::steady_clock::now() < deadline && server.running()) {
    auto res = http.Get("/readyz");
    if (!res) {
      sawNotReady = true;
    } else if (res->status == 503) {
      sawNotReady = saw503 = true;
      CHECK(res->body == "starting\n");
      if (auto h = http.Get("/healthz"); h && h->status == 200 && h->body == "starting\n") sawStartingHealth = true;
    } else {
      REQUIRE(res->status == 200);
      CHECK(res->body == "ready\n");
      ready = true;
    }
    if (!ready) std::this_thread::sleep_for(50ms);
  }
  INFO("log:\n" << server.log());
  REQUIRE(ready);
  CHECK(sawNotReady);
  CHECK(saw503);  // the endpoint is up before the world is generated
  CHECK(sawStartingHealth);
  CHECK(server.log().find("listening on 127.0.0.1:") != std::string::npos);

  // 2. Alive.
  auto health = http.Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  CHECK(health->body == "ok\n");

  // 3. Metrics parse, hold what operators watch, and counters only go up.
  auto scrape = [&] {
    auto res = http.Get("/metrics");
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(res->get_header_value("Content-Type").find("version=0.0.4") != std::string::npos);
    INFO(res->body);
    return parseExposition(res->body);
  };
  auto first = scrape();
  std::this_thread::sleep_for(1500ms);
  auto second = scrape();
  for (const char* name : {"loam_players", "loam_peers", "loam_step_seconds_bucket{le=\"+Inf\"}",
                           "loam_step_seconds_sum", "loam_step_seconds_count", "loam_tick_overruns_total",
                           "loam_received_bytes_total", "loam_sent_bytes_total", "loam_joins_total",
                           "loam_malformed_packets_total", "loam_flooded_packets_total", "loam_save_duration_seconds",
                           "loam_save_size_bytes", "loam_resident_memory_bytes", "loam_uptime_seconds",
                           "loam_join_rate_refused_total", "loam_auth_failures_total", "loam_world_bytes",
                           "loam_world_modified_bricks", "loam_fire_cells"}) {
    INFO(name);
    CHECK(second.count(name) == 1);
  }
  CHECK(second.at("loam_ready") == 1);
  CHECK(second.at("loam_players") == 0);
  CHECK(second.at("loam_resident_memory_bytes") > 1e6);
  CHECK(second.at("loam_world_bytes") > 1e5);  // the generated world's store
  auto endsWith = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const auto& entry : first) {
    const std::string& key = entry.first;  // not a structured binding: clang 14 cannot capture one in INFO
    const auto& value = entry.second;
    std::string name = key.substr(0, key.find('{'));
    bool monotonic = endsWith(name, "_total") || endsWith(name, "_bucket") || endsWith(name, "_count") ||
                     endsWith(name, "_sum") || name == "loam_tick" || name == "loam_uptime_seconds";
    if (!monotonic) continue;
    INFO(key);
    REQUIRE(second.count(key) == 1);
    CHECK(second.at(key) >= value);
  }
  // 1.5 s at 60 Hz: the step keeps publishing.
  CHECK(second.at("loam_step_seconds_count") >= first.at("loam_step_seconds_count") + 30);
  CHECK(second.at("loam_tick") >= first.at("loam_tick") + 30);
  CHECK(second.at("loam_uptime_seconds") > first.at("loam_uptime_seconds"));

  // 4. Status.
  auto status = http.Get("/status");
  REQUIRE(status);
  CHECK(status->status == 200);
  CHECK(status->get_header_value("Content-Type") == "application/json");
  JsonObject st(status->body);
  INFO(status->body);
  REQUIRE(st.ok);
  CHECK(st.fields["scene"] == "\"flat\"");
  CHECK(st.fields["name"] == "\"loam\"");
  CHECK(st.fields["seed"] == "1");
  CHECK(st.fields["players"] == "0");
  CHECK(st.fields["ready"] == "true");
  CHECK(std::stod(st.fields["tick"]) > 0);
  CHECK(std::stod(st.fields["uptime_seconds"]) > 0);
  CHECK(st.fields["version"].size() > 2);

  auto missing = http.Get("/nothing");
  REQUIRE(missing);
  CHECK(missing->status == 404);

  // 5. SIGTERM: saves, exits 0 and the endpoint is gone.
  REQUIRE(::kill(server.pid, SIGTERM) == 0);
  int rc = server.wait(60s);
  std::string log = server.log();
  INFO("log:\n" << log);
  CHECK(rc == 0);
  CHECK(log.find("http: serving /healthz /readyz /metrics /status on address=127.0.0.1 port=" +
                 std::to_string(httpPort)) != std::string::npos);
  CHECK(log.find("stopped") != std::string::npos);
  httplib::Client after("127.0.0.1", httpPort);
  after.set_connection_timeout(1, 0);
  CHECK_FALSE(after.Get("/healthz"));
}

TEST_CASE("loam-server --log-format json writes one JSON object per line") {
  TempDir dir;
  Server server({"--scene", kScene, "--port", "0", "--bind", "127.0.0.1", "--save-dir", (dir.path / "saves").string(),
                 "--duration", "0.5", "--log-format", "json"},
                dir.path / "server.log");
  int rc = server.wait(kStartTimeout);
  std::string log = server.log();
  INFO("log:\n" << log);
  CHECK(rc == 0);
  std::istringstream in(log);
  std::string line;
  int lines = 0;
  bool sawListening = false;
  while (std::getline(in, line)) {
    INFO(line);
    JsonObject o(line);
    REQUIRE(o.ok);
    CHECK(o.fields.count("time") == 1);
    CHECK(o.fields["level"] == "\"info\"");
    CHECK(o.fields["component"] == "\"server\"");
    if (o.fields["msg"].find("listening on 127.0.0.1:") != std::string::npos) sawListening = true;
    ++lines;
  }
  CHECK(lines >= 5);
  CHECK(sawListening);
}

TEST_CASE("an HTTP port that is taken is a runtime failure (exit 1)") {
  TempDir dir;
  loam::test::LoopbackSocket taken(SOCK_STREAM);  // held until the server gave up
  REQUIRE(::listen(taken.fd, 1) == 0);
  Server server({"--scene", kScene, "--port", "0", "--save-dir", (dir.path / "saves").string(), "--http-port",
                 std::to_string(taken.port)},
                dir.path / "server.log");
  int rc = server.wait(60s);
  INFO("log:\n" << server.log());
  CHECK(rc == 1);
  CHECK(server.log().find("error: cannot listen for HTTP on 127.0.0.1:") != std::string::npos);
}

namespace {

/// A TCP connection to 127.0.0.1:port (blocking, with a receive timeout).
struct RawClient {
  int fd = -1;
  explicit RawClient(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~RawClient() {
    if (fd >= 0) ::close(fd);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  bool send(const std::string& bytes) { return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()); }
  /// Everything until the server closes or timeout passes.
  std::string readAll(std::chrono::milliseconds timeout) {
    std::string got;
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      timeval tv{0, 50000};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      char buf[4096];
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0) {
        got.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        break;
      }
    }
    return got;
  }
};

/// One raw request; the status of the answer (0 = none within timeout).
int statusOf(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return 0;
  return std::stoi(response.substr(9, 3));
}

int requestStatus(int port, const std::string& request, std::chrono::milliseconds timeout = 2000ms) {
  RawClient c(port);
  c.send(request);
  return statusOf(c.readAll(timeout));
}

const std::string kAdminToken = "0123456789abcdef-ops-test";

/// An ops endpoint on a free port with /admin on, and a "step thread" that answers
/// every admin command with its own text.
struct OpsFixture {
  OpsBoard board{OpsIdentity{"n", "flat", 1, 8, "0.1.0"}};
  AdminQueue queue;
  std::unique_ptr<OpsHttpServer> http;
  std::atomic<bool> stop{false};
  std::thread step;
  int port = 0;

  OpsFixture() {
    auto started = OpsHttpServer::start("127.0.0.1", 0, board, kAdminToken, &queue);
    REQUIRE(started);
    http = std::move(*started);
    port = http->port();
    REQUIRE(port != 0);
    board.setPhase(OpsPhase::Ready);
    step = std::thread([this] {
      std::vector<AdminRequest> taken;
      while (!stop.load()) {
        board.beat();
        queue.tryTake(taken);
        for (AdminRequest& r : taken) r.reply.set_value(AdminReply{true, "ran " + r.line});
        taken.clear();
        std::this_thread::sleep_for(5ms);
      }
    });
  }
  ~OpsFixture() {
    stop = true;
    step.join();
    http.reset();
  }
};

}  // namespace

TEST_CASE("ops endpoint: a 1 GiB POST is refused with 413 at once, unread, and memory stays flat") {
  OpsFixture ops;
  const std::uint64_t rssBefore = residentMemoryBytes().value_or(0);
  REQUIRE(rssBefore > 0);
  for (const char* path : {"/admin", "/healthz"}) {
    INFO(path);
    RawClient c(ops.port);
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(c.send(std::string("POST ") + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + kAdminToken +
                   "\r\nContent-Length: 1073741824\r\n\r\n"));
    // Some of the body, as a slow attacker would (the rest never comes).
    c.send(std::string(64 * 1024, 'x'));
    std::string response = c.readAll(1000ms);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(response);
    CHECK(statusOf(response) == 413);
    CHECK(seconds < 1.0);
  }
  // A GET announcing a body is refused the same way; chunked POSTs are refused.
  CHECK(requestStatus(ops.port, "GET /metrics HTTP/1.1\r\nContent-Length: 1073741824\r\n\r\n") == 413);
  CHECK(requestStatus(ops.port, "GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello") == 413);
  CHECK(requestStatus(ops.port, "POST /admin HTTP/1.1\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer " +
                               kAdminToken + "\r\n\r\n40000000\r\n") == 411);
  const std::uint64_t rssAfter = residentMemoryBytes().value_or(0);
  CHECK(rssAfter < rssBefore + 16 * 1024 * 1024);
  // The endpoint still serves, and an honest admin command runs.
  const std::string line = "say hello";
  RawClient c(ops.port);
  c.send("POST /admin HTTP/1.1\r\nAuthorization: Bearer " + kAdminToken + "\r\nContent-Length: " +
         std::to_string(line.size()) + "\r\n\r\n" + line);
  std::string response = c.readAll(2000ms);
  CHECK(statusOf(response) == 200);
  CHECK(response.find("ran say hello") != std::string::npos);
}

TEST_CASE("ops endpoint: slowloris sockets and a connection flood never hold /healthz back") {
  OpsFixture ops;
  // 8 sockets that send a header byte every 500 ms.
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 8; ++i) {
    slow.push_back(std::make_unique<RawClient>(ops.port));
    slow.back()->send("GET /healthz HTTP/1.1\r\nX-Slow: ");
  }
  std::atomic<bool> done{false};
  std::thread dribble([&] {
    while (!done.load()) {
      for (auto& s : slow) s->send("a");
      std::this_thread::sleep_for(500ms);
    }
  });
  httplib::Client http("127.0.0.1", ops.port);
  http.set_connection_timeout(1, 0);
  http.set_read_timeout(1, 0);
  double slowest = 0;
  for (int i = 0; i < 10; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto res = http.Get("/healthz");
    slowest = std::max(slowest, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(res->body == "ok\n");
    std::this_thread::sleep_for(300ms);
  }
  done = true;
  dribble.join();
  CHECK(slowest < 1.0);
  // The whole-request deadline ended them: each was answered 408 and closed.
  for (auto& s : slow) CHECK(statusOf(s->readAll(500ms)) == 408);

  // A flood of idle connections (far past both caps): the oldest make room for a probe.
  std::vector<std::unique_ptr<RawClient>> flood;
  for (std::size_t i = 0; i < kOpsMaxConnections + 20; ++i) flood.push_back(std::make_unique<RawClient>(ops.port));
  std::this_thread::sleep_for(100ms);
  const auto t0 = std::chrono::steady_clock::now();
  auto res = http.Get("/readyz");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 1.0);
}

TEST_CASE("ops endpoint: heads are bounded and strictly parsed") {
  OpsFixture ops;
  CHECK(requestStatus(ops.port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n") == 200);
  CHECK(requestStatus(ops.port, "GET /healthz?probe=1 HTTP/1.0\r\n\r\n") == 200);
  CHECK(requestStatus(ops.port, "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(kOpsMaxHeadBytes, 'a') + "\r\n\r\n") ==
        431);
  std::string many = "GET /healthz HTTP/1.1\r\n";
  for (std::size_t i = 0; i <= kOpsMaxHeaders; ++i) many += "X-" + std::to_string(i) + ": 1\r\n";
  CHECK(requestStatus(ops.port, many + "\r\n") == 431);
  CHECK(requestStatus(ops.port, "GET /healthz\r\n\r\n") == 400);
  CHECK(requestStatus(ops.port, "GET  /healthz HTTP/1.1\r\n\r\n") == 400);
  CHECK(requestStatus(ops.port, "GET /healthz HTTP/2.0\r\n\r\n") == 505);
  CHECK(requestStatus(ops.port, "GET /healthz HTTP/1.1\r\n folded: x\r\n\r\n") == 400);
  CHECK(requestStatus(ops.port, "GET /healthz HTTP/1.1\r\nBad Name: x\r\n\r\n") == 400);
  CHECK(requestStatus(ops.port, "POST /admin HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx") == 400);
  CHECK(requestStatus(ops.port, "POST /admin HTTP/1.1\r\nContent-Length: +1\r\n\r\nx") == 400);
  CHECK(requestStatus(ops.port, "DELETE /admin HTTP/1.1\r\n\r\n") == 405);
  CHECK(requestStatus(ops.port, "GET /admin HTTP/1.1\r\n\r\n") == 405);
  CHECK(requestStatus(ops.port, "GET /nothing HTTP/1.1\r\n\r\n") == 404);
  CHECK(requestStatus(ops.port, "POST /admin HTTP/1.1\r\nAuthorization: Bearer " + kAdminToken + "\r\n\r\n") == 411);
  // The token is checked before the body is read: a wrong one is 401 with the body unsent.
  CHECK(requestStatus(ops.port, "POST /admin HTTP/1.1\r\nAuthorization: Bearer wrong\r\nContent-Length: 100\r\n\r\n") ==
        401);
  // A head that never ends is cut off at the request deadline.
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(requestStatus(ops.port, "GET /healthz HTTP/1.1\r\n", 4000ms) == 408);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(seconds < 3.5);
}
