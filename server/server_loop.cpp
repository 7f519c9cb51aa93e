#include "server/server_loop.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "net/host_log.h"
#include "net/server_host.h"
#include "server/accounts.h"
#include "server/admin.h"
#include "server/agones.h"
#include "server/commit_writer.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/ops_http.h"
#include "server/saves.h"
#include "sim/gen/column_streamer.h"
#include "sim/gen/generator.h"
#include "sim/save/save.h"
#include "sim/gen/scene.h"
#include "sim/save/state_codec.h"
#include "sim/world/world_hash.h"

namespace loam::server {

namespace {

using Clock = std::chrono::steady_clock;

/// Modified columns stay resident within this of a player: beyond any client's reach
/// (net::InterestConfig::cellReachMetres, 128 m) and the streamer's prefetch radius, so
/// a client's catch-up seldom loads a column back on the step.
constexpr std::int32_t kPageOutKeepVoxels = 192 * sim::kVoxelsPerMetre;

/// Set by the signal handler, read by the loop (the only thing a handler may touch).
std::atomic<int> gStopSignal{0};
static_assert(std::atomic<int>::is_always_lock_free);

void onStopSignal(int signo) { gStopSignal.store(signo, std::memory_order_relaxed); }

void installSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: a signal wakes the socket wait at once. SA_RESETHAND: a second
  // Ctrl-C during the final save kills the process the default way.
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

double msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

/// Tick times and counters over one stats interval.
struct StatsWindow {
  Clock::time_point start;
  std::vector<double> tickUs;  ///< totalUs of every tick in the window
  std::uint64_t overruns = 0;
  net::ServerStats base;       ///< host counters at the window's start

  void print(const net::ServerHost& host, Clock::time_point now) {
    net::ServerStats s = host.stats();
    double secs = std::max(1e-3, std::chrono::duration<double>(now - start).count());
    double p50 = 0, p99 = 0, mx = 0;
    if (!tickUs.empty()) {
      auto at = [&](double q) {
        std::size_t i = std::min(tickUs.size() - 1, static_cast<std::size_t>(q * static_cast<double>(tickUs.size())));
        std::nth_element(tickUs.begin(), tickUs.begin() + static_cast<std::ptrdiff_t>(i), tickUs.end());
        return tickUs[i] / 1000.0;
      };
      p50 = at(0.50);
      p99 = at(0.99);
      mx = *std::max_element(tickUs.begin(), tickUs.end()) / 1000.0;
    }
    logLine("stats: tick %" PRIu64 ", players %u (peers %u), ticks %zu, step ms p50 %.2f p99 %.2f max %.2f, "
            "KB/s in %.1f out %.1f, overruns %" PRIu64 ", malformed %" PRIu64,
            host.state().tick, s.players, s.peers, tickUs.size(), p50, p99, mx,
            static_cast<double>(s.bytesIn - base.bytesIn) / 1024.0 / secs,
            static_cast<double>(s.bytesOut - base.bytesOut) / 1024.0 / secs, overruns, s.malformed - base.malformed);
    start = now;
    tickUs.clear();
    overruns = 0;
    base = std::move(s);
  }
};

/// Generates the scene's world (a log line every 25%, a heartbeat per chunk) and
/// builds the state around it; fills hosted (the generated world's hashes) when given.
/// With a streamer, the world is streamed instead: only what the state's setup reads
/// is generated now, the rest as the players reach it.
sim::Result<sim::SimState> generateState(const sim::Scene& scene, std::uint64_t seed, net::HostedWorld* hosted,
                                         OpsBoard& board, sim::ColumnStreamer* streamer) {
  auto t0 = Clock::now();
  if (streamer != nullptr) {
    auto state = sim::createStreamedSimState(scene, seed, *streamer);
    board.beat();
    if (!state) return state.error();
    if (hosted != nullptr) *hosted = net::describeWorld(scene, state->world);
    logLine("streaming world '%s' seed %" PRIu64 ": %zu chunk columns generated at start in %.0f ms, the rest "
            "as players reach them",
            scene.name.c_str(), seed, state->world.presentColumns().size(), msBetween(t0, Clock::now()));
    return state;
  }
  int lastQuarter = 0;
  sim::GenerateOptions go;
  go.progress = [&](double f) {
    board.beat();
    int quarter = static_cast<int>(f * 4.0);
    if (quarter > lastQuarter) {
      lastQuarter = quarter;
      logLine("generating world: %d%%", quarter * 25);
    }
  };
  auto world = sim::generateWorld(scene, seed, sim::kGeneratorVersion, go);
  if (!world) return world.error();
  auto t1 = Clock::now();
  board.beat();
  if (hosted != nullptr) {
    // The hash clients compare against is of the generated world, before any save.
    *hosted = net::describeWorld(scene, *world);
    logLine("generated world '%s' seed %" PRIu64 " in %.0f ms (hash %016" PRIx64 ", %.0f ms)", scene.name.c_str(),
            seed, msBetween(t0, t1), hosted->generatedHash, msBetween(t1, Clock::now()));
  }
  return sim::createSimStateFromWorld(scene, seed, std::move(*world));
}

/// Reads one command per line from the terminal, prints one reply per line. Detached:
/// a blocking read cannot be interrupted, and the process exits under it.
void startTerminalReader(std::shared_ptr<AdminQueue> queue) {
  std::thread([queue] {
    for (std::string line; std::getline(std::cin, line);) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      std::future<AdminReply> f = queue->submit("terminal", line);
      if (f.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
        std::fputs("error: the server did not answer in time\n", stdout);
      } else {
        try {
          AdminReply r = f.get();
          std::string out = (r.ok ? "" : "error: ") + r.text + "\n";
          std::fwrite(out.data(), 1, out.size(), stdout);
        } catch (const std::future_error&) {
          return;  // stopping
        }
      }
      std::fflush(stdout);
    }
    // EOF (stdin closed): the console is gone, the server goes on.
  }).detach();
}

std::string clockText(std::uint32_t timeOfDay, std::uint32_t dayLength) {
  std::uint64_t minutes = static_cast<std::uint64_t>(timeOfDay) * 24 * 60 / std::max<std::uint32_t>(dayLength, 1);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02u:%02u", static_cast<unsigned>(minutes / 60), static_cast<unsigned>(minutes % 60));
  return buf;
}

const char* signalName(int signo) { return signo == SIGINT ? "SIGINT" : signo == SIGTERM ? "SIGTERM" : "signal"; }

}  // namespace

