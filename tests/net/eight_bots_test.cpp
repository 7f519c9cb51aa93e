// Eight full bots over the big world (issue 17): a real ServerHost over highlands
// (8 x 8 km, streamed by the server's ColumnStreamer) and eight full bots
// (ClientConnections, each streaming its own mirror, 32 m around its player) through
// one LinkSimulator at 150 ms latency and 5 % loss both ways. Once all have joined,
// the admin's teleport spreads them over a 4 x 2 grid 2 km apart; each walks off in
// its own direction (the eight compass points) for 30 s, digging and placing its own
// material. Then two of them visit two others (teleported 4 m from them) and light a
// fire, build and dig there, where the visited bot's mirror sees it; the other six
// light a fire on planks beside themselves. The fires are lit late and a downpour
// puts them out before the checks: on highlands' grass a fire reaches thousands of
// bricks within seconds. Checks: every bot 0 desyncs and 0 holes met, every kind of
// action of every bot applied by the server (counted from the step output:
// DigEvents and IgnitedEvents by player, edits to the bot's own material), each
// visitor's fire seen burning in the visited bot's mirror, every edited voxel the
// same in every mirror as in the server's world, each mirror's world hash equal to
// the server's, and the fire and water of the 5 x 5 interest cells around each bot
// equal to the server's. Label net; about a minute.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

#include "bots/bot_script.h"
#include "net/client_connection.h"
#include "net/link_sim.h"
#include "net/server_host.h"
#include "server/admin.h"
#include "sim/systems/fire.h"
#include "sim/systems/water.h"
#include "sim/trace/script.h"
#include "sim/world/world_hash.h"
#include "tests/support/host_pacing.h"
#include "tests/support/streamed_highlands.h"

