// The admin console of a real loam-server: POST /admin with a token (401 without,
// 429 after repeated failures, 404 when no token is configured), say, time, stats,
// players with a swarm bot, kick, ban (the banned bot is refused), save, the token
// never logged, and `loam-tool admin` against it; on a big world, columns paged out
// after a commit and loaded again for a teleported bot. Binaries from LOAM_SERVER_BIN,
// LOAM_BOTS_BIN and LOAM_TOOL_BIN (compile definitions; environment variables of the
// same names override them).
#include <doctest/doctest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "server/admin.h"
#include "tests/support/process_util.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kScene = std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml";
const std::string kToken = "s3cret-Adm1n-T0ken";

struct Reply {
  int status = 0;  ///< 0 = no answer
  std::string body;
};

Reply post(int port, const std::string& line, const std::string& token) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10, 0);
  httplib::Headers h;
  if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
  auto res = c.Post("/admin", h, line, "text/plain");
  if (!res) return {};
  return {res->status, res->body};
}

/// Polls `players` until its reply does (or does not) contain name.
bool waitPlayers(int port, const std::string& name, bool present, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    Reply r = post(port, "players", kToken);
    if (r.status == 200 && (r.body.find(name) != std::string::npos) == present) return true;
    std::this_thread::sleep_for(200ms);
  }
  return false;
}

std::vector<std::string> serverArgs(const fs::path& dir, int gamePort, int httpPort) {
  return {"--scene", kScene, "--port", std::to_string(gamePort), "--bind", "127.0.0.1", "--save-dir",
          (dir / "saves").string(), "--save-interval", "0", "--stats-interval", "0", "--http-port",
          std::to_string(httpPort)};
}

}  // namespace