int runServer(const ServerOptions& options) {
  setLogFormat(options.logFormat == "json" ? LogFormat::Json : LogFormat::Text);
  // The host's own lines (rejections, join streams) go through the same logger.
  net::setHostLogSink([](const char* line) noexcept { logAs(levelOf(line), "server", "%s", line); });
  installSignalHandlers();
  logLine("loam-server starting: scene %s, port %u, bind %s, save dir %s, save every %g s",
          options.scenePath.c_str(), options.port, options.bind.c_str(), options.saveDir.c_str(),
          options.saveIntervalSeconds);

  auto scene = sim::loadScene(options.scenePath);
  if (!scene) {
    logLine("error: cannot load scene: %s", scene.error().message.c_str());
    return kExitRuntime;
  }
  const std::uint64_t seed = options.seed.value_or(scene->defaultSeed);

  // The ops endpoint and the Agones client start before the world is generated, so
  // "starting" (readiness 503) is observable while it is.
  OpsBoard board(OpsIdentity{options.name, scene->name, seed, options.maxPlayers, LOAM_VERSION});
  // Shared: the detached terminal reader may outlive this function by a moment.
  auto adminQueue = std::make_shared<AdminQueue>();
  std::unique_ptr<OpsHttpServer> http;
  if (options.httpPort != 0) {
    auto started = OpsHttpServer::start(options.httpBind, options.httpPort, board, options.adminToken,
                                        adminQueue.get());
    if (!started) {
      logLine("error: %s", started.error().message.c_str());
      return kExitRuntime;
    }
    http = std::move(*started);
  }
  std::unique_ptr<AgonesClient> agones;
  if (options.agonesSdkPort != 0) agones = std::make_unique<AgonesClient>(options.agonesSdkPort, board);

  std::error_code ec;
  std::filesystem::create_directories(options.saveDir, ec);
  if (ec || !std::filesystem::is_directory(options.saveDir)) {
    logLine("error: cannot create save dir %s: %s", options.saveDir.c_str(),
            ec ? ec.message().c_str() : "not a folder");
    return kExitRuntime;
  }

  BanList bans((std::filesystem::path(options.saveDir) / "bans.txt").string());
  if (bans.size() > 0) logAs(LogLevel::Info, "admin", "loaded bans=%zu from %s", bans.size(), bans.path().c_str());

  // A world too big to generate whole is streamed (sim/gen/column_streamer.h).
  std::unique_ptr<sim::ColumnStreamer> streamer;
  if (!sim::generatableWhole(*scene)) {
    auto made = sim::ColumnStreamer::create(
        *scene, seed,
        {.threads = static_cast<int>(options.streamThreads), .maxResidentColumns = options.residentColumns});
    if (!made) {
      logLine("error: cannot stream scene %s: %s", options.scenePath.c_str(), made.error().message.c_str());
      return kExitRuntime;
    }
    streamer = std::move(made).value();
  }
  net::HostedWorld hosted;
  auto state = generateState(*scene, seed, &hosted, board, streamer.get());
  if (!state) {
    logLine("error: cannot generate scene %s: %s", options.scenePath.c_str(), state.error().message.c_str());
    return kExitRuntime;
  }
  const sim::SaveIdentity identity{state->sceneHash, seed, sim::kGeneratorVersion};
  auto opened = openWorldDb(
      options.saveDir, scene->name, identity, *state,
      [&] { return generateState(*scene, seed, nullptr, board, streamer.get()); }, options.freshWorld,
      options.skipDamagedBricks);
  if (!opened) {
    logLine("error: cannot open the world: %s", opened.error().message.c_str());
    return kExitRuntime;
  }
  if (!opened->stop.empty()) {
    // Never silently start another world over the one the operator saved.
    logLine("error: %s", opened->stop.c_str());
    return kExitConfig;
  }
  board.beat();
  if (int signo = gStopSignal.load(); signo != 0) {
    logLine("stopping (%s) before start", signalName(signo));
    board.setPhase(OpsPhase::Stopping);
    if (agones) agones->shutdown();
    return kExitOk;
  }

  // The simulation refuses joins past its own cap; never let that be below ours.
  state->rules.maxPlayers = std::max(state->rules.maxPlayers, options.maxPlayers);

  net::ServerConfig config;
  config.name = options.name;
  config.bindAddress = options.bind;
  config.port = options.port;
  config.maxPlayers = options.maxPlayers;
  config.bandwidthCapBytesPerSecond = options.bandwidthCapKBps * 1024u;
  config.maxPeersPerAddress = options.maxPeersPerAddress;
  config.joinsPerMinutePerAddress = options.joinsPerMinutePerAddress;
  config.auth = net::parseAuthMode(options.auth).value_or(net::AuthMode::Off);  // config checked the name
  if (config.auth != net::AuthMode::Off) {
    auto accounts = AccountStore::open((std::filesystem::path(options.saveDir) / "accounts.txt").string());
    if (!accounts) {
      logLine("error: accounts: %s", LogValue(accounts.error().message).c_str());
      return kExitRuntime;
    }
    logAs(LogLevel::Info, "accounts", "auth=%s accounts=%zu from %s", net::authModeName(config.auth),
          (*accounts)->size(), LogValue((*accounts)->path()).c_str());
    config.accounts = std::move(*accounts);
  }
  auto hostOpened = net::ServerHost::open(config, std::move(*state), std::move(hosted), streamer.get());
  if (!hostOpened) {
    logLine("error: cannot start the server: %s", hostOpened.error().message.c_str());
    return kExitRuntime;
  }
  net::ServerHost& host = **hostOpened;
  host.setAdmissionFilter([&bans](const std::string& address, const std::string& name) {
    return bans.check(address, name);
  });
  logLine("listening on %s:%u (UDP): server '%s', scene %s seed %" PRIu64 ", tick %" PRIu64 ", max %u players",
          options.bind.c_str(), host.port(), options.name.c_str(), scene->name.c_str(), seed, host.state().tick,
          options.maxPlayers);

  CommitWriter writer(std::move(opened->db));
  // A streamed world's columns holding edits load from the database as they are read
  // and page out when nobody is near (sim/save/world_db_columns.h).
  sim::WorldDbColumns* const stored = opened->stored.get();
  std::uint64_t failuresAtSubmit = 0;
  // Counters for the ops endpoint, published from this thread (see server/metrics.h).
  OpsSnapshot published;
  std::uint64_t overrunsTotal = 0, droppedTotal = 0;
  auto fillSnapshot = [&](OpsSnapshot& o) {
    o.tick = host.state().tick;
    o.host = host.stats();
    o.overruns = overrunsTotal;
    o.ticksDropped = droppedTotal;
    CommitStats ss = writer.stats();
    o.saves = ss.commits;
    o.saveFailures = ss.failures;
    o.lastSaveSeconds = ss.lastSeconds;
    o.lastSaveBytes = ss.lastBytes;
    const sim::SimState& state = host.state();
    o.worldBytes = state.world.memoryBytes();  // O(chunks), 10 times a second
    o.modifiedBricks = state.world.modifiedCount();
    o.fireCells = state.fire.cells.size();
    if (stored != nullptr) {
      const sim::StoredColumnStats st = stored->stats();
      o.dbColumnsLoaded = st.columnsLoaded;
      o.dbColumnsPagedOut = st.columnsPagedOut;
      o.dbReadProblems = st.problems;
    }
  };
  fillSnapshot(published);
  board.publish(published);
  board.beat();
  board.setPhase(OpsPhase::Ready);
  if (agones) agones->notifyReady();
  std::uint64_t lastSavedTick = host.state().tick;  // the database holds this tick already
  // The bricks the steps' edits touched since the last commit (sorted and made unique
  // at capture, or when the list doubles).
  std::vector<sim::BrickCoord> touched;
  std::size_t touchedUnique = 0;
  auto recordTouched = [&](const std::vector<sim::EditRecord>& edits) {
    for (const sim::EditRecord& e : edits) touched.push_back(sim::editBrick(e));
    if (stored != nullptr)
      for (const sim::EditRecord& e : edits) stored->touch(sim::editBrick(e));
    if (touched.size() > 2 * touchedUnique + 4096) {
      std::sort(touched.begin(), touched.end());
      touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
      touchedUnique = touched.size();
    }
  };
  // Recaptures the touched bricks and copies the replicated state (the only part that
  // reads the state) and hands them to the writer thread, which encodes the blobs and
  // commits.
  auto captureAndSubmit = [&]() {
    const sim::SimState& s = host.state();
    if (s.tick == lastSavedTick) return;
    auto t0 = Clock::now();
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    auto termOf = [&](sim::ChunkCoord c) { return host.chunkTerm(c); };
    sim::WorldDbCommit commit = sim::captureCommit(s.world, touched, termOf);
    commit.tick = s.tick;
    sim::StateCopy state = sim::copyState(s);
    double captureMs = msBetween(t0, Clock::now());
    failuresAtSubmit = writer.stats().failures;
    if (writer.submit(std::move(commit), std::move(state), captureMs)) {
      lastSavedTick = s.tick;
      touched.clear();
      touchedUnique = 0;
      if (stored != nullptr) stored->submitted();
    }
  };
  // Pages out the modified columns nobody is near once their edits are in the
  // database; they load again when something reads them.
  auto pageOut = [&]() {
    if (stored == nullptr) return;
    if (stored->inFlight()) {
      if (writer.busy()) return;
      stored->landed(writer.stats().failures == failuresAtSubmit);
      if (stored->inFlight()) return;
    }
    const std::vector<sim::ChunkColumn> columns = sim::columnsToPageOut(host.state(), *stored, kPageOutKeepVoxels);
    if (columns.empty()) return;
    stored->pageOut(columns, host.state().world.bounds(), [&](sim::ChunkCoord c) { return host.chunkTerm(c); });
    const int released = host.dropColumns(columns);
    logLine("paged out %d columns holding edits (nobody within %d m; %zu columns resident)", released,
            kPageOutKeepVoxels / sim::kVoxelsPerMetre, host.state().world.presentColumns().size());
  };

  constexpr auto kTickPeriod = TickPacer::periodOf(sim::kTicksPerSecond);
  constexpr int kMaxBurst = 4;
  const Clock::time_point start = Clock::now();
  const Clock::time_point never = Clock::time_point::max();
  TickPacer pacer(kTickPeriod, kMaxBurst, start);
  const Clock::time_point deadline = options.durationSeconds > 0 ? start + seconds(options.durationSeconds) : never;
  const Clock::duration saveEvery = seconds(options.saveIntervalSeconds);
  Clock::time_point nextSave = options.saveIntervalSeconds > 0 ? start + saveEvery : never;
  const Clock::duration statsEvery = seconds(options.statsIntervalSeconds);
  Clock::time_point nextStats = options.statsIntervalSeconds > 0 ? start + statsEvery : never;
  constexpr auto kPollEvery = std::chrono::milliseconds(250);
  Clock::time_point nextPoll = start + kPollEvery;
  constexpr auto kPageOutEvery = std::chrono::seconds(5);
  Clock::time_point nextPageOut = start + kPageOutEvery;
  constexpr auto kPublishEvery = std::chrono::milliseconds(100);
  Clock::time_point nextPublish = http ? start + kPublishEvery : never;

  // Admin console: requests run here between ticks; their sim commands go into the next tick.
  std::vector<sim::Command> adminCommands;
  std::uint32_t adminSequence = 0;
  std::vector<AdminRequest> adminRequests;
  AdminContext adminContext;
  adminContext.host = &host;
  adminContext.bans = &bans;
  adminContext.commands = &adminCommands;
  adminContext.commandSequence = &adminSequence;
  adminContext.saveNow = [&]() -> std::string {
    if (writer.busy()) return "a commit is still being written; try again";
    captureAndSubmit();
    return "";
  };
  adminContext.stats = [&]() {
    const sim::SimState& st = host.state();
    net::ServerStats hs = host.stats();
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "tick %" PRIu64 " time %s rain %u wind %u cm/s players %u peers %u bytes_in %" PRIu64
                  " bytes_out %" PRIu64 " overruns %" PRIu64 " saves %" PRIu64 " uptime %.0f s",
                  st.tick, clockText(sim::timeOfDayAt(st.weather, st.tick), st.weather.dayLength).c_str(),
                  static_cast<unsigned>(st.weather.rain), static_cast<unsigned>(st.weather.windStrength), hs.players,
                  hs.peers, hs.bytesIn, hs.bytesOut, overrunsTotal, writer.stats().commits, board.uptimeSeconds());
    return std::string(buf);
  };
  if (::isatty(STDIN_FILENO) == 1) {
    startTerminalReader(adminQueue);
    logAs(LogLevel::Info, "admin", "console on this terminal: type help");
  }

  StatsWindow window;
  window.start = start;
  window.base = host.stats();
  if (options.statsIntervalSeconds > 0) {
    window.tickUs.reserve(static_cast<std::size_t>(std::min(options.statsIntervalSeconds * 60.0 + 64.0, 1e6)));
  }
  std::uint64_t rejected = window.base.rejected;
  Clock::time_point lastOverrun{};
  bool inOverrun = false;
  double burstMaxUs = 0;  // slowest tick since the last wait, for the overrun line
  bool savePostponedLogged = false;
  std::map<std::uint32_t, std::string> names;  // player names, for the "left" line
  std::string stopReason;
  // Players restored from a save have no session; the host makes them leave in the
  // first step, and the "left" lines should name them.
  for (const sim::Player& p : host.state().players) names[p.id.value] = std::string(p.name.view());

  for (;;) {
    if (int signo = gStopSignal.load(std::memory_order_relaxed); signo != 0) {
      stopReason = signalName(signo);
      break;
    }
    Clock::time_point now = Clock::now();
    if (now >= deadline) {
      stopReason = "duration reached";
      break;
    }
    if (pacer.shouldTick(now)) {
      const sim::StepOutput& out = host.tick(adminCommands);
      adminCommands.clear();
      recordTouched(out.edits);
      pacer.ticked();
      double tickUs = host.lastTickTimes().totalUs;
      burstMaxUs = std::max(burstMaxUs, tickUs);
      published.step.add(tickUs / 1e6);
      board.beat();
      if (options.statsIntervalSeconds > 0 && window.tickUs.size() < window.tickUs.capacity()) {
        window.tickUs.push_back(tickUs);
      }
      for (const sim::Event& e : out.events) {
        if (const auto* j = std::get_if<sim::PlayerJoinedEvent>(&e)) {
          std::string name(j->name.view());
          logLine("player %u name=%s joined at tick %" PRIu64 " (%zu playing)", j->player.value,
                  LogValue(name).c_str(), out.tick, host.state().players.size());
          names[j->player.value] = std::move(name);
        } else if (const auto* l = std::get_if<sim::PlayerLeftEvent>(&e)) {
          auto it = names.find(l->player.value);
          logLine("player %u name=%s left at tick %" PRIu64 " (%zu playing)", l->player.value,
                  LogValue(it != names.end() ? it->second : "?").c_str(), out.tick, host.state().players.size());
          if (it != names.end()) names.erase(it);
        }
      }
      continue;  // catch up (at most kMaxBurst ticks) before anything else
    }

    const double behindMs = msBetween(pacer.nextDue(), now);
    if (std::int64_t dropped = pacer.endBurst(now); dropped > 0) {
      ++overrunsTotal;
      ++window.overruns;
      droppedTotal += static_cast<std::uint64_t>(dropped);
      host.skippedTicks(static_cast<std::uint64_t>(dropped));  // the clients' inputs for them are owed
      if (!inOverrun) {
        logLine("overrun at tick %" PRIu64 ": still %.0f ms behind after %d catch-up ticks (slowest %.1f ms); "
                "dropped %" PRId64 " ticks (one line per episode; %" PRIu64 " overruns since start)",
                host.state().tick, behindMs, kMaxBurst, burstMaxUs / 1000.0, dropped, overrunsTotal);
      }
      inOverrun = true;
      lastOverrun = now;
    } else if (inOverrun && now - lastOverrun > std::chrono::seconds(1)) {
      inOverrun = false;  // a second without dropping: the episode is over
    }
    board.setKeepingUp(!inOverrun);
    burstMaxUs = 0;

    adminQueue->tryTake(adminRequests);
    for (AdminRequest& r : adminRequests) {
      AdminReply reply = runAdminCommand(r.line, adminContext);
      logAs(reply.ok ? LogLevel::Info : LogLevel::Warn, "admin", "who=%s command=%s result=%s",
            LogValue(r.who).c_str(), LogValue(adminVerb(r.line)).c_str(), reply.ok ? "ok" : "refused");
      r.reply.set_value(std::move(reply));
    }
    adminRequests.clear();

    if (now >= nextSave) {
      if (writer.busy()) {
        if (!savePostponedLogged) logLine("commit postponed: the previous commit is still being written");
        savePostponedLogged = true;
      } else {
        savePostponedLogged = false;
        captureAndSubmit();
        nextSave = now + saveEvery;
      }
    }
    if (now >= nextPageOut) {
      nextPageOut = now + kPageOutEvery;
      pageOut();
    }
    if (now >= nextPoll) {
      nextPoll = now + kPollEvery;
      if (stored != nullptr)
        for (const std::string& line : stored->takeProblems()) logLine("world database: %s", line.c_str());
      // The host reports rejections as a counter only; the reason went to the client.
      std::uint64_t r = host.stats().rejected;
      if (r > rejected) {
        logLine("rejected %" PRIu64 " session(s) (%" PRIu64 " since start)", r - rejected, r);
        rejected = r;
      }
    }
    if (now >= nextStats) {
      window.print(host, now);
      nextStats = now + statsEvery;
    }
    if (now >= nextPublish) {
      nextPublish = now + kPublishEvery;
      fillSnapshot(published);
      board.tryPublish(published);  // skipped (next time) when a scrape holds the lock
    }

    // Sleep in the socket until the next tick is due, so input is handled at once.
    Clock::time_point due = std::min(pacer.nextDue(), deadline);
    now = Clock::now();
    if (due > now) {
      auto waitMs = std::chrono::duration_cast<std::chrono::milliseconds>(due - now).count();
      if (waitMs >= 1) {
        host.waitForInput(static_cast<int>(waitMs));
      } else {
        std::this_thread::sleep_until(due);
      }
    }
  }

  logLine("stopping (%s) at tick %" PRIu64 "; %" PRIu64 " overruns, %" PRIu64 " ticks dropped since start",
          stopReason.c_str(), host.state().tick, overrunsTotal, droppedTotal);
  board.setPhase(OpsPhase::Stopping);
  writer.waitIdle();  // a periodic commit still in flight (its result is logged)
  captureAndSubmit();
  host.shutdown();
  bool saved = writer.waitIdle();
  fillSnapshot(published);
  board.publish(published);
  // Agones is told after the final save, so the pod is not deleted under it.
  if (agones) agones->shutdown();
  if (http) http->stop();
  if (!saved) {
    logLine("error: the final commit failed");
    return kExitRuntime;
  }
  logLine("stopped");
  return kExitOk;
}

}  // namespace loam::server
