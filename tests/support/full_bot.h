// A full bot's client config for the in-process net suites: the world is a copy of one
// the test already holds, so a join costs the join stream alone, not generation.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "net/client_connection.h"
#include "sim/systems/sim_state.h"

namespace loam::test {

/// A full bot named `name` for the server (or link) at 127.0.0.1:port whose world
/// factory copies `world`, which must outlive the connection.
inline net::ClientConfig fullBotConfig(std::uint16_t port, std::string name, const sim::SimState& world) {
  net::ClientConfig cfg;
  cfg.port = port;
  cfg.name = std::move(name);
  cfg.sceneDir = std::string(LOAM_SOURCE_DIR) + "/scenes";
  cfg.kind = net::ClientKind::FullBot;
  cfg.worldFactory = [&world](const sim::Scene&, std::uint64_t, const std::function<void(double)>& progress)
      -> sim::Result<sim::SimState> {
    progress(1.0);
    return sim::SimState(world);
  };
  return cfg;
}

}  // namespace loam::test
