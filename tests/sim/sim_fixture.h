// A small hand-built world for simulation unit tests: 25.6 x 12.8 x 25.6 m, stone
// below y = 0, air above, one spawn at the origin. Tests add features with set().
#pragma once

#include <functional>
#include <memory>

#include "sim/world/brick_store.h"
#include "sim/world/material.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/systems/streams.h"
#include "sim/systems/water.h"

namespace loam::test {

inline std::shared_ptr<const sim::MaterialTable> testMaterials() {
  static std::shared_ptr<const sim::MaterialTable> table = [] {
    auto r = sim::MaterialTable::load(LOAM_SOURCE_DIR "/sim/data/materials.toml");
    LOAM_ASSERT(r.has_value());
    return std::make_shared<const sim::MaterialTable>(std::move(r).value());
  }();
  return table;
}

inline sim::MaterialId mat(const char* name) {
  auto id = testMaterials()->find(name);
  LOAM_ASSERT(id.has_value());
  return *id;
}

inline sim::Scene testScene() {
  sim::Scene s;
  s.name = "test";
  s.materials = testMaterials();
  s.worldBounds = {{-32, -16, -32}, {32, 16, 32}};
  sim::SpawnPoint sp;
  sp.position = {0.0, 0.0, 0.0};
  s.spawns.push_back(sp);
  return s;
}

/// Stone floor: every voxel with y < 0.
inline sim::BrickStore flatWorld() {
  sim::Scene s = testScene();
  sim::BrickStore w(s.worldBounds, sim::makeCoarseLut(*s.materials));
  for (int cz = -2; cz < 2; ++cz)
    for (int cx = -2; cx < 2; ++cx) w.fillChunk(sim::ChunkCoord{cx, -1, cz}, mat("stone"));
  w.markGenerated();
  return w;
}

/// One tick of the water system alone, with `edits` applied first through the
/// context (as commands do in step 1). The output is the tick's streams.
inline sim::StepOutput waterTick(sim::SimState& s, const std::function<void(sim::SimContext&)>& edits = {}) {
  sim::StepOutput out;
  s.tick += 1;
  out.tick = s.tick;
  sim::SimContext ctx(s, out);
  if (edits) edits(ctx);
  sim::stepWater(s.water, ctx);
  return out;
}

inline sim::SimState flatState() { return sim::createSimStateFromWorld(testScene(), 7, flatWorld()); }

}  // namespace loam::test