namespace {

using namespace loam;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kBots = 8;
// Where the admin sends each bot (metres): a 4 x 2 grid, neighbours 2 km apart.
constexpr std::array<std::array<double, 2>, kBots> kSpots{{{-3000, -1000},
                                                           {-1000, -1000},
                                                           {1000, -1000},
                                                           {3000, -1000},
                                                           {-3000, 1000},
                                                           {-1000, 1000},
                                                           {1000, 1000},
                                                           {3000, 1000}}};
// What each bot builds with: its own material, so the server's edits name the builder.
constexpr std::array<const char*, kBots> kMaterials{"cobble", "brick", "clay", "glass",
                                                    "stone",  "rock",  "wood", "soil"};
// Visitors (bot, the bot it visits): they act where the visited bot's mirror sees it.
constexpr std::array<std::array<std::size_t, 2>, 2> kVisits{{{1, 0}, {3, 2}}};
constexpr double kMainSeconds = 30;   // each bot's script after the spread
constexpr double kVisitSeconds = 7;   // the visitors' script (and the others' fires)
constexpr double kRainSeconds = 20;   // at most: a downpour puts the fires out before the checks
constexpr int kLiveTicks = 10;        // shortest steps between phases

std::string metres(double m) { return std::to_string(m); }

// Bot i walks toward a point 400 m off in direction i * 45 degrees (it never gets
// there), digging and placing its material as it goes.
std::string mainScript(std::size_t i, double x, double z) {
  const double a = static_cast<double>(i) * std::numbers::pi / 4;
  const std::string to = metres(x + 400 * std::cos(a)) + "," + metres(z + 400 * std::sin(a));
  return "at 0.5s p1 walkto " + to + "\n" +
         "every 3s from 1s to 28s p1 dig ahead:2 20\n"
         "every 4s from 2s to 28s p1 place ahead:4 +y 20 " + kMaterials[i] + "\n" +
         "at 29s p1 stop\n";
}

// Bot i, stopped at (x, z) after its walk, steps back 2 m the way it came (so it faces
// ground it crossed, not the slope that may have stopped it) and lights a fire on
// planks it places 2 m ahead; then again 1 m ahead, in case the first was hidden from
// its eye. The fires are lit late: on highlands' grass one spreads to thousands of
// bricks within seconds.
std::string fireScript(std::size_t i, double x, double z) {
  const double a = static_cast<double>(i) * std::numbers::pi / 4;
  return "at 1 p1 walkto " + metres(x - 2 * std::cos(a)) + "," + metres(z - 2 * std::sin(a)) + "\n" +
         "at 1.5s p1 place ahead:2 +y 20 planks\n"
         "at 3s p1 ignite ahead:2\n"
         "at 4s p1 place ahead:1 +y 20 planks\n"
         "at 5.5s p1 ignite ahead:1\n";
}

// A visitor teleported 4 m behind the visited bot's place along its own heading (so it
// faces it) stands still and acts between the two: planks set alight 1 m ahead, its
// material 2 m ahead (2 m from the visited bot's place), then a dig there; again 3 m
// ahead, and the planks lit again (refused if they already burn).
std::string visitScript(std::size_t i, double vx, double vz) {
  return "at 1 p1 walkto " + metres(vx) + "," + metres(vz) + "\n" +  // stand still (no random walk)
         "at 1s p1 place ahead:1 +y 20 planks\n"
         "at 2.5s p1 ignite ahead:1\n"
         "at 3.5s p1 place ahead:2 +y 20 " + kMaterials[i] + "\n" +
         "at 4.5s p1 dig ahead:2 20\n" +
         // Again farther, in case water or a slope was in the way.
         "at 5s p1 place ahead:3 +y 20 " + kMaterials[i] + "\n" +
         "at 5.5s p1 ignite ahead:1\n"  // and the fire again, as the others do (a miss: no line of sight)
         "at 6s p1 dig ahead:3 20\n";
}

TEST_CASE("eight full bots 2 km apart on highlands at 150 ms and 5 % loss: actions applied, 0 desyncs, mirrors equal") {
  net::ServerConfig sc;
  sc.maxPeersPerAddress = kBots;  // all come from 127.0.0.1 through the link
  test::StreamedHighlands world = test::openStreamedHighlands("eight", sc);
  net::ServerHost& host = *world.host;

  net::LinkProfile profile;
  profile.latencyMs = 150;
  profile.loss = 0.05;
  auto link = net::LinkSimulator::open("127.0.0.1", host.port(), profile);
  REQUIRE_MESSAGE(link.has_value(), (link ? "" : link.error().message));

  struct Bot {
    std::unique_ptr<net::ClientConnection> conn;
    std::unique_ptr<bots::BotScript> script;
    std::uint64_t t = 0;         // ticks of the current script
    std::uint64_t scriptTicks = 0;
    sim::MaterialId material = sim::kAir;
    std::size_t sent[2][3] = {};  // [phase][dig, place, ignite] actions sent
    std::size_t digs[2] = {}, placed[2] = {}, ignites[2] = {}, rejected[2] = {};  // applied by the server
  };
  std::vector<Bot> bots(kBots);
  for (std::size_t i = 0; i < kBots; ++i) {
    net::ClientConfig cfg = test::streamedBotConfig((*link)->localPort(), "eight" + std::to_string(i + 1));
    cfg.streamRadiusMetres = 32.0;  // nine generators on two cores: a small disc
    // The floor, twice the disc (about 160 columns), though every mirror keeps every
    // modified column (about 400 here after the fires): the budget counts unmodified
    // columns only (when it counted all, the edits crowded out the disc the mirror
    // was streaming: holes met, a disc that never filled).
    cfg.residentColumns = 0;
    auto conn = net::ClientConnection::connect(cfg);
    REQUIRE_MESSAGE(conn.has_value(), (conn ? "" : conn.error().message));
    bots[i].conn = std::move(*conn);
    const auto m = host.state().materials->find(kMaterials[i]);
    REQUIRE(m.has_value());
    bots[i].material = *m;
  }
  const sim::MaterialId planks = host.state().materials->find("planks").value_or(sim::kAir);

  std::vector<sim::Command> adminCommands;
  std::uint32_t adminSequence = 0;
  server::AdminContext ctx;
  ctx.host = &host;
  ctx.commands = &adminCommands;
  ctx.commandSequence = &adminSequence;

  auto botOf = [&](std::uint32_t playerId) -> Bot* {
    for (Bot& b : bots)
      if (b.conn->phase() == net::ClientPhase::Playing && b.conn->playerId().value == playerId) return &b;
    return nullptr;
  };
  // Every voxel (and filled brick) the server changed, for the mirrors' check.
  std::vector<sim::VoxelCoord> editedVoxels;
  std::vector<sim::BrickCoord> filledBricks;
  struct VisitFire {
    sim::VoxelCoord at;        // where a visitor's fire caught
    std::size_t visited = 0;   // the bot it visited
    bool seen = false;         // the visited bot's mirror had that brick burning
  };
  std::vector<VisitFire> visitFires;
  int phase = 0;                            // 0 spread and walk, 1 visit
  bool sendInputs = true;
  auto count = [&](const sim::StepOutput& out) {
    for (const sim::EditRecord& e : out.edits) {
      if (e.kind == sim::EditRecord::Kind::Voxel)
        editedVoxels.push_back({e.x, e.y, e.z});
      else
        filledBricks.push_back({e.x, e.y, e.z});
      if (e.after == sim::kAir || e.after == planks) continue;
      for (Bot& b : bots)
        if (e.after == b.material) ++b.placed[phase];
    }
    for (const sim::Event& ev : out.events) {
      if (const auto* d = std::get_if<sim::DigEvent>(&ev); d && d->who.kind == sim::Actor::Kind::Player) {
        if (Bot* b = botOf(d->who.id)) ++b->digs[phase];
      } else if (const auto* g = std::get_if<sim::IgnitedEvent>(&ev); g && g->by.kind == sim::Actor::Kind::Player) {
        if (Bot* b = botOf(g->by.id)) {
          ++b->ignites[phase];
          for (const auto& [v, h] : kVisits)
            if (phase == 1 && b == &bots[v]) visitFires.push_back({g->position, h});
        }
      } else if (const auto* r = std::get_if<sim::CommandRejectedEvent>(&ev)) {
        if (Bot* b = botOf(r->player.value)) {
          ++b->rejected[phase];
          MESSAGE("rejected: bot " << (b - bots.data()) + 1 << " command " << int(r->commandIndex) << " reason "
                                   << int(r->reason) << " at tick " << out.tick);
        }
      }
    }
  };

  const Clock::time_point start = Clock::now();
  auto nowMs = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
  loam::test::HostPacing pacing(host, start);
  bots::BotTick botTick;
  // One tick: the server steps with what the admin queued, each bot follows and
  // plays its script (or stands still), then the loop keeps 60 Hz, skipping ticks
  // (no burst) when the loaded machine falls behind.
  auto tick = [&] {
    count(host.tick(adminCommands));
    adminCommands.clear();
    const double now = nowMs();
    if (host.state().tick % 600 == 0)
      MESSAGE("at " << now / 1000 << " s: server tick " << host.state().tick << ", fire cells "
                    << host.state().fire.cells.size() << ", voxels edited " << editedVoxels.size() << ", bot 1 t "
                    << bots[0].t);
    for (Bot& b : bots) {
      b.conn->service(now, 0);
      if (b.conn->phase() == net::ClientPhase::Playing && sendInputs) {
        if (b.script && b.t < b.scriptTicks) {
          b.script->tick(b.t++, b.conn->predictor().state(), &b.conn->mirror(), botTick);
          b.conn->sendInput(botTick.input);
          for (const sim::CommandBody& a : botTick.actions) {
            if (std::holds_alternative<sim::DigCommand>(a)) ++b.sent[phase][0];
            if (std::holds_alternative<sim::PlaceCommand>(a)) ++b.sent[phase][1];
            if (std::holds_alternative<sim::IgniteCommand>(a)) ++b.sent[phase][2];
            b.conn->sendAction(a);
          }
        } else {
          sim::PlayerInput still;
          still.yaw = b.conn->predictor().state().yaw;
          b.conn->sendInput(still);
        }
      }
      (void)b.conn->takeEvents();
    }
    for (VisitFire& f : visitFires)
      if (!f.seen)
        for (const sim::FireChange& c :
             sim::fireInCell(bots[f.visited].conn->mirror().fire, sim::cellOf(sim::brickOf(f.at))))
          f.seen = f.seen || c.corner == sim::fireCellOf(f.at);
    pacing.wait();
  };
  auto failed = [&] {
    for (Bot& b : bots)
      if (b.conn->phase() == net::ClientPhase::Failed || b.conn->phase() == net::ClientPhase::Disconnected) return true;
    return false;
  };
  // Ticks until done() (at least kLiveTicks), a bot fails, or `seconds` of wall time pass.
  auto runUntil = [&](double seconds, const auto& done) {
    const Clock::time_point until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                       std::chrono::duration<double>(seconds));
    for (int i = 0; !failed() && Clock::now() < until && (i < kLiveTicks || !done()); ++i) tick();
    return done() && !failed();
  };
  auto report = [&] {
    for (std::size_t i = 0; i < kBots; ++i)
      MESSAGE("bot " << i + 1 << ": " << std::string(net::phaseName(bots[i].conn->phase())) << " "
                     << bots[i].conn->error());
  };
  auto serverPlayer = [&](const Bot& b) -> const sim::Player& {
    const sim::Player* p = host.state().findPlayer(b.conn->playerId());
    REQUIRE(p != nullptr);
    return *p;
  };
  auto teleport = [&](const Bot& b, double x, double z) {
    const std::string line = "teleport #" + std::to_string(b.conn->playerId().value) + " " + metres(x) + " " + metres(z);
    const server::AdminReply r = server::runAdminCommand(line, ctx);
    INFO(line << " -> " << r.text);
    REQUIRE(r.ok);
  };