TEST_CASE("admin console over HTTP and loam-tool admin") {
  loam::test::TempDir dir("loam_admin_test_");
  const int gamePort = loam::test::freeUdpPort();
  const int httpPort = loam::test::freeTcpPort();
  std::vector<std::string> args = serverArgs(dir.path, gamePort, httpPort);
  args.insert(args.end(), {"--admin-token", kToken});
  loam::test::Process server(loam::test::binaryPath("LOAM_SERVER_BIN", LOAM_SERVER_BIN), args,
                             dir.path / "server.log");
  REQUIRE(server.waitForLog("listening on", 60s));

  Reply r = post(httpPort, "say hello", kToken);
  CHECK(r.status == 200);
  CHECK(r.body.find("hello") != std::string::npos);
  r = post(httpPort, "time 06:30", kToken);
  CHECK(r.status == 200);
  std::this_thread::sleep_for(100ms);  // the command goes into the next tick
  r = post(httpPort, "stats", kToken);
  CHECK(r.status == 200);
  CHECK(r.body.find("time 06:3") != std::string::npos);  // a game minute is under a second
  r = post(httpPort, "time 25:00", kToken);
  CHECK(r.status == 400);
  r = post(httpPort, "weather 500 90 300", kToken);
  CHECK(r.status == 200);
  r = post(httpPort, "frobnicate", kToken);
  CHECK(r.status == 400);

  SUBCASE("players, kick, ban, save, loam-tool, then wrong tokens") {
    // A swarm bot joins and is listed, then kicked.
    loam::test::Process bot(loam::test::binaryPath("LOAM_BOTS_BIN", LOAM_BOTS_BIN),
                            {"--server", "127.0.0.1:" + std::to_string(gamePort), "--mode", "swarm", "--count", "1",
                             "--duration", "20", "--name-prefix", "alice"},
                            dir.path / "bot1.log");
    REQUIRE(waitPlayers(httpPort, "alice1", true, 15s));
    r = post(httpPort, "players", kToken);
    CHECK(r.body.find("1 player(s)") != std::string::npos);
    CHECK(r.body.find("127.0.0.1:") != std::string::npos);
    r = post(httpPort, "kick alice1 testing", kToken);
    CHECK(r.status == 200);
    CHECK(waitPlayers(httpPort, "alice1", false, 10s));
    CHECK(post(httpPort, "kick nobody", kToken).status == 400);
    bot.wait(25s);

    // Banned by name: a new bot with that name is refused, and the ban is on disk.
    r = post(httpPort, "ban alice1 griefing", kToken);
    CHECK(r.status == 200);
    CHECK(loam::test::readText(dir.path / "saves" / "bans.txt").find("alice1 griefing") != std::string::npos);
    loam::test::Process banned(loam::test::binaryPath("LOAM_BOTS_BIN", LOAM_BOTS_BIN),
                               {"--server", "127.0.0.1:" + std::to_string(gamePort), "--mode", "swarm", "--count",
                                "1", "--duration", "4", "--name-prefix", "alice"},
                               dir.path / "bot2.log");
    CHECK(server.waitForLog("banned: griefing", 10s));
    CHECK(post(httpPort, "players", kToken).body.find("alice1") == std::string::npos);
    banned.wait(15s);
    CHECK(post(httpPort, "unban alice1", kToken).status == 200);
    CHECK(post(httpPort, "unban alice1", kToken).status == 400);

    // Banned by address: refused at connect, whatever the name.
    CHECK(post(httpPort, "ban 127.0.0.1 loopback-test", kToken).status == 200);
    loam::test::Process byAddress(loam::test::binaryPath("LOAM_BOTS_BIN", LOAM_BOTS_BIN),
                                  {"--server", "127.0.0.1:" + std::to_string(gamePort), "--mode", "swarm", "--count",
                                   "1", "--duration", "4", "--name-prefix", "bob"},
                                  dir.path / "bot3.log");
    CHECK(server.waitForLog("banned: loopback-test", 10s));
    CHECK(post(httpPort, "players", kToken).body.find("bob1") == std::string::npos);
    byAddress.wait(15s);
    CHECK(post(httpPort, "unban 127.0.0.1", kToken).status == 200);

    // save now commits to the world database.
    r = post(httpPort, "save", kToken);
    CHECK(r.status == 200);
    CHECK(server.waitForLog("committed tick ", 5s));

    // loam-tool admin: ok, bad usage (no token), then refused (wrong token).
    const std::string tool = loam::test::binaryPath("LOAM_TOOL_BIN", LOAM_TOOL_BIN);
    const std::string where = "127.0.0.1:" + std::to_string(httpPort);
    loam::test::Process ok(tool, {"admin", "--server", where, "--token", kToken, "stats"}, dir.path / "tool1.log");
    CHECK(ok.wait(20s) == 0);
    CHECK(ok.log().find("tick ") != std::string::npos);
    loam::test::Process usage(tool, {"admin", "--server", where, "stats"}, dir.path / "tool2.log", {},
                              {"LOAM_ADMIN_TOKEN"});
    CHECK(usage.wait(20s) == 2);
    loam::test::Process viaEnv(tool, {"admin", "--server", where, "say", "from", "the", "tool"},
                               dir.path / "tool3.log", {"LOAM_ADMIN_TOKEN=" + kToken});
    CHECK(viaEnv.wait(20s) == 0);
    CHECK(viaEnv.log().find("from the tool") != std::string::npos);
    loam::test::Process wrong(tool, {"admin", "--server", where, "--token", "nope", "stats"}, dir.path / "tool4.log");
    CHECK(wrong.wait(20s) == 1);

    // Wrong tokens: 401 (one went above), then 429 for the address, even with the right one.
    CHECK(post(httpPort, "stats", "").status == 401);
    CHECK(post(httpPort, "stats", "s3cret").status == 401);
    CHECK(post(httpPort, "stats", kToken + "x").status == 401);
    CHECK(post(httpPort, "stats", "wrong").status == 401);
    CHECK(post(httpPort, "stats", "wrong").status == 429);
    CHECK(post(httpPort, "stats", kToken).status == 429);
  }

  ::kill(server.pid, SIGTERM);
  CHECK(server.wait(30s) == 0);
  const std::string log = server.log();
  INFO("server log:\n" << log);
  CHECK(log.find(kToken) == std::string::npos);
  CHECK(log.find("admin: who=127.0.0.1 command=say result=ok") != std::string::npos);
  CHECK(log.find("command=kick result=ok") != std::string::npos);
  CHECK(log.find("refused: rate limited") != std::string::npos);
}

TEST_CASE("no admin token: /admin is 404") {
  loam::test::TempDir dir("loam_admin_test_");
  const int httpPort = loam::test::freeTcpPort();
  loam::test::Process server(loam::test::binaryPath("LOAM_SERVER_BIN", LOAM_SERVER_BIN),
                             serverArgs(dir.path, loam::test::freeUdpPort(), httpPort), dir.path / "server.log",
                             {}, {"LOAM_ADMIN_TOKEN"});
  REQUIRE(server.waitForLog("listening on", 60s));
  CHECK(post(httpPort, "stats", "anything").status == 404);
  CHECK(post(httpPort, "stats", "").status == 404);
}

