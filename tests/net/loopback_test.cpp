// Loopback: a real ServerHost and four full bots (ClientConnections) in one process,
// talking over UDP through a LinkSimulator with latency, jitter, loss, duplication
// and reordering. Every bot mirrors every step: the world hashes must never differ,
// and prediction must reproduce the server bit for bit (zero corrections). The
// server and the clients tick on real time (the link is real time), all on the test
// thread.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <optional>
#include <thread>

#include "bots/bot_script.h"
#include "net/client_connection.h"
#include "net/link_sim.h"
#include "net/server_host.h"
#include "sim/gen/scene.h"
#include "sim/trace/script.h"
#include "sim/systems/sim_state.h"
#include "sim/world/world_hash.h"
#include "tests/support/host_pacing.h"

namespace {

using namespace loam;
using Clock = std::chrono::steady_clock;

// Each bot loops around its own 4 m square near the spawn; edits go to the middle of
// the square (2 m from any path) so no bot ever walks over ground that is being
// edited: with agreeing worlds prediction must then be exact.
constexpr const char* kScript = R"(
every 8s from 0 to 120s p1 walkto -1,-1 -5,-1 -5,-5 -1,-5
every 8s from 0 to 120s p2 walkto -1,1 -5,1 -5,5 -1,5 run
every 8s from 0 to 120s p3 walkto 1,-1 5,-1 5,-5 1,-5
every 8s from 0 to 120s p4 walkto 1,1 4,1 4,4 1,4 crouch
every 6s from 2s to 120s p1 dig -3,-3 20
every 6s from 2s to 120s p2 dig -3,3 10
every 6s from 3s to 120s p3 place 3,-3 +y 20 cobble
every 6s from 3s to 120s p4 place 2.5,2.5 +y 10 planks
every 10s from 1s to 120s all say hello from the loopback
at 5s p1 jump
at 7s p3 jump
)";

struct World {
  sim::Scene scene;
  std::optional<sim::SimState> generated;
  net::HostedWorld hosted;
};

// Generated once for the whole suite (server and every bot start from copies).
World& world() {
  static World w = [] {
    World out;
    auto scene = sim::loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/glade.toml");
    REQUIRE_MESSAGE(scene.has_value(), (scene ? "" : scene.error().message));
    out.scene = std::move(*scene);
    auto state = sim::createSimState(out.scene, out.scene.defaultSeed);
    REQUIRE_MESSAGE(state.has_value(), (state ? "" : state.error().message));
    out.generated.emplace(std::move(*state));
    out.hosted = net::describeWorld(out.scene, out.generated->world);
    return out;
  }();
  return w;
}

// A server of the suite's world on a free loopback port.
std::unique_ptr<net::ServerHost> openServer() {
  World& w = world();
  net::ServerConfig sc;
  sc.name = "loopback";
  sc.bindAddress = "127.0.0.1";
  sc.port = 0;
  auto server = net::ServerHost::open(sc, sim::SimState(*w.generated), w.hosted);
  REQUIRE_MESSAGE(server.has_value(), (server ? "" : server.error().message));
  return std::move(*server);
}

// " awaiting welcome 312 ms, generating 640 ms, ...": when each phase began.
std::string phases(const std::vector<net::PhaseChange>& log) {
  std::string out;
  for (const net::PhaseChange& c : log)
    out += std::string(" ") + net::phaseName(c.to) + " " + std::to_string(static_cast<int>(c.atMs)) + " ms,";
  return out;
}

std::string traffic(const std::map<std::string, net::TrafficCounters>& m) {
  std::string out;
  for (const auto& [name, c] : m) out += name + " " + std::to_string(c.messages) + "/" + std::to_string(c.bytes) + "B ";
  return out;
}

struct Bot {
  std::unique_ptr<net::ClientConnection> conn;
  std::unique_ptr<bots::BotScript> script;
  std::uint64_t ticks = 0;
  std::size_t events = 0;
};