  // Every column within `radius` metres of the bot's player is in its mirror.
  auto discPresent = [](const Bot& b, double radius) {
    const sim::Vec3i p = b.conn->predictor().state().position;
    const std::int32_t vx = p.x >> sim::kUnitShift, vz = p.z >> sim::kUnitShift;
    const auto r = static_cast<std::int32_t>(radius * sim::kVoxelsPerMetre);
    constexpr std::int32_t kColumn = 1 << 7;  // voxels across a chunk column
    for (std::int32_t cz = (vz - r) >> 7; cz <= (vz + r) >> 7; ++cz)
      for (std::int32_t cx = (vx - r) >> 7; cx <= (vx + r) >> 7; ++cx) {
        const double nx = std::clamp(vx, cx * kColumn, cx * kColumn + kColumn - 1) - vx;
        const double nz = std::clamp(vz, cz * kColumn, cz * kColumn + kColumn - 1) - vz;
        if (nx * nx + nz * nz <= double(r) * r && !b.conn->mirror().world.columnPresent(sim::ChunkColumn{cx, cz}))
          return false;
      }
    return true;
  };

  // Join: all eight by the spawn.
  const bool joined = runUntil(120, [&] {
    return std::all_of(bots.begin(), bots.end(),
                       [](const Bot& b) { return b.conn->phase() == net::ClientPhase::Playing; });
  });
  if (!joined) report();
  REQUIRE(joined);
  const double joinedMs = nowMs();

