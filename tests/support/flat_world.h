// The flat scene as a hosted world, generated once per test binary (servers copy the
// state). For the net suites that open an in-process ServerHost.
#pragma once

#include <doctest/doctest.h>

#include <utility>

#include "net/server_host.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_state.h"

namespace loam::test {

struct FlatWorld {
  sim::SimState state;
  net::HostedWorld hosted;
};

inline const FlatWorld& flatWorld() {
  static const FlatWorld w = [] {
    auto scene = sim::loadScene(LOAM_SOURCE_DIR "/scenes/flat.toml");
    REQUIRE_MESSAGE(scene.has_value(), (scene ? "" : scene.error().message));
    auto state = sim::createSimState(*scene, scene->defaultSeed);
    REQUIRE(state.has_value());
    FlatWorld out{std::move(*state), {}};
    out.hosted = net::describeWorld(*scene, out.state.world);
    return out;
  }();
  return w;
}

}  // namespace loam::test