// steps: server steps of scripted play. joinBudget: steps a bot may spend joining
// (the rest must all be applied by the end of the run). drainSeconds: after the
// server stops, how long the bots may take to receive its last step (a lossy
// long-delay link delivers the reliable stream in bursts behind retransmissions).
void runLoopback(const net::LinkProfile& profile, std::uint64_t steps, std::uint64_t joinBudget, int drainSeconds) {
  World& w = world();
  auto server = openServer();
  net::ServerHost& host = *server;
  REQUIRE(host.port() != 0);

  auto link = net::LinkSimulator::open("127.0.0.1", host.port(), profile);
  REQUIRE_MESSAGE(link.has_value(), (link ? "" : link.error().message));

  auto script = sim::parseScript(kScript, "loopback");
  REQUIRE_MESSAGE(script.has_value(), (script ? "" : script.error().message));

  // The bots share one generated world (a copy each), as loam-bots does.
  const sim::SimState& shared = *w.generated;
  net::WorldFactory factory = [&shared](const sim::Scene&, std::uint64_t, const std::function<void(double)>& progress)
      -> sim::Result<sim::SimState> {
    progress(1.0);
    return sim::SimState(shared);
  };
  std::vector<Bot> bots(4);
  for (std::size_t i = 0; i < bots.size(); ++i) {
    net::ClientConfig cfg;
    cfg.host = "127.0.0.1";
    cfg.port = (*link)->localPort();
    cfg.name = "bot" + std::to_string(i + 1);
    cfg.sceneDir = std::string(LOAM_SOURCE_DIR) + "/scenes";
    cfg.worldFactory = factory;
    cfg.kind = net::ClientKind::FullBot;
    auto conn = net::ClientConnection::connect(cfg);
    REQUIRE_MESSAGE(conn.has_value(), (conn ? "" : conn.error().message));
    bots[i].conn = std::move(*conn);
    bots[i].script = std::make_unique<bots::BotScript>(*script, static_cast<std::uint32_t>(i + 1));
  }

  const Clock::time_point start = Clock::now();
  auto nowMs = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
  loam::test::HostPacing pacing(host, start);
  bots::BotTick tick;

  // Phase 1: `steps` server steps with the bots playing their script. Phase 2: the
  // bots stop sending input and the server runs on until every input is
  // acknowledged (bounded). Phase 3: the server stops; the bots drain what is on the
  // way until they have its last step (bounded).
  const std::uint64_t firstTick = host.state().tick;
  // The server may drop a peer the client still thinks is connected (an ENet
  // timeout on the server's side): stop waiting then.
  bool everyoneJoined = false;
  auto anyFailed = [&] {
    const std::uint32_t players = host.stats().players;
    everyoneJoined = everyoneJoined || players == bots.size();
    if (everyoneJoined && players < bots.size()) return true;
    for (Bot& b : bots)
      if (b.conn->phase() == net::ClientPhase::Failed || b.conn->phase() == net::ClientPhase::Disconnected) return true;
    return false;
  };
  auto allAcknowledged = [&] {
    for (Bot& b : bots)
      if (b.conn->phase() != net::ClientPhase::Playing || !b.conn->predictor().pending().empty()) return false;
    return true;
  };
  while (host.state().tick - firstTick < steps + 10 * sim::kTicksPerSecond) {
    host.tick();
    const bool scripted = host.state().tick - firstTick < steps;
    const double now = nowMs();
    for (Bot& b : bots) {
      b.conn->service(now, 0);
      if (b.conn->phase() != net::ClientPhase::Playing) continue;
      if (scripted) {
        b.script->tick(b.ticks++, b.conn->predictor().state(), &b.conn->mirror(), tick);
        b.conn->sendInput(tick.input);
        for (const sim::CommandBody& a : tick.actions) b.conn->sendAction(a);
      }
      b.events += b.conn->takeEvents().size();
    }
    if ((!scripted && allAcknowledged()) || anyFailed()) break;
    pacing.wait();
  }
  const bool acknowledged = allAcknowledged();
  // Every bot follows the server to its last step: a step with nothing for a client
  // is skipped (up to kStepHeartbeatTicks in a row), so the server ticks on until each
  // mirror holds a step at or past the tick the drain began at.
  const std::uint64_t drainFrom = host.state().tick;
  const Clock::time_point drainEnd = Clock::now() + std::chrono::seconds(drainSeconds);
  bool drained = false;
  while (!drained && !anyFailed() && Clock::now() < drainEnd) {
    host.tick();
    drained = true;
    for (Bot& b : bots) {
      b.conn->service(nowMs(), 0);
      b.events += b.conn->takeEvents().size();
      drained = drained && b.conn->serverTick() >= drainFrom;
    }
    pacing.wait();
  }

  const net::ServerStats ss = host.stats();
  const net::LinkStats ls = (*link)->stats();
  MESSAGE("server: ticks " << host.state().tick - firstTick << ", players " << ss.players << ", malformed "
                           << ss.malformed << ", flooded " << ss.flooded << ", rejected " << ss.rejected
                           << ", leaves " << ss.leaves << ", inputs dropped " << ss.inputsDropped << ", over rate "
                           << ss.inputsOverRate << "; link: forwarded "
                           << ls.forwarded << ", dropped " << ls.dropped << ", duplicated " << ls.duplicated
                           << ", reordered " << ls.reordered);
  CHECK(acknowledged);
  CHECK(drained);
  CHECK(ss.malformed == 0);
  CHECK(ss.inputsOverRate == 0);  // honest bots, however late their inputs arrive
  for (std::size_t i = 0; i < bots.size(); ++i) {
    Bot& b = bots[i];
    const net::ClientStats s = b.conn->stats();
    INFO("bot" << i + 1 << ": phase " << std::string(net::phaseName(b.conn->phase())) << " (" << b.conn->error() << "), join "
                << s.joinMs << " ms, steps " << s.stepsApplied << ", server tick " << b.conn->serverTick()
                << ", snapshots " << s.snapshotsReceived << ", corrections " << s.prediction.corrections
                << ", predicted " << s.prediction.predicted << ", desyncs " << s.desyncCount
                << (s.desyncs.empty() ? std::string() : ": first at tick " + std::to_string(s.desyncs[0].tick) + " " +
                                                           s.desyncs[0].what));
    MESSAGE("bot" << i + 1 << ": join " << s.joinMs << " ms, steps " << s.stepsApplied << ", rtt " << s.rttMs
                  << " ms, in " << s.bytesIn << " B, out " << s.bytesOut << " B, events " << b.events
                  << ", corrections " << s.prediction.corrections << ", received " << traffic(s.received)
                  << ", phases" << phases(s.phaseLog));
    REQUIRE(b.conn->phase() == net::ClientPhase::Playing);
    CHECK(s.illegalTransitions == 0);
    REQUIRE(s.phaseLog.size() == 4);  // Connecting -> ... -> Playing, one step at a time
    CHECK(s.phaseLog.back().to == net::ClientPhase::Playing);
    CHECK(s.phaseLog.back().atMs == s.joinMs);
    CHECK(s.desyncCount == 0);
    CHECK(s.hashChecks == s.stepsApplied);
    // Joining takes a few seconds of the run; the steps after it were followed (one
    // at least every kStepHeartbeatTicks: the rest held nothing for this bot).
    CHECK(s.stepsApplied * net::kStepHeartbeatTicks + joinBudget >= steps);
    CHECK(b.conn->serverTick() >= drainFrom);
    CHECK(b.conn->serverTick() <= host.state().tick);
    CHECK(s.prediction.predicted + joinBudget >= steps);
    CHECK(s.prediction.corrections == 0);
    CHECK(s.snapshotsReceived > 0);
    // After the last acknowledgement the prediction is the server's player exactly.
    const sim::Player* serverPlayer = host.state().findPlayer(b.conn->playerId());
    REQUIRE(serverPlayer != nullptr);
    CHECK(b.conn->predictor().acknowledged() == serverPlayer->motion.lastInput);
    CHECK(b.conn->predictor().state() == serverPlayer->motion);
    // The mirror's own record follows the prediction; its tick is the last step's.
    const sim::Player* mirrored = b.conn->mirror().findPlayer(b.conn->playerId());
    REQUIRE(mirrored != nullptr);
    CHECK(mirrored->motion == b.conn->predictor().state());
    CHECK(b.conn->mirror().tick == b.conn->serverTick());
    // Every player is known by name and the others are interpolated.
    CHECK(b.conn->playerName(b.conn->playerId().value) == "bot" + std::to_string(i + 1));
    CHECK(b.conn->mirror().players.size() == bots.size());
    // The others, rebuilt from delta snapshots (players standing still are left out
    // of the deltas, so this needs the baseline ring), end where the server has
    // them: in the mirror's records and, interpolated, in the pose buffer.
    CHECK(b.conn->others().ids().size() == bots.size() - 1);
    for (const sim::Player& p : host.state().players) {
      if (p.id == b.conn->playerId()) continue;
      const sim::Player* m = b.conn->mirror().findPlayer(p.id);
      REQUIRE(m != nullptr);
      CHECK(m->motion.position == p.motion.position);
      const std::optional<net::Pose> pose = b.conn->others().sample(p.id.value, nowMs());
      REQUIRE(pose.has_value());
      CHECK(pose->x == doctest::Approx(p.motion.position.x));
      CHECK(pose->z == doctest::Approx(p.motion.position.z));
    }
  }
  // The edits really happened (the world moved away from the generated one) and the
  // mirrors followed: compare one bot's world hash with the server's directly.
  const std::uint64_t serverHash = sim::worldHash(host.state().world);
  CHECK(serverHash != w.hosted.generatedHash);
  for (Bot& b : bots) CHECK(sim::worldHash(b.conn->mirror().world) == serverHash);
  for (Bot& b : bots) b.conn->disconnect();
}

}  // namespace