  // Spread: 2 km apart; each plays once the ground around its new place is present.
  for (std::size_t i = 0; i < kBots; ++i) teleport(bots[i], kSpots[i][0], kSpots[i][1]);
  const bool spread = runUntil(60, [&] {
    return std::all_of(bots.begin(), bots.end(), [](const Bot& b) { return !b.conn->stats().teleportPlayableMs.empty(); });
  });
  if (!spread) report();
  REQUIRE(spread);
  const double spreadMs = nowMs();
  for (std::size_t i = 0; i < kBots; ++i) {
    const sim::Player& p = serverPlayer(bots[i]);
    CHECK(std::abs(p.motion.position.x - sim::unitsFromMetres(kSpots[i][0])) < sim::unitsFromMetres(2.0));
    CHECK(std::abs(p.motion.position.z - sim::unitsFromMetres(kSpots[i][1])) < sim::unitsFromMetres(2.0));
    auto script = sim::parseScript(mainScript(i, kSpots[i][0], kSpots[i][1]), "eight");
    REQUIRE_MESSAGE(script.has_value(), (script ? "" : script.error().message));
    bots[i].script = std::make_unique<bots::BotScript>(*script, 1);
    bots[i].t = 0;
    bots[i].scriptTicks = static_cast<std::uint64_t>(kMainSeconds * sim::kTicksPerSecond);
  }

