// Every attacker of bots/attack.h against a real loam-server for a few seconds, all at
// once, each mode from its own address (127.0.0.2-6: the per-address cap would
// otherwise let the first mode crowd out the rest): the server survives, every
// attacker did its part, and an honest full bot from 127.0.0.1 joins meanwhile and
// plays without a desync. Binaries from
// LOAM_SERVER_BIN / LOAM_BOTS_BIN (compile definitions; environment variables of the
// same name override them).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bots/attack.h"
#include "tests/support/process_util.h"
#include "tests/support/sanitizer_scale.h"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using loam::bots::Attack;
using loam::bots::AttackMode;

// Under the sanitizers (the asan-net preset runs this suite too) everything costs a
// few times more: the bot's run and its join budget are 3x there.
constexpr int kBudgetScale = loam::test::kSanitizerScale;

// The number after the first "key": in text from `from`, or -1 when absent.
double jsonNumber(const std::string& text, const std::string& key, std::size_t from = 0) {
  const std::size_t at = text.find("\"" + key + "\": ", from);
  if (at == std::string::npos || from == std::string::npos) return -1;
  return std::stod(text.substr(at + key.size() + 4));
}

}  // namespace

TEST_CASE("attackers of every mode: the server survives and an honest full bot still joins") {
  loam::test::TempDir dir("loam_attack_smoke_test_");
  const int gamePort = loam::test::freeUdpPort();
  loam::test::Process server(loam::test::binaryPath("LOAM_SERVER_BIN", LOAM_SERVER_BIN),
                             {"--scene", std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml", "--port",
                              std::to_string(gamePort), "--bind", "0.0.0.0", "--save-dir",
                              (dir.path / "saves").string(), "--save-interval", "0", "--stats-interval", "0"},
                             dir.path / "server.log");
  REQUIRE(server.waitForLog("listening on", 60s));

  struct Group {
    AttackMode mode;
    std::uint32_t count;
    const char* from;
  };
  const std::vector<Group> groups{{AttackMode::ConnectOnly, 20, "127.0.0.2"},
                                  {AttackMode::HelloOnly, 10, "127.0.0.3"},
                                  {AttackMode::JoinSpam, 4, "127.0.0.4"},
                                  {AttackMode::Garbage, 4, "127.0.0.5"},
                                  {AttackMode::Speed, 2, "127.0.0.6"}};
  const Clock::time_point start = Clock::now();
  auto nowMs = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
  std::vector<std::unique_ptr<Attack>> attacks;
  for (const Group& g : groups) {
    loam::bots::AttackConfig cfg;
    cfg.mode = g.mode;
    cfg.port = static_cast<std::uint16_t>(gamePort);
    cfg.bind = g.from;
    cfg.count = g.count;
    cfg.seed = 7 + attacks.size();
    cfg.namePrefix = std::string("atk-") + loam::bots::attackModeName(g.mode) + "-";
    auto opened = Attack::open(cfg, nowMs());
    REQUIRE_MESSAGE(opened.has_value(), (opened ? "" : opened.error().message));
    attacks.push_back(std::move(*opened));
  }
  auto serviceFor = [&](auto until) {
    Clock::time_point next = Clock::now();
    while (!until()) {
      for (auto& a : attacks) a->service(nowMs(), true);
      next += 16667us;
      std::this_thread::sleep_until(next);
    }
  };
  // Attackers first, so the honest bot arrives at a server already under attack.
  serviceFor([&] { return Clock::now() - start > 2s; });

  const auto report = dir.path / "bot.json";
  loam::test::Process bot(loam::test::binaryPath("LOAM_BOTS_BIN", LOAM_BOTS_BIN),
                          {"--server", "127.0.0.1:" + std::to_string(gamePort), "--mode", "full", "--count", "1",
                           "--duration", std::to_string(8 * kBudgetScale), "--scenes",
                           std::string(LOAM_SOURCE_DIR) + "/scenes", "--report", report.string()},
                          dir.path / "bot.log");
  // The attackers keep going on their own thread while this one waits for the bot.
  std::atomic<bool> stop{false};
  std::thread attackers([&] { serviceFor([&] { return stop.load(); }); });
  const int rc = bot.wait(std::chrono::seconds(40 * kBudgetScale));
  stop = true;
  attackers.join();
  for (auto& a : attacks) a->close(200);

  INFO("bot log:\n" << bot.log());
  INFO("server log (tail):\n" << server.log().substr(server.log().size() > 4000 ? server.log().size() - 4000 : 0));
  CHECK(server.running());
  CHECK(rc == 0);
  const std::string json = loam::test::readText(report);
  REQUIRE(!json.empty());
  const std::size_t totals = json.find("\"totals\"");
  CHECK(jsonNumber(json, "ok", totals) == 1);
  CHECK(jsonNumber(json, "desyncs", totals) == 0);
  const double joinMs = jsonNumber(json, "join_ms");
  CHECK(joinMs > 0);
  CHECK(joinMs < 6000 * kBudgetScale);

  // Each attacker did its part and the server answered it.
  for (std::size_t i = 0; i < attacks.size(); ++i) {
    const loam::bots::AttackStats& s = attacks[i]->stats();
    INFO(loam::bots::attackReportJson(attacks[i]->config(), s, nowMs() / 1000));
    CHECK(s.connectAttempts >= groups[i].count);
    switch (groups[i].mode) {
      case AttackMode::ConnectOnly:
        CHECK(s.messagesSent == 0);
        CHECK(s.rejected + s.connectFailed >= 1);  // 20 from one address: the cap refuses some
        break;
      case AttackMode::HelloOnly: CHECK(s.hellos >= 1); break;
      case AttackMode::JoinSpam: CHECK(s.joins + s.rejected >= 2); break;  // joined and left, or was refused
      case AttackMode::Garbage:
        CHECK(s.messagesSent > 100);
        CHECK(s.rejected + s.dropped >= 1);  // the server ended garbage sessions
        break;
      case AttackMode::Speed: CHECK(s.joins + s.rejected >= 1); break;
    }
  }
}
