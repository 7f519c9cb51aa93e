// A small hand-built world for audio tests (fast to build, no animals, nothing
// random): 51.2 x 12.8 x 51.2 m, stone below y = 0, and on top of it
//  - the pond: -24 < x < 0 and |z| < 12.8 m, a 40 cm layer of water (the stone's top
//    layer replaced) -> listen over it at kOverWater;
//  - bare stone: x > 0 near z = 0 -> listen at kOverStone;
//  - a woodpile: one layer of planks bricks at x 8..16 m, z -24..-20 m, y 0..0.4 m
//    -> listen at kNearWood;
//  - a meadow: a 40 cm layer of grass on the stone at x 0..24 m, z 13.2..25.6 m
//    -> listen at kOverGrass;
//  - a canopy: leaves at y 4..4.8 m over x -24..-4 m, z 13.2..25.6 m (bare stone
//    below) -> listen under it at kUnderLeaves.
// Weather from Scene defaults (wind 2 m/s), day at 09:00 of a 20-minute day.
#pragma once

#include <algorithm>
#include <vector>

#include "audio/engine.h"
#include "sim/world/brick_store.h"
#include "sim/step/commands.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_state.h"
#include "tests/sim/sim_fixture.h"

namespace loam::test {

inline constexpr audio::Vec3f kOverWater{-12.0f, 1.7f, 0.0f};
inline constexpr audio::Vec3f kOverStone{12.0f, 1.7f, 0.0f};
inline constexpr audio::Vec3f kNearWood{12.0f, 1.7f, -16.0f};
inline constexpr audio::Vec3f kOverGrass{12.0f, 2.1f, 19.0f};
inline constexpr audio::Vec3f kUnderLeaves{-14.0f, 1.7f, 19.0f};

inline sim::Scene audioScene() {
  sim::Scene s;
  s.name = "audio-test";
  s.materials = testMaterials();
  s.worldBounds = {{-64, -16, -64}, {64, 16, 64}};
  sim::SpawnPoint sp;
  sp.position = {0.0, 0.0, 0.0};
  s.spawns.push_back(sp);
  return s;
}

/// Bricks of the woodpile (brick coordinates), nearest to kNearWood first.
inline std::vector<sim::BrickCoord> woodpileBricks() {
  std::vector<sim::BrickCoord> out;
  for (int bz = -60; bz < -50; ++bz)
    for (int bx = 20; bx < 40; ++bx) out.push_back({bx, 0, bz});
  auto d2 = [](const sim::BrickCoord& b) {
    float x = (static_cast<float>(b.x) + 0.5f) * 0.4f - kNearWood.x,
          z = (static_cast<float>(b.z) + 0.5f) * 0.4f - kNearWood.z;
    return x * x + z * z;
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return d2(a) < d2(b); });
  return out;
}

inline sim::SimState audioWorldState() {
  sim::Scene s = audioScene();
  sim::BrickStore w(s.worldBounds, sim::makeCoarseLut(*s.materials));
  for (int cz = -4; cz < 4; ++cz)
    for (int cx = -4; cx < 4; ++cx) w.fillChunk(sim::ChunkCoord{cx, -1, cz}, mat("stone"));
  for (int bz = -32; bz < 32; ++bz)
    for (int bx = -60; bx < 0; ++bx) w.fillBrick({bx, -1, bz}, mat("water"));
  for (const sim::BrickCoord& b : woodpileBricks()) w.fillBrick(b, mat("planks"));
  for (int bz = 33; bz < 64; ++bz) {
    for (int bx = 0; bx < 60; ++bx) w.fillBrick({bx, 0, bz}, mat("grass"));
    for (int bx = -60; bx < -10; ++bx) {
      w.fillBrick({bx, 10, bz}, mat("leaves"));
      w.fillBrick({bx, 11, bz}, mat("leaves"));
    }
  }
  w.markGenerated();
  return sim::createSimStateFromWorld(s, 11, std::move(w));
}

/// A server command (player 0 skips reach and rate checks).
inline sim::Command serverCommand(std::uint32_t sequence, sim::CommandBody body) {
  sim::Command c;
  c.player = sim::kServerPlayer;
  c.sequence = sequence;
  c.body = std::move(body);
  return c;
}

}  // namespace loam::test