  // Walk, dig, build, light fires.
  const bool walked = runUntil(150, [&] {
    return std::all_of(bots.begin(), bots.end(), [](const Bot& b) { return b.t >= b.scriptTicks; });
  });
  if (!walked) report();
  REQUIRE(walked);
  const double walkedMs = nowMs();
  for (std::size_t i = 0; i < kBots; ++i) {
    const sim::Player& p = serverPlayer(bots[i]);
    const double dx = static_cast<double>(p.motion.position.x) / sim::kUnitsPerMetre - kSpots[i][0];
    const double dz = static_cast<double>(p.motion.position.z) / sim::kUnitsPerMetre - kSpots[i][1];
    MESSAGE("bot " << i + 1 << " walked " << std::hypot(dx, dz) << " m");
    CHECK(std::hypot(dx, dz) > 10.0);  // it went somewhere
  }

  // Visit: two bots act beside two others; the others light their fires.
  phase = 1;
  for (std::size_t i = 0; i < kBots; ++i) {
    const sim::Vec3i at = serverPlayer(bots[i]).motion.position;
    auto script = sim::parseScript(fireScript(i, static_cast<double>(at.x) / sim::kUnitsPerMetre,
                                              static_cast<double>(at.z) / sim::kUnitsPerMetre),
                                   "fire");
    REQUIRE_MESSAGE(script.has_value(), (script ? "" : script.error().message));
    bots[i].script = std::make_unique<bots::BotScript>(*script, 1);
    bots[i].t = 0;
    bots[i].scriptTicks = static_cast<std::uint64_t>(kVisitSeconds * sim::kTicksPerSecond);
  }
  for (const auto& [v, h] : kVisits) {
    const sim::Vec3i at = serverPlayer(bots[h]).motion.position;
    // BotScript's "ahead" for the visitor's yaw (kept by the teleport).
    const double a = serverPlayer(bots[v]).motion.yaw / 65536.0 * 2 * std::numbers::pi;
    const double vx = static_cast<double>(at.x) / sim::kUnitsPerMetre - 4 * std::sin(a);
    const double vz = static_cast<double>(at.z) / sim::kUnitsPerMetre + 4 * std::cos(a);
    teleport(bots[v], vx, vz);
    auto script = sim::parseScript(visitScript(v, vx, vz), "visit");
    REQUIRE_MESSAGE(script.has_value(), (script ? "" : script.error().message));
    bots[v].script = std::make_unique<bots::BotScript>(*script, 1);
    bots[v].t = 0;
    bots[v].scriptTicks = 0;  // not before the teleport is playable
  }
  const bool visited = runUntil(60, [&] {
    bool done = true;
    for (const auto& [v, h] : kVisits) {
      Bot& b = bots[v];
      if (b.scriptTicks == 0 && b.conn->stats().teleportPlayableMs.size() >= 2 && discPresent(b, 24.0))
        b.scriptTicks = static_cast<std::uint64_t>(kVisitSeconds * sim::kTicksPerSecond);
      done = done && b.scriptTicks > 0 && b.t >= b.scriptTicks;
    }
    return done;
  });
  if (!visited) report();
  REQUIRE(visited);
  // A downpour: no fire spreads in it, and every one goes out within seconds.
  adminCommands.push_back({sim::kServerPlayer, ++adminSequence, sim::SetWeatherCommand{1000, 0, 0}});
  // Until every fire is out and its last CellState sent (changes are merged over
  // InterestConfig::cellStateEvery ticks): the mirrors' fire is compared below.
  const bool out = runUntil(kRainSeconds, [&] { return host.state().fire.cells.empty(); });
  MESSAGE("after the rain: " << host.state().fire.cells.size() << " cells burning");
  CHECK(out);
  runUntil(0.5, [] { return false; });

