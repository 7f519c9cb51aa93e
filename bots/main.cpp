// loam-bots: load-test and soak bots for loam-server.
//
//   full:  one ClientConnection per bot: mirror world, prediction, a world-hash
//          check after every step. What a real client does, minus the rendering.
//   swarm: many lightweight bots on one ENet host, no world (sim-free load).
//
// One 60 Hz loop drives every bot of the process; a JSON report and a summary line
// come out at the end, and with --report-html a page with plots over time (bots
// sampled once a second in the loop; server metrics scraped on their own thread). Exit code 0 when every bot ran to the end without a desync
// or failure, 1 otherwise, 2 for bad arguments.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>

#include "bots/attack.h"
#include "bots/bot_script.h"
#include "bots/html_report.h"
#include "bots/run_series.h"
#include "bots/server_metrics.h"
#include "bots/swarm.h"
#include "net/client_connection.h"
#include "net/link_sim.h"
#include "net/player_name.h"
#include "net/wire.h"
#include "sim/gen/scene.h"
#include "sim/trace/script.h"
#include "sim/systems/sim_state.h"

namespace {

// Set by SIGINT / SIGTERM: the loop ends, the report is written, bots disconnect.
volatile std::sig_atomic_t gStop = 0;
void onStopSignal(int) { gStop = 1; }


using namespace loam;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string server = "127.0.0.1:7777";
  std::uint32_t count = 1;
  std::string mode = "full";
  std::string script;
  double duration = 60;
  std::string report;
  std::string reportHtml;
  std::string serverMetrics;
  std::string namePrefix = "bot";
  std::string scenes = "scenes";
  double streamMetres = net::ClientConfig{}.streamRadiusMetres;  ///< full bots: how far around them they generate
  net::LinkProfile link;
  std::string attack;  ///< an attack mode (bots/attack.h); empty = honest bots
  std::string bind;    ///< local address of attackers and swarm bots
  std::uint64_t seed = 1;
  std::uint64_t accountSeed = 1;  ///< bots' account keys: net::botAccountKey(accountSeed, name); 0 = none
};

struct FullBot {
  std::string name;
  std::uint32_t index = 0;
  std::unique_ptr<net::ClientConnection> conn;
  std::unique_ptr<bots::BotScript> script;
  std::uint64_t ticks = 0;
  net::ClientPhase reported = net::ClientPhase::Connecting;
  std::uint64_t eventsSeen = 0;
};

std::string jsonEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

// One bot's line of the report (and the numbers the totals add up).
struct BotReport {
  std::string name, mode, phase, error;
  double joinMs = 0, rttMs = 0;
  std::map<std::string, net::TrafficCounters> in, out;
  std::uint64_t bytesIn = 0, bytesOut = 0;
  std::uint64_t corrections = 0, desyncCount = 0, stepsApplied = 0;
  std::uint64_t holesMet = 0;  ///< streamed worlds: columns the player reached before they were generated ahead
  std::vector<double> teleportPlayableMs;  ///< time to playable after each teleport (ClientStats)
  std::vector<net::Desync> desyncs;
  net::EditPredictionStats edits;  ///< the bot's own edits shown before the server's answer
  std::uint64_t ghosts = 0;        ///< voxels shown unlike the mirror after the run settled
  bool ok = false;

  void addEdits(const BotReport& r) {
    edits += r.edits;
    ghosts += r.ghosts;
  }
};

// The predicted edits' counts, as a JSON object.
void writeEdits(std::ostream& o, const net::EditPredictionStats& e, std::uint64_t ghosts) {
  const auto answered = static_cast<double>(e.confirmed + e.overridden + e.rolledBack);
  o << "{\"predicted\": " << e.predicted << ", \"confirmed\": " << e.confirmed << ", \"overridden\": " << e.overridden
    << ", \"rolled_back\": " << e.rolledBack << ", \"expired\": " << e.expired << ", \"pending\": " << e.pending
    << ", \"ghosts\": " << ghosts << ", \"answer_ms_mean\": " << (answered ? e.answerMsTotal / answered : 0.0)
    << ", \"answer_ms_max\": " << e.answerMsMax << "}";
}

