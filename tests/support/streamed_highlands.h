// A server hosting scenes/highlands.toml streamed (its ColumnStreamer on one
// thread), on 127.0.0.1 and a free port: what the streamed-client tests play on.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "net/client_connection.h"
#include "net/server_host.h"
#include "sim/gen/column_streamer.h"
#include "sim/gen/generator.h"
#include "sim/gen/scene.h"

namespace loam::test {

struct StreamedHighlands {
  std::unique_ptr<sim::ColumnStreamer> streamer;  // declared first: outlives the host
  std::unique_ptr<net::ServerHost> host;
};

/// config: the server's settings (name, address and port are set here); e.g. more
/// than the default 4 peers per address for more full clients on one loopback.
inline StreamedHighlands openStreamedHighlands(const std::string& serverName, net::ServerConfig sc = {}) {
  auto scene = sim::loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/highlands.toml");
  REQUIRE_MESSAGE(scene.has_value(), (scene ? "" : scene.error().message));
  REQUIRE_FALSE(sim::generatableWhole(*scene));
  auto streamer = sim::ColumnStreamer::create(*scene, scene->defaultSeed, {.threads = 1});
  REQUIRE(streamer.has_value());
  auto state = sim::createStreamedSimState(*scene, scene->defaultSeed, **streamer);
  REQUIRE_MESSAGE(state.has_value(), (state ? "" : state.error().message));
  net::HostedWorld hosted = net::describeWorld(*scene, state->world);
  sc.name = serverName;
  sc.bindAddress = "127.0.0.1";
  sc.port = 0;
  StreamedHighlands out;
  out.streamer = std::move(*streamer);
  auto server = net::ServerHost::open(sc, std::move(*state), std::move(hosted), out.streamer.get());
  REQUIRE_MESSAGE(server.has_value(), (server ? "" : server.error().message));
  out.host = std::move(*server);
  return out;
}

/// A full bot named `name` for the server (or link) at 127.0.0.1:port that streams its
/// world (one generator thread), as the streamed-client tests run them.
inline net::ClientConfig streamedBotConfig(std::uint16_t port, std::string name) {
  net::ClientConfig cfg;
  cfg.port = port;
  cfg.name = std::move(name);
  cfg.sceneDir = std::string(LOAM_SOURCE_DIR) + "/scenes";
  cfg.kind = net::ClientKind::FullBot;
  cfg.streamThreads = 1;
  return cfg;
}

}  // namespace loam::test