TEST_CASE("admin pieces: constant-time compare, rate limiter, ban file") {
  using namespace loam::server;
  CHECK(tokensEqual("abc", "abc"));
  CHECK_FALSE(tokensEqual("abc", "abd"));
  CHECK_FALSE(tokensEqual("abc", "abcd"));
  CHECK_FALSE(tokensEqual("", "a"));

  AdminRateLimiter limiter;
  const auto t0 = AdminRateLimiter::Clock::now();
  for (int i = 0; i < AdminRateLimiter::kMaxFailures - 1; ++i) limiter.failure("1.2.3.4", t0);
  CHECK_FALSE(limiter.blocked("1.2.3.4", t0));
  limiter.failure("1.2.3.4", t0);
  CHECK(limiter.blocked("1.2.3.4", t0 + 30s));
  CHECK_FALSE(limiter.blocked("5.6.7.8", t0 + 30s));
  CHECK_FALSE(limiter.blocked("1.2.3.4", t0 + 61s));
  // Failures spread over more than a minute never block.
  for (int i = 0; i < 10; ++i) limiter.failure("9.9.9.9", t0 + std::chrono::seconds(20 * i));
  CHECK_FALSE(limiter.blocked("9.9.9.9", t0 + 200s));

  loam::test::TempDir dir("loam_admin_bans_");
  const std::string path = (dir.path / "bans.txt").string();
  {
    BanList bans(path);
    CHECK(bans.size() == 0);
    CHECK(bans.add("mallory", "spam and worse"));
    CHECK(bans.add("10.0.0.5", ""));
  }
  BanList reloaded(path);
  CHECK(reloaded.size() == 2);
  CHECK(reloaded.check("127.0.0.1", "mallory") == "banned: spam and worse");
  CHECK(reloaded.check("127.0.0.1", "MALLORY") == "banned: spam and worse");  // names match folded
  CHECK(reloaded.check("10.0.0.5", "") == "banned");
  CHECK(reloaded.check("127.0.0.1", "alice") == "");
  auto removed = reloaded.remove("Mallory");
  REQUIRE(removed);
  CHECK(*removed == true);
  CHECK(*reloaded.remove("mallory") == false);
  CHECK(BanList(path).size() == 1);

  // A name with spaces and quotes survives the file.
  CHECK(reloaded.add("Big \"Bad\" Wolf", "huffing"));
  BanList again(path);
  CHECK(again.check("1.1.1.1", "big \"bad\" wolf") == "banned: huffing");
  CHECK(fs::exists(path));
  CHECK_FALSE(fs::exists(path + ".tmp"));
}

TEST_CASE("a ban that cannot be saved is reported, and changes nothing") {
  using namespace loam::server;
  loam::test::TempDir dir("loam_admin_bans_");
  const fs::path folder = dir.path / "saves";
  fs::create_directories(folder);
  const std::string path = (folder / "bans.txt").string();
  BanList bans(path);
  REQUIRE(bans.add("eve", "first"));
  // A folder where the temp file must go makes every write fail (also as root).
  fs::create_directories(path + ".tmp");
  auto added = bans.add("mallory", "");
  REQUIRE_FALSE(added);
  CHECK(added.error().message.find("bans.txt") != std::string::npos);
  CHECK(bans.check("1.2.3.4", "mallory") == "");
  auto removed = bans.remove("eve");
  REQUIRE_FALSE(removed);  // not reported as unbanned
  CHECK(bans.check("1.2.3.4", "eve") == "banned: first");
  fs::remove(path + ".tmp");
  CHECK(*bans.remove("eve"));
  CHECK(BanList(path).size() == 0);
}

TEST_CASE("the failure limiter evicts its stalest addresses, never all") {
  using namespace loam::server;
  AdminRateLimiter limiter;
  const auto t0 = AdminRateLimiter::Clock::now();
  for (int i = 0; i < AdminRateLimiter::kMaxFailures; ++i) limiter.failure("6.6.6.6", t0);
  REQUIRE(limiter.blocked("6.6.6.6", t0));
  // A spray of other addresses, far past the cap; the blocked one keeps failing too.
  for (std::size_t i = 0; i < AdminRateLimiter::kMaxAddresses + 500; ++i) {
    limiter.failure("10." + std::to_string(i >> 16) + "." + std::to_string((i >> 8) & 255) + "." +
                        std::to_string(i & 255),
                    t0);
    if (i % 1000 == 0) limiter.failure("6.6.6.6", t0);
  }
  CHECK(limiter.size() == AdminRateLimiter::kMaxAddresses);
  CHECK(limiter.blocked("6.6.6.6", t0 + std::chrono::seconds(30)));
}