void writeTraffic(std::ostream& o, const std::map<std::string, net::TrafficCounters>& m, double seconds) {
  o << "{";
  bool first = true;
  for (const auto& [name, c] : m) {
    if (c.messages == 0) continue;
    o << (first ? "" : ", ") << "\"" << jsonEscape(name) << "\": {\"messages\": " << c.messages
      << ", \"bytes\": " << c.bytes << ", \"bytes_per_s\": " << (seconds > 0 ? c.bytes / seconds : 0.0) << "}";
    first = false;
  }
  o << "}";
}

bool writeReport(const std::string& path, const std::vector<BotReport>& reports, double seconds) {
  std::ostringstream o;
  o << "{\n  \"seconds\": " << seconds << ",\n  \"bots\": [\n";
  BotReport total;
  std::size_t ok = 0;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const BotReport& r = reports[i];
    o << "    {\"name\": \"" << jsonEscape(r.name) << "\", \"mode\": \"" << r.mode << "\", \"phase\": \"" << r.phase
      << "\", \"error\": \"" << jsonEscape(r.error) << "\", \"join_ms\": " << r.joinMs << ", \"rtt_ms\": " << r.rttMs
      << ", \"bytes_in\": " << r.bytesIn << ", \"bytes_out\": " << r.bytesOut << ", \"in\": ";
    writeTraffic(o, r.in, seconds);
    o << ", \"out\": ";
    writeTraffic(o, r.out, seconds);
    o << ", \"corrections\": " << r.corrections << ", \"steps_applied\": " << r.stepsApplied
      << ", \"holes_met\": " << r.holesMet << ", \"teleport_playable_ms\": [";
    for (std::size_t k = 0; k < r.teleportPlayableMs.size(); ++k) o << (k ? ", " : "") << r.teleportPlayableMs[k];
    o << "], \"edits\": ";
    writeEdits(o, r.edits, r.ghosts);
    o << ", \"desyncs\": {\"count\": " << r.desyncCount << ", \"first\": [";
    for (std::size_t k = 0; k < r.desyncs.size(); ++k) {
      const net::Desync& d = r.desyncs[k];
      o << (k ? ", " : "") << "{\"tick\": " << d.tick << ", \"cell\": ";
      if (d.cell)
        o << "[" << d.cell->x << ", " << d.cell->z << "]";
      else
        o << "null";
      o << ", \"what\": \"" << jsonEscape(d.what) << "\"}";
    }
    o << "]}}" << (i + 1 < reports.size() ? "," : "") << "\n";
    for (const auto& [n, c] : r.in) {
      total.in[n].messages += c.messages;
      total.in[n].bytes += c.bytes;
    }
    for (const auto& [n, c] : r.out) {
      total.out[n].messages += c.messages;
      total.out[n].bytes += c.bytes;
    }
    total.bytesIn += r.bytesIn;
    total.bytesOut += r.bytesOut;
    total.corrections += r.corrections;
    total.desyncCount += r.desyncCount;
    total.stepsApplied += r.stepsApplied;
    total.holesMet += r.holesMet;
    total.teleportPlayableMs.insert(total.teleportPlayableMs.end(), r.teleportPlayableMs.begin(),
                                    r.teleportPlayableMs.end());
    total.addEdits(r);
    ok += r.ok ? 1 : 0;
  }
  o << "  ],\n  \"totals\": {\"bots\": " << reports.size() << ", \"ok\": " << ok << ", \"bytes_in\": " << total.bytesIn
    << ", \"bytes_out\": " << total.bytesOut << ", \"in\": ";
  writeTraffic(o, total.in, seconds);
  o << ", \"out\": ";
  writeTraffic(o, total.out, seconds);
  o << ", \"corrections\": " << total.corrections << ", \"desyncs\": " << total.desyncCount
    << ", \"steps_applied\": " << total.stepsApplied << ", \"holes_met\": " << total.holesMet
    << ", \"teleports\": " << total.teleportPlayableMs.size() << ", \"teleport_playable_ms_max\": "
    << (total.teleportPlayableMs.empty()
            ? 0.0
            : *std::max_element(total.teleportPlayableMs.begin(), total.teleportPlayableMs.end()))
    << ", \"edits\": ";
  writeEdits(o, total.edits, total.ghosts);
  o << "}\n}\n";
  std::ofstream f(path, std::ios::binary);
  f << o.str();
  return static_cast<bool>(f);
}

