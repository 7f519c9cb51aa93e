// What the fuzz targets share: the small flat world of the simulation tests as a
// client's mirror or a server's state (built once per process; each input works on
// a copy, so a crash reproduces from its input alone), and a view of the input.
// Every target is a libFuzzer entry point (LLVMFuzzerTestOneInput) built by the fuzz
// preset (clang, -fsanitize=fuzzer,address,undefined); see fuzz/CMakeLists.txt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "sim/systems/sim_state.h"
#include "tests/sim/sim_fixture.h"

namespace loam::fuzz {

/// The flat test world (25.6 x 12.8 x 25.6 m, stone below y = 0) with two players.
inline const sim::SimState& baseState() {
  static const sim::SimState state = [] {
    sim::SimState s = test::flatState();
    for (std::uint32_t id : {1u, 2u}) {
      sim::Player p;
      p.id = sim::PlayerId{id};
      p.name = sim::PlayerName::from(id == 1 ? "ann" : "bob");
      s.players.push_back(p);
    }
    return s;
  }();
  return state;
}

inline std::span<const std::uint8_t> bytesOf(const std::uint8_t* data, std::size_t size) { return {data, size}; }
inline std::string_view textOf(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace loam::fuzz