TEST_CASE("a client's phases move one step along the join at a time, or end") {
  using P = net::ClientPhase;
  CHECK(net::legalTransition(P::Connecting, P::AwaitingWelcome));
  CHECK(net::legalTransition(P::AwaitingWelcome, P::Generating));
  CHECK(net::legalTransition(P::Generating, P::AwaitingSnapshot));
  CHECK(net::legalTransition(P::AwaitingSnapshot, P::Playing));
  for (P from : {P::Connecting, P::AwaitingWelcome, P::Generating, P::AwaitingSnapshot, P::Playing}) {
    CHECK(net::legalTransition(from, P::Failed));
    CHECK(net::legalTransition(from, P::Disconnected));
    CHECK_FALSE(net::legalTransition(from, P::Connecting));
  }
  CHECK_FALSE(net::legalTransition(P::Connecting, P::Playing));
  CHECK_FALSE(net::legalTransition(P::Playing, P::Generating));
  CHECK_FALSE(net::legalTransition(P::Failed, P::Disconnected));
  CHECK_FALSE(net::legalTransition(P::Disconnected, P::Failed));
  CHECK_FALSE(net::legalTransition(P::Failed, P::Playing));
}

TEST_CASE("loopback: 4 full bots over a 150 ms lossy link stay in sync and predict exactly") {
  net::LinkProfile p;
  p.latencyMs = 150;
  p.jitterMs = 20;
  p.loss = 0.05;
  p.duplicate = 0.01;
  p.reorder = 0.02;
  p.seed = 11;
  runLoopback(p, 3000, 600, 20);
}