// After the run, the full bots wait (serving their connections, sending nothing
// new) for the server's answer to every edit they predicted, then one round trip
// and 100 ms more for the steps in flight: what they show then is what they keep
// showing (their ghosts are counted from it). At most kPredictionTimeoutMs.
void settleEdits(std::vector<FullBot>& full, const std::function<double()>& nowMs) {
  const double start = nowMs();
  const auto pending = [&] {
    return std::any_of(full.begin(), full.end(), [](const FullBot& b) {
      return b.conn->phase() == net::ClientPhase::Playing && b.conn->stats().edits.pending > 0;
    });
  };
  double rttMs = 0;
  for (const FullBot& b : full) rttMs = std::max(rttMs, b.conn->stats().rttMs);
  double until = -1;
  while (nowMs() - start < net::kPredictionTimeoutMs) {
    for (FullBot& b : full) b.conn->service(nowMs(), 0);
    if (until < 0 && !pending()) until = nowMs() + rttMs + 100;
    if (until >= 0 && nowMs() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::fprintf(stderr, "loam-bots: edits settled in %.0f ms\n", nowMs() - start);
}

std::string linkDescription(const net::LinkProfile& l) {
  if (!l.active()) return "none (direct)";
  char buf[200];
  std::snprintf(buf, sizeof buf, "latency %g ms, jitter %g ms, loss %g, duplicate %g, reorder %g, seed %" PRIu64,
                l.latencyMs, l.jitterMs, l.loss, l.duplicate, l.reorder, static_cast<std::uint64_t>(l.seed));
  return buf;
}

// The HTML report: settings, the summary table (the JSON report's numbers), plots.
bool writeHtmlReport(const Options& opt, const std::vector<BotReport>& reports, double seconds,
                     const std::vector<bots::RunSample>& run, const bots::ServerMetricsScraper* scraper) {
  namespace h = bots::html;
  auto f = h::formatNumber;
  h::Page page;
  page.title = "loam-bots load test: " + std::to_string(reports.size()) + " " + opt.mode + " bots against " + opt.server;
  // Shown without its scheme: the page itself references no URL.
  const std::string metricsShown =
      opt.serverMetrics.rfind("http://", 0) == 0 ? opt.serverMetrics.substr(7) : opt.serverMetrics;
  page.settings = {{"server", opt.server},
                   {"mode", opt.mode},
                   {"count", std::to_string(opt.count)},
                   {"duration", f(opt.duration) + " s requested, " + f(seconds) + " s run"},
                   {"link profile", linkDescription(opt.link)},
                   {"script", opt.script.empty() ? "random walk" : opt.script},
                   {"server metrics", opt.serverMetrics.empty() ? "not scraped" : metricsShown + ", every second"}};
  page.tableTitle = "Summary";
  page.tableHeader = {"bot", "phase", "join ms", "rtt ms", "bytes in", "bytes out", "in B/s", "out B/s",
                      "corrections", "steps applied", "desyncs", "edits predicted", "confirmed", "overridden",
                      "rolled back", "ghosts"};
  BotReport total;
  std::size_t ok = 0;
  for (const BotReport& r : reports) {
    total.bytesIn += r.bytesIn;
    total.bytesOut += r.bytesOut;
    total.corrections += r.corrections;
    total.stepsApplied += r.stepsApplied;
    total.desyncCount += r.desyncCount;
    total.addEdits(r);
    ok += r.ok ? 1 : 0;
  }
  auto rate = [&](std::uint64_t b) { return f(seconds > 0 ? static_cast<double>(b) / seconds : 0.0); };
  auto u = [&](std::uint64_t v) { return std::to_string(v); };
  page.tableRows.push_back({"all (" + u(reports.size()) + " bots, " + u(ok) + " ok)", "", "", "", u(total.bytesIn),
                            u(total.bytesOut), rate(total.bytesIn), rate(total.bytesOut), u(total.corrections),
                            u(total.stepsApplied), u(total.desyncCount), u(total.edits.predicted),
                            u(total.edits.confirmed), u(total.edits.overridden),
                            u(total.edits.rolledBack + total.edits.expired), u(total.ghosts)});
  constexpr std::size_t kMaxRows = 200;  // a page, not a database: the JSON report has them all
  for (std::size_t i = 0; i < reports.size() && i < kMaxRows; ++i) {
    const BotReport& r = reports[i];
    page.tableRows.push_back({r.name + (r.error.empty() ? "" : " (" + r.error + ")"), r.phase, f(r.joinMs),
                              f(r.rttMs), u(r.bytesIn), u(r.bytesOut), rate(r.bytesIn), rate(r.bytesOut),
                              u(r.corrections), u(r.stepsApplied), u(r.desyncCount), u(r.edits.predicted),
                              u(r.edits.confirmed), u(r.edits.overridden), u(r.edits.rolledBack + r.edits.expired),
                              u(r.ghosts)});
  }
  if (reports.size() > kMaxRows)
    page.tableNote = "First " + u(kMaxRows) + " of " + u(reports.size()) + " bots shown; --report writes them all.";

  // Server plots from the scraper, or a note saying how to get them.
  h::Plot step, players;
  step.title = "Server step time per interval";
  step.yLabel = "ms";
  step.ref = h::RefLine{"16.7 ms budget", 1000.0 / sim::kTicksPerSecond, "#d62728"};
  players.title = "Players on the server";
  players.yLabel = "players";
  const std::vector<bots::ServerSample> server = scraper ? scraper->samples() : std::vector<bots::ServerSample>{};
  if (!scraper) {
    step.emptyNote = players.emptyNote = "no server metrics (pass --server-metrics)";
  } else if (server.empty()) {
    step.emptyNote = players.emptyNote = "no server metrics (every scrape of " + metricsShown + " failed)";
  } else {
    h::Series p50{"p50", {}, "#1f77b4", false}, p99{"p99", {}, "#ff7f0e", false}, pl{"players", {}, "#2ca02c", false};
    for (const bots::ServerSample& s : server) {
      step.x.push_back(s.t);
      p50.y.push_back(s.stepP50Ms);
      p99.y.push_back(s.stepP99Ms);
      pl.y.push_back(s.players);
    }
    players.x = step.x;
    step.series = {p50, p99};
    players.series = {pl};
  }

  h::Plot bytes, rtt, errors;
  bytes.title = "Bytes per second per bot";
  bytes.yLabel = "bytes/s";
  rtt.title = "Round-trip time";
  rtt.yLabel = "ms";
  errors.title = "Prediction corrections and desyncs (cumulative, all bots)";
  errors.yLabel = "count";
  h::Series inMean{"in, mean", {}, "#1f77b4", false}, outMean{"out, mean", {}, "#ff7f0e", false};
  h::Band inBand{"in, min-max", {}, {}, "#1f77b4"};
  h::Series rttMean{"mean", {}, "#1f77b4", false}, rttMax{"max", {}, "#d62728", true};
  h::Series corr{"corrections", {}, "#9467bd", false}, des{"desyncs", {}, "#d62728", false};
  for (const bots::RunSample& s : run) {
    bytes.x.push_back(s.t);
    inMean.y.push_back(s.inMean);
    inBand.lo.push_back(s.inMin);
    inBand.hi.push_back(s.inMax);
    outMean.y.push_back(s.outMean);
    rttMean.y.push_back(s.rttMean);
    rttMax.y.push_back(s.rttMax);
    corr.y.push_back(static_cast<double>(s.corrections));
    des.y.push_back(static_cast<double>(s.desyncs));
  }
  rtt.x = errors.x = bytes.x;
  bytes.series = {inMean, outMean};
  bytes.band = inBand;
  rtt.series = {rttMean, rttMax};
  errors.series = {corr, des};
  if (opt.mode == "swarm") errors.title += " (swarm bots do not predict: corrections stay 0)";
  page.plots = {step, players, bytes, rtt, errors};

  std::ofstream out(opt.reportHtml, std::ios::binary);
  out << h::renderPage(page);
  return static_cast<bool>(out);
}

bool parseServer(const std::string& s, std::string& host, std::uint16_t& port) {
  const std::size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  host = s.substr(0, colon);
  const std::string p = s.substr(colon + 1);
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
  const long v = std::stol(p);
  if (v < 1 || v > 65535) return false;
  port = static_cast<std::uint16_t>(v);
  return true;
}

// --attack: the attackers' own 60 Hz loop. Progress once every 10 s and a summary on
// stderr, the JSON report (bots/attack.h) on --report. Exit 0 unless the attack
// could not start: what the server does to attackers is the result, not a failure.
int runAttack(const Options& opt, const std::string& host, std::uint16_t port, bool namePrefixGiven) {
  bots::AttackConfig cfg;
  cfg.mode = *bots::parseAttackMode(opt.attack);
  cfg.host = host;
  cfg.port = port;
  cfg.bind = opt.bind;
  cfg.count = opt.count;
  cfg.seed = opt.seed;
  cfg.namePrefix = namePrefixGiven ? opt.namePrefix : std::string("atk-") + opt.attack.substr(0, 1);
  const Clock::time_point start = Clock::now();
  auto nowMs = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
  auto opened = bots::Attack::open(cfg, nowMs());
  if (!opened) {
    std::fprintf(stderr, "loam-bots: %s\n", opened.error().message.c_str());
    return 1;
  }
  bots::Attack& attack = **opened;
  const auto tickLen = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / sim::kTicksPerSecond));
  const auto end = opt.duration > 0
                       ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.duration))
                       : Clock::time_point::max();
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  Clock::time_point next = start;
  double nextProgressMs = 10000;
  while (Clock::now() < end && !gStop) {
    const double now = nowMs();
    attack.service(now, true);
    if (now >= nextProgressMs) {
      const bots::AttackStats& s = attack.stats();
      std::fprintf(stderr,
                   "loam-bots: %s x%u at %.0f s: %" PRIu64 " connects, %" PRIu64 " joins, %" PRIu64
                   " rejected, %" PRIu64 " dropped, %" PRIu64 " messages sent\n",
                   opt.attack.c_str(), cfg.count, now / 1000, s.connected, s.joins, s.rejected, s.dropped,
                   s.messagesSent);
      nextProgressMs += 10000;
    }
    next += tickLen;
    const Clock::time_point t = Clock::now();
    if (next < t - std::chrono::milliseconds(100)) next = t;  // fell behind: do not burst to catch up
    std::this_thread::sleep_until(next);
  }
  const double seconds = nowMs() / 1000.0;
  attack.close(500);
  const std::string json = bots::attackReportJson(cfg, attack.stats(), seconds);
  if (!opt.report.empty()) {
    std::ofstream f(opt.report, std::ios::binary);
    f << json << "\n";
    if (!f) std::fprintf(stderr, "loam-bots: cannot write %s\n", opt.report.c_str());
  }
  std::fprintf(stderr, "loam-bots: attack %s\n", json.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{
      "loam-bots: load-test bots for loam-server.\n"
      "  full:  each bot is a complete client (ClientConnection): it streams the world around\n"
      "         its player as a real client does, mirrors every step and checks the world hash\n"
      "         after each (desyncs are reported), predicts its own player.\n"
      "  swarm: many lightweight bots on one ENet host, without a world (Hello wants_world=false):\n"
      "         they walk, send inputs at 60 Hz, acknowledge snapshots and count what they receive.\n"
      "All bots of a process share one link simulator when --link-* flags are given.\n"
      "Script (sim/trace/script.h format): 'p<N>' lines drive bot N (1-based), 'all' lines every bot;\n"
      "server, join and leave lines are ignored; times count from when each bot starts playing.\n"
      "Swarm bots use only walkto/stop/jump. Without walkto lines a bot random-walks near its spawn.\n"
      "Exit code: 0 when every bot played to the end without desync or failure, 1 otherwise, 2 for bad arguments."};
  app.add_option("--server", opt.server, "Server address HOST:PORT")->capture_default_str();
  app.add_option("--count", opt.count, "Number of bots")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--mode", opt.mode, "full (complete clients) or swarm (lightweight, no world)")
      ->check(CLI::IsMember({"full", "swarm"}))
      ->capture_default_str();
  app.add_option("--script", opt.script, "Behaviour script (sim/trace/script.h format); default: random walk");
  app.add_option("--duration", opt.duration, "Seconds to run, joining included; 0 = until SIGINT/SIGTERM")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  app.add_option("--report", opt.report, "Write a JSON report here (per bot and totals)");
  app.add_option("--report-html", opt.reportHtml,
                 "Write a self-contained HTML page here (summary table, plots over time; no scripts)");
  app.add_option("--server-metrics", opt.serverMetrics,
                 "The server's Prometheus endpoint, http://HOST:PORT/metrics (loam-server --http-port): "
                 "scraped every second for step time and players in --report-html");
  app.add_option("--name-prefix", opt.namePrefix, "Bot names are <prefix><N>")->capture_default_str();
  app.add_option("--scenes", opt.scenes, "Folder holding <scene>.toml (full bots)")->capture_default_str();
  app.add_option("--stream-metres", opt.streamMetres,
                 "Full bots: generate the world this far around the player (a client's view distance + 16 m)")
      ->check(CLI::Range(16.0, 2048.0))
      ->capture_default_str();
  app.add_option("--link-latency-ms", opt.link.latencyMs, "Link simulator: one-way latency, ms")
      ->check(CLI::Range(0.0, 10000.0));
  app.add_option("--link-jitter-ms", opt.link.jitterMs, "Link simulator: +- jitter, ms")->check(CLI::Range(0.0, 10000.0));
  app.add_option("--link-loss", opt.link.loss, "Link simulator: drop probability 0..1")->check(CLI::Range(0.0, 1.0));
  app.add_option("--link-dup", opt.link.duplicate, "Link simulator: duplicate probability 0..1")->check(CLI::Range(0.0, 1.0));
  app.add_option("--link-reorder", opt.link.reorder, "Link simulator: reorder probability 0..1")->check(CLI::Range(0.0, 1.0));
  app.add_option("--link-seed", opt.link.seed, "Link simulator: randomness seed")->capture_default_str();
  app.add_option("--attack", opt.attack,
                 "Run attackers instead of honest bots (bots/attack.h): connect-only (connect, then silence), "
                 "hello-only (Hello, never WorldReady), join-spam (swarm join, leave, repeat), garbage (malformed, "
                 "out-of-range and flooding messages), speed (4 inputs per tick). --count attackers; each reconnects "
                 "when its session ends. --report gets the JSON of what they sent and how the server answered; "
                 "--mode, --script and --link-* do not apply")
      ->check(CLI::IsMember({"connect-only", "hello-only", "join-spam", "garbage", "speed"}));
  app.add_option("--bind", opt.bind,
                 "Attackers and swarm bots: the local IPv4 address to send from (e.g. 127.0.0.2); default any");
  app.add_option("--seed", opt.seed, "Attackers: randomness seed (garbage, speed)")->capture_default_str();
  app.add_option("--account-seed", opt.accountSeed,
                 "Each bot's account key is derived from this and its name (no key files; the same seed is the "
                 "same accounts); 0 = bots send no key (servers with --auth required refuse them)")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  std::string host;
  std::uint16_t port = 0;
  if (!parseServer(opt.server, host, port)) {
    std::fprintf(stderr, "loam-bots: --server must be HOST:PORT with a port 1..65535, got '%s'\n", opt.server.c_str());
    return 2;
  }
  if (!opt.attack.empty()) return runAttack(opt, host, port, app.count("--name-prefix") > 0);
  // The last bot's name is the longest: if it passes the name rules, all do.
  if (const net::NameCheck name = net::checkPlayerName(opt.namePrefix + std::to_string(std::max(opt.count, 1u)));
      !name.ok() || name.name != opt.namePrefix + std::to_string(std::max(opt.count, 1u))) {
    std::fprintf(stderr, "loam-bots: --name-prefix '%s' makes names the server refuses: %s\n", opt.namePrefix.c_str(),
                 name.ok() ? "spaces around the name" : name.why.c_str());
    return 2;
  }
  if (!opt.bind.empty() && opt.mode != "swarm") {
    std::fprintf(stderr, "loam-bots: --bind is for --attack and --mode swarm only\n");
    return 2;
  }
  sim::Script script;
  if (!opt.script.empty()) {
    auto loaded = sim::loadScript(opt.script);
    if (!loaded) {
      std::fprintf(stderr, "loam-bots: %s\n", loaded.error().message.c_str());
      return 2;
    }
    script = std::move(*loaded);
  }

  std::unique_ptr<bots::ServerMetricsScraper> scraper;
  if (!opt.serverMetrics.empty()) {
    auto made = bots::ServerMetricsScraper::create(opt.serverMetrics);
    if (!made) {
      std::fprintf(stderr, "loam-bots: %s\n", made.error().message.c_str());
      return 2;
    }
    scraper = std::move(*made);
  }

  // One relay for every bot of the process; bots then connect to it, not the server.
  std::unique_ptr<net::LinkSimulator> link;
  if (opt.link.active()) {
    auto opened = net::LinkSimulator::open(host, port, opt.link);
    if (!opened) {
      std::fprintf(stderr, "loam-bots: link simulator: %s\n", opened.error().message.c_str());
      return 1;
    }
    link = std::move(*opened);
    host = "127.0.0.1";
    port = link->localPort();
  }

  const Clock::time_point start = Clock::now();
  auto nowMs = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };

  std::vector<FullBot> full;
  std::unique_ptr<bots::Swarm> swarm;
  if (opt.mode == "full") {
    for (std::uint32_t i = 0; i < opt.count; ++i) {
      FullBot b;
      b.index = i + 1;
      b.name = opt.namePrefix + std::to_string(i + 1);
      net::ClientConfig cfg;
      cfg.host = host;
      cfg.port = port;
      cfg.name = b.name;
      cfg.sceneDir = opt.scenes;
      cfg.streamRadiusMetres = opt.streamMetres;
      cfg.kind = net::ClientKind::FullBot;
      if (opt.accountSeed != 0) {
        cfg.accountKey = std::make_shared<const net::AccountKey>(net::botAccountKey(opt.accountSeed, b.name));
      }
      auto conn = net::ClientConnection::connect(cfg);
      if (!conn) {
        std::fprintf(stderr, "%s: failed: %s\n", b.name.c_str(), conn.error().message.c_str());
        return 1;
      }
      b.conn = std::move(*conn);
      b.script = std::make_unique<bots::BotScript>(script, b.index);
      full.push_back(std::move(b));
    }
  } else {
    auto opened = bots::Swarm::open(host, port, opt.count, opt.namePrefix, script, 0.0, opt.accountSeed, opt.bind);
    if (!opened) {
      std::fprintf(stderr, "loam-bots: %s\n", opened.error().message.c_str());
      return 1;
    }
    swarm = std::move(*opened);
  }

  // The 60 Hz loop: every bot is serviced every tick; sleep until the next one.
  const auto tickLen = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / sim::kTicksPerSecond));
  const auto end = opt.duration > 0
                       ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.duration))
                       : Clock::time_point::max();
  Clock::time_point next = start;
  bots::BotTick tick;
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  // Once a second: every bot's totals into the run's series (for --report-html).
  bots::RunSeries series(opt.count);
  std::vector<bots::BotTotals> totals(opt.count);
  double nextSampleMs = 0;
  auto sampleBots = [&](double now) {
    std::size_t i = 0;
    for (FullBot& b : full) {
      const net::ClientStats s = b.conn->stats();
      totals[i++] = {s.bytesIn, s.bytesOut, s.rttMs, s.prediction.corrections, s.desyncCount,
                     b.conn->phase() == net::ClientPhase::Playing};
    }
    if (swarm)
      for (const bots::SwarmBot& b : swarm->bots())
        totals[i++] = {b.bytesIn, b.bytesOut, b.rttMs, 0, 0, b.phase == bots::SwarmBot::Phase::Playing};
    series.sample(now / 1000.0, totals);
  };
  if (scraper) scraper->start(start);
  while (Clock::now() < end && !gStop) {
    const double now = nowMs();
    for (FullBot& b : full) {
      b.conn->service(now, 0);
      const net::ClientPhase ph = b.conn->phase();
      if (ph != b.reported) {
        if (b.reported == net::ClientPhase::Generating && ph != net::ClientPhase::Failed)
          std::fprintf(stderr, "%s: generated the spawn columns in %.0f ms\n", b.name.c_str(), b.conn->stats().generateMs);
        if (ph == net::ClientPhase::Playing)
          std::fprintf(stderr, "%s: joined in %.0f ms (player %u)\n", b.name.c_str(), b.conn->stats().joinMs,
                       b.conn->playerId().value);
        if (ph == net::ClientPhase::Failed || ph == net::ClientPhase::Disconnected)
          std::fprintf(stderr, "%s: %s: %s\n", b.name.c_str(), net::phaseName(ph), b.conn->error().c_str());
        b.reported = ph;
      }
      if (ph != net::ClientPhase::Playing) continue;
      b.script->tick(b.ticks++, b.conn->predictor().state(), &b.conn->mirror(), tick);
      b.conn->sendInput(tick.input);
      for (const sim::CommandBody& a : tick.actions) b.conn->sendAction(a);
      b.eventsSeen += b.conn->takeEvents().size();
    }
    if (swarm) swarm->service(now, true);
    if (!opt.reportHtml.empty() && now >= nextSampleMs) {
      sampleBots(now);
      nextSampleMs += 1000;
    }
    next += tickLen;
    const Clock::time_point t = Clock::now();
    if (next < t - std::chrono::milliseconds(100)) next = t;  // fell behind: do not burst to catch up
    if (!swarm) {
      std::this_thread::sleep_until(next);
      continue;
    }
    // A swarm takes what arrives within a few milliseconds: hundreds of bots receive
    // more in a tick than a socket buffer holds (at five fires, 60 bots dropped 100,000
    // datagrams a run), and servicing at every arrival would send ENet's
    // acknowledgements one datagram at a time (more for the server to receive).
    for (Clock::time_point now = Clock::now(); now < next; now = Clock::now()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count();
      swarm->waitForData(static_cast<int>(std::max<long long>(left, 1)));
      swarm->service(nowMs(), false);
      std::this_thread::sleep_until(std::min(next, Clock::now() + std::chrono::milliseconds(4)));
    }
  }
  const double seconds = nowMs() / 1000.0;
  if (scraper) scraper->stop();
  settleEdits(full, nowMs);

  // Collect before disconnecting (a disconnect changes the phase).
  std::vector<BotReport> reports;
  std::size_t okCount = 0;
  std::uint64_t desyncs = 0, corrections = 0;
  for (FullBot& b : full) {
    const net::ClientStats s = b.conn->stats();
    BotReport r;
    r.name = b.name;
    r.mode = "full";
    r.phase = net::phaseName(b.conn->phase());
    r.error = b.conn->error();
    r.joinMs = s.joinMs;
    r.rttMs = s.rttMs;
    r.in = s.received;
    r.out = s.sent;
    r.bytesIn = s.bytesIn;
    r.bytesOut = s.bytesOut;
    r.corrections = s.prediction.corrections;
    r.holesMet = s.holesMet;
    r.teleportPlayableMs = s.teleportPlayableMs;
    r.desyncCount = s.desyncCount;
    r.desyncs = s.desyncs;
    r.stepsApplied = s.stepsApplied;
    r.edits = s.edits;
    r.ghosts = b.conn->predictedEdits().ghostVoxels(b.conn->mirror().world);
    r.ok = b.conn->phase() == net::ClientPhase::Playing && s.desyncCount == 0 && r.ghosts == 0;
    reports.push_back(std::move(r));
  }
  if (swarm) {
    for (bots::SwarmBot& b : swarm->bots()) {
      BotReport r;
      r.name = b.name;
      r.mode = "swarm";
      r.phase = b.phase == bots::SwarmBot::Phase::Playing    ? "playing"
                : b.phase == bots::SwarmBot::Phase::Failed   ? "failed"
                : b.phase == bots::SwarmBot::Phase::Connecting ? "connecting"
                : b.phase == bots::SwarmBot::Phase::Welcomed ? "welcomed"
                                                             : "disconnected";
      r.error = b.error;
      r.joinMs = b.joinMs;
      r.rttMs = b.rttMs;
      for (std::size_t k = 1; k < b.received.size(); ++k)
        if (b.received[k].messages) r.in[net::messageName(static_cast<wire::ServerBody>(k))] = b.received[k];
      for (std::size_t k = 1; k < b.sent.size(); ++k)
        if (b.sent[k].messages) r.out[net::messageName(static_cast<wire::ClientBody>(k))] = b.sent[k];
      r.bytesIn = b.bytesIn;
      r.bytesOut = b.bytesOut;
      r.stepsApplied = b.stepsApplied;
      r.ok = b.phase == bots::SwarmBot::Phase::Playing;
      reports.push_back(std::move(r));
    }
  }
  for (const BotReport& r : reports) {
    okCount += r.ok ? 1 : 0;
    desyncs += r.desyncCount;
    corrections += r.corrections;
  }
  for (FullBot& b : full) b.conn->disconnect();
  if (swarm) swarm->disconnect(500);

  if (!opt.report.empty() && !writeReport(opt.report, reports, seconds)) {
    std::fprintf(stderr, "loam-bots: cannot write %s\n", opt.report.c_str());
  }
  if (!opt.reportHtml.empty() && !writeHtmlReport(opt, reports, seconds, series.samples(), scraper.get()))
    std::fprintf(stderr, "loam-bots: cannot write %s\n", opt.reportHtml.c_str());
  std::fprintf(stderr, "loam-bots: %zu of %zu %s bots ran to the end in %.1f s; %" PRIu64 " desyncs, %" PRIu64
               " prediction corrections%s\n",
               okCount, reports.size(), opt.mode.c_str(), seconds, desyncs, corrections,
               link ? " (through the link simulator)" : "");
  return okCount == reports.size() && desyncs == 0 ? 0 : 1;
}
