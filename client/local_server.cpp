#include "client/local_server.h"

#include <chrono>
#include <cmath>
#include <filesystem>

#include "net/protocol.h"
#include "net/tick_pacer.h"
#include "sim/gen/generator.h"
#include "sim/gen/scene.h"

namespace loam::client {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

sim::Result<std::unique_ptr<LocalServer>> LocalServer::start(const std::string& scenePath,
                                                             std::optional<std::uint64_t> seed) {
  auto scene = sim::loadScene(scenePath);
  if (!scene) return sim::Error{"local server: cannot load scene " + scenePath + ": " + scene.error().message};
  const std::uint64_t s = seed.value_or(scene->defaultSeed);
  std::unique_ptr<LocalServer> server(new LocalServer());
  // A world too big to generate whole is streamed, as loam-server does.
  const bool streamed = !sim::generatableWhole(*scene);
  if (streamed) {
    auto made = sim::ColumnStreamer::create(*scene, s);
    if (!made) return sim::Error{"local server: cannot stream " + scenePath + ": " + made.error().message};
    server->streamer_ = std::move(made).value();
  }
  auto state = streamed ? sim::createStreamedSimState(*scene, s, *server->streamer_) : sim::createSimState(*scene, s);
  if (!state) return sim::Error{"local server: cannot generate " + scenePath + ": " + state.error().message};

  server->sceneName_ = scene->name;
  std::filesystem::path dir = std::filesystem::path(scenePath).parent_path();
  server->sceneDir_ = dir.empty() ? std::string(".") : dir.string();
  server->dayLength_ = std::max<std::uint32_t>(1, state->weather.dayLength);
  // Copy before the host takes the state: clients start from the tick-0 world (a
  // streamed world's clients stream their own).
  if (!streamed) server->generated_ = std::make_shared<const sim::SimState>(*state);
  net::HostedWorld hosted = net::describeWorld(*scene, state->world);

  net::ServerConfig config;
  config.name = "local";
  config.bindAddress = "127.0.0.1";
  config.port = 0;
  config.maxPlayers = 16;
  // Loopback: no need to hold the first snapshot back to 256 KB/s.
  config.bandwidthCapBytesPerSecond = 16u << 20;
  auto host = net::ServerHost::open(config, std::move(*state), std::move(hosted), server->streamer_.get());
  if (!host) return sim::Error{"local server: " + host.error().message};
  server->host_ = std::move(*host);
  server->port_ = server->host_->port();
  server->thread_ = std::thread([p = server.get()] { p->run(); });
  return server;
}

LocalServer::~LocalServer() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

net::WorldFactory LocalServer::worldFactory() const {
  std::shared_ptr<const sim::SimState> generated = generated_;
  if (!generated) return {};  // streamed: each client streams its own
  return [generated](const sim::Scene& scene, std::uint64_t seed,
                     const std::function<void(double)>& progress) -> sim::Result<sim::SimState> {
    if (sim::sceneJoinHash(scene) != generated->sceneHash || seed != generated->seed) {
      return sim::createSimState(scene, seed);
    }
    progress(1.0);
    return sim::SimState(*generated);
  };
}

void LocalServer::post(const sim::CommandBody& body) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.push_back(body);
}

void LocalServer::setTimeOfDay(double dayFraction) {
  double f = dayFraction - std::floor(dayFraction);
  auto t = static_cast<std::uint32_t>(std::llround(f * dayLength_));
  if (t >= dayLength_) t = 0;
  post(sim::SetTimeCommand{t});
}

void LocalServer::run() {
  constexpr int kMaxBurst = 4;
  net::TickPacer pacer(net::TickPacer::periodOf(sim::kTicksPerSecond), kMaxBurst, Clock::now());
  std::vector<sim::CommandBody> bodies;
  std::vector<sim::Command> commands;
  while (!stop_.load(std::memory_order_relaxed)) {
    const Clock::time_point now = Clock::now();
    if (pacer.shouldTick(now)) {
      bodies.clear();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        bodies.swap(pending_);
      }
      commands.clear();
      for (sim::CommandBody& b : bodies) commands.push_back(sim::Command{sim::kServerPlayer, ++sequence_, std::move(b)});
      host_->tick(commands);
      pacer.ticked();
      tick_.store(host_->state().tick, std::memory_order_relaxed);
      players_.store(static_cast<std::uint32_t>(host_->state().players.size()), std::memory_order_relaxed);
      continue;
    }
    pacer.endBurst(now);  // a dropped backlog is fine for a local game
    const auto due = pacer.nextDue();
    const auto waitMs = std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now()).count();
    // Short waits so a stop request is seen quickly.
    if (waitMs >= 1) host_->waitForInput(static_cast<int>(std::min<long long>(waitMs, 20)));
  }
  host_->shutdown();
}

}  // namespace loam::client