// 20% loss each way: a reliable command is lost 3 times in a row every few seconds;
// with ENet's backoff capped (net/enet_support.h) that costs resends, not stalls.
TEST_CASE("loopback: 4 full bots over a 300 ms link with 20% loss stay in sync and predict exactly") {
  net::LinkProfile p;
  p.latencyMs = 300;
  p.loss = 0.20;
  p.seed = 23;
  runLoopback(p, 1200, 1000, 60);
}

namespace {

// Runs a server (no link simulator) and one client until the client leaves
// Connecting..Generating for good; returns the client.
std::unique_ptr<net::ClientConnection> joinOnce(net::ClientConfig cfg, net::ServerHost& host) {
  auto conn = net::ClientConnection::connect(cfg);
  REQUIRE_MESSAGE(conn.has_value(), (conn ? "" : conn.error().message));
  const Clock::time_point end = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < end) {
    host.tick();
    (*conn)->service(0, 0);
    const net::ClientPhase ph = (*conn)->phase();
    if (ph == net::ClientPhase::Playing || ph == net::ClientPhase::Failed || ph == net::ClientPhase::Disconnected)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(16));
  }
  return std::move(*conn);
}

}  // namespace

TEST_CASE("loopback: a client whose world or scene differs stops with an error naming the cells or the file") {
  World& w = world();
  auto server = openServer();

  net::ClientConfig cfg;
  cfg.port = server->port();
  cfg.sceneDir = std::string(LOAM_SOURCE_DIR) + "/scenes";

  SUBCASE("one voxel differs: the differing cell is named") {
    const sim::SimState& shared = *w.generated;
    cfg.name = "odd";
    cfg.worldFactory = [&shared](const sim::Scene&, std::uint64_t, const std::function<void(double)>&)
        -> sim::Result<sim::SimState> {
      sim::SimState copy(shared);
      // A voxel of a spawn column (the join check hashes those) in cell (0, -1) (12.8 m
      // cells): x 1 m, z -1 m, high up.
      const sim::VoxelCoord v{1 * sim::kVoxelsPerMetre, 20 * sim::kVoxelsPerMetre, -1 * sim::kVoxelsPerMetre};
      copy.world.set(v, copy.world.get(v.x, v.y, v.z) == sim::kAir ? sim::MaterialId{1} : sim::kAir);
      return copy;
    };
    auto conn = joinOnce(cfg, *server);
    INFO("error: " << conn->error());
    CHECK(conn->phase() == net::ClientPhase::Failed);
    CHECK(conn->error().find("world differs from the server's in 1 cells: (0,-1)") != std::string::npos);
  }

  SUBCASE("the scene file differs: the file and both hashes are named") {
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("loam_loopback_scenes_" + std::to_string(cfg.port))).string();
    std::filesystem::create_directories(dir);
    {
      // The same scene with its material table named by absolute path (the copy
      // lives outside the checkout) and one extra comment: a different file.
      std::ifstream in(cfg.sceneDir + "/glade.toml", std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      std::string scene = text.str();
      const std::string key = "\"sim/data/materials.toml\"";
      REQUIRE(scene.find(key) != std::string::npos);
      scene.replace(scene.find(key), key.size(), "\"" + std::string(LOAM_SOURCE_DIR) + "/sim/data/materials.toml\"");
      std::ofstream f(dir + "/glade.toml", std::ios::binary | std::ios::trunc);
      f << scene << "\n# an edit the server does not have\n";
    }
    cfg.sceneDir = dir;
    cfg.name = "stale";
    auto conn = joinOnce(cfg, *server);
    INFO("error: " << conn->error());
    CHECK(conn->phase() == net::ClientPhase::Failed);
    CHECK(conn->error().find(dir + "/glade.toml: scene hash") != std::string::npos);
    CHECK(conn->error().find("differs from the server's") != std::string::npos);
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
}

// Protocol 16: the server admits a full client at Welcome, so the join state is on
// its way while the client generates; the client plays as soon as its world is
// built, and the server counts the join only then (WorldReady).
TEST_CASE("loopback: a full client's join state arrives while it generates; it plays once its world is built") {
  World& w = world();
  auto server = openServer();
  net::ServerHost& host = *server;

  std::atomic<bool> release{false};
  const sim::SimState& shared = *w.generated;
  net::ClientConfig cfg;
  cfg.port = host.port();
  cfg.sceneDir = std::string(LOAM_SOURCE_DIR) + "/scenes";
  cfg.name = "slow";
  cfg.kind = net::ClientKind::FullBot;
  cfg.worldFactory = [&](const sim::Scene&, std::uint64_t, const std::function<void(double)>& progress)
      -> sim::Result<sim::SimState> {
    for (int i = 0; !release.load(); ++i) {  // a slow machine's generation, growing
      progress(std::min(0.9, i / 1000.0));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return sim::SimState(shared);
  };
  auto conn = net::ClientConnection::connect(cfg);
  REQUIRE_MESSAGE(conn.has_value(), (conn ? "" : conn.error().message));
  net::ClientConnection& c = **conn;
  auto pump = [&](int ticks, auto&& until) {
    for (int i = 0; i < ticks && !until(); ++i) {
      host.tick();
      c.service(0, 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(4));
    }
    return until();
  };
  // Admitted while generating: a player in the world before the client built it.
  CHECK(pump(600, [&] { return host.stats().players == 1; }));
  CHECK(c.phase() == net::ClientPhase::Generating);
  // A second for the join state to arrive and be acknowledged; not a join yet.
  pump(60, [] { return false; });
  CHECK(c.phase() == net::ClientPhase::Generating);
  CHECK(host.stats().joinSecondsCount == 0);

  release = true;
  CHECK(pump(600, [&] { return c.phase() == net::ClientPhase::Playing || c.phase() == net::ClientPhase::Failed; }));
  INFO("error: " << c.error());
  REQUIRE(c.phase() == net::ClientPhase::Playing);
  // The join state was all there: Playing in the same call that finished generating.
  const std::vector<net::PhaseChange>& log = c.stats().phaseLog;
  REQUIRE(log.size() == 4);
  CHECK(log[2].to == net::ClientPhase::AwaitingSnapshot);
  CHECK(log[3].atMs - log[2].atMs < 1.0);
  CHECK(pump(120, [&] { return host.stats().joinSecondsCount == 1; }));
  CHECK(host.stats().malformed == 0);
}