  // Stop input until every input is acknowledged, and every bot has every item of
  // its ordered stream (a step with nothing for it is skipped: its tick may trail the
  // server's by up to kStepHeartbeatTicks), and the cells a bot came near (a
  // visitor's new place) came whole within its budget. The server ticks meanwhile:
  // a lost item goes again only in a tick. Then the server stops, at a tick where
  // every bot has the world as the server has it.
  sendInputs = false;
  const std::uint64_t drainFrom = host.state().tick;
  bool drained = runUntil(30, [&] {
    return host.stats().cellsBehind == 0 && host.stats().streamUnacked == 0 &&
           std::all_of(bots.begin(), bots.end(), [](const Bot& b) { return b.conn->predictor().pending().empty(); });
  });
  MESSAGE("drained in " << host.state().tick - drainFrom << " ticks; cells behind " << host.stats().cellsBehind
                        << ", stream items unacknowledged " << host.stats().streamUnacked);
  if (!drained) {
    report();
    for (std::size_t i = 0; i < kBots; ++i)
      MESSAGE("bot " << i + 1 << ": " << bots[i].conn->predictor().pending().size() << " inputs pending");
  }
  CHECK(drained);
  MESSAGE("joined " << joinedMs / 1000 << " s, spread " << (spreadMs - joinedMs) / 1000 << " s, walked "
                    << (walkedMs - spreadMs) / 1000 << " s, total " << nowMs() / 1000 << " s; server tick "
                    << host.state().tick);

  // Every bot: in step with the server, every action kind applied.
  const sim::SimState& server = host.state();
  for (std::size_t i = 0; i < kBots; ++i) {
    const Bot& b = bots[i];
    const net::ClientConnection& c = *b.conn;
    const std::string state = std::string(net::phaseName(c.phase())) + " " + c.error();
    INFO("bot " << i + 1 << ": " << state);
    REQUIRE(c.phase() == net::ClientPhase::Playing);
    const net::ClientStats s = c.stats();
    MESSAGE("bot " << i + 1 << ": steps " << s.stepsApplied << ", desyncs " << s.desyncCount << ", holes met "
                   << s.holesMet << ", corrections " << s.prediction.corrections << ", teleports "
                   << s.prediction.teleports << ", resident " << c.mirror().world.presentColumns().size()
                   << "; sent dig/place/ignite " << b.sent[0][0] << "/" << b.sent[0][1] << "/" << b.sent[0][2]
                   << ", applied digs " << b.digs[0] << ", placed voxels " << b.placed[0] << ", fires " << b.ignites[0]
                   << ", rejected " << b.rejected[0] << "; visit: sent " << b.sent[1][0] << "/" << b.sent[1][1] << "/"
                   << b.sent[1][2] << ", digs " << b.digs[1] << ", placed voxels " << b.placed[1] << ", fires "
                   << b.ignites[1]);
    for (const net::Desync& d : s.desyncs) MESSAGE("desync at tick " << d.tick << ": " << d.what);
    CHECK(s.desyncCount == 0);
    CHECK(s.holesMet == 0);
    CHECK(c.serverTick() <= server.tick);
    CHECK(c.serverTick() + net::kStepHeartbeatTicks > server.tick);
    CHECK(b.sent[0][0] >= 8);
    CHECK(b.digs[0] >= 2);
    CHECK(b.placed[0] > 0);
    CHECK(b.ignites[0] + b.ignites[1] >= 1);
  }
  for (const auto& visit : kVisits) {
    const std::size_t v = visit[0], h = visit[1];  // not a structured binding: INFO captures them
    INFO("visitor " << v + 1 << " beside bot " << h + 1);
    const sim::Vec3i vp = serverPlayer(bots[v]).motion.position, hp = serverPlayer(bots[h]).motion.position;
    MESSAGE("visitor " << v + 1 << " ends " << std::hypot(double(vp.x - hp.x), double(vp.z - hp.z)) / sim::kUnitsPerMetre
                       << " m from bot " << h + 1);
    CHECK(bots[v].digs[1] >= 1);
    CHECK(bots[v].placed[1] > 0);
    CHECK(bots[v].ignites[1] >= 1);
  }