TEST_CASE("admin commands name one player: #ID or the exact name, quoted when it has spaces") {
  using namespace loam::server;
  auto words = splitCommandLine(R"(kick "Big \"B\" Wolf"  for  huffing)");
  REQUIRE(words);
  CHECK(*words == std::vector<std::string>{"kick", "Big \"B\" Wolf", "for", "huffing"});
  CHECK_FALSE(splitCommandLine("kick \"open"));
  CHECK(quoteWord("a b") == "\"a b\"");
  CHECK(quoteWord("plain") == "plain");
  CHECK(*splitCommandLine(quoteWord("x \"y\" \\z")) == std::vector<std::string>{"x \"y\" \\z"});

  using loam::net::PeerInfo;
  using loam::sim::PlayerId;
  std::vector<PeerInfo> players{{PlayerId{3}, "ann", "1.1.1.1:1", 0},
                                {PlayerId{7}, "Big Wolf", "1.1.1.2:1", 0},
                                {PlayerId{9}, "bob", "1.1.1.3:1", 0},
                                {PlayerId{12}, "BOB", "1.1.1.4:1", 0}};
  CHECK(findPlayer(players, "#7")->name == "Big Wolf");
  CHECK(findPlayer(players, "ANN")->id.value == 3);
  CHECK(findPlayer(players, "big wolf")->id.value == 7);
  auto byDigits = findPlayer(players, "7");  // a bare number is a name, and none is all digits
  REQUIRE_FALSE(byDigits);
  CHECK(byDigits.error().message.find("#7") != std::string::npos);
  CHECK_FALSE(findPlayer(players, "#8"));
  CHECK_FALSE(findPlayer(players, "#x"));
  CHECK_FALSE(findPlayer(players, "an"));  // exact, not a prefix
  auto twice = findPlayer(players, "bob");  // two sessions under one folded name
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message.find("ambiguous") != std::string::npos);
  CHECK(twice.error().message.find("#9, #12") != std::string::npos);
}

TEST_CASE("a big world pages out committed columns nobody is near and loads them again for a player who returns") {
  // A full bot digs and builds by highlands' spawn; the admin commits and teleports it
  // 1 km away; the server pages the edited columns out (nobody within 192 m) and, when
  // the bot is teleported back, loads them from the database's rows (the step reads
  // them, the bot's catch-up sends the cell whole). A wrong page-in shows as the bot's
  // desync: loam-bots exits 1.
  loam::test::TempDir dir("loam_admin_test_");
  const int gamePort = loam::test::freeUdpPort();
  const int httpPort = loam::test::freeTcpPort();
  std::vector<std::string> args = serverArgs(dir.path, gamePort, httpPort);
  args[1] = std::string(LOAM_SOURCE_DIR) + "/scenes/highlands.toml";
  args.insert(args.end(), {"--admin-token", kToken});
  loam::test::Process server(loam::test::binaryPath("LOAM_SERVER_BIN", LOAM_SERVER_BIN), args,
                             dir.path / "server.log");
  REQUIRE(server.waitForLog("listening on", 60s));
  const fs::path script = dir.path / "dig.txt";
  // Edits at the spawn, and again after the return: the step then rehashes that cell
  // from what the server loaded, and the bot compares.
  std::ofstream(script) << "at 1s all dig ahead:2 10\nat 1.5s all place ahead:2 +y 10 brick\n"
                        << "at 16s all dig ahead:2 10\nat 16.5s all place ahead:2 +y 10 brick\n";
  loam::test::Process bot(loam::test::binaryPath("LOAM_BOTS_BIN", LOAM_BOTS_BIN),
                          {"--server", "127.0.0.1:" + std::to_string(gamePort), "--mode", "full", "--count", "1",
                           "--duration", "30", "--script", script.string(), "--name-prefix", "walker", "--scenes",
                           std::string(LOAM_SOURCE_DIR) + "/scenes"},
                          dir.path / "bot.log");
  INFO("bot log:\n" << bot.log());
  REQUIRE(waitPlayers(httpPort, "walker1", true, 60s));
  std::this_thread::sleep_for(4s);  // the dig and the build are done
  REQUIRE(post(httpPort, "save", kToken).status == 200);
  REQUIRE(server.waitForLog("committed tick", 20s));
  REQUIRE(post(httpPort, "teleport walker1 1000 0", kToken).status == 200);
  CHECK(server.waitForLog("paged out ", 20s));
  std::this_thread::sleep_for(3s);  // the bot drops the far cells (checked once a second)
  REQUIRE(post(httpPort, "teleport walker1 0 0", kToken).status == 200);
  const int rc = bot.wait(60s);
  INFO("server log:\n" << server.log() << "\nbot log:\n" << bot.log());
  CHECK(rc == 0);
  CHECK(server.log().find("world database: ") == std::string::npos);  // no row failed to load
}
