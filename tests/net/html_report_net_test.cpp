// loam-bots --report-html against a real loam-server: swarm bots join, the server's
// /metrics is scraped every second, and the page holds step-time and players lines.
// Binaries from LOAM_SERVER_BIN / LOAM_BOTS_BIN (compile definitions; environment
// variables of the same name override them).
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "tests/support/process_util.h"

namespace {

using namespace std::chrono_literals;
using loam::test::countOf;

// Points of the polyline whose stroke is color ("" when absent).
std::string polylineWith(const std::string& page, const std::string& color) {
  const std::string marker = "stroke=\"" + color + "\"";
  for (std::size_t at = page.find("<polyline points=\""); at != std::string::npos;
       at = page.find("<polyline points=\"", at + 1)) {
    const std::size_t end = page.find("/>", at);
    const std::string tag = page.substr(at, end - at);
    if (tag.find(marker) != std::string::npos) return tag;
  }
  return "";
}

}  // namespace

TEST_CASE("loam-bots --report-html plots server step time and players from --server-metrics") {
  loam::test::TempDir dir("loam_html_report_net_test_");
  const int gamePort = loam::test::freeUdpPort();
  const int httpPort = loam::test::freeTcpPort();
  loam::test::Process server(loam::test::binaryPath("LOAM_SERVER_BIN", LOAM_SERVER_BIN),
                             {"--scene", std::string(LOAM_SOURCE_DIR) + "/scenes/flat.toml", "--port",
                              std::to_string(gamePort), "--bind", "127.0.0.1", "--max-peers-per-address", "32", "--save-dir",
                              (dir.path / "saves").string(), "--save-interval", "0", "--stats-interval", "0",
                              "--http-port", std::to_string(httpPort)},
                             dir.path / "server.log");
  REQUIRE(server.waitForLog("listening on", 60s));

  const auto html = dir.path / "report.html";
  loam::test::Process bots(loam::test::binaryPath("LOAM_BOTS_BIN", LOAM_BOTS_BIN),
                           {"--server", "127.0.0.1:" + std::to_string(gamePort), "--mode", "swarm", "--count", "20",
                            "--duration", "6", "--server-metrics",
                            "http://127.0.0.1:" + std::to_string(httpPort) + "/metrics", "--report-html",
                            html.string()},
                           dir.path / "bots.log");
  const int rc = bots.wait(30s);
  INFO("bots log:\n" << bots.log());
  CHECK(rc == 0);

  const std::string page = loam::test::readText(html);
  REQUIRE(!page.empty());
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(countOf(page, "<svg") == 5);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("http://") == std::string::npos);  // the scraped URL is shown without its scheme
  CHECK(page.find("no server metrics") == std::string::npos);
  CHECK(page.find("16.7 ms budget") != std::string::npos);
  // p50 and p99 step time (first scrape has no interval) and players: several points each.
  const std::string p50 = polylineWith(page, "#1f77b4");
  REQUIRE(!p50.empty());
  CHECK(countOf(p50, ",") >= 3);
  const std::string players = polylineWith(page, "#2ca02c");
  REQUIRE(!players.empty());
  CHECK(countOf(players, ",") >= 4);
  CHECK(page.find("all (20 bots, 20 ok)") != std::string::npos);
}