  // Every voxel the server changed near a bot reads the same in its mirror; edits
  // 2 km away never reached it (interest follows residency), so it holds fewer.
  auto byXyz = [](const sim::VoxelCoord& a, const sim::VoxelCoord& b) {
    return std::tie(a.x, a.y, a.z) < std::tie(b.x, b.y, b.z);
  };
  std::sort(editedVoxels.begin(), editedVoxels.end(), byXyz);
  editedVoxels.erase(std::unique(editedVoxels.begin(), editedVoxels.end()), editedVoxels.end());
  std::sort(filledBricks.begin(), filledBricks.end());
  filledBricks.erase(std::unique(filledBricks.begin(), filledBricks.end()), filledBricks.end());
  for (const sim::BrickCoord& br : filledBricks)
    for (unsigned k = 0; k < sim::kBrickVoxels; ++k) editedVoxels.push_back(sim::voxelOfBrick(br, k));
  MESSAGE(editedVoxels.size() << " voxels edited, " << filledBricks.size() << " bricks filled");
  CHECK(editedVoxels.size() > 0);
  constexpr double kNearMetres = 24;  // inside every bot's 32 m reach (its stream radius)
  for (std::size_t i = 0; i < kBots; ++i) {
    const sim::Vec3i p = serverPlayer(bots[i]).motion.position;
    std::size_t differ = 0, near = 0;
    for (const sim::VoxelCoord& v : editedVoxels) {
      const double dx = double(v.x) * sim::kUnitsPerVoxel - p.x, dz = double(v.z) * sim::kUnitsPerVoxel - p.z;
      if (std::hypot(dx, dz) > kNearMetres * sim::kUnitsPerMetre) continue;
      ++near;
      if (bots[i].conn->mirror().world.get(v) == server.world.get(v)) continue;
      if (differ++ == 0)
        MESSAGE("bot " << i + 1 << ": voxel " << v.x << "," << v.y << "," << v.z << " ("
                       << std::hypot(double(v.x) * sim::kUnitsPerVoxel - p.x, double(v.z) * sim::kUnitsPerVoxel - p.z) /
                              sim::kUnitsPerMetre
                       << " m away, column present "
                       << bots[i].conn->mirror().world.columnPresent({v.x >> 7, v.z >> 7}) << ") is "
                       << int(bots[i].conn->mirror().world.get(v)) << ", the server's " << int(server.world.get(v)));
    }
    const net::ClientStats st = bots[i].conn->stats();
    const auto bytesOf = [&](const char* type) {
      auto it = st.received.find(type);
      return it == st.received.end() ? std::uint64_t{0} : it->second.bytes;
    };
    MESSAGE("bot " << i + 1 << ": " << near << " edited voxels within " << kNearMetres << " m, " << st.cellChecks
                   << " cells caught up whole, " << st.cellsDropped << " dropped; received StepBatch " << bytesOf("StepBatch") << " B, CellState "
                   << bytesOf("CellState") << " B");
    CHECK(near > 0);
    CHECK_MESSAGE(differ == 0, "bot " << i + 1 << ": " << differ << " edited voxels differ");
  }

  // Fire and water of the cells around each bot (within its reach) equal the server's.
  for (std::size_t i = 0; i < kBots; ++i) {
    const sim::CellCoord home = sim::cellOf(sim::brickOf(sim::voxelOf(serverPlayer(bots[i]).motion.position)));
    for (int dz = -2; dz <= 2; ++dz)
      for (int dx = -2; dx <= 2; ++dx) {
        const sim::CellCoord cell{home.x + dx, home.z + dz};
        INFO("bot " << i + 1 << ", cell " << cell.x << "," << cell.z);
        CHECK(sim::fireInCell(bots[i].conn->mirror().fire, cell) == sim::fireInCell(server.fire, cell));
        CHECK(sim::waterInCell(bots[i].conn->mirror().water, cell) == sim::waterInCell(server.water, cell));
      }
  }
  // The visitors' fires reached the visited bots' mirrors while they burned.
  CHECK(visitFires.size() >= kVisits.size());
  for (const VisitFire& f : visitFires) {
    INFO("visited bot " << f.visited + 1 << ", fire at " << f.at.x << "," << f.at.y << "," << f.at.z);
    CHECK(f.seen);
  }
}

}  // namespace
